"""The IO manager: a tree stored as its folder of Parquet tables, and given back from memory to
a later step of the same process while its files are unchanged, as reading them would give it."""

from __future__ import annotations

import dagster as dg
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import assets.common.io_manager as io_manager
from assets.common.io_manager import RECENT_TREES, ParquetIOManager
from taxoforge.trees.tables import TreeTables
from tests.taxoforge.snapshots.helpers import make_tree, random_edges


@pytest.fixture(autouse=True)
def nothing_kept(monkeypatch):
    monkeypatch.setattr(io_manager, "_recent", type(io_manager._recent)())


def _store(manager: ParquetIOManager, key: str, tree: TreeTables) -> None:
    manager.handle_output(dg.build_output_context(asset_key=dg.AssetKey(key)), tree)


def _load(manager: ParquetIOManager, key: str):
    return manager.load_input(dg.build_input_context(asset_key=dg.AssetKey(key)))


def _same(a: TreeTables, b: TreeTables) -> None:
    assert (a.name, a.info, a.folder) == (b.name, b.info, b.folder)
    for table in ("nodes", "names", "links", "report"):
        assert_frame_equal(getattr(a, table), getattr(b, table))


def test_a_tree_loaded_after_it_was_stored_is_what_reading_its_folder_gives_without_reading(tmp_path, monkeypatch):
    manager = ParquetIOManager(data_dir=str(tmp_path))
    tree = make_tree(random_edges(300, seed=1), name="built")
    _store(manager, "some_tree", tree)
    read = TreeTables.read(tmp_path / "assets" / "some_tree", name="some_tree")

    def no_read(*_a, **_k):
        raise AssertionError("read from disk")

    monkeypatch.setattr(pl, "read_parquet", no_read)
    loaded = _load(manager, "some_tree")
    _same(loaded, read)
    assert loaded.info is not tree.info  # read from info.json: a step changing it changes nobody else's
    assert _load(manager, "some_tree").nodes is loaded.nodes  # the tables are shared, never copied


def test_a_folder_rewritten_since_is_read_again(tmp_path):
    manager = ParquetIOManager(data_dir=str(tmp_path))
    _store(manager, "some_tree", make_tree(random_edges(300, seed=1)))
    other = make_tree(random_edges(200, seed=2), seed=5)
    other.write(tmp_path / "assets" / "some_tree")  # another process rebuilt it
    _same(_load(manager, "some_tree"), TreeTables.read(tmp_path / "assets" / "some_tree", name="some_tree"))
    assert _load(manager, "some_tree").info["seed"] == 5


def test_only_the_latest_trees_are_kept(tmp_path):
    manager = ParquetIOManager(data_dir=str(tmp_path))
    for i in range(RECENT_TREES + 2):
        _store(manager, f"tree_{i}", make_tree(random_edges(50, seed=i)))
    assert [p.name for p in io_manager._recent] == [f"tree_{i}" for i in range(2, RECENT_TREES + 2)]
    _same(_load(manager, "tree_0"), TreeTables.read(tmp_path / "assets" / "tree_0", name="tree_0"))
    assert [p.name for p in io_manager._recent][-1] == "tree_0"
