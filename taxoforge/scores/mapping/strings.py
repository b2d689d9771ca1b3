"""Columns of strings as two flat arrays — int64 offsets and UTF-8 bytes — the form in which
the name tables store them (``.npy`` files, memory-mapped) and read them back as Arrow
string arrays without a copy.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa

__all__ = ["string_buffers", "string_array", "take_strings"]


def string_buffers(values) -> tuple[np.ndarray, np.ndarray]:
    """``(offsets, utf8)``: the int64 offsets (n + 1) and the uint8 UTF-8 bytes of a string
    column (a polars Series, a pyarrow array or a list of str).

    Parameters
    ----------
    values : object
        A string column: a polars Series, a pyarrow array or a list of str.

    Returns
    -------
    tuple[numpy.ndarray, numpy.ndarray]
        ``(offsets, utf8)``: the int64 offsets (n + 1) and the uint8 UTF-8 bytes of a
        string column (a polars Series, a pyarrow array or a list of str).
    """
    if isinstance(values, pl.Series):
        arr = values.cast(pl.String).to_arrow()
    elif isinstance(values, (pa.Array, pa.ChunkedArray)):
        arr = values
    else:
        arr = pa.array(list(values), pa.large_string())
    arr = arr.cast(pa.large_string())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    n = len(arr)
    if n == 0:
        return np.zeros(1, np.int64), np.zeros(0, np.uint8)
    if arr.null_count:
        raise ValueError("string_buffers: null values")
    _, off_buf, data_buf = arr.buffers()
    offsets = np.frombuffer(off_buf, np.int64, count=n + 1, offset=arr.offset * 8)
    data = np.frombuffer(data_buf, np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    return (offsets - offsets[0]).astype(np.int64), np.array(data[offsets[0]:offsets[-1]], np.uint8)


def string_array(offsets: np.ndarray, utf8: np.ndarray) -> pa.LargeStringArray:
    """The Arrow string array over ``(offsets, utf8)`` of :func:`string_buffers` (zero-copy:
    memory-mapped buffers stay on disk until read).

    Parameters
    ----------
    offsets : numpy.ndarray
        ``n + 1`` int64 offsets.
    utf8 : numpy.ndarray
        The UTF-8 bytes.

    Returns
    -------
    pyarrow.LargeStringArray
        The Arrow string array over ``(offsets, utf8)`` of :func:`string_buffers`
        (zero-copy: memory-mapped buffers stay on disk until read).
    """
    n = len(offsets) - 1
    data = utf8 if len(utf8) else np.zeros(1, np.uint8)
    return pa.LargeStringArray.from_buffers(n, pa.py_buffer(np.ascontiguousarray(offsets, np.int64)),
                                            pa.py_buffer(np.ascontiguousarray(data)))



def take_strings(strings: pa.Array | pa.ChunkedArray, ids: np.ndarray) -> list[str]:
    """The strings at ``ids`` of an Arrow string array, as str, gathered from its
    buffers with numpy: no Arrow compute call (``take`` loads pandas on first use, half a
    second of a command's start).

    Parameters
    ----------
    strings : pyarrow.Array or pyarrow.ChunkedArray
        Strings (``large_string`` or ``string``, no nulls), e.g. :func:`string_array`'s.
    ids : numpy.ndarray
        Indexes into ``strings``.

    Returns
    -------
    list[str]
        The strings at ``ids``, in their order.

    Examples
    --------
    >>> take_strings(pa.array(["ab", "", "cde"], pa.large_string()), np.array([2, 0, 1, 2])) == ["cde", "ab", "", "cde"]
    True
    """
    ids = np.asarray(ids, np.int64)
    if not len(ids):
        return []
    if isinstance(strings, pa.ChunkedArray):
        strings = strings.combine_chunks()
    if strings.null_count or strings.type not in (pa.large_string(), pa.string()):
        return [strings[int(j)].as_py() for j in ids]
    n = len(strings)
    width = np.int64 if strings.type == pa.large_string() else np.int32
    _, off_buf, data_buf = strings.buffers()
    off = np.frombuffer(off_buf, width, count=n + 1, offset=strings.offset * np.dtype(width).itemsize).astype(np.int64, copy=False)
    data = np.frombuffer(data_buf, np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    start = off[ids]
    lens = off[ids + 1] - start
    new_off = np.zeros(len(ids) + 1, np.int64)
    np.cumsum(lens, out=new_off[1:])
    pos = np.repeat(start - new_off[:-1], lens) + np.arange(int(new_off[-1]), dtype=np.int64)
    return string_array(new_off, data[pos]).to_pylist()
