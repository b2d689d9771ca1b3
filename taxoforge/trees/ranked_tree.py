"""A taxonomy with its ranks and names: the tree type of the evaluations and the breakdowns.

:class:`RankedTree` wraps :class:`taxoforge.trees.taxonomy.Taxonomy` (ancestors, depths,
vectorised LCA) and adds, aligned with ``taxonomy.ids``:

* ``ranks`` — the ``rank`` column of the nodes table (``None`` where the source has no
  rank, e.g. WordNet), with :meth:`RankedTree.ancestor_at_rank` answering "the genus of
  every one of these nodes" in one vectorised pass per rank;
* ``labels`` — the display names; ``nodes_table``, ``names_table`` and ``links_table`` —
  the tables a dataset label is resolved against. Labels become nodes only through the one
  label resolver, :func:`taxoforge.links.resolve.resolve_labels` (on a ``RankedTree``:
  :func:`taxoforge.links.tree_labels.resolve_nodes`), so a ground truth means the same node
  in scoring and in every evaluation.

:meth:`RankedTree.of` accepts a ``RankedTree``, a :class:`~taxoforge.trees.tables.TreeTables`,
a ``Taxonomy``, a nodes DataFrame or a ``{child: parent}`` mapping;
:func:`taxoforge.snapshots.load.load_ranked_tree` also takes a tree folder, a snapshot folder
or ``NAME[@VERSION]`` in the snapshot store.

>>> t = RankedTree.of({"Life": None, "Canis": "Life", "Canis lupus": "Canis", "Canis latrans": "Canis"})
>>> t.taxonomy.ancestors("Canis lupus")
['Life', 'Canis', 'Canis lupus']
>>> t.names_table.filter(pl.col("node_id") == "Canis").rows()
[('Canis', 'Canis', 'label')]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cached_property

import numpy as np
import polars as pl

from taxoforge.trees.ranks import INFRASPECIFIC_RANKS, SPINE_RANKS
from taxoforge.trees.tables import TreeTables
from taxoforge.trees.taxonomy import Taxonomy

__all__ = ["RankedTree"]

#: Rank order that breaks ties between ranks of equal median depth: the spine, then the
#: subspecies; any other rank of the same depth after them, alphabetically.
_RANK_TIES = {r: i for i, r in enumerate((*SPINE_RANKS, "subspecies"))}
_INFRASPECIFIC = frozenset(INFRASPECIFIC_RANKS)


class RankedTree:
    """A :class:`Taxonomy` plus ranks, labels and names (module docstring).

    Parameters
    ----------
    taxonomy : Taxonomy
    ranks : iterable, optional
        The rank of every node, aligned with ``taxonomy.ids`` (``None``: no ranks).
    names : polars.DataFrame, optional
        The names table.
    name : str
        The tree's name.
    version : str, optional
        The snapshot it was loaded from (``NAME@VERSION``).
    nodes : polars.DataFrame, optional
        The nodes table it was made from.
    links : polars.DataFrame, optional
        The links table of its tables.
    rank_codes : tuple of (numpy.ndarray, sequence of str), optional
        Instead of ``ranks``: every node's rank as a code (``-1``: none) and the rank of each
        code (a stored tree's, :mod:`taxoforge.snapshots.tree_cache`); ``ranks`` is then made
        only when asked for.
    """

    def __init__(self, taxonomy: Taxonomy, ranks: Iterable | None = None, names: pl.DataFrame | None = None,
                 *, name: str = "tree", version: str | None = None, nodes: pl.DataFrame | None = None,
                 links: pl.DataFrame | None = None, rank_codes: tuple | None = None) -> None:
        self.taxonomy = taxonomy
        n = len(taxonomy)
        if rank_codes is not None and ranks is None:
            codes, rank_names = rank_codes
            codes = np.asarray(codes)
            if len(codes) != n:
                raise ValueError(f"rank_codes has {len(codes)} entries, the tree {n} nodes")
            self.__dict__["_rank_codes"] = (codes, {str(r): i for i, r in enumerate(rank_names)})
        else:
            if ranks is None:
                ranks = np.full(n, None, dtype=object)
            ranks = np.asarray(list(ranks) if not isinstance(ranks, np.ndarray) else ranks, dtype=object)
            if len(ranks) != n:
                raise ValueError(f"ranks has {len(ranks)} entries, the tree {n} nodes")
            self.__dict__["ranks"] = ranks
        self._names = names
        self._nodes = nodes
        self._links = links
        self.name = name
        self.version = version

    # ------------------------------------------------------------------ construction
    @classmethod
    def of(cls, tree) -> "RankedTree":
        """A ``RankedTree`` from any of the inputs in the module docstring.

        Parameters
        ----------
        tree : RankedTree, TreeTables, Taxonomy, polars.DataFrame or mapping

        Returns
        -------
        RankedTree
        """
        if isinstance(tree, RankedTree):
            return tree
        if isinstance(tree, TreeTables):
            return cls.from_tables(tree)
        if isinstance(tree, Taxonomy):
            return cls(tree)
        if isinstance(tree, pl.DataFrame):
            return cls.from_nodes(tree)
        if isinstance(tree, Mapping):
            nodes = pl.DataFrame({"node_id": [str(k) for k in tree],
                                  "parent_id": [None if v is None else str(v) for v in tree.values()]},
                                 schema={"node_id": pl.String, "parent_id": pl.String})
            return cls.from_nodes(nodes.with_columns(pl.col("node_id").alias("label")))
        raise TypeError(f"cannot make a tree of {type(tree).__name__}; expected a RankedTree, TreeTables, "
                        "Taxonomy, nodes DataFrame or {child: parent} mapping (a tree or snapshot folder, or "
                        "NAME[@VERSION]: taxoforge.snapshots.load.load_ranked_tree)")

    @classmethod
    def from_nodes(cls, nodes: pl.DataFrame, names: pl.DataFrame | None = None, *, name: str = "tree",
                   version: str | None = None, links: pl.DataFrame | None = None) -> "RankedTree":
        """A ``RankedTree`` of a nodes table, its names table and its links table.

        Parameters
        ----------
        nodes : polars.DataFrame
            ``node_id``, ``parent_id``, optional ``label`` and ``rank``.
        names : polars.DataFrame, optional
        name : str
        version : str, optional
        links : polars.DataFrame, optional

        Returns
        -------
        RankedTree
        """
        tax = Taxonomy(nodes, names)
        ranks = None
        if "rank" in nodes.columns:
            srt = nodes.select(pl.col("node_id").cast(pl.String), pl.col("rank").cast(pl.String)).sort("node_id")
            if not np.array_equal(srt["node_id"].to_numpy(), tax.ids):  # pragma: no cover - Taxonomy sorts the same way
                srt = pl.DataFrame({"node_id": tax.ids}, schema={"node_id": pl.String}).join(
                    srt, on="node_id", how="left", maintain_order="left")
            ranks = srt["rank"].to_numpy()
        return cls(tax, ranks, names, name=name, version=version, nodes=nodes, links=links)

    @classmethod
    def from_tables(cls, tables: TreeTables) -> "RankedTree":
        """A ``RankedTree`` of a taxonomy's tables (its nodes, names and links are kept, so a
        label resolves against it exactly as against the tables).

        Parameters
        ----------
        tables : TreeTables

        Returns
        -------
        RankedTree
        """
        version = (tables.info or {}).get("snapshot")
        names = tables.names if tables.names.height else None
        links = tables.links if tables.links.height else None
        return cls.from_nodes(tables.nodes, names, name=tables.name, version=version, links=links)

    # ------------------------------------------------------------------ basic facts
    def __len__(self) -> int:
        return len(self.taxonomy)

    @cached_property
    def ranks(self) -> np.ndarray:
        """Every node's rank (an object array aligned with :attr:`ids`; ``None`` where a node
        has none), made from the rank codes on first use when the tree was given those."""
        codes, code = self._rank_codes
        names = np.empty(len(code) + 1, dtype=object)  # code -1 (no rank) takes the last slot: None
        for r, i in code.items():
            names[i] = r
        return names[codes]

    @property
    def ids(self) -> np.ndarray:
        """The node ids, sorted (the index of a node is its position here)."""
        return self.taxonomy.ids

    @cached_property
    def labels(self) -> np.ndarray:
        """The display name of every node (its id where it has none); made on first use."""
        labels = self.taxonomy._labels
        if labels is None:
            return self.taxonomy.ids
        lab = pl.Series(labels, dtype=pl.String)
        return np.where(lab.is_null().to_numpy(), self.taxonomy.ids, lab.to_numpy())

    @property
    def depth(self) -> np.ndarray:
        """The depth of every node (the root: 0)."""
        return self.taxonomy.depth_arr

    @property
    def parent(self) -> np.ndarray:
        """The parent's index of every node (-1 for the root)."""
        return self.taxonomy.parent_idx

    @cached_property
    def _rank_codes(self) -> tuple[np.ndarray, dict[str, int]]:
        s = pl.Series(self.ranks, dtype=pl.String)
        names = sorted(s.drop_nulls().unique().to_list())
        code = {r: i for i, r in enumerate(names)}
        arr = s.replace_strict(code, default=-1, return_dtype=pl.Int32).to_numpy()
        return arr, code

    @property
    def rank_set(self) -> set[str]:
        """The ranks the tree has."""
        return set(self._rank_codes[1])

    def rank_mask(self, rank: str) -> np.ndarray:
        """Which nodes have a rank (a fast integer comparison).

        Parameters
        ----------
        rank : str

        Returns
        -------
        numpy.ndarray
            One boolean per node.
        """
        codes, code = self._rank_codes
        return codes == code[rank] if rank in code else np.zeros(len(self), dtype=bool)

    @property
    def has_ranks(self) -> bool:
        """Whether any node has a rank."""
        return bool(self._rank_codes[1])

    @cached_property
    def rank_order(self) -> list[str]:
        """Ranks present in the tree, top down: the Linnean spine order first, any other rank
        placed by its median depth."""
        codes, code = self._rank_codes
        name_of = {i: r for r, i in code.items()}
        s = pl.DataFrame({"code": np.asarray(codes), "depth": np.asarray(self.depth)})
        med = s.filter(pl.col("code") >= 0).group_by("code").agg(pl.col("depth").median())
        depths = {name_of[c]: d for c, d in zip(med["code"].to_list(), med["depth"].to_list())}
        return sorted(depths, key=lambda r: (depths[r], _RANK_TIES.get(r, len(_RANK_TIES)), r))

    def rank_of(self, idx: np.ndarray) -> np.ndarray:
        """The ranks of some nodes.

        Parameters
        ----------
        idx : array_like of int

        Returns
        -------
        numpy.ndarray
            Objects: a rank or ``None``.
        """
        idx = np.asarray(idx, dtype=np.int64)
        if "ranks" in self.__dict__:
            return self.ranks[idx]
        codes, code = self._rank_codes
        names = np.empty(len(code) + 1, dtype=object)
        for r, i in code.items():
            names[i] = r
        return names[codes[idx]]

    def is_infraspecific(self, idx: np.ndarray) -> np.ndarray:
        """Which of some nodes have a rank below the species
        (:data:`taxoforge.trees.ranks.INFRASPECIFIC_RANKS`).

        Parameters
        ----------
        idx : array_like of int

        Returns
        -------
        numpy.ndarray
            One boolean per node given.
        """
        r = self.rank_of(idx)
        return np.array([x in _INFRASPECIFIC for x in r.tolist()], dtype=bool)

    # ------------------------------------------------------------------ children
    @cached_property
    def children_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """``(ptr, kids)``: the children of node ``i`` are ``kids[ptr[i]:ptr[i+1]]``, in id order."""
        return self.taxonomy._children_csr

    def children_idx(self, i: int) -> np.ndarray:
        """The children of node ``i``, in id order.

        Parameters
        ----------
        i : int

        Returns
        -------
        numpy.ndarray
        """
        ptr, kids = self.children_csr
        return kids[ptr[i]:ptr[i + 1]]

    @cached_property
    def is_leaf(self) -> np.ndarray:
        """Whether every node is a leaf."""
        return self.taxonomy.is_leaf

    # ------------------------------------------------------------------ vectorised ancestors
    def ancestor_at_depth(self, idx, depth) -> np.ndarray:
        """The ancestor (or self) of every node at a depth.

        Parameters
        ----------
        idx : array_like of int
        depth : int or array_like of int
            One depth, or one per node.

        Returns
        -------
        numpy.ndarray
            ``-1`` where the node is shallower than that.
        """
        cur = np.asarray(idx, dtype=np.int64).copy()
        target = np.broadcast_to(np.asarray(depth, dtype=np.int64), cur.shape)
        d = self.depth[cur].astype(np.int64)
        out = np.where(d < target, -1, cur)
        move = d > target
        while move.any():
            out[move] = self.parent[out[move]]
            d[move] -= 1
            move = d > target
        return out

    def _rank_ancestor_table(self, rank: str) -> np.ndarray:
        cache = self.__dict__.setdefault("_rank_anc", {})
        if rank not in cache:
            n = len(self)
            is_r = self.rank_mask(rank)
            res = np.full(n, -1, dtype=np.int64)
            depth = self.depth
            order = np.argsort(depth, kind="stable")
            bounds = np.searchsorted(depth[order], np.arange(int(depth.max()) + 2))
            for d in range(int(depth.max()) + 1):
                lvl = order[bounds[d]:bounds[d + 1]]
                par = self.parent[lvl]
                inherited = np.where(par >= 0, res[np.maximum(par, 0)], -1)
                res[lvl] = np.where(is_r[lvl], lvl, inherited)
            cache[rank] = res
        return cache[rank]

    def ancestor_at_rank(self, idx, rank: str) -> np.ndarray:
        """The ancestor (or self) of a rank of every node.

        A few distinct nodes (a scoring run's ground truths, however many rows name them)
        walk up their own paths; many, or a rank asked for before, use the table of every
        node's rank ancestor (built once per rank).
        :func:`taxoforge.trees.ranks.ancestor_at_rank` answers the same over a table.

        Parameters
        ----------
        idx : array_like of int
        rank : str

        Returns
        -------
        numpy.ndarray
            ``-1`` where no ancestor has that rank.
        """
        idx = np.asarray(idx, dtype=np.int64)
        cache = self.__dict__.get("_rank_anc", {})
        if rank in cache or (len(idx) and int(idx.min()) < 0):
            return self._rank_ancestor_table(rank)[idx]
        uniq, inverse = np.unique(idx, return_inverse=True)  # many rows, few distinct nodes: walk those
        if len(uniq) * 64 > len(self):
            return self._rank_ancestor_table(rank)[idx]
        return self._walk_to_rank(uniq, rank)[inverse.reshape(idx.shape)]

    def _walk_to_rank(self, idx: np.ndarray, rank: str) -> np.ndarray:
        """:meth:`ancestor_at_rank` of a few nodes, climbing their paths (depth steps of ``len(idx)``)."""
        codes, code = self._rank_codes
        out = np.full(idx.shape, -1, dtype=np.int64)
        if rank not in code:
            return out
        want, parent = code[rank], self.parent
        cur, todo = idx.copy(), np.arange(len(idx))
        while len(todo):
            hit = codes[cur[todo]] == want
            out[todo[hit]] = cur[todo[hit]]
            todo = todo[~hit]
            cur[todo] = parent[cur[todo]]
            todo = todo[cur[todo] >= 0]
        return out

    def lca_depth(self, u, v) -> np.ndarray:
        """The depth of the lowest common ancestor of every pair.

        Parameters
        ----------
        u, v : array_like of int

        Returns
        -------
        numpy.ndarray
        """
        return self.taxonomy.lca_depth(np.asarray(u, dtype=np.int64), np.asarray(v, dtype=np.int64))

    # ------------------------------------------------------------------ tables
    @cached_property
    def nodes_table(self) -> pl.DataFrame:
        """``node_id``, ``parent_id``, ``label``, ``rank`` of every node: the nodes table the
        tree was made from, or one made from the tree's arrays."""
        if self._nodes is not None:
            src = self._nodes
            return src.select(pl.col("node_id").cast(pl.String), *[
                (pl.col(c).cast(pl.String) if c in src.columns else pl.lit(None, dtype=pl.String)).alias(c)
                for c in ("parent_id", "label", "rank")])
        ids = self.ids
        parent = np.where(self.parent >= 0, ids[np.maximum(self.parent, 0)], None)
        return pl.DataFrame({"node_id": ids, "parent_id": parent, "label": self.labels, "rank": self.ranks},
                            schema={"node_id": pl.String, "parent_id": pl.String, "label": pl.String,
                                    "rank": pl.String})

    @cached_property
    def names_table(self) -> pl.DataFrame:
        """``node_id``, ``name``, ``kind`` of every name: the names table the tree was made
        with, or (a tree without one) every node's label as a name of kind ``label``."""
        if self._names is not None and self._names.height:
            return self._names
        return pl.DataFrame({"node_id": self.ids, "name": self.labels, "kind": "label"},
                            schema={"node_id": pl.String, "name": pl.String, "kind": pl.String})

    @cached_property
    def index_frame(self) -> pl.DataFrame:
        """``node_id`` → ``idx`` (its index in :attr:`ids`), to turn node ids into indexes with a join."""
        return pl.DataFrame({"node_id": self.ids, "idx": np.arange(len(self), dtype=np.int64)},
                            schema={"node_id": pl.String, "idx": pl.Int64})

    @property
    def links_table(self) -> pl.DataFrame | None:
        """The links table of the tree's tables (dataset labels linked to nodes), if any."""
        return self._links
