"""The tables of a Catalogue of Life Data Package (ColDP), found, extracted and decoded.

The first step of :mod:`taxoforge.sources.coldp`: :func:`open_tables` turns a ColDP folder or
zip into one UTF-8 file per logical table (``taxon``, ``name``, ``synonym``, ``vernacular``,
``nameusage``) that polars can scan.

* Tables are found by file name (:func:`locate_tables`): case-insensitively, without ``-``,
  ``_`` or spaces (``vernacular-name.tsv`` is ``VernacularName.tsv``), ``.tsv``/``.tab``/
  ``.txt`` (tab-separated) or ``.csv``, at most three levels deep. Two files for one table
  (``Taxon.tsv`` and ``data/Taxon.tsv``) are an error naming both, never a guess; macOS
  metadata (``__MACOSX/``, ``._Taxon.tsv``) is never picked.
* Of a zip only those members are extracted, into a temporary folder, by
  :func:`taxoforge.files.archives.safe_extract_zip` (path escapes, links, zip bombs and
  size limits refuse the archive).
* ColDP files are UTF-8, read strictly. A dataset in another encoding says so — the
  ``encoding`` argument or an ``encoding`` key in its ``metadata.yaml`` (a taxoforge
  extension) — and is transcoded on the way in (:func:`declared_encoding`); a byte that does
  not decode is an error naming the file, line and byte (:func:`encoding_error`).
"""

from __future__ import annotations

import codecs
import os
import re
import shutil
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from taxoforge.files.archives import (
    DEFAULT_MAX_EXTRACT_BYTES,
    DEFAULT_MAX_RATIO,
    ArchiveError,
    is_macos_metadata,
    member_path,
    safe_extract_zip,
    single_member,
)

__all__ = [
    "ColdpError",
    "TableFile",
    "TABLE_STEMS",
    "EXTENSIONS",
    "locate_tables",
    "declared_encoding",
    "encoding_error",
    "open_tables",
]

#: Logical table → the file stems that hold it (lower case, without ``-``, ``_`` and spaces).
TABLE_STEMS = {
    "taxon": ("taxon",),
    "name": ("name",),
    "synonym": ("synonym",),
    "vernacular": ("vernacularname", "vernacular"),
    "nameusage": ("nameusage",),
}
#: File suffix → field separator.
EXTENSIONS = {".tsv": "\t", ".tab": "\t", ".txt": "\t", ".csv": ","}
_METADATA_NAMES = ("metadata.yaml", "metadata.yml", "metadata.json")
_MAX_METADATA_BYTES = 16 << 20
_MAX_DEPTH = 3  # zips often wrap their content in a folder or two


class ColdpError(ValueError):
    """Malformed ColDP input; the message names the file and, where it applies, the line."""


@dataclass(frozen=True)
class TableFile:
    """One table of the dataset, ready to scan.

    Attributes
    ----------
    path : pathlib.Path
        The UTF-8 file polars scans: the original, an extracted member or a transcoded copy.
    label : str
        How messages name it: the file, or the member and its archive.
    source : str
        Its path inside the dataset, ``/``-separated.
    """

    path: Path
    label: str
    source: str

    def __str__(self) -> str:
        return self.label

    @property
    def name(self) -> str:
        """The file name of the table inside the dataset (``taxon.tsv``)."""
        return PurePosixPath(self.source).name


def locate_tables(relpaths: Iterable[str], dataset: str | os.PathLike) -> dict[str, str]:
    """Which file holds each logical table (and the metadata) of a dataset.

    Parameters
    ----------
    relpaths : iterable of str
        The dataset's files, relative to its root, ``/``-separated.
    dataset : str or os.PathLike
        The folder or archive, for messages.

    Returns
    -------
    dict
        Logical table (``"taxon"``, ``"name"``, ``"synonym"``, ``"vernacular"``,
        ``"nameusage"``, and ``"metadata"``) → the file holding it; tables the dataset lacks
        are left out. Of several metadata files the shallowest is taken.

    Raises
    ------
    ColdpError
        When two files could hold the same table.
    """
    tables: dict[str, list[str]] = {}
    metadata: list[tuple[int, str]] = []
    for rel in relpaths:
        path = PurePosixPath(rel)
        if not 1 <= len(path.parts) <= _MAX_DEPTH or is_macos_metadata(rel):
            continue
        if path.name.lower() in _METADATA_NAMES:
            metadata.append((len(path.parts), rel))
            continue
        if path.suffix.lower() not in EXTENSIONS:
            continue
        stem = re.sub(r"[-_\s]", "", path.stem.lower())
        for table, stems in TABLE_STEMS.items():
            if stem in stems:
                tables.setdefault(table, []).append(rel)
    found = {}
    for table, rels in tables.items():
        try:
            found[table] = single_member(dataset, rels, f"files for the {table} table",
                                         "keep one file per ColDP table")
        except ArchiveError as e:
            raise ColdpError(str(e)) from None
    if metadata:
        found["metadata"] = min(metadata)[1]
    return found


def declared_encoding(encoding: str | None, metadata: Path | None, label: str) -> tuple[str, str]:
    """The encoding of a dataset's tables and who declared it.

    Parameters
    ----------
    encoding : str or None
        The caller's ``encoding`` argument; it wins.
    metadata : pathlib.Path or None
        The dataset's metadata file, whose ``encoding`` key (a taxoforge extension: ColDP
        itself requires UTF-8) is read when the caller gives none.
    label : str
        How messages name the metadata file.

    Returns
    -------
    codec : str
        The codec's canonical name (``"utf-8"`` by default).
    declared_by : str
        ``"argument"``, the metadata file's label, or the default's description.

    Raises
    ------
    ColdpError
        For an unknown encoding or an oversized metadata file.
    """
    where = "argument"
    if encoding is None and metadata is not None:
        if metadata.stat().st_size > _MAX_METADATA_BYTES:
            raise ColdpError(f"{label}: larger than {_MAX_METADATA_BYTES:,} bytes; not a metadata file")
        try:
            import yaml

            doc = yaml.safe_load(metadata.read_bytes().decode("utf-8"))
        except Exception:  # an unreadable metadata file declares nothing; the tables say the rest
            doc = None
        if isinstance(doc, dict) and isinstance(doc.get("encoding"), str):
            encoding, where = doc["encoding"], label
    if encoding is None:
        return "utf-8", "default (ColDP files are UTF-8)"
    try:
        codec = codecs.lookup(encoding).name
    except LookupError as e:
        raise ColdpError(f"{label if where != 'argument' else 'encoding'}: unknown encoding {encoding!r}") from e
    return codec, where


def _locate_decoding_error(path: Path, encoding: str, label: str) -> str:
    """The first undecodable byte of ``path`` as ``label: line N, byte B of the file: …``
    (error path only: one pass over the file, line by line)."""
    dec = codecs.getincrementaldecoder(encoding)("strict")
    offset = 0
    with open(path, "rb") as fh:
        for lineno, line in enumerate(fh, start=1):
            try:
                dec.decode(line)
            except UnicodeDecodeError as e:
                pos = max(0, min(e.start, len(line) - 1))
                shown = line.decode(encoding, "replace").rstrip("\r\n")
                if len(shown) > 80:
                    shown = shown[:77] + "..."
                return (f"{label}: line {lineno}, byte {offset + pos} of the file (0x{line[pos]:02x}): "
                        f"not valid {encoding} ({e.reason}) in {shown!r}")
            offset += len(line)
        try:
            dec.decode(b"", final=True)
        except UnicodeDecodeError as e:
            return f"{label}: the file ends inside a {encoding} character ({e.reason})"
    return f"{label}: not valid {encoding}"


def encoding_error(table: TableFile, encoding: str, declared_by: str) -> ColdpError:
    """The error for a table that does not decode: file, line and byte, and what to do.

    Parameters
    ----------
    table : TableFile
        The table.
    encoding : str
        The encoding it was read in.
    declared_by : str
        Who declared that encoding (see :func:`declared_encoding`).

    Returns
    -------
    ColdpError
        To raise.
    """
    where = _locate_decoding_error(table.path, encoding, table.label)
    hint = ("ColDP files must be UTF-8: convert the file, or declare its encoding (read_coldp(..., "
            "encoding='latin-1'), or 'encoding: latin-1' in the dataset's metadata.yaml)"
            if encoding == "utf-8" else f"the encoding {encoding} was declared by the {declared_by}")
    return ColdpError(f"{where}; {hint}")


def _transcode(table: TableFile, encoding: str, declared_by: str, scratch: Path) -> TableFile:
    """A UTF-8 copy of a table in a declared encoding, in ``scratch`` (same lines)."""
    out = scratch / "utf-8" / table.source
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(table.path, encoding=encoding, errors="strict", newline="") as src, \
                open(out, "w", encoding="utf-8", newline="") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    except UnicodeDecodeError:
        raise encoding_error(table, encoding, declared_by) from None
    return TableFile(out, table.label, table.source)


@contextmanager
def open_tables(path: str | os.PathLike, *, encoding: str | None = None,
                max_extract_bytes: int = DEFAULT_MAX_EXTRACT_BYTES,
                max_ratio: float = DEFAULT_MAX_RATIO) -> Iterator[tuple[dict[str, TableFile], dict]]:
    """The tables of a ColDP folder or zip as UTF-8 files, for the time of a ``with`` block.

    A folder is read in place; of a zip only the tables :func:`locate_tables` finds are
    extracted, under the size limits, into a temporary folder; tables in a declared
    non-UTF-8 encoding are transcoded there. The temporary folder goes when the block ends.

    Parameters
    ----------
    path : str or os.PathLike
        The ColDP folder or ``.zip``.
    encoding : str, optional
        The tables' encoding when it is not UTF-8 (see :func:`declared_encoding`).
    max_extract_bytes : int, optional
        Most bytes the extracted tables may hold together.
    max_ratio : float, optional
        Highest compression ratio of a table in the zip.

    Yields
    ------
    tables : dict
        Logical table → :class:`TableFile` (the metadata file left out).
    how : dict
        ``encoding`` (the codec read) and ``encoding_declared_by``.

    Raises
    ------
    ColdpError
        For a missing path, a file that is not a zip, a refused archive, two files for one
        table or an unknown encoding.
    """
    path = Path(path)
    if not path.exists():
        raise ColdpError(f"{path}: no such file or folder")
    if not path.is_dir() and not zipfile.is_zipfile(path):
        raise ColdpError(f"{path}: expected a ColDP folder or a .zip archive")
    with tempfile.TemporaryDirectory(prefix="coldp-") as tmp:
        scratch = Path(tmp)
        if path.is_dir():
            rels = [p.relative_to(path).as_posix() for p in path.rglob("*")
                    if p.is_file() and len(p.relative_to(path).parts) <= _MAX_DEPTH]
            picked = locate_tables(rels, path)
            files = {k: TableFile(path / rel, str(path / rel), rel) for k, rel in picked.items()}
        else:
            try:
                with zipfile.ZipFile(path) as zf:
                    names = [m.filename for m in zf.infolist() if not m.is_dir()]
            except (zipfile.BadZipFile, OSError) as e:
                raise ColdpError(f"{path}: not a readable zip archive ({e})") from e
            picked = locate_tables(names, path)
            try:
                root = safe_extract_zip(path, scratch / "zip", members=picked.values(),
                                        max_bytes=max_extract_bytes, max_ratio=max_ratio)
            except ArchiveError as e:
                raise ColdpError(str(e)) from e
            files = {k: TableFile(member_path(root, rel), f"{path} (member {rel})", rel) for k, rel in picked.items()}
        meta = files.pop("metadata", None)
        codec, where = declared_encoding(encoding, meta.path if meta else None, meta.label if meta else "")
        if codec != "utf-8":
            files = {k: _transcode(t, codec, where, scratch) for k, t in files.items()}
        yield files, {"encoding": codec, "encoding_declared_by": where}
