"""Checks a tree must pass before it may be published as a snapshot.

Each check is vectorised over the ``nodes`` table (no per-node Python loop), so it runs
on a Wikidata-sized tree in seconds:

``nodes_present``   at least one node.
``unique_ids``      every ``node_id`` once, none null.
``one_root``        exactly one node has no parent.
``no_orphans``      every ``parent_id`` is a node of the tree.
``depths_consistent`` root depth 0 and ``depth(child) = depth(parent) + 1``. Together
                    with ``one_root`` and ``no_orphans`` this proves the tree has no cycle
                    and every node reaches the root: following parents strictly lowers the
                    depth, so it must end, and it can only end at the root.
``names_known``     every name belongs to a node of the tree.
``links_known``     every linked label points to a node of the tree.
``link_coverage``   (only when ``min_link_coverage`` is given) the share of labels with
                    status ``linked``, per dataset, is at least that threshold.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import polars as pl

from taxoforge.trees.tables import TreeTables

__all__ = ["TreeCheck", "check_tree", "failed_checks"]


@dataclass(frozen=True)
class TreeCheck:
    name: str
    passed: bool
    detail: str
    count: int = 0  # number of offending rows (0 when passed)

    def as_dict(self) -> dict:
        return asdict(self)


def _examples(values, k: int = 5) -> str:
    vals = [str(v) for v in list(values)[:k]]
    return ", ".join(vals)


def check_tree(tables: TreeTables, *, min_link_coverage: float | None = None) -> list[TreeCheck]:
    """Run every check on ``tables``; returns one :class:`TreeCheck` per check, in order."""
    nodes = tables.nodes
    out: list[TreeCheck] = []
    n = nodes.height
    out.append(TreeCheck("nodes_present", n > 0, f"{n} nodes" if n else "the nodes table is empty", 0 if n else 1))
    ids = nodes["node_id"]
    null_ids = int(ids.null_count())
    dup = nodes.filter(pl.col("node_id").is_duplicated())["node_id"].unique().sort()
    ok = null_ids == 0 and dup.len() == 0
    out.append(TreeCheck(
        "unique_ids", ok,
        "every node id is unique" if ok else
        f"{dup.len()} duplicated id(s) (e.g. {_examples(dup)}), {null_ids} null id(s)",
        dup.len() + null_ids,
    ))
    roots = nodes.filter(pl.col("parent_id").is_null())["node_id"].sort()
    ok = roots.len() == 1
    out.append(TreeCheck(
        "one_root", ok,
        f"root {roots[0]}" if ok else f"{roots.len()} nodes without parent (e.g. {_examples(roots)})",
        0 if ok else max(roots.len(), 1),
    ))
    known = nodes.select("node_id").unique()
    orphans = (nodes.filter(pl.col("parent_id").is_not_null())
               .join(known, left_on="parent_id", right_on="node_id", how="anti"))
    ok = orphans.height == 0
    out.append(TreeCheck(
        "no_orphans", ok,
        "every parent is a node" if ok else
        f"{orphans.height} node(s) whose parent is not in the tree (e.g. "
        f"{_examples(orphans['node_id'] + ' -> ' + orphans['parent_id'])})",
        orphans.height,
    ))
    parents = nodes.select(pl.col("node_id").alias("parent_id"), pl.col("depth").alias("parent_depth")).unique(
        subset="parent_id", keep="first")
    joined = nodes.join(parents, on="parent_id", how="left")
    bad = joined.filter(
        (pl.col("parent_id").is_null() & (pl.col("depth") != 0))
        | (pl.col("parent_id").is_not_null() & pl.col("parent_depth").is_not_null()
           & (pl.col("depth") != pl.col("parent_depth") + 1))
        | pl.col("depth").is_null()
    )
    ok = bad.height == 0
    out.append(TreeCheck(
        "depths_consistent", ok,
        "depth(child) = depth(parent) + 1 everywhere, root at 0 (so no cycle)" if ok else
        f"{bad.height} node(s) whose depth is not their parent's + 1 (e.g. {_examples(bad['node_id'])})",
        bad.height,
    ))
    stray = tables.names.join(known, on="node_id", how="anti")
    ok = stray.height == 0
    out.append(TreeCheck(
        "names_known", ok,
        f"{tables.names.height} names, all of tree nodes" if ok else
        f"{stray.height} name(s) of unknown nodes (e.g. {_examples(stray['node_id'].unique().sort())})",
        stray.height,
    ))
    linked = tables.links.filter(pl.col("status") == "linked")
    stray_links = linked.join(known, on="node_id", how="anti")
    ok = stray_links.height == 0
    out.append(TreeCheck(
        "links_known", ok,
        f"{linked.height} linked label(s), all to tree nodes" if ok else
        f"{stray_links.height} linked label(s) pointing outside the tree (e.g. "
        f"{_examples(stray_links['dataset'] + ':' + stray_links['label_id'])})",
        stray_links.height,
    ))
    if min_link_coverage is not None and tables.links.height:
        cov = (tables.links.group_by("dataset")
               .agg((pl.col("status") == "linked").mean().alias("coverage"), pl.len().alias("labels"))
               .sort("dataset"))
        low = cov.filter(pl.col("coverage") < min_link_coverage)
        ok = low.height == 0
        text = "; ".join(f"{r['dataset']}: {r['coverage']:.2%} of {r['labels']}" for r in cov.iter_rows(named=True))
        out.append(TreeCheck(
            "link_coverage", ok,
            f"coverage ≥ {min_link_coverage:.2%} ({text})" if ok else f"coverage below {min_link_coverage:.2%} ({text})",
            low.height,
        ))
    return out


def failed_checks(checks: list[TreeCheck]) -> list[TreeCheck]:
    return [c for c in checks if not c.passed]
