"""The remembered content hash of a tree folder: used while the files are unchanged, never after."""

from __future__ import annotations

import os

import polars as pl
import pytest

from taxoforge.snapshots import content_cache
from taxoforge.snapshots.citation import resolve_taxonomy
from taxoforge.snapshots.manifest import content_id
from taxoforge.trees.tables import TreeTables


def _tree(folder, labels=("Life", "Canis", "Canis lupus")):
    nodes = pl.DataFrame({"node_id": ["r", "g", "s"], "parent_id": [None, "r", "g"], "label": list(labels)})
    TreeTables(name="toy", nodes=nodes).write(folder)
    return folder


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TAXOFORGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TAXOFORGE_SNAPSHOT_STORE", str(tmp_path / "no-store"))
    monkeypatch.setattr(content_cache, "RACY_S", 0.0)  # the files were just written
    return tmp_path / "cache"


def test_an_unchanged_tree_folder_is_cited_by_its_remembered_hash(tmp_path, cache):
    folder = _tree(tmp_path / "tree")
    tables, first = resolve_taxonomy(folder)
    assert first.content_sha256 == content_id(TreeTables.read(folder))[1]
    assert content_cache.cached_content_sha256(content_cache.folder_stamp(folder)) == first.content_sha256
    _, again = resolve_taxonomy(folder)
    assert again == first


def test_an_altered_table_is_hashed_again_not_cited_by_the_old_hash(tmp_path, cache):
    folder = _tree(tmp_path / "tree")
    _, first = resolve_taxonomy(folder)
    _tree(folder, labels=("Life", "Canis", "Canis latrans"))  # a new file renamed over the old one
    _, after = resolve_taxonomy(folder)
    assert after.content_sha256 != first.content_sha256
    assert after.content_sha256 == content_id(TreeTables.read(folder))[1]


def test_a_table_rewritten_in_place_with_its_old_times_is_still_caught(tmp_path, cache):
    folder = _tree(tmp_path / "tree")
    _, first = resolve_taxonomy(folder)
    path = folder / "nodes.parquet"
    st = os.stat(path)
    other = tmp_path / "other"
    _tree(other, labels=("Life", "Canis", "Canis lupuz"))
    data = (other / "nodes.parquet").read_bytes()
    assert len(data) == st.st_size  # same size, same inode, mtime put back: only the change time moves
    with open(path, "r+b") as fh:
        fh.write(data)
        fh.truncate(len(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    _, after = resolve_taxonomy(folder)
    assert after.content_sha256 == content_id(TreeTables.read(folder))[1] != first.content_sha256


def test_racy_files_and_files_changed_after_the_stamp_are_not_remembered(tmp_path, cache, monkeypatch):
    folder = _tree(tmp_path / "tree")
    monkeypatch.setattr(content_cache, "RACY_S", 3600.0)
    stamp = content_cache.folder_stamp(folder)
    assert not content_cache.remember_content_sha256(stamp, "0" * 64)
    monkeypatch.setattr(content_cache, "RACY_S", 0.0)
    stamp = content_cache.folder_stamp(folder)
    _tree(folder, labels=("Life", "Canis", "Canis latrans"))  # changed between the stamp and the record
    assert not content_cache.remember_content_sha256(stamp, "0" * 64)
    assert content_cache.cached_content_sha256(content_cache.folder_stamp(folder)) is None


def test_a_damaged_record_is_ignored(tmp_path, cache):
    from taxoforge.files.trusted import trusted_dir

    folder = _tree(tmp_path / "tree")
    _, first = resolve_taxonomy(folder)
    for rec in trusted_dir().glob("content-hash-*.json"):
        rec.write_text("{not json")
    assert content_cache.cached_content_sha256(content_cache.folder_stamp(folder)) is None
    _, again = resolve_taxonomy(folder)
    assert again.content_sha256 == first.content_sha256
