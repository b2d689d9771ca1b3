"""The compiled escape decoding equals ntriples.unescape, and flags what it refuses."""

from __future__ import annotations

import random

import numpy as np
import pytest

from taxoforge.sources.wikidata.dump_text import gather_spans
from taxoforge.sources.wikidata.ntriples import unescape

PIECES = ["a", "é", "🦆", "日本", "\\t", "\\b", "\\n", "\\r", "\\f", '\\"', "\\'", "\\\\", "\\u00e9", "\\u0041",
          "\\U0001F986", "\\U00000041", "\\u20AC", "\\u007f", "\\u0080", "\\u07FF", "\\u0800", "\\uFFFF",
          "\\U00010000", "\\U0010FFFF", "x y", "\\\\u0041"]
BAD = ["\\x", "\\uD800", "\\U00110000", "\\u12G4", "\\U0001F98", "\\q"]


def _gather(texts: list[str]):
    raw = [t.encode() for t in texts]
    buf = np.frombuffer(b"".join(raw), dtype=np.uint8)
    ends = np.cumsum([len(r) for r in raw]).astype(np.int64)
    starts = ends - np.array([len(r) for r in raw], dtype=np.int64)
    escaped = np.array([b"\\" in r for r in raw], dtype=np.bool_)
    offsets, data, bad = gather_spans(buf, starts, ends, escaped)
    out = [bytes(data[offsets[k]:offsets[k + 1]]).decode("utf-8") for k in range(len(texts))]
    return out, bad


def test_escapes_decode_as_unescape_does():
    rng = random.Random(0)
    texts = ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12))) for _ in range(2000)]
    out, bad = _gather(texts)
    assert not bad.any()
    assert out == [unescape(t) for t in texts]


@pytest.mark.parametrize("piece", BAD)
def test_what_unescape_refuses_is_flagged(piece):
    texts = ["ok", f"before {piece} after", "é\\t"]
    out, bad = _gather(texts)
    assert bad.tolist() == [False, True, False] and out[0] == "ok" and out[2] == "é\t"
    with pytest.raises(ValueError):
        unescape(texts[1])
