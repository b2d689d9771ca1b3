"""Bounded, strict reading of answer files: a record over the byte cap (from real large
inputs made lazily: sparse files) is an error naming the file and line, never a parse of it;
duplicate JSON keys and lone surrogates are errors; NaN is a missing value; a CSV row of
50,000 columns reads."""

from __future__ import annotations

import json
import subprocess
import sys

import polars as pl
import pytest

from taxoforge.files.records import MAX_RECORD_BYTES
from taxoforge.scores.options import ReadOptions
from taxoforge.scores.readers.files import OutputFileError, read_outputs
from tests.conftest import REPO

GIB = 2**30


def _sparse(path, head: bytes, size: int):
    """A file of ``size`` bytes: ``head`` then a hole (NUL bytes the file system does not store)."""
    with path.open("wb") as fh:
        fh.write(head)
        fh.truncate(size)
    return path


def test_a_one_gigabyte_jsonl_line_is_refused_by_file_and_line_in_bounded_memory(tmp_path):
    p = _sparse(tmp_path / "huge.jsonl", b'{"output": "a dog", "label": "dog"}\n{"output": "', GIB)
    code = ("import resource, sys\n"
            "from taxoforge.scores.readers.files import read_outputs, OutputFileError\n"
            "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "try:\n    read_outputs(sys.argv[1])\nexcept OutputFileError as e:\n    print(e)\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n")
    out = subprocess.run([sys.executable, "-c", code, str(p)], capture_output=True, text=True, cwd=REPO, timeout=300)
    msg, grown_kib = out.stdout.strip().rsplit("\n", 1)
    assert f"{p}:2: this line is longer than {MAX_RECORD_BYTES:,} bytes" in msg, out.stderr
    assert int(grown_kib) < 4 * MAX_RECORD_BYTES // 1024  # peak memory grew by about the cap, not the gigabyte


def test_records_over_the_cap_in_every_kind_name_their_line(tmp_path):
    small = ReadOptions(max_record_bytes=1000)
    j = _sparse(tmp_path / "big.json", b'[\n  {"output": "x", "label": "y"},\n  {"output": "', 50_000)
    with pytest.raises(OutputFileError, match=r"big\.json:3: this array element is longer than 1,000 bytes"):
        read_outputs(j, small)
    c = tmp_path / "big.csv"
    c.write_text("output,label\n" + "a,b\n" + '"' + "x" * 5000 + '",y\n')
    with pytest.raises(OutputFileError, match=r"big\.csv:3: this record is longer than 1,000 bytes"):
        read_outputs(c, small)
    c.write_text("output,label\n" + "a,b\n" + '"' + "x\n" * 800 + '",y\n')  # one record over many lines
    with pytest.raises(OutputFileError, match=r"big\.csv:\d+: this record is longer than 1,000 bytes"):
        read_outputs(c, small)
    assert read_outputs(c).height == 2  # under the default cap it reads
    pq = tmp_path / "big.parquet"
    pl.DataFrame({"output": ["x" * 10_000] * 10, "label": ["y"] * 10}).write_parquet(pq, compression="uncompressed")
    with pytest.raises(OutputFileError, match=r"big\.parquet: its data takes .* more than 5,000"):
        read_outputs(pq, ReadOptions(max_table_bytes=5_000))


def test_a_workbook_that_inflates_past_the_cap_is_refused_as_it_is_read(tmp_path):
    import xlsxwriter

    x = tmp_path / "big.xlsx"
    wb = xlsxwriter.Workbook(str(x))
    ws = wb.add_worksheet()
    ws.write_row(0, 0, ["output", "label"])
    for i in range(1, 2000):
        ws.write_row(i, 0, [f"answer {i}", "dog"])
    wb.close()
    with pytest.raises(OutputFileError, match=r"big\.xlsx: the file inflates to more than 10,000 bytes \(max_table_bytes, counted as read\)"):
        read_outputs(x, ReadOptions(max_table_bytes=10_000))
    df = read_outputs(x)
    assert df.height == 1999 and df["line"][0] == 2 and df["output"][0] == "answer 1"


def test_duplicate_keys_and_lone_surrogates_are_errors_naming_the_line(tmp_path):
    p = tmp_path / "dup.jsonl"
    p.write_text('{"output": "a", "label": "b"}\n{"output": "a", "label": "b", "output": "c"}\n')
    with pytest.raises(OutputFileError, match=r"dup\.jsonl:2: the key 'output' occurs twice"):
        read_outputs(p)
    arr = tmp_path / "dup.json"
    arr.write_text('[\n {"output": "a", "label": "b"},\n {"output": "a",\n  "label": "b", "label": "c"}\n]')
    with pytest.raises(OutputFileError, match=r"dup\.json:3: the key 'label' occurs twice"):
        read_outputs(arr)
    s = tmp_path / "sur.jsonl"
    s.write_text('{"output": "fine \\ud83d\\ude00", "label": "b"}\n{"output": "bad \\ud800 x", "label": "b"}\n')
    with pytest.raises(OutputFileError, match=r"sur\.jsonl:2: a lone UTF-16 surrogate escape in output"):
        read_outputs(s)
    s.write_text('{"output": "fine \\ud83d\\ude00", "label": "b"}\n{"output": "ok", "doc": {"x": ["\\udfff"]}, '
                 '"label": "b"}\n')
    with pytest.raises(OutputFileError, match=r"sur\.jsonl:2: .*in doc\.x\[0\]"):
        read_outputs(s)
    s.write_text('[{"output": "\\udc00", "label": "b"}]')
    with pytest.raises(OutputFileError, match=r"sur\.jsonl:1: a lone UTF-16 surrogate"):
        read_outputs(s, fmt="json")
    assert read_outputs(_ok(tmp_path))["output"][0] == "fine \U0001F600"


def _ok(tmp_path):
    p = tmp_path / "ok.jsonl"
    p.write_text('{"output": "fine \\ud83d\\ude00", "label": "b"}\n')
    return p


def test_nan_is_a_missing_value_and_json_documents_read_by_content(tmp_path):
    p = tmp_path / "nan.json"
    p.write_text('[\n    {\n        "output": NaN,\n        "label": "b"\n    },\n    {\n        "output": "x",\n'
                 '        "label": "b"\n    }\n]')
    df = read_outputs(p)
    assert df["output"].to_list() == [None, "x"] and df["line"].to_list() == [2, 6]
    lines = tmp_path / "lines.json"  # JSON Lines saved as .json
    lines.write_text('{"output": "x", "label": "b"}\n{"output": "y", "label": "b"}\n')
    assert read_outputs(lines)["output"].to_list() == ["x", "y"]
    doc = tmp_path / "doc.json"
    doc.write_text(json.dumps({"args": {}, "logs": [{"output": "x", "label": "b"}]}, indent=4))
    assert read_outputs(doc)["output"].to_list() == ["x"]
    bad = tmp_path / "bad.json"
    bad.write_text('[\n {"output": "x", "label": "b"},\n {"output": }\n]')
    with pytest.raises(OutputFileError, match=r"bad\.json:3: not valid JSON"):
        read_outputs(bad)
    bad.write_text('[{"output": "x", "label": "b"} {"output": "y"}]')
    with pytest.raises(OutputFileError, match=r"expected ',' or ']'"):
        read_outputs(bad)
    bad.write_text('[{"output": "x", "label": "b"}')
    with pytest.raises(OutputFileError, match=r"not valid JSON|not closed"):
        read_outputs(bad)


def test_a_json_array_element_split_across_read_chunks_and_characters_reads_whole(tmp_path):
    rows = [{"output": "é" * (70_000 + i), "label": "ü"} for i in range(3)]  # elements larger than a read chunk
    p = tmp_path / "wide.json"
    p.write_text(json.dumps(rows, indent=4, ensure_ascii=False), encoding="utf-8")
    df = read_outputs(p)
    assert [len(o) for o in df["output"]] == [70_000, 70_001, 70_002] and df["line"].to_list() == [2, 6, 10]


def test_a_csv_row_of_fifty_thousand_columns_reads(tmp_path):
    n = 50_000
    p = tmp_path / "wide.csv"
    p.write_text(",".join(["output", "label"] + [f"c{i}" for i in range(n)]) + "\n"
                 + ",".join(["dog", "dog"] + ["1"] * n) + "\n")
    df = read_outputs(p)
    assert df["output"].to_list() == ["dog"]
    p.write_text(",".join(["output", "label"] + ["c"] * n) + "\n")
    with pytest.raises(OutputFileError, match=r"wide\.csv:1: the CSV header names a column twice \(c\)"):
        read_outputs(p)
