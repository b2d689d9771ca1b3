"""Frozen, versioned snapshots of taxonomies (docs/method.md#snapshots): build, publish, pull, verify, diff.

>>> from taxoforge.snapshots import SnapshotStore, load_taxonomy
>>> store = SnapshotStore("data/snapshots")               # or s3://…, https://… (read only)
>>> store.publish(tables, latest=True).ref                 # doctest: +SKIP
'wordnet@3f2a9c0d1e4b'
>>> load_taxonomy("wordnet@3f2a9c0d1e4b", store=store)     # doctest: +SKIP
>>> tables, citation = resolve_taxonomy("wordnet", store=store)  # doctest: +SKIP
>>> citation.ref, citation.store                                  # doctest: +SKIP
('wordnet@3f2a9c0d1e4b', 'data/snapshots')

Modules: :mod:`.manifest` (what a snapshot is, the content-derived version id),
:mod:`.errors` (the errors and their exit codes), :mod:`.catalogue` (``index.json`` and
``NAME@VERSION`` references), :mod:`.locks` (the publishers' lock), :mod:`.store` (a store
on fsspec: atomic publishing), :mod:`.pull` (resumable, verified download), :mod:`.verify`, :mod:`.diff`, :mod:`.checks` (tree checks that gate
publishing), :mod:`.load` (``load_taxonomy``), :mod:`.citation` (``resolve_taxonomy``: the tables
and the citation a score must carry), :mod:`.bibliography` (``taxoforge cite``: BibTeX and
CFF of a snapshot and its upstream sources; :mod:`.upstreams`: their licences), :mod:`.page`
(the store's ``index.html``), :mod:`.browser` (each version's static browser; its data:
:mod:`.browser_index`, :mod:`.browser_names`), :mod:`.cli`.
"""

from taxoforge.snapshots.checks import ChecksFailed, TreeCheck, failed_checks, publishing_checks, require_publishable
from taxoforge.snapshots.diff import diff_tables, format_diff
from taxoforge.snapshots.load import load_taxonomy, resolve_ref
from taxoforge.snapshots.citation import Citation, cite_tables, resolve_taxonomy
from taxoforge.snapshots.errors import (
    AlteredSnapshot,
    ChecksumMismatch,
    LockTimeout,
    ReadOnlyStore,
    SnapshotConflict,
    SnapshotError,
    SnapshotNotFound,
    TaxonomyNotFound,
)
from taxoforge.snapshots.manifest import (
    MANIFEST_NAME,
    build_snapshot,
    code_version,
    content_id,
    read_manifest,
)
from taxoforge.snapshots.pull import DownloadError, PullResult, pull
from taxoforge.snapshots.catalogue import parse_ref
from taxoforge.snapshots.publishing import PublishResult
from taxoforge.snapshots.store import SnapshotStore, default_store_url
from taxoforge.snapshots.verify import VerifyReport, read_snapshot, summarise, verify_folder

__all__ = [
    "MANIFEST_NAME", "SnapshotError", "SnapshotNotFound", "SnapshotConflict", "ChecksumMismatch",
    "ReadOnlyStore", "LockTimeout", "DownloadError", "SnapshotStore", "PublishResult", "PullResult",
    "VerifyReport", "TreeCheck", "build_snapshot", "code_version", "content_id", "read_manifest",
    "read_snapshot", "summarise", "verify_folder", "pull", "load_taxonomy", "resolve_ref",
    "diff_tables", "format_diff", "publishing_checks", "failed_checks", "require_publishable", "ChecksFailed", "default_store_url", "parse_ref",
    "Citation", "cite_tables", "resolve_taxonomy", "TaxonomyNotFound", "AlteredSnapshot",
]
