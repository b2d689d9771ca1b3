"""Checksums of files: ``sha256`` (and the other :mod:`hashlib` algorithms), read in 1 MiB
blocks, and the ``"algorithm:hex"`` spelling that configs and source metadata use."""

from __future__ import annotations

import hashlib
import os

__all__ = ["file_checksum", "file_sha256", "parse_checksum", "file_record"]

_BY_LENGTH = {64: "sha256", 32: "md5", 40: "sha1", 128: "sha512"}


def file_checksum(path: str | os.PathLike, algorithm: str = "sha256") -> str:
    """Hex digest of the file at ``path``.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    algorithm : str, optional
        A :mod:`hashlib` algorithm name.

    Returns
    -------
    str
        Hex digest of the file at ``path``.
    """
    h = hashlib.new(algorithm)
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_sha256(path: str | os.PathLike) -> str:
    """SHA-256 (hex) of the file at ``path``.

    Parameters
    ----------
    path : str or os.PathLike
        The file.

    Returns
    -------
    str
        SHA-256 (hex) of the file at ``path``.
    """
    return file_checksum(path, "sha256")


def file_record(path: str | os.PathLike, role: str | None = None) -> dict:
    """What a record says of an input file: its path as given, ``bytes`` and ``sha256`` (and
    its ``role`` when given), so the result can be checked against the very bytes it read.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    role : str, optional
        What the file was to the run (``output``, ``judge``, ``label_set`` …).

    Returns
    -------
    dict
    """
    return {"file": os.fspath(path), **({"role": role} if role else {}), "bytes": os.stat(path).st_size,
            "sha256": file_sha256(path)}


def parse_checksum(checksum: str) -> tuple[str, str]:
    """``"sha256:<hex>"`` (or ``md5:``, ``sha1:``, ``sha512:`` …, or bare hex whose length
    tells the algorithm) → ``(algorithm, lowercase hex)``.

    Parameters
    ----------
    checksum : str
        The checksum to parse.

    Returns
    -------
    tuple[str, str]
        ``"sha256:<hex>"`` (or ``md5:``, ``sha1:``, ``sha512:`` …, or bare hex whose
        length tells the algorithm) → ``(algorithm, lowercase hex)``.
    """
    if ":" in checksum:
        algo, hexd = checksum.split(":", 1)
        algo, hexd = algo.strip().lower(), hexd.strip().lower()
    else:
        hexd = checksum.strip().lower()
        algo = _BY_LENGTH.get(len(hexd))
        if algo is None:
            raise ValueError(f"cannot tell the algorithm of checksum {checksum!r}; write it as 'sha256:<hex>'")
    if algo not in hashlib.algorithms_available:
        raise ValueError(f"checksum {checksum!r}: unknown algorithm {algo!r}")
    if not hexd or any(c not in "0123456789abcdef" for c in hexd):
        raise ValueError(f"checksum {checksum!r}: expected hexadecimal digits after the algorithm")
    return algo, hexd
