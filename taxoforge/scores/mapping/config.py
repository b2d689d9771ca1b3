"""Configuration of the text → node mapping: the parameters of Alg. 1 (docs/method.md#mapping-an-answer-to-a-node) and of
this implementation, the result type, and the calibrated softmax temperatures."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from numbers import Integral, Real

import numpy as np

from taxoforge.params import Interval, InvalidParameterError, Options, validate_params

__all__ = ["MappingConfig", "MappingResult", "STAGES", "CALIBRATED_TEMPERATURES", "default_temperature"]

# Softmax temperature per similarity measure (docs/method.md#mapping-an-answer-to-a-node), from
# ``python -m benchmarks.calibrate_temperature`` (taxoforge.scores.mapping.calibration; its
# output is kept in benchmarks/results/temperature_calibration.json): the smallest temperature
# at which at most 1 % of the answers that are a node label with one character typo pass the
# near-tie test, pooled over the ImageNet-1k and iNat21-sized trees (seed 0, 3,000 labels per
# tree). Embedding measures keep the paper's CLIP logit scale (100) unless calibrated with a model.
CALIBRATED_TEMPERATURES = {
    "ratio": 0.112202,
    "wratio": 0.188365,
    "token_sort_ratio": 0.169824,
    "token_set_ratio": 0.113501,
    "partial_ratio": 0.301995,
}
EMBEDDING_TEMPERATURE = 100.0


def default_temperature(similarity: str) -> float:
    """The calibrated softmax temperature of a similarity measure (by its spec string).

    Parameters
    ----------
    similarity : str
        A similarity spec (``"ratio"``, ``"sentence-transformers:minilm"`` …).

    Returns
    -------
    float
        The calibrated softmax temperature of a similarity measure (by its spec string).
    """
    return CALIBRATED_TEMPERATURES.get(similarity, EMBEDDING_TEMPERATURE)


@dataclass(frozen=True)
class MappingConfig:
    """Parameters of Alg. 1 (docs/method.md#mapping-an-answer-to-a-node) and of this implementation (package docstring).

    ``temperature=None`` takes the calibrated temperature of ``similarity``
    (:data:`CALIBRATED_TEMPERATURES`); the resolved value is what the configuration records.

    Attributes
    ----------
    k : int
        Candidates compared after the exact and contains stages (the paper's k).
    thr_topk : float
        Spread of the top-k softmax probabilities below which the vote may decide
        (``thr_topk``).
    thr_top2 : float
        Gap of the top two softmax probabilities below which the vote may decide
        (``thr_top2``).
    thr_vote : int
        Votes a shared ancestor needs (``thr_vote``).
    vote_rule : str
        ``"at_least"`` (the paper's prose) or ``"more_than"`` (its pseudocode).
    temperature : float or None
        Softmax temperature; None takes the calibrated one of ``similarity``.
    exact_stage : bool
        Whether a whole-answer exact match decides first (False: the pseudocode's
        order).
    drop_nested : bool
        Whether a match lying inside a longer match is dropped (False: the pseudocode).
    contains : str
        ``"whole_word"`` or ``"substring"`` (the pseudocode's raw test).
    contains_scope : str
        ``"all"`` (the deepest match) or ``"topk_first"`` (the pseudocode's scan).
    ngram_sizes : tuple[int, ...]
        Word n-gram sizes of the n-gram check, largest first.
    base_forms : bool
        Whether words are compared in their noun base form.
    similarity : str
        A rapidfuzz scorer name or ``"sentence-transformers[:<model>]"``.
    prefilter : bool
        Whether the exact candidate bound is used before the full scan (same result).
    skip_name_kinds : tuple[str, ...]
        Name kinds that are identifiers, not names (never matched).
    max_answer_chars : int
        Longer answers are cut at a word boundary and flagged.
    """

    k: int = 10
    thr_topk: float = 0.0015
    thr_top2: float = 0.001
    thr_vote: int = 4
    vote_rule: str = "at_least"  # "at_least" (the paper's prose) | "more_than" (its pseudocode)
    temperature: float | None = None  # softmax temperature; None: calibrated per similarity measure
    exact_stage: bool = True  # whole-answer exact match first (docs/method.md); False: the pseudocode's order
    drop_nested: bool = True  # contains: a match inside a longer match is dropped (False: the pseudocode)
    contains: str = "whole_word"  # "whole_word" | "substring" (the pseudocode's raw test)
    contains_scope: str = "all"  # "all" (docs/method.md: deepest match) | "topk_first" (the pseudocode's scan)
    ngram_sizes: tuple[int, ...] = (4, 3, 2)
    base_forms: bool = True  # words compared in their noun base form ("tenches" = "tench")
    similarity: str = "ratio"  # a rapidfuzz scorer name or "sentence-transformers:<local path>"
    prefilter: bool = True  # exact candidate bound before the full scan (package docstring)
    skip_name_kinds: tuple[str, ...] = ("synset",)  # name kinds that are identifiers, not names
    max_answer_chars: int = 2000  # longer answers are cut (at a word boundary) and flagged: bounded cost

    #: What each field may be (:func:`taxoforge.params.validate_params`, the one parameter checker).
    CONSTRAINTS = {
        "k": [Interval(Integral, 2, None)], "thr_topk": [Interval(Real, 0, None)], "thr_top2": [Interval(Real, 0, None)],
        "thr_vote": [Interval(Integral, 1, None)], "vote_rule": [Options(("at_least", "more_than"))],
        "temperature": [Interval(Real, 0, None, closed="neither"), None], "exact_stage": [bool], "drop_nested": [bool],
        "contains": [Options(("whole_word", "substring"))], "contains_scope": [Options(("all", "topk_first"))],
        "ngram_sizes": [Sequence], "base_forms": [bool], "similarity": [str], "prefilter": [bool],
        "skip_name_kinds": [Sequence], "max_answer_chars": [Interval(Integral, 1, None)],
    }

    def __post_init__(self) -> None:
        validate_params("MappingConfig", {f.name: getattr(self, f.name) for f in fields(self)}, self.CONSTRAINTS)
        if not self.ngram_sizes or any(n not in Interval(Integral, 1, None) for n in self.ngram_sizes):
            raise InvalidParameterError(f"the 'ngram_sizes' parameter of MappingConfig must be positive integers; "
                                        f"got {self.ngram_sizes!r}")
        if self.temperature is None:
            object.__setattr__(self, "temperature", default_temperature(self.similarity))
        object.__setattr__(self, "temperature", float(self.temperature))
        object.__setattr__(self, "ngram_sizes", tuple(int(n) for n in self.ngram_sizes))
        object.__setattr__(self, "skip_name_kinds", tuple(self.skip_name_kinds))

    def to_dict(self) -> dict:
        """The configuration as plain JSON values (tuples as lists).

        Returns
        -------
        dict
            One entry per field.
        """
        d = asdict(self)
        d["ngram_sizes"] = list(self.ngram_sizes)
        d["skip_name_kinds"] = list(self.skip_name_kinds)
        return d

    def to_json(self) -> str:
        """The configuration as one JSON object, keys sorted (what a run records).

        Returns
        -------
        str
            The JSON text.
        """
        return json.dumps(self.to_dict(), sort_keys=True)

    @property
    def config_id(self) -> str:
        """Short content hash of the configuration."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:12]

    #: the fields the name tables depend on (:mod:`taxoforge.scores.mapping.store`)
    INDEX_FIELDS = ("base_forms", "ngram_sizes", "skip_name_kinds")

    def index_config(self) -> dict:
        """The fields the name tables depend on, as JSON values.

        Returns
        -------
        dict
            The fields the name tables depend on, as JSON values.
        """
        d = self.to_dict()
        return {k: d[k] for k in self.INDEX_FIELDS}

    @property
    def index_id(self) -> str:
        """Short content hash of :meth:`index_config`: configurations that differ only in
        other fields (k, thresholds, temperature, similarity …) share one stored index."""
        return hashlib.sha256(json.dumps(self.index_config(), sort_keys=True).encode()).hexdigest()[:12]


@dataclass
class MappingResult:
    """One batch mapped: per prediction the node index, the deciding stage (:data:`STAGES`),
    the similarity of the chosen node and how many nodes tied under the deciding rule before
    the tie-break (``tied`` > 1: an ambiguous name, reported), whether it was cut to
    ``max_answer_chars`` (``truncated``); ``stats`` counts stages and retrieval paths.

    Attributes
    ----------
    node_idx : numpy.ndarray
        The chosen node's index, one per prediction.
    stage : numpy.ndarray
        The stage that decided (:data:`STAGES`).
    score : numpy.ndarray
        The similarity of the chosen node.
    tied : numpy.ndarray or None
        Nodes tied under the deciding rule before the tie-break (1: unambiguous).
    stats : dict
        Counts of stages and retrieval paths.
    truncated : numpy.ndarray or None
        Whether each answer was longer than ``max_answer_chars`` and cut.
    """

    node_idx: np.ndarray  # int64, one per prediction
    stage: np.ndarray  # object
    score: np.ndarray  # similarity of the chosen node
    tied: np.ndarray | None = None  # int64: nodes tied under the deciding rule (1: unambiguous)
    stats: dict = field(default_factory=dict)
    truncated: np.ndarray | None = None  # bool: the answer was longer than max_answer_chars and was cut


STAGES = ("empty", "exact", "contains", "ngram4", "ngram3", "ngram2", "vote", "top1")
