"""Download a snapshot from a store into a local store, resuming and verifying.

Algorithm
    1. Resolve ``NAME[@VERSION]`` in the source store's ``index.json`` (latest by default).
    2. If the local store already has that version and it verifies, stop (``present``).
    3. Fetch ``manifest.json`` and check its SHA-256 against the index.
    4. For every file of the manifest, download into
       ``<local store>/.partial/<name>/<version>/<file>.part``. When a ``.part`` is left by
       an interrupted run, ask only for the missing bytes (HTTP ``Range: bytes=N-``; a
       seek on other filesystems); a server that ignores Range gets the file from the
       start. A connection dropped mid-file is retried ``retries`` times, each time
       resuming where it stopped; after that the ``.part`` is kept so the next ``pull``
       resumes it.
    5. Check each file's size and SHA-256 against the manifest. A mismatch deletes the
       file and refuses the snapshot (:class:`ChecksumMismatch`) — after one clean retry
       when the bad file had been resumed from an earlier run's ``.part``.
    6. Move the complete folder into the local store under its lock and add it to the
       local ``index.json``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from taxoforge.snapshots.manifest import MANIFEST_NAME, SnapshotError, parse_manifest, read_manifest
from taxoforge.snapshots.store import ChecksumMismatch, SnapshotNotFound, SnapshotStore
from taxoforge.snapshots.verify import verify_folder

__all__ = ["pull", "PullResult", "DownloadError"]


class DownloadError(SnapshotError):
    exit_code = 8


@dataclass
class PullResult:
    taxonomy: str
    version: str
    status: str  # "pulled" | "present"
    path: Path
    bytes_downloaded: int = 0
    resumed: list[str] = field(default_factory=list)  # files continued from an earlier .part
    source: str = ""

    @property
    def ref(self) -> str:
        return f"{self.taxonomy}@{self.version}"

    def as_dict(self) -> dict:
        return {"taxonomy": self.taxonomy, "version": self.version, "ref": self.ref, "status": self.status,
                "path": str(self.path), "bytes_downloaded": self.bytes_downloaded, "resumed": self.resumed,
                "source": self.source}


_TRANSIENT = (ConnectionError, TimeoutError, OSError)


def _transient_errors() -> tuple:
    try:
        import requests
        import urllib3

        return (*_TRANSIENT, requests.RequestException, urllib3.exceptions.HTTPError)
    except ImportError:  # pragma: no cover
        return _TRANSIENT


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def _download(src: SnapshotStore, rel: str, part: Path, size: int | None, bar, retries: int,
              backoff: float) -> tuple[int, bool]:
    """Fetch ``rel`` into ``part`` (resuming). Returns (bytes fetched now, resumed?)."""
    fetched = 0
    resumed_any = False
    attempt = 0
    transient = _transient_errors()
    while True:
        offset = part.stat().st_size if part.exists() else 0
        if size is not None and offset > size:
            bar.update(-offset)
            part.unlink()
            offset = 0
        if size is not None and offset == size:
            return fetched, resumed_any
        try:
            chunks, honoured = src.open_stream(rel, offset)
            if offset and not honoured:
                bar.update(-offset)
                offset = 0
            resumed_any = resumed_any or (offset > 0)
            with open(part, "ab" if offset else "wb") as f:
                for chunk in chunks:
                    f.write(chunk)
                    fetched += len(chunk)
                    bar.update(len(chunk))
            got = part.stat().st_size
            if size is None or got == size:
                return fetched, resumed_any
            if got > size:
                return fetched, resumed_any  # the checksum step refuses it
            raise ConnectionError(f"connection closed after {got} of {size} bytes")
        except SnapshotError:
            raise
        except transient as e:
            attempt += 1
            have = part.stat().st_size if part.exists() else 0
            if attempt > retries:
                raise DownloadError(
                    f"{src.location(rel)}: download interrupted at {have} of {size} bytes after "
                    f"{attempt} attempt(s) ({e}); run the same pull again to resume from byte {have}") from e
            time.sleep(backoff * 2 ** (attempt - 1))


def pull(ref: str, *, store: str | os.PathLike | SnapshotStore, dest: str | os.PathLike | SnapshotStore | None = None,
         progress: bool = True, retries: int = 3, backoff: float = 0.2) -> PullResult:
    """Download ``ref`` (``NAME`` or ``NAME@VERSION``) from ``store`` into the local store
    ``dest`` (default ``$TAXOFORGE_SNAPSHOT_STORE`` or ``data/snapshots``). See the
    module doc. Raises :class:`SnapshotNotFound`, :class:`ChecksumMismatch`,
    :class:`DownloadError`."""
    from tqdm.auto import tqdm

    src = store if isinstance(store, SnapshotStore) else SnapshotStore(store)
    dst = dest if isinstance(dest, SnapshotStore) else SnapshotStore(dest)
    if not dst.is_local:
        raise SnapshotError(f"pull destination {dst.url} must be a local folder")
    name, entry = src.resolve(ref)
    version = entry["version"]
    target = dst.local_dir(name, version)
    if src.is_local and src.root.resolve() == dst.root.resolve():
        rep = verify_folder(target)
        if not rep.ok:
            raise ChecksumMismatch(f"{target}: " + "; ".join(rep.problems))
        return PullResult(name, version, "present", target, source=src.url)
    if (target / MANIFEST_NAME).exists():
        local = read_manifest(target)
        if local["content_sha256"] == entry.get("content_sha256", local["content_sha256"]):
            rep = verify_folder(target, deep=False)
            if rep.ok:
                if not any(e["version"] == version for e in dst.versions(name)):
                    dst.install(target)  # registers it in the local index (no-op copy)
                return PullResult(name, version, "present", target, source=src.url)
            raise ChecksumMismatch(f"{target}: the local copy of {name}@{version} is damaged ("
                                   + "; ".join(rep.problems) + "); delete that folder and pull again")
    mbytes = src.read_bytes(f"{name}/{version}/{MANIFEST_NAME}")
    want = entry.get("manifest_sha256")
    if want and hashlib.sha256(mbytes).hexdigest() != want:
        raise ChecksumMismatch(f"{src.location(f'{name}/{version}/{MANIFEST_NAME}')}: sha256 "
                               f"{hashlib.sha256(mbytes).hexdigest()} but the store index says {want}")
    manifest = parse_manifest(mbytes, src.location(f"{name}/{version}/{MANIFEST_NAME}"))
    if manifest["taxonomy"] != name or manifest["version"] != version:
        raise SnapshotError(f"{src.location(f'{name}/{version}')}: manifest names "
                            f"{manifest['taxonomy']}@{manifest['version']}, expected {name}@{version}")
    work = dst.root / ".partial" / name / version
    work.mkdir(parents=True, exist_ok=True)
    files = sorted(manifest["files"].items())
    total = sum(int(m.get("size") or 0) for _, m in files)
    have = 0
    for fname, meta in files:
        if (work / fname).exists():
            have += (work / fname).stat().st_size
        elif (work / f"{fname}.part").exists():
            have += (work / f"{fname}.part").stat().st_size
    downloaded = 0
    resumed: list[str] = []
    with tqdm(total=total, initial=have, unit="B", unit_scale=True, unit_divisor=1024,
              desc=f"{name}@{version}", disable=not progress, leave=False) as bar:
        for fname, meta in files:
            final = work / fname
            rel = f"{name}/{version}/{fname}"
            if final.exists() and _sha256(final) == meta["sha256"]:
                continue
            final.unlink(missing_ok=True)
            part = work / f"{fname}.part"
            for clean_retry in (False, True):
                n, was_resumed = _download(src, rel, part, meta.get("size"), bar, retries, backoff)
                downloaded += n
                got = _sha256(part)
                if got == meta["sha256"]:
                    if was_resumed:
                        resumed.append(fname)
                    os.replace(part, final)
                    break
                bar.update(-part.stat().st_size)
                part.unlink()
                if not was_resumed or clean_retry:
                    raise ChecksumMismatch(
                        f"{src.location(rel)}: sha256 {got} but the manifest says {meta['sha256']} — the file "
                        f"is corrupted; it was deleted and {name}@{version} was not installed")
    (work / MANIFEST_NAME).write_bytes(mbytes)
    result = dst.install(work, move=True)
    shutil.rmtree(work, ignore_errors=True)
    for p in (work.parent, work.parent.parent):
        try:
            p.rmdir()
        except OSError:
            break
    return PullResult(name, version, "pulled" if result.status == "published" else "present", target,
                      downloaded, resumed, src.url)


__all__ += ["SnapshotNotFound", "ChecksumMismatch"]
