"""Text normalisation shared by label linking and prediction mapping (docs/method.md#mapping-an-answer-to-a-node).

``normalise_text`` is the one normal form used everywhere a name is compared with
another name: Unicode NFKC, casefold, every punctuation or symbol character becomes a
space (dashes, slashes, brackets, full stops …: never deleted, so "dog/wolf" stays two
words), whitespace collapsed. One exception keeps words whole: an **apostrophe between two
letters or digits** (``'``, ``’``, ``ʼ``, ``‘``) is deleted, so contractions and
possessives stay one word — "can't" → ``cant``, "John's" → ``johns``, "O'Neill" →
``oneill``. Split there, they would leave stray one-letter words ("can t", "john s") that
match nothing and that an answer written without the apostrophe ("Coopers hawk") would not
match either. Any other apostrophe (quotes, a trailing plural possessive "the dogs' bowl")
is punctuation like the rest.

``base_form_text`` goes one step further for mapping free text (docs/method.md#mapping-an-answer-to-a-node, "words are
compared in a base form"): every word of the normal form is replaced by its noun base form
(:func:`base_form`), so plurals match singulars on both sides ("two tenches" →
``two tench``).

>>> normalise_text("  Pied-billed   Grebe! ")
'pied billed grebe'
>>> normalise_text("Esox Americanus")
'esox americanus'
>>> normalise_text("St. John's-wort")
'st johns wort'
>>> normalise_text("a dog/wolf hybrid (F1)")
'a dog wolf hybrid f1'
>>> base_form_text("There are two Tenches, and three mice")
'there are two tench and three mouse'

**Base forms.** :func:`base_form` follows WordNet's ``morphy`` for nouns: a word's
analyses are its exception-list entries ("mice" → *mouse*), else the results of the
detachment rules ``-s``, ``-ses``, ``-ves``, ``-xes``, ``-zes``, ``-ches``, ``-shes``,
``-men``, ``-ies``, each counting only where it is a WordNet noun. Words linked by
analyses form one class ("lenses" → *lens* and *lense*; "glasses" → *glass*), and every
member of a class gets the same base form — a member that is a noun and not an inflected
form of the exception list (*mouse*, not *mice*), then the shortest, then the first in
code point order — so a plural always gets its singular's base form, whichever spelling
variant or plural-looking noun (*glasses*, *arms*) it also is, and
``base_form(base_form(w)) == base_form(w)``. It works without the WordNet corpus, the same
way everywhere:

1. a table derived from WordNet 3.0 (``noun_base_forms.tsv`` beside this module, written by
   ``scripts/derive_noun_base_forms.py`` from the Debian ``wordnet-base`` files — never by
   hand) holds every word of WordNet's noun vocabulary (its one-word lemmas, their regular
   plurals and the exception list) whose base form the rules below would get wrong
   ("species" → ``specie``, "mice" → ``mouse``, "wolves" → ``wolf``, "bass" → ``bass``);
2. every other word goes through the rules, repeated until nothing changes: words of at
   most three letters and words ending in ``ss``, ``us`` or ``is`` stay; ``-ies`` → ``-y``;
   ``-ches``, ``-shes``, ``-xes``, ``-zes``, ``-sses``, ``-uses``, ``-ises`` lose ``es``;
   ``-men`` → ``-man`` (longer than five letters); any other final ``s`` goes.

On WordNet's vocabulary the result is the class representative above (a test recomputes
the analyses with NLTK's own ``morphy`` wherever the corpus is installed); outside it
(Latin epithets, rare words) the rules apply the same way to names and answers, which is
all matching needs.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from importlib import resources
from pathlib import Path

__all__ = ["normalise_text", "normalise_texts", "base_forms_of", "base_forms_of_words", "base_form", "base_form_text", "derive_noun_base_forms", "morphy_analyses",
           "read_wordnet_nouns", "BASE_FORM_TABLE"]

BASE_FORM_TABLE = "noun_base_forms.tsv"

# An apostrophe between two word characters is deleted (contractions, possessives).
_INNER_APOSTROPHE = re.compile(r"(?<=\w)['’ʼ‘](?=\w)")


class _PunctuationToSpace(dict):
    """The ``str.translate`` table of :func:`normalise_text`: every punctuation (P*) or symbol
    (S*) character becomes a space, every other one stays. Filled as characters are first
    seen (not for all 1.1 M code points at import: about half a second of every start)."""

    def __missing__(self, code: int):
        to = self[code] = " " if unicodedata.category(chr(code))[0] in "PS" else code
        return to


# Every other punctuation (P*) or symbol (S*) character becomes a space.
_PUNCT_TABLE = _PunctuationToSpace()
_WS = re.compile(r"\s+")


def normalise_text(text: str | None) -> str:
    """Return the normal form of ``text`` (module docstring); ``None`` becomes ``""``.

    Parameters
    ----------
    text : str or None
        The text.

    Returns
    -------
    str
        NFKC, case folded, punctuation and symbols as spaces, whitespace collapsed.
    """
    if not text:
        return ""
    return _normal_form(text)


@lru_cache(maxsize=1 << 17)
def _normal_form(text: str) -> str:
    """:func:`normalise_text` of a non-empty text, remembered: scoring asks for the same
    answers, labels and names again and again (parsing, mapping, text measures)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _INNER_APOSTROPHE.sub("", text).translate(_PUNCT_TABLE)
    return _WS.sub(" ", text).strip()


# ASCII text without apostrophes and without control characters other than \t…\r: there
# NFKC changes nothing, casefold is lower-casing, the P*/S* characters are exactly POSIX
# [[:punct:]] and \s means the same to Python and to polars' regex engine
_PLAIN_ASCII = r"^[\t-\r -&(-~]*$"


def normalise_texts(texts) -> "pl.Series":
    """:func:`normalise_text` of every text of a polars Series (or sequence), vectorised:
    plain ASCII texts (most names) go through polars' string kernels, the others through
    :func:`normalise_text` one by one; nulls become ``""``. Equal to
    ``[normalise_text(t) for t in texts]`` (a test checks it on real trees and generated text).

    >>> normalise_texts(["  Pied-billed   Grebe! ", "St. John's-wort", None, "Ærø"]).to_list()
    ['pied billed grebe', 'st johns wort', '', 'ærø']

    Parameters
    ----------
    texts : object
        The texts.

    Returns
    -------
    'polars.Series'
        :func:`normalise_text` of every text of a polars Series (or sequence),
        vectorised: plain ASCII texts (most names) go through polars' string kernels,
        the others through :func:`normalise_text` one by one; nulls become ``""``.
    """
    import polars as pl

    s = texts if isinstance(texts, pl.Series) else pl.Series(list(texts), dtype=pl.String)
    s = s.cast(pl.String).fill_null("")
    plain = s.str.contains(_PLAIN_ASCII)
    out = (s.str.to_lowercase().str.replace_all(r"[[:punct:]]", " ").str.replace_all(r"\s+", " ")
           .str.strip_chars())
    other = (~plain).arg_true()
    if len(other):
        fixed = pl.Series([normalise_text(t) for t in s.gather(other).to_list()], dtype=pl.String)
        out = out.scatter(other, fixed)
    return out


def base_forms_of(normal_forms) -> "pl.Series":
    """Every normal form of a polars Series with each word in its base form: the same as
    ``" ".join(base_form(w) for w in t.split(" "))`` per text, vectorised — the base forms of
    the distinct words by :func:`base_forms_of_words`, and only texts with a word that
    changes rebuilt.

    >>> base_forms_of(["two tenches", "mice", ""]).to_list()
    ['two tench', 'mouse', '']

    Parameters
    ----------
    normal_forms : object
        Texts already in the normal form of :func:`normalise_text`.

    Returns
    -------
    'polars.Series'
        Every normal form of a polars Series with each word in its base form: the same
        as ``" ".join(base_form(w) for w in t.split(" "))`` per text, vectorised — the
        base forms of the distinct words by :func:`base_forms_of_words`, and only texts
        with a word that changes rebuilt.
    """
    import numpy as np
    import polars as pl

    s = normal_forms if isinstance(normal_forms, pl.Series) else pl.Series(list(normal_forms), dtype=pl.String)
    s = s.cast(pl.String).fill_null("")
    words = s.str.split(" ")
    flat = words.explode()
    distinct = flat.unique()
    bases = base_forms_of_words(distinct)
    changed = distinct != bases
    if not changed.any():
        return s
    old, new = distinct.filter(changed), bases.filter(changed)
    owner = np.repeat(np.arange(len(s)), words.list.len().to_numpy())
    rows = owner[flat.is_in(old).to_numpy()]
    rows = rows[np.concatenate(([True], rows[1:] != rows[:-1]))]  # owner is sorted
    fixed = words.gather(rows).list.eval(pl.element().replace(old, new)).list.join(" ")
    return s.scatter(rows, fixed)


def _rule_step_expr(w):
    """:func:`_rule_step` as a polars expression over a column of words."""
    import polars as pl

    n = w.str.len_chars()
    return (pl.when((n <= 3) | w.str.ends_with("ss") | w.str.ends_with("us") | w.str.ends_with("is")).then(w)
            .when(w.str.ends_with("ies") & (n > 4)).then(w.str.slice(0, n - 3) + "y")
            .when(pl.any_horizontal([w.str.ends_with(x) for x in ("ches", "shes", "xes", "zes", "sses", "uses",
                                                                   "ises")])).then(w.str.slice(0, n - 2))
            .when(w.str.ends_with("men") & (n > 5)).then(w.str.slice(0, n - 3) + "man")
            .when(w.str.ends_with("s")).then(w.str.slice(0, n - 1))
            .otherwise(w))


def base_forms_of_words(words) -> "pl.Series":
    """:func:`base_form` of every word of a polars Series, vectorised: the table first, the
    rules applied to all other words at once until nothing changes.

    >>> base_forms_of_words(["dogs", "tenches", "geese", "glasses", "bass", "butterflies"]).to_list()
    ['dog', 'tench', 'goose', 'glass', 'bass', 'butterfly']

    Parameters
    ----------
    words : object
        The words.

    Returns
    -------
    'polars.Series'
        :func:`base_form` of every word of a polars Series, vectorised: the table first,
        the rules applied to all other words at once until nothing changes.
    """
    import polars as pl

    s = words if isinstance(words, pl.Series) else pl.Series(list(words), dtype=pl.String)
    s = s.cast(pl.String)
    table = _base_form_frame()
    df = pl.DataFrame({"w": s}).join(table, on="w", how="left", maintain_order="left")
    rest = df.filter(pl.col("b").is_null()).select("w").with_row_index("i")
    cur = rest["w"]
    while True:
        nxt = pl.DataFrame({"w": cur}).select(_rule_step_expr(pl.col("w")).alias("w"))["w"]
        if (nxt == cur).all():
            break
        cur = nxt
    at = df["b"].is_null().arg_true()
    return df["b"].scatter(at, cur) if len(at) else df["b"]


@lru_cache(maxsize=1)
def _base_form_frame():
    import polars as pl

    table = _base_form_table()
    return pl.DataFrame({"w": list(table), "b": list(table.values())}, schema={"w": pl.String, "b": pl.String})


# ---------------------------------------------------------------------------- base forms
def _rule_step(w: str) -> str:
    if len(w) <= 3 or w.endswith(("ss", "us", "is")):
        return w
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("ches", "shes", "xes", "zes", "sses", "uses", "ises")):
        return w[:-2]
    if w.endswith("men") and len(w) > 5:
        return w[:-3] + "man"
    if w.endswith("s"):
        return w[:-1]
    return w


def _rule_base_form(w: str) -> str:
    """The corpus-free detachment rules (module docstring, step 2), until nothing changes."""
    while (b := _rule_step(w)) != w:
        w = b
    return w


@lru_cache(maxsize=1)
def _base_form_table() -> dict[str, str]:
    text = resources.files("taxoforge").joinpath(BASE_FORM_TABLE).read_text(encoding="utf-8")
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            w, b = line.split("\t")
            out[w] = b
    return out


@lru_cache(maxsize=500_000)
def base_form(word: str) -> str:
    """Noun base form of one normalised word (module docstring).

    >>> [base_form(w) for w in ("dogs", "tenches", "geese", "glasses", "bass", "butterflies", "lenses", "lens")]
    ['dog', 'tench', 'goose', 'glass', 'bass', 'butterfly', 'lens', 'lens']
    """
    b = _base_form_table().get(word)
    return b if b is not None else _rule_base_form(word)


def base_form_text(text: str | None) -> str:
    """``normalise_text(text)`` with every word in its base form.

    Parameters
    ----------
    text : str or None
        The text.

    Returns
    -------
    str
        ``normalise_text(text)`` with every word in its base form.
    """
    return " ".join(base_form(w) for w in normalise_text(text).split())


_MORPHY_RULES = (("s", ""), ("ses", "s"), ("ves", "f"), ("xes", "x"), ("zes", "z"), ("ches", "ch"),
                 ("shes", "sh"), ("men", "man"), ("ies", "y"))  # WordNet's noun detachment rules


def read_wordnet_nouns(wordnet_dir: str | Path) -> tuple[set[str], dict[str, list[str]]]:
    """(noun lemmas, noun exception list) of a WordNet 3.0 dictionary folder.

    Parameters
    ----------
    wordnet_dir : str or Path
        A WordNet 3.0 dictionary folder (``index.noun``, ``noun.exc``).

    Returns
    -------
    tuple[set[str], dict[str, list[str]]]
        (noun lemmas, noun exception list) of a WordNet 3.0 dictionary folder.
    """
    d = Path(wordnet_dir)
    lemmas = set()
    with open(d / "index.noun", encoding="utf-8", errors="surrogateescape") as fh:
        for line in fh:
            if not line.startswith(" "):
                lemmas.add(line.split(" ", 1)[0])
    exceptions: dict[str, list[str]] = {}
    with open(d / "noun.exc", encoding="utf-8", errors="surrogateescape") as fh:
        for line in fh:
            parts = line.split()
            if parts:
                exceptions[parts[0]] = parts[1:]
    return lemmas, exceptions


def morphy_analyses(w: str, lemmas: set[str], exceptions: dict[str, list[str]]) -> list[str]:
    """WordNet's ``morphy`` analyses of the noun ``w`` (as NLTK's ``_morphy``), the word
    itself left out: its exception-list entries, else the detachment rules' results, each
    kept only where it is a noun lemma.

    Parameters
    ----------
    w : str
        A noun, lower case.
    lemmas : set[str]
        WordNet's noun lemmas (:func:`read_wordnet_nouns`).
    exceptions : dict[str, list[str]]
        WordNet's noun exception list: inflected form → its lemmas.

    Returns
    -------
    list[str]
        WordNet's ``morphy`` analyses of the noun ``w`` (as NLTK's ``_morphy``), the
        word itself left out: its exception-list entries, else the detachment rules'
        results, each kept only where it is a noun lemma.
    """
    forms = exceptions[w] if w in exceptions else [w[:-len(a)] + b for a, b in _MORPHY_RULES if w.endswith(a)]
    return [f for f in dict.fromkeys(forms) if f in lemmas and f != w]


def derive_noun_base_forms(wordnet_dir: str | Path) -> dict[str, str]:
    """The table of :data:`BASE_FORM_TABLE` from a WordNet 3.0 dictionary folder
    (``index.noun``, ``noun.exc``; Debian: ``/usr/share/wordnet``).

    For every word of the noun vocabulary — one-word lemmas (one word under
    :func:`normalise_text`), their regular plurals, the exception list's inflected forms —
    the base form of its class (module docstring), kept where the corpus-free rules give
    something else.

    Parameters
    ----------
    wordnet_dir : str or Path
        A WordNet 3.0 dictionary folder (``index.noun``, ``noun.exc``).

    Returns
    -------
    dict[str, str]
        The table of :data:`BASE_FORM_TABLE` from a WordNet 3.0 dictionary folder
        (``index.noun``, ``noun.exc``; Debian: ``/usr/share/wordnet``).
    """
    lemmas, exceptions = read_wordnet_nouns(wordnet_dir)

    def analyses(w: str) -> list[str]:
        return morphy_analyses(w, lemmas, exceptions)

    def one_word(s: str) -> bool:
        return bool(s) and normalise_text(s.replace("_", " ")) == s

    words = {w for w in lemmas if one_word(w)}
    plurals = set()
    for w in words:
        if w.endswith(("ss", "us", "is", "x", "z", "ch", "sh")):
            plurals.add(w + "es")
        elif not w.endswith("s"):
            plurals.add(w + "s")
        if w.endswith("y"):
            plurals.add(w[:-1] + "ies")
        if w.endswith("f"):
            plurals.add(w[:-1] + "ves")
        if w.endswith("man"):
            plurals.add(w[:-3] + "men")
    domain = words | plurals | {w for w in exceptions if one_word(w)}
    # classes of words linked by analyses (union-find); each represented by a member that
    # is a noun and not an inflected form of the exception list, then the shortest, then
    # the first in code point order
    root: dict[str, str] = {}

    def rank(w: str):
        return (w not in lemmas or w in exceptions, len(w), w)

    def find(w: str) -> str:
        root.setdefault(w, w)
        while root[w] != w:
            root[w] = root[root[w]]
            w = root[w]
        return w

    for w in sorted(domain):
        for a in analyses(w):
            ra, rw = find(a), find(w)
            if ra != rw:
                keep, drop = sorted((ra, rw), key=rank)
                root[drop] = keep
    table = {}
    for w in sorted(domain):
        b = find(w)
        if b != _rule_base_form(w):
            table[w] = b
    return table
