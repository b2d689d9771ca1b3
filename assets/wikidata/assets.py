"""Wikidata: the subclass-of taxonomy behind OVEN's entities (Snæbjarnarson et al. 2025 [1] §4), and label links.

``wikidata_graph`` (SPARQL from seeds, or a local dump file) → ``wikidata_tree`` →
``wikidata_links`` (with ``wikidata_labels``). The domain logic is
:mod:`taxoforge.sources.wikidata`; these are thin wrappers.
"""

import json
from datetime import timedelta

from functools import partial

import dagster as dg
import polars as pl

from assets.common.checks import tree_checks
from assets.common.metadata import markdown_preview, tree_metadata
from assets.common.resources import WikidataSparqlResource
from assets.common.tags import TAXOFORGE_TEAM
from taxoforge.sources.wikidata.checkpoint import BatchCheckpoint
from taxoforge.sources.wikidata.dump import read_dump
from taxoforge.sources.wikidata.exclusions import exclusion_node_ids
from taxoforge.sources.wikidata.extract import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_LABEL_BATCH_SIZE,
    ROOT_QID,
    extract_from_seeds,
    read_seed_qids,
)
from taxoforge.sources.wikidata.graph import WikidataGraph
from taxoforge.sources.wikidata.linking import link_report, link_to_wikidata, read_name_label_set, read_qid_label_set
from taxoforge.sources.wikidata.tree import build_wikidata_tree
from taxoforge.trees.tables import TreeTables

GROUP = "wikidata"

#: ``@dg.asset`` with what every asset of this domain shares.
wikidata_asset = partial(dg.asset, group_name=GROUP, owners=[TAXOFORGE_TEAM], kinds={"python", "parquet"}, code_version="1")


class WikidataGraphConfig(dg.Config):
    """Where the graph comes from. With ``input_file`` set, a local dump (N-Triples or Turtle,
    plain/.gz/.bz2) is read offline; otherwise the ``wikidata_sparql`` resource's endpoint (or
    ``endpoint``) is queried with a User-Agent carrying the resource's ``contact`` (or ``contact``). ``seed_qids``/``seed_qids_file`` (QIDs; a file with a ``qid`` column such as OVEN's list, or
    one QID per line) give the entities; a dump without seeds yields the whole subclass-of graph."""

    endpoint: str | None = None  # overrides the wikidata_sparql resource's endpoint
    contact: str | None = None  # overrides its contact (put into the User-Agent)
    input_file: str | None = None
    input_format: str | None = None  # "nt" | "ttl"; guessed from the file name
    seed_qids: list[str] = []
    seed_qids_file: str | None = None
    root: str = ROOT_QID
    lang: str = "en"
    batch_size: int = DEFAULT_BATCH_SIZE
    label_batch_size: int = DEFAULT_LABEL_BATCH_SIZE
    resume: bool = True  # reuse finished batches from the resource's checkpoint folder
    # with input_file: the kept items' identifier claims (P3151, P10585, P846, P685, P8814) in the same pass
    identifiers: bool = True


class WikidataTreeConfig(dg.Config):
    """The graph→tree step (docs/method.md#trees): tie seed, cycle policy and the exclusion list (the
    documented default list of :mod:`taxoforge.sources.wikidata.exclusions`, a file of QIDs
    with reasons, and extra QIDs)."""

    tie_seed: int = 0
    cycle_policy: str = "dfs_back_edges"
    use_default_exclusions: bool = True
    exclusion_file: str | None = None
    exclude: list[str] = []


class WikidataLabelsConfig(dg.Config):
    """Label sets to link: ``qid_label_sets`` are ``qid<TAB>label`` files (e.g. OVEN's);
    ``name_label_sets`` are class-name files (``class_name`` CSV/TSV, or ``path.json#key`` for a
    clip_benchmark JSON)."""

    qid_label_sets: list[str] = []
    name_label_sets: list[str] = []


def _info_table(info: dict) -> pl.DataFrame:
    return pl.DataFrame({"info_json": [json.dumps(info, sort_keys=True, default=str)]})


@wikidata_asset(
    kinds={"python", "sparql", "parquet"},
    # rebuilt weekly (over SPARQL or from the weekly dump): one missed week warns, two fail
    freshness_policy=dg.FreshnessPolicy.time_window(warn_window=timedelta(days=8), fail_window=timedelta(days=15)),
    description=(
        "Wikidata's instance-of (P31) and subclass-of (P279) edges for the configured seed entities, "
        "up to Q35120 'entity', with English labels and aliases: over SPARQL (polite, resumable "
        "batches; resource `wikidata_sparql`) or from a local dump file (`input_file`; in the same pass the kept "
        "items' identifier claims — iNaturalist, Catalogue of Life, GBIF, NCBI, WordNet 3.1 — for the crosswalk). "
        "Tables `edges`, `names`, `seeds`, `info` (endpoint and query time, or the file), `identifiers` (dump)."
    ),
)
def wikidata_graph(context: dg.AssetExecutionContext, config: WikidataGraphConfig,
                   wikidata_sparql: WikidataSparqlResource) -> dg.Output[dict]:
    seeds = list(config.seed_qids)
    if config.seed_qids_file:
        seeds += read_seed_qids(config.seed_qids_file)
    if config.input_file:
        graph = read_dump(config.input_file, seed_qids=seeds or None, lang=config.lang, root=config.root,
                          format=config.input_format, identifiers=config.identifiers)
    else:
        if not seeds:
            raise dg.Failure("wikidata_graph: give `seed_qids` or `seed_qids_file` (QIDs) for SPARQL extraction, "
                             "or `input_file` for a local dump")
        client = wikidata_sparql.client(endpoint=config.endpoint, contact=config.contact)
        checkpoint = BatchCheckpoint(wikidata_sparql.checkpoint_dir) if config.resume else None
        graph = extract_from_seeds(client, seeds, root=config.root, lang=config.lang, batch_size=config.batch_size,
                                   label_batch_size=config.label_batch_size, checkpoint=checkpoint,
                                   progress=context.log.debug)
    by_rel = dict(graph.edges.group_by("relation").len().iter_rows())
    md = {
        "method": graph.info["method"],
        "seeds": dg.MetadataValue.int(len(graph.seed_node_ids)),
        "p31_edges": dg.MetadataValue.int(int(by_rel.get("P31", 0))),
        "p279_edges": dg.MetadataValue.int(int(by_rel.get("P279", 0))),
        "names": dg.MetadataValue.int(graph.names.height),
        "info": dg.MetadataValue.json(json.loads(json.dumps(graph.info, default=str))),
        "preview": dg.MetadataValue.md(markdown_preview(graph.edges)),
    }
    if graph.identifiers is not None:
        md["identifier_claims"] = dg.MetadataValue.int(graph.identifiers.height)
    if graph.info["method"] == "sparql":
        md["query_time"] = str(graph.info["query_time_last"])
        md["batches_from_checkpoint"] = dg.MetadataValue.int(graph.info["batches_from_checkpoint"])
    return dg.Output({**graph.tables(), "info": _info_table(graph.info)}, metadata=md)


@wikidata_asset(
    description=(
        "The Wikidata taxonomy of the seeds as one rooted tree: exclusion list (Wikimedia-internal and "
        "meta classes, after YAGO 4.5), cycle removal, longest root path, seeded ties; seeds are leaves "
        "under their classes. Report: every removed edge and tie decision, and seeds with no class."
    ),
)
def wikidata_tree(context: dg.AssetExecutionContext, config: WikidataTreeConfig,
                  wikidata_graph: dict) -> dg.Output[TreeTables]:
    info = json.loads(wikidata_graph["info"]["info_json"][0]) if "info" in wikidata_graph else {}
    graph = WikidataGraph.from_tables(wikidata_graph, info=info)
    exclude = exclusion_node_ids(use_default=config.use_default_exclusions, file=config.exclusion_file,
                                 extra=config.exclude)
    tree = build_wikidata_tree(graph, exclude=exclude, tie_seed=config.tie_seed, cycle_policy=config.cycle_policy)
    md = tree_metadata(tree)
    wd = tree.info["wikidata"]
    md["excluded_in_graph"] = dg.MetadataValue.md(
        "\n".join(f"- `{q}`: {exclude[q]}" for q in wd["excluded_in_graph"]) or "none")
    md["unplaced_seeds"] = dg.MetadataValue.int(wd["unplaced_seeds"])
    md["seeds_in_tree"] = dg.MetadataValue.int(wd["seeds_in_tree"])
    return dg.Output(tree, metadata=md)


@wikidata_asset(
    description="Label sets to link to Wikidata: QID lists (OVEN) and name-only class lists (Food101, SUN397, …).",
)
def wikidata_labels(context: dg.AssetExecutionContext, config: WikidataLabelsConfig) -> dg.Output[pl.DataFrame]:
    parts = [read_qid_label_set(p) for p in config.qid_label_sets]
    for spec in config.name_label_sets:
        path, _, key = spec.partition("#")
        parts.append(read_name_label_set(path, key=key or None))
    schema = {"dataset": pl.String, "label_id": pl.String, "label_text": pl.String, "external_id": pl.String}
    labels = pl.concat(parts) if parts else pl.DataFrame(schema=schema)
    counts = labels.group_by("dataset").len().sort("dataset").rename({"len": "labels"})
    return dg.Output(labels, metadata={"labels": dg.MetadataValue.int(labels.height),
                                       "datasets": dg.MetadataValue.md(markdown_preview(counts, max_rows=50))})


@wikidata_asset(
    description=(
        "Every label linked to the Wikidata tree: by QID, else exact, else normalised English label or "
        "alias. Ambiguous labels (several items share the name) and unmatched ones are reported."
    ),
)
def wikidata_links(context: dg.AssetExecutionContext, wikidata_labels: pl.DataFrame,
                   wikidata_tree: TreeTables) -> dg.Output[pl.DataFrame]:
    links = link_to_wikidata(wikidata_labels, wikidata_tree)
    rep = link_report(links)
    per = pl.DataFrame([{"dataset": d, **{k: v for k, v in s.items() if k != "by_method"}}
                        for d, s in rep["per_dataset"].items()]) if rep["per_dataset"] else pl.DataFrame()
    return dg.Output(links, metadata={
        "labels": dg.MetadataValue.int(rep["summary"]["labels"]),
        "linked": dg.MetadataValue.int(rep["summary"]["linked"]),
        "ambiguous": dg.MetadataValue.int(rep["summary"]["ambiguous"]),
        "unmatched": dg.MetadataValue.int(rep["summary"]["unmatched"]),
        "by_method": dg.MetadataValue.json(rep["summary"]["by_method"]),
        "per_dataset": dg.MetadataValue.md(markdown_preview(per, max_rows=50) if per.height else "no labels"),
        "ambiguous_preview": dg.MetadataValue.md(markdown_preview(rep["ambiguous"])),
        "unmatched_preview": dg.MetadataValue.md(markdown_preview(rep["unmatched"])),
    })


wikidata_tree_checks = tree_checks("wikidata_tree")


@dg.asset_check(asset="wikidata_tree", name="wikidata_seeds_are_placed", blocking=False,
                description="Every seed entity is in the tree, or reported (no class, or excluded).")
def wikidata_seeds_are_placed(wikidata_tree: TreeTables) -> dg.AssetCheckResult:
    wd = wikidata_tree.info.get("wikidata", {})
    seeds = wd.get("seeds") or 0
    placed = wd.get("seeds_in_tree", 0)
    unplaced = wd.get("unplaced_seeds", 0)
    return dg.AssetCheckResult(
        passed=placed + unplaced >= seeds,
        metadata={"seeds": int(seeds), "in_tree": int(placed), "without_class": int(unplaced)},
    )
