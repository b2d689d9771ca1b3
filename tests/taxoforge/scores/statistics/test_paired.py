"""Paired tests: the exact McNemar p-value is scipy's binomtest on the discordant pairs; the
permutation test is scipy's permutation_test (exactly, where every swap pattern is
enumerated; within Monte Carlo error otherwise); grouped resampling has the item-level
distribution; bootstrap intervals cover; Holm's adjustment by hand."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from taxoforge.scores.statistics.paired import (EXACT_TAIL_MAX_N, binomial_two_sided, hf_of_sums, holm, mcnemar_exact, paired_difference, paired_differences,
                                     severity_of_sums)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=0, max_size=400))
def test_mcnemar_is_binomtest_of_the_discordant_pairs(pairs):
    a = np.array([p[0] for p in pairs], dtype=bool)
    b = np.array([p[1] for p in pairs], dtype=bool)
    r = mcnemar_exact(a, b)
    only_a, only_b = int((a & ~b).sum()), int((~a & b).sum())
    assert (r["b"], r["c"]) == (only_a, only_b)
    want = stats.binomtest(only_a, only_a + only_b, 0.5).pvalue if only_a + only_b else 1.0
    assert r["p_value"] == pytest.approx(want, rel=1e-11, abs=0)  # SciPy's last bits (next test)


def _exact(k: int, n: int) -> float:
    """The two-sided p-value as a fraction, rounded once."""
    from fractions import Fraction
    from math import comb

    m = min(k, n - k)
    return float(min(Fraction(1), Fraction(2 * sum(comb(n, i) for i in range(m + 1)), 2**n)))


def test_binomial_tail_is_the_exact_value_and_scipys_to_its_last_bits():
    """Every k of every n up to 150, random (k, n) up to 20,000 and the centre and far
    tails of large n: equal to the exact rational value rounded once (so at most as far
    from SciPy's as SciPy is from it), within 1e-11 relative of
    :func:`scipy.stats.binomtest`; tiny p-values too (down to the smallest doubles)."""
    rng = np.random.default_rng(0)
    cases = [(k, n) for n in range(151) for k in range(n + 1)]
    cases += [(int(rng.integers(0, n + 1)), int(n)) for n in rng.integers(1, 20_001, 400)]
    cases += [(n // 2 - d, n) for n in (999, 1000, 10_000, 19_999) for d in (0, 1, 2, 5, 30, 100, 400)]
    cases += [(0, 1000), (3, 1074), (1, 1100), (k := 41, 100 * k)]
    worst = 0.0
    for k, n in cases:
        got = binomial_two_sided(k, n)
        exact = _exact(k, n) if n <= 2_000 or min(k, n - k) < 50 else None
        if exact is not None:
            assert got == exact, (k, n)
        want = stats.binomtest(k, n, 0.5).pvalue if n else 1.0
        if want > 1e-300:
            worst = max(worst, abs(got - want) / want)
        else:
            assert got <= 1e-290
    assert worst < 1e-11
    assert binomial_two_sided(0, 0) == binomial_two_sided(3, 6) == binomial_two_sided(3, 7) == 1.0
    for k, n in ((-1, 3), (4, 3)):
        with pytest.raises(ValueError, match="expected 0 <= k <= n"):
            binomial_two_sided(k, n)


def test_binomial_tail_above_the_exact_limit_is_scipys():
    n = EXACT_TAIL_MAX_N + 11
    for k in (n // 2 - 900, n // 2 - 10):
        assert binomial_two_sided(k, n) == stats.binomtest(k, n, 0.5).pvalue


def _stat(x, y, axis):
    sx = np.stack([x[..., 0, :].sum(-1), x[..., 1, :].sum(-1)], -1)
    sy = np.stack([y[..., 0, :].sum(-1), y[..., 1, :].sum(-1)], -1)
    return hf_of_sums(sx, x.shape[-1]) - hf_of_sums(sy, y.shape[-1])


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 11), st.integers(0, 2**32 - 1))
def test_exact_permutation_p_value_is_scipys(n, seed):
    rng = np.random.default_rng(seed)
    a = rng.choice([0.25, 0.5, 0.75, 1.0], (n, 2))
    b = rng.choice([0.25, 0.5, 0.75, 1.0], (n, 2))
    ours = paired_difference(a, b, hf_of_sums, n_resamples=9999)
    theirs = stats.permutation_test((a.T, b.T), _stat, permutation_type="samples", vectorized=True,
                                    n_resamples=9999, axis=-1)
    assert ours.exact and ours.resamples == 2 ** n
    assert ours.difference == pytest.approx(theirs.statistic, abs=1e-15)
    assert ours.p_value == theirs.pvalue


def test_random_permutations_agree_with_scipy_within_monte_carlo_error():
    rng = np.random.default_rng(7)
    n = 300
    a = np.stack([rng.choice([0.5, 1.0], n, p=[0.4, 0.6]), rng.choice([0.5, 1.0], n, p=[0.4, 0.6])], 1)
    b = np.stack([rng.choice([0.5, 1.0], n, p=[0.5, 0.5]), rng.choice([0.5, 1.0], n, p=[0.5, 0.5])], 1)
    ours = paired_difference(a, b, hf_of_sums, n_resamples=4000, seed=1)
    theirs = stats.permutation_test((a.T, b.T), _stat, permutation_type="samples", vectorized=True,
                                    n_resamples=4000, axis=-1, rng=np.random.default_rng(2))
    assert not ours.exact
    assert ours.p_value == pytest.approx(theirs.pvalue, abs=4 * np.sqrt(theirs.pvalue * (1 - theirs.pvalue) / 4000)
                                         + 0.005)


@pytest.mark.parametrize("distinct", [True, False])
def test_grouped_and_item_level_draws_give_the_same_distributions(distinct):
    """Few distinct rows take the multinomial/binomial path, many the item-level one: the
    intervals and p-values agree within Monte Carlo error (and with the asymptotics)."""
    rng = np.random.default_rng(3)
    n = 4000
    if distinct:
        a, b = rng.random((n, 2)), rng.random((n, 2)) * 0.98
    else:
        a, b = rng.choice([0.2, 0.6, 1.0], (n, 2)), rng.choice([0.2, 0.6, 1.0], (n, 2), p=[0.35, 0.33, 0.32])
    r = paired_difference(a, b, hf_of_sums, n_resamples=3000, seed=5)
    # normal-theory standard error of the difference of hF (delta method through per-item values)
    ha = 2 * a.mean(0).prod() / a.mean(0).sum()
    hb = 2 * b.mean(0).prod() / b.mean(0).sum()
    assert r.difference == pytest.approx(ha - hb)
    boot_sd = (r.ci_high - r.ci_low) / (2 * 1.96)
    grad_a = 2 * (a.mean(0)[::-1] ** 2) / a.mean(0).sum() ** 2
    grad_b = 2 * (b.mean(0)[::-1] ** 2) / b.mean(0).sum() ** 2
    per_item = a @ grad_a - b @ grad_b
    assert boot_sd == pytest.approx(per_item.std() / np.sqrt(n), rel=0.15)
    assert r.ci_low < r.difference < r.ci_high


def test_bootstrap_interval_covers_and_severity_needs_mistakes():
    rng = np.random.default_rng(11)
    hits = 0
    for rep in range(40):
        n = 200
        sev_a = rng.choice([1.0, 2.0, 3.0], n)
        m_a = (rng.random(n) < 0.5).astype(float)
        sev_b = rng.choice([1.0, 2.0, 3.0], n)
        m_b = (rng.random(n) < 0.5).astype(float)
        r = paired_difference(np.stack([sev_a * m_a, m_a], 1), np.stack([sev_b * m_b, m_b], 1), severity_of_sums,
                              n_resamples=500, seed=rep)
        hits += r.ci_low <= 0.0 <= r.ci_high  # both draw from the same distribution: true difference 0
    assert hits >= 34  # a 95 % interval covers the truth in most of 40 repetitions
    none = paired_difference(np.zeros((5, 2)), np.zeros((5, 2)), severity_of_sums, n_resamples=100)
    assert np.isnan(none.difference) and np.isnan(none.p_value)


def test_several_statistics_at_once_and_seeds():
    rng = np.random.default_rng(0)
    a, b = rng.choice([0.5, 1.0], (100, 3)), rng.choice([0.5, 1.0], (100, 3))
    stats_ = {"acc": ([0], lambda s, n: s[..., 0] / n), "hF": ([1, 2], hf_of_sums)}
    one = paired_differences(a, b, stats_, n_resamples=500, seed=3)
    two = paired_differences(a, b, stats_, n_resamples=500, seed=3)
    assert one == two
    assert one["acc"].difference == pytest.approx(a[:, 0].mean() - b[:, 0].mean())
    assert paired_differences(a, b, stats_, n_resamples=0)["hF"].ci_low is None


def test_holm_by_hand():
    assert holm([0.01, 0.04, 0.03, float("nan")]).tolist()[:3] == pytest.approx([0.03, 0.06, 0.06])
    assert np.isnan(holm([0.01, float("nan")])[1])
    assert holm([0.5, 0.9]).tolist() == [1.0, 1.0]


def test_a_memo_gives_back_what_resampling_gave(tmp_path, monkeypatch):
    from taxoforge.files.memo import ContentMemo
    import taxoforge.scores.statistics.paired as paired

    rng = np.random.default_rng(3)
    a = rng.choice([0.0, 0.5, 1.0], size=(300, 2))
    b = rng.choice([0.0, 0.5, 1.0], size=(300, 2))
    stats = {"hF": ([0, 1], hf_of_sums)}
    memo = ContentMemo("resampled-statistics", {"test": 1}, ["key"], cache_dir=tmp_path)
    seed = np.random.SeedSequence([0, 7, 9])
    plain = paired_differences(a, b, stats, n_resamples=999, seed=seed)
    assert paired_differences(a, b, stats, n_resamples=999, seed=seed, memo=memo) == plain
    assert memo.flush()
    monkeypatch.setattr(paired, "_paired_differences", lambda *x: pytest.fail("resampled again"))
    later = ContentMemo("resampled-statistics", {"test": 1}, ["key"], cache_dir=tmp_path)  # another call
    assert paired_differences(a, b, stats, n_resamples=999, seed=seed, memo=later) == plain
    for changed in ({"seed": np.random.SeedSequence([0, 7, 8])}, {"n_resamples": 998}, {"level": 0.9}):
        with pytest.raises(pytest.fail.Exception, match="resampled again"):
            paired_differences(a, b, stats, **{"n_resamples": 999, "seed": seed, **changed}, memo=later)
    b[0, 0] = 1.0 - b[0, 0]
    with pytest.raises(pytest.fail.Exception, match="resampled again"):  # other values: never the old result
        paired_differences(a, b, stats, n_resamples=999, seed=seed, memo=later)
