"""``ops_heartbeat``: the deployment self-test (``ops_smoke``) every minute, to check the daemon's
scheduler; off by default."""

import dagster as dg

from assets.operations.assets import ops_smoke_job

__all__ = ["ops_heartbeat"]

ops_heartbeat = dg.ScheduleDefinition(
    name="ops_heartbeat",
    job=ops_smoke_job,
    cron_schedule="* * * * *",
    execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="Every minute: materialise ops_smoke. Off by default; turn it on to check the daemon's scheduler.",
)
