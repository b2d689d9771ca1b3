"""CSV cells a spreadsheet reads as data: every text cell that starts with = + - @ TAB CR gets
a leading apostrophe (OWASP), numbers and other text stay as they are, nested columns become
JSON, and the Parquet beside it keeps the names exactly."""

from __future__ import annotations

import csv
import io

import polars as pl

from taxoforge.files.tables import FORMULA_STARTS, csv_safe_cell, csv_text


def test_formula_cells_are_quoted_and_numbers_are_not():
    names = ["=cmd|' /C calc'!A0", "+1", "-x", "@SUM(1)", "\tTAB", "\rCR", "llava-1.5", "a=b", "", None]
    t = pl.DataFrame({"model": names, "diff": [-0.5] * len(names), "k": list(range(len(names))),
                      "tags": [["-a"]] * len(names)})
    rows = list(csv.DictReader(io.StringIO(csv_text(t))))
    got = [r["model"] for r in rows]
    assert got[:6] == ["'" + n for n in names[:6]]
    assert got[6:9] == ["llava-1.5", "a=b", ""]
    assert all(not g.startswith(FORMULA_STARTS) for g in got)
    assert {r["diff"] for r in rows} == {"-0.5"}  # a number keeps its sign
    assert rows[0]["tags"] == '["-a"]'  # nested columns as JSON (text starting with "[")
    assert csv_safe_cell("=1") == "'=1" and csv_safe_cell("x") == "x" and csv_safe_cell(None) is None
