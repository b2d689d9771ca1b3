"""The label resolver's working table: one row per label, settled rule by rule.

:func:`initial_state` turns a label set into the table every rule of
:func:`taxoforge.links.resolve.resolve_labels` reads and writes. Its label columns
(:data:`LABEL_COLUMNS`) are fixed from the start:

``_row``          the label's position (the order of the output)
``_key``          its scientific key (:func:`~taxoforge.links.scientific_names.scientific_key`)
``_n_words``      the number of words of the key (0 for an empty label)
``_genus_word``   the key's first word (the genus of a binomial)
``_epithets``     the key's other words, space separated

and the result columns ``status``, ``method``, ``node_id``, ``candidates``, ``detail`` start
null. A rule proposes *hits* (``_row``, ``node_id``, ``_detail`` and optionally
``_kind_rank``) and :func:`settle` decides the labels still pending: one best node links the
label, several make it ambiguous. A settled label is never touched again, so the first rule
that finds a candidate decides.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from taxoforge.links.scientific_names import epithet_stem_expr, with_scientific_key

__all__ = ["LABEL_COLUMNS", "MAX_LISTED", "initial_state", "pending", "settle", "hits", "raw_last_word",
           "word_stems", "epithet_stems", "split_name_keys"]

#: The label columns of the working table (the result columns are added beside them).
LABEL_COLUMNS = ("_row", "dataset", "label_id", "label_text", "external_id", "common_name", "_key", "_n_words",
                 "_genus_word", "_epithets")
#: How many candidates an ambiguous label's detail lists by name.
MAX_LISTED = 8


def initial_state(labels: pl.DataFrame) -> pl.DataFrame:
    """The working table of a label set, every label pending.

    Parameters
    ----------
    labels : polars.DataFrame
        ``dataset``, ``label_id``, ``label_text``; optional ``external_id``, ``common_name``.
        ``(dataset, label_id)`` must be unique.

    Returns
    -------
    polars.DataFrame
        :data:`LABEL_COLUMNS` and the (null) result columns, in ``_row`` order.

    Raises
    ------
    ValueError
        A missing column, or a repeated ``(dataset, label_id)``.
    """
    missing = [c for c in ("dataset", "label_id", "label_text") if c not in labels.columns]
    if missing:
        raise ValueError(f"label set is missing column(s) {missing}; expected dataset, label_id, label_text "
                         "(optional external_id, common_name)")
    lab = labels.select(
        pl.col("dataset").cast(pl.String), pl.col("label_id").cast(pl.String), pl.col("label_text").cast(pl.String),
        *[(pl.col(c).cast(pl.String) if c in labels.columns else pl.lit(None, dtype=pl.String)).alias(c)
          for c in ("external_id", "common_name")])
    dup = lab.filter(pl.struct("dataset", "label_id").is_duplicated())
    if dup.height:
        r = dup.row(0)
        raise ValueError(f"label set has duplicate (dataset, label_id) {r[0]!r}, {r[1]!r}")
    lab = with_scientific_key(lab.with_row_index("_row"), "label_text").with_columns(pl.col("_key").fill_null(""))
    w = pl.col("_key").str.split(" ")
    return lab.with_columns(
        pl.when(pl.col("_key") == "").then(0).otherwise(w.list.len()).cast(pl.Int32).alias("_n_words"),
        w.list.first().alias("_genus_word"),
        w.list.slice(1).list.join(" ").alias("_epithets"),
        pl.lit(None, dtype=pl.String).alias("status"), pl.lit(None, dtype=pl.String).alias("method"),
        pl.lit(None, dtype=pl.String).alias("node_id"), pl.lit(None, dtype=pl.List(pl.String)).alias("candidates"),
        pl.lit(None, dtype=pl.String).alias("detail"),
    ).sort("_row")


def pending(state: pl.DataFrame) -> pl.DataFrame:
    """The labels no rule has settled yet.

    Parameters
    ----------
    state : polars.DataFrame
        The working table.

    Returns
    -------
    polars.DataFrame
        The pending labels, their :data:`LABEL_COLUMNS` only.
    """
    return state.filter(pl.col("status").is_null()).select(LABEL_COLUMNS)


def hits(df: pl.DataFrame, detail: pl.Expr, *extra: str) -> pl.DataFrame:
    """The hits a rule found, in the columns :func:`settle` reads.

    Parameters
    ----------
    df : polars.DataFrame
        Pairs of a label (``_row``) and a candidate ``node_id``.
    detail : polars.Expr
        Why the candidate matches, in words.
    *extra : str
        Other columns to keep (``_kind_rank``).

    Returns
    -------
    polars.DataFrame
        ``_row``, ``node_id``, ``_detail`` and ``extra``.
    """
    return df.select("_row", "node_id", detail.alias("_detail"), *extra)


def settle(state: pl.DataFrame, found: pl.DataFrame, method: str,
           label_of: Callable[[pl.Series], pl.DataFrame]) -> pl.DataFrame:
    """Settle the pending labels that have hits in ``found``.

    Parameters
    ----------
    state : polars.DataFrame
        The working table.
    found : polars.DataFrame
        Hits: ``_row``, ``node_id``, ``_detail`` and optionally ``_kind_rank`` (the preference
        of the name kind that matched, lower is better; default 0).
    method : str
        The method recorded for the labels settled here.
    label_of : callable
        ``node ids → DataFrame(node_id, _node_label)``: names the candidates of an ambiguous label.

    Returns
    -------
    polars.DataFrame
        ``state`` with every pending label of ``found`` settled: ``linked`` to its one best
        node, or ``ambiguous`` between its best nodes (all listed in ``candidates`` and, up to
        :data:`MAX_LISTED`, by name in ``detail``).
    """
    if not found.height:
        return state
    found = found.filter(pl.col("_row").is_in(pending(state)["_row"].implode()))
    if not found.height:
        return state
    if "_kind_rank" not in found.columns:
        found = found.with_columns(pl.lit(0, dtype=pl.Int32).alias("_kind_rank"))
    per_node = found.sort("_kind_rank", "node_id").group_by("_row", "node_id", maintain_order=True).agg(
        pl.col("_kind_rank").min(), pl.col("_detail").first())
    best = pl.col("_kind_rank") == pl.col("_kind_rank").min()
    g = per_node.group_by("_row").agg(
        pl.col("node_id").sort().alias("_all_candidates"),
        pl.col("node_id").filter(best).sort().alias("_best_nodes"),
        pl.col("_detail").filter(best).first().alias("_best_detail"),
    )
    many = (g.filter(pl.col("_best_nodes").list.len() > 1).select("_row", pl.col("_best_nodes").alias("node_id"))
            .explode("node_id"))
    listed = (many.join(label_of(many["node_id"]), on="node_id", how="left")
              .group_by("_row").agg(pl.format("{} ({})", pl.col("_node_label").fill_null("?"), "node_id")
                                    .head(MAX_LISTED).str.join("; ").alias("_listed"), pl.len().alias("_n_best")))
    g = g.join(listed, on="_row", how="left")
    one = pl.col("_best_nodes").list.len() == 1
    g = g.select(
        "_row",
        pl.when(one).then(pl.lit("linked")).otherwise(pl.lit("ambiguous")).alias("_new_status"),
        pl.when(one).then(pl.col("_best_nodes").list.first()).otherwise(None).alias("_new_node"),
        "_all_candidates",
        pl.when(one).then(pl.col("_best_detail")).otherwise(
            pl.format("{}: {} candidates: {}{}", pl.lit(method), "_n_best", "_listed",
                      pl.when(pl.col("_n_best") > MAX_LISTED).then(pl.lit(" …")).otherwise(pl.lit(""))))
        .alias("_new_detail"),
    )
    out = state.join(g, on="_row", how="left")
    upd = pl.col("status").is_null() & pl.col("_new_status").is_not_null()
    out = out.with_columns(
        pl.when(upd).then(pl.col("_new_status")).otherwise(pl.col("status")).alias("status"),
        pl.when(upd).then(pl.lit(method)).otherwise(pl.col("method")).alias("method"),
        pl.when(upd).then(pl.col("_new_node")).otherwise(pl.col("node_id")).alias("node_id"),
        pl.when(upd).then(pl.col("_all_candidates")).otherwise(pl.col("candidates")).alias("candidates"),
        pl.when(upd).then(pl.col("_new_detail")).otherwise(pl.col("detail")).alias("detail"),
    )
    return out.drop("_new_status", "_new_node", "_all_candidates", "_new_detail")


def raw_last_word(col: str) -> pl.Expr:
    """The last run of letters and digits of a text column, lower case, apostrophes dropped.

    For printable-ASCII text that does not end in a rank marker, this is the last word of its
    scientific key, computed without keying the text.

    Parameters
    ----------
    col : str
        The column.

    Returns
    -------
    polars.Expr
    """
    return (pl.col(col).str.to_lowercase().str.replace_all("['\u2019\u02bc]", "")
            .str.extract(r"([\p{L}\p{N}]+)[^\p{L}\p{N}]*$", 1))


def word_stems(keys: pl.Expr) -> pl.Expr:
    """The epithet stems of every word of scientific keys.

    Parameters
    ----------
    keys : polars.Expr
        Space-separated keys.

    Returns
    -------
    polars.Expr
        One list of stems per row.
    """
    return keys.str.split(" ").list.eval(epithet_stem_expr(pl.element()))


def epithet_stems(epithets: pl.Expr) -> pl.Expr:
    """The epithet stems of space-separated epithets, joined by spaces.

    Parameters
    ----------
    epithets : polars.Expr

    Returns
    -------
    polars.Expr
    """
    return word_stems(epithets).list.join(" ")


def split_name_keys(names: pl.DataFrame) -> pl.DataFrame:
    """Names and the parts of their scientific keys.

    Parameters
    ----------
    names : polars.DataFrame
        Names with their key ``_key``.

    Returns
    -------
    polars.DataFrame
        ``names`` with ``_name_genus_word`` (the key's first word), ``_name_epithets`` (the
        others) and ``_name_n_words``.
    """
    w = pl.col("_key").str.split(" ")
    return names.with_columns(w.list.first().alias("_name_genus_word"),
                              w.list.slice(1).list.join(" ").alias("_name_epithets"),
                              w.list.len().cast(pl.Int32).alias("_name_n_words"))
