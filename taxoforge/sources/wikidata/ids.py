"""Wikidata ids: validation and conversion between QIDs, IRIs and node ids.

Every id that goes into a SPARQL query passes :func:`validate_qids` first: only ``Q``
followed by digits (no leading zero) is accepted, so nothing a user typed reaches a
query unchecked.

>>> validate_qid("Q146")
'Q146'
>>> node_id("Q146"), qid_of_node("wd:Q146"), qid_of_iri("http://www.wikidata.org/entity/Q146")
('wd:Q146', 'Q146', 'Q146')
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = [
    "ENTITY_IRI",
    "NODE_PREFIX",
    "QID_RE",
    "validate_qid",
    "validate_qids",
    "node_id",
    "qid_of_node",
    "qid_of_iri",
    "qid_number",
    "sort_qids",
]

ENTITY_IRI = "http://www.wikidata.org/entity/"
NODE_PREFIX = "wd:"
QID_RE = re.compile(r"^Q[1-9][0-9]*$")


def validate_qid(qid: object, *, where: str = "") -> str:
    """Return ``qid`` if it is a QID (``Q`` then digits), else raise ``ValueError`` naming it.

    A ``wd:`` node id or an entity IRI is accepted and reduced to the bare QID.

    Parameters
    ----------
    qid : object
        What should be a QID.
    where : str, optional
        What it is, for the message.

    Returns
    -------
    str
        ``qid``.
    """
    if not isinstance(qid, str):
        raise ValueError(f"{where or 'id'}: expected a Wikidata QID string like 'Q146', got {qid!r}")
    s = qid.strip()
    if s.startswith(NODE_PREFIX):
        s = s[len(NODE_PREFIX):]
    elif s.startswith(ENTITY_IRI):
        s = s[len(ENTITY_IRI):]
    if not QID_RE.fullmatch(s):
        raise ValueError(f"{where or 'id'}: {qid!r} is not a Wikidata QID (expected 'Q' followed by digits)")
    return s


def validate_qids(qids: Iterable[object], *, where: str = "ids") -> list[str]:
    """Validate every id (see :func:`validate_qid`); the error names the position of the bad one.
    Returns the bare QIDs, deduplicated, in numeric order.

    Parameters
    ----------
    qids : Iterable[object]
        What should be QIDs (``wd:`` prefixes accepted).
    where : str, optional
        What they are, for the message.

    Returns
    -------
    list[str]
        The bare QIDs, deduplicated, in numeric order.
    """
    out = {validate_qid(q, where=f"{where}[{i}]") for i, q in enumerate(qids)}
    return sort_qids(out)


def qid_number(qid: str) -> int:
    """The number of a QID: ``Q146`` → 146.

    Parameters
    ----------
    qid : str
        A QID.

    Returns
    -------
    int
        Its number.
    """
    return int(qid[1:])


def sort_qids(qids: Iterable[str]) -> list[str]:
    """QIDs in numeric order (``Q2`` before ``Q10``).

    Parameters
    ----------
    qids : Iterable[str]
        QIDs.

    Returns
    -------
    list[str]
        QIDs in numeric order (``Q2`` before ``Q10``).
    """
    return sorted(qids, key=qid_number)


def node_id(qid: str) -> str:
    """The node id of a QID: ``Q146`` → ``wd:Q146``.

    Parameters
    ----------
    qid : str
        A QID.

    Returns
    -------
    str
        The node id.
    """
    return NODE_PREFIX + qid


def qid_of_node(node: str) -> str:
    """The QID of a node id or a bare QID (:func:`validate_qid`): ``wd:Q146`` → ``Q146``.

    Parameters
    ----------
    node : str
        A node id or a QID.

    Returns
    -------
    str
        The QID.
    """
    return validate_qid(node)


def qid_of_iri(iri: str) -> str | None:
    """The QID of an entity IRI, or ``None`` for anything else (properties, lexemes,
    blank-node placeholders of "unknown value").

    Parameters
    ----------
    iri : str
        An IRI.

    Returns
    -------
    str or None
        The QID of an entity IRI, or ``None`` for anything else (properties, lexemes,
        blank-node placeholders of "unknown value").
    """
    if not iri.startswith(ENTITY_IRI):
        return None
    s = iri[len(ENTITY_IRI):]
    return s if QID_RE.fullmatch(s) else None
