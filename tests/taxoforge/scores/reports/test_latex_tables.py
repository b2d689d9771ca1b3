"""The LaTeX tables compile, as written, in a 10 pt two-column article without an overfull box
or a float taller than the page — one column wide and page wide, with the names harnesses
really write (``lmms-lab__llava-onevision-qwen2-72b-ov-chat``), several datasets and prompts,
all pairs or each against a reference — and say what they show: names escaped and shortened,
the ranking measure in the caption, the digest in a note inside the float, bold for ties with
the best. The compile tests run pdflatex (Debian's texlive-latex-base and
texlive-latex-recommended, ``scripts/install-system-deps.sh``) and skip without it."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import polars as pl
import pytest
from pylatexenc.latexwalker import LatexWalker

from taxoforge.scores.reports.latex_tables import comparison_latex, leaderboard_latex
from taxoforge.scores.reports.leaderboard import leaderboard
from taxoforge.scores.statistics.compare import Comparison, compare_systems
from taxoforge.scores.statistics.confidence import BootstrapConfig
from tests.taxoforge.scores.reports.test_tables import _samples

HARNESS_NAMES = ("lmms-lab__llava-onevision-qwen2-72b-ov-chat", "Qwen__Qwen2-VL-72B-Instruct",
                 "OpenGVLab__InternVL2_5-78B-MPO", "llava-hf__llava-v1.6-mistral-7b-hf")
DOCUMENT = r"""\documentclass[10pt,twocolumn]{article}
\usepackage[T1]{fontenc}
\usepackage{booktabs}
\begin{document}
Text.
\input{table}
\end{document}
"""
INFO = {"taxonomy": "inaturalist", "citation": {"ref": "sha256:" + "8d07926004" * 6 + "abcd"},
        "mapping_config_id": "bb5e88fc8f58", "rank_by": "hF",
        "confidence_intervals": {"level": 0.95, "n_resamples": 999, "seed": 0, "method": "percentile"}}


def compile_log(tex: str, tmp_path) -> str:
    """pdflatex's log of ``tex`` inside a 10 pt two-column article (skips without pdflatex)."""
    if shutil.which("pdflatex") is None:
        pytest.skip("no pdflatex (texlive-latex-base and texlive-latex-recommended: scripts/install-system-deps.sh)")
    (tmp_path / "table.tex").write_text(tex, encoding="utf-8")
    (tmp_path / "doc.tex").write_text(DOCUMENT, encoding="utf-8")
    res = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    log = (tmp_path / "doc.log").read_text(encoding="latin-1")
    assert res.returncode == 0, log[-3000:]
    return log


def worst_overfull(log: str) -> float:
    """The widest overfull box of a log, in points (0 without one)."""
    return max([float(x) for x in re.findall(r"Overfull \\[hv]box \(([\d.]+)pt too", log)], default=0.0)


@pytest.fixture(scope="module")
def study():
    """Four harness-named models on three datasets × prompts, with intervals."""
    s = _samples(models=HARNESS_NAMES, datasets=("vlm4bio-fish-easy", "vlm4bio-fish-prompting"),
                 prompts=("contextual", "cot"), n=40)
    s = s.with_columns(pl.col("correct").alias("_c"), pl.lit(2.0).alias("mistake_severity"),
                       pl.lit(1).alias("depth_lca"), pl.lit(3).alias("tree_distance"),
                       pl.Series("id", [str(i % 40) for i in range(s.height)]))
    s = s.with_columns(pl.when(pl.col("correct")).then(0.0).otherwise(pl.col("mistake_severity"))
                       .alias("mistake_severity")).drop("_c")
    return s, leaderboard(s, ci=BootstrapConfig(n_resamples=300))


@pytest.mark.parametrize("wide", [False, True])
def test_the_leaderboard_fits_a_10pt_two_column_page(study, wide, tmp_path):
    _s, lb = study
    tex = leaderboard_latex(lb, INFO, wide=wide)
    log = compile_log(tex, tmp_path)
    assert worst_overfull(log) <= 1.0, re.findall(r"Overfull.*", log)
    assert "Float too large" not in log
    assert ("\\begin{table*}" in tex) == wide
    # the digest is a note inside the float, never a footnote outside it
    assert "\\footnotetext" not in tex and "content digest" in tex[:tex.index("\\end{table")]
    # names lose the harness's organisation prefix, and say so in a comment
    assert "lmms-lab" not in tex[tex.index("\\begin{tabular}"):]
    assert "% display name: lmms-lab__llava-onevision-qwen2-72b-ov-chat -> llava-onevision-qwen2-72b-ov-chat" in tex
    assert "Models ranked by hF within each block" in tex


@pytest.mark.parametrize("reference", [None, "llava-hf__llava-v1.6-mistral-7b-hf"])
@pytest.mark.parametrize("wide", [False, True])
def test_the_comparison_fits_a_10pt_two_column_page(study, reference, wide, tmp_path):
    s, _lb = study
    systems = {m: s.filter(pl.col("model") == m) for m in HARNESS_NAMES}
    t = compare_systems(systems, n_resamples=200, reference=reference)
    cmp = Comparison(t, {}, {"n_resamples": 200, "level": 0.95, "seed": 0, "alpha": 0.05, "reference": reference})
    tex = comparison_latex(cmp, wide=wide)
    log = compile_log(tex, tmp_path)
    assert worst_overfull(log) <= 1.0, re.findall(r"Overfull.*", log)
    assert "Float too large" not in log  # a tall comparison continues in another float
    if reference:
        assert "B: llava-v1.6-mistral-7b-hf" in tex and tex.count("\\begin{table") == 1
    else:
        assert "Table~\\ref{tab:comparison" in tex or tex.count("\\begin{table") == 1


def test_names_are_escaped_and_the_caption_names_the_ranking(tmp_path):
    s = _samples(models=("gpt-4o_mini & co",), datasets=("50%_birds",), prompts=("p#1",))
    lb = leaderboard(s, ci=BootstrapConfig(n_resamples=200))
    info = {"taxonomy": "inat_2024", "citation": {"ref": "inat_2024@abc", "store": "s3://bucket/x_y",
                                                  "published": True, "content_sha256": "ab" * 32},
            "mapping_config_id": "c1", "confidence_intervals": {"level": 0.95, "n_resamples": 200, "seed": 0},
            "rank_by": "mistake_severity"}
    tex = leaderboard_latex(lb, info)
    assert r"gpt-4o\_mini \& co" in tex and r"50\%\_birds" in tex
    assert r"inat\_2024@abc}$^\dagger$" in tex.replace("\\allowbreak ", "") and "\\allowbreak" in tex  # breakable
    assert "content digest \\texttt{sha256:" + "ab" * 32 + "}" in tex.replace("\\allowbreak ", "")
    assert "store \\texttt{s3://bucket/x\\_y}" in tex.replace("\\allowbreak ", "")
    assert "ranked by mistake severity (lowest first)" in tex
    LatexWalker(tex[tex.index(r"\begin{table}"):], tolerant_parsing=False).get_latex_nodes()
    assert worst_overfull(compile_log(tex, tmp_path)) == 0.0


def test_bold_marks_the_best_and_those_tied_with_it_by_the_ranking_measure():
    s = _samples(prompts=("p",))
    s = s.with_columns(pl.Series("id", [str(i % 30) for i in range(s.height)]))
    lb = leaderboard(s, ci=BootstrapConfig(n_resamples=300))
    tex = leaderboard_latex(lb, {"taxonomy": "t", "citation": {"ref": "t@v1"}})
    birds = tex.split("\\itshape birds")[1].split("\\midrule")[0]
    tied = lb.filter((pl.col("dataset") == "birds") & pl.col("tied_with_best")).height
    assert birds.count(r"\textbf{") == tied >= 1
    assert "bold: the best and every model not significantly below it" in tex
    acc = leaderboard(s, ci=BootstrapConfig(n_resamples=300), rank_by="accuracy")
    tex = leaderboard_latex(acc, {"taxonomy": "t", "citation": {"ref": "t@v1"}, "rank_by": "accuracy"})
    best = acc.filter((pl.col("dataset") == "birds") & (pl.col("rank") == 1)).row(0, named=True)
    assert f"\\textbf{{{100 * best['accuracy']:.1f}}}" in tex


def test_a_display_name_map_wins_and_clashing_short_names_stay_whole():
    s = _samples(models=("org__m", "other__m", "Qwen__Qwen2-VL-72B-Instruct"), datasets=("d",), prompts=("p",))
    lb = leaderboard(s, ci=None)
    tex = leaderboard_latex(lb, {"taxonomy": "t", "citation": {"ref": "t@v1"}},
                            names={"Qwen__Qwen2-VL-72B-Instruct": "Qwen2-VL 72B"})
    body = tex[tex.index("\\begin{tabular}"):]
    assert "Qwen2-VL 72B" in body and "org\\_\\_m" in body and "other\\_\\_m" in body


def test_every_row_of_a_long_leaderboard_is_printed_over_several_floats(tmp_path):
    models = tuple(f"lmms-lab__model-number-{i:02d}-with-a-long-name" for i in range(24))
    s = _samples(models=models, datasets=("d1", "d2"), prompts=("p",), n=10)
    lb = leaderboard(s, ci=BootstrapConfig(n_resamples=100))
    tex = leaderboard_latex(lb, INFO)
    log = compile_log(tex, tmp_path)
    assert "Float too large" not in log and worst_overfull(log) <= 1.0
    assert tex.count("\\begin{table}") >= 2 and "Table~\\ref{tab:leaderboard}, continued." in tex
    # every row printed, once per dataset (and each name twice in the comment on shortened names)
    assert np.all([tex.count(f"model-number-{i:02d}") == 2 + 2 for i in range(24)])
