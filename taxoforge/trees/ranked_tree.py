"""A taxonomy with its ranks and names, as the evaluations need it.

:class:`RankedTree` wraps :class:`taxoforge.trees.taxonomy.Taxonomy` (ancestors, depths,
vectorised LCA) and adds, aligned with ``taxonomy.ids``:

* ``ranks`` — the ``rank`` column of the nodes table (``None`` where the source has no
  rank, e.g. WordNet), with :meth:`RankedTree.ancestor_at_rank` answering "the genus of
  every one of these nodes" in one vectorised pass per rank;
* ``labels`` — the display names, and the ``names`` table for resolving dataset labels
  (:meth:`RankedTree.resolve`: node id, then exact name, then normalised name; several
  nodes with the name → ``ambiguous``, none → ``unknown``; nothing is dropped silently).

:meth:`RankedTree.of` accepts a ``RankedTree``, a :class:`~taxoforge.trees.tables.TreeTables`,
a ``Taxonomy``, a nodes DataFrame or a ``{child: parent}`` mapping;
:func:`taxoforge.snapshots.load.load_ranked_tree` also takes a tree folder, a snapshot folder
or ``NAME[@VERSION]`` in the snapshot store.

>>> t = RankedTree.of({"Life": None, "Canis": "Life", "Canis lupus": "Canis", "Canis latrans": "Canis"})
>>> t.taxonomy.ancestors("Canis lupus")
['Life', 'Canis', 'Canis lupus']
>>> r = t.resolve(["Canis lupus", "canis  LATRANS", "Felis"])
>>> r["method"].to_list()
['node_id', 'normalised', 'unknown']
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cached_property

import numpy as np
import polars as pl

from taxoforge.trees.ranks import INFRASPECIFIC_RANKS, SPINE_RANKS
from taxoforge.trees.tables import TreeTables
from taxoforge.trees.taxonomy import Taxonomy

__all__ = ["RankedTree", "UnresolvedLabels"]

#: Rank order that breaks ties between ranks of equal median depth: the spine, then the
#: subspecies; any other rank of the same depth after them, alphabetically.
_RANK_TIES = {r: i for i, r in enumerate((*SPINE_RANKS, "subspecies"))}
_INFRASPECIFIC = frozenset(INFRASPECIFIC_RANKS)


class UnresolvedLabels(ValueError):
    """Labels that name no node, or several; the message lists them with their rows."""


class RankedTree:
    """A :class:`Taxonomy` plus ranks, labels and names (module docstring).

    Parameters
    ----------
    taxonomy : Taxonomy
        The taxonomy.
    ranks : Iterable, optional
        Taxonomic ranks.
    names : polars.DataFrame, optional
        The names table.
    name : str, optional
        The name.
    version : str, optional
        The version.
    """

    def __init__(self, taxonomy: Taxonomy, ranks: Iterable | None = None, names: pl.DataFrame | None = None,
                 *, name: str = "tree", version: str | None = None) -> None:
        self.taxonomy = taxonomy
        n = len(taxonomy.ids)
        if ranks is None:
            ranks = np.full(n, None, dtype=object)
        ranks = np.asarray(list(ranks) if not isinstance(ranks, np.ndarray) else ranks, dtype=object)
        if len(ranks) != n:
            raise ValueError(f"ranks has {len(ranks)} entries, the tree {n} nodes")
        self.ranks: np.ndarray = ranks
        self._names = names
        self.name = name
        self.version = version

    # ------------------------------------------------------------------ construction
    @classmethod
    def of(cls, tree) -> "RankedTree":
        """A ``RankedTree`` from any of the inputs in the module docstring.

        Parameters
        ----------
        tree : object
            The tree.
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
                   version: str | None = None) -> "RankedTree":
        """A ranked tree over a nodes table (its ``rank`` column, when present, gives the ranks).

        Parameters
        ----------
        nodes : polars.DataFrame
            The nodes table.
        names : polars.DataFrame, optional
            The names table.
        name : str, optional
            The tree's name.
        version : str, optional
            Its snapshot version, if any.

        Returns
        -------
        RankedTree
            The tree.
        """
        tax = Taxonomy(nodes, names)
        ranks = None
        if "rank" in nodes.columns:
            srt = nodes.select(pl.col("node_id").cast(pl.String), pl.col("rank").cast(pl.String)).sort("node_id")
            if not np.array_equal(srt["node_id"].to_numpy(), tax.ids):  # pragma: no cover - Taxonomy sorts the same way
                srt = pl.DataFrame({"node_id": tax.ids}, schema={"node_id": pl.String}).join(
                    srt, on="node_id", how="left", maintain_order="left")
            ranks = srt["rank"].to_numpy()
        return cls(tax, ranks, names, name=name, version=version)

    @classmethod
    def from_tables(cls, tables: TreeTables) -> "RankedTree":
        """A ranked tree over a taxonomy's tables.

        Parameters
        ----------
        tables : TreeTables
            The tables.

        Returns
        -------
        RankedTree
            The tree (its version: the tables' snapshot, if any).
        """
        version = (tables.info or {}).get("snapshot")
        names = tables.names if tables.names.height else None
        return cls.from_nodes(tables.nodes, names, name=tables.name, version=version)

    # ------------------------------------------------------------------ basic facts
    def __len__(self) -> int:
        return len(self.taxonomy.ids)

    @property
    def ids(self) -> np.ndarray:
        """Node ids in sorted order; a node's index is its position here."""
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
        """Depth of every node (root = 0)."""
        return self.taxonomy.depth_arr

    @property
    def parent(self) -> np.ndarray:
        """Index of every node's parent, -1 for the root."""
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
        """True for the nodes of rank ``rank`` (a fast integer comparison).

        Parameters
        ----------
        rank : str
            A taxonomic rank.

        Returns
        -------
        numpy.ndarray
            True for the nodes of rank ``rank`` (a fast integer comparison).
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
        s = pl.DataFrame({"rank": pl.Series(self.ranks, dtype=pl.String), "depth": self.depth})
        med = s.drop_nulls("rank").group_by("rank").agg(pl.col("depth").median()).sort("depth", "rank")
        depths = dict(zip(med["rank"].to_list(), med["depth"].to_list()))
        return sorted(depths, key=lambda r: (depths[r], _RANK_TIES.get(r, len(_RANK_TIES)), r))

    def rank_of(self, idx: np.ndarray) -> np.ndarray:
        """The rank of each node.

        Parameters
        ----------
        idx : array_like of int
            Node indexes.

        Returns
        -------
        numpy.ndarray
            Ranks (None where a node has none).
        """
        return self.ranks[np.asarray(idx, dtype=np.int64)]

    def is_infraspecific(self, idx: np.ndarray) -> np.ndarray:
        """Whether each node's rank is below species (subspecies, variety, form …).

        Parameters
        ----------
        idx : array_like of int
            Node indexes.

        Returns
        -------
        numpy.ndarray
            Booleans.
        """
        r = self.rank_of(idx)
        return np.array([x in _INFRASPECIFIC for x in r.tolist()], dtype=bool)

    # ------------------------------------------------------------------ children
    @cached_property
    def children_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """``(ptr, kids)``: the children of node ``i`` are ``kids[ptr[i]:ptr[i+1]]``, in id order."""
        return self.taxonomy._children_csr

    def children_idx(self, i: int) -> np.ndarray:
        """The children of one node.

        Parameters
        ----------
        i : int
            A node index.

        Returns
        -------
        numpy.ndarray
            Child indexes, in index order.
        """
        ptr, kids = self.children_csr
        return kids[ptr[i]:ptr[i + 1]]

    @cached_property
    def is_leaf(self) -> np.ndarray:
        """Leaf flags, one per node."""
        return self.taxonomy.is_leaf

    # ------------------------------------------------------------------ vectorised ancestors
    def ancestor_at_depth(self, idx, depth) -> np.ndarray:
        """The ancestor (or self) of every ``idx[i]`` at depth ``depth`` (scalar or per-node);
        ``-1`` where the node is shallower than that.

        Parameters
        ----------
        idx : object
            Node indexes.
        depth : object
            A depth, or one per node.

        Returns
        -------
        numpy.ndarray
            The ancestor (or self) of every ``idx[i]`` at depth ``depth`` (scalar or
            per-node); ``-1`` where the node is shallower than that.
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
        """The ancestor (or self) of rank ``rank`` of every ``idx[i]``; ``-1`` where none.

        A few nodes (a scoring run's ground truths) walk up their own paths; many, or a rank
        asked for before, use the table of every node's rank ancestor (built once per rank).

        Parameters
        ----------
        idx : object
            Node indexes.
        rank : str
            A taxonomic rank.

        Returns
        -------
        numpy.ndarray
            The ancestor (or self) of rank ``rank`` of every ``idx[i]``; ``-1`` where none.
        """
        idx = np.asarray(idx, dtype=np.int64)
        cache = self.__dict__.get("_rank_anc", {})
        if rank in cache or len(idx) * 64 > len(self) or (len(idx) and int(idx.min()) < 0):
            return self._rank_ancestor_table(rank)[idx]
        return self._walk_to_rank(idx, rank)

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
        """Depth of the lowest common ancestor of each index pair (:meth:`taxoforge.trees.taxonomy.Taxonomy.lca_depth`).

        Parameters
        ----------
        u, v : array_like of int
            Node indexes of equal length.

        Returns
        -------
        numpy.ndarray
            One depth per pair.
        """
        return self.taxonomy.lca_depth(np.asarray(u, dtype=np.int64), np.asarray(v, dtype=np.int64))

    # ------------------------------------------------------------------ names
    @cached_property
    def _name_source(self) -> pl.DataFrame:
        """``node_id``, ``name`` of every name of every node, labels included."""
        labels = pl.DataFrame({"node_id": self.ids, "name": self.labels}, schema={"node_id": pl.String, "name": pl.String})
        if self._names is not None and self._names.height:
            names = self._names.select(pl.col("node_id").cast(pl.String), pl.col("name").cast(pl.String))
            return pl.concat([names, labels]).drop_nulls()
        return labels.drop_nulls()

    @staticmethod
    def _normal_form(col: pl.Expr) -> pl.Expr:
        """:func:`taxoforge.text.normalise_text` as a vectorised polars expression (lower-case,
        dashes and underscores to spaces, other punctuation and symbols removed, whitespace
        collapsed; Unicode NFKC folding is the one step it leaves out)."""
        return (col.str.to_lowercase().str.replace_all(r"[\p{Pd}_]", " ").str.replace_all(r"[\p{P}\p{S}]", "")
                .str.replace_all(r"\s+", " ").str.strip_chars())

    def resolve(self, values: Iterable, node_ref: str = "auto") -> pl.DataFrame:
        """Resolve dataset labels to nodes, in order: node id, exact name, normalised name.

        ``node_ref``: ``"auto"`` (all three), ``"id"`` (node ids only) or ``"name"``
        (names only). Returns one row per value: ``row``, ``value``, ``idx`` (-1 when not
        resolved), ``method`` (``node_id``, ``name``, ``normalised``, ``ambiguous``,
        ``unknown``) and ``detail``.

        Parameters
        ----------
        values : Iterable
            Labels, node ids or ids to resolve.
        node_ref : str, optional
            How values name nodes: ``"auto"`` (node ids where they are, else labels),
            ``"id"`` or ``"label"``.

        Returns
        -------
        polars.DataFrame
            One row per value: the node and how it was resolved.
        """
        if node_ref not in ("auto", "id", "name"):
            raise ValueError(f"node_ref must be 'auto', 'id' or 'name', not {node_ref!r}")
        vals = [None if v is None else str(v) for v in values]
        n = len(vals)
        idx = np.full(n, -1, dtype=np.int64)
        method = np.full(n, "unknown", dtype=object)
        detail = np.full(n, None, dtype=object)
        df = pl.DataFrame({"row": np.arange(n, dtype=np.int64), "value": vals}, schema={"row": pl.Int64, "value": pl.String})
        if node_ref in ("auto", "id"):
            code = pl.DataFrame({"value": self.ids.tolist(), "idx": np.arange(len(self), dtype=np.int64)},
                                schema={"value": pl.String, "idx": pl.Int64})
            hit = df.join(code, on="value", how="inner")
            idx[hit["row"].to_numpy()] = hit["idx"].to_numpy()
            method[hit["row"].to_numpy()] = "node_id"
        if node_ref in ("auto", "name"):
            for how in ("name", "normalised"):
                todo = df.filter(pl.Series(idx < 0) & pl.Series(method != "ambiguous") & pl.col("value").is_not_null())
                if not todo.height:
                    break
                src = self._name_source
                if how == "name":
                    todo = todo.with_columns(pl.col("value").alias("key"))
                    src = src.rename({"name": "key"})
                else:
                    todo = todo.with_columns(self._normal_form(pl.col("value")).alias("key"))
                    src = src.select("node_id", self._normal_form(pl.col("name")).alias("key"))
                src = src.filter(pl.col("key").is_in(todo["key"].unique().implode()))
                hit = (todo.join(src, on="key", how="inner").group_by("row", maintain_order=True)
                       .agg(pl.col("node_id").unique().sort()))
                for row, cand in hit.iter_rows():
                    if len(cand) == 1:
                        idx[row], method[row] = int(self.taxonomy.index_of(cand)[0]), how
                    else:
                        method[row] = "ambiguous"
                        shown = ", ".join(cand[:5]) + (" …" if len(cand) > 5 else "")
                        detail[row] = f"{len(cand)} nodes are named {vals[row]!r}: {shown}"
        unknown = (idx < 0) & (method == "unknown")
        for row in np.flatnonzero(unknown).tolist():
            detail[row] = (f"{vals[row]!r} is not a node id or a name of {self.name}" if vals[row] is not None
                           else "empty label")
        return pl.DataFrame({"row": np.arange(n, dtype=np.int64), "value": vals, "idx": idx,
                             "method": method.tolist(), "detail": detail.tolist()},
                            schema={"row": pl.Int64, "value": pl.String, "idx": pl.Int64, "method": pl.String,
                                    "detail": pl.String})

    def resolve_strict(self, values: Iterable, node_ref: str = "auto", what: str = "label") -> np.ndarray:
        """Node indexes of ``values``; :class:`UnresolvedLabels` listing (up to ten) values that
        name no node or several, with their positions.

        Parameters
        ----------
        values : Iterable
            Labels or node ids to resolve.
        node_ref : str, optional
            How values name nodes: ``"auto"`` (node ids where they are, else labels),
            ``"id"`` or ``"label"``.
        what : str, optional
            What the values are, for the message.

        Returns
        -------
        numpy.ndarray
            Node indexes of ``values``; :class:`UnresolvedLabels` listing (up to ten) values
            that name no node or several, with their positions.
        """
        r = self.resolve(values, node_ref)
        bad = r.filter(pl.col("idx") < 0)
        if bad.height:
            lines = [f"  position {row}: {det}" for row, det in bad.select("row", "detail").head(10).iter_rows()]
            more = f"\n  … and {bad.height - 10} more" if bad.height > 10 else ""
            raise UnresolvedLabels(f"{bad.height} {what}(s) not resolved to a node of {self.name}:\n"
                                   + "\n".join(lines) + more)
        return r["idx"].to_numpy()
