"""The indexed implementation agrees with the direct transcription of Alg. 1."""

from __future__ import annotations

import random

import pytest

from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex, map_prediction_reference
from taxoforge.scores.similarity import StringSimilarity
from taxoforge.text import normalise_text

from ..conftest import tree_tables


def _reference_args(tax, index):
    nodes = list(range(len(tax.ids)))
    names = [[index.names[j] for j in index.node_name[index.node_ptr[v]:index.node_ptr[v + 1]]] for v in nodes]
    return nodes, names


@pytest.mark.parametrize("scope", ["topk_first", "all"])
def test_indexed_equals_reference_transcription(scope):
    rnd = random.Random(7)
    words = ["red", "blue", "tailed", "hawk", "owl", "finch", "oak", "maple", "river", "stone", "crested",
             "northern", "lesser", "greater", "fox", "pine", "moth", "bee", "wren", "reed"]
    rows = [("n0", None, "thing")]
    for i in range(1, 300):
        rows.append((f"n{i}", f"n{rnd.randrange(i)}", " ".join(rnd.sample(words, rnd.randint(1, 3)))))
    tax = tree_tables(rows).taxonomy()
    cfg = MappingConfig(prefilter=False, contains_scope=scope)
    ix = TaxonomyIndex(tax, cfg)
    nodes, names = _reference_args(tax, ix)
    sim = StringSimilarity("ratio")
    preds = [normalise_text(" ".join(rnd.sample(words + ["xyz", "a", "the"], rnd.randint(1, 4)))) for _ in range(150)]
    fast = ix.map(preds, normalised=True)
    for p, v, s in zip(preds, fast.node_idx, fast.stage):
        ref_v, ref_stage = map_prediction_reference(p, nodes, names, ix.depth, ix.parent, sim.pair, cfg)
        assert (int(v), str(s)) == (ref_v, ref_stage), p
