"""The download errors: one :class:`DownloadError` for everything that stops a download,
and its :class:`ChecksumError` for a file that arrived but does not verify."""

from __future__ import annotations

__all__ = ["DownloadError", "ChecksumError"]


class DownloadError(Exception):
    """A download could not be completed as asked; the message names the URL."""

    exit_code = 8

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ChecksumError(DownloadError):
    """A downloaded file does not match its expected checksum (it was deleted)."""

    exit_code = 4

    def __init__(self, message: str, *, algorithm: str, got: str, expected: str) -> None:
        super().__init__(message)
        self.algorithm, self.got, self.expected = algorithm, got, expected
