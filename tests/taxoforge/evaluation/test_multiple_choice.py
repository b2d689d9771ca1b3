"""Multiple-choice sets: hand-checked questions on a small tree, the relation of every
distractor to its answer on random trees and on the real iNaturalist tree, byte-identical
files for the same seed, VLM4Bio's exact question format, and what a too-shallow tree says."""

from __future__ import annotations

import hashlib
import json
import re

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taxoforge.evaluation import multiple_choice as mc
from taxoforge.trees.ranked_tree import RankedTree
from tests.conftest import shared_file
from tests.taxoforge.evaluation.conftest import random_ranked_tree, toy_tables


def _options(qs, i=0):
    r = qs.questions.row(i, named=True)
    return r, set(r["options"]) - {r["target-class"]}


# ---------------------------------------------------------------------------- by hand
def test_medium_distractors_are_the_other_species_of_the_genus(toy):
    qs = mc.build_questions(toy, ["Esox lucius"], "medium", options=4, seed=0)
    r, d = _options(qs)
    assert d == {"Esox niger", "Esox americanus", "Esox masquinongy"}
    assert r["target-class"] == "Esox lucius" and r["options"]["ABCD".index(r["option-gt"])] == "Esox lucius"
    assert r["distractor-lca"] == ["genus"] * 3


def test_hard_needs_subspecies_and_uses_the_species_siblings(toy):
    qs = mc.build_questions(toy, ["Esox americanus vermiculatus"], "hard", options=2, seed=0)
    _, d = _options(qs)
    assert d == {"Esox americanus americanus"}
    with pytest.raises(mc.TreeTooShallow, match="infraspecific"):
        mc.build_questions(toy, ["Esox lucius"], "hard", options=2)
    # two subspecies only: a four-option hard question would need weak distractors → none
    with pytest.raises(mc.TreeTooShallow, match="only 1 valid distractor"):
        mc.build_questions(toy, ["Esox americanus vermiculatus"], "hard", options=4)


def test_easy_prefers_other_families_and_distinct_genera(toy):
    # Esox lucius: other families hold Dallia, Umbra (×2), Novumbra, Notropis (×2), Cyprinus species
    for seed in range(20):
        qs = mc.build_questions(toy, ["Esox lucius"], "easy", options=4, seed=seed)
        r, _ = _options(qs)
        nodes = [n for n in r["option-nodes"] if n != "e_lucius"]
        genera = {toy.taxonomy.parent(n) for n in nodes}
        assert "esox" not in genera and len(genera) == 3
        assert all(toy.taxonomy.lca(n, "e_lucius") not in ("esox", "esocidae") for n in nodes)


def test_easy_falls_back_to_the_same_family_only_when_needed():
    rows = [("life", None, "Life", None), ("fam", "life", "Fam", "family"),
            ("g1", "fam", "G1", "genus"), ("g2", "fam", "G2", "genus"), ("g3", "fam", "G3", "genus"),
            ("s1", "g1", "S one", "species"), ("s2", "g2", "S two", "species"), ("s3", "g3", "S three", "species")]
    qs = mc.build_questions(toy_tables(rows), ["S one"], "easy", options=3, seed=0)
    r, d = _options(qs)
    assert d == {"S two", "S three"} and r["distractor-lca"] == ["family", "family"]


def test_skipped_ground_truths_are_reported_with_line_and_reason(toy):
    qs = mc.build_questions(toy, ["Esox lucius", "Felis catus", "Dallia pectoralis", "Esox niger"], "medium",
                            options=3, seed=0)
    assert qs.questions["target-class"].to_list() == ["Esox lucius", "Esox niger"]
    sk = qs.skipped.to_dicts()
    assert [s["line"] for s in sk] == [2, 3]
    assert sk[0]["reason"] == "unresolved label: unknown" and "Felis catus" in sk[0]["detail"]
    assert sk[1]["reason"] == "no medium question" and "only 0 valid distractor" in sk[1]["detail"]


def test_passthrough_columns_and_ids(toy):
    gts = pl.DataFrame({"label": ["Esox lucius", "Esox niger"], "image-path": ["a.jpg", "b.jpg"]})
    qs = mc.build_questions(toy, gts, "medium", options=3, seed=4)
    assert qs.questions["image-path"].to_list() == ["a.jpg", "b.jpg"]
    assert qs.questions["id"].to_list() == ["medium-000000", "medium-000001"]


def test_same_seed_same_bytes_other_seed_other_questions(toy):
    labels = ["Esox lucius", "Umbra limi", "Notropis hudsonius"] * 5
    a = mc.build_questions(toy, labels, "easy", seed=11).to_jsonl()
    b = mc.build_questions(RankedTree.of(toy_tables()), labels, "easy", seed=11).to_jsonl()
    c = mc.build_questions(toy, labels, "easy", seed=12).to_jsonl()
    assert a == b and a != c
    # the same species on several rows (several images) gets different option orders
    rows = [json.loads(line) for line in a.splitlines()]
    assert len({tuple(r["options"]) for r in rows if r["target-class"] == "Esox lucius"}) > 1


def test_question_text_is_vlm4bio_format():
    """Our question text has exactly the shape of VLM4Bio's real result rows."""
    path = shared_file("vlm4bio", "results", "fish-easy", "classification", "selection",
                       "classification_llava-v1.5-7b_selection_num_20_chunk_0.jsonl")
    real = json.loads(path.read_text().splitlines()[0])
    opts = re.findall(r"[A-D]\) ([^,.]+)", real["question"])
    ours = mc.question_text(opts, organism="fish")
    assert ours == real["question"]
    assert opts["ABCD".index(real["option-gt"])] == real["target-class"]


def test_our_questions_resolve_through_the_answer_parser(toy):
    from taxoforge.scores.parse import parse_answer

    qs = mc.build_questions(toy, ["Esox lucius"], "medium", seed=2)
    r = qs.questions.row(0, named=True)
    letter = r["option-gt"]
    assert parse_answer(f"The answer is: {letter}) {r['target-class']}.", r["question"]).answer == r["target-class"]
    assert parse_answer(f"{letter})", r["question"]).answer == r["target-class"]


def test_unranked_tree_uses_levels():
    tree = {"r": None, "a": "r", "b": "r", "a1": "a", "a2": "a", "b1": "b", "b2": "b",
            "a1x": "a1", "a1y": "a1", "a1z": "a1", "a2x": "a2", "a2y": "a2", "b1x": "b1", "b2x": "b2", "b2y": "b2"}
    hard = mc.build_questions(tree, ["a1x"], "hard", options=3, seed=0)
    assert set(hard.questions["options"][0].to_list()) == {"a1x", "a1y", "a1z"}
    med = mc.build_questions(tree, ["a1x"], "medium", options=3, seed=0)
    assert set(med.questions["options"][0].to_list()) - {"a1x"} <= {"a2x", "a2y"}
    easy = mc.build_questions(tree, ["a1x"], "easy", options=3, seed=0)
    d = set(easy.questions["options"][0].to_list()) - {"a1x"}
    assert d <= {"b1x", "b2x", "b2y"} and len({x[:2] for x in d}) == 2  # under different parents
    assert mc.check_questions(tree, easy, "easy").height == 0


def test_rank_probes_take_siblings_then_widen(toy):
    q = mc.build_rank_probes(toy, ["Esox lucius"], "genus", options=4, seed=0)
    r = q.questions.row(0, named=True)
    assert r["target-class"] == "Esox" and r["ground-truth-node"] == "e_lucius"
    # Esox has no sibling genus in Esocidae: widened to the order (Umbridae's three genera)
    assert set(r["options"]) == {"Esox", "Dallia", "Umbra", "Novumbra"} and r["distractor-lca"] == ["order"] * 3
    q2 = mc.build_rank_probes(toy, ["Umbra limi"], "genus", options=3, seed=0)
    assert q2.questions["distractor-lca"][0].to_list() == ["family", "family"]
    assert mc.check_questions(toy, q2).height == 0
    with pytest.raises(ValueError, match="no rank 'tribe'"):
        mc.build_rank_probes(toy, ["Umbra limi"], "tribe")


def test_check_questions_finds_a_planted_error(toy):
    qs = mc.build_questions(toy, ["Esox lucius"], "medium", options=4, seed=0)
    rows = qs.questions.to_dicts()
    r = rows[0]
    i = next(k for k, n in enumerate(r["option-nodes"]) if n != "e_lucius")
    r["option-nodes"][i], r["options"][i] = "u_limi", "Umbra limi"
    probs = mc.check_questions(toy, rows, "medium")
    assert probs["problem"].to_list() == ["medium: a distractor is not of the answer's genus (or is of its species)"]


# ---------------------------------------------------------------------------- properties
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree_seed=st.integers(0, 10_000), seed=st.integers(0, 2**32), options=st.integers(2, 5),
       difficulty=st.sampled_from(mc.DIFFICULTIES))
def test_every_question_on_random_trees_is_valid(tree_seed, seed, options, difficulty):
    tables = random_ranked_tree(tree_seed)
    tree = RankedTree.of(tables)
    labels = tables.nodes.filter(pl.col("rank").is_in(["species", "subspecies"]))["label"].to_list()
    try:
        qs = mc.build_questions(tree, labels, difficulty, options=options, seed=seed)
    except mc.TreeTooShallow:
        return
    assert mc.check_questions(tree, qs, difficulty).height == 0
    assert qs.questions.height + qs.skipped.height == len(labels)
    assert all(len(o) == options for o in qs.questions["options"].to_list())
    assert qs.to_jsonl() == mc.build_questions(tree, labels, difficulty, options=options, seed=seed).to_jsonl()


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**40), key=st.text(max_size=20), n=st.integers(1, 10**12))
def test_seeded_stream_is_uniform_range_and_reproducible(seed, key, n):
    a, b = mc.SeededStream(seed, key), mc.SeededStream(seed, key)
    xs = [a.below(n) for _ in range(5)]
    assert xs == [b.below(n) for _ in range(5)] and all(0 <= x < n for x in xs)


# ---------------------------------------------------------------------------- real trees
def test_inaturalist_sets_are_valid_and_reproducible(inat_tree):
    """2,000 questions per difficulty on the real 1.38 M-taxon tree: every distractor has the
    promised relation to its answer, and a rebuild gives the same bytes (the benchmark does
    10,000 per difficulty)."""
    for difficulty in mc.DIFFICULTIES:
        gts = mc.sample_ground_truths(inat_tree, difficulty, 2000, seed=5)
        qs = mc.build_questions(inat_tree, gts, difficulty, seed=5)
        assert qs.questions.height >= 1900, qs.info
        assert mc.check_questions(inat_tree, qs, difficulty).height == 0
        again = mc.build_questions(inat_tree, gts, difficulty, seed=5)
        assert hashlib.sha256(qs.to_jsonl().encode()).digest() == hashlib.sha256(again.to_jsonl().encode()).digest()


def test_vlm4bio_butterfly_hard_targets_get_subspecies_questions(inat_tree):
    path = shared_file("vlm4bio", "results", "butterfly-hard", "classification", "selection",
                       "classification_llava-v1.5-7b_selection_num_20_chunk_0.jsonl")
    targets = sorted({json.loads(x)["target-class"] for x in path.read_text().splitlines() if x.strip()} - {None, ""})
    qs = mc.build_questions(inat_tree, targets, "hard", seed=0, organism="butterfly")
    assert qs.questions.height >= 1
    for r in qs.questions.iter_rows(named=True):
        species = " ".join(r["target-class"].split()[:2])
        assert all(o.startswith(species + " ") for o in r["options"]), r["options"]


def test_coldp_catalogue_medium_and_probes(shared_data):
    from taxoforge.sources.coldp import coldp_tree

    tree = RankedTree.of(coldp_tree(shared_data / "coldp" / "pterophoroidea_world_catalogue", name="ptero"))
    gts = mc.sample_ground_truths(tree, "medium", 300, seed=1)
    qs = mc.build_questions(tree, gts, "medium", seed=1)
    assert mc.check_questions(tree, qs, "medium").height == 0
    probes = mc.build_rank_probes(tree, gts, "genus", seed=1)
    assert mc.check_questions(tree, probes).height == 0
    assert (probes.questions["target-node"] != probes.questions["ground-truth-node"]).all()


