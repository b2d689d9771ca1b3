"""Blocking tree checks: the gates every built taxonomy passes before anything downstream
(a published snapshot, a scoring run) may use it.

Usage in a domain module (``assets/<domain>.py``)::

    from pipelines.checks import tree_checks

    @dg.asset(group_name="wikidata", ...)
    def wikidata_tree(...) -> TreeTables: ...

    defs = dg.Definitions(
        assets=[wikidata_tree, ...],
        asset_checks=[*tree_checks("wikidata_tree", min_link_coverage=0.95)],
    )

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
from taxoforge.trees.integrity import coverage_failures, link_coverage, tree_integrity
from taxoforge.trees.tables import TreeTables

__all__ = ["tree_checks", "TREE_CHECK_NAMES"]

TREE_CHECK_NAMES = ("tree_one_root", "tree_acyclic", "tree_no_orphans", "tree_depths_consistent",
                    "tree_link_coverage")

_DESCRIPTIONS = {
    "tree_one_root": "Exactly one root, no null or duplicate node ids.",
    "tree_acyclic": "No node lies on (or hangs below) a parent cycle.",
    "tree_no_orphans": "Every parent_id is a node of the tree.",
    "tree_depths_consistent": "depth is 0 at the root and parent depth + 1 everywhere else.",
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
    names = tuple(checks)
    unknown = sorted(set(names) - set(TREE_CHECK_NAMES))
    if unknown:
        raise ValueError(f"unknown tree check(s) {unknown}; choose from {TREE_CHECK_NAMES}")
    if isinstance(min_link_coverage, (int, float)) and not 0.0 <= float(min_link_coverage) <= 1.0:
        raise ValueError(f"min_link_coverage must be within [0, 1], got {min_link_coverage}")
    thr_text = (f"{float(min_link_coverage):.0%}" if isinstance(min_link_coverage, (int, float))
                else ", ".join(f"{k}: {v:.0%}" for k, v in sorted(min_link_coverage.items())))
    specs = [
        dg.AssetCheckSpec(
            name=n, asset=key, blocking=blocking,
            description=_DESCRIPTIONS[n] + (f" Threshold: {thr_text}." if n == "tree_link_coverage" else ""),
        )
        for n in names
    ]
    op_name = "__".join(key.path).replace("-", "_") + "_tree_checks"

    @dg.multi_asset_check(specs=specs, name=op_name, ins={"tree": dg.AssetIn(key=key)},
                          description=f"Tree integrity gates of {key.to_user_string()}.")
    def _tree_checks(context, tree) -> Iterable[dg.AssetCheckResult]:
        nodes, links = _tables(tree, key)
        t = tree_integrity(nodes)
        results = {
            "tree_one_root": dg.AssetCheckResult(
                check_name="tree_one_root", asset_key=key, passed=t.one_root, severity=severity,
                metadata={"n_nodes": t.n_nodes, "n_roots": t.n_roots, "roots": ", ".join(t.roots),
                          "n_duplicate_ids": t.n_duplicate_ids, "duplicate_ids": ", ".join(t.duplicate_ids),
                          "n_null_ids": t.n_null_ids}),
            "tree_acyclic": dg.AssetCheckResult(
                check_name="tree_acyclic", asset_key=key, passed=t.acyclic, severity=severity,
                metadata={"n_on_cycles": t.n_on_cycles, "cycle_example": " → ".join(t.cycle_example)}),
            "tree_no_orphans": dg.AssetCheckResult(
                check_name="tree_no_orphans", asset_key=key, passed=t.no_orphans, severity=severity,
                metadata={"n_orphans": t.n_orphans, "orphans": ", ".join(t.orphans),
                          "n_below_orphans": t.n_below_orphans}),
            "tree_depths_consistent": dg.AssetCheckResult(
                check_name="tree_depths_consistent", asset_key=key,
                passed=t.depths_consistent and t.acyclic, severity=severity,
                metadata={"n_depth_mismatches": -1 if t.n_depth_mismatches is None else t.n_depth_mismatches,
                          "examples": ", ".join(t.depth_mismatch_examples),
                          "max_depth": -1 if t.max_depth is None else t.max_depth}),
        }
        if "tree_link_coverage" in names:
            cov = link_coverage(links, nodes["node_id"]) if links.height else link_coverage(pl.DataFrame())
            reasons = coverage_failures(cov, min_link_coverage)
            if cov.height == 0 and require_links:
                reasons.append("the tree has no links, and require_links is set")
            total = int(cov["n_labels"].sum()) if cov.height else 0
            linked = int(cov["n_linked"].sum()) if cov.height else 0
            results["tree_link_coverage"] = dg.AssetCheckResult(
                check_name="tree_link_coverage", asset_key=key, passed=not reasons, severity=severity,
                description="; ".join(reasons) if reasons else None,
                metadata={"n_labels": total, "n_linked": linked,
                          "coverage": (linked / total) if total else 1.0,
                          "threshold": thr_text, "failures": "\n".join(reasons) or "none",
                          "by_dataset": dg.MetadataValue.md(_md(cov))})
        for n in names:
            r = results[n]
            if not r.passed:
                context.log.error(f"{key.to_user_string()}: check {n} failed: {r.metadata}")
            yield r

    return [_tree_checks]
