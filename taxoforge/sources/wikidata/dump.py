"""Offline extraction from a local Wikidata dump file (N-Triples or Turtle, plain, gzip or bz2).

Input
    A file of ``wdt:P279`` / ``wdt:P31`` / label triples, e.g. a filter of the "truthy"
    N-Triples dump (``latest-truthy.nt.gz``) such as
    ``zgrep -E 'prop/direct/P(31|279)>|rdf-schema#label|core#altLabel' latest-truthy.nt.gz``.
    Optionally seed QIDs.

Output
    A :class:`~taxoforge.sources.wikidata.graph.WikidataGraph`, as the SPARQL route gives:

    * without seeds, the whole subclass-of graph (every P279 edge between items);
    * with seeds, their P31 edges and the P279 closure of their classes (as
      :func:`~taxoforge.sources.wikidata.extract.extract_from_seeds` fetches it).

Algorithm (memory stays bounded: no RDF graph of the file is ever built)
    1. Pass 1 streams the triples (N-Triples in 16 MB chunks of whole lines, matched by a
       regex in C, lines re-read one by one only in a chunk with an odd line; Turtle through
       pyoxigraph's streaming parser) and keeps only P279 edges, and P31 edges of seeds, as pairs of QID *numbers* in
       growable ``int64`` arrays: 16 bytes per edge, ~80 MB for Wikidata's 4.9 M P279 edges.
    2. With seeds: the closure is a breadth-first search over the compressed sparse graph
       (``scipy.sparse.csgraph``) from the seeds' classes; edges outside it are dropped.
       Edges out of the root (Q35120) are dropped in both modes, as the SPARQL route never
       expands it.
    3. Pass 2 (when names are wanted) streams the file again and keeps the labels and aliases
       in ``lang`` of the nodes that are left.

Bad lines among those used (a P279 line that is not a triple) raise ``ValueError`` naming
the file and line number.
"""

from __future__ import annotations

import bz2
import gzip
import io
import os
import re
import time
from array import array
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import polars as pl
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order

from taxoforge.sources.wikidata.extract import ROOT_QID
from taxoforge.sources.wikidata.graph import WikidataGraph
from taxoforge.sources.wikidata.ids import qid_number, validate_qid, validate_qids

__all__ = ["read_dump", "open_dump", "dump_format"]

_ENTITY = b"<http://www.wikidata.org/entity/Q"
_P31 = b"<http://www.wikidata.org/prop/direct/P31>"
_P279 = b"<http://www.wikidata.org/prop/direct/P279>"
_LABEL = b"<http://www.w3.org/2000/01/rdf-schema#label>"
_ALIAS = b"<http://www.w3.org/2004/02/skos/core#altLabel>"
_NAME_PREDICATES = {_LABEL: "label", _ALIAS: "alias"}
_ENTITY_RE = re.compile(rb"^<http://www\.wikidata\.org/entity/Q([1-9][0-9]*)>$")
_LITERAL_RE = re.compile(rb'^"((?:[^"\\]|\\.)*)"(?:@([A-Za-z0-9-]+)|\^\^<[^>]*>)?$')
_ESCAPE_RE = re.compile(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|[tbnrf\"'\\])")
_SIMPLE_ESC = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}

_IRI = {
    "P31": "http://www.wikidata.org/prop/direct/P31",
    "P279": "http://www.wikidata.org/prop/direct/P279",
    "label": "http://www.w3.org/2000/01/rdf-schema#label",
    "alias": "http://www.w3.org/2004/02/skos/core#altLabel",
}
_ENTITY_IRI = "http://www.wikidata.org/entity/Q"


def _unescape(s: str) -> str:
    if "\\" not in s:
        return s

    def sub(m: re.Match) -> str:
        e = m.group(1)
        return chr(int(e[1:], 16)) if e[0] in "uU" else _SIMPLE_ESC[e]

    return _ESCAPE_RE.sub(sub, s)


def open_dump(path: str | os.PathLike) -> io.BufferedIOBase:
    """Open ``path`` for binary reading, decompressing gzip or bz2 (recognised by magic bytes)."""
    path = Path(path)
    with path.open("rb") as f:
        magic = f.read(3)
    if magic[:2] == b"\x1f\x8b":
        return gzip.open(path, "rb")
    if magic == b"BZh":
        return bz2.open(path, "rb")
    return path.open("rb")


def dump_format(path: str | os.PathLike) -> str:
    """``"nt"`` or ``"ttl"`` from the file name (``.nt``, ``.ttl``, optionally ``.gz``/``.bz2``)."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    while suffixes and suffixes[-1] in (".gz", ".bz2", ".gzip"):
        suffixes.pop()
    ext = suffixes[-1] if suffixes else ""
    if ext in (".nt", ".ntriples"):
        return "nt"
    if ext in (".ttl", ".turtle"):
        return "ttl"
    raise ValueError(f"{path}: cannot tell the format from the name; give format='nt' or 'ttl'")


class _Edges:
    """Growable pair of int64 arrays."""

    def __init__(self) -> None:
        self.child = array("q")
        self.parent = array("q")

    def add(self, c: int, p: int) -> None:
        self.child.append(c)
        self.parent.append(p)

    def numpy(self) -> tuple[np.ndarray, np.ndarray]:
        return (np.frombuffer(self.child, dtype=np.int64).copy(), np.frombuffer(self.parent, dtype=np.int64).copy())


# ---------------------------------------------------------------- N-Triples, chunk by chunk
# Fast path: a multi-line regex over 16 MB chunks pulls out the well-formed triples in C. Each
# chunk's count of predicate occurrences is compared with the regex's matches; where they differ
# (a non-item object, an odd line) the chunk is re-read line by line, which reports a bad line
# with its number.
_CHUNK = 1 << 24
_E = rb"<http://www\.wikidata\.org/entity/Q([1-9][0-9]*)>"
_EDGE_FAST = {
    False: re.compile(rb"^" + _E + rb"[ \t]+<http://www\.wikidata\.org/prop/direct/(P279)>[ \t]+" + _E
                      + rb"[ \t]*\.[ \t]*\r?$", re.M),
    True: re.compile(rb"^" + _E + rb"[ \t]+<http://www\.wikidata\.org/prop/direct/(P279|P31)>[ \t]+" + _E
                     + rb"[ \t]*\.[ \t]*\r?$", re.M),
}
_NAME_FAST = re.compile(
    rb"^" + _E + rb"[ \t]+<http://www\.w3\.org/(2000/01/rdf-schema#label|2004/02/skos/core#altLabel)>[ \t]+"
    rb'"((?:[^"\\\n]|\\.)*)"@([A-Za-z0-9-]+)[ \t]*\.[ \t]*\r?$', re.M)
_FAST_KIND = {b"2000/01/rdf-schema#label": "label", b"2004/02/skos/core#altLabel": "alias"}


def _chunks(path: Path) -> Iterator[tuple[int, bytes]]:
    """(number of the chunk's first line, chunk of whole lines) over the (decompressed) file."""
    line0 = 1
    rest = b""
    with open_dump(path) as f:
        while True:
            block = f.read(_CHUNK)
            if not block:
                if rest:
                    yield line0, rest + b"\n"
                return
            block = rest + block
            cut = block.rfind(b"\n") + 1
            if cut == 0:
                rest = block
                continue
            chunk, rest = block[:cut], block[cut:]
            yield line0, chunk
            line0 += chunk.count(b"\n")


def _nt_lines(path: Path, chunk: bytes, line0: int, wanted: set[bytes]) -> Iterator[tuple[int, bytes, bytes, bytes]]:
    """Slow path: (line number, subject, predicate, object) of the chunk's lines whose predicate is wanted."""
    for lineno, line in enumerate(chunk.split(b"\n"), line0):
        parts = line.split(None, 2)
        if len(parts) < 3 or parts[1] not in wanted:
            continue
        obj = parts[2].rstrip()
        if not obj.endswith(b"."):
            raise ValueError(f"{path}:{lineno}: expected an N-Triples statement ending in ' .', got {line[:200]!r}")
        yield lineno, parts[0], parts[1], obj[:-1].rstrip()


def _nt_edges(path: Path, seeds: set[int] | None, counts: dict) -> tuple[_Edges, _Edges]:
    p279, p31 = _Edges(), _Edges()
    with_p31 = seeds is not None
    wanted = {_P279, _P31} if with_p31 else {_P279}
    fast = _EDGE_FAST[with_p31]
    for line0, chunk in _chunks(path):
        n = chunk.count(_P279) + (chunk.count(_P31) if with_p31 else 0)
        if n == 0:
            continue
        found = fast.findall(chunk)
        if len(found) == n:
            for c, prop, par in found:
                if prop == b"P279":
                    p279.add(int(c), int(par))
                else:
                    ci = int(c)
                    if ci in seeds:
                        p31.add(ci, int(par))
            continue
        counts["slow_chunks"] = counts.get("slow_chunks", 0) + 1
        for lineno, s, p, o in _nt_lines(path, chunk, line0, wanted):
            ms = _ENTITY_RE.match(s)
            mo = _ENTITY_RE.match(o)
            if not ms or not mo:
                if not o.startswith(b"<") and not o.startswith(b"_:"):
                    raise ValueError(f"{path}:{lineno}: expected an entity IRI as object of {p.decode()}, got {o[:200]!r}")
                counts["non_item_edges"] += 1  # lexemes, properties, "unknown value" blank nodes
                continue
            if p == _P279:
                p279.add(int(ms.group(1)), int(mo.group(1)))
            else:
                c = int(ms.group(1))
                if c in seeds:
                    p31.add(c, int(mo.group(1)))
    return p279, p31


def _nt_names(path: Path, keep: set[int], lang: str, counts: dict) -> list[tuple[int, str, str]]:
    out: list[tuple[int, str, str]] = []
    blang = lang.encode()
    for line0, chunk in _chunks(path):
        n = chunk.count(_LABEL) + chunk.count(_ALIAS)
        if n == 0:
            continue
        found = _NAME_FAST.findall(chunk)
        if len(found) == n:
            for q, pred, text, tag in found:
                if tag.lower() == blang:
                    qi = int(q)
                    if qi in keep:
                        out.append((qi, _FAST_KIND[pred], _unescape(text.decode("utf-8"))))
            continue
        counts["slow_chunks"] = counts.get("slow_chunks", 0) + 1
        for lineno, s, p, o in _nt_lines(path, chunk, line0, set(_NAME_PREDICATES)):
            ms = _ENTITY_RE.match(s)
            if not ms:
                continue
            q = int(ms.group(1))
            if q not in keep:
                continue
            mo = _LITERAL_RE.match(o)
            if not mo:
                raise ValueError(f"{path}:{lineno}: expected a literal as object of {p.decode()}, got {o[:200]!r}")
            if (mo.group(2) or b"").decode().lower() != lang:
                continue
            out.append((q, _NAME_PREDICATES[p], _unescape(mo.group(1).decode("utf-8"))))
    return out


# ---------------------------------------------------------------- Turtle, streamed by pyoxigraph
def _ttl_triples(path: Path) -> Iterator[tuple[str, str, object]]:
    try:
        import pyoxigraph as ox
    except ImportError:  # pragma: no cover - pyoxigraph ships with the dev extra
        ox = None
    if ox is not None:
        with open_dump(path) as f:
            try:
                for q in ox.parse(input=f, format=ox.RdfFormat.TURTLE):
                    yield q.subject.value, q.predicate.value, q.object
            except SyntaxError as e:
                raise ValueError(f"{path}: Turtle syntax error: {e}") from e
        return
    # fallback: rdflib builds the whole graph in memory — fine for small files only
    import rdflib  # pragma: no cover

    g = rdflib.Graph()  # pragma: no cover
    with open_dump(path) as f:  # pragma: no cover
        g.parse(f, format="turtle")
    for s, p, o in g:  # pragma: no cover
        yield str(s), str(p), o


def _qnum(iri: str) -> int | None:
    if iri.startswith(_ENTITY_IRI):
        rest = iri[len(_ENTITY_IRI):]
        if rest.isdigit() and rest[0] != "0":
            return int(rest)
    return None


def _ttl_edges(path: Path, seeds: set[int] | None, counts: dict) -> tuple[_Edges, _Edges]:
    p279, p31 = _Edges(), _Edges()
    for s, p, o in _ttl_triples(path):
        if p == _IRI["P279"] or (seeds is not None and p == _IRI["P31"]):
            c, par = _qnum(s), _qnum(getattr(o, "value", str(o)))
            if c is None or par is None:
                counts["non_item_edges"] += 1
                continue
            if p == _IRI["P279"]:
                p279.add(c, par)
            elif c in seeds:
                p31.add(c, par)
    return p279, p31


def _ttl_names(path: Path, keep: set[int], lang: str, counts: dict) -> list[tuple[int, str, str]]:
    out = []
    kinds = {_IRI["label"]: "label", _IRI["alias"]: "alias"}
    for s, p, o in _ttl_triples(path):
        kind = kinds.get(p)
        if kind is None:
            continue
        q = _qnum(s)
        if q is None or q not in keep:
            continue
        if (getattr(o, "language", None) or "").lower() != lang:
            continue
        out.append((q, kind, str(getattr(o, "value", o))))
    return out


# ---------------------------------------------------------------- the closure
def _closure(child: np.ndarray, parent: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """QID numbers reachable upward from ``starts`` over child→parent edges (starts included)."""
    ids = np.unique(np.concatenate([child, parent, starts]))
    n = len(ids)
    c = np.searchsorted(ids, child)
    p = np.searchsorted(ids, parent)
    s = np.searchsorted(ids, starts)
    # one virtual source (index n) pointing at every start
    rows = np.concatenate([c, np.full(len(s), n)])
    cols = np.concatenate([p, s])
    g = csr_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(n + 1, n + 1))
    order = breadth_first_order(g, n, directed=True, return_predecessors=False)
    order = order[order < n]
    return ids[np.sort(order)]


def read_dump(
    path: str | os.PathLike,
    *,
    seed_qids: Iterable[str] | None = None,
    lang: str = "en",
    names: bool = True,
    root: str = ROOT_QID,
    format: str | None = None,
) -> WikidataGraph:
    """Read a dump file into a :class:`WikidataGraph` (module docstring).

    Parameters
    ----------
    path : path
        N-Triples or Turtle, plain, ``.gz`` or ``.bz2``.
    seed_qids : iterable of str, optional
        Seed entities (QIDs); without them the whole subclass-of graph is read.
    lang : str
        Language of labels and aliases.
    names : bool
        Read labels and aliases (a second pass over the file).
    root : str
        The root class, whose own superclasses are not followed.
    format : {"nt", "ttl"}, optional
        Guessed from the file name when not given.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"dump file not found: {path}")
    fmt = format or dump_format(path)
    if fmt not in ("nt", "ttl"):
        raise ValueError(f"format must be 'nt' or 'ttl', got {fmt!r}")
    lang = lang.lower()
    root_num = qid_number(validate_qid(root, where="root"))
    seed_qids = validate_qids(seed_qids, where="seed_qids") if seed_qids is not None else None
    seed_nums = {qid_number(q) for q in seed_qids} if seed_qids is not None else None
    counts = {"non_item_edges": 0}
    t0 = time.perf_counter()

    e279, e31 = (_nt_edges if fmt == "nt" else _ttl_edges)(path, seed_nums, counts)
    c279, p279 = e279.numpy()
    c31, p31 = e31.numpy()
    del e279, e31
    counts["p279_edges_read"] = int(len(c279))
    counts["p31_edges_read"] = int(len(c31))
    t_pass1 = time.perf_counter() - t0

    not_root = c279 != root_num
    c279, p279 = c279[not_root], p279[not_root]
    if seed_nums is not None:
        has_class = set(np.unique(c31).tolist())
        classless = np.array(sorted(seed_nums - has_class), dtype=np.int64)
        starts = np.unique(np.concatenate([p31, classless]))
        reach = _closure(c279, p279, starts) if len(starts) else np.empty(0, np.int64)
        keep = np.isin(c279, reach)
        c279, p279 = c279[keep], p279[keep]
        counts["seeds_without_class"] = int(len(classless))

    child = np.concatenate([c31, c279])
    parent = np.concatenate([p31, p279])
    relation = np.concatenate([np.zeros(len(c31), dtype=np.int8), np.ones(len(c279), dtype=np.int8)])
    edges = pl.DataFrame({"c": child, "p": parent, "r": relation}).select(
        (pl.lit("wd:Q") + pl.col("c").cast(pl.String)).alias("child"),
        (pl.lit("wd:Q") + pl.col("p").cast(pl.String)).alias("parent"),
        pl.when(pl.col("r") == 0).then(pl.lit("P31")).otherwise(pl.lit("P279")).alias("relation"),
    )

    name_rows: list[tuple[int, str, str]] = []
    t1 = time.perf_counter()
    if names:
        keep_nodes = set(np.unique(np.concatenate([child, parent])).tolist())
        if seed_nums:
            keep_nodes |= seed_nums
        name_rows = (_nt_names if fmt == "nt" else _ttl_names)(path, keep_nodes, lang, counts)
    names_df = pl.DataFrame(
        {
            "node_id": [f"wd:Q{q}" for q, _, _ in name_rows],
            "name": [n for _, _, n in name_rows],
            "kind": [k for _, k, _ in name_rows],
            "lang": [lang] * len(name_rows),
        },
        schema={"node_id": pl.String, "name": pl.String, "kind": pl.String, "lang": pl.String},
    )
    st = path.stat()
    info = {
        "method": "dump",
        "file": str(path.resolve()),
        "file_bytes": st.st_size,
        "file_mtime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(st.st_mtime)),
        "format": fmt,
        "root": f"wd:Q{root_num}",
        "lang": lang,
        "seeds": len(seed_qids) if seed_qids is not None else None,
        **counts,
        "edges": edges.height,
        "names": names_df.height,
        "seconds_edges": round(t_pass1, 3),
        "seconds_names": round(time.perf_counter() - t1, 3),
    }
    seed_node_ids = [f"wd:{q}" for q in seed_qids] if seed_qids is not None else []
    return WikidataGraph(edges=edges, names=names_df, seed_node_ids=seed_node_ids, info=info)
