"""The operations domain: ops_smoke materialises through its job with the code location's
resources, writing where the data folder says."""

import dagster as dg
import polars as pl

from assets.operations.assets import ops_smoke, ops_smoke_job
from pipelines.resources import default_resources


def test_ops_smoke_materialises(tmp_path):
    defs = dg.Definitions(assets=[ops_smoke], jobs=[ops_smoke_job], resources=default_resources(str(tmp_path)))
    result = defs.resolve_job_def("ops_smoke_job").execute_in_process(instance=dg.DagsterInstance.ephemeral())
    assert result.success
    table = pl.read_parquet(tmp_path / "assets" / "ops_smoke" / "table.parquet")
    assert table.height == 1 and table["run_id"][0] == result.run_id
    assert table["data_dir"][0] == str(tmp_path)
    (mat,) = result.asset_materializations_for_node("ops_smoke")
    assert mat.metadata["n_rows"].value == 1
