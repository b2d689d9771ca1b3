"""Closed word classes of English answers: words that never name a taxon on their own.

A model's answer names its prediction with nouns ("a golden retriever", "two tenches");
around them sit words that belong to closed classes of English or to the task itself and
that name nothing, even where a taxonomy happens to have a node called that way (WordNet
has nodes named "two", "image", "species", "look", "doe" …):

* **function words** — articles, pronouns, prepositions, conjunctions, auxiliaries and
  their contracted forms as :func:`taxoforge.text.normalise_text` writes them ("it's" →
  ``its``, "can't" → ``cant``), negation and degree adverbs;
* **numerals and quantifiers** — cardinal number words (generated: zero … nineteen, the
  tens, their compounds, hundred, thousand …), digits, and quantifying determiners
  ("several", "many", "a pair of", "a dozen");
* **task words** — what the evaluation setting itself talks about: the medium (image,
  picture, photo …), the classification (species, breed, kind, type, category, class and
  the rank names genus, family, order …), the exchange (answer, option, question);
* **framing words** — hedges and verbs that frame an answer ("I think", "it looks like",
  "probably", "is shown", "called").

:func:`is_non_naming` tells whether a word (in its normal form or base form) belongs to one
of these classes. The mapper (:mod:`taxoforge.scores.mapping`) uses it three ways: words of
these classes are stripped from both ends of an answer before the whole-answer exact
match ("There are two tenches in the picture." → ``tench``); a name made only of such
words is never "contained" in a longer answer ("two dogs" is not *deuce*); and an answer
that carries a refusal cue is an abstention unless a name made of other words remains.
A name of these words still maps when it is the whole answer ("two" → the number two).
"""

from __future__ import annotations

from functools import lru_cache

from taxoforge.text import base_form

__all__ = ["FUNCTION_WORDS", "NUMBER_WORDS", "TASK_WORDS", "FRAMING_WORDS", "is_non_naming", "non_naming_flags"]

FUNCTION_WORDS = frozenset("""
a an the this that these those it its itself is are was were be been being am of in on at to for from by
with within without into onto upon over under above below between among amongst about around near beside
behind across through along against toward towards off out up down than then there here where when while
which what who whom whose why how whether
i me my mine myself we us our ours you your yours he him his she her hers they them their theirs one ones
do does did doing done has have had having can could may might will would should shall must
and or nor but not no yes as if so also just only very too quite rather really even still yet either
neither some any all each every other another such same own else something anything nothing everything
someone anyone
its im ive id ill youre youve youd theyre theyve theyd were weve wed hes shes thats theres heres whats
whos lets cant cannot couldnt wont wouldnt shouldnt dont doesnt didnt isnt arent wasnt werent hasnt havent
hadnt mustnt neednt
""".split())

_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
          "sixteen seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_CARDINALS = set(_UNITS) | set(_TENS) | {f"{t}{u}" for t in _TENS for u in _UNITS[1:10]} | {
    "hundred", "thousand", "million", "billion", "dozen", "dozens", "hundreds", "thousands", "millions"}
NUMBER_WORDS = frozenset(_CARDINALS | set("""
several many much few fewer more most less least multiple numerous various both couple pair pairs lot lots
plenty half group bunch number
""".split()))

TASK_WORDS = frozenset("""
image images picture pictures photo photos photograph photographs pic pics snapshot
species subspecies breed breeds kind kinds type types sort sorts variety varieties category categories
class classes label labels taxon taxa genus genera family families order orders kingdom phylum cultivar
answer answers option options choice choices question questions
""".split())

FRAMING_WORDS = frozenset("""
think thinks believe believes guess guessing assume suppose say says said see seen look looks looking
like likely unlikely appear appears appearing appeared seem seems seeming seemed probably possibly perhaps
maybe presumably certainly definitely clearly obviously apparently show shows showing shown depict depicts
depicting depicted picture pictured feature features featuring featured contain contains containing
call called known name named identify identified identifies sure certain confident best
""".split())


@lru_cache(maxsize=1)
def _base_forms() -> frozenset[str]:
    words = FUNCTION_WORDS | NUMBER_WORDS | TASK_WORDS | FRAMING_WORDS
    return frozenset(words | {base_form(w) for w in words})


@lru_cache(maxsize=200_000)
def is_non_naming(word: str) -> bool:
    """True when the normalised ``word`` (or its base form) belongs to one of the closed
    classes above, or is made of digits.

    >>> [is_non_naming(w) for w in ("two", "does", "images", "3", "dog", "tenches")]
    [True, True, True, True, False, False]
    """
    if word.isdigit():
        return True
    classes = _base_forms()
    return word in classes or base_form(word) in classes


def non_naming_flags(words, base_forms: bool = False):
    """:func:`is_non_naming` of every word of a polars Series or sequence, as a bool array.

    With ``base_forms`` (every word is already a :func:`~taxoforge.text.base_form`, which
    is idempotent) membership is vectorised: the word is made of digits or belongs to the
    classes. Otherwise, and for digits outside ASCII, :func:`is_non_naming` decides per word.

    >>> non_naming_flags(["two", "dog", "42", "images"]).tolist()
    [True, False, True, True]

    Parameters
    ----------
    words : object
        Words: a polars Series or a sequence of str.
    base_forms : bool, optional
        Whether the words are already base forms.

    Returns
    -------
    object
        :func:`is_non_naming` of every word of a polars Series or sequence, as a bool
        array.
    """
    import numpy as np
    import polars as pl

    s = words if isinstance(words, pl.Series) else pl.Series(list(words), dtype=pl.String)
    if not base_forms:
        return np.fromiter((is_non_naming(w) for w in s.to_list()), bool, count=len(s))
    flags = (s.is_in(pl.Series(sorted(_base_forms()), dtype=pl.String)) | s.str.contains(r"^[0-9]+$")).to_numpy()
    other = np.flatnonzero(~flags & ~s.str.contains(r"^[\x00-\x7f]*$").to_numpy())
    if len(other):  # str.isdigit() knows digits of every script
        flags[other] = [w.isdigit() for w in s.gather(other).to_list()]
    return flags
