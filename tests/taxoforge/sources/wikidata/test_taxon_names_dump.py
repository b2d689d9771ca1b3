"""Wikidata names of iNaturalist taxa from a local truthy N-Triples dump: the fixture graph
serialised as the dump has it, checked against rdflib and against the SPARQL route."""

from __future__ import annotations

import bz2
import gzip

import pyoxigraph as ox
import pytest
import rdflib

from taxoforge.sources.wikidata.taxon_names_dump import read_inat_taxon_names_dump
from tests.taxoforge.sources.wikidata.test_taxon_names import FIXTURE, IDS, WDT, expected_rows


def truthy_rows(ids, langs) -> set[tuple]:
    """What a truthy dump gives, read from the fixture's wdt: triples with rdflib."""
    g = rdflib.Graph().parse(FIXTURE, format="turtle")
    wanted = {str(i) for i in ids}
    out = set()
    for item, inat in g.subject_objects(WDT.P3151):
        if str(inat) not in wanted:
            continue
        node, qid = f"inat:{inat}", str(item).rsplit("/", 1)[1]
        out |= {(node, str(v), "synonym", "la", qid, "P225") for v in g.objects(item, WDT.P225)}
        for v in g.objects(item, WDT.P1843):
            tag = v.language.lower()
            if any(tag == lang or tag.startswith(lang + "-") for lang in langs):
                out.add((node, str(v), "vernacular", tag, qid, "P1843"))
        for syn in g.objects(item, WDT.P1420):
            out |= {(node, str(v), "synonym", "la", qid, "P1420") for v in g.objects(syn, WDT.P225)}
    return out


@pytest.fixture(scope="module")
def ntriples() -> bytes:
    """Every wdt: triple of the fixture as N-Triples, plus a line with escapes and one of
    another subject (a statement node), which the reader skips."""
    store = ox.Store()
    store.load(path=str(FIXTURE), format=ox.RdfFormat.TURTLE)
    lines = [ln for ln in store.dump(format=ox.RdfFormat.N_QUADS).decode().splitlines()
             if "/prop/direct/" in ln]
    lines.append('<http://www.wikidata.org/entity/Q990001001> <http://www.wikidata.org/prop/direct/P1843> '
                 '"p\\u00E9z sol \\"azul\\""@es .')
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("compress", ["plain", "gz", "bz2"])
def test_dump_matches_the_truthy_graph(ntriples, tmp_path, compress):
    data = {"plain": ntriples, "gz": gzip.compress(ntriples), "bz2": bz2.compress(ntriples)}[compress]
    path = tmp_path / f"names.nt{'' if compress == 'plain' else '.' + compress}"
    path.write_bytes(data)
    res = read_inat_taxon_names_dump(path, ids=IDS, langs=["en"])
    assert set(res.names.iter_rows()) == truthy_rows(IDS, ["en"])
    assert res.info["method"] == "dump" and res.info["dropped"] == {}
    es = read_inat_taxon_names_dump(path, langs=["es"])
    assert ("inat:49591", 'péz sol "azul"', "vernacular", "es") in {r[:4] for r in es.names.iter_rows()}


def test_dump_route_differs_from_sparql_only_by_normal_rank_names_hidden_by_a_preferred_one(ntriples, tmp_path):
    path = tmp_path / "names.nt"
    path.write_bytes(ntriples)
    dump = set(read_inat_taxon_names_dump(path, ids=IDS, langs=["en"]).names.iter_rows())
    sparql = expected_rows(IDS, ["en"])
    assert dump <= sparql
    assert {r[1] for r in sparql - dump} == {"bluegill sunfish", "bream"}  # Lepomis: "bluegill" is preferred


def test_every_id_when_none_are_given(ntriples, tmp_path):
    path = tmp_path / "names.nt"
    path.write_bytes(ntriples)
    res = read_inat_taxon_names_dump(path)
    assert res.info["ids_in_file"] == 8 and res.info["ids_requested"] is None


def test_bad_lines_and_inputs_name_the_problem(tmp_path):
    bad = tmp_path / "bad.nt"
    bad.write_text('<http://www.wikidata.org/entity/Q1> <http://www.wikidata.org/prop/direct/P3151> "5" .\n'
                   '<http://www.wikidata.org/entity/Q1> <http://www.wikidata.org/prop/direct/P225> "Pinus\n')
    with pytest.raises(ValueError, match=r"bad\.nt: line 2: not an N-Triples triple"):
        read_inat_taxon_names_dump(bad)
    bad.write_text('<http://www.wikidata.org/entity/Q1> <http://www.wikidata.org/prop/direct/P225> '
                   '<http://www.wikidata.org/entity/Q2> .\n')
    with pytest.raises(ValueError, match="line 1: the object of P225 is not a literal"):
        read_inat_taxon_names_dump(bad)
    with pytest.raises(ValueError, match=r"ids\[0\]"):
        read_inat_taxon_names_dump(bad, ids=["x"])
    with pytest.raises(ValueError, match="language tag"):
        read_inat_taxon_names_dump(bad, langs=["en_GB"])
    with pytest.raises(FileNotFoundError):
        read_inat_taxon_names_dump(tmp_path / "missing.nt")
