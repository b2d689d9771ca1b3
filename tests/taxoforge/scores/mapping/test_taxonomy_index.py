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
