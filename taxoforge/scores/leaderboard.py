"""Aggregate per-sample scores into a leaderboard (model × dataset × prompt by default).

hP, hR, hF and hF_pairs go through :func:`taxoforge.scores.measures.aggregate_hierarchical`
(SPEC §2: hF is the harmonic mean of mean hP and mean hR), so the leaderboard runs the
function the measure tests check; accuracy and the text measures are plain means.
"""

from __future__ import annotations

import polars as pl

from taxoforge.scores.measures import aggregate_hierarchical
from taxoforge.scores.text_measures import TEXT_MEASURES

__all__ = ["leaderboard", "GROUP_KEYS", "LEADERBOARD_MEASURES"]

GROUP_KEYS = ("model", "dataset", "prompt")
LEADERBOARD_MEASURES = ("accuracy", "hP", "hR", "hF", "hF_pairs") + TEXT_MEASURES
_H = ("hP", "hR", "hF", "hF_pairs")


def leaderboard(samples: pl.DataFrame, by: tuple[str, ...] = GROUP_KEYS) -> pl.DataFrame:
    """Aggregate per-sample scores by ``by`` (default model × dataset × prompt): ``n``,
    ``abstained``, ``accuracy``, mean ``hP`` and ``hR``, ``hF`` = harmonic mean of those two
    means, ``hF_pairs`` = mean per-sample hF, the means of the text measures, and the
    taxonomy version and mapping configuration id. Sorted by hF, best first."""
    by = tuple(by)
    if samples.height == 0:
        return pl.DataFrame(schema={**{b: pl.String for b in by}, "n": pl.UInt32, "abstained": pl.Int64,
                                    **{m: pl.Float64 for m in LEADERBOARD_MEASURES},
                                    "taxonomy_version": pl.String, "mapping_config_id": pl.String})
    g = samples.group_by(list(by), maintain_order=True).agg(
        pl.len().alias("n"), pl.col("abstained").sum().cast(pl.Int64).alias("abstained"),
        pl.col("correct").mean().alias("accuracy"), *[pl.col(m).mean() for m in TEXT_MEASURES],
        pl.col("taxonomy_version").first(), pl.col("mapping_config_id").first(),
        pl.col("hP").alias("_hp"), pl.col("hR").alias("_hr"), pl.col("hF").alias("_hf"),
    )
    h = [aggregate_hierarchical(hp.to_numpy(), hr.to_numpy(), hf.to_numpy())
         for hp, hr, hf in zip(g["_hp"], g["_hr"], g["_hf"])]
    g = g.drop("_hp", "_hr", "_hf").with_columns(
        *[pl.Series(m, [x[m] for x in h], dtype=pl.Float64) for m in _H])
    cols = [*by, "n", "abstained", *LEADERBOARD_MEASURES, "taxonomy_version", "mapping_config_id"]
    return g.select(cols).sort(["hF", *by], descending=[True] + [False] * len(by))
