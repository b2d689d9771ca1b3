"""The snapshot errors; the CLI maps each to its exit code (see :mod:`taxoforge.snapshots.cli`).
Download failures are :class:`taxoforge.files.DownloadError` (exit code 8)."""

from __future__ import annotations

__all__ = ["SnapshotError", "SnapshotNotFound", "TaxonomyNotFound", "ChecksumMismatch", "AlteredSnapshot",
           "SnapshotConflict", "ReadOnlyStore", "LockTimeout"]


class SnapshotError(Exception):
    """Base class of every snapshot error (the CLI maps each subclass to an exit code)."""

    exit_code = 1


class SnapshotNotFound(SnapshotError):
    """No such store, taxonomy, version or file."""

    exit_code = 3


class TaxonomyNotFound(SnapshotNotFound):
    """A taxonomy named for use (scoring, loading) is neither a folder nor in the store.
    The message lists what the store has; ``store`` is its URL, ``available`` its
    taxonomies' latest references, ``ref`` what was asked for.

    Parameters
    ----------
    message : str
        What to say.
    ref : str, optional
        ``NAME``, ``NAME@VERSION`` or ``sha256:…``.
    store : str, optional
        The snapshot store.
    available : list[str], optional
        The store's taxonomies, as their latest references.
    """

    def __init__(self, message: str, *, ref: str = "", store: str | None = None,
                 available: list[str] | None = None) -> None:
        super().__init__(message)
        self.ref, self.store, self.available = ref, store, list(available or [])


class ChecksumMismatch(SnapshotError):
    """A checksum, size or content hash does not match."""

    exit_code = 4


class AlteredSnapshot(ChecksumMismatch):
    """A snapshot folder whose tables no longer match its manifest: it must not be cited as
    the version the manifest names. ``problems`` lists what differs.

    Parameters
    ----------
    message : str
        What to say.
    problems : list[str], optional
        What differs from the manifest, one line per file.
    """

    def __init__(self, message: str, *, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = list(problems or [])


class SnapshotConflict(SnapshotError):
    """That version is published with other content (published snapshots are immutable)."""

    exit_code = 5


class ReadOnlyStore(SnapshotError):
    """The store cannot be written (HTTP)."""

    exit_code = 6


class LockTimeout(SnapshotError):
    """Another publisher has held the store's lock for too long."""

    exit_code = 9
