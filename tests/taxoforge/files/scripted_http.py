"""A real HTTP server on 127.0.0.1 whose answers a test scripts, for hostile-server cases.

``ScriptedServer()`` serves ``routes``: URL path → ``callable(request) -> Reply``. A
:class:`Request` has the path, the request headers and how many times that path was asked
for before (``n``). :func:`file_reply` is an honest server for one file (Range, If-Range,
If-None-Match, If-Modified-Since, 416); the tests bend its answers to play an attacker.
Every request is logged in ``log``. Loops are bounded: the server only answers.

A :class:`Reply` may carry a ``stream`` instead of a ``body``: an iterable of byte pieces
made lazily as they are sent (:func:`generated`), so a test can offer gigabytes — a 15 GB
``Content-Length``, an endless body without one — without holding them anywhere; the
server stops when the client hangs up.
"""

from __future__ import annotations

import itertools
import re
import socket
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    n: int  # earlier requests for this path
    t: float = field(default_factory=time.monotonic)  # when it came


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    content_length: bool | int = True  # True: len(body); False: none (body ends at close); int: that
    cut_after: int | None = None  # send only this many body bytes, then drop the connection
    trickle: float = 0.0  # seconds between 64 KiB pieces of the body (a slow transfer)
    stream: Iterable[bytes] | None = None  # the body made lazily, piece by piece (instead of ``body``)


def generated(total: int | None, piece: bytes = b"x" * (1 << 16)) -> Iterator[bytes]:
    """``total`` bytes (None: for ever) as repeated ``piece``, made as they are sent."""
    if total is None:
        yield from itertools.repeat(piece)
        return
    full, rest = divmod(total, len(piece))
    yield from itertools.repeat(piece, full)
    if rest:
        yield piece[:rest]


def file_reply(req: Request, body: bytes, *, etag: str | None = None, last_modified: str | None = None,
               honour_range: bool = True) -> Reply:
    """What an honest server answers for ``body``."""
    validators = {k: v for k, v in (("ETag", etag), ("Last-Modified", last_modified)) if v}
    h = {k.lower(): v for k, v in req.headers.items()}
    if (etag and h.get("if-none-match") == etag) or (
            not h.get("if-none-match") and last_modified and h.get("if-modified-since") == last_modified):
        return Reply(304, dict(validators), b"", content_length=False)
    m = re.fullmatch(r"bytes=(\d+)-", h.get("range", ""))
    if m and honour_range:
        if_range = h.get("if-range")
        if if_range is None or if_range in (etag, last_modified):
            start = int(m.group(1))
            if start >= len(body):
                return Reply(416, {"Content-Range": f"bytes */{len(body)}", **validators})
            return Reply(206, {"Content-Range": f"bytes {start}-{len(body) - 1}/{len(body)}",
                               "Accept-Ranges": "bytes", **validators}, body[start:])
    return Reply(200, {"Accept-Ranges": "bytes" if honour_range else "none", **validators}, body)


class ScriptedServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        self.routes: dict[str, Callable[[Request], Reply]] = {}
        self.default: Callable[[Request], Reply] | None = None  # for paths not in routes
        self.log: list[Request] = []
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def handle_error(self, request, client_address) -> None:  # a client hanging up is part of the game
        pass

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def requests_for(self, path: str) -> list[Request]:
        return [r for r in self.log if r.path == path]

    def __enter__(self) -> "ScriptedServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()
        self.server_close()
        self._thread.join(timeout=5)


class _Handler(BaseHTTPRequestHandler):
    server: ScriptedServer
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        srv = self.server
        path = self.path.split("?", 1)[0]
        with srv._lock:
            n = srv._counts.get(path, 0)
            srv._counts[path] = n + 1
            req = Request(path, dict(self.headers.items()), n)
            srv.log.append(req)
        route = srv.routes.get(path, srv.default)
        reply = route(req) if route else Reply(404, body=b"not found")
        self.send_response(reply.status)
        for k, v in reply.headers.items():
            self.send_header(k, v)
        if reply.content_length is True:
            self.send_header("Content-Length", str(len(reply.body)))
        elif reply.content_length is not False:
            self.send_header("Content-Length", str(reply.content_length))
        if reply.content_length is False or reply.cut_after is not None:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if reply.stream is not None:
            try:
                for piece in reply.stream:
                    self.wfile.write(piece)
                    if reply.trickle:
                        self.wfile.flush()
                        time.sleep(reply.trickle)
            except OSError:  # the client went away
                self.close_connection = True
            return
        body = reply.body if reply.cut_after is None else reply.body[: reply.cut_after]
        if reply.status != 304:
            step = 1 << 16 if reply.trickle else max(1, len(body))
            for i in range(0, len(body), step):
                self.wfile.write(body[i:i + step])
                if reply.trickle:
                    self.wfile.flush()
                    time.sleep(reply.trickle)
        self.wfile.flush()
        if self.close_connection:
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
