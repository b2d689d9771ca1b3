"""Aggregate per-sample scores into a leaderboard (model × dataset × prompt by default).

hP, hR, hF and hF_pairs go through :func:`taxoforge.scores.measures.hierarchical.aggregate_hierarchical`,
so the leaderboard runs the function the measure tests check; accuracy and the text measures
are plain means.

**What the averages are.** ``hP`` and ``hR`` are the means of the per-answer values (the
``samples`` average; hiclass's macro). ``hF`` is the harmonic mean of mean hP and mean hR —
eq. 3 of the Taxonomy-Aware Evaluation of VLMs, ``f_average="of_means"`` — and ``hF_pairs``
the mean of the per-answer hF (hiclass's macro F, ``f_average="of_pairs"``). An abstention is
scored as the root (hP = 1, hR = 1/(depth + 1)) — this project's choice, as the paper defines no
rule for abstentions (docs/method.md#mapping-an-answer-to-a-node says why) —, so refusing raises
mean hP: ``hP_answered``, ``hR_answered`` and ``hF_answered`` are the same measures over the
answered rows only, beside ``abstained_pct`` (the abstention rate, %).

**Partial ground truths** (``gt_partial``: the label resolved only to its species or genus,
:data:`taxoforge.links.resolve.PARTIAL_METHODS`) are counted apart: the measures are over the
rows with a full ground truth (``n``); ``partial_gt`` counts the others and
``partial_within`` is the share of them whose prediction lies at or under their partial
ground truth (a species of the right genus). Against a genus, a right species and a wrong
one of the same genus score alike, so mixing those rows into accuracy and hP/hR would blur
both. ``gt_methods`` says how many rows of the group each resolution method gave.

**How bad the mistakes are** (:mod:`taxoforge.scores.measures.mistakes`), when the samples carry
``mistake_severity``: ``mistakes`` (wrong answers), ``mistake_severity`` (mean height of the
LCA over them, Bertinetto et al.'s measure) with its median, the mean and median LCA depth and
tree distance, ``hdist@k`` for ranked answers, and ``balanced_accuracy`` (mean per-class
accuracy).

**Confidence intervals.** ``accuracy``, ``hP``, ``hR``, ``hF`` and ``mistake_severity`` get
bootstrap intervals (``<measure>_ci_low``, ``<measure>_ci_high``;
:mod:`taxoforge.scores.statistics.confidence`: percentile bootstrap, seeded; hF's by resampling (hP,
hR) pairs and taking the harmonic mean of their means; mistake severity's over the wrong
answers).

**Ranks within a group.** Models are ranked only within one dataset × prompt (``rank``, 1 =
best): a hard dataset's numbers are never ranked against an easy one's. They are ranked by
``rank_by`` — hF by default, or accuracy, or mistake severity (lowest first) — and each
model is tested against its group's best on the items they share (the paired test of that
measure: exact McNemar for accuracy, paired permutation for hF and severity, Holm-adjusted
within the group: ``vs_best_p``); ``tied_with_best`` is true for the best and for every model
not significantly below it at the 5 % level
(:func:`taxoforge.scores.statistics.compare.against_the_best`).

**Granularity of the answers** (:mod:`taxoforge.scores.measures.granularity`), when the
samples carry ``granularity``: ``granularity_exact``, ``_too_generic``, ``_too_specific``,
``_near_miss``, ``_other_branch``, ``_abstained``, ``_unmapped`` — counts that add up to
``n``. ``answered`` is ``n`` less the abstentions: the rows the ``*_answered`` measures are
over.

**Breakdowns** (:func:`taxoforge.scores.measures.breakdowns.leaderboard_columns`), when the tree is
given: ``HCA`` (share of samples right at every level of the ground truth's path), ``MTA``
(mean tree-cut accuracy over seeded cuts; ``MTA_cuts`` distinct cuts), VLM4Bio's
``correct_pct`` / ``incorrect_pct`` / ``other_pct`` (other = abstained), and
``accuracy_genus`` / ``accuracy_family`` / ``accuracy_order`` (prediction within the ground
truth's taxon of that rank) where the tree has those ranks — all over the rows with a full
ground truth, like the measures.
"""

from __future__ import annotations

import polars as pl

from taxoforge.scores.measures.breakdowns import leaderboard_columns
from taxoforge.scores.measures.granularity import granularity_counts
from taxoforge.scores.measures.hierarchical import aggregate_hierarchical
from taxoforge.scores.measures.mistakes import balanced_accuracy, mistake_summary, ranked_distances
from taxoforge.scores.measures.text import TEXT_MEASURES
from taxoforge.scores.statistics.compare import against_the_best
from taxoforge.scores.statistics.confidence import BootstrapConfig, ci_columns, group_intervals, mean_interval

__all__ = ["leaderboard", "GROUP_KEYS", "LEADERBOARD_MEASURES", "BREAKDOWN_RANKS", "method_counts",
           "breakdown_columns", "ANSWERED_MEASURES", "MISTAKE_MEASURES", "RANK_COLUMNS", "COMPACT_COLUMNS",
           "SEVERITY_CI", "RANK_BY", "LOWER_IS_BETTER", "harness_agreement", "with_harness_agreement"]

GROUP_KEYS = ("model", "dataset", "prompt")
LEADERBOARD_MEASURES = ("accuracy", "hP", "hR", "hF", "hF_pairs") + TEXT_MEASURES
_H = ("hP", "hR", "hF", "hF_pairs")
#: hP, hR, hF over the answered rows only (abstentions left out), beside ``abstained_pct``.
ANSWERED_MEASURES = ("hP_answered", "hR_answered", "hF_answered")
#: How bad the mistakes are (:func:`taxoforge.scores.measures.mistakes.mistake_summary`), and balanced accuracy.
MISTAKE_MEASURES = ("balanced_accuracy", "mistakes", "mistake_severity", "mistake_severity_median",
                    "lca_depth_mean", "lca_depth_median", "tree_distance_mean", "tree_distance_median")
#: The interval columns of the mean mistake severity.
SEVERITY_CI = ("mistake_severity_ci_low", "mistake_severity_ci_high")
#: The rank within the dataset × prompt group and the test against its best.
RANK_COLUMNS = ("rank", "vs_best_p", "tied_with_best")
#: The compact leaderboard a paper prints (the full table stays in CSV/Parquet).
COMPACT_COLUMNS = ("model", "dataset", "prompt", "n", "accuracy", "hP", "hR", "hF", "mistake_severity",
                   "abstained_pct")
#: The measures a leaderboard can rank by, and those where lower is better.
RANK_BY = ("hF", "accuracy", "mistake_severity")
LOWER_IS_BETTER = frozenset({"mistake_severity"})
#: Ranks whose accuracy the leaderboard reports (where the tree has them).
BREAKDOWN_RANKS = ("genus", "family", "order")
_DEFAULT_CI = BootstrapConfig()


def method_counts(methods) -> str:
    """``"exact 18, genus_transfer 2"``: how many rows each ground-truth method gave, most first.

    Parameters
    ----------
    methods : object
        The ground-truth method of each row.

    Returns
    -------
    str
        ``"exact 18, genus_transfer 2"``: how many rows each ground-truth method gave,
        most first.
    """
    s = pl.Series(list(methods), dtype=pl.String).drop_nulls()
    if not s.len():
        return ""
    vc = s.value_counts().sort(["count", s.name], descending=[True, False])
    return ", ".join(f"{m} {n}" for m, n in vc.iter_rows())


def breakdown_columns(samples: pl.DataFrame, tree, by=GROUP_KEYS, tables: dict[str, pl.DataFrame] | None = None
                      ) -> pl.DataFrame:
    """HCA, MTA, Correct/Incorrect/Other % and accuracy per rank (:data:`BREAKDOWN_RANKS`)
    per group, over the rows with a full ground truth
    (:func:`taxoforge.scores.measures.breakdowns.leaderboard_columns`). ``tables``: the
    breakdown tables of those rows by ``by``
    (:func:`taxoforge.scores.measures.breakdowns.breakdown_tables`, default cuts), when already
    made: their values are reused, not computed again.

    Parameters
    ----------
    samples : polars.DataFrame
        The per-sample scores table.
    tree : object
        The tree.
    by : optional
        The columns that make a group (default: model × dataset × prompt).
    tables : dict[str, polars.DataFrame], optional
        Breakdown tables already computed
        (:func:`~taxoforge.scores.measures.breakdowns.breakdown_tables`).

    Returns
    -------
    polars.DataFrame
        HCA, MTA, Correct/Incorrect/Other % and accuracy per rank
        (:data:`BREAKDOWN_RANKS`) per group, over the rows with a full ground truth
        (:func:`taxoforge.scores.measures.breakdowns.leaderboard_columns`).
    """
    full = samples.filter(~pl.col("gt_partial")) if "gt_partial" in samples.columns else samples
    if not full.height:
        return pl.DataFrame(schema={b: samples.schema[b] for b in by})
    return leaderboard_columns(full, tree, by, ranks=BREAKDOWN_RANKS, tables=tables)


def leaderboard(samples: pl.DataFrame, by: tuple[str, ...] = GROUP_KEYS, *,
                ci: BootstrapConfig | None = _DEFAULT_CI, tree=None,
                breakdowns: dict[str, pl.DataFrame] | None = None, ranks: bool = True,
                rank_by: str = "hF", memo=None) -> pl.DataFrame:
    """Aggregate per-sample scores by ``by`` (module docstring).

    Parameters
    ----------
    samples : polars.DataFrame
        The per-sample scores of a run (``correct``, ``hP``, ``hR``, ``hF``, ``abstained``
        …; ``mistake_severity`` and the depth columns for the mistake measures, ``id`` for
        the tests against the best).
    by : tuple of str
        Group keys (default model × dataset × prompt).
    ci : BootstrapConfig or None
        The bootstrap of the intervals and of the tests against the best (None or 0
        resamples: neither).
    tree : optional
        Anything :func:`~taxoforge.snapshots.open.open_taxonomy` opens: adds the
        breakdown columns.
    breakdowns : dict, optional
        The breakdown tables of the full-ground-truth rows by ``by``, to reuse.
    ranks : bool
        Add :data:`RANK_COLUMNS` (when ``by`` has ``model``).
    rank_by : {"hF", "accuracy", "mistake_severity"}
        The measure that ranks the models within a group (mistake severity: lowest first).
    memo : ContentMemo, optional
        Earlier calls' resampled statistics by the digest of their inputs
        (:func:`taxoforge.scores.memos.resampling_memo`): the intervals and the tests against
        the best.

    Returns
    -------
    polars.DataFrame
        ``by``, ``n`` (rows with a full ground truth), ``abstained``, ``abstained_pct``, the
        measures, their intervals, ``answered`` and the answered-only measures, the mistake
        measures, the granularity counts, the breakdown columns, the rank columns, then
        ``partial_gt``, ``partial_within``, ``gt_methods``, the taxonomy reference, its store
        and the mapping configuration id. Sorted by the group (dataset, prompt) and then by
        rank: the best by ``rank_by`` first within each group.
    """
    if rank_by not in RANK_BY:
        raise ValueError(f"rank_by must be one of {RANK_BY}; got {rank_by!r}")
    by = tuple(by)
    tail = {"partial_gt": pl.Int64, "partial_within": pl.Float64, "gt_methods": pl.String,
            "taxonomy_version": pl.String, "taxonomy_store": pl.String, "mapping_config_id": pl.String}
    with_ci = ci is not None and ci.n_resamples > 0
    cis = ci_columns() if with_ci else []
    if samples.height == 0:
        return pl.DataFrame(schema={**{b: pl.String for b in by}, "n": pl.UInt32, "abstained": pl.Int64,
                                    "abstained_pct": pl.Float64, **{m: pl.Float64 for m in LEADERBOARD_MEASURES},
                                    **{c: pl.Float64 for c in cis}, "answered": pl.Int64,
                                    **{m: pl.Float64 for m in ANSWERED_MEASURES},
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
    answered = full & ~pl.col("abstained")
    g = samples.group_by(list(by), maintain_order=True).agg(
        full.sum().cast(pl.UInt32).alias("n"),
        pl.col("abstained").filter(full).sum().cast(pl.Int64).alias("abstained"),
        answered.sum().cast(pl.Int64).alias("answered"),
        (100 * pl.col("abstained").filter(full).cast(pl.Float64).mean()).alias("abstained_pct"),
        pl.col("correct").filter(full).mean().alias("accuracy"),
        *[pl.col(m).filter(full).mean() for m in TEXT_MEASURES],
        pl.col("gt_partial").sum().cast(pl.Int64).alias("partial_gt"),
        within.filter(pl.col("gt_partial")).mean().cast(pl.Float64).alias("partial_within"),
        pl.col("gt_via").alias("_via"),
        pl.col("taxonomy_version").first(), pl.col("taxonomy_store").first(), pl.col("mapping_config_id").first(),
        pl.col("hP").filter(full).alias("_hp"), pl.col("hR").filter(full).alias("_hr"),
        pl.col("hF").filter(full).alias("_hf"),
        pl.col("hP").filter(answered).alias("_ahp"), pl.col("hR").filter(answered).alias("_ahr"),
    )
    h = [aggregate_hierarchical(hp.to_numpy(), hr.to_numpy(), hf.to_numpy())
         for hp, hr, hf in zip(g["_hp"], g["_hr"], g["_hf"])]
    ha = [aggregate_hierarchical(hp.to_numpy(), hr.to_numpy()) for hp, hr in zip(g["_ahp"], g["_ahr"])]
    g = g.with_columns(
        *[pl.Series(m, [x[m] for x in h], dtype=pl.Float64).fill_nan(None) for m in _H],  # no full rows: null
        *[pl.Series(f"{m}_answered", [x[m] for x in ha], dtype=pl.Float64).fill_nan(None) for m in ("hP", "hR", "hF")],
        pl.Series("gt_methods", [method_counts(v) for v in g["_via"]], dtype=pl.String),
    ).drop("_hp", "_hr", "_hf", "_via", "_ahp", "_ahr")
    if cis:
        g = g.join(group_intervals(samples.filter(full), by, ci, memo=memo), on=list(by), how="left",
                   nulls_equal=True)
    mistakes = _mistake_columns(samples, by, ci if with_ci else None, tree)
    extra_m = [c for c in mistakes.columns if c not in by]
    if extra_m:
        g = g.join(mistakes, on=list(by), how="left", nulls_equal=True)
    extra = []
    if tree is not None:
        bd = breakdown_columns(samples, tree, by, tables=breakdowns)
        extra = [c for c in bd.columns if c not in by]
        if extra:
            g = g.join(bd, on=list(by), how="left", nulls_equal=True)
    rank_cols = []
    if ranks and "model" in by and rank_by in g.columns:
        rk = against_the_best(samples.filter(full), g, measure=rank_by,
                              n_resamples=min(ci.n_resamples, 9999) if with_ci else 0,
                              seed=ci.seed if with_ci else 0, keys=by, memo=memo)
        g = g.join(rk, on=list(by), how="left", nulls_equal=True)
        rank_cols = list(RANK_COLUMNS)
    cols = [*by, "n", "abstained", "abstained_pct", *LEADERBOARD_MEASURES, *cis, "answered", *ANSWERED_MEASURES,
            *extra_m, *extra, *rank_cols, *tail]
    group = [k for k in by if k != "model"]
    order = [*group, "rank", "model"] if rank_cols else ["hF", *by]
    desc = [False] * len(group) + [False, False] if rank_cols else [True] + [False] * len(by)
    return g.select(cols).sort(order, descending=desc, nulls_last=True)


def _mistake_columns(samples: pl.DataFrame, by, ci: BootstrapConfig | None, tree=None) -> pl.DataFrame:
    """Balanced accuracy, the mistake summary, ``hdist@k``, the interval of the mean mistake
    severity and the granularity counts, per group (only those the samples allow)."""
    keys = list(by)
    full = samples.filter(~pl.col("gt_partial"))
    out = None
    if "gt_node" in full.columns and full.height:
        out = balanced_accuracy(full, keys).drop("classes")
    if "mistake_severity" in full.columns and {"depth_lca", "tree_distance"} <= set(full.columns):
        ms = mistake_summary(full, keys)
        if ci is not None:
            wrong = full.filter(~pl.col("correct") & ~pl.col("abstained"))
            rows = []
            for key, grp in wrong.group_by(keys, maintain_order=True):
                lo, hi = mean_interval(grp["mistake_severity"].cast(pl.Float64).to_numpy(), ci)
                rows.append({**dict(zip(keys, key)), SEVERITY_CI[0]: lo, SEVERITY_CI[1]: hi})
            schema = {**{k: full.schema[k] for k in keys}, SEVERITY_CI[0]: pl.Float64, SEVERITY_CI[1]: pl.Float64}
            ms = ms.join(pl.DataFrame(rows, schema=schema), on=keys, how="left", nulls_equal=True)
        out = ms if out is None else out.join(ms, on=keys, how="left", nulls_equal=True)
    if "ranked_heights" in full.columns or (tree is not None and "ranked_nodes" in full.columns
                                            and "gt_node" in full.columns):
        rd = ranked_distances(full, tree, by=keys)
        if rd.height:
            rd = rd.drop("n")
            out = rd if out is None else out.join(rd, on=keys, how="left", nulls_equal=True)
    if "granularity" in full.columns:
        gr = granularity_counts(full, keys)
        out = gr if out is None else out.join(gr, on=keys, how="left", nulls_equal=True)
    return out if out is not None else pl.DataFrame(schema={k: samples.schema[k] for k in keys})


def harness_agreement(samples: pl.DataFrame, by=GROUP_KEYS) -> pl.DataFrame:
    """How often a harness's own verdict agrees with taxoforge's exact match, per group.

    Over the rows with a full ground truth that carry the harness's verdict
    (``harness_correct``: VLMEvalKit's ``hit``, lmms-eval's ``exact_match`` …).

    Parameters
    ----------
    samples : polars.DataFrame
        A run's per-sample table.
    by : sequence of str
        The grouping columns.

    Returns
    -------
    polars.DataFrame
        ``by``, ``harness_n`` (those rows), ``harness_accuracy`` (the harness's mean verdict)
        and ``harness_agreement`` (the share of them where the verdict — at least 0.5 counts
        as right — equals ``correct``).
    """
    rows = samples.filter(pl.col("harness_correct").is_not_null() & ~pl.col("gt_partial"))
    return rows.group_by(list(by), maintain_order=True).agg(
        pl.len().cast(pl.Int64).alias("harness_n"), pl.col("harness_correct").mean().alias("harness_accuracy"),
        ((pl.col("harness_correct") >= 0.5) == pl.col("correct")).mean().alias("harness_agreement"))


def with_harness_agreement(board: pl.DataFrame, samples: pl.DataFrame, by=GROUP_KEYS) -> pl.DataFrame:
    """The leaderboard with :func:`harness_agreement`'s columns added.

    Parameters
    ----------
    board : polars.DataFrame
        The leaderboard.
    samples : polars.DataFrame
        Its per-sample table.
    by : sequence of str
        The grouping columns.

    Returns
    -------
    polars.DataFrame
        ``board`` unchanged when no scored row carries a verdict; else with the three
        columns (null for groups without one).
    """
    if "harness_correct" not in samples.columns or not samples["harness_correct"].is_not_null().any():
        return board
    return board.join(harness_agreement(samples, by), on=list(by), how="left", nulls_equal=True)
