"""A dump file as blocks of whole lines: the reading step of :func:`.dump.read_dump`.

Input
    A path: plain text, gzip or bzip2 (recognised by their magic bytes, not the name).

Output
    :class:`Blocks` yields :class:`Block` objects: read-only ``uint8`` arrays of whole lines,
    each ending in a newline, about :data:`CHUNK` bytes. A plain file is memory-mapped (the
    blocks are views of the mapping, and the pages of finished blocks are released, so
    resident memory follows the blocks in flight, not the file); a compressed one is
    decoded into fresh buffers — gzip by ``rapidgzip`` (parallel decoding on more than four
    cores, one ISA-L thread beside the scanners below that), bzip2 by ``indexed_bzip2`` on
    every core — with no temporary file.

Checks (each a ``ValueError`` naming the file, and the line where there is one)
    * gzip: the trailer's CRC-32 and length are checked by the decoder; the decoder must end
      at the end of the file (a cut file can end quietly at a block boundary); bzip2: the
      stream must end with its end-of-stream marker.
    * Other compressions (xz, zstd, zip, 7z, lz4) are named instead of being read as text.
    * A line longer than :data:`MAX_LINE` bytes: no text dump has one — binary data, or a
      file that is not N-Triples. Its block carries the error, raised with the line number.
    * The last line without an end of line: the block says so (``added_newline``); the reader
      checks that line is a whole statement (a cut dump ends inside one).
"""

from __future__ import annotations

import bz2
import gzip
import mmap
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from taxoforge.trees.threads import cpus

__all__ = ["CHUNK", "MAX_LINE", "Block", "Blocks", "compression", "compression_of", "open_dump", "cpus",
           "stream_blocks", "line_start"]

#: Bytes read per block (whole lines; a block grows to hold a longer line, up to MAX_LINE).
CHUNK = 1 << 25
#: The longest line a dump may have.
MAX_LINE = 1 << 24

#: Magic bytes of compressions the reader does not decode, and what to do instead.
_OTHER_MAGIC = {
    b"\xfd7zXZ\x00": "xz",
    b"\x28\xb5\x2f\xfd": "zstd",
    b"PK\x03\x04": "zip",
    b"7z\xbc\xaf\x27\x1c": "7z",
    b"\x04\x22\x4d\x18": "lz4",
}


def compression(path: Path) -> str:
    """``"gzip"``, ``"bzip2"`` or ``"none"`` from the first bytes of ``path``.

    Parameters
    ----------
    path : pathlib.Path
        The file.

    Returns
    -------
    str
        The compression.

    Raises
    ------
    ValueError
        For a compression the reader does not decode (xz, zstd, zip, 7z, lz4).
    """
    with path.open("rb") as f:
        return compression_of(f.read(6), path)


def compression_of(magic: bytes, name) -> str:
    """``"gzip"``, ``"bzip2"`` or ``"none"`` from a file's first six bytes.

    Parameters
    ----------
    magic : bytes
        The first bytes of the file.
    name : str or path-like
        The file, for the message.

    Returns
    -------
    str
        The compression.

    Raises
    ------
    ValueError
        For a compression the reader does not decode (xz, zstd, zip, 7z, lz4).
    """
    if magic[:2] == b"\x1f\x8b":
        return "gzip"
    if magic[:3] == b"BZh":
        return "bzip2"
    for start, kind in _OTHER_MAGIC.items():
        if magic.startswith(start):
            raise ValueError(f"{name}: the file is {kind}-compressed; the reader takes plain, gzip or bzip2 N-Triples "
                             f"(decompress it first, or recompress it with gzip or bzip2)")
    return "none"


def open_dump(path: str | os.PathLike, threads: int | None = None):
    """Open ``path`` for binary reading, decompressing gzip or bzip2.

    Parameters
    ----------
    path : path-like
        A plain, gzip or bzip2 file (recognised by its magic bytes).
    threads : int, optional
        Cores for decoding (default: every core this process may use). gzip is decoded in
        parallel by ``rapidgzip`` on more than four cores and by one ISA-L thread on fewer
        (measured on 2 cores: 2.1 s of CPU for 1.2 GB with one, 5.6 s with two); bzip2 by
        ``indexed_bzip2`` on ``threads`` cores. The standard library where those are missing.

    Returns
    -------
    file object
        A binary file object; use it as a context manager.
    """
    path = Path(path)
    kind = compression(path)
    threads = threads or cpus()
    if kind == "gzip":
        try:
            import rapidgzip
        except ImportError:  # pragma: no cover - a core dependency
            return gzip.open(path, "rb")
        return rapidgzip.open(str(path), parallelization=threads if threads > 4 else 1)
    if kind == "bzip2":
        try:
            import indexed_bzip2
        except ImportError:  # pragma: no cover - a core dependency
            return bz2.open(path, "rb")
        return indexed_bzip2.open(str(path), parallelization=threads)
    return path.open("rb", buffering=0)


@dataclass
class Block:
    """Whole lines of the (decompressed) file.

    Parameters
    ----------
    data : numpy.ndarray
        Read-only ``uint8``, ending in a newline.
    offset : int
        Where it starts in the decompressed stream.
    added_newline : bool
        The file's last line had no end of line: one was added.
    error : str, optional
        A problem found while cutting the block (a line too long), raised by the reader with
        the line number.
    """

    data: np.ndarray
    offset: int
    added_newline: bool = False
    error: str | None = None


def _last_newline(buf: np.ndarray, lo: int, hi: int) -> int:
    """Index just after the last newline in ``buf[lo:hi]`` (``lo`` if there is none)."""
    start = max(lo, hi - (1 << 16))
    while True:
        found = np.flatnonzero(buf[start:hi] == 10)
        if len(found):
            return start + int(found[-1]) + 1
        if start == lo:
            return lo
        hi, start = start, max(lo, start - (1 << 20))


def _after_newline(data: np.ndarray, at: int) -> int | None:
    """Index just after the first newline at or after ``at`` (``None`` within :data:`MAX_LINE`)."""
    far = min(len(data), at + MAX_LINE)
    while at < far:
        nl = np.flatnonzero(data[at:min(far, at + (1 << 16))] == 10)
        if len(nl):
            return at + int(nl[0]) + 1
        at += 1 << 16
    return None


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False  # one compiled signature for mapped and decompressed blocks
    return a


def _too_long() -> str:
    return (f"no end of line within {MAX_LINE >> 20} MiB: this is not N-Triples text (binary data, or a file of "
            "another format)")


class Blocks:
    """The blocks of a file (module docstring). A context manager that outlives the blocks'
    users: the mapping of a plain file is closed on exit.

    Parameters
    ----------
    path : pathlib.Path
        The file.
    threads : int
        Cores for decompression.
    start, stop : int, optional
        A byte range of a plain file: only the lines that start in ``[start, stop)`` (the last
        one to its end), as :func:`line_start` and :func:`stream_blocks` read a range.
    """

    def __init__(self, path: Path, threads: int, start: int = 0, stop: int | None = None) -> None:
        self.path, self.threads = path, threads
        self.start, self.stop = start, stop
        self.kind = compression(path)
        self._file = self._map = None
        self._released = 0

    def __enter__(self) -> "Blocks":
        if self.kind == "none" and self.path.stat().st_size:
            self._file = self.path.open("rb")
            self._map = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)
            if hasattr(self._map, "madvise"):
                self._map.madvise(mmap.MADV_SEQUENTIAL)
        return self

    def release(self, upto: int) -> None:
        """Release the pages of the blocks before byte ``upto`` (they stay in the page cache).

        Parameters
        ----------
        upto : int
            The offset up to which blocks are done with: resident memory follows the blocks in
            flight, not the file.
        """
        if self._map is None or not hasattr(self._map, "madvise"):
            return
        page = mmap.PAGESIZE
        a, b = self._released // page * page, min(upto, len(self._map)) // page * page
        if b > a:
            self._map.madvise(mmap.MADV_DONTNEED, a, b - a)
            self._released = b

    def __exit__(self, *exc) -> None:
        if self._map is not None:
            try:
                self._map.close()
            except BufferError:  # a block is still referenced somewhere: unmapped when it goes
                pass
            self._file.close()
            self._map = self._file = None

    def __iter__(self) -> Iterator[Block]:
        if self.kind == "none":
            if self._map is not None:
                yield from self._mapped()
            return
        yield from self._decoded()

    def _decoded(self) -> Iterator[Block]:
        done = 0
        try:
            with open_dump(self.path, self.threads) as f:
                for block in stream_blocks(f, check_end=lambda: _check_complete(f, self.path, self.kind)):
                    done = block.offset + len(block.data)
                    yield block
        except (OSError, RuntimeError, EOFError, ValueError) as e:
            raise ValueError(f"{self.path}: cannot decompress the {self.kind} data after {done:,} bytes of output: "
                             f"the file is truncated or corrupt ({type(e).__name__}: {str(e)[:300]})") from e

    def _mapped(self) -> Iterator[Block]:
        data = np.frombuffer(self._map, dtype=np.uint8)
        size = len(data)
        start = 0 if self.start == 0 else _after_newline(data, self.start - 1)
        if start is None or (self.stop is not None and start >= self.stop):
            return
        if self.stop is not None and self.stop < size:
            size = _after_newline(data, self.stop - 1) or size  # none within MAX_LINE: reported below
        while start < size:
            end = min(start + CHUNK, size)
            if end < size:
                cut = _last_newline(data, start, end)
                if cut == start:  # a line longer than the block: to its end, within MAX_LINE
                    far = min(size, start + MAX_LINE)
                    nl = np.flatnonzero(data[end:far] == 10)
                    if len(nl):
                        cut = end + int(nl[0]) + 1
                    elif far == size:
                        cut = size
                    else:
                        yield Block(_readonly(data[start:start]), start, error=_too_long())
                        return
                end = cut
            block = data[start:end]
            if start == 0 and bytes(block[:3]) == b"\xef\xbb\xbf":  # a byte-order mark: whitespace
                block = block.copy()
                block[:3] = 32
            added = block[-1] != 10
            if added:
                block = np.concatenate([block, np.array([10], dtype=np.uint8)])
            yield Block(_readonly(block), start, bool(added))
            start = end
        del data


def _check_complete(f, path: Path, kind: str) -> None:
    """At the end of the output: a parallel decompressor may stop quietly where a truncated
    file ends. gzip: its position in the input must be the file's end. bzip2: the file must end
    with the stream-end marker (48 bits, then the 32-bit CRC and up to 7 bits of padding)."""
    if kind == "gzip" and hasattr(f, "tell_compressed"):
        size_bits = path.stat().st_size * 8
        if f.tell_compressed() != size_bits:
            raise EOFError(f"the gzip stream stops at bit {f.tell_compressed():,} of {size_bits:,}")
    elif kind == "bzip2":
        with path.open("rb") as raw:
            raw.seek(max(0, path.stat().st_size - 16))
            tail = int.from_bytes(raw.read(), "big")
        if not any((tail >> (32 + pad)) & 0xFFFFFFFFFFFF == 0x177245385090 for pad in range(8)):
            raise EOFError("the bzip2 stream has no end-of-stream marker")


def _read_full(f, view: memoryview) -> int:
    got = 0
    while got < len(view):
        n = f.readinto(view[got:])
        if not n:
            break
        got += n
    return got


def stream_blocks(f, *, offset: int = 0, stop: int | None = None, check_end=None) -> Iterator[Block]:
    """The blocks of whole lines of a binary stream, from a line start to a line end.

    The cutting of :class:`Blocks` for a stream (a decoder's output, or a byte range of a
    file read through any file system): blocks of about :data:`CHUNK` bytes cut after their
    last newline, a byte-order mark at the stream's start read as spaces, a newline added
    to a last line without one, a line longer than :data:`MAX_LINE` an error block.

    Parameters
    ----------
    f : file object
        Binary, with ``readinto``, positioned at byte ``offset``, the start of a line.
    offset : int
        Where ``f`` stands in the file (the blocks' offsets count from the file's start).
    stop : int, optional
        The end of a byte range: the lines that start before ``stop`` are read (the last one
        to its end, past ``stop``), the rest left to the next range. ``None``: to the end.
    check_end : callable, optional
        Called at the end of the stream (a decoder's check that the file is whole).

    Yields
    ------
    Block
        Whole lines, in order.
    """
    rest = np.empty(0, dtype=np.uint8)
    first = offset == 0
    while True:
        buf = np.empty(len(rest) + CHUNK, dtype=np.uint8)
        buf[: len(rest)] = rest
        got = _read_full(f, memoryview(buf)[len(rest):])
        n = len(rest) + got
        if first and n >= 3 and bytes(buf[:3]) == b"\xef\xbb\xbf":  # a byte-order mark
            buf[:3] = 32
        first = False
        if stop is not None and offset + n >= stop:  # the range's last line starts in this buffer
            lo = max(0, stop - 1 - offset)
            hit = np.flatnonzero(buf[lo:n] == 10)
            if len(hit):
                cut = lo + int(hit[0]) + 1
                if cut:
                    yield Block(_readonly(buf[:cut]), offset)
                return
        if got == 0:
            if check_end is not None:
                check_end()
            if n:
                yield Block(_readonly(np.concatenate([buf[:n], [10]]).astype(np.uint8)), offset, True)
            return
        cut = _last_newline(buf, 0, n)
        if not cut and n > MAX_LINE:
            yield Block(_readonly(buf[:0]), offset, error=_too_long())
            return
        rest = buf[cut:n].copy()
        if cut:
            yield Block(_readonly(buf[:cut]), offset)
            offset += cut


def line_start(f, at: int) -> int | None:
    """The start of the first line that starts at or after byte ``at`` of a seekable file.

    A line starts at byte 0 and after each newline, so a range ``[a, b)`` of a file owns the
    lines that start in it: the ranges of a file, read by :func:`stream_blocks`, give every
    line once, wherever their ends fall (inside a line, inside a multi-byte character, or on
    a line's end).

    Parameters
    ----------
    f : file object
        Binary and seekable.
    at : int
        A byte offset.

    Returns
    -------
    int or None
        The offset (``f`` is left there); ``None`` when no line starts at or after ``at``
        within :data:`MAX_LINE` bytes (the file ends first, or a line is too long: the range
        before reads it and reports it).
    """
    if at == 0:
        f.seek(0)
        return 0
    f.seek(at - 1)
    pos = at - 1
    while pos < at - 1 + MAX_LINE:
        piece = f.read(1 << 16)
        if not piece:
            return None
        k = piece.find(b"\n")
        if k >= 0:
            f.seek(pos + k + 1)
            return pos + k + 1
        pos += len(piece)
    return None
