"""Granularity of the answers: each answer's class by hand on a tree with leaves at several
depths, the classes against a brute-force reading of the definition on random trees, and the
counts per group adding up to n."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from taxoforge.scores.measures.granularity import GRANULARITY, granularity, granularity_counts
from taxoforge.trees.taxonomy import Taxonomy

#   r ─ a ─ a1 ─ a1x
#   │    └─ a2 ─ a2x
#   └─ b ─ b1
T = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "a1", "a1x", "a2", "a2x", "b", "b1"],
                           "parent_id": [None, "r", "a", "a1", "a", "a2", "r", "b"]}))


def _samples(pairs, **cols):
    return pl.DataFrame({"model": "m", "dataset": "d", "prompt": "p", "gt_node": [g for g, _ in pairs],
                         "pred_node": [p for _, p in pairs], **cols})


def test_each_class_by_hand():
    pairs = [("a1", "a1"),    # exact
             ("a1", "a"),     # too generic: an ancestor ("a fish" for a species)
             ("a1", "r"),     # the root named as an answer is the most generic answer there is
             ("a1", "a1x"),   # too specific: a descendant (a subspecies for a species)
             ("a1", "a2"),    # near miss: a sibling
             ("a1", "a2x"),   # near miss: below a sibling, still under the truth's parent
             ("a1", "b1"),    # another branch
             ("a1", "r"),     # abstention (scored as the root)
             ("a1", "r"),     # "none of the above" where the truth was offered: names no node
             ("a1", "a1")]    # a partial ground truth: no class
    s = _samples(pairs, abstained=[False] * 7 + [True, False, False],
                 map_stage=["exact"] * 8 + ["none_of_the_above", "exact"], gt_partial=[False] * 9 + [True])
    assert granularity(s, T).to_list() == ["exact", "too_generic", "too_generic", "too_specific", "near_miss",
                                           "near_miss", "other_branch", "abstained", "unmapped", None]
    counts = granularity_counts(s.with_columns(granularity(s, T))).row(0, named=True)
    assert [counts[f"granularity_{g}"] for g in GRANULARITY] == [1, 2, 1, 2, 1, 1, 1]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=30), st.data())
def test_classes_follow_the_definition_on_random_trees(parents, data):
    par = [None] + [str(p % (i + 1)) for i, p in enumerate(parents)]
    ids = [str(i) for i in range(len(par))]
    t = Taxonomy(pl.DataFrame({"node_id": ids, "parent_id": par}, schema_overrides={"parent_id": pl.String}))
    pairs = data.draw(st.lists(st.tuples(st.sampled_from(ids[1:] or ids), st.sampled_from(ids)), min_size=1,
                               max_size=20))
    got = granularity(_samples(pairs), t).to_list()
    for (g, p), cls in zip(pairs, got):
        anc_g, anc_p = t.ancestors(g), t.ancestors(p)
        parent_g = par[int(g)]
        want = ("exact" if p == g else "too_generic" if p in anc_g else "too_specific" if g in anc_p
                else "near_miss" if parent_g is not None and parent_g in anc_p else "other_branch")
        assert cls == want, (g, p)
    counts = granularity_counts(_samples(pairs).with_columns(pl.Series("granularity", got)))
    assert counts.select([f"granularity_{c}" for c in GRANULARITY]).sum_horizontal().item() == len(pairs)
