"""A static embedding model distilled on this machine from a sentence model: fast names on a CPU.

A sentence model such as all-MiniLM-L6-v2 runs a transformer over every name (about 600
names/s on 2 CPU cores). A *static* model looks each token up in a table and averages: the
idea of Model2Vec (*Tulkens & van Dongen 2024 [31]*), distilled here from the packaged model
with the library's own pieces, nothing downloaded:

1. **vocabulary** — every token of the source model's tokenizer except its special tokens and
   the ``[unusedN]`` placeholders;
2. **token vectors** — each token alone through the source model, framed by its special
   tokens as the tokenizer frames a text (``[CLS] token [SEP]``), mean-pooled over the
   output tokens;
3. **PCA** to ``dims`` dimensions (numpy's symmetric eigendecomposition of the covariance,
   each axis's sign fixed by its largest score, so the result is deterministic);
4. **Zipf weighting** — with no corpus at hand, token ``r``-th in vocabulary order is taken to
   have frequency ``∝ 1/r`` (Zipf's law), and its vector is scaled by the smooth inverse
   frequency ``a / (a + p_r)`` (``a = sif``; the SIF weighting of *Arora et al. 2017 [32]*), which damps
   frequent sub-words.

A text's embedding is the mean of its tokens' vectors (tokenised without special tokens;
unknown and removed tokens contribute nothing), scaled to unit length. Where the tokenizer
splits on whitespace before anything else crosses a word (BERT's pre-tokenizer: WordPiece
never spans a space), a batch's distinct words are tokenised once and the texts summed from
them with one sparse product — the same tokens, far fewer tokenizer calls; other tokenizers
tokenise each text whole.

:func:`static_model_folder` distils once per source model and recipe into
``<cache>/models/`` (atomically, under a file lock, with a stamp of the recipe, the source
model's id and every file's sha256, checked on each use, like the packaged model's folder);
:class:`StaticModel` loads such a folder. The measure is
:class:`taxoforge.scores.mapping.embedding_measures.StaticEmbeddingSimilarity`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from taxoforge.files.atomic import atomic_directory, write_text_atomic
from taxoforge.scores.mapping.sentence_models import (
    EMBEDDINGS_INSTALL,
    MINILM,
    MODEL_STAMP,
    ModelPackageMissing,
    _model_files,
    _model_id_from_hashes,
    _sha256_file,
    cache_root,
    load_sentence_transformer,
    model_folder,
    model_id_of,
)

__all__ = ["STATIC_RECIPE", "StaticModel", "static_model_folder", "distil_token_vectors"]

# the distillation's recipe: a change here gives a new folder (and model id)
STATIC_RECIPE = {"version": 1, "dims": 256, "sif": 1e-4, "pooling": "mean", "removed": r"\[unused\d+\]"}
# the characters BERT's normaliser turns into a word break (tabs, line ends, and every Unicode
# space that is not a control character: controls are deleted, not broken on)
_BERT_SPACES = re.compile("[\t\n\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+")


def distil_token_vectors(model, tok, *, dims: int, sif: float, removed: str,
                         batch_size: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """Steps 1–4 of the module docstring: one vector per token id (zero rows for removed
    tokens), and which ids are kept.

    Parameters
    ----------
    model : sentence_transformers.SentenceTransformer
        The source model (float32).
    tok : tokenizers.Tokenizer
        Its tokenizer (:func:`~taxoforge.scores.mapping.sentence_encoding.text_tokenizer`).
    dims : int
        Dimensions kept by the PCA (at most the model's).
    sif : float
        The SIF coefficient ``a`` of the Zipf weighting (``0 < a < 1``).
    removed : str
        A regular expression of tokens left out besides the special tokens.
    batch_size : int, optional
        Tokens per model call.

    Returns
    -------
    vectors : numpy.ndarray
        ``(vocabulary size, dims)`` float32.
    kept : numpy.ndarray
        bool, one per token id.
    """
    import torch

    if not 0 < sif < 1:
        raise ValueError(f"sif must lie in (0, 1), not {sif}")
    vocab = tok.get_vocab(with_added_tokens=True)
    size = max(vocab.values()) + 1
    special = {t.content for t in tok.get_added_tokens_decoder().values()} if hasattr(
        tok, "get_added_tokens_decoder") else set()
    pattern = re.compile(removed)
    kept = np.zeros(size, bool)
    for token, i in vocab.items():
        kept[i] = token not in special and not pattern.fullmatch(token)
    ids = np.flatnonzero(kept)
    if not len(ids):
        raise ValueError("no token left to distil after removing the special and placeholder tokens")
    frame = tok.encode("a", add_special_tokens=True).ids  # how the tokenizer frames one token
    at = frame.index(tok.token_to_id("a"))
    before, after = frame[:at], frame[at + 1:]
    extra = {k: v for k, v in model.preprocess([""]).items() if not isinstance(v, torch.Tensor)}
    rows = []
    with torch.inference_mode():
        for i in range(0, len(ids), batch_size):
            chunk = ids[i:i + batch_size]
            seq = np.hstack([np.tile(before, (len(chunk), 1)).reshape(len(chunk), -1), chunk[:, None],
                             np.tile(after, (len(chunk), 1)).reshape(len(chunk), -1)]).astype(np.int64)
            x = torch.from_numpy(seq).to(model.device)
            out = model({"input_ids": x, "token_type_ids": torch.zeros_like(x),
                         "attention_mask": torch.ones_like(x), **extra})
            rows.append(out["token_embeddings"].float().mean(dim=1).cpu().numpy())
    X = np.concatenate(rows).astype(np.float64)
    X -= X.mean(axis=0)
    eigvals, eigvecs = np.linalg.eigh(X.T @ X / max(1, len(X) - 1))
    comps = eigvecs[:, ::-1][:, :min(dims, X.shape[1])]
    Y = X @ comps
    Y *= np.sign(Y[np.abs(Y).argmax(axis=0), np.arange(Y.shape[1])])  # each axis's sign: its largest score positive
    inv_rank = 1.0 / np.arange(2, len(ids) + 2)
    p = inv_rank / inv_rank.sum()
    Y *= (sif / (sif + p))[:, None]
    vectors = np.zeros((size, Y.shape[1]), np.float32)
    vectors[ids] = Y
    return vectors, kept


def _splits_on_spaces(tok) -> bool:
    """Whether ``tok`` breaks text at every space before anything else (BERT's normaliser and
    pre-tokenizer), so that a text's tokens are its words' tokens one after the other."""
    spec = json.loads(tok.to_str())
    pre, norm = spec.get("pre_tokenizer") or {}, spec.get("normalizer") or {}
    return pre.get("type") == "BertPreTokenizer" and norm.get("type") in (None, "BertNormalizer")


class StaticModel:
    """A distilled static model (:func:`static_model_folder`): ``encode(texts)`` → unit rows.

    Parameters
    ----------
    folder : str or Path
        A folder written by :func:`static_model_folder`.
    """

    def __init__(self, folder: str | Path) -> None:
        try:
            from tokenizers import Tokenizer
        except ImportError:
            raise ModelPackageMissing(f"the static model needs the tokenizers library: {EMBEDDINGS_INSTALL}") from None

        self.folder = Path(folder)
        stamp = json.loads((self.folder / MODEL_STAMP).read_text(encoding="utf-8"))
        self.model_id = str(stamp["model_id"])
        self.recipe = dict(stamp["recipe"])
        self.source_model_id = str(stamp["source_model_id"])
        self.vectors = np.load(self.folder / "vectors.npy", allow_pickle=False)
        self.tokenizer = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self.by_words = _splits_on_spaces(self.tokenizer)
        self.dimensions = int(self.vectors.shape[1])

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dims)`` float32 embeddings, rows unit length; a text with no known
        token gets a zero row.

        Parameters
        ----------
        texts : Sequence[str]
            The texts.

        Returns
        -------
        numpy.ndarray
            One row per text.
        """
        import scipy.sparse as sp

        texts = [str(t) for t in texts]
        if self.by_words:  # each distinct word tokenised once; a text is the sum of its words
            word_index: dict[str, int] = {}
            cols: list[int] = []
            ptr = np.zeros(len(texts) + 1, np.int64)
            for i, t in enumerate(texts):
                for w in _BERT_SPACES.split(t):
                    if w:
                        cols.append(word_index.setdefault(w, len(word_index)))
                ptr[i + 1] = len(cols)
            units = list(word_index)
        else:
            units, cols, ptr = texts, list(range(len(texts))), np.arange(len(texts) + 1, dtype=np.int64)
        unit_sums = self._token_sums(units)
        A = sp.csr_matrix((np.ones(len(cols), np.float32), np.asarray(cols, np.int64), ptr),
                          shape=(len(texts), len(units)))
        e = np.asarray(A @ unit_sums, np.float32)
        norm = np.linalg.norm(e, axis=1, keepdims=True)
        e /= np.where(norm > 0, norm, 1.0)
        return e

    def _token_sums(self, units: list[str]) -> np.ndarray:
        """The sum of the token vectors of each unit (word or text), one row each."""
        import scipy.sparse as sp

        encs = self.tokenizer.encode_batch_fast(units, add_special_tokens=False) if units else []
        lens = np.fromiter((len(e.ids) for e in encs), np.int64, count=len(encs))
        ids = np.fromiter((t for e in encs for t in e.ids), np.int64, count=int(lens.sum()))
        T = sp.csr_matrix((np.ones(len(ids), np.float32), ids, np.concatenate(([0], np.cumsum(lens)))),
                          shape=(len(units), self.vectors.shape[0]))
        return np.asarray(T @ self.vectors, np.float32)


def _recipe_key(source_id: str, recipe: dict) -> str:
    blob = json.dumps({"source_model_id": source_id, **recipe}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def _stamp_ok(folder: Path, source_id: str, recipe: dict) -> bool:
    try:
        stamp = json.loads((folder / MODEL_STAMP).read_text(encoding="utf-8"))
        return (stamp.get("source_model_id") == source_id and stamp.get("recipe") == recipe
                and all((folder / rel).stat().st_size == int(size) for rel, (size, _) in stamp["files"].items()))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def static_model_folder(source: str | Path = MINILM, *, recipe: dict | None = None) -> Path:
    """The folder of the static model distilled from ``source`` (``"minilm"`` or a local
    sentence-transformers folder) by ``recipe`` (default :data:`STATIC_RECIPE`): distilled
    on the CPU on first use — about a minute — into
    ``<cache_root()>/models/static-<source model id>-<recipe digest>``, then reused.

    Parameters
    ----------
    source : str or Path, optional
        The sentence model distilled.
    recipe : dict, optional
        ``dims``, ``sif``, ``pooling``, ``removed`` and ``version`` (:data:`STATIC_RECIPE`).

    Returns
    -------
    Path
        The folder: ``vectors.npy`` (one float32 row per token id), ``tokenizer.json``, and
        the stamp (recipe, source model id, model id, every file's size and sha256).
    """
    import filelock

    from taxoforge.scores.mapping.sentence_encoding import text_tokenizer

    recipe = dict(STATIC_RECIPE if recipe is None else recipe)
    if recipe.get("pooling") != "mean":
        raise ValueError(f"static models pool by the mean of their tokens, not {recipe.get('pooling')!r}")
    src = model_folder(source)
    source_id = model_id_of(src)
    folder = cache_root() / "models" / f"static-{source_id}-{_recipe_key(source_id, recipe)}"
    if _stamp_ok(folder, source_id, recipe):
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with filelock.FileLock(str(folder) + ".lock", timeout=1800):
        if _stamp_ok(folder, source_id, recipe):
            return folder
        st = load_sentence_transformer(src, "cpu")  # always the CPU in float32: the same vectors everywhere
        tok = text_tokenizer(st)
        if tok is None:
            raise ValueError(f"{src}: a static model is distilled from a text transformer with a fast tokenizer")
        vectors, _kept = distil_token_vectors(st, tok, dims=int(recipe["dims"]), sif=float(recipe["sif"]),
                                              removed=str(recipe["removed"]))
        with atomic_directory(folder) as tmp:
            np.save(tmp / "vectors.npy", vectors, allow_pickle=False)
            tok.no_truncation()
            tok.save(str(tmp / "tokenizer.json"))
            files = {rel: (p.stat().st_size, _sha256_file(p)) for rel, p in _model_files(tmp)}
            stamp = {"kind": "static", "source": str(source), "source_folder": str(src), "source_model_id": source_id,
                     "recipe": recipe, "model_id": _model_id_from_hashes({k: v[1] for k, v in files.items()}),
                     "files": {k: list(v) for k, v in sorted(files.items())}}
            write_text_atomic(tmp / MODEL_STAMP, json.dumps(stamp, indent=2, sort_keys=True) + "\n")
    return folder
