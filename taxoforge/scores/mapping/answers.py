"""An answer as the mapper reads it: its key words, which of them name nothing on their
own, and the spans the exact stage may take as "the whole answer".

The key is :func:`taxoforge.scores.mapping.keys.text_key` of the answer, word by word.
A word is *non-naming* when its normal form or base form belongs to the closed classes of
:mod:`taxoforge.scores.mapping.vocabulary` (function words, numerals, task and framing words).
The **core** is the answer with non-naming words stripped from both ends ("there are two
tench in the picture" → ``tench``); the similarity measure compares the core (the whole
key when every word is non-naming) with the names, as Alg. 1 compares a prediction whose
templates were stripped.

A number word directly before a plural ("two tenches", "several dogs") is **counting**:
it quantifies the noun and is never the first word of a name taken from the answer
("two pieces" is not the *two-piece* swimsuit; "a three-toed sloth" keeps its numeral, and
so does "two-pieces", where a hyphen joins the words into one compound).

Answers are read from their *joined normal form* (:func:`joined_normal_form`): the normal
form with the words that one whitespace-separated token of the raw text split into joined
by ``-``; it keeps that one piece of information the plain normal form loses.
"""

from __future__ import annotations

from dataclasses import dataclass

from taxoforge.scores.mapping.vocabulary import NUMBER_WORDS, is_non_naming
from taxoforge.text import base_form, normalise_text

__all__ = ["Answer", "joined_normal_form", "MAX_EXACT_SPAN_WORDS"]

# the exact stage tries every span around the core only for answers up to this many words
MAX_EXACT_SPAN_WORDS = 40
_ARTICLES = frozenset({"a", "an", "the"})


def joined_normal_form(text: str | None) -> str:
    """``normalise_text(text)`` with the words of one raw token joined by ``-``
    ("Two six-guns!" → ``two six-guns``).

    Parameters
    ----------
    text : str or None
        The text.

    Returns
    -------
    str
        ``normalise_text(text)`` with the words of one raw token joined by ``-`` ("Two
        six-guns!" → ``two six-guns``).
    """
    if not text:
        return ""
    return " ".join(x for x in ("-".join(normalise_text(tok).split()) for tok in text.split()) if x)


@dataclass(frozen=True)
class Answer:
    """One normalised answer (``text``) read for mapping.

    Attributes
    ----------
    text : str
        The normalised words, joined by spaces.
    surface : tuple[str, ...]
        The normalised words.
    words : tuple[str, ...]
        Their keys (base forms).
    non_naming : tuple[bool, ...]
        Whether each word names nothing (articles, numbers, "image" …).
    counting : tuple[bool, ...]
        Whether each word is a number directly before a plural.
    joined : tuple[bool, ...]
        Whether each word was joined to the next in the raw text ("six-guns").
    lo : int
        Start of the core: ``words[lo:hi]`` without the leading and trailing non-naming
        words.
    hi : int
        End of the core.
    """

    text: str
    surface: tuple[str, ...]  # the normalised words
    words: tuple[str, ...]  # their keys (base forms)
    non_naming: tuple[bool, ...]
    counting: tuple[bool, ...]  # a number word directly before a plural
    joined: tuple[bool, ...]  # joined to the next word in the raw text ("six-guns")
    lo: int  # core = words[lo:hi]; lo == hi when every word is non-naming
    hi: int

    @classmethod
    def read(cls, text: str, base_forms: bool = True) -> "Answer":
        """Read a joined normal form (:func:`joined_normal_form`; a plain normal form reads
        as one without joins).

        Parameters
        ----------
        text : str
            A joined normal form (or a plain normal form).
        base_forms : bool, optional
            Whether words are keyed by their noun base form.
        """
        tokens = [tok.split("-") for tok in text.split()]
        surface = tuple(w for tok in tokens for w in tok if w)
        joined_next = tuple(k + 1 < len(tok) for tok in tokens for k in range(len(tok)) if tok[k])
        text = " ".join(surface)
        words = tuple(base_form(w) for w in surface) if base_forms else surface
        flags = tuple(is_non_naming(w) for w in surface)
        counting = tuple((w in NUMBER_WORDS or w.isdigit()) and i + 1 < len(words) and not joined_next[i]
                         and words[i + 1] != surface[i + 1] for i, w in enumerate(surface))
        lo, hi = 0, len(words)
        while lo < hi and flags[lo]:
            lo += 1
        while hi > lo and flags[hi - 1]:
            hi -= 1
        return cls(text, surface, words, flags, counting, joined_next, lo, hi)

    @property
    def key(self) -> str:
        """The answer's words in their key form, joined by spaces."""
        return " ".join(self.words)

    @property
    def core(self) -> str:
        """The key words between the leading and trailing non-naming words."""
        return " ".join(self.words[self.lo:self.hi])

    @property
    def query(self) -> str:
        """What the similarity measure compares with the names: the core, else the key."""
        return self.core or self.key

    def exact_spans(self):
        """Spans ``(i, j)`` that may count as the whole answer: the core with any of the
        non-naming words around it (every span when the answer has no core), widest first,
        then rightmost (English puts the head of a noun phrase last); spans opening with a
        free-standing article ("a battery") come after all others (*A battery* is a name
        in WordNet, but "a battery" is almost always a battery).

        Returns
        -------
        object
            Spans ``(i, j)`` that may count as the whole answer: the core with any of the
            non-naming words around it (every span when the answer has no core), widest
            first, then rightmost (English puts the head of a noun phrase last); spans
            opening with a free-standing article ("a battery") come after all others (*A
            battery* is a name in WordNet, but "a battery" is almost always a battery).
        """
        m = len(self.words)
        if self.lo < self.hi:
            if m > MAX_EXACT_SPAN_WORDS:
                return [(self.lo, self.hi)]
            first = max((i + 1 for i in range(self.lo) if self.counting[i]), default=0)
            spans = [(i, j) for i in range(first, self.lo + 1) for j in range(self.hi, m + 1)]
        else:
            spans = [(i, j) for i in range(m) for j in range(i + 1, min(m, i + MAX_EXACT_SPAN_WORDS) + 1)
                     if not self.counting[i] or j == i + 1]
        return sorted(spans, key=lambda s: (self.surface[s[0]] in _ARTICLES and not self.joined[s[0]] and s[1] > s[0] + 1,
                                            s[0] - s[1], -s[0]))

    def content_words(self, skip: tuple[int, int] | None = None) -> set[str]:
        """Key words that name something, outside the span ``skip``.

        Parameters
        ----------
        skip : tuple[int, int], optional
            A ``(start, end)`` span of words to leave out.

        Returns
        -------
        set[str]
            Key words that name something, outside the span ``skip``.
        """
        return {w for i, (w, nn) in enumerate(zip(self.words, self.non_naming))
                if not nn and not (skip and skip[0] <= i < skip[1])}
