"""Frozen, versioned snapshots of taxonomies (docs/method.md#snapshots): build, publish, pull, verify, diff.

>>> from taxoforge.snapshots import SnapshotStore, open_taxonomy
>>> store = SnapshotStore("data/snapshots")               # or s3://…, https://… (read only)
>>> store.publish(tables, latest=True).ref                 # doctest: +SKIP
'wordnet@3f2a9c0d1e4b'
>>> tree = open_taxonomy("wordnet", store=store)          # doctest: +SKIP
>>> tree.citation.ref, tree.citation.store, len(tree)     # doctest: +SKIP
('wordnet@3f2a9c0d1e4b', 'data/snapshots', 82115)

Modules: :mod:`.manifest` (what a snapshot is, the content-derived version id),
:mod:`.errors` (the errors and their exit codes), :mod:`.catalogue` (``index.json`` and
``NAME@VERSION`` references), :mod:`.locks` (the publishers' lock), :mod:`.store` (a store
on fsspec: atomic publishing), :mod:`.pull` (resumable, verified download), :mod:`.verify`, :mod:`.diff`, :mod:`.checks` (tree checks that gate
publishing), :mod:`.citation` (what a score cites), :mod:`.tree_cache` (a tree's working set, stored
once and memory-mapped), :mod:`.open` (``open_taxonomy``: the one way to open a taxonomy —
resolved, verified, cited, memory-mapped; a tree folder's content hash remembered by its
files' stamps), :mod:`.bibliography` (``taxoforge cite``: BibTeX and
CFF of a snapshot and its upstream sources; :mod:`.upstreams`: their licences), :mod:`.page`
(the store's ``index.html``), :mod:`.browser` (each version's static browser; its data:
:mod:`.browser_index`, :mod:`.browser_names`), :mod:`.cli`.
"""

from taxoforge.snapshots.checks import ChecksFailed, TreeCheck, failed_checks, publishing_checks, require_publishable
from taxoforge.snapshots.diff import diff_tables, format_diff
from taxoforge.snapshots.citation import Citation, cite_tables
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
from taxoforge.snapshots.open import open_taxonomy
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
    "read_snapshot", "summarise", "verify_folder", "pull", "open_taxonomy",
    "diff_tables", "format_diff", "publishing_checks", "failed_checks", "require_publishable", "ChecksFailed", "default_store_url", "parse_ref",
    "Citation", "cite_tables", "TaxonomyNotFound", "AlteredSnapshot",
]
