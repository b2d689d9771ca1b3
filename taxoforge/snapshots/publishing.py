"""Publishing into a snapshot store: install a snapshot folder, publish tables, move the
latest, rebuild the catalogue.

The writing half of :class:`taxoforge.snapshots.store.SnapshotStore` (which inherits
:class:`StorePublishing`); the module docstring of :mod:`taxoforge.snapshots.store` says how
publishing stays atomic and immutable on local folders and object stores alike.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from taxoforge.files import make_private_dir
from taxoforge.files.debris import WORK_SUFFIX, Claim, sweep
from taxoforge.snapshots.browser import publish_browser
from taxoforge.snapshots.catalogue import (empty_index, latest_version, register, resolve_entry, set_latest,
                                           sorted_versions)
from taxoforge.snapshots.checks import require_publishable
from taxoforge.snapshots.diff import fill_diffs
from taxoforge.snapshots.errors import SnapshotConflict, SnapshotError, SnapshotNotFound
from taxoforge.snapshots.manifest import (MANIFEST_NAME, MAX_MANIFEST_BYTES, build_snapshot, parse_manifest,
                                          read_manifest, validate_name)
from taxoforge.snapshots.page import PAGE_NAME
from taxoforge.trees.tables import TreeTables

__all__ = ["PublishResult", "StorePublishing"]


@dataclass
class PublishResult:
    """What publishing a snapshot did.

    Attributes
    ----------
    taxonomy, version : str
        The snapshot.
    status : str
        ``"published"``, or ``"unchanged"`` when the store had that version already.
    manifest : dict
        Its manifest.
    location : str
        The URL or path of its version folder.
    """

    taxonomy: str
    version: str
    status: str  # "published" | "unchanged"
    manifest: dict
    location: str  # URL or path of the version folder

    @property
    def ref(self) -> str:
        """``NAME@VERSION`` of the snapshot."""
        return f"{self.taxonomy}@{self.version}"

    def as_dict(self) -> dict:
        """The result as JSON values (``taxoforge publish --json``).

        Returns
        -------
        dict
            The fields, with ``ref``, the content hash, files and row counts.
        """
        return {"taxonomy": self.taxonomy, "version": self.version, "ref": self.ref, "status": self.status,
                "location": self.location, "content_sha256": self.manifest["content_sha256"],
                "files": self.manifest["files"], "row_counts": self.manifest["row_counts"]}


class StorePublishing:
    """The publishing methods of :class:`~taxoforge.snapshots.store.SnapshotStore`.

    A mixin: it uses the store's access, catalogue and locking methods (``index``,
    ``lock``, ``_put``, ``_write_index`` …) and is not meant to be used alone.
    """

    # ---- diffs between consecutive versions, for the catalogue --------------------------------
    def _fill_diffs(self, idx: dict, name: str, fresh: dict[str, TreeTables] | None = None) -> None:
        fill_diffs(idx, name, lambda v, entry: self.read_tables(name, v, entry), fresh)

    def install(self, folder: str | os.PathLike, *, move: bool = False, latest: bool = False, diffs: bool = True,
                _fresh: TreeTables | None = None) -> PublishResult:
        """Publish a complete snapshot folder (with its ``manifest.json``). With ``move`` the
        folder (which must be on the store's filesystem, for local stores) is renamed into
        place instead of copied. With ``latest`` it becomes what the bare taxonomy name
        means (so does a taxonomy's first version); a version already published is then
        made the latest too.

        Parameters
        ----------
        folder : str or os.PathLike
            The folder.
        move : bool, optional
            Whether the folder is renamed into place instead of copied.
        latest : bool, optional
            Whether the version becomes the latest.
        diffs : bool, optional
            Whether to fill in the catalogue's summaries of what changed (they read the
            tables); ``False`` leaves them to the next publish — a pull never reads them.

        Returns
        -------
        PublishResult
            What was published, and where.
        """
        self._check_writable()
        folder = Path(folder)
        manifest = read_manifest(folder)
        validate_name(manifest["taxonomy"]), validate_name(manifest["version"], "version")
        for fname in manifest["files"]:
            if not (folder / fname).is_file():
                raise SnapshotError(f"{folder}: file {fname} named in the manifest is missing")
        mbytes = (folder / MANIFEST_NAME).read_bytes()
        fresh = {manifest["version"]: _fresh} if _fresh is not None else None
        if not diffs:
            fresh = False  # no diffs: see _install_by_rename / _install_manifest_last
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

    def _unchanged(self, idx: dict, manifest: dict, old: tuple[dict, bytes], *, latest: bool,
                   diffs: bool = True) -> PublishResult:
        name, version = manifest["taxonomy"], manifest["version"]
        if old[0]["content_sha256"] != manifest["content_sha256"]:
            raise SnapshotConflict(
                f"{self.location(f'{name}/{version}')}: {name}@{version} is already published with other content "
                f"(content_sha256 {old[0]['content_sha256'][:16]}… ≠ {manifest['content_sha256'][:16]}…); "
                "published snapshots are immutable")
        was = latest_version(idx["taxonomies"].get(name, {}))
        added = register(idx, *old, latest=latest)  # repairs an index that missed it
        if (added or latest_version(idx["taxonomies"][name]) != was or not self._has_page()
                or (self.public_url and idx.get("public_url") != self.public_url)):  # a new public URL to record
            if added and diffs:
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
                    result = self._unchanged(idx, manifest, old, latest=latest, diffs=fresh is not False)
                else:
                    if target.exists():  # leftover without manifest: never complete
                        shutil.rmtree(target)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    os.rename(src, target)
                    src = None
                    register(idx, manifest, mbytes, latest=latest)
                    if fresh is not False:
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
                return self._unchanged(idx, manifest, old, latest=latest, diffs=fresh is not False)
            self.fs.makedirs(base, exist_ok=True)
            for fname in manifest["files"]:
                self.fs.put_file(str(folder / fname), f"{base}/{fname}")
            self.fs.pipe_file(f"{base}/{MANIFEST_NAME}", mbytes)  # last: marks the version complete
            register(idx, manifest, mbytes, latest=latest)
            if fresh is not False:
                self._fill_diffs(idx, name, fresh)
            self._write_index(idx)
        return PublishResult(name, version, "published", manifest, self.location(f"{name}/{version}"))

    def publish(self, tables: TreeTables, *, name: str | None = None, seed: int | None = None,
                source_versions: dict | None = None, created: str | None = None,
                extra: dict | None = None, version: str | None = None, check: bool = True,
                min_link_coverage: float | dict | None = None, latest: bool = False,
                browser: bool = True) -> PublishResult:
        """Snapshot ``tables`` and publish it (see the module doc). The version id is the
        content hash unless ``version`` gives a label. With ``check`` (the default) a tree
        that fails the publishing checks (:func:`taxoforge.snapshots.checks.require_publishable`)
        is refused with :class:`~taxoforge.snapshots.checks.ChecksFailed` and nothing is written.
        With ``latest`` the version becomes what the bare name means (the first version of
        a taxonomy always does); otherwise the latest stays where it was.

        Parameters
        ----------
        tables : TreeTables
            The tree's tables.
        name : str, optional
            The taxonomy's name.
        seed : int, optional
            The seed of the random draws.
        source_versions : dict, optional
            What identifies each source's release (default: the tables' ``info``).
        created : str, optional
            The creation time recorded (default: now).
        extra : dict, optional
            More fields for the manifest.
        version : str, optional
            The version id (or, for publishing, a label to use instead of the content hash).
        check : bool, optional
            Whether the publishing checks must pass.
        min_link_coverage : float or dict, optional
            Least share of each dataset's labels that must link.
        latest : bool, optional
            Whether the version becomes the latest.
        browser : bool, optional
            Whether to write the version's browser too (:mod:`~taxoforge.snapshots.browser`).

        Returns
        -------
        PublishResult
            What was published, and where.
        """
        self._check_writable()
        if check:
            require_publishable(tables, min_link_coverage=min_link_coverage)
        claim = None
        if self.is_local:
            tmp, claim = self._staging("build-")
        else:
            tmp = Path(tempfile.mkdtemp(prefix="taxoforge-snapshot-"))
        try:
            build_snapshot(tables, tmp, name=name, seed=seed, source_versions=source_versions,
                           created=created, extra=extra, version=version)
            result = self.install(tmp, move=self.is_local, latest=latest, _fresh=tables)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
            if claim is not None:
                claim.release()
        return publish_browser(self, result, tables) if browser else result

    def set_latest(self, ref: str) -> str:
        """Make ``ref`` (``NAME@VERSION``, a version prefix or ``sha256:…``) what the bare
        ``NAME`` means; returns ``NAME@VERSION``.

        Parameters
        ----------
        ref : str
            ``NAME``, ``NAME@VERSION`` or ``sha256:…``.

        Returns
        -------
        str
            ``NAME@VERSION`` now meant by ``NAME``.
        """
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
        last). Returns the new index.

        Returns
        -------
        dict
            The new index.
        """
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
                for kept_key in ("diff", "browser"):  # the browser's files are still there
                    if before.get(kept_key):
                        entry[kept_key] = before[kept_key]
            for name, tax in idx["taxonomies"].items():
                was = latest_version(old["taxonomies"].get(name, {"versions": []}))
                listed = {e["version"] for e in tax["versions"]}
                tax["latest"] = was if was in listed else sorted_versions(tax["versions"])[-1]["version"]
            self._write_index(idx)
            return idx
