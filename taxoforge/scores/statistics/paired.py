"""Is A better than B on the same items? Paired tests of two systems' per-item scores.

Every function takes two systems' per-item values on the **same items, in the same order**
(items they do not share are dropped by the caller: :mod:`taxoforge.scores.statistics.compare`).

=============================  ===============================================================
function                       what it tests
=============================  ===============================================================
:func:`mcnemar_exact`          accuracy: the exact McNemar test — a two-sided binomial test of
                               the discordant pairs (b: only A right, c: only B right) against
                               p = 1/2 (McNemar 1947 [26]), the p-value of
                               :func:`scipy.stats.binomtest`
:func:`binomial_two_sided`     that p-value: the exact binomial tail summed in integers
:func:`paired_difference`      any statistic of column sums (hF, mistake severity): the
                               difference A − B, its paired-bootstrap percentile interval
                               (items resampled, both systems together) and a paired
                               permutation test (each item's two values swapped or
                               not; Efron and Tibshirani 1993 [28])
:func:`holm`                   Holm's step-down adjustment of several p-values
                               (Holm 1979 [27])
=============================  ===============================================================

**Statistics of sums.** hF (the harmonic mean of mean hP and mean hR) and the mean mistake
severity (over each system's own mistakes) are functions of per-item column sums — hF of
``Σ hP`` and ``Σ hR``, severity of ``Σ severity·mistake`` and ``Σ mistake`` — so a resample
is a vector of counts (bootstrap) or of swaps (permutation) times the items' values: one
matrix product per batch of resamples, no per-resample Python. Items with equal values are
interchangeable, so the draws are made per distinct value row: the bootstrap's counts are
multinomial over the K distinct rows (what resampling the n items gives), the permutation's
swaps binomial(count, 1/2) per distinct difference row (what swapping each item with
probability 1/2 gives). hP, hR, correctness and severity take few distinct values (ratios of
small depths), so K is far below n and 10,000 items cost what a few hundred would.

**The permutation test** is the one :func:`scipy.stats.permutation_test` runs with
``permutation_type="samples"`` (paired): all ``2**n`` swap patterns when there are no more
than ``n_resamples`` of them (exact, observed included, no +1), else ``n_resamples`` random
ones, p-values counted with scipy's relative tolerance and two-sided as twice the smaller
one-sided p-value, clipped to 1. Resamples are drawn from :func:`numpy.random.default_rng`
seeded with ``seed``, so the same inputs give the same numbers anywhere.

References
----------
Numbers of docs/references.md: [26] McNemar 1947 (the exact form, after Fagerland et al.
2013); [27] Holm 1979; [28] Efron and Tibshirani 1993 (ch. 15, permutation tests; ch. 13,
percentile intervals; paired tests of systems after Dror et al. 2018).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from taxoforge.files.memo import inputs_digest

from taxoforge.scores.measures.hierarchical import f_beta

__all__ = ["mcnemar_exact", "binomial_two_sided", "paired_difference", "paired_differences", "holm", "PairedDifference", "hf_of_sums", "severity_of_sums",
           "HF_COLUMNS", "SEVERITY_COLUMNS", "MAX_VALUES_PER_BATCH"]

#: Values (resamples × items) held at once while resampling, so memory stays bounded.
MAX_VALUES_PER_BATCH = 4_000_000
#: Up to this many discordant pairs the McNemar p-value is summed in integers here; above it
#: (where that takes longer than importing SciPy) :func:`scipy.stats.binomtest` gives it.
EXACT_TAIL_MAX_N = 50_000
#: A binomial draw costs about this many uniform integer draws: resample per distinct value row
#: (K draws per resample) when K times this is at most the number of items.
_GROUPED_COST = 8


def mcnemar_exact(a_correct, b_correct) -> dict:
    """The exact McNemar test of two systems' correctness on the same items.

    Parameters
    ----------
    a_correct, b_correct : array_like of bool
        Whether each system was right on each item.

    Returns
    -------
    dict
        ``n`` items, ``accuracy_a``, ``accuracy_b``, ``b`` (A right, B wrong), ``c`` (A
        wrong, B right) and ``p_value``: :func:`scipy.stats.binomtest` ``(b, b + c, 0.5)``,
        two-sided, exact (1 when there is no discordant pair).

    Examples
    --------
    >>> r = mcnemar_exact([1, 1, 1, 1, 0, 1], [0, 0, 0, 1, 0, 0])
    >>> r["b"], r["c"], round(r["p_value"], 4)
    (4, 0, 0.125)
    """
    a = np.asarray(a_correct, dtype=bool)
    b = np.asarray(b_correct, dtype=bool)
    if a.shape != b.shape:
        raise ValueError(f"a_correct has shape {a.shape}, b_correct {b.shape}; they must match")
    only_a, only_b = int((a & ~b).sum()), int((~a & b).sum())
    p = binomial_two_sided(only_a, only_a + only_b)
    n = len(a)
    return {"n": n, "accuracy_a": float(a.mean()) if n else float("nan"),
            "accuracy_b": float(b.mean()) if n else float("nan"), "b": only_a, "c": only_b, "p_value": p}


def binomial_two_sided(k: int, n: int) -> float:
    """The exact two-sided p-value of ``k`` successes in ``n`` trials with success
    probability 1/2: the probability of an outcome at most as likely as ``k``, i.e.
    ``2 · P(X ≤ min(k, n − k))`` clipped to 1, and 1 when ``n`` is 0 — the value of
    :func:`scipy.stats.binomtest` ``(k, n, 0.5).pvalue`` (McNemar 1947 [26]).

    The tail ``Σ_{i ≤ m} C(n, i)`` is summed in integers from ``C(n, m)`` down, each term
    from the one before (``C(n, i − 1) = C(n, i) · i / (n − i + 1)``, exact), until the
    terms left (at most the last one times ``r / (1 − r)``, ``r`` the ratio of two terms)
    are below 2⁻⁶⁴ of the sum; divided by ``2ⁿ`` it is rounded once. So the result is the
    exact value correctly rounded (SciPy's, computed through the regularised incomplete
    beta function, differs from it in the last bits: by less than 10⁻¹¹ relative), and no
    SciPy import (≈ 1 s of a ``taxoforge compare`` call) is needed; above
    :data:`EXACT_TAIL_MAX_N` trials SciPy computes it.

    Parameters
    ----------
    k : int
        Successes (0 ≤ k ≤ n).
    n : int
        Trials.

    Returns
    -------
    float

    Examples
    --------
    >>> binomial_two_sided(4, 4), binomial_two_sided(1, 10), binomial_two_sided(5, 10)
    (0.125, 0.021484375, 1.0)
    """
    import math

    k, n = int(k), int(n)
    if not 0 <= k <= n:
        raise ValueError(f"k={k}, n={n}: expected 0 <= k <= n")
    m = min(k, n - k)
    if 2 * m >= n - 1:  # the middle outcome(s): every outcome is at most as likely
        return 1.0
    if n > EXACT_TAIL_MAX_N:
        from scipy.stats import binomtest

        return float(binomtest(k, n, 0.5).pvalue)
    term = math.comb(n, m)
    total, i = term, m
    while i > 0:
        term = term * i // (n - i + 1)
        total += term
        i -= 1
        # the terms left sum to at most term · r / (1 − r), r = i / (n − i + 1) (ratios fall with i)
        if term * i < (n - 2 * i + 1) * (total >> 64):
            break
    return min(1.0, 2 * total / 2**n)


#: The per-item columns of :func:`hf_of_sums`, per system.
HF_COLUMNS = ("hP", "hR")
#: The per-item columns of :func:`severity_of_sums`, per system: severity × is-a-mistake, is-a-mistake.
SEVERITY_COLUMNS = ("severity_of_mistake", "mistake")


def hf_of_sums(sums: np.ndarray, n: np.ndarray | float) -> np.ndarray:
    """hF = harmonic mean of mean hP and mean hR, from column sums.

    Parameters
    ----------
    sums : numpy.ndarray, shape (..., 2)
        ``[Σ hP, Σ hR]`` along the last axis.
    n : float or numpy.ndarray
        The number of items summed.

    Returns
    -------
    numpy.ndarray
    """
    return np.asarray(f_beta(sums[..., 0] / n, sums[..., 1] / n))


def severity_of_sums(sums: np.ndarray, n: np.ndarray | float) -> np.ndarray:
    """Mean severity over the mistakes, from column sums.

    Parameters
    ----------
    sums : numpy.ndarray, shape (..., 2)
        ``[Σ severity·mistake, Σ mistake]`` along the last axis.
    n : float or numpy.ndarray
        The number of items summed (unused: the mean is over the mistakes).

    Returns
    -------
    numpy.ndarray
        NaN where there is no mistake.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sums[..., 1] > 0, sums[..., 0] / np.where(sums[..., 1] > 0, sums[..., 1], 1), np.nan)


@dataclass(frozen=True)
class PairedDifference:
    """The result of :func:`paired_difference`.

    Attributes
    ----------
    a : float
        System A's statistic.
    b : float
        System B's statistic.
    difference : float
        ``a − b``.
    ci_low : float or None
        The low end of the paired-bootstrap percentile interval of the difference (None when
        it cannot be made).
    ci_high : float or None
        Its high end.
    p_value : float
        The paired permutation test, two-sided.
    exact : bool
        Whether every swap pattern was enumerated.
    n : int
        Items.
    resamples : int
        Resamples (and permutations) used.
    """

    a: float
    b: float
    difference: float
    ci_low: float | None
    ci_high: float | None
    p_value: float
    exact: bool
    n: int
    resamples: int

    def as_dict(self, prefix: str = "") -> dict:
        """The fields as a flat dict.

        Parameters
        ----------
        prefix : str
            Put before every name.

        Returns
        -------
        dict
        """
        return {f"{prefix}{k}": getattr(self, k) for k in ("a", "b", "difference", "ci_low", "ci_high", "p_value",
                                                            "exact")}


def _batches(total: int, n: int):
    size = max(1, min(total, MAX_VALUES_PER_BATCH // max(n, 1)))
    for lo in range(0, total, size):
        yield min(size, total - lo)


def paired_difference(a, b, statistic, *, n_resamples: int = 9999, level: float = 0.95,
                      seed: int = 0) -> PairedDifference:
    """``statistic(A) − statistic(B)`` with a paired-bootstrap interval and a paired
    permutation p-value (module docstring).

    Parameters
    ----------
    a, b : array_like, shape (n, m)
        Per-item values of the two systems (rows: the same items in the same order; columns:
        what ``statistic`` sums, e.g. :data:`HF_COLUMNS`).
    statistic : callable
        ``statistic(sums, n)``: the statistic from column sums ``sums`` (shape ``(..., m)``)
        over ``n`` items, vectorised over the leading axes (:func:`hf_of_sums`,
        :func:`severity_of_sums`).
    n_resamples : int
        Bootstrap resamples, and the most permutations drawn (fewer when all ``2**n`` swap
        patterns can be enumerated). 0: the difference alone (no interval, p-value NaN).
    level : float
        Confidence level of the interval.
    seed : int
        Seed of :func:`numpy.random.default_rng`.

    Returns
    -------
    PairedDifference

    Examples
    --------
    >>> a = np.array([[1.0, 1.0], [1.0, 0.5], [1.0, 1.0], [0.5, 0.5]])
    >>> b = np.array([[0.5, 0.5], [0.5, 0.5], [1.0, 0.5], [0.5, 0.5]])
    >>> r = paired_difference(a, b, hf_of_sums, n_resamples=999)
    >>> round(r.difference, 4), r.exact, r.p_value       # 2**4 = 16 swap patterns, enumerated
    (0.2521, True, 0.25)
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim == 1:
        a, b = a[:, None], b[:, None]
    cols = list(range(a.shape[1]))
    return paired_differences(a, b, {"x": (cols, statistic)}, n_resamples=n_resamples, level=level, seed=seed)["x"]


def paired_differences(a, b, statistics: dict, *, n_resamples: int = 9999, level: float = 0.95,
                       seed=0, memo=None) -> dict[str, PairedDifference]:
    """Several statistics of the same items, each with its own bootstrap resamples and swap
    patterns drawn over the distinct values of its own columns (fewer than of all columns
    together), one after the other from one seeded generator.

    The results are a function of the values, the statistics, ``n_resamples``, ``level`` and
    ``seed`` alone: with a ``memo`` they are kept under the SHA-256 of those, and a call on
    the same values (the same two systems scored again) reads them instead of resampling.

    Parameters
    ----------
    a, b : array_like, shape (n, m)
        Per-item values of the two systems, every column any statistic needs.
    statistics : dict
        ``name → (columns, statistic)``: the column positions the statistic sums, and the
        statistic as for :func:`paired_difference`.
    n_resamples, level
        As for :func:`paired_difference`.
    seed : int or numpy.random.SeedSequence
        Seed of :func:`numpy.random.default_rng`.
    memo : ContentMemo, optional
        A memo of results by the digest of their inputs
        (:meth:`taxoforge.files.memo.ContentMemo.get`): what is computed is put in it, and
        written when the caller flushes it.

    Returns
    -------
    dict of PairedDifference
        One per name.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 2:
        raise ValueError(f"a has shape {a.shape}, b {b.shape}; they must be equal and 2-D (items, columns)")
    if memo is None or seed is None:  # no seed: no two calls draw alike
        return _paired_differences(a, b, statistics, n_resamples, level, seed)
    if isinstance(seed, np.random.SeedSequence):
        seed_record = [np.asarray(seed.entropy).tolist(), list(seed.spawn_key), seed.pool_size]
    else:
        seed_record = int(seed)
    spec = {k: [list(map(int, c)), f"{f.__module__}.{f.__qualname__}"] for k, (c, f) in statistics.items()}
    key = inputs_digest(["paired_differences", spec, int(n_resamples), float(level), seed_record], a, b)
    found = memo.json_value(key, lambda: {k: dataclasses.asdict(v) for k, v in
                                          _paired_differences(a, b, statistics, n_resamples, level, seed).items()})
    return {k: PairedDifference(**v) for k, v in found.items()}


def _paired_differences(a: np.ndarray, b: np.ndarray, statistics: dict, n_resamples: int, level: float,
                        seed) -> dict[str, PairedDifference]:
    n, m = a.shape
    sa, sb = a.sum(axis=0), b.sum(axis=0)
    stats = {k: (list(c), f) for k, (c, f) in statistics.items()}
    observed = {k: float(f(sa[c], n)) - float(f(sb[c], n)) for k, (c, f) in stats.items()}
    values = {k: (float(f(sa[c], n)), float(f(sb[c], n))) for k, (c, f) in stats.items()}
    if n_resamples <= 0 or n == 0:
        return {k: PairedDifference(*values[k], observed[k], None, None, float("nan"), False, n, 0) for k in stats}
    rng = np.random.default_rng(seed)
    exact = n < 63 and (1 << n) <= n_resamples
    used = (1 << n) if exact else n_resamples
    boot, null = {}, {}
    for k, (c, f) in stats.items():
        boot[k], null[k] = _resample(a[:, c], b[:, c], f, n_resamples, exact, rng)
    out = {}
    alpha = (1 - level) / 2
    for k in stats:
        bt = boot[k][np.isfinite(boot[k])]  # a resample without a mistake has no severity
        lo = hi = None
        if len(bt) and n > 1:
            lo, hi = (float(x) for x in np.quantile(bt, [alpha, 1 - alpha]))
        p = _two_sided_p(null[k], observed[k], exact, used)
        out[k] = PairedDifference(*values[k], observed[k], lo, hi, p, exact, n, used)
    return out


def _resample(a: np.ndarray, b: np.ndarray, f, n_resamples: int, exact: bool, rng) -> tuple[np.ndarray, np.ndarray]:
    """The bootstrap distribution of ``f(A) − f(B)`` and its permutation null distribution,
    for one statistic's columns ``a`` and ``b`` (items × columns).

    Items with equal values are interchangeable: resampling the n items uniformly is drawing
    multinomial counts of the K distinct value rows (probabilities = their shares), and
    swapping each item with probability 1/2 is a binomial(count, 1/2) number of swaps per
    distinct difference row — the same distributions, with K draws per resample instead of n.
    A binomial costs about :data:`_GROUPED_COST` integer draws, so rows are grouped only where
    that is cheaper."""
    n, m = a.shape
    both = np.concatenate([a, b], axis=1)
    sa, sb = a.sum(axis=0), b.sum(axis=0)
    d = b - a  # what a swap moves from B to A
    boot, null = [], []
    rows, row_count = np.unique(both, axis=0, return_counts=True)
    if len(rows) * _GROUPED_COST <= n:
        for size in _batches(n_resamples, len(rows)):
            sums = rng.multinomial(n, row_count / n, size=size).astype(np.float64) @ rows
            boot.append(f(sums[:, :m], n) - f(sums[:, m:], n))
    else:
        for size in _batches(n_resamples, n):
            idx = rng.integers(0, n, size=(size, n), dtype=np.int64)
            idx += (np.arange(size, dtype=np.int64) * n)[:, None]
            sums = np.bincount(idx.ravel(), minlength=size * n).reshape(size, n).astype(np.float64) @ both
            boot.append(f(sums[:, :m], n) - f(sums[:, m:], n))

    def add_null(moved):
        null.append(f(sa + moved, n) - f(sb - moved, n))

    if exact:
        total = 1 << n
        step = max(1, MAX_VALUES_PER_BATCH // max(n, 1))
        for start in range(0, total, step):
            codes = np.arange(start, min(total, start + step), dtype=np.int64)
            add_null(((codes[:, None] >> np.arange(n, dtype=np.int64)[None, :]) & 1).astype(np.float64) @ d)
    else:
        diffs, diff_count = np.unique(d, axis=0, return_counts=True)
        if len(diffs) * _GROUPED_COST <= n:
            for size in _batches(n_resamples, len(diffs)):
                add_null(rng.binomial(diff_count, 0.5, size=(size, len(diffs))).astype(np.float64) @ diffs)
        else:
            for size in _batches(n_resamples, n):
                add_null(rng.integers(0, 2, size=(size, n), dtype=np.int8).astype(np.float64) @ d)
    return np.concatenate(boot), np.concatenate(null)


def _two_sided_p(null: np.ndarray, observed: float, exact: bool, n_null: int) -> float:
    """scipy.stats.permutation_test's two-sided p-value of ``observed`` against ``null``."""
    if not np.isfinite(observed):
        return float("nan")
    adjustment = 0 if exact else 1
    gamma = abs(np.finfo(np.float64).eps * 100 * observed)
    null = np.where(np.isfinite(null), null, np.nan)  # a resample without mistakes compares as neither side
    less = (np.count_nonzero(null <= observed + gamma) + adjustment) / (n_null + adjustment)
    greater = (np.count_nonzero(null >= observed - gamma) + adjustment) / (n_null + adjustment)
    return float(np.clip(min(less, greater) * 2, 0.0, 1.0))


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjusted p-values (the family-wise error rate controlled).

    Parameters
    ----------
    p_values : array_like of float
        NaN entries are left NaN and not counted in the family.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03]).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p_values, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = len(ok)
    if not m:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    adj = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out[order] = np.maximum.accumulate(adj)
    return out
