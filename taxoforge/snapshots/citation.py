"""What a score cites: the taxonomy it used, named so that a store can give it back.

A :class:`Citation` names the tables a result used: ``NAME@VERSION`` of a store that holds
exactly that content, else ``sha256:<hex>`` — a reference any store resolves once that
content is published (:func:`~taxoforge.snapshots.catalogue.resolve_entry`), never a
made-up ``NAME@<hash>`` no store knows. A content is looked for in the store named, then in
the default store (:func:`~taxoforge.snapshots.store.default_store_url`, the same from every
working folder), so one tree is cited the same whichever store path or working folder it is
scored from (:func:`published_version`). :func:`cite_tables` cites tables by their content
hash; :func:`taxoforge.snapshots.open.open_taxonomy` cites whatever a user names (a
snapshot in a store, a snapshot folder, a tree folder, tables in memory) as it opens it.
:func:`find_content` finds a store's version of a content, :func:`published_in` the
address a citation gives for a store (its public URL, never the path of a local folder).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from taxoforge.snapshots.bibliography import LOCAL_ONLY, public_address
from taxoforge.snapshots.catalogue import content_ref, latest_version
from taxoforge.snapshots.errors import SnapshotError
from taxoforge.snapshots.manifest import content_id
from taxoforge.snapshots.store import SnapshotStore
from taxoforge.trees.tables import TreeTables

__all__ = ["Citation", "cite_tables", "mark_tables", "as_store", "default_store_if_any", "find_content",
           "published_in", "published_version"]


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


def as_store(store) -> SnapshotStore:
    """``store`` as a :class:`SnapshotStore` (a URL or folder opened; None: the default store,
    :func:`~taxoforge.snapshots.store.default_store_url`).

    Parameters
    ----------
    store : SnapshotStore, str, os.PathLike or None
        The store.

    Returns
    -------
    SnapshotStore
    """
    return store if isinstance(store, SnapshotStore) else SnapshotStore(store)


def published_in(st: SnapshotStore, idx: dict | None = None) -> dict:
    """``store`` and ``local_only`` of a citation of a snapshot published in ``st``: its
    public address, never the path of a local folder (:func:`~taxoforge.snapshots.bibliography.public_address`).

    Parameters
    ----------
    st : SnapshotStore
        The store.
    idx : dict, optional
        Its index, when already read.

    Returns
    -------
    dict
        ``store`` and ``local_only``.
    """
    url = public_address(st, idx)
    return {"store": url, "local_only": url is None}


def find_content(st: SnapshotStore | None, content_sha256: str, name: str | None = None) -> tuple[str, dict, dict] | None:
    """``(taxonomy, entry, index)`` of a version of ``st`` with exactly this content (the
    taxonomy ``name`` preferred, then its latest), or None (also when there is no store).

    Parameters
    ----------
    st : SnapshotStore or None
        The store.
    content_sha256 : str
        The content hash.
    name : str, optional
        The taxonomy preferred.

    Returns
    -------
    tuple or None
    """
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


def published_version(store, content_sha256: str, name: str | None) -> tuple[SnapshotStore, str, dict, dict] | None:
    """``(store, taxonomy, entry, index)`` of this content in ``store``, else in the default
    store: content published in either is cited by its name, whatever store (and whatever
    spelling of its path) was named and whatever the working folder.

    Parameters
    ----------
    store : SnapshotStore, str, os.PathLike or None
        The store named, if any.
    content_sha256 : str
        The content hash.
    name : str or None
        The taxonomy preferred.

    Returns
    -------
    tuple or None
    """
    given = as_store(store) if store is not None else None
    default = default_store_if_any()
    stores = [given] if given is not None else []
    if default is not None and (given is None or default.display_url != given.display_url):
        stores.append(default)
    for st in stores:
        hit = find_content(st, content_sha256, name)
        if hit:
            return (st, *hit)
    return None


def cite_tables(tables: TreeTables, *, store=None, source: str = "<tables>", verified: str = "computed",
                name: str | None = None, content_sha256: str | None = None) -> Citation:
    """The citation of ``tables`` by their content hash (computed here, unless
    ``content_sha256`` gives it): ``NAME@VERSION`` of ``store`` when it has that content,
    else ``sha256:<hex>``; written into ``tables.info`` too (:func:`mark_tables`).

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
    hit = published_version(store, full, name or tables.name)
    if hit:
        st, n, e, idx = hit
        citation = Citation(f"{n}@{e['version']}", n, full, e["version"], published=True, source=source,
                            verified=verified, **published_in(st, idx))
    else:
        citation = Citation(content_ref(full), name or tables.name, full, None, None, False, source, verified)
    return mark_tables(tables, citation)[1]


def default_store_if_any() -> SnapshotStore | None:
    """The default snapshot store, or None when ``$TAXOFORGE_STORE`` names none that opens.

    Returns
    -------
    SnapshotStore or None
    """
    try:
        return SnapshotStore()
    except Exception:  # noqa: BLE001 - a bad $TAXOFORGE_STORE: nothing to look in
        return None


def mark_tables(tables: TreeTables, citation: Citation) -> tuple[TreeTables, Citation]:
    """Write ``citation`` into ``tables.info`` (``citation``; ``snapshot`` and ``store`` only
    for a published snapshot, removed otherwise).

    Parameters
    ----------
    tables : TreeTables
        The tables cited.
    citation : Citation
        Their citation.

    Returns
    -------
    tuple of (TreeTables, Citation)
        The same two.
    """
    tables.info["citation"] = citation.as_dict()
    if citation.published:
        tables.info["snapshot"] = citation.ref
        if citation.store_label:
            tables.info["store"] = citation.store_label
    else:
        for k in ("snapshot", "manifest", "store"):
            tables.info.pop(k, None)
    return tables, citation
