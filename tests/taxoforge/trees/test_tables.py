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
    assert t.info == {"source": "toy", "build": build.stats, "root_id": "r", "seed": 0, "cycle_policy": "dfs_back_edges"}


# ---- provenance: info.json beside the tables -------------------------------
def test_write_and_read_keep_the_provenance(tmp_path):
    b = build_tree(pl.DataFrame({"child": ["a", "b", "b"], "parent": ["r", "r", "a"]}), source="x",
                   tie_seed=3, cycle_policy="drop_abstract")
    t = TreeTables.from_build("toy", b, info={"source_versions": {"toy": {"release": "2024-06", "sha256": "ab"}}})
    assert (t.info["seed"], t.info["cycle_policy"]) == (3, "drop_abstract")
    t.info["snapshot"] = "toy@0123456789ab"  # where it was loaded from: not provenance
    t.write(tmp_path / "a")
    back = TreeTables.read(tmp_path / "a")
    assert back.info == {k: v for k, v in t.info.items() if k != "snapshot"}
    assert back.info["source_versions"] == {"toy": {"release": "2024-06", "sha256": "ab"}}
    # deterministic bytes, and nothing but the tables and info.json left behind
    back.write(tmp_path / "b")
    assert (tmp_path / "a" / "info.json").read_bytes() == (tmp_path / "b" / "info.json").read_bytes()
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == [
        "info.json", "links.parquet", "names.parquet", "nodes.parquet", "report.parquet"]


def test_a_folder_without_info_reads_with_empty_info_and_a_bad_one_names_the_file(tmp_path):
    t = TreeTables("toy", pl.DataFrame({"node_id": ["r"], "parent_id": [None], "depth": [0]}))
    t.write(tmp_path / "t", info=False)
    assert not (tmp_path / "t" / "info.json").exists()
    assert TreeTables.read(tmp_path / "t").info == {}
    (tmp_path / "t" / "info.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match=r"t/info\.json: expected a JSON object"):
        TreeTables.read(tmp_path / "t")
    (tmp_path / "t" / "info.json").write_text("{oops")
    with pytest.raises(ValueError, match=r"t/info\.json: not valid JSON"):
        TreeTables.read(tmp_path / "t")


def test_the_readme_quotes_the_one_list_of_report_kinds():
    """The README's report table names every kind of REPORT_KINDS, in its order, and no other;
    every kind the library's code writes into a report is in the list."""
    import ast
    import re
    from pathlib import Path

    import taxoforge
    from taxoforge.trees.tables import REPORT_KINDS

    root = Path(taxoforge.__file__).parent
    readme = (root.parent / "README.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith("| `kind` | string | `excluded_node`"))
    assert re.findall(r"`([a-z_]+)`", row.split("|")[3].split("REPORT_KINDS")[0]) == list(REPORT_KINDS)
    written = set()
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in
                    ("report_frame", "_report_frame", "edges") and node.args
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                written.add(node.args[0].value)
    assert {"unplaced_seed", "dangling_parent", "not_longest", "cycle_back_edge"} <= written
    assert written <= set(REPORT_KINDS), sorted(written - set(REPORT_KINDS))


@pytest.mark.parametrize("seed", range(4))
def test_in_sorted_order_answers_as_a_sort_would_on_nulls_nan_bools_and_strings(seed):
    """A table is taken as canonical without a sort only where the sort would leave it as it
    is: checked against polars' own sort on thousands of small random tables, half of them
    sorted first (nulls, NaN, ±0.0, infinities, booleans, non-ASCII and empty strings)."""
    import random

    from taxoforge.trees.tables import in_sorted_order

    rng = random.Random(seed)
    dtypes = {"s": pl.String, "i": pl.Int64, "f": pl.Float64, "b": pl.Boolean}
    values = {"s": ["a", "b", "B", "é", ""], "i": [-1, 0, 1], "f": [0.0, -0.0, 1.5, float("nan"), float("inf")],
              "b": [True, False]}
    seen = {True: 0, False: 0}
    for _ in range(800):
        kinds, height = [rng.choice("sifb") for _ in range(3)], rng.randint(2, 6)
        df = pl.DataFrame({f"c{j}": [None if rng.random() < 0.2 else rng.choice(values[k])
                                     for _ in range(height)] for j, k in enumerate(kinds)},
                          schema={f"c{j}": dtypes[k] for j, k in enumerate(kinds)})
        if rng.random() < 0.5:
            df = df.sort(df.columns, nulls_last=True, maintain_order=True)
        sorted_as_is = df.equals(df.sort(df.columns, nulls_last=True, maintain_order=True))
        assert in_sorted_order(df, df.columns) == sorted_as_is, df
        seen[sorted_as_is] += 1
    assert min(seen.values()) > 100  # both answers were asked for
