"""The one download routine: resumable, checksummed, validated, bounded, atomic.

``download(url, dest)`` fetches ``url`` — ``http(s)://`` through :mod:`requests`, any other
fsspec URL or a local path through :mod:`fsspec` — into ``<dest>.part`` and renames it to
``dest`` when it is complete and verified. Used by the sources (a Catalogue of Life
release, the iNat21 annotation files) and by snapshot pulls. ``fetch_bytes(url,
max_bytes=…)`` reads a small document (a store's ``index.json``, a manifest) into memory
with the same transport, bounds and retry policy.

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
    3. Resume a ``.part`` — left by an interrupted run or by the attempt before — only when
       the result can be checked: with a validator (``If-Range`` with the strong ETag or
       the Last-Modified of the first answer, which the 206 must carry back) or with a
       ``checksum`` verified at the end. Otherwise every attempt starts from byte 0.
    4. Check every answer against the request: a 206 must carry ``Content-Range`` from the
       byte asked for to the end of a file of the total size seen before; one restarting
       at 0 is taken as a fresh file, any other start is refused, and a continuation that
       cannot be checked (no validator carried back, an unknown ``*`` total, a range that
       stops short, another total or ETag) is dropped and the file fetched again from
       byte 0. A 416 completes a ``.part`` only when the server's total equals its length.
    5. Bound what a server can send: an answer announcing another size than ``size`` is
       refused before a byte is written; no more than ``size`` (else the announced length,
       else ``max_size``) bytes are ever written, whatever the server sends; a size that
       does not fit on the disk is refused before writing. Each attempt runs under a
       :class:`~taxoforge.files.deadline.Deadline`: ``timeout`` seconds, plus one second for
       every ``min_rate`` bytes received — a trickling server is cut, an honest slow one is
       not (an attempt for ``n`` bytes lasts at most ``timeout + n / min_rate`` seconds).
       Redirects are followed on the same host only, unless ``allow_other_hosts``.
    6. Retry dropped connections, deadlines, 429 and 5xx answers as the shared
       :class:`~taxoforge.files.retry.RetryPolicy` says (``Retry-After`` up to
       ``max_retry_after``, each wait said on the ``taxoforge.files`` logger); after that
       :class:`DownloadError` says where the ``.part`` stopped, and the same call later
       resumes it when it can be checked (step 3).
    7. Check the ``.part`` against ``size`` and ``checksum`` (``"sha256:<hex>"``,
       ``"md5:<hex>"`` or bare hex). A mismatch deletes it — after one clean retry when it
       had been resumed — and raises :class:`ChecksumError`.
    8. ``os.replace`` moves it to ``dest``; the record keeps the URL, validators, size and
       SHA-256 (see :meth:`Downloaded.provenance`, which the sources put in their trees'
       ``source_versions``).

Every failure is a :class:`DownloadError` (``exit_code`` 8) naming the URL; a file that
is not there has ``status`` 404; :class:`ChecksumError` (``exit_code`` 4) is the
verification failure (checksum or size); :class:`LocalFileError` (an :class:`OSError`,
``exit_code`` 11) names the local file that could not be written (no space left …).
"""

from __future__ import annotations

import datetime as _dt
import errno
import hashlib
import json
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from taxoforge.files.atomic import write_text_atomic
from taxoforge.files.checksums import file_checksum, file_sha256, parse_checksum
from taxoforge.files.deadline import Deadline
from taxoforge.files.errors import ChecksumError, DownloadError, LocalFileError
from taxoforge.files.retry import RetryPolicy, retrying
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

__all__ = ["DownloadError", "ChecksumError", "LocalFileError", "Downloaded", "download", "download_file",
           "fetch_bytes", "cache_path", "is_http_url", "retry_after_seconds", "require_space", "RETRY_STATUSES",
           "DEFAULT_MIN_RATE", "CHUNK_SIZE"]

#: bytes read and written at a time: with the caps below, what a transfer holds in memory
CHUNK_SIZE = 1 << 16
#: least average speed (bytes a second) an attempt must keep after its first ``timeout``
#: seconds; a server trickling slower is cut and the attempt retried
DEFAULT_MIN_RATE = 16 * 1024


@dataclass
class Downloaded:
    """What :func:`download` did: ``status`` is ``"downloaded"``, ``"present"`` (``dest``
    matched ``checksum``) or ``"not-modified"`` (the server said 304); ``resumed``:
    continued from an earlier ``.part``.

    Attributes
    ----------
    path : Path
        The verified file.
    url : str
        Where it came from.
    status : str
        ``"downloaded"``, ``"present"`` or ``"not-modified"``.
    bytes_fetched : int
        Bytes fetched this time.
    resumed : bool
        Whether it continued from an earlier ``.part``.
    record : dict
        The server's validators and what was checked, for provenance.
    """

    path: Path
    url: str
    status: str
    bytes_fetched: int = 0
    resumed: bool = False
    record: dict = field(default_factory=dict)

    def provenance(self) -> dict:
        """URL, validators (ETag, Last-Modified), size and SHA-256 of the file, for a tree's
        ``source_versions``.

        Returns
        -------
        dict
            URL, validators, size and SHA-256 of the file.
        """
        keys = ("url", "etag", "last_modified", "size", "sha256", "checksum", "fetched")
        return {k: self.record[k] for k in keys if self.record.get(k) is not None}


def cache_path(cache_dir: str | os.PathLike, url: str) -> Path:
    """Where ``url`` is cached under ``cache_dir``: a folder named by the SHA-256 of the
    whole URL (two releases with one file name never share a slot), holding the file under
    its own name (the readers go by its extension).

    Parameters
    ----------
    cache_dir : str or os.PathLike
        The cache folder (default: a temporary one).
    url : str
        The URL.

    Returns
    -------
    Path
        The cached file's path.
    """
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
    try:
        write_text_atomic(_record_path(dest), json.dumps(rec, indent=1, sort_keys=True) + "\n")
    except OSError as e:
        raise _local(e, _record_path(dest)) from e


def _utc_now() -> str:
    return _dt.datetime.now(tz=_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _local(e: OSError, path: Path) -> LocalFileError:
    """``e`` as a :class:`LocalFileError` naming ``path`` (a failed write names no file)."""
    if isinstance(e, LocalFileError):
        return e
    return LocalFileError(e.errno or errno.EIO, e.strerror or str(e), str(e.filename or path))


def require_space(folder: Path, need: int) -> None:
    """Raise :class:`LocalFileError` (ENOSPC) when ``need`` more bytes do not fit in ``folder``.

    Parameters
    ----------
    folder : pathlib.Path
        Where the bytes go.
    need : int
        How many more bytes (nothing is checked for 0 or less).
    """
    try:  # nothing to check for 0 bytes or less (``free`` is then ``need`` itself)
        free = shutil.disk_usage(folder).free if need > 0 else need
    except OSError:
        return
    if need > free:
        raise LocalFileError(errno.ENOSPC, f"No space left on device: {need:,} bytes to write, {free:,} free",
                             str(folder))


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
    max_size: int | None
    checksum: tuple[str, str] | None
    policy: RetryPolicy
    timeout: float
    min_rate: float | None
    chunk_size: int
    storage_options: dict | None
    allow_other_hosts: bool
    progress: Callable[[int], object]
    again: str
    fetched: int = 0
    resumed: bool = False

    def _discard_part(self) -> None:
        self.progress(-_size(self.part))
        self.part.unlink(missing_ok=True)

    def run(self, conditional: dict) -> str:
        """Fill ``part`` (resuming what can be checked); ``"not-modified"`` after a 304, else
        ``"downloaded"``."""

        def attempt(n: int) -> str:
            rec = _read_record(self.dest)
            if self.part.exists() and not self._may_resume(rec):
                self._discard_part()  # cannot be checked: start over, never splice
            offset = _size(self.part)
            if self.size is not None and offset > self.size:
                self._discard_part()
                offset = 0
            if self.size is not None and offset == self.size and offset:
                return "downloaded"
            return self._attempt(offset, rec, conditional if not offset else {})

        def give_up(e: BaseException, attempts: int) -> DownloadError:
            have = _size(self.part)
            keep = (f"{self.again} to resume from byte {have} (kept in {self.part})" if have and
                    self._may_resume(_read_record(self.dest)) else f"{self.again} to try again")
            return DownloadError(f"{self.url}: download interrupted at {have} of "
                                 f"{self.size if self.size is not None else '?'} bytes after {attempts} attempt(s) "
                                 f"({e}); {keep}", status=getattr(e, "status", None))

        return retrying(self.url, self.policy, attempt, give_up)

    def _may_resume(self, rec: dict) -> bool:
        """A ``.part`` may be continued when a checksum will check the result, or when its
        record is of this URL and holds a validator the server can be asked with (If-Range)."""
        if self.checksum is not None:
            return True
        return (rec.get("state") == "partial" and rec.get("url") == self.url
                and bool(_strong_etag(rec.get("etag")) or rec.get("last_modified")))

    def _continuation_checks(self, ans: Answer, offset: int, rec: dict) -> bool:
        """A 206 from ``offset`` may be appended to the ``.part`` (see the module doc, step 4)."""
        known = rec.get("state") == "partial" and rec.get("url") == self.url
        total = rec.get("size") if known and rec.get("size") is not None else self.size
        if ans.total is None or (total is not None and ans.total != total) or ans.end != ans.total - 1:
            return False
        if known and rec.get("etag") and ans.etag and ans.etag != rec["etag"]:
            return False  # the file changed on a server that ignored If-Range
        if self.checksum is not None:
            return True  # checked at the end, with one clean retry
        if known and _strong_etag(rec.get("etag")):
            return ans.etag == rec["etag"]
        return bool(known and rec.get("last_modified") and ans.last_modified == rec["last_modified"])

    def _attempt(self, offset: int, rec: dict, conditional: dict) -> str:
        with Deadline(self.timeout, min_rate=self.min_rate) as deadline:
            if is_http_url(self.url):
                known = rec.get("state") == "partial" and rec.get("url") == self.url
                if_range = (_strong_etag(rec.get("etag")) or rec.get("last_modified")) if known else None
                opener = http_get(self.url, offset, if_range=if_range, conditional=conditional,
                                  timeout=self.timeout, chunk_size=self.chunk_size, deadline=deadline,
                                  allow_other_hosts=self.allow_other_hosts)
            else:
                opener = fsspec_get(self.url, offset, self.chunk_size, self.storage_options, deadline)
            with opener as ans:
                if ans.not_modified:
                    return "not-modified"
                if ans.complete:  # 416: nothing after byte `offset`
                    if ans.total == offset and (self.size is None or self.size == offset):
                        return "downloaded"
                    restart = True  # longer than the file, or the file changed: start over
                else:
                    restart = bool(offset and ans.start == offset and not self._continuation_checks(ans, offset, rec))
                if not restart:
                    return self._write(ans, offset, deadline)
        self._discard_part()
        return self._attempt(0, {}, {})

    def _limit(self, ans: Answer) -> int | None:
        """The most bytes the file may have, refusing an announced size that cannot be right."""
        if self.size is not None:
            if ans.total is not None and ans.total != self.size:
                raise ChecksumError(f"{self.url}: the server announces {ans.total:,} bytes, {self.size:,} are "
                                    "expected; refused before writing anything", algorithm="size",
                                    got=str(ans.total), expected=str(self.size))
            return self.size
        if self.max_size is not None and ans.total is not None and ans.total > self.max_size:
            raise DownloadError(f"{self.url}: the server announces {ans.total:,} bytes, more than the "
                                f"{self.max_size:,} allowed; refused before writing anything")
        return ans.total if ans.total is not None else self.max_size

    def _write(self, ans: Answer, offset: int, deadline: Deadline) -> str:
        if ans.start != offset:  # a whole file (200, or a 206 from byte 0): start over
            self._discard_part()
            offset = 0
        limit = self._limit(ans)
        if limit is not None:
            require_space(self.part.parent, limit - offset)
        if offset == 0:
            _write_record(self.dest, {"state": "partial", "url": self.url, "etag": ans.etag,
                                      "last_modified": ans.last_modified, "size": ans.total})
        self.resumed = self.resumed or offset > 0
        written, over = 0, None
        try:
            f = open(self.part, "ab" if offset else "wb", buffering=0)
        except OSError as e:
            raise _local(e, self.part) from e
        with f:
            for chunk in ans.chunks:  # the network's errors pass through: they are retried
                if ans.length is not None and written + len(chunk) > ans.length:
                    over = ans.length + offset
                    break
                if limit is not None and offset + written + len(chunk) > limit:
                    over = limit
                    break
                _write_all(f, chunk, self.part)
                written += len(chunk)
                self.fetched += len(chunk)
                self.progress(len(chunk))
                if deadline.overdue():
                    raise TransientError(deadline.describe())
        if over is not None:
            self._discard_part()
            raise ChecksumError(f"{self.url}: the server sent more bytes than the {over:,} expected; stopped there, "
                                "the download was deleted", algorithm="size", got=f">{over}", expected=str(over))
        got = offset + written
        end = self.size if self.size is not None else ans.total
        if (ans.length is not None and written < ans.length) or (end is not None and got < end):
            raise ConnectionError(f"connection closed after {got} of {end if end is not None else '?'} bytes")
        return "downloaded"


def _write_all(f, chunk: bytes, path: Path) -> None:
    """Write all of ``chunk`` to the unbuffered file ``f``; a failure names ``path``."""
    view = memoryview(chunk)
    try:
        while view:
            n = f.write(view)
            view = view[n:]
    except OSError as e:
        raise _local(e, path) from e


def _conditional_headers(rec: dict) -> dict:
    headers = {}
    if rec.get("etag"):
        headers["If-None-Match"] = rec["etag"]
    if rec.get("last_modified"):
        headers["If-Modified-Since"] = rec["last_modified"]
    return headers


def download(url: str, dest: str | os.PathLike, *, checksum: str | None = None, size: int | None = None,
             max_size: int | None = None, retries: int = 5, timeout: float = 60.0,
             min_rate: float | None = DEFAULT_MIN_RATE, chunk_size: int = CHUNK_SIZE, backoff: float = 0.5,
             max_retry_after: float = MAX_RETRY_AFTER, allow_other_hosts: bool = False,
             storage_options: dict | None = None, progress: Callable[[int], object] | None = None,
             again: str = "run the same command again", lock_timeout: float = 3600.0) -> Downloaded:
    """Download ``url`` to ``dest`` with resume and verification (see the module doc).

    Parameters
    ----------
    url, dest : str
        What to fetch and where to put it.
    checksum : str, optional
        ``"sha256:<hex>"``, ``"md5:<hex>"`` or bare hex: the file must match it.
    size : int, optional
        The exact length in bytes, where known: nothing beyond it is ever written.
    max_size : int, optional
        Without ``size``: the most bytes accepted (a larger announced or sent file is refused).
    retries, backoff, max_retry_after : int, float, float
        The shared :class:`~taxoforge.files.retry.RetryPolicy`.
    timeout, min_rate : float
        Each attempt's :class:`~taxoforge.files.deadline.Deadline`: ``timeout`` seconds (also
        each read's timeout), plus a second per ``min_rate`` bytes received (None: no rate).
    allow_other_hosts : bool
        Follow redirects to another host (or from HTTPS to HTTP).
    progress : callable, optional
        Called with the bytes each chunk adds (negative when a ``.part`` is discarded).
    again : str
        What the user runs to resume an interrupted download (in the error message).
    lock_timeout : float
        How long to wait for another download to the same ``dest``.
    chunk_size : int, optional
        Bytes read at a time.
    storage_options : dict, optional
        Passed to fsspec for a non-HTTP URL.

    Returns
    -------
    Downloaded
        What was done, and the verified file.
    """
    import filelock

    url = str(url)
    dest = Path(dest)
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise _local(e, dest.parent) from e
    want = parse_checksum(checksum) if checksum else None
    progress = progress or (lambda n: None)
    lock = filelock.FileLock(str(dest.with_name(f".{dest.name}.lock")), timeout=lock_timeout)
    try:
        lock.acquire()
    except filelock.Timeout:
        raise DownloadError(f"{url}: another download to {dest} has run for more than {lock_timeout:.0f} s") from None
    except OSError as e:
        raise _local(e, dest.with_name(f".{dest.name}.lock")) from e
    try:
        return _download_locked(url, dest, want, size, progress, dict(
            max_size=max_size, policy=RetryPolicy(retries, backoff, max_retry_after), timeout=timeout,
            min_rate=min_rate, chunk_size=chunk_size, storage_options=storage_options,
            allow_other_hosts=allow_other_hosts, again=again))
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
    t = _Transfer(url, dest, part, size, checksum=want, progress=progress, **options)
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
            try:
                os.replace(part, dest)
            except OSError as e:
                raise _local(e, dest) from e
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
    """:func:`download` and return the path of the verified file.

    Parameters
    ----------
    url : str
        The URL.
    dest : str or os.PathLike
        The file to write.
    **options
        Passed to :func:`download`.

    Returns
    -------
    Path
        The verified file.
    """
    return download(url, dest, **options).path


def fetch_bytes(url: str, *, max_bytes: int, what: str = "file", retries: int = 3, backoff: float = 0.5,
                max_retry_after: float = MAX_RETRY_AFTER, timeout: float = 60.0,
                min_rate: float | None = DEFAULT_MIN_RATE, allow_other_hosts: bool = False,
                storage_options: dict | None = None) -> bytearray:
    """The bytes of ``url`` (HTTP(S) or any fsspec URL), at most ``max_bytes`` of them: a
    larger file is refused (:class:`DownloadError` naming ``what`` and the limit) as soon as
    its announced size or the bytes received pass the limit, so memory never holds more.
    Same transport, deadline, redirect rule and :class:`~taxoforge.files.retry.RetryPolicy`
    as :func:`download`; a retry starts from byte 0. A missing file is a
    :class:`DownloadError` with ``status`` 404.

    Parameters
    ----------
    url : str
        The URL.
    max_bytes : int
        Most bytes accepted.
    what : str, optional
        What the file is, for messages.
    retries : int, optional
        How often to retry.
    backoff : float, optional
        Seconds before the first retry, doubled each time.
    max_retry_after : float, optional
        Longest ``Retry-After`` honoured.
    timeout : float, optional
        Seconds to wait.
    min_rate : float, optional
        Least bytes per second before a transfer counts as stalled.
    allow_other_hosts : bool, optional
        Whether a redirect to another host is followed.
    storage_options : dict, optional
        Passed to fsspec for a non-HTTP URL.

    Returns
    -------
    bytearray
        The file's bytes.
    """
    url = str(url)
    policy = RetryPolicy(retries, backoff, max_retry_after)

    def too_large(n: str) -> DownloadError:
        return DownloadError(f"{url}: {n} bytes, more than the {max_bytes:,} a {what} may have; refused before "
                             "reading it", status=413)

    def attempt(n: int) -> bytearray:
        with Deadline(timeout, min_rate=min_rate) as deadline:
            if is_http_url(url):
                opener = http_get(url, 0, if_range=None, conditional={}, timeout=timeout, chunk_size=CHUNK_SIZE,
                                  deadline=deadline, allow_other_hosts=allow_other_hosts)
            else:
                opener = fsspec_get(url, 0, CHUNK_SIZE, storage_options, deadline)
            with opener as ans:
                if ans.total is not None and ans.total > max_bytes:
                    raise too_large(f"{ans.total:,}")
                buf = bytearray()
                for chunk in ans.chunks:
                    if len(buf) + len(chunk) > max_bytes:
                        raise too_large(f"more than {max_bytes:,}")
                    if ans.length is not None and len(buf) + len(chunk) > ans.length:
                        raise DownloadError(f"{url}: the server sent more bytes than the {ans.length:,} it announced")
                    buf += chunk
                if ans.length is not None and len(buf) < ans.length:
                    raise ConnectionError(f"connection closed after {len(buf)} of {ans.length} bytes")
                return buf

    def give_up(e: BaseException, attempts: int) -> DownloadError:
        return DownloadError(f"{url}: could not be read after {attempts} attempt(s) ({e})",
                             status=getattr(e, "status", None))

    return retrying(url, policy, attempt, give_up)
