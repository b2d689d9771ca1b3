"""The smallest subtree of a taxonomy that holds a given set of nodes (and the root)."""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from taxoforge.trees.tables import TreeTables, with_is_leaf

__all__ = ["spanning_subtree", "INHERITED"]

#: The provenance a subtree keeps from the tree it was cut from.
INHERITED = ("seed", "cycle_policy", "source_versions")


def spanning_subtree(tree: TreeTables, keep: Iterable[str], name: str,
                     *, links: pl.DataFrame | None = None, extra_names: pl.DataFrame | None = None,
                     info: dict | None = None) -> TreeTables:
    """The nodes of ``keep``, all their ancestors, and nothing else, with depths unchanged.

    ``names`` and ``report`` rows are restricted to the kept nodes; ``extra_names`` (e.g. a
    dataset's own class names) are appended; ``is_leaf`` is recomputed for the subtree.
    ``info``: the parent tree's provenance (``seed``, ``cycle_policy``,
    ``source_versions``; ``parent_snapshot`` when it was loaded from a snapshot) and
    ``parent_taxonomy``, updated with ``info``.

    Parameters
    ----------
    tree : TreeTables
        The tree.
    keep : Iterable[str]
        The node ids to keep (with all their ancestors).
    name : str
        The name.
    links : polars.DataFrame, optional
        The links table.
    extra_names : polars.DataFrame, optional
        Names to add to the subtree's names table (e.g. a dataset's own class names).
    info : dict, optional
        Provenance and metadata.

    Returns
    -------
    TreeTables
        The nodes of ``keep``, all their ancestors, and nothing else, with depths
        unchanged.
    """
    tax = tree.taxonomy()
    sub = tax.subtree(sorted(set(keep)))
    ids = sub.select("node_id")
    nodes = with_is_leaf(tree.nodes.join(ids, on="node_id", how="semi"))
    names = tree.names.join(ids, on="node_id", how="semi")
    if extra_names is not None and extra_names.height:
        extra = extra_names.join(ids, on="node_id", how="semi")
        extra = extra.select([pl.col(c) if c in extra.columns else pl.lit(None, dtype=t).alias(c)
                              for c, t in names.schema.items()])  # a column it lacks (source) is null
        names = pl.concat([names, extra.cast(names.schema)]).unique(maintain_order=True)
    report = tree.report.join(ids.rename({"node_id": "child_id"}), on="child_id", how="semi")
    inherited = {k: tree.info[k] for k in INHERITED if k in tree.info}
    if tree.info.get("snapshot"):
        inherited["parent_snapshot"] = tree.info["snapshot"]
    meta = {"parent_taxonomy": tree.name, **inherited, **(info or {})}
    return TreeTables(name=name, nodes=nodes, names=names, links=links, report=report, info=meta)
