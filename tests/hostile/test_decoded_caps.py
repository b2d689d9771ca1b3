"""Caps on what is decoded, never on what a file declares: small files that decode to
gigabytes are refused as they are read, by file, row and limit, in bounded memory and time.

Every case is a real hostile file (:mod:`tests.hostile.builders`) read in a child process
under an address-space limit (:mod:`tests.hostile.bounded`): a regression fails the test, it
does not take the machine down."""

from __future__ import annotations

import json

import pytest

from tests.hostile.bounded import MAX_PEAK_MB, assert_refused, run_bounded, run_cli_bounded
from tests.hostile.builders import (answers_header, deflate_pieces, inline, parquet_of_many_rows, sheet_pieces,
                                    sheet_xml, workbook, write)

READ = """
import sys
from taxoforge.scores.readers.files import OutputFileError, read_outputs
try:
    df = read_outputs({path!r})
except OutputFileError as e:
    print("error:", e, file=sys.stderr)
    sys.exit(2)
print("rows", df.height, "columns", len(df.columns), "lines", df["line"].head(3).to_list())
"""


def _read(path, **kw):
    return run_bounded(READ.format(path=str(path)), **kw)


def _score(path, tmp_path):
    """``taxoforge score FILE`` against a taxonomy that does not exist: the file is read first."""
    return run_cli_bounded(["score", str(path), str(tmp_path / "no-such-tree"), "-o", str(tmp_path / "out")])


# ---------------------------------------------------------------------------- workbooks
def test_a_cell_at_the_sheets_last_reference_costs_one_cell_not_the_bounding_box(tmp_path):
    rows = answers_header() + f'<row r="2">{inline("A2", "a dog")}{inline("B2", "dog")}</row>' \
        + f'<row r="1048576">{inline("XFD1048576", "far away")}</row>'
    x = write(tmp_path / "far.xlsx", workbook(sheet_xml(rows, dimension="A1:XFD1048576")))
    assert x.stat().st_size < 3000
    res = _read(x)
    assert res.rc == 0, res.describe()
    assert "rows 2" in res.out and "lines [2, 1048576]" in res.out
    assert res.peak_mb <= 250, res.describe()


def test_a_cell_reference_past_the_sheet_is_an_error_naming_the_cell(tmp_path):
    rows = answers_header() + f'<row r="2">{inline("ZZZZ2", "x")}</row>'
    x = write(tmp_path / "past.xlsx", workbook(sheet_xml(rows)))
    assert_refused(_score(x, tmp_path), 2, r"past\.xlsx:2: cell reference 'ZZZZ2' lies outside a sheet")
    rows = answers_header() + f'<row r="99999999">{inline("A99999999", "x")}</row>'
    x = write(tmp_path / "row.xlsx", workbook(sheet_xml(rows)))
    assert_refused(_score(x, tmp_path), 2, r"row\.xlsx: row '99999999' lies outside a sheet")


def test_a_zip_directory_that_lies_about_a_sheets_size_is_never_believed(tmp_path):
    row = f"<row>{inline(None, 'a dog')}{inline(None, 'dog')}</row>"
    sheet = sheet_pieces(answers_header(), row, 3_000_000)  # ~200 MB of XML in under a megabyte
    x = write(tmp_path / "liar.xlsx", workbook(sheet, declared={"xl/worksheets/sheet1.xml": 2048}))
    assert x.stat().st_size < 1_000_000
    assert_refused(_score(x, tmp_path), 2, r"liar\.xlsx: not an \.xlsx workbook|liar\.xlsx: .*CRC")


def test_a_sheet_that_inflates_to_a_gigabyte_is_stopped_at_the_first_limit(tmp_path):
    row = f"<row>{inline(None, 'a dog')}{inline(None, 'dog')}</row>"
    sheet = sheet_pieces(answers_header(), row, 16_000_000)  # 1.1 GB of XML, declared honestly
    x = write(tmp_path / "bomb.xlsx", workbook(sheet))
    assert x.stat().st_size < 10_000_000
    assert_refused(_score(x, tmp_path), 2, r"bomb\.xlsx:\d+: more than [\d,]+ (records|fields)")


def test_a_hundred_mebibyte_cell_is_refused_at_the_record_cap(tmp_path):
    big = deflate_pieces([(b'<?xml version="1.0"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/'
                           b'main"><si><t>output</t></si><si><t>label</t></si><si><t>', 1),
                          (b"a" * (1 << 20), 100), (b"</t></si></sst>", 1)])
    rows = '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>' \
           '<row r="2"><c r="A2" t="s"><v>2</v></c></row>'
    x = write(tmp_path / "cell.xlsx", workbook(sheet_xml(rows), strings=big))
    assert x.stat().st_size < 300_000
    assert_refused(_score(x, tmp_path), 2, r"cell\.xlsx:shared string 3: this string is longer than 16,777,216")
    inline_big = deflate_pieces([(sheet_xml(answers_header())[:-len(b"</sheetData></worksheet>")]
                                  + b'<row r="2"><c r="A2" t="inlineStr"><is><t>', 1), (b"b" * (1 << 20), 100),
                                 (b"</t></is></c></row></sheetData></worksheet>", 1)])
    x = write(tmp_path / "inline.xlsx", workbook(inline_big))
    assert_refused(_score(x, tmp_path), 2, r"inline\.xlsx:2: this row is longer than 16,777,216")


def test_sixteen_thousand_repeated_header_names_are_one_error_at_once(tmp_path):
    header = "<row r=\"1\">" + "".join(inline(None, "x") for _ in range(16_000)) + "</row>"
    x = write(tmp_path / "dup.xlsx", workbook(sheet_xml(header + f"<row>{inline(None, 'a')}</row>")))
    assert x.stat().st_size < 100_000
    assert_refused(_score(x, tmp_path), 2, r"dup\.xlsx:1: the header row names a column twice \('x'\)",
                   max_seconds=15)


def test_sixteen_thousand_distinct_columns_read_in_linear_time(tmp_path):
    header = "<row>" + "".join(inline(None, f"c{i}") for i in range(16_000)) + inline(None, "output") \
        + inline(None, "label") + "</row>"
    data = "".join("<row>" + "".join(inline(None, str(i)) for i in range(16_002)) + "</row>" for _ in range(20))
    x = write(tmp_path / "wide.xlsx", workbook(sheet_xml(header + data)))
    res = _read(x)
    assert res.rc == 0 and "rows 20" in res.out, res.describe()
    assert res.cpu_seconds < 30, res.describe()


# ---------------------------------------------------------------------------- Parquet
@pytest.fixture(scope="module")
def many_rows(tmp_path_factory):
    """~4 MB of Parquet that decodes to 200 million rows, in 200 row groups."""
    return parquet_of_many_rows(tmp_path_factory.mktemp("pq") / "many.parquet", 200_000_000)


@pytest.fixture(scope="module")
def many_rows_one_group(tmp_path_factory):
    """The same rows in one row group whose footer counts are the file's word."""
    return parquet_of_many_rows(tmp_path_factory.mktemp("pq1") / "one.parquet", 30_000_000, group_rows=30_000_000)


def test_a_parquet_answer_file_of_200_million_rows_is_refused_by_count(many_rows, tmp_path):
    assert many_rows.stat().st_size < 10_000_000
    assert_refused(_score(many_rows, tmp_path), 2, r"many\.parquet: 200,000,000 rows, more than 1,000,000")


def test_rows_are_counted_as_decoded_not_taken_from_the_footer(many_rows_one_group, tmp_path):
    res = run_bounded(f"""
import sys
from taxoforge.files.parquet_records import _batches
from taxoforge.files.record_limits import RecordFileError, RecordLimits, Tally
from pathlib import Path
p = Path({str(many_rows_one_group)!r})
# limits above the footer's counts are passed by counting alone: the decoder is stopped by what it decoded
tally = Tally(p, RecordLimits(max_records=10**9, max_cells=2_500_000), "row")
try:
    for _ in _batches(p, tally):
        pass
except RecordFileError as e:
    print("error:", e, file=sys.stderr)
    sys.exit(2)
""")
    assert_refused(res, 2, r"one\.parquet:125\d{4}: more than 2,500,000 fields")


def test_a_compare_run_of_200_million_rows_is_refused_in_bounded_memory(many_rows, tmp_path):
    import shutil

    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(many_rows, run / "scores.parquet")
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(many_rows, other / "scores.parquet")
    res = run_cli_bounded(["compare", str(run), str(other), "--bootstrap", "0"])
    assert_refused(res, 2, r"scores\.parquet: 200,000,000 rows, more than")


def test_a_crosswalk_of_60_million_rows_is_refused_in_bounded_memory(tmp_path):
    cw = parquet_of_many_rows(tmp_path / "cw.parquet", 60_000_000,
                              columns=("source_a", "id_a", "source_b", "id_b"), numbers=("confidence",))
    res = run_bounded(f"""
import sys
from taxoforge.links.crosswalk import read_crosswalk
try:
    read_crosswalk({str(cw)!r})
except ValueError as e:
    print("error:", e, file=sys.stderr)
    sys.exit(2)
""")
    assert_refused(res, 2, r"cw\.parquet: 60,000,000 rows, more than 50,000,000")


# ---------------------------------------------------------------------------- text records
def test_empty_json_records_are_counted_and_stopped_in_bounded_memory(tmp_path):
    p = tmp_path / "empty.jsonl"
    with p.open("w") as f:
        f.write("{}\n" * 3_300_000)  # 10 MB: 3.3 million records of nothing
    assert_refused(_score(p, tmp_path), 2, r"empty\.jsonl:1000001: more than 1,000,000 records")
    a = tmp_path / "empty.json"
    with a.open("w") as f:
        f.write("[" + "{}," * 3_000_000 + "{}]")
    assert_refused(_score(a, tmp_path), 2, r"empty\.json:1: more than 1,000,000 records")


def test_many_fields_are_counted_as_cells(tmp_path):
    p = tmp_path / "wide.jsonl"
    rec = json.dumps({f"k{i}": 1 for i in range(100)})
    with p.open("w") as f:
        f.write((rec + "\n") * 60_000)  # 6 million fields in 36 MB
    assert_refused(_score(p, tmp_path), 2, r"wide\.jsonl:20001: more than 2,000,000 fields")
    c = tmp_path / "tiny.csv"
    with c.open("w") as f:
        f.write("output,label\n" + "a,b\n" * 1_100_000)
    assert_refused(_score(c, tmp_path), 2, r"tiny\.csv:1000002: more than 1,000,000 records")


def test_a_five_thousand_digit_id_is_an_error_naming_file_and_line(tmp_path):
    p = tmp_path / "ids.jsonl"
    p.write_text('{"id": 1, "output": "dog", "label": "dog"}\n' + '{"id": ' + "9" * 5000
                 + ', "output": "dog", "label": "dog"}\n')
    assert_refused(_score(p, tmp_path), 2, r"ids\.jsonl:2: an integer of 5,000 digits")


def test_limits_are_raised_by_the_caller_not_the_file(tmp_path):
    from taxoforge.scores.options import ReadOptions
    from taxoforge.scores.readers.files import OutputFileError, read_outputs

    p = tmp_path / "three.jsonl"
    p.write_text("".join(json.dumps({"output": "dog", "label": "dog", "id": str(i)}) + "\n" for i in range(3)))
    with pytest.raises(OutputFileError, match=r"three\.jsonl:3: more than 2 records"):
        read_outputs(p, ReadOptions(max_records=2))
    with pytest.raises(OutputFileError, match=r"three\.jsonl:2: more than 5 fields"):
        read_outputs(p, ReadOptions(max_cells=5))
    assert read_outputs(p, ReadOptions(max_records=3)).height == 3


def test_the_peak_memory_of_an_answer_file_under_10_mb_stays_under_its_target(tmp_path):
    """The costliest honest-looking answer file per byte: a million short records."""
    p = tmp_path / "short.jsonl"
    with p.open("w") as f:
        for i in range(330_000):
            f.write('{"output":"a","label":"b"}\n')
    res = _read(p, timeout=120)
    assert res.rc == 0, res.describe()
    assert res.peak_mb <= MAX_PEAK_MB, res.describe()


def test_report_file_names_are_linear_in_the_files():
    """20,000 one-line files took over 300 s in the function naming them for the report."""
    res = run_bounded("""
import time
from taxoforge.files.paths import distinct_tails
files = [f"results/run{i % 97}/model_{i}/answers.jsonl" for i in range(20_000)]
files += [f"other/run{i % 97}/model_{i}/answers.jsonl" for i in range(20_000)]
t0 = time.process_time()
tails = distinct_tails(files)
print("seconds", time.process_time() - t0)
assert tails[files[0]] == "results/run0/model_0/answers.jsonl"
assert len(set(tails.values())) == len(files)
assert distinct_tails(["a/x.jsonl", "b/y.jsonl"]) == {"a/x.jsonl": "x.jsonl", "b/y.jsonl": "y.jsonl"}
""", timeout=120)
    assert res.rc == 0, res.describe()
    assert float(res.out.split()[-1]) < 5, res.describe()
