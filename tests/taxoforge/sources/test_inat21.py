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
from taxoforge.trees.taxonomy import Taxonomy

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
    tax = Taxonomy.of(tree) if hasattr(tree, "taxonomy") else None
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
    # cached in a slot keyed by the whole URL, and the release recorded
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


# --------------------------------------------------------------------------- archives


def _tar(out: Path, members: list[tuple[str, bytes]], mode: str = "w:gz") -> Path:
    with tarfile.open(out, mode) as tf:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return out


def _split(cats: list[dict], keep: int) -> bytes:
    """An annotation file of another split: fewer categories (what reading it would build)."""
    return json.dumps({"images": [], "categories": cats[:keep]}).encode()


def test_val_before_train_attack_archive_named_train_reads_train(tree, cats, tmp_path):
    """``train.json.tar.gz`` holding ``val.json`` first: the train split is read, not the
    first .json of the archive."""
    tgz = _tar(tmp_path / "train.json.tar.gz", [("val.json", _split(cats, 3)), ("train.json", FIXTURE.read_bytes())])
    t = inat21_tree(tgz)
    assert t.nodes.equals(tree.nodes)
    assert t.info["source"].endswith("(member train.json)")
    # and the other way round, by name too
    tgz = _tar(tmp_path / "val.json.tar.gz", [("train.json", FIXTURE.read_bytes()), ("val.json", _split(cats, 3))])
    assert inat21_tree(tgz).nodes.filter(pl.col("rank") == "species").height == 3


def test_val_before_train_attack_ambiguous_archive_is_an_error_not_a_guess(tree, cats, tmp_path):
    tgz = _tar(tmp_path / "inat2021_annotations.tar.gz",
               [("val.json", _split(cats, 3)), ("train.json", FIXTURE.read_bytes())])
    with pytest.raises(Inat21Error, match=r"holds 2 annotation files \(train\.json, val\.json\); refusing to guess: say which"):
        inat21_tree(tgz)
    assert inat21_tree(tgz, member="train.json").nodes.equals(tree.nodes)
    with pytest.raises(Inat21Error, match="no member 'test.json'"):
        inat21_tree(tgz, member="test.json")


def test_appledouble_attack_macos_metadata_is_never_picked(tree, tmp_path):
    """A tar made on macOS carries ``._train.json`` (AppleDouble resource data, not JSON)
    before ``train.json``, and ``__MACOSX/`` copies: neither is ever read."""
    junk = b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        \x00\x02"
    tgz = _tar(tmp_path / "annotations.tar.gz",
               [("._train.json", junk), ("__MACOSX/inat/._train.json", junk), ("inat/._train.json", junk),
                ("inat/train.json", FIXTURE.read_bytes())])
    assert inat21_tree(tgz).nodes.equals(tree.nodes)
    only_junk = _tar(tmp_path / "train.json.tar.gz", [("._train.json", junk)])
    with pytest.raises(Inat21Error, match="no .json file.*macOS metadata"):
        inat21_tree(only_junk)


def _truncate(path: Path) -> Path:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * 2 // 3])
    return path


@pytest.mark.parametrize("kind", ["tar.gz", "gz", "bz2", "tar.bz2", "xz"])
def test_truncated_download_attack_names_the_file(tmp_path, kind):
    """A download cut short gave a bare EOFError; now the error names the file."""
    import bz2
    import lzma

    raw = FIXTURE.read_bytes()
    p = tmp_path / f"train.json.{kind}"
    if kind == "tar.gz":
        _tar(p, [("train.json", raw)])
    elif kind == "tar.bz2":
        _tar(p, [("train.json", raw)], mode="w:bz2")
    elif kind == "gz":
        p.write_bytes(gzip.compress(raw))
    elif kind == "bz2":
        p.write_bytes(bz2.compress(raw))
    else:
        p.write_bytes(lzma.compress(raw))
    assert inat21_tree(p).nodes.height > 0  # whole, it reads (bz2 and xz recognised by their magic bytes)
    _truncate(p)
    with pytest.raises(Inat21Error, match=rf"train\.json\.{kind.replace('.', '[.]')}: truncated or corrupt"):
        inat21_tree(p)


def test_not_utf8_annotation_file_names_the_file(tmp_path):
    p = tmp_path / "val.json"
    p.write_bytes(b'{"categories": [{"id": 1, "name": "Linn\xe9"}]}')
    with pytest.raises(Inat21Error, match=r"val\.json: not UTF-8 text \(byte 0xe9"):
        inat21_tree(p)
