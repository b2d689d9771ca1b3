"""The tree tables: leaf flags, and TreeTables.from_build, the one way every source makes its tables."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from taxoforge.trees.build import build_tree
from taxoforge.trees.tables import REPORT_SCHEMA, TreeTables, with_is_leaf
from taxoforge.trees.taxonomy import Taxonomy


def random_nodes(n: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    parent = [None] + [f"n{int(rng.integers(0, i))}" for i in range(1, n)]
    return pl.DataFrame({"node_id": [f"n{i}" for i in range(n)], "parent_id": parent})


@pytest.mark.parametrize("n,seed", [(1, 0), (2, 1), (50, 2), (2000, 3)])
def test_leaf_column_agrees_with_the_taxonomy_array(n, seed):
    nodes = with_is_leaf(random_nodes(n, seed))
    tax = Taxonomy(nodes)
    got = dict(zip(nodes["node_id"], nodes["is_leaf"]))
    assert got == dict(zip(tax.ids.tolist(), tax.is_leaf.tolist()))
    assert got == {v: not tax.children(v) for v in tax.ids.tolist()}


def test_leaf_column_is_recomputed_not_kept():
    nodes = pl.DataFrame({"node_id": ["r", "a"], "parent_id": [None, "r"], "is_leaf": [True, False]})
    assert with_is_leaf(nodes)["is_leaf"].to_list() == [False, True]


EDGES = pl.DataFrame({"child": ["a", "b", "c", "c"], "parent": ["r", "r", "a", "b"]})
NAMES = pl.DataFrame({"node_id": ["a", "a", "c", "gone"], "name": ["alias of a", "Alpha", "gamma", "x"],
                      "kind": ["alias", "label", "alias", "label"], "lang": ["en"] * 4})


def test_labels_come_from_names_label_first_else_first_name_else_id_or_root_label():
    t = TreeTables.from_build("t", build_tree(EDGES, source="s"), NAMES)
    labels = dict(zip(t.nodes["node_id"], t.nodes["label"]))
    assert labels == {"a": "Alpha", "b": "b", "c": "gamma", "r": "root"}  # an unnamed root: root_label
    assert "gone" not in t.names["node_id"].to_list()  # names of nodes outside the tree are dropped


def test_given_labels_and_ranks_win_and_a_synthetic_root_gets_root_label():
    build = build_tree(EDGES, source="s", extra_nodes=["lonely"])
    assert build.root_id == "s:root"
    labels = pl.DataFrame({"node_id": ["a", "b", "r"], "label": ["A", "B", "R"]})
    ranks = pl.DataFrame({"node_id": ["a", "c"], "rank": ["genus", "species"]})
    t = TreeTables.from_build("t", build, NAMES, labels=labels, ranks=ranks, root_label="Life")
    rows = {r["node_id"]: r for r in t.nodes.iter_rows(named=True)}
    assert rows["s:root"]["label"] == "Life" and rows["s:root"]["rank"] is None
    assert rows["a"]["label"] == "A" and rows["a"]["rank"] == "genus"  # not the names' "Alpha"
    assert rows["c"]["label"] == "c" and rows["c"]["rank"] == "species"  # no given label: its id
    assert rows["lonely"]["parent_id"] == "s:root" and rows["lonely"]["is_leaf"]
    assert not rows["r"]["is_leaf"] and rows["c"]["is_leaf"]


def test_source_report_rows_join_the_build_report_in_canonical_order():
    build = build_tree(EDGES, source="s")
    own = pl.DataFrame({"kind": ["dangling_parent", "aaa_first"], "child_id": ["x", "y"], "detail": ["d1", "d2"]})
    t = TreeTables.from_build("t", build, report=own, info={"source": "toy"})
    assert t.report.schema == pl.Schema(REPORT_SCHEMA)
    assert t.report.height == build.report.height + 2
    assert t.report.equals(t.report.sort(["kind", "child_id", "parent_id"], nulls_last=True, maintain_order=True))
    assert t.report.filter(pl.col("kind") == "dangling_parent")["detail"].to_list() == ["d1"]
    assert t.info == {"source": "toy", "build": build.stats, "root_id": "r"}
