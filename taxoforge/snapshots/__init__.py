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
:mod:`.browser_index`, :mod:`.browser_names`, written column-wise by :mod:`.browser_json`), :mod:`.cli`.
"""

import importlib

# ``pull`` is the name of a function and of the module that holds it: bound here, once the
# module is imported, so ``taxoforge.snapshots.pull`` is the function (a lazy export would be
# shadowed by the module as soon as anything imports it)
from taxoforge.snapshots.pull import pull

#: Public name → the module that holds it. Loaded on first use (PEP 562), so importing one
#: module of the package (``taxoforge.snapshots.tree_cache``) does not load the others.
_EXPORTS = {
    "ChecksFailed": "taxoforge.snapshots.checks",
    "TreeCheck": "taxoforge.snapshots.checks",
    "failed_checks": "taxoforge.snapshots.checks",
    "publishing_checks": "taxoforge.snapshots.checks",
    "require_publishable": "taxoforge.snapshots.checks",
    "diff_tables": "taxoforge.snapshots.diff",
    "format_diff": "taxoforge.snapshots.diff",
    "Citation": "taxoforge.snapshots.citation",
    "cite_tables": "taxoforge.snapshots.citation",
    "AlteredSnapshot": "taxoforge.snapshots.errors",
    "ChecksumMismatch": "taxoforge.snapshots.errors",
    "LockTimeout": "taxoforge.snapshots.errors",
    "ReadOnlyStore": "taxoforge.snapshots.errors",
    "SnapshotConflict": "taxoforge.snapshots.errors",
    "SnapshotError": "taxoforge.snapshots.errors",
    "SnapshotNotFound": "taxoforge.snapshots.errors",
    "TaxonomyNotFound": "taxoforge.snapshots.errors",
    "open_taxonomy": "taxoforge.snapshots.open",
    "MANIFEST_NAME": "taxoforge.snapshots.manifest",
    "build_snapshot": "taxoforge.snapshots.manifest",
    "code_version": "taxoforge.snapshots.manifest",
    "content_id": "taxoforge.snapshots.manifest",
    "read_manifest": "taxoforge.snapshots.manifest",
    "DownloadError": "taxoforge.snapshots.pull",
    "PullResult": "taxoforge.snapshots.pull",
    "parse_ref": "taxoforge.snapshots.catalogue",
    "PublishResult": "taxoforge.snapshots.publishing",
    "SnapshotStore": "taxoforge.snapshots.store",
    "default_store_url": "taxoforge.snapshots.store",
    "VerifyReport": "taxoforge.snapshots.verify",
    "read_snapshot": "taxoforge.snapshots.verify",
    "summarise": "taxoforge.snapshots.verify",
    "verify_folder": "taxoforge.snapshots.verify",
}

__all__ = [*_EXPORTS, "pull"]


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'taxoforge.snapshots' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
