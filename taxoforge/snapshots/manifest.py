"""What a snapshot is: a folder of the four tree tables plus ``manifest.json`` (docs/method.md#snapshots).

Input
    A :class:`~taxoforge.trees.tables.TreeTables` and what the manifest should say about
    it: seed, source versions (dump date, release, file checksums, query time).

Output
    A folder ``nodes.parquet``, ``names.parquet``, ``links.parquet``, ``report.parquet``,
    ``manifest.json``, and the :class:`dict` manifest.

Version id
    1. Every table is put in canonical form: the schema of
       :mod:`taxoforge.trees.tables`, rows sorted by the table's key columns and then by
       every other column (list columns by their joined text), so the input row order
       never matters.
    2. Each canonical table is hashed (SHA-256) as newline-delimited JSON, chunk by
       chunk, after a header naming the table, the schema version and the columns. JSON
       and not the Parquet bytes, so a new pyarrow that writes the same content with
       other bytes does not give a new version. A column added to a table's schema later
       (:data:`~taxoforge.trees.tables.ADDED_COLUMNS`: the names' ``source``) that is null
       in every row is left out, so a table without it keeps the hash it had before.
    3. The version id is the first 12 hex digits of the SHA-256 over the four table
       hashes (the full hash is kept as ``content_sha256``).

    Nothing else enters the id: not the creation time, not the seed, not the source
    versions, not the code version. A weekly rebuild whose tables did not change keeps
    its id; a changed edge gives a new one. The seed and the code still matter, through
    the tables they produce.

Code version
    ``{"package": "<taxoforge version>", "git_commit": ..., "git_dirty": ...}`` (the git
    fields when the code runs from a git checkout; ``$TAXOFORGE_CODE_VERSION`` overrides
    the commit, e.g. in a Docker image built without ``.git``). It is recorded, never
    hashed, so two rebuilds in one checkout give the same id even with local edits.
    ``"packages"`` records the installed versions of the libraries that shape a tree
    (:func:`taxoforge.versions.package_versions`: polars, numpy, nltk, rapidfuzz, the
    source packages …), also recorded and never hashed.

Creation time
    UTC, ISO 8601, to the second; ``$SOURCE_DATE_EPOCH`` (the reproducible-builds
    convention) or an explicit ``created=`` pins it, making ``manifest.json`` byte
    identical too.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import io
import json
import os
import re
import subprocess
from functools import partial
from pathlib import Path
from typing import Any

import polars as pl

import taxoforge
from taxoforge.files import FileTooLarge, UnsafePath, file_sha256, read_regular_file, write_bytes_atomic
from taxoforge.files.paths import without_local_paths
from taxoforge.snapshots.errors import SnapshotError
from taxoforge.trees.threads import run
from taxoforge.trees.tables import (ADDED_COLUMNS, SCHEMA_VERSION, SORT_KEYS, TABLE_SCHEMAS, TreeTables, conform,
                                    in_sorted_order, provenance)
from taxoforge.versions import package_versions

__all__ = [
    "MANIFEST_NAME",
    "MAX_MANIFEST_BYTES",
    "json_document",
    "MANIFEST_FORMAT",
    "TABLE_FILES",
    "VERSION_LENGTH",
    "canonical_table",
    "canonical_tables",
    "table_content_hash",
    "content_id",
    "code_version",
    "package_version",
    "utc_now",
    "file_sha256",
    "build_snapshot",
    "read_manifest",
    "manifest_bytes",
    "validate_name",
    "SnapshotError",
]

MANIFEST_NAME = "manifest.json"
#: the largest ``manifest.json`` read (bytes; a real one holds a few KiB): a store is untrusted
#: input, and a parsed JSON document takes up to ~25 times its size in memory
MAX_MANIFEST_BYTES = 1 << 20
MANIFEST_FORMAT = "taxoforge-snapshot"
TABLE_FILES = {t: f"{t}.parquet" for t in TABLE_SCHEMAS}
VERSION_LENGTH = 12
_CHUNK_ROWS = 200_000
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")  # used with fullmatch: no "\n" after it


def validate_name(name: str, what: str = "taxonomy name") -> str:
    """A taxonomy name (or version label) is a path component: letters, digits, ``.``, ``_``, ``-``.

    Parameters
    ----------
    name : str
        The name.
    what : str, optional
        What the name is, for messages.

    Returns
    -------
    str
        A taxonomy name (or version label) is a path component: letters, digits, ``.``,
        ``_``, ``-``.
    """
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name) or name in {".", ".."}:
        raise SnapshotError(
            f"invalid {what} {name!r}: use letters, digits, '.', '_' or '-' (at most 100, "
            "starting with a letter or digit)"
        )
    return name


def canonical_table(df: pl.DataFrame | None, table: str) -> pl.DataFrame:
    """``df`` conformed to the schema of ``table`` with its rows in a total canonical order.

    Parameters
    ----------
    df : polars.DataFrame or None
        The table.
    table : str
        ``"nodes"``, ``"names"``, ``"links"`` or ``"report"``.

    Returns
    -------
    polars.DataFrame
        ``df`` conformed to the schema of ``table`` with its rows in a total canonical
        order.
    """
    df = conform(df, table)
    keys = list(SORT_KEYS[table]) + [c for c in df.columns if c not in SORT_KEYS[table]]
    sort_exprs = []
    for c in keys:
        dtype = df.schema[c]
        if isinstance(dtype, pl.List):
            sort_exprs.append(pl.col(c).cast(pl.List(pl.String)).list.join("\x1f").fill_null("\x00null"))
        else:
            sort_exprs.append(pl.col(c))
    if df.height <= 1 or in_sorted_order(df, sort_exprs):  # a table written canonical: nothing to sort
        return df
    return df.sort(sort_exprs, nulls_last=True, maintain_order=True)


def canonical_tables(tables: TreeTables) -> TreeTables:
    """A copy of ``tables`` with every table in canonical form (same ``name`` and ``info``).

    Parameters
    ----------
    tables : TreeTables
        The tree's tables.

    Returns
    -------
    TreeTables
        A copy of ``tables`` with every table in canonical form (same ``name`` and
        ``info``).
    """
    return TreeTables(
        name=tables.name,
        **{t: canonical_table(df, t) for t, df in tables.tables().items()},
        info=dict(tables.info),
    )


def table_content_hash(df: pl.DataFrame, table: str, *, canonical: bool = False) -> str:
    """SHA-256 (hex) of one table's content, independent of row order and Parquet bytes.

    Parameters
    ----------
    df : polars.DataFrame
        The table.
    table : str
        ``"nodes"``, ``"names"``, ``"links"`` or ``"report"``.
    canonical : bool, optional
        Whether ``df`` is in canonical form already.

    Returns
    -------
    str
        SHA-256 (hex) of one table's content, independent of row order and Parquet
        bytes.
    """
    if not canonical:
        df = canonical_table(df, table)
    # a column added to the schema later, null throughout: hashed as before it existed (old ids stay)
    unused = [c for c in ADDED_COLUMNS.get(table, ()) if c in df.columns and df[c].null_count() == df.height]
    if unused:
        df = df.drop(unused)
    h = hashlib.sha256()
    h.update(f"taxoforge-table\n{table}\nschema={SCHEMA_VERSION}\ncolumns={','.join(df.columns)}\n".encode())
    for chunk in df.iter_slices(n_rows=_CHUNK_ROWS):
        buf = io.BytesIO()
        chunk.write_ndjson(buf)
        h.update(buf.getvalue())
    h.update(f"\nrows={df.height}\n".encode())
    return h.hexdigest()


def content_id(tables: TreeTables, *, canonical: bool = False) -> tuple[str, str, dict[str, str]]:
    """``(version, content_sha256, {table: table hash})`` of ``tables`` (see module doc).

    Parameters
    ----------
    tables : TreeTables
        The tree's tables.
    canonical : bool, optional
        Whether the tables are in canonical form already.

    Returns
    -------
    tuple[str, str, dict[str, str]]
        ``(version, content_sha256, {table: table hash})`` of ``tables`` (see module
        doc).
    """
    items = list(tables.tables().items())  # hashed at once, one table a thread (polars and hashlib release the GIL)
    hashes = run(partial(table_content_hash, canonical=canonical), [(df, t) for t, df in items])
    per_table = dict(zip((t for t, _ in items), hashes))
    h = hashlib.sha256(f"taxoforge-snapshot\nschema={SCHEMA_VERSION}\n".encode())
    for t in TABLE_SCHEMAS:
        h.update(f"{t}={per_table[t]}\n".encode())
    full = h.hexdigest()
    return full[:VERSION_LENGTH], full, per_table


def package_version() -> str:
    """The installed taxoforge's version, recorded in manifests (``0+unknown`` when it is not installed).

    Returns
    -------
    str
        The version.
    """
    try:
        from importlib.metadata import version

        return version("taxoforge")
    except Exception:  # pragma: no cover - running from a source tree without metadata
        return getattr(taxoforge, "__version__", "unknown")


def code_version() -> dict[str, Any]:
    """The code that built a snapshot: package version and, where known, the git commit.

    Returns
    -------
    dict[str, Any]
        The code that built a snapshot: package version and, where known, the git
        commit.
    """
    out: dict[str, Any] = {"package": package_version(), "git_commit": None, "git_dirty": None}
    env = os.environ.get("TAXOFORGE_CODE_VERSION")
    if env:
        out["git_commit"] = env
        return out
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True,
                                timeout=5, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here,
                               capture_output=True, text=True, timeout=5, check=True).stdout.strip()
        out["git_commit"] = commit or None
        out["git_dirty"] = bool(dirty)
    except (OSError, subprocess.SubprocessError):
        pass
    return out


def utc_now() -> str:
    """Now (or ``$SOURCE_DATE_EPOCH``) as ``YYYY-MM-DDTHH:MM:SSZ``.

    Returns
    -------
    str
        Now (or ``$SOURCE_DATE_EPOCH``) as ``YYYY-MM-DDTHH:MM:SSZ``.
    """
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch:
        t = _dt.datetime.fromtimestamp(int(epoch), tz=_dt.timezone.utc)
    else:
        t = _dt.datetime.now(tz=_dt.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def manifest_bytes(manifest: dict) -> bytes:
    """The canonical bytes of a manifest (sorted keys, two-space indent, final newline).

    Parameters
    ----------
    manifest : dict
        The manifest.

    Returns
    -------
    bytes
        The canonical bytes of a manifest (sorted keys, two-space indent, final
        newline).
    """
    return (json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def _json_safe(obj: Any) -> Any:
    """``obj`` with everything JSON cannot hold turned into text (dates, paths, numpy scalars)."""
    return json.loads(json.dumps(obj, default=str))


def build_snapshot(
    tables: TreeTables,
    folder: str | os.PathLike,
    *,
    name: str | None = None,
    seed: int | None = None,
    source_versions: dict | None = None,
    created: str | None = None,
    extra: dict | None = None,
    version: str | None = None,
) -> dict:
    """Write ``tables`` as a snapshot into ``folder`` (created; existing table files are
    replaced) and return its manifest.

    The tree's provenance, ``tables.info`` (less where it was loaded from:
    :func:`~taxoforge.trees.tables.provenance`, and with every local file path cut to the
    file's name: :func:`taxoforge.files.paths.without_local_paths`), is copied into the
    manifest under ``"info"``; its ``seed``, ``cycle_policy`` and ``source_versions`` also stand at the
    top level. ``seed`` and ``source_versions`` given here override the info's;
    ``extra`` is stored under ``"extra"``. ``version`` replaces the content-derived id by
    a label (e.g. ``"2024-06"``); ``content_sha256`` still identifies the content.

    Parameters
    ----------
    tables : TreeTables
        The tree's tables.
    folder : str or os.PathLike
        The folder.
    name : str, optional
        The name.
    seed : int, optional
        The seed of the random draws.
    source_versions : dict, optional
        What identifies each source's release.
    created : str, optional
        The creation time recorded (default: now).
    extra : dict, optional
        More manifest fields.
    version : str, optional
        The version.

    Returns
    -------
    dict
        The manifest.
    """
    name = validate_name(name or tables.name)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    canon = canonical_tables(tables)
    cid, full, per_table = content_id(canon, canonical=True)
    version = validate_name(version, "version") if version else cid
    paths = canon.write(folder, info=False)  # the info goes into the manifest
    info = without_local_paths(provenance(tables.info))  # a publisher's file paths are nobody else's
    if seed is None:
        seed = info.get("seed")
    if source_versions is None:
        source_versions = info.get("source_versions") or {}
    seed = None if seed is None else int(seed)
    source_versions = without_local_paths(_json_safe(source_versions or {}))
    info.update(seed=seed, source_versions=source_versions)
    files = {}
    table_meta = {}
    for t, path in paths.items():
        fname = TABLE_FILES[t]
        files[fname] = {"sha256": file_sha256(path), "size": path.stat().st_size}
        table_meta[t] = {"file": fname, "rows": canon.tables()[t].height, "content_sha256": per_table[t]}
    manifest = {
        "format": MANIFEST_FORMAT,
        "schema_version": SCHEMA_VERSION,
        "taxonomy": name,
        "version": version,
        "version_source": "label" if version != cid else "content",
        "content_sha256": full,
        "created": created or utc_now(),
        "source_versions": source_versions,
        "seed": seed,
        "cycle_policy": info.get("cycle_policy"),
        "info": info,
        "code_version": code_version(),
        "packages": package_versions(),  # the installed versions that shaped the tables (taxoforge.versions)
        "row_counts": {t: m["rows"] for t, m in table_meta.items()},
        "tables": table_meta,
        "files": files,
    }
    if extra:
        manifest["extra"] = _json_safe(extra)
    write_bytes_atomic(folder / MANIFEST_NAME, manifest_bytes(manifest))
    return manifest


_REQUIRED = ("format", "schema_version", "taxonomy", "version", "content_sha256", "created", "files", "row_counts")


def json_document(data: bytes, where: str, what: str, max_bytes: int,
                  invalid: str = "not a valid {what} (JSON error: {error})") -> Any:
    """``data`` parsed as JSON, refused with a :class:`SnapshotError` naming ``where`` when
    it is larger than ``max_bytes`` (before parsing), not UTF-8 JSON (``invalid`` says so,
    formatted with ``what`` and ``error``), or nested deeper than the parser goes (a
    hostile ``[[[[…`` is an error, not a ``RecursionError``).

    Parameters
    ----------
    data : bytes
        The bytes.
    where : str
        Where the bytes came from, for messages.
    what : str
        What the document is, for messages.
    max_bytes : int
        Most bytes accepted.
    invalid : str, optional
        The message for invalid JSON (``{what}``, ``{error}`` filled in).

    Returns
    -------
    Any
        ``data`` parsed as JSON, refused with a :class:`SnapshotError` naming ``where``
        when it is larger than ``max_bytes`` (before parsing), not UTF-8 JSON
        (``invalid`` says so, formatted with ``what`` and ``error``), or nested deeper
        than the parser goes (a hostile ``[[[[…`` is an error, not a
        ``RecursionError``).
    """
    if len(data) > max_bytes:
        raise SnapshotError(f"{where}: {len(data):,} bytes, more than the {max_bytes:,} a {what} may have; "
                            "refused before parsing")
    try:
        return json.loads(str(data, "utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SnapshotError(f"{where}: " + invalid.format(what=what, error=e)) from e
    except RecursionError:
        raise SnapshotError(f"{where}: " + invalid.format(what=what, error="nested too deeply to parse")) from None


def parse_manifest(data: bytes, where: str) -> dict:
    """Parse and sanity-check manifest bytes (at most :data:`MAX_MANIFEST_BYTES`); errors
    name ``where`` and what was expected.

    Parameters
    ----------
    data : bytes
        The bytes.
    where : str
        Where the bytes came from, for messages.

    Returns
    -------
    dict
        The manifest.
    """
    m = json_document(data, where, "manifest", MAX_MANIFEST_BYTES)
    if not isinstance(m, dict) or m.get("format") != MANIFEST_FORMAT:
        raise SnapshotError(f"{where}: not a taxoforge snapshot manifest (expected \"format\": \"{MANIFEST_FORMAT}\")")
    missing = [k for k in _REQUIRED if k not in m]
    if missing:
        raise SnapshotError(f"{where}: manifest lacks field(s) {missing}")
    try:  # names become paths: the id grammar first (a store is untrusted input)
        validate_name(m["taxonomy"])
        validate_name(m["version"], "version")
    except SnapshotError as e:
        raise SnapshotError(f"{where}: {e}") from None
    if not isinstance(m["files"], dict):
        raise SnapshotError(f"{where}: \"files\" must be an object of file name → sha256 and size")
    for fname, meta in m["files"].items():
        if (not isinstance(fname, str) or not _NAME_RE.fullmatch(fname) or fname == MANIFEST_NAME
                or not isinstance(meta, dict) or not isinstance(meta.get("sha256"), str)
                or type(meta.get("size")) is not int or meta["size"] < 0):
            raise SnapshotError(f"{where}: bad file entry {fname!r} in manifest (expected a plain file name with "
                                "sha256 and size)")
    return m


def read_manifest(folder: str | os.PathLike) -> dict:
    """The parsed ``manifest.json`` of a snapshot folder: a regular file, not a symbolic
    link, of at most :data:`MAX_MANIFEST_BYTES`.

    Parameters
    ----------
    folder : str or os.PathLike
        The folder.

    Returns
    -------
    dict
        The parsed ``manifest.json`` of a snapshot folder: a regular file, not a
        symbolic link, of at most :data:`MAX_MANIFEST_BYTES`.
    """
    path = Path(folder) / MANIFEST_NAME
    try:
        data = read_regular_file(path, MAX_MANIFEST_BYTES, "manifest")
    except FileNotFoundError:
        raise SnapshotError(f"{folder}: no {MANIFEST_NAME} — not a snapshot folder") from None
    except (UnsafePath, FileTooLarge) as e:
        raise SnapshotError(str(e)) from None
    return parse_manifest(data, str(path))
