"""Load a frozen taxonomy by name for the scoring side: ``load_taxonomy("wordnet@3f2a…")``.

A score must name the snapshot it used, so the returned tables carry it:
``tables.info["snapshot"]`` is ``"NAME@VERSION"`` and ``tables.info["manifest"]`` the
whole manifest.
"""

from __future__ import annotations

import os
from pathlib import Path

from taxoforge.snapshots.errors import AlteredSnapshot
from taxoforge.snapshots.store import SnapshotStore
from taxoforge.snapshots.verify import read_snapshot, verify_folder
from taxoforge.trees.ranked_tree import RankedTree
from taxoforge.trees.tables import TreeTables

__all__ = ["load_taxonomy", "resolve_ref", "load_tree_tables", "load_ranked_tree"]


def resolve_ref(ref: str, store: str | os.PathLike | SnapshotStore | None = None) -> str:
    """The full ``NAME@VERSION`` that ``ref`` (``NAME``, ``NAME@VERSION`` or a version
    prefix) names in ``store``.

    Parameters
    ----------
    ref : str
        ``NAME``, ``NAME@VERSION`` or ``sha256:…``.
    store : str or os.PathLike or SnapshotStore, optional
        The snapshot store.

    Returns
    -------
    str
        The full ``NAME@VERSION`` that ``ref`` (``NAME``, ``NAME@VERSION`` or a version
        prefix) names in ``store``.
    """
    st = store if isinstance(store, SnapshotStore) else SnapshotStore(store)
    name, entry = st.resolve(ref)
    return f"{name}@{entry['version']}"


def load_taxonomy(ref: str, store: str | os.PathLike | SnapshotStore | None = None, *,
                  cache: str | os.PathLike | None = None, verify: bool = True,
                  progress: bool = False) -> TreeTables:
    """The :class:`TreeTables` of snapshot ``ref`` (``"NAME@VERSION"``, or ``"NAME"`` for
    the latest) in ``store`` (default:
    :func:`~taxoforge.snapshots.store.default_store_url`).

    A local store is read in place (its files checked against the manifest when
    ``verify``); a remote store is first pulled into the local store ``cache`` (default:
    the default local store), which verifies every file.

    Raises :class:`~taxoforge.snapshots.store.SnapshotNotFound` for an unknown name or
    version and :class:`~taxoforge.snapshots.errors.AlteredSnapshot` (a
    :class:`~taxoforge.snapshots.store.ChecksumMismatch`) for a damaged copy. To cite what
    was loaded, use :func:`taxoforge.snapshots.citation.resolve_taxonomy`.

    Parameters
    ----------
    ref : str
        ``NAME``, ``NAME@VERSION`` or ``sha256:…``.
    store : str or os.PathLike or SnapshotStore, optional
        The snapshot store.
    cache : str or os.PathLike, optional
        Where a remote store's snapshot is pulled to (default: the cache folder).
    verify : bool, optional
        Whether every file is checked against the manifest.
    progress : bool, optional
        Whether to show a progress bar.

    Returns
    -------
    TreeTables
        The :class:`TreeTables` of snapshot ``ref`` (``"NAME@VERSION"``, or ``"NAME"``
        for the latest) in ``store`` (default:
        :func:`~taxoforge.snapshots.store.default_store_url`).
    """
    st = store if isinstance(store, SnapshotStore) else SnapshotStore(store)
    if st.is_local:
        name, entry = st.resolve(ref)
        folder = st.local_dir(name, entry["version"])
        manifest = st.manifest(name, entry["version"], entry)
        if verify:
            rep = verify_folder(folder, deep=False)
            if not rep.ok:
                ref_ = f"{name}@{entry['version']}"
                raise AlteredSnapshot(f"{folder}: the local copy of {ref_} does not match its manifest ("
                                      + "; ".join(rep.problems) + f"); refusing to use it. Delete that folder and "
                                      f"`taxoforge pull {ref_} --store URL` again", problems=rep.problems)
        tables = read_snapshot(folder, manifest)
        tables.info["store"] = st.url
        return tables
    from taxoforge.snapshots.pull import pull

    res = pull(ref, store=st, dest=cache, progress=progress)
    tables = read_snapshot(res.path)
    tables.info["store"] = st.url
    return tables


def load_tree_tables(ref) -> TreeTables:
    """The :class:`TreeTables` that ``ref`` names.

    Parameters
    ----------
    ref : TreeTables, str or os.PathLike
        A tree folder (``nodes.parquet`` …), a snapshot folder (with ``manifest.json``, read
        and checked by :func:`~taxoforge.snapshots.verify.read_snapshot`), or
        ``NAME[@VERSION]`` in the default snapshot store (:func:`load_taxonomy`). A
        ``TreeTables`` is returned as it is.

    Returns
    -------
    TreeTables

    Raises
    ------
    FileNotFoundError
        When ``ref`` looks like a path (a suffix, a separator, a leading dot) and is no folder.
    """
    if isinstance(ref, TreeTables):
        return ref
    p = Path(ref)
    if p.is_dir():
        if (p / "manifest.json").exists():
            return read_snapshot(p)
        return TreeTables.read(p)
    if p.suffix or os.sep in str(ref) or str(ref).startswith("."):
        raise FileNotFoundError(f"{ref}: no such tree or snapshot folder")
    return load_taxonomy(str(ref))


def load_ranked_tree(tree) -> RankedTree:
    """A :class:`~taxoforge.trees.ranked_tree.RankedTree` of ``tree``.

    Parameters
    ----------
    tree
        Anything :meth:`RankedTree.of <taxoforge.trees.ranked_tree.RankedTree.of>` accepts
        (a ``RankedTree``, ``TreeTables``, ``Taxonomy``, nodes DataFrame, ``{child: parent}``
        mapping), or what :func:`load_tree_tables` reads (a tree or snapshot folder,
        ``NAME[@VERSION]``).

    Returns
    -------
    RankedTree

    Examples
    --------
    >>> load_ranked_tree({"Life": None, "Esox": "Life"}).taxonomy.ancestors("Esox")
    ['Life', 'Esox']
    """
    if isinstance(tree, (str, os.PathLike)):
        return RankedTree.from_tables(load_tree_tables(tree))
    return RankedTree.of(tree)
