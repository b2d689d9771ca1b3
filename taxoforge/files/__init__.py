"""File I/O, one home for each idea: atomic writes (bytes, text, Parquet, folders), file
checksums, and the one resumable, checksummed download used by the sources and by
snapshot pulls.

* :mod:`.atomic` — :func:`write_bytes_atomic`, :func:`write_text_atomic`,
  :func:`write_parquet_atomic`, :func:`atomic_writer`, :func:`atomic_directory`;
* :mod:`.checksums` — :func:`file_sha256`, :func:`file_checksum`, :func:`parse_checksum`;
* :mod:`.download` — :func:`download` / :func:`download_file`, :class:`DownloadError`,
  :class:`ChecksumError`.
"""

from taxoforge.files.atomic import (
    atomic_directory,
    atomic_writer,
    make_private_dir,
    write_bytes_atomic,
    write_parquet_atomic,
    write_text_atomic,
)
from taxoforge.files.checksums import file_checksum, file_sha256, parse_checksum
from taxoforge.files.download import ChecksumError, DownloadError, Downloaded, download, download_file, is_http_url

__all__ = [
    "atomic_directory", "atomic_writer", "make_private_dir", "write_bytes_atomic", "write_parquet_atomic",
    "write_text_atomic", "file_checksum", "file_sha256", "parse_checksum", "ChecksumError", "DownloadError",
    "Downloaded", "download", "download_file", "is_http_url",
]
