"""The snapshot store: index, immutable atomic publishing, locking, concurrent publishers."""

from __future__ import annotations

import hashlib
import json
import multiprocessing as mp
import uuid

import polars as pl
import pytest

from taxoforge.snapshots import (
    ChecksFailed,
    LockTimeout,
    ReadOnlyStore,
    SnapshotConflict,
    SnapshotError,
    SnapshotNotFound,
    SnapshotStore,
    load_taxonomy,
    parse_ref,
    pull,
    verify_folder,
)
from taxoforge.trees.tables import TreeTables
from tests.taxoforge.snapshots.helpers import make_tree, random_edges


def test_publish_lists_and_resolves(store_kind, tree):
    w, r_ = store_kind.writer, store_kind.reader
    r = w.publish(tree)
    assert r.status == "published" and r.ref == f"demo@{r.version}"
    assert r_.taxonomies() == ["demo"]
    idx = json.loads(store_kind.read("index.json"))
    entry = idx["taxonomies"]["demo"]["versions"][0]
    assert entry["version"] == r.version and entry["path"] == f"demo/{r.version}"
    assert entry["row_counts"]["nodes"] == tree.nodes.height
    assert (entry["seed"], entry["source_versions"]) == (0, {"toy": "1.0", "query_time": "2024-06-01"})
    assert idx["taxonomies"]["demo"]["latest"] == r.version
    assert r_.resolve("demo")[1]["version"] == r.version
    assert r_.resolve(f"demo@{r.version[:6]}")[1]["version"] == r.version  # unique prefix
    assert r_.manifest("demo", r.version)["content_sha256"] == r.manifest["content_sha256"]
    rep = r_.verify("demo")
    assert rep.ok and rep.checked == [*sorted(r.manifest["files"]), "content hash"], rep.problems
    if store_kind.kind != "s3":  # a folder on this machine: nothing left behind
        assert not list((w.root / ".staging").iterdir())


def test_publish_same_version_again_is_a_noop(store_kind, edges, tree):
    w = store_kind.writer
    r1 = w.publish(tree)
    before = store_kind.read(f"demo/{r1.version}/manifest.json")
    r2 = w.publish(make_tree(edges))  # a rebuild: same content, new creation time
    assert (r2.status, r2.version) == ("unchanged", r1.version)
    assert store_kind.read(f"demo/{r1.version}/manifest.json") == before
    assert len(store_kind.reader.versions("demo")) == 1


def test_same_version_with_other_content_is_an_error(store_kind, tree, edges):
    w = store_kind.writer
    w.publish(tree, version="2024-06")
    other = make_tree(edges, seed=5)
    with pytest.raises(SnapshotConflict, match="already published with other content"):
        w.publish(other, version="2024-06")
    assert w.publish(tree, version="2024-06").status == "unchanged"
    assert [e["version"] for e in store_kind.reader.versions("demo")] == ["2024-06"]


def test_latest_moves_only_when_asked(store_kind, tree, edges):
    """Publishing a seed-1 test build made it `latest`, so `score … NAME`
    silently switched trees. The first version becomes latest; later ones only on request."""
    store, reader = store_kind.writer, store_kind.reader
    a = store.publish(tree, created="2024-01-01T00:00:00Z")
    assert reader.latest("demo") == a.version  # the first version
    test_build = store.publish(make_tree(edges, seed=1), created="2024-06-01T00:00:00Z")
    assert reader.resolve("demo")[1]["version"] == a.version  # still the same tree
    assert [e["version"] for e in reader.versions("demo")] == [a.version, test_build.version]
    c = store.publish(make_tree(edges, seed=3), created="2023-01-01T00:00:00Z", latest=True)
    assert reader.resolve("demo")[1]["version"] == c.version  # latest is not "created last"
    assert json.loads(store_kind.read("index.json"))["taxonomies"]["demo"]["latest"] == c.version
    # publishing an existing version with latest=True moves latest to it, nothing else changes
    again = store.publish(tree, latest=True)
    assert (again.status, reader.latest("demo")) == ("unchanged", a.version)
    assert store.set_latest(f"demo@{test_build.version[:6]}") == test_build.ref
    assert reader.resolve("demo")[1]["version"] == test_build.version
    # a lost index rebuilt from the manifests keeps the latest of the old one when it can
    store.reindex()
    assert reader.latest("demo") == test_build.version
    store_kind.overwrite("index.json", b"garbage")
    store.reindex()
    assert reader.latest("demo") == test_build.version  # created last: the only rule left


def test_verify_finds_damage_where_the_snapshot_lies(store_kind, tree):
    """`SnapshotStore.verify` checks a snapshot in place on every kind of store (remote files
    streamed, nothing written): a flipped byte, and a manifest edited to match it."""
    r = store_kind.writer.publish(tree)
    reader = store_kind.reader
    assert reader.verify(r.ref).ok
    good = store_kind.read(f"demo/{r.version}/nodes.parquet")
    bad = bytearray(good)
    bad[len(bad) // 2] ^= 0xFF
    store_kind.overwrite(f"demo/{r.version}/nodes.parquet", bytes(bad))
    rep = reader.verify(r.ref, deep=False)
    assert not rep.ok and rep.problems == [f"nodes.parquet: sha256 {hashlib.sha256(bad).hexdigest()}, "
                                           f"manifest says {r.manifest['files']['nodes.parquet']['sha256']}"]
    store_kind.overwrite(f"demo/{r.version}/nodes.parquet", good)
    m = json.loads(store_kind.read(f"demo/{r.version}/manifest.json"))
    m["seed"] = 99  # the manifest edited behind the index's back
    store_kind.overwrite(f"demo/{r.version}/manifest.json", json.dumps(m).encode())
    rep = reader.verify(r.ref)
    assert not rep.ok and "manifest.json: sha256" in rep.problems[0] and "index says" in rep.problems[0]


def test_reindex_rebuilds_a_lost_index(store_kind, tree, edges):
    store = store_kind.writer
    a, b = store.publish(tree), store.publish(make_tree(edges, seed=2))
    store_kind.overwrite("index.json", b"garbage")
    with pytest.raises(SnapshotError, match="index.json: not valid JSON"):
        store_kind.reader.versions("demo")
    store.reindex()
    assert sorted(e["version"] for e in store_kind.reader.versions("demo")) == sorted([a.version, b.version])


def test_missing_names_and_versions_are_clear_errors(tmp_path, tree):
    with pytest.raises(SnapshotNotFound, match="no snapshot store at"):
        SnapshotStore(tmp_path / "nope").resolve("demo")
    store = SnapshotStore(tmp_path / "s")
    r = store.publish(tree)
    with pytest.raises(SnapshotNotFound, match=rf"no taxonomy 'other' \(taxonomies: demo \(latest demo@{r.version}, "
                                               r"1 version\)\)"):
        store.resolve("other")
    with pytest.raises(SnapshotNotFound, match=f"has no version 'beef' \\(versions: {r.version}\\)"):
        store.resolve("demo@beef")
    with pytest.raises(SnapshotError, match="expected NAME@VERSION"):
        parse_ref("demo@")
    assert parse_ref("demo") == ("demo", None)


def test_broken_tree_is_not_published(tmp_path):
    store = SnapshotStore(tmp_path / "s")
    broken = TreeTables("bad", pl.DataFrame({"node_id": ["r", "a", "b"], "parent_id": [None, "b", "a"],
                                             "depth": [0, 1, 2]}))
    with pytest.raises(ChecksFailed, match="acyclic") as e:
        store.publish(broken)
    assert e.value.exit_code == 7
    assert store.taxonomies() == []
    assert not (tmp_path / "s" / "bad").exists()


def test_a_species_beside_the_kingdoms_is_not_published_and_is_named(tmp_path):
    def toy(stray_parent: str) -> TreeTables:
        rows = [("t:life", None, 0, "Life", None), ("t:a", "t:life", 1, "Animalia", "kingdom"),
                ("t:g", "t:a", 2, "Balhochordaes", "genus"), ("t:s", "t:g", 3, "Balhochordaes charon", "species"),
                ("t:incertae_sedis", "t:life", 1, "Incertae sedis", None),
                ("t:x", stray_parent, 1 if stray_parent == "t:life" else 2, "Stray one", "species")]
        return TreeTables("toy", pl.DataFrame(rows, schema=["node_id", "parent_id", "depth", "label", "rank"],
                                              orient="row"))

    store = SnapshotStore(tmp_path / "s")
    with pytest.raises(ChecksFailed, match=r"top_ranks_under_root: 1 node\(s\) of a lower rank than kingdom.*"
                                           r"Stray one \(t:x, species\)"):
        store.publish(toy("t:life"), browser=False)
    # under the unranked incertae sedis node it may be published
    assert store.publish(toy("t:incertae_sedis"), browser=False).status == "published"


def test_lock_timeout(tmp_path, tree):
    store = SnapshotStore(tmp_path / "s")
    other = SnapshotStore(tmp_path / "s", lock_timeout=0.3)
    with store.lock():
        with pytest.raises(LockTimeout):
            other.publish(tree)
    assert other.publish(tree).status == "published"


def test_http_store_is_read_only(http_server, tree):
    store = SnapshotStore(http_server.url)
    with pytest.raises(ReadOnlyStore):
        store.publish(tree)


def test_fsspec_memory_store_publish_and_pull(tmp_path, tree):
    url = f"memory://store-{uuid.uuid4().hex}"
    remote = SnapshotStore(url)
    r = remote.publish(tree)
    assert remote.publish(tree).status == "unchanged"
    assert remote.taxonomies() == ["demo"]
    res = pull("demo", store=url, dest=tmp_path / "local", progress=False)
    assert res.status == "pulled" and res.version == r.version
    loaded = load_taxonomy(f"demo@{r.version}", store=url, cache=tmp_path / "local")
    assert loaded.info["snapshot"] == r.ref
    assert loaded.nodes.equals(tree.nodes.sort("node_id"))


# ---- two publishers at once, in real processes ----------------------------------------------
def _publisher(root: str, seeds: list[int], barrier, queue) -> None:
    from taxoforge.snapshots import SnapshotStore
    from tests.taxoforge.snapshots.helpers import make_tree, random_edges

    trees = [make_tree(random_edges(n=120, extra=60), seed=s) for s in seeds]
    barrier.wait(timeout=60)
    out = []
    for t in trees:
        r = SnapshotStore(root).publish(t)
        out.append((r.version, r.status))
    queue.put(out)


def test_concurrent_publishers_leave_a_valid_index(tmp_path):
    root = str(tmp_path / "shared-store")
    ctx = mp.get_context("spawn")
    barrier, queue = ctx.Barrier(3), ctx.Queue()
    # two publishers with their own versions, and a third racing to publish the same ones
    jobs = [[0, 1, 2], [10, 11, 12], [0, 10, 2]]
    procs = [ctx.Process(target=_publisher, args=(root, seeds, barrier, queue)) for seeds in jobs]
    for p in procs:
        p.start()
    results = [queue.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0
    versions = {v for res in results for v, _ in res}
    assert len(versions) == 6
    statuses = [s for res in results for _, s in res]
    assert statuses.count("published") == 6 and statuses.count("unchanged") == 3
    idx = json.loads((tmp_path / "shared-store" / "index.json").read_text())  # valid JSON
    listed = [e["version"] for e in idx["taxonomies"]["demo"]["versions"]]
    assert sorted(listed) == sorted(versions)  # every version once
    store = SnapshotStore(root)
    for v in versions:
        assert verify_folder(store.local_dir("demo", v)).ok
    assert not list((tmp_path / "shared-store" / ".staging").iterdir())
    # and the expected content: each version is the tree its seed builds
    expect = make_tree(random_edges(n=120, extra=60), seed=11)
    from taxoforge.snapshots import content_id

    assert content_id(expect)[0] in versions


def test_published_files_follow_the_umask_so_another_user_can_pull_them(tmp_path, tree):
    """Snapshot files were written 0600 (mkstemp) while index.json was 0644,
    so a store served by another user listed its snapshots but could not hand them out."""
    import os
    import stat

    old = os.umask(0o022)
    try:
        r = SnapshotStore(tmp_path / "s").publish(tree)
    finally:
        os.umask(old)
    folder = tmp_path / "s" / "demo" / r.version
    for p in [folder, *folder.iterdir(), tmp_path / "s" / "index.json"]:
        assert stat.S_IMODE(p.stat().st_mode) == (0o755 if p.is_dir() else 0o644), p


_KILLED_PUBLISH = r"""
import sys, time
import taxoforge.snapshots.publishing as store_module  # publish builds there
from taxoforge.snapshots import SnapshotStore
from tests.taxoforge.snapshots.helpers import make_tree, random_edges

real = store_module.build_snapshot

def build_then_hang(tables, folder, **kw):  # the build is done, the move into place not yet
    real(tables, folder, **kw)
    print("ready", flush=True)
    time.sleep(120)

store_module.build_snapshot = build_then_hang
SnapshotStore(sys.argv[1]).publish(make_tree(random_edges()))
"""


def test_a_killed_publishs_staging_folder_is_swept_by_the_next_publish(tmp_path, tree):
    """``.staging/build-<hex>`` of a publish killed half-way goes at the next publish once it
    is older than the bound; the staging folder of a publish still running stays."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    from taxoforge.files.debris import STALE_AFTER

    repo = Path(__file__).resolve().parents[3]
    store = tmp_path / "store"

    def start():
        p = subprocess.Popen([sys.executable, "-c", _KILLED_PUBLISH, str(store)], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(repo)}, cwd=str(repo))
        assert p.stdout.readline().strip() == "ready"
        return p

    def staged():
        return sorted((store / ".staging").glob("build-*"))

    def age(paths):
        then = time.time() - 10 * STALE_AFTER
        for q in paths:
            for x in [q, *q.iterdir()]:
                os.utime(x, (then, then))

    killed, live = start(), None
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=30)
    try:
        (dead,) = staged()
        live = start()
        alive = [s for s in staged() if s != dead]
        age([dead, *alive])
        SnapshotStore(store).publish(tree)
        assert staged() == alive  # the dead one swept, the live one kept
    finally:
        if live is not None:
            live.send_signal(signal.SIGKILL)
            live.wait(timeout=30)
