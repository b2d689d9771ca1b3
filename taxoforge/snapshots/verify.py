"""Check a local snapshot folder against its manifest, and summarise it.

``verify_folder`` checks, in order: the manifest parses; every file it names exists — a
regular file, not a symbolic link (a link could point anywhere) — with the recorded size
and SHA-256; no other ``.parquet`` file lies beside them; and (``deep``,
the default) the tables read back with the recorded row counts and the content hash
recomputed from them equals ``content_sha256`` (and the version, when it is
content-derived) — so a manifest edited to match a tampered file is caught too.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from taxoforge.snapshots.manifest import (
    MANIFEST_NAME,
    TABLE_FILES,
    VERSION_LENGTH,
    SnapshotError,
    content_id,
    file_sha256,
    read_manifest,
)
from taxoforge.trees.tables import TreeTables

__all__ = ["VerifyReport", "verify_folder", "check_content", "read_snapshot", "tables_from_bytes", "summarise"]


@dataclass
class VerifyReport:
    """What verifying a snapshot found; never raised, always returned.

    Attributes
    ----------
    path : pathlib.Path or str
        The folder checked (a URL for a snapshot checked in a remote store).
    ok : bool
        Whether every check passed.
    problems : list of str
        Every problem found, one line each.
    checked : list of str
        What was checked.
    manifest : dict or None
        The manifest, when it could be read.
    """

    path: Path | str  # the folder checked (a URL for a snapshot checked in a remote store)
    ok: bool
    problems: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    manifest: dict | None = None

    def as_dict(self) -> dict:
        """The report as JSON values (``taxoforge verify --json``).

        Returns
        -------
        dict
            ``path``, ``ok``, ``problems``, ``checked``, ``taxonomy``, ``version``, ``ref``.
        """
        m = self.manifest or {}
        return {"path": str(self.path), "ok": self.ok, "problems": self.problems, "checked": self.checked,
                "taxonomy": m.get("taxonomy"), "version": m.get("version"),
                "ref": f"{m.get('taxonomy')}@{m.get('version')}" if m else None}


#: What a snapshot table may decode to while a pull checks it: this many times its size on
#: disk, at least :data:`MIN_DECODED_BYTES` (a table that decompresses to gigabytes is refused).
MAX_DECODED_RATIO = 100
MIN_DECODED_BYTES = 256 * 2**20


def read_snapshot_bounded(folder: str | os.PathLike, manifest: dict) -> TreeTables:
    """:func:`read_snapshot`, each table read in counted batches that stop at
    :data:`MAX_DECODED_RATIO` times the table's size (at least :data:`MIN_DECODED_BYTES`):
    the tables a pull received are checked without trusting them to decode to a sane size.

    Parameters
    ----------
    folder : str or os.PathLike
        The folder.
    manifest : dict
        Its manifest.

    Returns
    -------
    TreeTables
    """
    from taxoforge.files.parquet_records import read_parquet_table
    from taxoforge.files.record_limits import RecordLimits

    folder = Path(folder)

    def read(fname: str) -> pl.DataFrame | None:
        p = folder / fname
        if not p.exists():
            return None
        cap = max(MIN_DECODED_BYTES, MAX_DECODED_RATIO * p.stat().st_size)
        return read_parquet_table(p, limits=RecordLimits(max_table_bytes=cap, max_records=10**9, max_cells=10**11),
                                  what="snapshot table")

    tables = _snapshot_tables(manifest, read, where=str(folder))
    tables.folder = folder
    return tables


def verify_folder(folder: str | os.PathLike, *, deep: bool = True, bounded: bool = False) -> VerifyReport:
    """Verify the snapshot in ``folder`` (see module doc); never raises on a bad snapshot,
    the report lists every problem.

    Parameters
    ----------
    folder : str or os.PathLike
        The folder.
    deep : bool, optional
        Whether to recompute the content hash too.
    bounded : bool, optional
        Read the tables for that with :func:`read_snapshot_bounded` (files just received).

    Returns
    -------
    VerifyReport
        Every problem found (none: the snapshot is intact).
    """
    folder = Path(folder)
    rep = VerifyReport(folder, ok=False)
    try:
        m = read_manifest(folder)
    except SnapshotError as e:
        rep.problems.append(str(e))
        return rep
    rep.manifest = m
    for fname, meta in sorted(m["files"].items()):
        p = folder / fname
        if p.is_symlink():
            rep.problems.append(f"{fname}: a symbolic link (to {os.readlink(p)}), refused")
            continue
        if not p.is_file():
            rep.problems.append(f"{fname}: missing")
            continue
        size = p.stat().st_size
        if meta.get("size") is not None and size != meta["size"]:
            rep.problems.append(f"{fname}: {size} bytes, manifest says {meta['size']}")
            continue
        got = file_sha256(p)
        if got != meta["sha256"]:
            rep.problems.append(f"{fname}: sha256 {got}, manifest says {meta['sha256']}")
            continue
        rep.checked.append(fname)
    extra = sorted(p.name for p in folder.glob("*.parquet") if p.name not in m["files"])
    if extra:
        rep.problems.append(f"files not in the manifest: {', '.join(extra)}")
    if deep and not rep.problems:
        check_content(rep, lambda: (read_snapshot_bounded if bounded else read_snapshot)(folder, m))
    rep.ok = not rep.problems
    return rep


def check_content(rep: VerifyReport, read: Callable[[], TreeTables]) -> TreeTables | None:
    """The deep check of :func:`verify_folder` on the tables ``read()`` returns: row counts
    and the recomputed content hash against ``rep.manifest`` (problems go into ``rep``).
    Returns the tables when they could be read.

    Parameters
    ----------
    rep : VerifyReport
        The report of the file checks, added to.
    read : Callable[[], TreeTables]
        ``read() -> TreeTables``: the snapshot's tables.

    Returns
    -------
    TreeTables or None
        The deep check of :func:`verify_folder` on the tables ``read()`` returns: row
        counts and the recomputed content hash against ``rep.manifest`` (problems go
        into ``rep``).
    """
    m = rep.manifest
    try:
        tables = read()
    except Exception as e:  # noqa: BLE001 - unreadable Parquet despite a matching checksum
        rep.problems.append(f"tables unreadable: {e}")
        return None
    for t, df in tables.tables().items():
        want = m["row_counts"].get(t)
        if want is not None and df.height != want:
            rep.problems.append(f"{TABLE_FILES[t]}: {df.height} rows, manifest says {want}")
    _, full, _ = content_id(tables)
    if full != m["content_sha256"]:
        rep.problems.append(f"content hash {full[:16]}… differs from the manifest's "
                            f"{m['content_sha256'][:16]}…")
    elif m.get("version_source", "content") == "content" and m["version"] != full[:VERSION_LENGTH]:
        rep.problems.append(f"version {m['version']} is not the content id {full[:VERSION_LENGTH]}")
    else:
        rep.checked.append("content hash")
    return tables


def tables_from_bytes(manifest: dict, data: dict[str, bytes]) -> TreeTables:
    """The :class:`TreeTables` of a snapshot whose files' bytes are ``data`` (file name →
    bytes, e.g. fetched from a remote store), like :func:`read_snapshot`.

    Parameters
    ----------
    manifest : dict
        The snapshot's manifest.
    data : dict[str, bytes]
        The bytes.

    Returns
    -------
    TreeTables
        The :class:`TreeTables` of a snapshot whose files' bytes are ``data`` (file name
        → bytes, e.g. fetched from a remote store), like :func:`read_snapshot`.
    """
    return _snapshot_tables(manifest, lambda fname: pl.read_parquet(io.BytesIO(data[fname])) if fname in data else None,
                            where=f"{manifest['taxonomy']}@{manifest['version']}")


def read_snapshot(folder: str | os.PathLike, manifest: dict | None = None) -> TreeTables:
    """The :class:`TreeTables` of a snapshot folder (not verified: see
    :func:`verify_folder`). ``info`` is the tree's provenance recorded in the manifest
    (seed, cycle policy, source versions …) plus ``snapshot`` (``NAME@VERSION``) and the
    ``manifest``.

    Parameters
    ----------
    folder : str or os.PathLike
        The folder.
    manifest : dict, optional
        Its manifest, when the caller has read it.

    Returns
    -------
    TreeTables
        The :class:`TreeTables` of a snapshot folder (not verified: see
        :func:`verify_folder`).
    """
    folder = Path(folder)
    m = manifest or read_manifest(folder)
    tables = _snapshot_tables(m, lambda fname: pl.read_parquet(folder / fname) if (folder / fname).exists() else None,
                              where=str(folder))
    tables.folder = folder
    return tables


def _snapshot_tables(m: dict, read: Callable[[str], pl.DataFrame | None], where: str) -> TreeTables:
    parts = {t: read(fname) for t, fname in TABLE_FILES.items()}
    if parts["nodes"] is None:
        raise SnapshotError(f"{where}: no nodes.parquet")
    info = dict(m.get("info") or {})
    info.update(source_versions=m.get("source_versions", {}), seed=m.get("seed"),
                snapshot=f"{m['taxonomy']}@{m['version']}", manifest=m)
    return TreeTables(name=m["taxonomy"], **parts, info=info)


def summarise(tables: TreeTables) -> dict:
    """Counts a person wants to see: root, nodes, leaves, depth histogram, names, links by
    status and dataset, report rows by kind.

    Parameters
    ----------
    tables : TreeTables
        The tree's tables.

    Returns
    -------
    dict
        Counts a person wants to see: root, nodes, leaves, depth histogram, names, links
        by status and dataset, report rows by kind.
    """
    nodes = tables.nodes
    roots = nodes.filter(pl.col("parent_id").is_null())["node_id"].to_list()
    n_children = nodes.filter(pl.col("parent_id").is_not_null()).group_by("parent_id").len()
    leaves = nodes.height - n_children.height
    depth_hist = {int(d): int(n) for d, n in nodes.group_by("depth").len().sort("depth").iter_rows()}
    links = {}
    for ds, status, n in tables.links.group_by(["dataset", "status"]).len().sort(["dataset", "status"]).iter_rows():
        links.setdefault(ds, {})[status] = int(n)
    report = {k: int(n) for k, n in tables.report.group_by("kind").len().sort("kind").iter_rows()}
    return {
        "nodes": nodes.height,
        "roots": roots,
        "leaves": leaves,
        "max_depth": int(nodes["depth"].max()) if nodes.height else None,
        "depth_histogram": depth_hist,
        "names": tables.names.height,
        "links": links,
        "report": report,
    }


__all__ += ["MANIFEST_NAME"]
