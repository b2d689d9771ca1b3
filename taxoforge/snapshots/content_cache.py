"""The content hash of a tree folder, remembered while its files stay as they were.

Citing a *tree folder* (not a snapshot: no manifest vouches for it) needs the content hash
of its tables (:func:`taxoforge.snapshots.manifest.content_id`): canonical order, every row
serialised and hashed — seconds on a 1.4 M-node tree, on every ``taxoforge score`` call.
:func:`cached_content_sha256` remembers the hash in the cache folder
(``$TAXOFORGE_CACHE_DIR/content-hash/<hash of the folder's path>.json``) with the **stamp**
of each table file taken *before* the tables were read — its size, inode, device,
modification and change times in nanoseconds — and hands it back only while every stamp is
unchanged, so:

* any write to a table (in place, or a new file renamed over it) changes its change time
  (``ctime``, which no user can set back) and its modification time; a file added or
  removed changes the stamp too: the hash is computed again, never the old one cited;
* a file changed while it was being read makes the stored stamp older than the file: the
  next call recomputes (the stamp is taken before the read, never after);
* "racy" files — modified within :data:`RACY_S` seconds of the stamp, where a later write
  in the same clock tick could keep the same times — are not remembered (as git does);
* a record that cannot be read, or names another folder or schema, is ignored; one that
  cannot be written costs only the next call's hashing.

Snapshot folders are not concerned: they are verified against their manifests
(:mod:`taxoforge.snapshots.citation`).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

from taxoforge.files import default_cache_dir, write_text_atomic
from taxoforge.trees.tables import SCHEMA_VERSION, TABLE_SCHEMAS

__all__ = ["folder_stamp", "cached_content_sha256", "remember_content_sha256", "RACY_S"]

#: files modified this close to the stamp are not remembered (a same-tick write could hide)
RACY_S = 2.0
_FORMAT = 1


def folder_stamp(folder: str | os.PathLike) -> dict:
    """The stamp of a tree folder's table files (module docstring); take it before reading them.

    Parameters
    ----------
    folder : str or os.PathLike
        The folder.

    Returns
    -------
    dict
        The stamp of a tree folder's table files (module docstring); take it before
        reading them.
    """
    folder = Path(folder).resolve()
    files = {}
    for t in TABLE_SCHEMAS:
        try:
            st = os.stat(folder / f"{t}.parquet")
        except FileNotFoundError:
            files[t] = None
            continue
        files[t] = [st.st_size, st.st_ino, st.st_dev, st.st_mtime_ns, st.st_ctime_ns]
    return {"folder": str(folder), "files": files, "taken_ns": time.time_ns()}


def _record_path(folder: str, cache_dir: Path | None) -> Path:
    key = hashlib.sha256(folder.encode()).hexdigest()[:32]
    return (cache_dir or default_cache_dir()) / "content-hash" / f"{key}.json"


def cached_content_sha256(stamp: dict, *, cache_dir: Path | None = None) -> str | None:
    """The content hash remembered for the folder of ``stamp``, when every file's stamp is
    the same as when it was remembered; else None.

    Parameters
    ----------
    stamp : dict
        The folder's stamp (:func:`folder_stamp`), taken before its tables are read.
    cache_dir : Path, optional
        The cache folder (default: a temporary one).

    Returns
    -------
    str or None
        The content hash remembered for the folder of ``stamp``, when every file's stamp
        is the same as when it was remembered; else None.
    """
    try:
        rec = json.loads(_record_path(stamp["folder"], cache_dir).read_text())
    except (OSError, ValueError):
        return None
    if (not isinstance(rec, dict) or rec.get("format") != _FORMAT or rec.get("schema") != SCHEMA_VERSION
            or rec.get("folder") != stamp["folder"] or rec.get("files") != stamp["files"]):
        return None
    sha = rec.get("content_sha256")
    return sha if isinstance(sha, str) and len(sha) == 64 else None


def remember_content_sha256(stamp: dict, content_sha256: str, *, cache_dir: Path | None = None) -> bool:
    """Remember ``content_sha256`` for the folder of ``stamp`` (taken before the tables were
    read), unless a file is racy or no longer has that stamp. Returns whether it was stored.

    Parameters
    ----------
    stamp : dict
        The folder's stamp (:func:`folder_stamp`), taken before its tables were read.
    content_sha256 : str
        The content hash computed from the tables.
    cache_dir : Path, optional
        The cache folder (default: a temporary one).

    Returns
    -------
    bool
        Remember ``content_sha256`` for the folder of ``stamp`` (taken before the tables
        were read), unless a file is racy or no longer has that stamp.
    """
    limit = stamp["taken_ns"] - int(RACY_S * 1e9)
    if any(f is not None and max(f[3], f[4]) > limit for f in stamp["files"].values()):
        return False
    if folder_stamp(stamp["folder"])["files"] != stamp["files"]:
        return False
    rec = {"format": _FORMAT, "schema": SCHEMA_VERSION, "folder": stamp["folder"], "files": stamp["files"],
           "content_sha256": content_sha256}
    try:
        write_text_atomic(_record_path(stamp["folder"], cache_dir), json.dumps(rec, indent=1))
    except OSError:
        return False
    return True
