"""The README's first command: materialise the embedded default offline and say what was built.

Runs the ``embedded_default`` job in-process against a persistent Dagster instance in
``$DAGSTER_HOME`` (default ``.dagster_home/``), so ``make dev`` afterwards shows the runs,
materialisations and lineage in the Dagster UI; then scores the shipped example model
outputs against the ImageNet-1k taxonomy and prints the leaderboard.

The example, ``data/examples/imagenet_example_outputs.jsonl``, holds made-up answers (marked
``"example": true``) of three fictional models to 15 ImageNet-1k images whose ground truth
is a wnid (or a class name). :func:`score_example` scores it against the published snapshot
``imagenet1k`` in the code location's snapshot store, else the ``imagenet1k_taxonomy`` asset
as the IO manager stores it, and writes the results to ``<scores dir>/imagenet_example/``.
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
    from pipelines.definitions import defs
    from pipelines.resources import default_data_dir

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


def example_taxonomy(defs, instance):
    """The ImageNet-1k taxonomy the example is scored against, resolved and cited
    (:func:`taxoforge.scores.cited_taxonomy.cite_taxonomy`): the ``imagenet1k`` snapshot in the code
    location's snapshot store (cited ``imagenet1k@VERSION`` with the store), else the
    ``imagenet1k_taxonomy`` asset's value (cited by its content hash)."""
    from taxoforge.scores.cited_taxonomy import cite_taxonomy
    from taxoforge.snapshots.errors import SnapshotError

    store = defs.resources["snapshot_store"].store()
    try:
        return cite_taxonomy("imagenet1k", store=store)
    except SnapshotError:  # no store, no snapshot or a damaged one: the asset itself
        return cite_taxonomy(defs.load_asset_value("imagenet1k_taxonomy", instance=instance), store=store)


def score_example(defs, instance, echo=print) -> bool:
    """Score the shipped example outputs, write the results to ``<scores dir>/imagenet_example/``
    and print the leaderboard. True on success; a failure is reported, not raised."""
    from taxoforge.scores.run import score_file

    out_dir = Path(defs.resources["scoring"].scores_dir) / "imagenet_example"
    try:
        run = score_file(EXAMPLE_OUTPUTS, example_taxonomy(defs, instance), out_dir=out_dir)
    except Exception as e:  # noqa: BLE001 - the demo reports and goes on
        echo(f"\nScoring the example outputs failed: {type(e).__name__}: {e}")
        return False
    echo(f"\nScored the example model outputs {EXAMPLE_OUTPUTS.relative_to(REPO)} (made-up answers of fictional models):\n")
    echo(run.markdown())
    echo(f"Scores, leaderboard and plots: {out_dir.resolve()}/")
    return True


if __name__ == "__main__":
    sys.exit(main())
