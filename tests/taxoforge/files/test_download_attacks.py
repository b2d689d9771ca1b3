"""Hostile and clumsy servers against the one download routine.
Every server is a real HTTP server on 127.0.0.1 (``scripted_http``); each test first
plays the attack that used to get through."""

from __future__ import annotations

import hashlib
import threading
import time

import pytest

from taxoforge.files import DownloadError, cache_path, download
from tests.taxoforge.files.scripted_http import Reply, Request, ScriptedServer, file_reply

BODY_V1 = bytes(range(256)) * 400  # 102,400 bytes
BODY_V2 = bytes(reversed(range(256))) * 400  # same length, other bytes


# ---- item 3: stale releases under new provenance ------------------------------------------
def test_a_new_release_at_the_same_url_is_fetched_not_the_cached_old_one(tmp_path):
    release = {"body": BODY_V1, "etag": '"v1"'}
    with ScriptedServer() as srv:
        srv.routes["/latest/release.zip"] = lambda r: file_reply(r, release["body"], etag=release["etag"])
        url = f"{srv.url}/latest/release.zip"
        dest = cache_path(tmp_path, url)
        first = download(url, dest)
        assert first.status == "downloaded" and dest.read_bytes() == BODY_V1
        release.update(body=BODY_V2, etag='"v2"')  # a new release, same URL, same file name
        second = download(url, dest)
        assert second.status == "downloaded" and dest.read_bytes() == BODY_V2
        assert srv.log[-1].headers.get("If-None-Match") == '"v1"'  # asked whether it changed
        assert second.provenance()["etag"] == '"v2"'
        assert second.provenance()["sha256"] == hashlib.sha256(BODY_V2).hexdigest()


def test_an_unchanged_release_is_not_fetched_again(tmp_path):
    lm = "Wed, 21 Oct 2015 07:28:00 GMT"
    with ScriptedServer() as srv:
        srv.routes["/r.zip"] = lambda r: file_reply(r, BODY_V1, last_modified=lm)
        url = f"{srv.url}/r.zip"
        download(url, cache_path(tmp_path, url))
        again = download(url, cache_path(tmp_path, url))
        assert again.status == "not-modified" and again.bytes_fetched == 0
        assert srv.log[-1].headers.get("If-Modified-Since") == lm
        assert again.provenance()["last_modified"] == lm


def test_a_file_found_under_the_release_name_is_not_trusted_without_a_record(tmp_path):
    with ScriptedServer() as srv:
        srv.routes["/r.zip"] = lambda r: file_reply(r, BODY_V2)
        dest = tmp_path / "r.zip"
        dest.write_bytes(BODY_V1)  # an old download (or anything) under that name
        assert download(f"{srv.url}/r.zip", dest).status == "downloaded"
        assert dest.read_bytes() == BODY_V2


def test_the_cache_is_keyed_by_url_not_by_file_name(tmp_path):
    a = cache_path(tmp_path, "https://a.example/2024/release.zip")
    b = cache_path(tmp_path, "https://a.example/2025/release.zip")
    assert a != b and a.name == b.name == "release.zip" and a.parent.parent == tmp_path
    assert cache_path(tmp_path, "https://x.example/../../etc/passwd").name == "passwd"
    assert cache_path(tmp_path, "https://x.example/").name == "download"


# ---- item 4: two downloads to one destination -----------------------------------------------
def test_two_concurrent_downloads_to_one_destination_do_not_corrupt_it(tmp_path):
    body = bytes(range(256)) * 4000  # 1,024,000 bytes, sent in 16 slow pieces

    with ScriptedServer() as srv:
        srv.routes["/big.bin"] = lambda r: Reply(**{**file_reply(r, body, etag='"one"').__dict__, "trickle": 0.05})
        dest = tmp_path / "big.bin"
        errors: list[BaseException] = []
        seen: list[bytes] = []  # what each download handed back, read as it returned

        def run():
            try:
                seen.append(download(f"{srv.url}/big.bin", dest, chunk_size=4096).path.read_bytes())
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=run) for _ in range(2)]
        threads[0].start()
        time.sleep(0.3)  # the second starts while the first is half-way: a .part is there
        threads[1].start()
        for t in threads:
            t.join(timeout=60)
    assert not errors
    assert [len(b) for b in seen] == [len(body)] * 2 and all(b == body for b in seen)
    assert dest.read_bytes() == body  # not 1,024,000 + what the second appended
    assert not (tmp_path / "big.bin.part").exists()


# ---- item 5: unverified resumes ---------------------------------------------------------------
def _interrupted(srv: ScriptedServer, path: str, body: bytes, etag: str | None, dest, cut: int = 40_000):
    """A first download of ``path`` that drops after ``cut`` bytes and gives up (a .part stays)."""
    srv.routes[path] = lambda r: Reply(200, {"ETag": etag} if etag else {}, body, cut_after=cut)
    with pytest.raises(DownloadError, match="interrupted"):
        download(f"{srv.url}{path}", dest, retries=0)
    assert (dest.parent / f"{dest.name}.part").stat().st_size == cut


def test_a_file_replaced_between_attempts_is_not_spliced_into_the_old_part(tmp_path):
    dest = tmp_path / "r.bin"
    with ScriptedServer() as srv:
        _interrupted(srv, "/r.bin", BODY_V1, '"v1"', dest)
        srv.routes["/r.bin"] = lambda r: file_reply(r, BODY_V2, etag='"v2"')  # replaced on the server
        got = download(f"{srv.url}/r.bin", dest)
        assert srv.log[-1].headers.get("If-Range") == '"v1"'
    assert dest.read_bytes() == BODY_V2 and not got.resumed


def test_a_replaced_file_is_detected_even_when_the_server_ignores_if_range(tmp_path):
    dest = tmp_path / "r.bin"
    with ScriptedServer() as srv:
        _interrupted(srv, "/r.bin", BODY_V1, '"v1"', dest)

        def ignores_if_range(r):  # answers the Range of the new file, whatever If-Range says
            return file_reply(Request(r.path, {"Range": r.headers.get("Range", "")}, r.n), BODY_V2, etag='"v2"')

        srv.routes["/r.bin"] = ignores_if_range
        download(f"{srv.url}/r.bin", dest)
    assert dest.read_bytes() == BODY_V2


def test_a_part_without_validators_or_checksum_is_not_resumed(tmp_path):
    dest = tmp_path / "r.bin"
    (tmp_path / "r.bin.part").write_bytes(BODY_V1[:5000])  # from who knows where
    with ScriptedServer() as srv:
        srv.routes["/r.bin"] = lambda r: file_reply(r, BODY_V2)
        download(f"{srv.url}/r.bin", dest)
        assert [r.headers.get("Range") for r in srv.log] == [None]
    assert dest.read_bytes() == BODY_V2


def test_a_206_without_content_range_is_refused(tmp_path):
    dest = tmp_path / "r.bin"
    with ScriptedServer() as srv:
        _interrupted(srv, "/r.bin", BODY_V1, '"v1"', dest)
        # 206 with the rest of the file but no Content-Range: where does it start?
        srv.routes["/r.bin"] = lambda r: Reply(206, {"ETag": '"v1"'}, BODY_V1[40_000:])
        with pytest.raises(DownloadError, match="bad Content-Range"):
            download(f"{srv.url}/r.bin", dest)
    assert not dest.exists()


def test_a_206_that_restarts_from_byte_0_is_taken_as_the_whole_file(tmp_path):
    dest = tmp_path / "r.bin"
    with ScriptedServer() as srv:
        _interrupted(srv, "/r.bin", BODY_V1, '"v1"', dest)
        n = len(BODY_V1)
        srv.routes["/r.bin"] = lambda r: Reply(206, {"ETag": '"v1"', "Content-Range": f"bytes 0-{n - 1}/{n}"},
                                               BODY_V1)
        download(f"{srv.url}/r.bin", dest)
    assert dest.read_bytes() == BODY_V1  # not the first 40,000 bytes twice


def test_a_206_from_another_offset_is_refused(tmp_path):
    dest = tmp_path / "r.bin"
    with ScriptedServer() as srv:
        _interrupted(srv, "/r.bin", BODY_V1, '"v1"', dest)
        n = len(BODY_V1)
        srv.routes["/r.bin"] = lambda r: Reply(206, {"ETag": '"v1"', "Content-Range": f"bytes 100-{n - 1}/{n}"},
                                               BODY_V1[100:])
        with pytest.raises(DownloadError, match="asked for bytes from 40000, the server sent them from 100"):
            download(f"{srv.url}/r.bin", dest)
    assert not dest.exists()


def test_a_part_longer_than_the_file_is_not_renamed_into_place_after_a_416(tmp_path):
    dest = tmp_path / "r.bin"
    (tmp_path / "r.bin.part").write_bytes(BODY_V1 + b"JUNK" * 100)
    with ScriptedServer() as srv:
        srv.routes["/r.bin"] = lambda r: file_reply(r, BODY_V1)  # answers 416 to bytes=102800-
        download(f"{srv.url}/r.bin", dest)
    assert dest.read_bytes() == BODY_V1


def test_a_part_longer_than_the_file_is_refused_after_a_416_even_with_a_record(tmp_path):
    dest = tmp_path / "r.bin"
    with ScriptedServer() as srv:
        _interrupted(srv, "/r.bin", BODY_V1, '"v1"', dest)
        with open(tmp_path / "r.bin.part", "ab") as f:
            f.write(b"JUNK" * 20_000)  # now longer than the file
        srv.routes["/r.bin"] = lambda r: file_reply(r, BODY_V1, etag='"v1"')
        download(f"{srv.url}/r.bin", dest)
    assert dest.read_bytes() == BODY_V1


def test_a_resumed_body_with_trailing_junk_and_no_content_length_is_refused(tmp_path):
    dest = tmp_path / "r.bin"
    with ScriptedServer() as srv:
        _interrupted(srv, "/r.bin", BODY_V1, '"v1"', dest)
        n = len(BODY_V1)
        srv.routes["/r.bin"] = lambda r: Reply(
            206, {"ETag": '"v1"', "Content-Range": f"bytes 40000-{n - 1}/{n}"},
            BODY_V1[40_000:] + b"<html>trailing junk</html>", content_length=False)
        with pytest.raises(DownloadError, match="more bytes than"):
            download(f"{srv.url}/r.bin", dest)
    assert not dest.exists() and not (tmp_path / "r.bin.part").exists()


def test_a_body_longer_than_the_expected_size_is_refused(tmp_path):
    dest = tmp_path / "r.bin"
    with ScriptedServer() as srv:
        srv.routes["/r.bin"] = lambda r: Reply(200, {}, BODY_V1 + b"junk", content_length=False)
        with pytest.raises(DownloadError, match="more bytes than"):
            download(f"{srv.url}/r.bin", dest, size=len(BODY_V1))
    assert not dest.exists() and not (tmp_path / "r.bin.part").exists()


def test_503_with_retry_after_is_waited_for_and_retried(tmp_path):
    dest = tmp_path / "r.bin"
    with ScriptedServer() as srv:
        srv.routes["/r.bin"] = lambda r: (Reply(503, {"Retry-After": "1"}, b"busy") if r.n == 0
                                          else file_reply(r, BODY_V1))
        got = download(f"{srv.url}/r.bin", dest, retries=2, backoff=0.01)
        first, second = srv.log
    assert got.status == "downloaded" and dest.read_bytes() == BODY_V1
    assert second.t - first.t >= 0.9  # waited as asked, not the 0.01 s back-off


def test_503_forever_gives_up_after_the_retries_with_a_clear_error(tmp_path):
    with ScriptedServer() as srv:
        srv.routes["/r.bin"] = lambda r: Reply(503, {"Retry-After": "0"}, b"busy")
        with pytest.raises(DownloadError, match="HTTP 503") as e:
            download(f"{srv.url}/r.bin", tmp_path / "r.bin", retries=2, backoff=0.01)
        assert len(srv.log) == 3 and e.value.status == 503 and e.value.exit_code == 8

