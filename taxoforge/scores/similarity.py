"""Pluggable similarity measures between a prediction and node names (SPEC §3).

A measure is bound once to the list of (normalised, unique) names of a taxonomy and then
scores one query against all names or a subset of them, returning similarities in
``[0, 1]`` for string measures (cosine in ``[-1, 1]`` for embeddings).

* :class:`StringSimilarity` — the offline default, `rapidfuzz <https://rapidfuzz.github.io>`_
  scorers run in C++: ``ratio`` (normalised Indel similarity, the default), ``wratio``,
  ``token_sort_ratio``, ``token_set_ratio``, ``partial_ratio``. ``ratio`` has a provable
  candidate bound that the exact prefilter of :mod:`taxoforge.scores.mapping` uses
  (``bound = "indel"``).
* :class:`EmbeddingSimilarity` — cosine similarity of embeddings from any encoder
  ``encode(list[str]) -> array``; names are encoded once.
* :func:`sentence_transformer_similarity` — an :class:`EmbeddingSimilarity` over a
  sentence-transformers (or CLIP text) model **found at a local path**; nothing is downloaded.

:func:`similarity_from_spec` turns the ``similarity`` field of a mapping configuration
(``"ratio"``, ``"token_set_ratio"``, ``"sentence-transformers:/models/all-MiniLM-L6-v2"``)
into a measure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
from rapidfuzz import fuzz, process

__all__ = [
    "Similarity",
    "StringSimilarity",
    "EmbeddingSimilarity",
    "sentence_transformer_similarity",
    "similarity_from_spec",
    "STRING_SCORERS",
]

STRING_SCORERS = {
    "ratio": fuzz.ratio,
    "wratio": fuzz.WRatio,
    "token_sort_ratio": fuzz.token_sort_ratio,
    "token_set_ratio": fuzz.token_set_ratio,
    "partial_ratio": fuzz.partial_ratio,
}


class Similarity:
    """Interface: ``bind(names)`` once, then ``scores(query, name_ids)``."""

    name: str = "similarity"
    bound: str | None = None  # a candidate bound the prefilter may use ("indel": the ratio's q-gram bound)

    def bind(self, names: Sequence[str]) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def scores(self, query: str, name_ids: np.ndarray | None = None) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def pair(self, a: str, b: str) -> float:  # pragma: no cover - interface
        """Similarity of two strings (used by the reference implementation)."""
        raise NotImplementedError

    def batch_scores(self, queries: Sequence[str]) -> np.ndarray:
        """``(len(queries), n_names)`` similarities of each query to every bound name."""
        return np.stack([self.scores(q) for q in queries]) if len(queries) else np.zeros((0, 0))


class StringSimilarity(Similarity):
    """A rapidfuzz scorer, rescaled from 0–100 to 0–1. ``ratio`` (normalised Indel
    similarity) has a q-gram candidate bound (:mod:`taxoforge.scores.mapping.candidates`)."""

    def __init__(self, scorer: str = "ratio") -> None:
        if scorer not in STRING_SCORERS:
            raise ValueError(f"unknown string similarity {scorer!r}; choose one of {sorted(STRING_SCORERS)}")
        self.name = scorer
        self.bound = "indel" if scorer == "ratio" else None
        self._scorer = STRING_SCORERS[scorer]
        self.bind([])

    def bind(self, names) -> None:
        """``names``: a sequence of str, or an Arrow string array (read lazily: only the
        names scored are decoded until a full scan needs them all)."""
        self._arrow = names if isinstance(names, (pa.Array, pa.ChunkedArray)) else None
        self._list = None if self._arrow is not None else list(names)
        self._names_arr = None

    @property
    def _names(self) -> list[str]:
        if self._list is None:
            self._list = self._arrow.to_pylist()
        return self._list

    def _choices(self, name_ids: np.ndarray) -> list[str]:
        if self._list is None:  # not materialised: decode the subset
            if len(name_ids) <= 8:
                return [self._arrow[int(j)].as_py() for j in name_ids]
            return self._arrow.take(np.asarray(name_ids, np.int64)).to_pylist()
        if self._names_arr is None:
            self._names_arr = np.asarray(self._list, dtype=object)  # fast gathering of subsets
        return self._names_arr[name_ids].tolist()

    def scores(self, query: str, name_ids: np.ndarray | None = None) -> np.ndarray:
        choices = self._names if name_ids is None else self._choices(name_ids)
        if not choices:
            return np.zeros(0)
        if len(choices) <= 16:  # a few pairs: the scorer directly, without cdist's set-up
            return np.fromiter((self._scorer(query, c) for c in choices), np.float64, count=len(choices)) / 100.0
        return process.cdist([query], choices, scorer=self._scorer, dtype=np.float64, workers=1)[0] / 100.0

    def pair(self, a: str, b: str) -> float:
        return self._scorer(a, b) / 100.0

    def batch_scores(self, queries: Sequence[str]) -> np.ndarray:
        if not len(queries) or not len(self._names):
            return np.zeros((len(queries), len(self._names)))
        out = process.cdist(list(queries), self._names, scorer=self._scorer, dtype=np.float64, workers=-1)
        out /= 100.0
        return out


class EmbeddingSimilarity(Similarity):
    """Cosine similarity of embeddings. ``encoder(list_of_texts) -> (n, d) array``."""

    def __init__(self, encoder: Callable[[list[str]], np.ndarray], name: str = "embedding", batch_size: int = 256) -> None:
        self.name = name
        self._encode = encoder
        self._batch = batch_size
        self._emb: np.ndarray | None = None
        self._cache: dict[str, np.ndarray] = {}

    def _embed(self, texts: list[str]) -> np.ndarray:
        parts = [np.asarray(self._encode(texts[i:i + self._batch]), dtype=np.float32) for i in range(0, len(texts), self._batch)]
        e = np.concatenate(parts) if parts else np.zeros((0, 1), np.float32)
        norm = np.linalg.norm(e, axis=1, keepdims=True)
        return e / np.where(norm > 0, norm, 1.0)

    def bind(self, names: Sequence[str]) -> None:
        self._emb = self._embed(names.to_pylist() if isinstance(names, (pa.Array, pa.ChunkedArray)) else list(names))

    def _query(self, query: str) -> np.ndarray:
        q = self._cache.get(query)
        if q is None:
            q = self._embed([query])[0]
            if len(self._cache) < 100_000:
                self._cache[query] = q
        return q

    def scores(self, query: str, name_ids: np.ndarray | None = None) -> np.ndarray:
        if self._emb is None:
            raise RuntimeError("EmbeddingSimilarity.bind(names) must be called first")
        q = self._query(query)
        e = self._emb if name_ids is None else self._emb[name_ids]
        return (e @ q).astype(np.float64)

    def pair(self, a: str, b: str) -> float:
        return float(self._query(a) @ self._query(b))

    def batch_scores(self, queries: Sequence[str]) -> np.ndarray:
        if self._emb is None:
            raise RuntimeError("EmbeddingSimilarity.bind(names) must be called first")
        q = np.stack([self._query(x) for x in queries]) if len(queries) else np.zeros((0, self._emb.shape[1]))
        return (q @ self._emb.T).astype(np.float64)


def sentence_transformer_similarity(model_path: str | Path) -> EmbeddingSimilarity:
    """Sentence-embedding similarity from a model stored at ``model_path`` (a folder that
    ``sentence_transformers.SentenceTransformer`` can load, including CLIP text models).
    Never downloads: a missing folder is an error."""
    path = Path(model_path)
    if not path.exists():
        raise FileNotFoundError(f"embedding model not found at {path}: point --similarity at a local model folder")
    try:
        from sentence_transformers import SentenceTransformer  # optional extra
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("sentence-embedding similarity needs the optional package 'sentence-transformers' "
                          "(pip install sentence-transformers)") from e
    model = SentenceTransformer(str(path), local_files_only=True)  # pragma: no cover

    def encode(texts: list[str]) -> np.ndarray:  # pragma: no cover
        return model.encode(texts, normalize_embeddings=True, show_progress_bar=False)

    return EmbeddingSimilarity(encode, name=f"sentence-transformers:{path}")  # pragma: no cover


def similarity_from_spec(spec: str | Similarity) -> Similarity:
    """``"ratio"`` etc. → :class:`StringSimilarity`; ``"sentence-transformers:<path>"`` →
    :func:`sentence_transformer_similarity`; a :class:`Similarity` is returned as is."""
    if isinstance(spec, Similarity):
        return spec
    if spec.startswith(("sentence-transformers:", "st:", "clip-text:")):
        return sentence_transformer_similarity(spec.split(":", 1)[1])
    return StringSimilarity(spec)
