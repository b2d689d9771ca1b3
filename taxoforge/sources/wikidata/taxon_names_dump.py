"""Names of iNaturalist taxa from a local Wikidata dump file, offline (the SPARQL route's twin).

Input
    An N-Triples file (plain, ``.gz`` or ``.bz2``) of Wikidata's *truthy* triples for P3151
    (iNaturalist taxon ID), P225 (taxon name), P1843 (taxon common name) and P1420 (taxon
    synonym), e.g. a filter of ``latest-truthy.nt.gz``::

        zgrep -E 'prop/direct/P(3151|225|1843|1420)>' latest-truthy.nt.gz | gzip > taxon-names.nt.gz

    Other lines are skipped, so the unfiltered dump works too (slowly). Optionally the
    iNaturalist ids wanted (default: every id in the file) and the languages of common names.

Output
    :class:`~taxoforge.sources.wikidata.taxon_names.WikidataTaxonNames`, with the same columns,
    kinds and validation as :func:`~taxoforge.sources.wikidata.taxon_names.fetch_inat_taxon_names`
    (``info["method"]`` is ``"dump"``, with the file and its size).

Difference from the SPARQL route
    A truthy dump holds only best-rank values: where one common name of a taxon has preferred
    rank, its normal-rank names are not in the file (the SPARQL route reads statements and keeps
    them); deprecated values are absent from both.

Algorithm
    One streaming pass over the lines: a line whose predicate is one of the four properties and
    whose subject is an item is parsed with a regular expression (object: an item, or a literal
    with its escapes decoded and its language tag); a common name is kept only if its tag matches
    a wanted language. A line with one of the four predicates that is not a valid triple raises
    ``ValueError`` naming the file and line. Then polars joins, per property, the items' P3151 ids
    to their names (P1420: to the synonym items' P225).
"""

from __future__ import annotations

import bz2
import gzip
import io
import os
import re
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import polars as pl

from taxoforge.sources.wikidata.ids import ENTITY_IRI
from taxoforge.sources.wikidata.queries import EXTERNAL_ID_RE, language_tag
from taxoforge.sources.wikidata.taxon_names import WikidataTaxonNames, validate_name_rows

__all__ = ["read_inat_taxon_names_dump"]

_MARK = b"<http://www.wikidata.org/prop/direct/P"
_LINE = re.compile(rb"^<http://www\.wikidata\.org/entity/(Q[1-9][0-9]*)>\s+"
                   rb"<http://www\.wikidata\.org/prop/direct/(P3151|P225|P1843|P1420)>\s+(.*?)\s*\.\s*$")
_ITEM = re.compile(rb"^<http://www\.wikidata\.org/entity/(Q[1-9][0-9]*)>$")
_LITERAL = re.compile(rb'^"((?:[^"\\]|\\.)*)"(?:@([A-Za-z0-9-]+)|\^\^<[^>]*>)?$')
_PRED_ONLY = re.compile(rb"<http://www\.wikidata\.org/prop/direct/(P3151|P225|P1843|P1420)>")
_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|[tbnrf\"'\\])")
_SIMPLE = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


def _unescape(s: str) -> str:
    if "\\" not in s:
        return s
    return _ESCAPE.sub(lambda m: chr(int(m.group(1)[1:], 16)) if m.group(1)[0] in "uU" else _SIMPLE[m.group(1)], s)


def _open(path: Path) -> io.BufferedIOBase:
    with open(path, "rb") as fh:
        magic = fh.read(3)
    if magic[:2] == b"\x1f\x8b":
        return gzip.open(path, "rb")
    if magic == b"BZh":
        return bz2.open(path, "rb")
    return open(path, "rb")


def read_inat_taxon_names_dump(path: str | os.PathLike, *, ids: Iterable[int | str] | None = None,
                               langs: Sequence[str] = ("en",)) -> WikidataTaxonNames:
    """Names of iNaturalist taxa (``ids``, default all) from a truthy N-Triples dump (module docstring).

    Parameters
    ----------
    path : str or os.PathLike
        A truthy N-Triples dump (plain, ``.gz`` or ``.bz2``).
    ids : Iterable[int or str], optional
        The iNaturalist ids to keep (default: all).
    langs : Sequence[str], optional
        The languages kept.

    Returns
    -------
    WikidataTaxonNames
        Names of iNaturalist taxa (``ids``, default all) from a truthy N-Triples dump
        (module docstring).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such dump file")
    if isinstance(langs, str):
        raise ValueError(f"langs must be a list of language tags, not the string {langs!r}")
    langs = sorted({language_tag(x, where=f"langs[{i}]") for i, x in enumerate(langs)})
    if not langs:
        raise ValueError("langs: give at least one language for common names (e.g. ['en'])")
    wanted: set[str] | None = None
    if ids is not None:
        wanted = set()
        for i, x in enumerate(ids):
            s = str(x) if isinstance(x, int) and not isinstance(x, bool) else x
            if not isinstance(s, str) or not EXTERNAL_ID_RE.fullmatch(s):
                raise ValueError(f"ids[{i}]: {x!r} is not an iNaturalist taxon id (a positive integer)")
            wanted.add(s)
    prefixes = tuple(langs) + tuple(f"{t}-" for t in langs)

    t0 = time.perf_counter()
    inat: list[tuple[str, str]] = []
    p225: list[tuple[str, str]] = []
    p1843: list[tuple[str, str, str]] = []
    p1420: list[tuple[str, str]] = []
    lines = 0
    with _open(path) as fh:
        for lineno, line in enumerate(fh, 1):
            lines = lineno
            if _MARK not in line:
                continue
            m = _LINE.match(line)
            if m is None:
                if _PRED_ONLY.search(line) and line.lstrip().startswith(b"<http://www.wikidata.org/entity/Q"):
                    raise ValueError(f"{path}: line {lineno}: not an N-Triples triple: {line[:200]!r}")
                continue  # another subject (a statement node, a property) or another predicate
            qid, prop, obj = m.group(1).decode(), m.group(2), m.group(3)
            if prop == b"P1420":
                o = _ITEM.match(obj)
                if o is None:
                    continue  # "unknown value" / "no value" placeholders are not items
                p1420.append((qid, o.group(1).decode()))
                continue
            lit = _LITERAL.match(obj)
            if lit is None:
                raise ValueError(f"{path}: line {lineno}: the object of {prop.decode()} is not a literal: "
                                 f"{obj[:200]!r}")
            value = _unescape(lit.group(1).decode("utf-8", "replace"))
            tag = lit.group(2).decode().lower() if lit.group(2) else None
            if prop == b"P3151":
                if wanted is None or value in wanted:
                    inat.append((qid, value))
            elif prop == b"P225":
                p225.append((qid, value))
            elif tag is not None and (tag in langs or tag.startswith(prefixes)):
                p1843.append((qid, value, tag))

    ids_df = pl.DataFrame(inat, schema={"qid": pl.String, "inat": pl.String}, orient="row").unique()
    sci = pl.DataFrame(p225, schema={"qid": pl.String, "value": pl.String}, orient="row")
    vern = pl.DataFrame(p1843, schema={"qid": pl.String, "value": pl.String, "tag": pl.String}, orient="row")
    syn = pl.DataFrame(p1420, schema={"qid": pl.String, "syn": pl.String}, orient="row")
    item = pl.lit(ENTITY_IRI) + pl.col("qid")
    parts = [
        ids_df.join(sci, on="qid").select("inat", item.alias("item"), pl.lit("P225").alias("property"), "value",
                                           pl.lit(None, dtype=pl.String).alias("tag")),
        ids_df.join(vern, on="qid").select("inat", item.alias("item"), pl.lit("P1843").alias("property"), "value",
                                            "tag"),
        ids_df.join(syn, on="qid").join(sci.rename({"qid": "syn"}), on="syn").select(
            "inat", item.alias("item"), pl.lit("P1420").alias("property"), "value",
            pl.lit(None, dtype=pl.String).alias("tag")),
    ]
    raw = pl.concat(parts).rows()
    names, dropped, examples = validate_name_rows([list(r) for r in raw], wanted, langs)
    info = {
        "method": "dump",
        "file": str(path),
        "file_bytes": path.stat().st_size,
        "lines": lines,
        "langs": langs,
        "ids_requested": len(wanted) if wanted is not None else None,
        "ids_in_file": ids_df["inat"].n_unique(),
        "ids_with_names": names["node_id"].n_unique(),
        "items": names["qid"].n_unique(),
        "rows": names.height,
        "rows_by_kind": {k: int(n) for k, n in names.group_by("kind").len().sort("kind").iter_rows()},
        "rows_by_property": {p: int(n) for p, n in names.group_by("property").len().sort("property").iter_rows()},
        "dropped": dropped,
        "dropped_examples": examples,
        "seconds": round(time.perf_counter() - t0, 3),
    }
    return WikidataTaxonNames(names=names, info=info)
