"""Answer parsing: templates, multiple-choice letters, abstentions (docs/method.md#model-outputs)."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taxoforge.scores.mapping import parse
from taxoforge.scores.mapping.parse import UnparseableAnswer, is_abstention, is_nota, parse_answer, parse_options, split_refusal

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


@pytest.mark.parametrize("text,rest", [
    ("I'm sorry, but I can't determine the species from this image.", ""),   # names only inside the refusal
    ("Cannot be determined from the image.", ""),
    ("I cannot identify the bird in this image", ""),
    ("Not enough detail to tell whether it is a cat or a dog", ""),
    ("The image is too blurry to identify the species.", ""),
    ("It might be a golden retriever, I don't know for sure.", "It might be a golden retriever"),
    ("I can't be certain; however it looks like a heron", "however it looks like a heron"),
    ("This is a dog, but I cannot tell the breed", "This is a dog"),
    ("Hard to tell - maybe a sparrow", "maybe a sparrow"),
])
def test_refused_clauses_are_cut_off(text, rest):
    refusal, unrefused = split_refusal(text)
    assert refusal and unrefused == rest


@pytest.mark.parametrize("text,rest", [
    # one scientific name is one clause: a rank term's full stop and a subgenus's parentheses
    ("The Quercus subsect. Stellatae is too blurry to identify.", ""),
    ("The Melitta (Plesiomelitta) in this photo cannot be identified.", ""),
    ("Passiflora sect. Decaloba; I can't tell which species.", "Passiflora sect. Decaloba"),
    ("Sorry, I cannot tell. It might be Poa annua var. annua.", "It might be Poa annua var. annua"),
    ("Unclear, perhaps Carex cf. nigra", "perhaps Carex cf. nigra"),
])
def test_a_scientific_name_stays_in_one_clause(text, rest):
    refusal, unrefused = split_refusal(text)
    assert refusal and unrefused == rest


@pytest.mark.parametrize("text", ["Quercus subsect. Stellatae", "Melitta (Plesiomelitta) leporina",
                                  "It is a robin (Erithacus rubecula)."])
def test_names_with_rank_terms_are_no_refusal(text):
    assert split_refusal(text) == (False, text)
    assert not is_abstention(text)


@pytest.mark.parametrize("text", ["A golden retriever", "I can see a heron", "It is a dog, not a wolf",
                                  "Probably a heron", "common sorrel"])
def test_no_refusal_cue(text):
    assert split_refusal(text) == (False, text)


@pytest.mark.parametrize("text,abstains", [
    ("no one", True), ("No company", True), ("nobody", True), ("no bird.", True),
    ("No, it's a golden retriever", False), ("no-see-um", False), ("Nothofagus", False), ("North American beaver", False),
    ("No. 5", True),
])
def test_a_bare_denial_names_nothing(text, abstains):
    """ "no" with a one- or two-word noun phrase (written apart) says there is nothing to name;
    a denial before an answer leaves the answer, and names merely starting with "no" are names."""
    assert is_abstention(text) is abstains


def test_hedged_answer_naming_a_taxon_is_an_answer_and_keeps_the_named_part():
    p = parse_answer("It might be a golden retriever, I don't know for sure.")
    assert not p.abstained and p.refusal and p.unrefused == "It might be a golden retriever"
    assert "hedged_answer" in p.flags
    # a taxonomy decides what names something: here nothing does
    assert is_abstention("I think it's a blurry thing, not sure", names_anything=lambda t: False)


NOTA_Q = ("What is the scientific name of the fish in the image? Options: A) Esox lucius, B) None of the above, "
          "C) Cottus bairdii, D) Gambusia affinis.")


def test_none_of_the_above_is_an_answer_where_offered():
    for raw in ("None of the above", "B) None of the Above", "The answer is: B", "none"):
        p = parse_answer(raw, NOTA_Q)
        assert p.nota and not p.abstained and "none_of_the_above" in p.flags, raw
        assert p.options["B"] == "None of the above"
    assert is_nota("None of these.") and not is_nota("Esox lucius")


def test_none_of_the_above_is_an_abstention_where_not_offered():
    p = parse_answer("None of the above", Q)
    assert p.abstained and not p.nota
    assert parse_answer("None of the above").abstained


def test_non_text_output_is_unparseable():
    with pytest.raises(UnparseableAnswer):
        parse_answer(42)
    with pytest.raises(UnparseableAnswer):
        parse_answer(None)


# The option-marker pattern as it was first written (three look-behinds per alternative):
# the faster one must find the same markers, at the same places, with the same letters.
_OPTION_MARK_AS_FIRST_WRITTEN = re.compile(
    r"(?:(?<=\s)|(?<=^)|(?<=[,;:]))\(?([A-Za-z])\)\s*|(?:(?<=\n)|(?<=^)|(?<=:\s))([A-Z])[.:]\s+")


def _marks(pattern, text):
    return [(m.span(), m.groups()) for m in pattern.finditer(text)]


def test_option_markers_as_first_written_on_the_vlm4bio_questions(vlm4bio_files):
    """Every text field of the real VLM4Bio result files (questions, extraction prompts,
    reasoning, outputs), a question laid out as the volume benchmark's, and this file's."""
    texts = [Q, "Which species is in the image? A) Aloe vera B) Aloe ferox C) Acer rubrum D) Acer saccharum"]
    for f in vlm4bio_files:
        for line in f.read_text().splitlines():
            texts += [v for v in json.loads(line).values() if isinstance(v, str)]
    assert len(texts) > 1000
    found = 0
    for t in texts:
        want = _marks(_OPTION_MARK_AS_FIRST_WRITTEN, t)
        assert _marks(parse._OPTION_MARK, t) == want, t
        found += len(want)
    assert found > 1000


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(["A", "B", "c", "D", "z", "(", ")", ".", ":", ";", ",", " ", "\n", "\t", "Aloe",
                                 "vera", "Options:", "A)", "(b)", "C.", "D:", "\u00e9", "1", "-"]), max_size=30),
       st.text(max_size=40))
def test_option_markers_as_first_written_on_generated_text(pieces, noise):
    for t in ("".join(pieces), noise, "".join(pieces) + noise):
        assert _marks(parse._OPTION_MARK, t) == _marks(_OPTION_MARK_AS_FIRST_WRITTEN, t), t
