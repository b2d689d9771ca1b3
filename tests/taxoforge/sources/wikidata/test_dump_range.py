"""Byte ranges of a dump: every line read once, wherever a range's ends fall."""

from __future__ import annotations

import gzip

import pytest

from taxoforge.sources.wikidata.dump_blocks import Blocks, line_start, stream_blocks
from taxoforge.sources.wikidata.dump_range import plan_ranges

WD = "http://www.wikidata.org/entity/"
P279 = "<http://www.wikidata.org/prop/direct/P279>"
LABEL = "<http://www.w3.org/2000/01/rdf-schema#label>"

TEXT = (f"<{WD}Q2> {P279} <{WD}Q1> .\n"
        f'<{WD}Q2> {LABEL} "Erdé 日本語 𝄞"@en .\n'
        "\n"
        f"<{WD}Q3> {P279} <{WD}Q2> .\n"
        f'<{WD}Q3> {LABEL} "ü"@de .')  # the last line without an end of line


def _range_bytes(path, start: int, stop: int) -> bytes:
    with path.open("rb") as f:
        first = line_start(f, start)
        if first is None or first >= stop:
            return b""
        return b"".join(bytes(b.data) for b in stream_blocks(f, offset=first, stop=stop))


def _mapped_bytes(path, start: int, stop: int) -> bytes:
    with Blocks(path, 1, start, stop) as blocks:
        return b"".join(bytes(b.data) for b in blocks)


def test_two_ranges_give_every_line_once_wherever_they_meet(tmp_path):
    """Every boundary: inside a line, inside a multi-byte character, on a line's end."""
    data = TEXT.encode("utf-8")
    p = tmp_path / "d.nt"
    p.write_bytes(data)
    whole = data + b"\n"  # the reader adds the last line's end
    kinds = set()
    for b in range(0, len(data) + 1):
        first, second = _range_bytes(p, 0, b), _range_bytes(p, b, len(data))
        assert first + second == whole, b
        assert _mapped_bytes(p, 0, b) == first and _mapped_bytes(p, b, len(data)) == second, b
        assert first == whole[:whole.index(b"\n", b - 1) + 1] if b else first == b""
        if 0 < b < len(data):
            kinds.add("line end" if data[b - 1] == 10 else "inside a character" if data[b] & 0xC0 == 0x80
                      else "inside a line")
    assert kinds == {"line end", "inside a character", "inside a line"}


def test_many_small_ranges_and_a_byte_order_mark(tmp_path):
    data = b"\xef\xbb\xbf" + TEXT.encode("utf-8")
    p = tmp_path / "bom.nt"
    p.write_bytes(data)
    for split in (1, 2, 3, 7, 64):
        ranges = plan_ranges([str(p)], split)
        assert [r.start for r in ranges] == list(range(0, len(data), split))
        got = b"".join(_range_bytes(p, r.start, r.stop) for r in ranges)
        assert got == b"   " + data[3:] + b"\n"


def test_plan_ranges_of_folders_empty_and_compressed_files(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    (d / "a.nt").write_bytes(TEXT.encode("utf-8"))
    (d / "b.nt.gz").write_bytes(gzip.compress(TEXT.encode("utf-8")))
    (d / "c.nt").write_bytes(b"")
    (d / "_SUCCESS").write_bytes(b"")
    (d / ".hidden").write_bytes(b"x")
    ranges = plan_ranges([str(d)], 300)
    assert [(r.url.rsplit("/", 1)[1], r.start, r.stop, r.kind) for r in ranges] == [
        ("a.nt", 0, 300, "none"), ("a.nt", 300, len(TEXT.encode()), "none"), ("b.nt.gz", 0, None, "gzip"),
        ("c.nt", 0, 0, "none")]
    assert [r.index for r in ranges] == [0, 1, 2, 3]
    (tmp_path / "x.nt.xz").write_bytes(b"\xfd7zXZ\x00rest")
    with pytest.raises(ValueError, match=r"x\.nt\.xz: the file is xz-compressed"):
        plan_ranges([str(tmp_path / "x.nt.xz")])
    with pytest.raises(ValueError, match="no such file"):
        plan_ranges([str(tmp_path / "missing.nt")])
