"""The N-Triples line grammar of the Wikidata dump readers, in the standard library only.

One home for what a line of ``latest-truthy.nt`` may be and which lines count:

* :func:`classify` — the verdict on one line whose predicate is ``wdt:P279``, ``wdt:P31``,
  ``rdfs:label``, ``skos:altLabel`` or an identifier property asked for: an edge between
  items, a non-item edge (lexemes, properties, blank nodes of "unknown value"), a name, an
  identifier value, a line that is not used, a problem with a name or an identifier
  (reported only if its node is kept), or an error (:class:`LineError`);
* :func:`unescape` — N-Triples string escapes, strictly (an escape must be a Unicode
  scalar value);
* the regular expressions of N-Triples terms (IRIs without spaces or control characters,
  blank nodes, literals) and of item IRIs (``Q`` then 1–18 digits: QIDs are read as
  64-bit integers).

Both :mod:`.dump` (for the rare lines its compiled scanner does not take on the fast path)
and the Spark job :mod:`.dump_spark` (on its executors, which need nothing but this file)
use it, so the two engines agree line for line.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["short_term", "MAX_QID_DIGITS", "PRED_P279", "PRED_P31", "PRED_LABEL", "PRED_ALIAS", "PRED_ID",
           "PREDICATE_IRIS", "PRED_NAMES",
           "LANG_RE", "LineError", "unescape", "item_number", "classify"]

#: QIDs are kept as int64: at most 18 digits (Wikidata's QIDs have 9).
MAX_QID_DIGITS = 18

PRED_P279, PRED_P31, PRED_LABEL, PRED_ALIAS = 1, 2, 3, 4
#: The code of the first identifier property asked for; the k-th is ``PRED_ID + k``.
PRED_ID = 5
PREDICATE_IRIS = {
    PRED_P279: "http://www.wikidata.org/prop/direct/P279",
    PRED_P31: "http://www.wikidata.org/prop/direct/P31",
    PRED_LABEL: "http://www.w3.org/2000/01/rdf-schema#label",
    PRED_ALIAS: "http://www.w3.org/2004/02/skos/core#altLabel",
}
PRED_NAMES = {PRED_P279: "P279", PRED_P31: "P31", PRED_LABEL: "rdfs:label", PRED_ALIAS: "skos:altLabel"}

#: A language tag as the readers accept it (``en``, ``en-gb``, ``zh-Hant``).
LANG_RE = re.compile(r"^[A-Za-z]+(?:-[A-Za-z0-9]+)*$")

_SIMPLE_ESC = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_ESCAPE_RE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))", re.S)

_UCHAR = rb"\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8}"
_IRI_TOKEN = rb"<(?:[^\x00-\x20<>\"{}|^`\\]|" + _UCHAR + rb")*>"
_BNODE_TOKEN = rb"_:[A-Za-z0-9_\x80-\xff](?:[A-Za-z0-9_.\-\x80-\xff]*[A-Za-z0-9_\-\x80-\xff])?"
_LITERAL = (rb'"(?P<text>(?:[^"\\\n\r]|\\[tbnrf"\'\\]|' + _UCHAR + rb')*)"'
            rb"(?:@(?P<lang>[A-Za-z]+(?:-[A-Za-z0-9]+)*)|\^\^" + _IRI_TOKEN + rb")?")
#: One N-Triples statement (comments and CR line ends allowed, whitespace optional between terms).
TRIPLE_RE = re.compile(
    rb"^[ \t]*(?P<s>" + _IRI_TOKEN + rb"|" + _BNODE_TOKEN + rb")[ \t]*(?P<p>" + _IRI_TOKEN + rb")[ \t]*"
    rb"(?P<o>" + _IRI_TOKEN + rb"|" + _BNODE_TOKEN + rb"|" + _LITERAL + rb")[ \t]*\.[ \t]*(?:#[^\n]*)?\r?$")
ITEM_RE = re.compile(rb"<http://www\.wikidata\.org/entity/Q([1-9][0-9]*)>")
SUBJECT_RE = re.compile(rb"^[ \t]*<http://www\.wikidata\.org/entity/Q([1-9][0-9]*)>")


class LineError(ValueError):
    """A used line that is not what it must be (the reader adds the file and line number)."""


def unescape(s: str) -> str:
    """N-Triples string escapes (``\\t``, ``\\"``, ``\\uXXXX``, ``\\UXXXXXXXX``, …) decoded;
    ``ValueError`` for an unknown escape or one that is not a Unicode scalar value.

    Parameters
    ----------
    s : str
        A literal's text, escaped.

    Returns
    -------
    str
        The text with every escape decoded.

    Raises
    ------
    ValueError
        For an unknown escape or one that is not a Unicode scalar value.
    """
    if "\\" not in s:
        return s

    def sub(m: re.Match) -> str:
        hexa = m.group(1) or m.group(2)
        if hexa:
            cp = int(hexa, 16)
            if cp > 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
                raise ValueError(f"the escape {m.group(0)} is not a Unicode character "
                                 "(code points stop at U+10FFFF and exclude the surrogates D800-DFFF)")
            return chr(cp)
        c = m.group(3)
        if c not in _SIMPLE_ESC:
            raise ValueError(f"unknown escape \\{c} (N-Triples has \\t \\b \\n \\r \\f \\\" \\' \\\\ \\u \\U)")
        return _SIMPLE_ESC[c]

    return _ESCAPE_RE.sub(sub, s)


def item_number(token: bytes) -> int | None:
    """QID number of an item IRI token, ``None`` for any other term; :class:`LineError` past 18 digits.

    Parameters
    ----------
    token : bytes
        An IRI token.

    Returns
    -------
    int or None
        QID number of an item IRI token, ``None`` for any other term; :class:`LineError`
        past 18 digits.
    """
    m = ITEM_RE.fullmatch(token)
    if not m:
        return None
    if len(m.group(1)) > MAX_QID_DIGITS:
        raise LineError(f"the QID Q{m.group(1)[:40].decode()}… has more than {MAX_QID_DIGITS} digits; QIDs are read "
                        "as 64-bit integers (Wikidata's have at most 9 digits): a corrupted line?")
    return int(m.group(1))


def short_term(token: bytes) -> str:
    """A term as a report shows it: ``wd:<local name>`` for a Wikidata entity IRI, else as written.

    Parameters
    ----------
    token : bytes
        An IRI (with its angle brackets) or a blank node.

    Returns
    -------
    str
        ``wd:L5`` for ``<http://www.wikidata.org/entity/L5>``, ``_:b0`` for a blank node.
    """
    text = token.decode("utf-8", "replace")
    if text.startswith("<http://www.wikidata.org/entity/") and text.endswith(">"):
        return "wd:" + text[len("<http://www.wikidata.org/entity/"):-1]
    return text


def _non_item(what: str, subject: bytes, obj: bytes, subject_is_not: bool) -> tuple:
    term = subject if subject_is_not else obj
    kind = "a blank node (an unknown value)" if term.startswith(b"_:") else "not an item"
    side = "subject" if subject_is_not else "object"
    return ("non_item", short_term(subject), short_term(obj), f"{what}: the {side} is {kind}")


def classify(line: bytes, pred: int, is_seed: Callable[[int], bool], langs: tuple[str, ...]) -> tuple:
    """What one line with one of the four predicates means to the readers.

    Returns ``("P279", child, parent)``, ``("P31", child, parent)`` (a seed's class),
    ``("non_item", subject, object, reason)`` (the terms in short form, :func:`short_term`,
    and why the edge is dropped), ``("name", q, kind, lang_index, text)`` (``kind`` 0 for a label, 1 for
    an alias), ``("id", q, k, value)`` (the ``k``-th identifier property; the value as
    written, a literal's text or another term, checked later against the property's format),
    ``("deferred", q, message)`` (a bad name or identifier line: an error only if ``q`` is
    kept) or ``("skip",)`` (not used: a P31 line of a non-seed, a name in another language
    or of a non-item). Raises :class:`LineError` for a bad P279 line, or a bad P31 line of a
    seed.

    Parameters
    ----------
    line : bytes
        One N-Triples line.
    pred : int
        Which of the four predicates it has, or ``PRED_ID + k`` for the k-th identifier property.
    is_seed : Callable[[int], bool]
        ``is_seed(qid_number)``: whether an entity is a seed.
    langs : tuple[str, ...]
        The languages of the names kept.

    Returns
    -------
    tuple
        What one line with one of the four predicates means to the readers.
    """
    m = TRIPLE_RE.match(line)
    what = PRED_NAMES.get(pred, "identifier")
    shown = line[:200]
    if pred == PRED_P279:  # always used
        if not m:
            raise LineError(f"expected an N-Triples statement '<subject> <predicate> <object> .' (IRIs without "
                            f"spaces or control characters), got {shown!r}")
        if m.group("o").startswith(b'"'):
            raise LineError(f"expected an entity IRI as object of {what}, got {m.group('o')[:200]!r}")
        s, o = item_number(m.group("s")), item_number(m.group("o"))
        if s is None or o is None:
            return _non_item(what, m.group("s"), m.group("o"), s is None)
        return ("P279", s, o)
    sm = SUBJECT_RE.match(line)
    subject = int(sm.group(1)) if sm and len(sm.group(1)) <= MAX_QID_DIGITS else None
    if pred == PRED_P31:  # used for the seeds only
        if subject is None or not is_seed(subject):
            return ("skip",)
        if not m:
            raise LineError(f"expected an N-Triples statement '<subject> <predicate> <object> .', got {shown!r}")
        if m.group("o").startswith(b'"'):
            raise LineError(f"expected an entity IRI as object of {what}, got {m.group('o')[:200]!r}")
        o = item_number(m.group("o"))
        return _non_item(what, m.group("s"), m.group("o"), False) if o is None else ("P31", subject, o)
    if subject is None:  # a name or an identifier of anything but an item is never kept
        return ("skip",)
    if pred >= PRED_ID:
        if not m:
            return ("deferred", subject, "expected an N-Triples statement '<subject> <predicate> \"value\" .', "
                                         f"got {shown!r}")
        obj = m.group("o")
        if obj.startswith(b'"'):
            try:
                return ("id", subject, pred - PRED_ID, unescape(m.group("text").decode("utf-8")))
            except (UnicodeDecodeError, ValueError) as e:
                return ("deferred", subject, f"the identifier {obj[:200]!r} is not text ({e})")
        return ("id", subject, pred - PRED_ID, obj.decode("utf-8", "replace"))
    try:
        if not m:
            raise LineError("expected an N-Triples statement '<subject> <predicate> \"literal\"@lang .', "
                            f"got {shown!r}")
        if not m.group("o").startswith(b'"'):
            raise LineError(f"expected a literal as object of {what}, got {m.group('o')[:200]!r}")
        tag = (m.group("lang") or b"").decode("ascii").lower()
        if tag not in langs:
            return ("skip",)
        try:
            text = unescape(m.group("text").decode("utf-8"))
        except UnicodeDecodeError as e:
            raise LineError(f"the {what} is not UTF-8 text ({e})") from None
        except ValueError as e:
            raise LineError(f"{e}, in the {what} {m.group('o')[:200]!r}") from None
        return ("name", subject, 0 if pred == PRED_LABEL else 1, langs.index(tag), text)
    except LineError as e:
        return ("deferred", subject, str(e))
