"""Frozen snapshots: each taxonomy's tree published, versioned by its content, to the store.

One asset per taxonomy (``<name>_snapshot``), downstream of the tree asset it freezes. Its
Dagster data version is the snapshot's content-derived version id, so the UI shows at a
glance whether a scheduled rebuild changed anything: same tables, same data version.

Publishing is gated twice:

* the tree assets carry *blocking* asset checks (one rooted tree, no orphans …); in a run
  that materialises a tree and its snapshot, a failed check stops the snapshot;
* the snapshot asset runs the same integrity checks (:mod:`taxoforge.snapshots.checks`)
  itself before publishing and fails without writing anything when one fails — this also
  covers runs that materialise the snapshot alone, from a tree built earlier.

Add a taxonomy by adding a line to :data:`SNAPSHOTS`.
"""

import json

import dagster as dg
import polars as pl

from assets.common.metadata import markdown_preview
from assets.common.resources import SnapshotStoreResource
from assets.common.tags import EMBEDDED_DEFAULT
from taxoforge.snapshots.checks import checks_markdown, failed_checks, publishing_checks
from taxoforge.snapshots.diff import diff_tables
from taxoforge.snapshots.load import load_taxonomy
from taxoforge.trees.tables import TreeTables

OWNER = "team:snapshots"

#: taxonomy name → the tree asset it snapshots (every such asset yields ``TreeTables``).
SNAPSHOTS: dict[str, str] = {
    "wordnet": "wordnet_tree",
    "imagenet1k": "imagenet1k_taxonomy",
    "inaturalist": "inaturalist_tree",
    "coldp": "coldp_tree",
    "inat21": "inat21_tree",
    "wikidata": "wikidata_tree",
}
#: The snapshots ``make demo`` publishes (the others follow their sources' rebuilds).
EMBEDDED_SNAPSHOTS = ("wordnet", "imagenet1k")


def _previous(store, name: str) -> str | None:
    versions = store.versions(name)
    return versions[-1]["version"] if versions else None


def _diff_summary(store, name: str, old: str, new: TreeTables) -> dict | None:
    """Counts of what changed since the previous latest version (local stores only)."""
    if not store.is_local:
        return None
    try:
        d = diff_tables(load_taxonomy(f"{name}@{old}", store=store, verify=False), new)
    except Exception:  # a damaged old version must not block publishing the new one
        return None
    return {**d["counts"], "depth_changed": d["depth_changed"],
            "examples": {k: d[k][:5] for k in ("added", "removed", "renamed", "moved", "links_changed") if d[k]}}


def snapshot_asset(name: str, tree_key: str, *, tags: dict | None = None) -> dg.AssetsDefinition:
    """The asset ``<name>_snapshot`` publishing the tree asset ``tree_key``."""

    @dg.asset(
        name=f"{name}_snapshot",
        group_name="snapshots",
        owners=[OWNER],
        kinds={"parquet"},
        tags=tags or {},
        ins={"tree": dg.AssetIn(tree_key)},
        description=(
            f"The `{tree_key}` tree frozen as a snapshot `{name}@<version>` in the snapshot store: "
            "four Parquet tables and a manifest.json (source versions, seed, code version, row counts, "
            "SHA-256 of every file). Version and data version are a hash of the tables' content, so an "
            "unchanged rebuild keeps its version. Refused when a tree check fails. "
            f"Load it with `load_taxonomy(\"{name}@VERSION\")`; pull it with `taxoforge pull {name}`."
        ),
    )
    def _snapshot(context: dg.AssetExecutionContext, snapshot_store: SnapshotStoreResource,
                  tree: TreeTables) -> dg.MaterializeResult:
        checks = publishing_checks(tree, min_link_coverage=snapshot_store.min_link_coverage)
        bad = failed_checks(checks)
        if bad:
            raise dg.Failure(
                description=f"{name}: not published, {len(bad)} tree check(s) failed: "
                            + "; ".join(f"{c.name}: {c.detail}" for c in bad),
                metadata={"checks": dg.MetadataValue.md(checks_markdown(checks))},
            )
        store = snapshot_store.store()
        previous = _previous(store, name)
        res = store.publish(tree, name=name, check=False)
        m = res.manifest
        changed = previous != res.version
        context.log.info(f"{res.ref}: {res.status} in {store.url}"
                         + ("" if changed else " (same content as the latest version)"))
        files = pl.DataFrame([{"file": f, "sha256": v["sha256"], "bytes": v["size"]} for f, v in sorted(m["files"].items())])
        metadata = {
            "version": res.version,
            "snapshot": res.ref,
            "status": res.status,
            "changed": changed,
            "previous_version": previous or "(none)",
            "store_url": store.url,
            "location": res.location,
            "content_sha256": m["content_sha256"],
            "checksums": dg.MetadataValue.json({f: v["sha256"] for f, v in m["files"].items()}),
            "files": dg.MetadataValue.md(markdown_preview(files)),
            "row_counts": dg.MetadataValue.json(m["row_counts"]),
            "nodes": m["row_counts"]["nodes"],
            "source_versions": dg.MetadataValue.json(m.get("source_versions") or {}),
            "seed": m.get("seed") if m.get("seed") is not None else "(none)",
            "code_version": dg.MetadataValue.json(m.get("code_version") or {}),
            "created": m["created"],
            "checks": dg.MetadataValue.md(checks_markdown(checks)),
            "load_with": dg.MetadataValue.md(f"`load_taxonomy(\"{res.ref}\", store=\"{store.url}\")`"),
        }
        if previous and changed:
            summary = _diff_summary(store, name, previous, tree)
            if summary is not None:
                metadata["diff_vs_previous"] = dg.MetadataValue.json(json.loads(json.dumps(summary, default=str)))
        return dg.MaterializeResult(metadata=metadata, data_version=dg.DataVersion(res.version))

    return _snapshot


snapshot_assets = [snapshot_asset(name, key, tags=EMBEDDED_DEFAULT if name in EMBEDDED_SNAPSHOTS else None)
                   for name, key in SNAPSHOTS.items()]
