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

from taxoforge.scores.measures.heights import node_heights
from taxoforge.scores.measures.mistakes import (balanced_accuracy, category_accuracy, distance_at_k, mistake_columns,
                                                mistake_summary, ranked_distances)
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
    from taxoforge.scores.measures.hierarchical import hierarchical_scores
    h = hierarchical_scores(UNEVEN, UNEVEN.index_of(s["pred_node"].to_list()), UNEVEN.index_of(s["gt_node"].to_list()))
    s = s.with_columns(pl.Series("hP", h["hP"]), pl.Series("hR", h["hR"]))
    c = category_accuracy(s)
    assert c.select("category", "n", "accuracy").rows() == [("animals", 2, 0.5), ("plants", 1, 1.0)]
    assert category_accuracy(s.drop("category")).height == 0


TOP6 = "predictions/inat2021_supervised_model_top6_predictions_EibSReM.tsv"
NAMES = ["image"] + [f"{x}{i}" for i in range(1, 7) for x in ("top", "p")]


@pytest.fixture(scope="module")
def top6(shared_data, tmp_path_factory):
    """A real classifier's top-6 file and the iNaturalist tree cut to the families it names."""
    import csv

    from taxoforge.sources.inaturalist import inat_tree, read_inat_taxa

    path = shared_data / TOP6
    if not path.exists():
        pytest.skip(f"no {TOP6}")
    species = set()
    with open(path, newline="") as fh:
        for row in csv.reader(fh, delimiter="\t"):
            species.update(row[1:13:2])
    raw = read_inat_taxa()
    fams = raw.filter(pl.col("scientificName").is_in(sorted(species)))["family"].unique().to_list()
    cut = raw.filter(pl.col("family").is_in(fams) | pl.col("taxonRank").is_in(
        ["stateofmatter", "kingdom", "phylum", "class", "order"]))
    p = tmp_path_factory.mktemp("inat") / "cut.parquet"
    cut.write_parquet(p)
    return path, inat_tree(p, name="inaturalist-top6-cut")


def test_hierarchical_distance_at_k_of_a_real_top6_file(top6, tmp_path):
    from taxoforge.scores.statistics.confidence import BootstrapConfig
    from taxoforge.scores.options import ReadOptions
    from taxoforge.scores.run import score_files

    path, tree = top6
    read = ReadOptions(header=False, column_names=NAMES, ranked=[f"top{i}" for i in range(1, 7)],
                       columns={"id": "image"}, derive={"label": ("image", r"([^/]+?)_(?:(?:gold|obs)_)?\d+[^/]*$")},
                       defaults={"model": "EibSReM", "dataset": "inat2021"})
    run = score_files([path], tree, read=read, text_measures=False, ci=BootstrapConfig(n_resamples=0),
                      out_dir=tmp_path / "out")
    s, lb = run.samples, run.leaderboard.row(0, named=True)
    assert s["ranked_nodes"].list.len().unique().to_list() == [6]
    # the answer is the first of the ranking, mapped the same way
    assert (s["pred_node"] == s["ranked_nodes"].list.first()).all()
    full = s.filter(~pl.col("gt_partial"))
    # hdist@1 is the severity over every answer, a correct one counting 0
    assert lb["hdist@1"] == pytest.approx(full["mistake_severity"].mean())
    assert lb["hdist@1"] == pytest.approx(lb["mistake_severity"] * lb["mistakes"] / lb["n"])
    # hdist@6 by the definition, on the tree the ground truths span
    tax = tree.taxonomy()
    classes = set(full["gt_node"].to_list())
    keep = {a for c in classes for a in tax.ancestors(c)}

    def height(v):
        kids = [c for c in tax.children(v) if c in keep]
        return 0 if not kids else 1 + max(height(c) for c in kids)

    dists = []
    for g, ranked in zip(full["gt_node"].to_list(), full["ranked_nodes"].to_list()):
        dists.append(np.mean([0 if p == g else height(tax.lca(p, g)) for p in ranked]))
    assert lb["hdist@6"] == pytest.approx(np.mean(dists))
    assert lb["hdist@1"] < lb["hdist@6"]  # the lower ranks are worse guesses


def test_per_category_accuracy_of_a_vlmevalkit_file(vlm4bio_files, tmp_path):
    """A VLMEvalKit prediction file (its dataset table has a ``category`` column), written
    from a real VLM4Bio file as VLMEvalKit writes it: the run's ``by_category`` breakdown,
    VLMEvalKit's ``*_acc.csv`` habit, agrees with the leaderboard."""
    from benchmarks.harness_files import harness_files, vlm4bio_species_tree
    from taxoforge.scores.statistics.confidence import BootstrapConfig
    from taxoforge.scores.run import score_files

    native = next(f for f in vlm4bio_files if "/fish-easy/" in str(f))
    tsv = harness_files(native, tmp_path / "h")["VLMEvalKit tsv"]
    tree = vlm4bio_species_tree([native], tmp_path / "tree")
    run = score_files([tsv], tree, text_measures=False, ci=BootstrapConfig(n_resamples=0), out_dir=tmp_path / "out")
    cat = pl.read_csv(tmp_path / "out" / "breakdowns" / "by_category.csv")
    lb = run.leaderboard.row(0, named=True)
    assert cat.height == 1 and cat["n"][0] == lb["n"]
    assert cat["accuracy"][0] == pytest.approx(lb["accuracy"]) and cat["hF"][0] == pytest.approx(lb["hF"])
    assert cat["category"][0] == run.samples["category"][0]


def test_a_ranked_entry_that_names_no_node_is_a_miss_at_the_trees_height(inat_like, tmp_path):
    """hdist@k: a refusal or unreadable entry of a ranking counts as the root — a miss at the
    height of the tree the labels span —, never dropped; an empty cell is no entry."""
    from taxoforge.scores.options import ReadOptions
    from taxoforge.scores.run import score_files

    f = tmp_path / "top3.jsonl"
    rows = [{"id": "1", "label": "Aloe vera", "t1": "Aloe vera", "t2": "sorry, no idea", "t3": ""},
            {"id": "2", "label": "Toco Toucan", "t1": "Keel-billed Toucan", "t2": "Toco Toucan", "t3": "Aloe ferox"}]
    f.write_text("".join(__import__("json").dumps(r) + "\n" for r in rows))
    run = score_files([f], inat_like, read=ReadOptions(ranked=["t1", "t2", "t3"], columns={"label": "label"}),
                      meteor=False, ci=None,
                      plots=False)
    s = run.samples
    assert s["ranked_nodes"].to_list() == [["aloe_vera", "life", None], ["r_sulfuratus", "r_toco", "aloe_ferox"]]
    # classes aloe_vera (depth 5) and r_toco (depth 6): the root has height 6, the toucan genus 1
    assert s["ranked_heights"].to_list() == [[0.0, 6.0, None], [1.0, 0.0, 6.0]]
    lb = run.leaderboard.row(0, named=True)
    assert lb["hdist@1"] == 0.5 and lb["hdist@2"] == (3.0 + 0.5) / 2
    assert lb["hdist@3"] == (3.0 + 7 / 3) / 2    # the first sample has two entries: their mean
