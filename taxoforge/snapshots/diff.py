"""What changed between two versions of a taxonomy.

Nodes are matched by ``node_id`` (stable across rebuilds, docs/method.md#trees), links by
``(dataset, label_id)``. Reported, each as a table sorted by id:

``added`` / ``removed``   nodes only in B / only in A (with parent and label);
``renamed``               nodes in both whose ``label`` changed;
``moved``                 nodes in both whose parent changed (old and new parent);
``names_added`` / ``names_removed``  rows of the names table (node, name, kind, lang);
``links_added`` / ``links_removed`` labels only in B / only in A;
``links_changed``         labels in both whose status, node or method changed.

Every node id a row names comes with its label beside it (``label``, ``parent_label``,
``old_parent_label``, ``new_parent_label``, ``node_label`` …: the label in B, or in A
for what B no longer has), so a reader sees *Panthera leo* moved from *Felis* to
*Panthera*, not ``inat:41964`` from ``inat:41939`` to ``inat:41944``.

A move changes the depth of the whole subtree below it; those depth changes are counted
(``depth_changed``) but not listed, so a diff shows the edges that changed, not their
consequences. Everything is joins over the tables: fast at Wikidata scale.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from taxoforge.snapshots.catalogue import sorted_versions
from taxoforge.trees.tables import TreeTables

__all__ = ["diff_tables", "diff_frames", "diff_summary", "summary_text", "format_diff", "DIFF_KINDS", "fill_diffs"]

DIFF_KINDS = ("added", "removed", "renamed", "moved", "names_added", "names_removed",
              "links_added", "links_removed", "links_changed")


def _rows(df: pl.DataFrame) -> list[dict]:
    return df.to_dicts()


def diff_frames(a: TreeTables, b: TreeTables) -> tuple[dict[str, pl.DataFrame], int]:
    """The differences from ``a`` (old) to ``b`` (new): one table per kind in
    :data:`DIFF_KINDS`, and the number of nodes whose depth changed.

    Parameters
    ----------
    a : TreeTables
        The old tables.
    b : TreeTables
        The new tables.

    Returns
    -------
    tuple[dict[str, polars.DataFrame], int]
        The differences from ``a`` (old) to ``b`` (new): one table per kind in
        :data:`DIFF_KINDS`, and the number of nodes whose depth changed.
    """
    na = a.nodes.select("node_id", "parent_id", "label", "depth")
    nb = b.nodes.select("node_id", "parent_id", "label", "depth")
    # every node id's label: B's, else A's (a node B removed)
    labels = pl.concat([nb.select("node_id", "label"), na.join(nb, on="node_id", how="anti").select("node_id", "label")])

    def label(df: pl.DataFrame, col: str, alias: str) -> pl.DataFrame:
        named = labels.rename({"node_id": col, "label": alias})
        return df.join(named, on=col, how="left", maintain_order="left")

    added = label(nb.join(na, on="node_id", how="anti").select("node_id", "parent_id", "label"),
                  "parent_id", "parent_label").sort("node_id")
    removed = label(na.join(nb, on="node_id", how="anti").select("node_id", "parent_id", "label"),
                    "parent_id", "parent_label").sort("node_id")
    common = na.join(nb, on="node_id", how="inner", suffix="_new")
    renamed = (common.filter(pl.col("label").ne_missing(pl.col("label_new")))
               .select("node_id", pl.col("label").alias("old_label"), pl.col("label_new").alias("new_label"))
               .sort("node_id"))
    moved = common.filter(pl.col("parent_id").ne_missing(pl.col("parent_id_new"))).select(
        "node_id", pl.col("label_new").alias("label"), pl.col("parent_id").alias("old_parent"),
        pl.col("parent_id_new").alias("new_parent"))
    moved = label(label(moved, "old_parent", "old_parent_label"), "new_parent", "new_parent_label").sort("node_id")
    depth_changed = common.filter(pl.col("depth").ne_missing(pl.col("depth_new"))).height

    key_n = ["node_id", "name", "kind", "lang"]
    names_a = a.names.select(key_n).unique()
    names_b = b.names.select(key_n).unique()
    names_added = label(names_b.join(names_a, on=key_n, how="anti", nulls_equal=True),
                        "node_id", "label").sort(key_n, nulls_last=True)
    names_removed = label(names_a.join(names_b, on=key_n, how="anti", nulls_equal=True),
                          "node_id", "label").sort(key_n, nulls_last=True)

    key_l = ["dataset", "label_id"]
    cols_l = ["dataset", "label_id", "label_text", "status", "node_id", "method"]
    la = a.links.select(cols_l).unique(subset=key_l, keep="first")
    lb = b.links.select(cols_l).unique(subset=key_l, keep="first")
    links_added = label(lb.join(la, on=key_l, how="anti"), "node_id", "node_label").sort(key_l)
    links_removed = label(la.join(lb, on=key_l, how="anti"), "node_id", "node_label").sort(key_l)
    lc = la.join(lb, on=key_l, how="inner", suffix="_new")
    links_changed = (lc.filter(pl.col("status").ne_missing(pl.col("status_new"))
                               | pl.col("node_id").ne_missing(pl.col("node_id_new"))
                               | pl.col("method").ne_missing(pl.col("method_new")))
                     .select("dataset", "label_id", pl.col("label_text_new").alias("label_text"),
                             pl.col("status").alias("old_status"), pl.col("status_new").alias("new_status"),
                             pl.col("node_id").alias("old_node"), pl.col("node_id_new").alias("new_node"),
                             pl.col("method").alias("old_method"), pl.col("method_new").alias("new_method")))
    links_changed = label(label(links_changed, "old_node", "old_node_label"), "new_node", "new_node_label").sort(key_l)
    frames = {"added": added, "removed": removed, "renamed": renamed, "moved": moved,
              "names_added": names_added, "names_removed": names_removed, "links_added": links_added,
              "links_removed": links_removed, "links_changed": links_changed}
    return frames, depth_changed


def diff_tables(a: TreeTables, b: TreeTables) -> dict:
    """The differences from ``a`` (old) to ``b`` (new) as a JSON-ready dict: one list of
    rows per kind in :data:`DIFF_KINDS`, ``counts`` of each, and ``depth_changed``.

    Parameters
    ----------
    a : TreeTables
        The old tables.
    b : TreeTables
        The new tables.

    Returns
    -------
    dict
        The differences from ``a`` (old) to ``b`` (new) as a JSON-ready dict: one list
        of rows per kind in :data:`DIFF_KINDS`, ``counts`` of each, and
        ``depth_changed``.
    """
    frames, depth_changed = diff_frames(a, b)
    out = {"a": a.info.get("snapshot") or a.name, "b": b.info.get("snapshot") or b.name,
           **{k: _rows(frames[k]) for k in DIFF_KINDS}, "depth_changed": depth_changed}
    out["counts"] = {k: len(out[k]) for k in DIFF_KINDS}
    out["identical"] = not any(out["counts"].values()) and depth_changed == 0
    return out


def diff_summary(a: TreeTables, b: TreeTables, examples: int = 5) -> dict:
    """What changed from ``a`` to ``b``, small enough for a catalogue: ``counts`` per kind,
    ``depth_changed``, ``identical`` and the first ``examples`` rows of each node and link
    change (never every row of a 1.4 M-node diff).

    Parameters
    ----------
    a : TreeTables
        The old tables.
    b : TreeTables
        The new tables.
    examples : int, optional
        Example rows kept per kind.

    Returns
    -------
    dict
        What changed from ``a`` to ``b``, small enough for a catalogue: ``counts`` per
        kind, ``depth_changed``, ``identical`` and the first ``examples`` rows of each
        node and link change (never every row of a 1.4 M-node diff).
    """
    frames, depth_changed = diff_frames(a, b)
    counts = {k: frames[k].height for k in DIFF_KINDS}
    return {"counts": counts, "depth_changed": depth_changed,
            "identical": not any(counts.values()) and depth_changed == 0,
            "examples": {k: _rows(frames[k].head(examples))
                         for k in ("added", "removed", "renamed", "moved", "links_changed") if frames[k].height}}


def summary_text(summary: dict) -> str:
    """One line of :func:`diff_summary`: ``"+3 −1 nodes, 2 renamed, 1 moved; links +1 −0 ~2"``.

    Parameters
    ----------
    summary : dict
        What :func:`diff_summary` returned.

    Returns
    -------
    str
        One line of :func:`diff_summary`: ``"+3 −1 nodes, 2 renamed, 1 moved; links +1
        −0 ~2"``.
    """
    if summary.get("identical"):
        return "no changes"
    c = summary["counts"]
    parts = [f"+{c['added']:,} −{c['removed']:,} nodes"]
    if c["renamed"]:
        parts.append(f"{c['renamed']:,} renamed")
    if c["moved"]:
        parts.append(f"{c['moved']:,} moved")
    text = ", ".join(parts)
    if c["names_added"] or c["names_removed"]:
        text += f"; names +{c['names_added']:,} −{c['names_removed']:,}"
    if c["links_added"] or c["links_removed"] or c["links_changed"]:
        text += f"; links +{c['links_added']:,} −{c['links_removed']:,} ~{c['links_changed']:,}"
    return text


def _node(node_id, label) -> str:
    """``inat:41964 "Panthera leo"`` (just the id when the label is unknown; ``-`` for none)."""
    if node_id is None:
        return "-"
    return f"{node_id} {_printable(label)}" if label not in (None, "") else str(node_id)


def _printable(text) -> str:
    """Text quoted for a terminal: control characters shown escaped, never interpreted."""
    return repr(str(text))


def _fmt_row(kind: str, r: dict) -> str:
    if kind in ("added", "removed"):
        return f"{_node(r['node_id'], r['label'])}  (parent {_node(r['parent_id'], r.get('parent_label'))})"
    if kind == "renamed":
        return f"{r['node_id']}  {_printable(r['old_label'])} → {_printable(r['new_label'])}"
    if kind == "moved":
        return (f"{_node(r['node_id'], r.get('label'))}  parent {_node(r['old_parent'], r.get('old_parent_label'))}"
                f" → {_node(r['new_parent'], r.get('new_parent_label'))}")
    if kind in ("names_added", "names_removed"):
        return f"{_node(r['node_id'], r.get('label'))}  {_printable(r['name'])} ({r['kind']}, {r['lang']})"
    if kind in ("links_added", "links_removed"):
        return (f"{r['dataset']}:{r['label_id']}  {_printable(r['label_text'])} {r['status']} → "
                f"{_node(r['node_id'], r.get('node_label'))}")
    return (f"{r['dataset']}:{r['label_id']}  {_printable(r['label_text'])} {r['old_status']} "
            f"{_node(r['old_node'], r.get('old_node_label'))} → {r['new_status']} "
            f"{_node(r['new_node'], r.get('new_node_label'))}")


_SIGN = {"added": "+", "removed": "-", "renamed": "~", "moved": ">", "names_added": "+", "names_removed": "-",
         "links_added": "+", "links_removed": "-", "links_changed": "~"}


def format_diff(d: dict, limit: int = 20) -> str:
    """A text rendering of :func:`diff_tables`: counts, then up to ``limit`` rows per kind.

    Parameters
    ----------
    d : dict
        What :func:`diff_tables` returned.
    limit : int, optional
        Rows shown per kind.

    Returns
    -------
    str
        A text rendering of :func:`diff_tables`: counts, then up to ``limit`` rows per
        kind.
    """
    lines = [f"--- {d['a']}", f"+++ {d['b']}"]
    if d["identical"]:
        lines.append("no differences")
        return "\n".join(lines)
    c = d["counts"]
    lines.append("nodes: {added} added, {removed} removed, {renamed} renamed, {moved} moved".format(**c)
                 + f" ({d['depth_changed']} changed depth)")
    lines.append("names: {names_added} added, {names_removed} removed".format(**c))
    lines.append("links: {links_added} added, {links_removed} removed, {links_changed} changed".format(**c))
    for kind in DIFF_KINDS:
        rows = d[kind]
        if not rows:
            continue
        lines.append(f"\n{kind} ({len(rows)}):")
        for r in rows[:limit]:
            lines.append(f"  {_SIGN[kind]} {_fmt_row(kind, r)}")
        if len(rows) > limit:
            lines.append(f"  … {len(rows) - limit} more (--limit or --json for all)")
    return "\n".join(lines)


def fill_diffs(idx: dict, name: str, read: Callable[[str, dict], TreeTables],
               fresh: dict[str, TreeTables] | None = None) -> None:
    """Give every version of ``name`` in the store index ``idx`` the summary of what changed
    from the version before it, where it is missing or compared with another version (a
    version published out of order). A version that cannot be read leaves an error in its
    summary instead: the catalogue must never block publishing.

    Parameters
    ----------
    idx : dict
        A parsed ``index.json``, changed in place.
    name : str
        The taxonomy whose versions are compared.
    read : callable
        ``read(version, index_entry)``: the tables of one version.
    fresh : dict, optional
        Tables already in memory, by version (a version being published).
    """
    entries = sorted_versions(idx["taxonomies"].get(name, {}).get("versions", []))
    cache = dict(fresh or {})

    def tables(entry: dict) -> TreeTables:
        v = entry["version"]
        if v not in cache:
            cache[v] = read(v, entry)
        return cache[v]

    for prev, entry in zip(entries, entries[1:]):
        if (entry.get("diff") or {}).get("from") == prev["version"]:
            continue
        try:
            entry["diff"] = {"from": prev["version"], **diff_summary(tables(prev), tables(entry))}
        except Exception as e:  # noqa: BLE001 - a damaged old version must not block publishing
            entry["diff"] = {"from": prev["version"], "error": f"{type(e).__name__}: {e}"}
        for old in list(cache):  # keep memory to the two versions being compared
            if old not in (prev["version"], entry["version"]):
                del cache[old]
