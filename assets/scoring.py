"""Scoring in Dagster: every model-output file dropped into a folder gets its own scoring run.

``model_outputs_sensor`` watches ``ScoringResource.outputs_dir`` (default
``<data dir>/model_outputs/``, env ``TAXOFORGE_MODEL_OUTPUTS_DIR``) for ``.jsonl``, ``.csv``,
``.tsv`` and ``.parquet`` files. A new file (or a changed one: its size or modification
time differs) becomes a partition of the dynamic partitions ``model_output_files``, keyed
by its path relative to the folder, and one run of ``score_model_outputs`` is requested for
it. Files modified in the last two seconds wait for the next tick (write, then rename).

``model_output_scores`` (one partition per file) scores the file with
:func:`taxoforge.scores.run.score_file` against ``ScoringResource.taxonomy`` (default: the
``imagenet1k_taxonomy`` asset; a run config can name another snapshot or folder), writes
``scores.parquet``, ``leaderboard.md/.parquet``, ``bad_rows.parquet``, ``run.json`` and the
PNG plots to ``<data dir>/scores/<file key>/`` and shows the leaderboard as Markdown.
"""


import json
import time
from pathlib import Path

import dagster as dg

from assets.common.resources import ScoringResource

OWNERS = ["team:taxoforge"]
SUFFIXES = (".jsonl", ".ndjson", ".csv", ".tsv", ".parquet")
MIN_AGE_S = 2.0

model_output_files = dg.DynamicPartitionsDefinition(name="model_output_files")


class ScoreFileConfig(dg.Config):
    """Per-run settings; empty ``taxonomy`` means the resource's default."""

    taxonomy: str = ""
    similarity: str = "ratio"
    k: int = 10
    temperature: float = 100.0
    meteor: bool = True


def result_folder(scores_dir: str, key: str) -> Path:
    """``<scores dir>/<key with / replaced by __>``."""
    return Path(scores_dir) / key.replace("/", "__")


@dg.asset(
    group_name="scoring",
    owners=OWNERS,
    kinds={"python", "parquet"},
    partitions_def=model_output_files,
    deps=["imagenet1k_taxonomy"],
    description=(
        "Taxonomy-aware scores of one model-output file (a partition per file dropped into the "
        "model-outputs folder): answers mapped to nodes with paper 000 Alg. 1, hP/hR/hF, accuracy "
        "and text measures per sample, a model × dataset × prompt leaderboard and plots."
    ),
)
def model_output_scores(context: dg.AssetExecutionContext, config: ScoreFileConfig,
                        scoring: ScoringResource) -> dg.MaterializeResult:
    from taxoforge.scores.mapping import MappingConfig
    from taxoforge.scores.run import score_file

    key = context.partition_key
    path = Path(scoring.outputs_dir) / key
    taxonomy = config.taxonomy or scoring.taxonomy
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


score_model_outputs = dg.define_asset_job(
    "score_model_outputs", selection=[model_output_scores], partitions_def=model_output_files,
    description="Score one model-output file (partition = its path under the model-outputs folder).",
)


def _scan(folder: Path, now: float) -> dict[str, str]:
    found = {}
    for p in sorted(folder.rglob("*")):
        if not p.is_file() or p.suffix.lower() not in SUFFIXES or any(part.startswith(".") for part in p.relative_to(folder).parts):
            continue
        st = p.stat()
        if now - st.st_mtime < MIN_AGE_S:
            continue
        found[p.relative_to(folder).as_posix()] = f"{st.st_mtime_ns}-{st.st_size}"
    return found


@dg.sensor(job=score_model_outputs, minimum_interval_seconds=30, default_status=dg.DefaultSensorStatus.RUNNING,
           description="New or changed files in the model-outputs folder → one scoring run per file.")
def model_outputs_sensor(context: dg.SensorEvaluationContext, scoring: ScoringResource):
    folder = Path(scoring.outputs_dir)
    if not folder.is_dir():
        return dg.SkipReason(f"{folder} does not exist yet: drop model-output files there")
    seen = json.loads(context.cursor) if context.cursor else {}
    found = _scan(folder, time.time())
    changed = {k: sig for k, sig in found.items() if seen.get(k) != sig}
    if not changed:
        return dg.SkipReason(f"no new files in {folder}")
    known = set(context.instance.get_dynamic_partitions(model_output_files.name))
    add = [k for k in changed if k not in known]
    return dg.SensorResult(
        run_requests=[dg.RunRequest(run_key=f"{k}@{sig}", partition_key=k) for k, sig in changed.items()],
        dynamic_partitions_requests=[model_output_files.build_add_request(add)] if add else [],
        cursor=json.dumps({**seen, **found}, sort_keys=True),
    )


defs = dg.Definitions(assets=[model_output_scores], jobs=[score_model_outputs], sensors=[model_outputs_sensor])
