"""The first sheet of an ``.xlsx`` workbook as rows of text, read a cell at a time.

A workbook is a zip of XML parts (ECMA-376 Part 1, SpreadsheetML): ``xl/workbook.xml``
lists the sheets, ``xl/_rels/workbook.xml.rels`` says which part holds each,
``xl/sharedStrings.xml`` holds the strings cells point to, ``xl/styles.xml`` the number
formats (which say whether a number is a date). Each part is inflated a chunk at a time and
parsed as it comes (:mod:`pyexpat`), so memory follows the cells the sheet **has**, never
what it declares:

* a ``<dimension>``, a cell reference far past the data (``XFD1048576``) or a row number near
  the sheet's end costs nothing — rows are kept as the cells they hold, not as a bounding box
  (general readers allocate the box: 9.7 GB for one cell at ``XFD1048576``);
* the bytes each part inflates to are counted as they come, never taken from the zip
  directory (whose sizes are the file's word); a member that inflates past its declared size
  is a CRC error of :mod:`zipfile`, and every part together stops at ``max_table_bytes``;
* one cell, or one row, of more than ``max_record_bytes`` is refused as soon as its text
  passes the limit (a 100 MiB cell costs 16 MiB of reading, not 120 s and 2.9 GB);
* records (rows), fields and XML elements are counted (:class:`~taxoforge.files.record_limits.Tally`);
* column names are checked in one pass (16,000 header cells named ``x`` are one error, not a
  cubic renaming); a document type declaration — the door to entity expansion — is refused.

Values are text as a spreadsheet shows them: shared and inline strings as stored; numbers
as written (``3``, not ``3.0``: an integral number is printed without its fraction), dates
(numbers in a date format) as ``YYYY-MM-DD HH:MM:SS``; booleans ``true``/``false``; errors
(``#N/A``) and empty cells ``None``. The first row holding a cell names the columns; an
empty header cell is ``__UNNAMED__<i>`` (``i`` the 0-based column), as polars names it.
A row's line is its row number in the sheet, blank rows being skipped.
"""

from __future__ import annotations

import datetime as dt
import posixpath
import re
import zipfile
import zlib
from collections import Counter
from pathlib import Path
from xml.parsers import expat

from taxoforge.files.paths import open_regular
from taxoforge.files.record_limits import RecordFileError, RecordLimits, Tally

__all__ = ["read_xlsx_rows", "MAX_COLUMNS", "MAX_ROWS"]

#: The sheet's bounds (Excel's own): a reference past them is an error naming the cell.
MAX_COLUMNS, MAX_ROWS = 16_384, 1_048_576
_CHUNK = 1 << 16
_REF = re.compile(r"([A-Za-z]{1,3})(\d+)$")
_INTEGER = re.compile(r"-?\d+$")
_NS_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
#: built-in number formats that are dates or times (ECMA-376 Part 1, 18.8.30)
_DATE_FORMATS = frozenset([*range(14, 23), *range(27, 37), *range(45, 48), *range(50, 59)])
_DATE_CODE = re.compile(r"[ymdhs]", re.IGNORECASE)


def _local(name: str) -> str:
    return name.rsplit(":", 1)[-1]


class _Part:
    """One XML part of the workbook, inflated and parsed a chunk at a time, every chunk counted."""

    def __init__(self, z: zipfile.ZipFile, name: str, tally: Tally, max_elements: int) -> None:
        self.z, self.name, self.tally, self.max_elements = z, name, tally, max_elements
        self.elements = 0

    def parse(self, start, end=None, text=None) -> None:
        p = expat.ParserCreate()
        p.buffer_text = True

        def on_start(name, attrs):
            self.elements += 1
            if self.elements > self.max_elements:
                raise RecordFileError(f"{self.tally.path}: {self.name} holds more than {self.max_elements:,} XML "
                                      "elements (4 × max_cells); not a sheet of answers")
            start(_local(name), attrs)

        def no_doctype(*_):
            raise RecordFileError(f"{self.tally.path}: {self.name} declares a document type; a workbook part "
                                  "never does (entity expansion is refused)")

        p.StartElementHandler = on_start
        if end is not None:
            p.EndElementHandler = lambda name: end(_local(name))
        if text is not None:
            p.CharacterDataHandler = text
        p.StartDoctypeDeclHandler = no_doctype
        p.EntityDeclHandler = no_doctype
        with self.z.open(self.name) as fh:
            while chunk := fh.read(_CHUNK):
                self.tally.decoded(len(chunk), what="inflates to")
                p.Parse(chunk, False)
        p.Parse(b"", True)


def _column(letters: str) -> int:
    n = 0
    for ch in letters.upper():
        n = n * 26 + ord(ch) - 64
    return n - 1


class _Sheet:
    """The parse state of one worksheet: rows of ``{column: text}`` with their row numbers."""

    def __init__(self, tally: Tally, strings: list[str], date_styles: set[int], epoch: dt.datetime) -> None:
        self.tally, self.strings, self.date_styles, self.epoch = tally, strings, date_styles, epoch
        self.cap = tally.limits.max_record_bytes
        self.row_no, self.col = 0, -1
        self.cells: dict[int, str] = {}
        self.row_bytes = 0
        self.cell = None  # (ref, type, style) of the open cell
        self.buf: list[str] | None = None
        self.buf_len = 0
        self.in_phonetic = False
        self.rows: list[tuple[int, dict[int, str]]] = []
        self.on_row = None

    def start(self, name, attrs):
        if name == "row":
            r = attrs.get("r")
            self.row_no = int(r) if r and r.isdigit() else self.row_no + 1
            if not 1 <= self.row_no <= MAX_ROWS:
                raise RecordFileError(f"{self.tally.path}: row {r!r} lies outside a sheet (1–{MAX_ROWS:,})")
            self.cells, self.col, self.row_bytes = {}, -1, 0
        elif name == "c":
            ref = attrs.get("r")
            if ref:
                m = _REF.match(ref)
                col = _column(m.group(1)) if m else -1
                if m is None or not 0 <= col < MAX_COLUMNS:
                    raise RecordFileError(f"{self.tally.path}:{self.row_no}: cell reference {ref!r} lies outside a "
                                          f"sheet (columns A–XFD, rows 1–{MAX_ROWS:,})")
                self.col = col
            else:
                self.col += 1
            self.cell = (ref or f"column {self.col + 1}", attrs.get("t", "n"), attrs.get("s"))
        elif name == "rPh":
            self.in_phonetic = True
        elif self.cell is not None and name in ("v", "t") and not self.in_phonetic:
            if self.buf is None:
                self.buf, self.buf_len = [], 0

    def text(self, data):
        if self.buf is not None and not self.in_phonetic:
            self.buf.append(data)
            self.buf_len += len(data)
            if self.buf_len > self.cap:
                raise self.tally.too_long(self.row_no, f"cell {self.cell[0]}")

    def end(self, name):
        if name == "rPh":
            self.in_phonetic = False
        elif name == "c" and self.cell is not None:
            raw = "".join(self.buf) if self.buf is not None else None
            self.buf = None
            value = self._value(raw)
            if value is not None:
                self.row_bytes += len(value)
                if self.row_bytes > self.cap:
                    raise self.tally.too_long(self.row_no, "row")
                self.cells[self.col] = value
            self.cell = None
        elif name == "row":
            if self.cells:
                self.on_row(self.row_no, self.cells)
            self.cells = {}

    def _value(self, raw: str | None) -> str | None:
        ref, kind, style = self.cell
        if raw is None or raw == "":
            return None
        if kind == "s":
            try:
                return self.strings[int(raw)] or None
            except (ValueError, IndexError):
                raise RecordFileError(f"{self.tally.path}:{self.row_no}: cell {ref} points to shared string {raw!r}, "
                                      f"which the workbook does not have ({len(self.strings):,})") from None
        if kind in ("str", "inlineStr", "d"):
            return raw
        if kind == "b":
            return "true" if raw.strip() in ("1", "true") else "false"
        if kind == "e":
            return None
        return self._number(raw.strip(), style)

    def _number(self, raw: str, style) -> str:
        if style is not None and style.isdigit() and int(style) in self.date_styles:
            try:
                return (self.epoch + dt.timedelta(days=float(raw))).strftime("%Y-%m-%d %H:%M:%S")
            except (ValueError, OverflowError):
                return raw
        if _INTEGER.match(raw):
            return raw
        try:
            x = float(raw)
        except ValueError:
            return raw
        if x != x or x in (float("inf"), float("-inf")):
            return raw
        return str(int(x)) if x.is_integer() and abs(x) < 1e21 else repr(x)


def _first_sheet(z: zipfile.ZipFile, part) -> tuple[str, str | None, str | None, bool]:
    """(sheet part, shared strings part, styles part, 1904 dates) from the workbook's parts."""
    sheets, date1904 = [], [False]

    def wb_start(name, attrs):
        if name == "sheet":
            rid = attrs.get("r:id") or next((v for k, v in attrs.items() if k.endswith(":id")), None)
            sheets.append(rid)
        elif name == "workbookPr":
            date1904[0] = attrs.get("date1904", "0") in ("1", "true")

    part("xl/workbook.xml").parse(wb_start)
    rels = {}

    def rel_start(name, attrs):
        if name == "Relationship":
            rels[attrs.get("Id")] = (attrs.get("Type", ""), attrs.get("Target", ""))

    part("xl/_rels/workbook.xml.rels").parse(rel_start)

    def target(t: str) -> str:
        return posixpath.normpath(t.lstrip("/") if t.startswith("/") else posixpath.join("xl", t))

    if not sheets or sheets[0] not in rels:
        raise RecordFileError("the workbook lists no sheet (xl/workbook.xml)")
    by_type = {typ.rsplit("/", 1)[-1]: target(t) for typ, t in rels.values()}
    return target(rels[sheets[0]][1]), by_type.get("sharedStrings"), by_type.get("styles"), date1904[0]


def _shared_strings(part, tally: Tally) -> list[str]:
    out: list[str] = []
    state = {"buf": None, "phonetic": False, "len": 0}
    cap = tally.limits.max_record_bytes

    def start(name, attrs):
        if name == "si":
            state["buf"], state["len"] = [], 0
        elif name == "rPh":
            state["phonetic"] = True

    def text(data):
        if state["buf"] is not None and not state["phonetic"]:
            state["buf"].append(data)
            state["len"] += len(data)
            if state["len"] > cap:
                raise tally.too_long(f"shared string {len(out) + 1}", "string")

    def end(name):
        if name == "rPh":
            state["phonetic"] = False
        elif name == "si" and state["buf"] is not None:
            out.append("".join(state["buf"]))
            state["buf"] = None
            tally.cells += 1
            if tally.cells > tally.limits.max_cells:
                raise RecordFileError(f"{tally.path}: more than {tally.limits.max_cells:,} shared strings and cells "
                                      "(max_cells, --max-cells); not a sheet of answers")

    part.parse(start, end, text)
    return out


def _date_styles(part) -> set[int]:
    custom: dict[int, str] = {}
    xfs: list[int] = []
    state = {"in_xfs": False}

    def start(name, attrs):
        if name == "numFmt":
            try:
                custom[int(attrs.get("numFmtId", ""))] = attrs.get("formatCode", "")
            except ValueError:
                pass
        elif name == "cellXfs":
            state["in_xfs"] = True
        elif name == "xf" and state["in_xfs"]:
            fid = attrs.get("numFmtId", "0")
            xfs.append(int(fid) if fid.isdigit() else 0)

    def end(name):
        if name == "cellXfs":
            state["in_xfs"] = False

    part.parse(start, end)

    def is_date(fid: int) -> bool:
        if fid in custom:
            code = re.sub(r'"[^"]*"|\[[^\]]*\]|\\.', "", custom[fid])
            return bool(_DATE_CODE.search(code)) and "general" not in code.lower()
        return fid in _DATE_FORMATS

    return {i for i, fid in enumerate(xfs) if is_date(fid)}


def read_xlsx_rows(path: str | Path, limits: RecordLimits | None = None) -> tuple[list[dict], list[int]]:
    """The rows of the first sheet of a workbook (module docstring).

    Parameters
    ----------
    path : str or Path
        The ``.xlsx`` (or ``.xlsm``) file.
    limits : RecordLimits, optional
        The limits of what it may decode to (:mod:`taxoforge.files.record_limits`).

    Returns
    -------
    (list of dict, list of int)
        The rows (column name → text or None; every row has every column the header names)
        and their row numbers.

    Raises
    ------
    RecordFileError
        Naming the file, row and cell of what cannot be read or passes a limit.
    NotARegularFile
        ``path`` is a FIFO, a device or a folder.
    """
    path = Path(path)
    tally = Tally(path, limits or RecordLimits())
    max_elements = 4 * tally.limits.max_cells
    rows: list[dict] = []
    lines: list[int] = []
    header: list[tuple[int, str]] | None = None
    names: dict[int, str] = {}

    def on_row(row_no: int, cells: dict[int, str]) -> None:
        nonlocal header
        if header is None:
            header = [(c, cells[c] if cells[c] is not None else f"__UNNAMED__{c}") for c in sorted(cells)]
            dup = sorted(n for n, k in Counter(n for _, n in header).items() if k > 1)
            if dup:
                shown = ", ".join(repr(d) for d in dup[:10]) + (" …" if len(dup) > 10 else "")
                raise RecordFileError(f"{path}:{row_no}: the header row names a column twice ({shown})")
            names.update(header)
            tally.record(row_no, len(header))
            return
        rec = {n: cells.get(c) for c, n in header}
        for c in cells.keys() - names.keys():
            rec[f"__UNNAMED__{c}"] = cells[c]
        tally.record(row_no, len(rec))
        rows.append(rec)
        lines.append(row_no)

    with open_regular(path, "workbook") as fh:
        try:
            with zipfile.ZipFile(fh) as z:
                def part(name: str) -> _Part:
                    return _Part(z, name, tally, max_elements)

                sheet, strings_part, styles_part, date1904 = _first_sheet(z, part)
                strings = _shared_strings(part(strings_part), tally) if strings_part in z.NameToInfo else []
                dates = _date_styles(part(styles_part)) if styles_part in z.NameToInfo else set()
                epoch = dt.datetime(1904, 1, 1) if date1904 else dt.datetime(1899, 12, 30)
                state = _Sheet(tally, strings, dates, epoch)
                state.on_row = on_row
                part(sheet).parse(state.start, state.end, state.text)
        except RecordFileError as e:
            msg = str(e)
            raise RecordFileError(msg if msg.startswith(str(path)) else f"{path}: {msg}") from None
        except zipfile.BadZipFile as e:
            raise RecordFileError(f"{path}: not an .xlsx workbook ({e})") from None
        except expat.ExpatError as e:
            raise RecordFileError(f"{path}: a workbook part is not well-formed XML ({e})") from None
        except (KeyError, RuntimeError, NotImplementedError, EOFError, zlib.error, ValueError) as e:
            raise RecordFileError(f"{path}: not a readable .xlsx workbook ({type(e).__name__}: {e})") from None
    return rows, lines
