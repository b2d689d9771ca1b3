"""File I/O, one home for each idea: atomic writes (bytes, text, Parquet, folders), file
checksums, and the one resumable, checksummed download used by the sources and by
snapshot pulls.

* :mod:`.atomic` — :func:`write_bytes_atomic`, :func:`write_text_atomic`,
  :func:`write_parquet_atomic`, :func:`atomic_writer`, :func:`atomic_directory`,
  :func:`check_replaceable`; :mod:`.debris` — work of killed runs claimed and swept;
* :mod:`.checksums` — :func:`file_sha256`, :func:`file_checksum`, :func:`file_record`, :func:`parse_checksum`;
* :mod:`.download` — :func:`download` / :func:`download_file`, :func:`fetch_bytes` (a bounded
  read into memory), :func:`cache_path`; :mod:`.transport` — one checked answer from an HTTP
  server or an fsspec filesystem; :mod:`.deadline` — :class:`Deadline`, a whole transfer's
  time limit; :mod:`.retry` — :class:`RetryPolicy`, the one way of waiting for a server;
  :mod:`.errors` — :class:`DownloadError`, :class:`ChecksumError`, :class:`LocalFileError`;
* :mod:`.paths` — :func:`path_inside` for paths built from names that came from outside,
  :func:`open_regular` (a FIFO, a device or a folder refused by name, never waited on);
* :mod:`.archives` — :func:`~.archives.safe_extract_zip` (path escapes, links, zip bombs and
  size limits refuse the archive), :func:`~.archives.open_decompressed` (gzip, bzip2, xz by
  magic bytes), :func:`~.archives.single_member` (two candidates are an error, never a guess).
"""

from taxoforge.files.atomic import (
    atomic_directory,
    check_can_create_in,
    check_output_folder,
    check_replaceable,
    atomic_writer,
    make_private_dir,
    write_bytes_atomic,
    write_parquet_atomic,
    write_text_atomic,
)
from taxoforge.files.checksums import file_checksum, file_record, file_sha256, parse_checksum
from taxoforge.files.deadline import Deadline
from taxoforge.files.download import (
    DEFAULT_MIN_RATE,
    RETRY_STATUSES,
    ChecksumError,
    Downloaded,
    DownloadError,
    cache_path,
    download,
    download_file,
    fetch_bytes,
    is_http_url,
    retry_after_seconds,
)
from taxoforge.files.errors import EXIT_FILE_SYSTEM, LocalFileError
from taxoforge.files.retry import RetryPolicy
from taxoforge.files.transport import MAX_RETRY_AFTER
from taxoforge.files.paths import (FileTooLarge, NotARegularFile, UnsafePath, check_regular, default_cache_dir, open_regular,
                                   path_inside, read_regular_file, user_data_dir)

__all__ = [
    "atomic_directory", "check_can_create_in", "check_output_folder", "check_replaceable", "atomic_writer", "make_private_dir",
    "write_bytes_atomic", "write_parquet_atomic",
    "write_text_atomic", "file_checksum", "file_sha256", "file_record", "parse_checksum", "ChecksumError", "DownloadError",
    "Downloaded", "download", "download_file", "is_http_url", "cache_path", "retry_after_seconds", "RETRY_STATUSES",
    "UnsafePath", "FileTooLarge", "NotARegularFile", "open_regular", "check_regular", "path_inside", "read_regular_file",
    "default_cache_dir", "user_data_dir", "fetch_bytes", "Deadline", "RetryPolicy", "LocalFileError",
    "EXIT_FILE_SYSTEM", "MAX_RETRY_AFTER", "DEFAULT_MIN_RATE",
]
