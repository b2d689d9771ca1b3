"""Breakdown tables of a samples table: hand-computed on the toy tree, properties on random trees."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taxoforge.scores.measures import breakdowns as bd
from taxoforge.trees.ranked_tree import RankedTree
from tests.taxoforge.evaluation.conftest import random_ranked_tree, toy_tables

@pytest.fixture
def toy() -> RankedTree:
    return RankedTree.of(toy_tables())


PAIRS = [("e_lucius", "e_lucius", False), ("e_lucius", "e_niger", False), ("e_lucius", "umbra", False),
         ("u_limi", "umbridae", False), ("u_limi", "life", True)]


def _samples(pairs=PAIRS, model="m"):
    return pl.DataFrame({"model": model, "dataset": "d", "prompt": "p", "gt_node": [p[0] for p in pairs],
                         "pred_node": [p[1] for p in pairs], "abstained": [p[2] for p in pairs]})


def test_levels_ranks_consistency_and_outcomes_by_hand(toy):
    s = bd.with_depths(_samples(), toy)
    assert s["depth_lca"].to_list() == [6, 5, 3, 4, 0]
    lev = bd.by_ground_truth_level(s, toy)
    assert lev.select("level", "n", "accuracy").rows() == [(6, 5, 0.2)]
    assert lev["hP"][0] == pytest.approx(np.mean([1, 6 / 7, 4 / 6, 1, 1]))
    cr = dict(bd.correctness_by_rank(s, toy).select("rank", "accuracy").rows())
    assert cr == pytest.approx({"kingdom": 0.8, "class": 0.8, "order": 0.8, "family": 0.6, "genus": 0.4, "species": 0.2})
    cl = dict(bd.correctness_by_level(s, toy).select("level", "accuracy").rows())
    assert cl[4] == pytest.approx(0.6) and cl[5] == pytest.approx(0.4) and cl[6] == pytest.approx(0.2)
    con = bd.consistency(s, toy)
    assert con["HCA"][0] == pytest.approx(0.2) and 0.2 <= con["MTA"][0] <= 0.8
    out = bd.outcome_shares(s).row(0, named=True)
    assert (out["correct_pct"], out["incorrect_pct"], out["other_pct"]) == pytest.approx((20.0, 60.0, 20.0))
    cols = bd.leaderboard_columns(s, toy)
    assert cols.columns == ["model", "dataset", "prompt", "HCA", "MTA", "MTA_cuts", "correct_pct", "incorrect_pct", "other_pct",
                            "accuracy_genus", "accuracy_family", "accuracy_order"]
    assert cols["accuracy_genus"][0] == pytest.approx(0.4)


def test_groups_are_kept_apart(toy):
    s = pl.concat([_samples(model="a"), _samples(PAIRS[:2], model="b")])
    lev = bd.by_ground_truth_level(s, toy)
    assert lev.select("model", "n").rows() == [("a", 5), ("b", 2)]
    con = bd.consistency(s, toy)
    assert dict(con.select("model", "HCA").rows()) == pytest.approx({"a": 0.2, "b": 0.5})


def test_open_world_groups_with_the_papers_thresholds():
    s = pl.DataFrame({"model": "m", "LI": [1, 1, 0, 0, 1], "CS": [0.6, 0.3, 0.8, 0.1, 0.95]})
    g = bd.open_world_groups(s, by=("model",)).row(0, named=True)
    assert (g["correct_specific_pct"], g["correct_generic_pct"], g["wrong_specific_pct"], g["wrong_generic_pct"]) == \
        pytest.approx((40.0, 20.0, 20.0, 20.0))
    with pytest.raises(ValueError, match="LLM-judge"):
        bd.open_world_groups(s.drop("LI"))


def test_probe_consistency_needs_every_rank_right():
    questions = pl.DataFrame({"id": ["g1", "f1", "g2", "f2"], "probe-rank": ["genus", "family"] * 2,
                              "image-path": ["x.jpg", "x.jpg", "y.jpg", "y.jpg"]})
    answers = pl.DataFrame({"model": "m", "id": ["g1", "f1", "g2", "f2"], "correct": [True, True, False, True]})
    t = bd.probe_consistency(answers, questions).row(0, named=True)
    assert t["HCA"] == 0.5 and t["accuracy_genus"] == 0.5 and t["accuracy_family"] == 1.0


@settings(max_examples=20, deadline=None)
@given(tree_seed=st.integers(0, 3000), pair_seed=st.integers(0, 2**32 - 1))
def test_properties_on_random_trees(tree_seed, pair_seed):
    tables = random_ranked_tree(tree_seed)
    tree = RankedTree.of(tables)
    species = np.flatnonzero(tree.rank_mask("species"))
    if not len(species):
        return
    rng = np.random.default_rng(pair_seed)
    g = species[rng.integers(0, len(species), 30)]
    p = rng.integers(0, len(tree), 30)
    s = pl.DataFrame({"model": "m", "gt_node": tree.ids[g].tolist(), "pred_node": tree.ids[p].tolist(),
                      "abstained": False})
    s = bd.with_depths(s, tree)
    cl = bd.correctness_by_level(s, tree)["accuracy"].to_list()
    assert all(a >= b - 1e-12 for a, b in zip(cl, cl[1:]))          # deeper levels: never easier
    cr = dict(bd.correctness_by_rank(s, tree).select("rank", "accuracy").rows())
    acc = float(s["correct"].mean())
    assert cr["species"] >= acc - 1e-12                               # right species ⊇ right node
    con = bd.consistency(s, tree, n_cuts=5).row(0, named=True)
    assert acc - 1e-12 <= con["HCA"] <= cr["genus"] + 1e-12
    out = bd.outcome_shares(s).row(0, named=True)
    assert out["correct_pct"] + out["incorrect_pct"] + out["other_pct"] == pytest.approx(100.0)


@settings(max_examples=30, deadline=None)
@given(li=st.lists(st.sampled_from([0.0, 1.0]), min_size=1, max_size=30), seed=st.integers(0, 2**32 - 1))
def test_open_world_group_shares_partition_the_samples(li, seed):
    cs = np.random.default_rng(seed).random(len(li))
    g = bd.open_world_groups(pl.DataFrame({"model": "m", "LI": li, "CS": cs}), by=("model",)).row(0, named=True)
    assert sum(g[f"{k}_pct"] for k in bd.OPEN_WORLD_GROUPS) == pytest.approx(100.0)
    assert g["correct_specific_pct"] + g["correct_generic_pct"] == pytest.approx(100.0 * np.mean(li))
    assert g["correct_specific_pct"] + g["wrong_specific_pct"] == pytest.approx(100.0 * np.mean(cs >= 0.6))


def test_on_the_samples_table_of_a_real_scoring_run(tmp_path):
    """The breakdowns read the samples table `taxoforge score` writes, and their leaderboard
    columns join onto its leaderboard by model × dataset × prompt."""
    import json

    from taxoforge.scores.readers.files import read_outputs
    from taxoforge.scores.run import score_frame
    from tests.taxoforge.evaluation.conftest import toy_tables

    rows = [("Esox lucius", "The answer is: Esox lucius"), ("Esox lucius", "Esox niger"),
            ("Umbra limi", "It is some Umbridae fish"), ("Umbra limi", "Sorry, I cannot tell.")]
    path = tmp_path / "out.jsonl"
    path.write_text("".join(json.dumps({"id": str(i), "model": "m", "dataset": "d", "prompt": "p", "label": gt,
                                        "output": out}) + "\n" for i, (gt, out) in enumerate(rows)))
    tables = toy_tables()
    run = score_frame(read_outputs(path), tables, text_measures=False)
    cols = bd.leaderboard_columns(run.samples, tables, n_cuts=5)
    board = run.leaderboard.join(cols, on=["model", "dataset", "prompt"], how="left")
    r = board.row(0, named=True)
    assert r["accuracy"] == pytest.approx(0.25) and r["HCA"] == pytest.approx(0.25)
    assert (r["correct_pct"], r["incorrect_pct"], r["other_pct"]) == pytest.approx((25.0, 50.0, 25.0))
    assert r["accuracy_genus"] == pytest.approx(0.5) and r["accuracy_family"] == pytest.approx(0.75)
    assert set(bd.breakdown_tables(run.samples, tables, n_cuts=5)) >= {"by_level", "by_rank", "consistency", "outcomes"}
