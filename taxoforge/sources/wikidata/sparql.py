"""A polite SPARQL client for the Wikidata Query Service (WDQS), on SPARQLWrapper.

Being a good citizen of WDQS (https://www.mediawiki.org/wiki/Wikidata_Query_Service/User_Manual):

* a descriptive ``User-Agent`` with contact details (:func:`user_agent`); the public
  endpoint is refused without a contact, since WDQS blocks anonymous generic agents;
* one request at a time per endpoint *on the machine*: a lock per endpoint shared by every
  client and thread of the process (whatever lock folder each client was given), and a
  file lock (``filelock``) on a lock file named after the endpoint (:func:`default_lock_dir`),
  so that several processes — a scheduled rebuild and a run launched from the UI, two CLI
  calls — queue their queries instead of piling them on the endpoint (processes must share
  the lock folder for that; an endpoint is named the same whatever the case of its host or a
  default port);
* a pace: at least ``min_interval`` seconds (default :data:`DEFAULT_MIN_INTERVAL`, 1 s)
  between the starts of two requests to one endpoint, across those processes too (the last
  start is kept beside the lock file). WDQS allows a handful of parallel queries and 60 s
  of query time per minute per client; one query at a time, one start per second at most,
  keeps a weekly rebuild far below that;
* HTTP 429 and 503: wait what ``Retry-After`` says (seconds or an HTTP date), then retry;
  a server asking for more than ``max_retry_after`` is an error, not a hang;
* HTTP 5xx, timeouts, dropped connections and truncated or malformed JSON bodies:
  exponential backoff (``backoff_base * 2**attempt``, capped at ``backoff_max``);
* a *deadline* per request (:class:`taxoforge.files.Deadline`, the one shared with the
  downloads): ``timeout`` bounds the whole request — connecting, a TLS handshake, the
  headers and the body together — not each socket read, so a server trickling a byte
  every half second cannot hold a run: at the deadline the connection is shut down and
  the attempt counts as a client timeout. Keep ``timeout`` above the server's own query
  limit (WDQS: 60 s; the default is 65 s), so a request the client gives up is no longer
  running on the server when the next one starts;
* a query the *server* timed out (WDQS's 60 s limit: a 500 whose body names a
  ``TimeoutException``) is not hammered: one more try, then :class:`QueryTimeout`, which
  says to use smaller batches;
* HTTP 403 (agent blocked) and 4xx errors are not retried.

Every attempt is logged in :attr:`SparqlClient.log` (when, how long, outcome) so the query
time can go into a snapshot manifest (:meth:`SparqlClient.summary`).
"""

from __future__ import annotations

import email.utils
import hashlib
import http.client
import json
import os
import socket
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from filelock import FileLock
from SPARQLWrapper import JSON, POST, GET, SPARQLWrapper

from taxoforge.files import Deadline, default_cache_dir

__all__ = [
    "WDQS_ENDPOINT",
    "DEFAULT_MIN_INTERVAL",
    "SparqlClient",
    "SparqlError",
    "QueryTimeout",
    "RequestRecord",
    "default_lock_dir",
    "user_agent",
]

WDQS_ENDPOINT = "https://query.wikidata.org/sparql"
#: Least time between the starts of two requests to one endpoint, by default (seconds).
DEFAULT_MIN_INTERVAL = 1.0
_ERROR_BODY_LIMIT = 64 * 1024  # bytes of an error response kept for the message


class SparqlError(RuntimeError):
    """A query failed for good (after retries, or with an error that retrying cannot fix)."""


class QueryTimeout(SparqlError):
    """The server gave up on a query (WDQS: 60 s). Use smaller batches."""


class _Retryable(Exception):
    def __init__(self, reason: str, wait: float | None = None, server_timeout: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.wait = wait
        self.server_timeout = server_timeout


@dataclass
class RequestRecord:
    """One HTTP attempt.

    Attributes
    ----------
    query_name : str
        The query's name.
    attempt : int
        Which attempt (1 first).
    started_at : str
        When it started (ISO 8601).
    seconds : float
        How long it took.
    outcome : str
        ``ok``, an HTTP status or the error.
    waited : float
        Seconds waited before it.
    """

    query_name: str
    attempt: int
    started_at: str  # ISO 8601, UTC
    seconds: float
    outcome: str  # "ok" or the reason of the failure
    waited: float = 0.0  # sleep after this attempt, before the next


def user_agent(contact: str, *, tool: str = "taxoforge", version: str | None = None) -> str:
    """A User-Agent in the form the Wikimedia policy asks for: ``tool/version (contact) library``.

    >>> user_agent("ops@example.org", version="0.1.0").startswith("taxoforge/0.1.0 (ops@example.org)")
    True

    Parameters
    ----------
    contact : str
        Contact details (e-mail or URL).
    tool : str, optional
        The tool's name.
    version : str, optional
        The version.

    Returns
    -------
    str
        The header's value.
    """
    if version is None:
        try:
            from importlib.metadata import version as _v

            version = _v("taxoforge")
        except Exception:  # pragma: no cover - running from a bare checkout
            version = "0"
    import SPARQLWrapper as _sw

    contact = " ".join(str(contact).split())
    return f"{tool}/{version} ({contact}) SPARQLWrapper/{_sw.__version__}"


def _parse_retry_after(value: str | None) -> float | None:
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def _now_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# --------------------------------------------------------------------------- one endpoint at a time


def default_lock_dir() -> Path:
    """Where the endpoint lock files live: ``$TAXOFORGE_LOCK_DIR``, else ``locks`` in
    taxoforge's cache folder (:func:`taxoforge.files.default_cache_dir`: ``$TAXOFORGE_CACHE_DIR``,
    ``$XDG_CACHE_HOME/taxoforge`` or ``~/.cache/taxoforge``), else — when the home
    folder is not writable, as for a service account without one — a per-user folder in the
    temporary directory. Processes of one user on one machine share it.

    Returns
    -------
    pathlib.Path
        The folder (not created here).
    """
    env = os.environ.get("TAXOFORGE_LOCK_DIR")
    if env:
        return Path(env)
    candidate = default_cache_dir() / "locks"
    try:
        candidate.mkdir(parents=True, exist_ok=True)
        if os.access(candidate, os.W_OK):
            return candidate
    except OSError:
        pass
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    return Path(tempfile.gettempdir()) / f"taxoforge-locks-{uid}"


def _endpoint_key(endpoint: str) -> str:
    """A file-name-safe key of an endpoint URL (scheme and host case-folded, no trailing /)."""
    parts = urllib.parse.urlsplit(endpoint.strip())
    scheme, host, port = parts.scheme.lower(), (parts.hostname or "").lower(), parts.port
    netloc = host if port in (None, {"http": 80, "https": 443}.get(scheme)) else f"{host}:{port}"
    canon = urllib.parse.urlunsplit((scheme, netloc, parts.path.rstrip("/"), parts.query, ""))
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()[:32]


class _EndpointGate:
    """Serialises the requests to one endpoint: a thread lock for the clients of this process,
    a file lock for the other processes of the machine, and the start time of the last
    request (kept in a file beside the lock, under the lock) for the pace."""

    def __init__(self, endpoint: str, lock_dir: Path, thread_lock: threading.Lock):
        lock_dir.mkdir(parents=True, exist_ok=True)
        key = _endpoint_key(endpoint)
        self.endpoint = endpoint
        self.thread_lock = thread_lock  # shared by every gate of this endpoint in the process
        self.lock_path = lock_dir / f"sparql-{key}.lock"
        self.file_lock = FileLock(str(self.lock_path))
        self.last_start_path = lock_dir / f"sparql-{key}.last"

    def __enter__(self) -> "_EndpointGate":
        self.thread_lock.acquire()
        try:
            self.file_lock.acquire()
        except BaseException:
            self.thread_lock.release()
            raise
        return self

    def __exit__(self, *exc) -> None:
        try:
            self.file_lock.release()
        finally:
            self.thread_lock.release()

    def pace(self, min_interval: float) -> float:
        """Wait until ``min_interval`` has passed since the last request to this endpoint from
        any process holding the gate, then record this start. Returns the seconds waited."""
        waited = 0.0
        if min_interval > 0:
            try:
                last = float(self.last_start_path.read_text(encoding="ascii").strip() or 0)
            except (OSError, ValueError):
                last = 0.0
            # a clock step backwards must not mean a long sleep: never more than min_interval
            gap = min(min_interval, last + min_interval - time.time())
            if gap > 0:
                time.sleep(gap)
                waited = gap
        try:
            self.last_start_path.write_text(f"{time.time():.6f}\n", encoding="ascii")
        except OSError:  # pragma: no cover - the lock folder went read-only: pace within the process only
            pass
        return waited


_GATES: dict[tuple[str, str], _EndpointGate] = {}
_THREAD_LOCKS: dict[str, threading.Lock] = {}  # endpoint key -> the one lock of the process
_GATES_GUARD = threading.Lock()


def _gate(endpoint: str, lock_dir: Path) -> _EndpointGate:
    key = _endpoint_key(endpoint)
    with _GATES_GUARD:
        gate = _GATES.get((key, str(lock_dir)))
        if gate is None:
            lock = _THREAD_LOCKS.setdefault(key, threading.Lock())
            gate = _GATES[(key, str(lock_dir))] = _EndpointGate(endpoint, lock_dir, lock)
        return gate


# --------------------------------------------------------------------------- a deadline per request


def _connection_factory(base: type[http.client.HTTPConnection], deadline: Deadline):
    """``base`` whose sockets are watched by ``deadline`` (the TCP socket as soon as it is
    connected: the watch holds a duplicate of its descriptor, so a TLS handshake and the
    wrapped socket after it are bounded too)."""

    def make(host, **kwargs):
        conn = base(host, **kwargs)

        def create_connection(address, timeout=socket._GLOBAL_DEFAULT_TIMEOUT, source_address=None, **kw):
            if timeout is socket._GLOBAL_DEFAULT_TIMEOUT or timeout is None:
                timeout = deadline.remaining()
            sock = socket.create_connection(address, min(timeout, deadline.remaining()), source_address, **kw)
            deadline.watch(sock)
            return sock

        conn._create_connection = create_connection
        return conn

    return make


class _DeadlineHTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, deadline: Deadline):
        super().__init__()
        self._deadline = deadline

    def http_open(self, req):
        return self.do_open(_connection_factory(http.client.HTTPConnection, self._deadline), req)


class _DeadlineHTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, deadline: Deadline):
        super().__init__()
        self._deadline = deadline

    def https_open(self, req):
        return self.do_open(_connection_factory(http.client.HTTPSConnection, self._deadline), req,
                            context=self._context)


class _HTTPOnlyRedirectHandler(urllib.request.HTTPRedirectHandler):
    """Redirects stay on HTTP(S), under the request's deadline (urllib would follow ftp:)."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if urllib.parse.urlsplit(newurl).scheme.lower() not in ("http", "https"):
            raise urllib.error.HTTPError(newurl, code, f"redirect to a non-HTTP URL refused: {newurl}",
                                         headers, fp)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


# --------------------------------------------------------------------------- the client


@dataclass
class SparqlClient:
    """Runs SELECT queries and returns their bindings, retrying politely (module docstring).

    Parameters
    ----------
    endpoint : str
        SPARQL endpoint URL (default: the public WDQS).
    contact : str
        Contact details (e-mail or URL) put into the User-Agent. Required for the public WDQS.
    agent : str, optional
        A full User-Agent, overriding the one built from ``contact``.
    timeout : float
        Deadline of one HTTP request in seconds: connecting, headers and body together.
    max_retries : int
        Retries after the first attempt (429s, 5xx, timeouts, bad bodies).
    backoff_base, backoff_max : float
        Backoff before retry ``k`` (0-based) is ``min(backoff_max, backoff_base * 2**k)``.
    max_retry_after : float
        Longest ``Retry-After`` (429, 503) honoured; a server asking for more is an error.
    min_interval : float
        Least time between the starts of two requests to this endpoint, from any client of
        any process of this user on this machine (default :data:`DEFAULT_MIN_INTERVAL`).
        ``0`` switches the pace off (a local endpoint).
    method : {"POST", "GET"}
        HTTP method (POST keeps long ``VALUES`` blocks out of the URL).
    lock_dir : str, optional
        Folder of the endpoint lock files (default :func:`default_lock_dir`).
    log : list of RequestRecord
        Every HTTP attempt, appended to as the client works.
    """

    endpoint: str = WDQS_ENDPOINT
    contact: str = ""
    agent: str | None = None
    timeout: float = 65.0
    max_retries: int = 6
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    max_retry_after: float = 900.0
    min_interval: float = DEFAULT_MIN_INTERVAL
    method: str = "POST"
    lock_dir: str | None = None
    log: list[RequestRecord] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        if self.method.upper() not in ("POST", "GET"):
            raise ValueError(f"method must be POST or GET, got {self.method!r}")
        if not (self.timeout > 0):
            raise ValueError(f"timeout must be a positive number of seconds, got {self.timeout!r}")
        if self.min_interval < 0:
            raise ValueError(f"min_interval must be >= 0, got {self.min_interval!r}")
        if self.agent is None:
            if not self.contact.strip() and self.endpoint.rstrip("/") == WDQS_ENDPOINT:
                raise ValueError(
                    "the public Wikidata Query Service needs a User-Agent with contact details: "
                    "set `contact` (an e-mail address or URL; in Dagster: resource wikidata_sparql, "
                    "field contact, or $TAXOFORGE_WIKIDATA_CONTACT)"
                )
            self.agent = user_agent(self.contact or "no contact given")
        self._gate = _gate(self.endpoint, Path(self.lock_dir) if self.lock_dir else default_lock_dir())

    # ------------------------------------------------------------------ one attempt
    def _request(self, query: str) -> urllib.request.Request:
        sw = SPARQLWrapper(self.endpoint, agent=self.agent)
        sw.setQuery(query)
        sw.setMethod(POST if self.method.upper() == "POST" else GET)
        sw.setReturnFormat(JSON)
        # SPARQLWrapper builds the protocol request (parameters, Accept, User-Agent); this
        # client sends it, so that the whole request runs under one deadline.
        return sw._createRequest()

    def _attempt(self, query: str) -> list[dict]:
        request = self._request(query)
        with Deadline(float(self.timeout)) as deadline:
            opener = urllib.request.build_opener(_DeadlineHTTPHandler(deadline), _DeadlineHTTPSHandler(deadline),
                                                 _HTTPOnlyRedirectHandler())
            try:
                try:
                    with opener.open(request, timeout=float(self.timeout)) as response:
                        body = response.read()
                except urllib.error.HTTPError as e:
                    text = _safe_read(e)
                    e.close()
                    if deadline.expired:
                        raise _Retryable("client timeout") from e
                    raise self._http_error(e, text) from e
            except _Retryable:
                raise
            except SparqlError:
                raise
            except (TimeoutError, socket.timeout) as e:
                raise _Retryable("client timeout") from e
            except urllib.error.URLError as e:
                if deadline.expired or isinstance(e.reason, (TimeoutError, socket.timeout)):
                    raise _Retryable("client timeout") from e
                raise _Retryable(f"connection error: {e.reason}") from e
            except (http.client.IncompleteRead, http.client.RemoteDisconnected, ConnectionError) as e:
                if deadline.expired:
                    raise _Retryable("client timeout") from e
                raise _Retryable(f"connection dropped: {type(e).__name__}") from e
            except (http.client.HTTPException, OSError) as e:
                if deadline.expired:
                    raise _Retryable("client timeout") from e
                raise _Retryable(f"bad HTTP response: {type(e).__name__}: {e}") from e
            if deadline.expired:  # a close-delimited body cut at the deadline looks complete
                raise _Retryable("client timeout")
        try:
            doc = json.loads(body)
            bindings = doc["results"]["bindings"]
            if not isinstance(bindings, list):
                raise TypeError("bindings is not a list")
        except (ValueError, KeyError, TypeError) as e:
            raise _Retryable(f"truncated or malformed JSON body ({len(body)} bytes): {e}") from e
        return bindings

    def _http_error(self, e: urllib.error.HTTPError, text: str) -> Exception:
        """The exception for an HTTP error status: :class:`_Retryable` or :class:`SparqlError`."""
        code = e.code
        if code in (429, 503):
            wait = _parse_retry_after(e.headers.get("Retry-After") if e.headers else None)
            reason = "HTTP 429 Too Many Requests" if code == 429 else "HTTP 503"
            return _Retryable(reason, wait=wait)
        if code == 403:
            return SparqlError(
                f"HTTP 403 from {self.endpoint}: the endpoint refused this client "
                f"(User-Agent {self.agent!r}); check the contact details and the request rate")
        if 500 <= code < 600:
            return _Retryable(f"HTTP {code}", server_timeout="TimeoutException" in text)
        if code == 400:
            return SparqlError(f"QueryBadFormed: HTTP 400 from {self.endpoint}: {text[:500]}")
        return SparqlError(f"HTTP {code} from {self.endpoint}: {text[:500]}")

    # ------------------------------------------------------------------ public API
    def select(self, query: str, *, name: str = "query") -> list[dict[str, dict]]:
        """Run a SELECT query; return its JSON bindings (``var -> {"type", "value", ...}``).

        Raises :class:`SparqlError` (or :class:`QueryTimeout`) when the query fails for good.

        Parameters
        ----------
        query : str
            The query text.
        name : str, optional
            The query's name, for the log and errors.

        Returns
        -------
        list[dict[str, dict]]
            The JSON bindings (``var -> {"type", "value", …}``).
        """
        with self._gate as gate:
            attempt = 0
            server_timeouts = 0
            while True:
                gate.pace(self.min_interval)
                started = _now_iso()
                t0 = time.perf_counter()
                try:
                    rows = self._attempt(query)
                except _Retryable as r:
                    rec = RequestRecord(name, attempt, started, time.perf_counter() - t0, r.reason)
                    self.log.append(rec)
                    if r.server_timeout:
                        server_timeouts += 1
                        if server_timeouts >= 2:
                            raise QueryTimeout(
                                f"{self.endpoint} timed out on query {name!r} twice; use smaller batches "
                                f"(batch_size)") from r
                    if attempt >= self.max_retries:
                        raise SparqlError(
                            f"query {name!r} failed after {attempt + 1} attempts on {self.endpoint}; "
                            f"last error: {r.reason}") from r
                    if r.wait is not None:
                        if r.wait > self.max_retry_after:
                            raise SparqlError(
                                f"{self.endpoint} asks to wait {r.wait:.0f} s (Retry-After), more than "
                                f"max_retry_after={self.max_retry_after:.0f} s") from r
                        wait = r.wait
                    else:
                        wait = min(self.backoff_max, self.backoff_base * (2 ** attempt))
                    rec.waited = wait
                    time.sleep(wait)
                    attempt += 1
                    continue
                self.log.append(RequestRecord(name, attempt, started, time.perf_counter() - t0, "ok"))
                return rows

    def summary(self) -> dict:
        """Query time and request counts, for a snapshot manifest.

        Returns
        -------
        dict
            Query time and request counts.
        """
        ok = [r for r in self.log if r.outcome == "ok"]
        return {
            "endpoint": self.endpoint,
            "user_agent": self.agent,
            "requests": len(self.log),
            "succeeded": len(ok),
            "retries": sum(1 for r in self.log if r.outcome != "ok"),
            "query_seconds": round(sum(r.seconds for r in self.log), 3),
            "waited_seconds": round(sum(r.waited for r in self.log), 3),
            "first_request_at": self.log[0].started_at if self.log else None,
            "last_request_at": self.log[-1].started_at if self.log else None,
            "failures": sorted({r.outcome for r in self.log if r.outcome != "ok"}),
        }

    def log_rows(self) -> list[dict]:
        """Every HTTP attempt so far, as plain dicts.

        Returns
        -------
        list of dict
            One per attempt (:class:`RequestRecord`'s fields), in order.
        """
        return [asdict(r) for r in self.log]


def _safe_read(e: urllib.error.HTTPError) -> str:
    """The start of an error response's body (bounded: an error page cannot fill memory)."""
    try:
        return e.read(_ERROR_BODY_LIMIT).decode("utf-8", "replace")
    except Exception:
        return ""
