"""The one parameter checker, declared as scikit-learn's ``validate_params`` declares it [34]:
intervals, option sets and one routine that names the parameter, what it must be and what
it got. A NaN is never inside an interval. Every option object — the reading and scoring
options (:mod:`taxoforge.scores.options`), the mapping's configuration
(:class:`taxoforge.scores.mapping.config.MappingConfig`), the bootstrap's
(:class:`taxoforge.scores.statistics.confidence.BootstrapConfig`) — and the metric functions
(:data:`taxoforge.scores.measures.hierarchical.PARAMETERS`, used by
:mod:`taxoforge.evaluation.label_metrics`) check their parameters with it, so it sits in the
lowest layer.

References
----------
Numbers of docs/references.md: [34] scikit-learn's ``sklearn.utils._param_validation``
(parameter constraints: ``Interval``, ``StrOptions``, ``validate_params``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral, Real

__all__ = ["Interval", "Options", "InvalidParameterError", "validate_params", "MAX_BOOTSTRAP_RESAMPLES"]

#: The most bootstrap resamples a leaderboard interval may take (``--bootstrap``).
MAX_BOOTSTRAP_RESAMPLES = 100_000


class InvalidParameterError(ValueError):
    """A parameter outside its declared constraints; the message names it."""


@dataclass(frozen=True)
class Interval:
    """Numbers of one kind between two bounds; NaN is in no interval.

    Attributes
    ----------
    kind : type
        :class:`numbers.Integral` or :class:`numbers.Real`.
    left : float or None
        The lower bound (None: unbounded).
    right : float or None
        The upper bound (None: unbounded).
    closed : str
        Which bounds belong to the interval: "both", "left", "right" or "neither".
    """

    kind: type
    left: float | None
    right: float | None
    closed: str = "both"

    def __contains__(self, value) -> bool:
        if isinstance(value, bool) or not isinstance(value, self.kind):
            return False
        if isinstance(value, float) and math.isnan(value):
            return False
        lo_ok = self.left is None or (value >= self.left if self.closed in ("both", "left") else value > self.left)
        hi_ok = self.right is None or (value <= self.right if self.closed in ("both", "right") else value < self.right)
        return lo_ok and hi_ok

    def __str__(self) -> str:
        what = "an int" if self.kind is Integral else "a number"
        lo = "-inf" if self.left is None else f"{self.left:,}" if self.kind is Integral else f"{self.left:g}"
        hi = "inf" if self.right is None else f"{self.right:,}" if self.kind is Integral else f"{self.right:g}"
        lb = "[" if self.closed in ("both", "left") and self.left is not None else "("
        rb = "]" if self.closed in ("both", "right") and self.right is not None else ")"
        return f"{what} in the range {lb}{lo}, {hi}{rb}"


@dataclass(frozen=True)
class Options:
    """One of a set of strings.

    Attributes
    ----------
    values : tuple of str
        The strings allowed.
    """

    values: tuple[str, ...]

    def __contains__(self, value) -> bool:
        return isinstance(value, str) and value in self.values

    def __str__(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)


def _satisfies(value, constraint) -> bool:
    if constraint is None:
        return value is None
    if isinstance(constraint, (Interval, Options)):
        return value in constraint
    if constraint == "callable":
        return callable(value)
    if isinstance(constraint, type):
        return isinstance(value, constraint) and not (constraint is not bool and isinstance(value, bool)
                                                      and constraint in (int, Integral, Real, float))
    raise TypeError(f"unknown constraint {constraint!r}")


def _describe(constraint) -> str:
    if constraint is None:
        return "None"
    if isinstance(constraint, type):
        return {Mapping: "a mapping", Sequence: "a sequence", bool: "a bool", str: "a str"}.get(
            constraint, f"a {constraint.__name__}")
    return str(constraint)


def validate_params(owner: str, values: Mapping, constraints: Mapping[str, list]) -> None:
    """Check parameters against their declared constraints.

    Parameters
    ----------
    owner : str
        Who takes the parameters (named in the error).
    values : mapping
        Parameter name → value: every parameter given is checked; one without a declared
        constraint is an error (a typo in a caller's declaration never passes unchecked).
    constraints : mapping
        Parameter name → list of constraints, any one of which may hold: an
        :class:`Interval`, an :class:`Options`, a type, ``"callable"`` or None.

    Raises
    ------
    InvalidParameterError
        Naming the first parameter no constraint holds for, what it must be and what it got.

    Examples
    --------
    >>> validate_params("f", {"beta": 2.0, "average": None}, {"beta": [Interval(Real, 0, None)],
    ...                                                        "average": [Options(("micro",)), None]})
    >>> validate_params("f", {"beta": float("nan")}, {"beta": [Interval(Real, 0, None)]})
    Traceback (most recent call last):
    ...
    taxoforge.params.InvalidParameterError: the 'beta' parameter of f must be a number in the range [0, inf); got nan
    """
    undeclared = [name for name in values if name not in constraints]
    if undeclared:
        raise TypeError(f"{owner}: no constraint declared for {', '.join(map(repr, undeclared))}")
    for name, value in values.items():
        allowed = constraints[name]
        if not any(_satisfies(value, c) for c in allowed):
            ways = [_describe(c) for c in allowed]
            must = ways[0] if len(ways) == 1 else ", ".join(ways[:-1]) + " or " + ways[-1]
            raise InvalidParameterError(f"the {name!r} parameter of {owner} must be {must}; got {value!r}")
