"""Archives and compressed files from outside, opened safely: one home for what the ColDP,
iNat21 and model-package readers share.

* :func:`safe_extract_zip` — extract members of a zip after checking every member: an
  absolute name, ``..``, a drive letter or a symbolic link refuses the whole archive, and so
  does an encrypted member, a member expanding more than ``max_ratio`` times (a zip bomb) or
  members together larger than ``max_bytes`` or the free space; members are streamed,
  never past their declared size, with their CRC checked;
* :func:`open_decompressed` — a file opened for reading, decompressed by its magic bytes
  (gzip, bzip2, xz) rather than by its name; :func:`is_tar` — whether it is a tar archive;
* :func:`is_macos_metadata` — the ``__MACOSX/``, ``._name`` and ``.DS_Store`` entries that
  macOS adds to archives, never picked as a member to read;
* :func:`single_member` — the one member matching what a reader looks for; two or more are
  an error naming them, never a guess.

Errors are :class:`ArchiveError` (a ``ValueError``) naming the archive and the member;
:data:`DAMAGED` lists what the standard library raises for a truncated or corrupt stream.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import re
import shutil
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import BinaryIO

__all__ = [
    "ArchiveError",
    "safe_extract_zip",
    "open_decompressed",
    "is_tar",
    "is_macos_metadata",
    "single_member",
    "member_path",
    "DAMAGED",
    "NOT_DAMAGE",
    "TAR_SUFFIXES",
    "DEFAULT_MAX_EXTRACT_BYTES",
    "DEFAULT_MAX_RATIO",
]

#: Most bytes the extracted members of a zip may hold together.
DEFAULT_MAX_EXTRACT_BYTES = 32 * 2**30
#: Highest compression ratio (uncompressed / compressed) of a member. Real data tables
#: compress 3–15×; a zip bomb, 1000× and more.
DEFAULT_MAX_RATIO = 100.0
_RATIO_FLOOR = 1 << 20  # members below 1 MiB are never refused for their ratio
_MAX_MEMBERS = 100_000

#: Magic bytes of the compressed formats :func:`open_decompressed` recognises.
_MAGIC = ((b"\x1f\x8b", "gzip", gzip.open), (b"BZh", "bzip2", bz2.open), (b"\xfd7zXZ\x00", "xz", lzma.open))
#: File name endings of tar archives, compressed or not.
TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
#: What a truncated or corrupt archive or compressed stream raises, by library.
DAMAGED = (EOFError, tarfile.TarError, zlib.error, gzip.BadGzipFile, OSError, lzma.LZMAError)
#: The ``OSError`` subclasses among :data:`DAMAGED` that say nothing about the data.
NOT_DAMAGE = (PermissionError, FileNotFoundError, IsADirectoryError)


class ArchiveError(ValueError):
    """An archive refused or unreadable; the message names the archive and the member."""


def open_decompressed(path: str | os.PathLike) -> tuple[BinaryIO, str]:
    """Open ``path`` for binary reading, decompressed by its magic bytes.

    Parameters
    ----------
    path : str or os.PathLike
        The file; its name does not matter.

    Returns
    -------
    stream : BinaryIO
        The decompressed bytes (the file itself when it is not compressed).
    kind : str
        ``"gzip"``, ``"bzip2"``, ``"xz"`` or ``"file"``.
    """
    with open(path, "rb") as fh:
        head = fh.read(6)
    for magic, kind, opener in _MAGIC:
        if head.startswith(magic):
            return opener(path, "rb"), kind
    return open(path, "rb"), "file"


def is_tar(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a tar archive: by its name, else by the ``ustar`` mark of its first
    block once decompressed.

    Parameters
    ----------
    path : str or os.PathLike
        The file.

    Returns
    -------
    bool
        True for a tar archive (plain, gzip, bzip2 or xz); a damaged stream is not one.
    """
    path = Path(path)
    if path.name.lower().endswith(TAR_SUFFIXES):
        return True
    fh, _ = open_decompressed(path)
    with fh:
        try:
            block = fh.read(512)
        except DAMAGED:
            return False
    return len(block) == 512 and block[257:262] == b"ustar"


def is_macos_metadata(name: str) -> bool:
    """Whether an archive member is metadata macOS adds (``__MACOSX/…``, ``._name``, ``.DS_Store``).

    Parameters
    ----------
    name : str
        The member's path inside the archive, ``/``-separated.

    Returns
    -------
    bool
        True when no reader should ever pick the member.

    Examples
    --------
    >>> [is_macos_metadata(n) for n in ("__MACOSX/data/._Taxon.tsv", "data/._Taxon.tsv", "data/Taxon.tsv")]
    [True, True, False]
    """
    parts = PurePosixPath(name).parts
    return "__MACOSX" in parts or any(p.startswith("._") for p in parts) or PurePosixPath(name).name == ".DS_Store"


def single_member(archive: str | os.PathLike, candidates: Iterable[str], what: str, hint: str = "") -> str | None:
    """The one member among ``candidates`` (macOS metadata left out), or None when there is none.

    Parameters
    ----------
    archive : str or os.PathLike
        The archive or folder, for the message.
    candidates : iterable of str
        The members that could be what the reader looks for.
    what : str
        What the candidates are, in the plural, for the message (``"Taxon tables"``).
    hint : str, optional
        How to resolve the ambiguity, appended to the message.

    Returns
    -------
    str or None
        The member.

    Raises
    ------
    ArchiveError
        When two or more members qualify: the reader never guesses between them.
    """
    found = sorted(c for c in candidates if not is_macos_metadata(c))
    if len(found) > 1:
        raise ArchiveError(f"{archive}: holds {len(found)} {what} ({', '.join(found)}); refusing to guess"
                           + (f": {hint}" if hint else ""))
    return found[0] if found else None


def member_path(root: str | os.PathLike, name: str) -> Path:
    """Where member ``name`` (``/`` or ``\\``-separated) lies under ``root``.

    Parameters
    ----------
    root : str or os.PathLike
        The folder the archive was extracted into.
    name : str
        The member's name in the archive.

    Returns
    -------
    pathlib.Path
        ``root`` joined with the member's parts.
    """
    return Path(root).joinpath(*re.split(r"[\\/]+", name))


def _check_member_names(zf: zipfile.ZipFile, archive: Path, dest: Path) -> None:
    """Refuse the whole archive if any member would land outside ``dest`` or is a link."""
    root = dest.resolve()
    members = zf.infolist()
    if len(members) > _MAX_MEMBERS:
        raise ArchiveError(f"{archive}: {len(members)} members, more than {_MAX_MEMBERS}; refusing the archive")
    for m in members:
        name = m.filename
        parts = re.split(r"[\\/]+", name)
        if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name) or ".." in parts:
            raise ArchiveError(f"{archive}: member {name!r} would be extracted outside {dest} "
                               "(absolute path or '..'); refusing the archive")
        if stat.S_ISLNK(m.external_attr >> 16):
            raise ArchiveError(f"{archive}: member {name!r} is a symbolic link; refusing the archive")
        target = (root / name).resolve()
        if target != root and root not in target.parents:
            raise ArchiveError(f"{archive}: member {name!r} resolves outside {dest}; refusing the archive")


def _check_sizes(archive: Path, infos: list[zipfile.ZipInfo], dest: Path, max_bytes: int, max_ratio: float) -> None:
    """Refuse encrypted members, members expanding past ``max_ratio`` and a total past
    ``max_bytes`` or the free space of ``dest``, from the sizes the archive declares."""
    total = 0
    for m in infos:
        if m.flag_bits & 0x1:
            raise ArchiveError(f"{archive}: member {m.filename!r} is encrypted; refusing the archive")
        ratio = m.file_size / max(m.compress_size, 1)
        if m.file_size > _RATIO_FLOOR and ratio > max_ratio:
            raise ArchiveError(
                f"{archive}: member {m.filename!r} would expand {m.compress_size:,} bytes to {m.file_size:,} "
                f"(ratio {ratio:,.0f}, more than max_ratio={max_ratio:g}): a zip bomb or a damaged archive; "
                "refusing the archive (raise max_ratio if the file is genuine)")
        total += m.file_size
    if total > max_bytes:
        raise ArchiveError(f"{archive}: the members to extract hold {total:,} bytes, more than "
                           f"max_extract_bytes={max_bytes:,}; refusing the archive (raise the limit if it is genuine)")
    free = shutil.disk_usage(dest).free
    if total > free:
        raise ArchiveError(f"{archive}: extracting needs {total:,} bytes but {dest} has {free:,} free")


def _extract_member(zf: zipfile.ZipFile, m: zipfile.ZipInfo, root: Path, archive: Path) -> Path:
    """Stream one member to ``root/<name>``, never more than its declared size (zipfile
    stops there and checks the CRC); a damaged member is an error naming it."""
    target = member_path(root, m.filename)
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + ".part")
    written = 0
    try:
        with zf.open(m) as src, open(part, "wb") as out:
            while chunk := src.read(1 << 20):
                written += len(chunk)
                if written > m.file_size:
                    raise ArchiveError(f"{archive}: member {m.filename!r} holds more than its declared "
                                       f"{m.file_size:,} bytes; refusing the archive")
                out.write(chunk)
        os.replace(part, target)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as e:
        raise ArchiveError(f"{archive}: member {m.filename!r} is damaged or truncated ({e})") from e
    finally:
        part.unlink(missing_ok=True)
    return target


def safe_extract_zip(archive: str | os.PathLike, dest: str | os.PathLike, *, members: Iterable[str] | None = None,
                     max_bytes: int = DEFAULT_MAX_EXTRACT_BYTES, max_ratio: float = DEFAULT_MAX_RATIO) -> Path:
    """Extract ``members`` (default: every file) of a zip into ``dest``, after checking the archive.

    Refused before anything is written: any member (extracted or not) that is absolute,
    contains ``..``, a drive letter or is a symbolic link; an encrypted member; a member
    expanding more than ``max_ratio`` times (a zip bomb); members together larger than
    ``max_bytes`` or than the free space of ``dest``. A member that turns out damaged, or
    longer than it declared, is an error naming it.

    Parameters
    ----------
    archive : str or os.PathLike
        The zip file.
    dest : str or os.PathLike
        The folder to extract into (created when missing).
    members : iterable of str, optional
        The names of the members to extract; one the archive lacks is an error.
    max_bytes : int, optional
        Most bytes the extracted members may hold together.
    max_ratio : float, optional
        Highest compression ratio of a member larger than 1 MiB.

    Returns
    -------
    pathlib.Path
        ``dest``, resolved; member ``name`` lies at :func:`member_path` ``(dest, name)``.

    Raises
    ------
    ArchiveError
        Naming the archive, the member and the rule it broke.
    """
    archive, dest = Path(archive), Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    root = dest.resolve()
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as e:
        raise ArchiveError(f"{archive}: not a readable zip archive ({e})") from e
    with zf:
        _check_member_names(zf, archive, dest)
        files = [m for m in zf.infolist() if not m.is_dir()]
        if members is not None:
            wanted = set(members)
            files = [m for m in files if m.filename in wanted]
            missing = wanted - {m.filename for m in files}
            if missing:
                raise ArchiveError(f"{archive}: no member(s) {sorted(missing)}")
        _check_sizes(archive, files, root, max_bytes, max_ratio)
        for m in files:
            _extract_member(zf, m, root, archive)
    return root
