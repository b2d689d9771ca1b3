"""Fixtures of the Wikidata tests: the real Wikidata graphs of ``../shared/data/wikidata`` and a
real SPARQL endpoint (Oxigraph over HTTP on 127.0.0.1) serving them."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import polars as pl
import pytest

from tests.taxoforge.sources.wikidata.loopback_sparql import LoopbackSparql, build_store


def _art_edges(d: Path) -> pl.DataFrame:
    df = pl.read_csv(d / "vandycite_art_object_classes_P279_edges.tsv", separator="\t", quote_char=None)
    return df.select(pl.col("child_qid").alias("child"), pl.col("parent_qid").alias("parent"))


def _pub_edges(d: Path) -> pl.DataFrame:
    df = pl.read_csv(d / "wdtaxonomy_publication_types_P279_edges.tsv", separator="\t", quote_char=None)
    return df.select(pl.col("child_qid").alias("child"), pl.col("parent_qid").alias("parent"))


@pytest.fixture(scope="session")
def wikidata_dir(shared_data) -> Path:
    d = shared_data / "wikidata"
    if not (d / "vandycite_art_object_classes_P279_superclasses.ttl").exists():
        pytest.skip(f"Wikidata reference data not found in {d}")
    return d


@pytest.fixture(scope="session")
def art_edges(wikidata_dir) -> pl.DataFrame:
    """The real art-object P279 edges (QIDs, no prefix)."""
    return _art_edges(wikidata_dir)


@pytest.fixture(scope="session")
def pub_edges(wikidata_dir) -> pl.DataFrame:
    """The real publication-type P279 edges (QIDs, no prefix)."""
    return _pub_edges(wikidata_dir)


@pytest.fixture(scope="session")
def all_p279(art_edges, pub_edges) -> nx.DiGraph:
    """child → parent graph of every real P279 edge served by the endpoint."""
    g = nx.DiGraph()
    g.add_edges_from(art_edges.rows())
    g.add_edges_from(pub_edges.rows())
    return g


@pytest.fixture(scope="session")
def instances(art_edges, pub_edges) -> dict[str, dict]:
    """The test's P31 items. Mona Lisa (Q12418, an instance of painting Q3305213) is real;
    the Q99000000x items are made up, each an instance of real leaf classes of the two
    graphs (the first ones in numeric order, so the choice is stable)."""

    def leaves(df: pl.DataFrame) -> list[str]:
        parents = set(df["parent"].to_list())
        return sorted({c for c in df["child"].to_list() if c not in parents}, key=lambda q: int(q[1:]))

    art, pub = leaves(art_edges), leaves(pub_edges)
    out = {"Q12418": {"classes": ["Q3305213"], "label": "Mona Lisa", "aliases": ["La Gioconda", "La Joconde"]}}
    for i, c in enumerate(art[:6] + pub[:6]):
        out[f"Q99000{i + 1:04d}"] = {"classes": [c], "label": f"test item {i + 1}", "aliases": [f"item {i + 1}"]}
    out["Q990000101"] = {"classes": [art[0], pub[0]], "label": "test item with two classes"}
    out["Q990000102"] = {"classes": [], "label": "test item without class"}
    return out


@pytest.fixture(scope="session")
def store(wikidata_dir, instances):
    return build_store(wikidata_dir, instances)


@pytest.fixture(scope="session")
def _server(store):
    with LoopbackSparql(store) as srv:
        yield srv


@pytest.fixture
def endpoint(_server) -> LoopbackSparql:
    """The loopback endpoint, with no pending faults and an empty request log."""
    _server.reset()
    yield _server
    _server.reset()


@pytest.fixture(autouse=True)
def _private_lock_dir(tmp_path_factory, monkeypatch):
    """The SPARQL client's endpoint lock files go to a folder of this test session, not the
    user's cache."""
    monkeypatch.setenv("TAXOFORGE_LOCK_DIR", str(tmp_path_factory.getbasetemp() / "sparql-locks"))
