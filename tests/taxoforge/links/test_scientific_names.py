"""Scientific-name linking: the VLM4Bio and BioCLIP species names against the offline
iNaturalist tree, synonyms (ColDP) for the renamed Notropis shiners, trinomials, case,
fallbacks, common names and ambiguity."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import taxoforge.sources as sources_pkg
from taxoforge.links.scientific_names import (
    bioclip_labels,
    epithet_stem,
    link_scientific_names,
    scientific_key,
    unmatched_report,
    vlm4bio_labels,
)
from taxoforge.sources.coldp import coldp_synonyms
from taxoforge.sources.inat21 import inat21_tree
from taxoforge.sources.inaturalist import inat_tree
from tests.conftest import shared_file

NOTROPIS = Path(sources_pkg.__file__).parent / "data" / "notropis_synonyms"
INAT21_FIXTURE = Path(__file__).parents[1] / "sources" / "fixtures" / "inat21_categories.json"


@pytest.fixture(scope="module")
def inat():
    return inat_tree()


@pytest.fixture(scope="module")
def labels() -> pl.DataFrame:
    v = vlm4bio_labels(shared_file("vlm4bio"))
    b = bioclip_labels(shared_file("bioclip", "rare_species_400_lineage_common_names.csv"))
    return pl.concat([v, b], how="diagonal")


@pytest.fixture(scope="module")
def links(inat, labels):
    return link_scientific_names(labels, inat.names, inat.nodes, synonyms=coldp_synonyms(NOTROPIS),
                                 synonym_source="Notropis synonyms")


def _raw_vlm4bio_names() -> set[str]:
    """Every target-class and option of the result files, read independently of the module."""
    import re

    out = set()
    for f in shared_file("vlm4bio", "results").rglob("*.jsonl"):
        for line in f.read_text().splitlines():
            r = json.loads(line)
            if r.get("target-class"):
                out.add(r["target-class"])
            opts = re.search(r"Options:(.*?)(?:\.\s*\n|\.\s*Write|\.\s*$|\n)", r["question"], re.S).group(1)
            out.update(x.strip() for x in re.split(r",?\s*[A-D]\)\s*", opts) if x.strip())
    return out


def test_keys_and_stems():
    assert scientific_key("Esox Americanus") == scientific_key("esox americanus") == "esox americanus"
    assert scientific_key("Crepis bakeri subsp. bakeri") == "crepis bakeri bakeri"
    assert scientific_key("Quercus robur var. robur f. fastigiata") == "quercus robur robur fastigiata"
    assert epithet_stem("buccatus") == epithet_stem("buccata")
    assert epithet_stem("ab") == "ab"


def test_vlm4bio_label_set_is_complete(labels):
    v = labels.filter(pl.col("dataset").str.starts_with("vlm4bio"))
    assert set(v["label_text"]) == _raw_vlm4bio_names()
    assert set(v["dataset"]) == {"vlm4bio-fish", "vlm4bio-bird", "vlm4bio-butterfly"}


def test_every_label_gets_one_row_with_a_status(links, labels):
    assert links.height == labels.height
    assert set(links["status"]) <= {"linked", "ambiguous", "unmatched"}
    linked = links.filter(pl.col("status") == "linked")
    assert linked["node_id"].null_count() == 0
    assert links.filter(pl.col("status") != "linked")["node_id"].null_count() == links.filter(
        pl.col("status") != "linked").height


def _with_nodes(links: pl.DataFrame, inat) -> pl.DataFrame:
    return links.join(inat.nodes.select("node_id", pl.col("label").alias("node_label"), "rank"),
                      on="node_id", how="left")


def test_vlm4bio_species_all_link_to_inaturalist_with_synonyms(links, inat):
    v = _with_nodes(links.filter(pl.col("dataset").str.starts_with("vlm4bio")), inat)
    assert v.filter(pl.col("status") != "linked").height == 0
    # butterflies are subspecies (trinomials), linked at subspecies rank under their own name
    bf = v.filter(pl.col("dataset") == "vlm4bio-butterfly")
    assert bf.height == 10 and set(bf["rank"]) == {"subspecies"}
    assert (bf["node_label"] == bf["label_text"]).all()
    # the Notropis shiners moved to other genera: only the synonyms recover them
    notropis = v.filter(pl.col("label_text").str.starts_with("Notropis "))
    in_inat = notropis.filter(pl.col("label_text").is_in(inat.names["name"].implode()))
    syn = v.filter(pl.col("method") == "synonym")
    assert set(syn["label_text"]) == set(notropis["label_text"]) - set(in_inat["label_text"])
    assert syn.height == 11
    got = dict(syn.select("label_text", "node_label").iter_rows())
    assert got["Notropis hudsonius"] == "Hudsonius hudsonius"
    assert got["Notropis buccatus"] == "Ericymba buccata"
    assert set(syn["rank"]) == {"species"}
    # everything else by its own name (fish and birds at species rank)
    rest = v.filter(pl.col("method") != "synonym")
    assert set(rest["method"]) == {"exact"}
    assert (rest["node_label"] == rest["label_text"]).all()


def test_without_synonyms_the_notropis_fall_back_to_the_genus(inat, labels):
    v = labels.filter(pl.col("dataset") == "vlm4bio-fish")
    links = link_scientific_names(v, inat.names, inat.nodes)
    fb = links.filter(pl.col("method") == "genus_fallback")
    assert fb.height == 11 and set(fb["label_text"].str.split(" ").list.first()) == {"Notropis"}
    assert fb["detail"].str.contains("genus-level fallback").all()
    genus = inat.nodes.filter(pl.col("node_id").is_in(fb["node_id"].unique().implode()))
    assert genus.select("label", "rank").unique().rows() == [("Notropis", "genus")]


def test_bioclip_species_link_and_unmatched_ones_have_reasons(links, inat):
    b = links.filter(pl.col("dataset") == "bioclip-rare-species")
    assert b.height == 400
    assert b.filter((pl.col("status") == "linked") & (pl.col("method") == "exact")).height >= 390
    rep = unmatched_report(links)
    assert rep.height == links.filter(pl.col("status") != "linked").height
    assert rep["detail"].null_count() == 0
    genera = set(inat.nodes.filter(pl.col("rank") == "genus")["label"])
    for row in rep.iter_rows(named=True):
        genus = row["label_text"].split()[0]
        assert genus not in genera and f"genus {genus} is not in the tree" in row["detail"]
    # names iNaturalist has changed since: Strigops habroptila → habroptilus (gender), others to the genus
    m = dict(b.select("label_text", "method").iter_rows())
    assert m["Strigops habroptila"] == "epithet_variant"
    fb = b.filter(pl.col("method") == "genus_fallback")
    assert set(fb["label_text"].str.split(" ").list.first()) <= genera
    assert set(_with_nodes(fb, inat)["rank"]) == {"genus"}


def test_case_insensitive_and_trinomial_forms(inat):
    labels = pl.DataFrame({"dataset": "t", "label_id": ["1", "2", "3", "4"],
                           "label_text": ["Esox Americanus", "ESOX AMERICANUS VERMICULATUS",
                                          "Esox americanus subsp. americanus", "Heliconius erato notabilisx"]})
    links = link_scientific_names(labels, inat.names, inat.nodes)
    got = {r["label_id"]: (r["method"], r["node_label"]) for r in _with_nodes(links, inat).iter_rows(named=True)}
    assert got["1"] == ("normalised", "Esox americanus")
    assert got["2"] == ("normalised", "Esox americanus vermiculatus")
    assert got["3"] == ("normalised", "Esox americanus americanus")
    assert got["4"] == ("species_fallback", "Heliconius erato")


def test_common_names_and_ambiguity_on_the_inat21_tree():
    t = inat21_tree(INAT21_FIXTURE)
    labels = pl.DataFrame({"dataset": "t", "label_id": ["1", "2", "3", "4", "5"],
                           "label_text": ["northern pike", "Morus", "Morus alba", "Esox papyraceus", "Gannet"],
                           "common_name": [None, None, None, None, "Northern Gannet"]})
    links = link_scientific_names(labels, t.names, t.nodes)
    r = {x["label_id"]: x for x in links.iter_rows(named=True)}
    lab = dict(t.nodes.select("node_id", "label").iter_rows())
    assert r["1"]["status"] == "linked" and lab[r["1"]["node_id"]] == "Esox lucius"
    assert r["2"]["status"] == "ambiguous" and len(r["2"]["candidates"]) == 2  # mulberry and gannet genera
    assert lab[r["3"]["node_id"]] == "Morus alba"
    assert r["4"]["method"] == "genus_fallback" and lab[r["4"]["node_id"]] == "Esox"
    assert r["5"]["method"] == "vernacular" and lab[r["5"]["node_id"]] == "Morus bassanus"
