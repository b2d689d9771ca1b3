"""The name index of a snapshot's browser: every name of every node, cut into buckets by the
prefix of its normal form (:func:`~taxoforge.snapshots.browser_keys.name_key`).

An entry is ``[key, name, kind, ordinal, label or 0, rank, from_word, size, common, context]``:
the name's key, the name as written, its kind (index into the page's ``kinds``), the node's
ordinal, the node's label when it is not the name, its rank (index into ``ranks``, -1 for
none), 1 when the entry indexes the name from one of its later words (*leo* for *Panthera
leo*), the node's subtree size (bigger groups first among equal matches), how many common
names the node has (:data:`COMMON_KINDS`, at most 15) and its higher taxon (an index into
``contexts.json.gz``, ``[label, rank]`` each; -1 for none), shown beside the hit.

Buckets (module doc of :mod:`.browser_index`): the entries whose key starts with a prefix of
one character, split one character longer while a bucket holds more than ``name_bucket``
entries, up to :data:`~taxoforge.snapshots.browser_keys.MAX_PREFIX` characters. A key
exactly as long as a prefix that was split goes to the bucket ``prefix + "\\x00"``. A split
prefix is an *internal* node: its *top* file holds its best
:data:`~taxoforge.snapshots.browser_keys.TOP_NAMES` entries (exact key first). The page
answers a query ``q`` from the top file of ``q`` (and the bucket ``q + "\\x00"``) when ``q`` was
split, else from the bucket of the longest prefix of ``q``, keeping the entries whose key
starts with ``q``.

Within a bucket, entries are sorted by key, then by how good a match they are at equal key:
the whole name before a later word; then the taxa people have common names for first, the
more names the better (a prior of how well known a taxon is: *lion* finds *Panthera leo*,
which WordNet names three ways, before a beetle genus that only a scientific name names); then
by kind (:data:`~taxoforge.snapshots.browser_keys.KIND_ORDER`), bigger subtrees first,
shorter names first. The page orders the hits of a query the same way, an exact key first.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from taxoforge.snapshots.browser_json import gz_json, gz_texts, json_array, json_value
from taxoforge.snapshots.browser_keys import KIND_ORDER, MAX_PREFIX, TOP_NAMES, WHITESPACE, name_keys

__all__ = ["name_files", "COMMON_KINDS"]

#: name kinds that are names people use (not scientific names nor identifiers): how many of them a
#: node has ranks equal matches
COMMON_KINDS = ("vernacular", "alias", "lemma", "dataset_label")

def _entries(names: pl.DataFrame, labels: pl.Series, rank_col: pl.Series, size: np.ndarray, kinds: list[str],
             context: np.ndarray) -> pl.DataFrame:
    """Every (node, key) once, with its best name, and a ``_score`` that orders matches of
    equal key (module doc): lower is better."""
    n = len(labels)
    common = names.filter(pl.col("kind").is_in(list(COMMON_KINDS))).group_by("_o").agg(
        pl.col("name").n_unique().clip(0, 15).cast(pl.Int64).alias("_common"))
    label_rows = pl.DataFrame({"_o": np.arange(n), "name": labels, "kind": ["label"] * n},
                              schema={"_o": pl.Int64, "name": pl.String, "kind": pl.String})
    named = names.select("_o", "name", pl.col("kind").cast(pl.String))
    # a label that is also one of the node's names is found as that name, with its kind (scientific, …)
    label_rows = label_rows.join(named.select("_o", "name"), on=["_o", "name"], how="anti", nulls_equal=True)
    rows = pl.concat([named, label_rows]).drop_nulls("name")
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
    sizes = pl.Series("_size", size, dtype=pl.Int64)
    allrows = allrows.with_columns(pl.col("_o").map_batches(lambda s: sizes.gather(s), return_dtype=pl.Int64)
                                   .alias("_size"), pl.col("name").str.len_chars().clip(0, 511).alias("_len"))
    allrows = allrows.join(common, on="_o", how="left").with_columns(pl.col("_common").fill_null(0))
    # one number orders equal keys: the whole name before a later word, more common names, kind, bigger
    # subtree, shorter name
    allrows = allrows.with_columns((((pl.col("from_word") * 16 + 15 - pl.col("_common")) * 16
                                     + pl.col("_kr").clip(0, 15)) * (1 << 40)
                                    + ((1 << 31) - pl.col("_size").clip(0, (1 << 31) - 1)) * 512 + pl.col("_len"))
                                   .alias("_score"))
    # sorted by key, then the order of equal keys; of a node's entries with one key the first (the
    # best score, the earliest of equal ones: a stable sort) is kept
    best = allrows.sort("key", "_score", "_o", maintain_order=True).filter(pl.struct("_o", "key").is_first_distinct())
    lab = pl.Series("_label", labels, dtype=pl.String)
    rk = pl.Series("_rank", rank_col, dtype=pl.Int64)
    ctx = pl.Series("_ctx", context, dtype=pl.Int64)
    return best.with_columns(pl.col("_o").map_batches(lambda s: lab.gather(s), return_dtype=pl.String).alias("_label"),
                             pl.col("_o").map_batches(lambda s: rk.gather(s), return_dtype=pl.Int64).alias("rank"),
                             pl.col("_o").map_batches(lambda s: ctx.gather(s), return_dtype=pl.Int64).alias("_ctx"),
                             pl.col("key").str.len_chars().alias("_kl"))


def _files(df: pl.DataFrame, file_col: str) -> dict[int, str]:
    """The JSON text of each file of entries (module doc): ``df`` holds each file's entries
    together, sorted by key, with the file in ``file_col``; every entry's text is built
    column-wise (:mod:`.browser_json`), then joined per file."""
    label = pl.when(pl.col("_label").eq_missing(pl.col("name"))).then(pl.lit("0")) \
        .otherwise(json_value("_label", df.schema["_label"]))
    entry = json_array(*(label if c == "_label" else json_value(c, df.schema[c])
                         for c in ("key", "name", "kind", "_o", "_label", "rank", "from_word", "_size", "_common", "_cid")))
    files = df.group_by(file_col, maintain_order=True).agg(entry.str.join(",").alias("_j"))
    return {f: f"[{text}]" for f, text in files.iter_rows()}


def name_files(names: pl.DataFrame, labels: pl.Series, rank_col: pl.Series, size: np.ndarray, kinds: list[str],
               *, name_bucket: int, context: np.ndarray | None = None) -> tuple[dict, dict[str, bytes]]:
    """The name index's files: ``index.json.gz`` (prefix → bucket file, split prefix → top
    file) and the buckets (module doc).

    Parameters
    ----------
    names : polars.DataFrame
        ``_o`` (the node's ordinal), ``name``, ``kind``, ``lang``.
    labels : polars.Series
        Node labels by ordinal (each label is indexed as a name of kind ``label`` too).
    rank_col : polars.Series
        Rank index by ordinal (-1 for none).
    size : numpy.ndarray
        Subtree size by ordinal.
    kinds : list of str
        The name kinds, as the page numbers them.
    name_bucket : int
        The largest bucket before its prefix is split.
    context : numpy.ndarray, optional
        The ordinal of each node's higher taxon (-1 for none), shown beside its hits.

    Returns
    -------
    tuple of (dict, dict)
        The index (for the page's metadata: entry count, limits) and file name → bytes.
    """
    context = np.full(len(labels), -1, dtype=np.int64) if context is None else context
    entries = _entries(names, labels, rank_col, size, kinds, context).with_row_index("_e")  # sorted by key
    # the higher taxa the entries name, once each: contexts.json.gz holds [label, rank] of each
    used = entries.select(pl.col("_ctx").filter(pl.col("_ctx") >= 0).unique().sort())["_ctx"].to_list()
    cid = {o: i for i, o in enumerate(used)}
    entries = entries.with_columns(pl.col("_ctx").replace_strict(cid, default=-1, return_dtype=pl.Int64).alias("_cid"))
    assigned, tops = [], []
    pending = entries.select("_e", "key", "_kl", "_score")
    for length in range(1, MAX_PREFIX + 1):
        exact = pending.filter(pl.col("_kl") < length)  # a key as long as a prefix that was split
        assigned.append(exact.select("_e", (pl.col("key") + "\x00").alias("_b")))
        pending = pending.filter(pl.col("_kl") >= length).with_columns(pl.col("key").str.slice(0, length).alias("_p"))
        counts = pending.group_by("_p").len()
        split = counts.filter(pl.col("len") > name_bucket)["_p"] if length < MAX_PREFIX else pl.Series([], dtype=pl.String)
        is_split = pl.col("_p").is_in(split.implode())
        assigned.append(pending.filter(~is_split).select("_e", pl.col("_p").alias("_b")))
        pending = pending.filter(is_split)
        if not pending.height:
            break
        # the best entries of each split prefix, exact key first: one number ranked within each prefix
        # (pending is in entry order, so the ordinal rank breaks ties by entry, as a sort by both would)
        rank = (pl.col("key") != pl.col("_p")).cast(pl.Int64) * (1 << 50) + pl.col("_score")
        tops.append(pending.filter(rank.rank("ordinal").over("_p") <= TOP_NAMES).select("_e", "_p"))
        pending = pending.drop("_p")
    entries = entries.join(pl.concat(assigned), on="_e", how="left", maintain_order="left")
    runs = entries.select(pl.col("_b").rle()).unnest("_b")["value"].to_list()  # each bucket is one run of keys
    leaves = {p: i for i, p in enumerate(runs)}
    entries = entries.with_columns(pl.col("_b").replace_strict(leaves, return_dtype=pl.Int64).alias("_f"))
    texts: dict[str, str] = {f"{f}.json.gz": text for f, text in _files(entries, "_f").items()}
    top_ids: dict[str, int] = {}
    if tops:
        top = pl.concat(tops)
        chosen = entries.join(top, on="_e", how="inner", maintain_order="left").sort("_p", maintain_order=True)
        runs = chosen.select(pl.col("_p").rle()).unnest("_p")["value"].to_list()
        top_ids = {p: i for i, p in enumerate(runs)}
        chosen = chosen.with_columns(pl.col("_p").replace_strict(top_ids, return_dtype=pl.Int64).alias("_t"))
        texts.update({f"t{t}.json.gz": text for t, text in _files(chosen, "_t").items()})
    blobs = gz_texts(texts)
    blobs["index.json.gz"] = gz_json({"leaves": leaves, "tops": top_ids})
    blobs["contexts.json.gz"] = gz_json([list(pair) for pair in zip(labels.gather(used).to_list(),
                                                                    rank_col.gather(used).to_list())])
    meta = {"entries": entries.height, "max_prefix": MAX_PREFIX, "top": TOP_NAMES, "bucket": name_bucket,
            "whitespace": WHITESPACE}
    return meta, blobs
