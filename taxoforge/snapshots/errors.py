"""The snapshot errors; the CLI maps each to its exit code (see :mod:`taxoforge.snapshots.cli`).
Download failures are :class:`taxoforge.files.DownloadError` (exit code 8)."""

from __future__ import annotations

__all__ = ["SnapshotError", "SnapshotNotFound", "ChecksumMismatch", "SnapshotConflict", "ReadOnlyStore",
           "LockTimeout"]


class SnapshotError(Exception):
    """Base class of every snapshot error (the CLI maps each subclass to an exit code)."""

    exit_code = 1


class SnapshotNotFound(SnapshotError):
    """No such store, taxonomy, version or file."""

    exit_code = 3


class ChecksumMismatch(SnapshotError):
    """A checksum, size or content hash does not match."""

    exit_code = 4


class SnapshotConflict(SnapshotError):
    """That version is published with other content (published snapshots are immutable)."""

    exit_code = 5


class ReadOnlyStore(SnapshotError):
    """The store cannot be written (HTTP)."""

    exit_code = 6


class LockTimeout(SnapshotError):
    """Another publisher has held the store's lock for too long."""

    exit_code = 9
