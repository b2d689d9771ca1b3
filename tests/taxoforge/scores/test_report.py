"""The paper-ready outputs: figures faceted by dataset × prompt in PNG (300 dpi), PDF and
SVG, deterministic bytes; a rank figure that shows something for one model; the LaTeX and
Markdown leaderboards with their intervals."""

from __future__ import annotations

import struct
import xml.etree.ElementTree as ET

import numpy as np
import polars as pl
from pylatexenc.latexwalker import LatexWalker

from taxoforge.scores.confidence import BootstrapConfig
from taxoforge.scores.leaderboard import leaderboard
from taxoforge.scores.report import (hp_hr_figure, leaderboard_latex, leaderboard_markdown, plot_hp_hr, plot_ranks,
                                     ranks_figure)
from taxoforge.scores.text_measures import TEXT_MEASURES


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


def _png_dpi(data: bytes) -> float:
    """Dots per inch from the PNG's pHYs chunk."""
    i = data.index(b"pHYs")
    ppm_x, _, unit = struct.unpack(">IIB", data[i + 4:i + 13])
    assert unit == 1  # metres
    return ppm_x * 0.0254


def test_hp_hr_is_faceted_by_dataset_and_prompt_in_three_formats(tmp_path):
    lb = leaderboard(_samples(), ci=BootstrapConfig(n_resamples=200))
    paths = plot_hp_hr(lb, tmp_path / "hp_vs_hr.png")
    assert set(paths) == {"png", "pdf", "svg"}
    png, pdf, svg = (paths[k].read_bytes() for k in ("png", "pdf", "svg"))
    assert png[:4] == b"\x89PNG" and round(_png_dpi(png)) == 300 and len(png) > 50_000
    assert pdf[:5] == b"%PDF-" and len(pdf) > 10_000
    assert ET.fromstring(svg).tag.endswith("svg") and len(svg) > 20_000
    fig = hp_hr_figure(lb)
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert sorted(ax.get_title() for ax in panels) == ["birds · mc", "birds · open", "fish · mc", "fish · open"]
    # one marker per model in every panel, with interval bars
    for ax in panels:
        assert len(ax.containers) == 3  # errorbar containers: one per model
    legend = fig.legends[0]
    assert [t.get_text() for t in legend.get_texts()] == ["m1", "m2", "m3"]


def test_figures_are_the_same_bytes_for_the_same_results(tmp_path):
    lb = leaderboard(_samples(), ci=None)
    a = plot_ranks(lb, tmp_path / "a" / "ranks")
    b = plot_ranks(lb, tmp_path / "b" / "ranks")
    for fmt in ("png", "pdf", "svg"):
        assert a[fmt].read_bytes() == b[fmt].read_bytes(), fmt


def test_the_rank_figure_of_one_model_ranks_its_settings():
    lb = leaderboard(_samples(models=("only",)), ci=None)
    fig = ranks_figure(lb)
    ax = fig.axes[0]
    lines = [ln for ln in ax.get_lines() if len(ln.get_xdata()) > 1]
    assert len(lines) == 4  # dataset × prompt settings of the one model
    ranks = np.array([np.round(ln.get_ydata()) for ln in lines])
    assert len(np.unique(ranks)) > 1 and not all(len(set(r)) == 1 for r in ranks)  # not flat
    assert "settings of only" in ax.get_title()
    assert sorted(t.get_text() for t in ax.get_legend().get_texts()) == [
        "birds · mc", "birds · open", "fish · mc", "fish · open"]


def test_a_single_row_shows_its_values_instead_of_ranks():
    lb = leaderboard(_samples(models=("only",), datasets=("d",), prompts=("p",)), ci=BootstrapConfig(n_resamples=200))
    ax = ranks_figure(lb).axes[0]
    assert "nothing to rank" in ax.get_title()
    values = ax.get_lines()[0].get_ydata()
    assert np.nanmax(values) <= 1 and len(values) == len([t for t in ax.get_xticklabels()])


def test_latex_table_escapes_names_and_parses():
    s = _samples(models=("gpt-4o_mini & co",), datasets=("50%_birds",), prompts=("p#1",))
    lb = leaderboard(s, ci=BootstrapConfig(n_resamples=200))
    info = {"taxonomy": "inat_2024", "citation": {"ref": "inat_2024@abc", "store": "s3://bucket/x_y", "published": True},
            "mapping_config_id": "c1", "confidence_intervals": {"level": 0.95, "n_resamples": 200, "seed": 0}}
    tex = leaderboard_latex(lb, info)
    assert r"gpt-4o\_mini \& co & 50\%\_birds & p\#1 &" in tex
    assert r"inat\_2024@abc in the store s3://bucket/x\_y" in tex
    assert r"{\scriptsize [" in tex and tex.count(r"\\") >= 2
    body = tex[tex.index(r"\begin{table}"):]
    LatexWalker(body, tolerant_parsing=False).get_latex_nodes()  # well formed: every group closed


def test_markdown_shows_intervals_and_the_citation():
    lb = leaderboard(_samples(models=("m",), datasets=("d",), prompts=("p",)), ci=BootstrapConfig(n_resamples=200))
    row = lb.row(0, named=True)
    md = leaderboard_markdown(lb, {"taxonomy": "t", "citation": {"ref": "t@v1", "store": "/s", "published": True},
                                   "confidence_intervals": {"level": 0.95, "n_resamples": 200, "seed": 0,
                                                            "method": "percentile"}})
    assert f"{row['hF']:.3f} ({row['hF_ci_low']:.3f}–{row['hF_ci_high']:.3f})" in md
    assert "`t@v1` in the store `/s`" in md and "bootstrap 95 % interval" in md
    assert "hF_ci_low" not in md  # shown inline, not as columns
