"""Which tree heights are measured on: node heights against a brute-force definition, and the
height tree of every row fixed by the dataset's label set — given, or the model × dataset's own
ground truths —, never by another model's rows."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from taxoforge.scores.measures.heights import height_record, height_tree_id, height_trees, node_heights
from taxoforge.trees.taxonomy import Taxonomy

#   r ─ a ─ a1 ─ a1x ─ a1xy      (a deep branch: leaves at different depths)
#   │    └─ a2
#   └─ b ─ b1
#        └─ b2
UNEVEN = Taxonomy(pl.DataFrame({"node_id": ["r", "a", "a1", "a1x", "a1xy", "a2", "b", "b1", "b2"],
                                "parent_id": [None, "r", "a", "a1", "a1x", "a", "r", "b", "b"]}))


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



def _rows(model, gts, dataset="d", partial=None):
    return pl.DataFrame({"model": model, "dataset": dataset, "gt_node": gts,
                         "gt_partial": partial or [False] * len(gts)})


def test_each_model_and_dataset_has_the_tree_its_own_ground_truths_span():
    s = pl.concat([_rows("m1", ["a2", "b1"]), _rows("m2", ["a1xy", "b1"]), _rows("m1", ["b2"], dataset="e"),
                   _rows("m3", ["b1", "a2", "b1"])])
    row_tree, trees = height_trees(s, UNEVEN)
    ids = [trees[k].tree_id for k in row_tree]
    assert ids[:2] == [height_tree_id(["a2", "b1"])] * 2
    assert ids[2:4] == [height_tree_id(["a1xy", "b1"])] * 2
    assert ids[5:] == ids[:2] * 1 + [ids[0]]          # m3 holds the same classes as m1 on d: the same tree
    root = UNEVEN.index_of(["r"])[0]
    assert trees[row_tree[0]].heights[root] == 2 and trees[row_tree[2]].heights[root] == 4
    assert trees[row_tree[4]].classes == 1
    # another model's rows never change a model's tree: m1's rows alone give m1 the same
    alone_rows, alone = height_trees(s.filter(pl.col("model") == "m1"), UNEVEN)
    assert [alone[k].tree_id for k in alone_rows] == [ids[0], ids[1], ids[4]]


def test_a_given_label_set_spans_one_tree_and_partial_truths_are_no_classes():
    s = pl.concat([_rows("m1", ["a2", "a1"], partial=[False, True]), _rows("m2", ["b1"])])
    row_tree, trees = height_trees(s, UNEVEN, label_set=["a2", "b1", "b2"])
    assert len(trees) == 1 and trees[0].tree_id == height_tree_id(["a2", "b1", "b2"]) and trees[0].classes == 3
    row_tree, trees = height_trees(s, UNEVEN)
    assert trees[row_tree[0]].tree_id == height_tree_id(["a2"])      # the partial a1 is no class
    # the whole tree: one tree for all, every leaf counted
    row_tree, trees = height_trees(s, UNEVEN, heights="tree")
    assert [t.tree_id for t in trees] == ["tree"] and trees[0].heights[UNEVEN.index_of(["r"])[0]] == 4


def test_run_json_record_lists_each_model_and_datasets_tree():
    from taxoforge.scores.measures.mistakes import mistake_columns

    s = pl.concat([_rows("m1", ["a2", "b1"]), _rows("m2", ["a1xy"])]).with_columns(pl.col("gt_node").alias("pred_node"))
    rec = height_record(mistake_columns(s, UNEVEN))
    assert rec["rule"] == "labels" and "own rows" in rec["classes_from"]
    assert [(t["model"], t["height_classes"]) for t in rec["trees"]] == [("m1", 2), ("m2", 1)]
    assert height_record(s, heights="tree")["classes_from"] == "the whole taxonomy"
