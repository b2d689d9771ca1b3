"""The files of a drop folder (a folder people put files into for a service to pick up),
found so that one bad entry never stops the others.

:func:`scan_drop_folder` walks the folder without following links to folders (a link loop
never ends a walk) and lists the regular files with the suffixes asked for, old enough to be
complete, by their path relative to the folder. What it cannot take it reports, one reason
each, and goes on with the rest:

* a name that is not UTF-8 (``caf\\xe9\\xff.jsonl`` written by a Latin-1 tool): it could not be
  named in a run, a partition key, a log or a database, so it is skipped, shown with its
  bytes escaped, and the message says to rename it;
* a FIFO, a device or a socket with the suffix (reading it would wait forever);
* a file that vanished or cannot be examined between the listing and its ``stat``, a folder
  that cannot be read.
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["DropFolderScan", "scan_drop_folder"]


@dataclass
class DropFolderScan:
    """What :func:`scan_drop_folder` found.

    Attributes
    ----------
    files : dict
        Path relative to the folder (``/``-separated) → ``"<mtime ns>-<size>"``.
    skipped : list of (str, str)
        ``(what, why)`` of every entry left out for a reason a person should hear (too young
        files and other suffixes are not listed).
    """

    files: dict[str, str] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)


def _shown(path: str) -> str:
    """A path as text whatever its bytes: undecodable bytes as ``\\xNN``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def scan_drop_folder(folder: str | os.PathLike, suffixes, *, min_age_s: float = 2.0,
                     now: float | None = None) -> DropFolderScan:
    """The regular files under ``folder`` with one of ``suffixes`` (lower case, with the dot),
    modified at least ``min_age_s`` seconds ago, hidden files and folders left out (module
    docstring).

    Parameters
    ----------
    folder : str or os.PathLike
        The drop folder.
    suffixes : iterable of str
        The suffixes wanted (``.jsonl`` …).
    min_age_s : float, optional
        Files modified more recently may still be being written: left for the next scan.
    now : float, optional
        The time to measure ages from (default: now).

    Returns
    -------
    DropFolderScan
    """
    folder = Path(folder)
    suffixes = {s.lower() for s in suffixes}
    now = time.time() if now is None else now
    out = DropFolderScan()

    def unreadable(e: OSError) -> None:
        rel = os.path.relpath(e.filename, folder) if e.filename else "?"
        out.skipped.append((_shown(rel), f"a folder that cannot be read ({e.strerror or e}): its files are not seen"))

    for dirpath, dirnames, filenames in os.walk(folder, onerror=unreadable, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.startswith(".") or os.path.splitext(name)[1].lower() not in suffixes:
                continue
            full = os.path.join(dirpath, name)
            rel = Path(os.path.relpath(full, folder)).as_posix()
            try:
                rel.encode("utf-8")
            except UnicodeEncodeError:
                out.skipped.append((_shown(rel), "its name is not UTF-8 text, so it cannot be named in a run: rename "
                                                 "it (e.g. convmv -f latin1 -t utf8)"))
                continue
            try:
                st = os.stat(full)
            except OSError as e:
                out.skipped.append((rel, f"cannot be examined ({e.strerror or e})"))
                continue
            if not stat.S_ISREG(st.st_mode):
                out.skipped.append((rel, "not a regular file (a FIFO, a device or a socket): never read"))
                continue
            if now - st.st_mtime < min_age_s:
                continue
            out.files[rel] = f"{st.st_mtime_ns}-{st.st_size}"
    return out
