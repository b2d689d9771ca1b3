"""Bootstrap intervals of the leaderboard, against the exact bootstrap distribution of tiny
samples (every one of the n^n resamples enumerated by hand): the interval's ends sit at the
2.5 % and 97.5 % points of that distribution. hF's interval is that of the harmonic mean of
mean hP and mean hR over resampled (hP, hR) pairs (docs/method.md#hierarchical-measures), not of the mean per-sample hF."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest

from taxoforge.scores.statistics.confidence import (BootstrapConfig, ci_columns, group_bootstrap, group_intervals,
                                         harmonic_mean_of_means, hf_interval, mean_interval, resampled_means)
from taxoforge.scores.reports.leaderboard import leaderboard
from taxoforge.scores.measures.text import TEXT_MEASURES

CONFIG = BootstrapConfig(n_resamples=20000, seed=11)


def exact_distribution(columns, statistic):
    """Every resample of the rows of ``columns`` (n^n of them, equally likely) → the statistic."""
    n = len(columns[0])
    values = []
    for idx in itertools.product(range(n), repeat=n):
        idx = list(idx)
        values.append(statistic(*[np.asarray(c, dtype=float)[idx] for c in columns]))
    return np.sort(np.asarray(values))


def at_quantile(value: float, dist: np.ndarray, q: float, slack: float = 0.01) -> bool:
    """``value`` is a q-quantile of ``dist`` (up to Monte-Carlo slack): P(X < v) ≤ q ≤ P(X ≤ v)."""
    below = np.mean(dist < value - 1e-12)
    at_or_below = np.mean(dist <= value + 1e-12)
    return below <= q + slack and at_or_below >= q - slack


def test_mean_interval_matches_the_exact_bootstrap_of_a_tiny_sample():
    x = [0.2, 0.5, 0.6, 1.0, 0.9]
    dist = exact_distribution([x], lambda a: a.mean())
    lo, hi = mean_interval(x, CONFIG)
    assert at_quantile(lo, dist, 0.025) and at_quantile(hi, dist, 0.975)
    assert lo < np.mean(x) < hi


def test_hf_interval_is_the_bootstrap_of_the_harmonic_mean_of_the_means():
    hp = [1.0, 1.0, 0.25, 0.5, 1.0]
    hr = [0.2, 1.0, 0.25, 0.5, 0.4]
    hf = lambda p, r: 2 * p.mean() * r.mean() / (p.mean() + r.mean())  # noqa: E731
    dist = exact_distribution([hp, hr], hf)
    lo, hi = hf_interval(hp, hr, CONFIG)
    assert at_quantile(lo, dist, 0.025) and at_quantile(hi, dist, 0.975)
    # not the interval of the mean per-sample hF: that distribution has other ends
    pairs = exact_distribution([hp, hr], lambda p, r: np.mean(2 * p * r / (p + r)))
    assert not (at_quantile(lo, pairs, 0.025) and at_quantile(hi, pairs, 0.975))
    assert harmonic_mean_of_means(np.array([[0.0, 0.0]]), np.array([[0.0, 0.0]]))[0] == 0.0


def test_seeded_same_interval_any_order_and_degenerate_samples():
    x = np.random.default_rng(0).random(50)
    cfg = BootstrapConfig(n_resamples=999, seed=3)
    assert mean_interval(x, cfg) == mean_interval(x, cfg)
    assert mean_interval(x, cfg) != mean_interval(x, BootstrapConfig(n_resamples=999, seed=4))
    assert mean_interval([1.0, 1.0, 1.0], cfg) == (1.0, 1.0)  # all right: the interval is that value
    assert mean_interval([1.0], cfg) == (None, None)  # one sample: no interval
    assert mean_interval(x, BootstrapConfig(n_resamples=0)) == (None, None)


def _samples() -> pl.DataFrame:
    rng = np.random.default_rng(5)
    n = 40
    hp, hr = rng.uniform(0.2, 1, n), rng.uniform(0.2, 1, n)
    return pl.DataFrame({"model": ["a"] * 20 + ["b"] * 20, "dataset": "d", "prompt": "p", "abstained": False,
                         "correct": rng.random(n) < 0.5, "hP": hp, "hR": hr, "hF": 2 * hp * hr / (hp + hr),
                         **{m: rng.random(n) for m in TEXT_MEASURES}})


def test_leaderboard_intervals_are_each_groups_own_and_bracket_the_value():
    s = _samples()
    cfg = BootstrapConfig(n_resamples=999, seed=0)
    lb = leaderboard(s, ci=cfg)
    assert set(ci_columns()) <= set(lb.columns)
    for row in lb.iter_rows(named=True):
        g = s.filter(pl.col("model") == row["model"])
        own = group_bootstrap(g["correct"].cast(float).to_numpy(), g["hP"].to_numpy(), g["hR"].to_numpy(), cfg)
        for m in ("accuracy", "hP", "hR", "hF"):  # the four from one set of resamples of the group's rows
            assert (row[f"{m}_ci_low"], row[f"{m}_ci_high"]) == own[m]
        for m in ("accuracy", "hP", "hR", "hF"):
            assert row[f"{m}_ci_low"] <= row[m] <= row[f"{m}_ci_high"]
    # a group's interval does not depend on the other groups
    alone = group_intervals(s.filter(pl.col("model") == "b"), ("model",), cfg)
    assert alone.row(0, named=True)["hP_ci_low"] == lb.filter(pl.col("model") == "b")["hP_ci_low"][0]
    assert not set(ci_columns()) & set(leaderboard(s, ci=None).columns)


def test_resampling_distinct_rows_by_multinomial_draws_gives_the_same_distribution():
    """Many rows, few distinct: each resample is a multinomial draw over the distinct rows;
    its resampled means have the mean and spread of resampling the rows one by one."""
    rng = np.random.default_rng(1)
    x = rng.choice([0.0, 0.25, 0.5, 1.0], size=(4000, 1), p=[0.4, 0.1, 0.2, 0.3])
    cfg = BootstrapConfig(n_resamples=4000, seed=2)
    by_counts = resampled_means(x, cfg)[:, 0]
    by_rows = x[rng.integers(0, len(x), size=(4000, len(x))), 0].mean(axis=1)
    assert abs(by_counts.mean() - x.mean()) < 1e-3 and abs(by_rows.mean() - x.mean()) < 1e-3
    assert by_counts.std() == pytest.approx(by_rows.std(), rel=0.06)
    assert by_counts.std() == pytest.approx(x.std() / np.sqrt(len(x)), rel=0.06)


def test_a_memo_gives_back_each_groups_intervals(tmp_path, monkeypatch):
    from taxoforge.files.memo import ContentMemo
    import taxoforge.scores.statistics.confidence as confidence

    rng = np.random.default_rng(5)
    samples = pl.DataFrame({"model": ["a"] * 50 + ["b"] * 40, "correct": rng.random(90) < 0.6,
                            "hP": rng.choice([0.25, 0.5, 1.0], 90), "hR": rng.choice([0.2, 0.6, 1.0], 90)})
    config = BootstrapConfig(n_resamples=500, seed=2)
    plain = group_intervals(samples, ["model"], config)
    memo = ContentMemo("resampled-statistics", {"test": 1}, ["key"], cache_dir=tmp_path)
    assert group_intervals(samples, ["model"], config, memo=memo).equals(plain)
    assert memo.flush()
    monkeypatch.setattr(confidence, "group_bootstrap", lambda *x: pytest.fail("resampled again"))
    later = ContentMemo("resampled-statistics", {"test": 1}, ["key"], cache_dir=tmp_path)
    assert group_intervals(samples, ["model"], config, memo=later).equals(plain)
    with pytest.raises(pytest.fail.Exception, match="resampled again"):  # another seed: resampled
        group_intervals(samples, ["model"], BootstrapConfig(n_resamples=500, seed=3), memo=later)
