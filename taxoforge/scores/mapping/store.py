"""Persisted mapping indexes: built once per tree and configuration, then memory-mapped.

The name tables of a taxonomy (:class:`~taxoforge.scores.mapping.name_tables.NameTables`) cost
seconds to minutes to build on a large tree (1.4 M iNaturalist taxa) and are the same for
every scoring run against that tree. :func:`open_name_tables` builds them once and stores
them; every later call, process or Dagster run loads them — memory-mapped ``.npy`` files,
never a rebuild.

**Where** (:func:`taxoforge.snapshots.tree_cache.index_place`, with the stored tree): under ``--index-dir`` / ``$TAXOFORGE_INDEX_DIR`` when
given; else beside a tree, in ``<tree folder>/.taxoforge-index/``, when the tree was read
from a folder (:attr:`TreeTables.folder`) that can be written. A **snapshot folder** is
frozen and never written — not even a hidden folder inside it (its manifest lists what it
holds, and a published snapshot is immutable): one in a local store
(``<store>/<taxonomy>/<version>/``) keeps its indexes in ``<store>/.taxoforge-index/``,
beside the snapshots and shared by all of them. Everything else (tables built in memory, a
folder that cannot be written, a snapshot outside a store) uses the cache folder
``$TAXOFORGE_CACHE_DIR/mapping-index/`` (default ``~/.cache/taxoforge``). One folder per
index, named ``<tree key>-<index id>``:

* the **tree key** (:func:`taxoforge.snapshots.tree_cache.tree_key`) is a content hash of what the tables are built from —
  the node ids and labels and the names table (node, name, kind) — so an altered tree never
  finds the index of the old one;
* the **index id** (:attr:`MappingConfig.index_id`) hashes the configuration fields the
  tables depend on (``base_forms``, ``ngram_sizes``, ``skip_name_kinds``); the others (k,
  thresholds, temperature, similarity …) use the same tables.

**What.** ``header.json`` (format, code fingerprint, tree key, index configuration, counts,
and the dtype and shape of every array) and one ``.npy`` file per array. Name embeddings of
an embedding measure are stored in their own folder beside it,
``<tree key>-<index id>.emb-<model id>/`` (:func:`open_name_embeddings`).

**Validity.** A folder is used only when its header matches in full — format version, the
**code fingerprint** (:func:`code_fingerprint`: a hash of the source of the rules that make
the keys — normalisation, base forms and their table, the vocabulary, the index builder —
so an upgrade that changes a key is never mixed with an old index), the full tree key, the
index configuration, every array's dtype and shape — **and** its content is the one this
user's runs derived from the tree: a digest (SHA-256 of the header's fields and of every
array) recorded when the index was built, or when a copy another process wrote was checked
by building it again, in the user's private folder of trusted digests
(:mod:`taxoforge.files.trusted`), never beside the data — a checksum in ``header.json``
proves nothing to a reader when whoever can edit ``name_node.npy`` can edit it too. While
the files' stamps (size, inode, modification and change times) are the recorded ones the
digest still holds; when they changed, the arrays are digested again and used only when the
digest is the recorded one. Anything else (stale, foreign and different, truncated, forged)
is rebuilt, never used; a rebuild that cannot be written is an error naming the folder.
``run.json``'s ``mapping_index`` says how the index in use was verified (``verified``:
``built``, ``trusted digest`` or ``rebuilt and compared``).

**Concurrency.** The build runs under a file lock (:func:`taxoforge.files.locks.held_lock`,
``<folder>.lock``: a folder where it cannot be made is an error at once, a wait is said and
has a deadline) and writes into a temporary folder that takes the final name whole
(:func:`taxoforge.files.atomic_directory`): two processes asking at once build once — the
second waits for the lock, then finds the index and loads it. Beside a tree, indexes of
the tree's earlier contents are removed once a new one is in place.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np
import polars as pl

from taxoforge.files import atomic_directory, write_text_atomic
from taxoforge.files.locks import held_lock
from taxoforge.files.trusted import TrustedDigests, file_stamps
from taxoforge.scores.mapping.config import MappingConfig
from taxoforge.scores.mapping.index_trust import (HEADER, index_digest, index_files, load_index, read_header,
                                                  tables_of, verified_index)
from taxoforge.scores.mapping.name_tables import NameTables, label_series
from taxoforge.snapshots.tree_cache import index_place, tree_key

__all__ = ["INDEX_FORMAT", "IndexInfo", "TablesBuiltAhead", "TreeOfTables", "code_fingerprint", "open_name_tables", "open_name_embeddings", "read_index",
           "STAGES"]

INDEX_FORMAT = 1
STAGES = ("names", "normal forms", "base forms", "postings", "n-grams", "trigrams", "writing")
LOCK_TIMEOUT_S = 3600.0
# the sources whose rules make the keys: any change to them invalidates stored indexes
_KEY_SOURCES = ("text.py", "noun_base_forms.tsv", "scores/mapping/vocabulary.py", "scores/mapping/keys.py",
                "scores/mapping/postings.py", "scores/mapping/strings.py", "scores/mapping/trigrams.py",
                "scores/mapping/name_tables.py")


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """SHA-256 of the index format, the sources that make the keys (:data:`_KEY_SOURCES`)
    and the Unicode version (NFKC and the character categories come from it)."""
    import unicodedata

    h = hashlib.sha256(f"format {INDEX_FORMAT}\nunicode {unicodedata.unidata_version}\n".encode())
    root = resources.files("taxoforge")
    for name in _KEY_SOURCES:
        h.update(name.encode() + b"\0" + root.joinpath(name).read_bytes() + b"\0")
    return h.hexdigest()


@dataclass
class IndexInfo:
    """How a run got its index: its folder, whether this call built it, and the seconds
    spent (building or loading).

    Attributes
    ----------
    path : Path
        The index's folder.
    built : bool
        Whether this call built it.
    seconds : float
        Seconds spent building or loading it.
    tree_key : str
        The key of the tree's content.
    index_id : str
        The key of the tree and the configuration.
    place : str
        Where it is stored (:class:`~taxoforge.snapshots.tree_cache.IndexPlace` kind).
    verified : str
        How its content was known to be the tree's: ``built`` (by this call), ``trusted
        digest`` (a digest this user's runs recorded) or ``rebuilt and compared`` (a copy
        another process wrote, built again here and found equal).
    """

    path: Path
    built: bool
    seconds: float
    tree_key: str
    index_id: str
    place: str = "cache"  # IndexPlace.kind: "index dir", "tree folder", "snapshot store" or "cache"
    verified: str = "built"

    def as_dict(self) -> dict:
        """The record of the index as JSON values (``run.json``'s ``mapping_index``).

        Returns
        -------
        dict
            One entry per field, the path as text.
        """
        return {"path": str(self.path), "built": self.built, "loaded": not self.built,
                "seconds": round(self.seconds, 3), "place": self.place, "tree_key": self.tree_key,
                "index_id": self.index_id, "verified": self.verified}


def _expected_header(key: str, config: MappingConfig) -> dict:
    return {"format": INDEX_FORMAT, "code": code_fingerprint(), "tree_key": key,
            "index_id": config.index_id, "index_config": config.index_config()}


def _trust_key(path: Path, key: str, config: MappingConfig) -> str:
    return f"{os.path.realpath(path)}\0{key}\0{config.index_id}\0{code_fingerprint()}"


def read_index(path: str | os.PathLike, key: str, config: MappingConfig, *, trust=None) -> NameTables | None:
    """The name tables stored in ``path`` (memory-mapped), or None when the folder is
    missing, does not match in full, or holds a content this user's runs never recorded
    (module docstring: never a stale, foreign or forged index).

    Parameters
    ----------
    path : str or os.PathLike
        The index's folder.
    key : str
        The key the index must have.
    config : MappingConfig
        The mapping configuration it must have been built under.
    trust : TrustedDigests, optional
        Where the trusted digests are (default: the user's private folder).

    Returns
    -------
    NameTables or None
    """
    path = Path(path)
    trust = trust or TrustedDigests("mapping-index")
    loaded = load_index(path, _expected_header(key, config))
    if loaded is None or not verified_index(trust, _trust_key(path, key, config), path, loaded):
        return None
    return tables_of(loaded)




def _write_index(path: Path, tables_arrays: dict, meta: dict, header: dict) -> None:
    with atomic_directory(path) as tmp:
        for name, a in tables_arrays.items():
            np.save(tmp / f"{name}.npy", np.ascontiguousarray(a), allow_pickle=False)
        full = dict(header, meta=meta, arrays={k: [str(a.dtype), list(a.shape)] for k, a in tables_arrays.items()},
                    created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        write_text_atomic(tmp / HEADER, json.dumps(full, indent=2, sort_keys=True) + "\n")


class _Progress:
    """The build's stages on a progress bar (``enabled``: True, False, or None — on a
    terminal only)."""

    def __init__(self, enabled: bool | None, what: str) -> None:
        self.bar = None
        if enabled is False:
            return
        from tqdm.auto import tqdm

        self.bar = tqdm(total=len(STAGES), desc=f"mapping index of {what}", unit="stage",
                        disable=None if enabled is None else False, leave=False)

    def stage(self, name: str) -> None:
        if self.bar is not None:
            if self.bar.n or name != STAGES[0]:
                self.bar.update(1)
            self.bar.set_postfix_str(name)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _remove_stale(root: Path, keep: str, key: str) -> None:
    """Beside a tree: remove the indexes of the tree's earlier contents (their lock files
    stay: another process may hold one). Stored trees (``*-tree-*``,
    :mod:`taxoforge.snapshots.tree_cache`) are named by another key and look after themselves."""
    for p in root.iterdir():
        if p.name.startswith(".") or p.name.startswith(key[:16]) or "-tree-" in p.name or not p.is_dir():
            continue
        shutil.rmtree(p, ignore_errors=True)


class TablesBuiltAhead:
    """The name tables of a tree's mapping index, built on a thread of their own from the
    moment the tree's tables are read: pass it as
    :func:`~taxoforge.snapshots.open.open_taxonomy`'s ``when_read``, then to
    :func:`open_name_tables` (``ahead``), which takes its tables where it has to build them.
    On a tree's first use the index is then built while the tables are hashed and the tree is
    made, checked and stored, not after them (the hash, the writes and polars' and numpy's
    kernels mostly run off the GIL).

    The tables are read as the tree reads them (:class:`TreeOfTables`: ids in order, labels,
    names); they are taken only for a tree with the same ids, labels and names, so what is
    stored is what a build from the tree gives. Nothing is started where an index of
    ``config`` is stored in the tree's place already (it will be read, not built).

    Parameters
    ----------
    config : MappingConfig
        The mapping configuration the index will be opened with.
    index_dir : str or os.PathLike, optional
        A folder the user named for indexes, if any.
    """

    def __init__(self, config: MappingConfig, index_dir: str | os.PathLike | None = None) -> None:
        self.config, self.index_dir = config, index_dir
        self._building = None
        self._started = False
        self._cancelled = False
        self._tree = None

    def __call__(self, tables) -> None:
        root = index_place(tables.folder, self.index_dir).root
        if self._started or (root.is_dir() and any(root.glob(f"*-{self.config.index_id}"))):
            return
        self._started = True
        self._tree = TreeOfTables(tables)  # the tables read here, on the caller's thread (a lazy read is not shared)
        pool = ThreadPoolExecutor(1, thread_name_prefix="taxoforge-index-ahead")
        self._building = pool.submit(NameTables.build, self._tree, self.config, progress=self._stage)
        pool.shutdown(wait=False)

    def _stage(self, _name: str) -> None:
        """Between two stages of the build: stop there when the call no longer needs it."""
        if self._cancelled:
            raise _BuildCancelled

    def cancel(self) -> None:
        """Stop the build at its next stage (the call failed before it needed the index), so
        that the process does not wait for it to end."""
        self._cancelled = True

    def tables_for(self, taxonomy, config: MappingConfig):
        """``(arrays, meta)`` as :meth:`NameTables.build` gives them for ``taxonomy`` under
        ``config``, when this built them for a tree of the same ids, labels and names (an
        error of the build is raised here); None otherwise.

        Parameters
        ----------
        taxonomy : Taxonomy
            The tree the index is opened for.
        config : MappingConfig
            The configuration it is opened with.

        Returns
        -------
        tuple or None
        """
        building, tree, self._building, self._tree = self._building, self._tree, None, None  # given once
        if building is None or config.index_id != self.config.index_id or not tree.same_names_as(taxonomy):
            return None
        return building.result()


class _BuildCancelled(Exception):
    """A build ahead stopped because the call it was for failed first."""


class TreeOfTables:
    """What :meth:`NameTables.build` reads of a tree — its ids in order, its labels and its
    names table — straight from the tree's tables (whose nodes are in id order,
    :class:`~taxoforge.trees.tables.TreeTables`), before the tree is made and checked.

    Parameters
    ----------
    tables : TreeTables
        The tree's tables.
    """

    def __init__(self, tables) -> None:
        nodes = tables.nodes
        self.id_series = nodes["node_id"].cast(pl.String)
        self._label_series = nodes["label"].cast(pl.String) if "label" in nodes.columns else None
        self.names_table = tables.names

    def __len__(self) -> int:
        return len(self.id_series)

    def same_names_as(self, taxonomy) -> bool:
        """Whether ``taxonomy`` has these ids, labels and names table, in this order.

        Parameters
        ----------
        taxonomy : Taxonomy
            A tree.

        Returns
        -------
        bool
        """
        if len(taxonomy) != len(self) or not taxonomy.id_series.equals(self.id_series):
            return False
        none = pl.Series([None] * len(self), dtype=pl.String)
        theirs, mine = label_series(taxonomy), label_series(self)
        return ((none if theirs is None else theirs).equals(none if mine is None else mine, check_names=False)
                and taxonomy.names_table.equals(self.names_table))


def open_name_tables(taxonomy, config: MappingConfig, *, folder: str | os.PathLike | None = None,
                     index_dir: str | os.PathLike | None = None, progress: bool | None = None,
                     name: str = "tree", ahead: TablesBuiltAhead | None = None) -> tuple[NameTables, IndexInfo]:
    """The name tables of ``taxonomy`` under ``config``: loaded when a valid stored index
    exists (memory-mapped), else built once under a lock and stored (module docstring).
    ``folder``: the folder the tree was read from; ``index_dir``: where to store indexes
    instead (:func:`~taxoforge.snapshots.tree_cache.index_place` says where they go); ``progress``: the build's progress
    bar (None: on a terminal).

    Parameters
    ----------
    taxonomy : object
        The taxonomy.
    config : MappingConfig
        The mapping configuration.
    folder : str or os.PathLike, optional
        The folder the tree was read from.
    index_dir : str or os.PathLike, optional
        A folder the user named for indexes, if any.
    progress : bool, optional
        Whether to show a progress bar.
    name : str, optional
        The name.
    ahead : TablesBuiltAhead, optional
        Tables built meanwhile for this tree (its first use): taken instead of building them.

    Returns
    -------
    tuple[NameTables, IndexInfo]
        The name tables of ``taxonomy`` under ``config``: loaded when a valid stored
        index exists (memory-mapped), else built once under a lock and stored (module
        docstring).
    """
    t0 = time.perf_counter()
    key = tree_key(taxonomy)
    place = index_place(folder, index_dir)
    path = place.root / f"{key[:16]}-{config.index_id}"
    trust = TrustedDigests("mapping-index")
    tkey = _trust_key(path, key, config)

    def info(built: bool, verified: str) -> IndexInfo:
        return IndexInfo(path, built, time.perf_counter() - t0, key, config.index_id, place.kind, verified)

    loaded = load_index(path, _expected_header(key, config))
    if loaded is not None and verified_index(trust, tkey, path, loaded) and (tables := tables_of(loaded)) is not None:
        return tables, info(False, "trusted digest")
    place.root.mkdir(parents=True, exist_ok=True)
    with held_lock(str(path) + ".lock", f"the mapping index of {name} ({path.name})", LOCK_TIMEOUT_S):
        loaded = load_index(path, _expected_header(key, config))  # another process may have built it meanwhile
        if loaded is not None and verified_index(trust, tkey, path, loaded) and (tables := tables_of(loaded)) is not None:
            return tables, info(False, "trusted digest")
        bar = _Progress(progress, name)
        try:
            built = ahead.tables_for(taxonomy, config) if ahead is not None else None
            arrays, meta = built if built is not None else NameTables.build(taxonomy, config, progress=bar.stage)
            del built
            header = _expected_header(key, config)
            with ThreadPoolExecutor(1, thread_name_prefix="taxoforge-index-digest") as background:
                # the trusted digest of the arrays computed while they are written (both off the GIL)
                digesting = background.submit(index_digest, arrays, meta, header)
                if loaded is not None:  # a copy this user never recorded: used only when it is what the tree gives
                    stamps = file_stamps(index_files(path))
                    same = index_digest(loaded[1], loaded[0]["meta"], loaded[0]) == digesting.result()
                    tables = tables_of(loaded) if same else None
                    if tables is not None:
                        trust.remember(tkey, index_files(path), digesting.result(), stamps)
                        return tables, info(False, "rebuilt and compared")
                bar.stage("writing")
                _write_index(path, arrays, meta, header)
                digest = digesting.result()
        finally:
            bar.close()
        del arrays
        trust.remember(tkey, index_files(path), digest)
        loaded = load_index(path, _expected_header(key, config))
        tables = tables_of(loaded) if loaded is not None else None
        if tables is None:  # pragma: no cover - the folder was just written
            raise OSError(f"{path}: the mapping index just written cannot be read back")
    if place.own:
        _remove_stale(place.root, path.name, key)
    return tables, info(True, "built")


# ---------------------------------------------------------------------------- embeddings
def open_name_embeddings(index: IndexInfo, tables: NameTables, model_id: str, embed, *,
                         progress: bool | None = None) -> np.ndarray:
    """The embeddings of every name key of ``tables`` by the model ``model_id``
    (``embed(list_of_texts, progress) -> (n, d) float32``, rows unit length), stored beside
    the index as ``<index folder>.emb-<model id>/embeddings.npy`` and memory-mapped: computed
    once per tree, model (and precision: a half-precision model's id ends in ``-fp16``) and
    index configuration, under the same lock discipline.

    Parameters
    ----------
    index : IndexInfo
        The stored index the embeddings go beside.
    tables : NameTables
        The name tables.
    model_id : str
        The model's id (:func:`~taxoforge.scores.mapping.sentence_models.model_id_of`).
    embed : object
        ``embed(list_of_texts, progress) -> (n, d) float32``, rows unit length.
    progress : bool, optional
        Whether to show a progress bar.

    Returns
    -------
    numpy.ndarray
        The embeddings of every name key of ``tables`` by the model ``model_id``
        (``embed(list_of_texts, progress) -> (n, d) float32``, rows unit length), stored
        beside the index as ``<index folder>.emb-<model id>/embeddings.npy`` and
        memory-mapped: computed once per tree, model and index configuration, under the
        same lock discipline.
    """
    if not re.fullmatch(r"[0-9a-f]{16}(-fp16)?", model_id):
        raise ValueError(f"model id {model_id!r}: expected 16 hex digits, '-fp16' after them in half precision")
    path = index.path.with_name(f"{index.path.name}.emb-{model_id}")
    want = {"format": INDEX_FORMAT, "code": code_fingerprint(), "tree_key": index.tree_key,
            "index_id": index.index_id, "model": model_id, "names": len(tables)}
    trust = TrustedDigests("name-embeddings")
    tkey = f"{os.path.realpath(path)}\0{json.dumps(want, sort_keys=True)}"
    files = [path / HEADER, path / "embeddings.npy"]

    def digest(e) -> str:
        return index_digest({"embeddings": e}, {}, want)

    def read():
        header = read_header(path)
        if header is None or any(header.get(k) != v for k, v in want.items()):
            return None
        try:
            e = np.load(path / "embeddings.npy", mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError):
            return None
        if e.dtype != np.float32 or e.ndim != 2 or e.shape[0] != len(tables) or list(e.shape) != header.get("shape"):
            return None
        return e

    def trusted(e) -> bool:  # the digest this user's runs recorded (the stamps unchanged, or the bytes again)
        if e is None:
            return False
        if trust.lookup(tkey, files) is not None:
            return True
        rec = trust.record(tkey)
        stamps = file_stamps(files)
        if rec is None or digest(e) != rec["digest"]:
            return False
        trust.remember(tkey, files, rec["digest"], stamps)
        return True

    got = read()
    if trusted(got):
        return got
    with held_lock(str(path) + ".lock", f"the name embeddings of {index.path.name} by {model_id[:16]}",
                   LOCK_TIMEOUT_S):
        got = read()
        if trusted(got):
            return got
        e = np.ascontiguousarray(embed(tables.names, progress), np.float32)
        d = digest(e)
        if got is not None and digest(got) == d:  # another's copy, equal to what the model gives: used
            trust.remember(tkey, files, d)
            return got
        with atomic_directory(path) as tmp:
            np.save(tmp / "embeddings.npy", e, allow_pickle=False)
            write_text_atomic(tmp / HEADER, json.dumps(dict(want, shape=list(e.shape)), indent=2, sort_keys=True) + "\n")
        del e
        trust.remember(tkey, files, d)
        got = read()
        if got is None:  # pragma: no cover
            raise OSError(f"{path}: the name embeddings just written cannot be read back")
        return got
