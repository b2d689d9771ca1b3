"""A real HTTP server on 127.0.0.1 serving bytes with Range support, for download tests.

``Server(files, cut_first=n)`` serves ``files`` (path → bytes); with ``cut_first`` the first
GET of each path sends only ``n`` body bytes of a full-length response and closes the
connection, as a dropped transfer would. Every request's path and Range header is logged.
"""

from __future__ import annotations

import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Server:
    def __init__(self, files: dict[str, bytes], cut_first: int | None = None, honour_range: bool = True):
        self.files = files
        self.cut_first = cut_first
        self.honour_range = honour_range
        self.log: list[tuple[str, str | None]] = []
        self._seen: set[str] = set()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                rng = self.headers.get("Range")
                outer.log.append((self.path, rng))
                body = outer.files.get(self.path)
                if body is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                start = 0
                m = re.match(r"bytes=(\d+)-$", rng or "")
                if m and outer.honour_range:
                    start = int(m.group(1))
                    if start >= len(body):
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{len(body)}")
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                else:
                    self.send_response(200)
                part = body[start:]
                self.send_header("Content-Length", str(len(part)))
                self.send_header("Accept-Ranges", "bytes")
                self.end_headers()
                if outer.cut_first is not None and self.path not in outer._seen:
                    outer._seen.add(self.path)
                    self.wfile.write(part[: outer.cut_first])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(part)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "Server":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)
