"""One way to open a taxonomy: :func:`open_taxonomy` resolves what a user names, verifies it,
cites it and memory-maps it, and gives the one tree type,
:class:`~taxoforge.trees.taxonomy.Taxonomy` (with its ranks, labels and names).

What it resolves, and how each is cited (:class:`~taxoforge.snapshots.citation.Citation`):

* ``NAME``, ``NAME@VERSION`` or ``sha256:HEX`` in a **snapshot store** (``store``: a folder,
  ``file://``, HTTP(S), S3 or any fsspec URL; default ``$TAXOFORGE_SNAPSHOT_STORE`` or
  ``data/snapshots``): a local store's copy is read in place, every file's SHA-256 checked
  against the manifest and the manifest against the index; a remote store's is pulled into
  ``cache`` (a local store) and verified first. Cited ``NAME@VERSION`` with the store's
  public address. A name ``store`` lacks is pulled from ``remote`` when one is given (into
  ``store``, or ``cache``), verified, and cited with the remote's address.
* A **snapshot URL**, ``<store URL>/NAME[@VERSION]`` (or ``…/sha256:HEX``): the same, from
  that store.
* A **snapshot folder** (with ``manifest.json``) is verified before it is cited: its files
  against the manifest and, unless the store it lies in vouches for the manifest (the index
  lists the manifest's SHA-256), the content hash recomputed from the tables. A folder
  whose tables were altered is refused with :class:`~taxoforge.snapshots.errors.AlteredSnapshot`
  (exit code 4) — never cited as the version it no longer is — or, with
  ``altered="content"``, cited by the content hash of the tables it actually holds.
* A **tree folder** (``nodes.parquet`` …) or **tables in memory**
  (:class:`~taxoforge.trees.tables.TreeTables`) are cited by their content hash: as
  ``NAME@VERSION`` of the store when it has a version with exactly that content, else as
  ``sha256:<hex>``. A tree folder's content hash is remembered by its files' stamps
  (:mod:`taxoforge.snapshots.content_cache`), so its tables are read only when used.
* A name that is neither a folder nor in the store raises
  :class:`~taxoforge.snapshots.errors.TaxonomyNotFound` (exit code 3), whose message lists
  what the store has and how to get the taxonomy.

A tree read from a folder is then memory-mapped from its stored working set
(:func:`taxoforge.snapshots.tree_cache.open_tree`: built the first time, beside the tree, in
the snapshot store or under ``index_dir``); tables in memory make the tree in memory. The
citation goes into ``tables.info["citation"]`` too; ``tables.info["snapshot"]`` (and
:attr:`Taxonomy.version <taxoforge.trees.taxonomy.Taxonomy>`) is set only when the tables
are a verified published snapshot.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Mapping
from pathlib import Path

import polars as pl

from taxoforge.files import UnsafePath, path_inside
from taxoforge.snapshots.catalogue import CONTENT_PREFIX, INDEX_NAME, content_ref, latest_version, parse_ref
from taxoforge.snapshots.citation import Citation, as_store, cite_tables, default_store_if_any, find_content, published_in
from taxoforge.snapshots.content_cache import cached_content_sha256, folder_stamp, remember_content_sha256
from taxoforge.snapshots.errors import AlteredSnapshot, SnapshotError, SnapshotNotFound, TaxonomyNotFound
from taxoforge.snapshots.manifest import MANIFEST_NAME, read_manifest
from taxoforge.snapshots.pull import pull
from taxoforge.snapshots.store import SnapshotStore
from taxoforge.snapshots.tree_cache import open_tree
from taxoforge.snapshots.verify import check_content, read_snapshot, verify_folder
from taxoforge.trees.tables import TreeTables
from taxoforge.trees.taxonomy import Taxonomy

__all__ = ["open_taxonomy", "ALTERED_POLICIES"]

ALTERED_POLICIES = ("refuse", "content")

#: Says when a reference the store lacks is pulled from the remote (stderr when logging is not configured).
logger = logging.getLogger(__name__)


def open_taxonomy(ref, store=None, *, remote=None, cache=None, altered: str = "refuse", index_dir=None,
                  progress: bool = False) -> Taxonomy:
    """The taxonomy ``ref`` names, resolved, verified, cited and memory-mapped (module docstring).

    Parameters
    ----------
    ref : str, os.PathLike, TreeTables, Taxonomy, polars.DataFrame or mapping
        ``NAME``, ``NAME@VERSION``, ``sha256:HEX``, a snapshot URL, a snapshot or tree
        folder, or tables in memory (cited by their content hash); a ``Taxonomy`` is returned
        as it is, a nodes DataFrame or ``{child: parent}`` mapping made into a tree in memory
        (:meth:`Taxonomy.of <taxoforge.trees.taxonomy.Taxonomy.of>`), with nothing to cite.
    store : SnapshotStore, str or os.PathLike, optional
        The snapshot store a reference is looked up in (and a tree is cited from).
    remote : SnapshotStore or str, optional
        A store to pull a reference from when ``store`` does not have it.
    cache : str or os.PathLike, optional
        The local store a remote snapshot is pulled into (default: ``store`` when it is
        local, else the default local store).
    altered : str, optional
        ``"refuse"`` (default) or ``"content"`` for a snapshot folder whose tables no
        longer match its manifest.
    index_dir : str or os.PathLike, optional
        Where the tree's working set (and its mapping indexes) are kept, if not in the
        default place (:func:`~taxoforge.snapshots.tree_cache.index_place`).
    progress : bool, optional
        Whether a pull shows a progress bar.

    Returns
    -------
    Taxonomy
        The tree, with its :attr:`~taxoforge.trees.taxonomy.Taxonomy.citation` and
        :attr:`~taxoforge.trees.taxonomy.Taxonomy.tables`.

    Raises
    ------
    TaxonomyNotFound
        Not a folder, and not in the store (the message lists what the store has).
    AlteredSnapshot
        A snapshot folder or a local store's copy that no longer matches its manifest.
    """
    if isinstance(ref, (Taxonomy, pl.DataFrame, Mapping)):
        return Taxonomy.of(ref)  # a tree in memory: nothing to resolve, verify or store
    if altered not in ALTERED_POLICIES:
        raise ValueError(f"altered={altered!r}: expected one of {ALTERED_POLICIES}")
    try:
        tables, citation = _resolve(ref, store, cache, altered, progress)
    except TaxonomyNotFound:
        if remote is None:
            raise
        logger.warning("%s: not in the local store; pulling it from %s …", os.fspath(ref), remote)
        local = cache if cache is not None else store
        tables, citation = _resolve(ref, remote, local, altered, progress)
    tree = open_tree(tables, citation.content_sha256, index_dir=index_dir) if tables.folder is not None else None
    tree = tree if tree is not None else Taxonomy.of(tables)
    tree.citation, tree.tables = citation, tables
    tree.name, tree.version = citation.taxonomy or tables.name, tables.info.get("snapshot")
    return tree


def _resolve(source, store, cache, altered: str, progress: bool) -> tuple[TreeTables, Citation]:
    """The tables ``source`` names and their citation (module docstring)."""
    if isinstance(source, TreeTables):
        return _mark(source, cite_tables(source, store=store))
    text = os.fspath(source)
    p = Path(text)
    if p.is_dir():
        if (p / MANIFEST_NAME).exists():
            return _resolve_snapshot_folder(p, store=store, altered=altered)
        return _resolve_tree_folder(p, text, store)
    if "://" in text and not text.startswith("file://"):
        store, text = _split_snapshot_url(text)
    st = as_store(store)
    looks_like_path = os.sep in text or "/" in text or p.suffix in {".parquet", ".json"}
    if looks_like_path and not text.startswith(CONTENT_PREFIX):
        raise TaxonomyNotFound(f"{text}: no such folder (a taxonomy is a tree or snapshot folder, or NAME[@VERSION] "
                               "in a snapshot store)", ref=text, store=st.url)
    parse_ref(text)  # a malformed reference is a SnapshotError of its own
    try:
        tables = _read_from_store(text, st, cache, progress)
    except TaxonomyNotFound:
        raise
    except SnapshotNotFound as e:
        raise _not_found(text, st, e) from None
    m = tables.info["manifest"]
    return _mark(tables, Citation(f"{m['taxonomy']}@{m['version']}", m["taxonomy"], m["content_sha256"], m["version"],
                                  published=True, source=os.fspath(source), verified="store", **published_in(st)))


def _split_snapshot_url(url: str) -> tuple[str, str]:
    """``(store URL, reference)`` of a snapshot URL ``<store URL>/<NAME[@VERSION] or sha256:HEX>``."""
    base, _, last = url.rstrip("/").rpartition("/")
    if "://" not in base or not last:
        raise TaxonomyNotFound(f"{url}: a snapshot URL is <store URL>/NAME[@VERSION]; this one names no taxonomy",
                               ref=url)
    return base, last


def _read_from_store(ref: str, st: SnapshotStore, cache, progress: bool) -> TreeTables:
    """The tables of snapshot ``ref`` in ``st``: a local store's copy read in place (its files
    checked against the manifest), a remote store's pulled into ``cache`` (verified there)."""
    if not st.is_local:
        res = pull(ref, store=st, dest=cache, progress=progress)
        tables = read_snapshot(res.path)
        tables.info["store"] = st.url
        return tables
    name, entry = st.resolve(ref)
    folder = st.local_dir(name, entry["version"])
    manifest = st.manifest(name, entry["version"], entry)
    rep = verify_folder(folder, deep=False)
    if not rep.ok:
        ref_ = f"{name}@{entry['version']}"
        raise AlteredSnapshot(f"{folder}: the local copy of {ref_} does not match its manifest ("
                              + "; ".join(rep.problems) + f"); refusing to use it. Delete that folder and "
                              f"`taxoforge pull {ref_} --store URL` again", problems=rep.problems)
    tables = read_snapshot(folder, manifest)
    tables.info["store"] = st.url
    return tables


def _resolve_tree_folder(p: Path, text: str, store) -> tuple[TreeTables, Citation]:
    stamp = folder_stamp(p)  # before the read: a file changed meanwhile is never remembered as read
    known = cached_content_sha256(stamp)
    try:  # tables whose content hash is remembered are read when first used, the others now
        tables = TreeTables.read(p, lazy=known is not None)
    except (FileNotFoundError, ValueError) as e:
        raise TaxonomyNotFound(f"{p}: {e}", ref=text) from None
    citation = cite_tables(tables, store=store, source=str(p), content_sha256=known)
    if known is None:
        remember_content_sha256(stamp, citation.content_sha256)
    return _mark(tables, citation)


def _resolve_snapshot_folder(folder: Path, *, store, altered: str) -> tuple[TreeTables, Citation]:
    source = str(folder)
    try:
        m = read_manifest(folder)
    except SnapshotError as e:
        raise AlteredSnapshot(f"{folder}: {e}", problems=[str(e)]) from None
    claimed = f"{m['taxonomy']}@{m['version']}"
    rep = verify_folder(folder, deep=False)
    enclosing = _enclosing_store(folder, m) if rep.ok else None
    vouched = False
    if enclosing is not None:
        st, entry = enclosing
        got = hashlib.sha256((folder / MANIFEST_NAME).read_bytes()).hexdigest()
        vouched = got == entry.get("manifest_sha256") and entry.get("content_sha256") == m["content_sha256"]
    tables = None
    if rep.ok and not vouched:
        tables = check_content(rep, lambda: read_snapshot(folder, m))
        rep.ok = not rep.problems
    if not rep.ok:
        if altered != "content":
            raise AlteredSnapshot(
                f"{folder}: its tables do not match the manifest of {claimed} ({'; '.join(rep.problems)}); "
                f"refusing to cite {claimed}. Restore the folder (e.g. `taxoforge pull {claimed}`), or use "
                "these tables as they are with altered='content' (cited by their own content hash)",
                problems=rep.problems)
        plain = TreeTables.read(folder, name=m["taxonomy"])
        plain.info = {k: v for k, v in (m.get("info") or {}).items()}
        return _mark(plain, cite_tables(plain, store=store, source=source, verified="computed", name=m["taxonomy"]))
    if tables is None:
        tables = read_snapshot(folder, m)
    verified = "store" if vouched else "content"
    if vouched:
        st, _ = enclosing
        return _mark(tables, Citation(claimed, m["taxonomy"], m["content_sha256"], m["version"], published=True,
                                      source=source, verified=verified, **published_in(st)))
    st = as_store(store) if store is not None else default_store_if_any()
    hit = find_content(st, m["content_sha256"], m["taxonomy"])
    if hit:
        n, e, idx = hit
        return _mark(tables, Citation(f"{n}@{e['version']}", n, m["content_sha256"], e["version"], published=True,
                                      source=source, verified=verified, **published_in(st, idx)))
    return _mark(tables, Citation(content_ref(m["content_sha256"]), m["taxonomy"], m["content_sha256"], None, None,
                                  False, source, verified))


def _enclosing_store(folder: Path, manifest: dict) -> tuple[SnapshotStore, dict] | None:
    """The local store ``folder`` lies in as ``<store>/<taxonomy>/<version>/`` and its
    index entry, when that store lists exactly this version. A folder named inside a store
    through a symbolic link (the version or taxonomy folder a link) is refused: links
    inside a store are never followed."""
    named = folder.absolute()
    if (named.parent.parent / INDEX_NAME).is_file():
        try:
            path_inside(named.parent.parent, named.parent.name, named.name, symlinks=False)
        except UnsafePath as e:
            raise SnapshotError(str(e)) from None
    root = folder.resolve().parent.parent
    if (folder.resolve().name != manifest["version"] or folder.resolve().parent.name != manifest["taxonomy"]
            or not (root / INDEX_NAME).is_file()):
        return None
    st = SnapshotStore(root)
    try:
        tax = st.index()["taxonomies"].get(manifest["taxonomy"]) or {}
    except SnapshotError:
        return None
    entry = next((e for e in tax.get("versions", []) if e.get("version") == manifest["version"]), None)
    return (st, entry) if entry else None


def _not_found(ref: str, st: SnapshotStore, error: SnapshotNotFound) -> TaxonomyNotFound:
    """:class:`TaxonomyNotFound` for ``ref``: the store's own message (it lists the
    taxonomies it has, with their latest versions) and how to get the taxonomy."""
    available = []
    try:
        if not (st.is_local and not Path(st.root).is_dir()):
            idx = st.index()
            available = [f"{n}@{latest_version(t)}" for n, t in sorted(idx["taxonomies"].items()) if latest_version(t)]
    except SnapshotError:
        pass
    name = ref.split("@", 1)[0] if not ref.startswith(CONTENT_PREFIX) else "NAME"
    return TaxonomyNotFound(
        f"{ref}: not a folder, and {error}. Publish a tree as {name} with `taxoforge publish data/assets/<tree> "
        f"--name {name}`, pull it from another store with `taxoforge pull {ref} --store URL`, or give a tree or "
        "snapshot folder", ref=ref, store=st.url, available=available)


def _mark(tables: TreeTables, citation: Citation) -> tuple[TreeTables, Citation]:
    tables.info["citation"] = citation.as_dict()
    if citation.published:
        tables.info["snapshot"] = citation.ref
        if citation.store_label:
            tables.info["store"] = citation.store_label
    else:
        for k in ("snapshot", "manifest", "store"):
            tables.info.pop(k, None)
    return tables, citation
