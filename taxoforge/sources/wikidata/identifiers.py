"""The identifiers Wikidata gives a taxon or concept in other taxonomies: the claims a crosswalk is built from.

Input
    Values of one identifier property (by default iNaturalist taxon ids, P3151, e.g. the
    ``inat:<id>`` nodes of the iNaturalist tree), a
    :class:`~taxoforge.sources.wikidata.sparql.SparqlClient` and optionally a checkpoint folder.

Output
    :class:`IdentifierClaims`: ``claims`` (:data:`CLAIMS_SCHEMA`: ``qid``, ``property``,
    ``source``, ``value``, ``rank``, ``method``), one row per statement of the five properties
    of :data:`IDENTIFIER_PROPERTIES` on every item found, and ``info`` (endpoint, query times,
    batches, rows per property, what was dropped and why).

    ``rank`` is the statement's rank: ``preferred``, ``normal`` or ``deprecated``; the dump's
    truthy triples carry no rank, and their claims say ``truthy``
    (:func:`taxoforge.sources.wikidata.dump.read_dump` with ``identifiers=True``): a truthy
    triple is a best-rank statement that is not deprecated, so a dump shows neither the
    deprecated statements nor the normal-rank values beside a preferred one
    (:func:`truthy_claims` gives the same view of claims read over SPARQL).

Algorithm
    1. The seed values are validated against the property's format (:data:`VALUE_PATTERNS`),
       sorted and cut into batches; each batch is one ``sql/wikidata/taxon_identifiers.rq``
       query: the items with a statement of the seed property whose value is in the batch,
       and every statement (with its rank) of the five properties on those items.
    2. Batches run one at a time through the polite client and, with a checkpoint folder,
       each finished batch is stored, so an interrupted run resumes where it stopped
       (:class:`~taxoforge.sources.wikidata.extract.BatchRunner`).
    3. Every row is validated (:func:`validate_claim_rows`): an item IRI that is not a QID, a
       property outside the five, a value that does not have its property's format, an unknown
       rank are dropped and counted by reason; exact duplicates are removed.

References
----------
Numbers of docs/references.md: [37] Wikimedia, Wikibase/Indexing/RDF Dump Format
(statements, ranks and truthy triples: ``p:``/``ps:``/``wikibase:rank``; ``wdt:`` holds
best-rank, non-deprecated values only).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import polars as pl

from taxoforge.sources.wikidata.checkpoint import BatchCheckpoint
from taxoforge.sources.wikidata.extract import BatchRunner
from taxoforge.sources.wikidata.ids import ENTITY_IRI
from taxoforge.sources.wikidata.queries import render
from taxoforge.sources.wikidata.sparql import SparqlClient

__all__ = ["QUERY", "IDENTIFIER_PROPERTIES", "VALUE_PATTERNS", "CLAIMS_SCHEMA", "RANKS", "DEFAULT_IDENTIFIER_BATCH_SIZE",
           "IdentifierClaims", "validate_claim_rows", "validate_claim_frame", "fetch_identifier_claims",
           "empty_claims", "seed_values", "truthy_claims", "merge_claims"]

QUERY = "taxon_identifiers"
#: The identifier properties a crosswalk is built from, and the source each names.
IDENTIFIER_PROPERTIES = {
    "P3151": "inaturalist",  # iNaturalist taxon ID
    "P10585": "col",  # Catalogue of Life ID (the COL checklist's stable id)
    "P846": "gbif",  # GBIF taxon ID
    "P685": "ncbi",  # NCBI Taxonomy ID
    "P8814": "wordnet31",  # WordNet 3.1 synset ID
}
#: The format of each property's values (Wikidata's format constraints): iNaturalist, GBIF
#: and NCBI ids are positive integers, Catalogue of Life ids up to 10 capitals and digits,
#: WordNet 3.1 synset ids eight digits, a hyphen and the part of speech (``02086723-n``).
VALUE_PATTERNS = {
    "P3151": r"^[1-9][0-9]{0,18}$",
    "P10585": r"^[0-9A-Z]{1,10}$",
    "P846": r"^[1-9][0-9]{0,18}$",
    "P685": r"^[1-9][0-9]{0,18}$",
    "P8814": r"^[0-9]{8}-[nvasr]$",
}
#: Statement ranks, and ``truthy`` for a dump's truthy triple (best rank, not deprecated).
RANKS = ("preferred", "normal", "deprecated", "truthy")
_RANK_IRI = {"http://wikiba.se/ontology#PreferredRank": "preferred", "http://wikiba.se/ontology#NormalRank": "normal",
             "http://wikiba.se/ontology#DeprecatedRank": "deprecated"}
CLAIMS_SCHEMA = {"qid": pl.String, "property": pl.String, "source": pl.String, "value": pl.String,
                 "rank": pl.String, "method": pl.String}
#: Seed values per query: 500 values return a few thousand statements, well inside WDQS's limits.
DEFAULT_IDENTIFIER_BATCH_SIZE = 500


def empty_claims() -> pl.DataFrame:
    """An empty claims table.

    Returns
    -------
    polars.DataFrame
        No rows, :data:`CLAIMS_SCHEMA`.
    """
    return pl.DataFrame(schema=CLAIMS_SCHEMA)


@dataclass
class IdentifierClaims:
    """What :func:`fetch_identifier_claims` returns.

    Attributes
    ----------
    claims : polars.DataFrame
        One row per statement (:data:`CLAIMS_SCHEMA`).
    info : dict
        Provenance: endpoint, query times, batches, rows per property and rank, drops.
    """

    claims: pl.DataFrame
    info: dict = field(default_factory=dict)


def _raw_row(binding: dict) -> list | None:
    """A binding as stored in the checkpoint: [seed, item IRI, property, value, rank IRI]."""
    value = binding.get("value") or {}
    if "value" not in value:
        return None
    return [(binding.get(k) or {}).get("value") for k in ("seed", "item", "property")] + [
        value["value"], (binding.get("rank") or {}).get("value")]


def validate_claim_rows(raw: list[list], method: str = "sparql") -> tuple[pl.DataFrame, dict, dict]:
    """Raw rows ``[seed, item IRI, property, value, rank IRI or name]`` → (claims in
    :data:`CLAIMS_SCHEMA`, dropped counts by reason, dropped examples).

    Parameters
    ----------
    raw : list[list]
        The rows.
    method : str
        How they were read (``sparql`` or ``dump``), the claims' ``method``.

    Returns
    -------
    tuple[polars.DataFrame, dict, dict]
        The valid claims (sorted, duplicates removed), the count of dropped rows per reason
        (``item_not_a_qid``, ``unknown_property``, ``bad_value``, ``unknown_rank``) and up
        to five examples per reason.
    """
    df = pl.DataFrame(raw, schema={"seed": pl.String, "item": pl.String, "property": pl.String,
                                   "raw_value": pl.String, "raw_rank": pl.String}, orient="row")
    return validate_claim_frame(df, method)


def validate_claim_frame(df: pl.DataFrame, method: str = "sparql") -> tuple[pl.DataFrame, dict, dict]:
    """:func:`validate_claim_rows` of a table: columns ``item`` (an item IRI or a QID),
    ``property``, ``raw_value`` and ``raw_rank`` (a rank IRI or name).

    Parameters
    ----------
    df : polars.DataFrame
        The rows.
    method : str
        How they were read (``sparql`` or ``dump``), the claims' ``method``.

    Returns
    -------
    tuple[polars.DataFrame, dict, dict]
        The valid claims, the dropped counts per reason and up to five examples per reason.
    """
    df = df.select(pl.col("item").cast(pl.String), pl.col("property").cast(pl.String),
                   pl.col("raw_value").cast(pl.String), pl.col("raw_rank").cast(pl.String))
    entity = re.escape(ENTITY_IRI)
    df = df.with_row_index("_row").with_columns(
        pl.col("item").str.extract(rf"^(?:{entity})?(Q[1-9][0-9]*)$", 1).alias("qid"),
        pl.col("raw_value").str.strip_chars().alias("value"),
        pl.col("raw_rank").replace(_RANK_IRI).alias("rank"),
        pl.col("property").replace_strict(IDENTIFIER_PROPERTIES, default=None).alias("source"),
    )
    valid_value = pl.lit(False)
    for prop, pattern in VALUE_PATTERNS.items():
        valid_value = valid_value | ((pl.col("property") == prop) & pl.col("value").str.contains(pattern))
    reason = (pl.when(pl.col("qid").is_null()).then(pl.lit("item_not_a_qid"))
              .when(pl.col("source").is_null()).then(pl.lit("unknown_property"))
              .when(pl.col("value").is_null() | ~valid_value).then(pl.lit("bad_value"))
              .when(~pl.col("rank").is_in(list(RANKS))).then(pl.lit("unknown_rank")))
    df = df.with_columns(reason.alias("_drop"))
    bad = df.filter(pl.col("_drop").is_not_null())
    counts = {r: int(n) for r, n in bad.group_by("_drop").len().sort("_drop").iter_rows()}
    examples = {r: [f"{row['item']} {row['property']} {row['raw_value']!r} ({row['raw_rank']})"
                    for row in g.sort("_row").head(5).iter_rows(named=True)]
                for (r,), g in bad.group_by("_drop", maintain_order=True)}
    good = df.filter(pl.col("_drop").is_null()).select("qid", "property", "source", "value", "rank",
                                                        pl.lit(method).alias("method"))
    good = good.unique().sort(pl.col("qid").str.slice(1).cast(pl.Int64), "property", "value", "rank")
    return good.cast(CLAIMS_SCHEMA), counts, examples


def seed_values(values: Iterable, seed_property: str) -> list[str]:
    """The values items are looked for by, checked against the property's format.

    Parameters
    ----------
    values : iterable of int or str
        Identifier values (iNaturalist taxon ids …).
    seed_property : str
        Their property, a key of :data:`IDENTIFIER_PROPERTIES`.

    Returns
    -------
    list[str]
        The distinct values as strings, shortest first, then in text order.

    Raises
    ------
    ValueError
        Naming the first value that does not have the property's format, or an unknown property.
    """
    if seed_property not in IDENTIFIER_PROPERTIES:
        raise ValueError(f"seed_property {seed_property!r}: choose one of {', '.join(IDENTIFIER_PROPERTIES)}")
    pattern = re.compile(VALUE_PATTERNS[seed_property])
    out: set[str] = set()
    for i, x in enumerate(values):
        s = str(x) if isinstance(x, int) and not isinstance(x, bool) else x
        if not isinstance(s, str) or not pattern.fullmatch(s):
            raise ValueError(f"values[{i}]: {x!r} is not a {IDENTIFIER_PROPERTIES[seed_property]} id "
                             f"({seed_property}: {VALUE_PATTERNS[seed_property]})")
        out.add(s)
    return sorted(out, key=lambda v: (len(v), v))


def fetch_identifier_claims(
    client: SparqlClient,
    values: Iterable[int | str],
    *,
    seed_property: str = "P3151",
    batch_size: int = DEFAULT_IDENTIFIER_BATCH_SIZE,
    checkpoint: BatchCheckpoint | str | None = None,
    progress: Callable[[str], None] | None = None,
) -> IdentifierClaims:
    """Fetch the identifier claims of the items that carry ``values`` of ``seed_property`` (module docstring).

    Parameters
    ----------
    client : SparqlClient
        The polite SPARQL client.
    values : iterable of int or str
        Identifier values of ``seed_property`` (iNaturalist taxon ids by default); a value
        that does not have the property's format raises ``ValueError`` naming it.
    seed_property : str
        The property the items are found by (a key of :data:`IDENTIFIER_PROPERTIES`).
    batch_size : int
        Values per query.
    checkpoint : BatchCheckpoint or path, optional
        Where finished batches are stored, to resume an interrupted run.
    progress : Callable[[str], None], optional
        Called with a line of progress.

    Returns
    -------
    IdentifierClaims
        The claims, with what was dropped and why.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    requested = seed_values(values, seed_property)
    if checkpoint is not None and not isinstance(checkpoint, BatchCheckpoint):
        checkpoint = BatchCheckpoint(checkpoint)
    runner = BatchRunner(client, checkpoint, progress)
    t0 = time.perf_counter()
    raw = runner.run(QUERY, requested, batch_size, row=_raw_row,
                     render_batch=lambda batch: render(QUERY, identifiers=batch, seed_property=seed_property)
                     ) if requested else []
    claims, dropped, examples = validate_claim_rows(raw)
    seeded = claims.filter(pl.col("property") == seed_property)
    times = sorted(runner.query_times)
    info = {
        "method": "sparql",
        "query": QUERY,
        "endpoint": client.endpoint,
        "user_agent": client.agent,
        "seed_property": seed_property,
        "batch_size": batch_size,
        "values_requested": len(requested),
        "values_found": seeded.filter(pl.col("value").is_in(requested))["value"].n_unique(),
        "items": claims["qid"].n_unique(),
        "rows_returned": len(raw),
        "claims": claims.height,
        "claims_by_property": {p: int(n) for p, n in claims.group_by("property").len().sort("property").iter_rows()},
        "claims_by_rank": {r: int(n) for r, n in claims.group_by("rank").len().sort("rank").iter_rows()},
        "dropped": dropped,
        "dropped_examples": examples,
        "batches_queried": runner.batches_run,
        "batches_from_checkpoint": runner.batches_resumed,
        "query_time_first": times[0] if times else None,
        "query_time_last": times[-1] if times else None,
        "requests": client.summary(),
        "seconds": round(time.perf_counter() - t0, 3),
    }
    return IdentifierClaims(claims=claims, info=info)


def truthy_claims(claims: pl.DataFrame) -> pl.DataFrame:
    """The claims a truthy dump shows of the same statements: per item and property, the
    best-ranked non-deprecated ones (the preferred values where there are any, else the
    normal ones), with rank ``truthy``.

    Parameters
    ----------
    claims : polars.DataFrame
        Claims with statement ranks (:data:`CLAIMS_SCHEMA`, read over SPARQL).

    Returns
    -------
    polars.DataFrame
        :data:`CLAIMS_SCHEMA`, sorted as :func:`validate_claim_rows` sorts, ``method`` kept.

    Examples
    --------
    >>> c = pl.DataFrame({"qid": ["Q1", "Q1", "Q2"], "property": "P10585", "source": "col",
    ...                   "value": ["AB", "CD", "EF"], "rank": ["preferred", "normal", "deprecated"],
    ...                   "method": "sparql"})
    >>> truthy_claims(c).select("qid", "value", "rank").rows()
    [('Q1', 'AB', 'truthy')]
    """
    live = claims.filter(pl.col("rank") != "deprecated")
    best = live.filter((pl.col("rank") == "preferred") | ~(pl.col("rank") == "preferred").any().over("qid", "property"))
    out = best.with_columns(pl.lit("truthy").alias("rank")).unique(["qid", "property", "value"])
    return out.sort(pl.col("qid").str.slice(1).cast(pl.Int64), "property", "value").cast(CLAIMS_SCHEMA)


def merge_claims(*claims: pl.DataFrame) -> pl.DataFrame:
    """Claims read in several ways as one table: a statement (item, property, value) is taken
    from the first table that has it — pass the ranked SPARQL claims before a dump's truthy
    ones, so a value both show keeps its rank — and the result is sorted, so the same claims
    give the same table whatever the reads' order within each table.

    Parameters
    ----------
    *claims : polars.DataFrame
        Claims (:data:`CLAIMS_SCHEMA`), the most informative first.

    Returns
    -------
    polars.DataFrame
        :data:`CLAIMS_SCHEMA`, sorted as :func:`validate_claim_rows` sorts.

    Examples
    --------
    >>> a = pl.DataFrame({"qid": "Q1", "property": "P846", "source": "gbif", "value": "5", "rank": "preferred",
    ...                   "method": "sparql"})
    >>> b = pl.DataFrame({"qid": ["Q1", "Q2"], "property": "P846", "source": "gbif", "value": ["5", "6"],
    ...                   "rank": "truthy", "method": "dump"})
    >>> merge_claims(a, b).select("qid", "rank").rows()
    [('Q1', 'preferred'), ('Q2', 'truthy')]
    """
    key = ["qid", "property", "value"]
    out = empty_claims()
    for c in claims:
        c = c.cast(CLAIMS_SCHEMA)
        out = pl.concat([out, c.join(out.select(key).unique(), on=key, how="anti")])
    return out.unique().sort(pl.col("qid").str.slice(1).cast(pl.Int64), "property", "value", "rank", "method")
