"""What changed from the version before, for the browser: on every node, up the tree, and on one page.

Per node of the new version (:func:`node_changes`, the ``diff`` field of its record):

* its own change: ``added``, ``old_label`` (renamed), ``old_parent`` (moved), names and dataset
  labels added, removed or moved to it (``na``, ``nr``, ``la``, ``lr``, ``lc``);
* ``below``: how many node changes (added, removed, moved, renamed) lie in its subtree, its own
  left out — so *Panthera* says "1 change below" when one of its species is new, and so do
  *Felidae*, *Carnivora* … up to the root;
* ``kin`` / ``kout``: the children that came in (added, or moved here from another parent) and
  went out (removed, or moved under another parent), at most :data:`LISTED` of each, with
  ``kin_n`` / ``kout_n`` the counts.

Counting up the tree
    Each change is an event at a node of the new tree: a node added, renamed or moved in at
    itself (its *own* change); a node removed, or moved out, at the nearest node of its old
    path to the root that the new version still has (*below* it). A node's count is the sum
    of the events in its pre-order range (one ``cumsum``), less its own. A move is one change
    but two events (where it went, where it left): a ``-1`` at the lowest common ancestor of
    the two places counts it once above both. The ancestors are found by the pre-order ranges
    (``a`` is an ancestor of ``b`` when ``a <= b < a + size[a]``), walking up one level at a
    time for all moves at once.

The changes page (:func:`changes_pages`, ``browse/changes.html``) lists every added, removed,
moved and renamed node with its label and the labels of its old and new parents, each linked to
the browser (``index.html#<id>``), and counts the names and dataset labels that changed (``taxoforge
diff`` lists those). A page holds at most :data:`PAGE_ROWS` rows; more go on ``changes-2.html`` …,
linked from each page. It is static HTML: no script, readable with any client.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

__all__ = ["node_changes", "changes_pages", "LISTED", "PAGE_ROWS", "CHANGES_PAGE", "NODE_CHANGE_KINDS"]

#: children listed per node as moved in or out (the page lists them all)
LISTED = 20
#: rows of one changes page
PAGE_ROWS = 20_000
CHANGES_PAGE = "changes.html"
#: the node changes a page lists and the counts up the tree count
NODE_CHANGE_KINDS = ("added", "removed", "moved", "renamed")


def _ords(frame: pl.DataFrame, col: str, ord_of: pl.DataFrame) -> np.ndarray:
    """The new version's ordinal of each id of ``frame[col]`` (-1 for an id it does not have)."""
    if not frame.height:
        return np.zeros(0, dtype=np.int64)
    got = frame.select(pl.col(col).alias("node_id")).join(ord_of, on="node_id", how="left", maintain_order="left")
    return got["_o"].fill_null(-1).to_numpy().astype(np.int64)


def _anchors(old_parents: list, ord_of: pl.DataFrame, previous_nodes: pl.DataFrame | None) -> np.ndarray:
    """For each old parent id: the ordinal of the nearest node of its old path to the root (itself
    first) that the new version has; -1 when none."""
    if not old_parents:
        return np.zeros(0, dtype=np.int64)
    known = dict(zip(ord_of["node_id"].to_list(), ord_of["_o"].to_list())) if len(old_parents) > 64 else None
    lookup = (lambda i: known.get(i, -1)) if known is not None else None
    if lookup is None:
        want = pl.DataFrame({"node_id": pl.Series(list({p for p in old_parents if p is not None}), dtype=pl.String)})
        hit = dict(want.join(ord_of, on="node_id").iter_rows())
        lookup = lambda i: hit.get(i, -1)  # noqa: E731
    up: dict[str, str | None] = {}
    if previous_nodes is not None and any(p is not None and lookup(p) < 0 for p in old_parents):
        up = dict(previous_nodes.select("node_id", "parent_id").iter_rows())
        if known is None:  # the chain may pass through any old node
            known = dict(zip(ord_of["node_id"].to_list(), ord_of["_o"].to_list()))
            lookup = lambda i: known.get(i, -1)  # noqa: E731
    out = np.full(len(old_parents), -1, dtype=np.int64)
    for k, p in enumerate(old_parents):
        steps = 0
        while p is not None and lookup(p) < 0 and steps < 10_000:
            p, steps = up.get(p), steps + 1
        out[k] = lookup(p) if p is not None else -1
    return out


def _lca(a: np.ndarray, b: np.ndarray, parent: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Lowest common ancestors of pairs of ordinals, by pre-order ranges (module doc)."""
    cur = a.copy()
    while True:
        below = ~((cur <= b) & (b < cur + size[cur]))
        if not below.any():
            return cur
        up = parent[cur[below]]
        if np.array_equal(up, cur[below]):  # at a root that holds neither: several roots
            return cur
        cur[below] = up


def node_changes(frames: dict[str, pl.DataFrame], ord_of: pl.DataFrame, parent: np.ndarray, size: np.ndarray,
                 previous_nodes: pl.DataFrame | None, previous_version: str | None) -> tuple[list, dict, dict]:
    """Per node of the new version, what changed from the previous one (module doc); the
    removed nodes; the summary.

    Parameters
    ----------
    frames : dict of str to polars.DataFrame
        :func:`taxoforge.snapshots.diff.diff_frames` from the previous version to this one.
    ord_of : polars.DataFrame
        ``node_id`` → ``_o``, the node's pre-order ordinal in this version.
    parent : numpy.ndarray
        The parent's ordinal of each ordinal (-1 for a root).
    size : numpy.ndarray
        The subtree size of each ordinal.
    previous_nodes : polars.DataFrame, optional
        The previous version's nodes (``node_id``, ``parent_id``): where a removed node's
        parent was removed too, its nearest surviving ancestor takes the change.
    previous_version : str, optional
        That version's id.

    Returns
    -------
    tuple of (list, dict, dict)
        The change of each ordinal (``None``: nothing); removed id → ``[label, old parent id,
        old parent label]``; the summary (``from``, ``counts``, ``page``).
    """
    n = len(parent)
    diff_by: list = [None] * n

    def put(o: int, key: str, value) -> None:
        if key in ("na", "la") and diff_by[o] is not None and diff_by[o].get("added"):
            return  # a new node's names and labels are all new: said once, by "added"
        change = diff_by[o] if diff_by[o] is not None else {}
        diff_by[o] = change
        if key in ("na", "nr", "la", "lr", "lc", "kin", "kout"):  # lists
            lst = change.setdefault(key, [])
            if key in ("kin", "kout"):
                change[key + "_n"] = change.get(key + "_n", 0) + 1
                if len(lst) >= LISTED:
                    return
            lst.append(value)
        else:
            change[key] = value

    def rows(frame: str, col: str = "node_id"):
        df = frames[frame]
        if not df.height:
            return
        yield from df.join(ord_of.rename({"node_id": col}), on=col, how="inner").iter_rows(named=True)

    for r in rows("added"):
        put(r["_o"], "added", 1)
    for r in rows("renamed"):
        put(r["_o"], "old_label", r["old_label"])
    for r in rows("moved"):
        put(r["_o"], "old_parent", [r["old_parent"], r.get("old_parent_label")])
    for r in rows("names_added"):
        put(r["_o"], "na", [r["name"], r["kind"], r["lang"]])
    for r in rows("names_removed"):
        put(r["_o"], "nr", [r["name"], r["kind"], r["lang"]])
    for r in rows("links_added"):
        put(r["_o"], "la", [r["dataset"], r["label_id"], r["label_text"]])
    for r in rows("links_removed"):
        put(r["_o"], "lr", [r["dataset"], r["label_id"], r["label_text"]])
    for r in rows("links_changed", "new_node"):
        put(r["_o"], "lc", [r["dataset"], r["label_id"], r["label_text"], r["old_node"], r.get("old_node_label")])

    # children in and out, at the parents the new version has
    for r in rows("added", "parent_id"):
        put(r["_o"], "kin", [r["node_id"], r["label"], None, None])
    for r in rows("moved", "new_parent"):
        put(r["_o"], "kin", [r["node_id"], r["label"], r["old_parent"], r.get("old_parent_label")])
    for r in rows("removed", "parent_id"):
        put(r["_o"], "kout", [r["node_id"], r["label"], None, None])
    for r in rows("moved", "old_parent"):
        put(r["_o"], "kout", [r["node_id"], r["label"], r["new_parent"], r.get("new_parent_label")])

    # counts up the tree (module doc)
    own = np.zeros(n + 1, dtype=np.int64)
    below = np.zeros(n + 1, dtype=np.int64)
    for kind in ("added", "renamed", "moved"):
        o = _ords(frames[kind], "node_id", ord_of)
        np.add.at(own, o[o >= 0], 1)
    gone = frames["removed"]
    if gone.height:
        a = _anchors(gone["parent_id"].to_list(), ord_of, previous_nodes)
        np.add.at(below, a[a >= 0], 1)
    moved = frames["moved"]
    if moved.height:
        new_pos = _ords(moved, "node_id", ord_of)
        left = _anchors(moved["old_parent"].to_list(), ord_of, previous_nodes)
        ok = (new_pos >= 0) & (left >= 0)
        np.add.at(below, left[ok], 1)
        np.add.at(below, _lca(new_pos[ok], left[ok], np.where(parent >= 0, parent, np.arange(n)), size), -1)
    prefix = np.concatenate(([0], np.cumsum(own[:n] + below[:n])))
    ords = np.arange(n)
    counts = prefix[ords + size] - prefix[ords] - own[:n]
    for o in np.flatnonzero(counts > 0).tolist():
        put(o, "below", int(counts[o]))

    removed = {r["node_id"]: [r["label"], r["parent_id"], r.get("parent_label")]
               for r in frames["removed"].iter_rows(named=True)}
    summary = {k: v.height for k, v in frames.items()}
    node_rows = sum(summary[k] for k in NODE_CHANGE_KINDS)
    pages = max(1, math.ceil(node_rows / PAGE_ROWS))
    return diff_by, removed, {"from": previous_version, "counts": summary, "page": CHANGES_PAGE, "pages": pages}


_TEMPLATE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src '{{ style_hash }}'; base-uri 'none'; form-action 'none'">
<title>Changes of {{ ref }}{% if pages > 1 %} ({{ page }}/{{ pages }}){% endif %}</title>
<style>{{ style|safe }}</style>
</head>
<body>
<h1>Changes of {{ taxonomy }} <code>@{{ version }}</code></h1>
<p class="muted">Compared with <code>{{ previous }}</code>: {{ summary }}.
<a href="index.html">Browse this version</a> · <a href="../../../index.html">all snapshots</a></p>
{% if other %}<p class="muted">Names: +{{ other.names_added }} −{{ other.names_removed }}; dataset labels: +{{ other.links_added }} −{{ other.links_removed }}, {{ other.links_changed }} changed
(<code>taxoforge diff {{ taxonomy }}@{{ previous }} {{ ref }}</code> lists them).</p>{% endif %}
{% if pages > 1 %}<nav class="pages">Page {% for p in range(1, pages + 1) %}{% if p == page %}<strong>{{ p }}</strong>{% else %}<a href="{{ page_name(p) }}">{{ p }}</a>{% endif %} {% endfor %}</nav>{% endif %}
{% for kind, title, rows in sections %}
<section id="{{ kind }}"><h2>{{ title }} <span class="muted">({{ totals[kind] }})</span></h2>
{% if rows %}<table><thead><tr><th>node</th><th>rank</th>{% if kind == "renamed" %}<th>was</th>{% elif kind == "moved" %}<th>from under</th><th>now under</th>{% elif kind == "removed" %}<th>was under</th>{% else %}<th>under</th>{% endif %}</tr></thead>
<tbody>{% for r in rows %}<tr><td>{% if kind == "removed" %}{{ r.label }}{% else %}<a href="index.html#{{ r.id|urlencode }}">{{ r.label }}</a>{% endif %} <code>{{ r.id }}</code></td><td>{{ r.rank }}</td>
{% if kind == "renamed" %}<td>{{ r.old }}</td>{% elif kind == "moved" %}<td>{{ r.old }}</td><td>{{ r.new }}</td>{% else %}<td>{{ r.parent }}</td>{% endif %}</tr>
{% endfor %}</tbody></table>{% elif totals[kind] %}<p class="muted">on another page</p>{% else %}<p class="muted">none</p>{% endif %}
</section>
{% endfor %}
</body>
</html>
"""

_STYLE = ("body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;color:#1d232a}"
          "h1{font-size:1.4rem}h2{font-size:1.15rem;margin-top:1.8rem}.muted{color:#5b6670}"
          "code{font:13px ui-monospace,monospace;color:#5b6670}table{border-collapse:collapse;width:100%}"
          "th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #dde3e8;vertical-align:top}"
          "th{background:#f3f6f8}.pages a,.pages strong{margin-right:.4rem}")


def _label(label, node_id) -> str:
    return str(label) if label not in (None, "") else str(node_id or "")


def changes_pages(frames: dict[str, pl.DataFrame], *, taxonomy: str, version: str, previous: str,
                  ranks: dict[str, str | None], old_ranks: dict[str, str | None] | None = None) -> dict[str, bytes]:
    """The changes pages of one version (module doc): ``changes.html``, then ``changes-2.html`` …

    Parameters
    ----------
    frames : dict of str to polars.DataFrame
        :func:`taxoforge.snapshots.diff.diff_frames` from ``previous`` to this version.
    taxonomy, version, previous : str
        The taxonomy, this version and the version compared with.
    ranks : dict
        Node id → rank in this version (only the changed nodes are looked up).
    old_ranks : dict, optional
        Node id → rank in the previous version (for removed nodes).

    Returns
    -------
    dict of str to bytes
        File name → HTML.
    """
    import base64
    import hashlib

    import jinja2

    from taxoforge.snapshots.diff import summary_text

    counts = {k: v.height for k, v in frames.items()}
    ranks_old = old_ranks or {}
    rows: list[tuple[str, dict]] = []
    for r in frames["added"].sort("label", "node_id", nulls_last=True).iter_rows(named=True):
        rows.append(("added", {"id": r["node_id"], "label": _label(r["label"], r["node_id"]),
                               "rank": ranks.get(r["node_id"]) or "", "parent": _label(r.get("parent_label"), r["parent_id"])}))
    for r in frames["removed"].sort("label", "node_id", nulls_last=True).iter_rows(named=True):
        rows.append(("removed", {"id": r["node_id"], "label": _label(r["label"], r["node_id"]),
                                 "rank": ranks_old.get(r["node_id"]) or "",
                                 "parent": _label(r.get("parent_label"), r["parent_id"])}))
    for r in frames["moved"].sort("label", "node_id", nulls_last=True).iter_rows(named=True):
        rows.append(("moved", {"id": r["node_id"], "label": _label(r["label"], r["node_id"]),
                               "rank": ranks.get(r["node_id"]) or "",
                               "old": _label(r.get("old_parent_label"), r["old_parent"]),
                               "new": _label(r.get("new_parent_label"), r["new_parent"])}))
    for r in frames["renamed"].sort("new_label", "node_id", nulls_last=True).iter_rows(named=True):
        rows.append(("renamed", {"id": r["node_id"], "label": _label(r["new_label"], r["node_id"]),
                                 "rank": ranks.get(r["node_id"]) or "", "old": _label(r["old_label"], "")}))
    pages = max(1, math.ceil(len(rows) / PAGE_ROWS))
    titles = {"added": "Added", "removed": "Removed", "moved": "Moved", "renamed": "Renamed"}
    summary = summary_text({"counts": counts, "identical": not any(counts.values())})
    style_hash = "sha256-" + base64.b64encode(hashlib.sha256(_STYLE.encode()).digest()).decode()
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    template = env.from_string(_TEMPLATE)

    def page_name(p: int) -> str:
        return CHANGES_PAGE if p == 1 else f"changes-{p}.html"

    out = {}
    for p in range(1, pages + 1):
        part = rows[(p - 1) * PAGE_ROWS:p * PAGE_ROWS]
        sections = [(k, titles[k], [r for kind, r in part if kind == k]) for k in NODE_CHANGE_KINDS]
        out[page_name(p)] = template.render(
            ref=f"{taxonomy}@{version}", taxonomy=taxonomy, version=version, previous=previous, summary=summary,
            other=counts, pages=pages, page=p, page_name=page_name, sections=sections, totals=counts,
            style=_STYLE, style_hash=style_hash).encode("utf-8")
    return out
