"""The smallest subtree of a taxonomy that holds a given set of nodes (and the root)."""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from taxoforge.trees.tables import TreeTables, with_is_leaf

__all__ = ["spanning_subtree", "INHERITED"]

#: The provenance a subtree keeps from the tree it was cut from.
INHERITED = ("seed", "cycle_policy", "source_versions")


def spanning_subtree(tree: TreeTables, keep: Iterable[str], name: str,
                     *, links: pl.DataFrame | None = None, extra_names: pl.DataFrame | None = None,
                     info: dict | None = None) -> TreeTables:
    """The nodes of ``keep``, all their ancestors, and nothing else, with depths unchanged.

    ``names`` and ``report`` rows are restricted to the kept nodes; ``extra_names`` (e.g. a
    dataset's own class names) are appended; ``is_leaf`` is recomputed for the subtree.
    ``info``: the parent tree's provenance (``seed``, ``cycle_policy``,
    ``source_versions``; ``parent_snapshot`` when it was loaded from a snapshot) and
    ``parent_taxonomy``, updated with ``info``.
    """
    tax = tree.taxonomy()
    sub = tax.subtree(sorted(set(keep)))
    ids = sub.select("node_id")
    nodes = with_is_leaf(tree.nodes.join(ids, on="node_id", how="semi"))
    names = tree.names.join(ids, on="node_id", how="semi")
    if extra_names is not None and extra_names.height:
        names = pl.concat([names, extra_names.join(ids, on="node_id", how="semi").select(names.columns)
                           .cast(names.schema)]).unique(maintain_order=True)
    report = tree.report.join(ids.rename({"node_id": "child_id"}), on="child_id", how="semi")
    inherited = {k: tree.info[k] for k in INHERITED if k in tree.info}
    if tree.info.get("snapshot"):
        inherited["parent_snapshot"] = tree.info["snapshot"]
    meta = {"parent_taxonomy": tree.name, **inherited, **(info or {})}
    return TreeTables(name=name, nodes=nodes, names=names, links=links, report=report, info=meta)


def label_set_subtree(tree: TreeTables, labels: pl.DataFrame, name: str, *, dataset: str | None = None,
                      info: dict | None = None) -> tuple[TreeTables, pl.DataFrame]:
    """The taxonomy of a label set: every label of ``labels`` resolved to a node of ``tree``
    by the label linker (:func:`taxoforge.links.resolve.resolve_labels`: node id, external
    id, name, synonym, epithet variant, genus transfer, and last a partial species or genus
    ground truth), then :func:`spanning_subtree` of the linked nodes.

    ``labels``: ``label_text`` (or ``label``), optional ``label_id`` (default: the text),
    ``external_id`` and ``dataset`` (default: ``dataset``, else ``name``). The subtree keeps
    the label texts as names (kind ``dataset_label``), so answers written the dataset's way
    map to its nodes, and the whole links table — unresolved labels too, with what was
    tried — as its ``links``. Returns ``(subtree, links)``; ``ValueError`` when no label
    resolves."""
    from taxoforge.links.resolve import resolution_summary, resolve_labels

    text = "label_text" if "label_text" in labels.columns else "label"
    if text not in labels.columns:
        raise ValueError(f"the labels table needs a label_text or label column; it has {labels.columns}")
    ds = dataset or name
    lab = labels.select(
        (pl.col("dataset").cast(pl.String) if "dataset" in labels.columns and dataset is None
         else pl.lit(ds, dtype=pl.String)).alias("dataset"),
        (pl.col("label_id") if "label_id" in labels.columns else pl.col(text)).cast(pl.String).str.strip_chars()
        .alias("label_id"),
        pl.col(text).cast(pl.String).str.strip_chars().alias("label_text"),
        *([pl.col("external_id").cast(pl.String)] if "external_id" in labels.columns else []),
    ).filter(pl.col("label_text").is_not_null() & (pl.col("label_text") != "")).unique(
        subset=["dataset", "label_id"], keep="first", maintain_order=True)
    links = resolve_labels(lab, tree.names, tree.nodes, links=tree.links)
    linked = links.filter(pl.col("status") == "linked")
    if not linked.height:
        raise ValueError(f"none of the {links.height} labels resolves to a node of {tree.name}")
    extra = linked.select("node_id", pl.col("label_text").alias("name"))
    for c, t in tree.names.schema.items():
        if c not in extra.columns:
            extra = extra.with_columns((pl.lit("dataset_label") if c == "kind" else pl.lit(None)).cast(t).alias(c))
    summary = resolution_summary(links)
    sub = spanning_subtree(tree, linked["node_id"].to_list(), name, links=links, extra_names=extra,
                           info={"label_set": {"dataset": ds, **summary}, **(info or {})})
    return sub, links
