"""Text measures of Snæbjarnarson et al. 2025 [1] Table 4 on stemmed normalised text, via NLTK and rouge-score."""

from __future__ import annotations

import math

import numpy as np
import pytest
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

from taxoforge.scores.measures.text import TEXT_MEASURES, meteor_available, stem_text, text_scores


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


def _sentences(n: int, seed: int) -> list[tuple[list[str], list[str]]]:
    """Seeded (reference, prediction) word lists over a small vocabulary, so words repeat
    and n-grams overlap (empty and one-word sentences included)."""
    import random

    rng = random.Random(seed)
    vocab = ["golden", "retriev", "dog", "a", "the", "red", "fox", "tench", "toucan", "sparrow", "hous", "of"]
    return [([rng.choice(vocab) for _ in range(rng.randint(0, 6))], [rng.choice(vocab) for _ in range(rng.randint(0, 7))])
            for _ in range(n)]


def test_bleu2_and_rouge1_equal_the_reference_implementations_over_many_pairs():
    from rouge_score import rouge_scorer

    from taxoforge.scores.measures.text import bleu2, rouge1_recall

    class Whitespace:
        def tokenize(self, text):
            return text.split()

    rouge = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=False, tokenizer=Whitespace())
    checked = 0
    for ref, hyp in _sentences(3000, seed=3):
        if not ref or not hyp:
            continue
        want_bleu = sentence_bleu([ref], hyp, weights=(0.5, 0.5), smoothing_function=SmoothingFunction().method1)
        assert bleu2(ref, hyp) == want_bleu, (ref, hyp)
        assert rouge1_recall(ref, hyp) == rouge.score(" ".join(ref), " ".join(hyp))["rouge1"].recall, (ref, hyp)
        checked += 1
    assert checked > 2000


def test_porter_stemmer_is_nltks_and_scoring_does_not_import_nltk():
    """The stemmer is NLTK's own (same stems), loaded without the ``nltk`` package, whose
    import pulls scikit-learn, pandas and SciPy; a later ``import nltk`` still works."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from taxoforge.scores.measures.text import text_scores, porter_stemmer\n"
            "r = text_scores(['Two Toucans', 'dogs'], ['toucan', 'dog'], meteor=False)\n"
            "assert r['exact_match'].tolist() == [0.0, 1.0]\n"
            "heavy = sorted(m for m in ('nltk', 'sklearn', 'scipy', 'pandas', 'rouge_score') if m in sys.modules)\n"
            "assert not heavy, heavy\n"
            "import nltk\n"
            "from nltk.stem.porter import PorterStemmer\n"
            "words = ['running', 'generously', 'flies', 'dying', 'sky', 'toucans', 'agreed', 'oed', 'news']\n"
            "assert [porter_stemmer().stem(w) for w in words] == [PorterStemmer().stem(w) for w in words]\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_pairs_read_from_the_memo_score_as_computed(tmp_path, monkeypatch):
    """The text measures' memo (:func:`taxoforge.scores.memos.text_memo`): a second call reads
    every pair an earlier one measured, with the same five numbers (NaN METEOR included)."""
    import taxoforge.scores.measures.text as text_module
    from taxoforge.files.memo import ContentMemo

    preds = ["Toco toucans", "a golden retriever dog", "", "Iris", "Toco toucans", "the bird is a toucan"]
    refs = ["Toco Toucan", "Golden Retriever", "Aloe vera", "Iris versicolor", "Toco Toucan", "Toucans"]

    def memo(status):
        return ContentMemo("text-measures", {"meteor": status}, ["prediction", "reference"], cache_dir=tmp_path)

    for meteor_on in (False, True):
        plain = text_scores(preds, refs, meteor=meteor_on)
        first = text_scores(preds, refs, meteor=meteor_on, memo=memo)
        with monkeypatch.context() as m:
            m.setattr(text_module, "_pair_scores", None)  # nothing measured: all from the memo
            again = text_scores(preds, refs, meteor=meteor_on, memo=memo)
        for r in (first, again):
            assert r["meteor_status"] == plain["meteor_status"]
            for name in TEXT_MEASURES:
                np.testing.assert_array_equal(r[name], plain[name])
