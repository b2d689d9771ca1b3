"""The generic label linker: stages, ambiguity, preferences, reporting."""

from __future__ import annotations

import polars as pl
import pytest

from taxoforge.links.linker import link_labels, link_summary

NAMES = pl.DataFrame(
    {
        "node_id": ["wn:n1", "wn:n1", "wn:n2", "wn:n3", "wn:n4", "wn:n5"],
        "name": ["dog", "domestic dog", "Jaguar", "jaguar", "crane", "crane"],
        "kind": ["label", "lemma", "label", "vernacular", "label", "scientific"],
        "lang": ["en"] * 6,
    }
)


def labels(rows):
    return pl.DataFrame(rows, schema={"dataset": pl.String, "label_id": pl.String, "label_text": pl.String,
                                      "external_id": pl.String}, orient="row")


def test_each_stage_and_status():
    lab = labels([
        ("d", "1", "whatever", "n1"),  # external id wins over the text
        ("d", "2", "Jaguar", None),  # exact beats normalised: only wn:n2 is exactly "Jaguar"
        ("d", "3", "Domestic-Dog", None),  # normalised
        ("d", "4", "crane", None),  # two nodes named exactly "crane": ambiguous
        ("d", "5", "unicorn", None),  # nothing
        ("d", "6", "dog", "n999"),  # external id not in the tree → falls back to names
    ])
    out = link_labels(lab, NAMES, external_id_to_node=lambda x: f"wn:{x}")
    got = {r["label_id"]: (r["status"], r["method"], r["node_id"]) for r in out.iter_rows(named=True)}
    assert got == {
        "1": ("linked", "external_id", "wn:n1"),
        "2": ("linked", "exact", "wn:n2"),
        "3": ("linked", "normalised", "wn:n1"),
        "4": ("ambiguous", "exact", None),
        "5": ("unmatched", None, None),
        "6": ("linked", "exact", "wn:n1"),
    }
    amb = out.filter(pl.col("label_id") == "4").row(0, named=True)
    assert amb["candidates"] == ["wn:n4", "wn:n5"] and "several" in amb["detail"]
    assert "no external id" in out.filter(pl.col("label_id") == "5")["detail"][0]
    assert link_summary(out) == {"labels": 6, "linked": 4, "ambiguous": 1, "unmatched": 1,
                                 "by_method": {"exact": 2, "external_id": 1, "normalised": 1}}


def test_preferred_kind_settles_ties():
    out = link_labels(labels([("d", "1", "crane", None)]), NAMES, prefer_kinds=("scientific",))
    assert out.select("status", "node_id").row(0) == ("linked", "wn:n5")


def test_mapping_for_external_ids_and_no_external_column():
    out = link_labels(labels([("d", "1", "x", "Q1")]), NAMES, external_id_to_node={"Q1": "wn:n3"})
    assert out["node_id"].to_list() == ["wn:n3"]
    plain = pl.DataFrame({"dataset": ["d"], "label_id": ["1"], "label_text": ["DOG"]})
    assert link_labels(plain, NAMES)["node_id"].to_list() == ["wn:n1"]


def test_bad_label_sets_are_refused():
    with pytest.raises(ValueError, match="missing column"):
        link_labels(pl.DataFrame({"dataset": ["d"], "label_text": ["x"]}), NAMES)
    with pytest.raises(ValueError, match="duplicate"):
        link_labels(labels([("d", "1", "a", None), ("d", "1", "b", None)]), NAMES)
