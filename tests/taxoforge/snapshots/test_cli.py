"""The snapshot commands through click's CliRunner: output, --json, exit codes, --help."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from taxoforge.cli import COMMANDS
from taxoforge.snapshots import SnapshotStore
from taxoforge.snapshots.cli import browse_cmd, cite_cmd, diff_cmd, list_cmd, publish_cmd, pull_cmd, show_cmd, verify_cmd
from tests.taxoforge.snapshots.helpers import make_tree, move_edge

SNAPSHOT_COMMANDS = {"list": list_cmd, "pull": pull_cmd, "verify": verify_cmd, "show": show_cmd,
                     "diff": diff_cmd, "publish": publish_cmd, "cite": cite_cmd,
                     "browse": browse_cmd}


@pytest.fixture()
def runner():
    return CliRunner()


@pytest.fixture()
def published(tmp_path, tree, edges):
    """A local store with two versions of 'demo' (the second moves one leaf)."""
    store = SnapshotStore(tmp_path / "store")
    a = store.publish(tree, created="2024-01-01T00:00:00Z")
    b = store.publish(make_tree(move_edge(edges, "t:299", "t:1")), created="2024-02-01T00:00:00Z", latest=True)
    return str(tmp_path / "store"), a, b


def _json(result):
    return json.loads(result.stdout)


@pytest.mark.parametrize("name", sorted(SNAPSHOT_COMMANDS))
def test_help_everywhere(runner, name):
    assert COMMANDS[name] == f"taxoforge.snapshots.cli:{name}_cmd"
    r = runner.invoke(SNAPSHOT_COMMANDS[name], ["--help"])
    assert r.exit_code == 0
    assert "--json" in r.output and "Exit codes" in r.output


def test_list(runner, published):
    store, a, b = published
    r = runner.invoke(list_cmd, ["--store", store])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert any(line.startswith(f"  demo@{a.version}") for line in lines)
    assert any(line.startswith(f"* demo@{b.version}") for line in lines)  # latest marked
    r = runner.invoke(list_cmd, ["--store", store, "--json"])
    data = _json(r)
    assert [(s["ref"], s["latest"]) for s in data["snapshots"]] == [(a.ref, False), (b.ref, True)]
    r = runner.invoke(list_cmd, ["nope", "--store", store, "--json"])
    assert r.exit_code == 3 and "no taxonomy 'nope'" in _json(r)["error"]


def test_list_uses_env_store(runner, published, monkeypatch):
    store, a, b = published
    monkeypatch.setenv("TAXOFORGE_SNAPSHOT_STORE", store)
    r = runner.invoke(list_cmd, ["--json"])
    assert len(_json(r)["snapshots"]) == 2


def test_show(runner, published):
    store, a, b = published
    r = runner.invoke(show_cmd, [f"demo@{a.version}", "--store", store])
    assert r.exit_code == 0, r.output
    assert f"demo@{a.version}" in r.output and a.manifest["content_sha256"] in r.output
    assert "nodes           300" in r.output
    data = _json(runner.invoke(show_cmd, ["demo", "--store", store, "--json"]))
    assert data["manifest"]["version"] == b.version
    assert data["summary"]["nodes"] == 300 and data["summary"]["links"] == {"toy": {"linked": 20}}
    r = runner.invoke(show_cmd, ["demo@ffffffffffff", "--store", store])
    assert r.exit_code == 3 and "has no version 'ffffffffffff'" in r.output


def test_diff(runner, published):
    store, a, b = published
    r = runner.invoke(diff_cmd, [a.ref, f"@{b.version}", "--store", store])
    assert r.exit_code == 0, r.output
    assert "> t:299 'thing t:299'  parent" in r.output and "→ t:1 'thing t:1'" in r.output  # labels beside ids
    d = _json(runner.invoke(diff_cmd, [a.ref, b.ref, "--store", store, "--json"]))
    assert [m["node_id"] for m in d["moved"]] == ["t:299"] and d["moved"][0]["new_parent"] == "t:1"
    assert runner.invoke(diff_cmd, [a.ref, b.ref, "--store", store, "--exit-code"]).exit_code == 1
    assert runner.invoke(diff_cmd, [a.ref, a.ref, "--store", store, "--exit-code"]).exit_code == 0


def test_verify_ok_and_tampered(runner, published):
    store, a, b = published
    r = runner.invoke(verify_cmd, [a.ref, "--store", store])
    assert r.exit_code == 0 and "OK" in r.output
    folder = SnapshotStore(store).local_dir("demo", a.version)
    assert _json(runner.invoke(verify_cmd, [str(folder), "--json"]))["ok"] is True
    p = folder / "names.parquet"
    data = bytearray(p.read_bytes())
    data[100] ^= 1
    p.write_bytes(bytes(data))
    r = runner.invoke(verify_cmd, [a.ref, "--store", store, "--json"])
    assert r.exit_code == 4
    out = _json(r)
    assert out["ok"] is False and out["problems"][0].startswith("names.parquet: sha256")


def test_verify_catches_manifest_edited_to_match(runner, published):
    """Deep verification recomputes the content hash, so rewriting a table *and* its
    checksum in the manifest is still caught."""
    import hashlib

    import polars as pl

    from taxoforge.snapshots.manifest import manifest_bytes, read_manifest
    from taxoforge.files import write_parquet_atomic

    store, a, b = published
    folder = SnapshotStore(store).local_dir("demo", a.version)
    nodes = pl.read_parquet(folder / "nodes.parquet").with_columns(label=pl.lit("x"))
    write_parquet_atomic(nodes, folder / "nodes.parquet")
    m = read_manifest(folder)
    m["files"]["nodes.parquet"] = {"sha256": hashlib.sha256((folder / "nodes.parquet").read_bytes()).hexdigest(),
                                   "size": (folder / "nodes.parquet").stat().st_size}
    (folder / "manifest.json").write_bytes(manifest_bytes(m))
    assert runner.invoke(verify_cmd, [str(folder), "--fast"]).exit_code == 0
    r = runner.invoke(verify_cmd, [str(folder)])
    assert r.exit_code == 4 and "content hash" in r.output


def test_publish_folder_of_tables(runner, tmp_path, tree):
    src = tmp_path / "wordnet_tree"
    tree.write(src)
    (src / "info.json").write_text(json.dumps({"seed": 4, "source_versions": {"wordnet": "3.0"}}))
    store = str(tmp_path / "store")
    r = runner.invoke(publish_cmd, [str(src), "--name", "wordnet", "--store", store,
                                    "--source-version", "dump=2024-06-01", "--json"])
    assert r.exit_code == 0, r.output
    out = _json(r)
    assert out["status"] == "published" and out["ref"].startswith("wordnet@")
    assert all(c["passed"] for c in out["checks"])
    m = SnapshotStore(store).manifest("wordnet", out["version"])
    assert m["seed"] == 4 and m["source_versions"] == {"wordnet": "3.0", "dump": "2024-06-01"}
    r = runner.invoke(publish_cmd, [str(src), "--name", "wordnet", "--store", store])
    assert r.exit_code == 0 and "already published (identical)" in r.output
    # a published snapshot folder can be published into another store as is
    folder = SnapshotStore(store).local_dir("wordnet", out["version"])
    r = runner.invoke(publish_cmd, [str(folder), "--store", str(tmp_path / "other"), "--json"])
    assert r.exit_code == 0 and _json(r)["version"] == out["version"]


def test_publish_a_folder_written_by_treetables_records_its_provenance(runner, tmp_path, edges):
    """`publish data/assets/<tree>` recorded `seed None` and no source versions."""
    t = make_tree(edges, seed=3)
    t.write(tmp_path / "inaturalist_tree")  # what the Dagster IO manager writes
    store = str(tmp_path / "store")
    r = runner.invoke(publish_cmd, [str(tmp_path / "inaturalist_tree"), "--name", "inaturalist", "--store", store,
                                    "--json"])
    assert r.exit_code == 0, r.output
    m = SnapshotStore(store).manifest("inaturalist", _json(r)["version"])
    assert m["seed"] == 3 and m["cycle_policy"] == "dfs_back_edges"
    assert m["source_versions"] == {"toy": "1.0", "query_time": "2024-06-01"}
    assert m["info"]["build"]["nodes"] == t.nodes.height


def test_publish_moves_latest_only_with_the_flag(runner, tmp_path, edges):
    store = str(tmp_path / "store")
    make_tree(edges).write(tmp_path / "wordnet_tree")
    make_tree(edges, seed=1).write(tmp_path / "seed1")
    first = _json(runner.invoke(publish_cmd, [str(tmp_path / "wordnet_tree"), "--name", "wordnet", "--store", store,
                                              "--json"]))
    assert first["latest"] == first["version"]  # the first version
    r = runner.invoke(publish_cmd, [str(tmp_path / "seed1"), "--name", "wordnet", "--store", store])
    assert r.exit_code == 0 and f"wordnet still means wordnet@{first['version']} (--latest" in r.output
    assert _json(runner.invoke(show_cmd, ["wordnet", "--store", store, "--json"]))["manifest"]["seed"] == 0
    r = runner.invoke(publish_cmd, [str(tmp_path / "seed1"), "--name", "wordnet", "--store", store, "--latest"])
    assert r.exit_code == 0 and "already published (identical)" in r.output and "wordnet means this version" in r.output
    assert _json(runner.invoke(show_cmd, ["wordnet", "--store", store, "--json"]))["manifest"]["seed"] == 1


def test_publish_refuses_broken_tree_and_conflicts(runner, tmp_path, tree, edges):
    import polars as pl

    from taxoforge.trees.tables import TreeTables

    bad = tmp_path / "bad"
    TreeTables("bad", pl.DataFrame({"node_id": ["a", "b"], "parent_id": [None, "zz"], "depth": [0, 1]})).write(bad)
    store = str(tmp_path / "store")
    r = runner.invoke(publish_cmd, [str(bad), "--store", store, "--json"])
    assert r.exit_code == 7
    assert "no_orphans" in _json(r)["error"]
    assert runner.invoke(publish_cmd, [str(bad), "--store", store, "--skip-checks"]).exit_code == 0
    one, two = tmp_path / "one", tmp_path / "two"
    tree.write(one)
    make_tree(edges, seed=9).write(two)
    assert runner.invoke(publish_cmd, [str(one), "--name", "demo", "--version", "v1", "--store", store]).exit_code == 0
    r = runner.invoke(publish_cmd, [str(two), "--name", "demo", "--version", "v1", "--store", store])
    assert r.exit_code == 5 and "already published with other content" in r.output
    r = runner.invoke(publish_cmd, [str(one), "--store", "http://127.0.0.1:9/store"])
    assert r.exit_code == 6
    r = runner.invoke(publish_cmd, [str(one), "--source-version", "novalue", "--store", store])
    assert r.exit_code == 2


def test_pull_over_http(runner, tmp_path, http_server, tree):
    pub = SnapshotStore(http_server.root).publish(tree)
    dest = str(tmp_path / "local")
    r = runner.invoke(pull_cmd, ["demo", "--store", http_server.url, "--dest", dest, "--json"])
    assert r.exit_code == 0, r.output
    out = _json(r)
    assert out["status"] == "pulled" and out["ref"] == pub.ref
    r = runner.invoke(pull_cmd, [pub.ref, "--store", http_server.url, "--dest", dest, "--no-progress"])
    assert r.exit_code == 0 and "already present and verified" in r.output
    listed = _json(runner.invoke(list_cmd, ["--store", http_server.url, "--json"]))
    assert [x["ref"] for x in listed["snapshots"]] == [pub.ref]
    shown = runner.invoke(show_cmd, ["demo", "--store", http_server.url, "--dest", str(tmp_path / "c"), "--json"])
    assert shown.exit_code == 0 and _json(shown)["manifest"]["version"] == pub.version
    r = runner.invoke(pull_cmd, ["demo@abcdef123456", "--store", http_server.url, "--dest", dest])
    assert r.exit_code == 3 and "has no version 'abcdef123456'" in r.output
    path = f"/demo/{pub.version}/links.parquet"
    http_server.corrupt[path] = b"x" * pub.manifest["files"]["links.parquet"]["size"]
    dest2 = str(tmp_path / "local2")
    r = runner.invoke(pull_cmd, ["demo", "--store", http_server.url, "--dest", dest2, "--json"])
    assert r.exit_code == 4 and "corrupted" in _json(r)["error"]
    http_server.drop_after[path] = 10
    del http_server.corrupt[path]
    r = runner.invoke(pull_cmd, ["demo", "--store", http_server.url, "--dest", dest2, "--retries", "0", "--json"])
    assert r.exit_code == 8 and "run the same pull again to resume" in _json(r)["error"]
    r = runner.invoke(pull_cmd, ["demo", "--store", http_server.url, "--dest", dest2, "--json"])
    assert r.exit_code == 0 and _json(r)["resumed"] == ["links.parquet"]


def test_through_the_taxoforge_group(runner, published):
    from taxoforge.cli import main

    store, a, b = published
    r = runner.invoke(main, ["list", "--store", store, "--json"])
    assert r.exit_code == 0 and len(_json(r)["snapshots"]) == 2
    r = runner.invoke(main, ["verify", "--help"])
    assert r.exit_code == 0 and "FOLDER|NAME[@VERSION]" in r.output


@pytest.mark.parametrize("command", ["show", "diff"])
def test_show_and_diff_refuse_a_store_naming_a_version_that_climbs_out(runner, tmp_path, tree, command):
    """Show/diff --store pull remote snapshots; a hostile index must not
    steer where they are written."""
    from tests.taxoforge.files.scripted_http import ScriptedServer
    from tests.taxoforge.snapshots.helpers import files_under, hostile_store

    dest = tmp_path / "a" / "b" / "local"
    with ScriptedServer() as srv:
        hostile_store(srv, tmp_path / "setup", tree, version="../../../../escaped")
        args = ["demo"] if command == "show" else ["demo", "demo"]
        r = runner.invoke(SNAPSHOT_COMMANDS[command], [*args, "--store", srv.url, "--dest", str(dest)])
    assert r.exit_code == 1 and "invalid version '../../../../escaped'" in r.stderr
    assert r.exception is None or isinstance(r.exception, SystemExit)
    assert {f for f in files_under(tmp_path) if not f.startswith("setup/")} == set()



def test_publish_list_and_pull_an_s3_store_with_the_standard_aws_variables(runner, tmp_path, monkeypatch, s3_server,
                                                                         edges):
    """What docs/snapshots.md tells a user: `--store s3://bucket/path`, credentials and an
    S3-compatible endpoint in the standard AWS variables."""
    bucket = s3_server.new_bucket()
    for k, v in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "eu-west-1",
                 "AWS_ENDPOINT_URL": s3_server.endpoint}.items():
        monkeypatch.setenv(k, v)
    make_tree(edges).write(tmp_path / "wordnet_tree")
    url = f"s3://{bucket}/snapshots"
    r = runner.invoke(publish_cmd, [str(tmp_path / "wordnet_tree"), "--name", "wordnet", "--store", url, "--json"])
    assert r.exit_code == 0, r.output
    ref = _json(r)["ref"]
    listed = _json(runner.invoke(list_cmd, ["--store", url, "--json"]))["snapshots"]
    assert [(s["ref"], s["latest"]) for s in listed] == [(ref, True)]
    r = runner.invoke(verify_cmd, [ref, "--store", url])
    assert r.exit_code == 0 and f"{ref}: OK" in r.output, r.output
    r = runner.invoke(pull_cmd, ["wordnet", "--store", url, "--dest", str(tmp_path / "local"), "--no-progress", "--json"])
    assert r.exit_code == 0 and _json(r)["ref"] == ref, r.output
