"""Results people can read and papers can print: the leaderboard as Markdown, CSV and
LaTeX, and figures as PNG (300 dpi), PDF and SVG.

* :func:`leaderboard_markdown` — the model × dataset × prompt table (measures with their
  bootstrap 95 % intervals), the taxonomy it cites, the mapping configuration, the rows per
  file and the bad rows.
* :func:`leaderboard_latex` — a ``booktabs`` table of the main columns (every text cell
  escaped, :func:`taxoforge.latex.latex_escape`), intervals in brackets, the citation in the
  caption.
* :func:`plot_hp_hr` — hP against hR (Snæbjarnarson et al. 2025 [1] Fig. 7), one panel per dataset × prompt,
  one marker per model (the same marker and colour in every panel), bootstrap 95 % interval
  bars, iso-hF curves.
* :func:`plot_ranks` — the rank (1 = best) of every leaderboard row (model × dataset ×
  prompt) under each measure (Snæbjarnarson et al. 2025 [1] Fig. 5): lines that cross are measures that order
  the rows differently. With one model the rows are its dataset × prompt settings, so the
  plot still shows where the measures disagree; with a single row there is nothing to rank
  and the figure shows that row's value under each measure instead.

Figures use matplotlib's Agg backend (no display needed), carry no timestamps (the same
results give the same files) and are written atomically.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import polars as pl

from taxoforge.files import atomic_writer
from taxoforge.latex import latex_escape, latex_table
from taxoforge.markdown import markdown_table
from taxoforge.scores.confidence import CI_MEASURES, ci_columns
from taxoforge.scores.leaderboard import GROUP_KEYS, leaderboard

__all__ = ["leaderboard_markdown", "leaderboard_latex", "model_summary", "plot_hp_hr", "plot_ranks",
           "hp_hr_figure", "ranks_figure", "figure_bytes", "RANK_MEASURES", "FIGURE_FORMATS", "PNG_DPI",
           "FIGURE_CAPTIONS"]

STAGE_ORDER = ("exact", "linked_name", "contains", "ngram4", "ngram3", "ngram2", "vote", "top1", "empty", "abstention",
               "none_of_the_above")
RANK_MEASURES = ("exact_match", "contained", "rouge1_recall", "bleu2", "meteor", "accuracy", "hR", "hP", "hF")
#: Every figure is written in these formats; PNG at :data:`PNG_DPI`.
FIGURE_FORMATS = ("png", "pdf", "svg")
PNG_DPI = 300
#: What each figure shows (the leaderboard's Markdown lists them).
FIGURE_CAPTIONS = {
    "hp_vs_hr": "hP against hR, one panel per dataset × prompt, one marker per model, bars = bootstrap 95 % "
                "intervals; grey curves are iso-hF lines",
    "model_ranks": "rank (1 = best) of each leaderboard row under each measure; crossing lines are measures that "
                   "order the rows differently (one row: its value under each measure)",
}
_PCT = {"accuracy", "exact_match", "contained", "rouge1_recall", "bleu2", "meteor", "HCA", "MTA"}
_HIDDEN = {"taxonomy_version", "taxonomy_store", "mapping_config_id", "gt_methods", *ci_columns()}


def _is_pct(col: str) -> bool:
    return col in _PCT or col.startswith("accuracy_")


def _num(col: str, v) -> str:
    if col.endswith("_pct"):
        return f"{v:.1f}"
    return f"{100 * v:.1f}" if _is_pct(col) else f"{v:.3f}"


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and np.isnan(v))


def _fmt(col: str, v) -> str:
    if _missing(v):
        return "–"
    if isinstance(v, float):
        return _num(col, v)
    return str(v).replace("|", "\\|")


def _with_intervals(lb: pl.DataFrame, columns: list[str], fmt) -> list[list[str]]:
    """Rows of cells of ``columns``; a measure with an interval reads ``value (low–high)``."""
    out = []
    for row in lb.iter_rows(named=True):
        cells = []
        for c in columns:
            cell = fmt(c, row[c])
            lo, hi = row.get(f"{c}_ci_low"), row.get(f"{c}_ci_high")
            if c in CI_MEASURES and not _missing(row[c]) and not _missing(lo) and not _missing(hi):
                cell = f"{cell} ({_num(c, lo)}–{_num(c, hi)})"
            cells.append(cell)
        out.append(cells)
    return out


def _citation_text(info: dict) -> str:
    cit = info.get("citation") or {}
    ref = cit.get("ref") or info.get("taxonomy_version")
    if cit.get("published") and cit.get("store"):
        return f"`{ref}` in the store `{cit['store']}`"
    if cit:
        return f"`{ref}` (its content hash: not published in a store)"
    return f"`{ref}`"


def leaderboard_markdown(lb: pl.DataFrame, info: dict | None = None, bad_rows: pl.DataFrame | None = None,
                         max_rows: int = 50) -> str:
    info = info or {}
    show = [c for c in lb.columns if c not in _HIDDEN]
    lines = ["## Leaderboard", ""]
    if info:
        cfg = info.get("mapping_config", {})
        lines += [f"Taxonomy **{info.get('taxonomy')}**, cited as {_citation_text(info)}, "
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
    rows = _with_intervals(lb, show, _fmt)
    lines.append(markdown_table(rows[:max_rows], columns=show,
                                right_align=[c for c in show if lb[c].dtype.is_numeric()]))
    if len(rows) > max_rows:
        lines.append(f"\n… {len(rows) - max_rows} more rows")
    ci = info.get("confidence_intervals") or {}
    lines += ["", "hF = harmonic mean of mean hP and mean hR; hF_pairs = mean per-sample hF. "
              "accuracy, text measures, HCA, MTA and accuracy_<rank> in %."
              + (f" In brackets: bootstrap {100 * ci.get('level', 0.95):.0f} % interval ({ci.get('method')}, "
                 f"{ci.get('n_resamples')} resamples, seed {ci.get('seed')})." if ci.get("n_resamples") else "")]
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
    per_file = info.get("per_file") or []
    if len(per_file) > 1:
        shown = _distinct_file_names([f["file"] for f in per_file])
        lines += ["", f"**{len(per_file)} files:**", "",
                  markdown_table([[shown[f["file"]], f["rows"], f["scored"], f["bad_rows"],
                                   ", ".join(f"{r} {n}" for r, n in sorted(f["bad_rows_by_reason"].items()))]
                                  for f in per_file], columns=["file", "rows", "scored", "bad rows", "reasons"])]
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


#: The columns of the LaTeX table, when the leaderboard has them.
LATEX_COLUMNS = ("n", "accuracy", "hP", "hR", "hF", "HCA", "MTA")


def leaderboard_latex(lb: pl.DataFrame, info: dict | None = None, *, label: str = "tab:leaderboard") -> str:
    """The leaderboard as a LaTeX ``table`` (``booktabs``): the group keys, n, accuracy (%),
    hP, hR, hF, HCA and MTA (%) where present, each measure with its bootstrap interval in
    brackets; the caption names the taxonomy citation and the mapping configuration. Every
    text cell is escaped."""
    info = info or {}
    keys = [k for k in GROUP_KEYS if k in lb.columns]
    measures = [c for c in LATEX_COLUMNS if c in lb.columns]
    rows = []
    for row in lb.iter_rows(named=True):
        cells = [latex_escape(row[k]) for k in keys]
        for c in measures:
            v = row[c]
            if _missing(v):
                cells.append("--")
                continue
            if c == "n":
                cells.append(str(v))
                continue
            cell = _num(c, v)
            lo, hi = row.get(f"{c}_ci_low"), row.get(f"{c}_ci_high")
            if not _missing(lo) and not _missing(hi):
                cell += f" {{\\scriptsize [{_num(c, lo)}, {_num(c, hi)}]}}"
            cells.append(cell)
        rows.append(cells)
    header = [latex_escape(k) for k in keys] + [latex_escape(c) + (r" (\%)" if _is_pct(c) else "") for c in measures]
    body = latex_table(header, rows, align="l" * len(keys) + "r" * len(measures), escape_header=False)
    cit = info.get("citation") or {}
    ref = cit.get("ref") or info.get("taxonomy_version") or ""
    where = f" in the store {cit['store']}" if cit.get("published") and cit.get("store") else ""
    ci = info.get("confidence_intervals") or {}
    caption = (f"Scores against the taxonomy {info.get('taxonomy', '')} ({ref}{where}), mapping configuration "
               f"{info.get('mapping_config_id', '')}. hF is the harmonic mean of mean hP and mean hR."
               + (f" Brackets: bootstrap {100 * ci.get('level', 0.95):.0f}% intervals ({ci.get('n_resamples')} "
                  f"resamples, seed {ci.get('seed')})." if ci.get("n_resamples") else ""))
    return ("% requires \\usepackage{booktabs}\n\\begin{table}[t]\n\\centering\n\\small\n" + body
            + f"\\caption{{{latex_escape(caption)}}}\n\\label{{{latex_escape(label)}}}\n\\end{{table}}\n")

def model_summary(samples: pl.DataFrame) -> pl.DataFrame:
    """One row per model over all its samples, measures as in the leaderboard (no intervals)."""
    return leaderboard(samples, by=("model",), ci=None)


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.hashsalt"] = "taxoforge"  # stable ids inside SVG files
    return plt


_SAVE_METADATA = {"png": {"Software": None}, "pdf": {"CreationDate": None, "Producer": None, "Creator": None},
                  "svg": {"Date": None, "Creator": None}}


def figure_bytes(fig, fmt: str = "png", dpi: int = PNG_DPI, bbox=None) -> bytes:
    """``fig`` rendered as ``fmt`` (``png``, ``pdf``, ``svg``), without timestamps, cut to
    ``bbox`` (default: its tight bounding box, which costs one more drawing of the figure)."""
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=dpi, bbox_inches="tight" if bbox is None else bbox,
                metadata=_SAVE_METADATA.get(fmt))
    return buf.getvalue()


def _save(fig, path: str | os.PathLike, formats=FIGURE_FORMATS) -> dict[str, Path]:
    """Write ``fig`` beside ``path`` (its suffix is replaced) in every format; PNG at
    :data:`PNG_DPI`. Returns ``{format: path}``."""
    plt = _plt()
    stem = Path(path)
    stem = stem.with_suffix("") if stem.suffix.lower().lstrip(".") in FIGURE_FORMATS else stem
    out = {}
    try:  # the tight box drawn once for every format, not once per format
        bbox = fig.get_tightbbox(fig.canvas.get_renderer()).padded(plt.rcParams["savefig.pad_inches"])
        for fmt in formats:
            target = stem.with_name(f"{stem.name}.{fmt}")
            with atomic_writer(target, "wb") as fh:
                fh.write(figure_bytes(fig, fmt, bbox=bbox))
            out[fmt] = target
    finally:
        plt.close(fig)
    return out


def _as_leaderboard(table: pl.DataFrame) -> pl.DataFrame:
    """A leaderboard as given, or one made from a samples table (no intervals)."""
    if "n" in table.columns and "line" not in table.columns:
        return table
    return leaderboard(table, by=tuple(k for k in GROUP_KEYS if k in table.columns), ci=None)


def _values(lb: pl.DataFrame, col: str) -> list[str]:
    return sorted({str(v) for v in lb[col].to_list()}) if col in lb.columns else [""]


_MARKERS = "osD^vP*Xh<>p"


def _model_styles(models: list[str]) -> dict[str, tuple[str, object]]:
    plt = _plt()
    colours = plt.get_cmap("tab10").colors
    return {m: (_MARKERS[i % len(_MARKERS)], colours[i % len(colours)]) for i, m in enumerate(models)}


def _iso_hf(ax) -> None:
    r = np.linspace(0.01, 1, 200)
    for f in (0.2, 0.4, 0.6, 0.8):
        with np.errstate(divide="ignore", invalid="ignore"):
            p = f * r / (2 * r - f)
        ok = (p > 0) & (p <= 1)
        ax.plot(r[ok], p[ok], color="0.85", lw=0.8, zorder=0)
        ax.annotate(f"hF={f}", (r[ok][-1], p[ok][-1]), textcoords="offset points", xytext=(-28, -10),
                    fontsize=6, color="0.5")


def _err(row: dict, m: str) -> list[list[float]] | None:
    lo, hi, v = row.get(f"{m}_ci_low"), row.get(f"{m}_ci_high"), row.get(m)
    if _missing(lo) or _missing(hi) or _missing(v):
        return None
    return [[max(v - lo, 0.0)], [max(hi - v, 0.0)]]


def hp_hr_figure(table: pl.DataFrame):
    """The figure of :func:`plot_hp_hr` (``table``: a leaderboard, or samples)."""
    plt = _plt()
    lb = _as_leaderboard(table)
    datasets, prompts = _values(lb, "dataset"), _values(lb, "prompt")
    styles = _model_styles(_values(lb, "model"))
    nr, nc = len(datasets), len(prompts)
    fig, axes = plt.subplots(nr, nc, figsize=(0.6 + 3.0 * nc, 0.9 + 2.9 * nr), squeeze=False, sharex=True,
                             sharey=True)
    for i, ds in enumerate(datasets):
        for j, pr in enumerate(prompts):
            ax = axes[i][j]
            part = lb
            if "dataset" in lb.columns:
                part = part.filter(pl.col("dataset").cast(pl.String) == ds)
            if "prompt" in lb.columns:
                part = part.filter(pl.col("prompt").cast(pl.String) == pr)
            _iso_hf(ax)
            for row in part.sort("model").iter_rows(named=True):
                if _missing(row["hP"]) or _missing(row["hR"]):
                    continue
                marker, colour = styles[str(row["model"])]
                ax.errorbar(row["hR"], row["hP"], xerr=_err(row, "hR"), yerr=_err(row, "hP"), fmt=marker,
                            color=colour, ms=5, elinewidth=0.8, capsize=2, zorder=2)
            if not part.height:
                ax.text(0.5, 0.5, "no rows", ha="center", va="center", transform=ax.transAxes, color="0.5")
            ax.set_xlim(0, 1.02)
            ax.set_ylim(0, 1.02)
            ax.set_aspect("equal")
            ax.grid(alpha=0.3)
            ax.set_title(" · ".join(x for x in (ds if nr > 1 or ds else "", pr if nc > 1 or pr else "") if x),
                         fontsize=8)
            if i == nr - 1:
                ax.set_xlabel("hR (hierarchical recall)", fontsize=8)
            if j == 0:
                ax.set_ylabel("hP (hierarchical precision)", fontsize=8)
            ax.tick_params(labelsize=7)
    handles = [plt.Line2D([], [], ls="", marker=mk, color=col, label=m) for m, (mk, col) in styles.items()]
    fig.legend(handles=handles, loc="upper center", ncol=min(len(handles), 4), fontsize=8, title="model",
               title_fontsize=8, frameon=False, bbox_to_anchor=(0.5, 1.0 + 0.02 * ((len(handles) + 3) // 4)))
    fig.suptitle("hP vs hR per model (rows: dataset, columns: prompt)", fontsize=9, y=-0.01, va="top")
    fig.tight_layout()
    return fig


def plot_hp_hr(table: pl.DataFrame, path: str | os.PathLike, formats=FIGURE_FORMATS) -> dict[str, Path]:
    """hP against hR (Fig. 7 of Snæbjarnarson et al. 2025 [1]), one panel per dataset × prompt, one marker per
    model, with bootstrap interval bars (when ``table`` is a leaderboard with intervals) and
    iso-hF curves. Written as ``path`` in each of ``formats``; returns ``{format: path}``."""
    return _save(hp_hr_figure(table), path, formats)


def _row_labels(lb: pl.DataFrame) -> list[str]:
    varying = [k for k in GROUP_KEYS if k in lb.columns and lb[k].n_unique() > 1] or \
              [k for k in GROUP_KEYS if k in lb.columns][:1]
    return [" · ".join(str(r[k]) for k in varying) for r in lb.iter_rows(named=True)]


def ranks_figure(table: pl.DataFrame, measures=RANK_MEASURES):
    """The figure of :func:`plot_ranks` (``table``: a leaderboard, or samples)."""
    plt = _plt()
    lb = _as_leaderboard(table)
    measures = [m for m in measures if m in lb.columns and lb[m].fill_nan(None).null_count() < lb.height]
    labels = _row_labels(lb)
    models = lb["model"].n_unique() if "model" in lb.columns else 1
    if lb.height < 2:
        fig, ax = plt.subplots(figsize=(1.2 + 0.7 * len(measures), 3.2))
        row = lb.row(0, named=True) if lb.height else {}
        x = np.arange(len(measures))
        vals = [row.get(m) for m in measures]
        ax.plot(x, [np.nan if _missing(v) else v for v in vals], "o", color="C0")
        for k, m in enumerate(measures):
            e = _err(row, m)
            if e:
                ax.errorbar(k, row[m], yerr=e, color="C0", capsize=3, lw=1)
        ax.set_xticks(x, measures, rotation=30, ha="right")
        ax.set_ylim(0, 1.02)
        ax.set_ylabel("score")
        ax.set_title(f"{labels[0] if labels else ''}: one leaderboard row, nothing to rank — its score per measure",
                     fontsize=9)
        ax.grid(alpha=0.3, axis="y")
        fig.tight_layout()
        return fig
    filled = lb.with_columns([pl.col(m).fill_nan(None) for m in measures])
    ranks = filled.select([pl.col(m).rank(method="min", descending=True).alias(m) for m in measures])
    fig, ax = plt.subplots(figsize=(2.2 + 0.8 * len(measures), 1.6 + 0.3 * max(lb.height, 4)))
    x = np.arange(len(measures))
    cmap = plt.get_cmap("tab20" if lb.height > 10 else "tab10")
    for i, (lab, row) in enumerate(zip(labels, ranks.iter_rows())):
        y = [np.nan if v is None else v for v in row]
        # small offsets keep tied rows' lines apart; the legend names them (labels beside the lines overlap on ties)
        off = 0.12 * (i - (lb.height - 1) / 2) / max(lb.height - 1, 1)
        ax.plot(x, [v + off for v in y], marker="o", ms=4, lw=1.2, color=cmap(i % cmap.N), label=lab)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    ax.set_xticks(x, measures, rotation=30, ha="right")
    ax.set_yticks(range(1, lb.height + 1))
    ax.set_ylim(lb.height + 0.5, 0.5)
    ax.set_ylabel("rank (1 = best)")
    what = ("model × dataset × prompt rows" if models > 1 else
            f"dataset × prompt settings of {lb['model'][0]}" if "model" in lb.columns else "rows")
    ax.set_title(f"Rank of the {what} under each measure (crossing lines: the measures disagree)", fontsize=9)
    ax.grid(alpha=0.3, axis="x")
    fig.tight_layout()
    return fig


def plot_ranks(table: pl.DataFrame, path: str | os.PathLike, measures=RANK_MEASURES,
               formats=FIGURE_FORMATS) -> dict[str, Path]:
    """Rank (1 = best) of every leaderboard row under each measure (Fig. 5 of Snæbjarnarson et al. 2025 [1];
    module docstring). Written as ``path`` in each of ``formats``; returns ``{format: path}``."""
    return _save(ranks_figure(table, measures), path, formats)


def _distinct_file_names(files: list[str]) -> dict[str, str]:
    """Each file as the shortest tail of its path that tells it from the others (the file
    name when names differ; ``fish-easy/…/a.jsonl`` style tails when several files share it)."""
    parts = {f: Path(f).parts for f in files}
    shown: dict[str, str] = {}
    for f, p in parts.items():
        n = 1
        while n < len(p) and any(q != p and q[-n:] == p[-n:] for q in parts.values()):
            n += 1
        shown[f] = "/".join(p[-n:])
    return shown
