"""The SPARQL client against a real endpoint on 127.0.0.1, with faults injected on the wire."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import pytest

from taxoforge.sources.wikidata.queries import render
from taxoforge.sources.wikidata.sparql import (
    WDQS_ENDPOINT,
    QueryTimeout,
    SparqlClient,
    SparqlError,
    _parse_retry_after,
    user_agent,
)

Q = render("subclass_of", items=["Q3305213"])  # painting → its superclasses


def client(endpoint, **kw) -> SparqlClient:
    opts = dict(endpoint=endpoint.url, contact="tests@taxoforge.invalid", timeout=2.0, max_retries=4,
                backoff_base=0.01, backoff_max=0.05, min_interval=0)  # a loopback endpoint needs no pace
    opts.update(kw)
    return SparqlClient(**opts)


def supers(rows) -> set[str]:
    return {r["super"]["value"].rsplit("/", 1)[1] for r in rows}


def test_plain_query_and_user_agent(endpoint, all_p279):
    c = client(endpoint)
    rows = c.select(Q, name="subclass_of")
    assert supers(rows) == set(all_p279.successors("Q3305213"))
    assert len(endpoint.requests) == 1
    ua = endpoint.requests[0]["agent"]
    assert ua.startswith("taxoforge/") and "(tests@taxoforge.invalid)" in ua and "SPARQLWrapper/" in ua
    s = c.summary()
    assert s["requests"] == 1 and s["retries"] == 0 and s["first_request_at"].endswith("Z")


def test_get_method_works_too(endpoint, all_p279):
    rows = client(endpoint, method="GET").select(Q)
    assert supers(rows) == set(all_p279.successors("Q3305213"))
    assert endpoint.requests[0]["method"] == "GET"


def test_public_endpoint_needs_contact():
    with pytest.raises(ValueError, match="contact"):
        SparqlClient(endpoint=WDQS_ENDPOINT)
    assert "me@example.org" in SparqlClient(endpoint=WDQS_ENDPOINT, contact="me@example.org").agent


def test_429_waits_for_retry_after(endpoint, all_p279):
    endpoint.inject(("status", 429, {"Retry-After": "1"}))
    c = client(endpoint)
    t0 = time.monotonic()
    rows = c.select(Q)
    assert supers(rows) == set(all_p279.successors("Q3305213"))
    gap = endpoint.requests[1]["at"] - endpoint.requests[0]["at"]
    assert gap >= 0.95, "the retry came before Retry-After elapsed"
    assert time.monotonic() - t0 >= 0.95
    assert [r.outcome for r in c.log] == ["HTTP 429 Too Many Requests", "ok"]
    assert c.log[0].waited == 1.0


def test_retry_after_too_long_is_an_error(endpoint):
    endpoint.inject(("status", 429, {"Retry-After": "3600"}))
    with pytest.raises(SparqlError, match="Retry-After"):
        client(endpoint, max_retry_after=10).select(Q)
    assert len(endpoint.requests) == 1


def test_retry_after_http_date():
    later = datetime.now(timezone.utc) + timedelta(seconds=30)
    w = _parse_retry_after(format_datetime(later, usegmt=True))
    assert 25 <= w <= 31
    assert _parse_retry_after("7") == 7.0
    assert _parse_retry_after("garbage") is None
    assert _parse_retry_after(None) is None


@pytest.mark.parametrize("code", [500, 502, 503, 504])
def test_5xx_backs_off_exponentially(endpoint, all_p279, code):
    endpoint.inject(("status", code, {}), ("status", code, {}), ("status", code, {}))
    c = client(endpoint, backoff_base=0.02, backoff_max=1.0)
    rows = c.select(Q)
    assert supers(rows) == set(all_p279.successors("Q3305213"))
    assert [r.waited for r in c.log] == [0.02, 0.04, 0.08, 0.0]
    assert len(endpoint.requests) == 4


def test_backoff_is_capped(endpoint):
    endpoint.inject(*[("status", 503, {})] * 4)
    c = client(endpoint, backoff_base=0.02, backoff_max=0.05)
    c.select(Q)
    assert [r.waited for r in c.log] == [0.02, 0.04, 0.05, 0.05, 0.0]


def test_gives_up_after_max_retries(endpoint):
    endpoint.inject(*[("status", 500, {})] * 10)
    c = client(endpoint, max_retries=2)
    with pytest.raises(SparqlError, match="after 3 attempts"):
        c.select(Q, name="subclass_of")
    assert len(endpoint.requests) == 3


def test_server_side_timeout_is_not_hammered(endpoint):
    endpoint.inject(("server_timeout",), ("server_timeout",), ("server_timeout",))
    with pytest.raises(QueryTimeout, match="smaller batches"):
        client(endpoint).select(Q)
    assert len(endpoint.requests) == 2


def test_hung_response_times_out_and_retries(endpoint, all_p279):
    endpoint.inject(("hang", 5.0))
    c = client(endpoint, timeout=0.5)
    t0 = time.monotonic()
    rows = c.select(Q)
    assert supers(rows) == set(all_p279.successors("Q3305213"))
    assert c.log[0].outcome == "client timeout"
    assert 0.4 <= c.log[0].seconds < 2.0
    assert time.monotonic() - t0 < 3.0


@pytest.mark.parametrize("fault", ["truncate", "truncate_unannounced"])
def test_truncated_json_body_is_retried(endpoint, all_p279, fault):
    endpoint.inject((fault,))
    c = client(endpoint)
    rows = c.select(Q)
    assert supers(rows) == set(all_p279.successors("Q3305213"))
    assert len(c.log) == 2 and c.log[0].outcome != "ok" and c.log[1].outcome == "ok"


def test_bad_query_is_not_retried(endpoint):
    with pytest.raises(SparqlError, match="QueryBadFormed"):
        client(endpoint).select("SELECT ?x WHERE { this is not sparql }")
    assert len(endpoint.requests) == 1


def test_403_is_not_retried(endpoint):
    endpoint.inject(("status", 403, {}))
    with pytest.raises(SparqlError, match="403"):
        client(endpoint).select(Q)
    assert len(endpoint.requests) == 1


def test_one_request_at_a_time(endpoint):
    """Several threads and clients on one endpoint: the server never sees two requests at once."""
    clients = [client(endpoint) for _ in range(3)]
    endpoint.inject(("hang", 0.3), ("status", 503, {}))
    errors = []

    def work(c):
        try:
            for _ in range(3):
                c.select(Q)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert not errors
    assert endpoint.max_in_flight == 1
    assert sum(1 for r in endpoint.requests if r["fault"] is None) == 9


def test_one_request_at_a_time_across_threads_whatever_lock_folder_each_client_has(endpoint, tmp_path):
    """3 threads × 3 queries on one endpoint, each client with its own lock folder (a library
    user's, the Dagster resource's, the default) and the endpoint spelt three ways: the
    Oxigraph endpoint on 127.0.0.1 never sees two requests at once. (The process-wide lock
    used to be one per lock folder: 2 or 3 in flight.)"""
    endpoint.on_request = lambda n: time.sleep(0.1)  # each query keeps the server busy a while
    spellings = [endpoint.url, endpoint.url + "/", endpoint.url.replace("http://", "HTTP://")]
    clients = [SparqlClient(endpoint=url, contact="tests@taxoforge.invalid", timeout=5.0, min_interval=0,
                            lock_dir=str(tmp_path / f"locks-{i}")) for i, url in enumerate(spellings)]
    errors = []

    def work(c):
        try:
            for _ in range(3):
                c.select(Q)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    assert len(endpoint.requests) == 9 and endpoint.max_in_flight == 1


def test_min_interval_spaces_requests(endpoint):
    c = client(endpoint, min_interval=0.2)
    for _ in range(3):
        c.select(Q)
    at = [r["at"] for r in endpoint.requests]
    assert all(b - a >= 0.18 for a, b in zip(at, at[1:]))


def test_user_agent_format():
    ua = user_agent("a b\n c", version="9.9")
    assert ua.startswith("taxoforge/9.9 (a b c) SPARQLWrapper/")


# --------------------------------------------------------------------------- retries


def test_503_retry_after_ignored_attack_is_honoured(endpoint, all_p279):
    """A 503 with Retry-After (WDQS under load) is waited out like a 429, not retried
    after the short exponential backoff."""
    endpoint.inject(("status", 503, {"Retry-After": "1"}))
    c = client(endpoint)
    rows = c.select(Q)
    assert supers(rows) == set(all_p279.successors("Q3305213"))
    gap = endpoint.requests[1]["at"] - endpoint.requests[0]["at"]
    assert gap >= 0.95, f"the retry came {gap:.2f} s after a 503 asking for 1 s"
    assert [r.outcome for r in c.log] == ["HTTP 503", "ok"] and c.log[0].waited == 1.0


def test_503_retry_after_too_long_is_an_error(endpoint):
    endpoint.inject(("status", 503, {"Retry-After": "7200"}))
    with pytest.raises(SparqlError, match="Retry-After"):
        client(endpoint, max_retry_after=10).select(Q)
    assert len(endpoint.requests) == 1


@pytest.mark.parametrize("phase", ["body", "headers"])
def test_trickling_server_attack_is_cut_at_the_request_deadline(endpoint, phase):
    """A server sending one byte every 0.25 s never trips a per-read timeout of 1 s; the
    deadline of the whole request (1 s) cuts it all the same. (Per-read, the ~40 bytes of
    headers alone or the whole body would take 10 s to several minutes.)"""
    endpoint.inject(("trickle", 0.25, phase))
    c = client(endpoint, timeout=1.0, max_retries=0)
    t0 = time.monotonic()
    with pytest.raises(SparqlError, match="client timeout"):
        c.select(Q)
    elapsed = time.monotonic() - t0
    assert elapsed < 3.0, f"the request ran {elapsed:.1f} s past a 1 s deadline"
    assert c.log[0].outcome == "client timeout" and 0.9 <= c.log[0].seconds < 2.5


def test_trickled_attempt_is_retried_within_its_deadline(endpoint, all_p279):
    endpoint.inject(("trickle", 0.25, "body"))
    c = client(endpoint, timeout=1.0)
    rows = c.select(Q)
    assert supers(rows) == set(all_p279.successors("Q3305213"))
    assert [r.outcome for r in c.log] == ["client timeout", "ok"]


def test_polite_pace_by_default():
    """Without a setting the client spaces its requests (documented default), and the
    Dagster resource takes the client's defaults."""
    from pipelines.resources import WikidataSparqlResource
    from taxoforge.sources.wikidata.sparql import DEFAULT_MIN_INTERVAL

    assert DEFAULT_MIN_INTERVAL > 0
    assert SparqlClient(endpoint="http://127.0.0.1:9/sparql").min_interval == DEFAULT_MIN_INTERVAL
    assert WikidataSparqlResource().min_interval == DEFAULT_MIN_INTERVAL
    with pytest.raises(ValueError, match="min_interval"):
        SparqlClient(endpoint="http://127.0.0.1:9/sparql", min_interval=-1)


def test_pace_is_shared_by_every_client_of_an_endpoint(endpoint):
    """Two clients of one endpoint keep the pace between them, not each on its own."""
    a, b = client(endpoint, min_interval=0.3), client(endpoint, min_interval=0.3)
    for c in (a, b, a, b):
        c.select(Q)
    at = [r["at"] for r in endpoint.requests]
    # without a shared pace a and b would send back to back (gaps near 0); 0.2 s leaves room for
    # a loaded machine delaying when the server records a request
    assert len(at) == 4 and all(y - x >= 0.2 for x, y in zip(at, at[1:]))


CHILD = """
import sys
from taxoforge.sources.wikidata.queries import render
from taxoforge.sources.wikidata.sparql import SparqlClient
url, lock_dir = sys.argv[1], sys.argv[2]
c = SparqlClient(endpoint=url, contact="tests@taxoforge.invalid", timeout=10, min_interval=0,
                 lock_dir=lock_dir, max_retries=0)
for _ in range(3):
    c.select(render("subclass_of", items=["Q3305213"]))
"""


def _run_children(endpoint, lock_dirs) -> None:
    import subprocess
    import sys

    endpoint.on_request = lambda n: time.sleep(0.25)  # each query keeps the server busy a while
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, endpoint.url, str(d)], stderr=subprocess.PIPE)
             for d in lock_dirs]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    assert len(endpoint.requests) == 3 * len(lock_dirs)


def test_parallel_processes_attack_without_a_shared_lock_they_overlap(endpoint, tmp_path):
    """The attack, reproduced: processes that do not share the lock folder hit the endpoint
    at the same time (what every process did before the file lock)."""
    _run_children(endpoint, [tmp_path / f"own-{i}" for i in range(3)])
    assert endpoint.max_in_flight > 1


def test_parallel_processes_attack_serialised_by_the_endpoint_file_lock(endpoint, tmp_path):
    """Three processes on one machine, one endpoint: the server never sees two of their
    queries at once."""
    _run_children(endpoint, [tmp_path / "shared"] * 3)
    assert endpoint.max_in_flight == 1
    assert list((tmp_path / "shared").glob("sparql-*.lock"))
