"""A hostile server against the bounds of the one download routine: lengths that lie,
bodies without end, trickles, redirects, files replaced between attempts, a lying
``Content-Range``, the shared retry policy and a full disk. Every server is a real HTTP
server on 127.0.0.1 (``scripted_http``), large bodies are made lazily as they are sent."""

from __future__ import annotations

import errno
import logging
import socket
import threading
import time

import pytest

from taxoforge.files import ChecksumError, DownloadError, LocalFileError, download, fetch_bytes
from tests.taxoforge.files.scripted_http import Reply, Request, ScriptedServer, file_reply, generated
from tests.taxoforge.files.small_fs import small_filesystem

BODY_V1 = bytes(range(256)) * 400  # 102,400 bytes
BODY_V2 = bytes(reversed(range(256))) * 400  # same length, other bytes
N = len(BODY_V1)


class Meter:
    """A ``progress`` callback: the most bytes a ``.part`` ever held."""

    def __init__(self) -> None:
        self.now = self.peak = 0

    def __call__(self, n: int) -> None:
        self.now += n
        self.peak = max(self.peak, self.now)


# ---- lengths that lie, bodies without end ------------------------------------------------------
def test_a_15_gb_content_length_is_refused_before_anything_is_written(tmp_path):
    meter = Meter()
    with ScriptedServer() as srv:
        srv.routes["/t.parquet"] = lambda r: Reply(200, {}, stream=generated(15 * 10**9), content_length=15 * 10**9)
        with pytest.raises(ChecksumError, match="announces 15,000,000,000 bytes, 102,400 are expected") as e:
            download(f"{srv.url}/t.parquet", tmp_path / "t.parquet", size=N, progress=meter)
    assert meter.peak == 0 and "resume" not in str(e.value)
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")) == []


def test_a_body_without_a_length_is_cut_at_the_expected_size(tmp_path):
    meter = Meter()
    with ScriptedServer() as srv:
        srv.routes["/t.parquet"] = lambda r: Reply(200, {}, stream=generated(None), content_length=False)
        with pytest.raises(ChecksumError, match="sent more bytes than the 102,400 expected") as e:
            download(f"{srv.url}/t.parquet", tmp_path / "t.parquet", size=N, progress=meter)
    assert meter.peak <= N and "resume" not in str(e.value)
    assert not (tmp_path / "t.parquet.part").exists() and not (tmp_path / "t.parquet").exists()


def test_without_a_known_size_max_size_bounds_what_is_written(tmp_path):
    meter = Meter()
    with ScriptedServer() as srv:
        srv.routes["/endless"] = lambda r: Reply(200, {}, stream=generated(None), content_length=False)
        srv.routes["/huge"] = lambda r: Reply(200, {}, stream=generated(10**12), content_length=10**12)
        with pytest.raises(ChecksumError, match="more bytes than the 1,048,576 expected"):
            download(f"{srv.url}/endless", tmp_path / "a", max_size=1 << 20, progress=meter)
        with pytest.raises(DownloadError, match="announces 1,000,000,000,000 bytes, more than the 1,048,576 allowed"):
            download(f"{srv.url}/huge", tmp_path / "b", max_size=1 << 20, progress=meter)
    assert meter.peak <= 1 << 20


def test_fetch_bytes_never_holds_more_than_its_cap(tmp_path):
    with ScriptedServer() as srv:
        srv.routes["/announced"] = lambda r: Reply(200, {}, stream=generated(10**9), content_length=10**9)
        srv.routes["/endless"] = lambda r: Reply(200, {}, stream=generated(None), content_length=False)
        srv.routes["/ok"] = lambda r: Reply(200, {}, b"{}")
        with pytest.raises(DownloadError, match="1,000,000,000 bytes, more than the 65,536 a index may have"):
            fetch_bytes(f"{srv.url}/announced", max_bytes=1 << 16, what="index")
        with pytest.raises(DownloadError, match="more than 65,536 bytes"):
            fetch_bytes(f"{srv.url}/endless", max_bytes=1 << 16)
        assert fetch_bytes(f"{srv.url}/ok", max_bytes=2) == b"{}"
        assert len(srv.requests_for("/announced")) == 1  # refused, not retried


# ---- a deadline for the whole transfer ---------------------------------------------------------
def test_a_trickling_body_is_cut_at_the_transfer_deadline(tmp_path):
    """One byte every 0.2 s never trips a 1 s read timeout; the transfer's deadline (1 s,
    then 16 KiB/s on average) cuts it all the same."""
    with ScriptedServer() as srv:
        srv.routes["/slow"] = lambda r: Reply(200, {}, stream=generated(N, b"x"), content_length=N, trickle=0.2)
        t0 = time.monotonic()
        with pytest.raises(DownloadError, match="deadline"):
            download(f"{srv.url}/slow", tmp_path / "slow", size=N, timeout=1.0, retries=1, backoff=0.01)
        elapsed = time.monotonic() - t0
    assert elapsed < 5.0, f"two attempts of a 1 s deadline took {elapsed:.1f} s"
    assert len(srv.requests_for("/slow")) == 2


def _trickled_headers_server(stop: threading.Event) -> socket.socket:
    """A raw server on 127.0.0.1 that sends its status line and headers one byte every 0.2 s."""
    lsock = socket.create_server(("127.0.0.1", 0))

    def serve():
        lsock.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = lsock.accept()
            except OSError:
                continue
            head = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\nX-Pad: " + b"p" * 500 + b"\r\n\r\n0123456789"
            for i in range(len(head)):
                if stop.wait(0.2):
                    break
                try:
                    conn.sendall(head[i:i + 1])
                except OSError:
                    break
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    return lsock


def test_trickled_headers_are_cut_at_the_transfer_deadline(tmp_path):
    stop = threading.Event()
    lsock = _trickled_headers_server(stop)
    try:
        url = f"http://127.0.0.1:{lsock.getsockname()[1]}/f"
        t0 = time.monotonic()
        with pytest.raises(DownloadError, match="deadline"):
            download(url, tmp_path / "f", timeout=1.0, retries=0)
        assert time.monotonic() - t0 < 3.0
        with pytest.raises(DownloadError, match="deadline"):
            fetch_bytes(url, max_bytes=100, timeout=1.0, retries=0)
    finally:
        stop.set()
        lsock.close()


def test_an_honest_slow_server_is_not_cut(tmp_path):
    """256 KiB at 256 KiB/s: longer than the 0.5 s deadline, but well above 16 KiB/s."""
    body = bytes(range(256)) * 1024
    with ScriptedServer() as srv:
        srv.routes["/f"] = lambda r: Reply(200, {}, stream=iter([body[i:i + 65536] for i in range(0, len(body), 65536)]),
                                           content_length=len(body), trickle=0.25)
        got = download(f"{srv.url}/f", tmp_path / "f", timeout=0.5, retries=0)
    assert got.path.read_bytes() == body


# ---- redirects ---------------------------------------------------------------------------------
def test_redirects_to_another_host_are_refused_unless_asked(tmp_path):
    with ScriptedServer() as srv, ScriptedServer() as other:
        other.routes["/f"] = lambda r: file_reply(r, BODY_V1)
        srv.routes["/f"] = lambda r: Reply(302, {"Location": f"{other.url}/f"})
        srv.routes["/here"] = lambda r: Reply(301, {"Location": "/f2"})
        srv.routes["/f2"] = lambda r: file_reply(r, BODY_V2)
        srv.routes["/file"] = lambda r: Reply(302, {"Location": "file:///etc/passwd"})
        srv.routes["/loop"] = lambda r: Reply(302, {"Location": "/loop"})
        with pytest.raises(DownloadError, match="redirected \\(HTTP 302\\) to another host, http://127.0.0.1:"):
            download(f"{srv.url}/f", tmp_path / "a")
        with pytest.raises(DownloadError, match="another host"):
            fetch_bytes(f"{srv.url}/f", max_bytes=N)
        assert other.log == []  # never asked
        assert download(f"{srv.url}/f", tmp_path / "a", allow_other_hosts=True).path.read_bytes() == BODY_V1
        assert download(f"{srv.url}/here", tmp_path / "b").path.read_bytes() == BODY_V2  # same host: followed
        with pytest.raises(DownloadError, match="not an HTTP\\(S\\) address"):
            download(f"{srv.url}/file", tmp_path / "c", allow_other_hosts=True)
        with pytest.raises(DownloadError, match="more than 5 redirects"):
            download(f"{srv.url}/loop", tmp_path / "d")


# ---- never resume what cannot be checked -------------------------------------------------------
def test_a_file_replaced_between_attempts_without_validators_is_fetched_whole(tmp_path):
    """No ETag, no Last-Modified, no checksum: the retry after a drop must not splice the
    new file's tail onto the old file's head (it used to: half old, half new)."""
    dest = tmp_path / "r.bin"

    def route(r: Request) -> Reply:
        if r.n == 0:
            return Reply(200, {}, BODY_V1, cut_after=40_000)
        return file_reply(r, BODY_V2)  # replaced; honours Range without validators

    with ScriptedServer() as srv:
        srv.routes["/r.bin"] = route
        got = download(f"{srv.url}/r.bin", dest, retries=1, backoff=0.01)
        assert [r.headers.get("Range") for r in srv.log] == [None, None]
    assert dest.read_bytes() == BODY_V2 and not got.resumed


def _first_drops(etag: str | None = '"v1"', last_modified: str | None = None):
    validators = {k: v for k, v in (("ETag", etag), ("Last-Modified", last_modified)) if v}
    return Reply(200, validators, BODY_V1, cut_after=40_000)


@pytest.mark.parametrize("lie", ["unknown total", "other total", "stops short", "no validator echoed",
                                 "other last-modified"])
def test_a_206_that_cannot_be_checked_is_dropped_and_the_file_fetched_from_byte_0(tmp_path, lie):
    lm = "Wed, 21 Oct 2015 07:28:00 GMT"
    rest = BODY_V2[40_000:]  # what a replaced file would give from byte 40,000
    replies = {
        "unknown total": Reply(206, {"ETag": '"v1"', "Content-Range": f"bytes 40000-{N - 1}/*"}, rest),
        "other total": Reply(206, {"ETag": '"v1"', "Content-Range": f"bytes 40000-{N}/{N + 1}"}, rest + b"!"),
        "stops short": Reply(206, {"ETag": '"v1"', "Content-Range": f"bytes 40000-50000/{N}"}, rest[:10_001]),
        "no validator echoed": Reply(206, {"Content-Range": f"bytes 40000-{N - 1}/{N}"}, rest),
        "other last-modified": Reply(206, {"Last-Modified": "Thu, 22 Oct 2015 07:28:00 GMT",
                                           "Content-Range": f"bytes 40000-{N - 1}/{N}"}, rest),
    }
    first = _first_drops(etag=None, last_modified=lm) if lie == "other last-modified" else _first_drops()

    def route(r: Request) -> Reply:
        if r.n == 0:
            return first
        if r.headers.get("Range"):
            return replies[lie]
        return Reply(200, {"ETag": '"v2"'}, BODY_V2)

    dest = tmp_path / "r.bin"
    with ScriptedServer() as srv:
        srv.routes["/r.bin"] = route
        got = download(f"{srv.url}/r.bin", dest, retries=1, backoff=0.01)
        ranges = [r.headers.get("Range") for r in srv.log]
    assert dest.read_bytes() == BODY_V2, "a continuation that could not be checked was spliced in"
    assert ranges == [None, "bytes=40000-", None] and not got.resumed


def test_a_checked_continuation_is_still_resumed(tmp_path):
    """The honest case stays cheap: a 206 carrying back the strong ETag from the byte asked
    for is appended, and only the missing bytes cross the wire."""
    with ScriptedServer() as srv:
        srv.routes["/r.bin"] = lambda r: _first_drops() if r.n == 0 else file_reply(r, BODY_V1, etag='"v1"')
        got = download(f"{srv.url}/r.bin", tmp_path / "r.bin", retries=1, backoff=0.01)
        assert [r.headers.get("If-Range") for r in srv.log] == [None, '"v1"']
    assert got.resumed and got.bytes_fetched == N and got.path.read_bytes() == BODY_V1


# ---- one retry policy ----------------------------------------------------------------------------
def test_downloads_and_reads_share_one_retry_policy_and_say_what_they_wait_for(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="taxoforge.files")
    with ScriptedServer() as srv:
        srv.routes["/f"] = lambda r: Reply(503, {"Retry-After": "1"}, b"busy") if r.n == 0 else file_reply(r, BODY_V1)
        srv.routes["/i"] = lambda r: Reply(503, {"Retry-After": "1"}, b"busy") if r.n == 0 else Reply(200, {}, b"{}")
        srv.routes["/long"] = lambda r: Reply(503, {"Retry-After": "300"}, b"busy")
        assert download(f"{srv.url}/f", tmp_path / "f", backoff=0.01).path.read_bytes() == BODY_V1
        assert fetch_bytes(f"{srv.url}/i", max_bytes=10, backoff=0.01) == b"{}"
        for path in ("/f", "/i"):
            first, second = srv.requests_for(path)
            assert second.t - first.t >= 0.9  # waited as asked
        said = [r.getMessage() for r in caplog.records if "waiting" in r.getMessage()]
        assert len(said) == 2 and all("HTTP 503; waiting 1.0 s as the server asks (Retry-After)" in m for m in said)
        t0 = time.monotonic()
        for fetch in (lambda: download(f"{srv.url}/long", tmp_path / "l", max_retry_after=60),
                      lambda: fetch_bytes(f"{srv.url}/long", max_bytes=10, max_retry_after=60)):
            with pytest.raises(DownloadError, match="asks to wait 300 s \\(Retry-After\\), longer than the 60 s"):
                fetch()
        assert time.monotonic() - t0 < 5 and len(srv.requests_for("/long")) == 2  # no silent 300 s sleeps


# ---- a full disk -------------------------------------------------------------------------------
def test_a_file_larger_than_the_free_space_is_refused_before_downloading(tmp_path):
    with small_filesystem(tmp_path / "small", 64 * 1024) as small, ScriptedServer() as srv:
        srv.routes["/f"] = lambda r: Reply(200, {}, stream=generated(N), content_length=N)
        with pytest.raises(LocalFileError) as e:
            download(f"{srv.url}/f", small / "f", size=N)
        assert e.value.errno == errno.ENOSPC and str(small) in str(e.value)
        assert "102,400 bytes to write" in str(e.value) and not (small / "f.part").exists()


def test_no_space_left_mid_download_names_the_file_and_is_not_retried(tmp_path):
    with small_filesystem(tmp_path / "small", 64 * 1024) as small, ScriptedServer() as srv:
        srv.routes["/f"] = lambda r: Reply(200, {}, stream=generated(N), content_length=False)  # size unknown
        with pytest.raises(LocalFileError) as e:
            download(f"{srv.url}/f", small / "f", retries=3, backoff=0.01)
        assert e.value.errno == errno.ENOSPC and e.value.filename == str(small / "f.part")
        assert len(srv.log) == 1  # the disk is full: asking the server again would not help
