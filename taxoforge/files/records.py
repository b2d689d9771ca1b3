"""Record files — JSON lines, CSV/TSV, Parquet, plain text — read into rows with their line numbers.

One home for reading the tables people hand to taxoforge: model outputs
(:func:`taxoforge.scores.readers.read_outputs`) and label sets
(:func:`taxoforge.files.labels.read_labels`) both read their files here, so a bad byte, a bad
JSON line or a short CSV row gets the same error, naming the file and the line, wherever it
is read.

Every reader returns ``(rows, lines)``: the records as dicts (``str`` or ``None`` values for
CSV, an empty field being ``None``; JSON values as parsed; Parquet values as stored) and the
1-based line each starts on (the row number for Parquet). A byte-order mark at the start of
a text file is allowed; any other byte that is not UTF-8 is an error naming its line and
column. ``error`` is the exception class raised (a subclass of :class:`RecordFileError`, so
callers keep their own error type).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import polars as pl

__all__ = ["RecordFileError", "read_jsonl_records", "read_csv_records", "read_parquet_records", "read_text_lines"]


class RecordFileError(ValueError):
    """A record file that cannot be read; the message names the file and the line."""


def _decode(raw: bytes, path: Path, n: int, error: type[RecordFileError]) -> str:
    try:
        return raw.decode("utf-8-sig" if n == 1 else "utf-8")  # a byte-order mark opens a file, not a line
    except UnicodeDecodeError as e:
        raise error(f"{path}:{n}: not UTF-8 text ({e.reason}: byte {raw[e.start:e.start + 1]!r} at "
                    f"column {e.start + 1}); re-encode the file as UTF-8") from None


def read_jsonl_records(path: str | Path, *, error: type[RecordFileError] = RecordFileError
                       ) -> tuple[list[dict], list[int]]:
    """The JSON objects of a JSON-lines file, one per non-blank line.

    Parameters
    ----------
    path : str or Path
    error : type
        The exception raised for a line that is not UTF-8, not JSON, nested too deeply or not
        an object.

    Returns
    -------
    (list of dict, list of int)
        The objects and their line numbers.
    """
    path = Path(path)
    rows, lines = [], []
    with path.open("rb") as fh:
        for n, raw in enumerate(fh, start=1):
            s = _decode(raw, path, n, error).strip()
            if not s:
                continue
            try:
                obj = json.loads(s)
            except json.JSONDecodeError as e:
                raise error(f"{path}:{n}: not valid JSON ({e.msg} at column {e.colno}); "
                            "expected one JSON object per line") from None
            except RecursionError:
                raise error(f"{path}:{n}: JSON nested too deeply to read; "
                            "expected one flat JSON object per line") from None
            if not isinstance(obj, dict):
                raise error(f"{path}:{n}: expected a JSON object, got {type(obj).__name__}")
            rows.append(obj)
            lines.append(n)
    return rows, lines


class _Utf8Lines:
    """The lines of a binary file as text, for :mod:`csv`; a byte that is not UTF-8 is an
    error naming the physical line."""

    def __init__(self, fh, path: Path, error: type[RecordFileError]) -> None:
        self._fh, self._path, self._error, self.n = fh, path, error, 0

    def __iter__(self):
        return self

    def __next__(self) -> str:
        raw = self._fh.readline()
        if not raw:
            raise StopIteration
        self.n += 1
        return _decode(raw, self._path, self.n, self._error)


def _field_names(declared, n: int) -> list[str]:
    """``declared`` names for the first fields, ``column_<i>`` (1-based) for the rest."""
    names = list(declared or [])[:n]
    return names + [f"column_{i}" for i in range(len(names) + 1, n + 1)]


def read_csv_records(path: str | Path, delimiter: str | None = None, header: bool = True, column_names=None, *,
                     error: type[RecordFileError] = RecordFileError) -> tuple[list[dict], list[int]]:
    """The rows of a CSV or TSV file as dicts (an empty field is ``None``; blank lines are skipped).

    Parameters
    ----------
    path : str or Path
    delimiter : str, optional
        Default: a tab for ``.tsv``/``.tab``, else a comma.
    header : bool
        Whether the first line names the columns; without one, ``column_names`` names the
        fields in order and the others are ``column_<n>`` (1-based).
    column_names : sequence of str, optional
        Names that replace the header's, or name the fields of a headerless file.
    error : type
        The exception raised for a malformed row, a row with another number of fields than
        the header, a header naming a column twice, or bytes that are not UTF-8.

    Returns
    -------
    (list of dict, list of int)
        The rows and the line each starts on.
    """
    path = Path(path)
    rows, lines = [], []
    if column_names is not None and len(set(column_names)) != len(list(column_names)):
        raise error(f"{path}: column names must be distinct, got {list(column_names)}")
    with path.open("rb") as fh:
        if delimiter is None:
            delimiter = "\t" if path.suffix.lower() in (".tsv", ".tab") else ","
        reader = csv.reader(_Utf8Lines(fh, path, error), delimiter=delimiter)
        if header:
            try:
                header_row = next(reader)
            except StopIteration:
                return [], []
            except csv.Error as e:
                raise error(f"{path}:1: cannot read the CSV header: {e}") from None
            if column_names is not None:
                header_row = _field_names(column_names, len(header_row))
            dup = sorted({h for h in header_row if header_row.count(h) > 1})
            if dup:
                raise error(f"{path}:1: the CSV header names a column twice ({', '.join(dup)})")
            start = reader.line_num + 1
        else:
            header_row = None
            start = 1
        names = header_row
        while True:
            try:
                rec = next(reader)
            except StopIteration:
                break
            except csv.Error as e:
                raise error(f"{path}:{start}: malformed CSV: {e}") from None
            if rec and names is None:
                names = _field_names(column_names, len(rec))
            if rec and len(rec) != len(names):
                raise error(f"{path}:{start}: {len(rec)} fields, the {'header' if header_row else 'first line'} "
                            f"has {len(names)} ({', '.join(names)})")
            if rec:
                rows.append({h: (v if v != "" else None) for h, v in zip(names, rec)})
                lines.append(start)
            start = reader.line_num + 1
    return rows, lines


def read_parquet_records(path: str | Path, *, error: type[RecordFileError] = RecordFileError
                         ) -> tuple[list[dict], list[int]]:
    """The rows of a Parquet file as dicts, numbered from 1.

    Parameters
    ----------
    path : str or Path
    error : type
        The exception raised when the file is not readable Parquet.

    Returns
    -------
    (list of dict, list of int)
    """
    try:
        df = pl.read_parquet(path)
    except Exception as e:  # noqa: BLE001 - pyarrow/polars raise many kinds
        raise error(f"{path}: not a readable Parquet file: {e}") from None
    return df.to_dicts(), list(range(1, df.height + 1))


def read_text_lines(path: str | Path, *, comment: str | None = "#",
                    error: type[RecordFileError] = RecordFileError) -> tuple[list[str], list[int]]:
    """The non-blank lines of a text file, stripped, without comment lines.

    Parameters
    ----------
    path : str or Path
    comment : str, optional
        Lines starting with it (after leading blanks) are skipped; ``None``: none are.
    error : type
        The exception raised for bytes that are not UTF-8.

    Returns
    -------
    (list of str, list of int)
        The lines and their line numbers.
    """
    path = Path(path)
    vals, lines = [], []
    with path.open("rb") as fh:
        for n, raw in enumerate(fh, start=1):
            s = _decode(raw, path, n, error).strip()
            if s and not (comment and s.startswith(comment)):
                vals.append(s)
                lines.append(n)
    return vals, lines
