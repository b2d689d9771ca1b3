"""The one tree type: a rooted taxonomy with its labels, names and ranks, and fast queries.

A :class:`Taxonomy` is what every part of taxoforge works on — the scoring run, the mapping
index, the evaluations, the multiple-choice builder. It is made

* from a ``nodes`` table (``node_id``, ``parent_id``; ``depth`` checked when present,
  ``label`` and ``rank`` kept) and optionally the ``names`` table: ``Taxonomy(nodes, names)``,
  checked to be one rooted tree (:func:`taxoforge.trees.rooted.rooted_arrays`);
* from a :class:`~taxoforge.trees.tables.TreeTables`, a nodes DataFrame or a ``{child:
  parent}`` mapping: :meth:`Taxonomy.of`;
* from the arrays of a tree already checked and stored (:meth:`Taxonomy.from_arrays`, what
  :func:`taxoforge.snapshots.tree_cache.open_tree` memory-maps): the per-node Python objects
  (the object array of ids, the list of labels, the names table, the ranks) are made only
  when something asks for them, and lookups by id go through a binary search of the sorted
  ids meanwhile.

A tree a user names — ``NAME``, ``NAME@VERSION``, ``sha256:HEX``, a folder, a URL — is
opened by :func:`taxoforge.snapshots.open.open_taxonomy`, which resolves, verifies, cites and
memory-maps it and sets :attr:`Taxonomy.citation`, :attr:`Taxonomy.tables` and
:attr:`Taxonomy.stored_path`.

Every node gets an integer index (its position in ``ids``); the vectorised methods
(:class:`~taxoforge.trees.index_queries.IndexQueries`: lowest common ancestors in O(1),
subtree sizes, ancestors at a depth) and the rank queries
(:class:`~taxoforge.trees.rank_queries.RankQueries`: every node's rank, the ancestor at a
rank) take and return index arrays; they are parts of this class, kept in their own modules.

>>> import polars as pl
>>> nodes = pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
...                       "parent_id": [None, "r", "r", "a", "a"]})
>>> t = Taxonomy(nodes)
>>> t.ancestors("a2")
['r', 'a', 'a2']
>>> t.lca("a1", "a2"), t.lca("a1", "b"), t.depth("a1")
('a', 'r', 2)
>>> t.leaf_descendants("r")
['a1', 'a2', 'b']
>>> Taxonomy.of({"Life": None, "Esox": "Life"}).ancestors("Esox")
['Life', 'Esox']
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from pathlib import Path

import numpy as np
import polars as pl

from taxoforge.trees.index_queries import IndexQueries
from taxoforge.trees.node_ids import NodeIds
from taxoforge.trees.rank_queries import RankQueries
from taxoforge.trees.rooted import TreeError, rooted_arrays
from taxoforge.trees.tables import TreeTables

__all__ = ["Taxonomy", "TreeError"]


class Taxonomy(NodeIds, IndexQueries, RankQueries):
    """One rooted tree with its labels, names and ranks, and fast queries (module docstring).

    Parameters
    ----------
    nodes : polars.DataFrame
        ``node_id`` and ``parent_id`` (null for the root); ``depth`` is checked against the
        tree when present, ``label`` is kept for :meth:`label`, ``rank`` for :attr:`ranks`.
    names : polars.DataFrame, optional
        The names table (``node_id``, ``name``, ``kind``, ``lang``) behind :meth:`names`.
    name : str, optional
        The tree's name.
    version : str, optional
        The snapshot it was loaded from (``NAME@VERSION``), if any.
    links : polars.DataFrame, optional
        The links table of its tables (dataset labels linked to nodes).

    Attributes
    ----------
    ids : numpy.ndarray
        Node ids in sorted order; a node's index is its position here.
    parent_idx : numpy.ndarray
        Index of every node's parent, -1 for the root.
    depth_arr : numpy.ndarray
        Depth of every node (root = 0).
    root : str
        The root's id (``root_idx`` its index).
    name : str
        The tree's name.
    version : str or None
        ``NAME@VERSION`` of the snapshot it was loaded from.
    citation : taxoforge.snapshots.citation.Citation or None
        What results that use the tree cite (set by
        :func:`~taxoforge.snapshots.open.open_taxonomy`).
    tables : TreeTables or None
        The tables it was made from, when it was made from tables.
    stored_path : pathlib.Path or None
        The folder of its stored working set (:mod:`taxoforge.snapshots.tree_cache`), if stored.

    Raises
    ------
    TreeError
        When the table is not one rooted tree: a missing column, a null or repeated id, a
        parent that is not a node, no root or several, a cycle, a wrong ``depth``.

    Examples
    --------
    >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
    ...                            "parent_id": [None, "r", "r", "a", "a"]}))
    >>> len(t), t.root, "a1" in t, "zz" in t
    (5, 'r', True, False)
    >>> Taxonomy(pl.DataFrame({"node_id": ["r", "s"], "parent_id": [None, None]}))
    Traceback (most recent call last):
    ...
    taxoforge.trees.rooted.TreeError: expected exactly one root, found 2: ['r', 's']
    """

    def __init__(self, nodes: pl.DataFrame, names: pl.DataFrame | None = None, *, name: str = "tree",
                 version: str | None = None, links: pl.DataFrame | None = None) -> None:
        ids, self.parent_idx, self.root_idx, self.depth_arr = rooted_arrays(nodes)
        self.ids = ids
        self.root: str = str(ids[self.root_idx])
        self._id_series = None
        self._lookups = 0  # single-node lookups so far (the id → index dict is built after many)
        self._names = names
        self._nodes = nodes
        self._label_series = None
        if "label" in nodes.columns:
            labelled = nodes.select(pl.col("node_id").cast(pl.String), "label")
            self._labels = (labelled if labelled["node_id"].is_sorted() else labelled.sort("node_id"))["label"].to_list()
        else:
            self._labels = None
        self._about(name, version, links)

    @cached_property
    def _labels(self) -> list | None:
        return self._label_series.to_list() if self._label_series is not None else None

    @cached_property
    def _names(self) -> pl.DataFrame | None:
        return self._names_reader() if self._names_reader is not None else None

    def _about(self, name: str, version: str | None, links: pl.DataFrame | None) -> None:
        self.name, self.version, self._links = name, version, links
        self.citation = None
        self.tables: TreeTables | None = None
        self.stored_path: Path | None = None

    # ---------------------------------------------------------------- construction
    @classmethod
    def from_arrays(cls, ids: pl.Series, parent_idx: np.ndarray, depth: np.ndarray, *,
                    labels: pl.Series | None = None, names=None, preorder: tuple[np.ndarray, np.ndarray] | None = None,
                    rank_codes: tuple | None = None, name: str = "tree", version: str | None = None) -> "Taxonomy":
        """A tree over the arrays of a tree already checked (stored once, e.g. memory-mapped
        by :func:`taxoforge.snapshots.tree_cache.open_tree`), without checking or computing
        anything again.

        Parameters
        ----------
        ids : polars.Series
            The sorted node ids (strings).
        parent_idx, depth : numpy.ndarray
            The parent index of every node (-1 at the root) and its depth (may be memory-mapped).
        labels : polars.Series, optional
            Every node's label, in id order.
        names : callable, optional
            Reads the names table when it is first needed.
        preorder : tuple of numpy.ndarray, optional
            The pre-order positions and subtree sizes, when stored.
        rank_codes : tuple of (numpy.ndarray, sequence of str), optional
            Every node's rank as a code (``-1``: none) and the rank of each code.
        name : str, optional
            The tree's name.
        version : str, optional
            ``NAME@VERSION`` of the snapshot it was loaded from.

        Returns
        -------
        Taxonomy

        Examples
        --------
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "a1"], "parent_id": [None, "r", "a"]}))
        >>> u = Taxonomy.from_arrays(pl.Series(t.ids.tolist()), t.parent_idx, t.depth_arr)
        >>> u.ancestors("a1"), u.root, u.has(["a1", "b"]).tolist(), len(u)
        (['r', 'a', 'a1'], 'r', [True, False], 3)
        """
        self = cls.__new__(cls)
        self._id_series = ids.cast(pl.String)
        self.parent_idx, self.depth_arr = parent_idx, depth
        self.root_idx = int(np.flatnonzero(parent_idx < 0)[0])
        self.root = str(self._id_series[self.root_idx])
        self._lookups = 0
        self._label_series = labels.cast(pl.String) if labels is not None else None
        self._names_reader = names
        self._nodes = None
        if preorder is not None:
            self._lca.__dict__["preorder"] = preorder
        if rank_codes is not None:
            codes, rank_names = rank_codes
            codes = np.asarray(codes)
            if len(codes) != len(parent_idx):
                raise ValueError(f"rank_codes has {len(codes)} entries, the tree {len(parent_idx)} nodes")
            self.__dict__["_rank_codes"] = (codes, {str(r): i for i, r in enumerate(rank_names)})
        self._about(name, version, None)
        return self

    @classmethod
    def of(cls, tree) -> "Taxonomy":
        """The tree of ``tree``: a ``Taxonomy`` (returned as it is), a
        :class:`~taxoforge.trees.tables.TreeTables` (its nodes, names and links kept, so a
        label resolves against the tree exactly as against the tables), a nodes DataFrame or
        a ``{child: parent}`` mapping (each node labelled with its id). A tree a user names
        (a folder, ``NAME[@VERSION]`` …) is opened by
        :func:`taxoforge.snapshots.open.open_taxonomy`.

        Parameters
        ----------
        tree : Taxonomy, TreeTables, polars.DataFrame or mapping
            The tree.

        Returns
        -------
        Taxonomy
        """
        if isinstance(tree, Taxonomy):
            return tree
        if isinstance(tree, TreeTables):
            links = tree.links if tree.links.height else None
            out = cls(tree.nodes, tree.names, name=tree.name, version=(tree.info or {}).get("snapshot"), links=links)
            out.tables = tree
            return out
        if isinstance(tree, pl.DataFrame):
            return cls(tree)
        if isinstance(tree, Mapping):
            nodes = pl.DataFrame({"node_id": [str(k) for k in tree],
                                  "parent_id": [None if v is None else str(v) for v in tree.values()]},
                                 schema={"node_id": pl.String, "parent_id": pl.String})
            return cls(nodes.with_columns(pl.col("node_id").alias("label")))
        raise TypeError(f"cannot make a tree of {type(tree).__name__}; expected a Taxonomy, TreeTables, nodes "
                        "DataFrame or {child: parent} mapping (a tree or snapshot folder, or NAME[@VERSION]: "
                        "taxoforge.snapshots.open.open_taxonomy)")

    @property
    def ref(self) -> str | None:
        """What results cite: the citation's ``NAME@VERSION`` or ``sha256:<hex>``, else the
        snapshot version the tree was loaded from (None: neither)."""
        return self.citation.ref if self.citation is not None else self.version

    # ---------------------------------------------------------------- single-node queries
    def parent(self, node_id: str) -> str | None:
        """The parent of a node.

        Parameters
        ----------
        node_id : str

        Returns
        -------
        str or None
            The parent's id; ``None`` for the root.

        Raises
        ------
        KeyError
            If ``node_id`` is not a node.

        Examples
        --------
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> t.parent("a1"), t.parent("r")
        ('a', None)
        """
        p = self.parent_idx[self._index(node_id)]
        return None if p < 0 else str(self.ids[p])

    def children(self, node_id: str) -> list[str]:
        """The children of a node.

        Parameters
        ----------
        node_id : str

        Returns
        -------
        list of str
            Child ids in id order (empty for a leaf).

        Examples
        --------
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> t.children("r"), t.children("b")
        (['a', 'b'], [])
        """
        ptr, kids = self.children_csr
        i = self._index(node_id)
        return self.ids[kids[ptr[i]:ptr[i + 1]]].tolist()

    def depth(self, node_id: str) -> int:
        """The depth of a node: its number of ancestors (the root has depth 0).

        Parameters
        ----------
        node_id : str

        Returns
        -------
        int

        Examples
        --------
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> t.depth("r"), t.depth("a2")
        (0, 2)
        """
        return int(self.depth_arr[self._index(node_id)])

    def ancestors(self, node_id: str, include_self: bool = True) -> list[str]:
        """The path from the root to a node (``anc()`` of docs/method.md#trees), root first.

        Parameters
        ----------
        node_id : str
        include_self : bool
            Whether the path ends at ``node_id`` itself (default) or at its parent.

        Returns
        -------
        list of str

        Examples
        --------
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> t.ancestors("a2"), t.ancestors("a2", include_self=False), t.ancestors("r")
        (['r', 'a', 'a2'], ['r', 'a'], ['r'])
        """
        i = self._index(node_id)
        path = []
        while i >= 0:
            path.append(i)
            i = int(self.parent_idx[i])
        path.reverse()
        if not include_self:
            path.pop()
        return self.ids[path].tolist()

    def _subtree_mask(self, node_id: str) -> np.ndarray:
        """True for ``node_id`` and every node below it (a pre-order interval)."""
        pre, size = self._preorder
        i = self._index(node_id)
        return (pre >= pre[i]) & (pre < pre[i] + size[i])

    def descendants(self, node_id: str, include_self: bool = True) -> list[str]:
        """The nodes of the subtree under a node.

        Parameters
        ----------
        node_id : str
        include_self : bool
            Whether ``node_id`` itself is included (default).

        Returns
        -------
        list of str
            In id order.

        Examples
        --------
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> t.descendants("a"), t.descendants("a", include_self=False), t.descendants("b")
        (['a', 'a1', 'a2'], ['a1', 'a2'], ['b'])
        """
        mask = self._subtree_mask(node_id)
        if not include_self:
            mask[self._index(node_id)] = False
        return self.ids[mask].tolist()

    def leaf_descendants(self, node_id: str) -> list[str]:
        """The leaves of the subtree under a node (the node itself if it is a leaf).

        Parameters
        ----------
        node_id : str

        Returns
        -------
        list of str
            In id order.

        Examples
        --------
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> t.leaf_descendants("r"), t.leaf_descendants("b")
        (['a1', 'a2', 'b'], ['b'])
        """
        return self.ids[self._subtree_mask(node_id) & self.is_leaf].tolist()

    def nodes_at_depth(self, depth: int) -> list[str]:
        """The nodes at one depth.

        Parameters
        ----------
        depth : int
            0 for the root.

        Returns
        -------
        list of str
            In id order; empty below the deepest leaf.

        Examples
        --------
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> t.nodes_at_depth(1), t.nodes_at_depth(2), t.nodes_at_depth(9)
        (['a', 'b'], ['a1', 'a2'], [])
        """
        return self.ids[self.depth_arr == depth].tolist()

    def lca(self, a: str, b: str) -> str:
        """The lowest common ancestor of two nodes (a node is its own ancestor).

        Parameters
        ----------
        a, b : str

        Returns
        -------
        str

        See Also
        --------
        lca_idx : the same for arrays of index pairs.

        Examples
        --------
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "b", "a1", "a2"],
        ...                            "parent_id": [None, "r", "r", "a", "a"]}))
        >>> t.lca("a1", "a2"), t.lca("a1", "b"), t.lca("a", "a2")
        ('a', 'r', 'a')
        """
        i = self.lca_idx(self.index_of([a]), self.index_of([b]))
        return str(self.ids[i[0]])

    def label(self, node_id: str) -> str | None:
        """The display label of a node, from the ``label`` column of the nodes table.

        Parameters
        ----------
        node_id : str

        Returns
        -------
        str or None
            ``None`` when the nodes table has no ``label`` column.

        Examples
        --------
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "a"], "parent_id": [None, "r"],
        ...                            "label": ["root", "animal"]}))
        >>> t.label("a")
        'animal'
        """
        i = self._index(node_id)
        return self._labels[i] if self._labels is not None else None

    def names(self, node_id: str) -> list[str]:
        """Every name of a node.

        Parameters
        ----------
        node_id : str

        Returns
        -------
        list of str
            The node's names in the names table, each once, in table order; without a names
            table, its label (if any).

        Examples
        --------
        >>> nodes = pl.DataFrame({"node_id": ["r", "d"], "parent_id": [None, "r"], "label": ["root", "dog"]})
        >>> names = pl.DataFrame({"node_id": ["d", "d", "d"], "name": ["dog", "domestic dog", "dog"],
        ...                       "kind": ["label", "lemma", "lemma"], "lang": ["en", "en", "en"]})
        >>> Taxonomy(nodes, names).names("d"), Taxonomy(nodes).names("d")
        (['dog', 'domestic dog'], ['dog'])
        """
        if self._names is None:
            lab = self.label(node_id)
            return [lab] if lab else []
        return self._names_by_node.get(node_id, [])

    @cached_property
    def _names_by_node(self) -> dict[str, list[str]]:
        g = self._names.group_by("node_id", maintain_order=True).agg(pl.col("name").unique(maintain_order=True))
        return dict(zip(g["node_id"].to_list(), g["name"].to_list()))

    @property
    def given_names(self) -> pl.DataFrame | None:
        """The names table the tree was made with (None: it was made without one)."""
        return self._names

    @property
    def names_table(self) -> pl.DataFrame:
        """The names table: the one given, else one ``label`` name per labelled node.

        Returns
        -------
        polars.DataFrame
            ``node_id``, ``name``, ``kind``, ``lang``.

        Examples
        --------
        >>> t = Taxonomy(pl.DataFrame({"node_id": ["r", "d"], "parent_id": [None, "r"], "label": [None, "dog"]}))
        >>> t.names_table.rows()
        [('d', 'dog', 'label', None)]
        """
        if self._names is None:
            labels = self._labels or [None] * len(self)
            return pl.DataFrame({"node_id": self.ids.tolist(), "name": labels, "kind": "label", "lang": None},
                                schema_overrides={"lang": pl.String}).drop_nulls("name")
        return self._names

    # ---------------------------------------------------------------- per-node arrays and tables
    @cached_property
    def labels(self) -> np.ndarray:
        """The display name of every node (its id where it has none); made on first use."""
        labels = self._labels
        if labels is None:
            return self.ids
        lab = pl.Series(labels, dtype=pl.String)
        return np.where(lab.is_null().to_numpy(), self.ids, lab.to_numpy())

    @cached_property
    def nodes_table(self) -> pl.DataFrame:
        """``node_id``, ``parent_id``, ``label``, ``rank`` of every node: the nodes table the
        tree was made from (or its tables' when it was opened from stored arrays), else one
        made from the tree's arrays."""
        src = self._nodes if self._nodes is not None else (self.tables.nodes if self.tables is not None else None)
        if src is not None:
            return src.select(pl.col("node_id").cast(pl.String), *[
                (pl.col(c).cast(pl.String) if c in src.columns else pl.lit(None, dtype=pl.String)).alias(c)
                for c in ("parent_id", "label", "rank")])
        ids = self.ids
        parent = np.where(self.parent_idx >= 0, ids[np.maximum(self.parent_idx, 0)], None)
        return pl.DataFrame({"node_id": ids.tolist(), "parent_id": parent.tolist(), "label": self.labels.tolist(),
                             "rank": self.ranks.tolist()},
                            schema={"node_id": pl.String, "parent_id": pl.String, "label": pl.String,
                                    "rank": pl.String})

    @cached_property
    def index_frame(self) -> pl.DataFrame:
        """``node_id`` → ``idx`` (its index in :attr:`ids`), to turn node ids into indexes with a join."""
        return pl.DataFrame({"node_id": self.ids, "idx": np.arange(len(self), dtype=np.int64)},
                            schema={"node_id": pl.String, "idx": pl.Int64})

    @property
    def links_table(self) -> pl.DataFrame | None:
        """The links table of the tree's tables (dataset labels linked to nodes), if any."""
        if self._links is None and self.tables is not None and self.tables.links.height:
            return self.tables.links
        return self._links

