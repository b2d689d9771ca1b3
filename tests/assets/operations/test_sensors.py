"""The run-failure sensor logs a failed run and appends it to the failure file in the data folder."""

import json

import dagster as dg

from assets.operations.sensors import failure_log_path, run_failure_log
from pipelines.resources import default_resources


def test_failed_run_is_recorded_where_the_data_folder_says(tmp_path, monkeypatch):
    monkeypatch.setenv("TAXOFORGE_DATA_DIR", str(tmp_path))
    data_dir = default_resources()["data_dir"]  # the code location's, configured from the environment

    @dg.asset
    def boom():
        raise RuntimeError("the endpoint said 503")

    job = dg.Definitions(assets=[boom], jobs=[dg.define_asset_job("boom_job", tags={"taxoforge/rebuild": "x"})]
                         ).resolve_job_def("boom_job")
    with dg.instance_for_test() as instance:
        result = job.execute_in_process(instance=instance, raise_on_error=False)
        assert not result.success
        failure = next(e for e in result.all_events if e.event_type == dg.DagsterEventType.RUN_FAILURE)
        ctx = dg.build_run_status_sensor_context(
            sensor_name="run_failure_log", dagster_event=failure, dagster_instance=instance,
            dagster_run=result.dagster_run, resources={"data_dir": data_dir}).for_run_failure()
        run_failure_log(ctx)
        run_failure_log(ctx)  # appends, never overwrites

    lines = failure_log_path(data_dir).read_text().splitlines()
    assert failure_log_path(data_dir) == tmp_path / "ops" / "run_failures.jsonl"
    assert len(lines) == 2
    rec = json.loads(lines[0])
    assert rec["run_id"] == result.run_id and rec["job"] == "boom_job"
    assert rec["failed_steps"] == ["boom"]
    assert "the endpoint said 503" in rec["error"]
    assert rec["tags"] == {"taxoforge/rebuild": "x"} and rec["attempt"] == 1
