"""Label-set files: one label a line, or a table with a label column.

The one reader of the label sets people hand to taxoforge — ground truths of a
multiple-choice set (``taxoforge mc build``), the label set a subtree is cut for
(``taxoforge subset``), class lists of the evaluations. The records are read by
:mod:`taxoforge.files.records`, so errors name the file and the line as they do for model
outputs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl

from taxoforge.files.parquet_records import read_parquet_table
from taxoforge.files.paths import check_regular
from taxoforge.files.records import (
    RecordFileError,
    read_csv_records,
    read_jsonl_records,
    read_text_lines,
)

__all__ = ["LabelFileError", "LABEL_COLUMNS", "LABEL_SUFFIXES", "read_labels", "label_column_of"]

#: Columns taken as the label column, in this order, when none is named.
LABEL_COLUMNS = ("label", "target-class", "target_class", "scientific_name", "scientificName", "species", "name")
#: The file kinds :func:`read_labels` reads (a suffix that is none of the others is read as text).
LABEL_SUFFIXES = (".txt", ".lst", ".csv", ".tsv", ".tab", ".jsonl", ".ndjson", ".parquet")


class LabelFileError(RecordFileError):
    """A label file that cannot be read; the message names the file and the line."""


def label_column_of(columns, label_column: str | None = None) -> str | None:
    """The label column among ``columns``: ``label_column`` if given and present, else the
    first of :data:`LABEL_COLUMNS` present, else ``None``.

    >>> label_column_of(["image-path", "target-class"])
    'target-class'

    Parameters
    ----------
    columns : object
        The column names of a labels table.
    label_column : str, optional
        The column the caller names, if any.

    Returns
    -------
    str or None
        The label column among ``columns``: ``label_column`` if given and present, else
        the first of :data:`LABEL_COLUMNS` present, else ``None``.
    """
    cols = list(columns)
    if label_column is not None:
        return label_column if label_column in cols else None
    return next((c for c in LABEL_COLUMNS if c in cols), None)


def _scalar(v):
    return v if isinstance(v, (str, int, float, bool)) or v is None else json.dumps(v, ensure_ascii=False)


def read_labels(path: str | os.PathLike, label_column: str | None = None) -> pl.DataFrame:
    """The labels of a label file, one row each, with their line numbers.

    Parameters
    ----------
    path : str or os.PathLike
        ``.txt`` (or ``.lst``, or no suffix): one label a line, blank lines and lines
        starting with ``#`` skipped; ``.csv``/``.tsv``/``.tab``, ``.jsonl``/``.ndjson`` or
        ``.parquet``: a table with a label column.
    label_column : str, optional
        The label column of a table (default: the first of :data:`LABEL_COLUMNS` present).

    Returns
    -------
    polars.DataFrame
        ``label`` (string), every other column of the file (strings for CSV; JSON scalars as
        they are, nested values as JSON text), and ``line`` (1-based; the row number for
        Parquet).

    Raises
    ------
    LabelFileError
        A missing file, an unknown suffix, a file with no labels or no label column, or a
        record that cannot be read (naming the file and the line).

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "fish.txt"
    >>> _ = p.write_text("# VLM4Bio fish\\nEsox lucius\\n\\nNotropis hudsonius\\n")
    >>> read_labels(p).rows()
    [('Esox lucius', 2), ('Notropis hudsonius', 4)]
    """
    p = Path(path)
    if not p.exists():
        raise LabelFileError(f"{p}: no such file")
    check_regular(p, "label file")  # a FIFO, a device or a folder: refused by name (exit code 11), never waited on
    suf = p.suffix.lower()
    if suf in (".txt", ".lst", ""):
        vals, lines = read_text_lines(p, error=LabelFileError)
        if not vals:
            raise LabelFileError(f"{p}: no labels (every line is blank or a # comment)")
        return pl.DataFrame({"label": vals, "line": lines}, schema={"label": pl.String, "line": pl.Int64})
    if suf in (".csv", ".tsv", ".tab"):
        rows, lines = read_csv_records(p, error=LabelFileError)
        cols = list(rows[0]) if rows else []
        df = pl.DataFrame({c: [r[c] for r in rows] for c in cols}, schema={c: pl.String for c in cols})
    elif suf in (".jsonl", ".ndjson"):
        rows, lines = read_jsonl_records(p, error=LabelFileError)
        df = pl.DataFrame([{k: _scalar(v) for k, v in r.items()} for r in rows], infer_schema_length=None)
    elif suf == ".parquet":
        df = read_parquet_table(p, what="label file", error=LabelFileError)  # counted as decoded
        lines = list(range(1, df.height + 1))
    else:
        raise LabelFileError(f"{p}: unknown label file type {suf!r}; expected one of {', '.join(LABEL_SUFFIXES)}")
    if not df.height:
        raise LabelFileError(f"{p}: no labels (the file has no rows)")
    df = df.with_columns(pl.Series("line", lines, dtype=pl.Int64))
    col = label_column_of(df.columns, label_column)
    if col is None:
        named = f"--label-column {label_column!r} is not one of them" if label_column else \
            f"expected one of {', '.join(LABEL_COLUMNS)} (or name one with --label-column)"
        raise LabelFileError(f"{p}: no label column; the columns are "
                             f"{', '.join(c for c in df.columns if c != 'line')}; {named}")
    if col != "label":
        df = df.rename({col: "label"}) if "label" not in df.columns else df.with_columns(pl.col(col).alias("label"))
    return df.with_columns(pl.col("label").cast(pl.String))
