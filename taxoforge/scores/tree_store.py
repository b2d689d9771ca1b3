"""A scored tree's working set, stored once per content and memory-mapped by every later run.

A scoring run needs of its tree: the :class:`~taxoforge.trees.taxonomy.Taxonomy` (ids,
parents, depths, labels; pre-order positions and subtree sizes), the ranks (breakdowns),
and the key of its mapping index. Building them from the tables means reading the
Parquet files and checking the tree — seconds on the 1.4 M-node iNaturalist tree, on
every call although the tree has not changed. :func:`open_tree` stores them the first
time, in a folder named after the tree's **content hash** (the citation's
``content_sha256``, which a tree folder remembers by its files' stamps and a snapshot
carries in its manifest), and memory-maps them afterwards:

* ``parent_idx.npy``, ``depth.npy``, ``preorder.npy``, ``subtree_size.npy`` — the arrays;
* ``rank_code.npy`` — every node's rank as a small integer (``-1``: none; the header names
  the rank of each code), so the breakdowns' rank queries compare integers and no string
  per node is made;
* ``nodes.arrow`` — ``node_id`` and ``label`` in id order (Arrow IPC, read in place);
* ``header.json`` — the format, a fingerprint of the code that makes the arrays, the
  content hash, the mapping index's tree key, the node count and every array's dtype,
  shape and XXH3 checksum (checked on the first load and again whenever a file changed, as
  the mapping index's are).

A folder that does not match in full is rebuilt, never used; the build runs under a file
lock and the folder takes its final name whole (:func:`taxoforge.files.atomic_directory`).
The folder lies where the tree's mapping indexes do
(:func:`taxoforge.scores.mapping.store.index_place`): ``<tree>/.taxoforge-index/``, the
snapshot store, or the cache. The names table is not stored: it is read from the tables
when something asks for it.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

__all__ = ["StoredTree", "open_tree", "TREE_FORMAT"]

TREE_FORMAT = 2
HEADER = "header.json"
ARRAYS = ("parent_idx", "depth", "preorder", "subtree_size")
_CODE = ("trees/taxonomy.py", "trees/stored.py", "trees/lca.py", "trees/tables.py", "scores/tree_store.py")


@lru_cache(maxsize=1)
def _code_fingerprint() -> str:
    h = hashlib.sha256(f"tree format {TREE_FORMAT}\n".encode())
    root = resources.files("taxoforge")
    for name in _CODE:
        h.update(name.encode() + b"\0" + root.joinpath(name).read_bytes() + b"\0")
    return h.hexdigest()


@dataclass
class StoredTree:
    """What :func:`open_tree` gives.

    Parameters
    ----------
    taxonomy : taxoforge.trees.stored.StoredTaxonomy or taxoforge.trees.taxonomy.Taxonomy
        The tree.
    rank_codes : tuple of (numpy.ndarray, list of str) or None
        Every node's rank in id order as a code (``-1``: none) and the rank of each code
        (None when the tree has no ranks): :class:`~taxoforge.trees.ranked_tree.RankedTree`'s
        ``rank_codes``.
    tree_key : str
        The key of the tree's mapping index (:func:`taxoforge.scores.mapping.store.tree_key`).
    path : pathlib.Path or None
        Where it is stored (None: not stored).
    built : bool
        Whether this call built it.
    seconds : float
        The time it took.
    """

    taxonomy: object
    rank_codes: tuple | None
    tree_key: str
    path: Path | None
    built: bool
    seconds: float

    @property
    def ranks(self) -> np.ndarray | None:
        """Every node's rank in id order, an object array (``None`` where a node has none;
        None for a tree without ranks), made from :attr:`rank_codes`."""
        if self.rank_codes is None:
            return None
        codes, names = self.rank_codes
        return np.array([*names, None], dtype=object)[np.asarray(codes)]  # code -1: the last slot, None


class _NamesReader:
    """Reads a tree's names table when first asked (picklable, unlike a closure)."""

    def __init__(self, tables) -> None:
        self.tables = tables

    def __call__(self):
        return self.tables.names


def _checksum_file(path: Path, offset: int, nbytes: int) -> str:
    import xxhash

    h = xxhash.xxh3_64()
    with open(path, "rb") as fh:
        fh.seek(offset)
        left = nbytes
        while left > 0:
            chunk = fh.read(min(left, 1 << 24))
            if not chunk:
                break
            h.update(chunk)
            left -= len(chunk)
    return h.hexdigest()


def _read(path: Path, content_sha256: str, tables) -> StoredTree | None:
    """The stored tree in ``path``, or None when it is missing or does not match in full."""
    import polars as pl
    import pyarrow as pa

    from taxoforge.scores.mapping.store import checked_before, remember_checked, remember_tree_key
    from taxoforge.trees.stored import StoredTaxonomy

    t0 = time.perf_counter()
    try:
        header = json.loads((path / HEADER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if (not isinstance(header, dict) or header.get("format") != TREE_FORMAT or header.get("code") != _code_fingerprint()
            or header.get("content_sha256") != content_sha256):
        return None
    arrays = {}
    shapes = header.get("arrays") or {}
    has_ranks = header.get("ranks") is not None
    files = [*(f"{name}.npy" for name in ARRAYS), *(["rank_code.npy"] if has_ranks else []), "nodes.arrow"]
    checked = checked_before(path, files)
    try:
        for name in ARRAYS + (("rank_code",) if has_ranks else ()):
            a = np.load(path / f"{name}.npy", mmap_mode="r", allow_pickle=False)
            dtype, shape, digest = shapes[name]
            if str(a.dtype) != dtype or list(a.shape) != shape or (
                    not checked and _checksum_file(path / f"{name}.npy", a.offset, a.nbytes) != digest):
                return None
            arrays[name] = np.asarray(a)  # a plain array over the same mapped pages: no np.memmap cost per slice
        if not checked and (_checksum_file(path / "nodes.arrow", 0, (path / "nodes.arrow").stat().st_size)
                            != header["nodes_arrow"]):
            return None
        if not checked:
            remember_checked(path, files)
        with pa.memory_map(str(path / "nodes.arrow")) as src:
            table = pa.ipc.open_file(src).read_all()
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowException):
        return None
    n = int(header.get("nodes", -1))
    if table.num_rows != n or any(len(a) != n for a in arrays.values()):
        return None
    ids = pl.from_arrow(table.column("node_id"))
    labels = pl.from_arrow(table.column("label")) if "label" in table.column_names else None
    rank_codes = (arrays["rank_code"], list(header["ranks"])) if has_ranks else None
    tax = StoredTaxonomy(ids, arrays["parent_idx"], arrays["depth"], labels=labels, names=_NamesReader(tables),
                         preorder=(arrays["preorder"], arrays["subtree_size"]))
    remember_tree_key(tax, header["tree_key"])
    return StoredTree(tax, rank_codes, header["tree_key"], path, False, time.perf_counter() - t0)


def _write(path: Path, content_sha256: str, tables, tax) -> None:
    import polars as pl
    import pyarrow as pa

    from taxoforge.files import atomic_directory, write_text_atomic
    from taxoforge.scores.mapping.store import tree_key

    labels = tax._labels
    cols = {"node_id": pl.Series(tax.ids.tolist(), dtype=pl.String),
            "label": pl.Series(labels if labels is not None else [None] * len(tax), dtype=pl.String)}
    table = pl.DataFrame({k: v.alias(k) for k, v in cols.items()}).to_arrow()
    pre, size = tax._preorder
    arrays = {"parent_idx": np.ascontiguousarray(tax.parent_idx, np.int64),
              "depth": np.ascontiguousarray(tax.depth_arr, np.int32),
              "preorder": np.ascontiguousarray(pre, np.int64), "subtree_size": np.ascontiguousarray(size, np.int64)}
    rank_codes = _rank_codes(tables, tax)
    if rank_codes is not None:
        arrays["rank_code"] = np.ascontiguousarray(rank_codes[0], np.int16)
    with atomic_directory(path) as tmp:
        shapes = {}
        for name, a in arrays.items():
            np.save(tmp / f"{name}.npy", a, allow_pickle=False)
            m = np.load(tmp / f"{name}.npy", mmap_mode="r")
            shapes[name] = [str(a.dtype), list(a.shape), _checksum_file(tmp / f"{name}.npy", m.offset, m.nbytes)]
            del m
        with pa.OSFile(str(tmp / "nodes.arrow"), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        header = {"format": TREE_FORMAT, "code": _code_fingerprint(), "content_sha256": content_sha256,
                  "tree_key": tree_key(tax), "nodes": len(tax), "arrays": shapes,
                  "ranks": rank_codes[1] if rank_codes is not None else None,
                  "nodes_arrow": _checksum_file(tmp / "nodes.arrow", 0, (tmp / "nodes.arrow").stat().st_size),
                  "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        write_text_atomic(tmp / HEADER, json.dumps(header, indent=2, sort_keys=True) + "\n")


def open_tree(tables, content_sha256: str, *, index_dir: str | os.PathLike | None = None) -> StoredTree:
    """The stored working set of the tree ``tables`` whose content hash is
    ``content_sha256`` (module docstring): memory-mapped when an earlier call stored it,
    else built from the tables (checked as :class:`~taxoforge.trees.taxonomy.Taxonomy`
    checks a tree) and stored.

    Parameters
    ----------
    tables : taxoforge.trees.tables.TreeTables
        The tree's tables (read only when the tree is built).
    content_sha256 : str
        Their content hash (the citation's).
    index_dir : str or os.PathLike, optional
        Where the mapping indexes are kept, if not in the default place.

    Returns
    -------
    StoredTree
    """
    from taxoforge.files.locks import held_lock
    from taxoforge.scores.mapping.store import index_place

    t0 = time.perf_counter()
    place = index_place(tables.folder, index_dir)
    path = place.root / f"{content_sha256[:16]}-tree-{TREE_FORMAT}"
    got = _read(path, content_sha256, tables)
    if got is not None:
        return got
    try:
        place.root.mkdir(parents=True, exist_ok=True)
        with held_lock(str(path) + ".lock", f"the stored tree {path.name}", 3600):
            got = _read(path, content_sha256, tables)
            if got is not None:
                return got
            tax = tables.taxonomy()
            _write(path, content_sha256, tables, tax)
        if place.own:  # beside a tree: the stored trees of its earlier contents go
            import shutil

            for old in place.root.glob("*-tree-*"):  # earlier contents, or an earlier format
                if old.is_dir() and old.name != path.name:
                    shutil.rmtree(old, ignore_errors=True)
    except OSError:  # a folder that cannot be written: the tree in memory, stored nowhere
        tax = tables.taxonomy()
        return StoredTree(tax, _rank_codes(tables, tax), _key(tax), None, True, time.perf_counter() - t0)
    got = _read(path, content_sha256, tables)
    if got is None:  # pragma: no cover - just written
        raise OSError(f"{path}: the stored tree just written cannot be read back")
    got.built, got.seconds = True, time.perf_counter() - t0
    return got


def _key(tax) -> str:
    from taxoforge.scores.mapping.store import tree_key

    return tree_key(tax)


def _rank_codes(tables, tax) -> tuple[np.ndarray, list[str]] | None:
    """Every node's rank in id order as a code into the sorted list of the tree's ranks
    (``-1``: none), and that list; None for a tree without a ``rank`` column."""
    import polars as pl

    nodes = tables.nodes
    if "rank" not in nodes.columns:
        return None
    ids = pl.DataFrame({"node_id": pl.Series(tax.ids.tolist(), dtype=pl.String)})
    ranks = ids.join(nodes.select(pl.col("node_id").cast(pl.String), pl.col("rank").cast(pl.String)), on="node_id",
                     how="left", maintain_order="left")["rank"]
    names = sorted(ranks.drop_nulls().unique().to_list())
    codes = ranks.replace_strict({r: i for i, r in enumerate(names)}, default=-1, return_dtype=pl.Int16).to_numpy()
    return codes, names


# ---------------------------------------------------------------------------- resolved labels
#: the code that decides how a label resolves: any change to it starts a new table
_RESOLVER_CODE = ("text.py", "trees/ranks.py", "trees/tables.py")


@lru_cache(maxsize=1)
def resolver_fingerprint() -> str:
    """SHA-256 of the label linker's sources (every module of :mod:`taxoforge.links` and
    :data:`_RESOLVER_CODE`): resolved labels are reused only under the same rules."""
    root = resources.files("taxoforge")
    h = hashlib.sha256(b"resolved labels 1\n")
    names = sorted(f"links/{p.name}" for p in root.joinpath("links").iterdir() if p.name.endswith(".py"))
    for name in [*names, *_RESOLVER_CODE]:
        p = root.joinpath(name)
        if p.is_file():
            h.update(name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


class ResolvedLabels:
    """The labels resolved against one stored tree, kept beside it
    (``labels-<resolver fingerprint>.parquet`` in the tree's folder): the rows of the links
    table the label linker (:func:`taxoforge.links.resolve.resolve_labels`) gave, keyed by
    ``(dataset, label_id)``. A label resolves on its own, whatever else is in its batch, so
    a repeat run reuses the rows of the labels it has seen and resolves only new ones; a
    file that cannot be read counts as empty (its labels are resolved again).

    Parameters
    ----------
    folder : str or os.PathLike
        The stored tree's folder.
    """

    def __init__(self, folder: str | os.PathLike) -> None:
        self.path = Path(folder) / f"labels-{resolver_fingerprint()[:16]}.parquet"
        self._table = None

    def _load(self):
        import polars as pl

        if self._table is None:
            try:
                self._table = pl.read_parquet(self.path)
            except Exception:  # noqa: BLE001 - absent or damaged: nothing is reused
                self._table = None
        return self._table

    def lookup(self, pairs: list[tuple[str, str]]):
        """The stored links rows of the pairs that have one.

        Parameters
        ----------
        pairs : list of tuple of str
            ``(dataset, label_id)`` pairs.

        Returns
        -------
        polars.DataFrame or None
            Their rows of the links table (None when nothing is stored).
        """
        import polars as pl

        table = self._load()
        if table is None or not pairs:
            return None
        want = pl.DataFrame({"dataset": [p[0] for p in pairs], "label_id": [p[1] for p in pairs]},
                            schema={"dataset": pl.String, "label_id": pl.String})
        return table.join(want, on=["dataset", "label_id"], how="semi")

    def add(self, links) -> None:
        """Keep newly resolved labels.

        Written atomically; a file that cannot be written only costs the next run the
        resolving.

        Parameters
        ----------
        links : polars.DataFrame
            Rows of the links table the label linker gave.
        """
        import polars as pl

        from taxoforge.files import write_parquet_atomic

        if not links.height:
            return
        table = self._load()
        merged = links if table is None else pl.concat([table, links], how="diagonal_relaxed").unique(
            ["dataset", "label_id"], keep="first", maintain_order=True)
        try:
            write_parquet_atomic(merged, self.path)
        except OSError:
            return
        self._table = merged
