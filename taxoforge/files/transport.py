"""Where a download's bytes come from: one answer to "the file's bytes from ``offset`` on",
from an HTTP server (:mod:`requests`, with ``Range``, ``If-Range`` and conditional headers,
every answer checked against the request) or from any fsspec filesystem (a seek).
:mod:`.download` drives them; nothing here writes a file.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import email.utils
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass

from taxoforge.files.errors import DownloadError

__all__ = ["RETRY_STATUSES", "MAX_RETRY_AFTER", "TransientError", "Answer", "http_get", "fsspec_get",
           "retry_after_seconds", "is_http_url"]

#: answers worth waiting for: rate limits and passing server trouble
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
#: the longest ``Retry-After`` honoured (seconds); longer waits fail the attempt
MAX_RETRY_AFTER = 300.0


def is_http_url(url: str) -> bool:
    return str(url).startswith(("http://", "https://"))


class TransientError(Exception):
    """A transient failure: wait ``wait`` seconds (None: back-off) and try again."""

    def __init__(self, message: str, wait: float | None = None, status: int | None = None) -> None:
        super().__init__(message)
        self.wait, self.status = wait, status


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delay in seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.timezone.utc)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


@dataclass
class Answer:
    """One answer to "bytes from ``offset`` on": ``start`` is the byte the chunks begin at,
    ``length`` how many bytes the answer announces (None: unknown), ``total`` the file's
    size where known; ``complete``: nothing is left; ``not_modified``: a 304."""

    chunks: Iterator[bytes]
    start: int = 0
    length: int | None = None
    total: int | None = None
    etag: str | None = None
    last_modified: str | None = None
    complete: bool = False
    not_modified: bool = False


def _content_range(value: str | None) -> tuple[int, int, int | None] | None:
    m = re.fullmatch(r"bytes (\d+)-(\d+)/(\d+|\*)", (value or "").strip())
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), (None if m.group(3) == "*" else int(m.group(3)))


@contextlib.contextmanager
def http_get(url: str, offset: int, *, if_range: str | None, conditional: dict, timeout: float,
              chunk_size: int) -> Iterator[Answer]:
    import requests

    # identity: Range offsets must be offsets in the stored file, not in a compressed stream
    headers = {"Accept-Encoding": "identity", **conditional}
    if offset:
        headers["Range"] = f"bytes={offset}-"
        if if_range:
            headers["If-Range"] = if_range
    r = requests.get(url, headers=headers, stream=True, timeout=timeout)
    with r:
        st = r.status_code
        if st in RETRY_STATUSES:
            raise TransientError(f"HTTP {st}", retry_after_seconds(r.headers.get("Retry-After")), st)
        if st == 404:
            raise DownloadError(f"{url}: not found (HTTP 404)", status=404)
        if st == 304 and conditional:
            yield Answer(iter(()), not_modified=True)
            return
        etag, modified = r.headers.get("ETag"), r.headers.get("Last-Modified")
        if st == 416 and offset:
            cr = (r.headers.get("Content-Range") or "").strip()
            m = re.fullmatch(r"bytes \*/(\d+)", cr)
            yield Answer(iter(()), offset, 0, int(m.group(1)) if m else None, etag, modified, complete=True)
            return
        if st not in (200, 206):
            raise DownloadError(f"{url}: HTTP {st} {r.reason or ''}".rstrip(), status=st)
        length = int(r.headers["Content-Length"]) if r.headers.get("Content-Length", "").isdigit() else None
        if st == 206:
            cr = _content_range(r.headers.get("Content-Range"))
            if cr is None or cr[1] < cr[0] or (cr[2] is not None and cr[1] >= cr[2]):
                raise DownloadError(f"{url}: HTTP 206 with a bad Content-Range "
                                    f"{r.headers.get('Content-Range')!r} (asked for bytes={offset}-)", status=206)
            start, end, total = cr
            if start not in (0, offset):
                raise DownloadError(f"{url}: asked for bytes from {offset}, the server sent them from {start}",
                                    status=206)
            if length is not None and length != end - start + 1:
                raise DownloadError(f"{url}: Content-Length {length} does not match Content-Range "
                                    f"bytes {start}-{end}", status=206)
            length = end - start + 1
        else:
            start, total = 0, length

        def chunks() -> Iterator[bytes]:
            # read1 hands over every byte that arrived before a connection drops, so the
            # .part holds all of them and a resume asks only for the rest
            read1 = getattr(r.raw, "read1", None)
            while True:
                b = read1(chunk_size) if read1 is not None else r.raw.read(chunk_size)
                if not b:
                    return
                yield b

        yield Answer(chunks(), start, length, total, etag, modified)


@contextlib.contextmanager
def fsspec_get(url: str, offset: int, chunk_size: int, storage_options: dict | None) -> Iterator[Answer]:
    import fsspec

    fs, path = fsspec.core.url_to_fs(url, **(storage_options or {}))
    try:
        f = fs.open(path, "rb")
    except FileNotFoundError:
        raise DownloadError(f"{url}: not found", status=404) from None
    with f:
        total = getattr(f, "size", None)
        if total is not None and offset >= total:
            yield Answer(iter(()), offset, 0, total, complete=True)
            return
        f.seek(offset)

        def chunks() -> Iterator[bytes]:
            while True:
                b = f.read(chunk_size)
                if not b:
                    return
                yield b

        yield Answer(chunks(), offset, None if total is None else total - offset, total)


