"""The one download routine: resumable, checksummed, atomic.

``download(url, dest)`` fetches ``url`` — ``http(s)://`` through :mod:`requests`, any other
fsspec URL or a local path through :mod:`fsspec` — into ``<dest>.part`` and renames it to
``dest`` when it is complete and verified. Used by the sources (a Catalogue of Life
release, the iNat21 annotation files) and by snapshot pulls.

Algorithm
    1. ``dest`` already there and matching ``checksum``: nothing is fetched.
    2. A ``<dest>.part`` left by an interrupted run is continued: HTTP asks for the
       missing bytes (``Range: bytes=N-``), other filesystems seek. A server that ignores
       Range sends the whole file and the ``.part`` starts over.
    3. A dropped connection is retried ``retries`` times with exponential back-off, each
       time resuming where it stopped; after that :class:`DownloadError` says where the
       ``.part`` stopped, and the same call later resumes it.
    4. The ``.part`` is checked against ``size`` and ``checksum``
       (``"sha256:<hex>"``, ``"md5:<hex>"`` or bare hex). A mismatch deletes it — after one
       clean retry when it had been resumed from an earlier run — and raises
       :class:`ChecksumError`.
    5. ``os.replace`` moves it to ``dest``.

Every failure is a :class:`DownloadError` (``exit_code`` 8) naming the URL; a file that
is not there has ``status`` 404; :class:`ChecksumError` (``exit_code`` 4) is the
verification failure.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from taxoforge.files.checksums import file_checksum, parse_checksum

__all__ = ["DownloadError", "ChecksumError", "Downloaded", "download", "download_file", "is_http_url"]

CHUNK_SIZE = 1 << 16


class DownloadError(Exception):
    """A download could not be completed as asked; the message names the URL."""

    exit_code = 8

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ChecksumError(DownloadError):
    """A downloaded file does not match its expected checksum (it was deleted)."""

    exit_code = 4

    def __init__(self, message: str, *, algorithm: str, got: str, expected: str) -> None:
        super().__init__(message)
        self.algorithm, self.got, self.expected = algorithm, got, expected


@dataclass
class Downloaded:
    """What :func:`download` did: ``status`` is ``"downloaded"`` or ``"present"`` (``dest``
    was already there and verified); ``resumed``: continued from an earlier ``.part``."""

    path: Path
    url: str
    status: str
    bytes_fetched: int = 0
    resumed: bool = False


def is_http_url(url: str) -> bool:
    return str(url).startswith(("http://", "https://"))


# ---- where the bytes come from --------------------------------------------------------------
@dataclass
class _Response:
    """One answer to "bytes from ``offset`` on": ``start`` is the byte the chunks begin at
    (0 when the source ignored the offset), ``total`` the file's size where known,
    ``complete``: nothing is left to fetch."""

    chunks: Iterator[bytes]
    start: int
    total: int | None = None
    complete: bool = False


def _transient_errors() -> tuple[type[BaseException], ...]:
    import requests
    import urllib3

    return (ConnectionError, TimeoutError, OSError, requests.RequestException, urllib3.exceptions.HTTPError)


@contextlib.contextmanager
def _http_open(url: str, offset: int, timeout: float, chunk_size: int) -> Iterator[_Response]:
    import requests

    # identity: Range offsets must be offsets in the stored file, not in a compressed stream
    headers = {"Accept-Encoding": "identity"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    r = requests.get(url, headers=headers, stream=True, timeout=timeout)
    with r:
        if r.status_code == 404:
            raise DownloadError(f"{url}: not found (HTTP 404)", status=404)
        if r.status_code == 416 and offset:
            yield _Response(iter(()), offset, complete=True)
            return
        if r.status_code not in (200, 206):
            raise DownloadError(f"{url}: HTTP {r.status_code} {r.reason or ''}".rstrip(), status=r.status_code)
        start, total = 0, None
        if r.status_code == 206:
            m = re.fullmatch(r"bytes (\d+)-(\d+)/(\d+|\*)", r.headers.get("Content-Range", "").strip())
            if not m:
                raise DownloadError(f"{url}: HTTP 206 with a bad Content-Range "
                                    f"{r.headers.get('Content-Range')!r}", status=206)
            start = int(m.group(1))
            total = None if m.group(3) == "*" else int(m.group(3))
            if start not in (0, offset):
                raise DownloadError(f"{url}: asked for bytes from {offset}, the server sent them from {start}",
                                    status=206)
        elif r.headers.get("Content-Length", "").isdigit():
            total = int(r.headers["Content-Length"])

        def chunks() -> Iterator[bytes]:
            # read1 hands over every byte that arrived before a connection drops, so the
            # .part holds all of them and a resume asks only for the rest
            read1 = getattr(r.raw, "read1", None)
            while True:
                b = read1(chunk_size) if read1 is not None else r.raw.read(chunk_size)
                if not b:
                    return
                yield b

        yield _Response(chunks(), start, total)


@contextlib.contextmanager
def _fsspec_open(url: str, offset: int, chunk_size: int, storage_options: dict | None) -> Iterator[_Response]:
    import fsspec

    fs, path = fsspec.core.url_to_fs(url, **(storage_options or {}))
    try:
        f = fs.open(path, "rb")
    except FileNotFoundError:
        raise DownloadError(f"{url}: not found", status=404) from None
    with f:
        total = getattr(f, "size", None)
        if total is not None and offset >= total:
            yield _Response(iter(()), offset, total, complete=offset == total)
            return
        f.seek(offset)

        def chunks() -> Iterator[bytes]:
            while True:
                b = f.read(chunk_size)
                if not b:
                    return
                yield b

        yield _Response(chunks(), offset, total)


# ---- the routine ----------------------------------------------------------------------------
def _size(p: Path) -> int:
    try:
        return p.stat().st_size
    except FileNotFoundError:
        return 0


def _transfer(url: str, part: Path, size: int | None, *, retries: int, backoff: float, timeout: float,
              chunk_size: int, storage_options: dict | None, progress: Callable[[int], object],
              again: str) -> tuple[int, bool]:
    """Fill ``part`` with the bytes of ``url`` (resuming). Returns (bytes fetched, resumed?)."""
    fetched, resumed, attempt = 0, False, 0
    transient = _transient_errors()
    while True:
        offset = _size(part)
        if size is not None and offset > size:
            progress(-offset)
            part.unlink()
            offset = 0
        if size is not None and offset == size and offset:
            return fetched, resumed
        try:
            opener = (_http_open(url, offset, timeout, chunk_size) if is_http_url(url)
                      else _fsspec_open(url, offset, chunk_size, storage_options))
            with opener as resp:
                if resp.complete:
                    return fetched, resumed
                if resp.start != offset:  # the source ignored the offset: start over
                    progress(-offset)
                    offset = 0
                resumed = resumed or offset > 0
                with open(part, "ab" if offset else "wb") as f:
                    for chunk in resp.chunks:
                        f.write(chunk)
                        fetched += len(chunk)
                        progress(len(chunk))
                expected = size if size is not None else resp.total
            got = _size(part)
            if expected is None or got >= expected:
                return fetched, resumed  # longer than expected: the verification refuses it
            raise ConnectionError(f"connection closed after {got} of {expected} bytes")
        except DownloadError:
            raise
        except transient as e:
            attempt += 1
            have = _size(part)
            if attempt > retries:
                raise DownloadError(
                    f"{url}: download interrupted at {have} of {size if size is not None else '?'} bytes after "
                    f"{attempt} attempt(s) ({e}); {again} to resume from byte {have} "
                    f"(kept in {part})") from e
            time.sleep(backoff * 2 ** (attempt - 1))


def download(url: str, dest: str | os.PathLike, *, checksum: str | None = None, size: int | None = None,
             retries: int = 5, timeout: float = 60.0, chunk_size: int = CHUNK_SIZE, backoff: float = 0.5,
             storage_options: dict | None = None, progress: Callable[[int], object] | None = None,
             again: str = "run the same command again") -> Downloaded:
    """Download ``url`` to ``dest`` with resume and verification (see the module doc).

    ``size``: the expected length in bytes, where known; ``progress`` is called with the
    number of bytes each chunk adds (negative when a ``.part`` is discarded); ``again`` tells
    the user what resumes an interrupted download (in the error message)."""
    url = str(url)
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    want = parse_checksum(checksum) if checksum else None
    progress = progress or (lambda n: None)
    if dest.exists() and (want is None or file_checksum(dest, want[0]) == want[1]):
        return Downloaded(dest, url, "present")
    part = dest.with_name(dest.name + ".part")
    total_fetched = 0
    for clean_retry in (False, True):
        fetched, resumed = _transfer(url, part, size, retries=retries, backoff=backoff, timeout=timeout,
                                     chunk_size=chunk_size, storage_options=storage_options, progress=progress,
                                     again=again)
        total_fetched += fetched
        got_size = _size(part)
        problem = None
        if size is not None and got_size != size:
            problem = f"{got_size} bytes, expected {size}"
        elif want is not None:
            got = file_checksum(part, want[0])
            if got != want[1]:
                problem = got
        if problem is None:
            os.replace(part, dest)
            return Downloaded(dest, url, "downloaded", total_fetched, resumed)
        progress(-got_size)
        part.unlink(missing_ok=True)
        if resumed and not clean_retry:
            continue  # the old .part may have been the bad part: once more from byte 0
        if want is None or size is not None and got_size != size:
            raise DownloadError(f"{url}: the download has {problem}; it was deleted")
        raise ChecksumError(f"{url}: {want[0]} of the download is {problem}, expected {want[1]}; it was deleted",
                            algorithm=want[0], got=problem, expected=want[1])
    raise AssertionError("unreachable")  # pragma: no cover


def download_file(url: str, dest: str | os.PathLike, **options) -> Path:
    """:func:`download` and return the path of the verified file."""
    return download(url, dest, **options).path
