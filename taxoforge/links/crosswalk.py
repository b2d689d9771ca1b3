"""A crosswalk between taxonomies: which (source, id) pairs name the same taxon or concept,
how each link was made and how sure it is (docs/method.md#a-crosswalk-between-taxonomies).

Input
    Wikidata identifier claims (``qid``, ``property``, ``source``, ``value``, ``rank``,
    ``method``: :data:`taxoforge.sources.wikidata.identifiers.CLAIMS_SCHEMA`, read over SPARQL
    or from a dump) and other link tables: the project's own name links between trees
    (:mod:`taxoforge.links.crosswalk_names`) and the WordNet 3.0 → 3.1 bridge
    (:mod:`taxoforge.sources.wordnet_versions`).

Output
    The crosswalk table (:data:`CROSSWALK_SCHEMA`), one row per link, ``(source_a, id_a)`` —
    ``(source_b, id_b)``, with

    * ``method`` — how it was made: ``wikidata:P3151`` … (a Wikidata item's identifier claim:
      the item ``wikidata:Q…`` and the id it carries), or a name rule of the label resolver
      (``name:exact``, ``name:normalised``, ``name:synonym``, ``name:epithet_variant``,
      ``name:genus_transfer``), or ``sense_key`` (a WordNet 3.0 synset whose sense keys all
      name one WordNet 3.1 synset);
    * ``confidence`` in (0, 1] — how sure it is (:data:`CLAIM_CONFIDENCE`, and the name rules'
      in :mod:`~taxoforge.links.crosswalk_names`);
    * ``via`` — the evidence (the statement's rank, the name matched, the sense keys found);
    * ``detail`` — the link in words.

    Sources are ``wikidata`` (``Q146``), ``inaturalist`` (``55387``), ``col`` (a Catalogue of
    Life id), ``gbif``, ``ncbi``, ``wordnet31`` (``02086723-n``), ``wordnet30`` (a wnid,
    ``n02084071``), ``inat21`` (an iNat2021 category id). :data:`NODE_PREFIXES` says which
    taxonomy's node ids a source's ids are (``inaturalist`` 55387 is node ``inat:55387``).

Rules for identifier claims (:func:`identifier_links`)
    * A deprecated statement links nothing; it is counted in the report.
    * A claim is *clean* when its item has no other non-deprecated value of that property and
      no other item claims the value: confidence 1.0. A preferred value beside normal ones is
      0.75; any other claim in a one-to-many or many-to-one group is 0.5 — kept, and counted.

Conflicts (:func:`claim_conflicts`): ``one_to_many`` (an item with several non-deprecated
values of one property), ``many_to_one`` (one value claimed by several items: two QIDs for one
iNaturalist id), ``deprecated`` (deprecated statements), ``not_in_tree`` (a value naming no
node of the taxonomy given for its source: a redirected, merged or deleted id), each counted
with examples. :func:`conflict_shares` gives each as a share of the linked ids, which the
asset check bounds.

Release
    A release is the table with its conflicts and report (:class:`Crosswalk`); its version
    (:func:`crosswalk_version`) is a hash of the table's content, so the same links give the
    same version whatever order they were made in.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterable, Mapping

import polars as pl

from taxoforge.files.record_limits import RecordLimits

__all__ = ["CROSSWALK_SCHEMA", "CONFLICTS_SCHEMA", "NODE_PREFIXES", "CLAIM_CONFIDENCE", "empty_crosswalk",
           "CrosswalkError", "read_crosswalk", "CROSSWALK_LIMITS",
           "identifier_links", "claim_conflicts", "conflict_shares", "combine", "translate", "node_ids",
           "coverage", "Crosswalk", "build_crosswalk", "crosswalk_version", "COUNTS_SCHEMA"]

CROSSWALK_SCHEMA = {"source_a": pl.String, "id_a": pl.String, "source_b": pl.String, "id_b": pl.String,
                    "method": pl.String, "confidence": pl.Float64, "via": pl.String, "detail": pl.String}
CONFLICTS_SCHEMA = {"kind": pl.String, "source": pl.String, "count": pl.Int64, "ids": pl.Int64, "share": pl.Float64,
                    "examples": pl.List(pl.String)}
#: A release's counts in one table (:meth:`Crosswalk.counts`): links by method and source pair,
#: conflicts by kind and source.
COUNTS_SCHEMA = {"what": pl.String, "name": pl.String, "sources": pl.String, "count": pl.Int64,
                 "share": pl.Float64}
#: The node-id prefix of the taxonomy whose nodes a source's ids are.
NODE_PREFIXES = {"wikidata": "wd", "inaturalist": "inat", "col": "col", "inat21": "inat21", "wordnet30": "wn"}
#: Confidence of an identifier claim: clean, preferred among several, any other in a conflict.
CLAIM_CONFIDENCE = {"clean": 1.0, "preferred": 0.75, "conflict": 0.5}
_LIVE = pl.col("rank") != "deprecated"
#: Columns a crosswalk handed in must have; the others of :data:`CROSSWALK_SCHEMA` may be missing (null).
_REQUIRED = ("source_a", "id_a", "source_b", "id_b", "confidence")


class CrosswalkError(ValueError):
    """A crosswalk table that cannot be used; the message names the file, column or row."""


#: What a crosswalk file may decode to, counted as decoded: 50 million links, 1 GiB of column data.
CROSSWALK_LIMITS = RecordLimits(max_records=50_000_000, max_cells=10**9)


def read_crosswalk(crosswalk, *, limits=None) -> pl.DataFrame:
    """A crosswalk table handed in (a Parquet file or a table), checked before it is used:
    the columns of :data:`CROSSWALK_SCHEMA` (``source_a``, ``id_a``, ``source_b``, ``id_b``
    and ``confidence`` required, the others null when missing) of their types, and every
    confidence a finite number in (0, 1]. A file is read in counted batches
    (:func:`taxoforge.files.parquet_records.read_parquet_table`): a FIFO or a device is refused
    by name, a file that is not Parquet or decodes past ``limits`` is an error naming it.

    Parameters
    ----------
    crosswalk : polars.DataFrame or str or os.PathLike
        The table, or its Parquet file.
    limits : RecordLimits, optional
        What the file may decode to (default :data:`CROSSWALK_LIMITS`).

    Returns
    -------
    polars.DataFrame
        The table, with the columns and types of :data:`CROSSWALK_SCHEMA`.

    Raises
    ------
    CrosswalkError
        Naming the file and the column, row or limit.
    """
    if isinstance(crosswalk, pl.DataFrame):
        df, where = crosswalk, "the crosswalk table"
    else:
        from taxoforge.files.parquet_records import read_parquet_table

        where = str(crosswalk)
        df = read_parquet_table(crosswalk, limits=limits or CROSSWALK_LIMITS, what="crosswalk",
                                error=CrosswalkError)
    missing = [c for c in _REQUIRED if c not in df.columns]
    if missing:
        raise CrosswalkError(f"{where}: no column {', '.join(map(repr, missing))} (a crosswalk has "
                             f"{', '.join(CROSSWALK_SCHEMA)}; its columns are {', '.join(df.columns) or 'none'})")
    for c, t in CROSSWALK_SCHEMA.items():
        if c not in df.columns:
            df = df.with_columns(pl.lit(None, dtype=t).alias(c))
            continue
        have = df.schema[c]
        ok = have.is_numeric() if t == pl.Float64 else have in (pl.String, pl.Categorical, pl.Null) or have.is_integer()
        if not ok:
            raise CrosswalkError(f"{where}: column {c!r} is {have}, expected {t} (text ids, numeric confidences)")
    df = df.select([pl.col(c).cast(t) for c, t in CROSSWALK_SCHEMA.items()])
    conf = df["confidence"]
    bad = (conf.is_null() | ~conf.is_finite() | (conf <= 0) | (conf > 1)).fill_null(True)
    if bad.any():
        i = int(bad.arg_true()[0])
        raise CrosswalkError(f"{where}: row {i + 1}: confidence {conf[i]!r} is not a number in (0, 1] "
                             f"({int(bad.sum()):,} such rows); a link's confidence says how sure it is")
    return df


def empty_crosswalk() -> pl.DataFrame:
    """An empty crosswalk table.

    Returns
    -------
    polars.DataFrame
        No rows, :data:`CROSSWALK_SCHEMA`.
    """
    return pl.DataFrame(schema=CROSSWALK_SCHEMA)


def _groups(claims: pl.DataFrame) -> pl.DataFrame:
    """Live claims with the size of their item × property group and value group."""
    live = claims.filter(_LIVE).unique(["qid", "property", "value"])
    return live.with_columns(
        pl.len().over("qid", "property").alias("_per_item"),
        pl.col("qid").n_unique().over("property", "value").alias("_per_value"),
        (pl.col("rank") == "preferred").any().over("qid", "property").alias("_has_preferred"))


def identifier_links(claims: pl.DataFrame) -> pl.DataFrame:
    """The crosswalk rows of Wikidata identifier claims: ``(wikidata, Q…)`` — ``(source, value)``.

    Parameters
    ----------
    claims : polars.DataFrame
        Identifier claims (``qid``, ``property``, ``source``, ``value``, ``rank``, ``method``).

    Returns
    -------
    polars.DataFrame
        One row per non-deprecated claim (:data:`CROSSWALK_SCHEMA`), confidence by the rules of
        the module docstring, sorted.

    Examples
    --------
    >>> claims = pl.DataFrame({"qid": ["Q1", "Q1", "Q2"], "property": ["P3151", "P10585", "P3151"],
    ...                        "source": ["inaturalist", "col", "inaturalist"], "value": ["7", "AB", "8"],
    ...                        "rank": ["normal", "normal", "deprecated"], "method": "sparql"})
    >>> identifier_links(claims).select("id_a", "source_b", "id_b", "confidence").rows()
    [('Q1', 'col', 'AB', 1.0), ('Q1', 'inaturalist', '7', 1.0)]
    """
    if not claims.height:
        return empty_crosswalk()
    g = _groups(claims)
    clean = (pl.col("_per_item") == 1) & (pl.col("_per_value") == 1)
    preferred = (pl.col("rank") == "preferred") & (pl.col("_per_value") == 1)
    conf = (pl.when(clean).then(CLAIM_CONFIDENCE["clean"]).when(preferred).then(CLAIM_CONFIDENCE["preferred"])
            .otherwise(CLAIM_CONFIDENCE["conflict"]))
    why = (pl.when(clean).then(pl.lit(""))
           .when(pl.col("_per_item") > 1).then(pl.format(" (one of {} {} values of the item)", "_per_item", "property"))
           .otherwise(pl.format(" (the value is claimed by {} items)", "_per_value")))
    out = g.select(
        pl.lit("wikidata").alias("source_a"), pl.col("qid").alias("id_a"), pl.col("source").alias("source_b"),
        pl.col("value").alias("id_b"), pl.format("wikidata:{}", "property").alias("method"), conf.alias("confidence"),
        pl.format("{} rank ({})", "rank", "method").alias("via"),
        pl.format("Wikidata item {} has {} {}{}", "qid", "property", "value", why).alias("detail"))
    return out.cast(CROSSWALK_SCHEMA).sort("source_b", "id_b", "id_a")


def claim_conflicts(claims: pl.DataFrame, trees: Mapping[str, Iterable[str]] | None = None) -> pl.DataFrame:
    """Counts of the conflicts among identifier claims (module docstring), per kind and source.

    Parameters
    ----------
    claims : polars.DataFrame
        Identifier claims.
    trees : mapping, optional
        Source → the node ids of the taxonomy its ids should name (``{"inaturalist":
        tree.nodes["node_id"]}``): a live value naming no node counts as ``not_in_tree``.

    Returns
    -------
    polars.DataFrame
        :data:`CONFLICTS_SCHEMA`: ``kind``, ``source``, ``count`` (ids concerned: items for
        ``one_to_many``, values for ``many_to_one`` and ``not_in_tree``, statements for
        ``deprecated``), ``ids`` (how many there are of the source: items with a live claim,
        live values, statements), ``share`` (``count / ids``) and up to five ``examples``;
        kinds with no case are left out.
    """
    rows: list[dict] = []
    if claims.height:
        g = _groups(claims)
        for source in sorted(g["source"].unique().to_list()):
            s = g.filter(pl.col("source") == source)
            items, values = s.select("qid", "property").n_unique(), s.select("property", "value").n_unique()
            one_many = s.filter(pl.col("_per_item") > 1).sort("qid", "value")
            if one_many.height:
                agg = one_many.group_by("qid", maintain_order=True).agg(pl.col("value"))
                rows.append({"kind": "one_to_many", "source": source, "count": agg.height, "ids": items,
                             "examples": [f"{q}: {', '.join(v)}" for q, v in agg.head(5).iter_rows()]})
            many_one = s.filter(pl.col("_per_value") > 1).sort("value", "qid")
            if many_one.height:
                agg = many_one.group_by("value", maintain_order=True).agg(pl.col("qid"))
                rows.append({"kind": "many_to_one", "source": source, "count": agg.height, "ids": values,
                             "examples": [f"{v}: {', '.join(q)}" for v, q in agg.head(5).iter_rows()]})
            if trees and source in trees and source in NODE_PREFIXES:
                known = pl.Series("node_id", list(trees[source]), dtype=pl.String)
                ids = s.select("qid", "value", (pl.lit(NODE_PREFIXES[source] + ":") + pl.col("value")).alias("node_id"))
                missing = ids.filter(~pl.col("node_id").is_in(known)).sort("value")
                if missing.height:
                    rows.append({"kind": "not_in_tree", "source": source, "count": missing["value"].n_unique(),
                                 "ids": values,
                                 "examples": [f"{q}: {v}" for q, v in missing.select("qid", "value").head(5).iter_rows()]})
        statements = dict(claims.group_by("source").len().iter_rows())
        dep = claims.filter(~_LIVE).sort("source", "qid", "value")
        for (source,), d in dep.group_by("source", maintain_order=True):
            rows.append({"kind": "deprecated", "source": source, "count": d.height, "ids": statements[source],
                         "examples": [f"{q}: {p} {v}" for q, p, v in d.select("qid", "property", "value").head(5).iter_rows()]})
    for r in rows:
        r["share"] = round(r["count"] / r["ids"], 6) if r["ids"] else 0.0
    return pl.DataFrame(rows, schema=CONFLICTS_SCHEMA).sort("kind", "source")


def conflict_shares(claims: pl.DataFrame, conflicts: pl.DataFrame,
                    checked: Iterable[str] | None = None) -> dict[str, float]:
    """Each conflict kind's count as a share of the ids it concerns (items with a live claim
    for ``one_to_many``, live values for the others; statements for ``deprecated``), over
    every source (the conflicts table has each source's own ``share``).

    Parameters
    ----------
    claims : polars.DataFrame
        Identifier claims.
    conflicts : polars.DataFrame
        Their :func:`claim_conflicts`.
    checked : iterable of str, optional
        The sources whose values were looked for in a tree: the live values of these only are
        the ids ``not_in_tree`` concerns (default: every source).

    Returns
    -------
    dict
        Kind → share in [0, 1] (all kinds present, 0.0 when none).
    """
    live = claims.filter(_LIVE)
    looked = live if checked is None else live.filter(pl.col("source").is_in([s for s in checked if s in NODE_PREFIXES]))
    denom = {"one_to_many": live.select("qid", "property").n_unique() if live.height else 0,
             "many_to_one": live.select("property", "value").n_unique() if live.height else 0,
             "not_in_tree": looked.select("property", "value").n_unique() if looked.height else 0,
             "deprecated": claims.height}
    counts = dict(conflicts.group_by("kind").agg(pl.col("count").sum()).iter_rows()) if conflicts.height else {}
    return {k: (round(counts.get(k, 0) / d, 6) if d else 0.0) for k, d in denom.items()}


def combine(*parts: pl.DataFrame) -> pl.DataFrame:
    """One crosswalk table from several parts: duplicates dropped (the most confident row of a
    pair and method kept), in canonical order, so the same links give the same bytes.

    Parameters
    ----------
    *parts : polars.DataFrame
        Crosswalk tables.

    Returns
    -------
    polars.DataFrame
        The crosswalk table.
    """
    frames = [p.cast(CROSSWALK_SCHEMA) for p in parts if p is not None and p.height]
    if not frames:
        return empty_crosswalk()
    df = pl.concat(frames)
    df = df.sort("confidence", descending=True).unique(["source_a", "id_a", "source_b", "id_b", "method"], keep="first")
    return df.sort("source_a", "id_a", "source_b", "id_b", "method")


def _both_ways(crosswalk: pl.DataFrame) -> pl.DataFrame:
    flipped = crosswalk.select(pl.col("source_b").alias("source_a"), pl.col("id_b").alias("id_a"),
                               pl.col("source_a").alias("source_b"), pl.col("id_a").alias("id_b"),
                               "method", "confidence", "via", "detail")
    return pl.concat([crosswalk.cast(CROSSWALK_SCHEMA), flipped.cast(CROSSWALK_SCHEMA)])


def translate(crosswalk: pl.DataFrame, ids: Iterable[str], source: str, target: str, *,
              through: str | None = "wikidata", min_confidence: float = 0.0) -> pl.DataFrame:
    """The ids of ``target`` that ``ids`` of ``source`` name, directly or through one hub
    (a Wikidata item by default): iNaturalist 55387 → item Q… → Catalogue of Life id.

    Parameters
    ----------
    crosswalk : polars.DataFrame
        The crosswalk table.
    ids : iterable of str
        Ids of ``source``.
    source, target : str
        Sources (``inaturalist``, ``col`` …).
    through : str or None
        The hub source composed through (None: direct links only).
    min_confidence : float
        Links below this confidence are not used.

    Returns
    -------
    polars.DataFrame
        ``id``, ``target_id``, ``method`` (both methods joined by ``+`` through the hub),
        ``confidence`` (the product through the hub), ``via`` (the hub id or the direct
        evidence); one row per (id, target id), the most confident path kept, sorted.
    """
    both = _both_ways(crosswalk).filter(pl.col("confidence") >= min_confidence)
    want = pl.DataFrame({"id": sorted({str(i) for i in ids})}, schema={"id": pl.String})
    direct = both.filter((pl.col("source_a") == source) & (pl.col("source_b") == target)).select(
        pl.col("id_a").alias("id"), pl.col("id_b").alias("target_id"), "method", "confidence", "via")
    parts = [want.join(direct, on="id")]
    if through and through not in (source, target):
        first = both.filter((pl.col("source_a") == source) & (pl.col("source_b") == through)).select(
            pl.col("id_a").alias("id"), pl.col("id_b").alias("hub"), pl.col("method").alias("m1"),
            pl.col("confidence").alias("c1"))
        second = both.filter((pl.col("source_a") == through) & (pl.col("source_b") == target)).select(
            pl.col("id_a").alias("hub"), pl.col("id_b").alias("target_id"), pl.col("method").alias("m2"),
            pl.col("confidence").alias("c2"))
        hop = want.join(first, on="id").join(second, on="hub").select(
            "id", "target_id", pl.format("{}+{}", "m1", "m2").alias("method"),
            (pl.col("c1") * pl.col("c2")).alias("confidence"), pl.format("{}:{}", pl.lit(through), "hub").alias("via"))
        parts.append(hop)
    out = pl.concat(parts, how="vertical_relaxed")
    out = out.sort("confidence", "method", descending=[True, False]).unique(["id", "target_id"], keep="first")
    return out.sort("id", pl.col("confidence"), "target_id", descending=[False, True, False])


def node_ids(ids: pl.Series | Iterable[str], source: str) -> list[str]:
    """The node ids that ids of ``source`` are in their taxonomy (``inaturalist`` 55387 → ``inat:55387``).

    Parameters
    ----------
    ids : iterable of str
        Ids of ``source``.
    source : str
        A source of :data:`NODE_PREFIXES`.

    Returns
    -------
    list[str]
        The node ids, in the order given.
    """
    if source not in NODE_PREFIXES:
        raise ValueError(f"source {source!r} has no taxonomy of its own here; sources with one: "
                         f"{', '.join(NODE_PREFIXES)}")
    return [f"{NODE_PREFIXES[source]}:{i}" for i in ids]


def coverage(crosswalk: pl.DataFrame, ids: Iterable[str], source: str, targets: Iterable[str], *,
             through: str | None = "wikidata") -> dict:
    """How many of ``ids`` reach each target source, and all of them at once.

    Parameters
    ----------
    crosswalk : polars.DataFrame
        The crosswalk table.
    ids : iterable of str
        Ids of ``source`` (e.g. the iNaturalist ids of the iNat2021 species).
    source : str
        Their source.
    targets : iterable of str
        Target sources (``wikidata`` counts the items directly linked).
    through : str or None
        The hub other targets are reached through.

    Returns
    -------
    dict
        ``ids``, per target ``{"linked": n, "share": n / ids}``, and ``all`` (ids linked to
        every target).
    """
    want = sorted({str(i) for i in ids})
    out: dict = {"ids": len(want)}
    every: set[str] | None = None
    for t in targets:
        hit = set(translate(crosswalk, want, source, t, through=None if t == through else through)["id"].to_list())
        out[t] = {"linked": len(hit), "share": round(len(hit) / len(want), 6) if want else 0.0}
        every = hit if every is None else every & hit
    n = len(every or set())
    out["all"] = {"linked": n, "share": round(n / len(want), 6) if want else 0.0}
    return out


class Crosswalk:
    """One crosswalk release: the table, its conflicts and its report (:func:`build_crosswalk`).

    Attributes
    ----------
    table : polars.DataFrame
        The links (:data:`CROSSWALK_SCHEMA`).
    conflicts : polars.DataFrame
        The conflicts among the identifier claims (:data:`CONFLICTS_SCHEMA`).
    report : dict
        Counts: rows per method and per source pair, conflict shares, what each part reported.
    agreement : polars.DataFrame
        Where an id has both a name link and an identifier link to the same tree, whether
        they agree (:func:`taxoforge.links.crosswalk_names.link_agreement`), one row each,
        with a ``sources`` column; empty when no name links were made.
    """

    def __init__(self, table: pl.DataFrame, conflicts: pl.DataFrame, report: dict,
                 agreement: pl.DataFrame | None = None) -> None:
        self.table, self.conflicts, self.report = table, conflicts, report
        self.agreement = agreement if agreement is not None else pl.DataFrame()

    @property
    def version(self) -> str:
        """The release's version: :func:`crosswalk_version` of the table.

        Returns
        -------
        str
            Twelve hex digits.
        """
        return crosswalk_version(self.table)[0]

    def counts(self) -> pl.DataFrame:
        """The release's counts as one table: links by method and by source pair, conflicts by
        kind and source (with the kind's share of the ids it concerns).

        Returns
        -------
        polars.DataFrame
            :data:`COUNTS_SCHEMA`: ``what`` (``method``, ``sources`` or ``conflict``),
            ``name`` (the method, the source pair or the conflict kind), ``sources``,
            ``count`` and ``share`` (a conflict's share of the source's ids it concerns).
        """
        rows = []
        by_method = self.table.group_by("method").agg(
            pl.len().alias("count"), pl.format("{}-{}", "source_a", "source_b").unique().sort().str.join(", ")
            .alias("sources")).sort("method")
        rows += [{"what": "method", "name": m, "sources": s, "count": int(n), "share": None}
                 for m, n, s in by_method.select("method", "count", "sources").iter_rows()]
        rows += [{"what": "sources", "name": pair, "sources": pair, "count": int(n), "share": None}
                 for pair, n in self.report.get("rows_by_sources", {}).items()]
        rows += [{"what": "conflict", "name": k, "sources": s, "count": int(n), "share": share}
                 for k, s, n, share in self.conflicts.select("kind", "source", "count", "share").iter_rows()]
        return pl.DataFrame(rows, schema=COUNTS_SCHEMA)


def build_crosswalk(claims: pl.DataFrame | None = None, *, parts: Iterable[pl.DataFrame] = (),
                    part_reports: Mapping[str, dict] | None = None,
                    trees: Mapping[str, Iterable[str]] | None = None,
                    part_conflicts: Iterable[pl.DataFrame] = ()) -> Crosswalk:
    """A crosswalk release from Wikidata identifier claims and other link tables (name links,
    the WordNet bridge), with its conflicts and report.

    Parameters
    ----------
    claims : polars.DataFrame, optional
        Identifier claims (:func:`identifier_links`).
    parts : iterable of polars.DataFrame
        Other crosswalk tables (:func:`taxoforge.links.crosswalk_names.name_links`' links …).
    part_reports : mapping, optional
        What each part reported, by name; copied into the report.
    trees : mapping, optional
        Source → node ids, for the ``not_in_tree`` conflicts (:func:`claim_conflicts`).
    part_conflicts : iterable of polars.DataFrame
        Conflicts the other parts counted (:data:`CONFLICTS_SCHEMA`; the WordNet bridge's split
        and merged synsets), added to the claims' (``conflict_shares`` stays the claims').

    Returns
    -------
    Crosswalk
        The table, the conflicts and the report (``rows``, ``rows_by_method``,
        ``rows_by_sources``, ``claims``, ``conflicts``, ``conflict_shares``, ``parts``).
    """
    claims = claims if claims is not None else pl.DataFrame(
        schema={"qid": pl.String, "property": pl.String, "source": pl.String, "value": pl.String, "rank": pl.String,
                "method": pl.String})
    table = combine(identifier_links(claims), *parts)
    claimed = claim_conflicts(claims, trees)
    conflicts = pl.concat([claimed, *(c.cast(CONFLICTS_SCHEMA) for c in part_conflicts)]).sort("kind", "source")
    pairs = table.group_by("source_a", "source_b").len().sort("source_a", "source_b")
    report = {
        "rows": table.height,
        "rows_by_method": {m: int(n) for m, n in table.group_by("method").len().sort("method").iter_rows()},
        "rows_by_sources": {f"{a}-{b}": int(n) for a, b, n in pairs.iter_rows()},
        "claims": claims.height,
        "claims_by_rank": {r: int(n) for r, n in claims.group_by("rank").len().sort("rank").iter_rows()},
        "conflicts": conflicts.to_dicts(),
        "conflict_shares": conflict_shares(claims, claimed, list(trees) if trees else []),
        "parts": dict(part_reports or {}),
    }
    return Crosswalk(table, conflicts, report)


def crosswalk_version(table: pl.DataFrame) -> tuple[str, str]:
    """The version of a crosswalk table: a hash of its content, independent of row order.

    The rows are sorted by every column and hashed (SHA-256) as newline-delimited JSON after
    a header naming the columns — JSON rather than Parquet bytes, so another pyarrow writing
    the same links gives the same version (the convention of the snapshots' version ids).

    Parameters
    ----------
    table : polars.DataFrame
        A crosswalk table (:data:`CROSSWALK_SCHEMA`).

    Returns
    -------
    tuple[str, str]
        ``(version, sha256)``: the first twelve hex digits, and the whole hash.
    """
    canon = table.cast(CROSSWALK_SCHEMA).select(list(CROSSWALK_SCHEMA)).sort(list(CROSSWALK_SCHEMA), nulls_last=True)
    h = hashlib.sha256(f"taxoforge-crosswalk\ncolumns={','.join(CROSSWALK_SCHEMA)}\n".encode())
    for chunk in canon.iter_slices(n_rows=100_000):
        buf = io.BytesIO()
        chunk.write_ndjson(buf)
        h.update(buf.getvalue())
    h.update(f"\nrows={canon.height}\n".encode())
    full = h.hexdigest()
    return full[:12], full
