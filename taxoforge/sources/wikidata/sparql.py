"""A polite SPARQL client for the Wikidata Query Service (WDQS), on SPARQLWrapper.

Being a good citizen of WDQS (https://www.mediawiki.org/wiki/Wikidata_Query_Service/User_Manual):

* a descriptive ``User-Agent`` with contact details (:func:`user_agent`); the public
  endpoint is refused without a contact, since WDQS blocks anonymous generic agents;
* one request at a time: a lock per endpoint, shared by every client in the process,
  plus an optional minimum interval between requests;
* HTTP 429: wait what ``Retry-After`` says (seconds or an HTTP date), then retry;
* HTTP 5xx, timeouts, dropped connections and truncated or malformed JSON bodies:
  exponential backoff (``backoff_base * 2**attempt``, capped at ``backoff_max``);
* a query the *server* timed out (WDQS's 60 s limit: a 500 whose body names a
  ``TimeoutException``) is not hammered: one more try, then :class:`QueryTimeout`, which
  says to use smaller batches;
* HTTP 403 (agent blocked) and 4xx errors are not retried.

Every attempt is logged in :attr:`SparqlClient.log` (when, how long, outcome) so the query
time can go into a snapshot manifest (:meth:`SparqlClient.summary`).
"""

from __future__ import annotations

import email.utils
import http.client
import json
import socket
import threading
import time
import urllib.error
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone

from SPARQLWrapper import JSON, POST, GET, SPARQLWrapper
from SPARQLWrapper.SPARQLExceptions import EndPointInternalError, SPARQLWrapperException

__all__ = [
    "WDQS_ENDPOINT",
    "SparqlClient",
    "SparqlError",
    "QueryTimeout",
    "RequestRecord",
    "user_agent",
]

WDQS_ENDPOINT = "https://query.wikidata.org/sparql"
_ENDPOINT_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


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
    """One HTTP attempt."""

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
        Client-side timeout of one HTTP request, in seconds.
    max_retries : int
        Retries after the first attempt (429s, 5xx, timeouts, bad bodies).
    backoff_base, backoff_max : float
        Backoff before retry ``k`` (0-based) is ``min(backoff_max, backoff_base * 2**k)``.
    max_retry_after : float
        Longest ``Retry-After`` honoured; a server asking for more is an error.
    min_interval : float
        Least time between the starts of two requests to this endpoint.
    method : {"POST", "GET"}
        HTTP method (POST keeps long ``VALUES`` blocks out of the URL).
    """

    endpoint: str = WDQS_ENDPOINT
    contact: str = ""
    agent: str | None = None
    timeout: float = 65.0
    max_retries: int = 6
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    max_retry_after: float = 900.0
    min_interval: float = 0.0
    method: str = "POST"
    log: list[RequestRecord] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        if self.method.upper() not in ("POST", "GET"):
            raise ValueError(f"method must be POST or GET, got {self.method!r}")
        if self.agent is None:
            if not self.contact.strip() and self.endpoint.rstrip("/") == WDQS_ENDPOINT:
                raise ValueError(
                    "the public Wikidata Query Service needs a User-Agent with contact details: "
                    "set `contact` (an e-mail address or URL; in Dagster: resource wikidata_sparql, "
                    "field contact, or $TAXOFORGE_WIKIDATA_CONTACT)"
                )
            self.agent = user_agent(self.contact or "no contact given")
        with _LOCKS_GUARD:
            self._lock = _ENDPOINT_LOCKS.setdefault(self.endpoint, threading.Lock())
        self._last_start = 0.0

    # ------------------------------------------------------------------ one attempt
    def _attempt(self, query: str) -> list[dict]:
        sw = SPARQLWrapper(self.endpoint, agent=self.agent)
        sw.setQuery(query)
        sw.setMethod(POST if self.method.upper() == "POST" else GET)
        sw.setReturnFormat(JSON)
        # SPARQLWrapper.setTimeout() truncates to whole seconds (0.5 s would mean "no timeout")
        sw.timeout = float(self.timeout)
        try:
            result = sw.query()
            body = result.response.read()
        except urllib.error.HTTPError as e:
            code = e.code
            if code == 429:
                wait = _parse_retry_after(e.headers.get("Retry-After") if e.headers else None)
                raise _Retryable("HTTP 429 Too Many Requests", wait=wait) from e
            if code == 403:
                raise SparqlError(
                    f"HTTP 403 from {self.endpoint}: the endpoint refused this client "
                    f"(User-Agent {self.agent!r}); check the contact details and the request rate"
                ) from e
            if 500 <= code < 600:
                text = _safe_read(e)
                raise _Retryable(f"HTTP {code}", server_timeout="TimeoutException" in text) from e
            raise SparqlError(f"HTTP {code} from {self.endpoint}: {_safe_read(e)[:500]}") from e
        except EndPointInternalError as e:  # SPARQLWrapper's wrapper of HTTP 500
            raise _Retryable("HTTP 500", server_timeout="TimeoutException" in str(e)) from e
        except SPARQLWrapperException as e:  # 400, 401, 404, 414: retrying cannot help
            raise SparqlError(f"{type(e).__name__} from {self.endpoint}: {str(e)[:500]}") from e
        except (TimeoutError, socket.timeout) as e:
            raise _Retryable("client timeout") from e
        except urllib.error.URLError as e:
            if isinstance(e.reason, (TimeoutError, socket.timeout)):
                raise _Retryable("client timeout") from e
            raise _Retryable(f"connection error: {e.reason}") from e
        except (http.client.IncompleteRead, http.client.RemoteDisconnected, ConnectionError) as e:
            raise _Retryable(f"connection dropped: {type(e).__name__}") from e
        except http.client.HTTPException as e:
            raise _Retryable(f"bad HTTP response: {type(e).__name__}") from e
        try:
            doc = json.loads(body)
            bindings = doc["results"]["bindings"]
            if not isinstance(bindings, list):
                raise TypeError("bindings is not a list")
        except (ValueError, KeyError, TypeError) as e:
            raise _Retryable(f"truncated or malformed JSON body ({len(body)} bytes): {e}") from e
        return bindings

    # ------------------------------------------------------------------ public API
    def select(self, query: str, *, name: str = "query") -> list[dict[str, dict]]:
        """Run a SELECT query; return its JSON bindings (``var -> {"type", "value", ...}``).

        Raises :class:`SparqlError` (or :class:`QueryTimeout`) when the query fails for good."""
        with self._lock:
            attempt = 0
            server_timeouts = 0
            while True:
                if self.min_interval > 0:
                    gap = self._last_start + self.min_interval - time.monotonic()
                    if gap > 0:
                        time.sleep(gap)
                self._last_start = time.monotonic()
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
        """Query time and request counts, for a snapshot manifest."""
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
        return [asdict(r) for r in self.log]


def _safe_read(e: urllib.error.HTTPError) -> str:
    try:
        return e.read().decode("utf-8", "replace")
    except Exception:
        return ""
