"""What a killed run leaves behind, and how the next run sweeps it — only what is
provably stale.

Work in progress lives under names of its own beside its destination: the temporary
folder of :func:`~taxoforge.files.atomic_directory` (``.<name>.<16 hex>``, and
``.<name>.<16 hex>.old`` while a folder is swapped), the temporary file of
:func:`~taxoforge.files.atomic_writer` (``.<name>.<16 hex>.tmp``), a snapshot store's
``.staging/`` folders and a pull's ``.partial/<taxonomy>/<version>/``. A run killed
(``kill -9``, an out-of-memory kill, a power cut) never removes its own.

Every such folder or file is *claimed* while it is worked on (:class:`Claim`: an exclusive
``flock`` on it, which the kernel drops when the process dies, however it dies). The next
run that works in the same place sweeps (:func:`sweep`) what matches the pattern of work in
progress **and** is provably stale: untouched for :data:`STALE_AFTER` seconds (the newest
modification time of the entry and, for a folder, of what it holds directly) **and** not
claimed by any live process (the lock can be taken). A run still working, however long it
takes, is never swept; where ``flock`` does not exist (Windows) nothing is swept.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import time
from pathlib import Path

__all__ = ["STALE_AFTER", "Claim", "claim_folder", "is_stale", "sweep", "WORK_SUFFIX"]

#: seconds a work folder or file must have been left untouched before a later run may sweep it
STALE_AFTER = 3600.0
#: the random part of a work name: 16 hex digits (:func:`~taxoforge.files.make_private_dir`)
WORK_SUFFIX = r"[0-9a-f]{16}"

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no flock, nothing is provably stale
    fcntl = None


def _open(path: Path) -> int:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    if path.is_dir():
        flags |= getattr(os, "O_DIRECTORY", 0)
    return os.open(path, flags)


class Claim:
    """An exclusive lock on a work folder or file, held by this process until
    :meth:`release` (or the end of a ``with`` block, or the process's death).

    Parameters
    ----------
    path : str or os.PathLike
        The folder or file claimed (never followed if it is a symbolic link).
    wait : float, optional
        How long to wait for another live process's claim: 0 not at all, None as long as
        it takes; :class:`TimeoutError` after that.
    """

    def __init__(self, path: str | os.PathLike, *, wait: float | None = 0.0) -> None:
        self.path = Path(path)
        self.fd: int | None = None
        if fcntl is None:  # pragma: no cover
            return
        fd = _open(self.path)
        deadline = None if wait is None else time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self.fd = fd
                return
            except BlockingIOError:
                if deadline is not None and time.monotonic() >= deadline:
                    os.close(fd)
                    raise TimeoutError(f"{self.path} is in use by another process") from None
                time.sleep(0.1)

    def release(self) -> None:
        """Drop the claim (closing the descriptor that holds the lock)."""
        if self.fd is not None:
            os.close(self.fd)  # drops the lock
            self.fd = None

    def __enter__(self) -> "Claim":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def _newest_mtime(path: Path) -> float:
    st = os.lstat(path)
    newest = st.st_mtime
    if stat.S_ISDIR(st.st_mode):
        with contextlib.suppress(OSError), os.scandir(path) as it:
            for e in it:
                with contextlib.suppress(OSError):
                    newest = max(newest, e.stat(follow_symlinks=False).st_mtime)
    return newest


def _claim_if_stale(path: Path, max_age: float, now: float | None) -> int | None:
    """An open descriptor holding ``path``'s lock when it is stale (see :func:`is_stale`), else None."""
    if fcntl is None:  # pragma: no cover
        return None
    try:
        if (time.time() if now is None else now) - _newest_mtime(path) < max_age:
            return None
        fd = _open(path)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd
    except OSError:
        os.close(fd)
        return None


def is_stale(path: str | os.PathLike, max_age: float = STALE_AFTER, *, now: float | None = None) -> bool:
    """Whether ``path`` is untouched for ``max_age`` seconds and no live process claims it.

    Parameters
    ----------
    path : str or os.PathLike
        A work folder or file.
    max_age : float
        Seconds since the newest modification of ``path`` (and, for a folder, of what it
        holds directly).
    now : float, optional
        The time to compare with (default: now).

    Returns
    -------
    bool
    """
    fd = _claim_if_stale(Path(path), max_age, now)
    if fd is None:
        return False
    os.close(fd)
    return True


def sweep(folder: str | os.PathLike, pattern: str | re.Pattern, max_age: float = STALE_AFTER) -> list[Path]:
    """Remove the entries of ``folder`` whose names match ``pattern`` (the whole name) and
    that are stale (:func:`is_stale`), holding each one's lock while it is removed. Never
    raises: a sweep must not stop the run that does it.

    Parameters
    ----------
    folder : str or os.PathLike
        Where the work of killed runs may lie.
    pattern : str or re.Pattern
        The names of that work (matched whole).
    max_age : float
        See :func:`is_stale`.

    Returns
    -------
    list of Path
        What was removed.
    """
    rx = re.compile(pattern) if isinstance(pattern, str) else pattern
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for e in entries:
        if not rx.fullmatch(e.name):
            continue
        p = Path(e.path)
        fd = _claim_if_stale(p, max_age, None)
        if fd is None:
            continue
        try:
            if e.is_dir(follow_symlinks=False):
                shutil.rmtree(p)
            else:
                p.unlink()
            removed.append(p)
        except OSError:
            pass
        finally:
            os.close(fd)
    return removed


def claim_folder(path: str | os.PathLike, *, wait: float | None = None) -> Claim:
    """Create ``path`` (with its parents) if needed and claim it, for a work folder that
    keeps its name between runs (a pull's ``.partial/<taxonomy>/<version>``): when a sweep
    removed the folder while this process waited for it, it is made again and claimed anew.

    Parameters
    ----------
    path : str or os.PathLike
        The work folder.
    wait : float, optional
        As for :class:`Claim` (default: as long as another live process holds it).

    Returns
    -------
    Claim
    """
    path = Path(path)
    while True:
        try:
            path.mkdir(parents=True, exist_ok=True)
            claim = Claim(path, wait=wait)
        except FileNotFoundError:  # a sweep took an empty parent away meanwhile: again
            continue
        if claim.fd is None:  # pragma: no cover - no flock
            return claim
        try:
            same = os.path.samestat(os.fstat(claim.fd), os.stat(path, follow_symlinks=False))
        except FileNotFoundError:
            same = False
        if same:
            return claim
        claim.release()
