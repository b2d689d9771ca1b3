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
    ``$TAXOFORGE_STORE`` or ``~/.local/share/taxoforge/snapshots``: :func:`default_store_url`;
    ``file://`` URLs too), ``http://``
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
    Every change of the index also writes ``index.html`` (:mod:`.page`), and fills in, for
    the taxonomy just published, the summary of what changed between each pair of
    consecutive versions (:func:`~taxoforge.snapshots.diff.diff_summary`; computed once,
    kept in ``index.json``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from taxoforge.files import (
    MAX_RETRY_AFTER,
    DownloadError,
    FileTooLarge,
    UnsafePath,
    download,
    fetch_bytes,
    file_sha256,
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
    resolve_entry,
    sorted_versions,
)
from taxoforge.snapshots.errors import (
    ChecksumMismatch,
    LockTimeout,
    ReadOnlyStore,
    SnapshotConflict,
    SnapshotError,
    SnapshotNotFound,
)
from taxoforge.snapshots.locks import LOCK_NAME, local_lock, remote_lock
from taxoforge.snapshots.manifest import MANIFEST_NAME, MAX_MANIFEST_BYTES, parse_manifest, validate_name
from taxoforge.snapshots.page import PAGE_NAME, render_page
from taxoforge.snapshots.publishing import PublishResult, StorePublishing
from taxoforge.snapshots.verify import VerifyReport, check_content, read_snapshot, tables_from_bytes, verify_folder
from taxoforge.trees.tables import TreeTables

__all__ = [
    "STORE_VARIABLES",
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

#: The variables that name the default store, the first set wins (``TAXOFORGE_SNAPSHOT_STORE``: its former name).
STORE_VARIABLES = ("TAXOFORGE_STORE", "TAXOFORGE_SNAPSHOT_STORE")
_READ_ONLY_PROTOCOLS = ("http", "https")


def _as_tuple(protocol) -> tuple:
    return tuple(protocol) if isinstance(protocol, (tuple, list)) else (protocol,)


def default_store_url() -> str:
    """The store used when none is named: ``$TAXOFORGE_STORE``, else the user's data folder's
    ``snapshots/`` (``$XDG_DATA_HOME/taxoforge/snapshots``, else
    ``~/.local/share/taxoforge/snapshots``: :func:`taxoforge.files.user_data_dir`) — the same
    from every working folder, so a name resolves, and a tree is cited, the same way
    everywhere. ``$TAXOFORGE_SNAPSHOT_STORE`` is the variable's former name, still read.

    Returns
    -------
    str
    """
    from taxoforge.files.paths import user_data_dir

    for name in STORE_VARIABLES:
        if os.environ.get(name):
            return os.environ[name]
    return str(user_data_dir() / "snapshots")


class SnapshotStore(StorePublishing):
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
    no symbolic link is followed below the store's folder.

    Parameters
    ----------
    url : str or os.PathLike, optional
        A local path, ``file://``, ``http(s)://`` or any fsspec URL (default
        :func:`default_store_url`).
    storage_options : dict, optional
        Passed to fsspec (credentials, endpoints: for an S3-compatible server
        ``{"client_kwargs": {"endpoint_url": …}}``).
    lock_timeout : float, optional
        Seconds to wait for the publishers' lock.
    retries : int, optional
        How often to retry.
    backoff : float, optional
        Seconds before the first retry, doubled each time.
    public_url : str, optional
        Where users reach this store (e.g. the HTTPS address a local folder is served
        at), named in the catalogue page's pull commands.
    timeout : float, optional
        Seconds to wait.
    max_retry_after : float, optional
        Longest ``Retry-After`` honoured.
    allow_other_hosts : bool, optional
        Whether a redirect to another host is followed.
    """

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
        """The path or URL of ``rel`` inside the store (for messages, metadata and downloads).

        Parameters
        ----------
        rel : str
            A path relative to the store's root.

        Returns
        -------
        str
            The path or URL of ``rel`` inside the store (for messages, metadata and
            downloads).
        """
        return self._path(rel) if self.is_local else self.fs.unstrip_protocol(self._path(rel))

    def transfer_options(self) -> dict:
        """The bounds and retry policy of this store's reads, as keywords of
        :func:`taxoforge.files.download` and :func:`taxoforge.files.fetch_bytes`.

        Returns
        -------
        dict
            The bounds and retry policy of this store's reads, as keywords of
            :func:`taxoforge.files.download` and :func:`taxoforge.files.fetch_bytes`.
        """
        return dict(retries=self.retries, backoff=self.backoff, max_retry_after=self.max_retry_after,
                    timeout=self.timeout, allow_other_hosts=self.allow_other_hosts,
                    storage_options=self.storage_options)

    def read_bytes(self, rel: str, *, max_bytes: int, what: str = "file") -> bytes:
        """The bytes of ``rel``, at most ``max_bytes`` of them (a larger file is refused before
        it is read whole); :class:`SnapshotNotFound` when it does not exist. Local stores:
        a regular file reached without a symbolic link. Remote stores: one
        :func:`taxoforge.files.fetch_bytes` (deadline, redirect rule and retry policy of
        :meth:`transfer_options`).

        Parameters
        ----------
        rel : str
            A path relative to the store's root.
        max_bytes : int
            Most bytes accepted.
        what : str, optional
            What the file is, for messages.

        Returns
        -------
        bytes
            The bytes of ``rel``, at most ``max_bytes`` of them (a larger file is refused
            before it is read whole); :class:`SnapshotNotFound` when it does not exist.
        """
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
        """The parsed ``index.json`` (an empty catalogue for a new writable store).

        Returns
        -------
        dict
            The parsed ``index.json`` (an empty catalogue for a new writable store).
        """
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
        """The taxonomies the store's index lists.

        Returns
        -------
        list of str
            Their names, sorted.
        """
        return sorted(self.index()["taxonomies"])

    def latest(self, name: str) -> str | None:
        """The version a bare ``name`` means (None when the store has no such taxonomy).

        Parameters
        ----------
        name : str
            The taxonomy's name.

        Returns
        -------
        str or None
            The version a bare ``name`` means (None when the store has no such taxonomy).
        """
        tax = self.index()["taxonomies"].get(name)
        return latest_version(tax) if tax else None

    def versions(self, name: str) -> list[dict]:
        """Index entries of ``name``, oldest first (the last one is the latest).

        Parameters
        ----------
        name : str
            The taxonomy's name.

        Returns
        -------
        list[dict]
            Index entries of ``name``, oldest first.
        """
        return sorted_versions(self.index()["taxonomies"].get(name, {}).get("versions", []))

    def resolve(self, ref: str) -> tuple[str, dict]:
        """``(taxonomy, index entry)`` of ``"NAME"`` (latest) or ``"NAME@VERSION"`` (a
        unique prefix of at least 4 characters is accepted).

        Parameters
        ----------
        ref : str
            ``NAME``, ``NAME@VERSION`` or ``sha256:…``.

        Returns
        -------
        tuple[str, dict]
            ``(taxonomy, index entry)`` of ``"NAME"`` (latest) or ``"NAME@VERSION"`` (a
            unique prefix of at least 4 characters is accepted).
        """
        parse_ref(ref)
        self.require_exists()
        return resolve_entry(self.index(), ref, self.url)

    def manifest(self, name: str, version: str, entry: dict | None = None) -> dict:
        """The manifest of ``name@version``, checked against the index's SHA-256.

        Parameters
        ----------
        name : str
            The taxonomy's name.
        version : str
            The version id.
        entry : dict, optional
            The version's index entry, when the caller has it.

        Returns
        -------
        dict
            The manifest of ``name@version``, checked against the index's SHA-256.
        """
        return self.manifest_and_bytes(name, version, entry)[0]

    def manifest_and_bytes(self, name: str, version: str, entry: dict | None = None) -> tuple[dict, bytes]:
        """The manifest of ``name@version`` (at most :data:`~taxoforge.snapshots.manifest.MAX_MANIFEST_BYTES`)
        and its bytes, checked against the index's SHA-256 before it is parsed.

        Parameters
        ----------
        name : str
            The taxonomy's name.
        version : str
            The version id.
        entry : dict, optional
            The version's index entry, when the caller has it.

        Returns
        -------
        tuple[dict, bytes]
            The manifest of ``name@version`` (at most
            :data:`~taxoforge.snapshots.manifest.MAX_MANIFEST_BYTES`) and its bytes, checked
            against the index's SHA-256 before it is parsed.
        """
        rel = f"{name}/{version}/{MANIFEST_NAME}"
        data = bytes(self.read_bytes(rel, max_bytes=MAX_MANIFEST_BYTES, what="manifest"))
        want = (entry or {}).get("manifest_sha256")
        if want and hashlib.sha256(data).hexdigest() != want:
            raise ChecksumMismatch(f"{self.location(rel)}: sha256 {hashlib.sha256(data).hexdigest()} "
                                   f"but the store index says {want}")
        return parse_manifest(data, self.location(rel)), data

    def local_dir(self, name: str, version: str) -> Path:
        """The folder of ``name@version`` in a local store (both checked against the id
        grammar, the path checked to stay inside the store).

        Parameters
        ----------
        name : str
            The taxonomy's name.
        version : str
            The version id.

        Returns
        -------
        Path
            The folder of ``name@version`` in a local store (both checked against the id
            grammar, the path checked to stay inside the store).
        """
        if not self.is_local:
            raise SnapshotError(f"store {self.url} is not a local folder")
        return self.local_path(validate_name(name), validate_name(version, "version"))

    def local_path(self, *parts: str) -> Path:
        """``<store>/<parts…>`` of a local store; :class:`SnapshotError` if it would leave the store.

        Parameters
        ----------
        *parts
            Path components below the store's folder.

        Returns
        -------
        Path
            ``<store>/<parts…>`` of a local store; :class:`SnapshotError` if it would leave
            the store.
        """
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
        """The publishers' lock of this store (:mod:`.locks`).

        Yields
        ------
        object
            The publishers' lock of this store (:mod:`.locks`).
        """
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
        # a local folder without a public URL is named nowhere in the page (it says "not published")
        page = render_page(idx, public or (None if self.is_local else self.url), public=bool(public)).encode("utf-8")
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
        against the manifest's SHA-256 (remote stores: into memory, nothing written).

        Parameters
        ----------
        name : str
            The taxonomy's name.
        version : str
            The version id.
        entry : dict, optional
            The version's index entry, when the caller has it.

        Returns
        -------
        TreeTables
            The tables of ``name@version`` read straight from the store, every file checked
            against the manifest's SHA-256 (remote stores: into memory, nothing written).
        """
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
        report lists every problem. Remote files are downloaded into a temporary folder
        (deleted after) by :func:`taxoforge.files.download`, bounded by their manifest
        sizes, so memory holds one chunk at a time whatever the store sends.

        Parameters
        ----------
        ref : str
            ``NAME``, ``NAME@VERSION`` or ``sha256:…``.
        deep : bool, optional
            Whether to recompute the content hash too.

        Returns
        -------
        VerifyReport
            Every problem found (none: the snapshot is intact).
        """
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
        with tempfile.TemporaryDirectory(prefix="taxoforge-verify-") as tmp:
            for fname, meta in sorted(m["files"].items()):
                try:  # one GET, at most the manifest's size, retried on 429/5xx
                    got = file_sha256(download(self.location(f"{name}/{version}/{fname}"), Path(tmp) / fname,
                                               size=meta["size"], **self.transfer_options()).path)
                except DownloadError as e:
                    rep.problems.append(f"{fname}: missing" if e.status == 404 else f"{fname}: {e}")
                    continue
                if got != meta["sha256"]:
                    rep.problems.append(f"{fname}: sha256 {got}, manifest says {meta['sha256']}")
                else:
                    rep.checked.append(fname)
            if deep and not rep.problems:
                check_content(rep, lambda: read_snapshot(Path(tmp), m))
        rep.ok = not rep.problems
        return rep
