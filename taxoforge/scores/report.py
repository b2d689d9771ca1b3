"""Results people can read: the leaderboard as Markdown and two PNG plots.

* :func:`leaderboard_markdown` — the model × dataset × prompt table, with the taxonomy
  version, mapping configuration and the bad-row counts under it.
* :func:`plot_hp_hr` — hP against hR, one point per model (paper 000 Fig. 7), with iso-hF
  curves.
* :func:`plot_ranks` — each model's rank under each measure (paper 000 Fig. 5): a line per
  model across the measures; rank 1 is best.

Plots use matplotlib's Agg backend (no display needed) and are written atomically.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import polars as pl

from taxoforge.files import atomic_writer
from taxoforge.markdown import markdown_table
from taxoforge.scores.leaderboard import leaderboard

__all__ = ["leaderboard_markdown", "model_summary", "plot_hp_hr", "plot_ranks",
           "RANK_MEASURES"]

STAGE_ORDER = ("exact", "linked_name", "contains", "ngram4", "ngram3", "ngram2", "vote", "top1", "empty", "abstention",
               "none_of_the_above")
RANK_MEASURES = ("exact_match", "contained", "rouge1_recall", "bleu2", "meteor", "accuracy", "hR", "hP", "hF")
_PCT = {"accuracy", "exact_match", "contained", "rouge1_recall", "bleu2", "meteor"}


def _fmt(col: str, v) -> str:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return "–"
    if isinstance(v, float):
        return f"{100 * v:.1f}" if col in _PCT else f"{v:.3f}"
    return str(v).replace("|", "\\|")


def leaderboard_markdown(lb: pl.DataFrame, info: dict | None = None, bad_rows: pl.DataFrame | None = None,
                         max_rows: int = 50) -> str:
    info = info or {}
    show = [c for c in lb.columns if c not in ("taxonomy_version", "mapping_config_id", "gt_methods")]
    lines = ["## Leaderboard", ""]
    if info:
        cfg = info.get("mapping_config", {})
        lines += [f"Taxonomy **{info.get('taxonomy')}** (`{info.get('taxonomy_version')}`), "
                  f"mapping config `{info.get('mapping_config_id')}` (similarity {info.get('similarity')}, "
                  f"k={cfg.get('k')}, softmax temperature {cfg.get('temperature')}, contains {cfg.get('contains')}, "
                  f"vote {cfg.get('vote_rule')} {cfg.get('thr_vote')}). "
                  f"{info.get('scored', 0)} of {info.get('rows', 0)} rows scored, "
                  f"{info.get('abstentions', 0)} abstentions scored as the root.", ""]
        methods = info.get("ground_truth_methods") or {}
        if methods:
            partial = info.get("partial_ground_truths", 0)
            listed = ", ".join(f"{m} {n}" for m, n in sorted(methods.items(), key=lambda kv: (-kv[1], kv[0])))
            lines += [f"Ground truths resolved by: {listed}. "
                      + (f"{partial} rows have a partial ground truth ({' or '.join(info.get('partial_methods', []))} "
                         "only): counted apart in `partial_gt`, not in n or the measures; `partial_within` is the "
                         "share of them predicted at or under it." if partial else "No partial ground truths."), ""]
    # text measures and accuracy ×100, h-measures 3 dp
    lines.append(markdown_table(lb.select(show), max_rows=max_rows, format_cell=_fmt))
    lines += ["", "hF = harmonic mean of mean hP and mean hR; hF_pairs = mean per-sample hF. "
              "accuracy and text measures in %."]
    stages = info.get("stage_counts") or {}
    if stages:
        order = [s for s in STAGE_ORDER if s in stages] + sorted(s for s in stages if s not in STAGE_ORDER)
        amb = (info.get("mapping_stats") or {}).get("ambiguous", 0)
        lines += ["", f"Answers decided per mapping stage (softmax temperature {info.get('temperature')}): "
                  + ", ".join(f"{s} {stages[s]}" for s in order) + "."
                  + (f" {amb} answers named a name several nodes share (tie broken, see map_tied)." if amb else "")]
    notes = []
    if info.get("truncated_answers"):
        notes.append(f"{info['truncated_answers']} answers longer than "
                     f"{info.get('mapping_config', {}).get('max_answer_chars')} characters were cut before mapping "
                     "(flag truncated_to_<n>_chars)")
    if info.get("duplicate_ids"):
        notes.append(f"{info['duplicate_ids']} sample ids occur on more than one row (all rows scored)")
    if notes:
        lines += ["", "**Note:** " + "; ".join(notes) + "."]
    if bad_rows is not None and bad_rows.height:
        counts = bad_rows.group_by("reason").len().sort("reason")
        lines += ["", f"**{bad_rows.height} rows not scored:** "
                  + ", ".join(f"{r} {n}" for r, n in counts.iter_rows()) + "."]
        ex = bad_rows.head(10)
        lines += [""] + [f"- `{Path(str(f)).name}:{ln}` ({i}): {r} — {d}" for f, ln, i, r, d in
                         ex.select("file", "line", "id", "reason", "detail").iter_rows()]
        if bad_rows.height > 10:
            lines.append(f"- … and {bad_rows.height - 10} more (bad_rows.parquet)")
    return "\n".join(lines) + "\n"


def model_summary(samples: pl.DataFrame) -> pl.DataFrame:
    """One row per model over all its samples, measures as in the leaderboard."""
    return leaderboard(samples, by=("model",))


def _savefig(fig, path: Path) -> Path:
    with atomic_writer(path, "wb") as fh:
        fig.savefig(fh, format="png", dpi=120, bbox_inches="tight", metadata={"Software": None})
    return path


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def plot_hp_hr(samples: pl.DataFrame, path: str | os.PathLike) -> Path:
    """hP against hR per model (Fig. 7 of paper 000), with iso-hF curves."""
    plt = _plt()
    ms = model_summary(samples).sort("model")
    fig, ax = plt.subplots(figsize=(5.5, 5))
    r = np.linspace(0.01, 1, 200)
    for f in (0.2, 0.4, 0.6, 0.8):
        p = f * r / (2 * r - f)
        ok = (p > 0) & (p <= 1)
        ax.plot(r[ok], p[ok], color="0.85", lw=0.8, zorder=0)
        ax.annotate(f"hF = {f}", (r[ok][-1], p[ok][-1]), textcoords="offset points", xytext=(-34, -10),
                    fontsize=7, color="0.5")
    markers = "osD^vP*Xh<>"
    for i, (model, hp, hr) in enumerate(ms.select("model", "hP", "hR").iter_rows()):
        # a legend, not text beside the points: close models would print over each other
        ax.scatter(hr, hp, s=40, zorder=2, marker=markers[i % len(markers)], label=model)
    ax.legend(loc="lower left", fontsize=8, frameon=True, title="model", title_fontsize=8)
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("hR (hierarchical recall)")
    ax.set_ylabel("hP (hierarchical precision)")
    ax.set_title("hP vs hR per model")
    ax.grid(alpha=0.3)
    try:
        return _savefig(fig, Path(path))
    finally:
        plt.close(fig)


def plot_ranks(samples: pl.DataFrame, path: str | os.PathLike, measures=RANK_MEASURES) -> Path:
    """Rank of each model under each measure (Fig. 5 of paper 000); 1 = best."""
    plt = _plt()
    ms = model_summary(samples).sort("model")
    measures = [m for m in measures if m in ms.columns and ms[m].drop_nans().drop_nulls().len() == ms.height]
    ranks = ms.select("model", *[pl.col(m).rank(method="min", descending=True).alias(m) for m in measures])
    fig, ax = plt.subplots(figsize=(1.0 + 0.8 * len(measures), 0.6 + 0.45 * max(ms.height, 2)))
    x = np.arange(len(measures))
    for row in ranks.iter_rows():
        ax.plot(x, row[1:], marker="o", label=row[0])
        ax.annotate(row[0], (x[-1], row[-1]), textcoords="offset points", xytext=(6, -3), fontsize=8)
    ax.set_xticks(x, measures, rotation=30, ha="right")
    ax.set_yticks(range(1, ms.height + 1))
    ax.invert_yaxis()
    ax.set_ylabel("rank (1 = best)")
    ax.set_title("Model ranks per measure")
    ax.grid(alpha=0.3, axis="x")
    try:
        return _savefig(fig, Path(path))
    finally:
        plt.close(fig)
