"""Scoring in Dagster: every model-output file dropped into a folder is a partition of
``model_output_scores``.

The files live in ``ScoringResource.outputs_dir`` (default ``<data dir>/model_outputs/``, env
``TAXOFORGE_MODEL_OUTPUTS_DIR``); each is a partition of the dynamic partitions
``model_output_files``, keyed by its path relative to that folder. The sensor that adds the
partitions and requests one run of ``score_model_outputs`` per new or changed file is
``model_outputs_sensor`` in :mod:`pipelines.sensors`.

``model_output_scores`` (one partition per file) scores the file with
:func:`taxoforge.scores.run.score_file` against its input ``imagenet1k_taxonomy`` (loaded by
the IO manager, so it must have been materialised; ``ScoringResource.taxonomy`` or the run
config can name another snapshot or folder to score against instead), writes ``scores.parquet``, ``leaderboard.md/.parquet``, ``bad_rows.parquet``,
``run.json`` and the PNG plots to ``<data dir>/scores/<file key>/`` and shows the leaderboard
as Markdown.
"""


from pathlib import Path

import dagster as dg

from assets.common.resources import ScoringResource
from assets.common.tags import TAXOFORGE_TEAM
from taxoforge.trees.tables import TreeTables

#: The file kinds scored (the sensor picks up only these).
SUFFIXES = (".jsonl", ".ndjson", ".csv", ".tsv", ".parquet")

model_output_files = dg.DynamicPartitionsDefinition(name="model_output_files")


class ScoreFileConfig(dg.Config):
    """Per-run settings; ``taxonomy`` (a snapshot reference or a folder) scores against that
    instead of the resource's choice (empty: the resource's, else the ``imagenet1k_taxonomy`` input)."""

    taxonomy: str = ""
    similarity: str = "ratio"
    k: int = 10
    temperature: float | None = None  # None: the calibrated temperature of the similarity measure
    meteor: bool = True


def result_folder(scores_dir: str, key: str) -> Path:
    """``<scores dir>/<key with / replaced by __>``."""
    return Path(scores_dir) / key.replace("/", "__")


@dg.asset(
    group_name="scoring",
    owners=[TAXOFORGE_TEAM],
    kinds={"python", "parquet"},
    partitions_def=model_output_files,
    description=(
        "Taxonomy-aware scores of one model-output file (a partition per file dropped into the "
        "model-outputs folder): answers mapped to nodes with paper 000 Alg. 1, hP/hR/hF, accuracy "
        "and text measures per sample, a model × dataset × prompt leaderboard and plots."
    ),
)
def model_output_scores(context: dg.AssetExecutionContext, config: ScoreFileConfig,
                        scoring: ScoringResource, imagenet1k_taxonomy: TreeTables) -> dg.MaterializeResult:
    from taxoforge.scores.mapping import MappingConfig
    from taxoforge.scores.run import score_file

    key = context.partition_key
    path = Path(scoring.outputs_dir) / key
    taxonomy = config.taxonomy or scoring.taxonomy or imagenet1k_taxonomy
    out = result_folder(scoring.scores_dir, key)
    run = score_file(path, taxonomy, out_dir=out, meteor=config.meteor,
                     config=MappingConfig(similarity=config.similarity, k=config.k, temperature=config.temperature))
    info = run.info
    best = run.leaderboard.row(0, named=True) if run.leaderboard.height else {}
    context.log.info(f"{path}: {info['scored']} of {info['rows']} rows scored, {info['bad_rows']} bad rows")
    return dg.MaterializeResult(metadata={
        "file": dg.MetadataValue.path(str(path)),
        "results": dg.MetadataValue.path(str(out.resolve())),
        "rows": info["rows"], "scored": info["scored"], "bad_rows": info["bad_rows"],
        "abstentions": info["abstentions"],
        "bad_rows_by_reason": dg.MetadataValue.json(info["bad_rows_by_reason"]),
        "taxonomy_version": info["taxonomy_version"],
        "mapping_config_id": info["mapping_config_id"],
        "mapping_config": dg.MetadataValue.json(info["mapping_config"]),
        "best_model": str(best.get("model", "")), "best_hF": float(best.get("hF", float("nan"))),
        "leaderboard": dg.MetadataValue.md(run.markdown()),
    })
