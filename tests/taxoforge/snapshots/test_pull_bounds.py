"""A hostile snapshot store against the bounds of a pull: an index or a manifest of a
gigabyte, a JSON nest 200,000 deep, a table announced at 15 GB or sent without end,
redirects to another host, symbolic links inside a local store, a full disk — and the
peak memory of a pull, measured in a child process whatever the store sends.

The stores are real HTTP servers on 127.0.0.1 (``tests.taxoforge.files.scripted_http``)
serving a real published snapshot, bent where the attack needs it; gigabytes are made
lazily as they are sent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from taxoforge.cli import main
from taxoforge.files import LocalFileError
from taxoforge.snapshots import (
    ChecksumMismatch,
    SnapshotError,
    SnapshotStore,
    load_taxonomy,
    pull,
    verify_folder,
)
from taxoforge.snapshots.catalogue import MAX_INDEX_BYTES
from taxoforge.snapshots.pull import MAX_PULL_MEMORY
from tests.taxoforge.files.scripted_http import Reply, ScriptedServer, generated
from tests.taxoforge.files.small_fs import file_size_limit, small_filesystem
from tests.taxoforge.snapshots.helpers import files_under, hostile_store

GB = 10**9
REPO = Path(__file__).resolve().parents[3]


def _index_padded(total: int):
    """An index whose one string runs on for ``total`` bytes (made as it is sent)."""
    yield b'{"format": "taxoforge-snapshot-index", "pad": "'
    yield from generated(total)


def _store(srv, tmp_path, tree) -> str:
    """``srv`` serving a real snapshot of ``tree`` as demo@v1 (routes may then be bent)."""
    hostile_store(srv, tmp_path / "setup", tree, version="v1")
    return srv.url


def _table_route(srv, fname: str, reply):
    honest = srv.default

    def route(req):
        return reply(req) if req.path.endswith("/" + fname) else honest(req)

    srv.default = route


# ---- what a store sends is bounded -------------------------------------------------------------
@pytest.mark.parametrize("announced", [True, False], ids=["content-length", "no-length"])
def test_a_gigabyte_index_is_refused_before_it_is_parsed(tmp_path, tree, announced):
    with ScriptedServer() as srv:
        url = _store(srv, tmp_path, tree)
        srv.routes["/index.json"] = lambda r: Reply(200, {}, stream=_index_padded(GB),
                                                    content_length=GB + 47 if announced else False)
        with pytest.raises(SnapshotError, match=f"more than the {MAX_INDEX_BYTES:,} a snapshot index may have"):
            pull("demo", store=url, dest=tmp_path / "local", progress=False)
    assert not (tmp_path / "local").exists() or files_under(tmp_path / "local") == set()


def test_a_json_nest_200000_deep_is_an_error_not_a_recursion_error(tmp_path, tree):
    with ScriptedServer() as srv:
        url = _store(srv, tmp_path, tree)
        srv.routes["/index.json"] = lambda r: Reply(200, {}, b"[" * 200_000 + b"]" * 200_000)
        srv.routes["/demo/v1/manifest.json"] = lambda r: Reply(200, {}, b"{" + b'"a":{' * 100_000 + b"}" * 100_001)
        with pytest.raises(SnapshotError, match="index.json: not valid JSON \\(nested too deeply to parse\\)"):
            pull("demo", store=url, dest=tmp_path / "local", progress=False)
        from taxoforge.snapshots.manifest import parse_manifest

        with pytest.raises(SnapshotError, match="m.json: not a valid manifest \\(JSON error: nested too deeply"):
            parse_manifest(b"{" + b'"a":{' * 100_000 + b"}" * 100_001, "m.json")
        r = CliRunner().invoke(main, ["pull", "demo", "--store", url, "--dest", str(tmp_path / "local"),
                                      "--no-progress"])
    assert r.exit_code == 1 and "nested too deeply" in r.output and "Traceback" not in r.output
    assert not isinstance(r.exception, RecursionError)


def test_a_gigabyte_manifest_is_refused(tmp_path, tree):
    with ScriptedServer() as srv:
        url = _store(srv, tmp_path, tree)
        srv.routes["/demo/v1/manifest.json"] = lambda r: Reply(200, {}, stream=generated(GB), content_length=False)
        with pytest.raises(SnapshotError, match="more than the 1,048,576 a manifest may have"):
            pull("demo", store=url, dest=tmp_path / "local", progress=False)


def test_a_table_announced_at_15_gb_writes_nothing_and_is_not_offered_for_resume(tmp_path, tree):
    with ScriptedServer() as srv:
        url = _store(srv, tmp_path, tree)
        _table_route(srv, "nodes.parquet", lambda r: Reply(200, {}, stream=generated(15 * GB),
                                                           content_length=15 * GB))
        r = CliRunner().invoke(main, ["pull", "demo", "--store", url, "--dest", str(tmp_path / "local"),
                                      "--no-progress"])
    assert r.exit_code == 4, r.output
    assert "announces 15,000,000,000 bytes" in r.output and "resume" not in r.output
    work = tmp_path / "local" / ".partial" / "demo" / "v1"
    assert not (work / "nodes.parquet.part").exists() and not (work / "nodes.parquet").exists()


def test_a_table_sent_without_end_is_cut_at_the_manifest_size(tmp_path, tree):
    with ScriptedServer() as srv:
        url = _store(srv, tmp_path, tree)
        _table_route(srv, "nodes.parquet", lambda r: Reply(200, {}, stream=generated(None), content_length=False))
        with pytest.raises(ChecksumMismatch, match="sent more bytes than the .* expected"):
            pull("demo", store=url, dest=tmp_path / "local", progress=False)
    assert SnapshotStore(tmp_path / "local").versions("demo") == []
    assert sum(p.stat().st_size for p in (tmp_path / "local").rglob("*") if p.is_file()) < 1 << 20


def test_verify_on_a_remote_store_is_bounded_the_same_way(tmp_path, tree):
    """``verify --store URL`` checks the files where they lie: a table sent without end is
    cut at its manifest size (it used to be read whole into memory), one announced at 15 GB
    is refused unread; the report names both and the command exits 4."""
    with ScriptedServer() as srv:
        url = _store(srv, tmp_path, tree)
        _table_route(srv, "nodes.parquet", lambda r: Reply(200, {}, stream=generated(None), content_length=False))
        honest = srv.default
        srv.default = lambda r: (Reply(200, {}, stream=generated(15 * GB), content_length=15 * GB)
                                 if r.path.endswith("/links.parquet") else honest(r))
        rep = SnapshotStore(url).verify("demo", deep=False)
        r = CliRunner().invoke(main, ["verify", "demo", "--store", url])
    assert not rep.ok and rep.checked == ["names.parquet", "report.parquet"]
    problems = dict(p.split(": ", 1) for p in rep.problems)
    assert "sent more bytes than the" in problems["nodes.parquet"]
    assert "announces 15,000,000,000 bytes" in problems["links.parquet"]
    assert r.exit_code == 4 and "nodes.parquet" in r.output


def test_a_store_redirecting_to_another_host_is_refused_unless_asked(tmp_path, tree):
    with ScriptedServer() as srv, ScriptedServer() as elsewhere:
        _store(elsewhere, tmp_path / "e", tree)
        srv.default = lambda r: Reply(302, {"Location": f"{elsewhere.url}{r.path}"})
        with pytest.raises(SnapshotError, match="redirected \\(HTTP 302\\) to another host"):
            pull("demo", store=srv.url, dest=tmp_path / "local", progress=False)
        assert elsewhere.log == []
        r = CliRunner().invoke(main, ["pull", "demo", "--store", srv.url, "--dest", str(tmp_path / "local"),
                                      "--no-progress", "--allow-redirects-to-other-hosts"])
        assert r.exit_code == 0, r.output
    assert verify_folder(tmp_path / "local" / "demo" / "v1", deep=False).ok  # (v1 is a label the store gave it)


# ---- the peak memory of a pull -----------------------------------------------------------------
_CHILD = r"""
import json, resource, sys
from taxoforge.files import DownloadError
from taxoforge.snapshots import pull
from taxoforge.snapshots.errors import SnapshotError
try:
    pull("demo", store=sys.argv[1], dest=sys.argv[2], progress=False, retries=0)
    outcome = "pulled"
except (SnapshotError, DownloadError) as e:
    outcome = f"{type(e).__name__}: {str(e)[:300]}"
print(json.dumps({"outcome": outcome, "maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def _pull_in_child(url: str, dest: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    r = subprocess.run([sys.executable, "-c", _CHILD, url, str(dest)], capture_output=True, text=True, timeout=600,
                       env=env, cwd=str(dest.parent))
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def _within_cap_pathological_index(srv_honest_index: bytes) -> bytes:
    """The honest index with ~8 MiB of empty objects added: the costliest JSON to parse
    (~25 bytes of memory per byte) that still passes the size cap."""
    idx = json.loads(srv_honest_index)
    room = MAX_INDEX_BYTES - len(srv_honest_index) - 64
    idx["pad"] = "@"
    text = json.dumps(idx).replace('"@"', "[" + ",".join(["{}"] * (room // 3)) + "]")
    assert len(text) <= MAX_INDEX_BYTES
    return text.encode()


def test_the_peak_memory_of_a_pull_is_bounded_whatever_the_store_sends(tmp_path, tree):
    """Each pull runs in a child process (its own peak RSS): an honest pull is the
    baseline; no hostile store may push the peak more than ``MAX_PULL_MEMORY`` above it.
    (Before the caps, 1 GB of padding in ``index.json`` took 978 MiB.)"""
    attacks = {
        "index of 1 GB, no length": lambda r: Reply(200, {}, stream=_index_padded(GB), content_length=False),
        "table of 15 GB announced": None,
        "table without end": None,
        "index of 8 MiB of empty objects": None,
    }
    results = {}
    with ScriptedServer() as srv:
        url = _store(srv, tmp_path, tree)
        honest_default = srv.default
        results["honest"] = _pull_in_child(url, tmp_path / "honest")
        honest_index = srv.default(type("R", (), {"path": "/index.json", "headers": {}, "n": 0})()).body
        for name, route in attacks.items():
            srv.routes.pop("/index.json", None)
            srv.default = honest_default
            if name.startswith("index of 1 GB"):
                srv.routes["/index.json"] = route
            elif name == "table of 15 GB announced":
                _table_route(srv, "nodes.parquet", lambda r: Reply(200, {}, stream=generated(15 * GB),
                                                                   content_length=15 * GB))
            elif name == "table without end":
                _table_route(srv, "nodes.parquet", lambda r: Reply(200, {}, stream=generated(None),
                                                                   content_length=False))
            else:
                body = _within_cap_pathological_index(honest_index)
                srv.routes["/index.json"] = lambda r, body=body: Reply(200, {}, body)
            results[name] = _pull_in_child(url, tmp_path / name.replace(" ", "-"))
    assert results["honest"]["outcome"] == "pulled"
    base = results["honest"]["maxrss"]
    report = {k: f"{(v['maxrss'] - base) / 2**20:+.0f} MiB ({v['outcome'][:60]})" for k, v in results.items()}
    print(f"baseline {base / 2**20:.0f} MiB;", report)
    for name, res in results.items():
        assert res["maxrss"] - base <= MAX_PULL_MEMORY, report
    assert results["index of 1 GB, no length"]["outcome"].startswith("SnapshotError")
    assert results["table of 15 GB announced"]["outcome"].startswith("ChecksumMismatch")
    assert results["table without end"]["outcome"].startswith("ChecksumMismatch")
    assert results["index of 8 MiB of empty objects"]["outcome"] == "pulled"  # legal, only costly


# ---- symbolic links inside a local store --------------------------------------------------------
def _published(tmp_path, tree):
    st = SnapshotStore(tmp_path / "store")
    r = st.publish(tree)
    return st, r, tmp_path / "store" / "demo" / r.version


def test_a_version_folder_linked_outside_the_store_is_refused_everywhere(tmp_path, tree):
    st, r, folder = _published(tmp_path, tree)
    outside = tmp_path / "outside"
    folder.rename(outside)
    os.symlink(outside, folder)
    for attempt in (lambda: st.verify("demo"), lambda: load_taxonomy("demo", store=st),
                    lambda: pull("demo", store=st, dest=tmp_path / "local", progress=False)):
        with pytest.raises(SnapshotError, match="leaves|symbolic link"):
            attempt()
    from taxoforge.snapshots import resolve_taxonomy

    with pytest.raises(SnapshotError, match="symbolic link|leaves"):
        resolve_taxonomy(str(folder))  # the folder named by its path inside the store


def test_a_table_linked_inside_a_version_folder_is_refused(tmp_path, tree):
    st, r, folder = _published(tmp_path, tree)
    elsewhere = tmp_path / "nodes-elsewhere.parquet"
    (folder / "nodes.parquet").rename(elsewhere)
    os.symlink(elsewhere, folder / "nodes.parquet")  # same bytes: checksums alone would pass
    rep = st.verify("demo")
    assert not rep.ok and any("nodes.parquet: a symbolic link" in p for p in rep.problems)
    with pytest.raises(SnapshotError, match="symbolic link"):
        load_taxonomy("demo", store=st)
    with pytest.raises(SnapshotError, match="symbolic link"):
        pull("demo", store=st, dest=tmp_path / "local", progress=False)
    r2 = CliRunner().invoke(main, ["verify", "demo", "--store", str(tmp_path / "store")])
    assert r2.exit_code == 4 and "symbolic link" in r2.output


def test_a_linked_index_or_manifest_is_refused(tmp_path, tree):
    st, r, folder = _published(tmp_path, tree)
    (folder / "manifest.json").rename(tmp_path / "m.json")
    os.symlink(tmp_path / "m.json", folder / "manifest.json")
    with pytest.raises(SnapshotError, match="symbolic link"):
        st.manifest("demo", r.version)
    assert not verify_folder(folder).ok
    (tmp_path / "store" / "index.json").rename(tmp_path / "i.json")
    os.symlink(tmp_path / "i.json", tmp_path / "store" / "index.json")
    with pytest.raises(SnapshotError, match="symbolic link"):
        st.index()


# ---- a full disk --------------------------------------------------------------------------------
def test_a_snapshot_larger_than_the_free_space_is_refused_before_downloading(tmp_path, tree):
    with ScriptedServer() as srv, small_filesystem(tmp_path / "small", 4096) as small:
        url = _store(srv, tmp_path, tree)
        r = CliRunner().invoke(main, ["pull", "demo", "--store", url, "--dest", str(small / "local"),
                                      "--no-progress"])
        assert r.exit_code == 11, r.output
        assert "No space left on device" in r.output and str(small / "local" / ".partial" / "demo" / "v1") in r.output
        assert "bytes to write, 4,096 free" in r.output
        assert not [x for x in srv.log if x.path.endswith(".parquet")]  # nothing was downloaded


def test_a_pull_stopped_by_a_file_size_limit_names_the_file_and_exits_11(tmp_path, tree):
    """The same clean failure without a mount: RLIMIT_FSIZE in a child makes writes past
    1 KiB fail (EFBIG, like a full disk for that process)."""
    with ScriptedServer() as srv:
        url = _store(srv, tmp_path, tree)
        r = subprocess.run([sys.executable, "-m", "taxoforge.cli", "pull", "demo", "--store", url, "--dest",
                            str(tmp_path / "local"), "--no-progress"], capture_output=True, text=True, timeout=300,
                           env={**os.environ, "PYTHONPATH": str(REPO)}, preexec_fn=file_size_limit(1024))
    assert r.returncode == 11, r.stderr
    assert "File too large" in r.stderr and ".part" in r.stderr and "Traceback" not in r.stderr


def test_no_space_left_is_a_local_file_error_in_python(tmp_path, tree):
    with ScriptedServer() as srv, small_filesystem(tmp_path / "small", 16 * 1024) as small:
        url = _store(srv, tmp_path, tree)
        with pytest.raises(LocalFileError, match="No space left on device"):
            pull("demo", store=url, dest=small / "local", progress=False)


# ---- the work of a killed pull is swept by a later one --------------------------------------------
_KILLED_PULL = r"""
import sys
from taxoforge.snapshots import pull
pull("demo", store=sys.argv[1], dest=sys.argv[2], progress=False, retries=0)
"""


def test_a_killed_pulls_partial_folder_is_swept_only_when_stale_and_unclaimed(tmp_path, tree):
    import signal
    import time

    from taxoforge.files.debris import STALE_AFTER

    local = tmp_path / "local"
    work = local / ".partial" / "demo" / "v1"
    with ScriptedServer() as srv:
        _store(srv, tmp_path, tree)
        # nodes.parquet stops after 100 bytes: the pull is caught in the middle of it
        import threading

        release = threading.Event()

        def stalled():
            yield b"n" * 100
            release.wait(60)

        _table_route(srv, "nodes.parquet", lambda r: Reply(200, {}, stream=stalled(), content_length=False))
        p = subprocess.Popen([sys.executable, "-c", _KILLED_PULL, srv.url, str(local)],
                             env={**os.environ, "PYTHONPATH": str(REPO)}, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while not (work / "nodes.parquet.part").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert (work / "nodes.parquet.part").exists(), p.stderr.read1(4000) if p.poll() is not None else "slow"
        then = time.time() - 10 * STALE_AFTER
        for q in [work, *work.iterdir()]:
            os.utime(q, (then, then))

        def pull_other_version():
            other = ScriptedServer()
            with other:
                hostile_store(other, tmp_path / f"other-{time.monotonic_ns()}", tree, version="v2")
                pull("demo", store=other.url, dest=local, progress=False)

        pull_other_version()  # the first pull still runs and holds its folder: kept, however old
        assert (work / "nodes.parquet.part").exists()
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
        release.set()
    pull_other_version()  # killed and old: swept
    assert not work.exists()
    assert sorted(p.name for p in (local / "demo").iterdir()) == ["v2"]


def test_a_pull_never_reads_the_tables_the_next_publish_fills_the_diff_in(tmp_path, tree, monkeypatch):
    """The catalogue's "what changed" summary reads two versions' tables; a pull leaves it to
    the next publish: the pull reads a pulled table only once, in counted batches, to check
    the manifest's content hash (a Parquet file that decompresses to gigabytes is cut there)."""
    from tests.taxoforge.snapshots.helpers import make_tree, random_edges

    local = SnapshotStore(tmp_path / "local")
    local.publish(tree, created="2024-01-01T00:00:00Z")
    remote = SnapshotStore(tmp_path / "remote")
    r2 = remote.publish(make_tree(random_edges(seed=9)), created="2024-02-01T00:00:00Z")
    with monkeypatch.context() as m:
        def no_reading(self, *a, **k):
            raise AssertionError("a pull read the tables")

        m.setattr(SnapshotStore, "read_tables", no_reading)
        m.setattr("taxoforge.snapshots.verify.read_snapshot", no_reading)
        res = pull(r2.ref, store=remote, dest=local, progress=False)
    assert res.status == "pulled"
    assert "diff" not in local.versions("demo")[-1]
    local.publish(make_tree(random_edges(seed=11)), created="2024-03-01T00:00:00Z")
    assert [e["diff"]["from"] for e in local.versions("demo")[1:]] == [local.versions("demo")[0]["version"],
                                                                       r2.version]
