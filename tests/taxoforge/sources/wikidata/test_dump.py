"""Offline extraction from dump files: N-Triples and Turtle, plain, gzip and bz2, streamed."""

from __future__ import annotations

import bz2
import gzip
import random
import tracemalloc

import polars as pl
import pyoxigraph as ox
import pytest

from taxoforge.sources.wikidata import dump as dump_mod
from taxoforge.sources.wikidata.dump import dump_format, read_dump
from taxoforge.sources.wikidata.extract import extract_from_seeds
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
    monkeypatch.setattr(dump_mod, "_CHUNK", 1 << 20)
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
    monkeypatch.setattr(dump_mod, "_CHUNK", 97)
    got = read_dump(dump_files["nt.gz"])
    assert got.edges.equals(want.edges) and got.names.equals(want.names)
