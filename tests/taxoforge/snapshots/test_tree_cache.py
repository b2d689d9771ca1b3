"""The stored working set of a scored tree: built once per content, then read in place; the
labels resolved by earlier runs reused; a tree folder's tables read only when used."""

from __future__ import annotations

import numpy as np
import polars as pl

from taxoforge.scores.cited_taxonomy import cite_taxonomy
from taxoforge.scores.steps import GroundTruthResolver
from taxoforge.snapshots.tree_cache import ResolvedLabels, open_tree
from taxoforge.trees.stored import StoredTaxonomy, labels_of
from taxoforge.trees.tables import TreeTables
from tests.taxoforge.scores.conftest import inat_like  # noqa: F401 - the fixture


def _folder(inat_like, tmp_path):
    import time

    from taxoforge.snapshots.content_cache import RACY_S

    folder = tmp_path / "tree"
    inat_like.write(folder)
    time.sleep(RACY_S + 0.2)  # files changed this long ago are not "racy": their content hash is remembered
    return folder


def test_built_once_then_read_in_place_with_the_same_tree(inat_like, tmp_path):
    folder = _folder(inat_like, tmp_path)
    tables = TreeTables.read(folder)
    first = open_tree(tables, "a" * 64)
    from taxoforge.scores.mapping import TaxonomyIndex

    assert TaxonomyIndex.open(folder).store.built and first.path.is_dir()  # a new index beside it leaves it be
    second = open_tree(TreeTables.read(folder, lazy=True), "a" * 64)
    assert first.built and not second.built and first.path == second.path and first.path.parent.parent == folder
    tax, got = tables.taxonomy(), second.taxonomy
    assert isinstance(got, StoredTaxonomy) and second.tree_key == first.tree_key
    assert got.ids.tolist() == tax.ids.tolist() and got.parent_idx.tolist() == tax.parent_idx.tolist()
    assert got.depth_arr.tolist() == tax.depth_arr.tolist()
    idx = np.arange(len(tax))
    assert labels_of(got, idx) == labels_of(tax, idx)
    want_ranks = tables.nodes.sort("node_id")["rank"].to_list()
    assert second.ranks.tolist() == want_ranks
    # a damaged file is rebuilt, never used
    arr = second.path / "parent_idx.npy"
    data = bytearray(arr.read_bytes())
    data[-1] ^= 0xFF
    arr.write_bytes(bytes(data))
    again = open_tree(tables, "a" * 64)
    assert again.built and again.taxonomy.parent_idx.tolist() == tax.parent_idx.tolist()
    # another content hash is another folder, and the earlier contents' goes
    assert open_tree(tables, "b" * 64).built and not first.path.exists()


def test_labels_resolved_once_are_reused_without_reading_the_tables(inat_like, tmp_path):
    folder = _folder(inat_like, tmp_path)
    labels = [("aloe_vera", "d"), ("Black-mandibled Toucan", "d"), ("Iris", "d"), ("no such plant", "d")]
    cited = cite_taxonomy(str(folder))
    stored = cited.open_stored()
    first = GroundTruthResolver(cited.tables, cited.taxonomy, stored=ResolvedLabels(stored.path))
    first.prefetch(labels)
    again = cite_taxonomy(str(folder))  # the content hash is remembered now: the tables are read when used
    assert "_unread" in again.tables.__dict__
    second = GroundTruthResolver(again.tables, again.taxonomy, stored=again.resolved_labels())
    second.prefetch(labels)
    assert [second(lab, d) for lab, d in labels] == [first(lab, d) for lab, d in labels]
    assert first("no such plant", "d")[0] is None
    assert not {"names", "nodes", "links"} & set(again.tables.__dict__)  # no table was read
    assert again.tables.nodes.equals(TreeTables.read(folder).nodes)  # … and reads as before when asked
    assert second.links.sort("label_id").select("label_id", "node_id").equals(
        first.links.sort("label_id").select("label_id", "node_id"))
    assert pl.read_parquet(ResolvedLabels(stored.path).path).height == len(labels)
