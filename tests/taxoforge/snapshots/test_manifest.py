"""Deterministic snapshots: same inputs, seed and code → byte-identical files, same id."""

from __future__ import annotations

import json

import polars as pl
import pytest

from taxoforge.snapshots.manifest import (
    SnapshotError,
    build_snapshot,
    canonical_table,
    code_version,
    content_id,
    read_manifest,
    table_content_hash,
)
from taxoforge.trees.tables import SCHEMA_VERSION
from tests.taxoforge.snapshots.helpers import file_bytes, make_tree, random_edges


def test_rebuild_twice_gives_identical_bytes_and_version(tmp_path, edges):
    # two complete rebuilds from the raw edges: graph → tree → snapshot
    m1 = build_snapshot(make_tree(edges), tmp_path / "a", created="2024-01-01T00:00:00Z")
    m2 = build_snapshot(make_tree(edges.sample(fraction=1.0, shuffle=True, seed=3)), tmp_path / "b",
                        created="2024-01-01T00:00:00Z")
    assert m1["version"] == m2["version"]
    assert m1["content_sha256"] == m2["content_sha256"]
    a, b = file_bytes(tmp_path / "a"), file_bytes(tmp_path / "b")
    assert set(a) == {"nodes.parquet", "names.parquet", "links.parquet", "report.parquet"}
    assert a == b
    # with a pinned creation time the manifest is byte-identical too
    assert (tmp_path / "a" / "manifest.json").read_bytes() == (tmp_path / "b" / "manifest.json").read_bytes()


def test_version_ignores_creation_time_and_code_version(tmp_path, tree, monkeypatch):
    m1 = build_snapshot(tree, tmp_path / "a", created="2024-01-01T00:00:00Z")
    monkeypatch.setenv("TAXOFORGE_CODE_VERSION", "some-other-commit")
    m2 = build_snapshot(tree, tmp_path / "b", created="2025-06-30T12:00:00Z")
    assert m2["code_version"]["git_commit"] == "some-other-commit"
    assert m1["version"] == m2["version"]
    assert file_bytes(tmp_path / "a") == file_bytes(tmp_path / "b")


def test_source_date_epoch_pins_creation_time(tmp_path, tree, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    m = build_snapshot(tree, tmp_path / "a")
    assert m["created"] == "2023-11-14T22:13:20Z"


def test_row_order_does_not_change_the_id(tree):
    shuffled = type(tree)(name=tree.name, **{t: df.sample(fraction=1.0, shuffle=True, seed=1)
                                            for t, df in tree.tables().items()})
    assert content_id(shuffled) == content_id(tree)


def test_seed_and_edges_change_the_id(edges, tree):
    v = content_id(tree)[0]
    assert content_id(make_tree(edges, seed=1))[0] != v  # other tie decisions
    assert content_id(make_tree(random_edges(seed=8)))[0] != v


def test_manifest_has_everything_spec_5_lists(tmp_path, tree):
    m = build_snapshot(tree, tmp_path / "s", extra={"note": "x"})
    assert m == read_manifest(tmp_path / "s")
    assert m["taxonomy"] == "demo"
    assert m["schema_version"] == SCHEMA_VERSION
    assert m["seed"] == 0
    assert m["source_versions"] == {"toy": "1.0", "query_time": "2024-06-01"}
    assert m["code_version"]["package"]
    from importlib.metadata import version

    # the installed versions of what shaped the tables, recorded (not hashed)
    assert {k: m["packages"][k] for k in ("polars", "numpy", "nltk")} == {k: version(k) for k in ("polars", "numpy", "nltk")}
    assert m["row_counts"] == {t: df.height for t, df in tree.tables().items()}
    assert len(m["version"]) == 12 and m["content_sha256"].startswith(m["version"])
    import hashlib

    for fname, meta in m["files"].items():
        data = (tmp_path / "s" / fname).read_bytes()
        assert meta == {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    # the written tables read back equal to the input
    back = pl.read_parquet(tmp_path / "s" / "nodes.parquet")
    assert back.sort("node_id").equals(tree.nodes.sort("node_id"))
    assert json.loads((tmp_path / "s" / "manifest.json").read_text())["extra"] == {"note": "x"}


def test_code_version_is_stable_within_a_checkout():
    assert code_version() == code_version()


def test_bad_names_and_labels_are_refused(tmp_path, tree):
    with pytest.raises(SnapshotError, match="invalid taxonomy name"):
        build_snapshot(tree, tmp_path / "s", name="../evil")
    with pytest.raises(SnapshotError, match="invalid version"):
        build_snapshot(tree, tmp_path / "s", version="a/b")


def test_read_manifest_errors_name_the_file(tmp_path):
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(SnapshotError, match="manifest.json: not a valid manifest"):
        read_manifest(tmp_path)
    (tmp_path / "manifest.json").write_text('{"format": "taxoforge-snapshot"}')
    with pytest.raises(SnapshotError, match="lacks field"):
        read_manifest(tmp_path)


def test_the_trees_info_goes_into_the_manifest_and_comes_back(tmp_path, edges):
    """A tree built in Python (or a tree folder) is published with its seed,
    cycle policy and source versions, not `seed None` and no source versions."""
    from taxoforge.snapshots.verify import read_snapshot
    from taxoforge.trees.build import build_tree
    from taxoforge.trees.tables import TreeTables

    t = TreeTables.from_build("toy", build_tree(edges, source="t", tie_seed=5),
                              info={"source_versions": {"toy": "2.1"}, "note": "built in Python"})
    m = build_snapshot(t, tmp_path / "s")
    assert (m["seed"], m["cycle_policy"], m["source_versions"]) == (5, "dfs_back_edges", {"toy": "2.1"})
    assert m["info"]["note"] == "built in Python" and m["info"]["build"]["nodes"] == t.nodes.height
    assert not (tmp_path / "s" / "info.json").exists()  # a snapshot's provenance lives in its manifest
    back = read_snapshot(tmp_path / "s")
    assert back.info["snapshot"] == f"toy@{m['version']}"
    # written out as a tree folder and published again: the same provenance, the same version
    back.write(tmp_path / "tree")
    again = build_snapshot(TreeTables.read(tmp_path / "tree", name="toy"), tmp_path / "s2")
    assert (again["version"], again["seed"], again["info"]) == (m["version"], 5, m["info"])
    # an explicit seed or source versions override the info's
    m3 = build_snapshot(t, tmp_path / "s3", seed=9, source_versions={"toy": "3"})
    assert (m3["seed"], m3["info"]["seed"], m3["source_versions"]) == (9, 9, {"toy": "3"})


def test_a_names_table_without_sources_keeps_the_id_it_had_before_the_column(tree):
    """``source`` was added to the names after schema 1: null throughout, it leaves the hash alone,
    so every snapshot published before still verifies; a source given changes the content."""
    from taxoforge.snapshots.manifest import table_content_hash

    four = tree.names.select("node_id", "name", "kind", "lang")
    with_nulls = four.with_columns(pl.lit(None, dtype=pl.String).alias("source"))
    assert table_content_hash(four, "names") == table_content_hash(with_nulls, "names")
    sourced = with_nulls.with_columns(pl.lit("wordnet:x.n.01").alias("source"))
    assert table_content_hash(sourced, "names") != table_content_hash(with_nulls, "names")


def test_a_canonical_table_hashes_the_same_whether_it_was_sorted_or_found_in_order():
    """The content hash of a tree is the same from its tables as written (already canonical:
    no sort) and from the same rows shuffled (sorted first)."""
    tables = make_tree(random_edges(300, seed=3))
    for name, df in tables.tables().items():
        if df is None or df.height < 2:
            continue
        canonical = canonical_table(df, name)
        shuffled = canonical.sample(fraction=1.0, shuffle=True, seed=1)
        assert canonical_table(canonical, name).equals(canonical)
        assert table_content_hash(shuffled, name) == table_content_hash(canonical, name)
