"""Offline extraction from a local Wikidata dump file (N-Triples or Turtle, plain, gzip or bz2).

Input
    A file of ``wdt:P279`` / ``wdt:P31`` / label triples: Wikidata's whole "truthy" N-Triples
    dump (``latest-truthy.nt.gz`` / ``.bz2``) or any filter of it such as
    ``zgrep -E 'prop/direct/P(31|279)>|rdf-schema#label|core#altLabel' latest-truthy.nt.gz``.
    Optionally seed QIDs, and the languages of the names.

Output
    A :class:`~taxoforge.sources.wikidata.graph.WikidataGraph`, as the SPARQL route gives:

    * without seeds, the whole subclass-of graph (every P279 edge between items);
    * with seeds, their P31 edges and the P279 closure of their classes (as
      :func:`~taxoforge.sources.wikidata.extract.extract_from_seeds` fetches it);
    * labels and aliases, in the chosen languages, of every node of the graph and every seed;
    * optionally (``identifiers=True``), in the same pass, the identifier claims (iNaturalist
      P3151, Catalogue of Life P10585, GBIF P846, NCBI P685, WordNet 3.1 P8814) of the kept
      items — every node of the graph and every seed, and with ``identifier_seeds`` also the
      items carrying one of those values of ``identifier_seed_property``, as the SPARQL route
      (:func:`~taxoforge.sources.wikidata.identifiers.fetch_identifier_claims`) finds them —
      as ``graph.identifiers``, validated as that route's are. A truthy dump holds best-rank,
      non-deprecated values only: the claims' rank is ``truthy``
      (:func:`~taxoforge.sources.wikidata.identifiers.truthy_claims`).

Algorithm: one pass over the file, in parallel; memory bounded by what is kept
    1. Read (:mod:`.dump_blocks`): the file is read once, in blocks of whole lines
       (:data:`.dump_blocks.CHUNK` bytes): a plain file memory-mapped (its pages released as
       blocks are done), a compressed one decoded in parallel where that pays (``rapidgzip``
       for gzip on more than four cores, one ISA-L thread beside the scanners below that;
       ``indexed_bzip2`` for bzip2 on every core), never through a temporary file.
    2. Scan and spill (:mod:`.dump_pass`, :mod:`.dump_scan`): each block is scanned by
       compiled code (:func:`.dump_scan.scan_block`, no Python per line) in a pool of one
       thread per core. It keeps P279 edges, P31 edges of the seeds, and labels and aliases
       of items in the wanted languages; the rare *odd* lines (non-item objects, unusual
       whitespace, malformed lines) are classified one by one in Python.
       Kept: edges as pairs of ``int64`` QID numbers (16 bytes an edge, ~80 MB for Wikidata's
       4.9 M P279 edges); names as Arrow strings, in memory up to ``spill_bytes`` and beyond
       that in a temporary compressed file (which names are wanted is only known once every
       edge has been read: the whole truthy dump has about 100 M English labels and aliases,
       the taxonomy needs a few million).
    3. The graph (:mod:`.dump_graph`): edges out of the root (Q35120) are dropped, as the
       SPARQL route never expands it; with seeds, the closure is a breadth-first search over
       the compressed sparse graph (``scipy.sparse.csgraph``) from the seeds' classes; the
       names are restricted to the nodes left and the seeds. The tables
       (:mod:`.dump_tables`) are built by integer sorts and passes over ranges of rows on
       ``workers`` threads, in :class:`WikidataGraph`'s normal form. Every edge read and not
       kept is in the graph's ``dropped`` table with its reason (``non_item_edge``,
       ``root_superclass``, ``repeated_statement``), counted by reason in
       ``info["dropped_edges"]``.

    Turtle files are streamed through pyoxigraph's parser (:mod:`.dump_turtle`, one pass, one
    core).

Errors
    A bad line among those used raises ``ValueError`` naming the file and the line number
    (counted by the scanner on the way, so the hot path pays nothing for them): a P279 line
    that is not a triple, whose object is a literal or a corrupted IRI (a NUL byte, say), or
    whose QID has more than 18 digits (QIDs are kept as 64-bit integers; Wikidata's are below
    10⁹); the same for the P31 lines of seeds; a label or alias of a node of the graph that is
    malformed, is not UTF-8 or holds an escape that is not a Unicode character (``\\U00110000``)
    — those are checked for every item and reported only when the node is kept. Lines with
    other predicates, and names of nodes that are not kept, are not checked. A NUL byte
    anywhere (binary data), a line longer than 16 MiB, and a last line cut inside a statement
    are errors naming the line. A truncated or corrupt compressed file (a gzip trailer whose
    CRC-32 or length does not match, a stream that stops early) raises ``ValueError`` naming
    the file; so does a file in another compression (xz, zstd, zip, 7z, lz4).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import polars as pl

from taxoforge.sources.wikidata.dump_blocks import compression, cpus, open_dump
from taxoforge.sources.wikidata.dump_graph import DroppedEdges, NodeIndex, seed_numbers, select_edges
from taxoforge.sources.wikidata.dump_tables import assemble, graph_from_tables
from taxoforge.sources.wikidata.dump_pass import Plan, Scan, scan_nt
from taxoforge.sources.wikidata.dump_turtle import scan_ttl
from taxoforge.sources.wikidata.extract import ROOT_QID
from taxoforge.sources.wikidata.graph import WikidataGraph
from taxoforge.sources.wikidata.identifiers import IDENTIFIER_PROPERTIES, seed_values, validate_claim_frame
from taxoforge.sources.wikidata.ids import qid_number, validate_qid
from taxoforge.sources.wikidata.ntriples import LANG_RE, MAX_QID_DIGITS

__all__ = ["read_dump", "open_dump", "dump_format", "dump_languages", "graph_from_tables", "MAX_QID_DIGITS"]

#: Names held in memory before they are spilled to a temporary file.
_SPILL_BYTES = 512 << 20


def dump_format(path: str | os.PathLike) -> str:
    """The format of a dump file from its name.

    Parameters
    ----------
    path : path-like
        ``….nt`` or ``….ttl``, optionally with ``.gz`` / ``.bz2`` after it.

    Returns
    -------
    str
        ``"nt"`` or ``"ttl"``.

    Raises
    ------
    ValueError
        When the name says neither.
    """
    suffixes = [s.lower() for s in Path(path).suffixes]
    while suffixes and suffixes[-1] in (".gz", ".bz2", ".gzip"):
        suffixes.pop()
    ext = suffixes[-1] if suffixes else ""
    if ext in (".nt", ".ntriples"):
        return "nt"
    if ext in (".ttl", ".turtle"):
        return "ttl"
    raise ValueError(f"{path}: cannot tell the format from the name; give format='nt' or 'ttl'")


def dump_languages(lang: str | Sequence[str]) -> tuple[str, ...]:
    """Language tags to keep, lower case, without repeats.

    Parameters
    ----------
    lang : str or sequence of str
        ``"en"``, ``"en,de"`` or ``["en", "de-AT"]``.

    Returns
    -------
    tuple of str
        The tags, lower case, in the order given.

    Raises
    ------
    ValueError
        For a string that is not a language tag, or no tag at all.
    """
    tags = lang.split(",") if isinstance(lang, str) else list(lang)
    out: list[str] = []
    for t in tags:
        t = str(t).strip()
        if not LANG_RE.match(t):
            raise ValueError(f"lang: {t!r} is not a language tag (letters, then '-' and letters or digits, "
                             "like 'en' or 'en-gb')")
        if t.lower() not in out:
            out.append(t.lower())
    if not out:
        raise ValueError("lang: give at least one language tag")
    return tuple(out)


def read_dump(
    path: str | os.PathLike,
    *,
    seed_qids: Iterable[str] | None = None,
    lang: str | Sequence[str] = "en",
    names: bool = True,
    root: str = ROOT_QID,
    format: str | None = None,
    workers: int | None = None,
    spill_bytes: int = _SPILL_BYTES,
    identifiers: bool = False,
    identifier_seeds: Iterable[int | str] | None = None,
    identifier_seed_property: str = "P3151",
) -> WikidataGraph:
    """Read a dump file into a :class:`WikidataGraph` in one pass (module docstring).

    Parameters
    ----------
    path : path
        N-Triples or Turtle, plain, ``.gz`` or ``.bz2``.
    seed_qids : iterable of str, optional
        Seed entities (QIDs); without them the whole subclass-of graph is read.
    lang : str or sequence of str
        Language(s) of labels and aliases: ``"en"``, ``"en,de"`` or ``["en", "de"]``.
    names : bool
        Read labels and aliases.
    root : str
        The root class, whose own superclasses are not followed.
    format : {"nt", "ttl"}, optional
        Guessed from the file name when not given.
    workers : int, optional
        Threads scanning blocks and decompressing, and the most threads a step of the graph
        uses (default: every core this process may use; a step takes
        :func:`taxoforge.trees.threads.threads_for` of its rows). The graph is the same for
        every count.
    spill_bytes : int
        Names held in memory before the rest go to a temporary file.
    identifiers : bool
        Read the identifier claims of the kept items too (module docstring).
    identifier_seeds : iterable of int or str, optional
        Values of ``identifier_seed_property`` (iNaturalist taxon ids by default): the items
        carrying one are kept for their claims too (implies ``identifiers``).
    identifier_seed_property : str
        The property of ``identifier_seeds``.

    Returns
    -------
    WikidataGraph
        Edges, names, seeds, the dropped edges with their reasons, ``identifiers`` (the
        claims, or ``None``), and ``info`` (the file, counts of lines, edges read, edges
        dropped by reason, seconds of the scan and of the graph step; ``identifiers``: items,
        claims per property, drops).

    Raises
    ------
    FileNotFoundError
        When ``path`` is not a file.
    ValueError
        ``file:line: what was expected`` for a bad line; ``file: …`` for a corrupt file.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"dump file not found: {path}")
    fmt = format or dump_format(path)
    if fmt not in ("nt", "ttl"):
        raise ValueError(f"format must be 'nt' or 'ttl', got {fmt!r}")
    langs = dump_languages(lang)
    root_num = qid_number(validate_qid(root, where="root"))
    seed_qids, seed_nums = seed_numbers(seed_qids)
    id_seeds = seed_values(identifier_seeds, identifier_seed_property) if identifier_seeds is not None else None
    want_ids = identifiers or id_seeds is not None
    workers = max(1, int(workers or cpus()))
    from taxoforge.sources.wikidata.dump_scan import encode_langs

    lang_table, lang_lens = encode_langs(langs if names else ())
    plan = Plan(path=path, want_p31=seed_nums is not None,
                seeds=np.sort(seed_nums) if seed_nums is not None else np.empty(0, np.int64),
                want_names=names, langs=langs, lang_table=lang_table, lang_lens=lang_lens,
                id_props=np.array([int(p[1:]) for p in IDENTIFIER_PROPERTIES], dtype=np.int64) if want_ids else None)
    t0 = time.perf_counter()
    scan = scan_nt(plan, workers, spill_bytes) if fmt == "nt" else scan_ttl(plan, spill_bytes)
    st = path.stat()
    info = {
        "method": "dump",
        "file": str(path.resolve()),
        "file_bytes": st.st_size,
        "file_mtime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(st.st_mtime)),
        "format": fmt,
        "compression": compression(path),
        "root": f"wd:Q{root_num}",
        "lang": ",".join(langs),
        "seeds": len(seed_qids) if seed_qids is not None else None,
        "workers": workers if fmt == "nt" else 1,
    }
    try:
        c279, p279 = scan.arrays("p279")
        c31, p31 = scan.arrays("p31")
        scan.p279, scan.p31 = [], []  # the blocks' arrays, now copied into one
        counts = scan.counts
        counts["p279_edges_read"] = int(len(c279))
        counts["p31_edges_read"] = int(len(c31))
        t_scan = time.perf_counter() - t0
        t1 = time.perf_counter()
        dropped = DroppedEdges()
        if scan.non_items:
            _, subj, obj, why = zip(*scan.non_items)
            dropped.add("non_item_edge", list(subj), list(obj), pl.Series(why, dtype=pl.String))
        c279, p279, c31, p31 = select_edges(c279, p279, c31, p31, seed_nums, root_num, counts, dropped)
        edges = {"c279": c279, "p279": p279, "c31": c31, "p31": p31}
        del c279, p279, c31, p31

        def names_of(index: NodeIndex) -> pl.DataFrame:
            if scan.deferred:  # bad names: an error if their node is in the graph
                q = np.array([d[0] for d in scan.deferred], dtype=np.int64)
                kept = [d for d, pos in zip(scan.deferred, index.positions(q)) if pos >= 0]
                if kept:
                    _, line, msg = min(kept, key=lambda d: d[1])
                    raise ValueError(f"{path}:{line}: {msg}")
            counts["names_read"] = scan.names.rows
            counts["names_spilled_files"] = len(scan.names.files)
            return scan.names.select(index.positions)

        graph = assemble(edges, seed_nums, names_of if names else None, langs,
                         [f"wd:{q}" for q in seed_qids] if seed_qids is not None else [], info, dropped,
                         threads=workers)
        if scan.ids is not None:
            graph.identifiers, graph.info["identifiers"] = _identifier_claims(
                scan, graph, id_seeds, identifier_seed_property, path)
    finally:
        for store in (scan.names, scan.ids):
            if store is not None:
                store.close()
    graph.info.update(counts, edges=graph.edges.height, names=graph.names.height, seconds_scan=round(t_scan, 3),
                      seconds_graph=round(time.perf_counter() - t1, 3))
    return graph


def _identifier_claims(scan: Scan, graph: WikidataGraph, id_seeds: list[str] | None, seed_property: str,
                       path: Path) -> tuple[pl.DataFrame, dict]:
    """The claims of the kept items (the graph's nodes, its seeds and the items carrying one of
    ``id_seeds``), validated, and what was kept and dropped; ``ValueError`` naming the line
    for the first bad identifier line of a kept item."""
    store = scan.ids
    props = list(IDENTIFIER_PROPERTIES)
    ends = pl.concat([graph.edges["child"], graph.edges["parent"], pl.Series(graph.seed_node_ids, dtype=pl.String)])
    kept = ends.str.strip_prefix("wd:Q").cast(pl.Int64, strict=False).drop_nulls().unique().to_numpy()
    found = np.empty(0, np.int64)
    if id_seeds:
        k, wanted = props.index(seed_property), pl.Series(id_seeds, dtype=pl.String)
        hits = [df.filter((pl.col("prop") == k) & pl.col("value").str.strip_chars().is_in(wanted))
                for df in store.each()]
        found = pl.concat(hits)["q"].unique().to_numpy() if hits else found
    index = NodeIndex(np.union1d(kept, found).astype(np.int64))
    if scan.deferred_ids:
        q = np.array([d[0] for d in scan.deferred_ids], dtype=np.int64)
        bad = [d for d, pos in zip(scan.deferred_ids, index.positions(q)) if pos >= 0]
        if bad:
            _, line, msg = min(bad, key=lambda d: d[1])
            raise ValueError(f"{path}:{line}: {msg}")
    rows = store.select(index.positions)
    raw = rows.select(pl.format("Q{}", "q").alias("item"),
                      pl.Series(props, dtype=pl.String).gather(rows["prop"].cast(pl.Int64)).alias("property"),
                      pl.col("value").alias("raw_value"), pl.lit("truthy").alias("raw_rank"))
    claims, dropped, examples = validate_claim_frame(raw, method="dump")
    seeded = claims.filter(pl.col("property") == seed_property)["value"]
    info = {
        "method": "dump",
        "seed_property": seed_property if id_seeds is not None else None,
        "values_requested": len(id_seeds) if id_seeds is not None else None,
        "values_found": seeded.filter(seeded.is_in(id_seeds)).n_unique() if id_seeds else None,
        "items": claims["qid"].n_unique(),
        "claims": claims.height,
        "claims_by_property": {p: int(n) for p, n in claims.group_by("property").len().sort("property").iter_rows()},
        "claims_by_rank": {r: int(n) for r, n in claims.group_by("rank").len().sort("rank").iter_rows()},
        "dropped": dropped,
        "dropped_examples": examples,
    }
    return claims, info
