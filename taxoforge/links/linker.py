"""The generic label linker: dataset labels → tree nodes, with every outcome reported.

Input
    A label set: rows of ``dataset``, ``label_id``, ``label_text`` and an optional
    ``external_id`` (a WordNet id, a Wikidata QID, a scientific name …), and the
    ``names`` table of a taxonomy (``node_id``, ``name``, ``kind``, ``lang``).

Output
    The ``links`` table (:data:`taxoforge.trees.tables.LINKS_SCHEMA`), one row per label:
    ``status`` is ``linked`` (with ``method`` and ``node_id``), ``ambiguous`` (with all
    ``candidates``) or ``unmatched`` (with a ``detail`` saying what was tried).

Algorithm (first stage that finds anything decides)
    1. ``external_id``: the external id maps to a node (through ``external_id_to_node``)
       that is in the tree.
    2. ``exact``: ``label_text`` equals a node name exactly.
    3. ``normalised``: the normal forms (:func:`taxoforge.text.normalise_text`) are equal.
    A stage that finds several distinct nodes makes the label ``ambiguous`` unless
    ``prefer_kinds`` ranks one name kind above the others (e.g. a scientific name above a
    vernacular one) and exactly one node has a name of the best kind.

All stages are joins over tables, so millions of labels and names link in seconds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import polars as pl

from taxoforge.text import normalise_text
from taxoforge.trees.tables import LINKS_SCHEMA, conform

__all__ = ["link_labels", "LABEL_COLUMNS", "link_summary"]

LABEL_COLUMNS = ("dataset", "label_id", "label_text", "external_id")


def _check_labels(labels: pl.DataFrame) -> pl.DataFrame:
    missing = [c for c in ("dataset", "label_id", "label_text") if c not in labels.columns]
    if missing:
        raise ValueError(f"label set is missing column(s) {missing}; expected {list(LABEL_COLUMNS)}")
    if "external_id" not in labels.columns:
        labels = labels.with_columns(pl.lit(None, dtype=pl.String).alias("external_id"))
    labels = labels.select(
        pl.col("dataset").cast(pl.String),
        pl.col("label_id").cast(pl.String),
        pl.col("label_text").cast(pl.String),
        pl.col("external_id").cast(pl.String),
    )
    dup = labels.filter(pl.struct("dataset", "label_id").is_duplicated())
    if dup.height:
        r = dup.row(0)
        raise ValueError(f"label set has duplicate (dataset, label_id) {r[0]!r}, {r[1]!r}")
    return labels.with_row_index("_row")


def _resolve(hits: pl.DataFrame, method: str, prefer_kinds: Sequence[str]) -> pl.DataFrame:
    """hits: _row, node_id, kind → one row per _row with status/method/node_id/candidates."""
    if prefer_kinds:
        rank = {k: i for i, k in enumerate(prefer_kinds)}
        hits = hits.with_columns(
            pl.col("kind").replace_strict(rank, default=len(rank), return_dtype=pl.Int32).alias("_krank")
        )
    else:
        hits = hits.with_columns(pl.lit(0, dtype=pl.Int32).alias("_krank"))
    per_node = hits.group_by("_row", "node_id").agg(pl.col("_krank").min())
    g = per_node.group_by("_row").agg(
        pl.col("node_id").sort().alias("candidates"),
        pl.col("node_id").filter(pl.col("_krank") == pl.col("_krank").min()).sort().alias("_best"),
    )
    return g.select(
        "_row",
        pl.when(pl.col("_best").list.len() == 1).then(pl.lit("linked")).otherwise(pl.lit("ambiguous")).alias("status"),
        pl.lit(method).alias("method"),
        pl.when(pl.col("_best").list.len() == 1).then(pl.col("_best").list.first()).otherwise(None).alias("node_id"),
        "candidates",
    )


def link_labels(
    labels: pl.DataFrame,
    names: pl.DataFrame,
    *,
    external_id_to_node: Mapping[str, str] | Callable[[str], str | None] | None = None,
    prefer_kinds: Sequence[str] = (),
    normalise: Callable[[str], str] = normalise_text,
) -> pl.DataFrame:
    """Link every label of ``labels`` to a node of the taxonomy whose names are ``names``.

    Parameters
    ----------
    labels : polars.DataFrame
        ``dataset``, ``label_id``, ``label_text`` and optionally ``external_id``.
    names : polars.DataFrame
        The taxonomy's names table; every node id in it counts as "in the tree".
    external_id_to_node : mapping or callable, optional
        Maps an external id to a node id (e.g. ``lambda w: "wn:" + w`` for wnids).
    prefer_kinds : sequence of str
        Name kinds in order of preference to settle a tie between nodes.
    normalise : callable
        The normal form of stage 3.

    Returns
    -------
    polars.DataFrame
        The links table, one row per label, in ``(dataset, label_id)`` order.

    Examples
    --------
    >>> names = pl.DataFrame({"node_id": ["n:1", "n:2", "n:3"], "name": ["Dog", "cat", "Cat"],
    ...                       "kind": ["label"] * 3, "lang": ["en"] * 3})
    >>> labels = pl.DataFrame({"dataset": ["d"] * 3, "label_id": ["0", "1", "2"],
    ...                        "label_text": ["dog", "cat", "cow"]})
    >>> link_labels(labels, names).select("label_id", "status", "method", "node_id").rows()
    [('0', 'linked', 'normalised', 'n:1'), ('1', 'linked', 'exact', 'n:2'), ('2', 'unmatched', None, None)]
    """
    lab = _check_labels(labels)
    for c in ("node_id", "name"):
        if c not in names.columns:
            raise ValueError(f"names table is missing column {c!r}")
    nm = names.select(
        pl.col("node_id").cast(pl.String),
        pl.col("name").cast(pl.String),
        (pl.col("kind").cast(pl.String) if "kind" in names.columns else pl.lit("label")).alias("kind"),
    ).drop_nulls(["node_id", "name"])
    node_set = nm.select("node_id").unique()
    decided: list[pl.DataFrame] = []
    remaining = lab

    # 1. external ids
    if external_id_to_node is not None:
        ext = remaining.filter(pl.col("external_id").is_not_null())
        if ext.height:
            f = external_id_to_node.get if isinstance(external_id_to_node, Mapping) else external_id_to_node
            uniq = ext["external_id"].unique().to_list()
            mapping = pl.DataFrame(
                {"external_id": uniq, "node_id": [f(x) for x in uniq]}, schema={"external_id": pl.String, "node_id": pl.String}
            ).drop_nulls()
            hits = ext.join(mapping, on="external_id").join(node_set, on="node_id").select(
                "_row", "node_id", pl.lit("external_id").alias("kind")
            )
            if hits.height:
                decided.append(_resolve(hits, "external_id", ()))
                remaining = remaining.join(hits.select("_row").unique(), on="_row", how="anti")

    # 2. exact names
    hits = remaining.join(nm, left_on="label_text", right_on="name").select("_row", "node_id", "kind")
    if hits.height:
        decided.append(_resolve(hits, "exact", prefer_kinds))
        remaining = remaining.join(hits.select("_row").unique(), on="_row", how="anti")

    # 3. normalised names
    if remaining.height:
        norm_names = nm.with_columns(pl.col("name").map_elements(normalise, return_dtype=pl.String).alias("_norm"))
        rem = remaining.with_columns(pl.col("label_text").map_elements(normalise, return_dtype=pl.String).alias("_norm"))
        hits = rem.filter(pl.col("_norm") != "").join(norm_names, on="_norm").select("_row", "node_id", "kind")
        if hits.height:
            decided.append(_resolve(hits, "normalised", prefer_kinds))

    schema = {"_row": pl.UInt32, "status": pl.String, "method": pl.String, "node_id": pl.String,
              "candidates": pl.List(pl.String)}
    dec = pl.concat([d.cast(schema) for d in decided]) if decided else pl.DataFrame(schema=schema)
    out = lab.join(dec, on="_row", how="left").with_columns(
        pl.col("status").fill_null("unmatched"),
        pl.when(pl.col("status").is_null())
        .then(pl.lit("no external id, exact or normalised name match" if external_id_to_node is not None
                     else "no exact or normalised name match"))
        .when(pl.col("status") == "ambiguous")
        .then(pl.lit("several nodes match; see candidates"))
        .otherwise(None)
        .alias("detail"),
        pl.col("candidates").fill_null(pl.lit([], dtype=pl.List(pl.String))),
    )
    return conform(out.drop("_row"), "links")


def link_summary(links: pl.DataFrame) -> dict[str, int]:
    """Counts by status and by method: ``{"linked": …, "ambiguous": …, "unmatched": …, "by_method": {…}}``.

    Parameters
    ----------
    links : polars.DataFrame
        The links table.

    Returns
    -------
    dict[str, int]
        Counts by status and by method: ``{"linked": …, "ambiguous": …, "unmatched": …,
        "by_method": {…}}``.
    """
    by_status = dict(links.group_by("status").len().iter_rows())
    by_method = dict(links.filter(pl.col("status") == "linked").group_by("method").len().iter_rows())
    return {
        "labels": links.height,
        "linked": int(by_status.get("linked", 0)),
        "ambiguous": int(by_status.get("ambiguous", 0)),
        "unmatched": int(by_status.get("unmatched", 0)),
        "by_method": {k: int(v) for k, v in sorted(by_method.items())},
    }


assert set(LINKS_SCHEMA) >= {"dataset", "label_id", "status", "method", "node_id", "candidates"}
