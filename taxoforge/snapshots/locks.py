"""The publishers' lock of a snapshot store.

Local stores: :class:`filelock.FileLock` on ``<store>/.lock`` (``flock`` where it exists,
released by the OS if a publisher dies), so concurrent publishers on one machine or one
shared filesystem take turns.

Remote (fsspec) stores: a ``.lock`` object created in exclusive mode (``"xb"``) where the
backend supports it. Object stores do not all honour exclusive creation, and a crashed
publisher leaves the lock behind (remove it by hand): **run one publisher per remote
store**, or publish to a local store and copy it.
"""

from __future__ import annotations

import contextlib
import os
import time
import warnings
from collections.abc import Iterator

from taxoforge.snapshots.errors import LockTimeout

__all__ = ["LOCK_NAME", "local_lock", "remote_lock"]

LOCK_NAME = ".lock"


@contextlib.contextmanager
def local_lock(path: str | os.PathLike, timeout: float) -> Iterator[None]:
    """Hold the file lock at ``path`` (waiting at most ``timeout`` seconds).

    Parameters
    ----------
    path : str or os.PathLike
        The lock file.
    timeout : float
        Seconds to wait.

    Yields
    ------
    object
        Hold the file lock at ``path`` (waiting at most ``timeout`` seconds).
    """
    import filelock

    os.makedirs(os.path.dirname(os.fspath(path)) or ".", exist_ok=True)
    lock = filelock.FileLock(os.fspath(path), timeout=timeout)
    try:
        lock.acquire()
    except filelock.Timeout:
        raise LockTimeout(f"{path}: another publisher has held the store lock for more than "
                          f"{timeout:.0f} s") from None
    try:
        yield
    finally:
        lock.release()


@contextlib.contextmanager
def remote_lock(fs, path: str, where: str, timeout: float, stamp: str) -> Iterator[None]:
    """Hold the lock object ``path`` on the fsspec filesystem ``fs`` (``where``: its URL).

    Parameters
    ----------
    fs : object
        The fsspec filesystem of the store.
    path : str
        The lock object's path on ``fs``.
    where : str
        Its URL.
    timeout : float
        Seconds to wait.
    stamp : str
        What the lock object says about its holder (host, process, time).

    Yields
    ------
    object
        Hold the lock object ``path`` on the fsspec filesystem ``fs`` (``where``: its
        URL).
    """
    deadline = time.monotonic() + timeout
    held = False
    while True:
        try:
            fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
            with fs.open(path, "xb") as f:
                f.write(f"{os.getpid()} {stamp}\n".encode())
            held = True
            break
        except FileExistsError:
            if time.monotonic() > deadline:
                raise LockTimeout(f"{where}: lock held for more than {timeout:.0f} s "
                                  "(remove it if its publisher died)") from None
            time.sleep(0.1)
        except (NotImplementedError, ValueError, TypeError):
            warnings.warn(f"{where}: this filesystem has no exclusive create; publishing without a lock",
                          stacklevel=4)
            break
    try:
        yield
    finally:
        if held:
            with contextlib.suppress(FileNotFoundError):
                fs.rm_file(path)
