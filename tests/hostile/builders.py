"""Hostile files built for real: workbooks whose zip directory, dimension or cell references
lie, deflate streams that inflate to a gigabyte from kilobytes, Parquet files of millions of
run-length rows. Every builder writes a valid container (a zip :mod:`zipfile` opens, a
Parquet file pyarrow opens), so what is tested is the reader's counting, not a parse error.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" ' \
     'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
_CONTENT_TYPES = (b'<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
                  b'content-types"><Default Extension="xml" ContentType="application/xml"/></Types>')
_RELS = (b'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
         b'relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
         b'relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>')
_WORKBOOK = (f'<?xml version="1.0" encoding="UTF-8"?><workbook {NS}><sheets><sheet name="Sheet1" sheetId="1" '
             'r:id="rId1"/></sheets></workbook>').encode()
_WB_RELS = (b'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
            b'2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
            b'relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="http://schemas.'
            b'openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/>'
            b'</Relationships>')


@dataclass
class Deflated:
    """A member's raw deflate stream with its true CRC and size (declared sizes may differ)."""

    data: bytes
    crc: int
    size: int


def deflate_pieces(pieces) -> Deflated:
    """``pieces`` — ``(bytes, times)`` — as one raw deflate stream, each piece compressed once
    after a full flush and its block repeated ``times`` times: a gigabyte from kilobytes."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    out, crc, size = [], 0, 0
    for chunk, times in pieces:
        block = c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
        out.append(block * times)
        for _ in range(times):
            crc = zlib.crc32(chunk, crc)
        size += len(chunk) * times
    out.append(c.flush(zlib.Z_FINISH))
    return Deflated(b"".join(out), crc & 0xFFFFFFFF, size)


def deflated(data: bytes) -> Deflated:
    return deflate_pieces([(data, 1)])


def zip_bytes(members: dict[str, Deflated | bytes], declared: dict[str, int] | None = None) -> bytes:
    """A zip of deflated ``members``; ``declared`` gives a member a size other than its own
    (the lie a zip directory can tell)."""
    declared = declared or {}
    body, central = bytearray(), bytearray()
    for name, m in members.items():
        m = m if isinstance(m, Deflated) else deflated(m)
        size = declared.get(name, m.size)
        fn = name.encode()
        offset = len(body)
        body += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0x21, m.crc, len(m.data), size, len(fn), 0)
        body += fn + m.data
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0x21, m.crc, len(m.data), size,
                               len(fn), 0, 0, 0, 0, 0, offset)
        central += fn
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central), len(body), 0)
    return bytes(body + central + end)


def workbook(sheet: Deflated | bytes, strings: Deflated | bytes | None = None,
             declared: dict[str, int] | None = None) -> bytes:
    """An ``.xlsx`` whose first sheet is ``sheet`` (XML) and shared strings ``strings``."""
    members = {"[Content_Types].xml": _CONTENT_TYPES, "_rels/.rels": _RELS, "xl/workbook.xml": _WORKBOOK,
               "xl/_rels/workbook.xml.rels": _WB_RELS, "xl/worksheets/sheet1.xml": sheet}
    if strings is not None:
        members["xl/sharedStrings.xml"] = strings
    return zip_bytes(members, declared)


def sheet_xml(rows: str, dimension: str | None = None) -> bytes:
    dim = f'<dimension ref="{dimension}"/>' if dimension else ""
    return f'<?xml version="1.0" encoding="UTF-8"?><worksheet {NS}>{dim}<sheetData>{rows}</sheetData></worksheet>'.encode()


def sheet_pieces(head_rows: str, repeated_row: str, times: int) -> Deflated:
    """A sheet whose ``repeated_row`` (no ``r`` attribute: each follows the last) comes ``times`` times."""
    head = f'<?xml version="1.0" encoding="UTF-8"?><worksheet {NS}><sheetData>{head_rows}'.encode()
    per = min(times, 10_000)  # one deflate block of many rows compresses; a block of one row would not
    pieces = [(head, 1), ((repeated_row * per).encode(), times // per)]
    if times % per:
        pieces.append(((repeated_row * (times % per)).encode(), 1))
    return deflate_pieces(pieces + [(b"</sheetData></worksheet>", 1)])


def inline(ref: str | None, text: str) -> str:
    r = f' r="{ref}"' if ref else ""
    return f'<c{r} t="inlineStr"><is><t>{text}</t></is></c>'


def answers_header() -> str:
    return f'<row r="1">{inline("A1", "output")}{inline("B1", "label")}</row>'


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def parquet_of_many_rows(path: Path, rows: int, group_rows: int = 1_000_000, columns=("output", "label"),
                         numbers=()) -> Path:
    """A small Parquet file of ``rows`` constant rows (run-length and dictionary encoded: a few
    megabytes for hundreds of millions of rows), in row groups of ``group_rows``, written a
    group at a time; ``numbers`` are columns of 1.0."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = min(group_rows, rows)
    zeros = pa.array(np.zeros(n, dtype=np.int8))  # dictionary-encoded in memory too: one byte a row
    t = pa.table({**{c: pa.DictionaryArray.from_arrays(zeros, pa.array([f"{c} value"])) for c in columns},
                  **{c: pa.DictionaryArray.from_arrays(zeros, pa.array([1.0])) for c in numbers}})
    with pq.ParquetWriter(path, t.schema, compression="zstd") as w:
        left = rows
        while left > 0:
            w.write_table(t.slice(0, min(n, left)), row_group_size=n)
            left -= n
    return path
