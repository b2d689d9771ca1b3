"""One answer from a server, checked against the request."""

from __future__ import annotations

import pytest

from taxoforge.files import DownloadError
from taxoforge.files.transport import http_get, retry_after_seconds
from tests.taxoforge.files.scripted_http import Reply, ScriptedServer


def test_retry_after_accepts_seconds_and_http_dates():
    assert retry_after_seconds("7") == 7.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:30 GMT", now=1445412480.0) == pytest.approx(30.0)
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None


def test_an_answer_whose_content_length_contradicts_its_content_range_is_refused():
    with ScriptedServer() as srv:
        srv.routes["/f"] = lambda r: Reply(206, {"Content-Range": "bytes 10-19/100"}, b"x" * 10, content_length=12)
        with pytest.raises(DownloadError, match="Content-Length 12 does not match Content-Range bytes 10-19"):
            with http_get(f"{srv.url}/f", 10, if_range=None, conditional={}, timeout=5, chunk_size=4):
                pass
