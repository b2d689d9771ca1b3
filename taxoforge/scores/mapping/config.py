"""Configuration of the text → node mapping: the parameters of Alg. 1 (SPEC §3) and of
this implementation, the result type, and the function words that never name a node."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field

import numpy as np

__all__ = ["MappingConfig", "MappingResult", "STOP_WORDS"]

STOP_WORDS = frozenset(
    "a an the this that these those it its is are was were be been being am of in on at to for from by with "
    "and or nor but not no yes as if so than then there here which what who whom whose i me my we our you your "
    "he him his she her they them their do does did has have had can could may might will would should shall "
    "must very some any all each one also just only".split()
)


@dataclass(frozen=True)
class MappingConfig:
    """Parameters of Alg. 1 (SPEC §3) and of this implementation."""

    k: int = 10
    thr_topk: float = 0.0015
    thr_top2: float = 0.001
    thr_vote: int = 4
    vote_rule: str = "at_least"  # "at_least" (the paper's prose) | "more_than" (its pseudocode)
    temperature: float = 100.0  # softmax temperature (CLIP's logit scale)
    contains: str = "whole_word"  # "whole_word" | "substring" (the pseudocode's raw test)
    contains_scope: str = "topk_first"  # "topk_first" (the pseudocode) | "all"
    ngram_sizes: tuple[int, ...] = (4, 3, 2)
    similarity: str = "ratio"  # a rapidfuzz scorer name or "sentence-transformers:<local path>"
    prefilter: bool = True  # string measures: top-k over names sharing a stemmed word (see the package doc)
    fuzzy_candidates: int = 1024  # prefilter: names taken from the character-trigram index (0: off)
    fuzzy_min_names: int = 100_000  # ... only for taxonomies with more names than this (below: exact full scan)
    skip_name_kinds: tuple[str, ...] = ("synset",)  # name kinds that are identifiers, not names

    def __post_init__(self) -> None:
        if self.vote_rule not in ("at_least", "more_than"):
            raise ValueError(f"vote_rule must be 'at_least' or 'more_than', not {self.vote_rule!r}")
        if self.contains not in ("whole_word", "substring"):
            raise ValueError(f"contains must be 'whole_word' or 'substring', not {self.contains!r}")
        if self.contains_scope not in ("topk_first", "all"):
            raise ValueError(f"contains_scope must be 'topk_first' or 'all', not {self.contains_scope!r}")
        if self.k < 2:
            raise ValueError(f"k must be at least 2, not {self.k}")
        object.__setattr__(self, "ngram_sizes", tuple(int(n) for n in self.ngram_sizes))
        object.__setattr__(self, "skip_name_kinds", tuple(self.skip_name_kinds))

    def to_dict(self) -> dict:
        d = asdict(self)
        d["ngram_sizes"] = list(self.ngram_sizes)
        d["skip_name_kinds"] = list(self.skip_name_kinds)
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @property
    def config_id(self) -> str:
        """Short content hash of the configuration."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:12]


@dataclass
class MappingResult:
    """One batch mapped: per prediction the node index, the deciding stage (``contains``,
    ``ngram4``, ``ngram3``, ``ngram2``, ``vote``, ``top1``, ``empty``) and the similarity of
    the chosen node; ``stats`` counts stages and retrieval paths."""

    node_idx: np.ndarray  # int64, one per prediction
    stage: np.ndarray  # object
    score: np.ndarray  # similarity of the chosen node
    stats: dict = field(default_factory=dict)
