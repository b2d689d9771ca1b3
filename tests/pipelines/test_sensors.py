"""The sensors: the run-failure sensor logs a failed run and appends it to the failure file;
the model-output sensor requests one scoring run per new or changed file."""

import json
import os
import time

import dagster as dg

from assets.common.resources import ScoringResource
from assets.scoring import model_output_files
from pipelines.sensors import failure_log_path, model_outputs_sensor, run_failure_log


def test_failed_run_is_recorded(tmp_path, monkeypatch):
    monkeypatch.setenv("TAXOFORGE_DATA_DIR", str(tmp_path))

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
            dagster_run=result.dagster_run).for_run_failure()
        run_failure_log(ctx)
        run_failure_log(ctx)  # appends, never overwrites

    lines = failure_log_path().read_text().splitlines()
    assert failure_log_path() == tmp_path / "ops" / "run_failures.jsonl"
    assert len(lines) == 2
    rec = json.loads(lines[0])
    assert rec["run_id"] == result.run_id and rec["job"] == "boom_job"
    assert rec["failed_steps"] == ["boom"]
    assert "the endpoint said 503" in rec["error"]
    assert rec["tags"] == {"taxoforge/rebuild": "x"} and rec["attempt"] == 1


def _write(path, records, age=10):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    t = time.time() - age
    os.utime(path, (t, t))


def _tick(instance, res, cursor=None):
    ctx = dg.build_sensor_context(instance=instance, cursor=cursor, resources={"scoring": res})
    return model_outputs_sensor(ctx), ctx


def test_model_outputs_sensor_requests_one_run_per_new_or_changed_file(tmp_path):
    outputs = tmp_path / "model_outputs"
    (outputs / "batch1").mkdir(parents=True)
    res = ScoringResource(outputs_dir=str(outputs), scores_dir=str(tmp_path / "scores"))
    instance = dg.DagsterInstance.ephemeral()
    out, _ = _tick(instance, res)
    assert isinstance(out, dg.SkipReason)

    _write(outputs / "batch1" / "run_a.jsonl", [
        {"id": "1", "model": "m1", "output": "A: Toco Toucan", "label": "r_toco"},
        {"id": "2", "model": "m1", "output": "a bird", "label": "r_toco"},
    ])
    _write(outputs / "notes.txt", [{"ignored": True}])
    _write(outputs / "fresh.jsonl", [{"output": "x", "label": "life"}], age=0)  # still being written
    res1, ctx = _tick(instance, res)
    assert [r.partition_key for r in res1.run_requests] == ["batch1/run_a.jsonl"]
    assert res1.dynamic_partitions_requests[0].partition_keys == ["batch1/run_a.jsonl"]
    instance.add_dynamic_partitions(model_output_files.name, ["batch1/run_a.jsonl"])

    # the same file is not requested again; a changed file is
    res2, _ = _tick(instance, res, res1.cursor)
    assert isinstance(res2, dg.SkipReason) or not res2.run_requests
    _write(outputs / "batch1" / "run_a.jsonl", [{"id": "1", "model": "m1", "output": "Toucans", "label": "r_toco"}], age=5)
    res3, _ = _tick(instance, res, res1.cursor)
    assert [r.partition_key for r in res3.run_requests] == ["batch1/run_a.jsonl"]
    assert res3.run_requests[0].run_key != res1.run_requests[0].run_key
    assert not res3.dynamic_partitions_requests  # partition already known
