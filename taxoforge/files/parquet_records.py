"""Parquet files read in counted batches: rows, row groups, fields and decoded bytes counted
as they are decoded, never taken from the footer alone.

A Parquet file of a few megabytes can decode to hundreds of millions of rows (run-length and
dictionary encoding: a constant column of 200 M rows takes kilobytes) or to a gigabyte-long
value. Its footer's counts and sizes are checked first (they are cheap, and an honest large
file is refused before any work), then the data is read in batches of at most
:data:`BATCH_ROWS` rows, string columns kept dictionary-encoded while they are measured, and
every batch is counted against the limits (:class:`~taxoforge.files.record_limits.RecordLimits`)
before anything is made of it. So a lying footer changes nothing: reading stops at the limit,
naming the file, the row reached and the limit. What is left to the file is the size of one
data page, which the decoder takes from the page's header.

:func:`parquet_rows` gives the rows as dicts (model outputs, label sets);
:func:`read_parquet_table` a polars table (the scores of a run given to ``compare``, a
crosswalk), with only the columns asked for.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from taxoforge.files.paths import open_regular
from taxoforge.files.record_limits import MAX_ROW_GROUPS, RecordFileError, RecordLimits, Tally

__all__ = ["parquet_rows", "read_parquet_table", "BATCH_ROWS"]

#: Rows decoded at a time.
BATCH_ROWS = 4096


def _batches(path: Path, tally: Tally, columns=None, what: str = "Parquet file", keep=None):
    """The file's record batches, each counted before it is yielded (module docstring)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    lim = tally.limits
    with open_regular(path, what) as fh:
        try:
            schema = pq.read_schema(fh)
            texts = [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
                     or pa.types.is_binary(f.type)]
            fh.seek(0)
            pf = pq.ParquetFile(fh, read_dictionary=texts, thrift_string_size_limit=64 << 20,
                                thrift_container_size_limit=4 << 20)
            meta, schema = pf.metadata, pf.schema_arrow
        except Exception as e:  # noqa: BLE001 - pyarrow raises many kinds for what is not Parquet
            raise RecordFileError(f"{path}: not a readable Parquet file: {e}") from None
        if meta.num_row_groups > MAX_ROW_GROUPS:
            raise RecordFileError(f"{path}: {meta.num_row_groups:,} row groups, more than {MAX_ROW_GROUPS:,}; "
                                  "rewrite the file with larger row groups")
        if meta.num_rows > lim.max_records:
            raise RecordFileError(f"{path}: {meta.num_rows:,} rows, more than {lim.max_records:,} (max_records, "
                                  "--max-records); split the file or raise the limit")
        declared = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
        if declared > lim.max_table_bytes:
            raise RecordFileError(f"{path}: its data takes {declared:,} bytes, more than {lim.max_table_bytes:,} "
                                  "(max_table_bytes); split the file")
        if columns is not None:
            missing = [c for c in columns if c not in schema.names]
            if missing:
                raise RecordFileError(f"{path}: no column {', '.join(map(repr, missing))}; its columns are "
                                      f"{', '.join(schema.names)}")
        names = list(columns) if columns is not None else schema.names
        if keep is not None:
            names = [n for n in names if n in set(keep)]
        row = 0
        try:
            for batch in pf.iter_batches(batch_size=BATCH_ROWS, columns=names, use_threads=False):
                size = 0
                for name, col in zip(batch.schema.names, batch.columns):
                    if pa.types.is_dictionary(col.type) and name in texts:
                        lengths = pc.binary_length(col.dictionary).take(col.indices)
                        longest = pc.max(lengths).as_py() or 0
                        if longest > lim.max_record_bytes:
                            at = row + 1 + int(pc.index(lengths, longest).as_py())
                            raise tally.too_long(at, f"value of column {name!r}")
                        size += (pc.sum(lengths).as_py() or 0) + 4 * len(col)
                    else:
                        size += col.nbytes
                tally.decoded(size, row + batch.num_rows)
                tally.records_from(row + 1, batch.num_rows, batch.num_columns)  # before anything is made of them
                row += batch.num_rows
                yield batch
        except RecordFileError:
            raise
        except Exception as e:  # noqa: BLE001
            raise RecordFileError(f"{path}: not a readable Parquet file (at row {row + 1:,}): {e}") from None


def _dense(batch):
    """``batch`` with dictionary-encoded columns as plain values."""
    import pyarrow as pa

    cols = [c.cast(c.type.value_type) if pa.types.is_dictionary(c.type) else c for c in batch.columns]
    return pa.RecordBatch.from_arrays(cols, names=batch.schema.names)


def parquet_rows(path: str | Path, limits: RecordLimits | None = None) -> tuple[list[dict], list[int]]:
    """The rows of a Parquet file as dicts, numbered from 1, counted as they are decoded.

    Parameters
    ----------
    path : str or Path
    limits : RecordLimits, optional

    Returns
    -------
    (list of dict, list of int)
    """
    path = Path(path)
    tally = Tally(path, limits or RecordLimits(), "row")
    rows: list[dict] = []
    for batch in _batches(path, tally):
        rows.extend(_dense(batch).to_pylist())
    return rows, list(range(1, len(rows) + 1))


def read_parquet_table(path: str | Path, columns=None, *, keep=None, limits: RecordLimits | None = None,
                       what: str = "Parquet file", error: type[RecordFileError] = RecordFileError) -> pl.DataFrame:
    """A Parquet file as a polars table, read in counted batches (module docstring).

    Parameters
    ----------
    path : str or Path
    columns : sequence of str, optional
        The columns to read (each must exist: an error lists the file's); default all.
    keep : sequence of str, optional
        Read only those of these columns the file has (the others are never decoded).
    limits : RecordLimits, optional
        Rows, fields and decoded bytes the file may take.
    what : str, optional
        What the file is, for messages (``crosswalk``, ``scores table``).
    error : type, optional
        The exception class raised (a :class:`RecordFileError` subclass).

    Returns
    -------
    polars.DataFrame

    Raises
    ------
    RecordFileError
        (``error``) naming the file, and the row and limit where one is passed.
    NotARegularFile
        ``path`` is a FIFO, a device or a folder.
    """
    import pyarrow as pa

    path = Path(path)
    tally = Tally(path, limits or RecordLimits(), "row")
    try:
        batches = [_dense(b) for b in _batches(path, tally, columns, what, keep)]
        if not batches:
            import pyarrow.parquet as pq

            with open_regular(path, what) as fh:
                schema = pq.read_schema(fh)
            names = list(columns) if columns is not None else schema.names
            names = [n for n in names if keep is None or n in set(keep)]
            schema = pa.schema([schema.field(c) for c in names])
            return pl.from_arrow(schema.empty_table())
        return pl.from_arrow(pa.Table.from_batches(batches))
    except RecordFileError as e:
        if type(e) is RecordFileError and error is not RecordFileError:
            raise error(str(e)) from None
        raise
