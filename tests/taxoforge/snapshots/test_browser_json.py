"""The browser's files written column-wise are byte for byte what ``json.dumps`` and gzip write of
the same values: the escapes of every awkward character, nulls, numbers, and every file of
browsers of generated trees with changes and hostile names, decoded and encoded again."""

from __future__ import annotations

import gzip
import json

import polars as pl
import pytest

from taxoforge.snapshots.browser_index import browser_data, id_bucket, id_buckets
from taxoforge.snapshots.browser_json import gz_json, gz_texts, json_array, json_value
from taxoforge.trees.tables import TreeTables
from tests.taxoforge.snapshots.helpers import make_tree, random_edges
from tests.taxoforge.snapshots.test_browser import HOSTILE, taxa

#: every control character, the two characters JSON escapes, the line separators JavaScript
#: trips on, a combining mark, non-Latin text, a character outside the BMP, a byte-order mark, DEL
AWKWARD = "".join(chr(c) for c in range(0x20)) + '"\\/\u2028\u2029\u0301Ωж中😀\ufeff\x7f\x85'


def _dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@pytest.mark.parametrize("values, dtype", [
    ([AWKWARD, "", None, "plain", HOSTILE, AWKWARD[::-1]], pl.String),
    ([0, -1, 2**62, None], pl.Int64),
    ([0, 7, None], pl.Int32),
    ([True, False, None], pl.Boolean),
    ([1.5, -0.0, 1e300, None], pl.Float64),
])
def test_each_value_is_written_as_json_dumps_writes_it(values, dtype):
    df = pl.DataFrame({"v": values}, schema={"v": dtype})
    got = df.select(json_value("v", dtype).alias("v"))["v"].to_list()
    assert got == [_dumps(v) for v in values]


def test_an_array_of_values_is_one_json_array_per_row():
    df = pl.DataFrame({"s": [AWKWARD, None], "i": [1, None]})
    got = df.select(json_array(json_value("s", pl.String), json_value("i", pl.Int64)).alias("j"))["j"].to_list()
    assert got == [_dumps([AWKWARD, 1]), _dumps([None, None])]


def test_texts_compress_as_one_file_does_on_every_thread():
    values = [{"n": i, "names": [AWKWARD * (i % 5), i]} for i in range(40)]
    texts = {f"f{i}": _dumps(v) for i, v in enumerate(values)}
    blobs = gz_texts(texts)
    assert list(blobs) == list(texts)
    assert all(blobs[f"f{i}"] == gz_json(v) for i, v in enumerate(values))


def _awkward(tree: TreeTables) -> TreeTables:
    """``tree`` with awkward labels, ranks and names: every escape, nulls, an empty rank."""
    ids = tree.nodes["node_id"].to_list()
    nodes = tree.nodes.with_columns(
        pl.when(pl.col("node_id") == ids[1]).then(pl.lit(AWKWARD)).when(pl.col("node_id") == ids[2]).then(None)
        .otherwise(pl.col("label")).alias("label"))
    if "rank" in nodes.columns:
        nodes = nodes.with_columns(pl.when(pl.col("node_id") == ids[3]).then(pl.lit("")).otherwise(pl.col("rank"))
                                   .alias("rank"))
    extra = pl.DataFrame({"node_id": ids, "name": [f"{AWKWARD} {i}" if i % 3 else None for i in range(len(ids))],
                          "kind": [("vernacular", None, "odd kind", "synonym")[i % 4] for i in range(len(ids))],
                          "lang": [None if i % 2 else "en\n" for i in range(len(ids))],
                          "source": [None if i % 2 else 'w"x' for i in range(len(ids))]})
    return TreeTables(tree.name, nodes, names=pl.concat([tree.names, extra], how="diagonal_relaxed"),
                      links=tree.links, info=tree.info)


@pytest.mark.parametrize("case", ["first", "changed", "back", "awkward", "random"])
def test_every_file_is_the_bytes_json_dumps_and_gzip_write_of_its_value(case):
    if case == "first":
        data = browser_data(taxa())
    elif case == "changed":
        data = browser_data(taxa(True), taxa(), previous_version="v1")
    elif case == "back":  # removed nodes in the id files; tiny files, so many carry nodes from outside
        data = browser_data(taxa(), taxa(True), previous_version="v2", shard_size=3, inline_children=1, name_bucket=4)
    elif case == "awkward":
        data = browser_data(_awkward(taxa(True)), taxa(), previous_version="v1", shard_size=4, inline_children=2,
                            name_bucket=3)
    else:
        data = browser_data(_awkward(make_tree(random_edges(n=2000, extra=600))), shard_size=64, inline_children=5,
                            name_bucket=40)
    gzipped = [f for f in data.files if f.endswith(".json.gz")]
    assert len(gzipped) > 5
    for f in gzipped:
        assert data.files[f] == gz_json(json.loads(gzip.decompress(data.files[f]))), f


def test_the_buckets_of_many_ids_are_those_of_each_id():
    ids = ["inat:48460", "", "t:1", "wd:Q123456789012", AWKWARD, "é", "😀" * 9, "x" * 40]
    for buckets in (1, 2, 1024):
        want = [id_bucket(i, buckets) for i in ids]
        assert id_buckets(ids, buckets).tolist() == want
        assert id_buckets(pl.Series(ids), buckets).tolist() == want
        assert id_buckets(pl.Series(ids)[2:], buckets).tolist() == want[2:]  # a slice: its offset into the buffers
    assert id_buckets([], 4).tolist() == []
