"""Bootstrap 95 % confidence intervals of the leaderboard's accuracy, hP, hR and hF.

Each interval is a percentile bootstrap (Efron and Tibshirani 1993 [28]) over the samples of one
leaderboard row, resampled with replacement ``n_resamples`` times from a generator seeded
with ``seed`` — the same data and seed give the same interval on any machine, whatever the
order of the groups. The percentile method is computed here, vectorised: one set of
resamples per group (:func:`resampled_means`: resampled rows, or draws of how often each
distinct row occurs) gives the four statistics at once, and the ends are the ``(1 ± level)/2`` percentiles of their resampled values (linear
interpolation, as :func:`scipy.stats.bootstrap` takes them) — no SciPy import and one draw
instead of four. Other methods (``method="BCa"``, ``"basic"``) go through
:func:`scipy.stats.bootstrap`.

* accuracy, hP, hR: the mean of the per-sample values;
* hF: the aggregate of docs/method.md#hierarchical-measures — the harmonic mean of mean hP and mean hR — computed on each
  resample of the (hP, hR) *pairs* (``paired=True``), so the interval is that of the
  statistic the leaderboard reports, not of the mean per-sample hF.

A group of fewer than two samples has no interval (null). The percentile method is used
rather than BCa because it is defined for every sample, including those where every value
is the same (an accuracy of 0 or 1): its interval is then that single value.

References
----------
Numbers of docs/references.md: [28] Efron and Tibshirani 1993 (ch. 13, the percentile
interval).
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass

import numpy as np
import polars as pl

from taxoforge.files.memo import inputs_digest
from taxoforge.params import MAX_BOOTSTRAP_RESAMPLES, Interval, Options, validate_params
from taxoforge.scores.measures.hierarchical import f_beta

__all__ = ["BootstrapConfig", "CI_MEASURES", "bootstrap_interval", "mean_interval", "hf_interval", "group_intervals",
           "ci_columns", "harmonic_mean_of_means", "group_bootstrap", "resampled_means"]

#: The leaderboard measures that get an interval: ``<measure>_ci_low`` and ``<measure>_ci_high``.
CI_MEASURES = ("accuracy", "hP", "hR", "hF")
#: Resampled values held in memory at once (resamples × samples), so large groups stay bounded.
_MAX_BATCH_VALUES = 4_000_000


@dataclass(frozen=True)
class BootstrapConfig:
    """``n_resamples`` (0: no intervals), ``level`` (0.95), ``seed`` (of
    :func:`numpy.random.default_rng`), ``method`` (a :func:`scipy.stats.bootstrap` method).

    Attributes
    ----------
    n_resamples : int
        Bootstrap resamples (0: no intervals).
    level : float
        The intervals' confidence level.
    seed : int
        The seed of :func:`numpy.random.default_rng`.
    method : str
        A :func:`scipy.stats.bootstrap` method.
    """

    n_resamples: int = 9999
    level: float = 0.95
    seed: int = 0
    method: str = "percentile"

    def __post_init__(self) -> None:
        from numbers import Integral, Real

        validate_params("BootstrapConfig", {"n_resamples": self.n_resamples, "level": self.level, "seed": self.seed,
                                            "method": self.method},
                        {"n_resamples": [Interval(Integral, 0, MAX_BOOTSTRAP_RESAMPLES)],
                         "level": [Interval(Real, 0, 1, closed="neither")], "seed": [Interval(Integral, 0, None)],
                         "method": [Options(("percentile", "basic", "BCa"))]})

    def as_dict(self) -> dict:
        """The configuration as JSON values, for the run's record.

        Returns
        -------
        dict
            One entry per field.
        """
        return asdict(self)


def ci_columns(measures=CI_MEASURES) -> list[str]:
    """``[accuracy_ci_low, accuracy_ci_high, hP_ci_low, …]``.

    Parameters
    ----------
    measures : optional
        The measures with intervals.

    Returns
    -------
    list[str]
        ``[accuracy_ci_low, accuracy_ci_high, hP_ci_low, …]``.
    """
    return [f"{m}_ci_{side}" for m in measures for side in ("low", "high")]


def harmonic_mean_of_means(hp, hr, axis: int = -1):
    """``2·mean(hP)·mean(hR) / (mean(hP) + mean(hR))`` along ``axis`` (0 where both means are
    0): the leaderboard's hF (:func:`taxoforge.scores.measures.hierarchical.f_beta` of the means),
    vectorised over resamples.

    Parameters
    ----------
    hp, hr : array_like
        Per-pair hP and hR (resamples along the other axes).
    axis : int
        The axis of the pairs.

    Returns
    -------
    numpy.ndarray or float
    """
    return f_beta(np.mean(hp, axis=axis), np.mean(hr, axis=axis))


def resampled_means(values: np.ndarray, config: BootstrapConfig) -> np.ndarray:
    """``(n_resamples, k)``: the column means of ``values`` (``n`` rows, ``k`` columns) over
    ``n_resamples`` resamples of its rows with replacement, drawn from
    ``numpy.random.default_rng(seed)`` in batches of at most :data:`_MAX_BATCH_VALUES` values.

    A resample of ``n`` rows is a draw of how often each row occurs; rows that are equal
    (the same correctness, hP and hR: a few hundred distinct rows however many answers)
    are drawn together, so when at most half the rows are distinct each resample is one
    multinomial draw over the ``m`` distinct rows — ``O(m)`` instead of ``O(n)`` per
    resample, the same distribution of resampled means.

    Parameters
    ----------
    values : array_like
        ``n`` rows, ``k`` columns.
    config : BootstrapConfig
        How many resamples, and the seed.

    Returns
    -------
    numpy.ndarray
        ``(n_resamples, k)`` resampled column means.
    """
    values = np.asarray(values, dtype=np.float64)
    n, k = values.shape
    rng = np.random.default_rng(config.seed)
    uniq, inv = np.unique(values, axis=0, return_inverse=True)
    out = np.empty((config.n_resamples, k))
    if 2 * len(uniq) <= n:
        p = np.bincount(inv.ravel(), minlength=len(uniq)) / n
        batch = max(1, min(config.n_resamples, _MAX_BATCH_VALUES // max(len(uniq), 1)))
        for lo in range(0, config.n_resamples, batch):
            b = min(batch, config.n_resamples - lo)
            out[lo:lo + b] = rng.multinomial(n, p, size=b) @ uniq / n
        return out
    batch = max(1, min(config.n_resamples, _MAX_BATCH_VALUES // max(n * k, 1)))
    for lo in range(0, config.n_resamples, batch):
        b = min(batch, config.n_resamples - lo)
        idx = rng.integers(0, n, size=(b, n))
        out[lo:lo + b] = values[idx].mean(axis=1)
    return out


def _percentile_ends(dist: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    alpha = (1 - level) / 2
    lo, hi = np.percentile(dist, [100 * alpha, 100 * (1 - alpha)], axis=0)
    return lo, hi


def _none_if_nan(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


def group_bootstrap(correct, hp, hr, config: BootstrapConfig) -> dict[str, tuple[float | None, float | None]]:
    """The intervals of accuracy, hP, hR and hF (the harmonic mean of mean hP and mean hR) of
    one group, from one set of resamples of its rows (module docstring).

    Parameters
    ----------
    correct, hp, hr : array_like
        Per sample: right (0/1), hP and hR.
    config : BootstrapConfig
        How to resample.

    Returns
    -------
    dict
        ``measure`` → ``(low, high)``; ``(None, None)`` each for fewer than two samples or
        ``n_resamples == 0``.
    """
    n = len(hp)
    if config.n_resamples <= 0 or n < 2:
        return {m: (None, None) for m in CI_MEASURES}
    if config.method != "percentile":
        hp, hr = np.asarray(hp, np.float64), np.asarray(hr, np.float64)
        return {"accuracy": mean_interval(np.asarray(correct, np.float64), config), "hP": mean_interval(hp, config),
                "hR": mean_interval(hr, config), "hF": hf_interval(hp, hr, config)}
    means = resampled_means(np.column_stack([correct, hp, hr]), config)
    dist = np.column_stack([means, f_beta(means[:, 1], means[:, 2])])
    lo, hi = _percentile_ends(dist, config.level)
    return {m: (_none_if_nan(lo[j]), _none_if_nan(hi[j])) for j, m in enumerate(CI_MEASURES)}


def bootstrap_interval(data: tuple[np.ndarray, ...], statistic, config: BootstrapConfig, *,
                       paired: bool = False) -> tuple[float | None, float | None]:
    """``(low, high)`` of ``statistic`` over ``data`` (a tuple of equal-length samples),
    or ``(None, None)`` for fewer than two samples or ``n_resamples == 0``.

    Parameters
    ----------
    data : tuple[numpy.ndarray, ...]
        Equal-length samples.
    statistic : object
        ``statistic(*samples) -> float``.
    config : BootstrapConfig
        How to resample.
    paired : bool, optional
        Whether the samples are resampled together (pairs).

    Returns
    -------
    tuple[float or None, float or None]
        ``(low, high)`` of ``statistic`` over ``data`` (a tuple of equal-length
        samples), or ``(None, None)`` for fewer than two samples or ``n_resamples ==
        0``. Computed by :func:`scipy.stats.bootstrap`.
    """
    n = len(data[0])
    if config.n_resamples <= 0 or n < 2:
        return None, None
    from scipy.stats import bootstrap

    batch = max(1, min(config.n_resamples, _MAX_BATCH_VALUES // max(n, 1)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a degenerate sample (all values equal) is fine under the percentile method
        res = bootstrap(data, statistic, n_resamples=config.n_resamples, batch=batch, vectorized=True,
                        paired=paired, confidence_level=config.level, method=config.method,
                        rng=np.random.default_rng(config.seed))
    lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return (None if np.isnan(lo) else lo), (None if np.isnan(hi) else hi)


def mean_interval(x, config: BootstrapConfig) -> tuple[float | None, float | None]:
    """The interval of the mean of ``x``.

    Parameters
    ----------
    x : object
        The values.
    config : BootstrapConfig
        How to resample.

    Returns
    -------
    tuple[float or None, float or None]
        The interval of the mean of ``x``.
    """
    x = np.asarray(x, dtype=np.float64)
    if config.method != "percentile":
        return bootstrap_interval((x,), np.mean, config)
    if config.n_resamples <= 0 or len(x) < 2:
        return None, None
    lo, hi = _percentile_ends(resampled_means(x[:, None], config), config.level)
    return _none_if_nan(lo[0]), _none_if_nan(hi[0])


def hf_interval(hp, hr, config: BootstrapConfig) -> tuple[float | None, float | None]:
    """The interval of hF = harmonic mean of mean hP and mean hR, resampling (hP, hR) pairs.

    Parameters
    ----------
    hp : object
        Per-sample hP.
    hr : object
        Per-sample hR, as many as ``hp``.
    config : BootstrapConfig
        How to resample.

    Returns
    -------
    tuple[float or None, float or None]
        The interval of hF = harmonic mean of mean hP and mean hR, resampling (hP, hR)
        pairs.
    """
    hp, hr = np.asarray(hp, dtype=np.float64), np.asarray(hr, dtype=np.float64)
    if config.method != "percentile":
        return bootstrap_interval((hp, hr), harmonic_mean_of_means, config, paired=True)
    if config.n_resamples <= 0 or len(hp) < 2:
        return None, None
    means = resampled_means(np.column_stack([hp, hr]), config)
    lo, hi = _percentile_ends(f_beta(means[:, 0], means[:, 1]), config.level)
    return _none_if_nan(lo), _none_if_nan(hi)


def group_intervals(samples: pl.DataFrame, by, config: BootstrapConfig, memo=None) -> pl.DataFrame:
    """One row per group of ``by`` with the :func:`ci_columns` of :data:`CI_MEASURES`.
    ``samples`` has ``correct``, ``hP`` and ``hR`` (the rows to count: callers filter).

    Parameters
    ----------
    samples : polars.DataFrame
        Rows with ``correct``, ``hP`` and ``hR``.
    by : object
        The columns that make a group.
    config : BootstrapConfig
        How to resample.
    memo : ContentMemo, optional
        Earlier calls' intervals by the SHA-256 of a group's values and ``config``
        (:meth:`taxoforge.files.memo.ContentMemo.get`): a group whose values are those of an
        earlier call (the same answers scored again) is not resampled again; what is
        computed is put in it, and written when the caller flushes it.

    Returns
    -------
    polars.DataFrame
        One row per group of ``by`` with the :func:`ci_columns` of :data:`CI_MEASURES`.
    """
    by = list(by)
    schema = {**{b: samples.schema[b] for b in by}, **{c: pl.Float64 for c in ci_columns()}}
    rows = []
    for key, g in samples.group_by(by, maintain_order=True):
        hp, hr = g["hP"].to_numpy(), g["hR"].to_numpy()
        row = dict(zip(by, key))
        for m, (lo, hi) in _group_bootstrap(g["correct"].cast(pl.Float64).to_numpy(), hp, hr, config, memo).items():
            row[f"{m}_ci_low"], row[f"{m}_ci_high"] = lo, hi
        rows.append(row)
    return pl.DataFrame(rows, schema=schema) if rows else pl.DataFrame(schema=schema)


def _group_bootstrap(correct: np.ndarray, hp: np.ndarray, hr: np.ndarray, config: BootstrapConfig,
                     memo) -> dict[str, tuple[float | None, float | None]]:
    """:func:`group_bootstrap`, read from ``memo`` when an earlier call resampled the same values."""
    if memo is None:
        return group_bootstrap(correct, hp, hr, config)
    values = np.column_stack([np.asarray(x, np.float64) for x in (correct, hp, hr)])
    key = inputs_digest(["group_bootstrap", config.as_dict()], values)
    found = memo.json_value(key, lambda: group_bootstrap(correct, hp, hr, config))
    return {m: tuple(v) for m, v in found.items()}
