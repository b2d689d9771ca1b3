"""Downloads that survive interruptions: HTTP Range resume into ``<dest>.part``, checksum
verification, then an atomic rename. Used for Catalogue of Life releases and the iNat21
annotation files (snapshot pulls have their own store-aware variant in
:mod:`taxoforge.snapshots.store`)."""

from __future__ import annotations

import hashlib
import os
import re
import time
from pathlib import Path

__all__ = ["ChecksumError", "DownloadError", "download_file", "file_checksum"]


class DownloadError(ValueError):
    """A download could not be completed as asked."""


class ChecksumError(DownloadError):
    """A downloaded file does not match its expected checksum."""



def file_checksum(path: str | os.PathLike, algorithm: str = "sha256") -> str:
    """Hex digest of a file, read in 1 MiB blocks."""
    h = hashlib.new(algorithm)
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _parse_checksum(checksum: str) -> tuple[str, str]:
    if ":" in checksum:
        algo, hexd = checksum.split(":", 1)
        return algo.lower(), hexd.lower()
    hexd = checksum.lower()
    algo = {64: "sha256", 32: "md5", 40: "sha1", 128: "sha512"}.get(len(hexd))
    if algo is None:
        raise ValueError(f"cannot tell the algorithm of checksum {checksum!r}; write it as 'sha256:<hex>'")
    return algo, hexd


def download_file(url: str, dest: str | os.PathLike, *, checksum: str | None = None,
                     retries: int = 5, timeout: float = 60.0, chunk_size: int = 1 << 16,
                     backoff: float = 0.5) -> Path:
    """Download ``url`` to ``dest`` with resume and checksum verification.

    The body goes to ``<dest>.part``; an interrupted transfer is resumed with an HTTP
    ``Range`` request (up to ``retries`` times; a server that ignores ``Range`` restarts
    the file). When complete, the file is verified against ``checksum``
    (``"sha256:<hex>"``, ``"md5:<hex>"`` or bare hex) and renamed to ``dest``. An existing
    ``dest`` with the right checksum is not downloaded again.

    Raises
    ------
    ChecksumError
        The finished download does not match (the partial file is removed).
    requests.HTTPError, ConnectionError
        The server refused, or the transfer failed more than ``retries`` times.
    """
    import requests

    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    algo_hex = _parse_checksum(checksum) if checksum else None
    if dest.exists():
        if algo_hex is None or file_checksum(dest, algo_hex[0]) == algo_hex[1]:
            return dest
    part = dest.with_name(dest.name + ".part")
    attempt = 0
    while True:
        have = part.stat().st_size if part.exists() else 0
        # identity encoding: byte offsets of Range must be offsets in the stored file
        headers = {"Accept-Encoding": "identity", **({"Range": f"bytes={have}-"} if have else {})}
        try:
            with requests.get(url, headers=headers, stream=True, timeout=timeout) as r:
                if r.status_code == 416 and have:
                    break  # nothing left to fetch: the partial file is complete
                r.raise_for_status()
                mode = "ab"
                if r.status_code == 206:
                    m = re.match(r"bytes (\d+)-", r.headers.get("Content-Range", ""))
                    if not m or int(m.group(1)) != have:
                        mode = "wb" if not m or int(m.group(1)) == 0 else None
                        if mode is None:
                            raise DownloadError(f"{url}: server resumed at {m.group(1)}, expected {have}")
                else:
                    mode = "wb"  # full body: start over
                with open(part, mode) as fh:
                    for chunk in r.iter_content(chunk_size=chunk_size):
                        fh.write(chunk)
                total = r.headers.get("Content-Length")
                if total is not None and r.status_code == 200 and part.stat().st_size != int(total):
                    raise requests.exceptions.ChunkedEncodingError("short body")
            break
        except (requests.exceptions.ConnectionError, requests.exceptions.ChunkedEncodingError,
                requests.exceptions.Timeout) as e:
            attempt += 1
            if attempt > retries:
                raise ConnectionError(f"{url}: download failed after {retries} retries ({e}); "
                                      f"partial file kept at {part} for a later resume") from e
            time.sleep(backoff * attempt)
    if algo_hex is not None:
        got = file_checksum(part, algo_hex[0])
        if got != algo_hex[1]:
            part.unlink(missing_ok=True)
            raise ChecksumError(f"{url}: {algo_hex[0]} of the download is {got}, expected {algo_hex[1]}")
    os.replace(part, dest)
    return dest
