"""label_set_subtree: a label set resolved to a tree and the subtree spanning it."""

from __future__ import annotations

import polars as pl

from taxoforge.links.label_sets import label_set_subtree
from taxoforge.trees.tables import TreeTables


def _ranked_tree() -> TreeTables:
    rows = [("f", None, "Cambaridae", "family"), ("g1", "f", "Faxonius", "genus"), ("g2", "f", "Procambarus", "genus"),
            ("g3", "f", "Orconectes", "genus"),
            ("s1", "g1", "Faxonius virilis", "species"), ("s2", "g1", "Faxonius limosus", "species"),
            ("s3", "g2", "Procambarus clarkii", "species"), ("s4", "g2", "Procambarus alleni", "species")]
    nodes = pl.DataFrame({"node_id": [r[0] for r in rows], "parent_id": [r[1] for r in rows],
                          "label": [r[2] for r in rows], "rank": [r[3] for r in rows]})
    names = nodes.select("node_id", pl.col("label").alias("name"), pl.lit("scientific").alias("kind"))
    return TreeTables("crayfish", nodes, names, info={"seed": 3})


def test_label_set_subtree_resolves_labels_and_spans_them():
    labels = pl.DataFrame({"label": ["FAXONIUS VIRILIS", "Orconectes limosus", "Procambarus imaginarius", "Astacus",
                                     "faxonius virilis"]})
    sub, links = label_set_subtree(_ranked_tree(), labels, "my_set")
    # genus transfer (Orconectes limosus → Faxonius limosus), a partial genus ground truth, one unmatched
    by_text = {t: (st, m, n) for t, st, m, n in links.select("label_text", "status", "method", "node_id").iter_rows()}
    assert by_text["FAXONIUS VIRILIS"] == ("linked", "normalised", "s1")
    assert by_text["Orconectes limosus"] == ("linked", "genus_transfer", "s2")
    assert by_text["Procambarus imaginarius"] == ("linked", "genus", "g2")
    assert by_text["Astacus"][0] == "unmatched"
    assert sorted(sub.nodes["node_id"]) == ["f", "g1", "g2", "s1", "s2"]  # s3, s4 are not in the label set
    assert set(sub.nodes.filter(pl.col("is_leaf"))["node_id"]) == {"s1", "s2", "g2"}
    assert sub.links.height == links.height == 5  # unresolved labels kept, with what was tried
    assert sub.info["label_set"]["linked"] == 4 and sub.info["label_set"]["partial"] == 1
    assert sub.info["seed"] == 3 and sub.info["parent_taxonomy"] == "crayfish"
    # the labels as written become names of their nodes
    assert ("s2", "Orconectes limosus", "dataset_label") in sub.names.select("node_id", "name", "kind").rows()


def test_label_set_subtree_of_labels_that_all_fail_is_an_error():
    import pytest

    with pytest.raises(ValueError, match="none of the 1 labels resolves"):
        label_set_subtree(_ranked_tree(), pl.DataFrame({"label": ["Homo sapiens"]}), "x")
