"""What one record file may decode to, counted as it is read — never taken from what the
file declares.

A file a user hands over (model outputs, a label set, a scoring run given to ``compare``, a
crosswalk) may be small on disk and huge once decoded: an ``.xlsx`` zip of 2 KB inflating to
a gigabyte of cells, a Parquet file of 5 MB that decodes to 200 million rows, 50 MB of
``{}`` lines that become 16 million Python objects. Sizes a file declares (a zip directory's
uncompressed sizes, Parquet's row-group byte counts, a sheet's dimension) are the file's
word, not a bound. So every reader of :mod:`taxoforge.files` counts what it has decoded so far
and stops at the first of these limits, with an error naming the file, the row (or line, or
cell) it had reached and the limit (:class:`RecordLimits`; every reader takes them):

==================  ==========================================================================
``max_record_bytes`` one record before it is parsed: a JSONL or text line, a CSV/TSV record, a
                     JSON array element, a spreadsheet cell or row (:data:`MAX_RECORD_BYTES`)
``max_table_bytes``  bytes decoded from one file: the XML a workbook inflates to, the column
                     data a Parquet file decodes to, a JSON document read whole (:data:`MAX_TABLE_BYTES`)
``max_records``      records (rows) of one file (:data:`MAX_RECORDS`)
``max_cells``        fields of one file: the rows' values, counted as they are made
                     (:data:`MAX_CELLS`)
==================  ==========================================================================

The defaults keep the memory of any answer file below a few hundred megabytes (the costliest
per byte, ``{}`` records and inflated cells, are the ones the record and cell counts stop)
while admitting every harness output seen so far; each is raised by an option
(:class:`~taxoforge.scores.options.ReadOptions`) when a real file needs more.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["RecordFileError", "RecordLimits", "Tally", "MAX_RECORD_BYTES", "MAX_TABLE_BYTES", "MAX_RECORDS",
           "MAX_CELLS", "MAX_ROW_GROUPS"]

#: Bytes one record may take before it is parsed: a JSONL or text line, a CSV/TSV record, one
#: element of a JSON array, a spreadsheet cell or row. A longer one is an error naming the file
#: and line, never a parse of it.
MAX_RECORD_BYTES = 16 * 2**20
#: Bytes one file may decode to, counted as they are decoded: an ``.xlsx`` workbook's XML as
#: inflated, a Parquet file's column data as decoded, a JSON document that is not an array.
MAX_TABLE_BYTES = 1 * 2**30
#: Records (rows) one file may hold.
MAX_RECORDS = 1_000_000
#: Fields one file's records may hold in all (a record of ten fields counts ten).
MAX_CELLS = 2_000_000
#: Row groups a Parquet file may list.
MAX_ROW_GROUPS = 100_000


class RecordFileError(ValueError):
    """A record file that cannot be read; the message names the file and the line."""


@dataclass(frozen=True)
class RecordLimits:
    """The limits of one file's reading (module docstring).

    Attributes
    ----------
    max_record_bytes : int
        Bytes of one record (line, CSV record, array element, cell or row).
    max_table_bytes : int
        Bytes decoded from the whole file.
    max_records : int
        Records of the file.
    max_cells : int
        Fields of all its records.
    """

    max_record_bytes: int = MAX_RECORD_BYTES
    max_table_bytes: int = MAX_TABLE_BYTES
    max_records: int = MAX_RECORDS
    max_cells: int = MAX_CELLS

    def __post_init__(self) -> None:
        for name in ("max_record_bytes", "max_table_bytes", "max_records", "max_cells"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"RecordLimits.{name} must be a positive integer; got {v!r}")


class Tally:
    """Counts what a reader has decoded from one file and raises :class:`RecordFileError` —
    naming the file, the line or row reached and the limit — at the first one passed.

    Parameters
    ----------
    path : Path
        The file (for messages).
    limits : RecordLimits
        The limits.
    unit : str, optional
        What the file's positions are called in messages (``line``, ``row``).
    """

    def __init__(self, path: Path, limits: RecordLimits, unit: str = "line") -> None:
        self.path, self.limits, self.unit = path, limits, unit
        self.records = self.cells = self.bytes = 0

    def _where(self, at) -> str:
        return f"{self.path}:{at}" if at is not None else str(self.path)

    def record(self, at, cells: int) -> None:
        """Count one record of ``cells`` fields that starts at ``at``.

        Parameters
        ----------
        at : int or str or None
            Its line, row or cell reference (for the message).
        cells : int
            Its fields.
        """
        self.records += 1
        self.cells += cells
        lim = self.limits
        if self.records > lim.max_records:
            raise RecordFileError(f"{self._where(at)}: more than {lim.max_records:,} records, the most one file may "
                                  "hold (max_records, --max-records); split the file or raise the limit")
        if self.cells > lim.max_cells:
            raise RecordFileError(f"{self._where(at)}: more than {lim.max_cells:,} fields in {self.records:,} records, "
                                  "the most one file may hold (max_cells, --max-cells); split the file or raise the "
                                  "limit")

    def records_from(self, first: int, n: int, cells_each: int) -> None:
        """Count ``n`` records of ``cells_each`` fields numbered from ``first`` (a batch),
        naming the first one past a limit.

        Parameters
        ----------
        first : int
            The number of the batch's first record.
        n : int
            Records in the batch.
        cells_each : int
            Fields of each.
        """
        lim = self.limits
        room = lim.max_records - self.records
        if cells_each:
            room = min(room, (lim.max_cells - self.cells) // cells_each)
        if n <= room:
            self.records += n
            self.cells += n * cells_each
            return
        self.records += max(room, 0)
        self.cells += max(room, 0) * cells_each
        self.record(first + max(room, 0), cells_each)

    def decoded(self, n: int, at=None, what: str = "decodes to") -> None:
        """Count ``n`` more bytes decoded from the file.

        Parameters
        ----------
        n : int
            Bytes just decoded.
        at : int or str, optional
            Where the reader is (for the message).
        what : str, optional
            The verb of the message (``inflates to``, ``decodes to``).
        """
        self.bytes += n
        if self.bytes > self.limits.max_table_bytes:
            raise RecordFileError(f"{self._where(at)}: the file {what} more than {self.limits.max_table_bytes:,} "
                                  "bytes (max_table_bytes, counted as read); split the file or raise the limit")

    def too_long(self, at, what: str = "record") -> RecordFileError:
        """The error of one record longer than ``max_record_bytes``.

        Parameters
        ----------
        at : int or str
            Its line, row or cell.
        what : str, optional
            What it is (``line``, ``cell``, ``array element``).

        Returns
        -------
        RecordFileError
        """
        cap = self.limits.max_record_bytes
        return RecordFileError(f"{self._where(at)}: this {what} is longer than {cap:,} bytes, the most one record may "
                               "take (max_record_bytes); split the record or raise the limit")
