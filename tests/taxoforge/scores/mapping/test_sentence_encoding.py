"""Feeding the sentence model: tokenised once, sorted by length, batched — the same embeddings
as the model's own ``encode``, on the CPU build of torch (the GPU takes the same path)."""

from __future__ import annotations

import numpy as np
import pytest

from taxoforge.scores.mapping.sentence_encoding import encode_texts, length_batches, text_tokenizer, tokenise
from tests.conftest import minilm_or_skip


@pytest.fixture(scope="module")
def minilm():
    return minilm_or_skip("cpu")


def texts_of_every_length(seed: int = 0) -> list[str]:
    """Names of one word to sentences past the model's 256-token limit, in shuffled order,
    with an empty text, accents, a repeat and a text of spaces."""
    rng = np.random.default_rng(seed)
    words = ["Quercus", "ilex", "holm", "oak", "golden", "retriever", "Passer", "domesticus", "sparrow", "café",
             "Ærø", "seal", "a", "photo", "of", "the", "bird", "on", "a", "branch"]
    out = [" ".join(rng.choice(words, n)) for n in rng.integers(1, 12, 150)]
    out += [" ".join(rng.choice(words, 400)), "", "   ", "Quercus ilex", "Quercus ilex"]
    return [out[i] for i in rng.permutation(len(out))]


def test_the_bucketed_path_gives_the_models_own_embeddings(minilm):
    texts = texts_of_every_length()
    st = minilm._st
    plain = st.encode(texts, batch_size=32, convert_to_numpy=True, normalize_embeddings=True,
                      show_progress_bar=False)
    for batch, max_tokens in [(256, None), (7, None), (64, 300)]:
        e = encode_texts(st, texts, batch_size=batch, max_tokens=max_tokens)
        assert e.dtype == np.float32 and e.shape == plain.shape
        cos = np.sum(e * plain, axis=1)
        assert cos.min() >= 0.9999, (batch, max_tokens, texts[int(cos.argmin())])
    # the measure embeds names this way
    np.testing.assert_allclose(minilm.embed_names(texts, progress=False), encode_texts(st, texts), atol=1e-6)


def test_tokenised_once_truncated_as_the_model_truncates(minilm):
    st = minilm._st
    tok = text_tokenizer(st)
    texts = texts_of_every_length(1)
    ids, types, lengths = tokenise(tok, texts, chunk=17)
    assert lengths.max() == st.max_seq_length and len(ids) == len(types) == lengths.sum()
    features = st.tokenize(texts)
    want = features["attention_mask"].sum(dim=1).numpy()
    np.testing.assert_array_equal(lengths, want)
    first = features["input_ids"][0, :lengths[0]].numpy()
    np.testing.assert_array_equal(ids[:lengths[0]], first)


def test_length_batches_cover_every_text_once_within_the_budgets():
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 300, 5_000)
    batches = length_batches(lengths, batch_size=512, max_tokens=4_096)
    flat = np.concatenate(batches)
    assert sorted(flat.tolist()) == list(range(len(lengths)))
    assert all(len(b) <= 512 and (len(b) == 1 or len(b) * lengths[b].max() <= 4_096) for b in batches)
    assert np.all(np.diff(lengths[flat]) >= 0)  # shortest first: little padding
