"""File checksums and the ``algorithm:hex`` spelling."""

from __future__ import annotations

import hashlib

import pytest

from taxoforge.files import file_checksum, file_sha256, parse_checksum


def test_file_checksums_match_hashlib_across_block_boundaries(tmp_path):
    data = bytes(range(256)) * 9000  # > 2 blocks of 1 MiB
    p = tmp_path / "f"
    p.write_bytes(data)
    assert file_sha256(p) == hashlib.sha256(data).hexdigest()
    assert file_checksum(p, "md5") == hashlib.md5(data).hexdigest()


def test_parse_checksum_spellings_and_errors():
    h = "AB" * 32
    assert parse_checksum(f"SHA256:{h}") == ("sha256", h.lower())
    assert parse_checksum(h) == ("sha256", h.lower())
    assert parse_checksum("0" * 32) == ("md5", "0" * 32)
    with pytest.raises(ValueError, match="cannot tell the algorithm"):
        parse_checksum("abc")
    with pytest.raises(ValueError, match="unknown algorithm"):
        parse_checksum("nohash:00")
    with pytest.raises(ValueError, match="hexadecimal"):
        parse_checksum("sha256:xyz")
