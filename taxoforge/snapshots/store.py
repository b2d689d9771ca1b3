"""A snapshot store: a folder (local, or any fsspec URL) of published snapshots.

Layout::

    <store>/index.json                      the catalogue (see below)
    <store>/<taxonomy>/<version>/manifest.json
    <store>/<taxonomy>/<version>/{nodes,names,links,report}.parquet
    <store>/.lock                            local stores: the publishers' lock
    <store>/.staging/, <store>/.partial/     local stores: work in progress (safe to delete
                                             when no publish or pull is running)

``index.json`` lists, per taxonomy, every published version with its creation and
publication times, ``content_sha256``, the SHA-256 of its ``manifest.json`` (so a reader
checks the chain index → manifest → files), row counts, total size and path. The latest
version of a taxonomy is the one created last (ties: published last).

Where a store lives
    * a local folder (the default, ``data/snapshots`` or ``$TAXOFORGE_SNAPSHOT_STORE``;
      ``file://`` URLs too): full read/write, safe for concurrent publishers;
    * ``http://`` / ``https://``: read only (``index.json`` tells what is there, files are
      fetched with ``requests``; downloads resume with HTTP Range requests);
    * any other fsspec URL (``s3://``, ``gs://``, ``memory://`` …, when its backend is
      installed): read/write.

Publishing is atomic and immutable
    Local: the snapshot is written into ``.staging/<random>/`` first, then, holding the
    store's lock, moved into place with one ``rename`` and the index is replaced with
    ``os.replace`` — a reader sees the old or the new state, never half of one. The lock
    is ``fcntl.flock`` on ``<store>/.lock`` (released by the OS if a publisher dies), or,
    where ``fcntl`` does not exist, a lock file created with ``O_CREAT | O_EXCL`` (stale
    after ``stale_lock_seconds``). Publishing a version that exists is a no-op when the
    content hash is the same and a :class:`SnapshotConflict` otherwise.

    Remote (fsspec) stores: the files are uploaded with the manifest last (a version
    without a manifest is incomplete and is ignored and overwritten), then the index is
    rewritten. The lock is a ``.lock`` object created in exclusive mode (``"xb"``) where
    the backend supports it; object stores do not all honour exclusive creation, and a
    crashed publisher leaves the lock behind (remove it by hand). **Run one publisher per
    remote store** (e.g. the Dagster deployment), or publish to a local store and copy it;
    :meth:`SnapshotStore.reindex` rebuilds a damaged index from the manifests.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import os
import shutil
import time
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taxoforge.snapshots.manifest import (
    MANIFEST_NAME,
    SnapshotError,
    build_snapshot,
    manifest_bytes,
    parse_manifest,
    read_manifest,
    validate_name,
)
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
    "parse_ref",
]

DEFAULT_STORE = "data/snapshots"
INDEX_NAME = "index.json"
INDEX_FORMAT = "taxoforge-snapshot-index"
HTTP_TIMEOUT = (10, 60)


class SnapshotNotFound(SnapshotError):
    exit_code = 3


class ChecksumMismatch(SnapshotError):
    exit_code = 4


class SnapshotConflict(SnapshotError):
    exit_code = 5


class ReadOnlyStore(SnapshotError):
    exit_code = 6


class LockTimeout(SnapshotError):
    exit_code = 9


def default_store_url() -> str:
    """``$TAXOFORGE_SNAPSHOT_STORE`` or ``data/snapshots``."""
    return os.environ.get("TAXOFORGE_SNAPSHOT_STORE") or DEFAULT_STORE


def parse_ref(ref: str) -> tuple[str, str | None]:
    """``"NAME@VERSION"`` → ``(NAME, VERSION)``; ``"NAME"`` → ``(NAME, None)`` (latest)."""
    if not isinstance(ref, str) or not ref.strip():
        raise SnapshotError("empty snapshot reference: expected NAME or NAME@VERSION")
    name, sep, version = ref.strip().partition("@")
    if sep and not version:
        raise SnapshotError(f"bad snapshot reference {ref!r}: expected NAME@VERSION with a version after '@'")
    validate_name(name)
    return name, (version or None)


def _now() -> str:
    return _dt.datetime.now(tz=_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _empty_index() -> dict:
    return {"format": INDEX_FORMAT, "format_version": 1, "updated": None, "taxonomies": {}}


def _sort_key(entry: dict) -> tuple:
    return (entry.get("created") or "", entry.get("published") or "", entry.get("version") or "")


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


class _LocalLock:
    """An inter-process lock on ``path``: ``fcntl.flock`` where it exists, else O_EXCL."""

    def __init__(self, path: Path, timeout: float, stale_seconds: float = 600.0) -> None:
        self.path, self.timeout, self.stale_seconds = path, timeout, stale_seconds
        self._fd: int | None = None
        self._excl = False

    def __enter__(self) -> "_LocalLock":
        deadline = time.monotonic() + self.timeout
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            fcntl = None
        if fcntl is not None:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        os.close(fd)
                        raise LockTimeout(f"{self.path}: another publisher has held the store lock for "
                                          f"more than {self.timeout:.0f} s") from None
                    time.sleep(0.02)
            self._fd = fd
            return self
        while True:  # pragma: no cover - Windows
            try:
                fd = os.open(str(self.path) + ".excl", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
                os.write(fd, f"{os.getpid()}\n".encode())
                self._fd, self._excl = fd, True
                return self
            except FileExistsError:
                try:
                    age = time.time() - os.stat(str(self.path) + ".excl").st_mtime
                    if age > self.stale_seconds:
                        os.unlink(str(self.path) + ".excl")
                        continue
                except FileNotFoundError:
                    continue
                if time.monotonic() > deadline:
                    raise LockTimeout(f"{self.path}.excl: store lock held for more than {self.timeout:.0f} s") from None
                time.sleep(0.02)

    def __exit__(self, *exc) -> None:
        if self._fd is None:
            return
        if self._excl:  # pragma: no cover - Windows
            os.close(self._fd)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(str(self.path) + ".excl")
        else:
            import fcntl

            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
        self._fd = None


class SnapshotStore:
    """A snapshot store at ``url`` (a local path, ``file://``, ``http(s)://`` or any fsspec
    URL). ``storage_options`` go to fsspec (credentials, endpoints)."""

    def __init__(self, url: str | os.PathLike | None = None, *, storage_options: dict | None = None,
                 lock_timeout: float = 120.0) -> None:
        import fsspec

        raw = str(url) if url is not None else default_store_url()
        self.url = raw
        self.lock_timeout = lock_timeout
        protocol, path = fsspec.core.split_protocol(raw)
        if protocol in (None, "file", "local"):
            self.kind = "local"
            self.root = Path(path).expanduser()
            self.fs = None
        elif protocol in ("http", "https"):
            self.kind = "http"
            self.root = None
            self.base = raw.rstrip("/")
            self.fs = None
            import requests

            self._session = requests.Session()
        else:
            self.kind = "fsspec"
            self.fs, p = fsspec.core.url_to_fs(raw, **(storage_options or {}))
            self.root = p.rstrip("/")

    def __repr__(self) -> str:
        return f"SnapshotStore({self.url!r})"

    # ---- low-level access -------------------------------------------------------------
    @property
    def is_local(self) -> bool:
        return self.kind == "local"

    @property
    def read_only(self) -> bool:
        return self.kind == "http"

    def location(self, rel: str) -> str:
        """The path or URL of ``rel`` inside the store (for messages and metadata)."""
        if self.kind == "local":
            return str(self.root / rel)
        if self.kind == "http":
            return f"{self.base}/{rel}"
        return self.fs.unstrip_protocol(f"{self.root}/{rel}")

    def read_bytes(self, rel: str) -> bytes:
        """The bytes of ``rel``; :class:`SnapshotNotFound` when it does not exist."""
        if self.kind == "local":
            try:
                return (self.root / rel).read_bytes()
            except FileNotFoundError:
                raise SnapshotNotFound(f"{self.location(rel)}: not found") from None
        if self.kind == "http":
            import requests

            try:
                r = self._session.get(self.location(rel), timeout=HTTP_TIMEOUT)
            except requests.RequestException as e:
                raise SnapshotError(f"{self.location(rel)}: cannot reach the store ({e})") from e
            if r.status_code == 404:
                raise SnapshotNotFound(f"{self.location(rel)}: not found (HTTP 404)")
            if r.status_code != 200:
                raise SnapshotError(f"{self.location(rel)}: HTTP {r.status_code}")
            return r.content
        try:
            return self.fs.cat_file(f"{self.root}/{rel}")
        except FileNotFoundError:
            raise SnapshotNotFound(f"{self.location(rel)}: not found") from None

    def exists(self, rel: str) -> bool:
        if self.kind == "local":
            return (self.root / rel).exists()
        if self.kind == "fsspec":
            return self.fs.exists(f"{self.root}/{rel}")
        try:
            self.read_bytes(rel)
            return True
        except SnapshotNotFound:
            return False

    def open_stream(self, rel: str, offset: int = 0, chunk_size: int = 1 << 16) -> tuple[Iterator[bytes], bool]:
        """Chunks of ``rel`` from byte ``offset`` on, and whether the source honoured the
        offset (``False``: the chunks start at byte 0, e.g. a server without Range)."""
        if self.kind == "http":
            import requests

            # identity: byte offsets must be those of the file, not of a compressed stream
            headers = {"Accept-Encoding": "identity"}
            if offset:
                headers["Range"] = f"bytes={offset}-"
            try:
                r = self._session.get(self.location(rel), headers=headers, stream=True, timeout=HTTP_TIMEOUT)
            except requests.RequestException as e:
                raise ConnectionError(f"{self.location(rel)}: {e}") from e
            if r.status_code == 404:
                r.close()
                raise SnapshotNotFound(f"{self.location(rel)}: not found (HTTP 404)")
            if r.status_code == 416:
                r.close()
                return iter(()), False
            if r.status_code not in (200, 206):
                r.close()
                raise SnapshotError(f"{self.location(rel)}: HTTP {r.status_code}")
            resumed = False
            if r.status_code == 206:
                cr = r.headers.get("Content-Range", "")
                try:
                    start = int(cr.split()[1].split("-")[0])
                except (IndexError, ValueError):
                    r.close()
                    raise SnapshotError(f"{self.location(rel)}: bad Content-Range {cr!r}") from None
                if start != offset:
                    r.close()
                    raise SnapshotError(f"{self.location(rel)}: asked for byte {offset}, got {start}")
                resumed = True

            def gen() -> Iterator[bytes]:
                # read1 hands over every byte that arrived before a connection drops, so
                # the partial file holds all of them and a resume asks only for the rest
                with r:
                    read1 = getattr(r.raw, "read1", None)
                    while True:
                        b = read1(chunk_size) if read1 is not None else r.raw.read(chunk_size)
                        if not b:
                            return
                        yield b

            return gen(), resumed

        if self.kind == "local":
            try:
                f = open(self.root / rel, "rb")
            except FileNotFoundError:
                raise SnapshotNotFound(f"{self.location(rel)}: not found") from None
        else:
            try:
                f = self.fs.open(f"{self.root}/{rel}", "rb")
            except FileNotFoundError:
                raise SnapshotNotFound(f"{self.location(rel)}: not found") from None
        f.seek(offset)

        def gen_file() -> Iterator[bytes]:
            with f:
                while True:
                    b = f.read(chunk_size)
                    if not b:
                        return
                    yield b

        return gen_file(), True

    # ---- catalogue ----------------------------------------------------------------------
    def index(self) -> dict:
        """The parsed ``index.json`` (an empty catalogue for a new local or fsspec store)."""
        try:
            data = self.read_bytes(INDEX_NAME)
        except SnapshotNotFound:
            if self.kind == "http":
                raise SnapshotNotFound(f"{self.location(INDEX_NAME)}: not found — is {self.url} a snapshot store?") from None
            return _empty_index()
        try:
            idx = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise SnapshotError(f"{self.location(INDEX_NAME)}: not valid JSON ({e}); "
                                "rebuild it with SnapshotStore.reindex()") from e
        if not isinstance(idx, dict) or idx.get("format") != INDEX_FORMAT:
            raise SnapshotError(f"{self.location(INDEX_NAME)}: not a taxoforge snapshot index "
                                f"(expected \"format\": \"{INDEX_FORMAT}\")")
        return idx

    def require_exists(self) -> None:
        """:class:`SnapshotNotFound` when a local store's folder does not exist (remote
        stores are checked when their index is read)."""
        if self.is_local and not self.root.is_dir():
            raise SnapshotNotFound(f"no snapshot store at {self.root} (the folder does not exist)")

    def taxonomies(self) -> list[str]:
        return sorted(self.index()["taxonomies"])

    def versions(self, name: str) -> list[dict]:
        """Index entries of ``name``, oldest first (the last one is the latest)."""
        entries = self.index()["taxonomies"].get(name, {}).get("versions", [])
        return sorted(entries, key=_sort_key)

    def resolve(self, ref: str) -> tuple[str, dict]:
        """``(taxonomy, index entry)`` of ``"NAME"`` (latest) or ``"NAME@VERSION"`` (a
        unique prefix of at least 4 characters is accepted)."""
        name, version = parse_ref(ref)
        self.require_exists()
        idx = self.index()
        tax = idx["taxonomies"].get(name)
        if not tax or not tax.get("versions"):
            known = ", ".join(sorted(idx["taxonomies"])) or "none"
            raise SnapshotNotFound(f"store {self.url}: no taxonomy {name!r} (taxonomies: {known})")
        entries = sorted(tax["versions"], key=_sort_key)
        if version is None:
            return name, entries[-1]
        exact = [e for e in entries if e["version"] == version]
        if exact:
            return name, exact[0]
        pref = [e for e in entries if len(version) >= 4 and e["version"].startswith(version)]
        if len(pref) == 1:
            return name, pref[0]
        avail = ", ".join(e["version"] for e in entries)
        if len(pref) > 1:
            raise SnapshotNotFound(f"store {self.url}: version prefix {version!r} of {name!r} is ambiguous "
                                   f"({', '.join(e['version'] for e in pref)})")
        raise SnapshotNotFound(f"store {self.url}: taxonomy {name!r} has no version {version!r} "
                               f"(versions: {avail})")

    def manifest(self, name: str, version: str, entry: dict | None = None) -> dict:
        """The manifest of ``name@version``, checked against the index's SHA-256."""
        rel = f"{name}/{version}/{MANIFEST_NAME}"
        data = self.read_bytes(rel)
        want = (entry or {}).get("manifest_sha256")
        if want and hashlib.sha256(data).hexdigest() != want:
            raise ChecksumMismatch(f"{self.location(rel)}: sha256 {hashlib.sha256(data).hexdigest()} "
                                   f"but the store index says {want}")
        return parse_manifest(data, self.location(rel))

    def local_dir(self, name: str, version: str) -> Path:
        if not self.is_local:
            raise SnapshotError(f"store {self.url} is not a local folder")
        return self.root / name / version

    # ---- writing -------------------------------------------------------------------------
    def _check_writable(self) -> None:
        if self.read_only:
            raise ReadOnlyStore(f"store {self.url} is read-only (HTTP): publish to a local or fsspec store")

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """The publishers' lock of this store (see the module doc for remote limits)."""
        self._check_writable()
        if self.is_local:
            with _LocalLock(self.root / ".lock", self.lock_timeout):
                yield
            return
        path = f"{self.root}/.lock"
        deadline = time.monotonic() + self.lock_timeout
        held = False
        while True:
            try:
                self.fs.makedirs(self.root, exist_ok=True)
                with self.fs.open(path, "xb") as f:
                    f.write(f"{os.getpid()} {_now()}\n".encode())
                held = True
                break
            except FileExistsError:
                if time.monotonic() > deadline:
                    raise LockTimeout(f"{self.location('.lock')}: lock held for more than "
                                      f"{self.lock_timeout:.0f} s (remove it if its publisher died)") from None
                time.sleep(0.1)
            except (NotImplementedError, ValueError, TypeError):
                warnings.warn(f"{self.url}: this filesystem has no exclusive create; publishing without a lock",
                              stacklevel=3)
                break
        try:
            yield
        finally:
            if held:
                with contextlib.suppress(FileNotFoundError):
                    self.fs.rm_file(path)

    def _write_index(self, idx: dict) -> None:
        idx["updated"] = _now()
        for tax in idx["taxonomies"].values():
            tax["versions"] = sorted(tax["versions"], key=_sort_key)
            tax["latest"] = tax["versions"][-1]["version"] if tax["versions"] else None
        data = (json.dumps(idx, indent=2, sort_keys=True) + "\n").encode()
        if self.is_local:
            self.root.mkdir(parents=True, exist_ok=True)
            tmp = self.root / f".{INDEX_NAME}.{uuid.uuid4().hex}.tmp"
            tmp.write_bytes(data)
            with open(tmp, "rb+") as f:
                os.fsync(f.fileno())
            os.replace(tmp, self.root / INDEX_NAME)
        else:
            self.fs.pipe_file(f"{self.root}/{INDEX_NAME}", data)

    @staticmethod
    def _entry(manifest: dict, mbytes: bytes) -> dict:
        name, version = manifest["taxonomy"], manifest["version"]
        return {
            "version": version,
            "created": manifest["created"],
            "published": _now(),
            "content_sha256": manifest["content_sha256"],
            "manifest_sha256": hashlib.sha256(mbytes).hexdigest(),
            "row_counts": manifest["row_counts"],
            "size": int(sum(f.get("size", 0) for f in manifest["files"].values())),
            "path": f"{name}/{version}",
        }

    def _register(self, idx: dict, manifest: dict, mbytes: bytes) -> bool:
        """Add ``manifest`` to ``idx`` unless its version is there; True when added."""
        tax = idx["taxonomies"].setdefault(manifest["taxonomy"], {"versions": []})
        if any(e["version"] == manifest["version"] for e in tax["versions"]):
            return False
        tax["versions"].append(self._entry(manifest, mbytes))
        return True

    def install(self, folder: str | os.PathLike, *, move: bool = False) -> PublishResult:
        """Publish a complete snapshot folder (with its ``manifest.json``). With ``move`` the
        folder (which must be on the store's filesystem, for local stores) is renamed into
        place instead of copied."""
        self._check_writable()
        folder = Path(folder)
        manifest = read_manifest(folder)
        name, version = validate_name(manifest["taxonomy"]), validate_name(manifest["version"], "version")
        for fname in manifest["files"]:
            if not (folder / fname).is_file():
                raise SnapshotError(f"{folder}: file {fname} named in the manifest is missing")
        mbytes = (folder / MANIFEST_NAME).read_bytes()
        if self.is_local:
            return self._install_local(folder, manifest, mbytes, move=move)
        return self._install_remote(folder, manifest, mbytes)

    def _install_local(self, folder: Path, manifest: dict, mbytes: bytes, *, move: bool) -> PublishResult:
        name, version = manifest["taxonomy"], manifest["version"]
        target = self.root / name / version
        staging = None
        try:
            if not move:
                # copy outside the lock (the slow part), then rename under it
                staging = self.root / ".staging" / uuid.uuid4().hex
                staging.mkdir(parents=True)
                for fname in [*manifest["files"], MANIFEST_NAME]:
                    shutil.copyfile(folder / fname, staging / fname)
                src = staging
            else:
                src = folder
            with self.lock():
                idx = self.index()
                if (target / MANIFEST_NAME).exists():
                    old = read_manifest(target)
                    if old["content_sha256"] != manifest["content_sha256"]:
                        raise SnapshotConflict(
                            f"{target}: {name}@{version} is already published with other content "
                            f"(content_sha256 {old['content_sha256'][:16]}… ≠ {manifest['content_sha256'][:16]}…); "
                            "published snapshots are immutable")
                    if self._register(idx, old, (target / MANIFEST_NAME).read_bytes()):
                        self._write_index(idx)  # repair an index that missed it
                    status, manifest = "unchanged", old
                else:
                    if target.exists():  # leftover without manifest: never complete
                        shutil.rmtree(target)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    os.rename(src, target)
                    src = None
                    self._register(idx, manifest, mbytes)
                    self._write_index(idx)
                    status = "published"
            if move and src is not None:
                shutil.rmtree(src, ignore_errors=True)
        finally:
            if staging is not None and staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
        return PublishResult(name, version, status, manifest, str(target))

    def _install_remote(self, folder: Path, manifest: dict, mbytes: bytes) -> PublishResult:
        name, version = manifest["taxonomy"], manifest["version"]
        base = f"{self.root}/{name}/{version}"
        with self.lock():
            idx = self.index()
            try:
                old = parse_manifest(self.fs.cat_file(f"{base}/{MANIFEST_NAME}"), self.location(f"{name}/{version}"))
            except FileNotFoundError:
                old = None
            if old is not None:
                if old["content_sha256"] != manifest["content_sha256"]:
                    raise SnapshotConflict(
                        f"{self.location(name + '/' + version)}: {name}@{version} is already published with "
                        "other content; published snapshots are immutable")
                if self._register(idx, old, self.fs.cat_file(f"{base}/{MANIFEST_NAME}")):
                    self._write_index(idx)
                return PublishResult(name, version, "unchanged", old, self.location(f"{name}/{version}"))
            self.fs.makedirs(base, exist_ok=True)
            for fname in manifest["files"]:
                self.fs.put_file(str(folder / fname), f"{base}/{fname}")
            self.fs.pipe_file(f"{base}/{MANIFEST_NAME}", mbytes)  # last: marks the version complete
            self._register(idx, manifest, mbytes)
            self._write_index(idx)
        return PublishResult(name, version, "published", manifest, self.location(f"{name}/{version}"))

    def publish(self, tables: TreeTables, *, name: str | None = None, seed: int | None = None,
                source_versions: dict | None = None, created: str | None = None,
                extra: dict | None = None, version: str | None = None, check: bool = True,
                min_link_coverage: float | dict | None = None) -> PublishResult:
        """Snapshot ``tables`` and publish it (see the module doc). The version id is the
        content hash unless ``version`` gives a label. With ``check`` (the default) a tree
        that fails :func:`taxoforge.snapshots.checks.publishing_checks` is refused with
        :class:`~taxoforge.snapshots.checks.ChecksFailed` and nothing is written."""
        self._check_writable()
        if check:
            from taxoforge.snapshots.checks import require_publishable

            require_publishable(tables, min_link_coverage=min_link_coverage)
        import tempfile

        if self.is_local:
            (self.root / ".staging").mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix="build-", dir=self.root / ".staging"))
        else:
            tmp = Path(tempfile.mkdtemp(prefix="taxoforge-snapshot-"))
        try:
            build_snapshot(tables, tmp, name=name, seed=seed, source_versions=source_versions,
                           created=created, extra=extra, version=version)
            return self.install(tmp, move=self.is_local)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def reindex(self) -> dict:
        """Rebuild ``index.json`` from the manifests in the store (keeps publication times
        of versions already listed). Returns the new index."""
        self._check_writable()
        with self.lock():
            try:
                old = self.index()
            except SnapshotError:
                old = _empty_index()
            published = {(t, e["version"]): e.get("published")
                         for t, v in old["taxonomies"].items() for e in v.get("versions", [])}
            idx = _empty_index()
            if self.is_local:
                paths = sorted(p for p in self.root.glob(f"*/*/{MANIFEST_NAME}") if not p.parts[-3].startswith("."))
                items = [(p.read_bytes(), str(p)) for p in paths]
            else:
                paths = sorted(self.fs.glob(f"{self.root}/*/*/{MANIFEST_NAME}"))
                items = [(self.fs.cat_file(p), p) for p in paths]
            for data, where in items:
                m = parse_manifest(data, where)
                self._register(idx, m, data)
                entry = idx["taxonomies"][m["taxonomy"]]["versions"][-1]
                entry["published"] = published.get((m["taxonomy"], m["version"])) or entry["published"]
            self._write_index(idx)
            return idx


def describe_entry(name: str, entry: dict, latest: bool = False) -> dict[str, Any]:
    return {"taxonomy": name, "version": entry["version"], "ref": f"{name}@{entry['version']}",
            "created": entry.get("created"), "published": entry.get("published"),
            "latest": latest, "row_counts": entry.get("row_counts", {}), "size": entry.get("size")}
