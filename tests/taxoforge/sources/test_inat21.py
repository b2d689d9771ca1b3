"""iNat21 categories → tree: the fixture of 18 real species (written for these tests), local
files in three encodings, a URL on a loopback HTTP server, and malformed input."""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import io
import json
import tarfile
from pathlib import Path

import polars as pl
import pytest

from taxoforge.files import cache_path
from taxoforge.sources.inat21 import INAT21_RANKS, Inat21Error, inat21_tree
from taxoforge.sources.ranked import ranked_tree_facts

FIXTURE = Path(__file__).with_name("fixtures") / "inat21_categories.json"
_spec = importlib.util.spec_from_file_location("_tf_httpfixture", Path(__file__).with_name("httpfixture.py"))
httpfixture = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(httpfixture)


@pytest.fixture(scope="module")
def cats() -> list[dict]:
    return json.loads(FIXTURE.read_text())["categories"]


@pytest.fixture(scope="module")
def tree():
    return inat21_tree(FIXTURE)


def test_every_species_is_a_leaf_at_the_same_depth(tree, cats):
    nodes = tree.nodes
    species = nodes.filter(pl.col("rank") == "species")
    assert species.height == len(cats)
    assert sorted(species["node_id"]) == sorted(f"inat21:{c['id']}" for c in cats)
    assert species["is_leaf"].all()
    assert set(species["depth"]) == {len(INAT21_RANKS) + 1}
    # and nothing else is a leaf
    assert nodes.filter(pl.col("is_leaf"))["rank"].unique().to_list() == ["species"]
    c = ranked_tree_facts(nodes)
    assert c["roots"] == 1 and c["orphans"] == 0 and c["species_not_under_genus"] == 0


def test_lineage_of_each_species_follows_its_category(tree, cats):
    tax = tree.taxonomy() if hasattr(tree, "taxonomy") else None
    by_id = {r["node_id"]: r for r in tree.nodes.iter_rows(named=True)}
    for c in cats:
        node = f"inat21:{c['id']}"
        path = []
        while node is not None:
            path.append(by_id[node])
            node = by_id[node]["parent_id"]
        path = path[::-1]
        assert [p["rank"] for p in path] == [None, *INAT21_RANKS, "species"]
        assert [p["label"] for p in path[1:-1]] == [c[r] for r in INAT21_RANKS]
        assert path[-1]["label"] == f"{c['genus']} {c['specific_epithet']}"
    assert tax is None or tax.root == "inat21:root"


def test_homonym_genus_in_two_kingdoms_gets_two_nodes(tree):
    morus = tree.nodes.filter(pl.col("label") == "Morus")
    assert morus.height == 2  # the gannet (Aves) and the mulberry (Plantae)
    assert all(i.startswith("inat21:genus:") and "/" in i for i in morus["node_id"])
    assert "inat21:genus:Esox" in set(tree.nodes["node_id"])


def test_latin_and_english_names(tree, cats):
    names = tree.names
    sp = {f"inat21:{c['id']}": c for c in cats}
    vern = names.filter(pl.col("kind") == "vernacular")
    assert set(vern.select("node_id", "name").iter_rows()) == {(k, c["common_name"]) for k, c in sp.items()}
    assert set(vern["lang"]) == {"en"}
    sci = names.filter((pl.col("kind") == "scientific") & pl.col("node_id").is_in(list(sp)))
    assert set(sci.select("node_id", "name").iter_rows()) == {(k, c["name"]) for k, c in sp.items()}
    assert set(sci["lang"]) == {"la"}


def test_gz_and_tar_gz_files_give_the_same_tree(tree, tmp_path):
    raw = FIXTURE.read_bytes()
    gz = tmp_path / "val.json.gz"
    gz.write_bytes(gzip.compress(raw))
    tgz = tmp_path / "val.json.tar.gz"
    with tarfile.open(tgz, "w:gz") as tf:
        info = tarfile.TarInfo("val.json")
        info.size = len(raw)
        tf.addfile(info, io.BytesIO(raw))
    for p in (gz, tgz):
        assert inat21_tree(p).nodes.equals(tree.nodes)


def test_from_a_url(tree, tmp_path):
    raw = FIXTURE.read_bytes()
    with httpfixture.Server({"/inat2021/val.json": raw}) as srv:
        url = f"{srv.url}/inat2021/val.json"
        t = inat21_tree(url, cache_dir=tmp_path)
        assert srv.log == [("/inat2021/val.json", None)]
    assert t.nodes.equals(tree.nodes)
    # cached in a slot keyed by the whole URL (issue 15 item 3), and the release recorded
    assert cache_path(tmp_path, url).read_bytes() == raw and cache_path(tmp_path, url).name == "val.json"
    assert t.info["source_versions"]["inat21"]["url"] == url
    assert t.info["source_versions"]["inat21"]["sha256"] == hashlib.sha256(raw).hexdigest()


def test_malformed_input_names_the_category(tmp_path, cats):
    bad = [dict(c) for c in cats[:3]]
    del bad[2]["genus"]
    p = tmp_path / "bad.json"
    p.write_text(json.dumps({"categories": bad}))
    with pytest.raises(Inat21Error, match=r"bad\.json: categories\[2\] \(id 2\) is missing \['genus'\]"):
        inat21_tree(p)
    dup = [dict(c) for c in cats[:3]]
    dup[2]["id"] = dup[0]["id"]
    p.write_text(json.dumps({"categories": dup}))
    with pytest.raises(Inat21Error, match=r"categories\[2\]: duplicate category id '0'"):
        inat21_tree(p)
    p.write_text(json.dumps({"images": []}))
    with pytest.raises(Inat21Error, match="no 'categories' list"):
        inat21_tree(p)
    p.write_text('{"categories": [\n{"id": 1,,}]}')
    with pytest.raises(Inat21Error, match=r"line 2: invalid JSON"):
        inat21_tree(p)
