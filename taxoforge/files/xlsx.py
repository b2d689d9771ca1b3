"""The first sheet of an ``.xlsx`` workbook as rows of text, read a cell at a time.

A workbook is a zip of XML parts (ECMA-376 Part 1, SpreadsheetML): ``xl/workbook.xml``
lists the sheets, ``xl/_rels/workbook.xml.rels`` says which part holds each,
``xl/sharedStrings.xml`` holds the strings cells point to, ``xl/styles.xml`` the number
formats (which say whether a number is a date). Each part is inflated a chunk at a time and
read as it comes — the bulky ones (the sheet's rows, the shared strings) scanned an element at
a time with compiled patterns, so their cost is their bytes, the small ones parsed with
:mod:`pyexpat` — and memory follows the cells the sheet **has**, never what it declares:

* a ``<dimension>``, a cell reference far past the data (``XFD1048576``) or a row number near
  the sheet's end costs nothing — rows are kept as the cells they hold, not as a bounding box
  (general readers allocate the box: 9.7 GB for one cell at ``XFD1048576``);
* the bytes each part inflates to are counted as they come, never taken from the zip
  directory (whose sizes are the file's word); a member that inflates past its declared size
  is a CRC error of :mod:`zipfile`, and every part together stops at ``max_table_bytes``;
* one cell, or one row, of more than ``max_record_bytes`` is refused as soon as its text
  passes the limit (a 100 MiB cell costs 16 MiB of reading, not 120 s and 2.9 GB);
* records (rows) and fields are counted (:class:`~taxoforge.files.record_limits.Tally`), and
  so are the elements of the small parts;
* column names are checked in one pass (16,000 header cells named ``x`` are one error, not a
  cubic renaming); a document type or entity declaration — the door to entity expansion — is
  refused, and only XML's own entities and character references are expanded.

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

    def chunks(self):
        """The part's bytes as inflated, a chunk at a time, each counted against ``max_table_bytes``."""
        with self.z.open(self.name) as fh:
            while chunk := fh.read(_CHUNK):
                self.tally.decoded(len(chunk), what="inflates to")
                yield chunk

    def parse(self, start, end=None, text=None) -> None:
        p = expat.ParserCreate()
        p.buffer_text = True

        def on_start(name, attrs):
            self.elements += 1
            if self.elements > self.max_elements:
                raise RecordFileError(f"{self.tally.path}: {self.name} holds more than {self.max_elements:,} XML "
                                      "elements; not a workbook of answers")
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
        for chunk in self.chunks():
            p.Parse(chunk, False)
        p.Parse(b"", True)


def _column(letters: str) -> int:
    n = 0
    for ch in letters.upper():
        n = n * 26 + ord(ch) - 64
    return n - 1


def _tag(name: bytes) -> bytes:
    return rb"<(?:[A-Za-z_][\w.-]*:)?" + name


_ROW_CLOSE = re.compile(rb"</(?:[A-Za-z_][\w.-]*:)?row\s*>|<(?:[A-Za-z_][\w.-]*:)?row(?=[\s/])[^>]*/>")
#: a row opening (its attributes), or a cell (its attributes, its content)
_SHEET_TOKENS = re.compile(_tag(rb"row") + rb"(?=[\s/>])([^>]*)>|" + _tag(rb"c") + rb"(?=[\s/>])([^>]*?)(?:/>|>(.*?)"
                           rb"</(?:[A-Za-z_][\w.-]*:)?c\s*>)", re.S)
_SI_OPEN = re.compile(_tag(rb"si") + rb"(?=[\s/>])")
_SI_CLOSE = re.compile(rb"</(?:[A-Za-z_][\w.-]*:)?si\s*>")
_CELL = re.compile(_tag(rb"c") + rb"(?=[\s/>])([^>]*?)(?:/>|>(.*?)</(?:[A-Za-z_][\w.-]*:)?c\s*>)", re.S)
_ATTR = re.compile(rb"""([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_CELL_ATTRS = re.compile(rb"""\s([rts])\s*=\s*["']([^"']*)["']""")
_R_ATTR = re.compile(rb"""\sr\s*=\s*["']([^"']*)["']""")
_V = re.compile(_tag(rb"v") + rb"(?:\s[^>]*)?>(.*?)</(?:[A-Za-z_][\w.-]*:)?v\s*>", re.S)
_T = re.compile(_tag(rb"t") + rb"(?:\s[^>]*)?>(.*?)</(?:[A-Za-z_][\w.-]*:)?t\s*>", re.S)
_PHONETIC = re.compile(_tag(rb"rPh") + rb"\b.*?</(?:[A-Za-z_][\w.-]*:)?rPh\s*>", re.S)
_COMMENT = re.compile(rb"<!--.*?-->", re.S)
_CDATA = re.compile(rb"<!\[CDATA\[(.*?)\]\]>", re.S)
_ENTITY = re.compile(r"&(#[0-9]+|#x[0-9a-fA-F]+|lt|gt|amp|quot|apos);")
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}


def _entity(m: re.Match) -> str:
    e = m.group(1)
    if e[0] != "#":
        return _NAMED[e]
    try:
        return chr(int(e[2:], 16) if e[1] in "xX" else int(e[1:]))
    except (ValueError, OverflowError):
        return m.group(0)


def _check_head(part: "_Part", chunk: bytes) -> None:
    head = bytes(chunk[:512])
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or re.search(rb"encoding=[\"'](?!utf-?8)", head, re.I):
        raise RecordFileError(f"{part.tally.path}: {part.name} is not UTF-8 (every .xlsx part this reader reads is)")


class _Elements:
    """The complete ``<tag …>…</tag>`` elements of one part, found a chunk at a time: the
    bulky parts (a sheet's rows, the shared strings) are scanned, not parsed element by
    element, so a file's cost is its bytes, and an element is never held past
    ``max_record_bytes`` (a row never closed is refused as too long)."""

    def __init__(self, part: "_Part", opening: re.Pattern, closing: re.Pattern, what: str) -> None:
        self.part, self.opening, self.closing, self.what = part, opening, closing, what
        self.count = 0

    def _too_long(self, open_tag: bytes) -> RecordFileError:
        r = _attrs(open_tag[:512]).get("r") if self.what == "row" else None
        at = int(r) if r and r.isascii() and r.isdigit() else f"{self.what} {self.count + 1}"
        return self.part.tally.too_long(at, self.what if r else "string" if self.what != "row" else "row")

    def __iter__(self):
        cap = self.part.tally.limits.max_record_bytes
        buf = bytearray()
        first = True
        for chunk in self.part.chunks():
            if first:
                _check_head(self.part, chunk)
                first = False
            if b"<!DOCTYPE" in chunk or b"<!ENTITY" in chunk:
                raise RecordFileError(f"{self.part.tally.path}: {self.part.name} declares a document type or an entity; "
                                      "a workbook part never does (entity expansion is refused)")
            buf += chunk
            pos = 0
            while True:
                m = self.opening.search(buf, pos)
                if m is None:
                    pos = max(pos, len(buf) - 64)  # keep a tag cut between chunks
                    break
                gt = buf.find(b">", m.end())
                if gt < 0:
                    pos = m.start()
                    break
                if buf[gt - 1:gt] == b"/":  # <row … />
                    self.count += 1
                    yield bytes(buf[m.start():gt + 1]), b""
                    pos = gt + 1
                    continue
                c = self.closing.search(buf, gt + 1)
                if c is None:
                    if len(buf) - m.start() > cap:
                        raise self._too_long(bytes(buf[m.start():gt + 1]))
                    pos = m.start()
                    break
                self.count += 1
                yield bytes(buf[m.start():gt + 1]), bytes(buf[gt + 1:c.start()])
                pos = c.end()
            del buf[:pos]
            if len(buf) > cap + 64:
                raise self._too_long(bytes(buf[:512]))


def _attrs(raw: bytes) -> dict[str, str]:
    return {k.decode().rsplit(":", 1)[-1]: (a or b).decode("utf-8", "replace") for k, a, b in _ATTR.findall(raw)}


def _text(raw: bytes) -> str:
    """An element's text: comments dropped, CDATA taken as it is, XML's entities and character
    references expanded (no other: a document type declaration is refused). Raises
    :class:`UnicodeDecodeError` for bytes that are not UTF-8."""
    if b"<!" in raw:
        raw = _COMMENT.sub(b"", raw)
        if b"<![CDATA[" in raw:
            raw = _CDATA.sub(lambda m: m.group(1).replace(b"&", b"&amp;").replace(b"<", b"&lt;"), raw)
    text = raw.decode("utf-8")
    return _ENTITY.sub(_entity, text) if "&" in text else text


def _string(inner: bytes) -> str:
    """The text of a rich or plain string (``<si>``, ``<is>``): its ``<t>`` runs, phonetic runs left out."""
    if b"rPh" in inner:
        inner = _PHONETIC.sub(b"", inner)
    runs = _T.findall(inner)
    if len(runs) == 1:
        return _text(runs[0])
    return "".join(_text(t) for t in runs)


class _Sheet:
    """One worksheet's rows as ``{column: text}`` with their row numbers, a row at a time."""

    def __init__(self, tally: Tally, strings: list[str], date_styles: set[int], epoch: dt.datetime) -> None:
        self.tally, self.strings, self.date_styles, self.epoch = tally, strings, date_styles, epoch
        self.cap = tally.limits.max_record_bytes

    def rows(self, part: "_Part"):
        """The sheet's non-empty rows, ``(row number, {column: text})``: the inflated XML is
        taken a run of complete rows at a time and its rows and cells found in one pass."""
        cap = self.cap
        state = {"row_no": 0, "col": -1, "size": 0, "cells": None}
        column_of: dict[bytes, int] = {}  # cell reference letters → column (a sheet reuses few)
        buf = bytearray()
        head_checked = False
        for chunk in part.chunks():
            if not head_checked:
                _check_head(part, chunk)
                head_checked = True
            if b"<!DOCTYPE" in chunk or b"<!ENTITY" in chunk:
                raise RecordFileError(f"{self.tally.path}: {part.name} declares a document type or an entity; a "
                                      "workbook part never does (entity expansion is refused)")
            buf += chunk
            last = None
            for last in _ROW_CLOSE.finditer(buf, max(0, len(buf) - len(chunk) - 16)):
                pass
            if last is None:  # no row ends in what is buffered: one row so far, bounded by the cap
                if len(buf) > cap + 4096:
                    opened = [m for m in _SHEET_TOKENS.finditer(buf, 0, 1 << 16) if m.group(1) is not None][-1:]
                    r = _R_ATTR.search(opened[0].group(1)) if opened else None
                    raise self.tally.too_long(int(r.group(1)) if r and r.group(1).isdigit() else state["row_no"] + 1,
                                              "row")
                continue
            yield from self._tokens(buf, last.end(), state, column_of)
            del buf[:last.end()]
        yield from self._tokens(buf, len(buf), state, column_of)
        if state["cells"]:
            yield state["row_no"], state["cells"]

    def _tokens(self, buf, end: int, state: dict, column_of: dict):
        path, cap = self.tally.path, self.cap
        cells, row_no, col, size = state["cells"], state["row_no"], state["col"], state["size"]
        for m in _SHEET_TOKENS.finditer(buf, 0, end):
            row_attrs = m.group(1)
            if row_attrs is not None:  # a row opens (or is empty: <row … />)
                if cells:
                    yield row_no, cells
                r = _R_ATTR.search(row_attrs)
                r = r.group(1) if r else None
                row_no = int(r) if r and r.isdigit() else row_no + 1
                if not 1 <= row_no <= MAX_ROWS:
                    raise RecordFileError(f"{path}: row {r.decode('utf-8', 'replace') if r else row_no!r} lies "
                                          f"outside a sheet (1–{MAX_ROWS:,})")
                cells, col, size = {}, -1, 0
                continue
            attrs_raw, body = m.group(2), m.group(3)
            a = dict(_CELL_ATTRS.findall(attrs_raw)) if attrs_raw else {}
            ref = a.get(b"r")
            if ref:
                letters = ref.rstrip(b"0123456789")
                col = column_of.get(letters)
                if col is None:
                    col = _column(letters.decode("ascii", "replace")) if letters.isalpha() and len(letters) <= 3 \
                        and ref[len(letters):].isdigit() else -1
                    if not 0 <= col < MAX_COLUMNS:
                        raise RecordFileError(f"{path}:{row_no}: cell reference {ref.decode('utf-8', 'replace')!r} "
                                              f"lies outside a sheet (columns A–XFD, rows 1–{MAX_ROWS:,})")
                    column_of[letters] = col
            else:
                col += 1
            if not body or cells is None:
                continue
            value = self._value(a.get(b"t", b"n"), a.get(b"s"), body, ref, col, row_no)
            if value is not None:
                size += len(value)
                if size > cap:
                    raise self.tally.too_long(row_no, "row")
                cells[col] = value
        state.update(cells=cells, row_no=row_no, col=col, size=size)

    def _where(self, ref, col: int, row_no: int) -> str:
        return f"{self.tally.path}:{row_no}: cell {ref.decode('utf-8', 'replace') if ref else f'column {col + 1}'}"

    def _value(self, kind: bytes, style, body: bytes, ref, col: int, row_no: int) -> str | None:
        if kind == b"inlineStr":
            try:
                return _string(body) or None
            except UnicodeDecodeError as e:
                raise RecordFileError(f"{self._where(ref, col, row_no)}: not UTF-8 text ({e.reason})") from None
        v = _V.search(body)
        if v is None:
            return None
        raw = v.group(1)
        if not raw:
            return None
        if kind == b"s":
            try:
                return self.strings[int(raw)] or None
            except (ValueError, IndexError):
                raise RecordFileError(f"{self._where(ref, col, row_no)} points to shared string {raw!r}, which the "
                                      f"workbook does not have ({len(self.strings):,})") from None
        try:
            raw = _text(raw)
        except UnicodeDecodeError as e:
            raise RecordFileError(f"{self._where(ref, col, row_no)}: not UTF-8 text ({e.reason})") from None
        if kind in (b"str", b"d"):
            return raw
        if kind == b"b":
            return "true" if raw.strip() in ("1", "true") else "false"
        if kind == b"e":
            return None
        return self._number(raw.strip(), style.decode("ascii", "replace") if style else None)

    def _number(self, raw: str, style) -> str:
        if style is not None and style.isascii() and style.isdigit() and int(style) in self.date_styles:
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
    lim = tally.limits
    for _, inner in _Elements(part, _SI_OPEN, _SI_CLOSE, "shared string"):
        try:
            text = _string(inner)
        except UnicodeDecodeError as e:
            raise RecordFileError(f"{tally.path}: shared string {len(out) + 1}: not UTF-8 text ({e.reason})") from None
        if len(text) > lim.max_record_bytes:
            raise tally.too_long(f"shared string {len(out) + 1}", "string")
        out.append(text)
        tally.cells += 1
        if tally.cells > lim.max_cells:
            raise RecordFileError(f"{tally.path}: more than {lim.max_cells:,} shared strings and cells (max_cells, "
                                  "--max-cells); not a sheet of answers")
    return out


def _date_styles(part) -> set[int]:
    custom: dict[int, str] = {}
    xfs: list[int] = []
    state = {"in_xfs": False}

    def start(name, attrs):
        if name == "numFmt":
            try:
                custom[int(attrs.get("numFmtId", "") if attrs.get("numFmtId", "").isascii() else "")] = attrs.get("formatCode", "")
            except ValueError:
                pass
        elif name == "cellXfs":
            state["in_xfs"] = True
        elif name == "xf" and state["in_xfs"]:
            fid = attrs.get("numFmtId", "0")
            xfs.append(int(fid) if fid.isascii() and fid.isdigit() else 0)

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
    max_elements = 1_000_000  # of the parts parsed element by element (workbook, relationships, styles)
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
                for row_no, cells in _Sheet(tally, strings, dates, epoch).rows(part(sheet)):
                    on_row(row_no, cells)
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
