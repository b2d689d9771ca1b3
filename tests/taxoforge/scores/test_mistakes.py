"""How bad the mistakes are: heights against a brute-force definition, Bertinetto et al.'s
setting (every class a leaf at one depth: height of the LCA = levels climbed from the truth),
trees with leaves at different depths, distance@k, balanced and per-category accuracy, and the
real VLM4Bio answers."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taxoforge.scores.mistakes import (balanced_accuracy, category_accuracy, distance_at_k, mistake_columns,
                                       mistake_summary, node_heights, ranked_distances)
from taxoforge.trees.taxonomy import Taxonomy

#   r ─ a ─ a1 ─ a1x ─ a1xy      (a deep branch: leaves at different depths)
#   │    └─ a2
#   └─ b ─ b1
#        └─ b2
UNEVEN = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "a1", "a1x", "a1xy", "a2", "b", "b1", "b2"],
                                "parent_id": [None, "r", "a", "a1", "a1x", "a", "r", "b", "b"]}))


def _samples(pairs, abstained=None, dataset="d", model="m"):
    return pl.DataFrame({"model": model, "dataset": dataset, "prompt": "p", "gt_node": [g for g, _ in pairs],
                         "pred_node": [p for _, p in pairs],
                         "abstained": abstained or [False] * len(pairs)})


def _brute_heights(tax: Taxonomy, classes=None) -> dict[str, int]:
    """Height by the definition: the longest downward path to a leaf of the (spanned) tree."""
    ids = [str(x) for x in tax.ids]
    keep = set(ids) if classes is None else {a for c in classes for a in tax.ancestors(c)}
    kids = {i: [c for c in tax.children(i) if c in keep] for i in keep}

    def h(v):
        return 0 if not kids[v] else 1 + max(h(c) for c in kids[v])
    return {v: h(v) for v in keep}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=50), st.data())
def test_heights_match_the_definition_on_random_trees(parents, data):
    par = [None] + [str(p % (i + 1)) for i, p in enumerate(parents)]
    ids = [str(i) for i in range(len(par))]
    t = Taxonomy(pl.DataFrame({"node_id": ids, "parent_id": par}, schema_overrides={"parent_id": pl.String}))
    got = dict(zip(t.ids.tolist(), node_heights(t).tolist()))
    assert got == _brute_heights(t)
    classes = data.draw(st.lists(st.sampled_from(ids), min_size=1, max_size=10))
    got = node_heights(t, t.index_of(classes))
    want = _brute_heights(t, classes)
    assert {i: h for i, h in zip(t.ids.tolist(), got.tolist()) if h >= 0} == want
    assert all(h == -1 for i, h in zip(t.ids.tolist(), got.tolist()) if i not in want)


def test_by_hand_on_a_tree_whose_leaves_lie_at_different_depths():
    # classes: a1xy (depth 4), a2 (2), b1 (2), b2 (2)
    pairs = [("a2", "a1xy"),   # LCA a: height 3 (a → a1 → a1x → a1xy), though a2 is 1 below a
             ("a1xy", "a2"),   # LCA a again: the same severity either way round
             ("b1", "b2"),     # LCA b: height 1
             ("b1", "a2"),     # LCA r: height 4
             ("b2", "b2"),     # correct: 0
             ("b1", "b"),      # too generic: LCA = b, a mistake of severity 1
             ("a2", "r")]      # abstention (scored as the root): no severity
    s = mistake_columns(_samples(pairs, abstained=[False] * 6 + [True]), UNEVEN)
    assert s["lca_height"].to_list() == [3, 3, 1, 4, 0, 1, 4]
    assert s["mistake_severity"].to_list() == [3.0, 3.0, 1.0, 4.0, 0.0, 1.0, None]
    assert s["tree_distance"].to_list() == [4, 4, 2, 4, 0, 1, 2]
    row = mistake_summary(s).row(0, named=True)
    assert row["mistakes"] == 5
    assert row["mistake_severity"] == pytest.approx((3 + 3 + 1 + 4 + 1) / 5)
    assert row["mistake_severity_median"] == 3.0
    assert row["tree_distance_mean"] == pytest.approx((4 + 4 + 2 + 4 + 1) / 5)
    assert row["lca_depth_mean"] == pytest.approx((1 + 1 + 1 + 0 + 1) / 5)
    # on the whole tree the deep branch counts wherever it is below the LCA; here the classes
    # span every leaf, so the two agree — cut a1xy from the classes and they part
    s2 = mistake_columns(_samples([("a2", "b1"), ("a2", "a1")]), UNEVEN)
    assert s2["mistake_severity"].to_list() == [2.0, 1.0]       # spanned by a2 only: r has height 2
    s3 = mistake_columns(_samples([("a2", "b1"), ("a2", "a1")]), UNEVEN, heights="tree")
    assert s3["mistake_severity"].to_list() == [4.0, 3.0]
    with pytest.raises(ValueError, match="heights must be one of"):
        mistake_columns(_samples(pairs), UNEVEN, heights="leaves")


def _balanced_tree(depth: int, fanout: int) -> Taxonomy:
    ids, par = ["n"], [None]
    frontier = ["n"]
    for _ in range(depth):
        nxt = []
        for p in frontier:
            for k in range(fanout):
                ids.append(f"{p}.{k}")
                par.append(p)
                nxt.append(ids[-1])
        frontier = nxt
    return Taxonomy(pl.DataFrame({"node_id": ids, "parent_id": par}, schema_overrides={"parent_id": pl.String}))


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 4), st.integers(2, 3), st.integers(0, 2**32 - 1))
def test_bertinettos_setting_every_class_a_leaf_at_one_depth(depth, fanout, seed):
    t = _balanced_tree(depth, fanout)
    leaves = t.ids[t.is_leaf].tolist()
    rng = np.random.default_rng(seed)
    pairs = [(leaves[i], leaves[j]) for i, j in rng.integers(0, len(leaves), (30, 2))]
    s = mistake_columns(_samples(pairs), t)  # the classes drawn are leaves at one depth
    wrong = s.filter(~pl.col("correct"))
    assert (wrong["mistake_severity"] == (wrong["depth_gt"] - wrong["depth_lca"]).cast(pl.Float64)).all()
    assert (wrong["tree_distance"] == 2 * wrong["lca_height"]).all()


def test_distance_at_k_is_bertinettos_average_of_the_top_k():
    t = UNEVEN
    gt = t.index_of(["a2", "b1"])
    ranked = np.stack([t.index_of(["a2", "a1xy", "b1"]), t.index_of(["b2", "b1", "a2"])])
    d = distance_at_k(t, gt, ranked, node_heights(t, t.index_of(["a2", "b1", "a1xy", "b2"])))
    assert d.tolist() == [[0.0, 3.0, 4.0], [1.0, 0.0, 4.0]]
    s = _samples([("a2", "a2"), ("b1", "b2")]).with_columns(
        pl.Series("ranked_nodes", [["a2", "a1xy", "b1"], ["b2", "b1"]]))
    r = ranked_distances(s, t).row(0, named=True)
    # heights over the ground truths a2, b1: r has height 2, a and b height 1
    assert r["hdist@1"] == pytest.approx((0 + 1) / 2)
    # a1xy meets a2 at a (height 1: a1xy is no class here); b1 meets a2 at r (height 2)
    assert r["hdist@2"] == pytest.approx(((0 + 1) / 2 + (1 + 0) / 2) / 2)
    assert r["hdist@3"] == pytest.approx(((0 + 1 + 2) / 3 + (1 + 0) / 2) / 2)   # the second sample has 2


def test_balanced_accuracy_is_scikit_learns():
    sk = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(3)
    gts = rng.choice(["a2", "b1", "b2", "a1xy"], 200, p=[0.7, 0.1, 0.1, 0.1])
    preds = np.where(rng.random(200) < 0.6, gts, rng.choice(["a2", "b1", "b2", "a1xy"], 200))
    s = mistake_columns(_samples(list(zip(gts, preds))), UNEVEN)
    got = balanced_accuracy(s).row(0, named=True)
    assert got["balanced_accuracy"] == pytest.approx(sk.balanced_accuracy_score(gts, preds))
    assert got["classes"] == 4


def test_per_category_accuracy():
    s = mistake_columns(_samples([("a2", "a2"), ("b1", "b2"), ("b1", "b1")]), UNEVEN).with_columns(
        pl.Series("category", ["plants", "animals", "animals"]))
    from taxoforge.scores.hierarchical import hierarchical_scores
    h = hierarchical_scores(UNEVEN, UNEVEN.index_of(s["pred_node"].to_list()), UNEVEN.index_of(s["gt_node"].to_list()))
    s = s.with_columns(pl.Series("hP", h["hP"]), pl.Series("hR", h["hR"]))
    c = category_accuracy(s)
    assert c.select("category", "n", "accuracy").rows() == [("animals", 2, 0.5), ("plants", 1, 1.0)]
    assert category_accuracy(s.drop("category")).height == 0
