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

**Independent trees at once.** The embedded default falls into parts that share no asset —
WordNet → ImageNet-1k and their snapshots; the iNaturalist tree and its snapshot — found from
the asset graph (:func:`independent_parts`). On a machine with two cores or more each part is
materialised by its own run of ``embedded_default`` (the job, subset to the part's assets and
their checks), one in this process and the others in processes of their own, at the same time —
the others started first thing, so that their imports and definitions overlap this process's
(:func:`start_other_parts`; each finds the same parts from the same graph); the summary merges
them. This process, its part done first, makes sure METEOR's synonym table is there
(:func:`prepare_meteor_table`: ``make demo`` built it at install, and then it is only opened;
run without ``make``, it is built here) and, when its part published the snapshot the example is
scored against (:data:`EXAMPLE_SNAPSHOT`), scores the example meanwhile, its lines printed
after the summary as when it is scored last. Each part, before it builds a tree, has the tree
builder's numba kernels (:func:`taxoforge.sources.kernels.compile_kernels`, under their lock):
``make demo`` compiles them beside the demo, and a part that asks meanwhile waits for them, then
loads them; run without ``make``, the first part to ask compiles them and the others wait. One
process per part, not one per step: Dagster's multiprocess
executor starts a process for each of the job's 20 steps, each importing the code location
again, which costs more than the overlap saves on two cores. ``TAXOFORGE_DEMO_CONCURRENCY=1``
runs the whole job as one in-process run.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_OUTPUTS = REPO / "data" / "examples" / "imagenet_example_outputs.jsonl"
#: How many parts of the embedded default are materialised at once (default: 2 on two cores or
#: more, else 1); 1 runs the whole job in this process.
CONCURRENCY_VARIABLE = "TAXOFORGE_DEMO_CONCURRENCY"
_LOGGERS = {"console": {"config": {"log_level": "WARNING"}}}
_SUMMARY_KEYS = ("nodes", "leaves", "max_depth", "ties", "cycle_edges_removed", "linked", "unmatched", "rows", "synsets",
                 "classes", "taxa")


def demo_concurrency(environ=os.environ) -> int:
    """How many parts of the embedded default run at once (:data:`CONCURRENCY_VARIABLE`)."""
    named = environ.get(CONCURRENCY_VARIABLE, "").strip()
    if named:
        if not named.isdigit() or int(named) < 1:
            raise ValueError(f"{CONCURRENCY_VARIABLE}={named!r}: expected a whole number, at least 1")
        return int(named)
    return max(1, min(2, os.cpu_count() or 1))


def independent_parts(defs, groups: int) -> list[list[str]]:
    """The embedded default's assets (sources included) in at most ``groups`` lists that share
    no dependency: the connected parts of its asset graph, the largest first, each added to
    the smallest list so far. Keys as user strings, sorted."""
    import dagster as dg

    from assets.common.tags import EMBEDDED_DEFAULT_TAG

    graph = defs.resolve_asset_graph()
    with warnings.catch_warnings():  # include_sources is marked beta; the job selects its sources so too
        warnings.simplefilter("ignore", dg.BetaWarning)
        keys = dg.AssetSelection.tag(*EMBEDDED_DEFAULT_TAG, include_sources=True).resolve(graph)
    root = {k: k for k in keys}

    def find(k):
        while root[k] != k:
            root[k] = root[root[k]]
            k = root[k]
        return k

    for k in sorted(keys):
        for p in graph.get(k).parent_keys:
            if p in keys:
                root[find(k)] = find(p)
    parts: dict = {}
    for k in keys:
        parts.setdefault(find(k), []).append(k.to_user_string())
    lists: list[list[str]] = [[] for _ in range(max(1, min(groups, len(parts))))]
    for part in sorted(parts.values(), key=lambda p: (-len(p), sorted(p))):
        min(lists, key=len).extend(part)
    return [sorted(x) for x in lists if x]


def _materialise(defs, instance, keys: list[str] | None) -> dict:
    """One run of ``embedded_default`` (subset to ``keys`` when given) on ``instance``, as a
    picklable summary: the assets it built, its checks, its step failures. The tree builder's
    kernels first (:func:`taxoforge.sources.kernels.compile_kernels`): loaded from numba's
    cache, or compiled by the one process that holds their lock while the others wait."""
    import dagster as dg

    from taxoforge.sources.kernels import compile_kernels

    compile_kernels(("trees",))
    job = defs.resolve_job_def("embedded_default")
    selection = None if keys is None else [dg.AssetKey.from_user_string(k) for k in keys]
    result = job.execute_in_process(instance=instance, raise_on_error=False, asset_selection=selection,
                                    run_config={"loggers": _LOGGERS})
    built = []
    for ev in result.get_asset_materialization_events():
        md = ev.materialization.metadata
        figs = [f"{key}={md[key].value:,}" if isinstance(md[key].value, int) else f"{key}={md[key].value}"
                for key in _SUMMARY_KEYS if key in md]
        if "name_kinds" in md:
            figs.append(f"names: {md['name_kinds'].value}")
        built.append((ev.asset_key.to_user_string(), ", ".join(figs)))
    checks = [(c.asset_key.to_user_string(), c.check_name, c.passed, c.severity == dg.AssetCheckSeverity.ERROR, _why(c))
              for c in result.get_asset_check_evaluations()]
    failures = [(ev.step_key, ev.event_specific_data.error.message.strip()) for ev in result.all_events
                if ev.is_step_failure]
    return {"success": result.success, "built": built, "checks": checks, "failures": failures}


def _materialise_part(index: int, groups: int) -> dict:
    """In a process of its own: :func:`_materialise` of part ``index`` of
    :func:`independent_parts` ``(defs, groups)`` on the instance of ``$DAGSTER_HOME``, with the
    code location this environment makes (the parts are found here as the first process finds
    them: the same graph, the same parts). Nothing to build when there is no such part."""
    logging.getLogger("dagster").setLevel(logging.WARNING)
    from pipelines.definitions import build_definitions

    defs = build_definitions()
    parts = independent_parts(defs, groups)
    if index >= len(parts):
        return {"success": True, "built": [], "checks": [], "failures": []}
    return _materialise(defs, _instance(), parts[index])


def prepare_meteor_table(echo=print) -> bool:
    """Make sure METEOR's synonym table is there now
    (:func:`taxoforge.scores.measures.meteor.synonym_table`: the one built at install, else
    built once into the cache folder, under a lock, then opened by every run), while another part of the embedded default is still being built:
    the example's scoring, after the trees, then opens it instead of building it from WordNet
    (the longest part of a first score). False, with a line saying why, when it cannot be
    built here (the scoring then reports it)."""
    from taxoforge.scores.measures.meteor import synonym_table

    t0 = time.perf_counter()
    try:
        synonym_table()
    except Exception as e:  # noqa: BLE001 - no WordNet, an unverifiable table, a full disk: said, and the demo goes on
        echo(f"METEOR's synonym table not prepared: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        return False
    echo(f"METEOR's synonym table ready for the example's scoring "
         f"({time.perf_counter() - t0:.1f} s, while the other part was still building)")
    return True


def start_other_parts(concurrency: int) -> tuple[ProcessPoolExecutor | None, list]:
    """Start materialising parts ``1 … concurrency-1`` of the embedded default, each in a
    process of its own, at once — before this process has built its own definitions, so their
    imports and definitions overlap this process's (module docstring). The pool (None for
    ``concurrency`` 1) and one future per part."""
    if concurrency < 2:
        return None, []
    pool = ProcessPoolExecutor(concurrency - 1, mp_context=multiprocessing.get_context("spawn"))
    return pool, [pool.submit(_materialise_part, i, concurrency) for i in range(1, concurrency)]


def materialise_embedded_default(defs, instance, concurrency: int, others: list | None = None,
                                 meanwhile=None) -> tuple[dict, object]:
    """Materialise the embedded default: its independent parts at once, ``concurrency`` at a
    time (module docstring), or the whole job in this process for 1. ``others``: the futures
    of :func:`start_other_parts` (started here when not given). ``meanwhile``: called with this
    process's summary when its part is done while others still build (its result returned
    beside the merged summary; None when not called)."""
    parts = independent_parts(defs, concurrency) if concurrency > 1 else []
    if len(parts) < 2:
        return _materialise(defs, instance, None), None
    pool = None
    if others is None:
        pool, others = start_other_parts(concurrency)
    try:
        summaries = [_materialise(defs, instance, parts[0])]
        early = None
        if not all(f.done() for f in others):
            prepare_meteor_table()
            early = meanwhile(summaries[0]) if meanwhile is not None else None
        for keys, future in zip(parts[1:], others):
            try:
                summaries.append(future.result())
            except Exception as e:  # noqa: BLE001 - a part's process that died is reported as its failure
                summaries.append({"success": False, "built": [], "checks": [],
                                  "failures": [(", ".join(keys), f"{type(e).__name__}: {e}")]})
    finally:
        if pool is not None:
            pool.shutdown()
    return ({"success": all(s["success"] for s in summaries), "built": [b for s in summaries for b in s["built"]],
             "checks": [c for s in summaries for c in s["checks"]],
             "failures": [f for s in summaries for f in s["failures"]]}, early)


def _dagster_home() -> Path:
    """``$DAGSTER_HOME`` (set to ``.dagster_home/`` when unset, for the processes started
    after), with its configuration: local SQLite storage, no telemetry."""
    home = Path(os.environ.setdefault("DAGSTER_HOME", str(Path(".dagster_home").resolve())))
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists():
        config.write_text("telemetry:\n  enabled: false\n")
    return home


def _instance():
    import dagster as dg

    _dagster_home()
    return dg.DagsterInstance.get()


#: The asset the example is scored against: once this process has built it, the example is
#: scored while the other parts still build.
EXAMPLE_SNAPSHOT = "imagenet1k_snapshot"


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("TAXOFORGE_OFFLINE", "1")
    t0 = time.perf_counter()
    _dagster_home()
    concurrency = demo_concurrency()
    pool, others = start_other_parts(concurrency)
    try:
        instance = _instance()
        logging.getLogger("dagster").setLevel(logging.WARNING)
        from pipelines.definitions import build_definitions
        from pipelines.resources import default_data_dir

        defs = build_definitions()
        print("taxoforge demo: materialising the embedded default (offline"
              + (f", its independent parts {concurrency} at a time" if concurrency > 1 else "") + ") …", flush=True)
        scoring_lines: list[str] = []

        def score_meanwhile(summary: dict) -> bool | None:  # its lines are printed after the summary, as before
            built = {key for key, _ in summary["built"]}
            return score_example(defs, instance, echo=scoring_lines.append) if EXAMPLE_SNAPSHOT in built else None

        result, scored = materialise_embedded_default(defs, instance, concurrency, others, meanwhile=score_meanwhile)
    finally:
        if pool is not None:
            pool.shutdown()
    elapsed = time.perf_counter() - t0
    rows = result["built"]
    width = max((len(r[0]) for r in rows), default=10)
    print(f"\nBuilt {len(rows)} assets in {elapsed:.1f} s:")
    for key, figs in sorted(rows):
        print(f"  {key:<{width}}  {figs}")
    data = Path(default_data_dir()).resolve()
    print(f"\nFiles: {data / 'assets'}/<asset>/*.parquet; frozen snapshots in "
          f"{defs.resources['snapshot_store'].store().url} (the default store `taxoforge score` reads)")
    checks = result["checks"]
    failed = [c for c in checks if not c[2] and c[3]]
    warned = [c for c in checks if not c[2] and not c[3]]
    print(f"Asset checks: {len(checks) - len(failed) - len(warned)} passed, {len(warned)} warnings, {len(failed)} failed"
          + "".join(f"\n  FAILED  {key}:{name}" for key, name, *_ in failed)
          + "".join(f"\n  warning {key}:{name}: {why}" for key, name, _, _, why in warned))
    if scored is None:
        scored = score_example(defs, instance)
    for line in scoring_lines:
        print(line)
    print("\nLineage in the Dagster UI: `make dev`, then open http://127.0.0.1:3000 "
          f"(runs are stored in DAGSTER_HOME={os.environ['DAGSTER_HOME']}).")
    ok = result["success"] and not failed and scored
    for step, message in result["failures"]:
        print(f"step failed: {step}: {message}", file=sys.stderr)
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
