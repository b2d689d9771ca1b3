"""ranked_tree_tables (the shared last step of the biology sources), ranked_tree_facts and species_facts."""

from __future__ import annotations

import polars as pl

from taxoforge.sources.ranked import rank_counts, ranked_tree_facts, ranked_tree_tables, report_frame, species_facts

TAXA = pl.DataFrame({
    "node_id": ["k", "g", "s1", "s2", "s3", "loose"],
    "label": ["Animalia", "Esox", "Esox lucius", "Esox niger", "Esox stray", "Incertae sedis"],
    "rank": ["kingdom", "genus", "species", "species", "species", "species"],
})
EDGES = pl.DataFrame({"child": ["g", "s1", "s2", "s3"], "parent": ["k", "g", "g", "k"]})
NAMES = TAXA.select("node_id", pl.col("label").alias("name"), pl.lit("scientific").alias("kind"),
                    pl.lit("la").alias("lang"))


def test_tree_with_labels_ranks_names_and_the_sources_report():
    own = report_frame("dangling_parent", ["x"], ["y"], "parent is not a taxon")
    t = ranked_tree_tables("toy", source="toy", edges=EDGES, taxa=TAXA, names=NAMES, report=own,
                           root_label="Life", info={"file": "toy.tsv"})
    rows = {r["node_id"]: r for r in t.nodes.iter_rows(named=True)}
    # "loose" has no edge: it and the kingdom hang under the synthetic root
    assert rows["toy:root"]["label"] == "Life" and rows["toy:root"]["parent_id"] is None
    assert rows["loose"]["parent_id"] == rows["k"]["parent_id"] == "toy:root"
    assert {v: (r["label"], r["rank"]) for v, r in rows.items() if v != "toy:root"} == {
        v: (lab, rank) for v, lab, rank in TAXA.rows()}
    assert [v for v, r in rows.items() if r["is_leaf"]] == sorted(["loose", "s1", "s2", "s3"])
    assert t.report.filter(pl.col("kind") == "dangling_parent").select("child_id", "parent_id").rows() == [("x", "y")]
    assert t.report.filter(pl.col("kind") == "synthetic_root").height == 2
    assert t.info["file"] == "toy.tsv" and t.info["root_id"] == "toy:root"
    assert t.names.drop("source").equals(NAMES.sort("node_id", "kind", "name", "lang"))
    assert t.names["source"].is_null().all()  # the tree's own names


def test_ranked_tree_facts():
    t = ranked_tree_tables("toy", source="toy", edges=EDGES, taxa=TAXA, names=NAMES)
    facts = ranked_tree_facts(t.nodes)
    assert facts["roots"] == 1 and facts["orphans"] == 0
    assert facts["species"] == 4 and facts["species_not_under_genus"] == 2  # s3 under the kingdom, loose under root
    # named, not bare ids: the species, its id and rank, and what it sits under
    assert facts["species_examples"] == ["Incertae sedis (loose, species) under root",
                                         "Esox stray (s3, species) under Animalia (kingdom)"]
    assert facts["leaves"] == 4 and facts["max_depth"] == 3
    assert rank_counts(t.nodes) == {"species": 4, "(none)": 1, "genus": 1, "kingdom": 1}
    # the species facts alone (what the biology assets report), without the structure's
    assert species_facts(t.nodes) == {k: facts[k] for k in ("species", "species_not_under_genus", "species_examples")}


def test_report_rows_of_a_kind_outside_the_one_list_are_refused():
    import pytest

    from taxoforge.sources.ranked import report_frame

    rows = report_frame("dangling_parent", ["col:1", "col:2"], ["col:9", "col:9"], "parentID is not a taxon")
    assert rows["kind"].to_list() == ["dangling_parent"] * 2 and rows["parent_id"].to_list() == ["col:9"] * 2
    with pytest.raises(ValueError, match="report kind 'dangling_parnet' is not one of .*REPORT_KINDS"):
        report_frame("dangling_parnet", ["col:1"])
