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
``<data dir>/scores/<file key>/`` and shows in its metadata the citation, the leaderboard
and the two figures inline. The asset check ``scored_fraction`` fails (severity ERROR)
when fewer than ``min_scored_fraction`` of the rows were scored; a file of which no row
scores fails the run (nothing is materialised) — never a green run with an empty
``best_model``.
"""

import base64
from pathlib import Path

import dagster as dg

from assets.common.automation import RESCORE_ON_NEW_SNAPSHOT
from assets.common.metadata import table_metadata
from assets.common.resources import ScoringResource, SnapshotStoreResource
from assets.common.tags import TAXOFORGE_TEAM
from assets.scoring.folders import taxonomy_for_file, taxonomy_name
from assets.snapshots.assets import SNAPSHOTS
from taxoforge.scores.readers.files import OUTPUT_SUFFIXES

__all__ = ["SUFFIXES", "SCORED_TAXONOMIES", "ScoreFileConfig", "model_output_files", "model_output_scores",
           "scores_asset_key", "partitions_for", "result_folder", "taxonomy_rule"]

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


#: The leaderboard columns the UI's table shows, with what they mean; every column (text
#: measures, intervals, breakdowns) is in the run's ``leaderboard.csv`` / ``.parquet``.
UI_LEADERBOARD_COLUMNS = {
    "model": None, "dataset": None, "prompt": None,
    "n": "answers scored", "abstained": "answers that named no taxon (scored as the root)",
    "accuracy": "share of answers on the ground truth's node (0-1)",
    "hP": "hierarchical precision (mean per answer)", "hR": "hierarchical recall (mean per answer)",
    "hF": "harmonic mean of mean hP and mean hR",
    "HCA": "hierarchical consistent accuracy (%)", "MTA": "mean taxonomic accuracy over the ranks (%)",
}


def _leaderboard_table(board):
    """The leaderboard's headline columns (:data:`UI_LEADERBOARD_COLUMNS`), numbers to three
    decimals: a table narrow enough to read and sort in the UI without scrolling sideways."""
    import polars as pl

    cols = [c for c in UI_LEADERBOARD_COLUMNS if c in board.columns]
    floats = [c for c in cols if board.schema[c].is_float()]
    return board.select(cols).with_columns(pl.col(floats).round(3))


def _inline_png(data: bytes, alt: str) -> str:
    return f"![{alt}](data:image/png;base64,{base64.b64encode(data).decode('ascii')})"


def _figures_markdown(run) -> str:
    """The two figures as PNG data URIs in Markdown (a smaller rendering than the files')."""
    from taxoforge.scores.reports.figures import FIGURE_CAPTIONS, figure_bytes, hp_hr_figure, ranks_figure

    import matplotlib.pyplot as plt

    parts = []
    for name, make in (("hp_vs_hr", hp_hr_figure), ("model_ranks", ranks_figure)):
        fig = make(run.leaderboard)
        if fig is None:  # no dataset × prompt group with two models: nothing to rank
            continue
        try:
            parts.append(f"**{name}** — {FIGURE_CAPTIONS[name]}\n\n{_inline_png(figure_bytes(fig, 'png', dpi=80), name)}")
        finally:
            plt.close(fig)
    return "\n\n".join(parts)


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
    metadata = {
        "file": dg.MetadataValue.path(str(path)),
        "results": dg.MetadataValue.path(str(out.resolve())),
        "taxonomy": cited.name,
        "taxonomy_ref": cited.ref,
        "taxonomy_store": cited.citation.store_label or "(not published)",
        "taxonomy_rule": how,
        "snapshot_asset": f"{cited.name}_snapshot" if taxonomy is not None else "(none in this code location)",
        "citation": dg.MetadataValue.json(cited.citation.as_dict()),
        "taxonomy_version": info["taxonomy_version"],
        "rows": info["rows"], "scored": info["scored"], "bad_rows": info["bad_rows"],
        "scored_fraction": float(run.scored_fraction),
        "abstentions": info["abstentions"],
        "bad_rows_by_reason": dg.MetadataValue.json(info["bad_rows_by_reason"]),
        "mapping_config_id": info["mapping_config_id"],
        "mapping_config": dg.MetadataValue.json(info["mapping_config"]),
        "mapping_index": dg.MetadataValue.json(info["mapping_index"]),
        "leaderboard": table_metadata(_leaderboard_table(run.leaderboard),
                                      descriptions={c: d for c, d in UI_LEADERBOARD_COLUMNS.items() if d}),
    }
    if not info["scored"]:
        raise dg.Failure(
            description=f"{key}: no row was scored against {cited.ref} ({info['rows']} rows; {reasons}). "
                        f"Is it the right taxonomy ({how})? Put a taxonomy.txt naming the right one in its folder.",
            metadata=metadata)
    metadata.update({
        "best_model": str(best.get("model", "")), "best_hF": round(float(best.get("hF") or 0.0), 3),
        "figures": dg.MetadataValue.md(_figures_markdown(run)),
        "hp_vs_hr": dg.MetadataValue.path(str(out.resolve() / "hp_vs_hr.png")),
        "model_ranks": dg.MetadataValue.path(str(out.resolve() / "model_ranks.png")),
    })
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
