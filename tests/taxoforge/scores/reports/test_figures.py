"""Figures a paper takes: at most 3.4 in wide at their natural size (7 in page wide), read from
the PNG, PDF and SVG files themselves, with type of 6 pt or more, harness-long model names
wrapped into the legend; one panel per dataset with shared axes and no empty panel, the same
bytes for the same results; ranks only within a dataset × prompt; accuracy per rank, one curve
per model; the comparison's figure with its rows named once and a legend for its markers."""

from __future__ import annotations

import re
import struct
import xml.etree.ElementTree as ET

import numpy as np
import polars as pl

from taxoforge.scores.reports.figure_layout import MAX_WIDE_WIDTH, MAX_WIDTH, MIN_FONT_SIZE
from taxoforge.scores.statistics.confidence import BootstrapConfig
from taxoforge.scores.reports.figures import (COLUMN_WIDTH, comparison_figure, hp_hr_figure, plot_hp_hr, plot_ranks,
                                              rank_accuracy_figure, ranks_figure, save_figure, write_run_figures)
from taxoforge.scores.reports.leaderboard import leaderboard
from tests.taxoforge.scores.reports.test_tables import _samples


def _png_dpi(data: bytes) -> float:
    """Dots per inch from the PNG's pHYs chunk."""
    i = data.index(b"pHYs")
    ppm_x, _, unit = struct.unpack(">IIB", data[i + 4:i + 13])
    assert unit == 1  # metres
    return ppm_x * 0.0254


def _panels(fig):
    return [ax for ax in fig.axes if ax.get_title() and ax.axison]


def test_hp_hr_has_one_panel_per_dataset_at_column_width_in_three_formats(tmp_path):
    lb = leaderboard(_samples(datasets=("birds", "fish", "moths")), ci=BootstrapConfig(n_resamples=200))
    paths = plot_hp_hr(lb, tmp_path / "hp_vs_hr.png")
    png, pdf, svg = (paths[k].read_bytes() for k in ("png", "pdf", "svg"))
    assert png[:4] == b"\x89PNG" and round(_png_dpi(png)) == 300
    width_px = struct.unpack(">I", png[16:20])[0]
    assert width_px <= 300 * COLUMN_WIDTH * 1.05  # a column wide, at 300 dpi
    assert pdf[:5] == b"%PDF-" and ET.fromstring(svg).tag.endswith("svg")
    fig = hp_hr_figure(lb)
    panels = _panels(fig)
    assert sorted(ax.get_title() for ax in panels) == ["birds", "fish", "moths"]
    # shared axes; every panel holds one marker per model × prompt, with interval bars
    assert len({ax.get_xlim() for ax in panels}) == 1 and len({ax.get_ylim() for ax in panels}) == 1
    for ax in panels:
        assert len(ax.containers) == 3 * 2
    # the fourth slot of the 2 × 2 grid holds the legend, not an empty panel
    spare = [ax for ax in fig.axes if not ax.axison]
    assert len(spare) == 1 and spare[0].get_legend() is not None
    assert [t.get_text() for t in spare[0].get_legend().get_texts()] == ["m1", "m2", "m3", "mc", "open"]


HARNESS_NAMES = ("lmms-lab__llava-onevision-qwen2-72b-ov-chat", "Qwen__Qwen2-VL-72B-Instruct",
                 "OpenGVLab__InternVL2_5-78B-MPO", "llava-hf__llava-v1.6-mistral-7b-hf")


def file_widths(paths: dict) -> dict[str, float]:
    """Each written file's width in inches, read from the file: the PNG's pixels over its dpi, the
    PDF's media box, the SVG's width attribute."""
    png, pdf, svg = (paths[k].read_bytes() for k in ("png", "pdf", "svg"))
    box = re.search(rb"/MediaBox \[\s*([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", pdf)
    width_pt = float(re.match(r"([\d.]+)pt", ET.fromstring(svg).get("width")).group(1))
    return {"png": struct.unpack(">I", png[16:20])[0] / _png_dpi(png), "pdf": (float(box[3]) - float(box[1])) / 72,
            "svg": width_pt / 72}


def smallest_type(fig) -> float:
    """The smallest font size of any text the figure shows, in points (after it is laid out)."""
    from matplotlib.text import Text

    from taxoforge.scores.reports.figure_layout import figure_bytes

    figure_bytes(fig, "png", dpi=50)
    return min(t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip())


def test_figures_with_harness_names_fit_a_column_and_the_page(tmp_path):
    """Four models named as lmms-eval names them, three datasets, two prompts: every figure is
    at most 3.4 in wide in every file (7 in for the page-wide one), its type 6 pt or more, and
    the long names are in the legend, shortened and wrapped, not across the panels."""
    s = _samples(models=HARNESS_NAMES, datasets=("vlm4bio-fish-easy", "vlm4bio-fish-prompting", "bird-medium"))
    lb = leaderboard(s, ci=BootstrapConfig(n_resamples=200))
    from taxoforge.scores.measures.breakdowns import correctness_by_level

    rng = np.random.default_rng(0)
    levels = correctness_by_level(s.with_columns(pl.lit(5).alias("depth_gt"), pl.lit(5).alias("depth_pred"),
                                                 pl.Series("depth_lca", rng.integers(0, 6, s.height))))
    paths, not_drawn = write_run_figures(lb, {"correct_by_level": levels}, tmp_path)
    assert not not_drawn
    for name in ("hp_vs_hr", "model_ranks", "rank_accuracy"):
        narrow = {"png": paths[name], "pdf": paths[f"{name}_pdf"], "svg": paths[f"{name}_svg"]}
        wide = {"png": paths[f"{name}_wide"], "pdf": paths[f"{name}_wide_pdf"], "svg": paths[f"{name}_wide_svg"]}
        for fmt, w in file_widths(narrow).items():
            assert w <= MAX_WIDTH, (name, fmt, w)
        for fmt, w in file_widths(wide).items():
            assert MAX_WIDTH < w <= MAX_WIDE_WIDTH, (name, fmt, w)
    for make in (hp_hr_figure, ranks_figure):
        fig = make(lb)
        assert smallest_type(fig) >= MIN_FONT_SIZE
        legend = [t.get_text() for lg in fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
                  for t in lg.get_texts()]
        assert "llava-onevision-qwen2-72b-ov-chat" in [t.replace("\n", "") for t in legend]  # wrapped, whole
        assert max(len(line) for t in legend for line in t.split("\n")) < 30
        assert not any("lmms-lab" in t for t in legend)


def test_figures_are_the_same_bytes_for_the_same_results(tmp_path):
    lb = leaderboard(_samples(), ci=None)
    a = plot_ranks(lb, tmp_path / "a" / "ranks")
    b = plot_ranks(lb, tmp_path / "b" / "ranks")
    for fmt in ("png", "pdf", "svg"):
        assert a[fmt].read_bytes() == b[fmt].read_bytes(), fmt


def test_ranks_are_drawn_within_a_dataset_and_prompt_only():
    lb = leaderboard(_samples(), ci=None)
    fig = ranks_figure(lb)
    panels = _panels(fig)
    assert sorted(ax.get_title() for ax in panels) == ["birds · mc", "birds · open", "fish · mc", "fish · open"]
    for ax in panels:
        lines = [ln for ln in ax.get_lines() if len(ln.get_xdata()) > 1]
        assert len(lines) == 3  # the three models of that group, never another group's rows
        assert max(np.nanmax(ln.get_ydata()) for ln in lines) < 3.5
    # one model per group: nothing to rank, no figure (never a rank across datasets)
    assert ranks_figure(leaderboard(_samples(models=("only",)), ci=None)) is None


def test_accuracy_per_rank_one_curve_per_model_and_the_run_figures(tmp_path):
    from taxoforge.scores.measures.breakdowns import correctness_by_level

    rng = np.random.default_rng(0)
    rows = []
    for m in ("m1", "m2"):
        for d in ("birds", "fish"):
            dg = np.full(40, 5)
            lca = rng.integers(0, 6, 40)
            rows.append(pl.DataFrame({"model": m, "dataset": d, "prompt": "p", "depth_gt": dg, "depth_lca": lca,
                                      "depth_pred": dg, "correct": lca == 5, "hP": (lca + 1) / 6, "hR": (lca + 1) / 6,
                                      "hF": (lca + 1) / 6}))
    table = correctness_by_level(pl.concat(rows))
    fig = rank_accuracy_figure(table)
    panels = _panels(fig)
    assert [ax.get_title() for ax in panels] == ["birds", "fish"]
    assert all(len(ax.get_lines()) == 2 for ax in panels)
    lb = leaderboard(_samples(models=("only",)), ci=None)
    paths, not_drawn = write_run_figures(lb, {"correct_by_level": table}, tmp_path, ("png",))
    assert set(paths) == {"hp_vs_hr", "rank_accuracy", "hp_vs_hr_wide", "rank_accuracy_wide"}
    assert set(not_drawn) == {"model_ranks"}


def test_the_comparison_figure_names_its_rows_once_and_explains_its_markers(tmp_path):
    t = pl.DataFrame({"dataset": ["d", "e"], "prompt": "p", "a": "x", "b": "y", "accuracy_diff": [0.1, -0.05],
                      "accuracy_ci_low": [0.02, -0.1], "accuracy_ci_high": [0.2, 0.0], "accuracy_significant": [True, False],
                      "hF_diff": [0.02, 0.0], "hF_ci_low": [0.0, -0.01], "hF_ci_high": [0.04, 0.01],
                      "hF_significant": [False, False], "mistake_severity_diff": [None, None]})
    fig = comparison_figure(t)
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert len(panels) == 2
    assert sorted(tl.get_text() for tl in panels[0].get_yticklabels()) == ["d · p", "e · p"]
    assert not any(tl.get_visible() and tl.get_text() for tl in panels[1].get_yticklabels())  # named once
    legend = [x.get_text() for x in fig.legends[0].get_texts()]
    assert legend[:2] == ["significant (Holm)", "not significant"]
    # four harness-named models against each other on two groups: one row per pair, the groups in colours
    rows = []
    for g in ("fish", "birds"):
        for i, a in enumerate(HARNESS_NAMES):
            for b in HARNESS_NAMES[i + 1:]:
                rows.append({"dataset": g, "prompt": "p", "a": a, "b": b, "accuracy_diff": 0.05,
                             "accuracy_ci_low": -0.02, "accuracy_ci_high": 0.1, "accuracy_significant": False,
                             "hF_diff": 0.01, "hF_ci_low": -0.01, "hF_ci_high": 0.03, "hF_significant": True,
                             "mistake_severity_diff": -0.2, "mistake_severity_ci_low": -0.5,
                             "mistake_severity_ci_high": 0.1, "mistake_severity_significant": False})
    big = pl.DataFrame(rows)
    fig = comparison_figure(big)
    assert len(fig.axes[0].get_yticks()) == 6 and smallest_type(fig) >= MIN_FONT_SIZE
    assert all(w <= MAX_WIDTH for w in file_widths(save_figure(fig, tmp_path / "cmp")).values())
    ref = comparison_figure(big.filter(pl.col("b") == HARNESS_NAMES[-1]), reference=HARNESS_NAMES[-1])
    assert fig._suptitle is None and "each model − llava-v1.6-mistral-7b-hf" in ref._suptitle.get_text()
