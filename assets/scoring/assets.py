"""Scoring in Dagster: every model-output file dropped into a folder is scored against the
snapshot its folder names, by an asset downstream of that snapshot's asset.

**Which taxonomy.** The files live in ``ScoringResource.outputs_dir`` (default ``<data
dir>/model_outputs/``, env ``TAXOFORGE_MODEL_OUTPUTS_DIR``). Each is scored against the
taxonomy its folder names (:mod:`assets.scoring.folders`): the nearest ``taxonomy.txt``
sidecar in its folder or a folder above (one line: ``NAME``, ``NAME@VERSION``,
``sha256:HEX`` or a tree folder), else a first-level folder named after a taxonomy
(``model_outputs/inaturalist/…``), else ``ScoringResource.taxonomy`` (default
``imagenet1k``, env ``TAXOFORGE_SCORING_TAXONOMY``).

**Lineage.** For every taxonomy with a snapshot asset (:data:`SCORED_TAXONOMIES`) there is
an asset ``<name>_scores`` downstream of ``<name>_snapshot``, partitioned by the files
scored against it (dynamic partitions ``<name>_model_outputs``, keyed by the path relative
to the outputs folder), materialised by the job ``score_<name>_outputs``. A file whose
folder names anything else (a snapshot no asset of this code location publishes, a tree
folder, a content hash) is a partition of ``model_output_scores`` (job
``score_model_outputs``), which has no upstream asset; its metadata names what it used.
The sensor ``model_outputs_sensor`` (:mod:`assets.scoring.sensors`) routes each new or changed
file to its asset.

**Each run** resolves the taxonomy in the snapshot store (``snapshot_store``; a pinned
version is used as pinned, a bare name means the latest), verifies and cites it, scores
the file (:func:`taxoforge.scores.run.score_file`; the taxonomy's mapping index is built by
the first run that needs it and stored — beside the snapshots of a local store, beside a
tree folder, or under ``ScoringResource.index_dir`` — and memory-mapped by every later run,
see the ``mapping_index`` metadata), writes the results (scores,
leaderboard as Markdown/CSV/LaTeX/Parquet, breakdowns, figures as PNG/PDF/SVG) to
``<data dir>/scores/<file key>/`` and shows in its metadata, first, the leaderboard as
``leaderboard.md`` has it (rank, intervals, significance against the group's best), the best
model and every figure at full size, then the counts, the taxonomy and its citation. The asset check ``scored_fraction`` fails (severity ERROR)
when fewer than ``min_scored_fraction`` of the rows were scored; a file of which no row
scores fails the run (nothing is materialised) — never a green run with an empty
``best_model``.
"""

import base64
from pathlib import Path

import dagster as dg

from assets.common.automation import RESCORE_ON_NEW_SNAPSHOT
from assets.common.resources import ScoringResource, SnapshotStoreResource
from assets.common.tags import TAXOFORGE_TEAM
from assets.scoring.folders import taxonomy_for_file, taxonomy_name
from assets.snapshots.assets import SNAPSHOTS
from taxoforge.scores.readers.files import OUTPUT_SUFFIXES
from taxoforge.scores.reports.leaderboard import GROUP_KEYS
from taxoforge.scores.reports.figures import FIGURE_CAPTIONS, RUN_FIGURES
from taxoforge.scores.reports.tables import INTERVAL_MEASURES, column_header, compact_leaderboard

__all__ = ["SUFFIXES", "SCORED_TAXONOMIES", "ScoreFileConfig", "model_output_files", "model_output_scores",
           "scores_asset_key", "partitions_for", "result_folder", "taxonomy_rule", "leaderboard_table",
           "figures_metadata"]

#: The file kinds scored (the sensor picks up only these).
SUFFIXES = OUTPUT_SUFFIXES
#: Every taxonomy with a snapshot asset ``<name>_snapshot``; each the deployment configures gets
#: ``<name>_scores`` (a test checks that none is missing).
SCORED_TAXONOMIES = tuple(SNAPSHOTS)
CHECK_NAME = "scored_fraction"

#: Partitions of files scored against a taxonomy without a snapshot asset here.
model_output_files = dg.DynamicPartitionsDefinition(name="model_output_files")
_PARTITIONS = {name: dg.DynamicPartitionsDefinition(name=f"{name}_model_outputs") for name in SCORED_TAXONOMIES}


class ScoreFileConfig(dg.Config):
    """Per-run settings. ``taxonomy`` overrides the folder's rule (for
    ``model_output_scores``; for ``<name>_scores`` only a version of ``<name>``);
    ``min_scored_fraction`` (negative: the resource's) is the asset check's threshold."""

    taxonomy: str = ""
    similarity: str = "ratio"
    k: int = 10
    temperature: float | None = None  # None: the calibrated temperature of the similarity measure
    meteor: bool = True
    bootstrap: int = 9999
    min_scored_fraction: float = -1.0


def result_folder(scores_dir: str, key: str) -> Path:
    """``<scores dir>/<key with / replaced by __>``."""
    return Path(scores_dir) / key.replace("/", "__")


def taxonomy_rule(scoring: ScoringResource, key: str):
    """The :class:`~assets.scoring.folders.FolderTaxonomy` of the file ``key``."""
    return taxonomy_for_file(Path(scoring.outputs_dir) / key, scoring.outputs_dir,
                             default=scoring.taxonomy or None, known=SCORED_TAXONOMIES)


def scores_asset_key(ref: str) -> dg.AssetKey:
    """The scoring asset for a taxonomy reference: ``<name>_scores`` when ``<name>`` has a
    snapshot asset here, else ``model_output_scores``."""
    name = taxonomy_name(ref)
    return dg.AssetKey(f"{name}_scores" if name in _PARTITIONS else "model_output_scores")


def partitions_for(ref: str) -> dg.DynamicPartitionsDefinition:
    """The dynamic partitions of the scoring asset of ``ref``."""
    return _PARTITIONS.get(taxonomy_name(ref), model_output_files)


#: What the columns of the leaderboard table mean, by leaderboard column (its headers are
#: ``leaderboard.md``'s: :func:`~taxoforge.scores.reports.tables.column_header`).
LEADERBOARD_COLUMNS = {
    "rank": "rank by {rank_by} within one dataset × prompt (1 = best)",
    "n": "answers scored",
    "accuracy": "answers on the ground truth's node, %",
    "hP": "hierarchical precision (mean per answer)",
    "hR": "hierarchical recall (mean per answer)",
    "hF": "harmonic mean of mean hP and mean hR",
    "mistake_severity": "mean height of the lowest common ancestor of a wrong answer and the truth; lower is better",
    "abstained_pct": "answers that named no taxon (scored as the root), %",
    "harness_agreement": "answers on which the harness's own verdict agrees, %",
    "vs best": "Holm-adjusted paired test of the {rank_by} difference to the group's best on their shared items; "
               "n.s. = not significant at 5 %",
}


def leaderboard_table(board, info: dict) -> dg.TableMetadataValue:
    """The compact leaderboard of ``leaderboard.md`` as a table: rank, each measure with its
    bootstrap interval in brackets, and the significance of its distance to the group's best
    (:func:`taxoforge.scores.reports.tables.compact_leaderboard`), the cells as there; the
    columns the rank rests on (rank, its measure — hF unless the run ranks by another — and vs
    best) come right after the model, dataset and prompt, since the UI's metadata column is
    narrower than the table. Every column of the
    leaderboard is in the run's ``leaderboard.csv`` / ``.parquet``.

    Parameters
    ----------
    board : polars.DataFrame
        The run's leaderboard.
    info : dict
        The run's info (how the intervals were drawn).

    Returns
    -------
    dagster.TableMetadataValue
        One row per model × dataset × prompt, every cell as ``leaderboard.md`` writes it.
    """
    header, rows = compact_leaderboard(board)
    rank_by = info.get("rank_by") or "hF"
    # the UI's metadata column is narrow: the rank, its measure and its significance first, the rest after
    first = [h for h in header if h in GROUP_KEYS] + [h for h in ("rank", column_header(rank_by), "vs best")
                                                       if h in header]
    order = [header.index(h) for h in first] + [i for i, h in enumerate(header) if h not in first]
    header, rows = [header[i] for i in order], [[row[i] for i in order] for row in rows]
    ci = info.get("confidence_intervals") or {}
    interval = (f"; in brackets its bootstrap {100 * ci.get('level', 0.95):.0f} % interval ({ci.get('method')}, "
                f"{ci.get('n_resamples')} resamples, seed {ci.get('seed')})" if ci.get("n_resamples") else "")
    with_interval = {column_header(m) for m in INTERVAL_MEASURES}
    meaning = {column_header(c): text.format(rank_by=rank_by) for c, text in LEADERBOARD_COLUMNS.items()}
    schema = dg.TableSchema(columns=[
        dg.TableColumn(h, "string", description=(meaning.get(h, "") + (interval if h in with_interval else "")) or None)
        for h in header])
    return dg.MetadataValue.table(records=[dg.TableRecord(dict(zip(header, row))) for row in rows], schema=schema)


def figures_metadata(out: Path) -> dict[str, dg.MetadataValue]:
    """Each figure the run wrote to ``out``, at full size: its caption and the PNG file itself,
    inline (the UI opens it in a dialog as wide as the figure, up to 80 % of the window).

    Parameters
    ----------
    out : pathlib.Path
        The run's results folder.

    Returns
    -------
    dict
        ``figure <name>`` → Markdown, for every figure of the run that was drawn.
    """
    found = {}
    for name in RUN_FIGURES:
        png = out / f"{name}.png"
        if png.is_file():
            data = base64.b64encode(png.read_bytes()).decode("ascii")
            found[f"figure {name}"] = dg.MetadataValue.md(
                f"**{name}** — {FIGURE_CAPTIONS[name]}\n\n![{name}](data:image/png;base64,{data})\n\n"
                f"File: `{png.resolve()}` (also `.pdf`, `.svg`)")
    return found


def _score(context: dg.AssetExecutionContext, config: ScoreFileConfig, scoring: ScoringResource,
           snapshot_store: SnapshotStoreResource, taxonomy: str | None):
    from taxoforge.scores.cited_taxonomy import cite_taxonomy
    from taxoforge.scores.statistics.confidence import BootstrapConfig
    from taxoforge.scores.mapping import MappingConfig
    from taxoforge.scores.options import ScoreOptions
    from taxoforge.scores.run import score_file
    from taxoforge.snapshots.errors import SnapshotError

    key = context.partition_key
    path = Path(scoring.outputs_dir) / key
    rule = taxonomy_rule(scoring, key)
    ref = config.taxonomy or (rule.ref if rule else "")
    how = "run config" if config.taxonomy else (f"{rule.rule} {rule.source or ''}".strip() if rule else "")
    if not ref:
        raise dg.Failure(f"{key}: no taxonomy: put a taxonomy.txt naming one in its folder, or set the scoring "
                         "resource's taxonomy")
    if taxonomy is not None and taxonomy_name(ref) != taxonomy:
        raise dg.Failure(f"{key}: its folder names {ref!r} ({how}), not {taxonomy}: it is scored by "
                         f"{scores_asset_key(ref).to_user_string()}")
    try:
        cited = cite_taxonomy(ref, store=snapshot_store.store())
    except SnapshotError as e:
        raise dg.Failure(description=f"{key}: taxonomy {ref!r} ({how}): {e}") from None
    out = result_folder(scoring.scores_dir, key)
    options = ScoreOptions(meteor=config.meteor, index_dir=scoring.index_dir or None,
                           config=MappingConfig(similarity=config.similarity, k=config.k, temperature=config.temperature),
                           ci=BootstrapConfig(n_resamples=config.bootstrap))
    run = score_file(path, cited, out_dir=out, score=options)
    info = run.info
    threshold = config.min_scored_fraction if config.min_scored_fraction >= 0 else scoring.min_scored_fraction
    best = run.leaderboard.row(0, named=True) if run.leaderboard.height else {}
    context.log.info(f"{path}: {info['scored']} of {info['rows']} rows scored against {cited.ref} ({how}), "
                     f"{info['bad_rows']} bad rows")
    reasons = ", ".join(f"{r} {n}" for r, n in sorted(info["bad_rows_by_reason"].items())) or "none"
    # what a person reads first comes first: the leaderboard, the best model, the figures; the
    # counts and the taxonomy next; paths and long JSON last
    metadata = {"leaderboard": leaderboard_table(run.leaderboard, info)}
    if info["scored"]:
        metadata |= {"best_model": str(best.get("model", "")), "best_hF": round(float(best.get("hF") or 0.0), 3)}
        metadata |= figures_metadata(out)
    metadata |= {
        "rows": info["rows"], "scored": info["scored"], "bad_rows": info["bad_rows"],
        "scored_fraction": float(run.scored_fraction),
        "abstentions": info["abstentions"],
        "taxonomy": cited.name,
        "taxonomy_ref": cited.ref,
        "taxonomy_version": info["taxonomy_version"],
        "taxonomy_store": cited.citation.store_label or "(not published)",
        "taxonomy_rule": how,
        "snapshot_asset": f"{cited.name}_snapshot" if taxonomy is not None else "(none in this code location)",
        "mapping_config_id": info["mapping_config_id"],
        "file": dg.MetadataValue.path(str(path)),
        "results": dg.MetadataValue.path(str(out.resolve())),
        "citation": dg.MetadataValue.json(cited.citation.as_dict()),
        "bad_rows_by_reason": dg.MetadataValue.json(info["bad_rows_by_reason"]),
        "mapping_config": dg.MetadataValue.json(info["mapping_config"]),
        "mapping_index": dg.MetadataValue.json(info["mapping_index"]),
    }
    if not info["scored"]:
        raise dg.Failure(
            description=f"{key}: no row was scored against {cited.ref} ({info['rows']} rows; {reasons}). "
                        f"Is it the right taxonomy ({how})? Put a taxonomy.txt naming the right one in its folder.",
            metadata=metadata)
    check = dg.AssetCheckResult(
        check_name=CHECK_NAME, passed=run.scored_fraction >= threshold, severity=dg.AssetCheckSeverity.ERROR,
        metadata={"scored_fraction": float(run.scored_fraction), "threshold": float(threshold),
                  "rows": info["rows"], "scored": info["scored"], "bad_rows_by_reason": dg.MetadataValue.json(
                      info["bad_rows_by_reason"])},
        description=f"{info['scored']} of {info['rows']} rows scored (threshold {100 * threshold:g} %); "
                    f"not scored: {reasons}")
    return dg.MaterializeResult(metadata=metadata, check_results=[check])


_DESCRIPTION = ("Taxonomy-aware scores of one model-output file (a partition per file dropped into the model-outputs "
                "folder) against {what}: answers mapped to nodes with Alg. 1, hP/hR/hF, accuracy and text measures "
                "per sample, a model × dataset × prompt leaderboard with bootstrap 95 % intervals and breakdowns "
                "(HCA, MTA, per rank), figures. The folder's taxonomy.txt (or a folder named after the taxonomy) "
                "says which taxonomy a file is scored against.")


def _check_spec(key: str) -> dg.AssetCheckSpec:
    return dg.AssetCheckSpec(CHECK_NAME, asset=key,
                             description="The share of the file's rows that were scored is at least the threshold "
                                         "(ScoringResource.min_scored_fraction, default 0.95).")


def scores_asset(name: str) -> dg.AssetsDefinition:
    """``<name>_scores``: files scored against the ``<name>`` snapshot, downstream of ``<name>_snapshot``."""
    key = f"{name}_scores"

    @dg.asset(name=key, group_name="scoring", owners=[TAXOFORGE_TEAM], kinds={"python", "parquet"},
              partitions_def=_PARTITIONS[name], deps=[dg.AssetDep(f"{name}_snapshot")],
              check_specs=[_check_spec(key)], automation_condition=RESCORE_ON_NEW_SNAPSHOT,
              description=_DESCRIPTION.format(what=f"the `{name}` snapshot (the latest, or the version the "
                                                   "folder's taxonomy.txt pins)"))
    def _asset(context: dg.AssetExecutionContext, config: ScoreFileConfig, scoring: ScoringResource,
               snapshot_store: SnapshotStoreResource) -> dg.MaterializeResult:
        return _score(context, config, scoring, snapshot_store, name)

    return _asset


@dg.asset(group_name="scoring", owners=[TAXOFORGE_TEAM], kinds={"python", "parquet"},
          partitions_def=model_output_files, check_specs=[_check_spec("model_output_scores")],
          description=_DESCRIPTION.format(what="a taxonomy no snapshot asset of this code location publishes (a "
                                               "snapshot reference, content hash or tree folder its taxonomy.txt "
                                               "names)"))
def model_output_scores(context: dg.AssetExecutionContext, config: ScoreFileConfig, scoring: ScoringResource,
                        snapshot_store: SnapshotStoreResource) -> dg.MaterializeResult:
    return _score(context, config, scoring, snapshot_store, None)
