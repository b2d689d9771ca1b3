"""Where a download's bytes come from: one answer to "the file's bytes from ``offset`` on",
from an HTTP server (:mod:`requests`, with ``Range``, ``If-Range`` and conditional headers,
every answer checked against the request) or from any fsspec filesystem (a seek).
:mod:`.download` drives them; nothing here writes a file.

Every HTTP answer runs under a :class:`~taxoforge.files.deadline.Deadline` (the whole
transfer, not each read: the watchdog is shown every socket the request opens), and
redirects are followed only on the host asked (same scheme, host and port; at most
:data:`MAX_REDIRECTS`) unless ``allow_other_hosts``.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import email.utils
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from taxoforge.files.deadline import Deadline
from taxoforge.files.errors import DownloadError

__all__ = ["RETRY_STATUSES", "MAX_RETRY_AFTER", "MAX_REDIRECTS", "TransientError", "Answer", "http_get",
           "fsspec_get", "retry_after_seconds", "is_http_url", "same_origin"]

#: answers worth waiting for: rate limits and passing server trouble
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
#: the longest ``Retry-After`` honoured by default (seconds); a server asking for more fails
#: the download at once, with a message saying what it asked for
MAX_RETRY_AFTER = 120.0
#: redirects followed for one request
MAX_REDIRECTS = 5
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


def _ascii_digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def is_http_url(url: str) -> bool:
    """``url`` is ``http://`` or ``https://`` (fetched with :mod:`requests`, not fsspec).

    Parameters
    ----------
    url : str
        The URL.

    Returns
    -------
    bool
        ``url`` is ``http://`` or ``https://`` (fetched with :mod:`requests`, not
        fsspec).
    """
    return str(url).startswith(("http://", "https://"))


class TransientError(Exception):
    """A transient failure: wait ``wait`` seconds (None: back-off) and try again.

    Parameters
    ----------
    message : str
        What to say.
    wait : float, optional
        Seconds to wait before the next try (None: back off).
    status : int, optional
        The HTTP status, if any.
    """

    def __init__(self, message: str, wait: float | None = None, status: int | None = None) -> None:
        super().__init__(message)
        self.wait, self.status = wait, status


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delay in seconds or an HTTP date).

    Parameters
    ----------
    value : str or None
        The header's value.
    now : float, optional
        The current time (default: now), for an HTTP date.

    Returns
    -------
    float or None
        Seconds to wait from a ``Retry-After`` header (delay in seconds or an HTTP
        date).
    """
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():  # "²" is a digit to str.isdigit, not to float()
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


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or {"http": 80, "https": 443}.get(scheme)


def same_origin(a: str, b: str) -> bool:
    """``a`` and ``b`` have the same scheme, host (case-folded) and port (defaults filled in).

    Parameters
    ----------
    a : str
        A URL.
    b : str
        Another URL.

    Returns
    -------
    bool
        ``a`` and ``b`` have the same scheme, host (case-folded) and port (defaults
        filled in).
    """
    return _origin(a) == _origin(b)


@dataclass
class Answer:
    """One answer to "bytes from ``offset`` on": ``start`` is the byte the chunks begin at,
    ``length`` how many bytes the answer announces (None: unknown), ``total`` the file's
    size where known; ``end``: the last byte a 206 announces; ``complete``: nothing is
    left; ``not_modified``: a 304.

    Attributes
    ----------
    chunks : Iterator[bytes]
        The bytes, in chunks.
    start : int
        The byte the chunks begin at.
    length : int or None
        How many bytes the answer announces (None: unknown).
    total : int or None
        The file's size, where known.
    etag : str or None
        The server's ETag, if any.
    last_modified : str or None
        The server's Last-Modified, if any.
    complete : bool
        Nothing is left.
    not_modified : bool
        A 304.
    end : int or None
        The last byte a 206 announces.
    partial : bool
        Whether the server answered with a byte range (206).
    """

    chunks: Iterator[bytes]
    start: int = 0
    length: int | None = None
    total: int | None = None
    etag: str | None = None
    last_modified: str | None = None
    complete: bool = False
    not_modified: bool = False
    end: int | None = None
    partial: bool = False  # a 206


def _content_range(value: str | None) -> tuple[int, int, int | None] | None:
    m = re.fullmatch(r"bytes (\d+)-(\d+)/(\d+|\*)", (value or "").strip())
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), (None if m.group(3) == "*" else int(m.group(3)))


def _session(deadline: Deadline | None):
    """A :class:`requests.Session` whose every new connection's socket the ``deadline``
    watches (plain and TLS, direct and through a proxy)."""
    import requests

    session = requests.Session()
    if deadline is None:
        return session
    from requests.adapters import HTTPAdapter
    from urllib3.connection import HTTPConnection, HTTPSConnection
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

    class _Conn(HTTPConnection):
        def _new_conn(self):
            sock = super()._new_conn()
            deadline.watch(sock)
            return sock

    class _TLSConn(HTTPSConnection):
        def _new_conn(self):
            sock = super()._new_conn()
            deadline.watch(sock)
            return sock

    pools = {"http": type("_Pool", (HTTPConnectionPool,), {"ConnectionCls": _Conn}),
             "https": type("_TLSPool", (HTTPSConnectionPool,), {"ConnectionCls": _TLSConn})}

    class _Adapter(HTTPAdapter):
        def init_poolmanager(self, *args, **kwargs):
            super().init_poolmanager(*args, **kwargs)
            self.poolmanager.pool_classes_by_scheme = pools

        def proxy_manager_for(self, proxy, **kwargs):
            manager = super().proxy_manager_for(proxy, **kwargs)
            manager.pool_classes_by_scheme = pools
            return manager

    session.mount("http://", _Adapter())
    session.mount("https://", _Adapter())
    return session


def _get_following_redirects(session, url: str, headers: dict, timeout: float, allow_other_hosts: bool):
    """GET ``url``, following at most :data:`MAX_REDIRECTS` redirects on the same origin
    (any HTTP(S) origin with ``allow_other_hosts``); the answer is streamed."""
    current = url
    for _ in range(MAX_REDIRECTS + 1):
        r = session.get(current, headers=headers, stream=True, timeout=timeout, allow_redirects=False)
        location = r.headers.get("Location")
        if r.status_code not in _REDIRECTS or not location:
            return r
        r.close()
        target = urljoin(current, location)
        if urlsplit(target).scheme.lower() not in ("http", "https"):
            raise DownloadError(f"{url}: redirected to {target}, not an HTTP(S) address: refused",
                                status=r.status_code)
        if not allow_other_hosts and not same_origin(url, target):
            raise DownloadError(f"{url}: redirected (HTTP {r.status_code}) to another host, {target}: refused. "
                                "Follow it only for a store you trust: allow_other_hosts=True "
                                "(command line: --allow-redirects-to-other-hosts), or use that address",
                                status=r.status_code)
        current = target
    raise DownloadError(f"{url}: more than {MAX_REDIRECTS} redirects: refused")


@contextlib.contextmanager
def http_get(url: str, offset: int, *, if_range: str | None, conditional: dict, timeout: float,
             chunk_size: int, deadline: Deadline | None = None, allow_other_hosts: bool = False) -> Iterator[Answer]:
    """One GET of ``url`` from byte ``offset`` (``Range`` with ``If-Range``), checked
    against the request. ``timeout`` bounds each read; ``deadline`` the whole transfer
    (its sockets are shut down when it expires, and the answer's chunks then raise
    :class:`TransientError`).

    Parameters
    ----------
    url : str
        An HTTP(S) URL.
    offset : int
        The first byte wanted.
    if_range : str or None
        The validator (ETag or Last-Modified) a resumed range must match.
    conditional : dict
        Validators of a file already present (``If-None-Match`` …).
    timeout : float
        Seconds each read may take.
    chunk_size : int
        Bytes read at a time.
    deadline : Deadline, optional
        The deadline of the whole transfer, if any.
    allow_other_hosts : bool, optional
        Whether a redirect to another host is followed.

    Yields
    ------
    object
        One GET of ``url`` from byte ``offset`` (``Range`` with ``If-Range``), checked
        against the request.
    """
    import requests

    # identity: Range offsets must be offsets in the stored file, not in a compressed stream
    headers = {"Accept-Encoding": "identity", **conditional}
    if offset:
        headers["Range"] = f"bytes={offset}-"
        if if_range:
            headers["If-Range"] = if_range
    session = _session(deadline)
    try:
        try:
            r = _get_following_redirects(session, url, headers, timeout, allow_other_hosts)
        except requests.RequestException as e:
            if deadline is not None and deadline.expired:
                raise TransientError(deadline.describe()) from e
            raise
        with r:
            yield _answer(url, r, offset, conditional, chunk_size, deadline)
    finally:
        session.close()


def _answer(url: str, r, offset: int, conditional: dict, chunk_size: int, deadline: Deadline | None) -> Answer:
    st = r.status_code
    if st in RETRY_STATUSES:
        raise TransientError(f"HTTP {st}", retry_after_seconds(r.headers.get("Retry-After")), st)
    if st == 404:
        raise DownloadError(f"{url}: not found (HTTP 404)", status=404)
    if st == 304 and conditional:
        return Answer(iter(()), not_modified=True)
    etag, modified = r.headers.get("ETag"), r.headers.get("Last-Modified")
    if st == 416 and offset:
        cr = (r.headers.get("Content-Range") or "").strip()
        m = re.fullmatch(r"bytes \*/(\d+)", cr)
        return Answer(iter(()), offset, 0, int(m.group(1)) if m else None, etag, modified, complete=True)
    if st not in (200, 206):
        raise DownloadError(f"{url}: HTTP {st} {r.reason or ''}".rstrip(), status=st)
    length = int(r.headers["Content-Length"]) if _ascii_digits(r.headers.get("Content-Length", "")) else None
    end = None
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
    return Answer(_chunks(r, chunk_size, deadline), start, length, total, etag, modified, end=end,
                  partial=st == 206)


def _chunks(r, chunk_size: int, deadline: Deadline | None) -> Iterator[bytes]:
    """The body, as it arrives. read1 hands over every byte that arrived before a
    connection drops, so a .part holds all of them and a resume asks only for the rest."""
    import requests
    import urllib3

    read1 = getattr(r.raw, "read1", None)
    while True:
        try:
            b = read1(chunk_size) if read1 is not None else r.raw.read(chunk_size)
        except (OSError, requests.RequestException, urllib3.exceptions.HTTPError) as e:
            if deadline is not None and deadline.expired:
                raise TransientError(deadline.describe()) from e
            raise
        if not b:
            if deadline is not None and deadline.expired:  # the end came from the watchdog
                raise TransientError(deadline.describe())
            return
        if deadline is not None:
            deadline.advance(len(b))
        yield b


@contextlib.contextmanager
def fsspec_get(url: str, offset: int, chunk_size: int, storage_options: dict | None,
               deadline: Deadline | None = None) -> Iterator[Answer]:
    """The bytes of ``url`` from ``offset`` on, from any fsspec filesystem. ``deadline`` is
    checked between reads (the backend's own timeouts bound a single read).

    Parameters
    ----------
    url : str
        An fsspec URL.
    offset : int
        The first byte wanted.
    chunk_size : int
        Bytes read at a time.
    storage_options : dict or None
        Passed to fsspec.
    deadline : Deadline, optional
        The deadline of the whole transfer, if any.

    Yields
    ------
    object
        The bytes of ``url`` from ``offset`` on, from any fsspec filesystem.
    """
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
                if deadline is not None:
                    deadline.advance(len(b))
                    if deadline.overdue():
                        raise TransientError(deadline.describe())
                yield b

        yield Answer(chunks(), offset, None if total is None else total - offset, total)
