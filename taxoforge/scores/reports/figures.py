"""Figures a paper takes as they are: sized for one column (3.3 in), one panel per dataset,
shared axes, no empty panel, PNG (300 dpi), PDF and SVG.

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
                               one panel per measure, filled where significant
=============================  ================================================================

Figures are matplotlib :class:`~matplotlib.figure.Figure` objects drawn without pyplot (no
display, no figure manager, and pyplot's import is not paid), carry no timestamps (the same
results give the same files) and are written atomically (:func:`save_figure`). Each figure
is laid out once: its tight bounding box is measured in one pass that draws nothing, and
every format is then drawn once inside that box (``savefig(bbox_inches="tight")`` would
draw each format twice). A run with ``plots=False`` draws none.
"""

from __future__ import annotations

import io
import math
import os
from pathlib import Path

import numpy as np
import polars as pl

from taxoforge.files import atomic_writer

__all__ = ["hp_hr_figure", "ranks_figure", "rank_accuracy_figure", "comparison_figure", "save_figure",
           "figure_bytes", "plot_hp_hr", "plot_ranks", "write_run_figures", "FIGURE_FORMATS", "PNG_DPI",
           "FIGURE_CAPTIONS", "RANK_MEASURES", "COLUMN_WIDTH", "RUN_FIGURES"]

#: Every figure is written in these formats; PNG at :data:`PNG_DPI`.
FIGURE_FORMATS = ("png", "pdf", "svg")
PNG_DPI = 300
#: The width of one column of a two-column paper, in inches.
COLUMN_WIDTH = 3.3
#: The measures of the rank figure (lower is better for mistake severity).
RANK_MEASURES = ("accuracy", "hP", "hR", "hF", "mistake_severity", "exact_match", "rouge1_recall", "meteor")
_LOWER_IS_BETTER = {"mistake_severity"}
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
_RC = {"font.size": 7, "axes.titlesize": 7, "axes.labelsize": 7, "xtick.labelsize": 6, "ytick.labelsize": 6,
       "legend.fontsize": 6, "legend.title_fontsize": 6, "lines.linewidth": 1.0, "lines.markersize": 4,
       "axes.linewidth": 0.6, "svg.hashsalt": "taxoforge"}


def _mpl():
    """matplotlib, with stable ids inside SVG files (no pyplot: figures are drawn on their own canvas)."""
    import matplotlib

    matplotlib.rcParams["svg.hashsalt"] = "taxoforge"
    return matplotlib


def _line(**kwargs):
    """A legend handle: a line (and marker) not drawn in any axes."""
    from matplotlib.lines import Line2D

    return Line2D([], [], **kwargs)


_SAVE_METADATA = {"png": {"Software": None}, "pdf": {"CreationDate": None, "Producer": None, "Creator": None},
                  "svg": {"Date": None, "Creator": None}}


_PAD_INCHES = 0.02


def _tight_box(fig, dpi: float):
    """The figure's tight bounding box (inches, padded), measured in a pass that lays out
    every artist on an Agg renderer and draws nothing."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    old = fig.dpi
    fig.set_dpi(dpi)
    try:
        renderer = canvas.get_renderer()
        with renderer._draw_disabled():  # what savefig(bbox_inches="tight") does before each format
            fig.draw(renderer)
        return fig.get_tightbbox(renderer).padded(_PAD_INCHES)
    finally:
        fig.set_dpi(old)


def figure_bytes(fig, fmt: str = "png", dpi: int = PNG_DPI, *, box=None) -> bytes:
    """``fig`` rendered as ``fmt`` (``png``, ``pdf``, ``svg``), without timestamps, cut to
    its tight bounding box.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    fmt : str
    dpi : int
    box : matplotlib.transforms.Bbox, optional
        The tight box when already measured (:func:`save_figure` measures it once for every
        format); else measured here.

    Returns
    -------
    bytes
    """
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    if box is None:
        box = _tight_box(fig, dpi)
    if isinstance(fig.get_layout_engine(), PlaceHolderLayoutEngine):  # laid out by tight_layout() already:
        with _mpl().rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
            fig.set_layout_engine(None)  # else savefig lays it out again, one more pass per format
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=dpi, bbox_inches=box, metadata=_SAVE_METADATA.get(fmt))
    return buf.getvalue()


def save_figure(fig, path: str | os.PathLike, formats=FIGURE_FORMATS) -> dict[str, Path]:
    """Write ``fig`` beside ``path`` (its suffix replaced) in every format, atomically, and
    close it.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    path : str or os.PathLike
    formats : sequence of str

    Returns
    -------
    dict
        ``{format: path}``.
    """
    stem = Path(path)
    stem = stem.with_suffix("") if stem.suffix.lower().lstrip(".") in FIGURE_FORMATS else stem
    out = {}
    box = _tight_box(fig, PNG_DPI)  # once for every format
    for fmt in formats:
        target = stem.with_name(f"{stem.name}.{fmt}")
        with atomic_writer(target, "wb") as fh:
            fh.write(figure_bytes(fig, fmt, box=box))
        out[fmt] = target
    return out


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _values(lb: pl.DataFrame, col: str) -> list[str]:
    return sorted({str(v) for v in lb[col].to_list()}) if col in lb.columns else [""]


def _colours(keys: list[str]) -> dict[str, tuple]:
    cmap = _mpl().colormaps["tab10"].colors
    return {k: cmap[i % len(cmap)] for i, k in enumerate(keys)}


def _grid(n: int, *, width: float = COLUMN_WIDTH, panel_aspect: float = 1.0, ncols: int | None = None,
          sharex: bool = True, sharey: bool = True, extra_height: float = 0.35):
    """A figure of ``n`` panels in rows of ``ncols`` (default: 1 for one panel, else 2),
    ``width`` inches wide; the unused slots of the last row are removed and returned (a
    legend goes there), so no panel is empty."""
    from matplotlib.figure import Figure

    ncols = ncols or (1 if n == 1 else 2)
    nrows = math.ceil(n / ncols)
    panel_w = (width - 0.45) / ncols
    fig = Figure(figsize=(width, nrows * panel_w * panel_aspect + extra_height))
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=sharex, sharey=sharey)
    flat = list(axes.ravel())
    spare = flat[n:]
    for ax in spare:
        ax.set_axis_off()
    return fig, flat[:n], spare, ncols


def _legend(fig, handles, spare, *, title: str | None = None, ncol_below: int = 3) -> None:
    """The legend in the first spare slot, else above the panels (the saved figure's tight
    bounding box takes it in)."""
    if not handles:
        return
    if spare:
        spare[0].legend(handles=handles, loc="center", frameon=False, title=title)
    else:  # above the panels: below them it would meet the rotated tick labels
        fig.legend(handles=handles, loc="lower center", ncol=min(ncol_below, len(handles)), frameon=False,
                   title=title, bbox_to_anchor=(0.5, 1.0))


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
    r = np.linspace(max(lo, 0.005), hi, 300)
    for f in np.arange(0.1, 1.0, 0.1 if hi - lo <= 0.6 else 0.2):
        with np.errstate(divide="ignore", invalid="ignore"):
            p = f * r / (2 * r - f)
        ok = (p >= lo) & (p <= hi) & (p > 0)
        if ok.sum() < 2:
            continue
        ax.plot(r[ok], p[ok], color="0.82", lw=0.6, zorder=0)
        ax.annotate(f"hF {f:.1f}", (r[ok][-1], p[ok][-1]), textcoords="offset points", xytext=(-1.5, 1.5),
                    fontsize=4.5, color="0.55", ha="right", va="bottom")


def hp_hr_figure(lb: pl.DataFrame, *, width: float = COLUMN_WIDTH):
    """hP against hR per dataset (module docstring).

    Parameters
    ----------
    lb : polars.DataFrame
        A leaderboard (``model``, ``dataset``, ``prompt``, ``hP``, ``hR`` and, when present,
        their intervals).
    width : float
        Figure width in inches (default one column).

    Returns
    -------
    matplotlib.figure.Figure
    """
    mpl = _mpl()
    from matplotlib.ticker import MultipleLocator

    lb = lb.filter(pl.col("hP").is_not_null() & pl.col("hR").is_not_null())
    datasets = _values(lb, "dataset")
    models, prompts = _values(lb, "model"), _values(lb, "prompt")
    colour = _colours(models)
    marker = {p: _MARKERS[i % len(_MARKERS)] for i, p in enumerate(prompts)}
    lo, hi = _limits(lb)
    with mpl.rc_context(_RC):
        fig, axes, spare, ncols = _grid(max(len(datasets), 1), width=width)
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
            ax.set_title(ds, pad=2)
            if k % ncols == 0:
                ax.set_ylabel("hP")
            if k >= len(axes) - ncols:
                ax.set_xlabel("hR")
                ax.xaxis.set_tick_params(labelbottom=True)
        from matplotlib.patches import Patch

        handles = [Patch(color=colour[m], label=m) for m in models]
        if len(prompts) > 1:
            handles += [_line(ls="", marker=marker[p], color="0.3", label=p) for p in prompts]
        _legend(fig, handles, spare)
        fig.tight_layout(pad=0.3, w_pad=0.4, h_pad=0.6)
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


def ranks_figure(lb: pl.DataFrame, measures=RANK_MEASURES, *, width: float = COLUMN_WIDTH):
    """The rank of each model under each measure, within each dataset × prompt (module
    docstring; Fig. 5 of the Taxonomy-Aware Evaluation of VLMs).

    Parameters
    ----------
    lb : polars.DataFrame
        A leaderboard.
    measures : sequence of str
        Measures to rank by (those the leaderboard has with a value).
    width : float

    Returns
    -------
    matplotlib.figure.Figure or None
        None when no dataset × prompt group has two models (nothing to rank).
    """
    mpl = _mpl()
    groups = _rank_groups(lb)
    measures = [m for m in measures if m in lb.columns and lb[m].cast(pl.Float64).fill_nan(None).null_count() < lb.height]
    if not groups or not measures:
        return None
    models = _values(lb, "model")
    colour = _colours(models)
    n_max = max(g.height for _, g in groups)
    with mpl.rc_context(_RC):
        fig, axes, spare, ncols = _grid(len(groups), width=width, panel_aspect=0.55 + 0.06 * n_max, sharey=False)
        x = np.arange(len(measures))
        for k, (ax, (title, g)) in enumerate(zip(axes, groups)):
            ranks = g.select([pl.col(m).cast(pl.Float64).fill_nan(None)
                              .rank(method="min", descending=m not in _LOWER_IS_BETTER).alias(m) for m in measures])
            for i, (model, row) in enumerate(zip(g["model"].to_list(), ranks.iter_rows())):
                off = 0.08 * (i - (g.height - 1) / 2) / max(g.height - 1, 1)
                ax.plot(x, [np.nan if v is None else v + off for v in row], marker="o", ms=2.5, lw=0.9,
                        color=colour[str(model)])
            ax.set_xticks(x, measures, rotation=45, ha="right")
            ax.set_yticks(range(1, g.height + 1))
            ax.set_ylim(g.height + 0.4, 0.6)
            ax.set_title(title, pad=2)
            ax.grid(alpha=0.25, lw=0.4, axis="x")
            if k % ncols == 0:
                ax.set_ylabel("rank (1 = best)")
        handles = [_line(marker="o", ms=2.5, color=colour[m], label=m) for m in models]
        _legend(fig, handles, spare)
        fig.tight_layout(pad=0.3, w_pad=0.4, h_pad=0.6)
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


def rank_accuracy_figure(table: pl.DataFrame, *, width: float = COLUMN_WIDTH):
    """Accuracy at each rank (or level) of the ground truth's path, one curve per model.

    Parameters
    ----------
    table : polars.DataFrame
        A ``correct_by_rank`` breakdown (``rank``, ``accuracy``) or ``correct_by_level``
        (``level``, ``accuracy``), with ``model``, ``dataset``, ``prompt`` where present
        (:mod:`taxoforge.scores.measures.breakdowns`).
    width : float

    Returns
    -------
    matplotlib.figure.Figure or None
        None for an empty table.
    """
    mpl = _mpl()
    if not table.height:
        return None
    xcol = "rank" if "rank" in table.columns else "level"
    order = list(dict.fromkeys(str(v) for v in table[xcol].to_list())) if xcol == "rank" else \
        [str(v) for v in sorted(set(table[xcol].to_list()))]
    datasets = _values(table, "dataset")
    models, prompts = _values(table, "model"), _values(table, "prompt")
    colour = _colours(models)
    style = {p: _LINESTYLES[i % len(_LINESTYLES)] for i, p in enumerate(prompts)}
    x_of = {v: i for i, v in enumerate(order)}
    with mpl.rc_context(_RC):
        fig, axes, spare, ncols = _grid(len(datasets), width=width, panel_aspect=0.75)
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
            ax.set_title(ds, pad=2)
            ax.grid(alpha=0.25, lw=0.4)
            if k % ncols == 0:
                ax.set_ylabel("accuracy (%)")
            if xcol == "level" and k >= len(axes) - ncols:
                ax.set_xlabel("depth of the ground truth's ancestor")
        handles = [_line(marker="o", ms=2.5, color=colour[m], label=m) for m in models]
        if len(prompts) > 1:
            handles += [_line(color="0.3", ls=style[p], label=p) for p in prompts]
        _legend(fig, handles, spare)
        fig.tight_layout(pad=0.3, w_pad=0.4, h_pad=0.6)
    return fig


def comparison_figure(table: pl.DataFrame, *, width: float = COLUMN_WIDTH):
    """The differences of a comparison (:func:`taxoforge.scores.statistics.compare.compare_systems`):
    one panel per measure, one row per pair and dataset × prompt, the difference A − B with
    its paired-bootstrap interval; filled where significant after Holm's adjustment, open
    otherwise; a line at 0.

    Parameters
    ----------
    table : polars.DataFrame
    width : float

    Returns
    -------
    matplotlib.figure.Figure
    """
    mpl = _mpl()
    from taxoforge.scores.statistics.compare import COMPARED_MEASURES

    measures = [m for m in COMPARED_MEASURES if f"{m}_diff" in table.columns
                and table[f"{m}_diff"].drop_nulls().len()]
    pairs = table.select("a", "b").unique(maintain_order=True).height
    groups = table.select("dataset", "prompt").unique(maintain_order=True).height
    labels = []
    for r in table.iter_rows(named=True):
        parts = []
        if groups > 1 or pairs == 1:  # one pair: its name is the title, the rows are the groups
            parts.append(" · ".join(x for x in (r["dataset"], r["prompt"]) if x))
        if pairs > 1:
            parts.append(f"{r['a']} − {r['b']}")
        labels.append(": ".join(parts) or f"{r['a']} − {r['b']}")
    names = {"accuracy": "accuracy (pp)", "hF": "hF", "mistake_severity": "mistake severity (lower is better)"}
    y = np.arange(table.height)[::-1]
    with mpl.rc_context(_RC):
        h = 0.35 + 0.16 * table.height
        from matplotlib.figure import Figure

        fig = Figure(figsize=(width, len(measures) * h + 0.3))
        axes = fig.subplots(len(measures), 1, sharey=True, squeeze=False)
        for ax, m in zip(axes[:, 0], measures):
            scale = 100.0 if m == "accuracy" else 1.0
            for yi, r in zip(y, table.iter_rows(named=True)):
                d = r[f"{m}_diff"]
                if _missing(d):
                    continue
                lo, hi = r.get(f"{m}_ci_low"), r.get(f"{m}_ci_high")
                if not _missing(lo) and not _missing(hi):
                    ax.plot([scale * lo, scale * hi], [yi, yi], color="C0", lw=0.9)
                sig = bool(r.get(f"{m}_significant"))
                ax.plot(scale * d, yi, "o", ms=3.5, color="C0", mfc="C0" if sig else "white", mew=0.8)
            ax.axvline(0, color="0.4", lw=0.6)
            ax.set_title(names.get(m, m), pad=2)
            ax.set_yticks(y, labels)
            ax.grid(alpha=0.25, lw=0.4, axis="x")
            ax.set_ylim(-0.7, table.height - 0.3)
        if pairs == 1:
            axes[0, 0].set_title(f"{table['a'][0]} − {table['b'][0]}\n{names.get(measures[0], measures[0])}", pad=2)
        fig.tight_layout(pad=0.3, h_pad=0.5)
    return fig


#: The figures of a scoring run, by file stem.
RUN_FIGURES = ("hp_vs_hr", "model_ranks", "rank_accuracy")


def write_run_figures(lb: pl.DataFrame, breakdowns: dict[str, pl.DataFrame], folder: str | os.PathLike,
                      formats=FIGURE_FORMATS) -> tuple[dict[str, Path], dict[str, str]]:
    """The figures of a scoring run, written into ``folder``: ``hp_vs_hr``, ``model_ranks``
    (when a dataset × prompt group has two models) and ``rank_accuracy`` (from the
    ``correct_by_rank`` breakdown, else ``correct_by_level``).

    Parameters
    ----------
    lb : polars.DataFrame
        The run's leaderboard.
    breakdowns : dict of polars.DataFrame
        The run's breakdown tables.
    folder : str or os.PathLike
    formats : sequence of str

    Returns
    -------
    (dict, dict)
        ``{key: path}`` (the PNG as ``<name>``, the others as ``<name>_<format>``), and
        ``{name: why}`` for each figure not drawn.
    """
    folder = Path(folder)
    paths, not_drawn = {}, {}
    acc = breakdowns.get("correct_by_rank")
    if acc is None or not acc.height:
        acc = breakdowns.get("correct_by_level")
    makers = {"hp_vs_hr": lambda: hp_hr_figure(lb) if lb.height else None,
              "model_ranks": lambda: ranks_figure(lb),
              "rank_accuracy": lambda: rank_accuracy_figure(acc) if acc is not None else None}
    why = {"hp_vs_hr": "no leaderboard rows", "model_ranks": "no dataset × prompt group has two models to rank",
           "rank_accuracy": "no per-rank breakdown (run with breakdowns)"}
    for name in RUN_FIGURES:
        fig = makers[name]()
        if fig is None:
            not_drawn[name] = why[name]
            continue
        for fmt, p in save_figure(fig, folder / name, formats).items():
            paths[name if fmt == "png" else f"{name}_{fmt}"] = p
    return paths, not_drawn
