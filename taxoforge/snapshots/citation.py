"""What a score cites: the taxonomy it used, named so that a store can give it back.

:func:`resolve_taxonomy` turns whatever a user names — ``NAME``, ``NAME@VERSION``,
``sha256:HEX``, a snapshot folder, a tree folder (``nodes.parquet`` …, e.g.
``data/assets/inaturalist_tree``) or a :class:`TreeTables` in memory — into the tables and
a :class:`Citation`. The rules:

* A **snapshot in a store** (``NAME[@VERSION]``) is read in place (local store: every
  file's SHA-256 checked against the manifest, the manifest against the index) or pulled
  and verified (remote store), and cited ``NAME@VERSION`` with the store's URL.
* A **snapshot folder** (with ``manifest.json``) is verified before it is cited: its files
  against the manifest and, unless the store it lies in vouches for the manifest (the
  index lists the manifest's SHA-256), the content hash recomputed from the tables. A
  folder whose tables were altered is refused with :class:`AlteredSnapshot` (exit code
  4) — never cited as the version it no longer is — or, with ``altered="content"``,
  cited by the content hash of the tables it actually holds.
* A **tree folder** or **tables in memory** are cited by their content hash: as
  ``NAME@VERSION`` when the store named, or else the default store
  (:func:`~taxoforge.snapshots.store.default_store_url`, the same from every working
  folder), has a version with exactly that content — so one tree is cited the same
  whichever store path or working folder it is scored from —, else as ``sha256:<hex>``
  (``published`` false) — a reference any store resolves once
  that content is published (:func:`~taxoforge.snapshots.catalogue.resolve_entry`),
  never a made-up ``NAME@<hash>`` no store knows.
* A name that is neither a folder nor in the store raises :class:`TaxonomyNotFound`
  (exit code 3) whose message lists what the store has and how to get the taxonomy.

The citation goes into ``tables.info["citation"]`` too; ``tables.info["snapshot"]`` is set
only when the tables are a verified published snapshot.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from taxoforge.snapshots.bibliography import LOCAL_ONLY, public_address
from taxoforge.snapshots.catalogue import CONTENT_PREFIX, INDEX_NAME, content_ref, latest_version
from taxoforge.snapshots.content_cache import cached_content_sha256, folder_stamp, remember_content_sha256
from taxoforge.snapshots.errors import AlteredSnapshot, SnapshotError, SnapshotNotFound, TaxonomyNotFound
from taxoforge.snapshots.manifest import MANIFEST_NAME, content_id, read_manifest
from taxoforge.snapshots.store import SnapshotStore
from taxoforge.snapshots.verify import check_content, read_snapshot, verify_folder
from taxoforge.trees.tables import TreeTables

__all__ = ["Citation", "resolve_taxonomy", "cite_tables", "ALTERED_POLICIES"]

ALTERED_POLICIES = ("refuse", "content")


@dataclass(frozen=True)
class Citation:
    """How a result names the taxonomy it used.

    ``ref``             ``NAME@VERSION`` (resolvable in ``store``) or ``sha256:<64 hex>``
                        (the content hash: resolvable in any store that has that content);
    ``taxonomy``        the taxonomy's name (the snapshot's, else the folder's or tables');
    ``version``         the snapshot version when ``ref`` names one, else None;
    ``content_sha256``  the content hash of the tables used (always);
    ``store``           the public URL of the store ``ref`` resolves in (None for a
                        ``sha256:`` reference, and for a local store without a public URL);
    ``local_only``      ``ref`` is published, but in a local folder nobody gave a public URL
                        (``taxoforge publish --public-url``): readers cannot pull it, and the
                        citation says so instead of naming a path;
    ``published``       whether a store has this content (``ref`` is ``NAME@VERSION``);
    ``source``          what was given: a reference, a folder, or ``"<tables>"``;
    ``verified``        how the tables were checked: ``"store"`` (files against the
                        manifest, the manifest against the store's index), ``"content"``
                        (the content hash recomputed), or ``"computed"`` (no manifest:
                        the content hash is the tables' own).

    Attributes
    ----------
    ref : str
        ``NAME``, ``NAME@VERSION`` or ``sha256:…``.
    taxonomy : str
        The taxonomy.
    content_sha256 : str
        The content hash of the tables cited.
    version : str or None
        The version.
    store : str or None
        The snapshot store.
    published : bool
        Whether a store holds that content.
    source : str
        The source.
    verified : str
        How the content was checked (``"manifest"``, ``"computed"`` …).
    local_only : bool
        Published, but in a local store with no public URL.
    """

    ref: str
    taxonomy: str
    content_sha256: str
    version: str | None = None
    store: str | None = None
    published: bool = False
    source: str = ""
    verified: str = "computed"
    local_only: bool = False

    @property
    def store_label(self) -> str | None:
        """The store as a result names it: its public URL, ``"a local snapshot store with no
        public URL …"`` (:data:`~taxoforge.snapshots.bibliography.LOCAL_ONLY`), or None
        (not published)."""
        return self.store or (LOCAL_ONLY if self.local_only else None)

    def as_dict(self) -> dict:
        """The citation as JSON values (what results record).

        Returns
        -------
        dict
            One entry per field.
        """
        return asdict(self)

    def __str__(self) -> str:
        if self.published:
            return f"{self.ref} (store {self.store})" if self.store else f"{self.ref} (in {LOCAL_ONLY})"
        return f"{self.ref} ({self.taxonomy}, not published in a store)"


def _as_store(store) -> SnapshotStore:
    return store if isinstance(store, SnapshotStore) else SnapshotStore(store)


def _published_in(st: SnapshotStore, idx: dict | None = None) -> dict:
    """``store`` and ``local_only`` of a citation of a snapshot published in ``st``: its
    public address, never the path of a local folder (:func:`~taxoforge.snapshots.bibliography.public_address`)."""
    url = public_address(st, idx)
    return {"store": url, "local_only": url is None}


def _find_content(st: SnapshotStore | None, content_sha256: str, name: str | None = None) -> tuple[str, dict, dict] | None:
    """``(taxonomy, entry, index)`` of a version of ``st`` with exactly this content (the
    taxonomy ``name`` preferred, then its latest), or None (also when there is no store)."""
    if st is None:
        return None
    try:
        if st.is_local and not Path(st.root).is_dir():
            return None
        idx = st.index()
    except SnapshotError:
        return None
    found = [(n, e) for n, tax in sorted(idx["taxonomies"].items()) for e in tax.get("versions", [])
             if e.get("content_sha256") == content_sha256]
    if not found:
        return None

    def rank(item):
        n, e = item
        return (n != name, e["version"] != latest_version(idx["taxonomies"][n]))

    return (*sorted(found, key=rank)[0], idx)


def _published(store, content_sha256: str, name: str | None) -> tuple[SnapshotStore, str, dict, dict] | None:
    """``(store, taxonomy, entry, index)`` of this content in ``store``, else in the default
    store: content published in either is cited by its name, whatever store (and whatever
    spelling of its path) was named and whatever the working folder."""
    given = _as_store(store) if store is not None else None
    default = _default_store_if_any()
    stores = [given] if given is not None else []
    if default is not None and (given is None or default.display_url != given.display_url):
        stores.append(default)
    for st in stores:
        hit = _find_content(st, content_sha256, name)
        if hit:
            return (st, *hit)
    return None


def cite_tables(tables: TreeTables, *, store=None, source: str = "<tables>", verified: str = "computed",
                name: str | None = None, content_sha256: str | None = None) -> Citation:
    """The citation of ``tables`` by their content hash (computed here, unless
    ``content_sha256`` gives it): ``NAME@VERSION`` of ``store`` when it has that content,
    else ``sha256:<hex>``.

    Parameters
    ----------
    tables : TreeTables
        The tree's tables.
    store : optional
        The snapshot store.
    source : str, optional
        The source.
    verified : str, optional
        How the content was checked, recorded in the citation.
    name : str, optional
        The name.
    content_sha256 : str, optional
        The content hash, when already known.

    Returns
    -------
    Citation
        The citation of ``tables`` by their content hash (computed here, unless
        ``content_sha256`` gives it): ``NAME@VERSION`` of ``store`` when it has that
        content, else ``sha256:<hex>``.
    """
    full = content_sha256 or content_id(tables)[1]
    hit = _published(store, full, name or tables.name)
    if hit:
        st, n, e, idx = hit
        return Citation(f"{n}@{e['version']}", n, full, e["version"], published=True, source=source, verified=verified,
                        **_published_in(st, idx))
    return Citation(content_ref(full), name or tables.name, full, None, None, False, source, verified)


def _default_store_if_any() -> SnapshotStore | None:
    try:
        return SnapshotStore()
    except Exception:  # noqa: BLE001 - a bad $TAXOFORGE_STORE: nothing to look in
        return None


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


def _enclosing_store(folder: Path, manifest: dict) -> tuple[SnapshotStore, dict] | None:
    """The local store ``folder`` lies in as ``<store>/<taxonomy>/<version>/`` and its
    index entry, when that store lists exactly this version. A folder named inside a store
    through a symbolic link (the version or taxonomy folder a link) is refused: links
    inside a store are never followed."""
    named = folder.absolute()
    if (named.parent.parent / INDEX_NAME).is_file():
        from taxoforge.files import UnsafePath, path_inside

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
                                      source=source, verified=verified, **_published_in(st)))
    hit = _published(store, m["content_sha256"], m["taxonomy"])
    if hit:
        st, n, e, idx = hit
        return _mark(tables, Citation(f"{n}@{e['version']}", n, m["content_sha256"], e["version"], published=True,
                                      source=source, verified=verified, **_published_in(st, idx)))
    return _mark(tables, Citation(content_ref(m["content_sha256"]), m["taxonomy"], m["content_sha256"], None, None,
                                  False, source, verified))


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


def resolve_taxonomy(source, *, store=None, cache=None, altered: str = "refuse",
                     progress: bool = False) -> tuple[TreeTables, Citation]:
    """The tables ``source`` names and the :class:`Citation` a result must carry (see the
    module doc). ``source``: a :class:`TreeTables`, a snapshot or tree folder, or a
    reference ``NAME``, ``NAME@VERSION``, ``sha256:HEX`` in ``store`` (a
    :class:`SnapshotStore` or URL; default
    :func:`~taxoforge.snapshots.store.default_store_url`). ``cache``: the local store a remote snapshot is pulled into.
    ``altered``: ``"refuse"`` (default) or ``"content"`` for a snapshot folder whose tables
    no longer match its manifest.

    Raises :class:`TaxonomyNotFound` (not a folder, not in the store: the message lists what
    the store has), :class:`AlteredSnapshot` (a snapshot folder or a local store's copy that
    no longer matches its manifest), :class:`~taxoforge.snapshots.errors.ChecksumMismatch`,
    :class:`~taxoforge.files.DownloadError`.

    Parameters
    ----------
    source : object
        The source.
    store : optional
        The snapshot store.
    cache : optional
        The local store a remote snapshot is pulled into.
    altered : str, optional
        ``"refuse"`` (default) or ``"content"`` for a snapshot folder whose tables no
        longer match its manifest.
    progress : bool, optional
        Whether to show a progress bar.

    Returns
    -------
    tuple[TreeTables, Citation]
        The tables ``source`` names and the :class:`Citation` a result must carry (see
        the module doc).
    """
    if altered not in ALTERED_POLICIES:
        raise ValueError(f"altered={altered!r}: expected one of {ALTERED_POLICIES}")
    if isinstance(source, TreeTables):
        return _mark(source, cite_tables(source, store=store))
    text = os.fspath(source)
    p = Path(text)
    if p.is_dir():
        if (p / MANIFEST_NAME).exists():
            return _resolve_snapshot_folder(p, store=store, altered=altered)
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
    st = _as_store(store)
    looks_like_path = os.sep in text or "/" in text or p.suffix in {".parquet", ".json"}
    if looks_like_path and not text.startswith(CONTENT_PREFIX):
        raise TaxonomyNotFound(f"{text}: no such folder (a taxonomy is a tree or snapshot folder, or NAME[@VERSION] "
                               "in a snapshot store)", ref=text, store=st.url)
    from taxoforge.snapshots.catalogue import parse_ref
    from taxoforge.snapshots.load import load_taxonomy

    parse_ref(text)  # a malformed reference is a SnapshotError of its own
    try:
        tables = load_taxonomy(text, store=st, cache=cache, progress=progress)
    except TaxonomyNotFound:
        raise
    except SnapshotNotFound as e:
        raise _not_found(text, st, e) from None
    m = tables.info["manifest"]
    verified = "store"
    return _mark(tables, Citation(f"{m['taxonomy']}@{m['version']}", m["taxonomy"], m["content_sha256"], m["version"],
                                  published=True, source=text, verified=verified, **_published_in(st)))
