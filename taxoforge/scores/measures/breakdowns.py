"""Breakdown tables of a per-sample scores table: per level, per rank, consistency, outcomes.

Input: the samples table of ``taxoforge score`` (``scores.parquet``; columns ``gt_node``,
``pred_node``, ``depth_gt``, ``depth_pred``, ``depth_lca``, ``correct``, ``hP``, ``hR``,
``hF``, ``abstained`` and the group keys ``model``, ``dataset``, ``prompt``; missing depth
columns are computed from the tree) and, where ranks or cuts are needed, the tree.
Every function returns one polars table, grouped by ``by`` (default model × dataset ×
prompt, the leaderboard's keys; keys the table lacks are left out).

=============================  =============================================================
function                       what it reports
=============================  =============================================================
:func:`by_ground_truth_level`  per ground-truth depth: n, accuracy, hP, hR, hF (harmonic
                               mean of the means), hF_pairs
:func:`by_ground_truth_rank`   the same per rank of the ground-truth node (species, genus …)
:func:`correctness_by_level`   per level k: the share of samples whose prediction is right
                               down to depth k (``depth_lca ≥ k``), among samples whose ground
                               truth is at least that deep
:func:`correctness_by_rank`    per rank R (genus, family, order …): the share whose
                               prediction lies in the ground truth's rank-R taxon
                               (``depth_lca ≥ depth(ancestor_R(gt))``) — "genus-level
                               correctness" from the LCA
:func:`consistency`            HCA (every level of the ground-truth path right) and MTA
                               (mean tree-cut accuracy over seeded ProTeCt cuts)
:func:`outcome_shares`         VLM4Bio's Correct / Incorrect / Other % (Other = abstained)
:func:`open_world_groups`      the four groups of Conti et al. 2025 [3]: correct-specific, correct-generic,
                               wrong-specific, wrong-generic (LI ≥ 0.5 = correct, CS ≥ 0.6 =
                               specific, the paper's thresholds)
:func:`probe_consistency`      HCA from rank-probe answers (one question per rank per image)
:func:`leaderboard_columns`    one row per group with HCA, MTA (and ``MTA_cuts``, the distinct
                               cuts it averages), Correct/Incorrect/Other %
                               and accuracy at every rank: to join onto the leaderboard
:func:`breakdown_tables`       all of the above that apply, by name
=============================  =============================================================
"""

from __future__ import annotations

import numpy as np
import polars as pl

from taxoforge.scores.measures.hierarchical import aggregate_hierarchical, hierarchical_scores
from taxoforge.scores.measures.mistakes import category_accuracy
from taxoforge.snapshots.open import open_taxonomy
from taxoforge.trees.cuts import sample_tree_cuts
from taxoforge.trees.taxonomy import Taxonomy

__all__ = ["GROUP_KEYS", "by_ground_truth_level", "by_ground_truth_rank", "correctness_by_level",
           "correctness_by_rank", "consistency", "outcome_shares", "open_world_groups", "open_world_group",
           "probe_consistency", "leaderboard_columns", "breakdown_tables", "OPEN_WORLD_GROUPS"]

GROUP_KEYS = ("model", "dataset", "prompt")
OPEN_WORLD_GROUPS = ("correct_specific", "correct_generic", "wrong_specific", "wrong_generic")


def _keys(samples: pl.DataFrame, by) -> list[str]:
    return [k for k in (by or ()) if k in samples.columns]


def _need(samples: pl.DataFrame, cols, what: str) -> None:
    missing = [c for c in cols if c not in samples.columns]
    if missing:
        raise ValueError(f"{what} needs column(s) {missing}; the samples table has {samples.columns}")


def with_depths(samples: pl.DataFrame, tree=None) -> pl.DataFrame:
    """``samples`` with ``depth_gt``, ``depth_pred``, ``depth_lca``, ``correct``, ``hP``,
    ``hR``, ``hF`` computed from ``gt_node``/``pred_node`` where they are missing.

    Parameters
    ----------
    samples : polars.DataFrame
        The per-sample scores table.
    tree : optional
        The tree.

    Returns
    -------
    polars.DataFrame
        ``samples`` with ``depth_gt``, ``depth_pred``, ``depth_lca``, ``correct``,
        ``hP``, ``hR``, ``hF`` computed from ``gt_node``/``pred_node`` where they are
        missing.
    """
    cols = ("depth_gt", "depth_pred", "depth_lca", "correct", "hP", "hR", "hF")
    if all(c in samples.columns for c in cols):
        return samples
    if tree is None:
        raise ValueError(f"the samples table lacks {[c for c in cols if c not in samples.columns]}; give the tree")
    _need(samples, ("gt_node", "pred_node"), "computing depths")
    tree = open_taxonomy(tree)
    g = tree.index_of(samples["gt_node"].to_list())
    p = tree.index_of(samples["pred_node"].to_list())
    h = hierarchical_scores(tree, p, g)
    new = {"depth_gt": h["depth_gt"], "depth_pred": h["depth_pred"], "depth_lca": h["depth_lca"],
           "correct": h["correct"], "hP": h["hP"], "hR": h["hR"], "hF": h["hF"]}
    return samples.with_columns(*[pl.Series(k, v) for k, v in new.items() if k not in samples.columns])


def _hierarchical_by(s: pl.DataFrame, keys: list) -> pl.DataFrame:
    """n, accuracy, hP, hR, hF and hF_pairs per group of ``keys``, the four hierarchical
    numbers by :func:`taxoforge.scores.measures.hierarchical.aggregate_hierarchical` (as the
    leaderboard makes them)."""
    g = s.group_by(keys).agg(pl.len().alias("n"), pl.col("correct").mean().alias("accuracy"),
                             pl.col("hP").alias("_hp"), pl.col("hR").alias("_hr"), pl.col("hF").alias("_hf"))
    aggs = [aggregate_hierarchical(hp.to_numpy(), hr.to_numpy(), hf.to_numpy())
            for hp, hr, hf in zip(g["_hp"], g["_hr"], g["_hf"])]
    return g.with_columns(*[pl.Series(m, [a[m] for a in aggs], dtype=pl.Float64)
                            for m in ("hP", "hR", "hF", "hF_pairs")]).drop("_hp", "_hr", "_hf")


def by_ground_truth_level(samples: pl.DataFrame, tree=None, by=GROUP_KEYS) -> pl.DataFrame:
    """n, accuracy, hP, hR, hF, hF_pairs per ground-truth depth (``level``).

    Parameters
    ----------
    samples : polars.DataFrame
        The per-sample scores table.
    tree : optional
        The tree.
    by : optional
        The columns that make a group (default: model × dataset × prompt).

    Returns
    -------
    polars.DataFrame
        N, accuracy, hP, hR, hF, hF_pairs per ground-truth depth (``level``).
    """
    s = with_depths(samples, tree)
    k = _keys(s, by)
    return _hierarchical_by(s.with_columns(pl.col("depth_gt").alias("level")), [*k, "level"]).sort([*k, "level"])


def by_ground_truth_rank(samples: pl.DataFrame, tree, by=GROUP_KEYS) -> pl.DataFrame:
    """n, accuracy, hP, hR, hF, hF_pairs per rank of the ground-truth node (null rank: ``"(none)"``).

    Parameters
    ----------
    samples : polars.DataFrame
        The per-sample scores table.
    tree : object
        The tree.
    by : optional
        The columns that make a group (default: model × dataset × prompt).

    Returns
    -------
    polars.DataFrame
        N, accuracy, hP, hR, hF, hF_pairs per rank of the ground-truth node (null rank:
        ``"(none)"``).
    """
    tree = open_taxonomy(tree)
    s = with_depths(samples, tree)
    g = tree.index_of(s["gt_node"])
    s = s.with_columns(pl.Series("rank", tree.rank_of(g), dtype=pl.String).fill_null("(none)"))
    k = _keys(s, by)
    order = {r: i for i, r in enumerate(tree.rank_order)}
    out = _hierarchical_by(s, [*k, "rank"])
    return out.with_columns(pl.col("rank").replace_strict(order, default=len(order)).alias("_o")).sort(
        [*k, "_o"]).drop("_o")


def correctness_by_level(samples: pl.DataFrame, tree=None, by=GROUP_KEYS) -> pl.DataFrame:
    """Per level ``k`` (1 … deepest ground truth): ``n`` samples whose ground truth is at least
    that deep, and ``accuracy`` = the share of them predicted right down to depth ``k``.

    Parameters
    ----------
    samples : polars.DataFrame
        The per-sample scores table.
    tree : optional
        The tree.
    by : optional
        The columns that make a group (default: model × dataset × prompt).

    Returns
    -------
    polars.DataFrame
        Per level ``k`` (1 … deepest ground truth): ``n`` samples whose ground truth is
        at least that deep, and ``accuracy`` = the share of them predicted right down to
        depth ``k``.
    """
    s = with_depths(samples, tree)
    k = _keys(s, by)
    dmax = int(s["depth_gt"].max() or 0)
    parts = [s.filter(pl.col("depth_gt") >= lev).group_by(k or pl.lit(1).alias("_all")).agg(
        pl.lit(lev).alias("level"), pl.len().alias("n"), (pl.col("depth_lca") >= lev).mean().alias("accuracy"))
        for lev in range(1, dmax + 1)]
    if not parts:
        return pl.DataFrame(schema={**{c: pl.String for c in k}, "level": pl.Int32, "n": pl.UInt32, "accuracy": pl.Float64})
    out = pl.concat(parts, how="vertical_relaxed")
    return out.drop("_all", strict=False).select([*k, "level", "n", "accuracy"]).sort([*k, "level"])


def correctness_by_rank(samples: pl.DataFrame, tree, by=GROUP_KEYS, ranks=None) -> pl.DataFrame:
    """Per rank ``R`` (default: every rank of the tree below its top): ``n`` samples whose
    ground truth has an ``R`` ancestor, and ``accuracy`` = the share whose prediction is in
    that taxon (right at rank ``R``: ``depth_lca ≥ depth(ancestor_R(gt))``).

    Parameters
    ----------
    samples : polars.DataFrame
        The per-sample scores table.
    tree : object
        The tree.
    by : optional
        The columns that make a group (default: model × dataset × prompt).
    ranks : optional
        Taxonomic ranks.

    Returns
    -------
    polars.DataFrame
        Per rank ``R`` (default: every rank of the tree below its top): ``n`` samples
        whose ground truth has an ``R`` ancestor, and ``accuracy`` = the share whose
        prediction is in that taxon (right at rank ``R``: ``depth_lca ≥
        depth(ancestor_R(gt))``).
    """
    tree = open_taxonomy(tree)
    s = with_depths(samples, tree)
    g = tree.index_of(s["gt_node"])
    k = _keys(s, by)
    ranks = list(ranks) if ranks is not None else _ranks_below_top(tree)
    parts = []
    for r in ranks:
        a = tree.ancestor_at_rank(g, r)
        has = a >= 0
        depth_r = np.where(has, tree.depth_arr[np.maximum(a, 0)], -1)
        t = s.with_columns(pl.Series("_has", has), pl.Series("_ok", s["depth_lca"].to_numpy() >= depth_r))
        t = t.filter(pl.col("_has"))
        if not t.height:
            continue
        parts.append(t.group_by(k or pl.lit(1).alias("_all")).agg(
            pl.lit(r).alias("rank"), pl.len().alias("n"), pl.col("_ok").mean().alias("accuracy")))
    if not parts:
        return pl.DataFrame(schema={**{c: pl.String for c in k}, "rank": pl.String, "n": pl.UInt32, "accuracy": pl.Float64})
    order = {r: i for i, r in enumerate(ranks)}
    out = pl.concat(parts, how="vertical_relaxed").drop("_all", strict=False)
    return out.with_columns(pl.col("rank").replace_strict(order).alias("_o")).sort([*k, "_o"]).drop("_o").select(
        [*k, "rank", "n", "accuracy"])


def _ranks_below_top(tree: Taxonomy) -> list[str]:
    """Every rank of the tree but its root's, top down: the ranks :func:`correctness_by_rank` reports by default."""
    return [r for r in tree.rank_order if r != tree.rank_of([tree.root_idx])[0]]


def consistency(samples: pl.DataFrame, tree, by=GROUP_KEYS, *, n_cuts: int = 25, seed: int = 0,
                label_set=None) -> pl.DataFrame:
    """HCA and MTA per group (:mod:`taxoforge.evaluation.label_metrics` has the definitions): HCA =
    share with ``depth_lca == depth_gt``; MTA over ``n_cuts`` seeded cuts of the tree the
    dataset's label set spans — ``label_set`` when given, else the ground truths of the
    group's model × dataset (its own rows only: another model's rows never change its cuts;
    models of one dataset with the same labels get the same cuts).

    Parameters
    ----------
    samples : polars.DataFrame
        The per-sample scores table.
    tree : object
        The tree.
    by : optional
        The columns that make a group (default: model × dataset × prompt).
    n_cuts : int, optional
        Tree cuts drawn for MTA.
    seed : int, optional
        The seed of the random draws.
    label_set : sequence of str, optional
        Node ids of the dataset's label set, when given.

    Returns
    -------
    polars.DataFrame
        One row per group: ``n``, ``HCA``, ``MTA`` and ``cuts`` (the distinct cuts MTA
        averages).
    """
    tree = open_taxonomy(tree)
    s = with_depths(samples, tree)
    k = _keys(s, by)
    rows = []
    cut_key = [c for c in ("model", "dataset") if c in s.columns]
    given = tree.index_of([str(x) for x in label_set]) if label_set is not None else np.zeros(0, np.int64)
    drawn: dict[bytes, object] = {}  # models answering the same items have one label set: its cuts drawn once
    for ckey, part in (s.group_by(cut_key, maintain_order=True) if cut_key else [((), s)]):
        g_all = tree.index_of(part["gt_node"])
        uniq = np.union1d(given, g_all)
        inv = np.searchsorted(uniq, g_all)
        cuts = drawn.get(uniq.tobytes())
        if cuts is None:
            cuts = drawn[uniq.tobytes()] = sample_tree_cuts(tree, uniq, n_cuts=n_cuts, seed=seed)
        part = part.with_columns(pl.Series("_gi", inv))
        for key, grp in (part.group_by(k, maintain_order=True) if k else [((), part)]):
            dl = grp["depth_lca"].to_numpy()
            cd = cuts.cut_depth[:, grp["_gi"].to_numpy()]
            mta = float((dl[None, :] >= cd).mean(axis=1).mean())
            hca = float((grp["depth_lca"] == grp["depth_gt"]).mean())
            rows.append({**dict(zip(k, key if isinstance(key, tuple) else (key,))), "n": grp.height, "HCA": hca,
                         "MTA": mta, "cuts": len(cuts)})
    return pl.DataFrame(rows).sort(k) if rows else pl.DataFrame()


def outcome_shares(samples: pl.DataFrame, by=GROUP_KEYS) -> pl.DataFrame:
    """VLM4Bio's error analysis (Maruf et al. 2024 [2] App. J): Correct % (the right node), Other %
    (abstained: no scientific name given) and Incorrect % (the rest), per group.

    Parameters
    ----------
    samples : polars.DataFrame
        The per-sample scores table.
    by : optional
        The columns that make a group (default: model × dataset × prompt).

    Returns
    -------
    polars.DataFrame
        VLM4Bio's error analysis (Maruf et al. 2024 [2] App.
    """
    _need(samples, ("correct", "abstained"), "outcome_shares")
    k = _keys(samples, by)
    c = pl.col("correct") & ~pl.col("abstained")
    return samples.group_by(k or pl.lit(1).alias("_all")).agg(
        pl.len().alias("n"), (100 * c.mean()).alias("correct_pct"),
        (100 * (~pl.col("correct") & ~pl.col("abstained")).mean()).alias("incorrect_pct"),
        (100 * pl.col("abstained").mean()).alias("other_pct")).drop("_all", strict=False).sort(k or "n")


def open_world_group(correct_score, specific_score, *, correct_threshold: float = 0.5,
                     specific_threshold: float = 0.6) -> np.ndarray:
    """The group of each prediction (Conti et al. 2025 [3] §3.6): correct when ``correct_score ≥
    correct_threshold`` (the LI score, 0/1 per sample), specific when ``specific_score ≥
    specific_threshold`` (the CS score). Returns names from :data:`OPEN_WORLD_GROUPS`.

    >>> open_world_group([1, 1, 0, 0], [0.9, 0.2, 0.6, 0.59]).tolist()
    ['correct_specific', 'correct_generic', 'wrong_specific', 'wrong_generic']

    Parameters
    ----------
    correct_score : object
        The LI score of each prediction (0/1).
    specific_score : object
        The CS score of each prediction.
    correct_threshold : float, optional
        Least LI score of a correct prediction.
    specific_threshold : float, optional
        Least CS score of a specific prediction.

    Returns
    -------
    numpy.ndarray
        The group of each prediction (Conti et al. 2025 [3] §3.6): correct when
        ``correct_score ≥ correct_threshold`` (the LI score, 0/1 per sample), specific
        when ``specific_score ≥ specific_threshold`` (the CS score).
    """
    c = np.asarray(correct_score, dtype=np.float64) >= correct_threshold
    s = np.asarray(specific_score, dtype=np.float64) >= specific_threshold
    names = np.array(OPEN_WORLD_GROUPS, dtype=object)
    return names[np.where(c, np.where(s, 0, 1), np.where(s, 2, 3))]


def open_world_groups(samples: pl.DataFrame, by=GROUP_KEYS, *, correct_column: str = "LI",
                      specific_column: str = "CS", correct_threshold: float = 0.5,
                      specific_threshold: float = 0.6) -> pl.DataFrame:
    """The share (%) of each of the four groups of Conti et al. 2025 [3] per group of ``by``.

    Defaults are the paper's: LI (the LLM-judge inclusion) ≥ 0.5 = correct, CS ≥ 0.6 =
    specific. Without a judge, a taxonomy-only reading is ``correct_column="hP",
    correct_threshold=1.0`` (no wrong node on the path).

    Parameters
    ----------
    samples : polars.DataFrame
        The per-sample scores table.
    by : optional
        The columns that make a group (default: model × dataset × prompt).
    correct_column : str, optional
        The column of the correctness score (LI).
    specific_column : str, optional
        The column of the specificity score (CS).
    correct_threshold : float, optional
        Least correctness score of a correct prediction.
    specific_threshold : float, optional
        Least specificity score of a specific prediction.

    Returns
    -------
    polars.DataFrame
        The share (%) of each of the four groups of Conti et al. 2025 [3] per group of
        ``by``.
    """
    if correct_column not in samples.columns:
        raise ValueError(f"open_world_groups needs a {correct_column!r} column (the LLM-judge inclusion of Conti et al. 2025 [3]: "
                         "run open_world_measures.llm_inclusion with a judge), or correct_column='hP', "
                         "correct_threshold=1.0 for the taxonomy-only reading")
    _need(samples, (specific_column,), "open_world_groups")
    grp = open_world_group(samples[correct_column].to_numpy(), samples[specific_column].to_numpy(),
                           correct_threshold=correct_threshold, specific_threshold=specific_threshold)
    s = samples.with_columns(pl.Series("_g", grp, dtype=pl.String))
    k = _keys(s, by)
    return s.group_by(k or pl.lit(1).alias("_all")).agg(
        pl.len().alias("n"), *[(100 * (pl.col("_g") == g).mean()).alias(f"{g}_pct") for g in OPEN_WORLD_GROUPS]
    ).drop("_all", strict=False).sort(k or "n")


def probe_consistency(samples: pl.DataFrame, questions: pl.DataFrame, by=("model",), *,
                      sample_column: str | None = None) -> pl.DataFrame:
    """HCA from rank probes: a sample (an image) counts when the model answered every one of
    its probe questions right. ``samples`` are the scored answers (``id`` = question id,
    ``correct``); ``questions`` the probe questions (``id``, ``probe-rank``, and the sample
    they ask about: ``image-path``, ``sample``, or ``row``). Also reports the accuracy per
    probe rank.

    Parameters
    ----------
    samples : polars.DataFrame
        The per-sample scores table.
    questions : polars.DataFrame
        The rank-probe questions (``id``, the sample they probe, ``rank``).
    by : optional
        The columns that make a group.
    sample_column : str, optional
        The questions' column naming the sample (image) they probe.

    Returns
    -------
    polars.DataFrame
        HCA from rank probes: a sample (an image) counts when the model answered every
        one of its probe questions right.
    """
    _need(samples, ("id", "correct"), "probe_consistency")
    _need(questions, ("id", "probe-rank"), "probe_consistency (questions)")
    col = sample_column or next((c for c in ("image-path", "sample", "row") if c in questions.columns), None)
    if col is None:
        raise ValueError("the probe questions name no sample column (image-path, sample or row)")
    q = questions.select(pl.col("id").cast(pl.String), pl.col("probe-rank").cast(pl.String),
                         pl.col(col).cast(pl.String).alias("_sample"))
    j = samples.with_columns(pl.col("id").cast(pl.String)).join(q, on="id", how="inner")
    if not j.height:
        raise ValueError("no scored answer matches a probe question id")
    k = _keys(j, by)
    per_sample = j.group_by([*k, "_sample"]).agg(pl.col("correct").all().alias("_ok"), pl.len().alias("_probes"))
    hca = per_sample.group_by(k or pl.lit(1).alias("_all")).agg(
        pl.len().alias("samples"), pl.col("_ok").mean().alias("HCA")).drop("_all", strict=False)
    per_rank = j.group_by([*k, "probe-rank"]).agg(pl.col("correct").mean().alias("acc")).pivot(
        on="probe-rank", index=k or None, values="acc") if k else None
    if per_rank is not None:
        per_rank = per_rank.rename({c: f"accuracy_{c}" for c in per_rank.columns if c not in k})
        hca = hca.join(per_rank, on=k, how="left")
    return hca.sort(k) if k else hca


def leaderboard_columns(samples: pl.DataFrame, tree, by=GROUP_KEYS, *, n_cuts: int = 25, seed: int = 0,
                        ranks=("genus", "family", "order"), tables: dict[str, pl.DataFrame] | None = None
                        ) -> pl.DataFrame:
    """One row per group with ``HCA``, ``MTA``, ``correct_pct``, ``incorrect_pct``,
    ``other_pct`` and ``accuracy_<rank>`` for each of ``ranks`` the tree has — the columns
    to join onto the leaderboard (``leaderboard.join(cols, on=by)``).

    ``tables``: the :func:`breakdown_tables` of the same ``samples``, ``tree``, ``by``,
    ``n_cuts`` and ``seed``, when the caller has them — their ``consistency``, ``outcomes``
    and ``correct_by_rank`` are reused instead of computed again (the same values: each
    rank's accuracy does not depend on the other ranks asked for).

    Parameters
    ----------
    samples : polars.DataFrame
        The per-sample scores table.
    tree : object
        The tree.
    by : optional
        The columns that make a group (default: model × dataset × prompt).
    n_cuts : int, optional
        Tree cuts drawn for MTA.
    seed : int, optional
        The seed of the random draws.
    ranks : optional
        Taxonomic ranks.
    tables : dict[str, polars.DataFrame], optional
        The tree's tables.

    Returns
    -------
    polars.DataFrame
        One row per group with ``HCA``, ``MTA``, ``correct_pct``, ``incorrect_pct``,
        ``other_pct`` and ``accuracy_<rank>`` for each of ``ranks`` the tree has — the
        columns to join onto the leaderboard (``leaderboard.join(cols, on=by)``).
    """
    tree = open_taxonomy(tree)
    s = with_depths(samples, tree)
    k = _keys(s, by)
    tables = tables or {}
    cons = tables["consistency"] if "consistency" in tables else consistency(s, tree, by, n_cuts=n_cuts, seed=seed)
    out = cons.drop("n").rename({"cuts": "MTA_cuts"})
    if "abstained" in s.columns:
        shares = (tables["outcomes"] if "outcomes" in tables else outcome_shares(s, by)).drop("n")
        out = out.join(shares, on=k, how="left") if k else pl.concat([out, shares], how="horizontal")
    present = [r for r in ranks if r in tree.rank_set]
    if present:
        if "correct_by_rank" in tables and set(present) <= set(_ranks_below_top(tree)):
            cr = _reuse_rank_correctness(tables["correct_by_rank"], k, present)
        else:
            cr = correctness_by_rank(s, tree, by, ranks=present)
        wide = cr.pivot(on="rank", index=k or None, values="accuracy") if k else pl.DataFrame(
            {f"{r}": [v] for r, v in zip(cr["rank"], cr["accuracy"])})
        wide = wide.rename({c: f"accuracy_{c}" for c in wide.columns if c not in k})
        out = out.join(wide, on=k, how="left") if k else pl.concat([out, wide], how="horizontal")
    return out


def _reuse_rank_correctness(table: pl.DataFrame, k: list[str], ranks: list[str]) -> pl.DataFrame:
    """:func:`correctness_by_rank` for ``ranks`` taken from its table for every rank below
    the top (``table``), in the order of rows a call with ``ranks`` gives."""
    order = {r: i for i, r in enumerate(ranks)}
    return (table.filter(pl.col("rank").is_in(ranks)).with_columns(pl.col("rank").replace_strict(order).alias("_o"))
            .sort([*k, "_o"]).drop("_o").select([*k, "rank", "n", "accuracy"]))


def breakdown_tables(samples: pl.DataFrame, tree, by=GROUP_KEYS, *, n_cuts: int = 25, seed: int = 0,
                     label_set=None) -> dict[str, pl.DataFrame]:
    """Every breakdown that applies to ``samples``, by name: ``by_level``, ``by_rank``,
    ``correct_by_level``, ``correct_by_rank``, ``consistency``, ``outcomes``; when the table
    has LI and CS columns, ``open_world_groups``; when it has a ``category`` column
    (VLMEvalKit's), ``by_category`` (accuracy, hP, hR, hF per category:
    :func:`taxoforge.scores.measures.mistakes.category_accuracy`).

    Parameters
    ----------
    samples : polars.DataFrame
        The per-sample scores table.
    tree : object
        The tree.
    by : optional
        The columns that make a group (default: model × dataset × prompt).
    n_cuts : int, optional
        Tree cuts drawn for MTA.
    seed : int, optional
        The seed of the random draws.
    label_set : sequence of str, optional
        Node ids of the dataset's label set, when given (the tree MTA's cuts are drawn on).

    Returns
    -------
    dict[str, polars.DataFrame]
        Every breakdown that applies to ``samples``, by name: ``by_level``, ``by_rank``,
        ``correct_by_level``, ``correct_by_rank``, ``consistency``, ``outcomes``; when
        the table has LI and CS columns, ``open_world_groups``; when it has a
        ``category`` column (VLMEvalKit's), ``by_category`` (accuracy, hP, hR, hF per
        category: :func:`taxoforge.scores.measures.mistakes.category_accuracy`).
    """
    tree = open_taxonomy(tree)
    s = with_depths(samples, tree)
    out = {"by_level": by_ground_truth_level(s, tree, by), "correct_by_level": correctness_by_level(s, tree, by),
           "consistency": consistency(s, tree, by, n_cuts=n_cuts, seed=seed, label_set=label_set)}
    if tree.has_ranks:
        out["by_rank"] = by_ground_truth_rank(s, tree, by)
        out["correct_by_rank"] = correctness_by_rank(s, tree, by)
    if "abstained" in s.columns:
        out["outcomes"] = outcome_shares(s, by)
    if "LI" in s.columns and "CS" in s.columns:
        out["open_world_groups"] = open_world_groups(s, by)
    if "category" in s.columns and s["category"].drop_nulls().len():
        out["by_category"] = category_accuracy(s, by)
    return out
