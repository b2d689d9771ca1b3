"""Shared last step of the biology sources: ranked taxa + parent edges → :class:`TreeTables`.

Input
    ``edges``  ``(child, parent)`` node ids of accepted taxa (already a forest in the
               Catalogue of Life, iNaturalist and iNat21; :func:`build_tree` still
               validates it, breaks any cycle and roots it).
    ``taxa``   ``node_id``, ``label``, ``rank`` of every taxon.
    ``names``  ``node_id``, ``name``, ``kind``, ``lang``.

Output
    One :class:`~taxoforge.trees.tables.TreeTables` whose ``nodes`` carry depth, label,
    rank and ``is_leaf``; the source's own report rows (dangling parents, dropped rows)
    are appended to the graph→tree report.
"""

from __future__ import annotations

import polars as pl

from taxoforge.trees import integrity

from taxoforge.trees.build import build_tree
from taxoforge.trees.tables import REPORT_KINDS, REPORT_SCHEMA, TreeTables

__all__ = ["ranked_tree_tables", "rank_counts", "report_frame", "ranked_tree_facts", "species_facts"]


def report_frame(kind: str, child_ids: pl.Series | list, parent_ids: pl.Series | list | None = None,
                 detail: str | pl.Series | None = None) -> pl.DataFrame:
    """Report rows of one ``kind`` in :data:`REPORT_SCHEMA`.

    Parameters
    ----------
    kind : str
        One of :data:`taxoforge.trees.tables.REPORT_KINDS`.
    child_ids : polars.Series or list
        The node (or the child of the edge) each row is about.
    parent_ids : polars.Series or list, optional
        The parent of each edge; none for rows about a node.
    detail : str or polars.Series, optional
        The reason, one for all rows or one per row.

    Returns
    -------
    polars.DataFrame
        The rows, in the report table's schema.

    Raises
    ------
    ValueError
        For a kind that is not in ``REPORT_KINDS``.
    """
    if kind not in REPORT_KINDS:
        raise ValueError(f"report kind {kind!r} is not one of taxoforge.trees.tables.REPORT_KINDS: add it there "
                         "(with what it means) and to the README's report table")
    child = pl.Series("child_id", child_ids, dtype=pl.String)
    n = len(child)
    parent = pl.Series("parent_id", parent_ids if parent_ids is not None else [None] * n, dtype=pl.String)
    det = detail if isinstance(detail, pl.Series) else pl.Series("detail", [detail] * n, dtype=pl.String)
    df = pl.DataFrame({"kind": pl.Series([kind] * n, dtype=pl.String), "child_id": child,
                       "parent_id": parent, "detail": det.alias("detail").cast(pl.String)})
    return df.select([pl.col(c).cast(t) if c in df.columns else pl.lit(None, dtype=t).alias(c)
                      for c, t in REPORT_SCHEMA.items()])


def ranked_tree_tables(name: str, *, source: str, edges: pl.DataFrame, taxa: pl.DataFrame,
                       names: pl.DataFrame, report: pl.DataFrame | None = None,
                       root_label: str | None = None, info: dict | None = None) -> TreeTables:
    """Build the tree with :func:`build_tree`; :meth:`TreeTables.from_build` attaches the
    taxa's labels and ranks, the names and the source's report rows.

    Nodes of ``taxa`` without any edge hang under the (synthetic) root. A synthetic root
    ``<source>:root`` gets ``root_label`` (default ``"root"``) as its label and no rank.

    Parameters
    ----------
    name : str
        The name.
    source : str
        The source.
    edges : polars.DataFrame
        The edge table (``child``, ``parent``).
    taxa : polars.DataFrame
        ``node_id``, ``label``, ``rank`` of every taxon.
    names : polars.DataFrame
        The names table.
    report : polars.DataFrame, optional
        The report table.
    root_label : str, optional
        The label of a synthetic root, if one is added.
    info : dict, optional
        Provenance and metadata.

    Returns
    -------
    TreeTables
        The tree with labels, ranks, names and report.
    """
    edge_ids = pl.concat([edges["child"], edges["parent"]]).unique()
    isolated = taxa.filter(~pl.col("node_id").is_in(edge_ids.implode()))["node_id"].to_list()
    built = build_tree(edges.select("child", "parent"), source=source, extra_nodes=isolated)
    taxa = taxa.select("node_id", "label", "rank").unique("node_id", keep="first")
    return TreeTables.from_build(name, built, names, labels=taxa.select("node_id", "label"),
                                 ranks=taxa.select("node_id", "rank"), report=report,
                                 root_label=root_label or "root", info=info)


def rank_counts(nodes: pl.DataFrame) -> dict[str, int]:
    """Number of nodes per rank (``"(none)"`` for null), largest first.

    Parameters
    ----------
    nodes : polars.DataFrame
        The nodes table.

    Returns
    -------
    dict[str, int]
        Number of nodes per rank (``"(none)"`` for null), largest first.
    """
    vc = nodes.group_by(pl.col("rank").fill_null("(none)")).len().sort(["len", "rank"], descending=[True, False])
    return dict(zip(vc["rank"].to_list(), vc["len"].to_list()))


def species_facts(nodes: pl.DataFrame) -> dict[str, object]:
    """The species facts of a ranked tree: ``species`` (species-rank nodes),
    ``species_not_under_genus`` (those whose parent is not at genus rank) and up to 5
    ``species_examples`` of those, each with its parent.

    Parameters
    ----------
    nodes : polars.DataFrame
        The nodes table.

    Returns
    -------
    dict[str, object]
        The three facts.
    """
    par = nodes.select(pl.col("node_id").alias("parent_id"), pl.col("rank").alias("parent_rank"))
    sp = nodes.filter(pl.col("rank") == "species").join(par, on="parent_id", how="left")
    bad_sp = sp.filter(pl.col("parent_rank").fill_null("") != "genus")
    return {"species": sp.height, "species_not_under_genus": bad_sp.height,
            "species_examples": integrity.named_examples(nodes, bad_sp.sort("node_id")["node_id"], limit=5,
                                                         with_parent=True)}


def ranked_tree_facts(nodes: pl.DataFrame) -> dict[str, object]:
    """The structural facts the biology asset checks assert.

    Returns ``roots`` (count), ``orphans`` (nodes whose parent is not a node),
    ``species_not_under_genus`` (species-rank nodes whose parent is not at genus rank),
    ``leaves``, ``max_depth`` and up to 5 examples of each failure (:func:`species_facts`
    for the species).

    Parameters
    ----------
    nodes : polars.DataFrame
        The nodes table.

    Returns
    -------
    dict[str, object]
        The structural facts the biology asset checks assert.
    """
    structure = integrity.tree_integrity(nodes)  # roots and orphans: the shared tree checks
    species = species_facts(nodes)
    return {
        "roots": structure.n_roots,
        "orphans": structure.n_orphans,
        "species": species["species"],
        "species_not_under_genus": species["species_not_under_genus"],
        "leaves": int(nodes["is_leaf"].sum()) if "is_leaf" in nodes.columns else None,
        "max_depth": int(nodes["depth"].max()) if nodes.height else 0,
        "orphan_examples": structure.orphans[:5],
        "species_examples": species["species_examples"],
    }
