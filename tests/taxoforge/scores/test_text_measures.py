"""Text measures of paper 000 Table 4 on stemmed normalised text, via NLTK and rouge-score."""

from __future__ import annotations

import math

import pytest
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

from taxoforge.scores.text_measures import meteor_available, stem_text, text_scores


def test_stemming_removes_plural_difference():
    assert stem_text("Toucans!") == stem_text("toucan") == "toucan"


def test_exact_match_and_contained_on_stemmed_words():
    r = text_scores(["Toucans", "a golden retriever dog", "Golden", "plant"], ["toucan", "Golden Retriever", "golden retriever", "ant"],
                    meteor=False)
    assert r["exact_match"].tolist() == [1, 0, 0, 0]
    assert r["contained"].tolist() == [1, 1, 0, 0]  # whole words: "ant" is not contained in "plant"
    assert r["rouge1_recall"].tolist() == pytest.approx([1, 1, 0.5, 0])
    assert math.isnan(r["meteor"][0]) and r["meteor_status"] == "METEOR disabled"


def test_bleu2_is_nltk_smoothed_bigram_bleu():
    r = text_scores(["a golden retriever dog"], ["golden retriever"], meteor=False)
    expect = sentence_bleu([["golden", "retriev"]], ["a", "golden", "retriev", "dog"], weights=(0.5, 0.5),
                           smoothing_function=SmoothingFunction().method1)
    assert r["bleu2"][0] == pytest.approx(expect)


def test_meteor_when_wordnet_is_available():
    ok, why = meteor_available()
    if not ok:
        pytest.skip(why)
    r = text_scores(["golden retriever", "zebra"], ["golden retriever", "pizza"])
    assert r["meteor"][0] > 0.9 and r["meteor"][1] == 0.0


def test_length_mismatch_is_an_error():
    with pytest.raises(ValueError, match="2 predictions but 1 references"):
        text_scores(["a", "b"], ["a"])
