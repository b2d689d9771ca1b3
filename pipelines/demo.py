"""The README's first command: materialise the embedded default offline and say what was built.

Runs the ``embedded_default`` job in-process against a persistent Dagster instance in
``$DAGSTER_HOME`` (default ``.dagster_home/``), so ``make dev`` afterwards shows the runs,
materialisations and lineage in the Dagster UI; then scores the shipped example model
outputs through Dagster, as a partition of ``imagenet1k_scores``, and prints the leaderboard.

The example, ``data/examples/imagenet_example_outputs.jsonl``, holds made-up answers (marked
``"example": true``) of three fictional models to 15 ImageNet-1k images whose ground truth
is a wnid (or a class name). :func:`score_example` does what the scoring domain does with any
file dropped into the model-outputs folder: the file is copied to
``<model outputs>/imagenet1k/`` (a folder named after the taxonomy), one tick of
``model_outputs_sensor`` adds its partition and requests its run, and that run — the job
``score_imagenet1k_outputs``, against the published ``imagenet1k`` snapshot — is executed here,
on the same instance. The UI then shows the materialisation with its leaderboard and figures,
and the daemon of ``make dev`` does not score the file again (the run carries the sensor's
run key).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_OUTPUTS = REPO / "data" / "examples" / "imagenet_example_outputs.jsonl"


def _instance():
    import dagster as dg

    home = Path(os.environ.setdefault("DAGSTER_HOME", str(Path(".dagster_home").resolve())))
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists():  # local SQLite storage in DAGSTER_HOME, no telemetry
        config.write_text("telemetry:\n  enabled: false\n")
    return dg.DagsterInstance.get()


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("TAXOFORGE_OFFLINE", "1")
    t0 = time.perf_counter()
    instance = _instance()
    logging.getLogger("dagster").setLevel(logging.WARNING)
    from pipelines.definitions import build_definitions
    from pipelines.resources import default_data_dir

    defs = build_definitions()
    job = defs.resolve_job_def("embedded_default")
    print("taxoforge demo: materialising the embedded default (offline) …", flush=True)
    result = job.execute_in_process(
        instance=instance,
        raise_on_error=False,
        run_config={"loggers": {"console": {"config": {"log_level": "WARNING"}}}},
    )
    elapsed = time.perf_counter() - t0
    rows = []
    for ev in result.get_asset_materialization_events():
        md = ev.materialization.metadata
        figs = []
        for key in ("nodes", "leaves", "max_depth", "ties", "cycle_edges_removed", "linked", "unmatched", "rows", "synsets", "classes", "taxa"):
            if key in md:
                figs.append(f"{key}={md[key].value:,}" if isinstance(md[key].value, int) else f"{key}={md[key].value}")
        if "name_kinds" in md:
            figs.append(f"names: {md['name_kinds'].value}")
        path = md["path"].value if "path" in md else ""
        rows.append((ev.asset_key.to_user_string(), ", ".join(figs), path))
    width = max((len(r[0]) for r in rows), default=10)
    print(f"\nBuilt {len(rows)} assets in {elapsed:.1f} s:")
    for key, figs, path in sorted(rows):
        print(f"  {key:<{width}}  {figs}")
    data = Path(default_data_dir()).resolve()
    print(f"\nFiles: {data / 'assets'}/<asset>/*.parquet; frozen snapshots in "
          f"{defs.resources['snapshot_store'].store().url} (the default store `taxoforge score` reads)")
    import dagster as dg

    checks = result.get_asset_check_evaluations()
    failed = [c for c in checks if not c.passed and c.severity == dg.AssetCheckSeverity.ERROR]
    warned = [c for c in checks if not c.passed and c.severity != dg.AssetCheckSeverity.ERROR]
    print(f"Asset checks: {len(checks) - len(failed) - len(warned)} passed, {len(warned)} warnings, {len(failed)} failed"
          + "".join(f"\n  FAILED  {c.asset_key.to_user_string()}:{c.check_name}" for c in failed)
          + "".join(f"\n  warning {c.asset_key.to_user_string()}:{c.check_name}: {_why(c)}" for c in warned))
    scored = score_example(defs, instance)
    print("\nLineage in the Dagster UI: `make dev`, then open http://127.0.0.1:3000 "
          f"(runs are stored in DAGSTER_HOME={os.environ['DAGSTER_HOME']}).")
    ok = result.success and not failed and scored
    if not result.success:
        for ev in result.all_events:
            if ev.is_step_failure:
                print(f"step failed: {ev.step_key}: {ev.event_specific_data.error.message.strip()}", file=sys.stderr)
    return 0 if ok else 1


def _why(check) -> str:
    md = check.metadata or {}
    figures = [f"{k}={v.value}" for k, v in md.items() if isinstance(v.value, (int, float))]
    return ", ".join(figures[:4]) or "see the Dagster UI"


#: The example's partition key: its path under the model-outputs folder, in the folder named
#: after the taxonomy it is scored against.
EXAMPLE_KEY = f"imagenet1k/{EXAMPLE_OUTPUTS.name}"


def score_example(defs, instance, echo=print) -> bool:
    """Score the shipped example outputs through Dagster (module docstring) and print the
    leaderboard. True on success; a failure is reported, not raised."""
    import shutil

    import dagster as dg

    from assets.scoring.assets import result_folder

    scoring = defs.resources["scoring"]
    target = Path(scoring.outputs_dir) / EXAMPLE_KEY
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(EXAMPLE_OUTPUTS, target)  # keeps the modification time: the file's signature for the sensor
    sensor = defs.resolve_sensor_def("model_outputs_sensor")
    with dg.build_sensor_context(instance=instance, resources={"scoring": scoring}) as context:
        tick = sensor(context)
    request = next((r for r in getattr(tick, "run_requests", None) or [] if r.partition_key == EXAMPLE_KEY), None)
    if request is None:
        echo(f"\nScoring the example outputs failed: the model-outputs sensor did not pick up {target} "
             f"({getattr(tick, 'skip_message', tick)})")
        return False
    for add in tick.dynamic_partitions_requests or []:
        if EXAMPLE_KEY in add.partition_keys:
            instance.add_dynamic_partitions(add.partitions_def_name, [EXAMPLE_KEY])
    # the tags a run launched by the sensor carries: the daemon skips a run key it has seen
    tags = {**request.tags, "dagster/sensor_name": sensor.name, "dagster/run_key": request.run_key}
    run = defs.resolve_job_def(request.job_name).execute_in_process(
        instance=instance, partition_key=EXAMPLE_KEY, tags=tags, raise_on_error=False,
        run_config={"loggers": {"console": {"config": {"log_level": "ERROR"}}}})
    if not run.success:
        errors = [ev.event_specific_data.error.message.strip() for ev in run.all_events if ev.is_step_failure]
        echo(f"\nScoring the example outputs failed: {'; '.join(errors) or 'see the run in the Dagster UI'}")
        return False
    out = result_folder(scoring.scores_dir, EXAMPLE_KEY)
    echo(f"\nScored the example model outputs {EXAMPLE_OUTPUTS.relative_to(REPO)} (made-up answers of fictional "
         f"models) as partition {EXAMPLE_KEY} of imagenet1k_scores (run {run.run_id}):\n")
    echo((out / "leaderboard.md").read_text(encoding="utf-8"))
    echo(f"Scores, leaderboard and plots: {out.resolve()}/")
    return True


if __name__ == "__main__":
    sys.exit(main())
