"""Aggregate per-sample scores into a leaderboard (model × dataset × prompt by default).

hP, hR, hF and hF_pairs go through :func:`taxoforge.scores.hierarchical.aggregate_hierarchical`
(docs/method.md#hierarchical-measures: hF is the harmonic mean of mean hP and mean hR), so the leaderboard runs the
function the measure tests check; accuracy and the text measures are plain means.

**Partial ground truths** (``gt_partial``: the label resolved only to its species or genus,
:data:`taxoforge.links.resolve.PARTIAL_METHODS`) are counted apart: the measures are over the
rows with a full ground truth (``n``); ``partial_gt`` counts the others and
``partial_within`` is the share of them whose prediction lies at or under their partial
ground truth (a species of the right genus). Against a genus, a right species and a wrong
one of the same genus score alike, so mixing those rows into accuracy and hP/hR would blur
both. ``gt_methods`` says how many rows of the group each resolution method gave.

**Confidence intervals.** ``accuracy``, ``hP``, ``hR`` and ``hF`` get bootstrap 95 %
intervals (``<measure>_ci_low``, ``<measure>_ci_high``; :mod:`taxoforge.scores.confidence`:
percentile bootstrap, seeded; hF's by resampling (hP, hR) pairs and taking the harmonic
mean of their means).

**Breakdowns** (:func:`taxoforge.scores.breakdowns.leaderboard_columns`),
when the tree is given: ``HCA`` (share of samples right at every level of the ground
truth's path), ``MTA`` (mean tree-cut accuracy over seeded cuts), VLM4Bio's
``correct_pct`` / ``incorrect_pct`` / ``other_pct`` (other = abstained), and
``accuracy_genus`` / ``accuracy_family`` / ``accuracy_order`` (prediction within the
ground truth's taxon of that rank) where the tree has those ranks — all over the rows with
a full ground truth, like the measures.
"""

from __future__ import annotations

import polars as pl

from taxoforge.scores.confidence import BootstrapConfig, ci_columns, group_intervals
from taxoforge.scores.hierarchical import aggregate_hierarchical
from taxoforge.scores.text_measures import TEXT_MEASURES

__all__ = ["leaderboard", "GROUP_KEYS", "LEADERBOARD_MEASURES", "BREAKDOWN_RANKS", "method_counts",
           "breakdown_columns"]

GROUP_KEYS = ("model", "dataset", "prompt")
LEADERBOARD_MEASURES = ("accuracy", "hP", "hR", "hF", "hF_pairs") + TEXT_MEASURES
_H = ("hP", "hR", "hF", "hF_pairs")
#: Ranks whose accuracy the leaderboard reports (where the tree has them).
BREAKDOWN_RANKS = ("genus", "family", "order")
_DEFAULT_CI = BootstrapConfig()


def method_counts(methods) -> str:
    """``"exact 18, genus_transfer 2"``: how many rows each ground-truth method gave, most first."""
    s = pl.Series(list(methods), dtype=pl.String).drop_nulls()
    if not s.len():
        return ""
    vc = s.value_counts().sort(["count", s.name], descending=[True, False])
    return ", ".join(f"{m} {n}" for m, n in vc.iter_rows())


def breakdown_columns(samples: pl.DataFrame, tree, by=GROUP_KEYS, tables: dict[str, pl.DataFrame] | None = None
                      ) -> pl.DataFrame:
    """HCA, MTA, Correct/Incorrect/Other % and accuracy per rank (:data:`BREAKDOWN_RANKS`)
    per group, over the rows with a full ground truth
    (:func:`taxoforge.scores.breakdowns.leaderboard_columns`). ``tables``: the
    breakdown tables of those rows by ``by``
    (:func:`taxoforge.scores.breakdowns.breakdown_tables`, default cuts), when already
    made: their values are reused, not computed again."""
    from taxoforge.scores.breakdowns import leaderboard_columns

    full = samples.filter(~pl.col("gt_partial")) if "gt_partial" in samples.columns else samples
    if not full.height:
        return pl.DataFrame(schema={b: samples.schema[b] for b in by})
    return leaderboard_columns(full, tree, by, ranks=BREAKDOWN_RANKS, tables=tables)


def leaderboard(samples: pl.DataFrame, by: tuple[str, ...] = GROUP_KEYS, *,
                ci: BootstrapConfig | None = _DEFAULT_CI, tree=None,
                breakdowns: dict[str, pl.DataFrame] | None = None) -> pl.DataFrame:
    """Aggregate per-sample scores by ``by`` (default model × dataset × prompt): ``n`` (rows
    with a full ground truth), ``abstained``, ``accuracy``, mean ``hP`` and ``hR``, ``hF`` =
    harmonic mean of those two means, ``hF_pairs`` = mean per-sample hF, the means of the
    text measures — all over the full-ground-truth rows — their bootstrap intervals
    (``ci``; None: none), the breakdown columns when ``tree`` (anything
    :func:`~taxoforge.snapshots.load.load_ranked_tree` takes) is given (``breakdowns``:
    the breakdown tables of the full-ground-truth rows by ``by``, to reuse), then
    ``partial_gt``, ``partial_within`` and ``gt_methods`` (module docstring), the taxonomy
    reference, its store and the mapping configuration id. Sorted by hF, best first."""
    by = tuple(by)
    tail = {"partial_gt": pl.Int64, "partial_within": pl.Float64, "gt_methods": pl.String,
            "taxonomy_version": pl.String, "taxonomy_store": pl.String, "mapping_config_id": pl.String}
    cis = ci_columns() if ci is not None and ci.n_resamples > 0 else []
    if samples.height == 0:
        return pl.DataFrame(schema={**{b: pl.String for b in by}, "n": pl.UInt32, "abstained": pl.Int64,
                                    **{m: pl.Float64 for m in LEADERBOARD_MEASURES}, **{c: pl.Float64 for c in cis},
                                    **tail})
    if "gt_partial" not in samples.columns:
        samples = samples.with_columns(pl.lit(False).alias("gt_partial"))
    if "gt_via" not in samples.columns:
        samples = samples.with_columns(pl.lit(None, dtype=pl.String).alias("gt_via"))
    for c in ("taxonomy_version", "taxonomy_store", "mapping_config_id"):
        if c not in samples.columns:
            samples = samples.with_columns(pl.lit(None, dtype=pl.String).alias(c))
    if "depth_lca" not in samples.columns or "depth_gt" not in samples.columns:
        within = pl.lit(None, dtype=pl.Boolean)
    else:
        within = pl.col("depth_lca") == pl.col("depth_gt")
    full = ~pl.col("gt_partial")
    g = samples.group_by(list(by), maintain_order=True).agg(
        full.sum().cast(pl.UInt32).alias("n"),
        pl.col("abstained").filter(full).sum().cast(pl.Int64).alias("abstained"),
        pl.col("correct").filter(full).mean().alias("accuracy"),
        *[pl.col(m).filter(full).mean() for m in TEXT_MEASURES],
        pl.col("gt_partial").sum().cast(pl.Int64).alias("partial_gt"),
        within.filter(pl.col("gt_partial")).mean().cast(pl.Float64).alias("partial_within"),
        pl.col("gt_via").alias("_via"),
        pl.col("taxonomy_version").first(), pl.col("taxonomy_store").first(), pl.col("mapping_config_id").first(),
        pl.col("hP").filter(full).alias("_hp"), pl.col("hR").filter(full).alias("_hr"),
        pl.col("hF").filter(full).alias("_hf"),
    )
    h = [aggregate_hierarchical(hp.to_numpy(), hr.to_numpy(), hf.to_numpy())
         for hp, hr, hf in zip(g["_hp"], g["_hr"], g["_hf"])]
    g = g.with_columns(
        *[pl.Series(m, [x[m] for x in h], dtype=pl.Float64).fill_nan(None) for m in _H],  # no full rows: null
        pl.Series("gt_methods", [method_counts(v) for v in g["_via"]], dtype=pl.String),
    ).drop("_hp", "_hr", "_hf", "_via")
    if cis:
        g = g.join(group_intervals(samples.filter(full), by, ci), on=list(by), how="left", nulls_equal=True)
    extra = []
    if tree is not None:
        bd = breakdown_columns(samples, tree, by, tables=breakdowns)
        extra = [c for c in bd.columns if c not in by]
        if extra:
            g = g.join(bd, on=list(by), how="left", nulls_equal=True)
    cols = [*by, "n", "abstained", *LEADERBOARD_MEASURES, *cis, *extra, *tail]
    return g.select(cols).sort(["hF", *by], descending=[True] + [False] * len(by), nulls_last=True)
