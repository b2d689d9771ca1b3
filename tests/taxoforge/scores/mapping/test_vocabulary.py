"""Closed word classes: words that never name a taxon on their own."""

from __future__ import annotations

import pytest

from taxoforge.scores.mapping.vocabulary import FRAMING_WORDS, FUNCTION_WORDS, NUMBER_WORDS, TASK_WORDS, is_non_naming


@pytest.mark.parametrize("word", ["the", "its", "cant", "does", "two", "twentyone", "several", "12", "images",
                                  "species", "breeds", "photo", "looks", "probably", "depicted", "best"])
def test_non_naming(word):
    assert is_non_naming(word)


@pytest.mark.parametrize("word", ["dog", "tench", "tenches", "heron", "retriever", "aloe", "quercus", "frame",
                                  "double", "glass", "well"])
def test_naming(word):
    assert not is_non_naming(word)


def test_classes_are_disjoint_from_taxon_words_and_numbers_are_generated():
    assert {"one", "nineteen", "ninety", "ninetynine", "hundred", "dozen"} <= NUMBER_WORDS
    assert not (FUNCTION_WORDS | NUMBER_WORDS | TASK_WORDS | FRAMING_WORDS) & {"bird", "plant", "fish", "animal"}
