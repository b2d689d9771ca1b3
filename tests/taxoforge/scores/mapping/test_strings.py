"""Tests of taxoforge.scores.mapping.strings: string columns as offsets and UTF-8 bytes."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from taxoforge.scores.mapping.strings import string_array, string_buffers, take_strings

WORDS = ["quercus alba", "", "ünïcode ñame", "a", "Žluťoučký kůň", "x" * 300]


@pytest.mark.parametrize("kind", ["buffers", "large_string", "string", "sliced", "chunked"])
def test_take_strings_gives_what_indexing_gives(kind):
    if kind == "buffers":
        arr = string_array(*string_buffers(WORDS))
    elif kind == "chunked":
        arr = pa.chunked_array([pa.array(WORDS[:2], pa.large_string()), pa.array(WORDS[2:], pa.large_string())])
    else:
        base = pa.array(["pad"] + WORDS, pa.string() if kind == "string" else pa.large_string())
        arr = base.slice(1)
    ids = np.random.default_rng(0).integers(0, len(WORDS), 50)
    assert take_strings(arr, ids) == [WORDS[i] for i in ids]
    assert take_strings(arr, np.zeros(0, np.int64)) == []


def test_take_strings_with_nulls_reads_each_value():
    arr = pa.array(["a", None, "c"], pa.large_string())
    assert take_strings(arr, np.array([2, 1, 0])) == ["c", None, "a"]


def test_take_strings_loads_no_arrow_compute_function():
    # Arrow's compute ``take`` imports pandas on first use (half a second of a command's start)
    code = ("import sys, numpy as np, polars as pl; from taxoforge.scores.mapping.strings import string_array, "
            "string_buffers, take_strings; a = string_array(*string_buffers(pl.Series(['b', 'a'] * 50))); "
            "assert take_strings(a, np.arange(100))[:2] == ['b', 'a']; print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "False"
