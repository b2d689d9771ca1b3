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
from taxoforge.links.scientific_names import vlm4bio_labels
from taxoforge.trees.ranked_tree import RankedTree
from tests.conftest import shared_file
from tests.taxoforge.evaluation.conftest import random_ranked_tree, toy_tables


def _options(qs, i=0):
    r = qs.questions.row(i, named=True)
    return r, set(r["options"]) - {r["target-class"]}


# ---------------------------------------------------------------------------- by hand
def test_medium_distractors_are_the_other_species_of_the_genus(toy):
    qs = mc.build_questions(toy, ["Esox lucius"], "medium", options=4, seed=0, pool="tree")
    r, d = _options(qs)
    assert d == {"Esox niger", "Esox americanus", "Esox masquinongy"}
    assert r["target-class"] == "Esox lucius" and r["options"]["ABCD".index(r["option-gt"])] == "Esox lucius"
    assert r["distractor-lca"] == ["genus"] * 3


def test_hard_needs_subspecies_and_uses_the_species_siblings(toy):
    qs = mc.build_questions(toy, ["Esox americanus vermiculatus"], "hard", options=2, seed=0, pool="tree")
    _, d = _options(qs)
    assert d == {"Esox americanus americanus"}
    with pytest.raises(mc.TreeTooShallow, match="infraspecific"):
        mc.build_questions(toy, ["Esox lucius"], "hard", options=2, pool="tree")
    # two subspecies only: a four-option hard question would need weak distractors → none
    with pytest.raises(mc.TreeTooShallow, match="only 1 valid distractor"):
        mc.build_questions(toy, ["Esox americanus vermiculatus"], "hard", options=4, pool="tree")


def test_easy_prefers_other_families_and_distinct_genera(toy):
    # Esox lucius: other families hold Dallia, Umbra (×2), Novumbra, Notropis (×2), Cyprinus species
    for seed in range(20):
        qs = mc.build_questions(toy, ["Esox lucius"], "easy", options=4, seed=seed, pool="tree")
        r, _ = _options(qs)
        nodes = [n for n in r["option-nodes"] if n != "e_lucius"]
        genera = {toy.taxonomy.parent(n) for n in nodes}
        assert "esox" not in genera and len(genera) == 3
        assert all(toy.taxonomy.lca(n, "e_lucius") not in ("esox", "esocidae") for n in nodes)


def test_easy_falls_back_to_the_same_family_only_when_needed():
    rows = [("life", None, "Life", None), ("fam", "life", "Fam", "family"),
            ("g1", "fam", "G1", "genus"), ("g2", "fam", "G2", "genus"), ("g3", "fam", "G3", "genus"),
            ("s1", "g1", "S one", "species"), ("s2", "g2", "S two", "species"), ("s3", "g3", "S three", "species")]
    qs = mc.build_questions(toy_tables(rows), ["S one"], "easy", options=3, seed=0, pool="tree")
    r, d = _options(qs)
    assert d == {"S two", "S three"} and r["distractor-lca"] == ["family", "family"]


def test_skipped_ground_truths_are_reported_with_line_and_reason(toy):
    qs = mc.build_questions(toy, ["Esox lucius", "Felis catus", "Dallia pectoralis", "Esox niger"], "medium",
                            options=3, seed=0, pool="tree")
    assert qs.questions["target-class"].to_list() == ["Esox lucius", "Esox niger"]
    sk = qs.skipped.to_dicts()
    assert [s["line"] for s in sk] == [2, 3]
    assert sk[0]["reason"] == "unresolved label: unmatched" and "Felis catus" in sk[0]["detail"]
    assert sk[1]["reason"] == "no medium question" and "only 0 valid distractor" in sk[1]["detail"]


def test_passthrough_columns_and_ids(toy):
    gts = pl.DataFrame({"label": ["Esox lucius", "Esox niger"], "image-path": ["a.jpg", "b.jpg"]})
    qs = mc.build_questions(toy, gts, "medium", options=3, seed=4, pool="tree")
    assert qs.questions["image-path"].to_list() == ["a.jpg", "b.jpg"]
    assert qs.questions["id"].to_list() == ["medium-000000", "medium-000001"]


def test_same_seed_same_bytes_other_seed_other_questions(toy):
    labels = ["Esox lucius", "Umbra limi", "Notropis hudsonius"] * 5
    a = mc.build_questions(toy, labels, "easy", seed=11, pool="tree").to_jsonl()
    b = mc.build_questions(RankedTree.of(toy_tables()), labels, "easy", seed=11, pool="tree").to_jsonl()
    c = mc.build_questions(toy, labels, "easy", seed=12, pool="tree").to_jsonl()
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
    from taxoforge.scores.mapping.parse import parse_answer

    qs = mc.build_questions(toy, ["Esox lucius"], "medium", seed=2, pool="tree")
    r = qs.questions.row(0, named=True)
    letter = r["option-gt"]
    assert parse_answer(f"The answer is: {letter}) {r['target-class']}.", r["question"]).answer == r["target-class"]
    assert parse_answer(f"{letter})", r["question"]).answer == r["target-class"]


def test_unranked_tree_uses_levels():
    tree = {"r": None, "a": "r", "b": "r", "a1": "a", "a2": "a", "b1": "b", "b2": "b",
            "a1x": "a1", "a1y": "a1", "a1z": "a1", "a2x": "a2", "a2y": "a2", "b1x": "b1", "b2x": "b2", "b2y": "b2"}
    hard = mc.build_questions(tree, ["a1x"], "hard", options=3, seed=0, pool="tree")
    assert set(hard.questions["options"][0].to_list()) == {"a1x", "a1y", "a1z"}
    med = mc.build_questions(tree, ["a1x"], "medium", options=3, seed=0, pool="tree")
    assert set(med.questions["options"][0].to_list()) - {"a1x"} <= {"a2x", "a2y"}
    easy = mc.build_questions(tree, ["a1x"], "easy", options=3, seed=0, pool="tree")
    d = set(easy.questions["options"][0].to_list()) - {"a1x"}
    assert d <= {"b1x", "b2x", "b2y"} and len({x[:2] for x in d}) == 2  # under different parents
    assert mc.check_questions(tree, easy, "easy").height == 0


def test_rank_probes_take_siblings_then_widen(toy):
    q = mc.build_rank_probes(toy, ["Esox lucius"], "genus", options=4, seed=0, pool="tree")
    r = q.questions.row(0, named=True)
    assert r["target-class"] == "Esox" and r["ground-truth-node"] == "e_lucius"
    # Esox has no sibling genus in Esocidae: widened to the order (Umbridae's three genera)
    assert set(r["options"]) == {"Esox", "Dallia", "Umbra", "Novumbra"} and r["distractor-lca"] == ["order"] * 3
    q2 = mc.build_rank_probes(toy, ["Umbra limi"], "genus", options=3, seed=0, pool="tree")
    assert q2.questions["distractor-lca"][0].to_list() == ["family", "family"]
    assert mc.check_questions(toy, q2).height == 0
    with pytest.raises(ValueError, match="no rank 'tribe'"):
        mc.build_rank_probes(toy, ["Umbra limi"], "tribe")


def test_check_questions_finds_a_planted_error(toy):
    qs = mc.build_questions(toy, ["Esox lucius"], "medium", options=4, seed=0, pool="tree")
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


# ---------------------------------------------------------------------------- real trees
def test_inaturalist_sets_are_valid_and_reproducible(inat_tree):
    """2,000 questions per difficulty on the real 1.38 M-taxon tree: every distractor has the
    promised relation to its answer, and a rebuild gives the same bytes (the benchmark does
    10,000 per difficulty)."""
    for difficulty in mc.DIFFICULTIES:
        gts = mc.sample_ground_truths(inat_tree, difficulty, 2000, seed=5)
        qs = mc.build_questions(inat_tree, gts, difficulty, seed=5, pool="tree")
        assert qs.questions.height >= 1900, qs.info
        assert mc.check_questions(inat_tree, qs, difficulty).height == 0
        again = mc.build_questions(inat_tree, gts, difficulty, seed=5, pool="tree")
        assert hashlib.sha256(qs.to_jsonl().encode()).digest() == hashlib.sha256(again.to_jsonl().encode()).digest()


def test_vlm4bio_butterfly_hard_targets_get_subspecies_questions(inat_tree):
    path = shared_file("vlm4bio", "results", "butterfly-hard", "classification", "selection",
                       "classification_llava-v1.5-7b_selection_num_20_chunk_0.jsonl")
    targets = sorted({json.loads(x)["target-class"] for x in path.read_text().splitlines() if x.strip()} - {None, ""})
    # VLM4Bio's pool: every butterfly name of the dataset (its questions' options)
    names = vlm4bio_labels(shared_file("vlm4bio")).filter(pl.col("dataset") == "vlm4bio-butterfly")["label_text"]
    qs = mc.build_questions(inat_tree, targets, "hard", seed=0, organism="butterfly", options=2, pool=names)
    assert qs.questions.height >= 1 and qs.info["pool"]["kind"] == "list"
    assert mc.check_questions(inat_tree, qs, "hard").height == 0
    for r in qs.questions.iter_rows(named=True):
        species = " ".join(r["target-class"].split()[:2])
        assert all(o.startswith(species + " ") for o in r["options"]), r["options"]
        assert set(r["options"]) <= set(names.to_list())


def test_coldp_catalogue_medium_and_probes(shared_data):
    from taxoforge.sources.coldp import coldp_tree

    tree = RankedTree.of(coldp_tree(shared_data / "coldp" / "pterophoroidea_world_catalogue", name="ptero"))
    gts = mc.sample_ground_truths(tree, "medium", 300, seed=1)
    qs = mc.build_questions(tree, gts, "medium", seed=1, pool="tree")
    assert mc.check_questions(tree, qs, "medium").height == 0
    probes = mc.build_rank_probes(tree, gts, "genus", seed=1, pool="tree")
    assert mc.check_questions(tree, probes).height == 0
    assert (probes.questions["target-node"] != probes.questions["ground-truth-node"]).all()




# ---------------------------------------------------------------------------- distractor pools
def test_the_default_pool_is_the_labels_given(toy):
    labels = ["Esox lucius", "Esox niger", "Esox americanus", "Umbra limi"]
    qs = mc.build_questions(toy, labels, "medium", options=3, seed=0)
    assert qs.info["pool"] == {"kind": "labels", "nodes": 4,
                               "node_ids": ["e_americanus", "e_lucius", "e_niger", "u_limi"]}
    for r in qs.questions.iter_rows(named=True):
        assert set(r["options"]) <= set(labels)  # never Esox masquinongy, which the labels do not name
    # Umbra limi's genus has one other species in the tree, none among the labels: skipped, with the pool named
    (reason,) = qs.skipped.filter(pl.col("label") == "Umbra limi")["detail"].to_list()
    assert "in the 4 taxa of the labels given; 2 needed" in reason
    assert mc.check_questions(toy, qs).height == 0


def test_a_clade_pool_keeps_every_rule_inside_the_clade(toy):
    qs = mc.build_questions(toy, ["Esox lucius", "Umbra limi"], "easy", options=3, seed=1, pool="Esociformes")
    assert qs.info["pool"]["kind"] == "clade" and qs.info["pool"]["node"] == "esociformes"
    for r in qs.questions.iter_rows(named=True):
        assert not {"n_atherinoides", "n_hudsonius", "c_carpio"} & set(r["option-nodes"])  # Cypriniformes
    assert mc.check_questions(toy, qs, "easy").height == 0
    by_id = mc.build_questions(toy, ["Esox lucius"], "easy", options=3, seed=1, pool="clade:esociformes")
    assert by_id.questions["option-nodes"].to_list() == qs.questions.filter(pl.col("row") == 0)[
        "option-nodes"].to_list()
    with pytest.raises(ValueError, match="the clade 'Felidae' is not a node of toy"):
        mc.build_questions(toy, ["Esox lucius"], "easy", pool="Felidae")


def test_a_list_pool_and_a_planted_distractor_outside_it(toy):
    pool = ["Esox niger", "Esox masquinongy", "Esox lucius"]
    qs = mc.build_questions(toy, ["Esox lucius"], "medium", options=3, seed=2, pool=pool)
    assert qs.info["pool"]["kind"] == "list" and set(qs.questions["options"][0].to_list()) == set(pool)
    rows = qs.questions.to_dicts()
    i = next(k for k, n in enumerate(rows[0]["option-nodes"]) if n != "e_lucius")
    rows[0]["option-nodes"][i], rows[0]["options"][i] = "e_americanus", "Esox americanus"
    probs = mc.check_questions(toy, rows, "medium", pool=pool)
    assert probs["problem"].to_list() == ["distractor(s) outside the pool: e_americanus"]


def test_probes_draw_from_the_pool_at_the_probed_rank(toy):
    labels = ["Esox lucius", "Umbra limi", "Dallia pectoralis", "Novumbra hubbsi", "Notropis hudsonius"]
    q = mc.build_rank_probes(toy, labels, "genus", options=3, seed=0)
    for r in q.questions.iter_rows(named=True):
        assert set(r["options"]) <= {"Esox", "Umbra", "Dallia", "Novumbra", "Notropis"}
    assert mc.check_questions(toy, q).height == 0


def test_partial_ground_truths_get_probes_but_no_species_question(toy):
    qs = mc.build_questions(toy, ["Esox imaginarius", "Esox lucius", "Esox niger", "Esox americanus"], "medium",
                            options=3, seed=0)
    (row,) = qs.skipped.filter(pl.col("reason") == "partial ground truth").to_dicts()
    assert row["label"] == "Esox imaginarius" and "partial ground truth: the genus Esox" in row["detail"]
    assert qs.info["resolution"]["partial"] == 1
    probe = mc.build_rank_probes(toy, ["Esox imaginarius"], "family", options=2, seed=0, pool="tree")
    r = probe.questions.row(0, named=True)
    assert r["target-class"] == "Esocidae" and r["ground-truth-method"] == "genus" and r["ground-truth-node"] == "esox"


def test_labels_resolve_as_scoring_resolves_them_and_say_how(inat_tree):
    """Renamed species and labels written another way get questions (the old builder matched
    ids and exact names only), each question saying how its label was resolved."""
    labels = ["Notropis hudsonius", "esox_lucius", "Phoxinus eos", "Esox niger", "Cyprinus carpio"]
    qs = mc.build_questions(inat_tree, labels, "easy", seed=0, pool="tree")
    assert qs.skipped.height == 0
    got = dict(qs.questions.select("ground-truth", "ground-truth-method").iter_rows())
    assert got["Notropis hudsonius"] == "genus_transfer" and got["esox_lucius"] == "normalised"
    assert got["Esox niger"] == "exact"
    target = dict(qs.questions.select("ground-truth", "target-class").iter_rows())
    assert target["Notropis hudsonius"] == "Hudsonius hudsonius"
    assert qs.info["resolution"]["by_method"]["genus_transfer"] >= 1


@pytest.mark.parametrize("organism", ["fish", "bird"])
def test_vlm4bio_audit_no_rule_broken_no_distractor_outside_the_dataset(inat_tree, organism):
    """The audit of VLM4Bio-style sets on VLM4Bio's own species names: with the default pool
    every option is a species of the same dataset (fish among fish), no question breaks its
    difficulty's rule, and no label is left unresolved that scoring resolves."""
    from taxoforge.links.resolve import resolve_labels

    names = vlm4bio_labels(shared_file("vlm4bio")).filter(pl.col("dataset") == f"vlm4bio-{organism}")
    scoring = resolve_labels(names, inat_tree.names_table, inat_tree.nodes_table)
    scoring_unresolved = scoring.filter(pl.col("status") != "linked").height
    resolved = set(scoring.filter(pl.col("status") == "linked")["node_id"].to_list())
    for difficulty in ("easy", "medium"):
        qs = mc.build_questions(inat_tree, names["label_text"], difficulty, seed=0, organism=organism)
        assert qs.info["pool"]["kind"] == "labels" and set(qs.info["pool"]["node_ids"]) <= resolved
        assert mc.check_questions(inat_tree, qs, difficulty).height == 0  # rules and pool
        options = {n for row in qs.questions["option-nodes"].to_list() for n in row}
        assert options <= resolved
        unresolved = qs.skipped.filter(pl.col("reason").str.starts_with("unresolved label")).height
        assert unresolved <= scoring_unresolved
    easy = mc.build_questions(inat_tree, names["label_text"], "easy", seed=0, organism=organism)
    assert easy.questions.height == names.height  # every species of the dataset gets an easy question
