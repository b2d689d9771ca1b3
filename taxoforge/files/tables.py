"""Tables as CSV text that a spreadsheet opens as data, never as formulas.

A spreadsheet (Excel, LibreOffice, Google Sheets) reads a cell that starts with ``=``, ``+``,
``-`` or ``@`` — and, in some, a tab or carriage return — as a formula: a model or dataset
named ``=HYPERLINK("http://…")`` would run when a colleague opens ``leaderboard.csv``
("CSV injection", OWASP [30]). :func:`csv_text` follows OWASP's advice: every **text** cell that
starts with one of those characters gets a leading apostrophe (``'=HYPERLINK(…)``), which
spreadsheets show as the text itself; numbers are numbers and stay as they are (a negative
difference is ``-0.012``, not text). The Parquet files beside the CSV keep every value
unchanged, so nothing is lost: read those for exact names.

References
----------
Numbers of docs/references.md: [30] OWASP Foundation, CSV Injection.

Examples
--------
>>> import polars as pl
>>> print(csv_text(pl.DataFrame({"model": ["=1+1", "llava", "-x", "@a"], "diff": [-0.5, 1.0, 0.0, 2.0]})), end="")
model,diff
'=1+1,-0.5
llava,1.0
'-x,0.0
'@a,2.0
"""

from __future__ import annotations

import json

import polars as pl

__all__ = ["csv_text", "FORMULA_STARTS", "csv_safe_cell"]

#: A text cell starting with one of these is read as a formula by some spreadsheet.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_safe_cell(value: str | None) -> str | None:
    """``value`` with a leading apostrophe when it starts with one of :data:`FORMULA_STARTS`.

    Parameters
    ----------
    value : str or None

    Returns
    -------
    str or None
    """
    if value is None or not value.startswith(FORMULA_STARTS):
        return value
    return "'" + value


def csv_text(table: pl.DataFrame) -> str:
    """CSV text of ``table`` (with a header line): text cells made safe for spreadsheets
    (module docstring), nested columns (lists, structs) as JSON text.

    Parameters
    ----------
    table : polars.DataFrame

    Returns
    -------
    str
    """
    nested = [c for c, t in table.schema.items() if t.is_nested()]
    if nested:
        table = table.with_columns([pl.col(c).map_elements(
            lambda v: json.dumps(v.to_list() if hasattr(v, "to_list") else v, default=str),
            return_dtype=pl.String) for c in nested])
    text = [c for c, t in table.schema.items() if t in (pl.String, pl.Categorical, pl.Enum)]
    if text:
        starts = "".join("\\" + ch if ch in "-\\" else ch for ch in FORMULA_STARTS)
        table = table.with_columns([
            pl.when(pl.col(c).cast(pl.String).str.contains(f"^[{starts}]"))
            .then(pl.lit("'") + pl.col(c).cast(pl.String)).otherwise(pl.col(c).cast(pl.String)).alias(c)
            for c in text])
    return table.write_csv()
