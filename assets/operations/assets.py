"""Operations: a deployment self-test (``ops_smoke``).

``ops_smoke`` is a tiny asset that proves a deployment works end to end: the code server
loads, the run launcher starts a run, the data volume is writable and the instance stores
events; with config ``fail: true`` it fails on purpose, to check that failures reach
``data/ops/run_failures.jsonl``. Its job ``ops_smoke_job`` is here; the ``ops_heartbeat``
schedule that runs it every minute (stopped by default) in :mod:`assets.operations.schedules`,
and the run-failure sensor in :mod:`assets.operations.sensors`.
"""

import os
import platform
import socket
import sys
from importlib import metadata

import dagster as dg
import polars as pl

from assets.common.resources import DataDirResource

OWNER = "team:operations"


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


class OpsSmokeConfig(dg.Config):
    """``fail: true`` makes the run fail on purpose: a check that failure alerting works."""

    fail: bool = False


@dg.asset(
    group_name="operations",
    owners=[OWNER],
    kinds={"python"},
    description="Deployment self-test: one row describing where and with what the run ran "
                "(host, Python, taxoforge and Dagster versions, instance storage). Cheap; "
                "materialise it to check a new deployment end to end. With config `fail: true` "
                "it fails on purpose, to check that failed runs are reported.",
)
def ops_smoke(context: dg.AssetExecutionContext, config: OpsSmokeConfig, data_dir: DataDirResource) -> dg.Output:
    if config.fail:
        raise RuntimeError("ops_smoke failed on purpose (config fail: true) to check failure alerting")
    instance = context.instance
    storage = type(instance.run_storage).__name__
    row = {
        "host": socket.gethostname(),
        "python": platform.python_version(),
        "taxoforge": _version("taxoforge"),
        "dagster": _version("dagster"),
        "run_storage": storage,
        "event_log_storage": type(instance.event_log_storage).__name__,
        "run_id": context.run_id,
        "data_dir": os.path.abspath(data_dir.path),
        "executable": sys.executable,
    }
    df = pl.DataFrame([row])
    return dg.Output(df, metadata={
        "n_rows": df.height,
        "run_storage": storage,
        "dagster_version": row["dagster"],
        "taxoforge_version": row["taxoforge"],
        "preview": dg.MetadataValue.md("\n".join(f"- **{k}**: `{v}`" for k, v in row.items())),
    })


ops_smoke_job = dg.define_asset_job(
    "ops_smoke_job", selection=dg.AssetSelection.assets("ops_smoke"),
    description="Materialises ops_smoke: a deployment self-test that takes a second.",
)
