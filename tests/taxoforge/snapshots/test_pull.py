"""Pulling over real HTTP from a server on 127.0.0.1: clean, interrupted + resumed,
corrupted, missing."""

from __future__ import annotations

import json
import os
import stat

import pytest

from taxoforge.snapshots import (
    ChecksumMismatch,
    DownloadError,
    SnapshotError,
    SnapshotNotFound,
    SnapshotStore,
    open_taxonomy,
    pull,
    verify_folder,
)
from tests.taxoforge.files.scripted_http import Reply, ScriptedServer
from tests.taxoforge.snapshots.helpers import file_bytes, files_under, hostile_store, make_tree, random_edges


@pytest.fixture()
def remote(http_server, tree):
    """The HTTP server's folder holding a published snapshot: (server, publish result)."""
    r = SnapshotStore(http_server.root).publish(tree)
    return http_server, r


def _size(srv, r, fname):
    return (srv.root / "demo" / r.version / fname).stat().st_size


def test_clean_pull(tmp_path, remote, tree):
    srv, r = remote
    res = pull("demo", store=srv.url, dest=tmp_path / "local", progress=True)  # latest
    assert (res.status, res.version, res.resumed) == ("pulled", r.version, [])
    assert res.bytes_downloaded == sum(m["size"] for m in r.manifest["files"].values())
    local = SnapshotStore(tmp_path / "local")
    assert [e["version"] for e in local.versions("demo")] == [r.version]
    assert file_bytes(res.path) == file_bytes(srv.root / "demo" / r.version)
    assert verify_folder(res.path).ok
    assert not (tmp_path / "local" / ".partial" / "demo").exists()
    # pulling again downloads nothing
    n = len(srv.requests)
    again = pull(f"demo@{r.version}", store=srv.url, dest=tmp_path / "local", progress=False)
    assert again.status == "present" and again.bytes_downloaded == 0
    assert [p for p, _ in srv.requests[n:] if p.endswith(".parquet")] == []


def test_interrupted_pull_resumes_where_it_stopped(tmp_path, remote):
    srv, r = remote
    path = f"/demo/{r.version}/nodes.parquet"
    size = _size(srv, r, "nodes.parquet")
    half = size // 2
    srv.drop_after[path] = half  # the server drops the connection half-way, once
    with pytest.raises(DownloadError, match=f"interrupted at {half} of {size} bytes") as e:
        pull("demo", store=srv.url, dest=tmp_path / "local", progress=False, retries=0)
    assert e.value.exit_code == 8
    part = tmp_path / "local" / ".partial" / "demo" / r.version / "nodes.parquet.part"
    assert part.stat().st_size == half
    assert SnapshotStore(tmp_path / "local").versions("demo") == []  # nothing installed

    res = pull("demo", store=srv.url, dest=tmp_path / "local", progress=False, retries=0)
    assert res.status == "pulled" and res.resumed == ["nodes.parquet"]
    assert srv.ranges_for(path) == [None, f"bytes={half}-"]  # only the missing half was asked for
    assert verify_folder(res.path).ok
    assert file_bytes(res.path) == file_bytes(srv.root / "demo" / r.version)


def test_dropped_connection_is_resumed_within_one_pull(tmp_path, remote):
    srv, r = remote
    path = f"/demo/{r.version}/names.parquet"
    cut = _size(srv, r, "names.parquet") // 3
    srv.drop_after[path] = cut
    res = pull("demo", store=srv.url, dest=tmp_path / "local", progress=False, retries=2, backoff=0.01)
    assert res.resumed == ["names.parquet"]
    assert srv.ranges_for(path) == [None, f"bytes={cut}-"]
    assert verify_folder(res.path).ok


def test_server_without_range_support_restarts_the_file(tmp_path, remote):
    srv, r = remote
    path = f"/demo/{r.version}/nodes.parquet"
    srv.support_range = False
    srv.drop_after[path] = 100
    res = pull("demo", store=srv.url, dest=tmp_path / "local", progress=False, retries=1, backoff=0.01)
    assert srv.ranges_for(path) == [None, "bytes=100-"]  # asked, got the whole file, started over
    assert verify_folder(res.path).ok


def test_corrupted_file_is_detected_and_refused(tmp_path, remote):
    srv, r = remote
    path = f"/demo/{r.version}/report.parquet"
    good = (srv.root / "demo" / r.version / "report.parquet").read_bytes()
    bad = bytearray(good)
    bad[len(bad) // 2] ^= 0xFF  # one flipped byte, same size
    srv.corrupt[path] = bytes(bad)
    with pytest.raises(ChecksumMismatch, match="report.parquet: sha256 .* but the manifest says") as e:
        pull("demo", store=srv.url, dest=tmp_path / "local", progress=False)
    assert e.value.exit_code == 4
    local = SnapshotStore(tmp_path / "local")
    assert local.versions("demo") == []
    assert not (tmp_path / "local" / "demo" / r.version).exists()
    work = tmp_path / "local" / ".partial" / "demo" / r.version
    assert not (work / "report.parquet").exists() and not (work / "report.parquet.part").exists()
    # once the server is fixed, the same pull completes (reusing the good files already there)
    del srv.corrupt[path]
    n = len(srv.requests)
    res = pull("demo", store=srv.url, dest=tmp_path / "local", progress=False)
    assert res.status == "pulled" and verify_folder(res.path).ok
    assert [p.rsplit("/", 1)[-1] for p, _ in srv.requests[n:] if p.endswith(".parquet")] == ["report.parquet"]


def test_stale_partial_file_is_replaced(tmp_path, remote):
    srv, r = remote
    work = tmp_path / "local" / ".partial" / "demo" / r.version
    work.mkdir(parents=True)
    (work / "nodes.parquet.part").write_bytes(b"garbage from somewhere else")
    res = pull("demo", store=srv.url, dest=tmp_path / "local", progress=False)
    assert verify_folder(res.path).ok


def test_tampered_manifest_is_refused(tmp_path, remote):
    srv, r = remote
    mpath = srv.root / "demo" / r.version / "manifest.json"
    mpath.write_bytes(mpath.read_bytes().replace(b'"seed": 0', b'"seed": 1'))
    with pytest.raises(ChecksumMismatch, match="manifest.json: sha256 .* but the store index says"):
        pull("demo", store=srv.url, dest=tmp_path / "local", progress=False)


def test_missing_version_is_a_clear_error(tmp_path, remote):
    srv, r = remote
    with pytest.raises(SnapshotNotFound, match=f"taxonomy 'demo' has no version '0123456789ab' "
                                              f"\\(versions: {r.version}\\)") as e:
        pull("demo@0123456789ab", store=srv.url, dest=tmp_path / "local", progress=False)
    assert e.value.exit_code == 3
    with pytest.raises(SnapshotNotFound, match="no taxonomy 'nope'"):
        pull("nope", store=srv.url, dest=tmp_path / "local", progress=False)
    with pytest.raises(SnapshotNotFound, match="index.json: not found — is .* a snapshot store"):
        pull("demo", store=srv.url + "/not-a-store", dest=tmp_path / "local", progress=False)


def test_open_taxonomy_from_http_names_its_snapshot(tmp_path, remote, tree):
    srv, r = remote
    t = open_taxonomy(f"demo@{r.version}", store=srv.url, cache=tmp_path / "cache").tables
    assert t.info["snapshot"] == r.ref and t.info["store"] == srv.url
    assert t.info["manifest"]["content_sha256"] == r.manifest["content_sha256"]
    assert t.nodes.equals(tree.nodes.sort("node_id"))
    # a second version published remotely as the latest
    r2 = SnapshotStore(srv.root).publish(make_tree(random_edges(seed=9)), created="2999-01-01T00:00:00Z", latest=True)
    assert open_taxonomy("demo", store=srv.url, cache=tmp_path / "cache").tables.info["snapshot"] == r2.ref


# ---- a hostile store ---------------------------------------------------------
HOSTILE_VERSIONS = ["../../../../escaped", "..", "x/../../../../escaped"]


@pytest.mark.parametrize("version", HOSTILE_VERSIONS)
def test_a_store_naming_a_version_that_climbs_out_writes_nothing_outside_dest(tmp_path, tree, version):
    dest = tmp_path / "a" / "b" / "local"
    with ScriptedServer() as srv:
        hostile_store(srv, tmp_path / "setup", tree, version=version)
        with pytest.raises(SnapshotError, match=r"index\.json: taxonomy 'demo', versions\[0\]: invalid version"):
            pull("demo", store=srv.url, dest=dest, progress=False)
        with pytest.raises(SnapshotError, match="invalid version"):
            open_taxonomy("demo", store=srv.url, cache=dest).tables
        assert not [r for r in srv.log if r.path.endswith(".parquet")]  # refused before any download
    assert {f for f in files_under(tmp_path) if not f.startswith("setup/")} == set()


def test_a_manifest_naming_a_file_outside_its_folder_is_refused(tmp_path, tree):
    from taxoforge.snapshots.manifest import parse_manifest

    with pytest.raises(SnapshotError, match="bad file entry '../nodes.parquet'"):
        parse_manifest(json.dumps({"format": "taxoforge-snapshot", "schema_version": 1, "taxonomy": "demo",
                                   "version": "v1", "content_sha256": "0", "created": "x", "row_counts": {},
                                   "files": {"../nodes.parquet": {"sha256": "0"}}}).encode(), "m.json")
    with pytest.raises(SnapshotError, match="m.json: invalid version"):
        parse_manifest(json.dumps({"format": "taxoforge-snapshot", "schema_version": 1, "taxonomy": "demo",
                                   "version": "../v1", "content_sha256": "0", "created": "x", "row_counts": {},
                                   "files": {}}).encode(), "m.json")


def test_a_store_answering_503_with_retry_after_is_waited_for(tmp_path, tree):
    """503/Retry-After honoured for the catalogue reads too."""
    with ScriptedServer() as srv:
        hostile_store(srv, tmp_path / "setup", tree, version="v1")
        honest = srv.default
        srv.default = lambda r: Reply(503, {"Retry-After": "1"}, b"busy") if r.n == 0 else honest(r)
        res = pull("demo", store=srv.url, dest=tmp_path / "local", progress=False)
        first, second = srv.requests_for("/index.json")[:2]
    assert res.status == "pulled" and second.t - first.t >= 0.9


def test_pulled_snapshots_are_readable_by_others_under_the_usual_umask(tmp_path, remote):
    """Files were 0600 while index.json was 0644."""
    srv, r = remote
    old = os.umask(0o022)
    try:
        res = pull("demo", store=srv.url, dest=tmp_path / "local", progress=False)
    finally:
        os.umask(old)
    for p in [res.path, *res.path.iterdir(), tmp_path / "local" / "index.json"]:
        assert stat.S_IMODE(p.stat().st_mode) == (0o755 if p.is_dir() else 0o644), p
    assert sorted(p.name for p in res.path.iterdir()) == sorted([*r.manifest["files"], "manifest.json"])


# ---- the same pull, load and cite on every kind of store -------------------
def test_pull_load_and_cite_from_every_kind_of_store(tmp_path, store_kind, tree, edges):
    from tests.taxoforge.snapshots.helpers import resolved

    r = store_kind.writer.publish(tree)
    res = pull("demo", store=store_kind.reader, dest=tmp_path / "local", progress=False)
    assert (res.status, res.version) == ("pulled", r.version)
    assert verify_folder(res.path).ok
    assert file_bytes(res.path) == {f: store_kind.read(f"demo/{r.version}/{f}") for f in r.manifest["files"]}
    again = pull(r.ref, store=store_kind.reader, dest=tmp_path / "local", progress=False)
    assert (again.status, again.bytes_downloaded) == ("present", 0)
    loaded = open_taxonomy("demo", store=store_kind.reader, cache=tmp_path / "cache").tables
    assert loaded.info["snapshot"] == r.ref and loaded.nodes.equals(tree.nodes.sort("node_id"))
    tables, cite = resolved("demo", store=store_kind.reader, cache=tmp_path / "cache")
    # a remote store is cited by its URL; a local folder without a public URL is local-only, never its path
    expect = None if store_kind.kind == "local" else store_kind.reader.url
    assert (cite.ref, cite.store, cite.published, cite.local_only) == (r.ref, expect, True, expect is None)
    # a file damaged in the store is refused by a fresh pull, and nothing is installed
    good = store_kind.read(f"demo/{r.version}/names.parquet")
    store_kind.overwrite(f"demo/{r.version}/names.parquet", good[:-10] + b"0123456789")
    with pytest.raises(ChecksumMismatch, match="names.parquet: sha256 .* but the manifest says"):
        pull("demo", store=store_kind.reader, dest=tmp_path / "fresh", progress=False)
    assert SnapshotStore(tmp_path / "fresh").versions("demo") == []


def test_a_name_the_remote_store_lacks_lists_what_it_has(tmp_path, store_kind, tree):
    from taxoforge.snapshots import TaxonomyNotFound
    from tests.taxoforge.snapshots.helpers import resolved

    r = store_kind.writer.publish(tree, name="wordnet")
    with pytest.raises(TaxonomyNotFound, match=f"no taxonomy 'inaturalist' \\(taxonomies: wordnet \\(latest {r.ref}"):
        resolved("inaturalist", store=store_kind.reader, cache=tmp_path / "cache")
