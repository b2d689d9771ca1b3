"""The batch driver: deduplication, what names something, the vote's candidates, the
length cap, and the question as context."""

from __future__ import annotations

from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex
from taxoforge.scores.mapping.taxonomy_index import truncate_answer
from taxoforge.trees.taxonomy import Taxonomy


def test_identical_normal_forms_are_mapped_once(inat_like):
    ix = TaxonomyIndex(Taxonomy.of(inat_like))
    r = ix.map(["Aloe vera", "ALOE VERA!", "aloe-vera", "Iris"])
    assert r.stats["unique_predictions"] == 3  # "aloe-vera" is one joined token, a form of its own
    assert len(set(r.node_idx[:3].tolist())) == 1


def test_names_anything(inat_like):
    ix = TaxonomyIndex(Taxonomy.of(inat_like))
    got = ix.names_anything(["probably a toucan", "the image is blurry", "", "two", "an ant", "zzz"])
    assert got.tolist() == [True, False, False, False, True, False]


def test_vote_candidates_only_for_answers_reaching_the_vote(inat_like):
    ix = TaxonomyIndex(Taxonomy.of(inat_like))
    got = ix.vote_candidates(["Aloe vera", "zzz qqq", "keel billed hornbill"])
    assert got[0] is None and got[2] is None
    nodes, scores = got[1]
    assert len(nodes) == ix.config.k and list(scores) == sorted(scores, reverse=True)


def test_length_cap():
    assert truncate_answer("a" * 10, 20) == "a" * 10
    assert truncate_answer("word " * 10, 22) == "word word word word"
    assert len(truncate_answer("x" * 50, 20)) == 20


def test_truncated_answers_are_reported(inat_like):
    ix = TaxonomyIndex(Taxonomy.of(inat_like), MappingConfig(max_answer_chars=30))
    r = ix.map(["Aloe vera", "Aloe vera " + "and more words " * 10])
    assert r.truncated.tolist() == [False, True] and r.stats["truncated"] == 1
    assert r.node_idx[0] == r.node_idx[1]


def test_subtree_sizes(inat_like):
    tax = Taxonomy.of(inat_like)
    size = tax.subtree_size()
    assert size[tax.root_idx] == len(tax)
    assert size[tax.index_of(["ramphastos"])[0]] == 4


def test_decisions_read_from_the_memo_are_those_mapped(tmp_path):
    """A memo of decisions (:mod:`taxoforge.files.memo`) gives every answer the node, stage,
    similarity and ties of mapping it; ties are decided again per row (label set, question)."""
    from taxoforge.files.memo import ContentMemo
    from tests.taxoforge.scores.conftest import tree_tables

    rows = [("r", None, "entity"), ("animal", "r", "animal"), ("reptile", "animal", "reptile"),
            ("lizard", "reptile", "lizard"), ("varanus", "lizard", "monitor"), ("komodo", "varanus", "Komodo dragon"),
            ("device", "r", "device"), ("display", "device", "monitor"), ("screen", "device", "screen")]
    tax = Taxonomy.of(tree_tables(rows))
    index = TaxonomyIndex(tax)
    answers = ["monitor", "a monitor", "Komodo dragon", "two screens", "komodo dragn", "It is a device",
               "nothing at all", "a reptile of some kind", "monitor"] * 2
    sets = [tax.index_of(["display", "screen"]), tax.index_of(["komodo"]), None] * (len(answers) // 3)
    contexts = ["Which device is shown on the desk?", None] * (len(answers) // 2)
    plain = index.map(answers, label_sets=sets, contexts=contexts)
    assert plain.stats["ties"]["answers"] > 0 and plain.stats["ties"]["decided_by_label_set"] > 0
    memo = ContentMemo("mapping-decisions", {"test": 1}, ["text"], cache_dir=tmp_path)
    first = index.map(answers, label_sets=sets, contexts=contexts, memo=memo)
    assert memo.load().height == first.stats["unique_predictions"]
    index._map_unique = None  # a second call maps nothing: every decision comes from the memo
    again = index.map(answers, label_sets=sets, contexts=contexts,
                      memo=ContentMemo("mapping-decisions", {"test": 1}, ["text"], cache_dir=tmp_path))
    for r in (first, again):
        assert r.node_idx.tolist() == plain.node_idx.tolist()
        assert r.stage.tolist() == plain.stage.tolist()
        assert r.score.tolist() == plain.score.tolist() and r.tied.tolist() == plain.tied.tolist()
        assert r.stats["ties"] == plain.stats["ties"]


def test_whether_a_text_names_anything_is_kept_by_its_memo(tmp_path):
    from taxoforge.files.memo import ContentMemo
    from tests.taxoforge.scores.conftest import tree_tables

    rows = [("r", None, "thing"), ("reptile", "r", "reptile"), ("komodo", "reptile", "Komodo dragon"),
            ("device", "r", "device"), ("display", "device", "monitor")]
    index = TaxonomyIndex(Taxonomy.of(tree_tables(rows)))
    texts = ["a monitor", "nothing at all", "Komodo dragon", "a monitor", "", "some reptile"]
    plain = index.names_anything(texts)
    assert plain.tolist() == [True, False, True, True, False, True]
    memo = ContentMemo("naming-decisions", {"test": 1}, ["text"], cache_dir=tmp_path)
    assert index.names_anything(texts, memo=memo).tolist() == plain.tolist()
    index.read = None  # a second call reads nothing: every answer comes from the memo
    again = ContentMemo("naming-decisions", {"test": 1}, ["text"], cache_dir=tmp_path)
    assert index.names_anything(texts, memo=again).tolist() == plain.tolist()
    assert index.names_anything([], memo=again).tolist() == []
