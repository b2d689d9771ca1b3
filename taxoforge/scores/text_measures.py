"""Text-overlap measures of paper 000 Table 4, computed with the well-kept implementations.

For a prediction (the parsed answer) and a reference (the ground-truth label text):

``exact_match``    stemmed normalised prediction == stemmed normalised reference (0/1)
``contained``      the stemmed normalised reference occurs as whole words in the stemmed
                   normalised prediction (0/1)
``rouge1_recall``  ROUGE-1 recall from the ``rouge-score`` package, on the same stemmed
                   normalised words (whitespace tokenizer, so non-ASCII letters survive)
``bleu2``          NLTK ``sentence_bleu`` with weights (½, ½) and ``SmoothingFunction().method1``,
                   on stemmed normalised words
``meteor``         NLTK ``meteor_score`` on normalised (unstemmed) words — METEOR stems and
                   matches WordNet synonyms itself. It needs WordNet
                   (:func:`taxoforge.sources.wordnet.ensure_wordnet`); when WordNet cannot be
                   loaded the column is null and the reason is recorded.

Normalisation is :func:`taxoforge.text.normalise_text`; stemming is NLTK's Porter stemmer,
as in supplement §11 ("we also stem the words, e.g., removing the difference between
singular and plurals"). Scores are in [0, 1] (the paper prints them ×100).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from taxoforge.text import normalise_text

__all__ = ["TEXT_MEASURES", "text_scores", "stem_text", "meteor_available"]

TEXT_MEASURES = ("exact_match", "contained", "rouge1_recall", "bleu2", "meteor")


@lru_cache(maxsize=1)
def _porter():
    from nltk.stem import PorterStemmer

    return PorterStemmer()


@lru_cache(maxsize=500_000)
def _stem_word(w: str) -> str:
    return _porter().stem(w)


def stem_text(text: str | None) -> str:
    """Normalised text with every word Porter-stemmed (``"Toucans!"`` → ``"toucan"``)."""
    return " ".join(_stem_word(w) for w in normalise_text(text).split())


class _WhitespaceTokenizer:
    def tokenize(self, text: str) -> list[str]:
        return text.split()


@lru_cache(maxsize=1)
def _rouge():
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rouge1"], use_stemmer=False, tokenizer=_WhitespaceTokenizer())


@lru_cache(maxsize=1)
def meteor_available() -> tuple[bool, str]:
    """``(True, "wordnet <version>")`` when METEOR can run, else ``(False, reason)``."""
    try:
        from taxoforge.sources.wordnet import ensure_wordnet

        wn = ensure_wordnet(allow_download=False)
        return True, f"wordnet {wn.get_version()}"
    except Exception as e:  # noqa: BLE001 - any failure means METEOR is unavailable
        return False, f"METEOR unavailable: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def _pair_scores(pred: str, ref: str, with_meteor: bool) -> tuple[float, float, float, float, float]:
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    sp, sr = stem_text(pred), stem_text(ref)
    em = float(sp == sr and sr != "")
    contained = float(sr != "" and f" {sr} " in f" {sp} ")
    if sr and sp:
        rouge = _rouge().score(sr, sp)["rouge1"].recall
        bleu = sentence_bleu([sr.split()], sp.split(), weights=(0.5, 0.5),
                             smoothing_function=SmoothingFunction().method1)
    else:
        rouge = bleu = 0.0
    met = float("nan")
    if with_meteor:
        from nltk.translate.meteor_score import meteor_score

        tp, tr = normalise_text(pred).split(), normalise_text(ref).split()
        met = meteor_score([tr], tp) if tp and tr else 0.0
    return em, contained, float(rouge), float(bleu), float(met)


def text_scores(predictions, references, meteor: bool = True) -> dict[str, np.ndarray]:
    """Per-pair text measures (module docstring) for equal-length sequences of strings.

    Identical (prediction, reference) pairs are computed once. ``meteor=False`` or an
    unavailable WordNet leaves ``meteor`` as NaN; the returned ``"meteor_status"`` says which.
    """
    preds = list(predictions)
    refs = list(references)
    if len(preds) != len(refs):
        raise ValueError(f"{len(preds)} predictions but {len(refs)} references")
    ok, why = meteor_available() if meteor else (False, "METEOR disabled")
    cache: dict[tuple[str, str], tuple] = {}
    out = np.empty((len(preds), 5))
    for i, (p, r) in enumerate(zip(preds, refs)):
        key = (p or "", r or "")
        v = cache.get(key)
        if v is None:
            v = cache[key] = _pair_scores(key[0], key[1], ok)
        out[i] = v
    res = {m: out[:, j] for j, m in enumerate(TEXT_MEASURES)}
    res["meteor_status"] = why
    return res
