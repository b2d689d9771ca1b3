"""``run_failure_log``: failed runs made visible outside the UI.

It fires on every failed run of the code location, logs the failure (job, run id, the
failing steps and the first error message) to the daemon's log at ERROR level and appends
one JSON line to ``<data dir>/ops/run_failures.jsonl`` — a file a cron job, a mail script or
a chat hook can watch. It also says whether the daemon will retry the run
(``dagster/will_retry``), so a retried flake is not mistaken for an outage.
"""


import json
import os
from datetime import datetime, timezone
from pathlib import Path

import dagster as dg

from assets.common.resources import DataDirResource

__all__ = ["run_failure_log", "failure_log_path", "failure_record"]


def failure_log_path(data_dir: DataDirResource) -> Path:
    """``<data dir>/ops/run_failures.jsonl``."""
    return data_dir.folder("ops", "run_failures.jsonl")


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
def run_failure_log(context: dg.RunFailureSensorContext, data_dir: DataDirResource) -> None:
    rec = failure_record(context)
    retry = " (will be retried)" if rec["will_retry"] else ""
    context.log.error(
        f"run {rec['run_id']} of job {rec['job']} failed{retry}: steps {rec['failed_steps'] or '-'}; "
        f"{rec['error'] or rec['message']}")
    _append_jsonl(failure_log_path(data_dir), rec)
