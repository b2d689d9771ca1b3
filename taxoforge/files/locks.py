"""Waiting for a file lock, with a deadline that says what is waited for.

A cache built once under a lock (a mapping index, a stored tree, METEOR's synonym table,
name embeddings) makes the second process wait while the first builds. :func:`held_lock`
is that wait, done so that it can never be silent or endless:

* the lock file is created first, so a folder where it cannot be (``--index-dir /proc/1``,
  a read-only or missing folder, a file in place of the folder) is an error at once, naming
  the folder (:class:`~taxoforge.files.errors.LocalFileError`, exit code 11) — not an hour of
  polling a lock no one holds;
* a lock another process holds is said on stderr before waiting (logger ``taxoforge.files``:
  what is waited for, the lock file, the deadline), and waiting past ``timeout`` is an error
  saying the same (:class:`LockWaitTimeout`, exit code 11).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path

from taxoforge.files.errors import LocalFileError

__all__ = ["held_lock", "LockWaitTimeout"]

log = logging.getLogger("taxoforge.files")


class LockWaitTimeout(LocalFileError):
    """A lock was held by another process for longer than the wait allowed (exit code 11)."""


@contextlib.contextmanager
def held_lock(path: str | os.PathLike, what: str, timeout: float) -> Iterator[None]:
    """Hold the file lock ``path`` while the block runs, waiting at most ``timeout`` seconds
    for another process to release it (module docstring).

    Parameters
    ----------
    path : str or os.PathLike
        The lock file (created when missing; its folder must exist).
    what : str
        What the lock guards, for messages (``the mapping index of …``).
    timeout : float
        The most seconds to wait.

    Yields
    ------
    None

    Raises
    ------
    LocalFileError
        The lock file cannot be created (its folder is missing, read-only, not a folder).
    LockWaitTimeout
        Another process held it for more than ``timeout`` seconds.
    """
    import filelock

    path = Path(path)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o666)
        os.close(fd)
    except OSError as e:
        raise LocalFileError(e.errno or errno.EIO, f"cannot create the lock file of {what} here "
                             f"({e.strerror or e}): give a folder that can be written", str(path)) from None
    lock = filelock.FileLock(str(path))
    try:
        lock.acquire(timeout=0)
    except filelock.Timeout:
        log.warning("waiting for %s: %s is held by another process (at most %.0f s)", what, path, timeout)
        t0 = time.monotonic()
        try:
            lock.acquire(timeout=timeout)
        except filelock.Timeout:
            raise LockWaitTimeout(errno.ETIMEDOUT, f"held by another process for more than {timeout:.0f} s while "
                                  f"waiting for {what}; if no process is building it, remove the lock file",
                                  str(path)) from None
        log.info("got %s after %.1f s", path, time.monotonic() - t0)
    try:
        yield
    finally:
        lock.release()
