"""Atomic writes: a reader sees the old file or the new one, never half of either.

Every writer goes to a temporary name in the destination's own folder (so the final
``os.replace`` is a rename on one filesystem), flushes and ``fsync``s it, then renames it
over the destination. The temporary file is created with mode ``0o666`` filtered by the
caller's umask, like any file the process creates — not ``0o600`` as ``tempfile`` would
give — so a store or cache shared with other users stays readable by them.

Parquet is written deterministically: no timestamps, polars' schema metadata dropped,
fixed zstd compression and row-group size, so the same content gives the same bytes.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

__all__ = [
    "atomic_writer",
    "write_bytes_atomic",
    "write_text_atomic",
    "write_parquet_atomic",
    "atomic_directory",
    "make_private_dir",
]


def _beside(path: Path, what: str = "tmp") -> Path:
    return path.with_name(f".{path.name}.{uuid.uuid4().hex[:16]}.{what}")


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike, mode: str = "wb", *, encoding: str | None = None,
                  newline: str | None = None) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path`` for writing; on a clean exit it is synced and
    renamed to ``path``, on an exception it is removed and ``path`` is left as it was."""
    if "w" not in mode:
        raise ValueError(f"atomic_writer writes a new file: mode {mode!r} has no 'w'")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _beside(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, mode, encoding=encoding, newline=newline) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; returns ``path``."""
    with atomic_writer(path, "wb") as f:
        f.write(data)
    return Path(path)


def write_text_atomic(path: str | os.PathLike, text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (``encoding``, newlines as given); returns ``path``."""
    with atomic_writer(path, "w", encoding=encoding, newline="") as f:
        f.write(text)
    return Path(path)


def write_parquet_atomic(df, path: str | os.PathLike) -> Path:
    """Write the polars DataFrame ``df`` to ``path`` atomically, as deterministic Parquet
    (see the module doc); returns ``path``."""
    import pyarrow.parquet as pq

    table = df.to_arrow().replace_schema_metadata(None)  # bytes depend on content only
    with atomic_writer(path, "wb") as f:
        pq.write_table(table, f, compression="zstd", compression_level=3, use_dictionary=True,
                       write_statistics=True, row_group_size=1_000_000)
    return Path(path)


def make_private_dir(parent: str | os.PathLike, prefix: str = "") -> Path:
    """A new, uniquely named folder in ``parent`` (created, with the caller's umask — not
    ``0o700`` like :func:`tempfile.mkdtemp`), for work that is renamed into place later."""
    parent = Path(parent)
    parent.mkdir(parents=True, exist_ok=True)
    while True:
        p = parent / f"{prefix}{uuid.uuid4().hex[:16]}"
        try:
            os.mkdir(p, 0o777)
            return p
        except FileExistsError:  # pragma: no cover - 64 random bits
            continue


def _exchange(a: Path, b: Path) -> bool:
    """Swap two folders in one step (Linux ``renameat2(RENAME_EXCHANGE)``); False where the
    system or file system cannot."""
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


@contextlib.contextmanager
def atomic_directory(path: str | os.PathLike) -> Iterator[Path]:
    """Fill a temporary folder beside ``path``; on a clean exit it takes the place of
    ``path`` whole, on an exception it is removed and ``path`` is left as it was.

    An existing folder is swapped out in one step where the system offers it (Linux
    ``renameat2(RENAME_EXCHANGE)``), else moved aside first and then replaced (two renames:
    no moment holds a mix of the old and the new content); the old content is deleted."""
    path = Path(path)
    tmp = make_private_dir(path.parent, prefix=f".{path.name}.")
    try:
        yield tmp
        if not path.exists():
            os.replace(tmp, path)
        elif _exchange(tmp, path):
            shutil.rmtree(tmp, ignore_errors=True)  # now the old content
        else:
            old = _beside(path, "old")
            os.replace(path, old)
            os.replace(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
