"""The name index of a snapshot's browser: every name of every node, cut into buckets by the
prefix of its normal form (:func:`~taxoforge.snapshots.browser_index.name_key`).

An entry is ``[key, name, kind, ordinal, label or 0, rank, from_word, size]``: the name's key,
the name as written, its kind (index into the page's ``kinds``), the node's ordinal, the
node's label when it is not the name, its rank (index into ``ranks``, -1 for none), 1 when
the entry indexes the name from one of its later words (*leo* for *Panthera leo*), and the
node's subtree size (bigger groups first among equal matches).

Buckets (module doc of :mod:`.browser_index`): the entries whose key starts with a prefix of
one character, split one character longer while a bucket holds more than ``name_bucket``
entries, up to :data:`~taxoforge.snapshots.browser_index.MAX_PREFIX` characters. A key
exactly as long as a prefix that was split goes to the bucket ``prefix + "\\x00"``. A split
prefix is an *internal* node: its *top* file holds its best
:data:`~taxoforge.snapshots.browser_index.TOP_NAMES` entries (exact key first). The page
answers a query ``q`` from the top file of ``q`` (and the bucket ``q + "\\x00"``) when ``q`` was
split, else from the bucket of the longest prefix of ``q``, keeping the entries whose key
starts with ``q``.

Within a bucket, entries are sorted by key, then by how good a match they are at equal key:
the whole name before a later word, by kind (:data:`~taxoforge.snapshots.browser_index.KIND_ORDER`),
bigger subtrees first, shorter names first.
"""

from __future__ import annotations

import numpy as np
import polars as pl

__all__ = ["name_files", "WHITESPACE", "name_keys"]

#: the characters that separate words in a key (after NFKD, every other Unicode space is a plain
#: space); the page uses the same class
WHITESPACE = "[_\\t\\n\\x0b\\x0c\\r \\x{85}\\x{1680}\\x{2028}\\x{2029}\\x{feff}]+"


def name_keys(names: pl.Expr) -> pl.Expr:
    """:func:`~taxoforge.snapshots.browser_index.name_key` as a polars expression (the same
    key for every name; the tests compare the two).

    Parameters
    ----------
    names : polars.Expr
        A string column.

    Returns
    -------
    polars.Expr
        The keys.
    """
    return (names.str.normalize("NFKD").str.replace_all(r"\p{M}", "").str.to_lowercase()
            .str.replace_all(WHITESPACE, " ").str.strip_chars(" "))


def _entries(names: pl.DataFrame, labels: list, rank_col: list, size: np.ndarray, kinds: list[str]) -> pl.DataFrame:
    from taxoforge.snapshots.browser_index import KIND_ORDER

    n = len(labels)
    label_rows = pl.DataFrame({"_o": np.arange(n), "name": labels, "kind": ["label"] * n},
                              schema={"_o": pl.Int64, "name": pl.String, "kind": pl.String})
    rows = pl.concat([names.select("_o", "name", pl.col("kind").cast(pl.String)), label_rows]).drop_nulls("name")
    rows = rows.with_columns(name_keys(pl.col("name")).alias("key")).filter(pl.col("key") != "")
    kind_rank = {k: (KIND_ORDER.index(k) if k in KIND_ORDER else len(KIND_ORDER)) for k in kinds}
    rows = rows.with_columns(pl.col("kind").replace_strict(kind_rank, default=len(KIND_ORDER),
                                                           return_dtype=pl.Int64).alias("_kr"),
                             pl.col("kind").replace_strict({k: i for i, k in enumerate(kinds)}, default=-1,
                                                           return_dtype=pl.Int64).alias("kind"),
                             pl.lit(0, dtype=pl.Int64).alias("from_word"))
    words = rows.with_columns(pl.col("key").str.split(" ").alias("_w"))
    later = [words.filter(pl.col("_w").list.len() > i).with_columns(
        pl.col("_w").list.slice(i).list.join(" ").alias("key"), pl.lit(1, dtype=pl.Int64).alias("from_word"))
        .drop("_w") for i in range(1, 5)]
    allrows = pl.concat([rows, *later], how="vertical_relaxed")
    allrows = allrows.with_columns(pl.col("_o").map_batches(lambda s: pl.Series(size[s.to_numpy()]),
                                                            return_dtype=pl.Int64).alias("_size"),
                                   pl.col("name").str.len_chars().alias("_len"))
    best = allrows.sort("from_word", "_kr", "_len", "name").unique(subset=["_o", "key"], keep="first",
                                                                    maintain_order=True)
    lab = pl.Series("_label", labels, dtype=pl.String)
    rk = pl.Series("_rank", rank_col, dtype=pl.Int64)
    best = best.with_columns(pl.col("_o").map_batches(lambda s: lab.gather(s), return_dtype=pl.String).alias("_label"),
                             pl.col("_o").map_batches(lambda s: rk.gather(s), return_dtype=pl.Int64).alias("rank"))
    return best.sort("key", "from_word", "_kr", pl.col("_size"), "_len", "name",
                     descending=[False, False, False, True, False, False])


def _rows(df: pl.DataFrame) -> list[list]:
    return [[k, nm, kd, o, 0 if lab == nm else lab, rk, fw, sz] for k, nm, kd, o, lab, rk, fw, sz in
            df.select("key", "name", "kind", "_o", "_label", "rank", "from_word", "_size").iter_rows()]


def name_files(names: pl.DataFrame, labels: list, rank_col: list, size: np.ndarray, kinds: list[str],
               *, name_bucket: int) -> tuple[dict, dict[str, object]]:
    """The name index's files: ``index.json.gz`` (prefix → bucket file, split prefix → top
    file) and the buckets (module doc).

    Parameters
    ----------
    names : polars.DataFrame
        ``_o`` (the node's ordinal), ``name``, ``kind``, ``lang``.
    labels : list
        Node labels by ordinal (each label is indexed as a name of kind ``label`` too).
    rank_col : list
        Rank index by ordinal (-1 for none).
    size : numpy.ndarray
        Subtree size by ordinal.
    kinds : list of str
        The name kinds, as the page numbers them.
    name_bucket : int
        The largest bucket before its prefix is split.

    Returns
    -------
    tuple of (dict, dict)
        The index (for the page's metadata: entry count, limits) and file name → JSON value.
    """
    from taxoforge.snapshots.browser_index import MAX_PREFIX, TOP_NAMES

    entries = _entries(names, labels, rank_col, size, kinds).with_columns(pl.col("key").str.len_chars().alias("_kl"))
    leaves: dict[str, int] = {}
    tops: dict[str, int] = {}
    blobs: dict[str, object] = {}
    pending = entries
    for length in range(1, MAX_PREFIX + 1):
        exact = pending.filter(pl.col("_kl") < length)
        for (key,), group in exact.group_by("key", maintain_order=True):
            leaves[key + "\x00"] = len(leaves)
            blobs[f"{leaves[key + chr(0)]}.json.gz"] = _rows(group)
        pending = pending.filter(pl.col("_kl") >= length).with_columns(pl.col("key").str.slice(0, length).alias("_p"))
        counts = pending.group_by("_p").len()
        split = set(counts.filter(pl.col("len") > name_bucket)["_p"].to_list()) if length < MAX_PREFIX else set()
        for (prefix,), group in pending.filter(~pl.col("_p").is_in(list(split))).group_by("_p", maintain_order=True):
            leaves[prefix] = len(leaves)
            blobs[f"{leaves[prefix]}.json.gz"] = _rows(group)
        if split:
            inner = pending.filter(pl.col("_p").is_in(list(split)))
            best = inner.with_columns((pl.col("key") != pl.col("_p")).alias("_not_exact")).sort(
                "_p", "_not_exact", "from_word", "_kr", "_size", "_len", "name",
                descending=[False, False, False, False, True, False, False]).group_by("_p", maintain_order=True).head(
                TOP_NAMES)
            for (prefix,), group in best.group_by("_p", maintain_order=True):
                tops[prefix] = len(tops)
                blobs[f"t{tops[prefix]}.json.gz"] = _rows(group)
        pending = pending.filter(pl.col("_p").is_in(list(split))).drop("_p")
        if not pending.height:
            break
    blobs["index.json.gz"] = {"leaves": leaves, "tops": tops}
    meta = {"entries": entries.height, "max_prefix": MAX_PREFIX, "top": TOP_NAMES, "bucket": name_bucket,
            "whitespace": WHITESPACE}
    return meta, blobs
