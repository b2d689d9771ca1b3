"""Turtle input of :func:`.dump.read_dump`: streamed through pyoxigraph's parser (one pass, one core).

The same filter as the N-Triples pass (:mod:`.dump_pass`): P279 edges between items, P31 edges
of the seeds, labels and aliases of items in the wanted languages, values of the identifier
properties asked for; edges to or from non-items are kept for the report. Turtle has no line-by-line form, so errors name the file
(pyoxigraph's message gives the position).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import polars as pl

from taxoforge.sources.wikidata.dump_blocks import open_dump
from taxoforge.sources.wikidata.dump_pass import ID_SCHEMA, NAME_SCHEMA, NameStore, Plan, Scan
from taxoforge.sources.wikidata.ntriples import MAX_QID_DIGITS, PREDICATE_IRIS, PRED_ALIAS, PRED_LABEL, PRED_P31, PRED_P279

__all__ = ["scan_ttl"]

_ENTITY = "http://www.wikidata.org/entity/"
_ITEM = _ENTITY + "Q"


def _ttl_triples(path: Path) -> Iterator[tuple[str, str, object]]:
    try:
        import pyoxigraph as ox
    except ImportError:  # pragma: no cover - pyoxigraph ships with the dev extra
        ox = None
    if ox is not None:
        with open_dump(path) as f:
            try:
                for q in ox.parse(input=f, format=ox.RdfFormat.TURTLE):
                    yield q.subject, q.predicate.value, q.object
            except SyntaxError as e:
                raise ValueError(f"{path}: Turtle syntax error: {e}") from e
        return
    # fallback: rdflib builds the whole graph in memory — fine for small files only
    import rdflib  # pragma: no cover

    g = rdflib.Graph()  # pragma: no cover
    with open_dump(path) as f:  # pragma: no cover
        g.parse(f, format="turtle")
    for s, p, o in g:  # pragma: no cover
        yield s, str(p), o


def _term(t) -> str:
    """A term in the report's short form (as :func:`.ntriples.short_term`)."""
    value = str(getattr(t, "value", t))
    if type(t).__name__ == "BlankNode":
        return "_:" + value
    return "wd:" + value[len(_ENTITY):] if value.startswith(_ENTITY) else f"<{value}>"


def _qnum(t, where: str) -> int | None:
    iri = str(getattr(t, "value", t))
    if type(t).__name__ != "BlankNode" and iri.startswith(_ITEM):
        rest = iri[len(_ITEM):]
        if rest.isdigit() and rest[0] != "0" and rest.isascii():
            if len(rest) > MAX_QID_DIGITS:
                raise ValueError(f"{where}: the QID Q{rest[:40]}… has more than {MAX_QID_DIGITS} digits; QIDs are "
                                 "read as 64-bit integers")
            return int(rest)
    return None


def scan_ttl(plan: Plan, spill_bytes: int) -> Scan:
    """The pass over a Turtle file (module docstring).

    Parameters
    ----------
    plan : Plan
        What to keep.
    spill_bytes : int
        Names held in memory before the rest go to temporary files.

    Returns
    -------
    Scan
        Edges, names, non-item edges (line numbers 0: Turtle has none), counts.
    """
    scan = Scan()
    p279, p31 = (array("q"), array("q")), (array("q"), array("q"))
    names: list[tuple[int, int, int, str]] = []
    kinds = {PREDICATE_IRIS[PRED_LABEL]: 0, PREDICATE_IRIS[PRED_ALIAS]: 1}
    id_iris = {f"http://www.wikidata.org/prop/direct/P{int(n)}": k
               for k, n in enumerate(plan.id_props if plan.id_props is not None else ())}
    ids: list[tuple[int, int, str]] = []
    where = str(plan.path)
    for s, p, o in _ttl_triples(plan.path):
        if p == PREDICATE_IRIS[PRED_P279] or (plan.want_p31 and p == PREDICATE_IRIS[PRED_P31]):
            what = "P279" if p == PREDICATE_IRIS[PRED_P279] else "P31"
            c = _qnum(s, where)
            if what == "P31" and (c is None or not plan.is_seed(c)):
                continue
            par = _qnum(o, where)
            if c is None or par is None:
                side, term = ("subject", s) if c is None else ("object", o)
                kind = "a blank node (an unknown value)" if type(term).__name__ == "BlankNode" else "not an item"
                scan.non_items.append((0, _term(s), _term(o), f"{what}: the {side} is {kind}"))
                scan.counts["non_item_edges"] += 1
                continue
            pair = p279 if what == "P279" else p31
            pair[0].append(c)
            pair[1].append(par)
        elif plan.want_names and p in kinds:
            tag = (getattr(o, "language", None) or "").lower()
            if tag in plan.langs:
                q = _qnum(s, where)
                if q is not None:
                    names.append((q, kinds[p], plan.langs.index(tag), str(getattr(o, "value", o))))
        elif p in id_iris:
            q = _qnum(s, where)
            if q is not None:
                ids.append((q, id_iris[p], str(getattr(o, "value", o))))
    scan.p279.append(tuple(np.frombuffer(a, dtype=np.int64).copy() for a in p279))
    scan.p31.append(tuple(np.frombuffer(a, dtype=np.int64).copy() for a in p31))
    if plan.want_names:
        scan.names = NameStore(spill_bytes)
        scan.names.add(pl.DataFrame(names, schema=NAME_SCHEMA, orient="row"))
    if plan.id_props is not None:
        scan.ids = NameStore(spill_bytes, ID_SCHEMA)
        scan.ids.add(pl.DataFrame(ids, schema=ID_SCHEMA, orient="row"))
    return scan
