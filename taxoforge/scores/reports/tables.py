"""Tables people can read and papers can print: the leaderboard and a comparison as
Markdown, LaTeX and CSV (figures: :mod:`taxoforge.scores.reports.figures`).

* :func:`leaderboard_markdown` — the compact leaderboard (model, dataset, prompt, rank within
  the dataset × prompt group, n, accuracy, hP, hR, hF, mistake severity with their bootstrap
  intervals, abstained %), then the answered-only measures and how bad the mistakes are, the
  taxonomy it cites, the mapping configuration, what the averages are, the rows per file and
  the bad rows. Every column of the full leaderboard is in ``leaderboard.csv`` / ``.parquet``.
* :func:`~taxoforge.scores.reports.latex_tables.leaderboard_latex` — the leaderboard as
  ``booktabs`` tables that fit the page as written, one column wide and page wide
  (:mod:`taxoforge.scores.reports.latex_tables`).
* :func:`comparison_markdown`, :func:`~taxoforge.scores.reports.latex_tables.comparison_latex`
  — ``taxoforge compare``'s table.
* :func:`leaderboard_csv` — the full leaderboard as CSV, cells safe in spreadsheets
  (:func:`taxoforge.files.tables.csv_text`).

**Names are text, never markup**: model, dataset and prompt names are escaped for Markdown
(and the HTML it renders to; :func:`taxoforge.markdown.markdown_escape`), for LaTeX
(:func:`taxoforge.latex.latex_escape`) and for spreadsheets (a leading apostrophe before
``= + - @``: :func:`taxoforge.files.tables.csv_text`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from taxoforge.files.tables import csv_text
from taxoforge.markdown import markdown_escape, markdown_table
from taxoforge.scores.reports.latex_tables import comparison_latex, leaderboard_latex, short_citation
from taxoforge.scores.reports.leaderboard import GROUP_KEYS, leaderboard

__all__ = ["compact_leaderboard", "column_header", "leaderboard_markdown", "leaderboard_latex", "leaderboard_csv",
           "model_summary", "comparison_markdown", "granularity_markdown", "comparison_latex", "write_comparison",
           "short_citation", "COMPACT_MEASURES", "INTERVAL_MEASURES", "COMPARISON_FILES"]

STAGE_ORDER = ("exact", "linked_name", "contains", "ngram4", "ngram3", "ngram2", "vote", "top1", "empty", "abstention",
               "none_of_the_above")
#: The measures of the compact leaderboard (Markdown and LaTeX), after the keys and n.
COMPACT_MEASURES = ("accuracy", "hP", "hR", "hF", "mistake_severity", "abstained_pct")
#: The measures shown with their bootstrap interval.
INTERVAL_MEASURES = ("accuracy", "hP", "hR", "hF", "mistake_severity")
_PCT = {"accuracy", "balanced_accuracy", "exact_match", "contained", "rouge1_recall", "bleu2", "meteor", "HCA", "MTA",
        "harness_accuracy", "harness_agreement"}
_HEADERS = {"accuracy": "acc. (%)", "mistake_severity": "severity", "abstained_pct": "abst. (%)",
            "hP_answered": "hP", "hR_answered": "hR", "hF_answered": "hF", "balanced_accuracy": "bal. acc. (%)",
            "lca_depth_mean": "LCA depth", "lca_depth_median": "median", "tree_distance_mean": "distance",
            "tree_distance_median": "median", "mistake_severity_median": "median",
            "harness_agreement": "harness agr. (%)"}


def _is_pct(col: str) -> bool:
    return col in _PCT or col.startswith("accuracy_")


def _num(col: str, v) -> str:
    if col.endswith("_pct"):
        return f"{v:.1f}"
    if col in ("mistake_severity", "mistake_severity_median", "lca_depth_mean", "lca_depth_median",
               "tree_distance_mean", "tree_distance_median") or col.startswith("hdist@"):
        return f"{v:.2f}"
    return f"{100 * v:.1f}" if _is_pct(col) else f"{v:.3f}"


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and np.isnan(v))


def _cell(row: dict, c: str, interval: str = "({lo}–{hi})") -> str:
    """A number with its interval when it has one; text as it is (escaped by the caller)."""
    v = row.get(c)
    if _missing(v):
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer)):
        return f"{v:,}"
    if not isinstance(v, float):
        return str(v)
    cell = _num(c, v)
    lo, hi = row.get(f"{c}_ci_low"), row.get(f"{c}_ci_high")
    if c in INTERVAL_MEASURES and not _missing(lo) and not _missing(hi):
        cell += " " + interval.format(lo=_num(c, lo), hi=_num(c, hi))
    return cell


def _citation_text(info: dict) -> str:
    cit = info.get("citation") or {}
    ref = cit.get("ref") or info.get("taxonomy_version")
    short, digest = short_citation(info)
    if cit.get("published") and _public_store(cit):
        return f"`{ref}` in the store `{cit['store']}`"
    if cit.get("published"):
        return f"`{ref}` (content hash `{digest}`) in a local snapshot store with no public URL: readers cannot pull it"
    if cit:
        return f"`{short}` (its content hash `{digest}`: not published in a store)"
    return f"`{ref}`"


def _public_store(cit: dict) -> str | None:
    """The store's public URL a citation records; None for a local folder (a run written
    before citations named stores by their public URL may hold its path)."""
    store = cit.get("store")
    return store if isinstance(store, str) and "://" in store else None


def _group_label(row: dict) -> str:
    return " · ".join(str(row[k]) for k in ("dataset", "prompt") if row.get(k) not in (None, ""))


def _vs_best(row: dict) -> str:
    if "rank" not in row or _missing(row.get("rank")):
        return "–"
    if row["rank"] == 1:
        return "best"
    p = row.get("vs_best_p")
    if _missing(p):
        return "–"
    return f"p={p:.3g}" + (" (n.s.)" if p >= 0.05 else "")


def _compact_rows(lb: pl.DataFrame, keys: list[str], measures: list[str], n: str = "n",
                  escape=markdown_escape) -> tuple[list[str], list[list[str]]]:
    header = [*keys, *(["rank"] if "rank" in lb.columns else []), "n",
              *[_HEADERS.get(m, m) for m in measures], *(["vs best"] if "vs_best_p" in lb.columns else [])]
    rows = []
    for r in lb.iter_rows(named=True):
        rows.append([escape(str(r[k])) for k in keys] + ([_cell(r, "rank")] if "rank" in lb.columns else [])
                    + [_cell(r, n)] + [_cell(r, m) for m in measures]
                    + ([_vs_best(r)] if "vs_best_p" in lb.columns else []))
    return header, rows


def column_header(measure: str) -> str:
    """The header of ``measure`` in the compact leaderboard (``accuracy`` → ``acc. (%)``).

    Parameters
    ----------
    measure : str
        A leaderboard column.

    Returns
    -------
    str
        Its header.
    """
    return _HEADERS.get(measure, measure)


def compact_leaderboard(lb: pl.DataFrame, *, markdown: bool = False) -> tuple[list[str], list[list[str]]]:
    """The compact leaderboard, as ``leaderboard.md`` shows it: the group keys, rank, n, each
    measure of :data:`COMPACT_MEASURES` with its bootstrap interval in brackets, and ``vs best``
    (``best``, or the Holm-adjusted p-value of the difference in the ranking measure — hF
    unless the run ranks by another — to the group's best, ``n.s.`` when not significant at 5 %).

    Parameters
    ----------
    lb : polars.DataFrame
        The leaderboard (:func:`taxoforge.scores.reports.leaderboard.leaderboard`).
    markdown : bool
        Escape the group keys (model, dataset, prompt) for Markdown.

    Returns
    -------
    tuple of (list of str, list of list of str)
        The column headers and the rows, every cell as text.
    """
    keys = [k for k in GROUP_KEYS if k in lb.columns]
    measures = [m for m in COMPACT_MEASURES if m in lb.columns]
    if "harness_agreement" in lb.columns and lb["harness_agreement"].null_count() < lb.height:
        measures.append("harness_agreement")  # the file carried the harness's own verdict
    return _compact_rows(lb, keys, measures, escape=markdown_escape if markdown else str)


#: The granularity classes of the compact view, with their Markdown headers.
_GRANULARITY = (("exact", "exact"), ("too_generic", "too generic"), ("too_specific", "too specific"),
                ("near_miss", "near miss"), ("other_branch", "other branch"), ("abstained", "abstained"),
                ("unmapped", "unmapped"))


def granularity_markdown(lb: pl.DataFrame, max_rows: int = 50) -> str:
    """The compact view of the answers' granularity: per model × dataset × prompt, the share (%)
    of its ``n`` answers in each class (:mod:`taxoforge.scores.measures.granularity`); empty
    when the leaderboard has no granularity columns.

    Parameters
    ----------
    lb : polars.DataFrame
        The leaderboard.
    max_rows : int
        Rows shown.

    Returns
    -------
    str
    """
    if "granularity_exact" not in lb.columns:
        return ""
    keys = [k for k in GROUP_KEYS if k in lb.columns]
    header = [*keys, "n", *[f"{h} (%)" for _g, h in _GRANULARITY]]
    rows = []
    for r in lb.iter_rows(named=True):
        n = r.get("n") or 0
        rows.append([markdown_escape(str(r[k])) for k in keys] + [f"{n:,}"]
                    + [("–" if not n else f"{100 * (r.get(f'granularity_{g}') or 0) / n:.1f}") for g, _h in _GRANULARITY])
    return markdown_table(rows[:max_rows], columns=header, format_cell=lambda _c, v: v,
                          right_align=[h for h in header if h not in keys])


def leaderboard_markdown(lb: pl.DataFrame, info: dict | None = None, bad_rows: pl.DataFrame | None = None,
                         max_rows: int = 50) -> str:
    """The leaderboard as Markdown (module docstring).

    Parameters
    ----------
    lb : polars.DataFrame
        The leaderboard (:func:`taxoforge.scores.reports.leaderboard.leaderboard`).
    info : dict, optional
        The run's info: citation, mapping configuration, counts.
    bad_rows : polars.DataFrame, optional
        The rows not scored (the first ten are listed).
    max_rows : int
        Rows of each table shown.

    Returns
    -------
    str
    """
    info = info or {}
    keys = [k for k in GROUP_KEYS if k in lb.columns]
    lines = ["## Leaderboard", ""]
    if info:
        cfg = info.get("mapping_config", {})
        lines += [f"Taxonomy **{markdown_escape(str(info.get('taxonomy')))}**, cited as {_citation_text(info)}, "
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
    header, rows = compact_leaderboard(lb, markdown=True)
    lines.append(markdown_table(rows[:max_rows], columns=header, format_cell=lambda _c, v: v,
                                right_align=[h for h in header if h not in keys]))
    if len(rows) > max_rows:
        lines.append(f"\n… {len(rows) - max_rows} more rows")
    ci = info.get("confidence_intervals") or {}
    rank_by = {"mistake_severity": "mistake severity (lowest first)"}.get(info.get("rank_by"), info.get("rank_by") or "hF")
    lines += ["", f"Models are ranked by {rank_by} within one dataset × prompt only. hF is the harmonic mean of mean hP and "
              "mean hR (the Taxonomy-Aware Evaluation of VLMs, eq. 3); the mean of the per-answer hF is "
              "`hF_pairs` in leaderboard.csv. An abstention is scored as the root (hP = 1, hR = 1/(depth+1)). "
              "Severity: mean height of the lowest common ancestor of a wrong answer and the truth (Bertinetto et "
              "al., Making Better Mistakes, CVPR 2020), over wrong answers; lower is better."
              + (f" In brackets: bootstrap {100 * ci.get('level', 0.95):.0f} % interval ({ci.get('method')}, "
                 f"{ci.get('n_resamples')} resamples, seed {ci.get('seed')}). `vs best`: Holm-adjusted paired "
                 f"test of the {rank_by} difference to the group's best on their shared items; n.s. = not "
                 "significant at 5 %." if ci.get("n_resamples") else "")
              + f" All {len(lb.columns)} columns: leaderboard.csv / leaderboard.parquet."]
    if "hF_answered" in lb.columns and "abstained" in lb.columns and (lb["abstained"].fill_null(0) > 0).any():
        ans = [m for m in ("hP_answered", "hR_answered", "hF_answered", "abstained_pct") if m in lb.columns]
        h2, r2 = _compact_rows(lb.drop("rank", "vs_best_p", strict=False), keys, ans,
                               n="answered" if "answered" in lb.columns else "n")
        lines += ["", "### Over answered rows only (abstentions left out)", "",
                  markdown_table(r2[:max_rows], columns=h2, format_cell=lambda _c, v: v,
                                 right_align=[h for h in h2 if h not in keys]),
                  "", "n: the answered rows (the leaderboard's n less its abstentions); abst. (%): of the "
                  "leaderboard's n."]
    gran = granularity_markdown(lb, max_rows)
    if gran:
        lines += ["", "### Granularity of the answers", "", gran, "",
                  "Of each group's n answers: exact (the ground-truth node), too generic (an ancestor of it: right "
                  "but less specific), too specific (a descendant), near miss (below the truth's parent: a "
                  "sibling), other branch (meeting the truth higher up), abstained, unmapped (naming no node). "
                  "Counts: the `granularity_*` columns of leaderboard.csv."]
    mist = [m for m in ("mistakes", "lca_depth_mean", "lca_depth_median", "tree_distance_mean",
                        "tree_distance_median", "mistake_severity", "mistake_severity_median", "balanced_accuracy")
            if m in lb.columns] + [c for c in lb.columns if c.startswith("hdist@")]
    if "mistakes" in mist:
        h3, r3 = _compact_rows(lb.drop("rank", "vs_best_p", "mistake_severity_ci_low", "mistake_severity_ci_high",
                                       strict=False), keys, mist)
        lines += ["", "### How bad the mistakes are (wrong answers only)", "",
                  markdown_table(r3[:max_rows], columns=h3, format_cell=lambda _c, v: v,
                                 right_align=[h for h in h3 if h not in keys]),
                  "", "LCA depth: how far down the wrong answer and the truth agree (root = 0); distance: edges "
                  "from the answer through their LCA to the truth; severity: height of the LCA in the tree the "
                  "dataset's label set spans (run.json: `heights`). `hdist@k`: mean LCA height of the first k ranked "
                  "answers (correct = 0; an entry naming no node counts the tree's height)."]
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
    for fig, why in (info.get("figures_not_drawn") or {}).items():
        notes.append(f"{fig}: not drawn ({why})")
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
        lines += [""] + [f"- {markdown_escape(f'{Path(str(f)).name}:{ln}')} ({markdown_escape(str(i))}): {r} — "
                         f"{markdown_escape(str(d))}"
                         for f, ln, i, r, d in ex.select("file", "line", "id", "reason", "detail").iter_rows()]
        if bad_rows.height > 10:
            lines.append(f"- … and {bad_rows.height - 10} more (bad_rows.parquet)")
    return "\n".join(lines) + "\n"


def leaderboard_csv(lb: pl.DataFrame) -> str:
    """Every column of the leaderboard as CSV, cells safe in spreadsheets
    (:func:`taxoforge.files.tables.csv_text`).

    Parameters
    ----------
    lb : polars.DataFrame

    Returns
    -------
    str
    """
    return csv_text(lb)


def model_summary(samples: pl.DataFrame) -> pl.DataFrame:
    """One row per model over all its samples, measures as in the leaderboard (no intervals,
    no ranks).

    Parameters
    ----------
    samples : polars.DataFrame

    Returns
    -------
    polars.DataFrame
    """
    return leaderboard(samples, by=("model",), ci=None, ranks=False)


_CMP = {"accuracy": "accuracy (pp)", "hF": "hF", "mistake_severity": "severity"}


def _diff_cell(row: dict, m: str) -> str:
    d = row.get(f"{m}_diff")
    if _missing(d):
        return "–"
    scale, fmt = (100.0, "{:+.1f}") if m == "accuracy" else (1.0, "{:+.3f}" if m == "hF" else "{:+.2f}")
    cell = fmt.format(scale * d)
    lo, hi = row.get(f"{m}_ci_low"), row.get(f"{m}_ci_high")
    if not _missing(lo) and not _missing(hi):
        cell += f" [{fmt.format(scale * lo)}, {fmt.format(scale * hi)}]"
    return cell


def _p_cell(row: dict, m: str) -> str:
    p, ph = row.get(f"{m}_p"), row.get(f"{m}_p_holm")
    if _missing(p):
        return "–"
    return f"{p:.3g}" + (f" ({ph:.3g})" if not _missing(ph) and ph != p else "") + \
        (" *" if row.get(f"{m}_significant") else "")


def comparison_markdown(cmp) -> str:
    """``taxoforge compare``'s table as Markdown: per dataset × prompt and pair, the shared
    items, each measure's values, the difference A − B with its interval and the p-value
    (Holm-adjusted in brackets; * significant).

    Parameters
    ----------
    cmp : taxoforge.scores.statistics.compare.Comparison

    Returns
    -------
    str
    """
    t, st = cmp.table, cmp.settings
    measures = [m for m in _CMP if f"{m}_diff" in t.columns and t[f"{m}_diff"].drop_nulls().len()]
    names = {"accuracy": ("acc. (%)", "(pp)"), "hF": ("hF", ""), "mistake_severity": ("severity", "")}
    header = ["dataset", "prompt", "A", "B", "n"]
    for m in measures:
        name, unit = names[m]
        header += [f"{name} A", f"{name} B", f"A − B {unit}".strip(), f"p ({name.split(' ')[0]})"]
    rows = []
    for r in t.iter_rows(named=True):
        cells = [markdown_escape(str(r[k])) for k in ("dataset", "prompt", "a", "b")] + [f"{r['n']:,}"]
        for m in measures:
            scale = 100.0 if m == "accuracy" else 1.0
            va, vb = r.get(f"{m}_a"), r.get(f"{m}_b")
            f = "{:.1f}" if m == "accuracy" else "{:.3f}" if m == "hF" else "{:.2f}"
            cells += ["–" if _missing(va) else f.format(scale * va), "–" if _missing(vb) else f.format(scale * vb),
                      _diff_cell(r, m), _p_cell(r, m)]
        rows.append(cells)
    lines = ["## Comparison", "", markdown_table(rows, columns=header, format_cell=lambda _c, v: v,
                                                   right_align=header[4:]), "",
             f"Items matched by sample id within one dataset × prompt. Accuracy: exact McNemar test (two-sided "
             f"binomial test of the discordant items). hF (harmonic mean of mean hP and mean hR) and severity (mean "
             f"height of the LCA over each model's wrong answers; lower is better): paired permutation test. "
             f"Brackets after a difference: paired-bootstrap {100 * st['level']:.0f} % interval "
             f"({st['n_resamples']} resamples, seed {st['seed']}); after a p-value: Holm-adjusted over the "
             f"{t.height} comparisons; * = Holm-adjusted p < {st['alpha']}."]
    if cmp.notes:
        lines += [""] + [f"- {markdown_escape(n)}" for n in cmp.notes]
    return "\n".join(lines) + "\n"


#: The files :func:`write_comparison` writes (and only those may be replaced in its folder).
COMPARISON_FILES = ("comparison.md", "comparison.csv", "comparison.tex", "comparison_wide.tex", "comparison.parquet",
                    *(f"comparison{w}.{fmt}" for w in ("", "_wide") for fmt in ("png", "pdf", "svg")))


def write_comparison(cmp, out_dir, *, plots: bool = True, names: dict[str, str] | None = None) -> dict[str, Path]:
    """Write a comparison into ``out_dir``: ``comparison.md``, ``.csv`` (cells safe in
    spreadsheets), ``.tex`` (one column wide) and ``comparison_wide.tex`` (page wide:
    :mod:`~taxoforge.scores.reports.latex_tables`), ``.parquet`` and, with ``plots``, the
    figure (:func:`taxoforge.scores.reports.figures.comparison_figure`) one column wide and
    page wide (``comparison_wide``) as PNG, PDF and SVG; each file written atomically.

    Parameters
    ----------
    cmp : taxoforge.scores.statistics.compare.Comparison
    out_dir : str or os.PathLike
    plots : bool
    names : dict, optional
        Model → display name for the LaTeX tables and the figures
        (:func:`taxoforge.scores.reports.names.read_display_names`).

    Returns
    -------
    dict
        ``{kind: path}``.
    """
    from taxoforge.files import check_output_folder, write_parquet_atomic, write_text_atomic

    out = check_output_folder(out_dir)  # never written through a symbolic link
    out.mkdir(parents=True, exist_ok=True)
    paths = {"md": write_text_atomic(out / "comparison.md", comparison_markdown(cmp)),
             "csv": write_text_atomic(out / "comparison.csv", csv_text(cmp.table)),
             "tex": write_text_atomic(out / "comparison.tex", comparison_latex(cmp, names=names)),
             "tex_wide": write_text_atomic(out / "comparison_wide.tex", comparison_latex(cmp, wide=True, names=names)),
             "parquet": write_parquet_atomic(cmp.table, out / "comparison.parquet")}
    if plots and cmp.table.height:
        from taxoforge.scores.reports.figures import WIDE_WIDTH, comparison_figure, save_figure

        for stem, width in (("comparison", None), ("comparison_wide", WIDE_WIDTH)):
            fig = comparison_figure(cmp.table, names=names, reference=cmp.settings.get("reference"),
                                    **({"width": width} if width else {}))
            for fmt, p in save_figure(fig, out / stem).items():
                paths[f"figure{stem[len('comparison'):]}_{fmt}"] = p
    return paths


def _distinct_file_names(files: list[str]) -> dict[str, str]:
    """Each file as the shortest tail of its path that tells it from the others (the file
    name when names differ; ``fish-easy/…/a.jsonl`` style tails when several files share it);
    linear in the files (:func:`taxoforge.files.paths.distinct_tails`)."""
    from taxoforge.files.paths import distinct_tails

    return distinct_tails(files)
