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

**Bounds.** No record is parsed before its size is known to be within ``max_record_bytes``
(:data:`MAX_RECORD_BYTES` by default): a JSONL line, text line or CSV record is read at most
one byte past the cap, a JSON array element at most the cap ahead of its start, so a 1 GB
line costs the cap, not the gigabyte, and is an error naming the file and line. Files read
whole are checked first against ``max_table_bytes`` (:data:`MAX_TABLE_BYTES`): an ``.xlsx``
by the uncompressed size its zip directory declares, a Parquet file by its row groups'
sizes, a JSON document that is not an array by its size.

**Strict JSON.** A key given twice in one object, a lone UTF-16 surrogate (``"\\ud800"``: no
character, and not writable as UTF-8) and bytes that are not UTF-8 are errors naming the file
and line. ``NaN`` (what pandas writes for a missing value, e.g. VLMEvalKit's JSON
predictions) reads as a missing value. CSV reading is linear in the number of columns.
"""

from __future__ import annotations

import csv
import contextlib
import json
import re
import zipfile
from collections import Counter
from pathlib import Path

import polars as pl

__all__ = ["RecordFileError", "MAX_RECORD_BYTES", "MAX_TABLE_BYTES", "read_jsonl_records", "read_json_records",
           "read_csv_records", "read_parquet_records", "read_xlsx_records", "read_text_lines", "sniff_json_kind"]

#: Bytes one record may take before it is parsed: a JSONL or text line, a CSV/TSV record, one
#: element of a JSON array. A longer one is an error naming the file and line, never a parse of it.
MAX_RECORD_BYTES = 16 * 2**20
#: Bytes a whole-table file may unpack to before it is read: an ``.xlsx`` workbook's sheets
#: (uncompressed), a Parquet file's column data, a JSON document that is not an array.
MAX_TABLE_BYTES = 1 * 2**30


class RecordFileError(ValueError):
    """A record file that cannot be read; the message names the file and the line."""


@contextlib.contextmanager
def _raising(error: type[RecordFileError]):
    """Raise the caller's ``error`` class (a :class:`RecordFileError` subclass) for the errors inside."""
    try:
        yield
    except RecordFileError as e:
        if type(e) is RecordFileError and error is not RecordFileError:
            raise error(str(e)) from None
        raise


def read_jsonl_records(path: str | Path, *, max_record_bytes: int = MAX_RECORD_BYTES,
                       error: type[RecordFileError] = RecordFileError) -> tuple[list[dict], list[int]]:
    """The JSON objects of a JSON-lines file, one per non-blank line.

    Parameters
    ----------
    path : str or Path
    max_record_bytes : int
        The most bytes a line may take (module docstring).
    error : type
        The exception raised for a line that is not UTF-8, not JSON, nested too deeply, not an
        object, too long, or holding a key twice or a lone surrogate.

    Returns
    -------
    (list of dict, list of int)
        The objects and their line numbers.
    """
    with _raising(error):
        return _jsonl(Path(path), max_record_bytes)


def read_json_records(path: str | Path, *, max_record_bytes: int = MAX_RECORD_BYTES,
                      max_table_bytes: int = MAX_TABLE_BYTES, error: type[RecordFileError] = RecordFileError
                      ) -> tuple[list[dict], list[int], dict]:
    """The records of a JSON file and its document-level fields.

    * a JSON array of objects (VLMEvalKit's ``.json`` predictions, written indented): read
      one element at a time, each at most ``max_record_bytes``; a record's line is the line
      its element opens on;
    * a JSON object holding a list of records under ``logs`` (lmms-eval before v0.3 wrote
      ``{"args", "model_configs", "logs", "time"}``), ``samples``, ``records`` or ``data``:
      the file (at most ``max_table_bytes``) is read whole; the records' lines are their
      positions in the list, and the other fields are returned as the document's;
    * several objects, one per line: JSON Lines.

    Parameters
    ----------
    path : str or Path
    max_record_bytes, max_table_bytes : int
        The bounds of the module docstring.
    error : type
        The exception raised for what cannot be read.

    Returns
    -------
    (list of dict, list of int, dict)
        The records, their lines, and the document's other fields (``{}`` for an array).
    """
    with _raising(error):
        return _json(Path(path), max_record_bytes, max_table_bytes)


def read_csv_records(path: str | Path, delimiter: str | None = None, header: bool = True, column_names=None, *,
                     max_record_bytes: int = MAX_RECORD_BYTES, error: type[RecordFileError] = RecordFileError
                     ) -> tuple[list[dict], list[int]]:
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
    max_record_bytes : int
        The most bytes a record may take.
    error : type
        The exception raised for a malformed row, a row with another number of fields than
        the header, a header naming a column twice, a record too long, or bytes that are not UTF-8.

    Returns
    -------
    (list of dict, list of int)
        The rows and the line each starts on.
    """
    with _raising(error):
        return _csv(Path(path), max_record_bytes, delimiter, header, column_names)


def read_parquet_records(path: str | Path, *, max_table_bytes: int = MAX_TABLE_BYTES,
                         error: type[RecordFileError] = RecordFileError) -> tuple[list[dict], list[int]]:
    """The rows of a Parquet file as dicts, numbered from 1.

    Parameters
    ----------
    path : str or Path
    max_table_bytes : int
        The most bytes of column data the file may hold (its row groups' sizes).
    error : type
        The exception raised when the file is not readable Parquet or too large.

    Returns
    -------
    (list of dict, list of int)
    """
    with _raising(error):
        return _parquet(Path(path), max_table_bytes)


def read_xlsx_records(path: str | Path, *, max_table_bytes: int = MAX_TABLE_BYTES,
                      error: type[RecordFileError] = RecordFileError) -> tuple[list[dict], list[int]]:
    """The rows of the first sheet of an Excel workbook, every cell as text; the first row
    names the columns, a row's line is its spreadsheet row number. Read with polars'
    ``read_excel`` over ``fastexcel`` (the Rust calamine reader) once the workbook's declared
    uncompressed size is known to be within ``max_table_bytes``.

    Parameters
    ----------
    path : str or Path
    max_table_bytes : int
        The most bytes the workbook may unpack to.
    error : type
        The exception raised for what is not a readable workbook, or too large.

    Returns
    -------
    (list of dict, list of int)
    """
    with _raising(error):
        return _xlsx(Path(path), max_table_bytes)


# ---------------------------------------------------------------------------- implementations
def _decode(raw: bytes, path: Path, n: int, error: type = None) -> str:
    try:
        return raw.decode("utf-8-sig" if n == 1 else "utf-8")  # a byte-order mark opens a file, not a line
    except UnicodeDecodeError as e:
        raise (error or RecordFileError)(f"{path}:{n}: not UTF-8 text ({e.reason}: byte {raw[e.start:e.start + 1]!r} at "
                              f"column {e.start + 1}); re-encode the file as UTF-8") from None


def _too_long(path: Path, n: int, cap: int, what: str = "line") -> RecordFileError:
    return RecordFileError(f"{path}:{n}: this {what} is longer than {cap:,} bytes, the most one record may take "
                           f"(max_record_bytes); split the record or raise the cap")


class _Strict:
    """``json.loads`` hooks: duplicate keys are an error, NaN and infinities read as None."""

    def __init__(self, path: Path) -> None:
        self.path, self.line = path, 0

    def pairs(self, pairs):
        out = {}
        for k, v in pairs:
            if k in out:
                raise RecordFileError(f"{self.path}:{self.line}: the key {k!r} occurs twice in one JSON object; "
                                      "a record names each field once")
            out[k] = v
        return out

    @staticmethod
    def constant(_name):
        return None


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _lone_surrogate(obj) -> str | None:
    """The field path of the first string of ``obj`` holding a lone surrogate, or None."""
    stack = [("", obj)]
    while stack:
        where, v = stack.pop()
        if isinstance(v, str):
            if _SURROGATE.search(v):
                return where or "(the record)"
        elif isinstance(v, dict):
            for k, x in v.items():
                if isinstance(k, str) and _SURROGATE.search(k):
                    return f"{where}.{k!r}".lstrip(".")
                stack.append((f"{where}.{k}".lstrip("."), x))
        elif isinstance(v, list):
            stack.extend((f"{where}[{i}]", x) for i, x in enumerate(v))
    return None


def _parse(text: str, path: Path, n: int, strict: _Strict, what: str):
    strict.line = n
    try:
        obj = json.loads(text, object_pairs_hook=strict.pairs, parse_constant=strict.constant)
    except json.JSONDecodeError as e:
        raise RecordFileError(f"{path}:{n}: not valid JSON ({e.msg} at column {e.colno}); expected {what}") from None
    except RecursionError:
        raise RecordFileError(f"{path}:{n}: JSON nested too deeply to read; expected {what}") from None
    if _SURROGATE_ESCAPE.search(text):
        bad = _lone_surrogate(obj)
        if bad is not None:
            raise RecordFileError(f"{path}:{n}: a lone UTF-16 surrogate escape in {bad} (\\ud800–\\udfff without its "
                                  "pair is no character); fix the text that wrote it")
    return obj


def _jsonl(path: Path, cap: int) -> tuple[list[dict], list[int]]:
    """Records of a JSON Lines file, one JSON object per line; every line at most ``cap`` bytes."""
    rows, lines = [], []
    strict = _Strict(path)
    with path.open("rb") as fh:
        n = 0
        while True:
            raw = fh.readline(cap + 1)
            if not raw:
                break
            n += 1
            if len(raw) > cap and not raw.endswith(b"\n"):
                raise _too_long(path, n, cap)
            s = _decode(raw, path, n).strip()
            if not s:
                continue
            obj = _parse(s, path, n, strict, "one JSON object per line")
            if not isinstance(obj, dict):
                raise RecordFileError(f"{path}:{n}: expected a JSON object, got {type(obj).__name__}")
            rows.append(obj)
            lines.append(n)
    return rows, lines


def _first_char(path: Path) -> str:
    with path.open("rb") as fh:
        head = fh.read(4096).lstrip(b"\xef\xbb\xbf").lstrip()
    return head[:1].decode("ascii", "replace")


def sniff_json_kind(path: Path) -> str | None:
    """The JSON kind a file's first bytes say.

    Parameters
    ----------
    path : Path

    Returns
    -------
    str or None
        ``json`` for a file that opens a JSON array, ``jsonl`` for one that opens an object
        (a ``.json`` file may be either), else None.
    """
    c = _first_char(path)
    return "json" if c == "[" else "jsonl" if c == "{" else None


def _json(path: Path, cap: int, table_cap: int) -> tuple[list[dict], list[int], dict]:
    """Records of a JSON file and its document-level fields:

    * a JSON array of objects (VLMEvalKit's ``.json`` predictions, written indented): read
      one element at a time, each at most ``cap`` bytes; each record's line is the line its
      element opens on;
    * a JSON object holding a list of records under ``logs`` (lmms-eval before v0.3 wrote
      ``{"args", "model_configs", "logs", "time"}``) or ``samples``/``records``/``data``:
      the file (at most ``table_cap`` bytes) is read whole; the records' lines are their
      positions in the list, and the other fields are returned as the document's;
    * a file of several objects, one per line: JSON Lines.
    """
    c = _first_char(path)
    if c == "[":
        return (*_read_json_array(path, cap), {})
    size = path.stat().st_size
    if size > table_cap:
        raise RecordFileError(f"{path}: a JSON document of {size:,} bytes, more than {table_cap:,} "
                              "(max_table_bytes); write it as JSON Lines, one record per line")
    text = _decode(path.read_bytes(), path, 1)
    strict = _Strict(path)
    try:
        doc = _parse(text, path, 1, strict, "a JSON array of records, an object with a list of records, or JSON Lines")
    except RecordFileError:
        if c == "{" and "\n" in text.strip():  # several objects, one per line
            return (*_jsonl(path, cap), {})
        raise
    if isinstance(doc, dict):
        for key in ("logs", "samples", "records", "data"):
            recs = doc.get(key)
            if isinstance(recs, list) and all(isinstance(r, dict) for r in recs):
                return recs, list(range(1, len(recs) + 1)), {k: v for k, v in doc.items() if k != key}
        return [doc], [1], {}
    raise RecordFileError(f"{path}:1: a JSON {type(doc).__name__}; expected a JSON array of records")


class _TextChunks:
    """A binary file as decoded text, a chunk at a time (a character cut between chunks is
    completed by the next); bytes that are not UTF-8 are an :class:`RecordFileError`."""

    def __init__(self, fh, path: Path, size: int = 1 << 16) -> None:
        import codecs

        self._fh, self._path, self._size = fh, path, size
        self._dec = codecs.getincrementaldecoder("utf-8-sig")()
        self.eof = False

    def read(self, at_least: int = 0) -> str:
        raw = self._fh.read(max(self._size, at_least))
        self.eof = not raw
        try:
            return self._dec.decode(raw, final=self.eof)
        except UnicodeDecodeError as e:
            raise RecordFileError(f"{self._path}: not UTF-8 text ({e.reason}); re-encode the file as UTF-8") from None


def _read_json_array(path: Path, cap: int) -> tuple[list[dict], list[int]]:
    """The elements of a top-level JSON array, parsed one at a time, each at most ``cap`` bytes."""
    strict = _Strict(path)
    dec = json.JSONDecoder(object_pairs_hook=strict.pairs, parse_constant=strict.constant)
    rows, lines = [], []
    with path.open("rb") as fh:
        src = _TextChunks(fh, path)
        buf, pos, line, state = "", 0, 1, "open"
        while True:
            while pos < len(buf) and buf[pos] in " \t\r\n":
                line += buf[pos] == "\n"
                pos += 1
            if pos >= len(buf):
                if src.eof:
                    if state == "done":
                        return rows, lines
                    raise RecordFileError(f"{path}:{line}: the JSON array is not closed (expected ']')")
                buf, pos = buf[pos:] + src.read(), 0
                continue
            ch = buf[pos]
            if state == "done":
                raise RecordFileError(f"{path}:{line}: text after the closing ']' of the JSON array")
            if state == "open":
                if ch != "[":
                    raise RecordFileError(f"{path}:{line}: expected a JSON array ('['), got {ch!r}")
                pos, state = pos + 1, "first"
                continue
            if ch == "]" and state in ("first", "after"):
                pos, state = pos + 1, "done"
                continue
            if state == "after":
                if ch != ",":
                    raise RecordFileError(f"{path}:{line}: expected ',' or ']' between array elements, got {ch!r}")
                pos, state = pos + 1, "element"
                continue
            while True:  # an element starts here: read on until it parses whole, at most cap bytes
                strict.line = line
                try:
                    obj, end = dec.raw_decode(buf, pos)
                    break
                except json.JSONDecodeError as e:
                    if src.eof:
                        raise RecordFileError(f"{path}:{line + buf.count(chr(10), pos, e.pos)}: not valid JSON "
                                              f"({e.msg}); expected a JSON array of records") from None
                    if len(buf) - pos > cap:
                        raise _too_long(path, line, cap, "array element") from None
                    buf, pos = buf[pos:] + src.read(len(buf) - pos), 0
                except RecursionError:
                    raise RecordFileError(f"{path}:{line}: JSON nested too deeply to read") from None
            piece = buf[pos:end]
            if len(piece) > cap:
                raise _too_long(path, line, cap, "array element")
            if _SURROGATE_ESCAPE.search(piece):
                bad = _lone_surrogate(obj)
                if bad is not None:
                    raise RecordFileError(f"{path}:{line}: a lone UTF-16 surrogate escape in {bad} (\\ud800–\\udfff "
                                          "without its pair is no character); fix the text that wrote it")
            if not isinstance(obj, dict):
                raise RecordFileError(f"{path}:{line}: expected a JSON object in the array, got {type(obj).__name__}")
            rows.append(obj)
            lines.append(line)
            line += piece.count("\n")
            pos, state = end, "after"


class _Utf8Lines:
    """The lines of a binary file as text, for :mod:`csv`, each at most ``cap`` bytes; a
    byte that is not UTF-8 is an :class:`RecordFileError` naming the physical line."""

    def __init__(self, fh, path: Path, cap: int) -> None:
        self._fh, self._path, self._cap, self.n = fh, path, cap, 0
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
            raise _too_long(self._path, self.n, self._cap, "record")
        return _decode(raw, self._path, self.n)


def _field_names(declared, n: int) -> list[str]:
    """``declared`` names for the first fields, ``column_<i>`` (1-based) for the rest."""
    names = list(declared or [])[:n]
    return names + [f"column_{i}" for i in range(len(names) + 1, n + 1)]


def _csv(path: Path, cap: int, delimiter: str | None = None, header: bool = True,
             column_names=None) -> tuple[list[dict], list[int]]:
    """Records of a CSV/TSV file (quoted fields may span lines; a record's line is the one
    it starts on), every record at most ``cap`` bytes."""
    rows, lines = [], []
    if column_names is not None and len(set(column_names)) != len(list(column_names)):
        raise RecordFileError(f"{path}: column names must be distinct, got {list(column_names)}")
    old_limit = csv.field_size_limit()
    csv.field_size_limit(max(cap, old_limit))
    try:
        with path.open("rb") as fh:
            if delimiter is None:
                delimiter = "\t" if path.suffix.lower() in (".tsv", ".tab") else ","
            src = _Utf8Lines(fh, path, cap)
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
                    rows.append({h: (v if v != "" else None) for h, v in zip(names, rec)})
                    lines.append(start)
                start = reader.line_num + 1
    finally:
        csv.field_size_limit(old_limit)
    return rows, lines


def _parquet(path: Path, table_cap: int) -> tuple[list[dict], list[int]]:
    """Rows of a Parquet file (row numbers as lines), refused when its data exceeds ``table_cap`` bytes."""
    import pyarrow.parquet as pq

    try:
        meta = pq.ParquetFile(path).metadata
        size = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    except Exception as e:  # noqa: BLE001 - pyarrow raises many kinds
        raise RecordFileError(f"{path}: not a readable Parquet file: {e}") from None
    if size > table_cap:
        raise RecordFileError(f"{path}: its data takes {size:,} bytes, more than {table_cap:,} "
                              "(max_table_bytes); split the file")
    try:
        df = pl.read_parquet(path)
    except Exception as e:  # noqa: BLE001
        raise RecordFileError(f"{path}: not a readable Parquet file: {e}") from None
    return df.to_dicts(), list(range(1, df.height + 1))


def _xlsx(path: Path, table_cap: int) -> tuple[list[dict], list[int]]:
    """Rows of the first sheet of an Excel workbook (its first row names the columns; a
    row's line is its spreadsheet row number), every cell read as text. Read with polars'
    ``read_excel`` over ``fastexcel`` (the Rust calamine reader); the workbook's declared
    uncompressed size is checked against ``table_cap`` first."""
    try:
        with zipfile.ZipFile(path) as z:
            size = sum(i.file_size for i in z.infolist())
    except (zipfile.BadZipFile, OSError) as e:
        raise RecordFileError(f"{path}: not an .xlsx workbook ({e})") from None
    if size > table_cap:
        raise RecordFileError(f"{path}: the workbook unpacks to {size:,} bytes, more than {table_cap:,} "
                              "(max_table_bytes); export the sheet as TSV or split it")
    try:
        df = pl.read_excel(path, sheet_id=1, engine="calamine", infer_schema_length=0)
    except ImportError as e:
        raise RecordFileError(f"{path}: reading .xlsx needs the fastexcel package ({e})") from None
    except Exception as e:  # noqa: BLE001 - calamine raises many kinds
        raise RecordFileError(f"{path}: not a readable .xlsx workbook: {e}") from None
    names = [str(c) for c in df.columns]
    counts = Counter(names)
    dup = sorted(h for h, c in counts.items() if c > 1)
    if dup:
        raise RecordFileError(f"{path}:1: the header row names a column twice ({', '.join(dup[:10])})")
    rows = [{k: v for k, v in r.items()} for r in df.to_dicts()]
    return rows, list(range(2, df.height + 2))


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
        n = 0
        while raw := fh.readline(MAX_RECORD_BYTES + 1):
            n += 1
            if len(raw) > MAX_RECORD_BYTES and not raw.endswith(b"\n"):
                raise error(f"{path}:{n}: this line is longer than {MAX_RECORD_BYTES:,} bytes, the most one line may take")
            s = _decode(raw, path, n, error).strip()
            if s and not (comment and s.startswith(comment)):
                vals.append(s)
                lines.append(n)
    return vals, lines
