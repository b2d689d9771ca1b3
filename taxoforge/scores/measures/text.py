"""Text-overlap measures of VLM papers (Snæbjarnarson et al. 2025 [1] Table 4), equal to the reference
implementations.

For a prediction (the parsed answer) and a reference (the ground-truth label text):

``exact_match``    stemmed normalised prediction == stemmed normalised reference (0/1)
``contained``      the stemmed normalised reference occurs as whole words in the stemmed
                   normalised prediction (0/1)
``rouge1_recall``  ROUGE-1 recall (Lin 2004 [13]) on the same stemmed normalised words, split on
                   whitespace — what the ``rouge-score`` package gives with a whitespace
                   tokenizer and no stemmer of its own (non-ASCII letters survive)
``bleu2``          sentence BLEU (Papineni et al. 2002 [12]) with weights (½, ½) and Chen
                   and Cherry 2014 [33]'s smoothing 1 (ε = 0.1 on empty n-gram counts), on stemmed
                   normalised words — NLTK's ``sentence_bleu(…, smoothing_function=
                   SmoothingFunction().method1)``
``meteor``         METEOR [14] on normalised (unstemmed) words — it stems and matches WordNet
                   synonyms itself (:mod:`taxoforge.scores.measures.meteor`: NLTK's ``meteor_score``
                   over a synonym table built once from WordNet and kept in the cache). When
                   the table cannot be had (no WordNet) the column is null and the reason
                   is recorded.

Normalisation is :func:`taxoforge.text.normalise_text`; stemming is NLTK's Porter stemmer
(its default, extended mode), as the core paper's supplement does ("we also stem the words,
e.g., removing the difference between singular and plurals"). Scores are in [0, 1] (the
paper prints them ×100).

BLEU and ROUGE-1 are computed here rather than through NLTK and ``rouge-score``, and NLTK's
Porter stemmer is loaded by itself (:func:`porter_stemmer`): importing the ``nltk`` package
imports scikit-learn, pandas and SciPy, seconds that a scoring run should not pay for three
counting formulas. The tests compare every measure with the reference implementation.

References
----------
Numbers of docs/references.md: [1] Snæbjarnarson et al. 2025 (Table 4 and its supplement);
[12] Papineni et al. 2002 (BLEU); [13] Lin 2004 (ROUGE); [14] Banerjee and Lavie 2005
(METEOR); [33] Chen and Cherry 2014 (smoothing of sentence-level BLEU).
"""

from __future__ import annotations

import math
from collections import Counter
from functools import lru_cache

import numpy as np

from taxoforge.scores.measures.meteor import meteor, synonym_table
from taxoforge.text import normalise_text

__all__ = ["TEXT_MEASURES", "text_scores", "stem_text", "meteor_available", "porter_stemmer", "bleu2",
           "rouge1_recall"]

TEXT_MEASURES = ("exact_match", "contained", "rouge1_recall", "bleu2", "meteor")


@lru_cache(maxsize=1)
def porter_stemmer():
    """NLTK's ``PorterStemmer()`` (extended mode), without importing the ``nltk`` package.

    ``nltk/__init__.py`` imports nearly all of NLTK (scikit-learn, pandas and SciPy
    with it); the stemmer's module needs only ``nltk.stem.api``, ``nltk.redos`` and
    ``nltk.termsec``. When ``nltk`` is not imported yet, its package and ``nltk.stem`` are
    stood in for by bare package modules (with NLTK's own search paths) while those
    modules load, and taken out of :data:`sys.modules` afterwards, so a later ``import
    nltk`` runs as usual."""
    import importlib
    import sys

    if "nltk" in sys.modules:
        from nltk.stem.porter import PorterStemmer

        return PorterStemmer()
    import importlib.util
    import types

    spec = importlib.util.find_spec("nltk")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("NLTK is not installed (pip install nltk): its Porter stemmer is needed")
    root = list(spec.submodule_search_locations)
    before = set(sys.modules)
    pkg, stem_pkg = types.ModuleType("nltk"), types.ModuleType("nltk.stem")
    pkg.__path__ = root
    stem_pkg.__path__ = [f"{r}/stem" for r in root]
    sys.modules["nltk"], sys.modules["nltk.stem"] = pkg, stem_pkg
    try:
        porter = importlib.import_module("nltk.stem.porter")
    finally:
        for name in set(sys.modules) - before:
            if name == "nltk" or name.startswith("nltk."):
                del sys.modules[name]
    return porter.PorterStemmer()


@lru_cache(maxsize=500_000)
def _stem_word(w: str) -> str:
    return porter_stemmer().stem(w)


def stem_text(text: str | None) -> str:
    """Normalised text with every word Porter-stemmed (``"Toucans!"`` → ``"toucan"``).

    Parameters
    ----------
    text : str or None
        The text.

    Returns
    -------
    str
        Normalised text with every word Porter-stemmed (``"Toucans!"`` → ``"toucan"``).
    """
    return _stemmed(text) if text else ""


@lru_cache(maxsize=1 << 17)
def _stemmed(text: str) -> str:
    """:func:`stem_text` of a non-empty text, remembered (references repeat)."""
    return " ".join(_stem_word(w) for w in normalise_text(text).split())


@lru_cache(maxsize=1)
def _synonyms():
    return synonym_table()


@lru_cache(maxsize=1)
def meteor_available() -> tuple[bool, str]:
    """``(True, "wordnet <version> …")`` when METEOR can run (its synonym table is stored or
    can be built from WordNet), else ``(False, reason)``."""
    try:
        table = _synonyms()
        return True, f"wordnet {table.version} (synonym table)"
    except Exception as e:  # noqa: BLE001 - any failure means METEOR is unavailable
        why = f"METEOR unavailable: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        import logging

        # said on stderr, not only in run.json: a column of NaN must never pass unnoticed
        logging.getLogger("taxoforge.scores").warning("%s — the meteor column is left empty (NaN); pass --no-meteor "
                                                      "to leave it out on purpose", why)
        return False, why


def _ngrams(words: list[str], n: int) -> Counter:
    return Counter(tuple(words[i:i + n]) for i in range(len(words) - n + 1)) if len(words) >= n else Counter()


def bleu2(reference: list[str], hypothesis: list[str]) -> float:
    """Sentence BLEU of ``hypothesis`` against one ``reference`` (word lists) with weights
    (½, ½) and smoothing 1 — equal to NLTK's ``sentence_bleu([reference], hypothesis,
    weights=(0.5, 0.5), smoothing_function=SmoothingFunction().method1)``: clipped n-gram
    precisions (a zero count becomes ε = 0.1 over the n-gram count, at least 1), their
    weighted geometric mean times the brevity penalty; 0 when no word matches.

    >>> round(bleu2(["golden", "retriev"], ["a", "golden", "retriev", "dog"]), 6)
    0.408248

    Parameters
    ----------
    reference : list[str]
        The reference's words.
    hypothesis : list[str]
        The hypothesis's words.

    Returns
    -------
    float
        Sentence BLEU of ``hypothesis`` against one ``reference`` (word lists) with
        weights (½, ½) and smoothing 1 — equal to NLTK's ``sentence_bleu([reference],
        hypothesis, weights=(0.5, 0.5),
        smoothing_function=SmoothingFunction().method1)``: clipped n-gram precisions (a
        zero count becomes ε = 0.1 over the n-gram count, at least 1), their weighted
        geometric mean times the brevity penalty; 0 when no word matches.
    """
    nums, dens = [], []
    for n in (1, 2):
        h, r = _ngrams(hypothesis, n), _ngrams(reference, n)
        nums.append(sum(min(c, r[g]) for g, c in h.items()))
        dens.append(max(1, sum(h.values())))
    if nums[0] == 0:
        return 0.0
    c, r = len(hypothesis), len(reference)
    bp = 1 if c > r else 0 if c == 0 else math.exp(1 - r / c)
    p = [(num + 0.1) / den if num == 0 else num / den for num, den in zip(nums, dens)]
    return bp * math.exp(math.fsum(0.5 * math.log(x) for x in p if x > 0))


def rouge1_recall(reference: list[str], prediction: list[str]) -> float:
    """ROUGE-1 recall: the reference's words found in the prediction (each occurrence at
    most as often as the prediction has it) over the reference's word count (at least 1).

    Parameters
    ----------
    reference : list[str]
        The reference's words.
    prediction : list[str]
        The prediction's words.

    Returns
    -------
    float
        ROUGE-1 recall: the reference's words found in the prediction (each occurrence
        at most as often as the prediction has it) over the reference's word count (at
        least 1).
    """
    r, p = Counter(reference), Counter(prediction)
    return sum(min(c, p[w]) for w, c in r.items()) / max(len(reference), 1)


def _pair_scores(pred: str, ref: str, synonyms) -> tuple[float, float, float, float, float]:
    sp, sr = stem_text(pred), stem_text(ref)
    em = float(sp == sr and sr != "")
    contained = float(sr != "" and f" {sr} " in f" {sp} ")
    if sr and sp:
        rouge = rouge1_recall(sr.split(), sp.split())
        bleu = bleu2(sr.split(), sp.split())
    else:
        rouge = bleu = 0.0
    met = float("nan")
    if synonyms is not None:
        tp, tr = normalise_text(pred).split(), normalise_text(ref).split()
        met = meteor(tr, tp, synonyms.synonyms, _stem_word) if tp and tr else 0.0
    return em, contained, float(rouge), float(bleu), float(met)


def text_scores(predictions, references, meteor: bool = True, memo=None) -> dict[str, np.ndarray]:
    """Per-pair text measures (module docstring) for equal-length sequences of strings.

    Identical (prediction, reference) pairs are computed once. ``meteor=False`` or an
    unavailable WordNet leaves ``meteor`` as NaN; the returned ``"meteor_status"`` says which.
    ``memo``: a callable giving, for the METEOR status, a
    :class:`~taxoforge.files.memo.ContentMemo` (:func:`taxoforge.scores.memos.text_memo`):
    the pairs an earlier call measured are read from it, the others stored in it.

    Parameters
    ----------
    predictions : object
        The models' answers.
    references : object
        The ground truths' names, one per prediction.
    meteor : bool, optional
        Whether METEOR is computed (it needs WordNet).
    memo : callable, optional
        ``memo(meteor_status)`` → the memo table of earlier calls' pairs.

    Returns
    -------
    dict[str, numpy.ndarray]
        Per-pair text measures (module docstring) for equal-length sequences of strings.
    """
    preds = list(predictions)
    refs = list(references)
    if len(preds) != len(refs):
        raise ValueError(f"{len(preds)} predictions but {len(refs)} references")
    ok, why = meteor_available() if meteor else (False, "METEOR disabled")
    synonyms = _synonyms() if ok else None
    cache: dict[tuple[str, str], int] = {}
    inv = np.fromiter((cache.setdefault((p or "", r or ""), len(cache)) for p, r in zip(preds, refs)), np.int64,
                      count=len(preds))
    pairs = list(cache)
    values = np.empty((len(pairs), 5))
    todo = range(len(pairs))
    table = memo(why) if memo is not None and pairs else None
    if table is not None:
        import polars as pl

        found = table.lookup(pl.DataFrame(pairs, schema={"prediction": pl.String, "reference": pl.String},
                                          orient="row"))
        if found is not None:
            hit = found["_found"].to_numpy()
            values[hit] = found.filter(pl.col("_found")).select(TEXT_MEASURES).to_numpy()
            todo = np.flatnonzero(~hit).tolist()
    for j in todo:
        values[j] = _pair_scores(pairs[j][0], pairs[j][1], synonyms)
    if table is not None and len(todo):
        import polars as pl

        new = pl.DataFrame({"prediction": [pairs[j][0] for j in todo], "reference": [pairs[j][1] for j in todo],
                            **{m: values[todo, k] for k, m in enumerate(TEXT_MEASURES)}},
                           schema={"prediction": pl.String, "reference": pl.String,
                                   **{m: pl.Float64 for m in TEXT_MEASURES}})
        table.save(new)
    out = values[inv]
    res = {m: out[:, j] for j, m in enumerate(TEXT_MEASURES)}
    res["meteor_status"] = why
    return res
