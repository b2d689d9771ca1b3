"""Download a snapshot from a store into a local store, resuming and verifying.

Algorithm
    1. Resolve ``NAME[@VERSION]`` in the source store's ``index.json`` (latest by default).
    2. If the local store already has that version and it verifies, stop (``present``).
    3. Fetch ``manifest.json`` and check its SHA-256 against the index.
    4. Download every file of the manifest into ``<local store>/.partial/<name>/<version>/``
       with :func:`taxoforge.files.download`: an interrupted run's ``.part`` is resumed
       (HTTP ``Range: bytes=N-``; a seek on other filesystems), a dropped connection is
       retried ``retries`` times, and the file's size and SHA-256 are checked against the
       manifest. A mismatch deletes the file and refuses the snapshot
       (:class:`ChecksumMismatch`) — after one clean retry when the bad file had been
       resumed from an earlier run's ``.part``.
    6. Move the complete folder into the local store under its lock and add it to the
       local ``index.json``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from taxoforge.files import ChecksumError, DownloadError, download, write_bytes_atomic
from taxoforge.snapshots.errors import ChecksumMismatch, SnapshotError, SnapshotNotFound
from taxoforge.snapshots.manifest import MANIFEST_NAME, parse_manifest, read_manifest
from taxoforge.snapshots.store import SnapshotStore
from taxoforge.snapshots.verify import verify_folder

__all__ = ["pull", "PullResult", "DownloadError", "SnapshotNotFound", "ChecksumMismatch"]


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


def _fetch(src: SnapshotStore, rel: str, dest: Path, meta: dict, bar, retries: int, backoff: float):
    """Download one file of a snapshot into ``dest``, verified against its manifest entry."""
    try:
        return download(src.location(rel), dest, checksum=f"sha256:{meta['sha256']}", size=meta.get("size"),
                        retries=retries, backoff=backoff, storage_options=src.storage_options,
                        progress=bar.update, again="run the same pull again")
    except ChecksumError as e:
        raise ChecksumMismatch(
            f"{src.location(rel)}: sha256 {e.got} but the manifest says {meta['sha256']} — the file "
            f"is corrupted; it was deleted and the snapshot was not installed") from e
    except DownloadError as e:
        if e.status == 404:
            raise SnapshotNotFound(f"{src.location(rel)}: not found (the store lists it in a manifest)") from e
        raise


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
    work = dst.local_path(".partial", name, version)
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
            got = _fetch(src, f"{name}/{version}/{fname}", work / fname, meta, bar, retries, backoff)
            downloaded += got.bytes_fetched
            if got.resumed:
                resumed.append(fname)
    for p in work.iterdir():  # locks and records of the downloads: not part of the snapshot
        if p.name not in manifest["files"]:
            p.unlink()
    write_bytes_atomic(work / MANIFEST_NAME, mbytes)
    result = dst.install(work, move=True)
    shutil.rmtree(work, ignore_errors=True)
    for p in (work.parent, work.parent.parent):
        try:
            p.rmdir()
        except OSError:
            break
    return PullResult(name, version, "pulled" if result.status == "published" else "present", target,
                      downloaded, resumed, src.url)

