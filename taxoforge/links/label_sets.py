"""A label set's own taxonomy: its labels resolved to nodes, and the smallest subtree holding them."""

from __future__ import annotations

import polars as pl

from taxoforge.links.resolve import resolution_summary, resolve_labels
from taxoforge.trees.subtree import spanning_subtree
from taxoforge.trees.tables import TreeTables

__all__ = ["label_set_subtree"]


def label_set_subtree(tree: TreeTables, labels: pl.DataFrame, name: str, *, dataset: str | None = None,
                      info: dict | None = None) -> tuple[TreeTables, pl.DataFrame]:
    """The taxonomy of a label set: every label of ``labels`` resolved to a node of ``tree``
    by the label resolver (:func:`taxoforge.links.resolve.resolve_labels`: node id, external
    id, name, synonym, epithet variant, genus transfer, and last a partial species or genus
    ground truth), then :func:`~taxoforge.trees.subtree.spanning_subtree` of the linked nodes.

    Parameters
    ----------
    tree : TreeTables
        The taxonomy to cut from.
    labels : polars.DataFrame
        ``label_text`` (or ``label``), optional ``label_id`` (default: the text),
        ``external_id`` and ``dataset`` (default: ``dataset``, else ``name``).
    name : str
        The subtree's name.
    dataset : str, optional
        The dataset of every label (overrides a ``dataset`` column).
    info : dict, optional
        Provenance added to the subtree's ``info``.

    Returns
    -------
    (TreeTables, polars.DataFrame)
        The subtree, which keeps the label texts as names (kind ``dataset_label``, so answers
        written the dataset's way map to its nodes) and the whole links table — unresolved
        labels too, with what was tried — as its ``links``; and that links table.

    Raises
    ------
    ValueError
        When no label resolves.
    """
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
