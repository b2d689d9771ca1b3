"""The rank queries of a :class:`~taxoforge.trees.taxonomy.Taxonomy`: every node's rank and
"the genus of every one of these nodes" in one vectorised pass per rank.

A part of :class:`~taxoforge.trees.taxonomy.Taxonomy` (a mixin, not a type of its own).
``ranks`` is the ``rank`` column of the nodes table aligned with ``ids`` (``None`` where the
source has no rank, e.g. WordNet), or, for a tree opened from its stored working set
(:mod:`taxoforge.snapshots.tree_cache`), made from the stored rank codes only when asked
for; the queries compare small integer codes, never a string per node.

>>> from taxoforge.trees.taxonomy import Taxonomy
>>> t = Taxonomy(pl.DataFrame({"node_id": ["Life", "Canis", "Canis lupus"], "parent_id": [None, "Life", "Canis"],
...                            "rank": [None, "genus", "species"]}))
>>> t.ids[t.ancestor_at_rank(t.index_of(["Canis lupus"]), "genus")].tolist(), t.rank_order
(['Canis'], ['genus', 'species'])
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
import polars as pl

from taxoforge.trees.ranks import INFRASPECIFIC_RANKS, SPINE_RANKS

__all__ = ["RankQueries"]

#: Rank order that breaks ties between ranks of equal median depth: the spine, then the
#: subspecies; any other rank of the same depth after them, alphabetically.
_RANK_TIES = {r: i for i, r in enumerate((*SPINE_RANKS, "subspecies"))}
_INFRASPECIFIC = frozenset(INFRASPECIFIC_RANKS)


class RankQueries:
    """The rank queries of a tree (module docstring); :class:`~taxoforge.trees.taxonomy.Taxonomy`
    holds them. They read ``ids``, ``parent_idx``, ``depth_arr`` and the nodes table the tree
    was made from (``_nodes``), or the rank codes it was opened with."""

    @cached_property
    def ranks(self) -> np.ndarray:
        """Every node's rank (an object array aligned with :attr:`ids`; ``None`` where a node
        has none), made on first use from the nodes table's ``rank`` column or the stored
        rank codes."""
        if "_rank_codes" in self.__dict__:
            codes, code = self._rank_codes
            names = np.empty(len(code) + 1, dtype=object)  # code -1 (no rank) takes the last slot: None
            for r, i in code.items():
                names[i] = r
            return names[codes]
        nodes = self._nodes
        if nodes is None or "rank" not in nodes.columns:
            return np.full(len(self), None, dtype=object)
        srt = nodes.select(pl.col("node_id").cast(pl.String), pl.col("rank").cast(pl.String)).sort("node_id")
        if not np.array_equal(srt["node_id"].to_numpy(), self.ids):  # pragma: no cover - the tree sorts the same way
            srt = pl.DataFrame({"node_id": self.ids}, schema={"node_id": pl.String}).join(
                srt, on="node_id", how="left", maintain_order="left")
        return np.asarray(srt["rank"].to_numpy(), dtype=object)

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
        s = pl.DataFrame({"code": np.asarray(codes), "depth": np.asarray(self.depth_arr)})
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

    def _rank_ancestor_table(self, rank: str) -> np.ndarray:
        cache = self.__dict__.setdefault("_rank_anc", {})
        if rank not in cache:
            n = len(self)
            is_r = self.rank_mask(rank)
            res = np.full(n, -1, dtype=np.int64)
            depth = self.depth_arr
            order = np.argsort(depth, kind="stable")
            bounds = np.searchsorted(depth[order], np.arange(int(depth.max()) + 2))
            for d in range(int(depth.max()) + 1):
                lvl = order[bounds[d]:bounds[d + 1]]
                par = self.parent_idx[lvl]
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
        want, parent = code[rank], self.parent_idx
        cur, todo = idx.copy(), np.arange(len(idx))
        while len(todo):
            hit = codes[cur[todo]] == want
            out[todo[hit]] = cur[todo[hit]]
            todo = todo[~hit]
            cur[todo] = parent[cur[todo]]
            todo = todo[cur[todo] >= 0]
        return out
