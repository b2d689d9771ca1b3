"""The Dagster code location: every asset and asset check of the ``assets`` package, loaded by
Dagster's own module loaders, with the jobs, schedules, sensors and resources of ``pipelines``.

Imports run one way: ``pipelines`` → ``assets`` → ``taxoforge``. A new module in ``assets/``
is picked up without being named here.
"""

from __future__ import annotations

import dagster as dg

import assets
from pipelines.jobs import JOBS
from pipelines.resources import default_resources
from pipelines.schedules import ops_heartbeat, rebuild_jobs, rebuild_schedules
from pipelines.sensors import SENSORS

__all__ = ["build_definitions", "defs"]


def build_definitions(data_dir: str | None = None) -> dg.Definitions:
    """The code location; every path under ``data_dir`` (default ``$TAXOFORGE_DATA_DIR`` or
    ``data``). Schedules and rebuild jobs read their settings from the environment now."""
    loaded = dg.load_assets_from_package_module(assets)
    rebuilds = rebuild_jobs([k for a in loaded for k in a.keys])
    return dg.Definitions(
        assets=loaded,
        asset_checks=dg.load_asset_checks_from_package_module(assets),
        jobs=[*JOBS, *rebuilds],
        schedules=[ops_heartbeat, *rebuild_schedules(rebuilds)],
        sensors=SENSORS,
        resources=default_resources(data_dir),
    )


defs = build_definitions()
