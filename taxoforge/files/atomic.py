"""Atomic writes: a reader sees the old file or the new one, never half of either.

Every writer goes to a temporary name in the destination's own folder (so the final
``os.replace`` is a rename on one filesystem), flushes and ``fsync``s it, then renames it
over the destination. The temporary file is created with mode ``0o666`` filtered by the
caller's umask, like any file the process creates — not ``0o600`` as ``tempfile`` would
give — so a store or cache shared with other users stays readable by them.

Parquet is written deterministically: no timestamps, polars' schema metadata dropped,
fixed zstd compression and row-group size, so the same content gives the same bytes.

The temporary file or folder is claimed while it is written (:mod:`.debris`), and every
write first sweeps the stale ones a killed run left beside the same destination. A
failure to write (no space left, a file where a folder goes …) is a
:class:`~taxoforge.files.LocalFileError` naming the destination.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

__all__ = ["check_output_folder", "check_can_create_in", 
    "atomic_writer",
    "write_bytes_atomic",
    "write_text_atomic",
    "write_parquet_atomic",
    "atomic_directory",
    "make_private_dir",
    "check_replaceable",
]


def _beside(path: Path, what: str = "tmp") -> Path:
    return path.with_name(f".{path.name}.{uuid.uuid4().hex[:16]}.{what}")


def _named(e: OSError, path: Path) -> OSError:
    """``e`` as a :class:`LocalFileError` naming ``path`` when it names no file (a failed
    ``write`` does not); ``e`` itself otherwise."""
    from taxoforge.files.errors import LocalFileError

    if isinstance(e, LocalFileError) or e.filename is not None:
        return e
    return LocalFileError(e.errno or errno.EIO, e.strerror or str(e), str(path))


def _mkdir_parents(path: Path) -> None:
    """``path``'s folder, created; a file in the way is a :class:`LocalFileError` naming it."""
    from taxoforge.files.errors import LocalFileError

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        blocker = next((p for p in [path.parent, *path.parent.parents] if p.exists() and not p.is_dir()), path.parent)
        raise LocalFileError(errno.ENOTDIR, "a file is where a folder must go", str(blocker)) from None


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike, mode: str = "wb", *, encoding: str | None = None,
                  newline: str | None = None) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path`` for writing; on a clean exit it is synced and
    renamed to ``path``, on an exception it is removed and ``path`` is left as it was.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    mode : str, optional
        The file mode (``"wb"``, ``"w"`` …).
    encoding : str, optional
        The text encoding.
    newline : str, optional
        Passed to :func:`open` in text mode.

    Yields
    ------
    object
        Open a temporary file beside ``path`` for writing; on a clean exit it is synced
        and renamed to ``path``, on an exception it is removed and ``path`` is left as
        it was.
    """
    from taxoforge.files.debris import WORK_SUFFIX, sweep

    if "w" not in mode:
        raise ValueError(f"atomic_writer writes a new file: mode {mode!r} has no 'w'")
    path = Path(path)
    if path.is_symlink():
        raise _link_refused(path, "a file")
    _mkdir_parents(path)
    sweep(path.parent, rf"\.{re.escape(path.name)}\.{WORK_SUFFIX}\.tmp")
    tmp = _beside(path)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    except OSError as e:
        raise _named(e, path) from e
    try:
        _lock(fd)  # claimed while written: a sweep of a later run leaves it alone
        with os.fdopen(fd, mode, encoding=encoding, newline=newline) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        if isinstance(e, OSError):
            raise _named(e, path) from e
        raise


def _lock(fd: int) -> None:
    with contextlib.suppress(ImportError, OSError):
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; returns ``path``.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    data : bytes
        The bytes.

    Returns
    -------
    Path
        ``path``.
    """
    with atomic_writer(path, "wb") as f:
        f.write(data)
    return Path(path)


def write_text_atomic(path: str | os.PathLike, text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (``encoding``, newlines as given); returns ``path``.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    text : str
        The text.
    encoding : str, optional
        The text encoding.

    Returns
    -------
    Path
        ``path``.
    """
    with atomic_writer(path, "w", encoding=encoding, newline="") as f:
        f.write(text)
    return Path(path)


def write_parquet_atomic(df, path: str | os.PathLike) -> Path:
    """Write the polars DataFrame ``df`` to ``path`` atomically, as deterministic Parquet
    (see the module doc); returns ``path``.

    Parameters
    ----------
    df : object
        The table.
    path : str or os.PathLike
        The file.

    Returns
    -------
    Path
        ``path``.
    """
    import pyarrow.parquet as pq

    table = df.to_arrow().replace_schema_metadata(None)  # bytes depend on content only
    with atomic_writer(path, "wb") as f:
        pq.write_table(table, f, compression="zstd", compression_level=3, use_dictionary=True,
                       write_statistics=True, row_group_size=1_000_000)
    return Path(path)


def make_private_dir(parent: str | os.PathLike, prefix: str = "") -> Path:
    """A new, uniquely named folder in ``parent`` (created, with the caller's umask — not
    ``0o700`` like :func:`tempfile.mkdtemp`), for work that is renamed into place later.

    Parameters
    ----------
    parent : str or os.PathLike
        The folder to create it in.
    prefix : str, optional
        The start of its name.

    Returns
    -------
    Path
        A new, uniquely named folder in ``parent`` (created, with the caller's umask —
        not ``0o700`` like :func:`tempfile.mkdtemp`), for work that is renamed into
        place later.
    """
    parent = Path(parent)
    _mkdir_parents(parent / "x")
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


def _link_refused(path: Path, what: str) -> OSError:
    from taxoforge.files.errors import LocalFileError

    return LocalFileError(errno.ELOOP, f"is a symbolic link (to {os.readlink(path)}); it would be replaced by {what}, "
                          "not written through: give the path it points to, or a new one", str(path))


def check_can_create_in(folder: str | os.PathLike, target: str | os.PathLike) -> None:
    """Refuse, before any work, an output ``target`` whose ``folder`` cannot take a new entry
    (``-o /proc/self/x``, a read-only mount, a folder of another user): the folder is made
    when missing and a temporary folder is created in it and removed again — the only test
    every file system and privilege answers truly.

    Parameters
    ----------
    folder : str or os.PathLike
        Where the output (and its temporary files) will be created.
    target : str or os.PathLike
        The output named by the user (``-o``), for the message.

    Raises
    ------
    LocalFileError
        Naming ``target`` and why (exit code 11).
    """
    import tempfile

    from taxoforge.files.errors import LocalFileError

    folder = Path(folder) if str(folder) else Path(".")
    try:
        _mkdir_parents(folder / "x")
        os.rmdir(tempfile.mkdtemp(prefix=".taxoforge-probe-", dir=folder))
    except LocalFileError:
        raise
    except OSError as e:
        raise LocalFileError(e.errno or errno.EIO, f"cannot be written: nothing can be created in {folder} "
                             f"({e.strerror or e})", str(target)) from None


def check_output_folder(path: str | os.PathLike) -> Path:
    """Refuse an output folder that files would be written *into* through a symbolic link
    (``compare -o LINK``: the files would land wherever the link points), or that is a file;
    before any work is done.

    Parameters
    ----------
    path : str or os.PathLike
        The folder a command writes its files into (``-o``).

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    LocalFileError
        Naming ``path`` and why (exit code 11).
    """
    from taxoforge.files.errors import LocalFileError

    path = Path(path)
    if path.is_symlink():
        raise LocalFileError(errno.ELOOP, f"is a symbolic link (to {os.readlink(path)}); nothing is written through "
                             "a link: give the folder it points to, or a new one", str(path))
    if path.exists() and not path.is_dir():
        raise LocalFileError(errno.ENOTDIR, "is a file, not a folder", str(path))
    check_can_create_in(path if path.is_dir() else path.parent, path)
    return path


def check_replaceable(path: str | os.PathLike) -> None:
    """Refuse a ``path`` that :func:`atomic_directory` must not replace whole, before any
    work is done: a symbolic link (the link would be replaced, not the folder it points
    to), a file, or the working folder or one holding it.

    Parameters
    ----------
    path : str or os.PathLike
        The folder a command is asked to write (``-o``).

    Raises
    ------
    LocalFileError
        Naming ``path`` and why.
    """
    from taxoforge.files.errors import LocalFileError

    path = Path(path)
    if path.is_symlink():
        raise _link_refused(path, "a folder")
    if path.exists() and not path.is_dir():
        raise LocalFileError(errno.ENOTDIR, "is a file, not a folder: refusing to replace it with one", str(path))
    try:
        cwd = Path.cwd().resolve()
    except OSError:  # the working folder was deleted: nothing to protect
        return
    real = path.resolve()
    if real == cwd or real in cwd.parents:
        raise LocalFileError(errno.EBUSY, "is the working folder (or holds it): it would be replaced whole; "
                             "write into a new folder instead, e.g. results/", str(path))
    check_can_create_in(path.parent, path)


@contextlib.contextmanager
def atomic_directory(path: str | os.PathLike) -> Iterator[Path]:
    """Fill a temporary folder beside ``path``; on a clean exit it takes the place of
    ``path`` whole, on an exception it is removed and ``path`` is left as it was.

    An existing folder is swapped out in one step where the system offers it (Linux
    ``renameat2(RENAME_EXCHANGE)``), else moved aside first and then replaced (two renames:
    no moment holds a mix of the old and the new content); the old content is deleted.
    ``path`` must not be a symbolic link, a file, or the working folder or one holding it
    (:class:`~taxoforge.files.LocalFileError`, before anything is written); stale temporary
    folders of killed runs beside it are swept first (:mod:`.debris`).

    Parameters
    ----------
    path : str or os.PathLike
        The file.

    Yields
    ------
    object
        Fill a temporary folder beside ``path``; on a clean exit it takes the place of
        ``path`` whole, on an exception it is removed and ``path`` is left as it was.
    """
    from taxoforge.files.debris import WORK_SUFFIX, Claim, sweep

    path = Path(path)
    check_replaceable(path)
    sweep(path.parent, rf"\.{re.escape(path.name)}\.{WORK_SUFFIX}(\.old)?")
    tmp = make_private_dir(path.parent, prefix=f".{path.name}.")
    claims = [Claim(tmp)]
    try:
        yield tmp
        if not path.exists():
            os.replace(tmp, path)
        elif _exchange(tmp, path):
            shutil.rmtree(tmp, ignore_errors=True)  # now the old content
        else:
            claims.append(Claim(path, wait=None))  # the old content stays claimed while it is moved aside
            old = _beside(path, "old")
            os.replace(path, old)
            os.replace(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
    except BaseException as e:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(e, OSError):
            raise _named(e, path) from e
        raise
    finally:
        for c in claims:
            c.release()
