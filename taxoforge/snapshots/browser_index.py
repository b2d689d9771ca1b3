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
    (:func:`name_key`), cut into buckets by key prefix, each bucket at most about
    :data:`NAME_BUCKET` entries (a prefix with more is split one character longer). For a
    prefix that was split, a *top* file holds its best :data:`TOP_NAMES` entries, so a
    one-letter query is answered from one small file too.

:func:`name_key` and :func:`id_bucket` are the two functions the page re-implements in
JavaScript; the tests check that both give the same answers.
"""

from __future__ import annotations

import gzip
import json
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from taxoforge.trees.lca import preorder
from taxoforge.trees.tables import TreeTables

__all__ = ["SHARD_SIZE", "INLINE_CHILDREN", "NAME_BUCKET", "TOP_NAMES", "MAX_PREFIX", "FORMAT", "name_key",
           "id_bucket", "id_buckets", "fnv1a32", "BrowserData", "browser_data", "KIND_ORDER", "NODE_FIELDS"]

FORMAT = "taxoforge-browser"
SHARD_SIZE = 1024
INLINE_CHILDREN = 100
NAME_BUCKET = 3000
TOP_NAMES = 30
MAX_PREFIX = 12
#: name kinds, best first: the order search results of equal match take
KIND_ORDER = ("label", "scientific", "vernacular", "alias", "lemma", "dataset_label", "synonym", "infrageneric",
              "synset")
#: the fields of a node record in ``nodes/<k>.json.gz`` (the page reads them by position)
NODE_FIELDS = ("id", "label", "rank", "parent", "depth", "size", "n_children", "children", "names", "links", "diff")
#: what separates words in a key (:data:`taxoforge.snapshots.browser_names.WHITESPACE`, in Python's syntax)
_SPACES = re.compile("[_\t\n\x0b\x0c\r \x85\u1680\u2028\u2029\ufeff]+")


def name_key(text: str | None) -> str:
    """The normal form names are searched by: Unicode NFKD with combining marks dropped,
    lower case, ``_`` and runs of white space as one space, trimmed. The page computes the
    same (``String.prototype.normalize("NFKD")``, ``/\\p{M}/gu``, ``toLowerCase``).

    Parameters
    ----------
    text : str or None
        A name or a query.

    Returns
    -------
    str
        Its key.

    Examples
    --------
    >>> name_key("  Acinonyx   JUBATUS ")
    'acinonyx jubatus'
    >>> name_key("Lycaena_phlæas Müller")
    'lycaena phlæas muller'
    """
    if not text:
        return ""
    decomposed = unicodedata.normalize("NFKD", str(text))
    kept = "".join(c for c in decomposed if not unicodedata.category(c).startswith("M"))
    return _SPACES.sub(" ", kept.lower()).strip(" ")


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


def _gz(obj) -> bytes:
    """Compact JSON, gzip-compressed with a fixed header (same content, same bytes)."""
    raw = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), check_circular=False).encode("utf-8")
    return gzip.compress(raw, compresslevel=3, mtime=0)  # 3: about half the time of 6 for ~10 % more bytes


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


def _grouped(df: pl.DataFrame, n: int, cols: list[str], *, zero_if: list | None = None) -> list[list]:
    """``df`` (with an ``_o`` ordinal column) as one list of rows per ordinal ``0 … n-1``;
    with ``zero_if`` (one value per ordinal), a first column equal to it is written 0."""
    if not df.height:
        return [[] for _ in range(n)]
    df = df.sort("_o", maintain_order=True)
    counts = np.bincount(df["_o"].to_numpy(), minlength=n)
    columns = [df[c].to_list() for c in cols]
    if zero_if is not None:
        owner = df["_o"].to_list()
        columns[0] = [0 if v == zero_if[o] else v for v, o in zip(columns[0], owner)]
    rows = list(zip(*columns))  # tuples: JSON arrays all the same
    out, start = [], 0
    for k in counts.tolist():
        out.append(rows[start:start + k])
        start += k
    return out


def id_buckets(ids: list[str], buckets: int) -> np.ndarray:
    """:func:`id_bucket` of many ids at once (the hash over a matrix of their UTF-8 bytes).

    Parameters
    ----------
    ids : list of str
        Node ids.
    buckets : int
        The number of buckets (a power of two).

    Returns
    -------
    numpy.ndarray
        The bucket of each id.
    """
    raw = [str(i).encode("utf-8") for i in ids]
    if not raw:
        return np.zeros(0, dtype=np.int64)
    width = max(len(b) for b in raw)
    lengths = np.fromiter((len(b) for b in raw), dtype=np.int64, count=len(raw))
    flat = np.frombuffer(b"".join(b.ljust(width, b"\0") for b in raw), dtype=np.uint8).reshape(len(raw), width)
    h = np.full(len(raw), 0x811C9DC5, dtype=np.uint32)
    with np.errstate(over="ignore"):
        for j in range(width):
            live = lengths > j
            h = np.where(live, (h ^ flat[:, j].astype(np.uint32)) * np.uint32(0x01000193), h)
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
    from taxoforge.snapshots.browser_changes import changes_pages, node_changes
    from taxoforge.snapshots.browser_names import name_files
    from taxoforge.snapshots.diff import diff_frames

    nodes = tables.nodes.select("node_id", "parent_id", "depth", "label",
                                *(["rank"] if "rank" in tables.nodes.columns else []))
    if "rank" not in nodes.columns:
        nodes = nodes.with_columns(pl.lit(None, dtype=pl.String).alias("rank"))
    ordered, parent_ord, size = _order(nodes)
    n = ordered.height
    ids = ordered["node_id"].to_list()
    labels = ordered["label"].to_list()
    ranks_all = ordered["rank"].to_list()
    depth = ordered["depth"].cast(pl.Int64).to_list()
    ord_of = pl.DataFrame({"node_id": ids, "_o": np.arange(n)}, schema={"node_id": pl.String, "_o": pl.Int64})
    rank_names = sorted({r for r in ranks_all if r})
    rank_idx = {r: i for i, r in enumerate(rank_names)}
    rank_col = [rank_idx.get(r, -1) for r in ranks_all]

    n_children = np.bincount(parent_ord[parent_ord >= 0], minlength=n)
    kids_order = np.argsort(parent_ord, kind="stable")
    kids_all = kids_order[parent_ord[kids_order] >= 0].tolist()
    starts = np.zeros(n + 1, dtype=np.int64)
    starts[1:] = np.cumsum(n_children)
    starts_l = starts.tolist()
    parents, sizes, n_kids = parent_ord.tolist(), size.tolist(), n_children.tolist()

    # names: every name of the node; the one equal to its label written as 0
    names = tables.names.select("node_id", "name", "kind", "lang", "source").join(ord_of, on="node_id", how="inner")
    kinds = sorted(set(names["kind"].drop_nulls().unique().to_list()) | set(KIND_ORDER),
                   key=lambda k: (KIND_ORDER.index(k) if k in KIND_ORDER else len(KIND_ORDER), k))
    kind_idx = {k: i for i, k in enumerate(kinds)}
    names_by = _grouped(names.with_columns(pl.col("kind").replace_strict(kind_idx, default=-1, return_dtype=pl.Int64)
                                           .alias("kind")), n, ["name", "kind", "lang", "source"], zero_if=labels)
    links = tables.links.filter(pl.col("status") == "linked").select("node_id", "dataset", "label_id", "label_text") \
        .join(ord_of, on="node_id", how="inner")
    links_by = _grouped(links, n, ["dataset", "label_id", "label_text"])

    files: dict[str, bytes] = {}
    diff_by: list = [None] * n
    removed: dict[str, list] = {}
    diff_meta = None
    if previous is not None:
        frames = diff_frames(previous, tables)[0]
        diff_by, removed, diff_meta = node_changes(frames, ord_of, parent_ord, size, previous.nodes, previous_version)
        changed = pl.concat([frames[k].select("node_id") for k in ("added", "moved", "renamed")])
        ranks_of = dict(tables.nodes.join(changed, on="node_id", how="semi").select("node_id", "rank").iter_rows()) \
            if "rank" in tables.nodes.columns else {}
        old_ranks = dict(previous.nodes.join(frames["removed"].select("node_id"), on="node_id", how="semi")
                         .select("node_id", "rank").iter_rows()) if "rank" in previous.nodes.columns else {}
        files.update(changes_pages(frames, taxonomy=taxonomy or tables.name, version=version or "",
                                   previous=previous_version or "", ranks=ranks_of, old_ranks=old_ranks))

    def brief(o: int) -> list:
        return [ids[o], labels[o], rank_col[o], parents[o], depth[o], sizes[o], n_kids[o]]

    for k in range(max(1, -(-n // shard_size))):
        a, b = k * shard_size, min(n, (k + 1) * shard_size)
        outside = set()
        anc = parents[a] if n else -1
        while anc >= 0:  # the ancestors outside the file: those of its first node
            outside.add(anc)
            anc = parents[anc]
        records = []
        for o in range(a, b):
            listed = kids_all[starts_l[o]:min(starts_l[o + 1], starts_l[o] + inline_children)]
            if listed and listed[-1] >= b:
                outside.update(c for c in listed if c >= b)
            records.append([ids[o], labels[o], rank_col[o], parents[o], depth[o], sizes[o], n_kids[o], listed,
                            names_by[o], links_by[o], diff_by[o]])
        files[f"nodes/{k}.json.gz"] = _gz({"first": a, "nodes": records,
                                           "outside": {str(o): brief(o) for o in sorted(outside)}})
    for o in np.flatnonzero(n_children > inline_children).tolist():
        files[f"children/{o}.json.gz"] = _gz([[c, ids[c], labels[c], rank_col[c], sizes[c], n_kids[c]]
                                              for c in kids_all[starts_l[o]:starts_l[o + 1]]])

    buckets = 1
    while buckets * 1024 < n:
        buckets *= 2
    by_bucket: list[dict] = [{} for _ in range(buckets)]
    for o, (node_id, bk) in enumerate(zip(ids, id_buckets(ids, buckets).tolist())):
        by_bucket[bk][node_id] = o
    for (node_id, was), bk in zip(removed.items(), id_buckets(list(removed), buckets).tolist()):
        by_bucket[bk][node_id] = was
    for b, content in enumerate(by_bucket):
        files[f"ids/{b}.json.gz"] = _gz(content)

    del names_by, links_by, diff_by
    context = _contexts(parent_ord, ranks_all, labels)
    name_meta, name_blobs = name_files(names, labels, rank_col, size, kinds, name_bucket=name_bucket, pack=_gz,
                                       context=context)
    files.update({f"names/{p}": blob for p, blob in name_blobs.items()})
    roots = [int(o) for o in np.flatnonzero(parent_ord < 0)]
    meta = {
        "format": FORMAT, "format_version": 1, "nodes": n, "shard_size": shard_size, "inline_children": inline_children,
        "id_buckets": buckets, "fields": list(NODE_FIELDS), "ranks": rank_names, "kinds": kinds, "roots": roots,
        "id_prefixes": sorted({i.split(":", 1)[0] for i in ids if ":" in i}), "names": name_meta,
        "max_depth": int(max(depth) if depth else 0), "diff": diff_meta,
    }
    return BrowserData(meta, files)


#: The ranks a search hit names as its higher taxon, and the level of each on the Linnean spine
_CONTEXT_LEVEL = {"kingdom": 0, "phylum": 1, "class": 2, "order": 3, "family": 4}
_OWN_LEVEL = {**_CONTEXT_LEVEL, "genus": 5, "genushybrid": 5, "species": 6, "hybrid": 6}


def _contexts(parent: np.ndarray, ranks: list, labels: list) -> np.ndarray:
    """The ordinal of each node's *higher taxon*, shown beside a search hit so that *Netelia
    leo* and *Panthera leo* read apart: in a ranked tree the nearest ancestor of rank family,
    order, class, phylum or kingdom above the node's own level (a species or a genus: its
    family; a family: its order …); in a tree without ranks, the parent. -1 for none."""
    n = len(parent)
    level = np.array([_CONTEXT_LEVEL.get(r, 99) if r else 99 for r in ranks], dtype=np.int64)
    if not (level < 99).any():  # no ranks: the parent says where a node is
        return parent.copy()
    own = np.array([_OWN_LEVEL.get(r, 7) if r else 7 for r in ranks], dtype=np.int64)
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
