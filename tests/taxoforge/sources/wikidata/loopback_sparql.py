"""A real SPARQL endpoint on 127.0.0.1 for the tests: Oxigraph behind a stdlib HTTP server.

It speaks the SPARQL 1.1 protocol as WDQS does (GET ``?query=`` or POST form), answers in
``application/sparql-results+json``, and can be told to misbehave for the next requests
(:meth:`LoopbackSparql.inject`): HTTP 429 with ``Retry-After``, 5xx, a WDQS-style server
timeout, a response that hangs, a JSON body cut short, a response trickled byte by byte.

The store holds the real Wikidata data of ``../shared/data/wikidata``: the art-object
classes (Turtle, loaded as is) and the publication-type classes (JSKOS JSON, converted to
``wdt:P279`` and ``rdfs:label`` triples), plus the test's own ``wdt:P31`` instances.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyoxigraph as ox

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
SKOS_ALT = "http://www.w3.org/2004/02/skos/core#altLabel"


def publication_type_triples(jskos_path: Path) -> list[ox.Triple]:
    """The JSKOS concept scheme as Wikidata triples: broader → wdt:P279, prefLabel → rdfs:label."""
    doc = json.loads(Path(jskos_path).read_text(encoding="utf-8"))
    out = []
    for c in doc["concepts"]:
        s = ox.NamedNode(c["uri"])
        for b in c.get("broader", []):
            out.append(ox.Triple(s, ox.NamedNode(WDT + "P279"), ox.NamedNode(b["uri"])))
        for lang, text in (c.get("prefLabel") or {}).items():
            out.append(ox.Triple(s, ox.NamedNode(RDFS_LABEL), ox.Literal(text, language=lang)))
    return out


def instance_triples(instances: dict[str, dict]) -> list[ox.Triple]:
    """``{qid: {"classes": [...], "label": str, "aliases": [...]}}`` as P31/label/alias triples."""
    out = []
    for q, spec in instances.items():
        s = ox.NamedNode(WD + q)
        for c in spec.get("classes", []):
            out.append(ox.Triple(s, ox.NamedNode(WDT + "P31"), ox.NamedNode(WD + c)))
        if spec.get("label"):
            out.append(ox.Triple(s, ox.NamedNode(RDFS_LABEL), ox.Literal(spec["label"], language="en")))
        for a in spec.get("aliases", []):
            out.append(ox.Triple(s, ox.NamedNode(SKOS_ALT), ox.Literal(a, language="en")))
    return out


class LoopbackSparql:
    """Oxigraph ``store`` served over HTTP on 127.0.0.1 (a free port) in a daemon thread."""

    def __init__(self, store: ox.Store):
        self.store = store
        self.faults: deque = deque()
        self.requests: list[dict] = []
        self.on_request = None  # callable(n_requests_so_far) run before answering
        self.in_flight = 0
        self.max_in_flight = 0
        self._release = threading.Event()
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output quiet
                pass

            def _query_text(self) -> str:
                if self.command == "POST":
                    n = int(self.headers.get("Content-Length") or 0)
                    body = self.rfile.read(n).decode("utf-8")
                    if self.headers.get("Content-Type", "").startswith("application/sparql-query"):
                        return body
                    return urllib.parse.parse_qs(body).get("query", [""])[0]
                qs = urllib.parse.urlparse(self.path).query
                return urllib.parse.parse_qs(qs).get("query", [""])[0]

            def _send(self, code: int, body: bytes, headers: dict | None = None,
                      ctype: str = "application/sparql-results+json") -> None:
                self._leave()  # the answer is going out: the client may start its next request now
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def _leave(self) -> None:
                if not getattr(self, "_left", True):
                    self._left = True
                    with outer._lock:
                        outer.in_flight -= 1

            def _handle(self) -> None:
                with outer._lock:
                    outer.in_flight += 1
                    outer.max_in_flight = max(outer.max_in_flight, outer.in_flight)
                self._left = False
                try:
                    self._handle_one()
                finally:
                    self._leave()

            def _handle_one(self) -> None:
                query = self._query_text()
                with outer._lock:
                    fault = outer.faults.popleft() if outer.faults else None
                    outer.requests.append({"method": self.command, "agent": self.headers.get("User-Agent"),
                                           "query": query, "fault": fault[0] if fault else None,
                                           "at": time.monotonic()})
                    n = len(outer.requests)
                if outer.on_request is not None:
                    outer.on_request(n)
                if fault is not None:
                    kind = fault[0]
                    if kind == "status":
                        _, code, headers = fault
                        self._send(code, f"injected HTTP {code}".encode(), headers, "text/plain")
                        return
                    if kind == "server_timeout":
                        self._send(500, b"java.util.concurrent.TimeoutException\n\tat com.bigdata...", None,
                                   "text/plain")
                        return
                    if kind == "hang":
                        outer._release.wait(fault[1])
                        self._leave()
                        self.close_connection = True
                        return
                    if kind == "trickle":
                        self._trickle(fault[1], fault[2], self._evaluate(query))
                        return
                body = self._evaluate(query)
                if body is None:
                    return
                if fault is not None and fault[0] == "truncate":
                    # full length announced, half the body sent, connection closed
                    self.send_response(200)
                    self.send_header("Content-Type", "application/sparql-results+json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                if fault is not None and fault[0] == "truncate_unannounced":
                    # no length announced: the client sees a well-formed HTTP response whose JSON ends early
                    self.send_response(200)
                    self.send_header("Content-Type", "application/sparql-results+json")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(body[: len(body) // 2])
                    self.close_connection = True
                    return
                self._send(200, body)

            def _trickle(self, interval: float, phase: str, body: bytes) -> None:
                """Send the response one byte every ``interval`` seconds — the status line and
                headers too when ``phase`` is "headers" — until it is sent, the client goes
                away or the server is reset. Each byte comes well within a socket timeout."""
                head = (f"HTTP/1.1 200 OK\r\nContent-Type: application/sparql-results+json\r\n"
                        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
                if phase == "body":
                    self.wfile.write(head)
                    self.wfile.flush()
                    data = body
                else:
                    data = head + body
                self.close_connection = True
                for i in range(len(data)):
                    if outer._release.wait(interval):
                        return
                    try:
                        self.wfile.write(data[i:i + 1])
                        self.wfile.flush()
                    except OSError:  # the client gave up
                        return

            def _evaluate(self, query: str) -> bytes | None:
                try:
                    result = outer.store.query(query)
                except SyntaxError as e:
                    self._send(400, f"query syntax error: {e}".encode(), None, "text/plain")
                    return None
                return result.serialize(format=ox.QueryResultsFormat.JSON)

            def do_GET(self):
                self._handle()

            def do_POST(self):
                self._handle()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, name="loopback-sparql", daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/sparql"

    def inject(self, *faults) -> None:
        """Queue faults for the next requests, one per request, e.g. ``("status", 429,
        {"Retry-After": "1"})``, ``("status", 503, {})``, ``("server_timeout",)``,
        ``("hang", 5.0)``, ``("truncate",)``, ``("truncate_unannounced",)``,
        ``("trickle", 0.5, "body")`` (one byte every 0.5 s; ``"headers"``: from the status line)."""
        with self._lock:
            self.faults.extend(faults)

    def reset(self) -> None:
        """Forget faults and requests; let hung handlers of earlier tests finish first."""
        self._release.set()
        deadline = time.monotonic() + 5
        while self.in_flight and time.monotonic() < deadline:
            time.sleep(0.01)
        self._release.clear()
        with self._lock:
            self.faults.clear()
            self.requests.clear()
            self.max_in_flight = 0
        self.on_request = None

    def __enter__(self) -> "LoopbackSparql":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._release.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def build_store(wikidata_dir: Path, instances: dict[str, dict]) -> ox.Store:
    store = ox.Store()
    store.load(path=str(wikidata_dir / "vandycite_art_object_classes_P279_superclasses.ttl"),
               format=ox.RdfFormat.TURTLE)
    store.extend(ox.Quad(t.subject, t.predicate, t.object) for t in
                 publication_type_triples(wikidata_dir / "wdtaxonomy_publication_types_Q732577_jskos.json"))
    store.extend(ox.Quad(t.subject, t.predicate, t.object) for t in instance_triples(instances))
    return store
