"""The rank vocabulary of biological trees, and the ancestor of a given rank over a nodes table.

One home for the rank names every layer uses (the biology sources, the label resolver, the
multiple-choice sets, the breakdowns by rank):

:data:`SPINE_RANKS`
    The seven principal Linnean ranks, top down: kingdom, phylum, class, order, family,
    genus, species. Every biology source of the project (Catalogue of Life, iNaturalist,
    iNat21) has them; :class:`~taxoforge.trees.taxonomy.Taxonomy` orders ranks by their
    median depth and uses this order (then :data:`INFRASPECIFIC_RANKS`) to break ties.
:data:`SPECIES_RANKS`, :data:`GENUS_RANKS`
    The ranks that count as a species (a hybrid formula among them) or a genus.
:data:`INFRASPECIFIC_RANKS`
    Ranks below the species: the Catalogue of Life's rank vocabulary (ColDP) and
    iNaturalist's (subspecies, variety, form, infrahybrid). The "hard" level of a
    multiple-choice set draws among these; the label resolver accepts them as trinomials.

:func:`ancestor_at_rank` walks up a *table* (a tree's nodes, or a source's taxa before the
tree is built, which may still hold a cycle) from a few nodes at a time, one join per level,
and :func:`descendants_at_ranks` walks down from a few roots;
:meth:`taxoforge.trees.taxonomy.Taxonomy.ancestor_at_rank` answers the same question over a
built tree's index arrays, for millions of nodes at once.

References
----------
Catalogue of Life Data Package (ColDP), rank vocabulary: https://github.com/CatalogueOfLife/coldp
"""

from __future__ import annotations

import polars as pl

__all__ = ["SPINE_RANKS", "SPECIES_RANKS", "GENUS_RANKS", "INFRASPECIFIC_RANKS", "ancestor_at_rank",
           "descendants_at_ranks"]

#: The principal Linnean ranks, top down.
SPINE_RANKS: tuple[str, ...] = ("kingdom", "phylum", "class", "order", "family", "genus", "species")
#: Ranks that count as a species.
SPECIES_RANKS: tuple[str, ...] = ("species", "hybrid")
#: Ranks that count as a genus.
GENUS_RANKS: tuple[str, ...] = ("genus", "genushybrid")
#: Ranks below the species, the most common first (iNaturalist's four, then the others of ColDP).
INFRASPECIFIC_RANKS: tuple[str, ...] = (
    "subspecies", "variety", "form", "infrahybrid", "infraspecific name", "infrasubspecific name", "subvariety",
    "subform", "forma", "natio", "proles", "lusus", "morph", "aberration", "convariety", "forma specialis",
)

_ANCESTOR_SCHEMA = {"node_id": pl.String, "ancestor_id": pl.String, "ancestor_label": pl.String}


def ancestor_at_rank(nodes: pl.DataFrame, node_ids: pl.Series | list, rank: str, *,
                     max_steps: int = 200) -> pl.DataFrame:
    """The nearest ancestor-or-self of rank ``rank`` of each of ``node_ids``, from a table.

    Parameters
    ----------
    nodes : polars.DataFrame
        ``node_id``, ``parent_id``, ``rank`` and optionally ``label``: a tree's nodes table or a
        source's taxa. A repeated ``node_id`` counts once (its first row).
    node_ids : polars.Series or list of str
        The nodes to start from (repeats are answered once).
    rank : str
        The rank looked for.
    max_steps : int
        The most levels walked: a parent cycle in ``nodes`` stops there, with no ancestor
        for the nodes caught in it.

    Returns
    -------
    polars.DataFrame
        One row per distinct node of ``node_ids``: ``node_id``, ``ancestor_id`` and
        ``ancestor_label`` (both null when no ancestor has that rank or the node is not in
        ``nodes``).

    Notes
    -----
    One join per level over the nodes still walking. For a few nodes the table is first cut
    to the rows of the current level (a few nodes of a 1.4 M-row table cost milliseconds per
    level); when most of the table walks, it is joined whole.

    Examples
    --------
    >>> n = pl.DataFrame({"node_id": ["k", "g", "s"], "parent_id": [None, "k", "g"],
    ...                   "label": ["Plantae", "Morus", "Morus alba"], "rank": ["kingdom", "genus", "species"]})
    >>> ancestor_at_rank(n, ["s", "k", "x"], "kingdom").rows()
    [('s', 'k', 'Plantae'), ('k', 'k', 'Plantae'), ('x', None, None)]
    """
    for c in ("node_id", "parent_id", "rank"):
        if c not in nodes.columns:
            raise ValueError(f"the nodes table is missing column {c!r}; got {nodes.columns}")
    label = pl.col("label").cast(pl.String) if "label" in nodes.columns else pl.lit(None, dtype=pl.String)
    table = nodes.select(pl.col("node_id").cast(pl.String), pl.col("parent_id").cast(pl.String),
                         pl.col("rank").cast(pl.String), label.alias("label"))
    ids = pl.Series("node_id", node_ids, dtype=pl.String).unique(maintain_order=True)
    many = len(ids) * 8 > table.height  # most of the table walks: index it once, else cut it per level
    if many:
        table = table.unique("node_id", keep="first", maintain_order=True)
    walk = pl.DataFrame({"node_id": ids, "_at": ids})
    found: list[pl.DataFrame] = []
    for _ in range(max_steps):
        if not walk.height:
            break
        here = table if many else table.filter(pl.col("node_id").is_in(walk["_at"].unique().implode())).unique(
            "node_id", keep="first", maintain_order=True)
        step = walk.join(here, left_on="_at", right_on="node_id", how="inner")
        found.append(step.filter(pl.col("rank") == rank).select(
            "node_id", pl.col("_at").alias("ancestor_id"), pl.col("label").alias("ancestor_label")))
        walk = step.filter((pl.col("rank").fill_null("") != rank) & pl.col("parent_id").is_not_null()).select(
            "node_id", pl.col("parent_id").alias("_at"))
    got = pl.concat(found) if found else pl.DataFrame(schema=_ANCESTOR_SCHEMA)
    return pl.DataFrame({"node_id": ids}).join(got.cast(_ANCESTOR_SCHEMA), on="node_id", how="left",
                                               maintain_order="left")


def descendants_at_ranks(nodes: pl.DataFrame, roots: pl.Series | list, ranks, *,
                         max_steps: int = 200) -> pl.DataFrame:
    """Every descendant of each of ``roots`` whose rank is one of ``ranks``, from a table.

    Parameters
    ----------
    nodes : polars.DataFrame
        ``node_id``, ``parent_id``, ``rank``: a tree's nodes table.
    roots : polars.Series or list of str
        The nodes to start from (repeats are answered once); a root is not its own descendant.
    ranks : iterable of str
        The ranks kept.
    max_steps : int
        The most levels walked down.

    Returns
    -------
    polars.DataFrame
        ``root`` and ``node_id``, one row per (root, descendant of a kept rank), level by level.

    Examples
    --------
    >>> fam = pl.DataFrame({"node_id": ["f", "g", "s", "t"], "parent_id": [None, "f", "g", "s"],
    ...                               "rank": ["family", "genus", "species", "subspecies"]})
    >>> descendants_at_ranks(fam, ["f"], ["species", "subspecies"]).rows()
    [('f', 's'), ('f', 't')]
    """
    schema = {"root": pl.String, "node_id": pl.String}
    keep = list(ranks)
    table = nodes.select(pl.col("node_id").cast(pl.String), pl.col("parent_id").cast(pl.String),
                         pl.col("rank").cast(pl.String))
    start = pl.Series("root", roots, dtype=pl.String).unique(maintain_order=True)
    frontier = pl.DataFrame({"root": start, "_at": start})
    found: list[pl.DataFrame] = []
    for _ in range(max_steps):
        if not frontier.height:
            break
        kids = table.filter(pl.col("parent_id").is_in(frontier["_at"].unique().implode()))
        step = frontier.join(kids, left_on="_at", right_on="parent_id")
        found.append(step.filter(pl.col("rank").is_in(keep)).select("root", "node_id"))
        frontier = step.select("root", pl.col("node_id").alias("_at"))
    return pl.concat([f.cast(schema) for f in found]) if found else pl.DataFrame(schema=schema)
