"""The taxonomy a scoring run uses, resolved and cited once.

:func:`cite_taxonomy` turns what a user names — ``NAME``, ``NAME@VERSION``, ``sha256:HEX``,
a snapshot folder, a tree folder or a :class:`~taxoforge.trees.tables.TreeTables` — into a
:class:`CitedTaxonomy`: the tables and the :class:`~taxoforge.snapshots.citation.Citation` a
result must carry, through :func:`taxoforge.snapshots.citation.resolve_taxonomy`. So:

* a snapshot in a store is read in place (local store) or pulled and verified (remote
  store: HTTP, S3 …) and cited ``NAME@VERSION`` with the store;
* a snapshot folder is verified against its manifest before it is cited; one whose tables
  were altered is refused (:class:`~taxoforge.snapshots.errors.AlteredSnapshot`, exit code
  4) unless ``altered="content"``, which cites it by the content hash of what it holds;
* a tree folder or tables in memory are cited ``NAME@VERSION`` when the store has exactly
  that content, else ``sha256:<hex>`` — never a reference no store can resolve;
* a name that is neither a folder nor in the store raises
  :class:`~taxoforge.snapshots.errors.TaxonomyNotFound` (exit code 3) listing what the store has.

Scoring several files resolves the taxonomy once and builds one mapping index: pass the
:class:`CitedTaxonomy` (and the index) to every call.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from taxoforge.snapshots.citation import Citation, resolve_taxonomy
from taxoforge.trees.tables import TreeTables

__all__ = ["CitedTaxonomy", "cite_taxonomy"]


@dataclass(eq=False)
class CitedTaxonomy:
    """``tables`` and their ``citation``; :attr:`taxonomy` (the in-memory tree) and
    :meth:`ranked_tree` are built on first use and shared.

    Attributes
    ----------
    tables : TreeTables
        The taxonomy's tables.
    citation : Citation
        What results cite.
    """

    tables: TreeTables
    citation: Citation

    @property
    def name(self) -> str:
        """The taxonomy's name: the citation's, else the tables'."""
        return self.citation.taxonomy or self.tables.name

    @property
    def ref(self) -> str:
        """What results cite: ``NAME@VERSION`` (resolvable in :attr:`store`) or ``sha256:<hex>``."""
        return self.citation.ref

    @property
    def store(self) -> str | None:
        """The URL of the store the citation resolves in (None for a content hash no store holds)."""
        return self.citation.store

    @cached_property
    def taxonomy(self):
        """The tree: stored ready to use for a tree read from a folder
        (:func:`taxoforge.scores.tree_store.open_tree`), else built from the tables."""
        stored = self.open_stored()
        return stored.taxonomy if stored is not None else self.tables.taxonomy()

    def open_stored(self, index_dir=None):
        """The tree's stored working set (:class:`~taxoforge.scores.tree_store.StoredTree`,
        opened once, kept where the mapping indexes are: ``index_dir`` when given), or None
        for tables not read from a folder (built in memory: nothing to store them beside).

        Parameters
        ----------
        index_dir : str or os.PathLike, optional
            Where the tree's mapping indexes are kept, if not in the default place.

        Returns
        -------
        taxoforge.scores.tree_store.StoredTree or None
        """
        if "_stored" not in self.__dict__:
            stored = None
            if self.tables.folder is not None and "taxonomy" not in self.__dict__:
                from taxoforge.scores.tree_store import open_tree

                stored = open_tree(self.tables, self.citation.content_sha256, index_dir=index_dir)
            self.__dict__["_stored"] = stored
        return self.__dict__["_stored"]

    def use_taxonomy(self, taxonomy) -> None:
        """Share an already built tree of these tables (e.g. a mapping index's) instead of building another.

        Parameters
        ----------
        taxonomy : object
            The taxonomy.
        """
        if self.__dict__.get("taxonomy") is taxonomy:
            return
        n = len(self.__dict__["taxonomy"]) if "taxonomy" in self.__dict__ else self.tables.nodes.height
        if len(taxonomy) != n:
            raise ValueError(f"the mapping index was built for a tree of {len(taxonomy)} nodes, not for "
                             f"{self.ref} ({n} nodes)")
        self.__dict__["taxonomy"] = taxonomy

    def resolved_labels(self):
        """The labels resolved against this tree by earlier runs
        (:class:`~taxoforge.scores.tree_store.ResolvedLabels`, kept beside the stored tree).

        Returns
        -------
        taxoforge.scores.tree_store.ResolvedLabels or None
            None when the tree is not stored.
        """
        stored = self.__dict__.get("_stored")
        if stored is None or stored.path is None or stored.taxonomy is not self.__dict__.get("taxonomy"):
            return None
        from taxoforge.scores.tree_store import ResolvedLabels

        return ResolvedLabels(stored.path)

    def ranked_tree(self):
        """The :class:`~taxoforge.trees.ranked_tree.RankedTree` of the breakdowns, on the same tree.

        Returns
        -------
        object
            The :class:`~taxoforge.trees.ranked_tree.RankedTree` of the breakdowns, on the
            same tree.
        """
        if "_ranked" not in self.__dict__:
            import polars as pl

            from taxoforge.trees.ranked_tree import RankedTree

            stored = self.open_stored()
            if stored is not None and stored.taxonomy is self.taxonomy:  # ranks as stored codes
                self.__dict__["_ranked"] = RankedTree(self.taxonomy, None, None, name=self.name, version=self.ref,
                                                      rank_codes=stored.rank_codes)
                return self.__dict__["_ranked"]
            if "rank" in (nodes := self.tables.nodes).columns:
                ids = pl.DataFrame({"node_id": self.taxonomy.ids}, schema={"node_id": pl.String})
                if nodes["node_id"].cast(pl.String).equals(ids["node_id"]):  # the tables' own order (sorted)
                    ranks = nodes["rank"].cast(pl.String).to_numpy()
                else:
                    ranks = ids.join(nodes.select(pl.col("node_id").cast(pl.String), pl.col("rank").cast(pl.String)),
                                     on="node_id", how="left", maintain_order="left")["rank"].to_numpy()
            else:
                ranks = None
            self.__dict__["_ranked"] = RankedTree(self.taxonomy, ranks, None, name=self.name, version=self.ref)
        return self.__dict__["_ranked"]


def cite_taxonomy(source, *, store=None, cache=None, altered: str = "refuse", progress: bool = False) -> CitedTaxonomy:
    """The :class:`CitedTaxonomy` of ``source`` (module docstring); a :class:`CitedTaxonomy`
    is returned as it is. ``store``: a :class:`~taxoforge.snapshots.store.SnapshotStore` or
    URL (default :func:`~taxoforge.snapshots.store.default_store_url`); ``cache``: the local
    store a remote snapshot is pulled into; ``altered``: ``"refuse"`` or ``"content"``.

    Parameters
    ----------
    source : object
        The source.
    store : optional
        The snapshot store.
    cache : optional
        The local store a remote snapshot is pulled into.
    altered : str, optional
        ``"refuse"`` or ``"content"``.
    progress : bool, optional
        Whether to show a progress bar.

    Returns
    -------
    CitedTaxonomy
        The :class:`CitedTaxonomy` of ``source`` (module docstring); a
        :class:`CitedTaxonomy` is returned as it is.
    """
    if isinstance(source, CitedTaxonomy):
        return source
    tables, citation = resolve_taxonomy(source, store=store, cache=cache, altered=altered, progress=progress)
    return CitedTaxonomy(tables, citation)
