"""Record files — JSON Lines, JSON arrays and documents, CSV/TSV, Parquet, Excel, plain text —
read into rows with their line numbers.

One home for reading the tables people hand to taxoforge: model outputs
(:func:`taxoforge.scores.readers.files.read_outputs`) and label sets
(:func:`taxoforge.files.labels.read_labels`) both read their files here, so a bad byte, a bad
JSON line or a short CSV row gets the same error, naming the file and the line, wherever it
is read.

Every reader returns ``(rows, lines)``: the records as dicts (``str`` or ``None`` values for
CSV and Excel, an empty field being ``None``; JSON values as parsed; Parquet values as
stored) and the 1-based line each starts on (the row number for Parquet, the spreadsheet
row for Excel, the line an element opens on in a JSON array). A byte-order mark at the start
of a text file is allowed; any other byte that is not UTF-8 is an error naming its line and
column. ``error`` is the exception class raised (a subclass of :class:`RecordFileError`, so
callers keep their own error type).

**Only regular files.** A FIFO, a device (``/dev/zero``), a socket or a folder is refused by
name (:class:`~taxoforge.files.paths.NotARegularFile`, exit code 11) and never waited on.

**Bounds, counted as read** (:mod:`taxoforge.files.record_limits`). No record is parsed
before its size is known to be within ``max_record_bytes`` (:data:`MAX_RECORD_BYTES`): a
JSONL line, text line or CSV record is read at most one byte past the cap, a JSON array
element at most the cap ahead of its start, a spreadsheet cell or a Parquet value stops at
it, so a 1 GB line costs the cap, not the gigabyte, and is an error naming the file and line.
Records and their fields are counted against ``max_records`` and ``max_cells`` as they are
made, and what a compressed or encoded file decodes to against ``max_table_bytes`` as it is
decoded — never the sizes the file declares (a workbook's zip directory, a sheet's
dimension, a Parquet footer: :mod:`taxoforge.files.xlsx`, :mod:`taxoforge.files.parquet_records`).

**Strict JSON** (:mod:`taxoforge.files.json_records`). A key given twice in one object, a lone
UTF-16 surrogate (``"\\ud800"``), an integer of more than 4,300 digits and bytes that are not
UTF-8 are errors naming the file and line. ``NaN`` (what pandas writes for a missing value,
e.g. VLMEvalKit's JSON predictions) reads as a missing value. CSV reading is linear in the
number of columns, and so is a workbook's header.
"""

from __future__ import annotations

import csv
import contextlib
from collections import Counter
from pathlib import Path

from taxoforge.files.json_records import decode_line, json_records, jsonl_records, sniff_json_kind
from taxoforge.files.parquet_records import parquet_rows
from taxoforge.files.paths import open_regular
from taxoforge.files.record_limits import (MAX_CELLS, MAX_RECORD_BYTES, MAX_RECORDS, MAX_TABLE_BYTES, RecordFileError,
                                          RecordLimits, Tally)
from taxoforge.files.xlsx import read_xlsx_rows

__all__ = ["RecordFileError", "RecordLimits", "MAX_RECORD_BYTES", "MAX_TABLE_BYTES", "MAX_RECORDS", "MAX_CELLS",
           "read_jsonl_records", "read_json_records", "read_csv_records", "read_parquet_records", "read_xlsx_records",
           "read_text_lines", "sniff_json_kind"]


@contextlib.contextmanager
def _raising(error: type[RecordFileError]):
    """Raise the caller's ``error`` class (a :class:`RecordFileError` subclass) for the errors inside."""
    try:
        yield
    except RecordFileError as e:
        if type(e) is RecordFileError and error is not RecordFileError:
            raise error(str(e)) from None
        raise


def _limits(max_record_bytes: int, max_table_bytes: int, max_records: int, max_cells: int) -> RecordLimits:
    return RecordLimits(max_record_bytes, max_table_bytes, max_records, max_cells)


def read_jsonl_records(path: str | Path, *, max_record_bytes: int = MAX_RECORD_BYTES,
                       max_table_bytes: int = MAX_TABLE_BYTES, max_records: int = MAX_RECORDS,
                       max_cells: int = MAX_CELLS, error: type[RecordFileError] = RecordFileError
                       ) -> tuple[list[dict], list[int]]:
    """The JSON objects of a JSON-lines file, one per non-blank line.

    Parameters
    ----------
    path : str or Path
    max_record_bytes, max_table_bytes, max_records, max_cells : int
        The limits of :mod:`taxoforge.files.record_limits`.
    error : type
        The exception raised for a line that is not UTF-8, not JSON, nested too deeply, not an
        object, too long, holding a key twice or a lone surrogate, or past a limit.

    Returns
    -------
    (list of dict, list of int)
        The objects and their line numbers.
    """
    with _raising(error):
        return jsonl_records(Path(path), _limits(max_record_bytes, max_table_bytes, max_records, max_cells))


def read_json_records(path: str | Path, *, max_record_bytes: int = MAX_RECORD_BYTES,
                      max_table_bytes: int = MAX_TABLE_BYTES, max_records: int = MAX_RECORDS,
                      max_cells: int = MAX_CELLS, error: type[RecordFileError] = RecordFileError
                      ) -> tuple[list[dict], list[int], dict]:
    """The records of a JSON file and its document-level fields.

    * a JSON array of objects (VLMEvalKit's ``.json`` predictions, written indented): read
      one element at a time, each at most ``max_record_bytes``; a record's line is the line
      its element opens on;
    * a JSON object holding a list of records under ``logs`` (lmms-eval before v0.3 wrote
      ``{"args", "model_configs", "logs", "time"}``), ``samples``, ``records`` or ``data``:
      the file (at most ``max_table_bytes``, counted as read) is read whole; the records'
      lines are their positions in the list, and the other fields are returned as the
      document's;
    * several objects, one per line: JSON Lines.

    Parameters
    ----------
    path : str or Path
    max_record_bytes, max_table_bytes, max_records, max_cells : int
        The limits of :mod:`taxoforge.files.record_limits`.
    error : type
        The exception raised for what cannot be read.

    Returns
    -------
    (list of dict, list of int, dict)
        The records, their lines, and the document's other fields (``{}`` for an array).
    """
    with _raising(error):
        return json_records(Path(path), _limits(max_record_bytes, max_table_bytes, max_records, max_cells))


def read_csv_records(path: str | Path, delimiter: str | None = None, header: bool = True, column_names=None, *,
                     max_record_bytes: int = MAX_RECORD_BYTES, max_table_bytes: int = MAX_TABLE_BYTES,
                     max_records: int = MAX_RECORDS, max_cells: int = MAX_CELLS,
                     error: type[RecordFileError] = RecordFileError) -> tuple[list[dict], list[int]]:
    """The rows of a CSV or TSV file as dicts (an empty field is ``None``; blank lines are
    skipped; a quoted field may span lines, a record's line is the one it starts on).

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
    max_record_bytes, max_table_bytes, max_records, max_cells : int
        The limits of :mod:`taxoforge.files.record_limits`.
    error : type
        The exception raised for a malformed row, a row with another number of fields than
        the header, a header naming a column twice, a record too long, bytes that are not
        UTF-8, or a limit passed.

    Returns
    -------
    (list of dict, list of int)
        The rows and the line each starts on.
    """
    with _raising(error):
        return _csv(Path(path), _limits(max_record_bytes, max_table_bytes, max_records, max_cells), delimiter, header,
                    column_names)


def read_parquet_records(path: str | Path, *, max_record_bytes: int = MAX_RECORD_BYTES,
                         max_table_bytes: int = MAX_TABLE_BYTES, max_records: int = MAX_RECORDS,
                         max_cells: int = MAX_CELLS, error: type[RecordFileError] = RecordFileError
                         ) -> tuple[list[dict], list[int]]:
    """The rows of a Parquet file as dicts, numbered from 1, counted as they are decoded
    (:func:`taxoforge.files.parquet_records.parquet_rows`).

    Parameters
    ----------
    path : str or Path
    max_record_bytes, max_table_bytes, max_records, max_cells : int
        The limits of :mod:`taxoforge.files.record_limits`.
    error : type
        The exception raised when the file is not readable Parquet or passes a limit.

    Returns
    -------
    (list of dict, list of int)
    """
    with _raising(error):
        return parquet_rows(Path(path), _limits(max_record_bytes, max_table_bytes, max_records, max_cells))


def read_xlsx_records(path: str | Path, *, max_record_bytes: int = MAX_RECORD_BYTES,
                      max_table_bytes: int = MAX_TABLE_BYTES, max_records: int = MAX_RECORDS,
                      max_cells: int = MAX_CELLS, error: type[RecordFileError] = RecordFileError
                      ) -> tuple[list[dict], list[int]]:
    """The rows of the first sheet of an Excel workbook, every cell as text; the first row
    names the columns, a row's line is its spreadsheet row number. Read a cell at a time,
    every part's inflated bytes, rows and cells counted (:mod:`taxoforge.files.xlsx`).

    Parameters
    ----------
    path : str or Path
    max_record_bytes, max_table_bytes, max_records, max_cells : int
        The limits of :mod:`taxoforge.files.record_limits`.
    error : type
        The exception raised for what is not a readable workbook, or passes a limit.

    Returns
    -------
    (list of dict, list of int)
    """
    with _raising(error):
        return read_xlsx_rows(Path(path), _limits(max_record_bytes, max_table_bytes, max_records, max_cells))


# ---------------------------------------------------------------------------- CSV and text
class _Utf8Lines:
    """The lines of a binary file as text, for :mod:`csv`, each record at most ``max_record_bytes``;
    a byte that is not UTF-8 is an :class:`RecordFileError` naming the physical line."""

    def __init__(self, fh, path: Path, tally: Tally) -> None:
        self._fh, self._path, self._tally, self.n = fh, path, tally, 0
        self._cap = tally.limits.max_record_bytes
        self.record_bytes = 0

    def __iter__(self):
        return self

    def __next__(self) -> str:
        raw = self._fh.readline(self._cap + 1)
        if not raw:
            raise StopIteration
        self.n += 1
        self.record_bytes += len(raw)
        if (len(raw) > self._cap and not raw.endswith(b"\n")) or self.record_bytes > self._cap:
            raise self._tally.too_long(self.n, "record")
        return decode_line(raw, self._path, self.n)


def _field_names(declared, n: int) -> list[str]:
    """``declared`` names for the first fields, ``column_<i>`` (1-based) for the rest."""
    names = list(declared or [])[:n]
    return names + [f"column_{i}" for i in range(len(names) + 1, n + 1)]


def _csv(path: Path, limits: RecordLimits, delimiter: str | None = None, header: bool = True,
         column_names=None) -> tuple[list[dict], list[int]]:
    """Records of a CSV/TSV file (quoted fields may span lines; a record's line is the one
    it starts on), every record at most ``max_record_bytes``, records and fields counted."""
    rows, lines = [], []
    tally = Tally(path, limits)
    cap = limits.max_record_bytes
    if column_names is not None and len(set(column_names)) != len(list(column_names)):
        raise RecordFileError(f"{path}: column names must be distinct, got {list(column_names)}")
    old_limit = csv.field_size_limit()
    csv.field_size_limit(max(cap, old_limit))
    try:
        with open_regular(path, "record file") as fh:
            if delimiter is None:
                delimiter = "\t" if path.suffix.lower() in (".tsv", ".tab") else ","
            src = _Utf8Lines(fh, path, tally)
            reader = csv.reader(src, delimiter=delimiter)
            if header:
                try:
                    header_row = next(reader)
                except StopIteration:
                    return [], []
                except csv.Error as e:
                    raise RecordFileError(f"{path}:1: cannot read the CSV header: {e}") from None
                if column_names is not None:
                    header_row = _field_names(column_names, len(header_row))
                counts = Counter(header_row)
                dup = sorted(h for h, c in counts.items() if c > 1)
                if dup:
                    raise RecordFileError(f"{path}:1: the CSV header names a column twice ({', '.join(dup[:10])})")
                start = reader.line_num + 1
            else:
                header_row = None
                start = 1
            names = header_row
            while True:
                src.record_bytes = 0
                try:
                    rec = next(reader)
                except StopIteration:
                    break
                except csv.Error as e:
                    raise RecordFileError(f"{path}:{start}: malformed CSV: {e}") from None
                if rec and names is None:
                    names = _field_names(column_names, len(rec))
                if rec and len(rec) != len(names):
                    shown = ", ".join(names[:20]) + (", …" if len(names) > 20 else "")
                    raise RecordFileError(f"{path}:{start}: {len(rec)} fields, the "
                                          f"{'header' if header_row else 'first line'} has {len(names)} ({shown})")
                if rec:
                    tally.record(start, len(rec))
                    rows.append({h: (v if v != "" else None) for h, v in zip(names, rec)})
                    lines.append(start)
                start = reader.line_num + 1
    finally:
        csv.field_size_limit(old_limit)
    return rows, lines


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
    tally = Tally(path, RecordLimits())
    with open_regular(path, "text file") as fh, _raising(error):
        n = 0
        while raw := fh.readline(MAX_RECORD_BYTES + 1):
            n += 1
            if len(raw) > MAX_RECORD_BYTES and not raw.endswith(b"\n"):
                raise tally.too_long(n, "line")
            s = decode_line(raw, path, n, error).strip()
            if s and not (comment and s.startswith(comment)):
                tally.record(n, 1)
                vals.append(s)
                lines.append(n)
    return vals, lines
