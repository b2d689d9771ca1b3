"""The stored working set of a scored tree: built once per content, then read in place; the
labels resolved by earlier runs reused; a tree folder's tables read only when used."""

from __future__ import annotations

import os

import numpy as np
import polars as pl

from taxoforge.snapshots.open import open_taxonomy
from taxoforge.scores.steps import GroundTruthResolver
from taxoforge.snapshots.tree_cache import HEADER, INDEX_FOLDER, ResolvedLabels, open_tree, tree_key
from taxoforge.trees.tables import TreeTables
from taxoforge.trees.taxonomy import Taxonomy
from tests.taxoforge.scores.conftest import inat_like  # noqa: F401 - the fixture


def _folder(inat_like, tmp_path):
    import time

    from taxoforge.snapshots.open import RACY_S

    folder = tmp_path / "tree"
    inat_like.write(folder)
    time.sleep(RACY_S + 0.2)  # files changed this long ago are not "racy": their content hash is remembered
    return folder


def _stamp(tree) -> int:
    """When the stored tree's header was written (a rebuild writes a new one)."""
    return (tree.stored_path / HEADER).stat().st_mtime_ns


def _age(tree) -> None:
    """Date the stored tree's header far back, so a rebuild shows as a new time."""
    os.utime(tree.stored_path / HEADER, ns=(0, 0))


def test_built_once_then_read_in_place_with_the_same_tree(inat_like, tmp_path):
    folder = _folder(inat_like, tmp_path)
    tables = TreeTables.read(folder)
    assert not list(folder.glob(f"{INDEX_FOLDER}/*-tree-*"))
    first = open_tree(tables, "a" * 64)
    assert first.stored_path.is_dir() and first.stored_path.parent.parent == folder and first.tables is tables
    _age(first)
    from taxoforge.scores.mapping import TaxonomyIndex

    assert TaxonomyIndex.open(folder).store.built and first.stored_path.is_dir()  # a new index beside it leaves it be
    second = open_tree(TreeTables.read(folder, lazy=True), "a" * 64)
    assert first.stored_path == second.stored_path and _stamp(second) == 0  # read, not built again
    tax, got = Taxonomy.of(tables), second
    assert "ids" not in got.__dict__ and tree_key(got) == tree_key(first)  # made from the stored arrays
    assert got.ids.tolist() == tax.ids.tolist() and got.parent_idx.tolist() == tax.parent_idx.tolist()
    assert got.depth_arr.tolist() == tax.depth_arr.tolist()
    idx = np.arange(len(tax))
    assert got.labels_of(idx) == tax.labels_of(idx)
    want_ranks = tables.nodes.sort("node_id")["rank"].to_list()
    assert second.ranks.tolist() == want_ranks == tax.ranks.tolist()
    # a damaged file is rebuilt, never used
    arr = second.stored_path / "parent_idx.npy"
    data = bytearray(arr.read_bytes())
    data[-1] ^= 0xFF
    arr.write_bytes(bytes(data))
    again = open_tree(tables, "a" * 64)
    assert _stamp(again) > 0 and again.parent_idx.tolist() == tax.parent_idx.tolist()
    # another content hash is another folder, and the earlier contents' goes
    other = open_tree(tables, "b" * 64)
    assert other.stored_path != first.stored_path and not first.stored_path.exists()


def test_labels_resolved_once_are_reused_without_reading_the_tables(inat_like, tmp_path):
    folder = _folder(inat_like, tmp_path)
    labels = [("aloe_vera", "d"), ("Black-mandibled Toucan", "d"), ("Iris", "d"), ("no such plant", "d")]
    tree = open_taxonomy(str(folder))
    first = GroundTruthResolver(tree.tables, tree, stored=ResolvedLabels(tree.stored_path))
    first.prefetch(labels)
    again = open_taxonomy(str(folder))  # the content hash is remembered now: the tables are read when used
    assert "_unread" in again.tables.__dict__
    second = GroundTruthResolver(again.tables, again, stored=ResolvedLabels(again.stored_path))
    second.prefetch(labels)
    assert [second(lab, d) for lab, d in labels] == [first(lab, d) for lab, d in labels]
    assert first("no such plant", "d")[0] is None
    assert not {"names", "nodes", "links"} & set(again.tables.__dict__)  # no table was read
    assert again.tables.nodes.equals(TreeTables.read(folder).nodes)  # … and reads as before when asked
    assert second.links.sort("label_id").select("label_id", "node_id").equals(
        first.links.sort("label_id").select("label_id", "node_id"))
    assert pl.read_parquet(ResolvedLabels(tree.stored_path).path).height == len(labels)


def test_a_stored_tree_resolves_labels_as_its_tables_do(inat_like, tmp_path):
    """A tree opened from its stored arrays keeps its tables' nodes, names and links: a label
    resolves to the node it resolves to on the tree made from the tables."""
    from taxoforge.links.tree_labels import resolve_nodes

    folder = _folder(inat_like, tmp_path)
    open_taxonomy(str(folder))  # stores the working set
    stored, mem = open_taxonomy(str(folder)), Taxonomy.of(TreeTables.read(folder))
    assert stored.stored_path is not None and "ids" not in stored.__dict__
    labels = ["Aloe vera", "Toco Toucan", "ants", "Iris", "nothing at all"]
    cols = ["value", "status", "method", "node_id"]
    assert resolve_nodes(stored, labels).select(cols).equals(resolve_nodes(mem, labels).select(cols))
    assert stored.nodes_table.equals(mem.nodes_table) and stored.ranks.tolist() == mem.ranks.tolist()


def test_a_first_use_makes_the_tree_once_while_its_tables_are_hashed(inat_like, tmp_path, monkeypatch):
    """A tree folder opened for the first time: the tree is made (on a thread, while the
    content hash is computed) exactly once and stored; a later open makes none and reads it."""
    from taxoforge.snapshots import open as opening
    from taxoforge.snapshots.tree_cache import stores_no_tree

    folder = _folder(inat_like, tmp_path)
    made = []
    real = Taxonomy.of

    def counted(tables, *a, **kw):
        made.append(tables)
        return real(tables, *a, **kw)

    monkeypatch.setattr(opening.Taxonomy, "of", staticmethod(counted))
    assert stores_no_tree(folder)
    first = open_taxonomy(folder)
    assert len(made) == 1 and first.stored_path.is_dir() and not stores_no_tree(folder)
    assert first.ids.tolist() == real(TreeTables.read(folder)).ids.tolist()
    again = open_taxonomy(folder)
    assert len(made) == 1 and again.stored_path == first.stored_path
    assert again.citation.content_sha256 == first.citation.content_sha256


def test_stored_ranks_are_the_same_from_a_table_in_id_order_or_in_any_other(inat_like):
    """A nodes table in id order (as tables hold it) gives its ranks as they stand; one in any
    other order is joined to the ids: every node's rank code is the same."""
    from types import SimpleNamespace

    from taxoforge.snapshots.tree_cache import _rank_codes

    tax = Taxonomy.of(inat_like)
    shuffled = SimpleNamespace(nodes=inat_like.nodes.sample(fraction=1.0, shuffle=True, seed=3))
    assert not shuffled.nodes["node_id"].equals(tax.id_series)
    (codes, names), (codes2, names2) = _rank_codes(inat_like, tax), _rank_codes(shuffled, tax)
    assert names == names2 and codes.tolist() == codes2.tolist()
    want = inat_like.nodes.sort("node_id")["rank"].to_list()
    assert [names[c] if c >= 0 else None for c in codes.tolist()] == want
