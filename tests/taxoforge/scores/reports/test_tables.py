"""The paper-ready tables: the compact Markdown and LaTeX leaderboards with their intervals,
ranks within a group, the short citation and the digest in a footnote, names escaped in
LaTeX, Markdown (and the HTML it renders to) and CSV; the comparison's tables."""

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


def test_latex_table_escapes_names_and_parses():
    s = _samples(models=("gpt-4o_mini & co",), datasets=("50%_birds",), prompts=("p#1",))
    lb = leaderboard(s, ci=BootstrapConfig(n_resamples=200))
    info = {"taxonomy": "inat_2024", "citation": {"ref": "inat_2024@abc", "store": "s3://bucket/x_y", "published": True},
            "mapping_config_id": "c1", "confidence_intervals": {"level": 0.95, "n_resamples": 200, "seed": 0}}
    info["citation"]["content_sha256"] = "ab" * 32
    tex = leaderboard_latex(lb, info)
    assert r"gpt-4o\_mini \& co & 50\%\_birds & " in tex
    # the short citation in the caption, the digest in a footnote after the table
    assert r"\texttt{inat\_2024@abc}\protect\footnotemark" in tex
    assert r"\footnotetext{Taxonomy inat\_2024@abc: content digest \texttt{sha256:" + "ab" * 32 + "}" in tex
    assert "sha256:" + "ab" * 32 not in tex[:tex.index(r"\end{table}")]
    assert r", store s3://bucket/x\_y.}" in tex  # the store by its public URL
    local = leaderboard_latex(lb, {**info, "citation": {**info["citation"], "store": None, "local_only": True}})
    assert "in a local snapshot store with no public URL.}" in local
    assert r"{\scriptsize [" in tex and tex.count(r"\\") >= 2
    body = tex[tex.index(r"\begin{table}"):]
    LatexWalker(body, tolerant_parsing=False).get_latex_nodes()  # well formed: every group closed


def test_latex_blocks_per_dataset_and_bold_for_ties_with_the_best():
    lb = leaderboard(_samples(prompts=("p",)), ci=BootstrapConfig(n_resamples=300))
    tex = leaderboard_latex(lb, {"taxonomy": "t", "citation": {"ref": "t@v1"}})
    head, body = tex.split(r"\midrule", 1)
    assert "Model & Dataset &" in head and "Prompt" not in head  # one prompt: not a column
    assert body.count(r"\midrule") == 1  # birds | fish
    birds = body.split(r"\midrule")[0]
    assert birds.count(r"\textbf{") == lb.filter((pl.col("dataset") == "birds") & pl.col("tied_with_best")).height >= 1
    assert "Bold hF: the best of its block" in tex


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
