r"""The leaderboard and a comparison as LaTeX tables that fit the page they go into.

Each comes in two widths, written side by side:

``leaderboard.tex``, ``comparison.tex`` (``table``)
    one column of a two-column paper: the columns a paper shows — accuracy, hF and mistake
    severity (the differences of each, for a comparison) —, one block per dataset × prompt
    under a heading that names it and its ``n``, each value with its bootstrap interval on
    the line below;
``leaderboard_wide.tex``, ``comparison_wide.tex`` (``table*``)
    the page's width: ``n``, accuracy, hP, hR, hF, severity, the abstention rate and the
    share of over-generic answers (the p-values beside the differences, for a comparison).

Both fit as written: names are shown by their display names
(:mod:`taxoforge.scores.reports.names`) and wrapped to the column's width over as many lines
as they need, block headings are wrapped too, and nothing is scaled. The taxonomy is cited
in the caption by its short form (``name@version``) with a dagger; its full digest is a note
under the table, inside the float, in type that breaks between groups of hex digits. A
comment at the top lists the names shortened for print. ``tests`` compile every table in a
10 pt two-column ``article`` with ``pdflatex`` and read the log for overfull boxes.

**Bold** marks, within each block, the best model by the ranking measure (``rank_by``: hF
unless chosen otherwise; the caption says which) and every model not significantly below it
(``tied_with_best``). Requires ``\usepackage{booktabs}``.
"""

from __future__ import annotations

import math

import polars as pl

from taxoforge.latex import latex_escape
from taxoforge.scores.reports.names import display_names, wrap_name

__all__ = ["leaderboard_latex", "comparison_latex", "short_citation", "digest_note", "NAME_WIDTH"]

#: Characters of a name on one line: ``(compact, wide)`` tables.
NAME_WIDTH = {"leaderboard": (18, 26), "comparison": (16, 26)}
#: Characters of a block heading on one line: ``(compact, wide)``.
_HEADING_WIDTH = (44, 96)
_RANK_WORDS = {"hF": "hF", "accuracy": "accuracy", "mistake_severity": "mistake severity (lowest first)"}
_RANK_COLUMN = {"hF": "hF", "accuracy": "accuracy", "mistake_severity": "mistake_severity"}


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def short_citation(info: dict) -> tuple[str, str | None]:
    """``(short, digest)``: the taxonomy as ``name@version`` (a published snapshot) or
    ``name@sha256:<12 hex>`` (cited by content hash), and the full digest to give in a note
    (None when the short form is already exact).

    Parameters
    ----------
    info : dict
        A run's info (``run.json``).

    Returns
    -------
    tuple

    Examples
    --------
    >>> short_citation({"taxonomy": "inaturalist", "citation": {"ref": "sha256:" + "ab" * 32}})
    ('inaturalist@sha256:abababababab', 'sha256:abababababababababababababababababababababababababababababababab')
    >>> short_citation({"taxonomy": "wordnet", "citation": {"ref": "wordnet@4fb31161dc61", "content_sha256": "cd" * 32}})
    ('wordnet@4fb31161dc61', 'sha256:cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd')
    """
    cit = info.get("citation") or {}
    name = info.get("taxonomy") or cit.get("taxonomy") or "taxonomy"
    ref = str(cit.get("ref") or info.get("taxonomy_version") or "")
    digest = cit.get("content_sha256")
    if ref.startswith("sha256:"):
        return f"{name}@sha256:{ref[7:19]}", ref
    return (ref or name), (f"sha256:{digest}" if digest else None)


def _breakable_tt(text: str, every: int = 16) -> str:
    """``\\texttt`` of ``text`` with a permitted break every ``every`` characters."""
    t = str(text)
    return r"\texttt{" + r"\allowbreak ".join(latex_escape(t[i:i + every]) for i in range(0, len(t), every)) + "}"


def digest_note(info: dict) -> str:
    """The note under a table, inside its float: the taxonomy's full digest (and the public
    store it can be pulled from), marked with the caption's dagger; empty without a digest.

    Parameters
    ----------
    info : dict
        A run's info.

    Returns
    -------
    str
    """
    short, digest = short_citation(info)
    if not digest:
        return ""
    cit = info.get("citation") or {}
    store = cit.get("store") if isinstance(cit.get("store"), str) and "://" in cit.get("store", "") else None
    where = (f", store {_breakable_tt(store, 24)}" if store else
             ", in a local snapshot store with no public URL" if cit.get("published") else "")
    return ("\\par\\smallskip\n{\\scriptsize\\raggedright $^\\dagger$\\,Taxonomy "
            f"{_breakable_tt(short, 24)}: content digest {_breakable_tt(digest)}{where}.\\par}}\n")


def _fmt(col: str, v) -> str:
    if col.endswith("_pct"):
        return f"{v:.1f}"
    if col in ("accuracy",):
        return f"{100 * v:.1f}"
    if col.startswith("mistake_severity"):
        return f"{v:.2f}"
    return f"{v:.3f}"


def _name_rows(name: str, width: int) -> list[str]:
    lines = wrap_name(name, width)
    return [latex_escape(lines[0])] + [r"\hspace{0.6em}" + latex_escape(x) for x in lines[1:]]


def _heading(text: str, ncols: int, width: int) -> list[str]:
    lines = wrap_name(text, width)
    return [f"\\multicolumn{{{ncols}}}{{@{{}}l}}{{\\itshape {latex_escape(x)}}} \\\\" for x in lines]


def _block_rows(names: list[str], values: list[str], cis: list[str]) -> list[str]:
    """The physical rows of one entry: its name over as many lines as it needs, the values on
    the first line, the intervals (when there are any) on the second."""
    rows = max(len(names), 2 if cis else 1)
    out = []
    for i in range(rows):
        cells = values if i == 0 else (cis if i == 1 and cis else [""] * len(values))
        out.append(" & ".join([names[i] if i < len(names) else "", *cells]) + r" \\")
    return out


def _groups(lb: pl.DataFrame) -> list[tuple[str, pl.DataFrame]]:
    keys = [k for k in ("dataset", "prompt") if k in lb.columns]
    sort = [*keys, *(["rank"] if "rank" in lb.columns else []), *(["model"] if "model" in lb.columns else [])]
    lb = lb.sort(sort, nulls_last=True) if sort else lb
    if not keys:
        return [("", lb)]
    out = []
    for key, g in lb.group_by(keys, maintain_order=True):
        key = key if isinstance(key, tuple) else (key,)
        out.append((" · ".join(str(x) for x in key if x not in (None, "")), g))
    return out


def _n_text(g: pl.DataFrame) -> str:
    ns = [int(x) for x in g["n"].drop_nulls().to_list()] if "n" in g.columns else []
    if not ns:
        return ""
    lo, hi = min(ns), max(ns)
    return f", n = {lo:,}" if lo == hi else f", n = {lo:,}–{hi:,}"


def _shortened(names: dict[str, str]) -> str:
    changed = [(k, v) for k, v in names.items() if k != v]
    if not changed:
        return ""
    return "".join(f"% display name: {k} -> {v}\n".replace("\n", " ").rstrip() + "\n" for k, v in changed)


#: The page a float must fit: the text height of a 10 pt ``article`` on US letter (A4 is taller),
#: the height of a table row in ``\\footnotesize``, and the characters of a caption's line, in points.
_TEXT_HEIGHT, _ROW, _ENTRY_GAP, _RULES, _SAFETY = 550.0, 9.5, 2.0, 24.0, 30.0
_CAPTION_CHARS = (56, 118)


def _caption_height(text: str, wide: bool) -> float:
    plain = len(text) - 0.8 * text.count("\\")  # commands print shorter than they are written
    return 14.0 + _ROW * math.ceil(plain / _CAPTION_CHARS[1 if wide else 0])


def _floats(env: str, header: list[str], blocks: list[tuple[list[str], list[list[str]]]], caption: str,
            label: str, note: str, wide: bool) -> str:
    """The table as one float, or as several when it is taller than a page: each holds as many
    entries as fit (:data:`_TEXT_HEIGHT`), repeats the header and the heading of the block it
    continues, and says which table it continues; the caption, label and note go with the first."""
    note_h = 30.0 if note else 0.0
    budgets = [_TEXT_HEIGHT - _caption_height(caption, wide) - note_h - _RULES - _SAFETY,
               _TEXT_HEIGHT - _RULES - 2 * _ROW - _SAFETY]
    chunks: list[list[str]] = [[]]
    used = 0.0
    for heading, entries in blocks:
        shown_heading = False
        for entry in entries:
            need = len(entry) * _ROW + _ENTRY_GAP + (0 if shown_heading else len(heading) * _ROW + 6)
            if chunks[-1] and used + need > budgets[min(len(chunks) - 1, 1)]:
                chunks.append([])
                used, shown_heading = 0.0, False
                need = len(entry) * _ROW + _ENTRY_GAP + len(heading) * _ROW + 6
            rows = chunks[-1]
            if not shown_heading:
                if rows:
                    rows.append(r"\midrule")
                rows += heading
                shown_heading = True
            elif rows:
                rows.append(r"\addlinespace[2pt]")
            rows += entry
            used += need
    out = []
    for k, rows in enumerate(chunks):
        top = (f"\\caption{{{caption}}}\n\\label{{{latex_escape(label)}}}\n" if k == 0 else
               f"{{\\footnotesize Table~\\ref{{{latex_escape(label)}}}, continued.\\par}}\\smallskip\n")
        out.append(f"\\begin{{{env}}}[t]\n\\centering\n\\footnotesize\n\\setlength{{\\tabcolsep}}{{3pt}}\n" + top
                   + "\n".join([*header, *rows, r"\bottomrule", r"\end{tabular}"]) + "\n"
                   + (note if k == 0 else "") + f"\\end{{{env}}}\n")
    return "".join(out)


def leaderboard_latex(lb: pl.DataFrame, info: dict | None = None, *, wide: bool = False,
                      names: dict[str, str] | None = None, label: str | None = None) -> str:
    """The leaderboard as a LaTeX ``table`` (``wide``: ``table*``; module docstring).

    Parameters
    ----------
    lb : polars.DataFrame
        The leaderboard (:func:`taxoforge.scores.reports.leaderboard.leaderboard`).
    info : dict, optional
        The run's info (citation, bootstrap, ``rank_by``).
    wide : bool
        The page-wide variant.
    names : dict, optional
        Model → display name (:func:`taxoforge.scores.reports.names.read_display_names`); the
        rest by :func:`~taxoforge.scores.reports.names.short_name`.
    label : str, optional
        The ``\\label`` (default ``tab:leaderboard``, ``tab:leaderboard-wide``).

    Returns
    -------
    str
    """
    info = info or {}
    rank_by = info.get("rank_by") or "hF"
    shown = display_names(lb["model"].to_list() if "model" in lb.columns else [], names)
    cols = [("accuracy", r"Acc.\ (\%)"), ("hF", "hF"), ("mistake_severity", "Severity")]
    if wide:
        cols = [("n", "$n$"), ("accuracy", r"Acc.\ (\%)"), ("hP", "hP"), ("hR", "hR"), ("hF", "hF"),
                ("mistake_severity", "Severity"), ("abstained_pct", r"Abst.\ (\%)"),
                ("too_generic_pct", r"Gen.\ (\%)")]
    lb = lb.with_columns((100 * pl.col("granularity_too_generic") / pl.col("n")).alias("too_generic_pct")) \
        if "granularity_too_generic" in lb.columns else lb
    cols = [(c, h) for c, h in cols if c in lb.columns and lb[c].null_count() < lb.height]
    bold_col = _RANK_COLUMN.get(rank_by, "hF")
    width = NAME_WIDTH["leaderboard"][1 if wide else 0]
    ncols = 1 + len(cols)
    header = [f"\\begin{{tabular}}{{@{{}}l{'r' * len(cols)}@{{}}}}", r"\toprule",
              " & ".join(["Model", *[h for _c, h in cols]]) + r" \\", r"\midrule"]
    blocks = []
    multi_model_blocks = False
    groups = _groups(lb)
    for title, g in groups:
        heading = _heading(title + _n_text(g), ncols, _HEADING_WIDTH[1 if wide else 0]) \
            if title or len(groups) > 1 else []
        several = g.height > 1
        multi_model_blocks |= several
        entries = []
        for row in g.iter_rows(named=True):
            bold = several and bool(row.get("tied_with_best"))
            vals, cis = [], []
            for c, _h in cols:
                v = row.get(c)
                if _missing(v):
                    vals.append("--")
                    cis.append("")
                    continue
                cell = f"{int(v):,}".replace(",", "{,}") if c == "n" else _fmt(c, v)
                if c == bold_col and bold:
                    cell = f"\\textbf{{{cell}}}"
                vals.append(cell)
                lo, hi = row.get(f"{c}_ci_low"), row.get(f"{c}_ci_high")
                cis.append(f"{{\\scriptsize [{_fmt(c, lo)}, {_fmt(c, hi)}]}}" if not (_missing(lo) or _missing(hi))
                           else "")
            model = shown.get(str(row.get("model")), str(row.get("model", "")))
            entries.append(_block_rows(_name_rows(model, width), vals, cis if any(cis) else []))
        blocks.append((heading, entries))
    short, digest = short_citation(info)
    ci = info.get("confidence_intervals") or {}
    caption = (f"Scores against the taxonomy {_breakable_tt(short, 12)}" + ("$^\\dagger$" if digest else "")
               + (f" (mapping configuration \\texttt{{{latex_escape(info['mapping_config_id'])}}})"
                  if info.get("mapping_config_id") else "")
               + ", per dataset $\\cdot$ prompt ($n$: answers scored). Acc.: answers on the ground-truth node; hF: "
               "harmonic mean of mean hP and mean hR; severity: mean height of the lowest common ancestor over wrong "
               "answers (lower is better); abstentions count as the root."
               + (" Abst.: abstentions; Gen.: over-generic answers (an ancestor of the truth)." if wide else "")
               + f" Models ranked by {_RANK_WORDS.get(rank_by, rank_by)} within each block"
               + ("; bold: the best and every model not significantly below it (paired test, Holm-adjusted, "
                  "5\\%)" if multi_model_blocks and "tied_with_best" in lb.columns else "") + "."
               + (f" Below each value: bootstrap {100 * ci.get('level', 0.95):.0f}\\% interval "
                  f"({ci.get('n_resamples')} resamples, seed {ci.get('seed')})." if ci.get("n_resamples") else ""))
    env = "table*" if wide else "table"
    label = label or ("tab:leaderboard-wide" if wide else "tab:leaderboard")
    return ("% requires \\usepackage{booktabs}\n" + _shortened(shown)
            + _floats(env, header, blocks, caption, label, digest_note(info), wide))


def _signed(m: str, v, short: bool = False) -> str:
    """A signed difference; ``short``: one decimal fewer (the intervals of the one-column table)."""
    scale = 100.0 if m == "accuracy" else 1.0
    places = (1 if m == "accuracy" else 3 if m == "hF" else 2) - (1 if short else 0)
    return f"{scale * v:+.{places}f}".replace("-", "$-$")


def comparison_latex(cmp, *, wide: bool = False, names: dict[str, str] | None = None,
                     label: str | None = None) -> str:
    """``taxoforge compare``'s table as a LaTeX ``table`` (``wide``: ``table*`` with the
    p-values): per dataset × prompt, each pair's differences A − B with their paired-bootstrap
    intervals below them, significant ones (Holm) in bold.

    Parameters
    ----------
    cmp : taxoforge.scores.statistics.compare.Comparison
    wide : bool
        The page-wide variant.
    names : dict, optional
        Model → display name.
    label : str, optional
        The ``\\label`` (default ``tab:comparison``, ``tab:comparison-wide``).

    Returns
    -------
    str
    """
    t, st = cmp.table, cmp.settings
    reference = st.get("reference")
    measures = [m for m in ("accuracy", "hF", "mistake_severity") if f"{m}_diff" in t.columns
                and t[f"{m}_diff"].drop_nulls().len()]
    heads = {"accuracy": r"$\Delta$ Acc.\ (pp)", "hF": r"$\Delta$ hF", "mistake_severity": r"$\Delta$ Severity"}
    cols = []
    for m in measures:
        cols.append((m, heads[m]))
        if wide:
            cols.append((f"{m}_p", "$p$"))
    shown = display_names([*t["a"].to_list(), *t["b"].to_list()], names)
    width = NAME_WIDTH["comparison"][1 if wide else 0]
    ncols = 1 + len(cols)
    first = "Model" if reference else "A vs.\\ B"
    header = [f"\\begin{{tabular}}{{@{{}}l{'r' * len(cols)}@{{}}}}", r"\toprule",
              " & ".join([first, *[h for _c, h in cols]]) + r" \\", r"\midrule"]
    blocks = []
    for (d, p), g in t.group_by("dataset", "prompt", maintain_order=True):
        title = " · ".join(x for x in (d, p) if x)
        ns = g["n"].to_list()
        n_text = f", n = {min(ns):,}" + (f"–{max(ns):,}" if max(ns) != min(ns) else "")
        heading = _heading(title + n_text, ncols, _HEADING_WIDTH[1 if wide else 0])
        entries = []
        for r in g.iter_rows(named=True):
            vals, cis = [], []
            for c, _h in cols:
                if c.endswith("_p"):
                    p_ = r.get(c)
                    ph = r.get(c.replace("_p", "_p_holm"))
                    vals.append("--" if _missing(p_) else f"{p_:.3g}".replace("e-", "e$-$"))
                    cis.append("" if _missing(ph) else f"{{\\scriptsize ({ph:.3g})}}".replace("e-", "e$-$"))
                    continue
                d_ = r.get(f"{c}_diff")
                if _missing(d_):
                    vals.append("--")
                    cis.append("")
                    continue
                cell = _signed(c, d_)
                vals.append(f"\\textbf{{{cell}}}" if r.get(f"{c}_significant") else cell)
                lo, hi = r.get(f"{c}_ci_low"), r.get(f"{c}_ci_high")
                cis.append("" if _missing(lo) or _missing(hi) else
                           f"{{\\scriptsize [{_signed(c, lo, not wide)}, {_signed(c, hi, not wide)}]}}")
            a, bb = shown.get(r["a"], r["a"]), shown.get(r["b"], r["b"])
            label_lines = _name_rows(a, width)
            if not reference:
                first = wrap_name(bb, width - 4)[0]
                rest = wrap_name(bb[len(first):], width - 1) if len(bb) > len(first) else []
                label_lines += [r"\hspace{0.6em}vs.\ " + latex_escape(first)] + \
                    [r"\hspace{1.2em}" + latex_escape(x) for x in rest]
            entries.append(_block_rows(label_lines, vals, cis if any(cis) else []))
        blocks.append((heading, entries))
    caption = ("Paired comparison on the items both models answered: differences A $-$ B "
               + (f"(A: each model, B: {latex_escape(shown.get(reference, reference))}) " if reference else "")
               + f"with their paired-bootstrap {100 * st['level']:.0f}\\% intervals below them ({st['n_resamples']} "
               f"resamples, seed {st['seed']}). Bold: significant after Holm's adjustment over the {t.height} "
               f"comparisons (accuracy: exact McNemar test; hF and severity: paired permutation test; "
               f"$\\alpha = {st['alpha']}$); severity: lower is better."
               + (" $p$: the test's p-value, Holm-adjusted below it." if wide else ""))
    env = "table*" if wide else "table"
    label = label or ("tab:comparison-wide" if wide else "tab:comparison")
    return ("% requires \\usepackage{booktabs}\n" + _shortened(shown)
            + _floats(env, header, blocks, caption, label, "", wide))
