"""The data of a snapshot's browser: the tree cut into small, compressed JSON files a static
page reads (no server code: any static host, an S3 bucket, a folder behind ``http.server``).

Layout, under ``<store>/<name>/<version>/browse/`` (every ``*.json.gz`` is gzip-compressed
JSON; the page decompresses it itself, so the host needs no configuration):

``nodes/<k>.json.gz``
    The nodes in depth-first **pre-order** (children by label), :data:`SHARD_SIZE` to a file:
    node ``o`` (its *ordinal*) is in file ``o // SHARD_SIZE``. Each record holds the node's
    id, label, rank, parent, depth, subtree size, number of children, its first
    :data:`INLINE_CHILDREN` children, its names, the dataset labels linked to it and its
    change from the previous version. A pre-order range is a run of whole subtrees, so every
    ancestor of a node of the file outside it is an ancestor of the file's first node: the
    file carries those few (``outside``), with the children it lists that lie past its end —
    one request shows a node, its path to the root and its children.
``children/<o>.json.gz``
    Every child of a node with more than :data:`INLINE_CHILDREN`.
``ids/<b>.json.gz``
    Node id → ordinal, hashed into buckets (FNV-1a, 32 bits, of the id's UTF-8 bytes); a
    node the previous version had and this one removed maps to what it was.
``changes.html`` (with a version before it)
    Every node added, removed, moved and renamed since that version, with its name
    (:mod:`.browser_changes`, which also gives each node record its changes up the tree).
``names/index.json.gz`` and ``names/<f>.json.gz``
    Every name of every node (scientific, vernacular, synonym, label …), and every name again
    from each of its later words (*leo* finds *Panthera leo*), keyed by its normal form
    (:func:`~taxoforge.snapshots.browser_keys.name_key`), cut into buckets by key prefix, each bucket at most about
    :data:`NAME_BUCKET` entries (a prefix with more is split one character longer). For a
    prefix that was split, a *top* file holds its best :data:`~taxoforge.snapshots.browser_keys.TOP_NAMES` entries, so a
    one-letter query is answered from one small file too.

:func:`~taxoforge.snapshots.browser_keys.name_key` and :func:`id_bucket` are the two functions the page re-implements in
JavaScript; the tests check that both give the same answers.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import polars as pl

from taxoforge.snapshots.browser_changes import changes_pages, node_changes
from taxoforge.snapshots.browser_json import gz_json, gz_texts, json_array, json_value
from taxoforge.snapshots.browser_keys import KIND_ORDER
from taxoforge.snapshots.browser_names import name_files
from taxoforge.snapshots.diff import diff_frames
from taxoforge.trees.lca import preorder
from taxoforge.trees.tables import TreeTables
from taxoforge.trees.threads import cpus

__all__ = ["SHARD_SIZE", "INLINE_CHILDREN", "NAME_BUCKET", "FORMAT", "id_bucket", "id_buckets", "fnv1a32",
           "BrowserData", "browser_data", "NODE_FIELDS"]

FORMAT = "taxoforge-browser"
SHARD_SIZE = 1024
INLINE_CHILDREN = 100
NAME_BUCKET = 3000
#: the fields of a node record in ``nodes/<k>.json.gz`` (the page reads them by position)
NODE_FIELDS = ("id", "label", "rank", "parent", "depth", "size", "n_children", "children", "names", "links", "diff")


def fnv1a32(data: bytes) -> int:
    """The 32-bit FNV-1a hash of ``data`` (Fowler, Noll and Vo).

    Parameters
    ----------
    data : bytes
        The bytes.

    Returns
    -------
    int
        The hash, ``0 ≤ h < 2**32``.

    Examples
    --------
    >>> fnv1a32(b"")
    2166136261
    >>> fnv1a32(b"a")
    3826002220
    """
    h = 0x811C9DC5
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def id_bucket(node_id: str, buckets: int) -> int:
    """The ``ids/<b>.json.gz`` file of a node id.

    Parameters
    ----------
    node_id : str
        The node id.
    buckets : int
        The number of buckets (a power of two).

    Returns
    -------
    int
        ``fnv1a32(utf-8 of node_id) mod buckets``.
    """
    return fnv1a32(str(node_id).encode("utf-8")) & (buckets - 1)


@dataclass
class BrowserData:
    """The files of one browser (:func:`browser_data`) and what the page needs to read them.

    Attributes
    ----------
    meta : dict
        Sizes, field layouts, the version compared with, counts (embedded in the page).
    files : dict
        Relative path → bytes.
    """

    meta: dict
    files: dict[str, bytes] = field(default_factory=dict)

    def items(self) -> Iterator[tuple[str, bytes]]:
        """The files, sorted by path.

        Yields
        ------
        tuple of (str, bytes)
            A relative path and its bytes.
        """
        yield from sorted(self.files.items())


def _depths(parent_idx: np.ndarray) -> np.ndarray:
    """The depth of every node from its parent pointers (-1: a root), level by level from the
    roots; -1 for a node no root reaches (on a cycle)."""
    n = len(parent_idx)
    depth = np.full(n, -1, dtype=np.int64)
    has = parent_idx >= 0
    kids = np.argsort(np.where(has, parent_idx, n), kind="stable")[:int(has.sum())]
    starts = np.searchsorted(parent_idx[kids], np.arange(n + 1))
    frontier, d = np.flatnonzero(~has), 0
    while frontier.size:
        depth[frontier] = d
        counts = starts[frontier + 1] - starts[frontier]
        if not counts.sum():
            break
        offsets = np.repeat(starts[frontier] - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
        frontier = kids[np.arange(int(counts.sum())) + offsets]
        d += 1
    return depth


def _order(nodes: pl.DataFrame) -> tuple[pl.DataFrame, np.ndarray, np.ndarray]:
    """``nodes`` in pre-order with children sorted by label (then id), roots one after the
    other, with their ordinals' parents and subtree sizes. Depths are recomputed from the
    parents (a parent the table lacks makes a root); a node on a cycle is refused."""
    by_label = nodes.with_columns(pl.col("label").fill_null("").str.to_lowercase().alias("_k")).sort(
        "_k", "node_id").drop("_k").with_row_index("_i")
    parent = by_label.select("parent_id").join(by_label.select(pl.col("node_id").alias("parent_id"),
                                                               pl.col("_i").alias("_p")),
                                               on="parent_id", how="left", maintain_order="left")["_p"]
    parent_idx = parent.fill_null(-1).cast(pl.Int64).to_numpy()
    depth = _depths(parent_idx)
    if (depth < 0).any():
        bad = by_label["node_id"].gather(np.flatnonzero(depth < 0)[:5]).to_list()
        raise ValueError(f"{int((depth < 0).sum())} node(s) on a cycle, no root reaches them (e.g. {bad}): "
                         "a browser needs a tree")
    n = len(parent_idx)  # one virtual root above the roots, so several roots follow each other
    pre, size = preorder(np.append(np.where(parent_idx >= 0, parent_idx, n), -1), np.append(depth + 1, 0))
    pre, size = pre[:n] - 1, size[:n]
    ordered = by_label.with_columns(pl.Series("_o", pre), pl.Series("depth", depth, dtype=pl.Int32)).sort("_o")
    order = np.argsort(pre)
    parent_ord = np.where(parent_idx[order] >= 0, pre[np.maximum(parent_idx[order], 0)], -1)
    return ordered, parent_ord, size[order]


def id_buckets(ids: list[str] | pl.Series, buckets: int) -> np.ndarray:
    """:func:`id_bucket` of many ids at once: the hash over their UTF-8 bytes as Arrow holds
    them, one byte position of every id at a time.

    Parameters
    ----------
    ids : list of str or polars.Series
        Node ids.
    buckets : int
        The number of buckets (a power of two).

    Returns
    -------
    numpy.ndarray
        The bucket of each id.
    """
    import pyarrow as pa

    series = ids.cast(pl.String) if isinstance(ids, pl.Series) else pl.Series([str(i) for i in ids], dtype=pl.String)
    if not len(series):
        return np.zeros(0, dtype=np.int64)
    arr = series.fill_null("None").to_arrow()
    arr = (arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr).cast(pa.large_string())
    _, offsets_buf, data_buf = arr.buffers()
    offsets = np.frombuffer(offsets_buf, dtype=np.int64)[arr.offset:arr.offset + len(arr) + 1]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, dtype=np.uint8)
    starts, lengths = offsets[:-1], np.diff(offsets)
    h = np.full(len(arr), 0x811C9DC5, dtype=np.uint32)
    live = np.arange(len(arr))
    j = 0
    with np.errstate(over="ignore"):
        while True:
            live = live[lengths[live] > j]
            if not live.size:
                break
            h[live] = (h[live] ^ data[starts[live] + j].astype(np.uint32)) * np.uint32(0x01000193)
            j += 1
    return (h & np.uint32(buckets - 1)).astype(np.int64)


def browser_data(tables: TreeTables, previous: TreeTables | None = None, *, previous_version: str | None = None,
                 shard_size: int = SHARD_SIZE, inline_children: int = INLINE_CHILDREN,
                 name_bucket: int = NAME_BUCKET, taxonomy: str | None = None,
                 version: str | None = None) -> BrowserData:
    """Every file of the browser of ``tables`` (module doc), with the change of each node
    from ``previous`` (the version before it) when given.

    Parameters
    ----------
    tables : TreeTables
        The snapshot's tables.
    previous : TreeTables, optional
        The tables of the version before it.
    previous_version : str, optional
        That version's id, recorded in the page.
    shard_size : int, optional
        Nodes per ``nodes/`` file.
    inline_children : int, optional
        Children listed in a node's record (the rest in ``children/<o>.json.gz``).
    name_bucket : int, optional
        The largest name bucket before its prefix is split.
    taxonomy, version : str, optional
        The snapshot's taxonomy and version, named on the changes page
        (:mod:`.browser_changes`; default the tables' name, no version).

    Returns
    -------
    BrowserData
        The files and the page's metadata.
    """
    nodes = tables.nodes.select("node_id", "parent_id", "depth", "label",
                                *(["rank"] if "rank" in tables.nodes.columns else []))
    if "rank" not in nodes.columns:
        nodes = nodes.with_columns(pl.lit(None, dtype=pl.String).alias("rank"))
    ordered, parent_ord, size = _order(nodes)
    n = ordered.height
    ids, labels = ordered["node_id"], ordered["label"]
    ord_of = pl.DataFrame({"node_id": ids, "_o": np.arange(n)}, schema={"node_id": pl.String, "_o": pl.Int64})
    rank_names = sorted(r for r in ordered["rank"].drop_nulls().unique().to_list() if r)
    rank_col = ordered["rank"].replace_strict({r: i for i, r in enumerate(rank_names)}, default=-1,
                                              return_dtype=pl.Int64).fill_null(-1)
    n_children = np.bincount(parent_ord[parent_ord >= 0], minlength=n)
    kids_order = np.argsort(parent_ord, kind="stable")
    kids = pl.DataFrame({"_p": parent_ord[kids_order], "_c": kids_order}).filter(pl.col("_p") >= 0)  # by parent, in order
    # each node's fields as JSON text; ``brief``: the first seven, what a path or a child list shows
    node = pl.DataFrame({"_o": np.arange(n), "id": ids, "label": labels, "rank": rank_col, "parent": parent_ord,
                         "depth": ordered["depth"].cast(pl.Int64), "size": size, "n_kids": n_children},
                        schema_overrides={"_o": pl.Int64, "parent": pl.Int64, "size": pl.Int64, "n_kids": pl.Int64})
    text = {c: json_value(c, node.schema[c]) for c in node.columns}
    node = node.select("_o", json_array(*(text[c] for c in ("id", "label", "rank", "parent", "depth", "size", "n_kids")))
                       .alias("brief"), json_array(text["_o"], text["id"], text["label"], text["rank"], text["size"],
                                                   text["n_kids"]).alias("child"))

    # names: every name of the node; the one equal to its label written as 0
    names = tables.names.select("node_id", "name", "kind", "lang", "source").join(ord_of, on="node_id", how="inner")
    kinds = sorted(set(names["kind"].drop_nulls().unique().to_list()) | set(KIND_ORDER),
                   key=lambda k: (KIND_ORDER.index(k) if k in KIND_ORDER else len(KIND_ORDER), k))
    kind_idx = {k: i for i, k in enumerate(kinds)}
    # the name index (about half the work) on a thread of its own, beside the node, id and change
    # files: both are mostly polars and zlib, which release the GIL, so on two cores they overlap
    name_index = partial(name_files, names, labels, rank_col, size, kinds, name_bucket=name_bucket,
                         context=_contexts(parent_ord, ordered["rank"]))
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="taxoforge-browser-names") if cpus() > 1 else None
    try:
        named = pool.submit(name_index) if pool is not None else None
        coded = names.with_columns(pl.col("kind").replace_strict(kind_idx, default=-1, return_dtype=pl.Int64).alias("kind"))
        label_of = pl.col("_o").map_batches(lambda o: labels.gather(o), return_dtype=pl.String)
        names_text = _per_node(coded.select("_o", json_array(
            pl.when(pl.col("name").eq_missing(label_of)).then(pl.lit("0")).otherwise(json_value("name", pl.String)),
            *(json_value(c, coded.schema[c]) for c in ("kind", "lang", "source"))).alias("_j")))
        del coded
        links = tables.links.filter(pl.col("status") == "linked").select("node_id", "dataset", "label_id", "label_text") \
            .join(ord_of, on="node_id", how="inner")
        links_text = _per_node(links.select("_o", json_array(*(json_value(c, links.schema[c])
                                                               for c in ("dataset", "label_id", "label_text"))).alias("_j")))

        files: dict[str, bytes] = {}
        diff_text = pl.DataFrame(schema={"_o": pl.Int64, "_j": pl.String})
        removed: dict[str, list] = {}
        diff_meta = None
        if previous is not None:
            frames = diff_frames(previous, tables)[0]
            diff_by, removed, diff_meta = node_changes(frames, ord_of, parent_ord, size, previous.nodes, previous_version)
            changed_o = [o for o, d in enumerate(diff_by) if d is not None]
            diff_text = pl.DataFrame({"_o": changed_o, "_j": [_json(diff_by[o]) for o in changed_o]},
                                     schema={"_o": pl.Int64, "_j": pl.String})
            del diff_by
            changed = pl.concat([frames[k].select("node_id") for k in ("added", "moved", "renamed")])
            ranks_of = dict(tables.nodes.join(changed, on="node_id", how="semi").select("node_id", "rank").iter_rows()) \
                if "rank" in tables.nodes.columns else {}
            old_ranks = dict(previous.nodes.join(frames["removed"].select("node_id"), on="node_id", how="semi")
                             .select("node_id", "rank").iter_rows()) if "rank" in previous.nodes.columns else {}
            files.update(changes_pages(frames, taxonomy=taxonomy or tables.name, version=version or "",
                                       previous=previous_version or "", ranks=ranks_of, old_ranks=old_ranks))

        listed = kids.filter(pl.int_range(pl.len()).over("_p") < inline_children).group_by("_p", maintain_order=True) \
            .agg(pl.col("_c").cast(pl.String).str.join(",").alias("_j")).rename({"_p": "_o"})
        record = pl.concat_str(pl.col("brief").str.head(-1), pl.lit(","), _listed("_listed", "[]"), pl.lit(","),
                               _listed("_names", "[]"), pl.lit(","), _listed("_links", "[]"), pl.lit(","),
                               _listed("_diff", "null"), pl.lit("]"))
        node = node.join(listed.rename({"_j": "_listed"}), on="_o", how="left", maintain_order="left") \
            .join(names_text.rename({"_j": "_names"}), on="_o", how="left", maintain_order="left") \
            .join(links_text.rename({"_j": "_links"}), on="_o", how="left", maintain_order="left") \
            .join(diff_text.rename({"_j": "_diff"}), on="_o", how="left", maintain_order="left")
        shards = node.group_by((pl.col("_o") // shard_size).alias("_k"), maintain_order=True) \
            .agg(record.str.join(",").alias("_j"))["_j"].to_list() if n else [""]
        outside = _outside(parent_ord, n_children, kids["_c"].to_numpy(), shard_size, inline_children)
        carried = sorted(set().union(*outside))
        briefs = dict(zip(carried, node["brief"].gather(carried).to_list()))
        texts = {f"nodes/{k}.json.gz": f'{{"first":{k * shard_size},"nodes":[{shard}],"outside":{{'
                 + ",".join(f'"{o}":{briefs[o]}' for o in sorted(outside[k])) + "}}"
                 for k, shard in enumerate(shards)}
        del shards
        big = node.select("_o", "child").join(kids, left_on="_o", right_on="_c", how="inner", maintain_order="right") \
            .filter(pl.col("_p").is_in(pl.Series(np.flatnonzero(n_children > inline_children), dtype=pl.Int64).implode())) \
            .group_by("_p", maintain_order=True).agg(pl.col("child").str.join(","))
        texts.update({f"children/{o}.json.gz": f"[{t}]" for o, t in big.iter_rows()})

        buckets = 1
        while buckets * 1024 < n:
            buckets *= 2
        gone = list(removed)
        entries = pl.concat([
            pl.DataFrame({"_b": id_buckets(ids, buckets), "id": ids, "_o": np.arange(n)},
                         schema={"_b": pl.Int64, "id": pl.String, "_o": pl.Int64})
            .select("_b", (json_value("id", pl.String) + ":" + pl.col("_o").cast(pl.String)).alias("_j")),
            pl.DataFrame({"_b": id_buckets(gone, buckets), "_j": [f"{_json(g)}:{_json(removed[g])}" for g in gone]},
                         schema={"_b": pl.Int64, "_j": pl.String})])
        by_bucket = dict(entries.group_by("_b", maintain_order=True).agg(pl.col("_j").str.join(",")).iter_rows())
        texts.update({f"ids/{b}.json.gz": "{" + by_bucket.get(b, "") + "}" for b in range(buckets)})
        files.update(gz_texts(texts))
        del texts, node, entries, by_bucket
        name_meta, name_blobs = named.result() if named is not None else name_index()
    finally:
        if pool is not None:
            pool.shutdown()
    files.update({f"names/{p}": blob for p, blob in name_blobs.items()})
    roots = [int(o) for o in np.flatnonzero(parent_ord < 0)]
    prefixes = ids.filter(ids.str.contains(":", literal=True)).str.splitn(":", 2).struct.field("field_0").unique()
    meta = {
        "format": FORMAT, "format_version": 1, "nodes": n, "shard_size": shard_size, "inline_children": inline_children,
        "id_buckets": buckets, "fields": list(NODE_FIELDS), "ranks": rank_names, "kinds": kinds, "roots": roots,
        "id_prefixes": sorted(prefixes.to_list()), "names": name_meta,
        "max_depth": int(ordered["depth"].max()) if n else 0, "diff": diff_meta,
    }
    return BrowserData(meta, files)


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), check_circular=False)


def _per_node(rows: pl.DataFrame) -> pl.DataFrame:
    """``rows`` (``_o``, ``_j``: a JSON text) as one comma-joined text per ordinal, in the order
    the rows have within each ordinal."""
    return rows.sort("_o", maintain_order=True).group_by("_o", maintain_order=True).agg(pl.col("_j").str.join(","))


def _listed(col: str, empty: str) -> pl.Expr:
    """A node's joined texts as a JSON array (``empty`` when it has none); the diff column is
    one JSON value already."""
    if empty == "null":
        return pl.col(col).fill_null("null")
    return ("[" + pl.col(col) + "]").fill_null(empty)


def _outside(parent: np.ndarray, n_children: np.ndarray, kids: np.ndarray, shard_size: int,
             inline_children: int) -> list[set]:
    """The nodes each ``nodes/`` file carries from outside it: the ancestors of its first node,
    and the listed children of its nodes that lie past its end."""
    n = len(parent)
    out: list[set] = [set() for _ in range(max(1, -(-n // shard_size)))]
    for k, found in enumerate(out):
        anc = parent[k * shard_size] if n else -1
        while anc >= 0:
            found.add(int(anc))
            anc = parent[anc]
    starts = np.concatenate(([0], np.cumsum(n_children)))
    has = np.flatnonzero(n_children > 0)
    last = kids[np.minimum(starts[has + 1], starts[has] + inline_children) - 1]
    ends = np.minimum(n, (has // shard_size + 1) * shard_size)
    for o, end in zip(has[last >= ends].tolist(), ends[last >= ends].tolist()):
        listed = kids[starts[o]:min(starts[o + 1], starts[o] + inline_children)]
        out[o // shard_size].update(listed[listed >= end].tolist())
    return out


#: The ranks a search hit names as its higher taxon, and the level of each on the Linnean spine
_CONTEXT_LEVEL = {"kingdom": 0, "phylum": 1, "class": 2, "order": 3, "family": 4}
_OWN_LEVEL = {**_CONTEXT_LEVEL, "genus": 5, "genushybrid": 5, "species": 6, "hybrid": 6}


def _contexts(parent: np.ndarray, ranks: pl.Series) -> np.ndarray:
    """The ordinal of each node's *higher taxon*, shown beside a search hit so that *Netelia
    leo* and *Panthera leo* read apart: in a ranked tree the nearest ancestor of rank family,
    order, class, phylum or kingdom above the node's own level (a species or a genus: its
    family; a family: its order …); in a tree without ranks, the parent. -1 for none."""
    n = len(parent)
    level = ranks.replace_strict(_CONTEXT_LEVEL, default=99, return_dtype=pl.Int64).fill_null(99).to_numpy()
    if not (level < 99).any():  # no ranks: the parent says where a node is
        return parent.copy()
    own = ranks.replace_strict(_OWN_LEVEL, default=7, return_dtype=pl.Int64).fill_null(7).to_numpy()
    cur = parent.copy()
    out = np.full(n, -1, dtype=np.int64)
    todo = cur >= 0
    while todo.any():
        idx = np.flatnonzero(todo)
        hit = level[cur[idx]] < own[idx]
        out[idx[hit]] = cur[idx[hit]]
        cur[idx] = np.where(hit, -1, parent[cur[idx]])
        todo = cur >= 0
    return out
