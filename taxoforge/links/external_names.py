"""Names from other sources carried onto the nodes of a tree (synonyms and vernacular names).

A tree built from one source — the iNaturalist taxonomy has scientific names only — gains the
synonyms and common names other sources know for the same taxa, so that labels and answers
using them can be linked and mapped:

* names already keyed by the tree's node ids (Wikidata ties its items to iNaturalist taxa by
  P3151, :mod:`taxoforge.sources.wikidata.taxon_names`) go straight to :func:`merge_names`;
* names keyed by the accepted scientific name of another taxonomy (a Catalogue of Life
  release: synonym → accepted name, :func:`taxoforge.sources.coldp.coldp_names`) first go
  through :func:`names_onto_tree`, which resolves every accepted name to a node of the tree.

Resolving an accepted name (:func:`resolve_accepted_names`)
    1. the candidates are the nodes whose scientific name (kind ``scientific``; ``label`` for
       trees without scientific names) has the same
       :func:`~taxoforge.links.scientific_names.scientific_key` (case, punctuation and rank
       markers ignored: "Crepis bakeri subsp. bakeri" = "Crepis bakeri bakeri");
    2. several candidates (homonyms): keep those of the source's rank, when both ranks are known
       and at least one candidate has it;
    3. still several: keep those in the source's kingdom (the label of the kingdom-rank
       ancestor; *Morus* the mulberry vs *Morus* the gannet);
    4. one left → ``resolved``; several → ``ambiguous``; none → ``not_in_tree``. Only names of
       resolved accepted names are carried; the others are counted.

Merging (:func:`merge_names`)
    * a row must name a node of the tree, have a non-empty name (whitespace collapsed) and a
      kind; ``lang`` is null or a lower-case BCP-47 tag (upper case is folded);
    * a synonym whose scientific key equals the node's own scientific name adds nothing;
    * a synonym whose scientific key equals the scientific name of *another* node is dropped:
      the tree accepts that name for another taxon (a split, a homonym), and carrying it would
      make every label naming that taxon ambiguous;
    * names the tree already has (same node, kind, name and lang) are not repeated.
    Every name added carries its ``source`` (the row's own, such as ``wordnet:mallard.n.01``,
    else ``source``) in the names table. The tree's other tables are unchanged.
    ``info["name_sources"][source]`` records what was
    added per kind and what was dropped per reason, with examples; ``info["source_versions"]``
    gains the source's version.

Everything is vectorised in polars; scientific keys are computed once per distinct name, and
the tree's names are first cut down to those sharing a first word with an incoming name, so
carrying names onto the 1.4 M-taxon iNaturalist tree costs seconds, not minutes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from taxoforge.links.scientific_names import first_word_expr, with_scientific_key
from taxoforge.trees.ranks import ancestor_at_rank
from taxoforge.trees.tables import NAMES_SCHEMA, TreeTables

__all__ = [
    "CarriedNames",
    "SYNONYM_KINDS",
    "resolve_accepted_names",
    "names_onto_tree",
    "merge_names",
]

#: Name kinds compared with the tree's scientific names when merged.
SYNONYM_KINDS = ("synonym", "misapplied")
_LANG_PATTERN = r"^[a-z]{2,3}(-[a-z0-9]{1,8})*$"  # taxoforge.sources.wikidata.queries.LANG_RE
_ACCEPTED_COLS = ("accepted_name", "accepted_rank", "accepted_kingdom")
_EXAMPLES = 5


@dataclass
class CarriedNames:
    """Names of another source resolved onto a tree (:func:`names_onto_tree`).

    ``names``: rows for the tree's names table (``node_id``, ``name``, ``kind``, ``lang``);
    ``resolution``: one row per distinct accepted name (``accepted_name``, ``accepted_rank``,
    ``accepted_kingdom``, ``status``, ``node_id``, ``candidates``); ``counts``: accepted names
    per status and names carried per kind.

    Attributes
    ----------
    names : polars.DataFrame
        Rows for the tree's names table (``node_id``, ``name``, ``kind``, ``lang``).
    resolution : polars.DataFrame
        One row per distinct accepted name (``accepted_name``, ``accepted_rank``,
        ``accepted_kingdom``, ``status``, ``node_id``, ``candidates``).
    counts : dict
        Accepted names per status and names carried per kind.
    """

    names: pl.DataFrame
    resolution: pl.DataFrame
    counts: dict = field(default_factory=dict)


def _firsts(df: pl.DataFrame, name_col: str, key_col: str) -> pl.Series:
    """First words of the raw names and of their keys (a key drops a leading rank marker)."""
    return pl.concat([df.select(first_word_expr(name_col).alias("_f")), df.select(first_word_expr(key_col).alias("_f"))]
                     ).to_series().drop_nulls().unique()


def _scientific_keys(tree: TreeTables, firsts: pl.Series | None = None) -> pl.DataFrame:
    """``node_id``, ``name``, ``_key`` of the tree's scientific names (its labels if it has none),
    restricted to names whose first word is in ``firsts`` (lower case) when given."""
    kinds = ["scientific"] if (tree.names["kind"] == "scientific").any() else ["label"]
    sci = tree.names.filter(pl.col("kind").is_in(kinds)).select("node_id", "name")
    if not sci.height:  # a tree with neither: its node labels
        sci = tree.nodes.select("node_id", pl.col("label").alias("name")).drop_nulls()
    if firsts is not None:
        sci = sci.filter(first_word_expr("name").is_in(firsts.unique().implode()))
    return with_scientific_key(sci, "name").filter(pl.col("_key") != "")


def _narrow(cand: pl.DataFrame, source_col: str, target_col: str) -> pl.DataFrame:
    """Within each accepted name with several candidates, keep those whose ``target_col``
    equals ``source_col`` (case-insensitively), if any does; otherwise keep them all."""
    same = (pl.col(source_col).str.to_lowercase() == pl.col(target_col).str.to_lowercase()).fill_null(False)
    cand = cand.with_columns(same.alias("_same"))
    keep = (pl.col("_n") == 1) | pl.col("_same") | ~pl.col("_same").any().over("_acc")
    out = cand.filter(keep).drop("_same")
    return out.with_columns(pl.len().over("_acc").alias("_n"))


def resolve_accepted_names(accepted: pl.DataFrame, tree: TreeTables) -> pl.DataFrame:
    """Resolve accepted scientific names of another taxonomy to nodes of ``tree`` (module
    docstring, "Resolving an accepted name").

    Parameters
    ----------
    accepted : polars.DataFrame
        ``accepted_name``; optional ``accepted_rank`` and ``accepted_kingdom`` (used only to
        tell homonyms apart).
    tree : TreeTables

    Returns
    -------
    polars.DataFrame
        One row per distinct (``accepted_name``, ``accepted_rank``, ``accepted_kingdom``) with
        ``status`` (``resolved`` / ``ambiguous`` / ``not_in_tree``), ``node_id`` (when
        resolved) and ``candidates`` (the nodes left after narrowing).
    """
    if "accepted_name" not in accepted.columns:
        raise ValueError(f"accepted names need column 'accepted_name'; got {accepted.columns}")
    acc = accepted.select([pl.col(c).cast(pl.String) if c in accepted.columns else pl.lit(None, dtype=pl.String)
                           .alias(c) for c in _ACCEPTED_COLS]).unique(maintain_order=True)
    acc = with_scientific_key(acc.with_row_index("_acc"), "accepted_name", "_akey")
    sci = _scientific_keys(tree, _firsts(acc, "accepted_name", "_akey")).select("node_id", pl.col("_key").alias("_akey")).unique()
    ranks = tree.nodes.select("node_id", pl.col("rank").alias("_rank"))
    cand = acc.select("_acc", "_akey", "accepted_rank", "accepted_kingdom").join(sci, on="_akey").join(
        ranks, on="node_id", how="left").with_columns(pl.len().over("_acc").alias("_n"))
    cand = _narrow(cand, "accepted_rank", "_rank")
    several = cand.filter(pl.col("_n") > 1)
    if several.height:
        kingdoms = ancestor_at_rank(tree.nodes, several["node_id"], "kingdom").rename(
            {"ancestor_label": "_kingdom"})
        cand = cand.join(kingdoms, on="node_id", how="left")
        cand = _narrow(cand, "accepted_kingdom", "_kingdom")
    per = cand.group_by("_acc").agg(pl.col("node_id").sort().alias("candidates"))
    out = acc.join(per, on="_acc", how="left").sort("_acc")
    n = pl.col("candidates").list.len().fill_null(0)
    return out.select(
        *_ACCEPTED_COLS,
        pl.when(n == 1).then(pl.lit("resolved")).when(n > 1).then(pl.lit("ambiguous"))
        .otherwise(pl.lit("not_in_tree")).alias("status"),
        pl.when(n == 1).then(pl.col("candidates").list.first()).alias("node_id"),
        pl.col("candidates").fill_null(pl.lit([], dtype=pl.List(pl.String))),
    )


def names_onto_tree(keyed: pl.DataFrame, tree: TreeTables, *,
                    kinds: tuple[str, ...] = ("synonym", "vernacular")) -> CarriedNames:
    """Names keyed by accepted scientific name → rows of ``tree``'s names table.

    ``keyed``: ``accepted_name``, ``name``, ``kind``, ``lang`` and optionally
    ``accepted_rank``, ``accepted_kingdom`` (e.g. :func:`taxoforge.sources.coldp.coldp_names`).
    Only rows of ``kinds`` are carried. The rows still go through :func:`merge_names`, which
    applies the merge rules; this function only resolves the accepted names.

    Parameters
    ----------
    keyed : polars.DataFrame
        Names keyed by their accepted taxon: ``accepted_name``, ``accepted_rank``,
        ``accepted_kingdom``, ``name``, ``kind``, ``lang`` (e.g.
        :func:`taxoforge.sources.coldp.coldp_names`).
    tree : TreeTables
        The tree.
    kinds : tuple[str, ...], optional
        The kinds of names to carry (``synonym``, ``vernacular``, ``misapplied``).

    Returns
    -------
    CarriedNames
        Names keyed by accepted scientific name → rows of ``tree``'s names table.
    """
    missing = [c for c in ("accepted_name", "name", "kind") if c not in keyed.columns]
    if missing:
        raise ValueError(f"names to carry need column(s) {missing}; got {keyed.columns}")
    k = keyed.filter(pl.col("kind").is_in(list(kinds)))
    k = k.select(*(pl.col(c).cast(pl.String) if c in k.columns else pl.lit(None, dtype=pl.String).alias(c)
                   for c in (*_ACCEPTED_COLS, "name", "kind", "lang")))
    res = resolve_accepted_names(k, tree)
    placed = k.join(res.filter(pl.col("status") == "resolved").select(*_ACCEPTED_COLS, "node_id"),
                    on=list(_ACCEPTED_COLS), how="inner", nulls_equal=True)
    names = placed.select("node_id", "name", "kind", "lang").unique(maintain_order=True)
    by_status = dict(res.group_by("status").len().iter_rows())
    counts = {"accepted_names": res.height,
              **{f"accepted_{s}": int(by_status.get(s, 0)) for s in ("resolved", "ambiguous", "not_in_tree")},
              "names_in": k.height, "names_placed": names.height,
              "placed_by_kind": {kd: int(n) for kd, n in names.group_by("kind").len().sort("kind").iter_rows()}}
    return CarriedNames(names=names, resolution=res, counts=counts)


def merge_names(tree: TreeTables, names: pl.DataFrame, *, source: str, source_version: dict | None = None,
                name: str | None = None) -> TreeTables:
    """``tree`` with ``names`` (``node_id``, ``name``, ``kind``, ``lang``, optionally ``source``)
    added to its names table under the merge rules of the module docstring; other tables unchanged.

    ``source`` names the origin in ``info["name_sources"]`` and ``info["source_versions"]``
    (with ``source_version``); ``name`` renames the tree (default: unchanged).

    Parameters
    ----------
    tree : TreeTables
        The tree.
    names : polars.DataFrame
        The names table.
    source : str
        The source: its key in ``info["source_versions"]`` and ``info["name_sources"]``, and the
        ``source`` of every added name whose row gives none.
    source_version : dict, optional
        What identifies the release the names come from, recorded in ``info``.
    name : str, optional
        The name.

    Returns
    -------
    TreeTables
        ``tree`` with ``names`` (``node_id``, ``name``, ``kind``, ``lang``) added to its
        names table under the merge rules of the module docstring; other tables
        unchanged.
    """
    missing = [c for c in ("node_id", "name", "kind") if c not in names.columns]
    if missing:
        raise ValueError(f"names from {source}: missing column(s) {missing}; got {names.columns}")
    incoming = names.select(
        pl.col("node_id").cast(pl.String),
        pl.col("name").cast(pl.String).str.replace_all(r"\s+", " ").str.strip_chars().alias("name"),
        pl.col("kind").cast(pl.String),
        (pl.col("lang").cast(pl.String).str.strip_chars().str.to_lowercase() if "lang" in names.columns
         else pl.lit(None, dtype=pl.String)).alias("lang"),
        (pl.col("source").cast(pl.String).fill_null(source) if "source" in names.columns
         else pl.lit(source, dtype=pl.String)).alias("source"),
    ).with_row_index("_row")
    reasons = (
        pl.when(pl.col("name").is_null() | (pl.col("name") == "")).then(pl.lit("empty_name"))
        .when(pl.col("kind").is_null() | (pl.col("kind") == "")).then(pl.lit("no_kind"))
        .when(pl.col("node_id").is_null() | ~pl.col("node_id").is_in(tree.nodes["node_id"].implode()))
        .then(pl.lit("unknown_node"))
        .when(pl.col("lang").is_not_null() & ~pl.col("lang").str.contains(_LANG_PATTERN)).then(pl.lit("bad_lang"))
    )
    incoming = incoming.with_columns(reasons.alias("_drop"))

    syn = incoming.filter(pl.col("_drop").is_null() & pl.col("kind").is_in(list(SYNONYM_KINDS)))
    if syn.height:
        syn = with_scientific_key(syn.select("_row", "node_id", "name"), "name", "_key")
        sci = _scientific_keys(tree, _firsts(syn, "name", "_key"))
        hits = syn.join(sci.select(pl.col("node_id").alias("_holder"), "_key"), on="_key")
        own = hits.filter(pl.col("_holder") == pl.col("node_id")).select("_row").unique()
        other = hits.filter(pl.col("_holder") != pl.col("node_id")).join(own, on="_row", how="anti")
        other_rows = other.group_by("_row").agg(pl.col("_holder").sort().first())
        incoming = (incoming.join(own.with_columns(pl.lit("same_as_scientific_name").alias("_own")), on="_row",
                                  how="left")
                    .join(other_rows.with_columns(pl.lit("accepted_elsewhere").alias("_other")), on="_row", how="left")
                    .with_columns(pl.coalesce("_drop", "_own", "_other").alias("_drop")))
    else:
        incoming = incoming.with_columns(pl.lit(None, dtype=pl.String).alias("_holder"))

    keep = incoming.filter(pl.col("_drop").is_null())
    keep = keep.sort("_row").with_columns(
        pl.struct("node_id", "kind", "name", "lang").is_first_distinct().not_().alias("_dup"))
    existing = tree.names.select("node_id", "kind", "name", "lang").with_columns(pl.lit(True).alias("_have"))
    keep = keep.join(existing, on=["node_id", "kind", "name", "lang"], how="left", nulls_equal=True)
    dup = keep.filter(pl.col("_dup") | pl.col("_have").fill_null(False))
    added = keep.filter(~(pl.col("_dup") | pl.col("_have").fill_null(False)))

    dropped = pl.concat([incoming.filter(pl.col("_drop").is_not_null()).select("_row", "node_id", "name", "kind",
                                                                               "_drop", "_holder"),
                         dup.select("_row", "node_id", "name", "kind", pl.lit("duplicate").alias("_drop"),
                                    pl.lit(None, dtype=pl.String).alias("_holder"))], how="vertical_relaxed")
    summary = {
        "rows_in": incoming.height,
        "added": {k: int(n) for k, n in added.group_by("kind").len().sort("kind").iter_rows()},
        "dropped": {r: int(n) for r, n in dropped.group_by("_drop").len().sort("_drop").iter_rows()},
        "examples_dropped": {
            r: [f"{row['node_id']} {row['kind']} {row['name']!r}" + (f" (accepted for {row['_holder']})"
                                                                      if row["_holder"] else "")
                for row in g.sort("_row").head(_EXAMPLES).iter_rows(named=True)]
            for (r,), g in dropped.group_by("_drop", maintain_order=True)},
    }
    info = dict(tree.info)
    info["name_sources"] = {**info.get("name_sources", {}), source: summary}
    if source_version is not None:
        info["source_versions"] = {**info.get("source_versions", {}), source: source_version}
    new_names = pl.concat([tree.names, added.select(list(NAMES_SCHEMA)).cast(NAMES_SCHEMA)])
    return TreeTables(name=name or tree.name, nodes=tree.nodes, names=new_names, links=tree.links,
                      report=tree.report, info=info)
