"""Sensors: failed runs made visible outside the UI, and new model-output files scored.

``run_failure_log``
    Fires on every failed run of the code location. It logs the failure (job, run id, the
    failing steps and the first error message) to the daemon's log at ERROR level and
    appends one JSON line to ``<data dir>/ops/run_failures.jsonl`` — a file a cron job, a
    mail script or a chat hook can watch. It also says whether the daemon will retry the
    run (``dagster/will_retry``), so a retried flake is not mistaken for an outage.

``model_outputs_sensor``
    Watches ``ScoringResource.outputs_dir`` (default ``<data dir>/model_outputs/``) for
    ``.jsonl``, ``.ndjson``, ``.csv``, ``.tsv`` and ``.parquet`` files and picks each one's
    taxonomy by its folder (:mod:`taxoforge.scores.folders`): the nearest ``taxonomy.txt``
    in its folder or above (one line: ``NAME``, ``NAME@VERSION``, ``sha256:HEX`` or a tree
    folder), else a first-level folder named after a taxonomy (``model_outputs/inaturalist/…``),
    else ``ScoringResource.taxonomy`` (``imagenet1k``). A new file — or a changed one: its
    size, modification time or taxonomy differs — becomes a partition of the scoring asset
    of that taxonomy (``<name>_scores``, downstream of ``<name>_snapshot``; others:
    ``model_output_scores``), keyed by its path relative to the folder, and one run of that
    asset's job is requested for it (:mod:`assets.scoring`). A sidecar that cannot be read
    is logged and its files wait until it is fixed. Files modified in the last two seconds
    wait for the next tick (write, then rename). One file that cannot be taken — a name that is
    not UTF-8, a FIFO, a folder that cannot be read — is logged and skipped; the others are
    scored in the same tick.
"""


import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path

import dagster as dg

from assets.common.resources import ScoringResource
from assets.scoring import SCORED_TAXONOMIES, SUFFIXES, model_output_files, partitions_for, taxonomy_rule
from pipelines.jobs import score_model_outputs, scoring_job_for, scoring_jobs
from pipelines.resources import default_data_dir
from taxoforge.files.drop_folder import scan_drop_folder
from taxoforge.scores.folders import taxonomy_name

__all__ = ["run_failure_log", "failure_log_path", "failure_record", "model_outputs_sensor", "model_outputs_sensor_for"]

#: A model-output file younger than this (seconds) may still be being written.
MIN_AGE_S = 2.0


def failure_log_path(data_dir: str | None = None) -> Path:
    """``<data dir>/ops/run_failures.jsonl`` (data dir: ``$TAXOFORGE_DATA_DIR`` or ``data``)."""
    return Path(data_dir or default_data_dir()) / "ops" / "run_failures.jsonl"


def _error_text(error) -> str:
    """The message of a serialisable error and of every cause under it, outermost first."""
    parts = []
    while error is not None and len(parts) < 5:
        parts.append(error.message.strip())
        error = error.cause
    return " <- caused by: ".join(parts)


def failure_record(context: dg.RunFailureSensorContext) -> dict:
    """The JSON record of one failed run."""
    run = context.dagster_run
    steps = []
    first_error = None
    try:
        for ev in context.get_step_failure_events():
            steps.append(ev.step_key)
            if first_error is None and ev.step_failure_data and ev.step_failure_data.error:
                first_error = _error_text(ev.step_failure_data.error)
    except Exception as exc:  # the record must still be written if events cannot be read
        first_error = first_error or f"(could not read step events: {exc})"
    return {
        "time": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "run_id": run.run_id,
        "job": run.job_name,
        "failed_steps": steps,
        "message": (context.failure_event.message or "").strip(),
        "error": (first_error or "")[:2000],
        "will_retry": run.tags.get("dagster/will_retry", "false") == "true",
        "attempt": int(run.tags.get("dagster/retry_number", "0")) + 1,
        "max_retries": run.tags.get("dagster/max_retries"),
        "tags": {k: v for k, v in run.tags.items() if k.startswith("taxoforge/")},
    }


def _append_jsonl(path: Path, record: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n"
    # One write of one line with O_APPEND: concurrent writers never interleave within a line.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)


@dg.run_failure_sensor(
    name="run_failure_log",
    description="Logs every failed run and appends it to <data dir>/ops/run_failures.jsonl.",
    default_status=dg.DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=30,
)
def run_failure_log(context: dg.RunFailureSensorContext) -> None:
    rec = failure_record(context)
    retry = " (will be retried)" if rec["will_retry"] else ""
    context.log.error(
        f"run {rec['run_id']} of job {rec['job']} failed{retry}: steps {rec['failed_steps'] or '-'}; "
        f"{rec['error'] or rec['message']}")
    _append_jsonl(failure_log_path(), rec)


def _scan(folder: Path, now: float, log=None) -> dict[str, str]:
    """``{path relative to folder: "<mtime ns>-<size>"}`` of the model-output files old enough to
    score; a file that cannot be taken (a name that is not UTF-8, a FIFO, a folder that cannot
    be read) is logged and skipped, and the others are scored
    (:func:`taxoforge.files.drop_folder.scan_drop_folder`)."""
    scan = scan_drop_folder(folder, SUFFIXES, min_age_s=MIN_AGE_S, now=now)
    for what, why in scan.skipped:
        if log is not None:
            log.warning(f"{what}: not scored: {why}")
    return scan.files


def model_outputs_sensor_for(taxonomies) -> dg.SensorDefinition:
    """The sensor routing each file to ``<name>_scores`` when ``name`` is one of ``taxonomies``
    (those with scoring assets in the code location), else to ``model_output_scores``."""
    taxonomies = frozenset(taxonomies)
    jobs = [score_model_outputs, *(scoring_jobs[n] for n in sorted(taxonomies) if n in scoring_jobs)]

    @dg.sensor(name="model_outputs_sensor", jobs=jobs, minimum_interval_seconds=30,
               default_status=dg.DefaultSensorStatus.RUNNING,
               description="New or changed files in the model-outputs folder → one scoring run per file, against "
                           "the taxonomy its folder names (taxonomy.txt, a folder named after a taxonomy, else the "
                           "default). A folder is not an asset, so this stays a sensor.")
    def _sensor(context: dg.SensorEvaluationContext, scoring: ScoringResource):
        return _score_new_files(context, scoring, taxonomies)

    return _sensor


def _score_new_files(context: dg.SensorEvaluationContext, scoring: ScoringResource, taxonomies: frozenset):
    folder = Path(scoring.outputs_dir)
    if not folder.is_dir():
        return dg.SkipReason(f"{folder} does not exist yet: drop model-output files there")
    seen = json.loads(context.cursor) if context.cursor else {}
    found, routes = {}, {}
    for k, sig in _scan(folder, time.time(), context.log).items():
        try:
            rule = taxonomy_rule(scoring, k)
        except (OSError, ValueError) as e:  # an unreadable sidecar: say so, retry on the next tick
            context.log.warning(f"{k}: not scored yet: {e}")
            continue
        if rule is None:
            context.log.warning(f"{k}: no taxonomy (no taxonomy.txt above it, no default): not scored")
            continue
        found[k], routes[k] = f"{sig}|{rule.ref}", rule.ref
    changed = {k: sig for k, sig in found.items() if seen.get(k) != sig}
    if not changed:
        return dg.SkipReason(f"no new files in {folder}")
    adds: dict[str, list[str]] = {}
    requests = []
    for k, sig in changed.items():
        name = taxonomy_name(routes[k])
        parts = partitions_for(routes[k]) if name in taxonomies else model_output_files
        if k not in set(context.instance.get_dynamic_partitions(parts.name)):
            adds.setdefault(parts.name, []).append(k)
        requests.append(dg.RunRequest(run_key=f"{k}@{sig}", partition_key=k,
                                      job_name=(scoring_job_for(name) if name in taxonomies else score_model_outputs).name,
                                      tags={"taxoforge/taxonomy": routes[k]}))
    return dg.SensorResult(
        run_requests=requests,
        dynamic_partitions_requests=[dg.AddDynamicPartitionsRequest(name, keys) for name, keys in adds.items()],
        cursor=json.dumps({**seen, **found}, sort_keys=True),
    )


#: The sensor of a code location that scores against every taxonomy.
model_outputs_sensor = model_outputs_sensor_for(SCORED_TAXONOMIES)
