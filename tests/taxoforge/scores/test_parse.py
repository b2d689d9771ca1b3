"""Answer parsing: templates, multiple-choice letters, abstentions (SPEC §4)."""

from __future__ import annotations

import pytest

from taxoforge.scores.parse import UnparseableAnswer, is_abstention, parse_answer, parse_options

Q = ("What is the scientific name of the fish in the image? Options: A) Lepomis megalotis, B) Perca flavescens, "
     "C) Esox americanus, D) Gambusia affinis. Write the answer after writing 'The answer is: '.")


def test_options_from_vlm4bio_question():
    assert parse_options(Q) == {"A": "Lepomis megalotis", "B": "Perca flavescens", "C": "Esox americanus",
                                "D": "Gambusia affinis"}


def test_options_one_per_line_and_parenthesised():
    assert parse_options("Which?\n(a) dog\n(b) cat\n(c) tiger cat") == {"A": "dog", "B": "cat", "C": "tiger cat"}
    assert parse_options("Which?\nA. dog\nB. cat") == {"A": "dog", "B": "cat"}
    assert parse_options("What is in this image? Answer in the format A: <answer>.") == {}


@pytest.mark.parametrize("raw,answer", [
    ("The answer is: D) Gambusia affinis.", "Gambusia affinis"),
    ("B", "Perca flavescens"), ("(b)", "Perca flavescens"), ("b", "Perca flavescens"),
    ("B.", "Perca flavescens"), ("Option C", "Esox americanus"), ("The answer is: C.", "Esox americanus"),
])
def test_letters_resolved_against_options(raw, answer):
    p = parse_answer(raw, Q)
    assert p.answer == answer and p.raw == raw and "mc_letter" in p.flags


def test_letter_and_text_disagree_text_naming_an_option_wins():
    p = parse_answer("A) Esox americanus", Q)
    assert p.answer == "Esox americanus" and p.option_letter == "C" and "mc_letter_text_conflict" in p.flags


def test_letter_not_among_options_is_unparseable():
    with pytest.raises(UnparseableAnswer, match="'F'"):
        parse_answer("(F)", Q)


def test_letter_without_options_stays_text():
    p = parse_answer("b")
    assert p.answer == "b" and "mc_letter_without_options" in p.flags


@pytest.mark.parametrize("raw,answer", [
    ("A: a golden retriever", "a golden retriever"), ("Answer: Toucan.", "Toucan"),
    ("The answer is: Iris", "Iris"), ("<answer>Aloe vera</answer>", "Aloe vera"), ("ASSISTANT: A: zebra", "zebra"),
])
def test_templates_stripped(raw, answer):
    assert parse_answer(raw).answer == answer


@pytest.mark.parametrize("text,abstains", [
    ("", True), ("I cannot tell from this image.", True), ("Sorry, I am unable to identify this bird.", True),
    ("I don't know", True), ("unknown", True), ("N/A", True),
    ("I'm not sure, but it looks like a heron", False), ("a dog", False), ("common sorrel", False), ("Dont know, maybe a heron", False),
])
def test_abstentions(text, abstains):
    assert is_abstention(text) is abstains


def test_non_text_output_is_unparseable():
    with pytest.raises(UnparseableAnswer):
        parse_answer(42)
    with pytest.raises(UnparseableAnswer):
        parse_answer(None)
