"""The crosswalk's name links: the taxa of one tree found in another by their scientific names,
with the one label resolver, and how those links agree with the identifier links
(docs/method.md#a-crosswalk-between-taxonomies).

Algorithm (:func:`name_links`)
    Every ranked node of tree A (its label, a scientific name) is a label resolved against
    tree B by :func:`taxoforge.links.resolve.resolve_labels`, with the rules that name the
    *same* taxon only: exact and normalised name, synonym (B's own synonyms, e.g. merged from
    a ColDP release or Wikidata), epithet variant, genus transfer — no node ids (the two
    trees' ids mean different things), no common names, and no partial ground truth (a genus
    is not its species). A link whose two ranks are both known and differ is dropped and
    counted (``rank_mismatch``): a genus and a subgenus may share a name. Ambiguous labels link
    nothing and are counted with examples.

    Confidence by method (:data:`NAME_CONFIDENCE`): an exact name 0.95, a normalised one 0.9, a
    synonym 0.8, an epithet variant 0.7, a genus transfer 0.5 (a heuristic: the README's
    *Vermivora pinus*).

Agreement (:func:`link_agreement`)
    For every id of A that has both a name link and an identifier link to B (through a
    Wikidata item), the two agree when the name-linked id is among the identifier-linked ones;
    each disagreement is listed with both sides.

A release of several trees (:func:`crosswalk_of_trees`)
    The identifier claims, plus the name links of every tree to the hub tree (the iNaturalist
    tree: Wikidata's P3151 ties items to it), the agreement of each tree's name links with its
    identifier links, and the ``not_in_tree`` conflicts against every tree given. The report's
    ``coverage`` says, per tree, how many of its species reach a Wikidata item and each other
    source (:func:`species_coverage`): the iNat2021 species with a QID and a Catalogue of Life id.
"""

from __future__ import annotations

import polars as pl

from collections.abc import Iterable, Mapping

from taxoforge.links.crosswalk import CROSSWALK_SCHEMA, NODE_PREFIXES, Crosswalk, build_crosswalk, empty_crosswalk, \
    translate
from taxoforge.links.resolve import resolve_labels
from taxoforge.trees.tables import TreeTables

__all__ = ["NAME_CONFIDENCE", "NameLinks", "name_links", "link_agreement", "strip_prefix", "crosswalk_of_trees",
           "species_coverage", "COVERAGE_TARGETS"]

#: The sources whose coverage a release reports for each tree's species.
COVERAGE_TARGETS = ("wikidata", "col", "gbif", "ncbi")

#: Confidence of a name link by the resolver's method.
NAME_CONFIDENCE = {"exact": 0.95, "normalised": 0.9, "synonym": 0.8, "epithet_variant": 0.7, "genus_transfer": 0.5}


class NameLinks:
    """What :func:`name_links` returns.

    Attributes
    ----------
    links : polars.DataFrame
        The crosswalk rows (:data:`~taxoforge.links.crosswalk.CROSSWALK_SCHEMA`).
    report : dict
        ``labels``, ``linked``, ``by_method``, ``ambiguous`` and ``unmatched`` (counts),
        ``rank_mismatch`` (count) and ``examples`` (per kind, up to five).
    """

    def __init__(self, links: pl.DataFrame, report: dict) -> None:
        self.links, self.report = links, report


def strip_prefix(node_ids: pl.Expr, source: str) -> pl.Expr:
    """The ids of ``source`` that node ids are (``inat:55387`` → ``55387``).

    Parameters
    ----------
    node_ids : polars.Expr
        Node ids of the source's taxonomy.
    source : str
        A source of :data:`~taxoforge.links.crosswalk.NODE_PREFIXES`.

    Returns
    -------
    polars.Expr
        The ids without the prefix (null for a node id of another prefix).
    """
    prefix = NODE_PREFIXES[source] + ":"
    return pl.when(node_ids.str.starts_with(prefix)).then(node_ids.str.slice(len(prefix)))


def name_links(tree_a: TreeTables, tree_b: TreeTables, source_a: str, source_b: str) -> NameLinks:
    """Link the ranked nodes of ``tree_a`` to nodes of ``tree_b`` by name (module docstring).

    Parameters
    ----------
    tree_a, tree_b : TreeTables
        The trees (resolve the smaller one's names in the larger one: every rule is a join,
        but the labels are the smaller side).
    source_a, source_b : str
        Their sources (keys of :data:`~taxoforge.links.crosswalk.NODE_PREFIXES`).

    Returns
    -------
    NameLinks
        The crosswalk rows ``(source_a, id_a)`` — ``(source_b, id_b)`` and the report.

    Examples
    --------
    >>> def tree(prefix, rows):
    ...     nodes = pl.DataFrame(rows, schema=["node_id", "parent_id", "label", "rank"], orient="row")
    ...     names = nodes.select("node_id", pl.col("label").alias("name"), pl.lit("scientific").alias("kind"))
    ...     return TreeTables(prefix, nodes, names)
    >>> a = tree("col", [("col:1", None, "Esocidae", "family"), ("col:2", "col:1", "Esox lucius", "species")])
    >>> b = tree("inat", [("inat:9", None, "Esocidae", "family"), ("inat:55387", "inat:9", "Esox lucius", "species")])
    >>> name_links(a, b, "col", "inaturalist").links.select("id_a", "id_b", "method").rows()
    [('1', '9', 'name:exact'), ('2', '55387', 'name:exact')]
    """
    nodes_a = tree_a.nodes.filter(pl.col("rank").is_not_null() & pl.col("label").is_not_null())
    labels = nodes_a.select(pl.lit(source_a).alias("dataset"), strip_prefix(pl.col("node_id"), source_a).alias("label_id"),
                            pl.col("label").alias("label_text")).drop_nulls("label_id").unique("label_id")
    report: dict = {"labels": labels.height, "examples": {}}
    if not labels.height:
        report.update(linked=0, by_method={}, ambiguous=0, unmatched=0, rank_mismatch=0)
        return NameLinks(empty_crosswalk(), report)
    res = resolve_labels(labels, tree_b.names, tree_b.nodes, by_id=False, partial=False)
    res = res.filter(~pl.col("method").is_in(["vernacular"]) | (pl.col("status") != "linked"))
    ranks_a = nodes_a.select(strip_prefix(pl.col("node_id"), source_a).alias("label_id"), pl.col("rank").alias("rank_a"))
    ranks_b = tree_b.nodes.select("node_id", pl.col("rank").alias("rank_b"))
    linked = (res.filter(pl.col("status") == "linked").join(ranks_a, on="label_id", how="left")
              .join(ranks_b, on="node_id", how="left"))
    mismatch = linked.filter(pl.col("rank_a").is_not_null() & pl.col("rank_b").is_not_null()
                             & (pl.col("rank_a") != pl.col("rank_b")))
    linked = linked.join(mismatch.select("label_id"), on="label_id", how="anti")
    out = linked.select(
        pl.lit(source_a).alias("source_a"), pl.col("label_id").alias("id_a"), pl.lit(source_b).alias("source_b"),
        strip_prefix(pl.col("node_id"), source_b).alias("id_b"), pl.format("name:{}", "method").alias("method"),
        pl.col("method").replace_strict(NAME_CONFIDENCE, default=0.5, return_dtype=pl.Float64).alias("confidence"),
        pl.col("label_text").alias("via"), pl.col("detail")).drop_nulls("id_b")
    amb = res.filter(pl.col("status") == "ambiguous").sort("label_id")
    report.update(
        linked=out.height,
        by_method={m: int(n) for m, n in out.group_by("method").len().sort("method").iter_rows()},
        ambiguous=amb.height, unmatched=int(res.filter(pl.col("status") == "unmatched").height),
        rank_mismatch=mismatch.height)
    report["examples"] = {
        "ambiguous": [f"{t}: {d}" for t, d in amb.select("label_text", "detail").head(5).iter_rows()],
        "rank_mismatch": [f"{t} ({a}) → {n} ({b})" for t, a, n, b in
                          mismatch.select("label_text", "rank_a", "node_id", "rank_b").head(5).iter_rows()],
    }
    return NameLinks(out.cast(CROSSWALK_SCHEMA).sort("id_a", "id_b"), report)


def link_agreement(crosswalk: pl.DataFrame, source_a: str, source_b: str) -> tuple[pl.DataFrame, dict]:
    """Compare the name links of ``source_a`` → ``source_b`` with the identifier links through Wikidata.

    Parameters
    ----------
    crosswalk : polars.DataFrame
        The crosswalk (name links and Wikidata identifier links).
    source_a, source_b : str
        The two sources.

    Returns
    -------
    (polars.DataFrame, dict)
        One row per id of ``source_a`` with both kinds of link: ``id_a``, ``name_id_b`` (the
        name link), ``name_method``, ``name``, ``identifier_ids_b`` (every id the identifier
        links give), ``via`` (the Wikidata items), ``agree``; sorted with the disagreements
        first. The dict: ``name_links``, ``identifier_links`` (ids of ``source_a`` with each),
        ``both``, ``agree``, ``disagree``, ``agreement`` (share of ``both``).
    """
    names = crosswalk.filter((pl.col("source_a") == source_a) & (pl.col("source_b") == source_b)
                             & pl.col("method").str.starts_with("name:"))
    ident = crosswalk.filter(pl.col("method").str.starts_with("wikidata:"))
    ids_a = names["id_a"].unique().to_list() + ident.filter(pl.col("source_b") == source_a)["id_b"].unique().to_list()
    via = translate(ident, ids_a, source_a, source_b, through="wikidata")
    by_id = via.group_by("id").agg(pl.col("target_id").unique().sort().alias("identifier_ids_b"),
                                   pl.col("via").unique().sort().alias("via"))
    both = (names.select(pl.col("id_a"), pl.col("id_b").alias("name_id_b"), pl.col("method").alias("name_method"),
                         pl.col("via").alias("name"))
            .join(by_id.rename({"id": "id_a"}), on="id_a")
            .with_columns(pl.col("identifier_ids_b").list.contains(pl.col("name_id_b")).alias("agree"))
            .sort("agree", "id_a"))
    n_both = both["id_a"].n_unique()
    n_agree = both.filter(pl.col("agree"))["id_a"].n_unique()
    summary = {"name_links": names["id_a"].n_unique(), "identifier_links": by_id.height, "both": n_both,
               "agree": n_agree, "disagree": n_both - n_agree,
               "agreement": round(n_agree / n_both, 6) if n_both else None}
    return both, summary


def species_coverage(crosswalk: pl.DataFrame, species: Iterable[str], source: str, hub: str = "inaturalist",
                     targets: Iterable[str] = COVERAGE_TARGETS) -> dict:
    """How many species of a tree reach a Wikidata item and each other source: directly or
    through a Wikidata item (:func:`taxoforge.links.crosswalk.translate`), and, for a tree other
    than the hub, also by their name link to the hub tree and from there.

    Parameters
    ----------
    crosswalk : polars.DataFrame
        The crosswalk table.
    species : iterable of str
        Node ids of a tree's species (``inat21:2345``); those without the source's prefix are left out.
    source : str
        Its source (a key of :data:`~taxoforge.links.crosswalk.NODE_PREFIXES`).
    hub : str
        The source other trees reach Wikidata through.
    targets : iterable of str
        The sources to reach (``wikidata``: an item directly linked).

    Returns
    -------
    dict
        ``species``; per target ``{"linked": n, "share": n / species}``; ``wikidata_and_col``
        (species with an item and a Catalogue of Life id) when both are targets; ``all`` (species
        that reach every target); for a tree other than the hub, ``hub`` (species name-linked to it).
        The tree's own source is no target (a Catalogue of Life tree's species are CoL ids).

    Examples
    --------
    >>> cw = pl.DataFrame({"source_a": "wikidata", "id_a": "Q5", "source_b": ["inaturalist", "col"],
    ...                    "id_b": ["2", "AB"], "method": "wikidata:P3151", "confidence": 1.0, "via": "", "detail": ""})
    >>> species_coverage(cw, ["inat:2"], "inaturalist", targets=["wikidata", "col"])
    {'species': 1, 'wikidata': {'linked': 1, 'share': 1.0}, 'col': {'linked': 1, 'share': 1.0}, \
'wikidata_and_col': {'linked': 1, 'share': 1.0}, 'all': {'linked': 1, 'share': 1.0}}
    """
    prefix = NODE_PREFIXES[source] + ":"
    species = sorted({n[len(prefix):] for n in species if n.startswith(prefix)})
    out: dict = {"species": len(species)}
    if source == hub:
        back = pl.DataFrame({"id": species, "hub": species}, schema={"id": pl.String, "hub": pl.String})
    else:
        back = translate(crosswalk, species, source, hub, through=None).select("id", pl.col("target_id").alias("hub"))
        out["hub"] = {"linked": back["id"].n_unique()}
    hubs = back["hub"].unique().to_list()

    def share(n: int) -> dict:
        return {"linked": n, "share": round(n / len(species), 6) if species else 0.0}

    hits: dict[str, set[str]] = {}
    for t in (t for t in targets if t != source):  # a tree's own ids are not reached, they are its ids
        through = None if t == "wikidata" else "wikidata"
        reached = translate(crosswalk, hubs, hub, t, through=through)["id"]
        hits[t] = set(back.filter(pl.col("hub").is_in(reached.implode()))["id"].to_list())
        if source != hub:  # its own ids' links too (a CoL id on an item)
            hits[t] |= set(translate(crosswalk, species, source, t, through=through)["id"].to_list())
        out[t] = share(len(hits[t]))
    if "wikidata" in hits and "col" in hits:
        out["wikidata_and_col"] = share(len(hits["wikidata"] & hits["col"]))
    out["all"] = share(len(set.intersection(*hits.values())) if hits else 0)
    if source != hub:
        out["hub"] = share(out["hub"]["linked"])
    return out


def crosswalk_of_trees(claims: pl.DataFrame | None, trees: Mapping[str, TreeTables], *,
                       hub: str = "inaturalist", claims_report: dict | None = None,
                       parts: Iterable[pl.DataFrame] = (), part_reports: Mapping[str, dict] | None = None,
                       part_conflicts: Iterable[pl.DataFrame] = ()) -> Crosswalk:
    """A crosswalk release of several trees (module docstring): the identifier claims, the
    name links of every other tree to the hub tree, their agreement, and the conflicts.

    Parameters
    ----------
    claims : polars.DataFrame or None
        Wikidata identifier claims (:data:`taxoforge.sources.wikidata.identifiers.CLAIMS_SCHEMA`).
    trees : mapping
        Source → its tree (``{"inaturalist": …, "col": …, "inat21": …}``); every source a key of
        :data:`~taxoforge.links.crosswalk.NODE_PREFIXES`.
    hub : str
        The source whose tree the others are linked to by name (it must be in ``trees`` when
        there are others).
    claims_report : dict, optional
        What reading the claims reported (endpoint or dump file, counts, drops); copied into
        the report under ``parts["claims"]``.
    parts : iterable of polars.DataFrame
        Other link tables (the WordNet 3.0 → 3.1 bridge's links …).
    part_reports : mapping, optional
        What each of them reported, by name.
    part_conflicts : iterable of polars.DataFrame
        The conflicts they counted (:meth:`taxoforge.sources.wordnet_versions.WordNetBridge.conflicts`).

    Returns
    -------
    Crosswalk
        The release; its ``agreement`` holds one row per id with both a name and an identifier
        link (``sources`` says which pair), disagreements first.
    """
    unknown = sorted(set(trees) - set(NODE_PREFIXES))
    if unknown:
        raise ValueError(f"trees: {', '.join(unknown)} name no taxonomy; sources with one: {', '.join(NODE_PREFIXES)}")
    others = [s for s in sorted(trees) if s != hub]
    if others and hub not in trees:
        raise ValueError(f"trees: the hub {hub!r} is needed to link {', '.join(others)} by name")
    parts, reports = list(parts), dict(part_reports or {})
    if claims_report is not None:
        reports["claims"] = claims_report
    for source in others:
        links = name_links(trees[source], trees[hub], source, hub)
        parts.append(links.links)
        reports[f"names:{source}-{hub}"] = links.report
    cw = build_crosswalk(claims, parts=parts, part_reports=reports,
                         trees={s: t.nodes["node_id"] for s, t in trees.items()}, part_conflicts=part_conflicts)
    agreements = []
    for source in others:
        rows, summary = link_agreement(cw.table, source, hub)
        cw.report.setdefault("agreement", {})[f"{source}-{hub}"] = summary
        agreements.append(rows.select(pl.lit(f"{source}-{hub}").alias("sources"), pl.all()))
    cw.agreement = pl.concat(agreements) if agreements else pl.DataFrame()
    cw.report["coverage"] = {
        source: species_coverage(cw.table, trees[source].nodes.filter(pl.col("rank") == "species")["node_id"],
                                 source, hub) for source in sorted(trees)}
    return cw
