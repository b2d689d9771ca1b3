"""Figures a paper takes as they are: one column wide (≤ 3.4 in at their natural size, type of
6 pt or more), one panel per dataset, shared axes, no empty panel, PNG (300 dpi), PDF and SVG;
each also page wide (``*_wide``, ≤ 7 in) for a ``figure*``. Sizes, legends and files:
:mod:`taxoforge.scores.reports.figure_layout`.

=============================  ================================================================
function                       what it draws
=============================  ================================================================
:func:`hp_hr_figure`           hP against hR (Fig. 7 of the Taxonomy-Aware Evaluation of VLMs):
                               one panel per dataset, one colour per model and one marker per
                               prompt (the same in every panel), bootstrap interval bars,
                               iso-hF curves; axes shared and cut to the data
:func:`ranks_figure`           the rank (1 = best) of each model under each measure, one panel
                               per dataset × prompt with at least two models — never a rank
                               across datasets (a hard dataset's best is not ranked against an
                               easy one's); None when no group has two models
:func:`rank_accuracy_figure`   accuracy at each rank of the ground truth's path (kingdom …
                               species; depth levels on a tree without ranks), one curve per
                               model, one panel per dataset
:func:`comparison_figure`      the differences of ``taxoforge compare`` with their intervals,
                               one panel per measure side by side, the pairs named once at the
                               left; filled where significant, open where not (the legend says so)
=============================  ================================================================

Models are named by their display names (:mod:`taxoforge.scores.reports.names`), wrapped to
the room a legend or a label has. A run with ``plots=False`` draws none.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl

from taxoforge.scores.reports.figure_layout import (COLUMN_WIDTH, FIGURE_FORMATS, PNG_DPI, RC, WIDE_WIDTH, chars_in,
                                                    figure_bytes, legend_line, mpl, panel_grid, place_legend,
                                                    save_figure, wrapped)
from taxoforge.scores.reports.names import display_names
from taxoforge.scores.statistics.compare import COMPARED_MEASURES

__all__ = ["hp_hr_figure", "ranks_figure", "rank_accuracy_figure", "comparison_figure", "save_figure",
           "figure_bytes", "plot_hp_hr", "plot_ranks", "write_run_figures", "FIGURE_FORMATS", "PNG_DPI",
           "FIGURE_CAPTIONS", "RANK_MEASURES", "COLUMN_WIDTH", "WIDE_WIDTH", "RUN_FIGURES", "FIGURE_FILES"]

#: The measures of the rank figure (lower is better for mistake severity).
RANK_MEASURES = ("accuracy", "hP", "hR", "hF", "mistake_severity", "exact_match", "rouge1_recall", "meteor")
_LOWER_IS_BETTER = {"mistake_severity"}
_RANK_LABELS = {"mistake_severity": "severity", "exact_match": "exact match", "rouge1_recall": "ROUGE-1",
                "meteor": "METEOR"}
#: What each figure shows (the leaderboard's Markdown lists them).
FIGURE_CAPTIONS = {
    "hp_vs_hr": "hP against hR, one panel per dataset, one colour per model and one marker per prompt; bars: "
                "bootstrap 95 % intervals; grey curves: iso-hF lines",
    "model_ranks": "rank (1 = best) of each model under each measure within one dataset × prompt; crossing "
                   "lines are measures that order the models differently",
    "rank_accuracy": "accuracy at each rank of the ground truth's path (right down to that rank), one curve per "
                     "model, one panel per dataset",
    "compare": "differences A − B with paired-bootstrap 95 % intervals; filled: significant after Holm's adjustment",
}
_MARKERS = "osD^vP*Xh<>p"
_LINESTYLES = ("-", "--", ":", "-.")


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _values(lb: pl.DataFrame, col: str) -> list[str]:
    return sorted({str(v) for v in lb[col].to_list()}) if col in lb.columns else [""]


def _colours(keys: list[str]) -> dict[str, tuple]:
    cmap = mpl().colormaps["tab10"].colors
    return {k: cmap[i % len(cmap)] for i, k in enumerate(keys)}


def _title(ax, text: str, width: float, ncols: int) -> None:
    ax.set_title(wrapped(text, chars_in(width / ncols - 0.1, 7)), pad=2)


def _err(row: dict, m: str):
    lo, hi, v = row.get(f"{m}_ci_low"), row.get(f"{m}_ci_high"), row.get(m)
    if _missing(lo) or _missing(hi) or _missing(v):
        return None
    return [[max(v - lo, 0.0)], [max(hi - v, 0.0)]]


def _limits(lb: pl.DataFrame) -> tuple[float, float]:
    """Shared, square limits of the hP–hR panels: the data and its intervals, padded, on a
    0.1 grid, inside [0, 1]."""
    vals = []
    for c in ("hP", "hR", "hP_ci_low", "hR_ci_low", "hP_ci_high", "hR_ci_high"):
        if c in lb.columns:
            vals += [v for v in lb[c].to_list() if not _missing(v)]
    if not vals:
        return 0.0, 1.02
    lo = max(0.0, math.floor((min(vals) - 0.03) * 10) / 10)
    hi = min(1.0, math.ceil((max(vals) + 0.03) * 10) / 10)
    if hi - lo < 0.2:
        hi = min(1.0, lo + 0.2)
        lo = max(0.0, hi - 0.2)
    return lo, hi + 0.02


def _iso_hf(ax, lo: float, hi: float) -> None:
    """Iso-hF curves, each labelled by its hF at its right end ("hF 0.9" on the highest)."""
    r = np.linspace(max(lo, 0.005), hi, 300)
    step = 0.1 if hi - lo <= 0.6 else 0.2
    drawn = []
    for f in np.arange(0.1, 1.0, step):
        with np.errstate(divide="ignore", invalid="ignore"):
            p = f * r / (2 * r - f)
        ok = (p >= lo) & (p <= hi) & (p > 0)
        if ok.sum() >= 2:
            ax.plot(r[ok], p[ok], color="0.82", lw=0.6, zorder=0)
            drawn.append((f, r[ok][-1], p[ok][-1]))
    for k, (f, x, y) in enumerate(drawn):
        ax.annotate(f"hF {f:.1f}" if k == len(drawn) - 1 else f"{f:.1f}", (x, y), textcoords="offset points",
                    xytext=(-1.5, 1.0), fontsize=6, color="0.5", ha="right", va="bottom")


def hp_hr_figure(lb: pl.DataFrame, *, width: float = COLUMN_WIDTH, names: dict[str, str] | None = None):
    """hP against hR per dataset (module docstring).

    Parameters
    ----------
    lb : polars.DataFrame
        A leaderboard (``model``, ``dataset``, ``prompt``, ``hP``, ``hR`` and, when present,
        their intervals).
    width : float
        Figure width in inches (default one column; :data:`WIDE_WIDTH` for the page).
    names : dict, optional
        Model → display name.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.patches import Patch
    from matplotlib.ticker import MultipleLocator

    lb = lb.filter(pl.col("hP").is_not_null() & pl.col("hR").is_not_null())
    datasets = _values(lb, "dataset")
    models, prompts = _values(lb, "model"), _values(lb, "prompt")
    shown = display_names(models, names)
    colour = _colours(models)
    marker = {p: _MARKERS[i % len(_MARKERS)] for i, p in enumerate(prompts)}
    lo, hi = _limits(lb)
    with mpl().rc_context(RC):
        fig, axes, spare, ncols = panel_grid(max(len(datasets), 1), width=width,
                                             extra_height=0.35 + 0.12 * (len(models) + len(prompts)))
        for k, (ax, ds) in enumerate(zip(axes, datasets)):
            part = lb.filter(pl.col("dataset").cast(pl.String) == ds) if "dataset" in lb.columns else lb
            _iso_hf(ax, lo, hi)
            for row in part.sort("model", "prompt").iter_rows(named=True):
                ax.errorbar(row["hR"], row["hP"], xerr=_err(row, "hR"), yerr=_err(row, "hP"),
                            fmt=marker[str(row.get("prompt", ""))], color=colour[str(row["model"])], ms=3.5,
                            elinewidth=0.6, capsize=1.5, zorder=2, mfc=colour[str(row["model"])], mec="white",
                            mew=0.3)
            ax.set_xlim(lo, hi)
            ax.set_ylim(lo, hi)
            step = 0.1 if hi - lo <= 0.45 else 0.2
            ax.xaxis.set_major_locator(MultipleLocator(step))
            ax.yaxis.set_major_locator(MultipleLocator(step))
            ax.set_aspect("equal", adjustable="box")
            ax.grid(alpha=0.25, lw=0.4)
            _title(ax, ds, fig.get_figwidth(), ncols)
            if k % ncols == 0:
                ax.set_ylabel("hP")
            if k >= len(axes) - ncols:
                ax.set_xlabel("hR")
                ax.xaxis.set_tick_params(labelbottom=True)
        handles = [Patch(color=colour[m], label=shown[m]) for m in models]
        if len(prompts) > 1:
            handles += [legend_line(ls="", marker=marker[p], color="0.3", label=p) for p in prompts]
        place_legend(fig, handles, spare, width=fig.get_figwidth())
    return fig


def plot_hp_hr(lb: pl.DataFrame, path: str | os.PathLike, formats=FIGURE_FORMATS) -> dict[str, Path]:
    """:func:`hp_hr_figure` written as ``path`` in each of ``formats``.

    Parameters
    ----------
    lb : polars.DataFrame
    path : str or os.PathLike
    formats : sequence of str

    Returns
    -------
    dict
        ``{format: path}``.
    """
    return save_figure(hp_hr_figure(lb), path, formats)


def _rank_groups(lb: pl.DataFrame) -> list[tuple[str, pl.DataFrame]]:
    keys = [k for k in ("dataset", "prompt") if k in lb.columns]
    out = []
    for key, g in (lb.group_by(keys, maintain_order=True) if keys else [((), lb)]):
        if "model" in g.columns and g["model"].n_unique() >= 2:
            out.append((" · ".join(str(x) for x in (key if isinstance(key, tuple) else (key,))), g))
    return sorted(out, key=lambda t: t[0])


def ranks_figure(lb: pl.DataFrame, measures=RANK_MEASURES, *, width: float = COLUMN_WIDTH,
                 names: dict[str, str] | None = None):
    """The rank of each model under each measure, within each dataset × prompt (module
    docstring; Fig. 5 of the Taxonomy-Aware Evaluation of VLMs).

    Parameters
    ----------
    lb : polars.DataFrame
        A leaderboard.
    measures : sequence of str
        Measures to rank by (those the leaderboard has with a value).
    width : float
    names : dict, optional
        Model → display name.

    Returns
    -------
    matplotlib.figure.Figure or None
        None when no dataset × prompt group has two models (nothing to rank).
    """
    groups = _rank_groups(lb)
    measures = [m for m in measures if m in lb.columns and lb[m].cast(pl.Float64).fill_nan(None).null_count() < lb.height]
    if not groups or not measures:
        return None
    models = _values(lb, "model")
    shown = display_names(models, names)
    colour = _colours(models)
    n_max = max(g.height for _, g in groups)
    with mpl().rc_context(RC):
        fig, axes, spare, ncols = panel_grid(len(groups), width=width, panel_aspect=0.55 + 0.06 * n_max,
                                             sharey=False, extra_height=0.55 + 0.12 * len(models))
        x = np.arange(len(measures))
        for k, (ax, (title, g)) in enumerate(zip(axes, groups)):
            ranks = g.select([pl.col(m).cast(pl.Float64).fill_nan(None)
                              .rank(method="min", descending=m not in _LOWER_IS_BETTER).alias(m) for m in measures])
            for i, (model, row) in enumerate(zip(g["model"].to_list(), ranks.iter_rows())):
                off = 0.08 * (i - (g.height - 1) / 2) / max(g.height - 1, 1)
                ax.plot(x, [np.nan if v is None else v + off for v in row], marker="o", ms=2.5, lw=0.9,
                        color=colour[str(model)])
            ax.set_xticks(x, [_RANK_LABELS.get(m, m) for m in measures], rotation=45, ha="right")
            ax.set_yticks(range(1, g.height + 1))
            ax.set_ylim(g.height + 0.4, 0.6)
            _title(ax, title, fig.get_figwidth(), ncols)
            ax.grid(alpha=0.25, lw=0.4, axis="x")
            if k % ncols == 0:
                ax.set_ylabel("rank (1 = best)")
        handles = [legend_line(marker="o", ms=2.5, color=colour[m], label=shown[m]) for m in models]
        place_legend(fig, handles, spare, width=fig.get_figwidth())
    return fig


def plot_ranks(lb: pl.DataFrame, path: str | os.PathLike, measures=RANK_MEASURES,
               formats=FIGURE_FORMATS) -> dict[str, Path]:
    """:func:`ranks_figure` written as ``path`` in each of ``formats``; nothing (an empty
    dict) when no group has two models.

    Parameters
    ----------
    lb : polars.DataFrame
    path : str or os.PathLike
    measures : sequence of str
    formats : sequence of str

    Returns
    -------
    dict
    """
    fig = ranks_figure(lb, measures)
    return {} if fig is None else save_figure(fig, path, formats)


def rank_accuracy_figure(table: pl.DataFrame, *, width: float = COLUMN_WIDTH, names: dict[str, str] | None = None):
    """Accuracy at each rank (or level) of the ground truth's path, one curve per model.

    Parameters
    ----------
    table : polars.DataFrame
        A ``correct_by_rank`` breakdown (``rank``, ``accuracy``) or ``correct_by_level``
        (``level``, ``accuracy``), with ``model``, ``dataset``, ``prompt`` where present
        (:mod:`taxoforge.scores.measures.breakdowns`).
    width : float
    names : dict, optional
        Model → display name.

    Returns
    -------
    matplotlib.figure.Figure or None
        None for an empty table.
    """
    if not table.height:
        return None
    xcol = "rank" if "rank" in table.columns else "level"
    order = list(dict.fromkeys(str(v) for v in table[xcol].to_list())) if xcol == "rank" else \
        [str(v) for v in sorted(set(table[xcol].to_list()))]
    datasets = _values(table, "dataset")
    models, prompts = _values(table, "model"), _values(table, "prompt")
    shown = display_names(models, names)
    colour = _colours(models)
    style = {p: _LINESTYLES[i % len(_LINESTYLES)] for i, p in enumerate(prompts)}
    x_of = {v: i for i, v in enumerate(order)}
    with mpl().rc_context(RC):
        fig, axes, spare, ncols = panel_grid(len(datasets), width=width, panel_aspect=0.75,
                                             extra_height=0.55 + 0.12 * (len(models) + len(prompts)))
        for k, (ax, ds) in enumerate(zip(axes, datasets)):
            part = table.filter(pl.col("dataset").cast(pl.String) == ds) if "dataset" in table.columns else table
            for key, g in part.group_by([c for c in ("model", "prompt") if c in part.columns], maintain_order=True):
                model, prompt = (str(key[0]), str(key[1]) if len(key) > 1 else "")
                xs = [x_of[str(v)] for v in g[xcol].to_list()]
                ax.plot(xs, [100 * v for v in g["accuracy"].to_list()], marker="o", ms=2.5, lw=0.9,
                        color=colour[model], ls=style.get(prompt, "-"))
            ax.set_ylim(-3, 103)
            ax.set_yticks([0, 50, 100])
            ax.set_xticks(range(len(order)), order, rotation=45 if xcol == "rank" else 0,
                          ha="right" if xcol == "rank" else "center")
            if k >= len(axes) - ncols:  # the lowest panel of each column names the ranks
                ax.xaxis.set_tick_params(labelbottom=True)
            _title(ax, ds, fig.get_figwidth(), ncols)
            ax.grid(alpha=0.25, lw=0.4)
            if k % ncols == 0:
                ax.set_ylabel("accuracy (%)")
            if xcol == "level" and k >= len(axes) - ncols:
                ax.set_xlabel("depth on the truth's path")
        handles = [legend_line(marker="o", ms=2.5, color=colour[m], label=shown[m]) for m in models]
        if len(prompts) > 1:
            handles += [legend_line(color="0.3", ls=style[p], label=p) for p in prompts]
        place_legend(fig, handles, spare, width=fig.get_figwidth())
    return fig


def comparison_figure(table: pl.DataFrame, *, width: float = COLUMN_WIDTH, names: dict[str, str] | None = None,
                      reference: str | None = None):
    """The differences of a comparison (:func:`taxoforge.scores.statistics.compare.compare_systems`):
    one panel per measure side by side sharing the rows, which are named once at the left —
    one row per pair (the model alone against a ``reference``), its dataset × prompt groups
    side by side within the row in their own colours; with one pair, one row per group. Each
    point is the difference A − B with its paired-bootstrap interval, filled where significant
    after Holm's adjustment, open otherwise (the legend says so); a line at 0.

    Parameters
    ----------
    table : polars.DataFrame
    width : float
    names : dict, optional
        Model → display name.
    reference : str, optional
        The reference every model was compared with (named in the figure's title).

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    measures = [m for m in COMPARED_MEASURES if f"{m}_diff" in table.columns
                and table[f"{m}_diff"].drop_nulls().len()]
    shown = display_names([*table["a"].to_list(), *table["b"].to_list()], names)
    chars = chars_in(min(1.3, 0.38 * width))
    pairs = list(dict.fromkeys(zip(table["a"].to_list(), table["b"].to_list())))
    groups = list(dict.fromkeys(zip(table["dataset"].to_list(), table["prompt"].to_list())))

    def group_text(g):
        return " · ".join(x for x in g if x)

    def pair_text(a, b):
        sa, sb = shown.get(a, a), shown.get(b, b)
        return wrapped(sa, chars) if reference else f"{wrapped(sa, chars)}\n− {wrapped(sb, chars - 2)}"

    by_pair = len(pairs) > 1
    rows = pairs if by_pair else groups
    series = groups if by_pair else [None]
    labels = [pair_text(*r) for r in rows] if by_pair else [wrapped(group_text(g), chars) for g in rows]
    colour = _colours([group_text(g) for g in groups]) if by_pair and len(groups) > 1 else {}
    heights = [max(lab.count("\n") + 1, len(series) * 0.6) for lab in labels]
    y = np.cumsum([0.0, *[h * 0.5 + 0.6 for h in heights[:-1]]])[::-1]
    spread = 0.6 * (len(series) > 1)
    titles = {"accuracy": "accuracy (pp)", "hF": "hF", "mistake_severity": "severity"}
    with mpl().rc_context(RC):
        height = 0.75 + sum(0.1 * (h + 1) for h in heights) + 0.12 * len(colour)
        fig = Figure(figsize=(width, height), layout="constrained")
        axes = fig.subplots(1, max(len(measures), 1), sharey=True, squeeze=False)[0]
        for ax, m in zip(axes, measures):
            scale = 100.0 if m == "accuracy" else 1.0
            for r in table.iter_rows(named=True):
                d = r[f"{m}_diff"]
                if _missing(d):
                    continue
                row = rows.index((r["a"], r["b"]) if by_pair else (r["dataset"], r["prompt"]))
                k = groups.index((r["dataset"], r["prompt"])) if by_pair else 0
                yi = y[row] + (spread / 2 - spread * k / max(len(series) - 1, 1) if len(series) > 1 else 0.0)
                c = colour.get(group_text((r["dataset"], r["prompt"])), "C0")
                lo, hi = r.get(f"{m}_ci_low"), r.get(f"{m}_ci_high")
                if not _missing(lo) and not _missing(hi):
                    ax.plot([scale * lo, scale * hi], [yi, yi], color=c, lw=0.9)
                sig = bool(r.get(f"{m}_significant"))
                ax.plot(scale * d, yi, "o", ms=3.5, color=c, mfc=c if sig else "white", mew=0.8)
            ax.axvline(0, color="0.4", lw=0.6)
            ax.set_title(titles.get(m, m), pad=2)
            ax.grid(alpha=0.25, lw=0.4, axis="x")
            ax.set_ylim(y.min() - 0.8, y.max() + 0.8)
            ax.xaxis.set_major_locator(MaxNLocator(nbins=2 if width <= COLUMN_WIDTH + 0.1 else 4))
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}".replace("-", "−")))
            if m == "mistake_severity":
                ax.set_xlabel("lower is better", fontsize=6)
        axes[0].set_yticks(y, labels)
        for ax in axes[1:]:
            ax.tick_params(labelleft=False)
        title = (f"each model − {shown.get(reference, reference)}" if reference else
                 "" if by_pair else f"{shown.get(pairs[0][0], pairs[0][0])} − {shown.get(pairs[0][1], pairs[0][1])}")
        if title:
            fig.suptitle(wrapped(title, chars_in(width, 7)), fontsize=7)
        handles = [legend_line(ls="", marker="o", ms=3.5, color="0.3", label="significant (Holm)"),
                   legend_line(ls="", marker="o", ms=3.5, color="0.3", mfc="white", mew=0.8, label="not significant"),
                   legend_line(color="0.3", lw=0.9, label="95 % interval")]
        handles += [legend_line(ls="-", marker="o", ms=3, lw=0.9, color=c, label=g) for g, c in colour.items()]
        place_legend(fig, handles, [], width=width)
    return fig


#: The figures of a scoring run, by file stem (each also as ``<stem>_wide``).
RUN_FIGURES = ("hp_vs_hr", "model_ranks", "rank_accuracy")
#: Every figure file a run may write.
FIGURE_FILES = tuple(f"{fig}{w}.{fmt}" for fig in RUN_FIGURES for w in ("", "_wide") for fmt in FIGURE_FORMATS)


def write_run_figures(lb: pl.DataFrame, breakdowns: dict[str, pl.DataFrame], folder: str | os.PathLike,
                      formats=FIGURE_FORMATS, *, names: dict[str, str] | None = None,
                      before_write: Callable[[], object] | None = None) -> tuple[dict[str, Path], dict[str, str]]:
    """The figures of a scoring run, written into ``folder`` one column wide and page wide
    (``<name>_wide``): ``hp_vs_hr``, ``model_ranks`` (when a dataset × prompt group has two
    models) and ``rank_accuracy`` (from the ``correct_by_rank`` breakdown, else
    ``correct_by_level``).

    Parameters
    ----------
    lb : polars.DataFrame
        The run's leaderboard.
    breakdowns : dict of polars.DataFrame
        The run's breakdown tables.
    folder : str or os.PathLike
    formats : sequence of str
    names : dict, optional
        Model → display name.
    before_write : callable, optional
        Called before each figure is written (one width, every format); an exception it
        raises stops the drawing (a background drawing whose run folder was replaced,
        :mod:`~taxoforge.scores.reports.run_figures`).

    Returns
    -------
    (dict, dict)
        ``{key: path}`` (the PNG as ``<name>``, the others as ``<name>_<format>``; the wide
        ones as ``<name>_wide``, ``<name>_wide_<format>``), and ``{name: why}`` for each
        figure not drawn.
    """
    folder = Path(folder)
    paths, not_drawn = {}, {}
    acc = breakdowns.get("correct_by_rank")
    if acc is None or not acc.height:
        acc = breakdowns.get("correct_by_level")
    makers = {"hp_vs_hr": lambda w: hp_hr_figure(lb, width=w, names=names) if lb.height else None,
              "model_ranks": lambda w: ranks_figure(lb, width=w, names=names),
              "rank_accuracy": lambda w: rank_accuracy_figure(acc, width=w, names=names) if acc is not None else None}
    why = {"hp_vs_hr": "no leaderboard rows", "model_ranks": "no dataset × prompt group has two models to rank",
           "rank_accuracy": "no per-rank breakdown (run with breakdowns)"}
    for name in RUN_FIGURES:
        for stem, width in ((name, COLUMN_WIDTH), (f"{name}_wide", WIDE_WIDTH)):
            fig = makers[name](width)
            if fig is None:
                not_drawn[name] = why[name]
                break
            if before_write is not None:
                before_write()
            for fmt, p in save_figure(fig, folder / stem, formats).items():
                paths[stem if fmt == "png" else f"{stem}_{fmt}"] = p
    return paths, not_drawn
