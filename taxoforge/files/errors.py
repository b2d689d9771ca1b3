"""The download errors: one :class:`DownloadError` for everything that stops a download,
its :class:`ChecksumError` for a file that arrived but does not verify, and
:class:`LocalFileError` for the local side (no space left, a file where a folder goes …)."""

from __future__ import annotations

__all__ = ["DownloadError", "ChecksumError", "LocalFileError", "EXIT_FILE_SYSTEM"]

#: exit code of a command that could not write (or read) a local file: no space left on the
#: device, a file where a folder goes, no permission, a symlink or the working folder given as
#: the folder to replace; the message names the path
EXIT_FILE_SYSTEM = 11


class DownloadError(Exception):
    """A download could not be completed as asked; the message names the URL.

    Parameters
    ----------
    message : str
        What to say.
    status : int, optional
        The HTTP status that ended it, if any.
    """

    exit_code = 8

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ChecksumError(DownloadError):
    """A downloaded file does not match its expected checksum or size (it was deleted).

    Parameters
    ----------
    message : str
        What to say.
    algorithm : str
        The checksum's algorithm.
    got : str
        The checksum of what arrived.
    expected : str
        The checksum asked for.
    """

    exit_code = 4

    def __init__(self, message: str, *, algorithm: str, got: str, expected: str) -> None:
        super().__init__(message)
        self.algorithm, self.got, self.expected = algorithm, got, expected


class LocalFileError(OSError):
    """A local file could not be written or read (``filename`` names it): never retried as
    if the server had failed. Built like :class:`OSError`: ``(errno, strerror, filename)``."""

    exit_code = EXIT_FILE_SYSTEM

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}" if self.filename else super().__str__()
