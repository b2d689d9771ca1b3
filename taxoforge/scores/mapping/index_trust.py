"""Whether a stored mapping index is the one this user's runs derived from its tree
(:mod:`taxoforge.scores.mapping.store`, module docstring, *Validity*): its header read bounded
and only from a regular file, its arrays loaded memory-mapped when their form is right, and
their content checked against the digest this user's runs recorded among the trusted digests
(:mod:`taxoforge.files.trusted`) — never against a checksum stored beside the data.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from taxoforge.scores.mapping.name_tables import NameTables

__all__ = ["HEADER", "MAX_HEADER_BYTES", "read_header", "load_index", "index_digest", "index_files", "tables_of",
           "verified_index"]

HEADER = "header.json"
#: The most bytes of an index's ``header.json``.
MAX_HEADER_BYTES = 16 * 2**20


def read_header(path: Path) -> dict | None:
    """The header of the index (or embeddings) folder ``path``, read bounded and only from a
    regular file (a FIFO is never waited on); None when it cannot be read.

    Parameters
    ----------
    path : Path

    Returns
    -------
    dict or None
    """
    from taxoforge.files.paths import open_regular

    try:
        with open_regular(path / HEADER, "mapping index header") as fh:
            raw = fh.read(MAX_HEADER_BYTES + 1)
        if len(raw) > MAX_HEADER_BYTES:
            return None
        header = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return header if isinstance(header, dict) else None


def load_index(path: Path, want: dict) -> tuple[dict, dict] | None:
    """(header, arrays memory-mapped) of the folder when its header has every field of
    ``want`` and its arrays the dtypes and shapes it gives; None otherwise. Says nothing of
    their content (:func:`verified_index`).

    Parameters
    ----------
    path : Path
        The index's folder.
    want : dict
        The header fields it must have.

    Returns
    -------
    tuple of (dict, dict) or None
    """
    header = read_header(path)
    if header is None:
        return None
    if any(header.get(k) != v for k, v in want.items()):
        return None
    shapes = header.get("arrays") or {}
    if not isinstance(shapes, dict) or set(shapes) != set(NameTables.ARRAYS) or not isinstance(header.get("meta"), dict):
        return None
    arrays = {}
    for name in NameTables.ARRAYS:
        try:
            a = np.load(path / f"{name}.npy", mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError):
            return None
        want_dtype, want_shape = (list(shapes[name]) + [None, None])[:2]
        if str(a.dtype) != want_dtype or list(a.shape) != want_shape:
            return None
        arrays[name] = a
    return header, arrays


def index_digest(arrays: dict, meta: dict, header: dict) -> str:
    """SHA-256 of an index's content: the header's fields that say what it was built from
    and under which rules, its ``meta``, and every array's name, dtype, shape and bytes.

    Parameters
    ----------
    arrays : dict
        Name → array (in memory or memory-mapped).
    meta : dict
        The tables' metadata.
    header : dict
        The header (its ``format``, ``code``, ``tree_key``, ``index_id`` and ``index_config`` are digested).

    Returns
    -------
    str
    """
    h = hashlib.sha256()
    fixed = {k: header.get(k) for k in ("format", "code", "tree_key", "index_id", "index_config")}
    h.update(json.dumps([fixed, meta], sort_keys=True, default=str).encode())
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"\0{name}\0{a.dtype.str}\0{list(a.shape)}\0".encode())
        view = memoryview(a).cast("B") if a.size else b""
        for i in range(0, len(view), 1 << 24):
            h.update(view[i:i + (1 << 24)])
    return h.hexdigest()


def index_files(path: Path) -> list[Path]:
    """The files of an index folder whose stamps the trusted digest is recorded with.

    Parameters
    ----------
    path : Path

    Returns
    -------
    list of Path
    """
    return [path / HEADER, *(path / f"{name}.npy" for name in NameTables.ARRAYS)]


def tables_of(loaded: tuple[dict, dict]) -> NameTables | None:
    """The name tables of a loaded index (:func:`load_index`), None when its metadata is not theirs.

    Parameters
    ----------
    loaded : tuple of (dict, dict)

    Returns
    -------
    NameTables or None
    """
    header, arrays = loaded
    try:
        return NameTables.from_arrays({k: np.asarray(a) for k, a in arrays.items()}, header["meta"])
    except (KeyError, ValueError, TypeError):
        return None


def verified_index(trust, tkey: str, path: Path, loaded: tuple[dict, dict]) -> bool:
    """Whether the loaded index is the one this user's runs recorded (module docstring): its
    files' stamps are the recorded ones, or its digest is.

    Parameters
    ----------
    trust : TrustedDigests
    tkey : str
        The index's key among them.
    path : Path
        Its folder.
    loaded : tuple of (dict, dict)
        :func:`load_index`'s result.

    Returns
    -------
    bool
    """
    from taxoforge.files.trusted import file_stamps

    files = index_files(path)
    if trust.lookup(tkey, files) is not None:
        return True
    rec = trust.record(tkey)
    if rec is None:
        return False
    stamps = file_stamps(files)
    header, arrays = loaded
    if index_digest(arrays, header["meta"], header) != rec["digest"]:
        return False
    trust.remember(tkey, files, rec["digest"], stamps)
    return True


