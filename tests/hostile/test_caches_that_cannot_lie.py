"""Caches and indexes that cannot lie: verified against digests this user's runs recorded in a
private folder (never a checksum stored beside the data); a mismatch rebuilds, a rebuild that
cannot happen is an error, and what the run cites is what it used. A store's content hash is
recomputed from the bytes received before anything says "verified"."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from taxoforge.trees.tables import TreeTables
from tests.hostile.bounded import assert_refused, run_cli_bounded

ROWS = [("life", None, "Life"), ("animalia", "life", "Animalia"), ("felidae", "animalia", "Felidae"),
        ("felis", "felidae", "Felis"), ("f_catus", "felis", "Felis catus"), ("canidae", "animalia", "Canidae"),
        ("canis", "canidae", "Canis"), ("c_lupus", "canis", "Canis lupus")]
NAMES = [("f_catus", "cat"), ("f_catus", "house cat"), ("c_lupus", "wolf"), ("c_lupus", "dog")]


def _tree(folder: Path) -> Path:
    nodes = pl.DataFrame({"node_id": [r[0] for r in ROWS], "parent_id": [r[1] for r in ROWS],
                          "label": [r[2] for r in ROWS]}, schema_overrides={"parent_id": pl.String})
    names = pl.DataFrame({"node_id": [r[0] for r in ROWS] + [n[0] for n in NAMES],
                          "name": [r[2] for r in ROWS] + [n[1] for n in NAMES],
                          "kind": ["label"] * len(ROWS) + ["vernacular"] * len(NAMES)})
    TreeTables("pets", nodes, names).write(folder)
    return folder


def _answers(path: Path) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in [
        {"id": "1", "output": "a house cat", "label": "Felis catus"},
        {"id": "2", "output": "a wolf", "label": "Canis lupus"}]))
    return path


def _score(tmp_path, tree, index_dir, out="out"):
    res = run_cli_bounded(["score", str(_answers(tmp_path / "a.jsonl")), str(tree), "-o", str(tmp_path / out),
                           "--no-plots", "--no-meteor", "--index-dir", str(index_dir)], as_bytes=8_000_000_000)
    assert res.rc == 0 and "Traceback" not in res.err, res.describe()
    run = json.loads((tmp_path / out / "run.json").read_text())
    preds = pl.read_parquet(tmp_path / out / "scores.parquet")["pred_node"].to_list()
    return run["mapping_index"], preds


# ---------------------------------------------------------------------------- the mapping index
def test_a_forged_index_array_with_a_forged_header_is_never_used(tmp_path):
    tree = _tree(tmp_path / "tree")
    idx = tmp_path / "shared-index"
    first, preds = _score(tmp_path, tree, idx)
    assert first["built"] and first["verified"] == "built" and preds == ["f_catus", "c_lupus"]
    again, _ = _score(tmp_path, tree, idx, "out2")
    assert again["verified"] == "trusted digest" and not again["built"]
    # whoever can write the shared folder swaps the name → node array (and could rewrite header.json to match)
    folder = Path(first["path"])
    a = np.load(folder / "name_node.npy")
    forged = np.roll(a, 1)
    np.save(folder / "name_node.npy", forged)
    header = json.loads((folder / "header.json").read_text())
    (folder / "header.json").write_text(json.dumps(header))  # no checksum there to forge; rewritten all the same
    after, preds = _score(tmp_path, tree, idx, "out3")
    assert after["built"] and after["verified"] == "built", after  # rebuilt, not used
    assert preds == ["f_catus", "c_lupus"]
    assert np.array_equal(np.load(folder / "name_node.npy"), a)


def test_a_poisoned_memo_of_mapping_decisions_is_not_believed(tmp_path, monkeypatch):
    """The memo tables a repeat call reads (taxoforge.files.memo) sit in the cache folder:
    decisions swapped there by whoever can write it are recomputed, never used."""
    monkeypatch.setenv("TAXOFORGE_CACHE_DIR", str(tmp_path / "cache"))
    tree = _tree(tmp_path / "tree")
    _, preds = _score(tmp_path, tree, tmp_path / "idx")
    assert preds == ["f_catus", "c_lupus"]
    [memo] = (tmp_path / "cache" / "memo").glob("mapping-decisions-*.parquet")
    table = pl.read_parquet(memo)
    assert table.height == 2
    table.with_columns(pl.col("node").reverse()).write_parquet(memo)  # a valid table, the nodes swapped
    _, preds = _score(tmp_path, tree, tmp_path / "idx", "out2")
    assert preds == ["f_catus", "c_lupus"]
    assert pl.read_parquet(memo)["node"].to_list() == table["node"].to_list()  # written anew by this user's run


def test_a_poisoned_memo_of_a_read_file_is_not_believed(tmp_path, monkeypatch):
    """A large answer file is kept as its table in the cache folder: a table swapped there
    (other labels, the digest of the file's bytes kept) is read again from the file, and a
    trusted table of the file's older bytes is never given for its new ones."""
    import taxoforge.scores.readers.files as files

    monkeypatch.setenv("TAXOFORGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(files, "READ_MEMO_MIN_BYTES", 64)
    src = _answers(tmp_path / "a.jsonl")
    first = files.read_outputs(src)
    [memo] = (tmp_path / "cache" / "memo").glob("read-table-*.parquet")
    table = pl.read_parquet(memo)
    table.with_columns(pl.col("label").reverse()).write_parquet(memo)  # valid Parquet, the labels swapped
    assert files.read_outputs(src).equals(first)
    src.write_text(src.read_text().replace("a wolf", "a dog"))  # the same path, other bytes
    assert files.read_outputs(src)["output"].to_list() == ["a house cat", "a dog"]


def test_an_index_this_user_never_recorded_is_rebuilt_and_compared_before_use(tmp_path):
    from taxoforge.files.trusted import trusted_dir

    tree = _tree(tmp_path / "tree")
    idx = tmp_path / "shared-index"
    first, _ = _score(tmp_path, tree, idx)
    for rec in trusted_dir().glob("mapping-index-*.json"):  # as another user sees it: no record of theirs
        rec.unlink()
    honest, preds = _score(tmp_path, tree, idx, "out2")
    assert honest["verified"] == "rebuilt and compared" and preds == ["f_catus", "c_lupus"]
    for rec in trusted_dir().glob("mapping-index-*.json"):
        rec.unlink()
    folder = Path(first["path"])
    np.save(folder / "name_node.npy", np.roll(np.load(folder / "name_node.npy"), 1))
    forged, preds = _score(tmp_path, tree, idx, "out3")
    assert forged["verified"] == "built" and preds == ["f_catus", "c_lupus"]


def test_an_index_folder_where_no_lock_can_be_made_is_an_error_at_once(tmp_path):
    tree = _tree(tmp_path / "tree")
    res = run_cli_bounded(["score", str(_answers(tmp_path / "a.jsonl")), str(tree), "--no-meteor", "--no-plots",
                           "--index-dir", "/proc/1"], timeout=120)
    assert_refused(res, 11, r"/proc/1/.*\.lock: cannot create the lock file of the mapping index", max_seconds=30)


def test_a_fifo_in_place_of_the_index_header_is_rebuilt_past_not_waited_on(tmp_path):
    tree = _tree(tmp_path / "tree")
    idx = tmp_path / "index"
    first, _ = _score(tmp_path, tree, idx)
    header = Path(first["path"]) / "header.json"
    header.unlink()
    os.mkfifo(header)
    after, preds = _score(tmp_path, tree, idx, "out2")
    assert after["built"] and preds == ["f_catus", "c_lupus"]


# ---------------------------------------------------------------------------- content hashes
def test_a_forged_content_hash_record_with_the_current_stamps_is_not_cited(tmp_path, monkeypatch):
    import taxoforge.snapshots.open as opening
    from taxoforge.snapshots.manifest import content_id

    monkeypatch.setenv("TAXOFORGE_CACHE_DIR", str(tmp_path / "shared-cache"))
    monkeypatch.setattr(opening, "RACY_S", 0.0)
    tree = _tree(tmp_path / "tree")
    stamp = opening.folder_stamp(tree)
    # where the record used to be kept, in a cache folder others can write: a forged record with today's stamps
    import hashlib

    forged = {"format": 1, "schema": __import__("taxoforge.trees.tables").trees.tables.SCHEMA_VERSION,
              "folder": stamp["folder"], "files": stamp["files"], "content_sha256": "f" * 64}
    old = tmp_path / "shared-cache" / "content-hash" / f"{hashlib.sha256(stamp['folder'].encode()).hexdigest()[:32]}.json"
    old.parent.mkdir(parents=True)
    old.write_text(json.dumps(forged))
    cited = opening.open_taxonomy(tree).citation
    assert cited.content_sha256 == content_id(TreeTables.read(tree))[1] != "f" * 64


def test_records_in_a_folder_others_can_write_are_not_trusted(tmp_path):
    from taxoforge.files.trusted import TrustedDigests

    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    f = tmp_path / "data.bin"
    f.write_bytes(b"x")
    t = TrustedDigests("demo", shared)
    assert not t.usable() and not t.remember("k", [f], "d" * 64)
    assert t.lookup("k", [f]) is None and t.record("k") is None


# ---------------------------------------------------------------------------- METEOR
def _wordnet_or_skip():
    from taxoforge.sources.wordnet_data import WordNetUnavailable, ensure_wordnet

    try:
        ensure_wordnet(allow_download=False)
    except WordNetUnavailable as e:
        pytest.skip(f"WordNet not installed: {e}")


def test_a_poisoned_meteor_table_is_rebuilt_not_believed(tmp_path):
    import sqlite3

    from taxoforge.scores.measures.meteor import SynonymTable, meteor, synonym_table, table_path

    _wordnet_or_skip()
    table = synonym_table(tmp_path)
    assert meteor(["cat"], ["dog"], table.synonyms, str) == 0.0
    path = table_path(tmp_path)
    con = sqlite3.connect(path)  # valid SQLite, poisoned: cat and dog made synonyms
    with con:
        con.execute("UPDATE lemma SET names = names || ' dog' WHERE lemma = 'cat'")
        con.execute("UPDATE lemma SET names = names || ' cat' WHERE lemma = 'dog'")
    con.close()
    assert meteor(["cat"], ["dog"], SynonymTable.open(path).synonyms, str) > 0  # believed, it would say so
    again = synonym_table(tmp_path)
    assert meteor(["cat"], ["dog"], again.synonyms, str) == 0.0


def test_a_poisoned_meteor_table_without_wordnet_to_rebuild_it_is_an_error(tmp_path, monkeypatch):
    import sqlite3

    from taxoforge.scores.measures import meteor as m
    from taxoforge.sources import wordnet_data

    _wordnet_or_skip()
    m.synonym_table(tmp_path)
    con = sqlite3.connect(m.table_path(tmp_path))
    with con:
        con.execute("UPDATE lemma SET names = names || ' dog' WHERE lemma = 'cat'")
        con.execute("UPDATE lemma SET names = names || ' cat' WHERE lemma = 'dog'")
    con.close()

    def no_wordnet(**_):
        raise wordnet_data.WordNetUnavailable("WordNet 3.0 is not installed")

    monkeypatch.setattr(m, "wordnet_folder", no_wordnet)  # the name METEOR's module calls
    with pytest.raises(m.SynonymTableError, match=r"not written by this user's runs .* remove the file"):
        m.synonym_table(tmp_path)


def test_an_unusable_cache_folder_costs_speed_not_meteor(tmp_path, caplog):
    from taxoforge.scores.measures.meteor import meteor, synonym_table

    _wordnet_or_skip()
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    table = synonym_table(blocked)
    assert meteor(["cat"], ["cat"], table.synonyms, str) > 0.4
    assert meteor(["cat"], ["dog"], table.synonyms, str) == 0.0
    assert any("cannot be stored" in r.getMessage() for r in caplog.records)


# ---------------------------------------------------------------------------- a store's content hash
def test_a_hostile_store_listing_a_script_with_a_zero_content_hash_is_not_verified(tmp_path):
    """A store lists a 35-byte script as its only table, with that script's own checksum and a
    content hash of 64 zeros: every file matches its manifest, and nothing matches its content."""
    import hashlib

    from taxoforge.snapshots import SnapshotStore
    from taxoforge.snapshots.manifest import manifest_bytes
    from tests.taxoforge.files.scripted_http import Reply, ScriptedServer, file_reply

    from tests.taxoforge.snapshots.helpers import make_tree, random_edges

    honest = SnapshotStore(tmp_path / "honest")
    r = honest.publish(make_tree(random_edges(seed=3)))
    m = json.loads((honest.local_dir(r.taxonomy, r.version) / "manifest.json").read_bytes())
    script = b"#!/bin/sh\necho pwned >/tmp/pwned\n##"
    assert len(script) == 35
    m["files"] = {"nodes.parquet": {**m["files"]["nodes.parquet"], "sha256": hashlib.sha256(script).hexdigest(),
                                    "size": len(script)}}
    m["content_sha256"] = "0" * 64
    mbytes = manifest_bytes(m)
    idx = json.loads((tmp_path / "honest" / "index.json").read_bytes())
    entry = idx["taxonomies"][r.taxonomy]["versions"][0]
    entry.update(manifest_sha256=hashlib.sha256(mbytes).hexdigest(), content_sha256="0" * 64)
    ibytes = json.dumps(idx).encode()

    def route(req):
        last = req.path.rsplit("/", 1)[-1]
        if last == "index.json":
            return Reply(200, {}, ibytes)
        if last == "manifest.json":
            return Reply(200, {}, mbytes)
        if last == "nodes.parquet":
            return file_reply(req, script)
        return Reply(404, {}, b"")

    with ScriptedServer() as srv:
        srv.default = route
        res = run_cli_bounded(["pull", r.taxonomy, "--store", srv.url, "--dest", str(tmp_path / "local"),
                               "--no-progress"], timeout=120)
    assert_refused(res, 4, r"match the manifest's checksums but not what it says they hold .*nothing was installed")
    assert "verified" not in res.out
    assert not (tmp_path / "local" / r.taxonomy / r.version).exists()
