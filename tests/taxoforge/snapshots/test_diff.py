"""Diffs between versions: a changed edge gives a new version and a diff showing exactly it."""

from __future__ import annotations

import polars as pl

from taxoforge.snapshots import SnapshotStore, diff_tables, format_diff, open_taxonomy
from taxoforge.trees.tables import TreeTables
from tests.taxoforge.snapshots.helpers import make_tree, move_edge


def _single_parent_leaf(edges: pl.DataFrame, tree: TreeTables) -> tuple[str, str, str]:
    """A leaf with one parent edge, its parent, and another node to move it under."""
    n_par = edges.group_by("child").len()
    leaves = tree.nodes.filter(pl.col("is_leaf")).join(n_par.filter(pl.col("len") == 1),
                                                       left_on="node_id", right_on="child")
    row = leaves.sort("node_id").row(0, named=True)
    other = tree.nodes.filter((pl.col("node_id") != row["node_id"]) & (pl.col("node_id") != row["parent_id"])
                              & ~pl.col("is_leaf")).sort("node_id")["node_id"][0]
    return row["node_id"], row["parent_id"], other


def test_change_one_edge_gives_new_version_and_exact_diff(tmp_path, store_kind, edges, tree):
    store, reader = store_kind.writer, store_kind.reader
    old = store.publish(tree)
    child, parent, new_parent = _single_parent_leaf(edges, tree)
    new = store.publish(make_tree(move_edge(edges, child, new_parent)))
    assert new.status == "published"
    assert new.version != old.version
    cache = tmp_path / "cache"
    d = diff_tables(open_taxonomy(old.ref, store=reader, cache=cache).tables, open_taxonomy(new.ref, store=reader, cache=cache).tables)
    label = dict(tree.nodes.select("node_id", "label").iter_rows())
    assert d["moved"] == [{"node_id": child, "label": label[child], "old_parent": parent, "new_parent": new_parent,
                           "old_parent_label": label[parent], "new_parent_label": label[new_parent]}]
    assert {k: v for k, v in d["counts"].items() if v} == {"moved": 1}
    assert d["a"] == old.ref and d["b"] == new.ref
    assert not d["identical"]
    text = format_diff(d)
    # labels beside ids
    assert (f"> {child} {label[child]!r}  parent {parent} {label[parent]!r} → {new_parent} {label[new_parent]!r}"
            in text)
    assert "0 added, 0 removed, 0 renamed, 1 moved" in text
    # the store's catalogue keeps the same summary between the consecutive versions
    [first, second] = reader.versions("demo")
    assert "diff" not in first
    assert second["diff"]["from"] == old.version
    assert {k: v for k, v in second["diff"]["counts"].items() if v} == {"moved": 1}
    assert second["diff"]["examples"]["moved"] == d["moved"]


def test_versions_published_out_of_order_get_the_right_neighbour(tmp_path, edges, tree):
    store = SnapshotStore(tmp_path / "store")
    child, _, new_parent = _single_parent_leaf(edges, tree)
    late = store.publish(make_tree(move_edge(edges, child, new_parent)), created="2024-03-01T00:00:00Z")
    early = store.publish(tree, created="2024-01-01T00:00:00Z")  # belongs before ``late``
    [a, b] = store.versions("demo")
    assert (a["version"], b["version"]) == (early.version, late.version)
    assert "diff" not in a and b["diff"]["from"] == early.version and b["diff"]["counts"]["moved"] == 1


def test_identical_versions_have_an_empty_diff(tree):
    d = diff_tables(tree, TreeTables(tree.name, **{t: df.reverse() for t, df in tree.tables().items()}))
    assert d["identical"] and not any(d["counts"].values())
    assert "no differences" in format_diff(d)


def test_added_removed_renamed_and_links():
    a = TreeTables("t", pl.DataFrame({"node_id": ["r", "x", "y"], "parent_id": [None, "r", "r"], "depth": [0, 1, 1],
                                      "label": ["root", "ex", "why"]}),
                   names=pl.DataFrame({"node_id": ["x"], "name": ["ex"], "kind": ["label"], "lang": ["en"]}),
                   links=pl.DataFrame({"dataset": ["d", "d"], "label_id": ["1", "2"], "label_text": ["ex", "why"],
                                       "status": ["linked", "linked"], "method": ["exact", "exact"],
                                       "node_id": ["x", "y"]}))
    b = TreeTables("t", pl.DataFrame({"node_id": ["r", "x", "z"], "parent_id": [None, "r", "x"], "depth": [0, 1, 2],
                                      "label": ["root", "EX", "zed"]}),
                   names=pl.DataFrame({"node_id": ["x"], "name": ["EX"], "kind": ["label"], "lang": ["en"]}),
                   links=pl.DataFrame({"dataset": ["d", "d", "d"], "label_id": ["1", "2", "3"],
                                       "label_text": ["ex", "why", "zed"],
                                       "status": ["linked", "unmatched", "linked"], "method": ["exact", None, "exact"],
                                       "node_id": ["x", None, "z"]}))
    d = diff_tables(a, b)
    assert d["added"] == [{"node_id": "z", "parent_id": "x", "label": "zed", "parent_label": "EX"}]
    assert d["removed"] == [{"node_id": "y", "parent_id": "r", "label": "why", "parent_label": "root"}]
    assert d["renamed"] == [{"node_id": "x", "old_label": "ex", "new_label": "EX"}]
    assert d["moved"] == []
    assert [r["name"] for r in d["names_added"]] == ["EX"] and [r["name"] for r in d["names_removed"]] == ["ex"]
    assert [r["label_id"] for r in d["links_added"]] == ["3"]
    assert d["links_removed"] == []
    assert len(d["links_changed"]) == 1
    ch = d["links_changed"][0]
    assert (ch["label_id"], ch["old_status"], ch["new_status"], ch["old_node"], ch["new_node"]) == \
        ("2", "linked", "unmatched", "y", None)
    assert (ch["old_node_label"], ch["new_node_label"]) == ("why", None)  # y is gone from B: A's label
    assert [(r["node_id"], r["label"]) for r in d["names_removed"]] == [("x", "EX")]
    assert [(r["node_id"], r["node_label"]) for r in d["links_added"]] == [("z", "zed")]
    text = format_diff(d, limit=1)
    assert "1 added, 1 removed, 1 renamed, 0 moved" in text
    assert "+ z 'zed'  (parent x 'EX')" in text
    assert "~ d:2  'why' linked y 'why' → unmatched -" in text


def test_labels_in_the_text_diff_cannot_move_the_terminal():
    """A hostile label (an escape sequence, a line break) is shown escaped, never printed raw."""
    a = TreeTables("t", pl.DataFrame({"node_id": ["r", "x"], "parent_id": [None, "r"], "depth": [0, 1],
                                      "label": ["root", "x"]}))
    b = TreeTables("t", pl.DataFrame({"node_id": ["r", "x", "e"], "parent_id": [None, "r", "r"], "depth": [0, 1, 1],
                                      "label": ["root", "x", "\x1b[2J\nfake line"]}))
    text = format_diff(diff_tables(a, b))
    assert "\x1b" not in text and "\\x1b[2J\\nfake line" in text and len(text.splitlines()) == 8
