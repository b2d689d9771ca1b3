"""Name keys and their 64-bit hashes: how the name tables and the answers are compared.

Every name is compared through its **key**: :func:`taxoforge.text.base_form_text` (the
normal form with every word in its noun base form; ``base_forms=False`` keeps the plain
normal form). Answers get the same key (:mod:`taxoforge.scores.mapping.answers`).

A phrase (a key, a word n-gram) is looked up by a 64-bit hash built word by word: each
word's XXH3-64 (the same in every process and on every machine, unlike ``hash(str)``, so
stored tables stay valid) chained from :data:`PHRASE_SEED` through SplitMix64's finaliser,
so the tables hash millions of phrases from the hashes of their words, vectorised
(:func:`phrase_hashes`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xxhash

from taxoforge.text import base_form_text, normalise_text

__all__ = ["text_key", "word_ngrams", "word_hash", "word_hashes", "extend_phrase", "key_hash", "key_hashes",
           "phrase_hashes", "PHRASE_SEED"]


def text_key(text: str, base_forms: bool = True) -> str:
    """The key a name or an answer is compared by (module docstring).

    Parameters
    ----------
    text : str
        A name or an answer, normalised.
    base_forms : bool, optional
        Whether words are keyed by their noun base form.

    Returns
    -------
    str
        The key a name or an answer is compared by (module docstring).
    """
    return base_form_text(text) if base_forms else normalise_text(text)


def word_ngrams(words: list[str], n: int) -> list[str]:
    """The word n-grams of ``words`` (none when there are fewer than ``n`` words).

    Parameters
    ----------
    words : list[str]
        The words.
    n : int
        How many.

    Returns
    -------
    list[str]
        The word n-grams of ``words`` (none when there are fewer than ``n`` words).
    """
    return [" ".join(words[i:i + n]) for i in range(len(words) - n + 1)]


_xxh3 = xxhash.xxh3_64_intdigest
_MASK = (1 << 64) - 1
PHRASE_SEED = 0x9E3779B97F4A7C15  # the hash of the empty phrase


def word_hash(word: str) -> int:
    """The 64-bit hash of one word: XXH3-64 of its UTF-8 bytes (the same in every process
    and on every machine, unlike ``hash(str)``, so stored tables stay valid).

    Parameters
    ----------
    word : str
        The word.

    Returns
    -------
    int
        The 64-bit hash of one word: XXH3-64 of its UTF-8 bytes (the same in every
        process and on every machine, unlike ``hash(str)``, so stored tables stay
        valid).
    """
    return _xxh3(word.encode("utf-8"))


def word_hashes(words: Sequence[str]) -> np.ndarray:
    """:func:`word_hash` of every word, as ``uint64``.

    Parameters
    ----------
    words : Sequence[str]
        The words.

    Returns
    -------
    numpy.ndarray
        :func:`word_hash` of every word, as ``uint64``.
    """
    return np.fromiter((_xxh3(w.encode("utf-8")) for w in words), np.uint64, count=len(words))


def _mix(h: int) -> int:
    """SplitMix64's finaliser (a bijection of 64-bit integers)."""
    h ^= h >> 30
    h = (h * 0xBF58476D1CE4E5B9) & _MASK
    h ^= h >> 27
    h = (h * 0x94D049BB133111EB) & _MASK
    return h ^ (h >> 31)


def extend_phrase(h: int, word_h: int) -> int:
    """The hash of a phrase one word longer: ``mix(h XOR hash(word))``.

    Parameters
    ----------
    h : int
        The hash of a phrase.
    word_h : int
        The hash of the next word.

    Returns
    -------
    int
        The hash of a phrase one word longer: ``mix(h XOR hash(word))``.
    """
    return _mix(h ^ word_h)


def _mix_np(h: np.ndarray) -> np.ndarray:
    """:func:`_mix` over a ``uint64`` array (arithmetic modulo 2**64)."""
    h = h ^ (h >> np.uint64(30))
    h = h * np.uint64(0xBF58476D1CE4E5B9)
    h = h ^ (h >> np.uint64(27))
    h = h * np.uint64(0x94D049BB133111EB)
    return h ^ (h >> np.uint64(31))


def key_hash(text: str) -> int:
    """The 64-bit hash a phrase (a name key, a word n-gram) is looked up by: the words'
    :func:`word_hash` chained from :data:`PHRASE_SEED` by :func:`extend_phrase`, so a
    phrase's hash extends word by word and the tables hash millions of phrases from the
    hashes of their words, vectorised.

    Parameters
    ----------
    text : str
        The text.

    Returns
    -------
    int
        The 64-bit hash a phrase (a name key, a word n-gram) is looked up by: the words'
        :func:`word_hash` chained from :data:`PHRASE_SEED` by :func:`extend_phrase`, so
        a phrase's hash extends word by word and the tables hash millions of phrases
        from the hashes of their words, vectorised.
    """
    h = PHRASE_SEED
    for w in text.split(" ") if text else ():
        h = _mix(h ^ _xxh3(w.encode("utf-8")))
    return h


def key_hashes(texts: Sequence[str]) -> np.ndarray:
    """:func:`key_hash` of every text, as ``uint64``.

    Parameters
    ----------
    texts : Sequence[str]
        The texts.

    Returns
    -------
    numpy.ndarray
        :func:`key_hash` of every text, as ``uint64``.
    """
    return np.fromiter((key_hash(t) for t in texts), np.uint64, count=len(texts))


def phrase_hashes(occ_hash: np.ndarray, starts: np.ndarray, lengths: np.ndarray | int) -> np.ndarray:
    """:func:`key_hash` of the phrases of ``lengths`` words starting at ``starts`` in a flat
    array of word hashes (vectorised over the phrases).

    Parameters
    ----------
    occ_hash : numpy.ndarray
        Word hashes of all names, one flat array.
    starts : numpy.ndarray
        Where each phrase starts in it.
    lengths : numpy.ndarray or int
        Each phrase's length in words (or one length for all).

    Returns
    -------
    numpy.ndarray
        :func:`key_hash` of the phrases of ``lengths`` words starting at ``starts`` in a
        flat array of word hashes (vectorised over the phrases).
    """
    lengths = np.broadcast_to(np.asarray(lengths, np.int64), starts.shape)
    h = np.full(len(starts), PHRASE_SEED, np.uint64)
    for k in range(int(lengths.max(initial=0))):
        live = np.flatnonzero(lengths > k)
        h[live] = _mix_np(h[live] ^ occ_hash[starts[live] + k])
    return h

