"""Names of iNaturalist taxa from Wikidata: common names, taxon synonyms, Wikidata's own taxon name.

Input
    iNaturalist taxon ids (the ``inat:<id>`` nodes of the iNaturalist tree,
    :func:`inat_ids`), a :class:`~taxoforge.sources.wikidata.sparql.SparqlClient`, the
    languages of common names wanted (``en`` by default), and optionally a checkpoint folder.

Output
    :class:`WikidataTaxonNames`: ``names`` with the columns of a names table plus provenance —
    ``node_id`` (``inat:<id>``), ``name``, ``kind``, ``lang``, ``qid`` (the Wikidata item),
    ``property`` — and ``info`` (endpoint, query times, batches, rows per property and what was
    dropped and why). Kinds:

    * ``vernacular`` — P1843 (taxon common name), ``lang`` the literal's language tag;
    * ``synonym`` (``lang`` ``la``) — the P225 (taxon name) of every item the taxon's item lists
      under P1420 (taxon synonym), and the item's own P225: Wikidata sometimes names a taxon
      otherwise than iNaturalist does (:func:`taxoforge.links.external_names.merge_names`
      drops it where it equals the node's own name, or another node's).

Algorithm
    1. The ids are validated (positive integers) and sorted numerically, then cut into batches
       of ``batch_size``; each batch is one ``sql/wikidata/inat_taxon_names.rq`` query (a
       ``VALUES`` list of ids as string literals — P3151 is an external id — joined to the items'
       non-deprecated P3151 statements, then a ``UNION`` of the three name properties).
    2. Batches run one at a time through the polite client (429/5xx/timeouts retried) and, with
       a checkpoint folder, each finished batch is stored, so an interrupted run resumes where it
       stopped and a rerun queries nothing (:class:`~taxoforge.sources.wikidata.extract.BatchRunner`).
       The raw bindings are stored, so validation below is the same for fresh and resumed batches.
    3. Every row is validated: an id outside the requested ones, an item IRI that is not a QID,
       an empty name, a language tag that is not a BCP-47 tag or not one of the requested
       languages (``LANGMATCHES``: ``en`` covers ``en-gb``) are dropped and counted by reason in
       ``info["dropped"]``; exact duplicates are removed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import polars as pl

from taxoforge.sources.wikidata.checkpoint import BatchCheckpoint
from taxoforge.sources.wikidata.extract import BatchRunner
from taxoforge.sources.wikidata.ids import ENTITY_IRI
from taxoforge.sources.wikidata.queries import EXTERNAL_ID_RE, render, language_tag
from taxoforge.sources.wikidata.sparql import SparqlClient
from taxoforge.trees.tables import NAMES_SCHEMA, TreeTables

__all__ = [
    "QUERY",
    "INAT_PREFIX",
    "DEFAULT_NAME_BATCH_SIZE",
    "TAXON_NAMES_SCHEMA",
    "WikidataTaxonNames",
    "inat_ids",
    "fetch_inat_taxon_names",
    "validate_name_rows",
]

QUERY = "inat_taxon_names"
INAT_PREFIX = "inat:"
#: iNaturalist ids per query. 500 ids return a few thousand rows; on the loopback engine a
#: batch of 500 answers in well under a second (see benchmarks/bench_wikidata_names.py), far
#: from WDQS's 60 s limit, and a full iNaturalist tree takes about 2,800 requests.
DEFAULT_NAME_BATCH_SIZE = 500
#: a row names its own provenance (the item and the property): a tree's names table gets ``source``
#: ``wikidata:<qid>`` from it (:meth:`WikidataTaxonNames.names_table`)
TAXON_NAMES_SCHEMA = {**{k: v for k, v in NAMES_SCHEMA.items() if k != "source"}, "qid": pl.String,
                      "property": pl.String}
_KIND = {"P1843": "vernacular", "P1420": "synonym", "P225": "synonym"}
_LANG_PATTERN = r"^[a-z]{2,3}(-[a-z0-9]{1,8})*$"  # queries.LANG_RE, vectorised


@dataclass
class WikidataTaxonNames:
    """What :func:`fetch_inat_taxon_names` returns: ``names`` (:data:`TAXON_NAMES_SCHEMA`)
    and ``info`` (endpoint, query time, batches, counts, drops).

    Attributes
    ----------
    names : polars.DataFrame
        The names table.
    info : dict
        Provenance and metadata.
    """

    names: pl.DataFrame
    info: dict = field(default_factory=dict)

    def names_table(self) -> pl.DataFrame:
        """The rows as a tree's names table (``node_id``, ``name``, ``kind``, ``lang``, ``source``
        ``wikidata:<qid>``: the item that gave the name).

        Returns
        -------
        polars.DataFrame
            The rows as a tree's names table.
        """
        return (self.names.with_columns(pl.format("wikidata:{}", "qid").alias("source"))
                .select(list(NAMES_SCHEMA)).unique(maintain_order=True))


def inat_ids(tree: TreeTables | pl.DataFrame, *, ranks: Iterable[str] | None = None,
             under: Iterable[str] | None = None) -> list[int]:
    """The iNaturalist taxon ids of a tree's ``inat:<id>`` nodes, in numeric order.

    ``ranks`` keeps nodes of those ranks only; ``under`` keeps the subtrees of those node ids
    (each included). Other node ids (a synthetic root) are skipped.

    Parameters
    ----------
    tree : TreeTables or polars.DataFrame
        The tree.
    ranks : Iterable[str], optional
        Taxonomic ranks.
    under : Iterable[str], optional
        Node ids whose subtrees are kept (default: the whole tree).

    Returns
    -------
    list[int]
        The iNaturalist taxon ids of a tree's ``inat:<id>`` nodes, in numeric order.
    """
    nodes = tree.nodes if isinstance(tree, TreeTables) else tree
    if under:
        if not isinstance(tree, TreeTables):
            raise ValueError("`under` needs the whole tree (TreeTables), not a nodes table")
        tax = tree.taxonomy()
        keep: set[str] = set()
        for u in under:
            if u not in tax:
                raise ValueError(f"under: {u!r} is not a node of tree {tree.name!r}")
            keep.update(tax.descendants(u, include_self=True))
        nodes = nodes.filter(pl.col("node_id").is_in(sorted(keep)))
    if ranks:
        nodes = nodes.filter(pl.col("rank").is_in(list(ranks)))
    ids = nodes.select(pl.col("node_id").str.extract(r"^inat:([1-9][0-9]*)$", 1).cast(pl.Int64)).to_series()
    return sorted(ids.drop_nulls().unique().to_list())


def _raw_row(binding: dict) -> list | None:
    """A binding as stored in the checkpoint: [inat, item IRI, property, value, language]."""
    name = binding.get("name") or {}
    if "value" not in name:
        return None
    return [(binding.get("inat") or {}).get("value"), (binding.get("item") or {}).get("value"),
            (binding.get("property") or {}).get("value"), name["value"], name.get("xml:lang")]


def _lang_matches(langs: Sequence[str]) -> pl.Expr:
    """SPARQL LANGMATCHES(tag, L) for any L of ``langs``: equal, or L followed by ``-``."""
    col = pl.col("lang")
    expr = pl.lit(False)
    for tag in langs:
        expr = expr | (col == tag) | col.str.starts_with(f"{tag}-")
    return expr


def validate_name_rows(raw: list[list], requested: set[str] | None,
                       langs: Sequence[str]) -> tuple[pl.DataFrame, dict, dict]:
    """Raw rows ``[inat id, item IRI, property, value, language tag]`` → (names in
    :data:`TAXON_NAMES_SCHEMA`, dropped counts by reason, dropped examples), by the rules of
    the module docstring (step 3). ``requested=None`` accepts every id.

    Parameters
    ----------
    raw : list[list]
        Rows ``[inat id, item IRI, property, value, language tag]``.
    requested : set[str] or None
        The iNaturalist ids asked for (None: any).
    langs : Sequence[str]
        The languages kept.

    Returns
    -------
    tuple[polars.DataFrame, dict, dict]
        Raw rows ``[inat id, item IRI, property, value, language tag]`` → (names in
        :data:`TAXON_NAMES_SCHEMA`, dropped counts by reason, dropped examples), by the
        rules of the module docstring (step 3).
    """
    df = pl.DataFrame(raw, schema={"inat": pl.String, "item": pl.String, "property": pl.String,
                                   "value": pl.String, "tag": pl.String}, orient="row")
    df = df.with_row_index("_row").with_columns(
        pl.col("item").str.extract(rf"^{ENTITY_IRI.replace('.', '[.]')}(Q[1-9][0-9]*)$", 1).alias("qid"),
        pl.col("value").str.replace_all(r"\s+", " ").str.strip_chars().alias("name"),
        pl.col("property").replace_strict(_KIND, default=None).alias("kind"),
        pl.col("tag").str.to_lowercase().alias("lang"),
    )
    is_vern = pl.col("kind") == "vernacular"
    reason = (
        pl.when(pl.col("inat").is_null() | ~pl.col("inat").str.contains(r"^[1-9][0-9]*$")
                | (pl.lit(False) if requested is None else ~pl.col("inat").is_in(sorted(requested))))
        .then(pl.lit("id_not_requested"))
        .when(pl.col("qid").is_null()).then(pl.lit("item_not_a_qid"))
        .when(pl.col("kind").is_null()).then(pl.lit("unknown_property"))
        .when(pl.col("name").is_null() | (pl.col("name") == "")).then(pl.lit("empty_name"))
        .when(is_vern & (pl.col("lang").is_null() | ~pl.col("lang").str.contains(_LANG_PATTERN)))
        .then(pl.lit("bad_lang_tag"))
        .when(is_vern & ~_lang_matches(langs)).then(pl.lit("lang_not_requested"))
        .when(~is_vern & pl.col("lang").is_not_null()).then(pl.lit("scientific_name_with_lang_tag"))
    )
    df = df.with_columns(reason.alias("_drop"))
    bad = df.filter(pl.col("_drop").is_not_null())
    counts = {r: int(n) for r, n in bad.group_by("_drop").len().sort("_drop").iter_rows()}
    examples = {r: [f"{row['inat']} {row['item']} {row['property']} {row['value']!r}@{row['tag']}"
                    for row in g.sort("_row").head(5).iter_rows(named=True)]
                for (r,), g in bad.group_by("_drop", maintain_order=True)}
    good = df.filter(pl.col("_drop").is_null()).select(
        (pl.lit(INAT_PREFIX) + pl.col("inat")).alias("node_id"), "name", "kind",
        pl.when(is_vern).then(pl.col("lang")).otherwise(pl.lit("la")).alias("lang"), "qid", "property")
    good = good.unique().sort("node_id", "kind", "name", "lang", "qid", "property")
    return good.cast(TAXON_NAMES_SCHEMA), counts, examples


def fetch_inat_taxon_names(
    client: SparqlClient,
    ids: Iterable[int | str],
    *,
    langs: Sequence[str] = ("en",),
    batch_size: int = DEFAULT_NAME_BATCH_SIZE,
    checkpoint: BatchCheckpoint | str | None = None,
    progress: Callable[[str], None] | None = None,
) -> WikidataTaxonNames:
    """Fetch the Wikidata names of iNaturalist taxa ``ids`` (module docstring).

    Parameters
    ----------
    client : SparqlClient
    ids : iterable of int or str
        iNaturalist taxon ids (``49591`` or ``"49591"``); anything else raises ``ValueError``
        naming it.
    langs : sequence of str
        Languages of the common names (lower-case BCP-47 tags, validated).
    batch_size : int
        Ids per query.
    checkpoint : BatchCheckpoint or path, optional
        Where finished batches are stored, to resume an interrupted run.
    progress : Callable[[str], None], optional
        Whether to show a progress bar.

    Returns
    -------
    WikidataTaxonNames
        The names, with what was dropped and why.
    """
    if isinstance(langs, str):
        raise ValueError(f"langs must be a list of language tags, not the string {langs!r}")
    langs = sorted({language_tag(x, where=f"langs[{i}]") for i, x in enumerate(langs)})
    if not langs:
        raise ValueError("langs: give at least one language for common names (e.g. ['en'])")
    if batch_size < 1:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    requested: list[str] = []
    for i, x in enumerate(ids):
        s = str(x) if isinstance(x, int) and not isinstance(x, bool) else x
        if not isinstance(s, str) or not EXTERNAL_ID_RE.fullmatch(s):
            raise ValueError(f"ids[{i}]: {x!r} is not an iNaturalist taxon id (a positive integer)")
        requested.append(s)
    requested = sorted(set(requested), key=int)
    if checkpoint is not None and not isinstance(checkpoint, BatchCheckpoint):
        checkpoint = BatchCheckpoint(checkpoint)
    runner = BatchRunner(client, checkpoint, progress)
    t0 = time.perf_counter()
    raw = runner.run(QUERY, requested, batch_size, row=_raw_row,
                     render_batch=lambda batch: render(QUERY, external_ids=batch, langs=langs)) if requested else []
    names, dropped, examples = validate_name_rows(raw, set(requested), langs)
    times = sorted(runner.query_times)
    by_kind = {k: int(n) for k, n in names.group_by("kind").len().sort("kind").iter_rows()}
    info = {
        "method": "sparql",
        "query": QUERY,
        "endpoint": client.endpoint,
        "user_agent": client.agent,
        "langs": langs,
        "batch_size": batch_size,
        "ids_requested": len(requested),
        "ids_with_names": names["node_id"].n_unique(),
        "items": names["qid"].n_unique(),
        "rows_returned": len(raw),
        "rows": names.height,
        "rows_by_kind": by_kind,
        "rows_by_property": {p: int(n) for p, n in names.group_by("property").len().sort("property").iter_rows()},
        "dropped": dropped,
        "dropped_examples": examples,
        "batches_queried": runner.batches_run,
        "batches_from_checkpoint": runner.batches_resumed,
        "query_time_first": times[0] if times else None,
        "query_time_last": times[-1] if times else None,
        "requests": client.summary(),
        "seconds": round(time.perf_counter() - t0, 3),
    }
    return WikidataTaxonNames(names=names, info=info)
