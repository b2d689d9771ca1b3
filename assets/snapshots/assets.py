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

Each publish makes the version what the bare name means (config ``latest``, default true:
set it false for a test build), records the tree's provenance (seed, cycle policy, source
versions) in the manifest, and rewrites the store's ``index.json`` and ``index.html``
catalogue with a summary of what changed from the version before, and writes the version's
browser (search any name or id; path, children, links out, changes).

Add a taxonomy by adding a line to :data:`SNAPSHOTS`; the deployment configures which are
published (:mod:`assets.snapshots.taxonomies`, :mod:`assets.snapshots.definitions`).
"""

import json

import dagster as dg
import polars as pl

from assets.common.automation import PUBLISH_WHEN_CHECKED
from assets.common.metadata import markdown_preview
from assets.common.resources import SnapshotStoreResource
from assets.common.tags import EMBEDDED_DEFAULT
from taxoforge.snapshots.bibliography import LOCAL_ONLY, public_address
from taxoforge.snapshots.browser import browser_path
from taxoforge.snapshots.checks import checks_markdown, failed_checks, publishing_checks
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
    "inaturalist_named": "inaturalist_named_tree",
}
#: The snapshots ``make demo`` publishes: every tree the demo builds (the others follow
#: their sources' rebuilds).
EMBEDDED_SNAPSHOTS = ("wordnet", "imagenet1k", "inaturalist")


class SnapshotConfig(dg.Config):
    """``latest``: make the published version what the bare taxonomy name means (``score …
    NAME``, ``load_taxonomy("NAME")``). Set it false for a test build (another seed, an
    experimental exclusion list …) so it is published beside the current one without
    replacing it; the first version of a taxonomy becomes latest either way."""

    latest: bool = True


def _diff_summary(store, name: str, version: str) -> dict | None:
    """What changed from the version before ``version``, as the store's catalogue records
    it (:meth:`taxoforge.snapshots.store.SnapshotStore.publish` computes it)."""
    entry = next((e for e in store.versions(name) if e["version"] == version), None)
    d = (entry or {}).get("diff") or {}
    if "counts" not in d:
        return None
    return {"from": d["from"], **d["counts"], "depth_changed": d["depth_changed"], "examples": d.get("examples", {})}


def snapshot_asset(name: str, tree_key: str, *, tags: dict | None = None) -> dg.AssetsDefinition:
    """The asset ``<name>_snapshot`` publishing the tree asset ``tree_key``."""

    @dg.asset(
        name=f"{name}_snapshot",
        group_name="snapshots",
        owners=[OWNER],
        kinds={"parquet"},
        tags=tags or {},
        ins={"tree": dg.AssetIn(tree_key)},
        automation_condition=PUBLISH_WHEN_CHECKED,
        description=(
            f"The `{tree_key}` tree frozen as a snapshot `{name}@<version>` in the snapshot store: "
            "four Parquet tables and a manifest.json (source versions, seed, code version, row counts, "
            "SHA-256 of every file). Version and data version are a hash of the tables' content, so an "
            "unchanged rebuild keeps its version. Refused when a tree check fails. Config `latest` "
            f"(default true) makes it what `{name}` means; false publishes a test build beside it. "
            f"Load it with `load_taxonomy(\"{name}@VERSION\")`; pull it with `taxoforge pull {name}`."
        ),
    )
    def _snapshot(context: dg.AssetExecutionContext, config: SnapshotConfig, snapshot_store: SnapshotStoreResource,
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
        previous = store.latest(name)
        res = store.publish(tree, name=name, check=False, latest=config.latest)
        m = res.manifest
        public = public_address(store)
        changed = previous != res.version
        latest = store.latest(name)
        context.log.info(f"{res.ref}: {res.status} in {store.url}"
                         + ("" if changed else " (same content as the latest version)")
                         + ("" if latest == res.version else f"; {name} still means {name}@{latest} (latest: false)"))
        files = pl.DataFrame([{"file": f, "sha256": v["sha256"], "bytes": v["size"]} for f, v in sorted(m["files"].items())])
        metadata = {
            "version": res.version,
            "snapshot": res.ref,
            "status": res.status,
            "changed": changed,
            "previous_version": previous or "(none)",
            "latest": latest or "(none)",
            "is_latest": latest == res.version,
            # a reader's address: the store's public URL, never the path of a local folder
            "store_url": public or LOCAL_ONLY,
            "cite_with": dg.MetadataValue.md(f"`taxoforge cite {res.ref} --store {public or store.url}`"),
            "location": res.location,
            "content_sha256": m["content_sha256"],
            "checksums": dg.MetadataValue.json({f: v["sha256"] for f, v in m["files"].items()}),
            "files": dg.MetadataValue.md(markdown_preview(files)),
            "row_counts": dg.MetadataValue.json(m["row_counts"]),
            "nodes": m["row_counts"]["nodes"],
            "source_versions": dg.MetadataValue.json(m.get("source_versions") or {}),
            "seed": m.get("seed") if m.get("seed") is not None else "(none)",
            "cycle_policy": m.get("cycle_policy") or "(none)",
            "code_version": dg.MetadataValue.json(m.get("code_version") or {}),
            "created": m["created"],
            "checks": dg.MetadataValue.md(checks_markdown(checks)),
            "load_with": dg.MetadataValue.md(f"`load_taxonomy(\"{res.ref}\", store=\"{public or store.url}\")`"),
            "catalogue": dg.MetadataValue.path(store.location("index.html")),
            "browser": (dg.MetadataValue.url(f"{public.rstrip('/')}/{browser_path(name, res.version)}")
                        if public and public.startswith(("http://", "https://"))
                        else dg.MetadataValue.path(store.location(browser_path(name, res.version)))),
        }
        if changed:
            summary = _diff_summary(store, name, res.version)
            if summary is not None:
                metadata["diff_vs_previous"] = dg.MetadataValue.json(json.loads(json.dumps(summary, default=str)))
        return dg.MaterializeResult(metadata=metadata, data_version=dg.DataVersion(res.version))

    return _snapshot


def snapshot_assets(taxonomies) -> list[dg.AssetsDefinition]:
    """The snapshot assets of ``taxonomies`` (names of :data:`SNAPSHOTS`), the embedded ones
    tagged as the embedded default."""
    return [snapshot_asset(name, SNAPSHOTS[name], tags=EMBEDDED_DEFAULT if name in EMBEDDED_SNAPSHOTS else None)
            for name in taxonomies]
