"""Download a snapshot from a store into a local store, resuming, verifying and bounded.

Algorithm
    1. Resolve ``NAME[@VERSION]`` in the source store's ``index.json`` (latest by default;
       at most :data:`~taxoforge.snapshots.catalogue.MAX_INDEX_BYTES` read).
    2. If the local store already has that version and it verifies, stop (``present``).
    3. Fetch ``manifest.json`` (at most :data:`~taxoforge.snapshots.manifest.MAX_MANIFEST_BYTES`)
       and check its SHA-256 against the index. Every file it names has a size: their sum
       must fit on the local disk, else nothing is downloaded
       (:class:`~taxoforge.files.LocalFileError`, no space left).
    4. Claim ``<local store>/.partial/<name>/<version>/`` (:mod:`taxoforge.files.debris`;
       every pull first sweeps the stale work folders of killed pulls of other versions). Download
       every file of the manifest into it with :func:`taxoforge.files.download`: never more
       bytes than the manifest's size, each attempt under a deadline, redirects to another
       host refused unless ``allow_other_hosts``; an interrupted run's ``.part`` is resumed
       (HTTP ``Range: bytes=N-``; a seek on other filesystems), a dropped connection is
       retried ``retries`` times, and the file's size and SHA-256 are checked against the
       manifest. A mismatch deletes the file and refuses the snapshot
       (:class:`ChecksumMismatch`) — after one clean retry when the bad file had been
       resumed from an earlier run's ``.part``.
    5. Recompute the content hash of the tables received and check it, the row counts and
       the version against the manifest (:func:`~taxoforge.snapshots.verify.verify_folder`):
       files that match their checksums prove only that the store sent what its manifest
       lists, not that the manifest's content hash is theirs (a store listing a 35-byte
       script as its one table, content hash ``000…``). A mismatch installs nothing
       (:class:`ChecksumMismatch`).
    6. Move the complete folder into the local store under its lock and add it to the
       local ``index.json`` (the catalogue's summary of what changed from the version
       before is left to the next publish to that store).

Memory
    While downloading, a pull holds the two documents above and one
    :data:`~taxoforge.files.download.CHUNK_SIZE` chunk at a time, whatever a store sends
    (``docs/security.md`` gives the measured bound, :data:`MAX_PULL_MEMORY`); the check of
    step 5 then reads the tables once, in counted batches that stop at
    :data:`~taxoforge.snapshots.verify.MAX_DECODED_RATIO` times each table's size.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from taxoforge.files import ChecksumError, DownloadError, download, write_bytes_atomic
from taxoforge.files.debris import claim_folder, sweep
from taxoforge.files.download import _require_space
from taxoforge.snapshots.errors import ChecksumMismatch, SnapshotError, SnapshotNotFound
from taxoforge.snapshots.manifest import MANIFEST_NAME, read_manifest
from taxoforge.snapshots.store import SnapshotStore
from taxoforge.snapshots.verify import verify_folder

__all__ = ["pull", "PullResult", "DownloadError", "SnapshotNotFound", "ChecksumMismatch", "MAX_PULL_MEMORY"]

#: the most memory (bytes) a pull takes beyond the interpreter and the modules it loads,
#: whatever the store sends: an index and a manifest at their caps, parsed, and one chunk
#: (measured by ``tests/taxoforge/snapshots/test_pull_bounds.py`` in a child process)
MAX_PULL_MEMORY = 256 << 20


@dataclass
class PullResult:
    """What :func:`pull` did.

    Attributes
    ----------
    taxonomy, version : str
        The snapshot pulled.
    status : str
        ``"pulled"``, or ``"present"`` when the local store had it already.
    path : pathlib.Path
        Its folder in the local store.
    bytes_downloaded : int
        Bytes fetched this time.
    resumed : list of str
        Files continued from an earlier ``.part``.
    source : str
        The store it came from.
    """

    taxonomy: str
    version: str
    status: str  # "pulled" | "present"
    path: Path
    bytes_downloaded: int = 0
    resumed: list[str] = field(default_factory=list)  # files continued from an earlier .part
    source: str = ""

    @property
    def ref(self) -> str:
        """``NAME@VERSION`` of the snapshot."""
        return f"{self.taxonomy}@{self.version}"

    def as_dict(self) -> dict:
        """The result as JSON values (``taxoforge pull --json``).

        Returns
        -------
        dict
            The fields, with ``ref`` and the path as text.
        """
        return {"taxonomy": self.taxonomy, "version": self.version, "ref": self.ref, "status": self.status,
                "path": str(self.path), "bytes_downloaded": self.bytes_downloaded, "resumed": self.resumed,
                "source": self.source}


def _fetch(src: SnapshotStore, name: str, version: str, fname: str, dest: Path, meta: dict, bar, retries: int,
           backoff: float):
    """Download one file of a snapshot into ``dest``, verified against its manifest entry."""
    rel = f"{name}/{version}/{fname}"
    url = str(src.local_path(name, version, fname)) if src.is_local else src.location(rel)  # no link in a store
    options = {**src.transfer_options(), "retries": retries, "backoff": backoff}
    try:
        return download(url, dest, checksum=f"sha256:{meta['sha256']}", size=meta["size"], progress=bar.update,
                        again="run the same pull again", **options)
    except ChecksumError as e:
        what = (f"sha256 {e.got} but the manifest says {meta['sha256']}" if e.algorithm != "size"
                else f"{e} (the manifest says {meta['size']:,} bytes)")
        raise ChecksumMismatch(
            f"{src.location(rel)}: {what} — the file is corrupted; it was deleted and the snapshot was not "
            "installed") from e
    except DownloadError as e:
        if e.status == 404:
            raise SnapshotNotFound(f"{src.location(rel)}: not found (the store lists it in a manifest)") from e
        raise


def _source(store, retries: int, backoff: float, allow_other_hosts: bool) -> SnapshotStore:
    if isinstance(store, SnapshotStore):
        if allow_other_hosts and not store.allow_other_hosts:
            store.allow_other_hosts = True
        return store
    return SnapshotStore(store, retries=retries, backoff=backoff, allow_other_hosts=allow_other_hosts)


def pull(ref: str, *, store: str | os.PathLike | SnapshotStore, dest: str | os.PathLike | SnapshotStore | None = None,
         progress: bool = True, retries: int = 3, backoff: float = 0.2,
         allow_other_hosts: bool = False) -> PullResult:
    """Download ``ref`` (``NAME`` or ``NAME@VERSION``) from ``store`` into the local store
    ``dest`` (default :func:`~taxoforge.snapshots.store.default_store_url`). See the
    module doc. ``allow_other_hosts``: follow the store's redirects to other hosts. Raises
    :class:`SnapshotNotFound`, :class:`ChecksumMismatch`, :class:`DownloadError`,
    :class:`~taxoforge.files.LocalFileError` (no space left …).

    Parameters
    ----------
    ref : str
        ``NAME``, ``NAME@VERSION`` or ``sha256:…``.
    store : str or os.PathLike or SnapshotStore
        The snapshot store.
    dest : str or os.PathLike or SnapshotStore, optional
        The local store (default :func:`~taxoforge.snapshots.store.default_store_url`).
    progress : bool, optional
        Whether to show a progress bar.
    retries : int, optional
        How often to retry.
    backoff : float, optional
        Seconds before the first retry, doubled each time.
    allow_other_hosts : bool, optional
        Follow the store's redirects to other hosts.

    Returns
    -------
    PullResult
        What was pulled, and where it lies.
    """
    from tqdm.auto import tqdm

    src = _source(store, retries, backoff, allow_other_hosts)
    dst = dest if isinstance(dest, SnapshotStore) else SnapshotStore(dest)
    if not dst.is_local:
        raise SnapshotError(f"pull destination {dst.url} must be a local folder")
    name, entry = src.resolve(ref)
    version = entry["version"]
    target = dst.local_dir(name, version)
    partial = dst.local_path(".partial")
    work = dst.local_path(".partial", name, version)
    _sweep_partials(partial, keep=work)  # what killed pulls left, once provably stale
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
                    dst.install(target, diffs=False)  # registers it in the local index (no-op copy)
                return PullResult(name, version, "present", target, source=src.url)
            raise ChecksumMismatch(f"{target}: the local copy of {name}@{version} is damaged ("
                                   + "; ".join(rep.problems) + "); delete that folder and pull again")
    manifest, mbytes = src.manifest_and_bytes(name, version, entry)  # capped, checked against the index
    if manifest["taxonomy"] != name or manifest["version"] != version:
        raise SnapshotError(f"{src.location(f'{name}/{version}')}: manifest names "
                            f"{manifest['taxonomy']}@{manifest['version']}, expected {name}@{version}")
    with claim_folder(work):
        files = sorted(manifest["files"].items())
        have = {fname: _have(work, fname) for fname, _ in files}
        _require_space(work, sum(meta["size"] - min(have[f], meta["size"]) for f, meta in files))
        downloaded = 0
        resumed: list[str] = []
        with tqdm(total=sum(m["size"] for _, m in files), initial=sum(have.values()), unit="B", unit_scale=True,
                  unit_divisor=1024, desc=f"{name}@{version}", disable=not progress, leave=False) as bar:
            for fname, meta in files:
                got = _fetch(src, name, version, fname, work / fname, meta, bar, retries, backoff)
                downloaded += got.bytes_fetched
                if got.resumed:
                    resumed.append(fname)
        for p in work.iterdir():  # locks and records of the downloads: not part of the snapshot
            if p.name not in manifest["files"]:
                p.unlink()
        write_bytes_atomic(work / MANIFEST_NAME, mbytes)
        # every file matches the manifest; now the manifest's content hash is recomputed from the
        # tables received before anything is installed or called verified (a store can list any
        # bytes with their own checksums, and any content hash)
        rep = verify_folder(work, deep=True, bounded=True)
        if not rep.ok:
            shutil.rmtree(work, ignore_errors=True)
            raise ChecksumMismatch(f"{src.location(f'{name}/{version}')}: the files match the manifest's checksums "
                                   f"but not what it says they hold ({'; '.join(rep.problems)}); nothing was "
                                   "installed")
        result = dst.install(work, move=True, diffs=False)  # diffs read the tables: left to the next publish
        shutil.rmtree(work, ignore_errors=True)
    for p in (work.parent, work.parent.parent):
        try:
            p.rmdir()
        except OSError:
            break
    return PullResult(name, version, "pulled" if result.status == "published" else "present", target,
                      downloaded, resumed, src.url)


def _have(work: Path, fname: str) -> int:
    for p in (work / fname, work / f"{fname}.part"):
        if p.exists():
            return p.stat().st_size
    return 0


def _sweep_partials(partial: Path, keep: Path) -> None:
    """Remove the stale work folders of killed pulls (``.partial/<name>/<version>``) other
    than ``keep``, and taxonomy folders left empty."""
    try:
        names = [p for p in partial.iterdir() if p.is_dir() and not p.is_symlink()]
    except OSError:
        return
    for tax in names:
        others = [re.escape(p.name) for p in tax.iterdir() if p != keep] if tax.is_dir() else []
        if others:
            sweep(tax, "|".join(others))
        if tax != keep.parent:
            try:
                tax.rmdir()
            except OSError:
                pass
