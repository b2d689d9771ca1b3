"""An answer as the mapper reads it: key words, non-naming words, core, counting, spans."""

from __future__ import annotations

from taxoforge.scores.mapping.answers import Answer, joined_normal_form


def read(text: str) -> Answer:
    return Answer.read(joined_normal_form(text))


def test_core_strips_non_naming_words_from_both_ends():
    a = read("There are two Tenches in the picture.")
    assert a.words == ("there", "are", "two", "tench", "in", "the", "picture")
    assert a.core == "tench" and a.query == "tench"
    assert read("I think it's a golden retriever").core == "golden retriever"
    b = read("two")
    assert b.core == "" and b.query == "two"


def test_counting_numbers_precede_plurals_and_hyphens_join():
    assert read("two dogs").counting == (True, False)
    assert read("a three-toed sloth").counting == (False, False, False, False)
    assert read("two six-guns").counting == (False, False, False)
    assert read("two-pieces").counting == (False, False)
    assert joined_normal_form("Two six-guns!") == "two six-guns"


def test_exact_spans_widest_first_articles_last_counting_never_first():
    a = read("There are two pieces in the picture")
    spans = [" ".join(a.words[i:j]) for i, j in a.exact_spans()]
    assert "two piece" not in spans and spans[-1] == "piece"
    b = read("I think it's a battery")
    order = [" ".join(b.words[i:j]) for i, j in b.exact_spans()]
    assert order.index("battery") < order.index("a battery")
    c = read("a picture frame")
    assert [" ".join(c.words[i:j]) for i, j in c.exact_spans()][0] == "picture frame"


def test_content_words():
    assert read("a bird on a branch").content_words() == {"bird", "branch"}
