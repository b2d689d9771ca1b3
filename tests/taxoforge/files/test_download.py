"""Resumable, checksummed downloads against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import hashlib

import pytest

import importlib.util
import zipfile
from pathlib import Path

from taxoforge.files import ChecksumError, download_file
from taxoforge.sources.coldp import coldp_tree
from tests.conftest import shared_file

_spec = importlib.util.spec_from_file_location(
    "_tf_httpfixture_dl", Path(__file__).parents[1] / "sources" / "httpfixture.py")
httpfixture = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(httpfixture)

download_release = download_file


@pytest.fixture(scope="module")
def ptero_dir() -> Path:
    return shared_file("coldp", "pterophoroidea_world_catalogue")


def _zip_folder(folder: Path, out: Path) -> Path:
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in sorted(folder.iterdir()):
            if p.is_file():
                zf.write(p, p.name)
    return out

def test_download_resumes_with_range_and_verifies_checksum(ptero_dir, tmp_path):
    body = _zip_folder(ptero_dir, tmp_path / "release.zip").read_bytes()
    sha = hashlib.sha256(body).hexdigest()
    with httpfixture.Server({"/col/release.zip": body}, cut_first=len(body) // 3) as srv:
        out = download_release(f"{srv.url}/col/release.zip", tmp_path / "dl" / "release.zip",
                               checksum=f"sha256:{sha}", backoff=0.01, chunk_size=4096)
        log = list(srv.log)
    assert out.read_bytes() == body
    assert log[0] == ("/col/release.zip", None)
    # resumed where it broke (at the last whole block written before the cut)
    assert log[1][0] == "/col/release.zip" and log[1][1].startswith("bytes=")
    assert 0 < int(log[1][1][6:-1]) <= len(body) // 3 and len(log) == 2
    assert not (tmp_path / "dl" / "release.zip.part").exists()
    assert coldp_tree(out).nodes.height == 1712
    # already there with the right checksum: no request at all
    with httpfixture.Server({"/col/release.zip": body}) as srv:
        download_release(f"{srv.url}/col/release.zip", out, checksum=sha)
        assert srv.log == []


def test_download_resumes_a_part_file_left_by_an_earlier_run(tmp_path):
    body = bytes(range(256)) * 1000
    dest = tmp_path / "r.bin"
    (tmp_path / "r.bin.part").write_bytes(body[:100_000])
    with httpfixture.Server({"/r.bin": body}) as srv:
        download_release(f"{srv.url}/r.bin", dest, checksum="md5:" + hashlib.md5(body).hexdigest())
        assert srv.log == [("/r.bin", "bytes=100000-")]
    assert dest.read_bytes() == body


def test_download_restarts_when_server_ignores_range(tmp_path):
    body = b"x" * 50_000 + b"y" * 50_000
    dest = tmp_path / "r.bin"
    (tmp_path / "r.bin.part").write_bytes(b"garbage")
    with httpfixture.Server({"/r.bin": body}, honour_range=False) as srv:
        download_release(f"{srv.url}/r.bin", dest, checksum=hashlib.sha256(body).hexdigest())
    assert dest.read_bytes() == body


def test_download_with_wrong_checksum_fails_and_keeps_nothing(tmp_path):
    body = b"not the release"
    with httpfixture.Server({"/r.zip": body}) as srv:
        with pytest.raises(ChecksumError, match="expected 0000"):
            download_release(f"{srv.url}/r.zip", tmp_path / "r.zip", checksum="sha256:" + "0" * 64)
        with pytest.raises(Exception, match="404"):
            download_release(f"{srv.url}/missing.zip", tmp_path / "m.zip")
    assert not (tmp_path / "r.zip").exists() and not (tmp_path / "r.zip.part").exists()


