"""One way to open a taxonomy: :func:`open_taxonomy` resolves what a user names, verifies it,
cites it and memory-maps it, and gives the one tree type,
:class:`~taxoforge.trees.taxonomy.Taxonomy` (with its ranks, labels and names).

What it resolves, and how each is cited (:class:`~taxoforge.snapshots.citation.Citation`):

* ``NAME``, ``NAME@VERSION`` or ``sha256:HEX`` in a **snapshot store** (``store``: a folder,
  ``file://``, HTTP(S), S3 or any fsspec URL; default
  :func:`~taxoforge.snapshots.store.default_store_url`): a local store's copy is read in
  place, every file's SHA-256 checked against the manifest and the manifest against the index; a remote store's is pulled into
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
  ``NAME@VERSION`` when the store named, or else the default store, has a version with
  exactly that content (:func:`~taxoforge.snapshots.citation.published_version`), else as
  ``sha256:<hex>``. A tree folder's content hash is remembered by its files' stamps
  (below), so its tables are read only when used.
* A name that is neither a folder nor in the store raises
  :class:`~taxoforge.snapshots.errors.TaxonomyNotFound` (exit code 3), whose message lists
  what the store has and how to get the taxonomy.

A tree read from a folder is then memory-mapped from its stored working set
(:func:`taxoforge.snapshots.tree_cache.open_tree`: built the first time, beside the tree, in
the snapshot store or under ``index_dir``); tables in memory make the tree in memory. The
citation goes into ``tables.info["citation"]`` too; ``tables.info["snapshot"]`` (and
:attr:`Taxonomy.version <taxoforge.trees.taxonomy.Taxonomy>`) is set only when the tables
are a verified published snapshot.

**A tree folder's content hash, remembered while its files stay as they were.** Citing a
tree folder (no manifest vouches for it) needs the content hash of its tables
(:func:`taxoforge.snapshots.manifest.content_id`): canonical order, every row serialised and
hashed — seconds on a 1.4 M-node tree, on every ``taxoforge score`` call.
:func:`cached_content_sha256` remembers the hash among the user's **trusted digests**
(:mod:`taxoforge.files.trusted`: a private folder, never the cache folder, which others may
write — a forged record there with the files' current stamps once made ``run.json`` cite
``ffff…``) with the **stamp** of each table file taken *before* the tables were read
(:func:`folder_stamp`: its size, inode, device, modification and change times in
nanoseconds) and hands it back only while every stamp is unchanged, so:

* any write to a table (in place, or a new file renamed over it) changes its change time
  (``ctime``, which no user can set back) and its modification time; a file added or
  removed changes the stamp too: the hash is computed again, never the old one cited;
* a file changed while it was being read makes the stored stamp older than the file: the
  next call recomputes (the stamp is taken before the read, never after);
* "racy" files — modified within :data:`RACY_S` seconds of the stamp, where a later write
  in the same clock tick could keep the same times — are not remembered (as git does);
* a record that cannot be read, or names another folder, schema or set of tables, is
  ignored; one that cannot be written (no private folder) costs only the next call's hashing.
"""


from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import polars as pl

from taxoforge.files import UnsafePath, path_inside
from taxoforge.files.trusted import TrustedDigests
from taxoforge.snapshots.catalogue import CONTENT_PREFIX, INDEX_NAME, content_ref, latest_version
from taxoforge.snapshots.citation import (Citation, as_store, cite_tables, mark_tables, published_in,
                                         published_version)
from taxoforge.snapshots.errors import AlteredSnapshot, SnapshotError, SnapshotNotFound, TaxonomyNotFound
from taxoforge.snapshots.manifest import MANIFEST_NAME, read_manifest
from taxoforge.snapshots.pull import pull
from taxoforge.snapshots.store import SnapshotStore
from taxoforge.snapshots.tree_cache import open_tree, stores_no_tree
from taxoforge.snapshots.verify import check_content, read_snapshot, verify_folder
from taxoforge.trees.tables import SCHEMA_VERSION, TABLE_SCHEMAS, TreeTables
from taxoforge.trees.taxonomy import Taxonomy

__all__ = ["open_taxonomy", "ALTERED_POLICIES", "folder_stamp", "cached_content_sha256", "remember_content_sha256",
           "RACY_S"]

ALTERED_POLICIES = ("refuse", "content")

#: Says when a reference the store lacks is pulled from the remote, and when a tree folder's first use
#: hashes its tables and stores its tree (stderr when logging is not configured).
logger = logging.getLogger(__name__)


def open_taxonomy(ref, store=None, *, remote=None, cache=None, altered: str = "refuse", index_dir=None,
                  progress: bool = False, when_read: Callable[[TreeTables], None] | None = None) -> Taxonomy:
    """The taxonomy ``ref`` names, resolved, verified, cited and memory-mapped (module docstring).

    Parameters
    ----------
    ref : str, os.PathLike, TreeTables, Taxonomy, polars.DataFrame or mapping
        ``NAME``, ``NAME@VERSION``, ``sha256:HEX``, a snapshot URL, a snapshot or tree
        folder, or tables in memory (cited by their content hash); a ``Taxonomy`` is returned
        as it is (cited first when it was made from tables and has no citation), a nodes
        DataFrame or ``{child: parent}`` mapping made into a tree in memory
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
    when_read : callable, optional
        Called with the tables as soon as they are read, where this call will make the tree
        from them (its first use: before the tables are hashed and the tree is made and
        stored), to start work that needs the tables alone meanwhile, such as a mapping
        index. Not called where the tree is read back from its stored working set, nor for
        tables in memory.

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
    if isinstance(ref, Taxonomy):  # already open; cited now if it was made from tables and never cited
        if ref.citation is None and ref.tables is not None:
            ref.citation = cite_tables(ref.tables, store=store)
        return ref
    if isinstance(ref, (pl.DataFrame, Mapping)):
        return Taxonomy.of(ref)  # a tree in memory: nothing to resolve, verify, cite or store
    if altered not in ALTERED_POLICIES:
        raise ValueError(f"altered={altered!r}: expected one of {ALTERED_POLICIES}")
    p = Path(os.fspath(ref)) if not isinstance(ref, TreeTables) else None
    built = None  # the tree, when made while the tables were hashed
    if p is None:  # tables in memory: cited by their content hash
        tables, citation = ref, cite_tables(ref, store=store)
    elif p.is_dir() and (p / MANIFEST_NAME).exists():
        tables, citation = _resolve_snapshot_folder(p, store=store, altered=altered)
    elif p.is_dir():  # a tree folder: its content hash remembered while its files stay as they were
        stamp = folder_stamp(p)  # before the read: a file changed meanwhile is never remembered as read
        known = cached_content_sha256(stamp)
        try:  # tables whose content hash is remembered are read when first used, the others now
            tables = TreeTables.read(p, lazy=known is not None)
        except (FileNotFoundError, ValueError) as e:
            raise TaxonomyNotFound(f"{p}: {e}", ref=os.fspath(ref)) from None
        if known is None and stores_no_tree(p, index_dir):  # its first use: the tree made while the tables are hashed
            logger.warning("%s: first use — hashing its tables and storing its tree for later calls (once) …", p)
            if when_read is not None:
                when_read(tables)
            with ThreadPoolExecutor(1, thread_name_prefix="taxoforge-tree") as background:
                built = background.submit(Taxonomy.of, tables)
                citation = cite_tables(tables, store=store, source=str(p))
                built.result()  # waited for here: an error of either is raised on this thread
        else:
            citation = cite_tables(tables, store=store, source=str(p), content_sha256=known)
        if known is None:
            remember_content_sha256(stamp, citation.content_sha256)
    else:
        try:
            tables, citation = _from_store(os.fspath(ref), store, cache, progress)
        except TaxonomyNotFound:
            if remote is None:
                raise
            logger.warning("%s: not in the local store; pulling it from %s …", os.fspath(ref), remote)
            return open_taxonomy(ref, remote, cache=cache if cache is not None else store, altered=altered,
                                 index_dir=index_dir, progress=progress, when_read=when_read)
    tree = open_tree(tables, citation.content_sha256, index_dir=index_dir, built=built, when_read=when_read) \
        if tables.folder is not None else None
    tree = tree if tree is not None else Taxonomy.of(tables)
    tree.citation, tree.tables = citation, tables
    tree.name, tree.version = citation.taxonomy or tables.name, tables.info.get("snapshot")
    return tree


def _from_store(text: str, store, cache, progress: bool) -> tuple[TreeTables, Citation]:
    """The tables of snapshot ``text`` (``NAME[@VERSION]``, ``sha256:HEX`` or a snapshot URL) in
    ``store``, and their citation: a local store's copy read in place (its files checked
    against the manifest), a remote store's pulled into ``cache`` (verified there)."""
    if "://" in text and not text.startswith("file://"):
        store, text = _split_snapshot_url(text)
    st = as_store(store)
    looks_like_path = os.sep in text or "/" in text or Path(text).suffix in {".parquet", ".json"}
    if looks_like_path and not text.startswith(CONTENT_PREFIX):
        raise TaxonomyNotFound(f"{text}: no such folder (a taxonomy is a tree or snapshot folder, or NAME[@VERSION] "
                               "in a snapshot store)", ref=text, store=st.url)
    try:  # a malformed reference is a SnapshotError of its own (the store parses it first)
        if not st.is_local:
            tables = read_snapshot(pull(text, store=st, dest=cache, progress=progress).path)
        else:
            name, entry = st.resolve(text)
            folder = st.local_dir(name, entry["version"])
            manifest = st.manifest(name, entry["version"], entry)
            rep = verify_folder(folder, deep=False)
            if not rep.ok:
                ref = f"{name}@{entry['version']}"
                raise AlteredSnapshot(f"{folder}: the local copy of {ref} does not match its manifest ("
                                      + "; ".join(rep.problems) + f"); refusing to use it. Delete that folder and "
                                      f"`taxoforge pull {ref} --store URL` again", problems=rep.problems)
            tables = read_snapshot(folder, manifest)
    except TaxonomyNotFound:
        raise
    except SnapshotNotFound as e:
        raise _not_found(text, st, e) from None
    tables.info["store"] = st.url
    m = tables.info["manifest"]
    return mark_tables(tables, Citation(f"{m['taxonomy']}@{m['version']}", m["taxonomy"], m["content_sha256"],
                                        m["version"], published=True, source=text, verified="store",
                                        **published_in(st)))


def _split_snapshot_url(url: str) -> tuple[str, str]:
    """``(store URL, reference)`` of a snapshot URL ``<store URL>/<NAME[@VERSION] or sha256:HEX>``."""
    base, _, last = url.rstrip("/").rpartition("/")
    if "://" not in base or not last:
        raise TaxonomyNotFound(f"{url}: a snapshot URL is <store URL>/NAME[@VERSION]; this one names no taxonomy",
                               ref=url)
    return base, last


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
        return plain, cite_tables(plain, store=store, source=source, verified="computed", name=m["taxonomy"])
    if tables is None:
        tables = read_snapshot(folder, m)
    verified = "store" if vouched else "content"
    if vouched:
        st, _ = enclosing
        return mark_tables(tables, Citation(claimed, m["taxonomy"], m["content_sha256"], m["version"], published=True,
                                      source=source, verified=verified, **published_in(st)))
    hit = published_version(store, m["content_sha256"], m["taxonomy"])
    if hit:
        st, n, e, idx = hit
        return mark_tables(tables, Citation(f"{n}@{e['version']}", n, m["content_sha256"], e["version"], published=True,
                                      source=source, verified=verified, **published_in(st, idx)))
    return mark_tables(tables, Citation(content_ref(m["content_sha256"]), m["taxonomy"], m["content_sha256"], None, None,
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


# ---------------------------------------------------------------------------- a tree folder's content hash
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


def _trust(cache_dir: Path | None) -> TrustedDigests:
    return TrustedDigests("content-hash", cache_dir)


def _key_and_files(stamp: dict) -> tuple[str, list[Path]]:
    present = sorted(t for t, f in stamp["files"].items() if f is not None)
    folder = Path(stamp["folder"])
    return (f"{_FORMAT}\0{SCHEMA_VERSION}\0{stamp['folder']}\0{','.join(present)}",
            [folder / f"{t}.parquet" for t in present])


def cached_content_sha256(stamp: dict, *, cache_dir: Path | None = None) -> str | None:
    """The content hash remembered for the folder of ``stamp``, when every file's stamp is
    the same as when it was remembered; else None.

    Parameters
    ----------
    stamp : dict
        The folder's stamp (:func:`folder_stamp`), taken before its tables are read.
    cache_dir : Path, optional
        The private folder of trusted digests (default :func:`taxoforge.files.trusted.trusted_dir`).

    Returns
    -------
    str or None
        The content hash remembered for the folder of ``stamp``, when every file's stamp
        is the same as when it was remembered; else None.
    """
    key, files = _key_and_files(stamp)
    if not files:
        return None
    rec = _trust(cache_dir).lookup(key, files)
    if rec is None or rec.get("stamps") != [stamp["files"][f.stem] for f in files]:
        return None
    sha = rec.get("digest")
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
        The private folder of trusted digests (default :func:`taxoforge.files.trusted.trusted_dir`).

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
    key, files = _key_and_files(stamp)
    if not files:
        return False
    return _trust(cache_dir).remember(key, files, content_sha256, [stamp["files"][f.stem] for f in files],
                                      racy_s=RACY_S)
