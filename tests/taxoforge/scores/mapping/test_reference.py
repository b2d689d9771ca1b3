"""The indexed implementation agrees with the direct transcription of Alg. 1
(:func:`map_prediction_reference`), on random trees whose names share words, plurals,
numbers and task words, under every variant of the configuration."""

from __future__ import annotations

import random

import pytest

from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex, map_prediction_reference
from taxoforge.scores.mapping.answers import joined_normal_form
from taxoforge.scores.mapping.similarity import StringSimilarity
from taxoforge.text import normalise_text

from ..conftest import tree_tables

WORDS = ["red", "blue", "tailed", "hawk", "owl", "finch", "oak", "maple", "river", "stone", "crested", "northern",
         "lesser", "greater", "fox", "foxes", "pine", "moth", "bee", "wren", "reed", "reeds", "pig", "guinea",
         "two", "image", "brakes", "brake", "glass", "glasses"]
EXTRA = ["xyz", "a", "the", "there", "are", "in", "picture", "three", "it's", "I", "think", "dogs", "owls"]


def _reference_args(tax, index):
    nodes = list(range(len(tax.ids)))
    names = [[index.names[j] for j in index.node_name[index.node_ptr[v]:index.node_ptr[v + 1]]] for v in nodes]
    forms = [[normalise_text(x) for x in [tax.label(str(tax.ids[v]))] + tax.names(str(tax.ids[v]))] for v in nodes]
    return nodes, names, forms


@pytest.mark.parametrize("cfg", [
    {}, {"contains_scope": "topk_first"}, {"contains": "substring"}, {"exact_stage": False, "drop_nested": False},
    {"base_forms": False}, {"k": 3, "thr_vote": 2, "vote_rule": "more_than", "temperature": 0.05},
])
def test_indexed_equals_reference_transcription(cfg):
    rnd = random.Random(7)
    rows = [("n0", None, "thing")]
    for i in range(1, 300):
        rows.append((f"n{i}", f"n{rnd.randrange(i)}", " ".join(rnd.sample(WORDS, rnd.randint(1, 3)))))
    tax = tree_tables(rows).taxonomy()
    config = MappingConfig(prefilter=False, **cfg)
    ix = TaxonomyIndex(tax, config)
    nodes, names, forms = _reference_args(tax, ix)
    sim = StringSimilarity("ratio")
    raw = [" ".join(rnd.sample(WORDS + EXTRA, rnd.randint(1, 5))) for _ in range(200)]
    preds = [joined_normal_form(p) for p in raw]
    fast = ix.map(preds, normalised=True)
    stages = set()
    for p, v, s in zip(preds, fast.node_idx, fast.stage):
        ref_v, ref_stage = map_prediction_reference(p, nodes, names, ix.depth, ix.parent, sim.pair, config, forms)
        assert (int(v), str(s)) == (ref_v, ref_stage), p
        stages.add(ref_stage)
    assert {"exact", "contains", "top1"} <= stages | ({"exact"} if not config.exact_stage else set())
