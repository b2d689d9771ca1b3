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
The names table is not stored: it is read from the tables when something asks for it.

**Where** a tree's working set and its mapping indexes are kept (:func:`index_place`):
under ``--index-dir`` / ``$TAXOFORGE_INDEX_DIR`` when given; else beside a tree, in
``<tree folder>/.taxoforge-index/``, when the tree was read from a folder that can be
written. A **snapshot folder** is frozen and never written, not even a hidden folder inside
it: one in a local store (``<store>/<taxonomy>/<version>/``) keeps them in
``<store>/.taxoforge-index/``, beside the snapshots and shared by all of them. Everything
else (tables built in memory, a folder that cannot be written, a snapshot outside a store)
uses ``$TAXOFORGE_CACHE_DIR/mapping-index/``. The mapping indexes
(:mod:`taxoforge.scores.mapping.store`) are keyed by :func:`tree_key`, which the stored
tree remembers, and share the check memo (:func:`checked_before`).

:class:`ResolvedLabels` keeps, beside a stored tree, the labels the label linker resolved
against it, so a repeat run resolves only labels it has not seen.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from functools import lru_cache, partial
from importlib import resources
from pathlib import Path

import numpy as np
import polars as pl

from taxoforge.files import atomic_directory, default_cache_dir, write_parquet_atomic, write_text_atomic
from taxoforge.files.locks import held_lock
from taxoforge.snapshots.catalogue import INDEX_NAME
from taxoforge.snapshots.manifest import MANIFEST_NAME
from taxoforge.trees.taxonomy import Taxonomy
from taxoforge.trees.threads import run

__all__ = ["open_tree", "stores_no_tree", "TREE_FORMAT", "INDEX_FOLDER", "IndexPlace", "index_place", "tree_key",
           "remember_tree_key", "checked_before", "remember_checked", "ResolvedLabels", "resolver_fingerprint"]

INDEX_FOLDER = ".taxoforge-index"  # beside a tree: <tree folder>/.taxoforge-index/

TREE_FORMAT = 2
HEADER = "header.json"
ARRAYS = ("parent_idx", "depth", "preorder", "subtree_size")
_CODE = ("trees/taxonomy.py", "trees/node_ids.py", "trees/index_queries.py", "trees/rank_queries.py", "trees/lca.py",
         "trees/tables.py", "snapshots/tree_cache.py")


@lru_cache(maxsize=1)
def _code_fingerprint() -> str:
    h = hashlib.sha256(f"tree format {TREE_FORMAT}\n".encode())
    root = resources.files("taxoforge")
    for name in _CODE:
        h.update(name.encode() + b"\0" + root.joinpath(name).read_bytes() + b"\0")
    return h.hexdigest()


# ---------------------------------------------------------------------------- where, and the tree's key
def remember_tree_key(taxonomy, key: str) -> None:
    """Give :func:`tree_key` of ``taxonomy`` without hashing it (a tree whose key was stored
    with it, :func:`open_tree`).

    Parameters
    ----------
    taxonomy : object
        The tree.
    key : str
        Its key.
    """
    taxonomy.__dict__["_tree_key"] = key


def tree_key(taxonomy) -> str:
    """Content hash of what the name tables are built from: the node ids (in index order)
    and labels, and the names table's ``node_id``, ``name`` and ``kind`` (row hashes of
    polars, whose version is part of the key — a new polars only costs one rebuild).
    Computed once per tree object (a :class:`~taxoforge.trees.taxonomy.Taxonomy` does not
    change).

    Parameters
    ----------
    taxonomy : object
        The taxonomy.

    Returns
    -------
    str
        Content hash of what the name tables are built from: the node ids (in index
        order) and labels, and the names table's ``node_id``, ``name`` and ``kind`` (row
        hashes of polars, whose version is part of the key — a new polars only costs one
        rebuild).
    """
    known = getattr(taxonomy, "__dict__", {}).get("_tree_key")
    if known is not None:
        return known
    key = _tree_key(taxonomy)
    if hasattr(taxonomy, "__dict__"):
        remember_tree_key(taxonomy, key)
    return key


def _tree_key(taxonomy) -> str:
    h = hashlib.sha256(f"polars {pl.__version__}\n".encode())
    labels = getattr(taxonomy, "_labels", None)
    nodes = pl.DataFrame({"node_id": taxonomy.id_series,
                          "label": pl.Series(labels if labels else [None] * len(taxonomy), dtype=pl.String)})
    h.update(nodes.hash_rows().to_numpy().tobytes())
    names = taxonomy.names_table
    cols = [pl.col(c).cast(pl.String) if c in names.columns else pl.lit(None, pl.String).alias(c)
            for c in ("node_id", "name", "kind")]
    h.update(b"\0names\0" + names.select(cols).hash_rows().to_numpy().tobytes())
    return h.hexdigest()


@dataclass(frozen=True)
class IndexPlace:
    """Where the indexes of a tree are stored: ``root`` (one sub-folder per index),
    ``kind`` (``"index dir"``, ``"tree folder"``, ``"snapshot store"`` or ``"cache"``) and
    ``own`` — the root holds the indexes of this one tree only (beside a tree folder), so
    the indexes of its earlier contents are removed once a new one is in place.

    Attributes
    ----------
    root : Path
        The folder holding one sub-folder per index.
    kind : str
        ``"index dir"``, ``"tree folder"``, ``"snapshot store"`` or ``"cache"``.
    own : bool
        Whether the tree owns the folder (indexes of other trees never go there).
    """

    root: Path
    kind: str
    own: bool = False


def _writable(folder: Path) -> bool:
    """``folder`` (or, when it does not exist yet, its parent) can be written."""
    probe = folder if folder.exists() else folder.parent
    return probe.is_dir() and os.access(probe, os.W_OK | os.X_OK)


def index_place(folder: str | os.PathLike | None = None, index_dir: str | os.PathLike | None = None) -> IndexPlace:
    """Where the indexes of the tree read from ``folder`` are stored (module docstring):

    * ``index_dir`` when given (``--index-dir``, ``$TAXOFORGE_INDEX_DIR``);
    * a **tree folder** (no ``manifest.json``): ``<folder>/.taxoforge-index`` when it can be
      written;
    * a **snapshot folder** (with ``manifest.json``) is frozen and never written: inside a
      local store (``<store>/<taxonomy>/<version>/`` beside ``<store>/index.json``) its
      indexes go to ``<store>/.taxoforge-index``, shared by every version (the keys are
      content hashes), when the store can be written;
    * otherwise (tables built in memory, a folder that cannot be written, a snapshot
      outside a store): ``$TAXOFORGE_CACHE_DIR/mapping-index``
      (:func:`default_cache_dir`).

    Parameters
    ----------
    folder : str or os.PathLike, optional
        The folder the tree was read from, if any.
    index_dir : str or os.PathLike, optional
        A folder the user named for indexes, if any.

    Returns
    -------
    IndexPlace
        Where the indexes of the tree read from ``folder`` are stored (module
        docstring):
    """
    if index_dir is not None and str(index_dir) != "":
        return IndexPlace(Path(index_dir), "index dir")
    if folder is not None:
        folder = Path(folder)
        if (folder / MANIFEST_NAME).is_file():
            store = folder.resolve().parent.parent
            if (store / INDEX_NAME).is_file() and _writable(store / INDEX_FOLDER):
                return IndexPlace(store / INDEX_FOLDER, "snapshot store")
        elif _writable(folder / INDEX_FOLDER):
            return IndexPlace(folder / INDEX_FOLDER, "tree folder", own=True)
    return IndexPlace(default_cache_dir() / "mapping-index", "cache")


CHECKED = "checked.json"


def _stamps(folder: Path, files) -> dict | None:
    out = {}
    for f in files:
        try:
            st = os.stat(folder / f)
        except OSError:
            return None
        out[f] = [st.st_size, st.st_ino, st.st_dev, st.st_mtime_ns, st.st_ctime_ns]
    return out


def checked_before(folder: Path, files) -> bool:
    """Whether every file of ``files`` in ``folder`` passed its checksum before and has not
    changed since: the stamps (size, inode, device, modification and change times) recorded
    then (:func:`remember_checked`) are still the files' own. Any write to a file changes
    its change time, so a file altered since is checked again (and refused when it no
    longer matches); an unchanged one is not read again on every load.

    Parameters
    ----------
    folder : pathlib.Path
        The stored folder.
    files : iterable of str
        The files' names in it.

    Returns
    -------
    bool
    """
    try:
        rec = json.loads((folder / CHECKED).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    now = _stamps(folder, files)
    return now is not None and isinstance(rec, dict) and rec.get("files") == now


def remember_checked(folder: Path, files, racy_s: float = 2.0) -> None:
    """Record the stamps of ``files`` just checked (:func:`checked_before`), unless a file
    was modified within ``racy_s`` seconds (a write in the same clock tick could keep its
    times) or the record cannot be written (the next load checks again).

    Parameters
    ----------
    folder : pathlib.Path
        The stored folder.
    files : iterable of str
        The files' names in it.
    racy_s : float
        Files modified this recently are not recorded.
    """
    now = _stamps(folder, files)
    if now is None or any(time.time_ns() - s[3] < racy_s * 1e9 for s in now.values()):
        return
    try:
        write_text_atomic(folder / CHECKED, json.dumps({"files": now}, sort_keys=True) + "\n")
    except OSError:
        pass



# ---------------------------------------------------------------------------- the stored tree
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


def _read(path: Path, content_sha256: str, tables) -> Taxonomy | None:
    """The stored tree in ``path``, or None when it is missing or does not match in full."""
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
        # polars' own reader: converting Arrow's table instead imports pyarrow.compute (0.1 s of a repeat call)
        table = pl.read_ipc(path / "nodes.arrow")
    except (OSError, ValueError, KeyError, TypeError, pl.exceptions.PolarsError):
        return None
    n = int(header.get("nodes", -1))
    if table.height != n or any(len(a) != n for a in arrays.values()):
        return None
    ids = table["node_id"]
    labels = table["label"] if "label" in table.columns else None
    rank_codes = (arrays["rank_code"], list(header["ranks"])) if has_ranks else None
    tax = Taxonomy.from_arrays(ids, arrays["parent_idx"], arrays["depth"], labels=labels,
                               names=partial(getattr, tables, "names"),  # the names table read when first asked for
                               preorder=(arrays["preorder"], arrays["subtree_size"]), rank_codes=rank_codes,
                               name=tables.name)
    tax.__dict__["_tree_key"] = header["tree_key"]  # the mapping index's key, stored with the tree: not hashed again
    tax.stored_path, tax.tables = path, tables
    return tax


def _write(path: Path, content_sha256: str, tables, tax) -> None:
    import pyarrow as pa


    labels = tax._labels
    cols = {"node_id": tax.id_series,
            "label": pl.Series(labels if labels is not None else [None] * len(tax), dtype=pl.String)}
    table = pl.DataFrame({k: v.alias(k) for k, v in cols.items()}).to_arrow()
    pre, size = tax._preorder
    arrays = {"parent_idx": np.ascontiguousarray(tax.parent_idx, np.int64),
              "depth": np.ascontiguousarray(tax.depth_arr, np.int32),
              "preorder": np.ascontiguousarray(pre, np.int64), "subtree_size": np.ascontiguousarray(size, np.int64)}
    # the ranks' codes and the mapping index's key (a join and a row hash, both off the GIL) at once,
    # the tables they read read first (a lazy table is read on first use, by one thread)
    _ = tables.nodes, tax.names_table, tax.id_series
    rank_codes, key = run(lambda job: job(), [(partial(_rank_codes, tables, tax),), (partial(tree_key, tax),)])
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
                  "tree_key": key, "nodes": len(tax), "arrays": shapes,
                  "ranks": rank_codes[1] if rank_codes is not None else None,
                  "nodes_arrow": _checksum_file(tmp / "nodes.arrow", 0, (tmp / "nodes.arrow").stat().st_size),
                  "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        write_text_atomic(tmp / HEADER, json.dumps(header, indent=2, sort_keys=True) + "\n")


def open_tree(tables, content_sha256: str, *, index_dir: str | os.PathLike | None = None,
              built: Future | None = None, when_read: Callable[[object], None] | None = None) -> Taxonomy:
    """The tree ``tables`` hold, whose content hash is ``content_sha256``, from its stored
    working set (module docstring): memory-mapped when an earlier call stored it, else built
    from the tables (checked as :class:`~taxoforge.trees.taxonomy.Taxonomy` checks a tree)
    and stored. A folder that cannot be written gives the tree built in memory, stored nowhere.

    Parameters
    ----------
    tables : taxoforge.trees.tables.TreeTables
        The tree's tables (read only when the tree is built).
    content_sha256 : str
        Their content hash (the citation's).
    index_dir : str or os.PathLike, optional
        Where the mapping indexes are kept, if not in the default place.
    built : concurrent.futures.Future, optional
        The tree being made from ``tables`` meanwhile (:func:`stores_no_tree`), used when it
        must be stored instead of making it again.
    when_read : callable, optional
        Called with ``tables`` when this call is about to make the tree from them (and store
        it), to start work that needs the tables alone meanwhile; not called where ``built``
        makes it, nor for a tree read back.

    Returns
    -------
    Taxonomy
        The tree; its ``stored_path`` is the folder it is stored in (None: not stored).
    """
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
            if built is None and when_read is not None:
                when_read(tables)
            _write(path, content_sha256, tables, built.result() if built is not None else Taxonomy.of(tables))
        if place.own:  # beside a tree: the stored trees of its earlier contents go
            for old in place.root.glob("*-tree-*"):  # earlier contents, or an earlier format
                if old.is_dir() and old.name != path.name:
                    shutil.rmtree(old, ignore_errors=True)
    except OSError:  # a folder that cannot be written: the tree in memory, stored nowhere
        return built.result() if built is not None else Taxonomy.of(tables)
    got = _read(path, content_sha256, tables)
    if got is None:  # pragma: no cover - just written
        raise OSError(f"{path}: the stored tree just written cannot be read back")
    return got


def stores_no_tree(folder: str | os.PathLike, index_dir: str | os.PathLike | None = None) -> bool:
    """Whether no stored tree of any content is kept for the tree folder ``folder`` yet (its
    first use): then the tree is surely made from the tables, and can be made while their
    content hash is computed (:func:`open_tree`'s ``built``).

    Parameters
    ----------
    folder : str or os.PathLike
        The tree folder.
    index_dir : str or os.PathLike, optional
        Where the mapping indexes are kept, if not in the default place.

    Returns
    -------
    bool
    """
    root = index_place(folder, index_dir).root
    return not root.is_dir() or not any(root.glob("*-tree-*"))


def _rank_codes(tables, tax) -> tuple[np.ndarray, list[str]] | None:
    """Every node's rank in id order as a code into the sorted list of the tree's ranks
    (``-1``: none), and that list; None for a tree without a ``rank`` column."""
    nodes = tables.nodes
    if "rank" not in nodes.columns:
        return None
    ids, table = tax.id_series, nodes.select(pl.col("node_id").cast(pl.String), pl.col("rank").cast(pl.String))
    if table["node_id"].equals(ids):  # the table in id order (as written): its ranks as they stand
        ranks = table["rank"]
    else:
        ranks = pl.DataFrame({"node_id": ids}).join(table, on="node_id", how="left", maintain_order="left")["rank"]
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
