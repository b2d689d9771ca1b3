"""Names of other sources carried onto a tree: resolving accepted names (homonyms told apart by
rank and kingdom), the merge rules, and the real Catalogue of Life dataset carried onto the
real iNaturalist tree and used by the linker."""

from __future__ import annotations

import polars as pl
import pytest

from taxoforge.links.external_names import merge_names, names_onto_tree, resolve_accepted_names
from taxoforge.links.resolve import resolve_labels
from taxoforge.links.scientific_names import scientific_key
from taxoforge.sources.coldp import coldp_names, coldp_names_for_tree, coldp_version
from taxoforge.trees.tables import TreeTables, name_kind_counts
from tests.conftest import shared_file

# (node_id, parent_id, scientific name, rank)
TAXA = [
    ("t:root", None, "Life", None),
    ("t:pl", "t:root", "Plantae", "kingdom"),
    ("t:morus_pl", "t:pl", "Morus", "genus"),
    ("t:morus_alba", "t:morus_pl", "Morus alba", "species"),
    ("t:crepis", "t:pl", "Crepis", "genus"),
    ("t:cb", "t:crepis", "Crepis bakeri", "species"),
    ("t:cbb", "t:cb", "Crepis bakeri bakeri", "subspecies"),
    ("t:an", "t:root", "Animalia", "kingdom"),
    ("t:morus_an", "t:an", "Morus", "genus"),
    ("t:morus_bassanus", "t:morus_an", "Morus bassanus", "species"),
    ("t:xus", "t:an", "Xus", "genus"),
    ("t:xus_sub", "t:xus", "Xus", "subgenus"),
    ("t:hom1", "t:an", "Homonyma", "genus"),
    ("t:hom2", "t:an", "Homonyma", "genus"),
]


@pytest.fixture
def tree() -> TreeTables:
    nodes = pl.DataFrame([(n, p, s, r) for n, p, s, r in TAXA], schema=["node_id", "parent_id", "label", "rank"],
                         orient="row")
    names = nodes.select("node_id", pl.col("label").alias("name"), pl.lit("scientific").alias("kind"),
                         pl.lit("la").alias("lang"))
    return TreeTables("toy", nodes, names=names, info={"source_versions": {"toy": "1"}})


def test_accepted_names_resolve_by_key_then_rank_then_kingdom(tree):
    acc = pl.DataFrame([
        ("Crepis bakeri subsp. bakeri", "subspecies", "Plantae"),  # rank marker ignored
        ("MORUS", "genus", "Plantae"),  # homonym: the kingdom decides
        ("Morus", "genus", None),  # no kingdom given: both remain
        ("Xus", "subgenus", "Animalia"),  # same kingdom: the rank decides
        ("Xus", "species", "Animalia"),  # no candidate has the rank: all kept, still ambiguous
        ("Homonyma", "genus", "Animalia"),  # true homonyms in one kingdom
        ("Nonexistens", "genus", "Animalia"),
    ], schema=["accepted_name", "accepted_rank", "accepted_kingdom"], orient="row")
    res = resolve_accepted_names(acc, tree)
    got = {(r["accepted_name"], r["accepted_rank"], r["accepted_kingdom"]): (r["status"], r["node_id"], r["candidates"])
           for r in res.iter_rows(named=True)}
    assert got == {
        ("Crepis bakeri subsp. bakeri", "subspecies", "Plantae"): ("resolved", "t:cbb", ["t:cbb"]),
        ("MORUS", "genus", "Plantae"): ("resolved", "t:morus_pl", ["t:morus_pl"]),
        ("Morus", "genus", None): ("ambiguous", None, ["t:morus_an", "t:morus_pl"]),
        ("Xus", "subgenus", "Animalia"): ("resolved", "t:xus_sub", ["t:xus_sub"]),
        ("Xus", "species", "Animalia"): ("ambiguous", None, ["t:xus", "t:xus_sub"]),
        ("Homonyma", "genus", "Animalia"): ("ambiguous", None, ["t:hom1", "t:hom2"]),
        ("Nonexistens", "genus", "Animalia"): ("not_in_tree", None, []),
    }
    # only the name is required
    only = resolve_accepted_names(pl.DataFrame({"accepted_name": ["Crepis bakeri", "Morus"]}), tree)
    assert only.select("status", "node_id").rows() == [("resolved", "t:cb"), ("ambiguous", None)]
    with pytest.raises(ValueError, match="accepted_name"):
        resolve_accepted_names(pl.DataFrame({"name": ["x"]}), tree)


def test_names_onto_tree_carries_only_resolved_names_of_the_chosen_kinds(tree):
    keyed = pl.DataFrame([
        ("Morus", "genus", "Plantae", "mulberry", "vernacular", "en"),
        ("Morus", "genus", "Animalia", "gannet", "vernacular", "en"),
        ("Morus", "genus", None, "Morus (ambiguous)", "vernacular", "en"),
        ("Morus bassanus", "species", "Animalia", "Sula bassana", "synonym", "la"),
        ("Morus bassanus", "species", "Animalia", "Morus bassana", "misapplied", "la"),
        ("Nonexistens", "genus", "Animalia", "nothing", "vernacular", "en"),
    ], schema=["accepted_name", "accepted_rank", "accepted_kingdom", "name", "kind", "lang"], orient="row")
    carried = names_onto_tree(keyed, tree)
    assert set(carried.names.iter_rows()) == {("t:morus_pl", "mulberry", "vernacular", "en"),
                                              ("t:morus_an", "gannet", "vernacular", "en"),
                                              ("t:morus_bassanus", "Sula bassana", "synonym", "la")}
    assert carried.counts["accepted_resolved"] == 3 and carried.counts["accepted_ambiguous"] == 1
    assert carried.counts["accepted_not_in_tree"] == 1
    assert carried.counts["placed_by_kind"] == {"synonym": 1, "vernacular": 2}
    with_misapplied = names_onto_tree(keyed, tree, kinds=("misapplied",))
    assert with_misapplied.names.rows() == [("t:morus_bassanus", "Morus bassana", "misapplied", "la")]


def test_merge_rules(tree):
    incoming = pl.DataFrame([
        ("t:morus_bassanus", "Sula bassana", "synonym", "la"),  # added
        ("t:morus_bassanus", "  Sula   bassana ", "synonym", "la"),  # the same after whitespace: duplicate
        ("t:morus_bassanus", "northern gannet", "vernacular", "en"),  # added
        ("t:morus_bassanus", "Northern Gannet", "vernacular", "EN-GB"),  # tag folded to lower case, added
        ("t:morus_bassanus", "Basstölpel", "vernacular", "german!"),  # not a language tag
        ("t:morus_alba", "Morus alba", "synonym", "la"),  # the node's own name
        ("t:morus_alba", "MORUS  ALBA", "synonym", "la"),  # the node's own name, by key
        ("t:morus_alba", "Morus bassanus", "synonym", "la"),  # accepted for another node
        ("t:morus_alba", "Morus alba", "scientific", "la"),  # the tree has it already
        ("t:cbb", "Crepis bakeri var. bakeri", "synonym", "la"),  # own name up to the rank marker
        ("t:nowhere", "Ghost", "vernacular", "en"),  # not a node
        ("t:cb", "   ", "vernacular", "en"),  # empty
        ("t:cb", "Baker's hawksbeard", None, "en"),  # no kind
        ("t:cb", "Baker's hawksbeard", "vernacular", None),  # no language: allowed
    ], schema=["node_id", "name", "kind", "lang"], orient="row")
    merged = merge_names(tree, incoming, source="test", source_version={"release": "x"}, name="toy_named")
    added = merged.names.join(tree.names, on=["node_id", "name", "kind", "lang"], how="anti", nulls_equal=True)
    # each added name says where it came from; the tree's own names have no source
    assert set(added.iter_rows()) == {
        ("t:morus_bassanus", "Sula bassana", "synonym", "la", "test"),
        ("t:morus_bassanus", "northern gannet", "vernacular", "en", "test"),
        ("t:morus_bassanus", "Northern Gannet", "vernacular", "en-gb", "test"),
        ("t:cb", "Baker's hawksbeard", "vernacular", None, "test"),
    }
    assert merged.names.join(added, on=["node_id", "name", "kind"], how="anti")["source"].is_null().all()
    summary = merged.info["name_sources"]["test"]
    assert summary["rows_in"] == incoming.height
    assert summary["added"] == {"synonym": 1, "vernacular": 3}
    assert summary["dropped"] == {"accepted_elsewhere": 1, "bad_lang": 1, "duplicate": 2, "empty_name": 1,
                                  "no_kind": 1, "same_as_scientific_name": 3, "unknown_node": 1}
    assert summary["examples_dropped"]["accepted_elsewhere"] == [
        "t:morus_alba synonym 'Morus bassanus' (accepted for t:morus_bassanus)"]
    assert merged.info["source_versions"] == {"toy": "1", "test": {"release": "x"}}
    assert merged.name == "toy_named"
    assert merged.nodes.equals(tree.nodes) and merged.report.equals(tree.report) and merged.links.equals(tree.links)
    # merging the same rows again adds nothing
    again = merge_names(merged, incoming, source="test")
    assert again.names.equals(merged.names)
    assert sum(again.info["name_sources"]["test"]["added"].values()) == 0
    counts = {r[0]: r[1:] for r in name_kind_counts(merged).iter_rows()}
    assert counts == {"scientific": (len(TAXA), len(TAXA), 1), "synonym": (1, 1, 1), "vernacular": (3, 2, 3)}


def test_merge_needs_the_key_columns(tree):
    with pytest.raises(ValueError, match="from wd: missing column"):
        merge_names(tree, pl.DataFrame({"node_id": ["t:cb"], "name": ["x"]}), source="wd")


# --------------------------------------------------------------------------- real data


@pytest.fixture(scope="module")
def inat():
    from taxoforge.sources.inaturalist import inat_tree

    return inat_tree()


@pytest.mark.slow
def test_pterophoroidea_synonyms_carried_onto_the_inaturalist_tree(inat):
    src = shared_file("coldp", "pterophoroidea_world_catalogue")
    keyed = coldp_names(src).filter(pl.col("kind").is_in(["synonym", "vernacular"]))
    carried = coldp_names_for_tree(src, inat)
    res = carried.resolution
    # every distinct accepted name is accounted for, once
    assert res.height == keyed.select("accepted_name", "accepted_rank", "accepted_kingdom").unique().height
    assert res["status"].value_counts().sort("status")["count"].sum() == res.height
    assert carried.counts["accepted_resolved"] > res.height / 2  # most moths of the catalogue are in iNaturalist
    # a resolved accepted name is the scientific name of its node, up to the key
    sci = inat.names.filter(pl.col("kind") == "scientific").select("node_id", pl.col("name").alias("inat_name"))
    ok = res.filter(pl.col("status") == "resolved").join(sci, on="node_id")
    assert ok.height == carried.counts["accepted_resolved"]
    assert all(scientific_key(a) == scientific_key(b) for a, b in ok.select("accepted_name", "inat_name").iter_rows())

    merged = merge_names(inat, carried.names, source="pterophoroidea",
                         source_version=coldp_version(src))
    assert merged.info["source_versions"]["pterophoroidea"]["version"] == "1.1.25.304"
    added = merged.names.filter(pl.col("kind") == "synonym")
    assert added.height == merged.info["name_sources"]["pterophoroidea"]["added"]["synonym"] > 0
    # no carried synonym is the scientific name of any iNaturalist node
    sci_keys = {scientific_key(n) for n in sci.filter(pl.col("inat_name").str.contains(
        "|".join(sorted({n.split()[0] for n in added["name"]})))).get_column("inat_name")}
    assert not ({scientific_key(n) for n in added["name"]} & sci_keys)
    # the dropped "accepted elsewhere" synonyms really are accepted by iNaturalist for other nodes
    for ex in merged.info["name_sources"]["pterophoroidea"]["examples_dropped"].get("accepted_elsewhere", []):
        name = ex.split("'")[1]
        holder = ex.rsplit("accepted for ", 1)[1].rstrip(")")
        assert sci.filter(pl.col("node_id") == holder)["inat_name"].to_list() == [name]

    # the linker uses them: a synonym label links to the iNaturalist node of its accepted name
    single = added.filter(pl.col("name").is_unique()).head(40)
    labels = single.select(pl.lit("ptero").alias("dataset"), pl.col("name").alias("label_id"),
                           pl.col("name").alias("label_text"))
    before = resolve_labels(labels, inat.names, inat.nodes, partial=False, epithet_variants=False, genus_transfer=False)
    after = resolve_labels(labels, merged.names, merged.nodes, partial=False, epithet_variants=False, genus_transfer=False)
    assert before.filter(pl.col("status") == "linked").height == 0
    got = dict(after.filter(pl.col("method") == "synonym").select("label_text", "node_id").iter_rows())
    assert got == dict(single.select("name", "node_id").iter_rows())


@pytest.mark.slow
def test_spec_example_vernacular_name_reaches_the_inaturalist_tree(inat):
    """Baker's hawksbeard (ColDP spec example, vernacular of Crepis bakeri) lands on the
    iNaturalist node named Crepis bakeri."""
    src = shared_file("coldp", "coldp_spec_example")
    carried = coldp_names_for_tree(src, inat)
    node = inat.names.filter((pl.col("kind") == "scientific") & (pl.col("name") == "Crepis bakeri"))["node_id"]
    assert node.len() == 1
    assert ("Baker's hawksbeard", "vernacular", "en") in set(
        carried.names.filter(pl.col("node_id") == node[0]).select("name", "kind", "lang").iter_rows())
    merged = merge_names(inat, carried.names, source="coldp-spec")
    assert set(name_kind_counts(merged)["kind"]) >= {"scientific", "vernacular"}
