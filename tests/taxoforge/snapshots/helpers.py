"""Test helpers: small real trees, and a real HTTP server on 127.0.0.1 that serves a
snapshot store with Range support and injectable faults."""

from __future__ import annotations

import http.server
import random
import re
import socket
import threading
from pathlib import Path

import polars as pl

from taxoforge.trees.build import build_tree
from taxoforge.trees.tables import TreeTables


def random_edges(n: int = 300, seed: int = 7, extra: int = 150) -> pl.DataFrame:
    """A random DAG over ``t:0 … t:{n-1}`` (``t:0`` the top) with many multi-parent nodes,
    so the tree builder has ties to break."""
    rng = random.Random(seed)
    rows = set()
    for i in range(1, n):
        rows.add((f"t:{i}", f"t:{rng.randrange(0, i)}"))
    for _ in range(extra):
        i = rng.randrange(2, n)
        rows.add((f"t:{i}", f"t:{rng.randrange(0, i)}"))
    child, parent = zip(*sorted(rows))
    return pl.DataFrame({"child": list(child), "parent": list(parent)})


def make_tree(edges: pl.DataFrame, name: str = "demo", seed: int = 0, with_links: bool = True) -> TreeTables:
    """A full TreeTables (names, links, report) built by the real graph→tree step."""
    b = build_tree(edges, source="t", tie_seed=seed)
    ids = b.nodes["node_id"].to_list()
    names = pl.DataFrame({
        "node_id": ids + ids[:50],
        "name": [f"thing {i}" for i in ids] + [f"alias {i}" for i in ids[:50]],
        "kind": ["label"] * len(ids) + ["alias"] * 50,
        "lang": ["en"] * (len(ids) + 50),
    })
    links = None
    if with_links:
        links = pl.DataFrame({
            "dataset": ["toy"] * 20,
            "label_id": [str(i) for i in range(20)],
            "label_text": [f"thing {ids[i]}" for i in range(20)],
            "status": ["linked"] * 20,
            "method": ["exact"] * 20,
            "node_id": ids[:20],
            "candidates": [[x] for x in ids[:20]],
        })
    return TreeTables.from_build(name, b, names, links=links,
                                 info={"seed": seed, "source_versions": {"toy": "1.0", "query_time": "2024-06-01"}})


def move_edge(edges: pl.DataFrame, child: str, new_parent: str) -> pl.DataFrame:
    """``edges`` with every parent edge of ``child`` replaced by one to ``new_parent``."""
    return pl.concat([edges.filter(pl.col("child") != child),
                      pl.DataFrame({"child": [child], "parent": [new_parent]})])


class StoreServer(http.server.ThreadingHTTPServer):
    """Serves ``root`` read-only. Faults, keyed by URL path (``/demo/v/nodes.parquet``):

    ``drop_after[path] = n``  the next response for ``path`` sends ``n`` body bytes (with the
                              full Content-Length) and closes the connection;
    ``corrupt[path] = bytes`` serve these bytes instead of the file (every time);
    ``support_range``         False: ignore Range headers (always 200, whole file).
    ``requests``              (path, Range header) of every GET, in order.
    """

    daemon_threads = True

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.drop_after: dict[str, int] = {}
        self.corrupt: dict[str, bytes] = {}
        self.support_range = True
        self.requests: list[tuple[str, str | None]] = []
        self._lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def ranges_for(self, path: str) -> list[str | None]:
        return [r for p, r in self.requests if p == path]


class _Handler(http.server.BaseHTTPRequestHandler):
    server: StoreServer

    def log_message(self, *args) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        srv = self.server
        path = self.path.split("?", 1)[0]
        rng = self.headers.get("Range")
        with srv._lock:
            srv.requests.append((path, rng))
            drop = srv.drop_after.pop(path, None)
            data = srv.corrupt.get(path)
        if data is None:
            f = (srv.root / path.lstrip("/")).resolve()
            if srv.root.resolve() not in f.parents or not f.is_file():
                self.send_error(404)
                return
            data = f.read_bytes()
        start = 0
        if rng and srv.support_range:
            m = re.fullmatch(r"bytes=(\d+)-", rng.strip())
            if not m:
                self.send_error(400)
                return
            start = int(m.group(1))
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        body = data[start:]
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Accept-Ranges", "bytes" if srv.support_range else "none")
        self.end_headers()
        if drop is not None:
            self.wfile.write(body[:drop])
            self.wfile.flush()
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        self.wfile.write(body)


def serve(root: Path) -> tuple[StoreServer, threading.Thread]:
    srv = StoreServer(root)
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    return srv, t


def stop(srv: StoreServer, t: threading.Thread) -> None:
    srv.shutdown()
    srv.server_close()
    t.join(timeout=5)


def file_bytes(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(Path(folder).glob("*.parquet"))}




def hostile_store(srv, tmp_path: Path, tree: TreeTables, *, version: str, name: str = "demo") -> str:
    """Make the scripted server ``srv`` (``tests.taxoforge.files.scripted_http``) play a
    malicious store: a real snapshot of ``tree`` whose ``index.json`` and manifest call it
    ``name@version`` (e.g. ``../../../../escaped``), consistently, with the index's
    manifest checksum recomputed. Any path ending in a snapshot file name gets that file.
    Returns the version as listed."""
    import hashlib
    import json

    from taxoforge.snapshots import SnapshotStore
    from taxoforge.snapshots.manifest import manifest_bytes
    from tests.taxoforge.files.scripted_http import Reply, file_reply

    honest = SnapshotStore(tmp_path / "honest-store")
    r = honest.publish(tree)
    folder = honest.local_dir(r.taxonomy, r.version)
    m = json.loads((folder / "manifest.json").read_bytes())
    m.update(taxonomy=name, version=version, version_source="label" if version != m["version"] else
             m.get("version_source", "content"))  # a version that is not the content id is a label
    mbytes = manifest_bytes(m)
    idx = json.loads((tmp_path / "honest-store" / "index.json").read_bytes())
    entry = idx["taxonomies"][r.taxonomy]["versions"][0]
    entry.update(version=version, manifest_sha256=hashlib.sha256(mbytes).hexdigest(), path=f"{name}/{version}")
    idx["taxonomies"] = {name: {"versions": [entry], "latest": version}}
    ibytes = json.dumps(idx).encode()
    files = {p.name: p.read_bytes() for p in folder.glob("*.parquet")}

    def route(req):
        last = req.path.rsplit("/", 1)[-1]
        if last == "index.json":
            return Reply(200, {}, ibytes)
        if last == "manifest.json":
            return Reply(200, {}, mbytes)
        if last in files:
            return file_reply(req, files[last])
        return Reply(404, {}, b"")

    srv.default = route
    return version


def files_under(root: Path) -> set[str]:
    """Every file below ``root``, as paths relative to it."""
    return {str(p.relative_to(root)) for p in Path(root).rglob("*") if p.is_file()}


# ---- a real S3 API server on 127.0.0.1, and the three kinds of store --------------------------
class MotoS3:
    """``moto`` in server mode, in its own process, listening on 127.0.0.1 only: a real S3
    API over HTTP that s3fs talks to like any S3-compatible endpoint. Buckets are made
    per test (:meth:`new_bucket`)."""

    def __init__(self) -> None:
        import os
        import subprocess
        import sys
        import time

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        self.proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError("the moto S3 server did not start on 127.0.0.1") from None
                time.sleep(0.1)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def storage_options(self) -> dict:
        """What a user passes for an S3-compatible endpoint (credentials are moto's dummies)."""
        return {"key": "testing", "secret": "testing",
                "client_kwargs": {"endpoint_url": self.endpoint, "region_name": "eu-west-1"}}

    def filesystem(self):
        import s3fs

        return s3fs.S3FileSystem(**self.storage_options())

    def new_bucket(self) -> str:
        """A new bucket whose objects anyone may read (the bucket policy of a store served
        to the public, so a browser or an HTTP client reads it without credentials)."""
        import json
        import uuid

        name = f"snapshots-{uuid.uuid4().hex[:12]}"
        fs = self.filesystem()
        fs.mkdir(name)
        policy = {"Version": "2012-10-17", "Statement": [{"Sid": "PublicRead", "Effect": "Allow", "Principal": "*",
                                                          "Action": "s3:GetObject",
                                                          "Resource": f"arn:aws:s3:::{name}/*"}]}
        fs.call_s3("put_bucket_policy", Bucket=name, Policy=json.dumps(policy))
        return name

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except Exception:  # noqa: BLE001
            self.proc.kill()
            self.proc.wait(timeout=10)


class StoreKind:
    """One kind of store under test: ``writer`` is where snapshots are published,
    ``reader`` how a user reaches the same store (the same object for local and S3 stores;
    for HTTP, the folder published into and the read-only URL serving it).
    ``page_url``: where a browser opens its ``index.html``."""

    def __init__(self, kind: str, writer, reader, page_url: str, overwrite) -> None:
        self.kind, self.writer, self.reader, self.page_url = kind, writer, reader, page_url
        self._overwrite = overwrite

    def __repr__(self) -> str:
        return f"StoreKind({self.kind}: {self.reader.url})"

    def overwrite(self, rel: str, data: bytes) -> None:
        """Replace the file ``rel`` of the store behind its back (damage, tampering)."""
        self._overwrite(rel, data)

    def read(self, rel: str) -> bytes:
        return self.writer.read_bytes(rel, max_bytes=1 << 30)


def local_kind(root: Path) -> StoreKind:
    from taxoforge.snapshots import SnapshotStore

    st = SnapshotStore(root)
    return StoreKind("local", st, st, (Path(root).resolve() / "index.html").as_uri(),
                     lambda rel, data: (Path(root) / rel).write_bytes(data))


def http_kind(srv: StoreServer) -> StoreKind:
    from taxoforge.snapshots import SnapshotStore

    return StoreKind("http", SnapshotStore(srv.root), SnapshotStore(srv.url), f"{srv.url}/index.html",
                     lambda rel, data: (srv.root / rel).write_bytes(data))


def s3_kind(s3: MotoS3) -> StoreKind:
    from taxoforge.snapshots import SnapshotStore

    bucket = s3.new_bucket()
    st = SnapshotStore(f"s3://{bucket}/store", storage_options=s3.storage_options())
    fs = s3.filesystem()
    return StoreKind("s3", st, st, f"{s3.endpoint}/{bucket}/store/index.html",
                     lambda rel, data: fs.pipe_file(f"{bucket}/store/{rel}", data))
