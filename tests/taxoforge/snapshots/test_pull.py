"""Pulling over real HTTP from a server on 127.0.0.1: clean, interrupted + resumed,
corrupted, missing."""

from __future__ import annotations

import pytest

from taxoforge.snapshots import (
    ChecksumMismatch,
    DownloadError,
    SnapshotNotFound,
    SnapshotStore,
    load_taxonomy,
    pull,
    verify_folder,
)
from tests.taxoforge.snapshots.helpers import file_bytes, make_tree, random_edges


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


def test_load_taxonomy_from_http_names_its_snapshot(tmp_path, remote, tree):
    srv, r = remote
    t = load_taxonomy(f"demo@{r.version}", store=srv.url, cache=tmp_path / "cache")
    assert t.info["snapshot"] == r.ref and t.info["store"] == srv.url
    assert t.info["manifest"]["content_sha256"] == r.manifest["content_sha256"]
    assert t.nodes.equals(tree.nodes.sort("node_id"))
    # a second version published remotely becomes the latest
    r2 = SnapshotStore(srv.root).publish(make_tree(random_edges(seed=9)), created="2999-01-01T00:00:00Z")
    assert load_taxonomy("demo", store=srv.url, cache=tmp_path / "cache").info["snapshot"] == r2.ref
