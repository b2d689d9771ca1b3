"""Rules 1–7 of the label resolver: ids, the tree's links table, names, synonyms, common names.

Each rule takes the working table (:mod:`taxoforge.links.label_table`) and the tree's
:class:`~taxoforge.links.name_index.NameIndex`, proposes nodes for the labels still
pending and settles them (:func:`~taxoforge.links.label_table.settle`). The rules and their
order are documented in :mod:`taxoforge.links.resolve`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import polars as pl

from taxoforge.links.label_table import hits, pending, settle
from taxoforge.links.name_index import INFRAGENERIC_KIND, SYNONYM_KIND, NameIndex
from taxoforge.links.scientific_names import with_scientific_key

__all__ = ["by_node_id", "by_external_id", "by_linked_label", "by_names", "by_synonyms", "by_common_name"]

ExternalIds = Mapping[str, str] | Callable[[str], str | None] | None


def by_node_id(state: pl.DataFrame, index: NameIndex) -> pl.DataFrame:
    """Rule 1, ``node_id``: the label (or its ``external_id``) is a node id.

    Parameters
    ----------
    state : polars.DataFrame
        The working table (:mod:`taxoforge.links.label_table`).
    index : NameIndex
        The tree's names, keyed for the labels.

    Returns
    -------
    polars.DataFrame
        ``state`` with the labels this rule settles settled.
    """
    todo = pending(state)
    wanted = pl.concat([todo["label_text"], todo["external_id"]]).drop_nulls()
    ids = index.nodes.select("node_id").filter(pl.col("node_id").is_in(wanted.implode()))
    parts = [todo.join(ids, left_on="label_text", right_on="node_id").select("_row", pl.col("label_text").alias("node_id"))]
    if todo["external_id"].is_not_null().any():
        parts.append(todo.join(ids, left_on="external_id", right_on="node_id").select(
            "_row", pl.col("external_id").alias("node_id")))
    found = pl.concat(parts)
    return settle(state, hits(found, pl.format("the label is the node id {}", "node_id")), "node_id", index.label_of)


def by_external_id(state: pl.DataFrame, index: NameIndex, external_id_to_node: ExternalIds) -> pl.DataFrame:
    """Rule 2, ``external_id``: the label or its ``external_id`` with one of the tree's id
    prefixes is a node id, or ``external_id_to_node`` maps the ``external_id`` to one.

    Parameters
    ----------
    state : polars.DataFrame
        The working table (:mod:`taxoforge.links.label_table`).
    index : NameIndex
        The tree's names, keyed for the labels.
    external_id_to_node : mapping or callable or None
        Maps an ``external_id`` to a node id.

    Returns
    -------
    polars.DataFrame
        ``state`` with the labels this rule settles settled.
    """
    todo = pending(state).select("_row", "label_text", "external_id")
    if not todo.height:
        return state
    parts = []
    if index.prefixes:
        for col in ("label_text", "external_id"):
            vals = todo.select("_row", pl.col(col).str.strip_chars().alias("_bare_id")).filter(
                pl.col("_bare_id").is_not_null() & (pl.col("_bare_id") != "") & ~pl.col("_bare_id").str.contains(r"\s"))
            for p in index.prefixes:
                parts.append(vals.select("_row", pl.format(f"{p}:{{}}", "_bare_id").alias("node_id"),
                                         pl.format(f"{{}} with the tree's id prefix '{p}:' is node {p}:{{}}",
                                                   "_bare_id", "_bare_id").alias("_detail")))
    if external_id_to_node is not None:
        ext = todo.filter(pl.col("external_id").is_not_null())
        if ext.height:
            f = external_id_to_node.get if isinstance(external_id_to_node, Mapping) else external_id_to_node
            uniq = ext["external_id"].unique().to_list()
            m = pl.DataFrame({"external_id": uniq, "node_id": [f(x) for x in uniq]},
                             schema={"external_id": pl.String, "node_id": pl.String}).drop_nulls()
            parts.append(ext.join(m, on="external_id").select(
                "_row", "node_id", pl.format("external id {} maps to node {}", "external_id", "node_id").alias("_detail")))
    if not parts:
        return state
    found = pl.concat(parts).join(index.nodes.select("node_id"), on="node_id")
    return settle(state, found, "external_id", index.label_of)


def by_linked_label(state: pl.DataFrame, index: NameIndex) -> pl.DataFrame:
    """Rule 3, ``linked_label``: the tree's own links table links the label (by label id or
    text; the row's dataset first, then any dataset).

    Parameters
    ----------
    state : polars.DataFrame
        The working table (:mod:`taxoforge.links.label_table`).
    index : NameIndex
        The tree's names, keyed for the labels.

    Returns
    -------
    polars.DataFrame
        ``state`` with the labels this rule settles settled.
    """
    if index.links is None or not index.links.height:
        return state
    for same_dataset in (True, False):
        todo = pending(state)
        if not todo.height:
            break
        keys = pl.concat([todo.select("_row", "dataset", pl.col("label_id").alias("_link_key")),
                          todo.select("_row", "dataset", pl.col("label_text").alias("_link_key"))]).unique()
        lk = pl.concat([
            index.links.select("dataset", pl.col("label_id").alias("_link_key"), "node_id", "_link_method"),
            index.links.select("dataset", pl.col("label_text").alias("_link_key"), "node_id", "_link_method"),
        ]).drop_nulls("_link_key").unique()
        on = ["dataset", "_link_key"] if same_dataset else ["_link_key"]
        found = keys.join(lk.rename({"dataset": "_link_dataset"}) if not same_dataset else lk, on=on)
        ds = pl.col("dataset") if same_dataset else pl.col("_link_dataset")
        found = hits(found, pl.format("label {} of dataset {} is linked to {} in the tree's links table ({})",
                                      "_link_key", ds, "node_id", pl.col("_link_method").fill_null("?")))
        state = settle(state, found, "linked_label", index.label_of)
    return state


def by_names(state: pl.DataFrame, index: NameIndex, prefer_kinds: Sequence[str]) -> pl.DataFrame:
    """Rules 4 (``exact``) and 5 (``normalised``) over every name kind but synonyms and
    subgenus names; ``prefer_kinds`` settles a tie between kinds.

    Parameters
    ----------
    state : polars.DataFrame
        The working table (:mod:`taxoforge.links.label_table`).
    index : NameIndex
        The tree's names, keyed for the labels.
    prefer_kinds : sequence of str
        Name kinds in order of preference.

    Returns
    -------
    polars.DataFrame
        ``state`` with the labels this rule settles settled.
    """
    order = {k: i for i, k in enumerate(prefer_kinds)}
    nm = index.keyed.filter(~pl.col("kind").is_in([SYNONYM_KIND, INFRAGENERIC_KIND])).with_columns(
        pl.col("kind").replace_strict(order, default=len(order), return_dtype=pl.Int32).alias("_kind_rank"))
    todo = pending(state)
    exact = todo.join(nm, left_on="label_text", right_on="name").select(
        "_row", "node_id", pl.format("exact {} name", "kind").alias("_detail"), "_kind_rank")
    state = settle(state, exact, "exact", index.label_of)
    todo = pending(state).filter(pl.col("_key") != "")
    norm = todo.join(nm, on="_key").select(
        "_row", "node_id", pl.format("equals the {} name '{}' up to case, punctuation and rank words", "kind", "name")
        .alias("_detail"), "_kind_rank")
    return settle(state, norm, "normalised", index.label_of)


def by_synonyms(state: pl.DataFrame, index: NameIndex, synonyms: pl.DataFrame | None, source: str) -> pl.DataFrame:
    """Rule 6, ``synonym``: a synonym name of the tree itself, or a name of the external
    synonym table (keyed: ``_synonym_key`` → ``_accepted_key``) whose accepted name is a
    scientific name of the tree.

    Parameters
    ----------
    state : polars.DataFrame
        The working table (:mod:`taxoforge.links.label_table`).
    index : NameIndex
        The tree's names, keyed for the labels.
    synonyms : polars.DataFrame or None
        The external synonym table, keyed (``_synonym_key``, ``_accepted_key``).
    source : str
        The synonym table's name, for the details.

    Returns
    -------
    polars.DataFrame
        ``state`` with the labels this rule settles settled.
    """
    todo = pending(state).filter(pl.col("_key") != "")
    own = todo.join(index.keyed.filter(pl.col("kind") == SYNONYM_KIND), on="_key")
    parts = [own.join(index.label_of(own["node_id"]), on="node_id", how="left").select(
        "_row", "node_id", pl.format("'{}' is a synonym of {} in the tree's names", "name", "_node_label")
        .alias("_detail"))]
    if synonyms is not None and synonyms.height:
        acc = synonyms.join(index.scientific().select(pl.col("_key").alias("_accepted_key"), "node_id"),
                            on="_accepted_key")
        parts.append(todo.join(acc, left_on="_key", right_on="_synonym_key").select(
            "_row", "node_id", pl.format("'{}' is a synonym of {} ({})", "name", "accepted_name", pl.lit(source))
            .alias("_detail")))
    return settle(state, pl.concat(parts), "synonym", index.label_of)


def by_common_name(state: pl.DataFrame, index: NameIndex) -> pl.DataFrame:
    """Rule 7, ``vernacular``: the label's ``common_name`` is a vernacular name of the tree.

    Parameters
    ----------
    state : polars.DataFrame
        The working table (:mod:`taxoforge.links.label_table`).
    index : NameIndex
        The tree's names, keyed for the labels.

    Returns
    -------
    polars.DataFrame
        ``state`` with the labels this rule settles settled.
    """
    todo = pending(state).filter(pl.col("common_name").is_not_null())
    if not todo.height:
        return state
    todo = with_scientific_key(todo.drop("_key"), "common_name", "_common_key")
    vern = index.keyed.filter(pl.col("kind") == "vernacular").select(pl.col("_key").alias("_common_key"), "node_id")
    found = todo.filter(pl.col("_common_key") != "").join(vern, on="_common_key")
    return settle(state, hits(found, pl.format("common name '{}'", "common_name")), "vernacular", index.label_of)
