"""Blocking tree checks: the gates every built taxonomy passes before anything downstream
(a published snapshot, a scoring run) may use it.

Usage in a domain module (``assets/<domain>.py``)::

    from assets.common.checks import tree_checks

    @dg.asset(group_name="wikidata", ...)
    def wikidata_tree(...) -> TreeTables: ...

    wikidata_tree_checks = tree_checks("wikidata_tree", min_link_coverage=0.95)  # module scope: loaded

The checks are ``blocking``: in a run that materialises the tree *and* assets downstream of
it (e.g. its snapshot), a failed check (severity ERROR) stops the downstream assets — a
broken tree is never published. The checks run with every materialisation of the tree that
includes them (asset jobs and the UI's "Materialize" include checks by default).

The facts themselves are computed by :mod:`taxoforge.trees.integrity` (no Dagster).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import dagster as dg
import polars as pl

from taxoforge.markdown import markdown_table
from taxoforge.trees.integrity import TreeIntegrity, coverage_failures, link_coverage, root_children, tree_integrity
from taxoforge.trees.tables import TreeTables

__all__ = ["tree_checks", "TREE_CHECK_NAMES"]

TREE_CHECK_NAMES = ("tree_one_root", "tree_acyclic", "tree_no_orphans", "tree_depths_consistent",
                    "tree_top_ranks_under_root", "tree_link_coverage")

_DESCRIPTIONS = {
    "tree_one_root": "Exactly one root, no null or duplicate node ids.",
    "tree_acyclic": "No node lies on (or hangs below) a parent cycle.",
    "tree_no_orphans": "Every parent_id is a node of the tree.",
    "tree_depths_consistent": "depth is 0 at the root and parent depth + 1 everywhere else.",
    "tree_top_ranks_under_root": "Only the tree's top Linnean rank (kingdoms, in a tree of all life) sits under the "
                                 "root, besides unranked nodes such as <source>:incertae_sedis; the offenders are "
                                 "named. A tree without ranks passes.",
    "tree_link_coverage": "Share of dataset labels linked to a node is at least the threshold, "
                          "per dataset; no link points outside the tree.",
}


def _tables(value: Any, key: dg.AssetKey) -> tuple[pl.DataFrame, pl.DataFrame]:
    if isinstance(value, TreeTables):
        return value.nodes, value.links
    if isinstance(value, Mapping) and "nodes" in value:
        links = value.get("links")
        return value["nodes"], links if links is not None else pl.DataFrame()
    raise TypeError(f"tree checks of {key.to_user_string()}: expected TreeTables or a dict with a 'nodes' "
                    f"table, got {type(value).__name__}")


def _md(df: pl.DataFrame) -> str:
    return markdown_table(df, align_numeric=False, empty="(none)",
                          format_cell=lambda _c, v: f"{v:.4f}" if isinstance(v, float) else str(v))


def tree_checks(
    asset_key: dg.CoercibleToAssetKey | dg.AssetsDefinition,
    *,
    min_link_coverage: float | Mapping[str, float] = 0.9,
    require_links: bool = False,
    blocking: bool = True,
    severity: dg.AssetCheckSeverity = dg.AssetCheckSeverity.ERROR,
    checks: Iterable[str] = TREE_CHECK_NAMES,
) -> list[dg.AssetChecksDefinition]:
    """Blocking checks over a :class:`~taxoforge.trees.tables.TreeTables` asset.

    Parameters
    ----------
    asset_key
        The tree asset (key, string or the asset definition itself).
    min_link_coverage
        Minimum share of each dataset's labels with status ``linked`` (one float for every
        dataset, or ``{dataset: minimum}``; datasets not named are reported, not gated).
    require_links
        Fail ``tree_link_coverage`` when the tree has no links at all (default: pass and say so).
    blocking
        Stop downstream assets in the same run when a check fails (default ``True``).
    severity
        Severity of a failure; only ``ERROR`` blocks.
    checks
        Subset of :data:`TREE_CHECK_NAMES` to run.

    Returns
    -------
    list of dagster.AssetChecksDefinition
        One definition (one op that loads the tree once) holding one check per name.
    """
    key = dg.AssetKey.from_coercible_or_definition(asset_key)
    names = _known_check_names(checks)
    threshold = _threshold_text(min_link_coverage)
    specs = [_check_spec(key, name, blocking=blocking, threshold=threshold) for name in names]

    @dg.multi_asset_check(specs=specs, name="__".join(key.path).replace("-", "_") + "_tree_checks",
                          ins={"tree": dg.AssetIn(key=key)},
                          description=f"Tree integrity gates of {key.to_user_string()}.")
    def _tree_checks(context, tree) -> Iterable[dg.AssetCheckResult]:
        nodes, links = _tables(tree, key)
        results = _structure_results(key, tree_integrity(nodes), severity)
        if "tree_top_ranks_under_root" in names:
            top = root_children(nodes)
            results["tree_top_ranks_under_root"] = dg.AssetCheckResult(
                check_name="tree_top_ranks_under_root", asset_key=key, passed=top.ok, severity=severity,
                description=None if top.ok else f"{top.n_misplaced} node(s) below the rank {top.top_rank} directly "
                                                f"under the root: {', '.join(top.misplaced)}",
                metadata={"root": str(top.root), "children_of_root": top.n_children,
                          "top_rank": str(top.top_rank or "none"), "n_misplaced": top.n_misplaced,
                          "misplaced": "\n".join(top.misplaced) or "none"})
        if "tree_link_coverage" in names:
            results["tree_link_coverage"] = _link_coverage_result(
                key, nodes, links, min_link_coverage, require_links=require_links, threshold=threshold,
                severity=severity)
        for name in names:
            yield _logged(context, key, results[name])

    return [_tree_checks]


def _known_check_names(checks: Iterable[str]) -> tuple[str, ...]:
    """``checks`` as a tuple; a ``ValueError`` for a name not in :data:`TREE_CHECK_NAMES`."""
    names = tuple(checks)
    unknown = sorted(set(names) - set(TREE_CHECK_NAMES))
    if unknown:
        raise ValueError(f"unknown tree check(s) {unknown}; choose from {TREE_CHECK_NAMES}")
    return names


def _threshold_text(min_link_coverage: float | Mapping[str, float]) -> str:
    """The coverage threshold as people read it (``95%`` or ``ds1: 90%, ds2: 100%``); a
    ``ValueError`` for a single threshold outside [0, 1]."""
    if isinstance(min_link_coverage, (int, float)):
        if not 0.0 <= float(min_link_coverage) <= 1.0:
            raise ValueError(f"min_link_coverage must be within [0, 1], got {min_link_coverage}")
        return f"{float(min_link_coverage):.0%}"
    return ", ".join(f"{k}: {v:.0%}" for k, v in sorted(min_link_coverage.items()))


def _check_spec(key: dg.AssetKey, name: str, *, blocking: bool, threshold: str) -> dg.AssetCheckSpec:
    description = _DESCRIPTIONS[name] + (f" Threshold: {threshold}." if name == "tree_link_coverage" else "")
    return dg.AssetCheckSpec(name=name, asset=key, blocking=blocking, description=description)


def _structure_results(key: dg.AssetKey, t: TreeIntegrity,
                       severity: dg.AssetCheckSeverity) -> dict[str, dg.AssetCheckResult]:
    """One result per structure check (root, cycles, orphans, depths) from the integrity facts."""

    def result(name: str, passed: bool, metadata: dict) -> dg.AssetCheckResult:
        return dg.AssetCheckResult(check_name=name, asset_key=key, passed=passed, severity=severity,
                                   metadata=metadata)

    return {
        "tree_one_root": result(
            "tree_one_root", t.one_root,
            {"n_nodes": t.n_nodes, "n_roots": t.n_roots, "roots": ", ".join(t.roots),
             "n_duplicate_ids": t.n_duplicate_ids, "duplicate_ids": ", ".join(t.duplicate_ids),
             "n_null_ids": t.n_null_ids}),
        "tree_acyclic": result(
            "tree_acyclic", t.acyclic,
            {"n_on_cycles": t.n_on_cycles, "cycle_example": " → ".join(t.cycle_example)}),
        "tree_no_orphans": result(
            "tree_no_orphans", t.no_orphans,
            {"n_orphans": t.n_orphans, "orphans": ", ".join(t.orphans), "n_below_orphans": t.n_below_orphans}),
        "tree_depths_consistent": result(
            "tree_depths_consistent", t.depths_consistent and t.acyclic,
            {"n_depth_mismatches": -1 if t.n_depth_mismatches is None else t.n_depth_mismatches,
             "examples": ", ".join(t.depth_mismatch_examples),
             "max_depth": -1 if t.max_depth is None else t.max_depth}),
    }


def _link_coverage_result(key: dg.AssetKey, nodes: pl.DataFrame, links: pl.DataFrame,
                          min_link_coverage: float | Mapping[str, float], *, require_links: bool,
                          threshold: str, severity: dg.AssetCheckSeverity) -> dg.AssetCheckResult:
    """Per-dataset link coverage against the threshold; dangling links always fail."""
    cov = link_coverage(links, nodes["node_id"]) if links.height else link_coverage(pl.DataFrame())
    reasons = coverage_failures(cov, min_link_coverage)
    if cov.height == 0 and require_links:
        reasons.append("the tree has no links, and require_links is set")
    total = int(cov["n_labels"].sum()) if cov.height else 0
    linked = int(cov["n_linked"].sum()) if cov.height else 0
    return dg.AssetCheckResult(
        check_name="tree_link_coverage", asset_key=key, passed=not reasons, severity=severity,
        description="; ".join(reasons) if reasons else None,
        metadata={"n_labels": total, "n_linked": linked,
                  "coverage": (linked / total) if total else 1.0,
                  "threshold": threshold, "failures": "\n".join(reasons) or "none",
                  "by_dataset": dg.MetadataValue.md(_md(cov))})


def _logged(context, key: dg.AssetKey, result: dg.AssetCheckResult) -> dg.AssetCheckResult:
    """``result``, logged at ERROR level when it failed."""
    if not result.passed:
        context.log.error(f"{key.to_user_string()}: check {result.check_name} failed: {result.metadata}")
    return result
