"""The softmax temperature: the near-tie test of the calibration is the vote's, and the
shipped temperature of the string ratio follows the calibration rule on real names."""

from __future__ import annotations

import numpy as np
import pytest

from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex
from taxoforge.scores.mapping.calibration import (
    TEMPERATURE_GRID,
    calibrate_temperature,
    near_tie_passes,
    one_edit_typos,
)
from taxoforge.scores.mapping.config import CALIBRATED_TEMPERATURES
from taxoforge.trees.taxonomy import Taxonomy


def test_near_tie_passes_is_the_votes_test(inat_like):
    tax = Taxonomy.of(inat_like)
    rng = np.random.default_rng(0)
    grid = TEMPERATURE_GRID[::100]
    scores = [np.sort(rng.uniform(0.3, 0.9, 10))[::-1] for _ in range(50)]
    cfg = MappingConfig()
    got = np.stack([near_tie_passes(s, cfg.thr_top2, cfg.thr_topk, grid) for s in scores])
    for j, T in enumerate(grid):
        stages = TaxonomyIndex(tax, MappingConfig(temperature=float(T))).stages
        assert [stages.near_tie(s) for s in scores] == got[:, j].tolist()
    assert got.any() and not got.all()
    assert near_tie_passes(np.full(10, 0.5), 0.001, 0.0015).all()  # exact ties pass at any temperature


def test_one_edit_typos_differ_by_one_edit():
    from rapidfuzz.distance import Levenshtein, OSA

    names = ["golden retriever", "tench", "Aloe vera", "abc"]
    typos = one_edit_typos(names, seed=3)
    assert len(typos) == 3
    for n, t in zip([x for x in names if len(x) > 4], typos):
        assert OSA.distance(n, t) == 1 or Levenshtein.distance(n, t) == 1


def test_shipped_ratio_temperature_follows_the_rule_on_imagenet_names(imagenet_tree):
    """Calibrating again on the ImageNet-1k class names, with typos of another seed, gives
    the shipped temperature of the string ratio (within a grid step or two)."""
    tax = Taxonomy.of(imagenet_tree)
    ix = TaxonomyIndex(tax)
    labels = sorted({x for x in tax._labels if x})
    got = calibrate_temperature(ix, one_edit_typos(labels, seed=1))
    shipped = CALIBRATED_TEMPERATURES["ratio"]
    assert ix.config.temperature == shipped
    assert got["temperature"] == pytest.approx(shipped, rel=0.05)
    assert got["reaching_vote"] > 500 and got["share_passing"] <= 0.01
