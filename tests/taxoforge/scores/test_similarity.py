"""Pluggable similarity measures: an embedding measure plugs into the mapping."""

from __future__ import annotations

import numpy as np

from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex
from taxoforge.scores.similarity import EmbeddingSimilarity

from .conftest import mapped


def test_embedding_similarity_plugs_in(inat_like):
    # a real (tiny) encoder: bag of character trigrams hashed into 64 dimensions
    def encode(texts):
        out = np.zeros((len(texts), 64), np.float32)
        for i, t in enumerate(texts):
            t = f"  {t} "
            for j in range(len(t) - 2):
                out[i, hash(t[j:j + 3]) % 64] += 1
        return out

    sim = EmbeddingSimilarity(encode, name="trigram-test")
    ix = TaxonomyIndex(inat_like.taxonomy(), MappingConfig(similarity="ratio"), similarity=sim)
    assert ix.similarity.name == "trigram-test"
    assert mapped(ix, "Aloe vera")[0] == "aloe_vera"
    assert mapped(ix, "Toucans!")[0] == "ramphastidae"
