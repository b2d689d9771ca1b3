"""Integrity of a built taxonomy: the facts the publishing gates check.

Pure functions over the ``nodes`` and ``links`` tables (see :mod:`taxoforge.trees.tables`);
no Dagster here. :mod:`pipelines.checks` turns them into blocking asset checks.

Input
    ``nodes`` with ``node_id``, ``parent_id`` (null for a root) and optionally ``depth``;
    ``links`` with ``dataset``, ``status`` and ``node_id``.
Output
    :class:`TreeIntegrity` — counts and a few example ids for every defect, never a bare
    yes/no — and :func:`link_coverage`, one row per dataset.
Algorithm
    1. Duplicate and null node ids are counted first.
    2. *Orphans* are nodes whose ``parent_id`` is not null and is not a node id.
    3. Every node's parent pointer is followed by pointer doubling (``anc ← anc[anc]``,
       ⌈log₂ n⌉ + 1 rounds, vectorised): a chain ends at a root or at an orphan; a node
       whose chain never ends lies on, or hangs below, a *cycle*. One cycle is traced for
       the report.
    4. With no cycles, ``depth`` must equal the parent's depth + 1 and 0 at the root.

>>> import polars as pl
>>> nodes = pl.DataFrame({"node_id": ["r", "a", "b", "c", "x", "y"],
...                       "parent_id": [None, "r", "r", "gone", "y", "x"]})
>>> t = tree_integrity(nodes)
>>> t.roots, t.orphans, t.n_on_cycles, t.cycle_example
(['r'], ['c'], 2, ['x', 'y'])
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from taxoforge.trees.ranks import GENUS_RANKS, INFRASPECIFIC_RANKS, SPECIES_RANKS, SPINE_RANKS

__all__ = ["TreeIntegrity", "tree_integrity", "link_coverage", "coverage_failures", "RootChildren",
           "root_children", "named_examples", "INCERTAE_SEDIS_SUFFIX"]

_ROOT = -1
_ORPHAN = -2
EXAMPLES = 10


@dataclass
class TreeIntegrity:
    """What :func:`tree_integrity` found. Lists of ids are examples, capped at ``EXAMPLES``.

    Attributes
    ----------
    n_nodes : int
        Rows of the nodes table.
    n_null_ids : int
        Rows with a null ``node_id``.
    duplicate_ids : list[str]
        Example ids that occur more than once.
    n_duplicate_ids : int
        How many ids occur more than once.
    roots : list[str]
        Example nodes without a parent.
    n_roots : int
        How many nodes have no parent.
    orphans : list[str]
        Example nodes whose parent is not a node.
    n_orphans : int
        How many nodes have a parent that is not a node.
    n_below_orphans : int
        Nodes under an orphan (not reachable from a root).
    n_on_cycles : int
        Nodes on a cycle of parent links.
    cycle_example : list[str]
        One cycle, as node ids.
    n_depth_mismatches : int or None
        Nodes whose ``depth`` disagrees with the tree (None: no depth column, or cycles
        prevent the check).
    depth_mismatch_examples : list[str]
        Example nodes whose ``depth`` disagrees with the tree.
    max_depth : int or None
        The deepest node's depth (None when it cannot be computed).
    """

    n_nodes: int
    n_null_ids: int = 0
    duplicate_ids: list[str] = field(default_factory=list)
    n_duplicate_ids: int = 0
    roots: list[str] = field(default_factory=list)
    n_roots: int = 0
    orphans: list[str] = field(default_factory=list)
    n_orphans: int = 0
    n_below_orphans: int = 0
    n_on_cycles: int = 0
    cycle_example: list[str] = field(default_factory=list)
    n_depth_mismatches: int | None = None  # None: no depth column, or cycles prevent the check
    depth_mismatch_examples: list[str] = field(default_factory=list)
    max_depth: int | None = None

    @property
    def one_root(self) -> bool:
        """Exactly one root, and no null or repeated ids."""
        return self.n_nodes > 0 and self.n_roots == 1 and self.n_duplicate_ids == 0 and self.n_null_ids == 0

    @property
    def acyclic(self) -> bool:
        """No node lies on a cycle of parent links."""
        return self.n_on_cycles == 0

    @property
    def no_orphans(self) -> bool:
        """Every parent is a node of the table."""
        return self.n_orphans == 0

    @property
    def depths_consistent(self) -> bool:
        """The ``depth`` column agrees with the tree (or there is none to check)."""
        return not self.n_depth_mismatches


def tree_integrity(nodes: pl.DataFrame) -> TreeIntegrity:
    """Count roots, orphans, nodes on cycles and depth mismatches of a ``nodes`` table.

    Parameters
    ----------
    nodes : polars.DataFrame
        At least ``node_id`` and ``parent_id``; ``depth`` is checked when present.

    Returns
    -------
    TreeIntegrity
        The counts and examples of what breaks the tree (none for a valid one).

    Raises
    ------
    ValueError
        If ``node_id`` or ``parent_id`` is missing, naming the columns found.
    """
    for c in ("node_id", "parent_id"):
        if c not in nodes.columns:
            raise ValueError(f"nodes table has no column {c!r}; columns are {nodes.columns}")
    n = nodes.height
    out = TreeIntegrity(n_nodes=n)
    if n == 0:
        return out
    ids = nodes["node_id"].cast(pl.String)
    parents = nodes["parent_id"].cast(pl.String)
    out.n_null_ids = ids.null_count()
    dup = ids.filter(ids.is_duplicated()).unique().sort()
    out.n_duplicate_ids = dup.len()
    out.duplicate_ids = dup.head(EXAMPLES).to_list()

    # Index every node; with duplicates the first occurrence is the one parents point to.
    frame = pl.DataFrame({"node_id": ids, "parent_id": parents, "_i": np.arange(n, dtype=np.int64)})
    first = frame.filter(pl.col("node_id").is_not_null()).group_by("node_id").agg(pl.col("_i").min().alias("_p"))
    joined = frame.join(first, left_on="parent_id", right_on="node_id", how="left").sort("_i")
    p = joined["_p"].fill_null(-3).to_numpy().astype(np.int64)
    is_root = parents.is_null().to_numpy()
    is_orphan = (~is_root) & (p == -3)
    p[is_root] = _ROOT
    p[is_orphan] = _ORPHAN

    out.n_roots = int(is_root.sum())
    out.roots = sorted(ids.filter(pl.Series(is_root)).drop_nulls().to_list())[:EXAMPLES]
    out.n_orphans = int(is_orphan.sum())
    out.orphans = sorted(ids.filter(pl.Series(is_orphan)).drop_nulls().to_list())[:EXAMPLES]

    # Pointer doubling: anc[i] becomes the 2^k-th ancestor, or the sentinel that ends its chain.
    anc = p.copy()
    for _ in range(int(np.ceil(np.log2(n + 1))) + 1):
        live = anc >= 0
        if not live.any():
            break
        anc[live] = anc[anc[live]]
    on_cycle = anc >= 0
    out.n_on_cycles = int(on_cycle.sum())
    out.n_below_orphans = int(((anc == _ORPHAN) & ~is_orphan).sum())
    if out.n_on_cycles:
        out.cycle_example = _trace_cycle(int(np.flatnonzero(on_cycle)[0]), p, ids.to_list())

    if "depth" in nodes.columns and not out.n_on_cycles:
        depth = nodes["depth"].cast(pl.Int64).fill_null(-1).to_numpy()
        expected = np.where(p >= 0, depth[np.clip(p, 0, None)] + 1, 0)
        bad = (depth != expected) & (p != _ORPHAN)
        out.n_depth_mismatches = int(bad.sum())
        out.depth_mismatch_examples = ids.filter(pl.Series(bad)).head(EXAMPLES).to_list()
        out.max_depth = int(depth.max())
    return out


def _trace_cycle(start: int, parent: np.ndarray, ids: list) -> list[str]:
    """The node ids of the cycle reached by following parents from ``start``, smallest id first."""
    seen: dict[int, int] = {}
    path: list[int] = []
    i = start
    while i not in seen and i >= 0:
        seen[i] = len(path)
        path.append(i)
        i = int(parent[i])
    cycle = [ids[j] for j in path[seen[i]:]] if i >= 0 else []
    if not cycle:
        return []
    k = cycle.index(min(cycle))
    return cycle[k:] + cycle[:k]


def link_coverage(links: pl.DataFrame, node_ids: Iterable[str] | pl.Series | None = None) -> pl.DataFrame:
    """Per dataset: ``n_labels``, ``n_linked``, ``n_ambiguous``, ``n_unmatched``, ``coverage``
    (linked / labels) and ``n_dangling`` (linked rows whose ``node_id`` is not in ``node_ids``;
    0 when ``node_ids`` is not given). Sorted by dataset.

    Parameters
    ----------
    links : polars.DataFrame
        The links table.
    node_ids : Iterable[str] or polars.Series, optional
        Node ids.

    Returns
    -------
    polars.DataFrame
        Per dataset: ``n_labels``, ``n_linked``, ``n_ambiguous``, ``n_unmatched``,
        ``coverage`` (linked / labels) and ``n_dangling`` (linked rows whose ``node_id``
        is not in ``node_ids``; 0 when ``node_ids`` is not given).
    """
    schema = {"dataset": pl.String, "n_labels": pl.Int64, "n_linked": pl.Int64, "n_ambiguous": pl.Int64,
              "n_unmatched": pl.Int64, "coverage": pl.Float64, "n_dangling": pl.Int64}
    if links.height == 0:
        return pl.DataFrame(schema=schema)
    for c in ("dataset", "status"):
        if c not in links.columns:
            raise ValueError(f"links table has no column {c!r}; columns are {links.columns}")
    lk = links.select(pl.col("dataset").cast(pl.String).fill_null("<none>"), pl.col("status").cast(pl.String),
                      pl.col("node_id").cast(pl.String) if "node_id" in links.columns else pl.lit(None, pl.String).alias("node_id"))
    if node_ids is not None:
        known = pl.Series("node_id", list(node_ids) if not isinstance(node_ids, pl.Series) else node_ids, dtype=pl.String)
        lk = lk.with_columns(
            ((pl.col("status") == "linked") & ~pl.col("node_id").is_in(known.implode())).alias("_dangling"))
    else:
        lk = lk.with_columns(pl.lit(False).alias("_dangling"))
    return (
        lk.group_by("dataset")
        .agg(
            pl.len().cast(pl.Int64).alias("n_labels"),
            (pl.col("status") == "linked").sum().cast(pl.Int64).alias("n_linked"),
            (pl.col("status") == "ambiguous").sum().cast(pl.Int64).alias("n_ambiguous"),
            (pl.col("status") == "unmatched").sum().cast(pl.Int64).alias("n_unmatched"),
            pl.col("_dangling").sum().cast(pl.Int64).alias("n_dangling"),
        )
        .with_columns((pl.col("n_linked") / pl.col("n_labels")).alias("coverage"))
        .select(list(schema))
        .sort("dataset")
    )


def coverage_failures(coverage: pl.DataFrame, min_coverage: float | Mapping[str, float]) -> list[str]:
    """Human-readable reasons a coverage table fails ``min_coverage`` (one float for every
    dataset, or a mapping ``dataset → minimum``; datasets not in the mapping are not gated).
    Dangling links always fail. Empty list: passed.

    Parameters
    ----------
    coverage : polars.DataFrame
        A coverage table: per dataset, its labels and how many are linked, ambiguous,
        unmatched or dangling.
    min_coverage : float or Mapping[str, float]
        The least share of linked labels: one for every dataset, or ``dataset →
        minimum`` (datasets not listed are not gated).

    Returns
    -------
    list[str]
        Human-readable reasons a coverage table fails ``min_coverage`` (one float for
        every dataset, or a mapping ``dataset → minimum``; datasets not in the mapping
        are not gated).
    """
    reasons = []
    for row in coverage.iter_rows(named=True):
        ds = row["dataset"]
        need = min_coverage.get(ds) if isinstance(min_coverage, Mapping) else min_coverage
        if need is not None and row["coverage"] < need:
            reasons.append(f"{ds}: {row['n_linked']}/{row['n_labels']} labels linked "
                           f"({row['coverage']:.2%}) < required {need:.2%}")
        if row["n_dangling"]:
            reasons.append(f"{ds}: {row['n_dangling']} link(s) point to node ids not in the tree")
    return reasons


#: A node whose id ends so (``inat:incertae_sedis``) holds the taxa whose place its source does not
#: give: the one node besides the top ranks that may sit under the root (docs/method.md#trees).
INCERTAE_SEDIS_SUFFIX = ":incertae_sedis"


def _spine_level(rank: pl.Expr) -> pl.Expr:
    """The Linnean level of a rank: kingdom 0 … genus 5, species 6, below the species 7; null
    for a rank off the spine (domain, superfamily, tribe, clade …) or none."""
    levels = {r: i for i, r in enumerate(SPINE_RANKS)}
    levels.update({r: levels["genus"] for r in GENUS_RANKS})
    levels.update({r: levels["species"] for r in SPECIES_RANKS})
    levels.update({r: len(SPINE_RANKS) for r in INFRASPECIFIC_RANKS})
    return rank.str.to_lowercase().replace_strict(levels, default=None, return_dtype=pl.Int32)


def named_examples(nodes: pl.DataFrame, ids: pl.Series | list, *, limit: int = EXAMPLES,
                   with_parent: bool = False) -> list[str]:
    """How a check names nodes: ``"Balhochordaes charon (inat:1569527, species)"``, with
    ``under Oikopleuridae (family)`` when ``with_parent``: a reader sees the taxon, not a bare id.

    Parameters
    ----------
    nodes : polars.DataFrame
        ``node_id``, ``parent_id``, ``label`` and optionally ``rank``.
    ids : polars.Series or list of str
        The nodes to name, in order (the first ``limit``).
    limit : int, optional
        The most examples.
    with_parent : bool, optional
        Whether to name each node's parent too.

    Returns
    -------
    list of str
        One text per node.
    """
    want = pl.DataFrame({"node_id": pl.Series(list(ids)[:limit], dtype=pl.String)}).with_row_index("_i")
    cols = [c for c in ("node_id", "parent_id", "label", "rank") if c in nodes.columns]
    nd = nodes.select(cols)
    if "rank" not in nd.columns:
        nd = nd.with_columns(pl.lit(None, dtype=pl.String).alias("rank"))
    if "label" not in nd.columns:
        nd = nd.with_columns(pl.lit(None, dtype=pl.String).alias("label"))
    rows = want.join(nd, on="node_id", how="left").sort("_i")
    par = nd.select(pl.col("node_id").alias("parent_id"), pl.col("label").alias("_pl"), pl.col("rank").alias("_pr"))
    rows = rows.join(par, on="parent_id", how="left").sort("_i")

    def one(label, node_id, rank) -> str:
        inside = ", ".join(x for x in (node_id, rank) if x)
        if not label:
            return str(node_id)
        return f"{label} ({inside})" if inside else str(label)

    out = []
    for r in rows.iter_rows(named=True):
        text = one(r["label"], r["node_id"], r["rank"])
        if with_parent:
            text += " under " + (one(r["_pl"], None, r["_pr"]) if r["_pl"] else str(r["parent_id"]))
        out.append(text)
    return out


@dataclass
class RootChildren:
    """What sits directly under the root of a ranked tree (:func:`root_children`).

    Attributes
    ----------
    root : str or None
        The root (None when the tree has no single root).
    n_children : int
        The root's children.
    top_rank : str or None
        The highest Linnean rank among them (``kingdom`` in a tree of all life; None when none
        is ranked, and then nothing is checked).
    n_misplaced : int
        Children of a lower Linnean rank than ``top_rank``: a species beside the kingdoms.
    misplaced : list of str
        Examples, named (:func:`named_examples`).
    """

    root: str | None
    n_children: int = 0
    top_rank: str | None = None
    n_misplaced: int = 0
    misplaced: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Only top ranks (and an incertae sedis node, or unranked nodes) under the root."""
        return self.n_misplaced == 0


def root_children(nodes: pl.DataFrame) -> RootChildren:
    """Whether only top ranks sit under the root: every child of the root whose rank is on the
    Linnean spine (:data:`~taxoforge.trees.ranks.SPINE_RANKS`, with the genus, species and
    infraspecific ranks) has the highest such rank any child of the root has. A tree of all
    life has its kingdoms there; a tree of one superfamily its families. A taxon of a lower
    rank beside them is a taxon whose place was lost (a species hung under *Life*). Children
    off the spine (a domain, a clade, the unranked ``<source>:incertae_sedis`` node) pass: the
    ranks do not place them.

    Parameters
    ----------
    nodes : polars.DataFrame
        ``node_id``, ``parent_id``, ``label`` and ``rank`` (a tree without ``rank`` passes).

    Returns
    -------
    RootChildren
        The root's children and the misplaced ones, named.
    """
    roots = nodes.filter(pl.col("parent_id").is_null())["node_id"]
    if roots.len() != 1:
        return RootChildren(root=None)
    root = roots[0]
    kids = nodes.filter(pl.col("parent_id") == root)
    out = RootChildren(root=root, n_children=kids.height)
    if "rank" not in nodes.columns or not kids.height:
        return out
    kids = kids.with_columns(_spine_level(pl.col("rank")).alias("_level"))
    top = kids["_level"].min()
    if top is None:
        return out
    out.top_rank = kids.filter(pl.col("_level") == top).sort("node_id")["rank"][0]
    bad = kids.filter(pl.col("_level") > top).sort("_level", "node_id")
    out.n_misplaced = bad.height
    out.misplaced = named_examples(nodes, bad["node_id"])
    return out
