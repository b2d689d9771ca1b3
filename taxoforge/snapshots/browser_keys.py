"""How the snapshot browser finds a name: the one normal form names and queries are searched by,
and the search's constants. Both halves of the browser's data use it — the node files
(:mod:`.browser_index`) and the name buckets (:mod:`.browser_names`) — and the page computes
the same key in JavaScript (``String.prototype.normalize("NFKD")``, ``/\\p{M}/gu``,
``toLowerCase``, the separators of :data:`SEPARATORS`).

:func:`name_key` gives the key of one text, :func:`name_keys` the same key of a polars column
(the tests compare the two); both read the one list of word separators, :data:`SEPARATORS`.
"""

from __future__ import annotations

import re
import unicodedata

import polars as pl

__all__ = ["TOP_NAMES", "MAX_PREFIX", "KIND_ORDER", "SEPARATORS", "WHITESPACE", "name_key", "name_keys"]

#: the best entries a split prefix's *top* file holds
TOP_NAMES = 30
#: the longest prefix a name bucket is named by
MAX_PREFIX = 12
#: name kinds, best first: the order search results of equal match take
KIND_ORDER = ("label", "scientific", "vernacular", "alias", "lemma", "dataset_label", "synonym", "infrageneric",
              "synset")
#: the characters that separate words in a key (after NFKD, every other Unicode space is a plain space)
SEPARATORS = "_\t\n\x0b\x0c\r \x85\u1680\u2028\u2029\ufeff"
_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r", "\x0b": "\\x0b", "\x0c": "\\x0c"}
#: a run of separators as a polars (Rust) regular expression, also what the page reads (``meta.json``)
WHITESPACE = "[" + "".join(c if c in "_ " else _ESCAPES.get(c, f"\\x{{{ord(c):x}}}") for c in SEPARATORS) + "]+"
_SPACES = re.compile("[" + re.escape(SEPARATORS) + "]+")


def name_key(text: str | None) -> str:
    """The normal form names are searched by: Unicode NFKD with combining marks dropped,
    lower case, ``_`` and runs of white space as one space, trimmed. The page computes the
    same (``String.prototype.normalize("NFKD")``, ``/\\p{M}/gu``, ``toLowerCase``).

    Parameters
    ----------
    text : str or None
        A name or a query.

    Returns
    -------
    str
        Its key.

    Examples
    --------
    >>> name_key("  Acinonyx   JUBATUS ")
    'acinonyx jubatus'
    >>> name_key("Lycaena_phlæas Müller")
    'lycaena phlæas muller'
    """
    if not text:
        return ""
    decomposed = unicodedata.normalize("NFKD", str(text))
    kept = "".join(c for c in decomposed if not unicodedata.category(c).startswith("M"))
    return _SPACES.sub(" ", kept.lower()).strip(" ")


def name_keys(names: pl.Expr) -> pl.Expr:
    """:func:`name_key` as a polars expression (the same
    key for every name; the tests compare the two).

    Parameters
    ----------
    names : polars.Expr
        A string column.

    Returns
    -------
    polars.Expr
        The keys.
    """
    return (names.str.normalize("NFKD").str.replace_all(r"\p{M}", "").str.to_lowercase()
            .str.replace_all(WHITESPACE, " ").str.strip_chars(" "))
