"""The tables people read: the compact Markdown leaderboard with its intervals, ranks within a
group, the answered-only table over the answered rows, the granularity of the answers, names
escaped in Markdown (and the HTML it renders to), LaTeX and CSV (the LaTeX tables' layout:
test_latex_tables.py)."""

from __future__ import annotations

import re

import numpy as np
import polars as pl
import pytest
from pylatexenc.latexwalker import LatexWalker

from taxoforge.scores.statistics.confidence import BootstrapConfig
from taxoforge.scores.reports.leaderboard import leaderboard
from taxoforge.scores.reports.tables import leaderboard_csv, leaderboard_latex, leaderboard_markdown
from taxoforge.scores.measures.text import TEXT_MEASURES


def _samples(models=("m1", "m2", "m3"), datasets=("birds", "fish"), prompts=("open", "mc"), n=30, seed=1):
    rng = np.random.default_rng(seed)
    rows = []
    for m_i, m in enumerate(models):
        for d in datasets:
            for p_i, p in enumerate(prompts):
                hp = np.clip(rng.normal(0.5 + 0.1 * m_i, 0.2, n), 0.05, 1)
                hr = np.clip(rng.normal(0.7 - 0.1 * m_i + 0.1 * p_i, 0.2, n), 0.05, 1)
                rows.append(pl.DataFrame({
                    "model": m, "dataset": d, "prompt": p, "abstained": rng.random(n) < 0.05,
                    "correct": rng.random(n) < hr, "hP": hp, "hR": hr, "hF": 2 * hp * hr / (hp + hr),
                    **{t: rng.random(n) for t in TEXT_MEASURES}}))
    return pl.concat(rows)


def test_markdown_shows_intervals_and_the_citation():
    lb = leaderboard(_samples(models=("m",), datasets=("d",), prompts=("p",)), ci=BootstrapConfig(n_resamples=200))
    row = lb.row(0, named=True)
    md = leaderboard_markdown(lb, {"taxonomy": "t", "citation": {"ref": "t@v1", "store": "/s", "published": True},
                                   "confidence_intervals": {"level": 0.95, "n_resamples": 200, "seed": 0,
                                                            "method": "percentile"}})
    assert f"{row['hF']:.3f} ({row['hF_ci_low']:.3f}–{row['hF_ci_high']:.3f})" in md
    assert "in a local snapshot store with no public URL" in md and "`/s`" not in md  # never a local path
    assert "bootstrap 95 % interval" in md
    public = leaderboard_markdown(lb, {"taxonomy": "t", "citation": {"ref": "t@v1", "store": "https://h/s",
                                                                     "published": True}})
    assert "`t@v1` in the store `https://h/s`" in public
    assert "hF_ci_low" not in md  # shown inline, not as columns
    header = next(line for line in md.splitlines() if line.startswith("| model"))
    assert header.split(" | ")[:6] == ["| model", "dataset", "prompt", "rank", "n", "acc. (%)"]
    assert "exact_match" not in header and "meteor" not in header  # compact: the rest is in the CSV
    assert "### Over answered rows only" in md  # the samples have abstentions


def test_names_are_text_in_markdown_csv_and_latex():
    evil = ["=HYPERLINK(\"http://x\")", "<img src=x onerror=alert(1)>", "[click](http://x)", "@SUM(A1)", "-2+3"]
    s = _samples(models=tuple(evil), datasets=("*bold*",), prompts=("p|q",))
    lb = leaderboard(s, ci=None)
    md = leaderboard_markdown(lb)
    assert re.search(r"(?<!\\)<img", md) is None and "\\<img src=x onerror=alert(1)\\>" in md
    assert "[click](http://x)" not in md and "\\[click\\](http://x)" in md
    assert "\\*bold\\*" in md and "p\\|q" in md
    csv = leaderboard_csv(lb)
    rows = pl.read_csv(csv.encode(), infer_schema=False)
    assert sorted(rows["model"].to_list()) == sorted("'" + m if m[0] in "=+-@" else m for m in evil)
    assert all(not v.startswith(("=", "+", "-", "@")) for v in rows["model"].to_list() + rows["dataset"].to_list())
    assert rows["hF"].cast(pl.Float64).to_list() == pytest.approx(lb["hF"].to_list())  # numbers stay numbers
    tex = leaderboard_latex(lb)
    LatexWalker(tex[tex.index(r"\begin{table}"):], tolerant_parsing=False).get_latex_nodes()
    assert r"\textless{}img" in tex


def test_files_sharing_a_name_are_told_apart_in_the_per_file_table():
    """VLM4Bio writes every result file under the same name in different folders: the
    per-file table shows as much of each path as tells the files apart."""
    from taxoforge.scores.reports.tables import _distinct_file_names

    files = ["/r/fish-easy/classification/selection/c_20.jsonl", "/r/bird-medium/classification/selection/c_20.jsonl",
             "/r/fish-prompting/cot/selection/c_50.jsonl", "/r/other.jsonl"]
    shown = _distinct_file_names(files)
    assert shown["/r/other.jsonl"] == "other.jsonl" and shown[files[2]] == "c_50.jsonl"
    assert shown[files[0]] == "fish-easy/classification/selection/c_20.jsonl"
    assert len(set(shown.values())) == len(files)
    assert all(f.endswith(s) for f, s in shown.items())


def test_the_answered_only_table_counts_the_answered_rows_and_granularity_is_shown():
    s = _samples(models=("m",), datasets=("d",), prompts=("p",), n=40)
    s = s.with_columns(pl.Series("granularity", (["exact", "too_generic", "near_miss", "other_branch"] * 10)[:40]))
    s = s.with_columns(pl.when(pl.col("abstained")).then(pl.lit("abstained")).otherwise(pl.col("granularity"))
                       .alias("granularity"), pl.lit(0.0).alias("mistake_severity"), pl.lit(1).alias("depth_lca"),
                       pl.lit(2).alias("tree_distance"), pl.lit("n1").alias("gt_node"))
    lb = leaderboard(s, ci=None)
    row = lb.row(0, named=True)
    assert row["answered"] == 40 - row["abstained"] > 0 and row["abstained"] > 0
    md = leaderboard_markdown(lb, {"taxonomy": "t", "rank_by": "accuracy"})
    answered = md.split("### Over answered rows only")[1].split("###")[0]
    first = next(line for line in answered.splitlines() if line.startswith("| m |"))
    assert first.split(" | ")[3] == str(row["answered"])  # model, dataset, prompt, then n: the answered rows
    gran = md.split("### Granularity of the answers")[1]
    assert "too generic (%)" in gran and "| m | d | p | 40 |" in gran
    assert sum(row[f"granularity_{g}"] for g in ("exact", "too_generic", "too_specific", "near_miss",
                                                 "other_branch", "abstained", "unmapped")) == row["n"]
    assert "Models are ranked by accuracy within one dataset" in md
