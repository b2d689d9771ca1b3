"""Pluggable similarity measures between a prediction and node names (docs/method.md#mapping-an-answer-to-a-node).

A measure is bound once to the list of (normalised, unique) names of a taxonomy and then
scores one query against all names or a subset of them, returning similarities in
``[0, 1]`` for string measures (cosine in ``[-1, 1]`` for embeddings).

* :class:`StringSimilarity` — the offline default, `rapidfuzz <https://rapidfuzz.github.io>`_
  scorers run in C++: ``ratio`` (normalised Indel similarity, the default), ``wratio``,
  ``token_sort_ratio``, ``token_set_ratio``, ``partial_ratio``. ``ratio`` has a provable
  candidate bound that the exact prefilter of :mod:`taxoforge.scores.mapping` uses
  (``bound = "indel"``).
* :class:`EmbeddingSimilarity` — cosine similarity of unit-length embeddings from any
  encoder ``encode(list[str]) -> array``. The names of a tree are embedded once
  (``embed_names``); ``bind(names, embeddings)`` takes precomputed, possibly memory-mapped
  embeddings (the name embeddings stored beside a persisted index), and a measure with a
  ``model_id`` reuses the embeddings of the same names computed earlier in the process
  (:data:`taxoforge.scores.mapping.sentence_models.NAME_EMBEDDINGS`). Its full scan is
  :meth:`EmbeddingSimilarity.top_names`: the exact best names of each query, searched in
  blocks in float32 where the embeddings live (:mod:`taxoforge.scores.mapping.embedding_search`).

The model-backed measures (a sentence-transformers model, the static model distilled from
it) and :func:`~taxoforge.scores.mapping.embedding_measures.similarity_from_spec` are in
:mod:`taxoforge.scores.mapping.embedding_measures`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa
from rapidfuzz import fuzz, process

from taxoforge.scores.mapping.embedding_search import DeviceEmbeddings, exact_scores, top_names_cpu, top_names_torch
from taxoforge.scores.mapping.sentence_models import NAME_EMBEDDINGS, names_digest
from taxoforge.scores.mapping.strings import take_strings

__all__ = [
    "name_texts",
    "Similarity",
    "StringSimilarity",
    "EmbeddingSimilarity",
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

    def bind(self, names: Sequence[str], embeddings: np.ndarray | None = None) -> None:  # pragma: no cover
        """Bind the measure to the names it will score against.

        Parameters
        ----------
        names : sequence of str or pyarrow string array
            The (normalised, unique) names of a taxonomy.
        embeddings : numpy.ndarray, optional
            Precomputed unit-length embeddings of ``names``, one row each (embedding measures only).
        """
        raise NotImplementedError

    def scores(self, query: str, name_ids: np.ndarray | None = None) -> np.ndarray:  # pragma: no cover
        """Similarities of ``query`` to the bound names.

        Parameters
        ----------
        query : str
            The answer's text, in the names' normal form.
        name_ids : numpy.ndarray, optional
            Indexes of the names to score (default: all bound names).

        Returns
        -------
        numpy.ndarray
            One similarity per name, in the order of ``name_ids``.
        """
        raise NotImplementedError

    def pair(self, a: str, b: str) -> float:  # pragma: no cover - interface
        """Similarity of two strings (used by the reference implementation).

        Parameters
        ----------
        a, b : str
            The two texts.

        Returns
        -------
        float
            Their similarity.
        """
        raise NotImplementedError

    def prepare(self, queries: Sequence[str]) -> None:
        """Told the queries about to be scored (``Answer.query`` of every answer of a batch),
        a measure may do its per-query work for all of them at once. String measures need
        nothing; an embedding measure embeds them in batches (one model call per
        ``batch_size`` queries instead of one per query).

        Parameters
        ----------
        queries : Sequence[str]
            The answers about to be scored (``Answer.query`` of every answer of a batch).
        """

    def batch_scores(self, queries: Sequence[str]) -> np.ndarray:
        """``(len(queries), n_names)`` similarities of each query to every bound name.

        Parameters
        ----------
        queries : Sequence[str]
            The answers' texts.

        Returns
        -------
        numpy.ndarray
            ``(len(queries), n_names)`` similarities of each query to every bound name.
        """
        return np.stack([self.scores(q) for q in queries]) if len(queries) else np.zeros((0, 0))


class StringSimilarity(Similarity):
    """A rapidfuzz scorer, rescaled from 0–100 to 0–1. ``ratio`` (normalised Indel
    similarity) has a q-gram candidate bound (:mod:`taxoforge.scores.mapping.candidates`).

    Parameters
    ----------
    scorer : str, optional
        A key of :data:`STRING_SCORERS`.
    """

    def __init__(self, scorer: str = "ratio") -> None:
        if scorer not in STRING_SCORERS:
            raise ValueError(f"unknown string similarity {scorer!r}; choose one of {sorted(STRING_SCORERS)}")
        self.name = scorer
        self.bound = "indel" if scorer == "ratio" else None
        self._scorer = STRING_SCORERS[scorer]
        self.bind([])

    def bind(self, names) -> None:
        """``names``: a sequence of str, or an Arrow string array (read lazily: only the
        names scored are decoded until a full scan needs them all).

        Parameters
        ----------
        names : object
            The names table.
        """
        self._arrow = names if isinstance(names, (pa.Array, pa.ChunkedArray)) else None
        self._list = None if self._arrow is not None else list(names)
        self._names_arr = None

    @property
    def _names(self) -> list[str]:
        if self._list is None:
            self._list = self._arrow.to_pylist()
        return self._list

    def _choices(self, name_ids: np.ndarray) -> list[str]:
        if self._arrow is not None:  # from the buffers: faster than gathering from a list of every name
            if len(name_ids) <= 8:
                return [self._arrow[int(j)].as_py() for j in name_ids]
            return take_strings(self._arrow, name_ids)
        if self._names_arr is None:
            self._names_arr = np.asarray(self._list, dtype=object)  # fast gathering of subsets
        return self._names_arr[name_ids].tolist()

    def scores(self, query: str, name_ids: np.ndarray | None = None) -> np.ndarray:
        """Similarities of ``query`` to the bound names.

        Parameters
        ----------
        query : str
            The answer's text, in the names' normal form.
        name_ids : numpy.ndarray, optional
            Indexes of the names to score (default: all bound names).

        Returns
        -------
        numpy.ndarray
            One similarity per name, in the order of ``name_ids``.
        """
        choices = self._names if name_ids is None else self._choices(name_ids)
        if not choices:
            return np.zeros(0)
        if len(choices) <= 16:  # a few pairs: the scorer directly, without cdist's set-up
            return np.fromiter((self._scorer(query, c) for c in choices), np.float64, count=len(choices)) / 100.0
        return process.cdist([query], choices, scorer=self._scorer, dtype=np.float64, workers=1)[0] / 100.0

    def pair(self, a: str, b: str) -> float:
        """Similarity of two strings (used by the reference implementation).

        Parameters
        ----------
        a, b : str
            The two texts.

        Returns
        -------
        float
            Their similarity.
        """
        return self._scorer(a, b) / 100.0

    def batch_scores(self, queries: Sequence[str]) -> np.ndarray:
        """Similarities of each query to every bound name.

        Parameters
        ----------
        queries : sequence of str
            The answers' texts.

        Returns
        -------
        numpy.ndarray
            ``(len(queries), n_names)`` similarities.
        """
        if not len(queries) or not len(self._names):
            return np.zeros((len(queries), len(self._names)))
        out = process.cdist(list(queries), self._names, scorer=self._scorer, dtype=np.float64, workers=-1)
        out /= 100.0
        return out


class EmbeddingSimilarity(Similarity):
    """Cosine similarity of unit-length embeddings. ``encoder(list_of_texts) -> (n, d) array``.

    ``bind(names)`` embeds the names once: where the measure has a ``model_id`` (a model's
    weights, :class:`~taxoforge.scores.mapping.embedding_measures.SentenceTransformerSimilarity`),
    the embeddings of the same names by the same model computed earlier in this process are
    reused (:data:`taxoforge.scores.mapping.sentence_models.NAME_EMBEDDINGS`).
    ``bind(names, embeddings)`` takes precomputed embeddings instead (``(len(names), d)``,
    rows unit length, possibly memory-mapped; they are not copied) — e.g. read from the name
    embeddings stored beside a persisted index. Queries are embedded in batches and kept.

    The full scan (:meth:`top_names`) runs where ``search_device`` says: ``"cpu"`` (numpy,
    float32, in blocks) or a torch device such as ``"cuda"``, where the names' embeddings are
    uploaded once and kept.

    Parameters
    ----------
    encoder : Callable[[list[str]], numpy.ndarray]
        ``encoder(list_of_texts) -> (n, d) array``.
    name : str, optional
        The measure's name, as runs record it.
    batch_size : int, optional
        Texts embedded per model call.
    """

    model_id: str | None = None  # a stable id of the model's weights: None for an ad-hoc encoder
    search_device: str = "cpu"  # where top_names runs: "cpu" (numpy) or a torch device ("cuda")

    def __init__(self, encoder: Callable[[list[str]], np.ndarray], name: str = "embedding", batch_size: int = 256) -> None:
        self.name = name
        self._encode = encoder
        self._batch = batch_size
        self._emb: np.ndarray | None = None
        self._on_device: DeviceEmbeddings | None = None
        self._cache: dict[str, np.ndarray] = {}

    # ------------------------------------------------------------------ embedding
    def embed_names(self, names: Sequence[str], progress: bool | None = None) -> np.ndarray:
        """``(len(names), d)`` float32 embeddings, rows unit length (a zero row stays zero).
        ``progress=None``: a progress bar from 5,000 texts on.

        Parameters
        ----------
        names : Sequence[str]
            The names table.
        progress : bool, optional
            Whether to show a progress bar.

        Returns
        -------
        numpy.ndarray
            ``(len(names), d)`` float32 embeddings, rows unit length (a zero row stays
            zero).
        """
        texts = name_texts(names)
        if progress is None:
            progress = len(texts) >= 5000
        # batches of texts of similar length (little padding), in the caller's order at the end
        order = np.argsort(np.fromiter((len(t) for t in texts), np.int64, count=len(texts)), kind="stable")
        by_len = [texts[i] for i in order]
        starts = range(0, len(texts), self._batch)
        if progress:
            from tqdm.auto import tqdm

            starts = tqdm(starts, desc=f"embedding names ({self.name})", unit="batch", leave=False)
        parts = []
        for i in starts:
            part = np.asarray(self._encode(by_len[i:i + self._batch]), dtype=np.float32)
            if part.ndim != 2 or part.shape[0] != len(by_len[i:i + self._batch]):
                raise ValueError(f"{self.name}: the encoder returned shape {part.shape} for "
                                 f"{len(by_len[i:i + self._batch])} texts; expected one row per text")
            parts.append(part)
        if not parts:
            return np.zeros((0, 1), np.float32)
        e = np.empty((len(texts), parts[0].shape[1]), np.float32)
        e[order] = np.concatenate(parts)
        norm = np.linalg.norm(e, axis=1, keepdims=True)
        e /= np.where(norm > 0, norm, 1.0)
        return e

    def _embed(self, texts: list[str]) -> np.ndarray:
        return self.embed_names(texts, progress=False)

    def bind(self, names: Sequence[str], embeddings: np.ndarray | None = None) -> None:
        """Bind the measure to the names it will score against.

        Parameters
        ----------
        names : sequence of str or pyarrow string array
            The (normalised, unique) names of a taxonomy.
        embeddings : numpy.ndarray, optional
            Precomputed unit-length embeddings of ``names``, one row each (embedding measures only).
        """
        names = name_texts(names)
        self._on_device = None
        if embeddings is not None:
            e = embeddings
            if e.ndim != 2 or e.shape[0] != len(names) or e.dtype != np.float32:
                raise ValueError(f"{self.name}: precomputed embeddings of shape {e.shape} and dtype {e.dtype} "
                                 f"for {len(names)} names; expected ({len(names)}, d) float32")
            self._emb = e
            return
        if self.model_id is None:
            self._emb = self.embed_names(names)
            return
        key = (self.model_id, names_digest(names))
        e = NAME_EMBEDDINGS.get(key)
        if e is None:
            e = self.embed_names(names)
            e.setflags(write=False)
            NAME_EMBEDDINGS.put(key, e)
        self._emb = e

    @property
    def embeddings(self) -> np.ndarray:
        """The bound names' embeddings (``bind`` first)."""
        if self._emb is None:
            raise RuntimeError(f"{type(self).__name__}.bind(names) must be called first")
        return self._emb

    def _queries(self, queries: Sequence[str]) -> np.ndarray:
        """Embeddings of ``queries``, those not seen before embedded in one batch and kept
        (up to 100,000 queries)."""
        todo = list(dict.fromkeys(q for q in queries if q not in self._cache))
        if todo:
            e = self._embed(todo)
            if len(self._cache) + len(todo) <= 100_000:
                self._cache.update(zip(todo, e))
            else:
                fresh = dict(zip(todo, e))
                return np.stack([self._cache[q] if q in self._cache else fresh[q] for q in queries])
        if not len(queries):
            return np.zeros((0, self.embeddings.shape[1]), np.float32)
        return np.stack([self._cache[q] for q in queries])

    def _query(self, query: str) -> np.ndarray:
        return self._queries([query])[0]

    def prepare(self, queries: Sequence[str]) -> None:
        """Embed the queries not seen before in batches and keep them (up to the cache's
        100,000 queries), so that scoring them costs no model call.

        Parameters
        ----------
        queries : Sequence[str]
            The answers about to be scored.
        """
        room = 100_000 - len(self._cache)
        todo = list(dict.fromkeys(q for q in queries if q not in self._cache))[:max(0, room)]
        if todo:
            self._cache.update(zip(todo, self.embed_names(todo, progress=False)))

    def scores(self, query: str, name_ids: np.ndarray | None = None) -> np.ndarray:
        """Similarities of ``query`` to the bound names.

        Parameters
        ----------
        query : str
            The answer's text, in the names' normal form.
        name_ids : numpy.ndarray, optional
            Indexes of the names to score (default: all bound names).

        Returns
        -------
        numpy.ndarray
            One similarity per name, in the order of ``name_ids``: the dot product accumulated
            in float64 (:func:`~taxoforge.scores.mapping.embedding_search.exact_scores`), the
            value the full scan gives the same pair.
        """
        return exact_scores(self._query(query), self.embeddings, None if name_ids is None else np.asarray(name_ids))

    def pair(self, a: str, b: str) -> float:
        """Similarity of two strings (used by the reference implementation).

        Parameters
        ----------
        a, b : str
            The two texts.

        Returns
        -------
        float
            Their similarity.
        """
        qa, qb = self._queries([a, b])
        return float(exact_scores(qa, qb[None, :])[0])

    def batch_scores(self, queries: Sequence[str]) -> np.ndarray:
        """Similarities of each query to every bound name, float32 (the whole matrix: for a
        few queries; the full scan uses :meth:`top_names`).

        Parameters
        ----------
        queries : sequence of str
            The answers' texts.

        Returns
        -------
        numpy.ndarray
            ``(len(queries), n_names)`` similarities.
        """
        emb = self.embeddings
        q = self._queries(list(queries))
        return q @ emb.T

    def top_names(self, queries: Sequence[str], L: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """Every name scoring at least each query's ``L``-th best similarity, ties included
        (:mod:`taxoforge.scores.mapping.embedding_search`): searched in float32 blocks on
        ``search_device``, never the whole similarity matrix at once.

        Parameters
        ----------
        queries : sequence of str
            The answers' texts.
        L : int
            How many of the best similarities the threshold takes.

        Returns
        -------
        list[tuple[numpy.ndarray, numpy.ndarray]]
            Per query: name indexes (ascending) and their similarities (float64).
        """
        emb = self.embeddings
        q = self._queries(list(queries))
        if self.search_device == "cpu":
            return top_names_cpu(q, emb, L)
        if self._on_device is None:
            self._on_device = DeviceEmbeddings(emb, self.search_device)
        return top_names_torch(q, self._on_device, L)


def name_texts(names) -> list[str]:
    """``names`` (a sequence of str, or an Arrow string array) as a list of str.

    Parameters
    ----------
    names : sequence of str or pyarrow.Array
        The names.

    Returns
    -------
    list of str
    """
    to_pylist = getattr(names, "to_pylist", None)  # pyarrow Array / ChunkedArray
    return [str(t) for t in (to_pylist() if callable(to_pylist) else names)]
