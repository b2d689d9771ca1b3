"""Feeding a sentence-transformers model many short texts: tokenise once, sort by length, batch.

``SentenceTransformer.encode`` tokenises each batch as it goes, in the Python thread that
then waits for the model, and pads every batch to its longest text. For a tree's names
(millions of texts of a few tokens) :func:`encode_texts` does instead:

1. **tokenise once**, every text, with the model's own fast tokenizer (the ``tokenizers``
   library's batch encoding, which spreads the texts over the CPU's cores), truncated at
   the model's ``max_seq_length`` exactly as the model's own preprocessing truncates, into
   one flat array of token ids;
2. **sort by token count** and cut the sorted texts into **length buckets**: batches of at
   most ``batch_size`` texts and ``max_tokens`` padded tokens, so a batch of short names is
   large and a batch of long texts small, and padding is nearly nil;
3. run the model's own modules (transformer, pooling, normalisation) on each batch of
   token ids, in the precision the model was loaded in, and put the rows back in the
   callers' order.

The result equals ``encode`` (same token ids, same modules; cosine ≥ 0.9999 in float32,
differences from padding only). Models whose first module is not a text transformer with a
fast tokenizer (CLIP's text tower, for one) are encoded by ``encode`` in plain batches.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["text_tokenizer", "tokenise", "length_batches", "encode_texts"]

TOKENISE_CHUNK = 65_536  # texts per call of the batch encoder (bounds the Python objects it returns)


def text_tokenizer(model):
    """The fast tokenizer (``tokenizers.Tokenizer``) of ``model``'s first module, set to
    truncate at its ``max_seq_length`` and not to pad, or None when that module is not a
    text transformer with a fast tokenizer.

    Parameters
    ----------
    model : sentence_transformers.SentenceTransformer
        A loaded model.

    Returns
    -------
    tokenizers.Tokenizer or None
        A copy of the model's tokenizer (the model's own is left as it is).
    """
    try:
        first = model[0]
    except (IndexError, KeyError, TypeError):
        return None
    hf = getattr(first, "tokenizer", None)
    backend = getattr(hf, "backend_tokenizer", None)
    max_len = getattr(first, "max_seq_length", None)
    if backend is None or not getattr(hf, "is_fast", False) or not max_len:
        return None
    from tokenizers import Tokenizer

    tok = Tokenizer.from_str(backend.to_str())
    tok.no_padding()
    tok.enable_truncation(max_length=int(max_len))
    return tok


def tokenise(tok, texts: Sequence[str], chunk: int = TOKENISE_CHUNK) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every text's token ids and token type ids, flat, with each text's token count.

    Parameters
    ----------
    tok : tokenizers.Tokenizer
        The tokenizer (:func:`text_tokenizer`).
    texts : Sequence[str]
        The texts.
    chunk : int, optional
        Texts per batch-encoding call.

    Returns
    -------
    ids, type_ids : numpy.ndarray
        int32, the texts' tokens one after the other (special tokens included).
    lengths : numpy.ndarray
        int64, each text's token count.
    """
    ids, types, lengths = [], [], []
    for i in range(0, len(texts), chunk):
        encs = tok.encode_batch_fast(list(texts[i:i + chunk]), add_special_tokens=True)
        lens = np.fromiter((len(e.ids) for e in encs), np.int64, count=len(encs))
        total = int(lens.sum())
        ids.append(np.fromiter((t for e in encs for t in e.ids), np.int32, count=total))
        types.append(np.fromiter((t for e in encs for t in e.type_ids), np.int32, count=total))
        lengths.append(lens)
    if not lengths:
        return np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.int64)
    return np.concatenate(ids), np.concatenate(types), np.concatenate(lengths)


def length_batches(lengths: np.ndarray, batch_size: int, max_tokens: int | None = None) -> list[np.ndarray]:
    """The texts' indexes sorted by token count (stable), cut into batches of at most
    ``batch_size`` texts whose padded size (texts × longest) stays within ``max_tokens``.

    Parameters
    ----------
    lengths : numpy.ndarray
        Each text's token count.
    batch_size : int
        Most texts per batch.
    max_tokens : int, optional
        Most padded tokens per batch (None: ``batch_size`` alone decides).

    Returns
    -------
    list[numpy.ndarray]
        Batches of text indexes, shortest texts first.

    Examples
    --------
    >>> [b.tolist() for b in length_batches(np.array([5, 1, 9, 1]), batch_size=2)]
    [[1, 3], [0, 2]]
    >>> [b.tolist() for b in length_batches(np.array([5, 1, 9, 1]), batch_size=4, max_tokens=15)]
    [[1, 3, 0], [2]]
    """
    order = np.argsort(lengths, kind="stable")
    sorted_lengths = np.asarray(lengths)[order].astype(np.int64)
    out, i, n = [], 0, len(order)
    while i < n:
        j = min(n, i + batch_size)
        if max_tokens is not None:
            # a batch of the next c texts pads to c × (its c-th text's count), which grows with
            # c: the most texts within the budget, found by a binary search (at least one)
            padded = np.arange(1, j - i + 1) * sorted_lengths[i:j]
            j = i + max(1, int(np.searchsorted(padded, max_tokens, side="right")))
        out.append(order[i:j])
        i = j
    return out


def encode_texts(model, texts: Sequence[str], *, batch_size: int = 256, max_tokens: int | None = None,
                 progress: bool = False, desc: str = "embedding") -> np.ndarray:
    """``(len(texts), d)`` float32 embeddings, rows unit length (a zero row stays zero), by
    the steps of the module docstring.

    Parameters
    ----------
    model : sentence_transformers.SentenceTransformer
        A loaded model (its device and precision are used as they are).
    texts : Sequence[str]
        The texts.
    batch_size : int, optional
        Most texts per model call.
    max_tokens : int, optional
        Most padded tokens per model call (None: ``batch_size`` alone decides).
    progress : bool, optional
        Whether to show a progress bar.
    desc : str, optional
        The progress bar's label.

    Returns
    -------
    numpy.ndarray
        One unit-length float32 row per text, in the order of ``texts``.
    """
    import torch

    texts = list(texts)
    tok = text_tokenizer(model)
    if tok is None:  # not a text transformer with a fast tokenizer: the model's own encode, plain batches
        e = model.encode(texts, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=progress)
        return _unit_rows(np.asarray(e, np.float32).reshape(len(texts), -1))
    ids, types, lengths = tokenise(tok, texts)
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    extra = {k: v for k, v in model.preprocess([""]).items() if not isinstance(v, torch.Tensor)}  # e.g. modality
    pad = int(tok.padding["pad_id"]) if tok.padding else int(getattr(model[0].tokenizer, "pad_token_id", 0) or 0)
    device = model.device
    batches = length_batches(lengths, batch_size, max_tokens)
    steps = batches
    if progress:
        from tqdm.auto import tqdm

        steps = tqdm(batches, desc=desc, unit="batch", leave=False)
    parts: list[np.ndarray] = []
    with torch.inference_mode():
        for rows in steps:
            width = max(1, int(lengths[rows].max()))
            pos = offsets[rows][:, None] + np.arange(width)[None, :]
            mask = np.arange(width)[None, :] < lengths[rows][:, None]
            pos = np.minimum(pos, max(0, len(ids) - 1))
            input_ids = np.where(mask, ids[pos] if len(ids) else 0, pad).astype(np.int64)
            type_ids = np.where(mask, types[pos] if len(types) else 0, 0).astype(np.int64)
            features = {"input_ids": torch.from_numpy(input_ids).to(device),
                        "token_type_ids": torch.from_numpy(type_ids).to(device),
                        "attention_mask": torch.from_numpy(mask.astype(np.int64)).to(device), **extra}
            out = model(features)["sentence_embedding"].float()
            parts.append(out.cpu().numpy())
    if not parts:
        return np.zeros((0, int(model.get_sentence_embedding_dimension() or 1)), np.float32)
    e = np.empty((len(texts), parts[0].shape[1]), np.float32)
    e[np.concatenate(batches)] = np.concatenate(parts)
    return _unit_rows(e)


def _unit_rows(e: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(e, axis=1, keepdims=True)
    e /= np.where(norm > 0, norm, 1.0)
    return e
