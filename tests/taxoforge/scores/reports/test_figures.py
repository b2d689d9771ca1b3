"""Figures a paper takes: one column wide, one panel per dataset with shared axes and no
empty panel, PNG at 300 dpi, PDF and SVG with the same bytes for the same results; ranks only
within a dataset × prompt; accuracy per rank, one curve per model; the comparison's figure."""

from __future__ import annotations

import struct
import xml.etree.ElementTree as ET

import numpy as np
import polars as pl

from taxoforge.scores.statistics.confidence import BootstrapConfig
from taxoforge.scores.reports.figures import (COLUMN_WIDTH, comparison_figure, hp_hr_figure, plot_hp_hr, plot_ranks,
                                      rank_accuracy_figure, ranks_figure, write_run_figures)
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
    assert set(paths) == {"hp_vs_hr", "rank_accuracy"} and set(not_drawn) == {"model_ranks"}


def test_the_comparison_figure_has_a_panel_per_measure():
    t = pl.DataFrame({"dataset": ["d", "e"], "prompt": "p", "a": "x", "b": "y", "accuracy_diff": [0.1, -0.05],
                      "accuracy_ci_low": [0.02, -0.1], "accuracy_ci_high": [0.2, 0.0], "accuracy_significant": [True, False],
                      "hF_diff": [0.02, 0.0], "hF_ci_low": [0.0, -0.01], "hF_ci_high": [0.04, 0.01],
                      "hF_significant": [False, False], "mistake_severity_diff": [None, None]})
    fig = comparison_figure(t)
    assert len(fig.axes) == 2
    assert sorted(tl.get_text() for tl in fig.axes[0].get_yticklabels()) == ["d · p", "e · p"]
