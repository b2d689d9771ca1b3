"""Names for the iNaturalist tree from other sources: Wikidata's English common names and taxon
synonyms, and optionally a Catalogue of Life release's synonyms and vernacular names, merged into
a named iNaturalist tree with its own snapshot (``inaturalist_named_snapshot``, published by the
snapshots domain when ``$TAXOFORGE_TAXONOMIES`` names ``inaturalist_named``).

Lineage::

    inaturalist_tree ─┬─> inaturalist_wikidata_names ─┐   (SPARQL: network, on request only)
                      └───────────────────────────────┴─> inaturalist_named_tree ─> inaturalist_named_snapshot

Neither asset is part of the offline embedded default: ``inaturalist_wikidata_names`` queries
the Wikidata Query Service (resource ``wikidata_sparql``), so it runs only when a person asks
for it, and refuses a non-loopback endpoint while ``TAXOFORGE_OFFLINE`` is set. The domain
logic is :mod:`taxoforge.sources.wikidata.taxon_names`, :mod:`taxoforge.sources.coldp` and
:mod:`taxoforge.links.external_names`; these are thin wrappers.
"""

import json
from pathlib import Path
from datetime import timedelta
import time
from functools import partial

import dagster as dg
import polars as pl

from assets.common.checks import tree_checks
from assets.common.metadata import markdown_preview, tree_metadata
from assets.common.resources import WikidataSparqlResource
from assets.common.tags import TAXOFORGE_TEAM
from taxoforge.links.external_names import merge_names
from taxoforge.sources.coldp import coldp_names_for_tree, coldp_version
from taxoforge.sources.wikidata.checkpoint import BatchCheckpoint
from taxoforge.sources.wikidata.taxon_names import (
    DEFAULT_NAME_BATCH_SIZE,
    TAXON_NAMES_SCHEMA,
    fetch_inat_taxon_names,
    inat_ids,
)
from taxoforge.trees.tables import NAMES_SCHEMA, TreeTables, name_kind_counts

GROUP = "biology"  # the iNaturalist tree's domain

#: ``@dg.asset`` with what every asset of this module shares.
taxon_names_asset = partial(dg.asset, group_name=GROUP, owners=[TAXOFORGE_TEAM], kinds={"python", "parquet"}, code_version="1")


class InatWikidataNamesConfig(dg.Config):
    """Which iNaturalist taxa to ask Wikidata about, and how. ``ranks`` (e.g. ``["species"]``)
    and ``under`` (node ids such as ``inat:47178`` for ray-finned fishes) narrow the taxa;
    empty means the whole tree (about 2,800 requests at the default batch size)."""

    endpoint: str | None = None  # overrides the wikidata_sparql resource's endpoint
    contact: str | None = None  # overrides its contact (put into the User-Agent)
    langs: list[str] = ["en"]  # languages of the common names (P1843)
    batch_size: int = DEFAULT_NAME_BATCH_SIZE
    ranks: list[str] = []
    under: list[str] = []
    resume: bool = True  # reuse finished batches from the resource's checkpoint folder


class InatNamedTreeConfig(dg.Config):
    """``coldp_sources``: ColDP folders or zips (e.g. a Catalogue of Life release) whose synonyms
    and vernacular names are carried onto the tree too, by accepted scientific name."""

    coldp_sources: list[str] = []
    name: str = "inaturalist_named"


def _info_table(info: dict) -> pl.DataFrame:
    return pl.DataFrame({"info_json": [json.dumps(info, sort_keys=True, default=str)]})


def _kinds_markdown(tree_or_names) -> str:
    return markdown_preview(name_kind_counts(tree_or_names, by_lang=True), max_rows=60)


@taxon_names_asset(
    kinds={"python", "sparql", "parquet"},
    # names on Wikidata change slowly; fetched on request, stale after a quarter
    freshness_policy=dg.FreshnessPolicy.time_window(warn_window=timedelta(days=90), fail_window=timedelta(days=180)),
    description=(
        "Names Wikidata gives to the taxa of the iNaturalist tree, joined by the iNaturalist taxon ID "
        "(P3151): common names (P1843, in the configured languages, language tag kept), taxon synonyms "
        "(P1420, their P225) and the item's own taxon name (P225), each row with its QID and property. "
        "Over SPARQL (resource `wikidata_sparql`; polite, batched, resumable) — network, on request only. "
        "Tables `names` and `info` (endpoint, query time, batches, rows dropped and why)."
    ),
)
def inaturalist_wikidata_names(context: dg.AssetExecutionContext, config: InatWikidataNamesConfig,
                               wikidata_sparql: WikidataSparqlResource,
                               inaturalist_tree: TreeTables) -> dg.Output[dict]:
    wikidata_sparql.refuse_offline("inaturalist_wikidata_names", config.endpoint)
    ids = inat_ids(inaturalist_tree, ranks=config.ranks or None, under=config.under or None)
    if not ids:
        raise dg.Failure("inaturalist_wikidata_names: no iNaturalist taxa selected (check `ranks` and `under`)")
    client = wikidata_sparql.client(endpoint=config.endpoint, contact=config.contact)
    checkpoint = BatchCheckpoint(wikidata_sparql.checkpoint_dir) if config.resume else None
    res = fetch_inat_taxon_names(client, ids, langs=config.langs, batch_size=config.batch_size,
                                 checkpoint=checkpoint, progress=context.log.debug)
    info = {**res.info, "tree": inaturalist_tree.name, "ranks": config.ranks, "under": config.under}
    per_kind = res.names.group_by("kind", "lang").agg(pl.len().alias("names"),
                                                      pl.col("node_id").n_unique().alias("taxa")).sort("kind", "lang")
    md = {
        "taxa_asked": dg.MetadataValue.int(len(ids)),
        "taxa_with_names": dg.MetadataValue.int(int(res.info["ids_with_names"])),
        "items": dg.MetadataValue.int(int(res.info["items"])),
        "names": dg.MetadataValue.int(res.names.height),
        "names_per_kind": dg.MetadataValue.md(markdown_preview(per_kind, max_rows=60)),
        "dropped": dg.MetadataValue.json(res.info["dropped"]),
        "query_time": str(res.info["query_time_last"]),
        "batches_queried": dg.MetadataValue.int(res.info["batches_queried"]),
        "batches_from_checkpoint": dg.MetadataValue.int(res.info["batches_from_checkpoint"]),
        "requests": dg.MetadataValue.json(json.loads(json.dumps(res.info["requests"], default=str))),
        "preview": dg.MetadataValue.md(markdown_preview(res.names)),
    }
    return dg.Output({"names": res.names, "info": _info_table(info)}, metadata=md)


@taxon_names_asset(
    description=(
        "The iNaturalist tree with the names of other sources merged into its names table: Wikidata's "
        "common names and synonyms (`inaturalist_wikidata_names`) and, if configured, the synonyms and "
        "vernacular names of ColDP releases carried by accepted scientific name. A synonym that is the "
        "scientific name of another iNaturalist taxon is not added (it would make that name ambiguous); "
        "info records what each source added and dropped, and its version."
    ),
)
def inaturalist_named_tree(context: dg.AssetExecutionContext, config: InatNamedTreeConfig,
                           inaturalist_tree: TreeTables, inaturalist_wikidata_names: dict) -> dg.Output[TreeTables]:
    t0 = time.perf_counter()
    wd_info = json.loads(inaturalist_wikidata_names["info"]["info_json"][0]) if "info" in inaturalist_wikidata_names \
        else {}
    wd_names = inaturalist_wikidata_names["names"].cast(TAXON_NAMES_SCHEMA)
    base = inaturalist_tree
    info = dict(base.info)
    info.setdefault("source_versions", {})
    info["source_versions"] = {"inaturalist": {k: info.get(k) for k in ("package", "source_bytes")},
                               **info["source_versions"]}
    tree = TreeTables(name=config.name, nodes=base.nodes, names=base.names, links=base.links, report=base.report,
                      info=info)
    wikidata_version = {k: wd_info.get(k) for k in ("endpoint", "query", "langs", "query_time_first",
                                                    "query_time_last", "ids_requested")}
    wd_rows = wd_names.with_columns(pl.format("wikidata:{}", "qid").alias("source")).select(list(NAMES_SCHEMA))
    tree = merge_names(tree, wd_rows, source="wikidata", source_version=wikidata_version)
    carried = {}
    for src in config.coldp_sources:
        c = coldp_names_for_tree(src, base)
        carried[src] = c.counts
        # the dataset by its archive's name: a local path is never published (names' source, manifest)
        tree = merge_names(tree, c.names, source=f"coldp:{Path(src).name}", source_version=coldp_version(src))
    md = tree_metadata(tree)
    added = {s: v["added"] for s, v in tree.info["name_sources"].items()}
    dropped = {s: v["dropped"] for s, v in tree.info["name_sources"].items()}
    md.update({
        "name_kinds": dg.MetadataValue.md(_kinds_markdown(tree)),
        "names_added": dg.MetadataValue.json(added),
        "names_dropped": dg.MetadataValue.json(dropped),
        "synonyms": dg.MetadataValue.int(int((tree.names["kind"] == "synonym").sum())),
        "vernacular_names": dg.MetadataValue.int(int((tree.names["kind"] == "vernacular").sum())),
        "build_seconds": dg.MetadataValue.float(round(time.perf_counter() - t0, 2)),
    })
    if carried:
        md["coldp_accepted_names"] = dg.MetadataValue.json(json.loads(json.dumps(carried, default=str)))
    return dg.Output(tree, metadata=md)


inaturalist_named_tree_checks = tree_checks(
    "inaturalist_named_tree", checks=("tree_one_root", "tree_acyclic", "tree_no_orphans", "tree_depths_consistent",
                               "tree_top_ranks_under_root"))
