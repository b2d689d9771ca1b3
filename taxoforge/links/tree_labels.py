"""Labels → node indexes of a :class:`~taxoforge.trees.taxonomy.Taxonomy`, by the one label resolver.

The evaluations (metric functions, multiple-choice builders, score propagation) work on node
*indexes* of a tree; this module turns their labels into those indexes with
:func:`taxoforge.links.resolve.resolve_labels` over the tree's own tables, so a label
resolves to the node scoring resolves it to, with the same ``method`` vocabulary.

``node_ref`` says how the values name nodes: ``"auto"`` (every rule: node ids, id prefixes,
the tree's links table, names, synonyms, epithet variants, genus transfer, partial ground
truths), ``"id"`` (rules 1–3 only) or ``"name"`` (rules 4–11 only). ``partial``,
``epithet_variants`` and ``genus_transfer`` switch those rules off where an evaluation needs
fewer.

>>> from taxoforge.trees.taxonomy import Taxonomy
>>> t = Taxonomy.of({"Life": None, "Canis": "Life", "Canis lupus": "Canis", "Canis latrans": "Canis"})
>>> resolve_nodes(t, ["Canis lupus", "canis  LATRANS", "Felis"]).select("value", "status", "method").rows()
[('Canis lupus', 'linked', 'node_id'), ('canis  LATRANS', 'linked', 'normalised'), ('Felis', 'unmatched', None)]
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import polars as pl

from taxoforge.links.resolve import is_partial, resolve_labels
from taxoforge.trees.taxonomy import Taxonomy

__all__ = ["NODE_REFS", "UnresolvedLabels", "resolve_nodes", "node_indexes"]

#: How values name nodes: every rule, node ids only, names only.
NODE_REFS = ("auto", "id", "name")
_RESULT_SCHEMA = {"row": pl.Int64, "value": pl.String, "idx": pl.Int64, "status": pl.String, "method": pl.String,
                  "partial": pl.Boolean, "node_id": pl.String, "detail": pl.String}


class UnresolvedLabels(ValueError):
    """Labels that name no node, or several; the message lists them with their positions."""


def resolve_nodes(tree: Taxonomy, values: Iterable, *, node_ref: str = "auto", dataset: str = "labels",
                  epithet_variants: bool = True, genus_transfer: bool = True, partial: bool = True) -> pl.DataFrame:
    """Resolve each of ``values`` to a node of ``tree``.

    Parameters
    ----------
    tree : Taxonomy
    values : iterable of str or None
        Labels or node ids; repeats are resolved once.
    node_ref : {"auto", "id", "name"}
        Which rules run (module docstring).
    dataset : str
        The dataset the labels belong to (rule 3 looks them up in the tree's links table
        under it first).
    epithet_variants, genus_transfer, partial : bool
        Run rule 8, rule 9, rules 10–11 of :func:`~taxoforge.links.resolve.resolve_labels`.

    Returns
    -------
    polars.DataFrame
        One row per value, in order: ``row``, ``value``, ``idx`` (the node's index in
        ``tree``; -1 when not linked), ``status`` (``linked``, ``ambiguous``, ``unmatched``),
        ``method`` (:data:`taxoforge.links.resolve.METHODS`), ``partial`` (a partial ground
        truth: a node above the one the label names), ``node_id`` and ``detail``.
    """
    if node_ref not in NODE_REFS:
        raise ValueError(f"node_ref must be one of {NODE_REFS}, not {node_ref!r}")
    vals = [None if v is None else str(v) for v in values]
    given = pl.DataFrame({"row": np.arange(len(vals), dtype=np.int64), "value": vals},
                         schema={"row": pl.Int64, "value": pl.String})
    distinct = given.drop_nulls("value").select(pl.col("value").unique(maintain_order=True))
    if distinct.height:
        labels = distinct.select(pl.lit(dataset, dtype=pl.String).alias("dataset"), pl.col("value").alias("label_id"),
                                 pl.col("value").alias("label_text"))
        links = resolve_labels(labels, _names_or_labels(tree), tree.nodes_table, links=tree.links_table,
                               by_id=node_ref != "name", by_name=node_ref != "id", epithet_variants=epithet_variants,
                               genus_transfer=genus_transfer, partial=partial)
        found = links.select(pl.col("label_id").alias("value"), "status", "method", "node_id", "detail")
    else:
        found = pl.DataFrame(schema={"value": pl.String, "status": pl.String, "method": pl.String,
                                     "node_id": pl.String, "detail": pl.String})
    index = tree.index_frame.filter(pl.col("node_id").is_in(found["node_id"].drop_nulls().implode()))
    found = found.join(index, on="node_id", how="left")
    out = given.join(found, on="value", how="left", maintain_order="left")
    linked = pl.col("status") == "linked"
    return out.with_columns(
        pl.when(linked).then(pl.col("idx")).otherwise(-1).fill_null(-1).alias("idx"),
        pl.col("status").fill_null("unmatched"),
        (linked.fill_null(False) & is_partial(pl.col("method"))).alias("partial"),
        pl.when(pl.col("value").is_null()).then(pl.lit("empty label")).otherwise(pl.col("detail")).alias("detail"),
    ).select(list(_RESULT_SCHEMA)).cast(_RESULT_SCHEMA)


def node_indexes(tree: Taxonomy, values: Iterable, *, node_ref: str = "auto", what: str = "label",
                 partial: bool = True) -> np.ndarray:
    """The node index of each of ``values`` (:func:`resolve_nodes`), every one required.

    Parameters
    ----------
    tree : Taxonomy
    values : iterable of str
    node_ref : {"auto", "id", "name"}
    what : str
        What the values are, for the error message ("y_true value", "score column" …).
    partial : bool
        Whether a partial ground truth (the genus or species above the node a label names)
        counts as resolved.

    Returns
    -------
    numpy.ndarray
        int64 node indexes, one per value.

    Raises
    ------
    UnresolvedLabels
        Listing (up to ten) values that name no node, or several, with their positions and
        what was tried.
    """
    r = resolve_nodes(tree, values, node_ref=node_ref, partial=partial)
    bad = r.filter(pl.col("idx") < 0)
    if bad.height:
        lines = [f"  position {row}: {val!r} {status}: {det}"
                 for row, val, status, det in bad.select("row", "value", "status", "detail").head(10).iter_rows()]
        more = f"\n  … and {bad.height - 10} more" if bad.height > 10 else ""
        raise UnresolvedLabels(f"{bad.height} {what}(s) not resolved to a node of {tree.name}:\n"
                               + "\n".join(lines) + more)
    return r["idx"].to_numpy()


def _names_or_labels(tree: Taxonomy) -> pl.DataFrame:
    """``node_id``, ``name``, ``kind`` of every name a label may be resolved by: the tree's
    names table, or (a tree without one) every node's label (its id where it has none) as a
    name of kind ``label``."""
    names = tree.given_names
    if names is not None and names.height:
        return names
    return pl.DataFrame({"node_id": tree.ids, "name": tree.labels, "kind": "label"},
                        schema={"node_id": pl.String, "name": pl.String, "kind": pl.String})
