"""Offline extraction from dump files: N-Triples and Turtle, plain, gzip and bz2, streamed."""

from __future__ import annotations

import bz2
import gzip
import random
import tracemalloc

import polars as pl
import pyoxigraph as ox
import pytest

from taxoforge.sources.wikidata import dump_blocks
from taxoforge.sources.wikidata.dump import dump_format, read_dump
from taxoforge.sources.wikidata.extract import extract_from_seeds
from taxoforge.sources.wikidata.graph import WikidataGraph
from taxoforge.sources.wikidata.sparql import SparqlClient

WD = "http://www.wikidata.org/entity/"
P279 = "<http://www.wikidata.org/prop/direct/P279>"
P31 = "<http://www.wikidata.org/prop/direct/P31>"


@pytest.fixture(scope="session")
def nt_bytes(store) -> bytes:
    """Everything the test endpoint serves, as N-Triples (as a filtered truthy dump would be)."""
    return store.dump(format=ox.RdfFormat.N_TRIPLES, from_graph=ox.DefaultGraph())


@pytest.fixture(scope="session")
def dump_files(tmp_path_factory, nt_bytes, store) -> dict:
    d = tmp_path_factory.mktemp("dumps")
    files = {"nt": d / "wd.nt", "nt.gz": d / "wd.nt.gz", "nt.bz2": d / "wd.nt.bz2", "ttl.gz": d / "wd.ttl.gz"}
    files["nt"].write_bytes(nt_bytes)
    files["nt.gz"].write_bytes(gzip.compress(nt_bytes))
    files["nt.bz2"].write_bytes(bz2.compress(nt_bytes))
    ttl = store.dump(format=ox.RdfFormat.TURTLE, from_graph=ox.DefaultGraph(),
                     prefixes={"wd": WD, "wdt": "http://www.wikidata.org/prop/direct/"})
    files["ttl.gz"].write_bytes(gzip.compress(ttl))
    return files


def test_whole_subclass_graph(dump_files, all_p279):
    g = read_dump(dump_files["nt"])
    got = {(c, p) for c, p, r in g.edges.iter_rows()}
    want = {(f"wd:{c}", f"wd:{p}") for c, p in all_p279.edges() if c != "Q35120"}
    assert got == want
    assert set(g.edges["relation"]) == {"P279"}  # no seeds: P31 is not read
    assert g.info["p31_edges_read"] == 0


@pytest.mark.parametrize("kind", ["nt", "nt.gz", "nt.bz2", "ttl.gz"])
def test_dump_equals_sparql_extraction(kind, dump_files, endpoint, instances):
    """The same seeds give the same graph offline as over SPARQL, whatever the file format."""
    seeds = sorted(instances)
    online = extract_from_seeds(SparqlClient(endpoint=endpoint.url, contact="t@t.invalid", min_interval=0), seeds)
    offline = read_dump(dump_files[kind], seed_qids=seeds)
    assert offline.edges.equals(online.edges)
    assert offline.names.equals(online.names)
    assert offline.seed_node_ids == online.seed_node_ids
    assert offline.info["format"] == kind.split(".")[0]


def test_turtle_reference_file(wikidata_dir, art_edges):
    """The shared Turtle file (prefixes, ';' continuations) reads directly."""
    g = read_dump(wikidata_dir / "vandycite_art_object_classes_P279_superclasses.ttl")
    want = {(f"wd:{c}", f"wd:{p}") for c, p in art_edges.rows() if c != "Q35120"}
    assert {(c, p) for c, p, _ in g.edges.iter_rows()} == want
    assert g.names.height == 668 and set(g.names["kind"]) == {"label"}


def test_escapes_languages_and_non_items(tmp_path):
    lines = [
        f'<{WD}Q2> {P279} <{WD}Q1> .',
        f'<{WD}Q3>\t{P279}\t<{WD}Q2>\t.',  # tabs are whitespace too
        f'<{WD}Q3> {P279} _:b0 .',  # "unknown value"
        f'<{WD}Q3> {P279} <http://www.wikidata.org/entity/L5> .',  # not an item
        f'<{WD}Q2> <http://www.w3.org/2000/01/rdf-schema#label> "say \\"hi\\" \\u00E9\\U0001F600 a\\\\b"@en .',
        f'<{WD}Q2> <http://www.w3.org/2000/01/rdf-schema#label> "Sag hallo"@de .',
        f'<{WD}Q3> <http://www.w3.org/2004/02/skos/core#altLabel> "three"@en .',
        f'<{WD}Q99> <http://www.w3.org/2000/01/rdf-schema#label> "not in the graph"@en .',
        "# a comment",
        "",
    ]
    p = tmp_path / "x.nt"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    g = read_dump(p)
    assert g.edges.select("child", "parent").rows() == [("wd:Q2", "wd:Q1"), ("wd:Q3", "wd:Q2")]
    assert g.info["non_item_edges"] == 2
    assert g.names.rows() == [("wd:Q2", 'say "hi" é😀 a\\b', "label", "en"), ("wd:Q3", "three", "alias", "en")]
    assert read_dump(p, lang="de").names["name"].to_list() == ["Sag hallo"]
    assert read_dump(p, names=False).names.height == 0


def test_bad_lines_name_file_and_line(tmp_path):
    p = tmp_path / "bad.nt"
    p.write_text(f'<{WD}Q2> {P279} <{WD}Q1> .\n<{WD}Q3> {P279} <{WD}Q1>\n')
    with pytest.raises(ValueError, match=r"bad\.nt:2: expected an N-Triples statement"):
        read_dump(p)
    p.write_text(f'<{WD}Q2> {P279} "Q1" .\n')
    with pytest.raises(ValueError, match=r"bad\.nt:1: expected an entity IRI"):
        read_dump(p)
    t = tmp_path / "bad.ttl"
    t.write_text("@prefix wd: <http://www.wikidata.org/entity/> .\nwd:Q1 wd:P279 \n")
    with pytest.raises(ValueError, match="bad.ttl: Turtle syntax error"):
        read_dump(t)
    with pytest.raises(ValueError, match="format"):
        dump_format(tmp_path / "x.json")
    with pytest.raises(FileNotFoundError):
        read_dump(tmp_path / "missing.nt")
    with pytest.raises(ValueError, match=r"seed_qids\[0\]"):
        read_dump(tmp_path / "bad.nt", seed_qids=["Q1>"])


def _synthetic_dump(path, n_edges: int, seed: int = 0) -> None:
    """A random acyclic subclass-of graph in the truthy dump's N-Triples shape, with labels."""
    rng = random.Random(seed)
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as f:
        n_nodes = n_edges // 2
        for i in range(2, n_nodes + 2):
            f.write(f'<{WD}Q{i}> <http://www.w3.org/2000/01/rdf-schema#label> "class {i}"@en .\n')
            for _ in range(2):
                f.write(f"<{WD}Q{i}> {P279} <{WD}Q{rng.randrange(1, i)}> .\n")


def _peak_read(path) -> tuple[int, object]:
    tracemalloc.start()
    g = read_dump(path, names=False)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak, g


@pytest.mark.timeout(120)
def test_memory_stays_bounded(tmp_path, monkeypatch):
    """Streaming: Python memory grows with the edges kept (int arrays, 16 bytes an edge plus
    array slack), not with the file. With 1 MB chunks, going from 50k to 200k edges may add
    at most 64 bytes per extra edge, while the file grows by ~26 MB of text."""
    monkeypatch.setattr(dump_blocks, "CHUNK", 1 << 20)
    small, big = tmp_path / "small.nt.gz", tmp_path / "big.nt.gz"
    _synthetic_dump(small, 50_000)
    _synthetic_dump(big, 200_000)
    peak_small, _ = _peak_read(small)
    peak_big, g = _peak_read(big)
    grown_text = len(gzip.open(big).read()) - len(gzip.open(small).read())
    assert g.info["p279_edges_read"] == 200_000 and g.edges.height <= 200_000
    assert peak_big - peak_small < 64 * 150_000 < grown_text / 2, (peak_small, peak_big, grown_text)
    assert peak_big < 32 * (1 << 20), peak_big
    assert g.edges.filter(pl.col("child") == "wd:Q2")["parent"].to_list() == ["wd:Q1"]


def test_chunk_boundaries_do_not_matter(tmp_path, monkeypatch, dump_files):
    """Tiny chunks (lines split across reads) give the same graph as one big chunk."""
    want = read_dump(dump_files["nt.gz"])
    monkeypatch.setattr(dump_blocks, "CHUNK", 97)
    got = read_dump(dump_files["nt.gz"])
    assert got.edges.equals(want.edges) and got.names.equals(want.names)


# ---------------------------------------------------------------- the one-pass reader: bad input and edge cases
LABEL = "<http://www.w3.org/2000/01/rdf-schema#label>"
ALIAS = "<http://www.w3.org/2004/02/skos/core#altLabel>"


def _write(tmp_path, name: str, lines: list[str] | bytes) -> object:
    p = tmp_path / name
    p.write_bytes(lines if isinstance(lines, bytes) else ("\n".join(lines) + "\n").encode("utf-8"))
    return p


def test_qids_beyond_64_bits_name_file_and_line(tmp_path):
    """A QID too long for int64 gave a bare OverflowError; now the line is named."""
    huge = "1" * 25
    p = _write(tmp_path, "huge.nt", [f"<{WD}Q2> {P279} <{WD}Q1> .", f"<{WD}Q{huge}> {P279} <{WD}Q1> ."])
    with pytest.raises(ValueError, match=r"huge\.nt:2: the QID Q1{25}… has more than 18 digits"):
        read_dump(p)
    p = _write(tmp_path, "huge.nt", [f"<{WD}Q2> {P279} <{WD}Q{huge}> ."])
    with pytest.raises(ValueError, match=r"huge\.nt:1: the QID"):
        read_dump(p, names=False)
    p = _write(tmp_path, "huge31.nt", [f"<{WD}Q2> {P279} <{WD}Q1> .", f"<{WD}Q7> {P31} <{WD}Q{huge}> .",
                                       f"<{WD}Q{huge}> {P31} <{WD}Q2> .", f'<{WD}Q{huge}> {LABEL} "x"@en .'])
    with pytest.raises(ValueError, match=r"huge31\.nt:2: the QID"):
        read_dump(p, seed_qids=["Q7"])
    g = read_dump(p, seed_qids=["Q8"])  # lines of other entities (and names of nodes not kept) are not used
    assert g.edges.height == 0 and g.info["seeds_without_class"] == 1
    with pytest.raises(ValueError, match=r"seed_qids: Q1+… has more than 18 digits"):
        read_dump(p, seed_qids=["Q" + huge])
    t = _write(tmp_path, "huge.ttl", [f"<{WD}Q{huge}> {P279} <{WD}Q1> ."])
    with pytest.raises(ValueError, match=r"huge\.ttl: the QID"):
        read_dump(t)


def test_an_18_digit_qid_is_read(tmp_path):
    """18 digits still fit: such a graph is sorted by WikidataGraph itself (the fast path needs ≤ 17)."""
    big = "9" * 18
    p = _write(tmp_path, "big.nt", [f"<{WD}Q{big}> {P279} <{WD}Q10> .", f"<{WD}Q10> {P279} <{WD}Q2> .",
                                    f'<{WD}Q{big}> {LABEL} "big"@en .'])
    g = read_dump(p)
    assert g.edges.rows() == [("wd:Q10", "wd:Q2", "P279"), (f"wd:Q{big}", "wd:Q10", "P279")]
    assert g.names.rows() == [(f"wd:Q{big}", "big", "label", "en")]


def test_bad_unicode_escapes_name_file_and_line(tmp_path):
    """An out-of-range \\U escape aborted without a line number. Names of nodes that
    are not in the graph are not checked (they are not used)."""
    lines = [f"<{WD}Q2> {P279} <{WD}Q1> .", f'<{WD}Q2> {LABEL} "fine \\u00E9"@en .',
             f'<{WD}Q99> {LABEL} "not kept \\U00110000"@en .', f'<{WD}Q1> {ALIAS} "bad \\U00110000"@en .']
    p = _write(tmp_path, "esc.nt", lines)
    with pytest.raises(ValueError, match=r"esc\.nt:4: the escape \\U00110000 is not a Unicode character"):
        read_dump(p)
    assert read_dump(p, names=False).edges.height == 1
    assert read_dump(p, lang="de").names.height == 0  # another language: not used
    p = _write(tmp_path, "sur.nt", lines[:2] + [f'<{WD}Q1> {LABEL} "half \\uD800 pair"@en .'])
    with pytest.raises(ValueError, match=r"sur\.nt:3: the escape \\uD800"):
        read_dump(p)
    p = _write(tmp_path, "unk.nt", lines[:2] + [f'<{WD}Q1> {LABEL} "what \\q"@en .'])
    with pytest.raises(ValueError, match=r"unk\.nt:3: unknown escape \\q"):
        read_dump(p)


def test_names_that_are_not_utf8_name_file_and_line(tmp_path):
    data = (f"<{WD}Q2> {P279} <{WD}Q1> .\n".encode() + f'<{WD}Q1> {LABEL} "Linn'.encode() + b"\xe9" + b'"@en .\n')
    p = _write(tmp_path, "latin1.nt", data)
    with pytest.raises(ValueError, match=r"latin1\.nt:2: the rdfs:label is not UTF-8"):
        read_dump(p)


def test_nul_bytes_are_binary_data_named_with_the_line(tmp_path):
    """A NUL byte anywhere — inside a P279 line's IRI, a P31 line that is not used, a label of a
    node that is not kept — is binary data, not N-Triples text: the read fails naming the line
    (a NUL inside an IRI was once counted as a non-item edge)."""
    for bad in (f"<{WD}Q3> {P279} <{WD}Q1\x00> .", f"<{WD}Q3\x00> {P279} <{WD}Q1> .",
                f"<{WD}Q3> {P279} <http://www.wikidata.org/ent\x00ity/Q1> .", f"<{WD}Q7> {P31} <{WD}Q2\x00> .",
                f'<{WD}Q99> {LABEL} "a\x00b"@fr .'):
        p = _write(tmp_path, "nul.nt", [f"<{WD}Q2> {P279} <{WD}Q1> .", bad, f"<{WD}Q4> {P279} <{WD}Q1> ."])
        with pytest.raises(ValueError, match=r"nul\.nt:2: binary data: a NUL byte at byte \d+ of the line"):
            read_dump(p)
    p = _write(tmp_path, "junk.nt", [f"<{WD}Q2> {P279} <{WD}Q1> ."] * 3 + [])
    p.write_bytes(p.read_bytes() + bytes(range(256)) * 4)  # a binary tail
    with pytest.raises(ValueError, match=r"junk\.nt:4: binary data"):
        read_dump(p)


def test_trailing_comments_and_compact_whitespace_are_n_triples(tmp_path):
    """A valid trailing '# comment' was rejected. N-Triples also allows no space between
    terms, tabs, CRLF line ends; a comment line that quotes a predicate is a comment."""
    lines = [
        f"<{WD}Q2> {P279} <{WD}Q1> . # subclass, says the comment",
        f"<{WD}Q3>{P279}<{WD}Q2>.",
        f"<{WD}Q4>\t{P279}\t<{WD}Q2> .\r",
        f"  # <{WD}Q9> {P279} <{WD}Q8> .",
        f"<{WD}Q7> {P31} <{WD}Q4> .#",
        f'<{WD}Q4> {LABEL} "four"@en . # a label',
        f'<{WD}Q4> {LABEL} "quatre"@FR .',
        f'<{WD}Q3> {ALIAS} "# not a comment"@en .',
    ]
    p = _write(tmp_path, "c.nt", lines)
    g = read_dump(p, seed_qids=["Q7"], lang="en,fr")
    assert g.edges.rows() == [("wd:Q2", "wd:Q1", "P279"), ("wd:Q4", "wd:Q2", "P279"), ("wd:Q7", "wd:Q4", "P31")]
    g = read_dump(p, lang=["en", "fr"])
    assert set(g.edges.select("child", "parent").rows()) == {("wd:Q2", "wd:Q1"), ("wd:Q3", "wd:Q2"), ("wd:Q4", "wd:Q2")}
    assert g.names.rows() == [("wd:Q3", "# not a comment", "alias", "en"), ("wd:Q4", "four", "label", "en"),
                              ("wd:Q4", "quatre", "label", "fr")]
    assert g.info["non_item_edges"] == 0 and g.info["lines"] == len(lines)
    with pytest.raises(ValueError, match="lang: 'en_GB' is not a language tag"):
        read_dump(p, lang="en_GB")


def test_truncated_compressed_dumps_name_the_file(tmp_path, nt_bytes):
    body = nt_bytes * 20 + bytes(random.Random(1).randbytes(200_000)).hex().encode()
    for name, data in (("cut.nt.gz", gzip.compress(body)), ("cut.nt.bz2", bz2.compress(body))):
        for end in (len(data) * 2 // 3, len(data) - 3):  # the parallel decompressors stop quietly at some cuts
            p = _write(tmp_path, name, data[:end])
            pattern = (rf"{name.replace('.', '[.]')}: cannot decompress the (gzip|bzip2) data after [\d,]+ bytes of "
                       r"output: the file is truncated or corrupt")
            with pytest.raises(ValueError, match=pattern):
                read_dump(p)


def _reference_graph(path, lang: str) -> tuple[set, set]:
    """Whole-graph edges and names of an N-Triples file, through pyoxigraph's parser (independent of the scanner)."""
    edges, names = set(), set()
    ent = "http://www.wikidata.org/entity/Q"
    with open(path, "rb") as f:
        for t in ox.parse(input=f, format=ox.RdfFormat.N_TRIPLES):
            s, p, o = t.subject.value, t.predicate.value, t.object
            if p.endswith("prop/direct/P279") and s.startswith(ent) and isinstance(o, ox.NamedNode) \
                    and o.value.startswith(ent) and s != ent + "35120":
                edges.add((s.replace(ent, "wd:Q"), o.value.replace(ent, "wd:Q")))
            elif p.endswith(("rdf-schema#label", "core#altLabel")) and s.startswith(ent) and o.language == lang:
                names.add((s.replace(ent, "wd:Q"), o.value, "label" if p.endswith("label") else "alias"))
    nodes = {n for e in edges for n in e}
    return edges, {n for n in names if n[0] in nodes}


def test_generated_dump_matches_an_independent_parser_and_the_normal_form(tmp_path, monkeypatch):
    """A Wikidata-shaped file (aliases, other languages, escapes, non-items, lines grouped by subject)
    with repeated lines: the reader's tables equal pyoxigraph's reading of the file, and are in
    exactly the form WikidataGraph's own normalisation gives (built sorted on integer keys)."""
    from benchmarks.generate import wikidata_like_ntriples

    p = tmp_path / "gen.nt"
    info = wikidata_like_ntriples(p, 0.002, seed=5, alias_share=0.4, other_lang_share=0.3)
    with p.open("ab") as f:  # repeated lines, and ids of every length
        f.write(b"".join(p.read_bytes().splitlines(keepends=True)[:50]))
        f.write(f"<{WD}Q1> {P279} <{WD}Q10> .\n<{WD}Q100000000000> {P279} <{WD}Q1> .\n".encode())
        f.write(f'<{WD}Q1> {ALIAS} "b"@en .\n<{WD}Q1> {ALIAS} "a"@en .\n<{WD}Q1> {ALIAS} "a"@en .\n'.encode())
    monkeypatch.setattr(dump_blocks, "CHUNK", 1 << 16)  # many blocks
    g = read_dump(p, workers=3)
    want_edges, want_names = _reference_graph(p, "en")
    assert set(g.edges.select("child", "parent").rows()) == want_edges
    assert set(g.names.select("node_id", "name", "kind").rows()) == want_names
    assert g.info["non_item_edges"] == info["non_item_edges"]
    renormalised = WikidataGraph(edges=g.edges.sample(fraction=1, shuffle=True, seed=1),
                                 names=g.names.sample(fraction=1, shuffle=True, seed=1))
    assert g.edges.equals(renormalised.edges) and g.names.equals(renormalised.names)
    # with seeds and two languages, through the same normal-form check
    gs = read_dump(p, seed_qids=info["seeds"][:40], lang="de,en-gb,en")
    assert set(gs.names["lang"]) == {"de", "en-gb", "en"}
    again = WikidataGraph(edges=gs.edges.reverse(), names=gs.names.reverse())
    assert gs.edges.equals(again.edges) and gs.names.equals(again.names)
    assert gs.edges.filter(pl.col("relation") == "P31")["child"].n_unique() == 40


def test_spilled_names_and_worker_counts_give_the_same_graph(tmp_path, dump_files, monkeypatch):
    want = read_dump(dump_files["nt"])
    monkeypatch.setattr(dump_blocks, "CHUNK", 2048)
    for kw in ({"workers": 1}, {"workers": 4, "spill_bytes": 1}):
        got = read_dump(dump_files["nt.gz"], **kw)
        assert got.edges.equals(want.edges) and got.names.equals(want.names), kw
    assert got.info["names_spilled_files"] > 1


# ---------------------------------------------------------------- every dropped edge with a reason
def test_every_edge_read_is_kept_or_dropped_with_a_reason(tmp_path):
    """Non-item edges, the root's superclasses and repeated statements are rows of the graph's
    ``dropped`` table (the tree's report gets them), counted by reason; with seeds the edges
    outside the closure are counted. Kept + dropped = read, for every reason."""
    from taxoforge.sources.wikidata.tree import build_wikidata_tree

    lines = [
        f"<{WD}Q2> {P279} <{WD}Q1> .", f"<{WD}Q3> {P279} <{WD}Q2> .", f"<{WD}Q3> {P279} <{WD}Q2> .",  # repeated
        f"<{WD}Q3> {P279} _:b0 .", f"<{WD}Q4> {P279} <{WD}L5> .", f"<{WD}P31> {P279} <{WD}Q2> .",  # non-items
        f"<{WD}Q35120> {P279} <{WD}Q1> .",  # the root's superclass
        f"<{WD}Q8> {P279} <{WD}Q9> .",  # outside the seed's closure (below)
        f"<{WD}Q7> {P31} <{WD}Q3> .", f"<{WD}Q7> {P31} <{WD}L9> .",
    ]
    p = _write(tmp_path, "drops.nt", lines)
    g = read_dump(p)
    d = g.dropped
    assert d.columns == ["kind", "child_id", "parent_id", "detail"]
    rows = {(k, c, par) for k, c, par in d.select("kind", "child_id", "parent_id").iter_rows()}
    assert rows == {("non_item_edge", "wd:Q3", "_:b0"), ("non_item_edge", "wd:Q4", "wd:L5"),
                    ("non_item_edge", "wd:P31", "wd:Q2"), ("root_superclass", "wd:Q35120", "wd:Q1"),
                    ("repeated_statement", "wd:Q3", "wd:Q2")}
    assert d.filter(pl.col("child_id") == "wd:Q3", pl.col("kind") == "non_item_edge")["detail"][0] == \
        "P279: the object is a blank node (an unknown value)"
    assert g.info["dropped_edges"] == {"non_item_edge": 3, "repeated_statement": 1, "root_superclass": 1}
    read = g.info["p279_edges_read"] + g.info["non_item_edges"]
    assert read == sum(1 for x in lines if P279 in x)
    assert g.edges.height + sum(g.info["dropped_edges"].values()) == read
    # with a seed: its non-item P31 edge is reported; Q8 → Q9 is outside the closure (counted)
    gs = read_dump(p, seed_qids=["Q7"])
    assert gs.info["dropped_edges"] == {"non_item_edge": 4, "not_above_a_seed": 1, "repeated_statement": 1,
                                        "root_superclass": 1}
    assert ("wd:Q7", "wd:L9") in set(gs.dropped.select("child_id", "parent_id").iter_rows())
    report = build_wikidata_tree(gs).report
    assert set(report["kind"]) >= {"non_item_edge", "root_superclass", "repeated_statement"}


# ---------------------------------------------------------------- damaged and foreign files
def test_gzip_trailer_crc_and_length_are_checked(tmp_path, nt_bytes):
    good = gzip.compress(nt_bytes)
    for name, cut in (("crc.nt.gz", -8), ("size.nt.gz", -2)):  # the CRC-32, then the length (ISIZE)
        bad = bytearray(good)
        bad[cut] ^= 0xFF
        p = _write(tmp_path, name, bytes(bad))
        with pytest.raises(ValueError, match=rf"{name.replace('.', '[.]')}: cannot decompress the gzip data .*"
                                             r"(CRC32|size)"):
            read_dump(p)
    stored = bytearray(gzip.compress(nt_bytes, compresslevel=0))  # a stored block: a flipped byte still inflates
    stored[len(stored) // 2] ^= 0x01
    with pytest.raises(ValueError, match="CRC32"):
        read_dump(_write(tmp_path, "flip.nt.gz", bytes(stored)))
    p = _write(tmp_path, "two.nt.gz", gzip.compress(nt_bytes[:1000]) + gzip.compress(nt_bytes[1000:]))
    assert read_dump(p).edges.equals(read_dump(_write(tmp_path, "one.nt", nt_bytes)).edges)  # members are fine


def test_a_cut_last_line_is_named_and_a_whole_one_is_read(tmp_path):
    whole = f"<{WD}Q2> {P279} <{WD}Q1> .\n<{WD}Q3> {P279} <{WD}Q1> ."  # no end of line, but a statement
    assert read_dump(_write(tmp_path, "whole.nt", whole.encode())).edges.height == 2
    for tail in (f"<{WD}Q3> {P279} <{WD}Q", f'<{WD}Q3> {LABEL} "cut in the mid', f"<{WD}Q3> <http://schema.org/d"):
        p = _write(tmp_path, "cut.nt", f"<{WD}Q2> {P279} <{WD}Q1> .\n{tail}".encode())
        with pytest.raises(ValueError, match=r"cut\.nt:2: "):
            read_dump(p)
        gz = _write(tmp_path, "cut.nt.gz", gzip.compress(p.read_bytes()))  # a whole gzip of a cut text
        with pytest.raises(ValueError, match=r"cut\.nt\.gz:2: "):
            read_dump(gz)
    p = _write(tmp_path, "cut2.nt", f"<{WD}Q2> {P279} <{WD}Q1> .\n<{WD}Q3> <http://schema.org/d".encode())
    with pytest.raises(ValueError, match=r"cut2\.nt:2: the last line is cut"):
        read_dump(p)


def test_foreign_and_binary_files_are_refused_with_a_reason(tmp_path, monkeypatch):
    import lzma

    p = _write(tmp_path, "dump.nt", lzma.compress(b"<a> <b> <c> .\n"))
    with pytest.raises(ValueError, match=r"dump\.nt: the file is xz-compressed"):
        read_dump(p)
    monkeypatch.setattr(dump_blocks, "MAX_LINE", 1 << 12)
    monkeypatch.setattr(dump_blocks, "CHUNK", 1 << 10)
    long = _write(tmp_path, "long.nt", f"<{WD}Q2> {P279} <{WD}Q1> .\n".encode() + b"x" * 10_000 + b"\n")
    with pytest.raises(ValueError, match=r"long\.nt:2: no end of line within"):
        read_dump(long)
    with pytest.raises(ValueError, match=r"long\.nt\.gz:2: no end of line within"):
        read_dump(_write(tmp_path, "long.nt.gz", gzip.compress(long.read_bytes())))
