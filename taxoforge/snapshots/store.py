"""A snapshot store: a folder (local, or any fsspec URL) of published snapshots.

Layout::

    <store>/index.json                      the catalogue (:mod:`.catalogue`)
    <store>/index.html                      the same catalogue for people (:mod:`.page`)
    <store>/<taxonomy>/<version>/manifest.json
    <store>/<taxonomy>/<version>/{nodes,names,links,report}.parquet
    <store>/.lock                            local stores: the publishers' lock (:mod:`.locks`)
    <store>/.staging/, <store>/.partial/     local stores: work in progress, claimed while
                                             worked on; a publish or pull sweeps what killed
                                             runs left there (:mod:`taxoforge.files.debris`)

Where a store lives
    Every store is reached through :mod:`fsspec`: a local folder (the default,
    ``data/snapshots`` or ``$TAXOFORGE_SNAPSHOT_STORE``; ``file://`` URLs too), ``http://``
    / ``https://`` (read only: ``index.json`` tells what is there), or any other fsspec URL
    (``s3://``, ``gs://``, ``memory://`` …, when its backend is installed). Snapshot files
    are fetched by :func:`taxoforge.files.download` (Range resume, checksums), see
    :mod:`.pull`.

Publishing is atomic and immutable
    Local folders (where a rename is atomic): the snapshot is written into
    ``.staging/<random>/`` first, then, holding the store's lock, moved into place with
    one rename, and the index is replaced atomically — a reader sees the old or the new
    state, never half of one.

    Other stores (object stores have no rename): the files are uploaded with the manifest
    last (a version without a manifest is incomplete and is ignored and overwritten), then
    the index is rewritten. See :mod:`.locks` for what their lock can and cannot promise;
    :meth:`SnapshotStore.reindex` rebuilds a damaged index from the manifests.

    Publishing a version that exists is a no-op when the content hash is the same and a
    :class:`SnapshotConflict` otherwise.

``latest`` moves only when asked
    ``publish(..., latest=True)`` (CLI ``publish --latest``) or :meth:`SnapshotStore.set_latest`;
    the first version of a taxonomy becomes its latest. A test build published beside the
    real one never changes what ``NAME`` means.

The catalogue
    Every change of the index also writes ``index.html`` (:mod:`.page`), records the
    ``public_url`` given, and fills in the summary of what changed between consecutive
    versions (:func:`~taxoforge.snapshots.diff.diff_summary`; computed once, kept).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from taxoforge.files import (
    MAX_RETRY_AFTER,
    DownloadError,
    FileTooLarge,
    UnsafePath,
    fetch_bytes,
    make_private_dir,
    path_inside,
    read_regular_file,
    write_bytes_atomic,
)
from taxoforge.snapshots.catalogue import (
    INDEX_NAME,
    MAX_INDEX_BYTES,
    describe_entry,
    empty_index,
    index_bytes,
    latest_version,
    now,
    parse_index,
    parse_ref,
    record_public_url,
    register,
    resolve_entry,
    set_latest,
    sorted_versions,
)
from taxoforge.snapshots.diff import fill_diffs
from taxoforge.snapshots.errors import (
    ChecksumMismatch,
    LockTimeout,
    ReadOnlyStore,
    SnapshotConflict,
    SnapshotError,
    SnapshotNotFound,
)
from taxoforge.snapshots.locks import LOCK_NAME, local_lock, remote_lock
from taxoforge.snapshots.manifest import (
    MANIFEST_NAME,
    MAX_MANIFEST_BYTES,
    build_snapshot,
    parse_manifest,
    read_manifest,
    validate_name,
)
from taxoforge.snapshots.page import PAGE_NAME, render_page
from taxoforge.snapshots.verify import VerifyReport, check_content, read_snapshot, tables_from_bytes, verify_folder
from taxoforge.trees.tables import TreeTables

__all__ = [
    "DEFAULT_STORE",
    "INDEX_NAME",
    "SnapshotStore",
    "SnapshotNotFound",
    "SnapshotConflict",
    "ChecksumMismatch",
    "ReadOnlyStore",
    "LockTimeout",
    "PublishResult",
    "default_store_url",
    "describe_entry",
    "parse_ref",
]

DEFAULT_STORE = "data/snapshots"
_READ_ONLY_PROTOCOLS = ("http", "https")


def _as_tuple(protocol) -> tuple:
    return tuple(protocol) if isinstance(protocol, (tuple, list)) else (protocol,)


def default_store_url() -> str:
    """``$TAXOFORGE_SNAPSHOT_STORE`` or ``data/snapshots``."""
    return os.environ.get("TAXOFORGE_SNAPSHOT_STORE") or DEFAULT_STORE


@dataclass
class PublishResult:
    taxonomy: str
    version: str
    status: str  # "published" | "unchanged"
    manifest: dict
    location: str  # URL or path of the version folder

    @property
    def ref(self) -> str:
        return f"{self.taxonomy}@{self.version}"

    def as_dict(self) -> dict:
        return {"taxonomy": self.taxonomy, "version": self.version, "ref": self.ref, "status": self.status,
                "location": self.location, "content_sha256": self.manifest["content_sha256"],
                "files": self.manifest["files"], "row_counts": self.manifest["row_counts"]}


class SnapshotStore:
    """A snapshot store at ``url`` (a local path, ``file://``, ``http(s)://`` or any fsspec
    URL). ``storage_options`` go to fsspec (credentials, endpoints: for an S3-compatible
    server ``{"client_kwargs": {"endpoint_url": "https://…"}}``). ``public_url``: where
    users reach this store (e.g. the HTTPS address a local folder is served at), named in
    the catalogue page's pull commands.

    Everything read from a remote store is bounded (:func:`taxoforge.files.fetch_bytes`,
    :func:`taxoforge.files.download`): ``index.json`` at
    :data:`~taxoforge.snapshots.catalogue.MAX_INDEX_BYTES`, a manifest at
    :data:`~taxoforge.snapshots.manifest.MAX_MANIFEST_BYTES`, a table at the size its
    manifest gives; every request has a deadline (``timeout`` seconds plus one per
    :data:`~taxoforge.files.DEFAULT_MIN_RATE` bytes received) and the shared retry policy
    (``retries``, ``backoff``, ``Retry-After`` up to ``max_retry_after`` seconds);
    redirects to another host are refused unless ``allow_other_hosts``. In a local store
    no symbolic link is followed below the store's folder."""

    def __init__(self, url: str | os.PathLike | None = None, *, storage_options: dict | None = None,
                 lock_timeout: float = 120.0, retries: int = 3, backoff: float = 0.5,
                 public_url: str | None = None, timeout: float = 60.0, max_retry_after: float = MAX_RETRY_AFTER,
                 allow_other_hosts: bool = False) -> None:
        import fsspec
        from fsspec.implementations.local import LocalFileSystem

        self.url = str(url) if url is not None else default_store_url()
        self.public_url = public_url or None
        self.lock_timeout = lock_timeout
        self.retries, self.backoff = retries, backoff  # for 429/5xx answers of remote stores
        self.timeout, self.max_retry_after, self.allow_other_hosts = timeout, max_retry_after, allow_other_hosts
        self.storage_options = dict(storage_options or {})
        protocol, path = fsspec.core.split_protocol(self.url)
        self.fs, fs_root = fsspec.core.url_to_fs(self.url, **self.storage_options)
        #: a folder on this machine: renames are atomic and file locks work
        self.is_local = isinstance(self.fs, LocalFileSystem)
        self.read_only = protocol in _READ_ONLY_PROTOCOLS
        self.root: Path | str = Path(path).expanduser() if self.is_local else fs_root.rstrip("/")

    def __repr__(self) -> str:
        return f"SnapshotStore({self.url!r})"

    @property
    def display_url(self) -> str:
        """The store as users should name it: ``public_url``, else the absolute folder of a
        local store, else its URL."""
        if self.public_url:
            return self.public_url
        return str(Path(self.root).resolve()) if self.is_local else self.url

    # ---- access ------------------------------------------------------------------------------
    def _path(self, rel: str) -> str:
        return str(self.root / rel) if self.is_local else f"{self.root}/{rel}"

    def location(self, rel: str) -> str:
        """The path or URL of ``rel`` inside the store (for messages, metadata and downloads)."""
        return self._path(rel) if self.is_local else self.fs.unstrip_protocol(self._path(rel))

    def transfer_options(self) -> dict:
        """The bounds and retry policy of this store's reads, as keywords of
        :func:`taxoforge.files.download` and :func:`taxoforge.files.fetch_bytes`."""
        return dict(retries=self.retries, backoff=self.backoff, max_retry_after=self.max_retry_after,
                    timeout=self.timeout, allow_other_hosts=self.allow_other_hosts,
                    storage_options=self.storage_options)

    def read_bytes(self, rel: str, *, max_bytes: int, what: str = "file") -> bytes:
        """The bytes of ``rel``, at most ``max_bytes`` of them (a larger file is refused before
        it is read whole); :class:`SnapshotNotFound` when it does not exist. Local stores:
        a regular file reached without a symbolic link. Remote stores: one
        :func:`taxoforge.files.fetch_bytes` (deadline, redirect rule and retry policy of
        :meth:`transfer_options`)."""
        if self.is_local:
            path = self.local_path(*rel.split("/"))
            try:
                return read_regular_file(path, max_bytes, what)
            except FileNotFoundError:
                raise SnapshotNotFound(f"{path}: not found") from None
            except (UnsafePath, FileTooLarge) as e:
                raise SnapshotError(f"store {self.url}: {e}") from None
            except OSError as e:
                raise SnapshotError(f"{path}: {e.strerror or e}") from e
        try:
            return fetch_bytes(self.location(rel), max_bytes=max_bytes, what=what, **self.transfer_options())
        except DownloadError as e:
            if e.status == 404:
                raise SnapshotNotFound(f"{self.location(rel)}: not found") from None
            raise SnapshotError(str(e)) from e

    # ---- catalogue -----------------------------------------------------------------------------
    def index(self) -> dict:
        """The parsed ``index.json`` (an empty catalogue for a new writable store)."""
        try:
            data = self.read_bytes(INDEX_NAME, max_bytes=MAX_INDEX_BYTES, what="snapshot index")
        except SnapshotNotFound:
            if self.read_only:
                raise SnapshotNotFound(f"{self.location(INDEX_NAME)}: not found — is {self.url} a snapshot store?") from None
            return empty_index()
        return parse_index(data, self.location(INDEX_NAME))

    def require_exists(self) -> None:
        """:class:`SnapshotNotFound` when a local store's folder does not exist (remote
        stores are checked when their index is read)."""
        if self.is_local and not Path(self.root).is_dir():
            raise SnapshotNotFound(f"no snapshot store at {self.root} (the folder does not exist)")

    def taxonomies(self) -> list[str]:
        return sorted(self.index()["taxonomies"])

    def latest(self, name: str) -> str | None:
        """The version a bare ``name`` means (None when the store has no such taxonomy)."""
        tax = self.index()["taxonomies"].get(name)
        return latest_version(tax) if tax else None

    def versions(self, name: str) -> list[dict]:
        """Index entries of ``name``, oldest first (the last one is the latest)."""
        return sorted_versions(self.index()["taxonomies"].get(name, {}).get("versions", []))

    def resolve(self, ref: str) -> tuple[str, dict]:
        """``(taxonomy, index entry)`` of ``"NAME"`` (latest) or ``"NAME@VERSION"`` (a
        unique prefix of at least 4 characters is accepted)."""
        parse_ref(ref)
        self.require_exists()
        return resolve_entry(self.index(), ref, self.url)

    def manifest(self, name: str, version: str, entry: dict | None = None) -> dict:
        """The manifest of ``name@version``, checked against the index's SHA-256."""
        return self.manifest_and_bytes(name, version, entry)[0]

    def manifest_and_bytes(self, name: str, version: str, entry: dict | None = None) -> tuple[dict, bytes]:
        """The manifest of ``name@version`` (at most :data:`~taxoforge.snapshots.manifest.MAX_MANIFEST_BYTES`)
        and its bytes, checked against the index's SHA-256 before it is parsed."""
        rel = f"{name}/{version}/{MANIFEST_NAME}"
        data = bytes(self.read_bytes(rel, max_bytes=MAX_MANIFEST_BYTES, what="manifest"))
        want = (entry or {}).get("manifest_sha256")
        if want and hashlib.sha256(data).hexdigest() != want:
            raise ChecksumMismatch(f"{self.location(rel)}: sha256 {hashlib.sha256(data).hexdigest()} "
                                   f"but the store index says {want}")
        return parse_manifest(data, self.location(rel)), data

    def local_dir(self, name: str, version: str) -> Path:
        """The folder of ``name@version`` in a local store (both checked against the id
        grammar, the path checked to stay inside the store)."""
        if not self.is_local:
            raise SnapshotError(f"store {self.url} is not a local folder")
        return self.local_path(validate_name(name), validate_name(version, "version"))

    def local_path(self, *parts: str) -> Path:
        """``<store>/<parts…>`` of a local store; :class:`SnapshotError` if it would leave the store."""
        try:
            return path_inside(self.root, *parts, symlinks=False)
        except UnsafePath as e:
            raise SnapshotError(f"store {self.url}: {e}") from None

    # ---- writing -------------------------------------------------------------------------------
    def _check_writable(self) -> None:
        if self.read_only:
            raise ReadOnlyStore(f"store {self.url} is read-only (HTTP): publish to a local or fsspec store")

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """The publishers' lock of this store (:mod:`.locks`)."""
        self._check_writable()
        if self.is_local:
            with local_lock(self._path(LOCK_NAME), self.lock_timeout):
                yield
        else:
            with remote_lock(self.fs, self._path(LOCK_NAME), self.location(LOCK_NAME), self.lock_timeout, now()):
                yield

    def _write_index(self, idx: dict) -> None:
        """Write ``index.json``, then ``index.html`` rendered from it, each whole or not at all."""
        public = record_public_url(idx, self.public_url)  # the store remembers where it is published
        data = index_bytes(idx)
        page = render_page(idx, public or self.display_url, public=bool(public)).encode("utf-8")
        self._put(INDEX_NAME, data, "application/json")
        self._put(PAGE_NAME, page, "text/html; charset=utf-8")

    def _put(self, rel: str, payload: bytes, content_type: str) -> None:
        """Write ``rel`` whole or not at all: a temporary file and a rename locally, one
        object PUT elsewhere (on S3 with its Content-Type, so a bucket served as a website
        shows ``index.html`` as a page)."""
        if self.is_local:
            write_bytes_atomic(self._path(rel), payload)
        elif set(_as_tuple(self.fs.protocol)) & {"s3", "s3a"}:
            self.fs.pipe_file(self._path(rel), payload, ContentType=content_type)
        else:
            self.fs.pipe_file(self._path(rel), payload)

    # ---- reading whole snapshots -------------------------------------------------------------
    def read_tables(self, name: str, version: str, entry: dict | None = None) -> TreeTables:
        """The tables of ``name@version`` read straight from the store, every file checked
        against the manifest's SHA-256 (remote stores: into memory, nothing written)."""
        manifest = self.manifest(name, version, entry)
        if self.is_local:
            rep = verify_folder(self.local_dir(name, version), deep=False)
            if not rep.ok:
                raise ChecksumMismatch(f"{rep.path}: " + "; ".join(rep.problems))
            return read_snapshot(rep.path, manifest)
        return tables_from_bytes(manifest, self._fetch_files(name, version, manifest))

    def _fetch_files(self, name: str, version: str, manifest: dict) -> dict[str, bytes]:
        out = {}
        for fname, meta in sorted(manifest["files"].items()):
            rel = f"{name}/{version}/{fname}"
            data = self.read_bytes(rel, max_bytes=meta["size"], what=f"{fname} (manifest size)")
            got = hashlib.sha256(data).hexdigest()
            if got != meta["sha256"]:
                raise ChecksumMismatch(f"{self.location(rel)}: sha256 {got} but the manifest says {meta['sha256']}")
            out[fname] = data
        return out

    def verify(self, ref: str, *, deep: bool = True) -> VerifyReport:
        """Check ``ref`` where it lies, on any kind of store: the manifest against the
        index's SHA-256, every file's size and SHA-256 against the manifest and (``deep``)
        the content hash recomputed from the tables. Never raises on a bad snapshot: the
        report lists every problem. Remote files are read into memory one at a time (kept
        for the content hash when ``deep``); nothing is written."""
        name, entry = self.resolve(ref)
        version = entry["version"]
        if self.is_local:
            rep = verify_folder(self.local_dir(name, version), deep=deep)
            if rep.ok and entry.get("manifest_sha256"):
                got = hashlib.sha256(self.read_bytes(f"{name}/{version}/{MANIFEST_NAME}", max_bytes=MAX_MANIFEST_BYTES,
                                                     what="manifest")).hexdigest()
                if got != entry["manifest_sha256"]:
                    rep.ok = False
                    rep.problems.append(f"{MANIFEST_NAME}: sha256 {got}, the store index says {entry['manifest_sha256']}")
            return rep
        rep = VerifyReport(Path(f"{name}/{version}"), ok=False)
        rep.path = self.location(f"{name}/{version}")  # a URL: the report names where it looked
        try:
            rep.manifest = m = self.manifest(name, version, entry)
        except SnapshotError as e:
            rep.problems.append(str(e))
            return rep
        data: dict[str, bytes] = {}
        for fname, meta in sorted(m["files"].items()):
            try:
                blob = self.read_bytes(f"{name}/{version}/{fname}", max_bytes=meta["size"],
                                       what=f"{fname} (manifest size)")  # one GET (retried on 429/5xx)
            except SnapshotNotFound:
                rep.problems.append(f"{fname}: missing")
                continue
            except SnapshotError as e:
                rep.problems.append(f"{fname}: {e}")
                continue
            got = hashlib.sha256(blob).hexdigest()
            if meta.get("size") is not None and len(blob) != meta["size"]:
                rep.problems.append(f"{fname}: {len(blob)} bytes, manifest says {meta['size']}")
            elif got != meta["sha256"]:
                rep.problems.append(f"{fname}: sha256 {got}, manifest says {meta['sha256']}")
            else:
                rep.checked.append(fname)
                if deep:
                    data[fname] = blob
            del blob
        if deep and not rep.problems:
            check_content(rep, lambda: tables_from_bytes(m, data))
        rep.ok = not rep.problems
        return rep

    # ---- diffs between consecutive versions, for the catalogue --------------------------------
    def _fill_diffs(self, idx: dict, name: str, fresh: dict[str, TreeTables] | None = None) -> None:
        fill_diffs(idx, name, lambda v, entry: self.read_tables(name, v, entry), fresh)

    def install(self, folder: str | os.PathLike, *, move: bool = False, latest: bool = False,
                _fresh: TreeTables | None = None) -> PublishResult:
        """Publish a complete snapshot folder (with its ``manifest.json``). With ``move`` the
        folder (which must be on the store's filesystem, for local stores) is renamed into
        place instead of copied. With ``latest`` it becomes what the bare taxonomy name
        means (so does a taxonomy's first version); a version already published is then
        made the latest too."""
        self._check_writable()
        folder = Path(folder)
        manifest = read_manifest(folder)
        validate_name(manifest["taxonomy"]), validate_name(manifest["version"], "version")
        for fname in manifest["files"]:
            if not (folder / fname).is_file():
                raise SnapshotError(f"{folder}: file {fname} named in the manifest is missing")
        mbytes = (folder / MANIFEST_NAME).read_bytes()
        fresh = {manifest["version"]: _fresh} if _fresh is not None else None
        if self.is_local:
            return self._install_by_rename(folder, manifest, mbytes, move=move, latest=latest, fresh=fresh)
        return self._install_manifest_last(folder, manifest, mbytes, latest=latest, fresh=fresh)

    def _published_manifest(self, name: str, version: str) -> tuple[dict, bytes] | None:
        rel = f"{name}/{version}/{MANIFEST_NAME}"
        try:
            data = self.read_bytes(rel, max_bytes=MAX_MANIFEST_BYTES, what="manifest")
        except SnapshotNotFound:
            return None
        return parse_manifest(data, self.location(rel)), data

    def _unchanged(self, idx: dict, manifest: dict, old: tuple[dict, bytes], *, latest: bool) -> PublishResult:
        name, version = manifest["taxonomy"], manifest["version"]
        if old[0]["content_sha256"] != manifest["content_sha256"]:
            raise SnapshotConflict(
                f"{self.location(f'{name}/{version}')}: {name}@{version} is already published with other content "
                f"(content_sha256 {old[0]['content_sha256'][:16]}… ≠ {manifest['content_sha256'][:16]}…); "
                "published snapshots are immutable")
        was = latest_version(idx["taxonomies"].get(name, {}))
        added = register(idx, *old, latest=latest)  # repairs an index that missed it
        if (added or latest_version(idx["taxonomies"][name]) != was or not self._has_page()
                or (self.public_url and idx.get("public_url") != self.public_url)):
            if added:
                self._fill_diffs(idx, name)
            self._write_index(idx)
        return PublishResult(name, version, "unchanged", old[0], self.location(f"{name}/{version}"))

    def _has_page(self) -> bool:
        try:
            return bool(self.fs.exists(self._path(PAGE_NAME)))
        except Exception:  # noqa: BLE001 - then write it again
            return False

    def _staging(self, prefix: str):
        """A new claimed work folder in ``<store>/.staging/`` (``(path, claim)``), after sweeping
        the stale ones killed publishes left there."""
        from taxoforge.files.debris import WORK_SUFFIX, Claim, sweep

        parent = self.local_path(".staging")
        sweep(parent, rf"(build-)?{WORK_SUFFIX}")
        path = make_private_dir(parent, prefix=prefix)
        return path, Claim(path)

    def _install_by_rename(self, folder: Path, manifest: dict, mbytes: bytes, *, move: bool, latest: bool,
                           fresh: dict | None) -> PublishResult:
        name, version = manifest["taxonomy"], manifest["version"]
        target = self.local_dir(name, version)
        staging = claim = None
        try:
            if not move:
                # copy outside the lock (the slow part), then rename under it
                staging, claim = self._staging("")
                for fname in [*manifest["files"], MANIFEST_NAME]:
                    self.fs.put_file(str(folder / fname), str(staging / fname))
            src = staging or folder
            with self.lock():
                idx = self.index()
                old = self._published_manifest(name, version)
                if old is not None:
                    result = self._unchanged(idx, manifest, old, latest=latest)
                else:
                    if target.exists():  # leftover without manifest: never complete
                        shutil.rmtree(target)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    os.rename(src, target)
                    src = None
                    register(idx, manifest, mbytes, latest=latest)
                    self._fill_diffs(idx, name, fresh)
                    self._write_index(idx)
                    result = PublishResult(name, version, "published", manifest, str(target))
            if move and src is not None:
                shutil.rmtree(src, ignore_errors=True)
        finally:
            if staging is not None and staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
            if claim is not None:
                claim.release()
        return result

    def _install_manifest_last(self, folder: Path, manifest: dict, mbytes: bytes, *, latest: bool,
                               fresh: dict | None) -> PublishResult:
        name, version = manifest["taxonomy"], manifest["version"]
        base = self._path(f"{name}/{version}")
        with self.lock():
            idx = self.index()
            old = self._published_manifest(name, version)
            if old is not None:
                return self._unchanged(idx, manifest, old, latest=latest)
            self.fs.makedirs(base, exist_ok=True)
            for fname in manifest["files"]:
                self.fs.put_file(str(folder / fname), f"{base}/{fname}")
            self.fs.pipe_file(f"{base}/{MANIFEST_NAME}", mbytes)  # last: marks the version complete
            register(idx, manifest, mbytes, latest=latest)
            self._fill_diffs(idx, name, fresh)
            self._write_index(idx)
        return PublishResult(name, version, "published", manifest, self.location(f"{name}/{version}"))

    def publish(self, tables: TreeTables, *, name: str | None = None, seed: int | None = None,
                source_versions: dict | None = None, created: str | None = None,
                extra: dict | None = None, version: str | None = None, check: bool = True,
                min_link_coverage: float | dict | None = None, latest: bool = False) -> PublishResult:
        """Snapshot ``tables`` and publish it (see the module doc). The version id is the
        content hash unless ``version`` gives a label. With ``check`` (the default) a tree
        that fails the publishing checks (:func:`taxoforge.snapshots.checks.require_publishable`)
        is refused with :class:`~taxoforge.snapshots.checks.ChecksFailed` and nothing is written.
        With ``latest`` the version becomes what the bare name means (the first version of
        a taxonomy always does); otherwise the latest stays where it was."""
        self._check_writable()
        if check:
            from taxoforge.snapshots.checks import require_publishable

            require_publishable(tables, min_link_coverage=min_link_coverage)
        claim = None
        if self.is_local:
            tmp, claim = self._staging("build-")
        else:
            tmp = Path(tempfile.mkdtemp(prefix="taxoforge-snapshot-"))
        try:
            build_snapshot(tables, tmp, name=name, seed=seed, source_versions=source_versions,
                           created=created, extra=extra, version=version)
            return self.install(tmp, move=self.is_local, latest=latest, _fresh=tables)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
            if claim is not None:
                claim.release()

    def set_latest(self, ref: str) -> str:
        """Make ``ref`` (``NAME@VERSION``, a version prefix or ``sha256:…``) what the bare
        ``NAME`` means; returns ``NAME@VERSION``."""
        self._check_writable()
        with self.lock():
            idx = self.index()
            name, entry = resolve_entry(idx, ref, self.url)
            set_latest(idx, name, entry["version"])
            self._write_index(idx)
        return f"{name}@{entry['version']}"

    def reindex(self) -> dict:
        """Rebuild ``index.json`` (and ``index.html``) from the manifests in the store. Keeps,
        of versions already listed, the publication times and diff summaries, and each
        taxonomy's latest (a taxonomy the old index did not list gets its version created
        last). Returns the new index."""
        self._check_writable()
        with self.lock():
            try:
                old = self.index()
            except SnapshotError:
                old = empty_index()
            kept = {(t, e["version"]): e for t, v in old["taxonomies"].items() for e in v.get("versions", [])}
            idx = empty_index()
            paths = sorted(p for p in self.fs.glob(self._path(f"*/*/{MANIFEST_NAME}"))
                           if not p.rstrip("/").split("/")[-3].startswith("."))
            for p in paths:
                rel = "/".join(p.rstrip("/").split("/")[-3:])
                data = self.read_bytes(rel, max_bytes=MAX_MANIFEST_BYTES, what="manifest")
                m = parse_manifest(data, p)
                register(idx, m, data)
                entry = idx["taxonomies"][m["taxonomy"]]["versions"][-1]
                before = kept.get((m["taxonomy"], m["version"]), {})
                entry["published"] = before.get("published") or entry["published"]
                if before.get("diff"):
                    entry["diff"] = before["diff"]
            for name, tax in idx["taxonomies"].items():
                was = latest_version(old["taxonomies"].get(name, {"versions": []}))
                listed = {e["version"] for e in tax["versions"]}
                tax["latest"] = was if was in listed else sorted_versions(tax["versions"])[-1]["version"]
            self._write_index(idx)
            return idx
