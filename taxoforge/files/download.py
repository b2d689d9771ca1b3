"""The one download routine: resumable, checksummed, validated, atomic.

``download(url, dest)`` fetches ``url`` — ``http(s)://`` through :mod:`requests`, any other
fsspec URL or a local path through :mod:`fsspec` — into ``<dest>.part`` and renames it to
``dest`` when it is complete and verified. Used by the sources (a Catalogue of Life
release, the iNat21 annotation files) and by snapshot pulls.

Algorithm
    1. Hold ``<folder>/.<name>.lock`` (:class:`filelock.FileLock`) for the whole call, so two
       downloads to one destination (a UI run overlapping a scheduled one) take turns
       instead of writing into one ``.part``.
    2. Reuse ``dest`` only when it is known to be current: it matches ``checksum``
       (nothing is fetched), or — without a checksum — its record
       ``<folder>/.<name>.download.json`` names the same URL and the server answers a
       conditional request (``If-None-Match`` with the ETag, ``If-Modified-Since`` with the
       Last-Modified) with ``304 Not Modified``. A file with no record is never trusted
       because of its name: it is fetched again. Cache folders are keyed by the URL
       (:func:`cache_path`), never by the file name alone.
    3. Resume a ``.part`` left by an interrupted run only when it can be checked: the
       request carries ``If-Range`` with the ETag (or Last-Modified) of the first response,
       so a file replaced on the server comes back whole (200) instead of being spliced; or
       a ``checksum`` will check the result. Otherwise the ``.part`` starts over.
    4. Check every answer against the request: a 206 must carry ``Content-Range`` starting
       at the byte asked for (one restarting at 0 is taken as a fresh file, any other start
       is refused) with the total size seen before; a body longer than announced
       (trailing junk) is refused; a 416 completes a ``.part`` only when the server's total
       equals its length (a longer ``.part`` is deleted, never renamed into place).
    5. Retry dropped connections, 429 and 5xx answers ``retries`` times, waiting as
       ``Retry-After`` asks (capped) or with exponential back-off; after that
       :class:`DownloadError` says where the ``.part`` stopped, and the same call later
       resumes it.
    6. Check the ``.part`` against ``size`` and ``checksum`` (``"sha256:<hex>"``,
       ``"md5:<hex>"`` or bare hex). A mismatch deletes it — after one clean retry when it
       had been resumed — and raises :class:`ChecksumError`.
    7. ``os.replace`` moves it to ``dest``; the record keeps the URL, validators, size and
       SHA-256 (see :meth:`Downloaded.provenance`, which the sources put in their trees'
       ``source_versions``).

Every failure is a :class:`DownloadError` (``exit_code`` 8) naming the URL; a file that
is not there has ``status`` 404; :class:`ChecksumError` (``exit_code`` 4) is the
verification failure.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from taxoforge.files.atomic import write_text_atomic
from taxoforge.files.checksums import file_checksum, file_sha256, parse_checksum
from taxoforge.files.errors import ChecksumError, DownloadError
from taxoforge.files.transport import (
    MAX_RETRY_AFTER,
    RETRY_STATUSES,
    Answer,
    TransientError,
    fsspec_get,
    http_get,
    is_http_url,
    retry_after_seconds,
)

__all__ = ["DownloadError", "ChecksumError", "Downloaded", "download", "download_file", "cache_path",
           "is_http_url", "retry_after_seconds", "RETRY_STATUSES"]

CHUNK_SIZE = 1 << 16


@dataclass
class Downloaded:
    """What :func:`download` did: ``status`` is ``"downloaded"``, ``"present"`` (``dest``
    matched ``checksum``) or ``"not-modified"`` (the server said 304); ``resumed``:
    continued from an earlier ``.part``."""

    path: Path
    url: str
    status: str
    bytes_fetched: int = 0
    resumed: bool = False
    record: dict = field(default_factory=dict)

    def provenance(self) -> dict:
        """URL, validators (ETag, Last-Modified), size and SHA-256 of the file, for a tree's
        ``source_versions``."""
        keys = ("url", "etag", "last_modified", "size", "sha256", "checksum", "fetched")
        return {k: self.record[k] for k in keys if self.record.get(k) is not None}


def cache_path(cache_dir: str | os.PathLike, url: str) -> Path:
    """Where ``url`` is cached under ``cache_dir``: a folder named by the SHA-256 of the
    whole URL (two releases with one file name never share a slot), holding the file under
    its own name (the readers go by its extension)."""
    from urllib.parse import unquote, urlsplit

    name = unquote(urlsplit(str(url)).path).rstrip("/").rsplit("/", 1)[-1]
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,120}", name or ""):
        name = "download"
    return Path(cache_dir) / hashlib.sha256(str(url).encode()).hexdigest()[:24] / name


# ---- the record beside a download ------------------------------------------------------------
def _record_path(dest: Path) -> Path:
    return dest.with_name(f".{dest.name}.download.json")


def _read_record(dest: Path) -> dict:
    try:
        rec = json.loads(_record_path(dest).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return rec if isinstance(rec, dict) else {}


def _write_record(dest: Path, rec: dict) -> None:
    write_text_atomic(_record_path(dest), json.dumps(rec, indent=1, sort_keys=True) + "\n")


def _utc_now() -> str:
    return _dt.datetime.now(tz=_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---- the transfer -------------------------------------------------------------------------------
def _size(p: Path) -> int:
    try:
        return p.stat().st_size
    except FileNotFoundError:
        return 0


def _strong_etag(etag: str | None) -> str | None:
    return etag if etag and not etag.startswith("W/") else None


@dataclass
class _Transfer:
    url: str
    dest: Path
    part: Path
    size: int | None
    checksum: tuple[str, str] | None
    retries: int
    backoff: float
    timeout: float
    chunk_size: int
    storage_options: dict | None
    progress: Callable[[int], object]
    again: str
    fetched: int = 0
    resumed: bool = False

    def _discard_part(self) -> None:
        self.progress(-_size(self.part))
        self.part.unlink(missing_ok=True)

    def run(self, conditional: dict) -> str:
        """Fill ``part`` (resuming); ``"not-modified"`` after a 304, else ``"downloaded"``."""
        attempt = 0
        transient = _transient_errors()
        rec = _read_record(self.dest)
        if self.part.exists() and not self._may_resume(rec):
            self._discard_part()
        while True:
            offset = _size(self.part)
            if self.size is not None and offset > self.size:
                self._discard_part()
                offset = 0
            if self.size is not None and offset == self.size and offset:
                return "downloaded"
            try:
                return self._attempt(offset, rec, conditional if not offset else {})
            except DownloadError:
                raise
            except (TransientError, *transient) as e:
                attempt += 1
                have = _size(self.part)
                wait = getattr(e, "wait", None)
                if attempt > self.retries or (wait is not None and wait > MAX_RETRY_AFTER):
                    raise DownloadError(
                        f"{self.url}: download interrupted at {have} of "
                        f"{self.size if self.size is not None else '?'} bytes after {attempt} attempt(s) ({e}); "
                        f"{self.again} to resume from byte {have} (kept in {self.part})",
                        status=getattr(e, "status", None)) from e
                time.sleep(wait if wait is not None else self.backoff * 2 ** (attempt - 1))
                rec = _read_record(self.dest)

    def _may_resume(self, rec: dict) -> bool:
        """A ``.part`` may be continued when its record is of this URL and either the server
        can tell whether the file changed (If-Range) or a checksum will check the result."""
        if rec.get("state") != "partial" or rec.get("url") != self.url:
            return self.checksum is not None
        return bool(self.checksum or _strong_etag(rec.get("etag")) or rec.get("last_modified"))

    def _attempt(self, offset: int, rec: dict, conditional: dict) -> str:
        if is_http_url(self.url):
            if_range = _strong_etag(rec.get("etag")) or rec.get("last_modified")
            opener = http_get(self.url, offset, if_range=if_range, conditional=conditional,
                               timeout=self.timeout, chunk_size=self.chunk_size)
        else:
            opener = fsspec_get(self.url, offset, self.chunk_size, self.storage_options)
        with opener as ans:
            if ans.not_modified:
                return "not-modified"
            if ans.complete:  # 416: nothing after byte `offset`
                if ans.total == offset and (self.size is None or self.size == offset):
                    return "downloaded"
                restart = True  # longer than the file, or the file changed: start over
            else:
                known = rec.get("state") == "partial" and rec.get("url") == self.url
                restart = bool(offset and ans.start == offset and known and (
                    (rec.get("size") is not None and ans.total is not None and ans.total != rec["size"])
                    or (rec.get("etag") and ans.etag and ans.etag != rec["etag"])))
                # (the file changed on a server that ignored If-Range: keep nothing of the old)
            if not restart:
                return self._write(ans, offset, rec)
        self._discard_part()
        return self._attempt(0, {}, {})

    def _write(self, ans: Answer, offset: int, rec: dict) -> str:
        if ans.start != offset:  # a whole file (200, or a 206 from byte 0): start over
            self._discard_part()
            offset = 0
        if offset == 0:
            _write_record(self.dest, {"state": "partial", "url": self.url, "etag": ans.etag,
                                      "last_modified": ans.last_modified, "size": ans.total})
        self.resumed = self.resumed or offset > 0
        written, junk = 0, False
        with open(self.part, "ab" if offset else "wb") as f:
            for chunk in ans.chunks:
                if ans.length is not None and written + len(chunk) > ans.length:
                    junk = True
                    break
                f.write(chunk)
                written += len(chunk)
                self.fetched += len(chunk)
                self.progress(len(chunk))
        got = _size(self.part)
        expected = self.size if self.size is not None else ans.total
        if junk or (expected is not None and got > expected):
            self._discard_part()
            raise DownloadError(f"{self.url}: the server sent more bytes than the "
                                f"{ans.length if junk else expected} it announced; the download was deleted")
        if (ans.length is not None and written < ans.length) or (expected is not None and got < expected):
            raise ConnectionError(f"connection closed after {got} of {expected if expected is not None else '?'} bytes")
        return "downloaded"


def _transient_errors() -> tuple[type[BaseException], ...]:
    import requests
    import urllib3

    return (ConnectionError, TimeoutError, OSError, requests.RequestException, urllib3.exceptions.HTTPError)


def _conditional_headers(rec: dict) -> dict:
    headers = {}
    if rec.get("etag"):
        headers["If-None-Match"] = rec["etag"]
    if rec.get("last_modified"):
        headers["If-Modified-Since"] = rec["last_modified"]
    return headers


def download(url: str, dest: str | os.PathLike, *, checksum: str | None = None, size: int | None = None,
             retries: int = 5, timeout: float = 60.0, chunk_size: int = CHUNK_SIZE, backoff: float = 0.5,
             storage_options: dict | None = None, progress: Callable[[int], object] | None = None,
             again: str = "run the same command again", lock_timeout: float = 3600.0) -> Downloaded:
    """Download ``url`` to ``dest`` with resume and verification (see the module doc).

    ``size``: the expected length in bytes, where known; ``progress`` is called with the
    number of bytes each chunk adds (negative when a ``.part`` is discarded); ``again`` tells
    the user what resumes an interrupted download (in the error message); ``lock_timeout``:
    how long to wait for another download to the same ``dest``."""
    import filelock

    url = str(url)
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    want = parse_checksum(checksum) if checksum else None
    progress = progress or (lambda n: None)
    lock = filelock.FileLock(str(dest.with_name(f".{dest.name}.lock")), timeout=lock_timeout)
    try:
        lock.acquire()
    except filelock.Timeout:
        raise DownloadError(f"{url}: another download to {dest} has run for more than {lock_timeout:.0f} s") from None
    try:
        return _download_locked(url, dest, want, size, progress, dict(
            retries=retries, backoff=backoff, timeout=timeout, chunk_size=chunk_size,
            storage_options=storage_options, again=again))
    finally:
        lock.release()


def _download_locked(url: str, dest: Path, want: tuple[str, str] | None, size: int | None,
                     progress: Callable[[int], object], options: dict) -> Downloaded:
    rec = _read_record(dest)
    conditional: dict = {}
    if dest.exists():
        if want is not None:
            if file_checksum(dest, want[0]) == want[1]:
                return Downloaded(dest, url, "present", record=rec)
        elif (rec.get("state") == "complete" and rec.get("url") == url and is_http_url(url)
              and rec.get("sha256") and _size(dest) == rec.get("size") and file_sha256(dest) == rec["sha256"]):
            conditional = _conditional_headers(rec)
    part = dest.with_name(dest.name + ".part")
    t = _Transfer(url, dest, part, size, want, progress=progress, **options)
    for clean_retry in (False, True):
        status = t.run(conditional)
        if status == "not-modified":
            return Downloaded(dest, url, "not-modified", t.fetched, False, rec)
        conditional = {}
        got_size = _size(part)
        problem = None
        if size is not None and got_size != size:
            problem = f"{got_size} bytes, expected {size}"
        elif want is not None:
            got = file_checksum(part, want[0])
            if got != want[1]:
                problem = got
        if problem is None:
            rec = {**_read_record(dest), "state": "complete", "url": url, "size": got_size,
                   "sha256": file_sha256(part) if want is None or want[0] != "sha256" else want[1],
                   "checksum": f"{want[0]}:{want[1]}" if want else None, "fetched": _utc_now()}
            os.replace(part, dest)
            _write_record(dest, rec)
            return Downloaded(dest, url, "downloaded", t.fetched, t.resumed, rec)
        t._discard_part()
        if t.resumed and not clean_retry:
            t.resumed = False
            continue  # the old .part may have been the bad part: once more from byte 0
        if want is None or (size is not None and got_size != size):
            raise DownloadError(f"{url}: the download has {problem}; it was deleted")
        raise ChecksumError(f"{url}: {want[0]} of the download is {problem}, expected {want[1]}; it was deleted",
                            algorithm=want[0], got=problem, expected=want[1])
    raise AssertionError("unreachable")  # pragma: no cover


def download_file(url: str, dest: str | os.PathLike, **options) -> Path:
    """:func:`download` and return the path of the verified file."""
    return download(url, dest, **options).path
