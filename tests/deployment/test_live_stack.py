"""The docker-compose topology, tested without Docker (see conftest.py): a run launched
through the webserver's GraphQL API is queued, launched by the daemon, executed by the
code server, and lands — run, events, materialisation — in PostgreSQL; the daemon's
scheduler ticks a schedule switched on through GraphQL; the UI renders the asset graph."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import polars as pl
import pytest

from tests.chromium import chromium_argv, find_chromium
from tests.deployment.conftest import ARTIFACTS, LOGS

pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.timeout(420)]

LOCATION = "taxoforge"
REPOSITORY = "__repository__"

LAUNCH = """
mutation Launch($params: ExecutionParams!) {
  launchRun(executionParams: $params) {
    __typename
    ... on LaunchRunSuccess { run { runId status } }
    ... on PythonError { message }
    ... on InvalidSubsetError { message }
    ... on RunConfigValidationInvalid { errors { message } }
    ... on PipelineNotFoundError { message }
  }
}
"""

RUN = """
query Run($runId: ID!) {
  runOrError(runId: $runId) {
    __typename
    ... on Run {
      status
      jobName
      eventConnection { events { __typename
        ... on MaterializationEvent { assetKey { path } }
        ... on ExecutionStepFailureEvent { stepKey error { message cause { message } } }
        ... on MessageEvent { message } } }
    }
  }
}
"""

ASSET = """
query Asset($path: [String!]!) {
  assetOrError(assetKey: {path: $path}) {
    __typename
    ... on Asset { assetMaterializations(limit: 5) { runId } }
  }
}
"""

REPO_QUERY = """
query Repo($sel: RepositorySelector!) {
  repositoryOrError(repositorySelector: $sel) {
    __typename
    ... on Repository {
      jobs { name }
      schedules { name cronSchedule scheduleState { status } }
      sensors { name sensorState { status } }
      assetNodes { assetKey { path } groupName description }
    }
  }
}
"""

START_SCHEDULE = """
mutation Start($sel: ScheduleSelector!) {
  startSchedule(scheduleSelector: $sel) {
    __typename
    ... on ScheduleStateResult { scheduleState { status } }
    ... on PythonError { message }
  }
}
"""

STOP_SCHEDULE = """
mutation Stop($id: String!) {
  stopRunningSchedule(id: $id) { __typename }
}
"""

TICKS = """
query Ticks($sel: ScheduleSelector!) {
  scheduleOrError(scheduleSelector: $sel) {
    __typename
    ... on Schedule { scheduleState { id status ticks(limit: 10) { status timestamp runIds skipReason error { message } } } }
  }
}
"""

SCHEDULE = {"repositoryLocationName": LOCATION, "repositoryName": REPOSITORY, "scheduleName": "ops_heartbeat"}


@pytest.fixture(scope="module")
def heartbeat(dagster_stack):
    """``ops_heartbeat`` (every minute) switched on through GraphQL as early as possible, so
    its first tick comes while the other tests run; switched off again at the end."""
    out = dagster_stack.graphql(START_SCHEDULE, {"sel": SCHEDULE})["startSchedule"]
    started = time.time()
    yield out, started
    try:
        state = dagster_stack.graphql(TICKS, {"sel": SCHEDULE})["scheduleOrError"]["scheduleState"]
        dagster_stack.graphql(STOP_SCHEDULE, {"id": state["id"]})
    except Exception:  # the stack is torn down next anyway
        pass


@pytest.fixture(scope="module")
def failed_run(dagster_stack):
    """A run of ops_smoke with ``fail: true``, launched early so the failure sensor's next
    tick (every 30 s) comes while the other tests run. Yields its run id."""
    params = {"selector": {"repositoryLocationName": LOCATION, "repositoryName": REPOSITORY,
                           "jobName": "ops_smoke_job"},
              "runConfigData": {"ops": {"ops_smoke": {"config": {"fail": True}}}}}
    launched = dagster_stack.graphql(LAUNCH, {"params": params})["launchRun"]
    assert launched["__typename"] == "LaunchRunSuccess", launched
    return launched["run"]["runId"]


def test_code_location_is_served(dagster_stack, heartbeat, failed_run):
    repo = dagster_stack.graphql(REPO_QUERY, {"sel": {"repositoryLocationName": LOCATION,
                                                      "repositoryName": REPOSITORY}})["repositoryOrError"]
    assert repo["__typename"] == "Repository", repo
    jobs = {j["name"] for j in repo["jobs"]}
    assert {"ops_smoke_job", "wikidata_sparql_rebuild", "wikidata_dump_rebuild", "catalogue_of_life_rebuild"} <= jobs
    schedules = {s["name"]: s for s in repo["schedules"]}
    assert schedules["wikidata_sparql_rebuild_schedule"]["cronSchedule"] == "0 3 * * 1"
    assert "wordnet_rebuild_schedule" not in schedules  # WordNet is never rebuilt
    sensors = {s["name"]: s["sensorState"]["status"] for s in repo["sensors"]}
    assert sensors.get("run_failure_log") == "RUNNING"
    # The lineage browser: every asset has a group and a description.
    nodes = repo["assetNodes"]
    assert any(n["assetKey"]["path"] == ["ops_smoke"] for n in nodes)
    missing = [n["assetKey"]["path"] for n in nodes if not n["groupName"] or not n["description"]]
    assert not missing, f"assets without group or description: {missing}"


def test_run_launched_through_graphql_is_stored_in_postgres(dagster_stack, heartbeat):
    s = dagster_stack
    params = {"selector": {"repositoryLocationName": LOCATION, "repositoryName": REPOSITORY,
                           "jobName": "ops_smoke_job"}, "runConfigData": {}}
    launched = s.graphql(LAUNCH, {"params": params})["launchRun"]
    assert launched["__typename"] == "LaunchRunSuccess", launched
    run_id = launched["run"]["runId"]
    # QueuedRunCoordinator: the webserver only queues; the daemon launches.
    assert launched["run"]["status"] in {"QUEUED", "NOT_STARTED", "STARTING", "STARTED"}

    def finished():
        st = s.graphql(RUN, {"runId": run_id})["runOrError"]["status"]
        if st in {"FAILURE", "CANCELED"}:
            pytest.fail(f"run {run_id} ended {st}\n{LOGS.dump()}")
        return st == "SUCCESS"

    s.wait(f"run {run_id} to succeed", finished, timeout=150, interval=2)

    # Through GraphQL: the run, its events, the materialisation.
    run = s.graphql(RUN, {"runId": run_id})["runOrError"]
    assert run["jobName"] == "ops_smoke_job"
    kinds = [e["__typename"] for e in run["eventConnection"]["events"]]
    assert "RunSuccessEvent" in kinds and "ExecutionStepSuccessEvent" in kinds
    mats = [e["assetKey"]["path"] for e in run["eventConnection"]["events"] if e["__typename"] == "MaterializationEvent"]
    assert mats == [["ops_smoke"]]
    asset = s.graphql(ASSET, {"path": ["ops_smoke"]})["assetOrError"]
    assert run_id in {m["runId"] for m in asset["assetMaterializations"]}

    # In PostgreSQL, where dagster.yaml says: runs, event log, asset index.
    with s.pg.connect() as conn, conn.cursor() as cur:
        cur.execute("SELECT pipeline_name, status FROM runs WHERE run_id = %s", (run_id,))
        assert cur.fetchall() == [("ops_smoke_job", "SUCCESS")]
        cur.execute("SELECT dagster_event_type, count(*) FROM event_logs WHERE run_id = %s "
                    "AND dagster_event_type IS NOT NULL GROUP BY 1", (run_id,))
        counts = dict(cur.fetchall())
        for kind in ("PIPELINE_START", "STEP_START", "ASSET_MATERIALIZATION", "STEP_SUCCESS", "PIPELINE_SUCCESS"):
            assert counts.get(kind, 0) >= 1, f"no {kind} event of run {run_id} in PostgreSQL: {counts}"
        cur.execute("SELECT asset_key FROM event_logs WHERE run_id = %s AND dagster_event_type = "
                    "'ASSET_MATERIALIZATION'", (run_id,))
        assert [r[0] for r in cur.fetchall()] == ['["ops_smoke"]']
        cur.execute("SELECT asset_key FROM asset_keys")
        assert '["ops_smoke"]' in {r[0] for r in cur.fetchall()}

    # The asset's value is on the data volume, written by the run the daemon launched.
    table = pl.read_parquet(s.data_dir / "assets" / "ops_smoke" / "table.parquet")
    assert table["run_id"].to_list() == [run_id]
    assert table["run_storage"].to_list() == ["PostgresRunStorage"]


def test_daemon_ticks_a_schedule_started_through_graphql(dagster_stack, heartbeat):
    s = dagster_stack
    started, t0 = heartbeat
    assert started["__typename"] == "ScheduleStateResult", started
    assert started["scheduleState"]["status"] == "RUNNING"

    def ticked():
        ticks = s.graphql(TICKS, {"sel": SCHEDULE})["scheduleOrError"]["scheduleState"]["ticks"]
        done = [t for t in ticks if t["status"] in {"SUCCESS", "FAILURE", "SKIPPED"}]
        return done[-1] if done else None

    # Cron "* * * * *": the next minute boundary plus one scheduler loop.
    remaining = max(30.0, 130 - (time.time() - t0))
    tick = s.wait("a tick of ops_heartbeat by the daemon", ticked, timeout=remaining, interval=3)
    assert tick["status"] == "SUCCESS", tick
    assert len(tick["runIds"]) == 1
    with s.pg.connect() as conn, conn.cursor() as cur:
        # Schedule state and ticks are in the schedule storage, keyed by origin, names in JSON bodies.
        cur.execute("SELECT status FROM jobs WHERE job_type = 'SCHEDULE' AND job_body LIKE %s",
                    ('%"ops_heartbeat"%',))
        assert cur.fetchall() == [("RUNNING",)]
        cur.execute("SELECT status FROM job_ticks WHERE type = 'SCHEDULE' AND tick_body LIKE %s",
                    (f'%{tick["runIds"][0]}%',))
        assert cur.fetchall() == [("SUCCESS",)]
        cur.execute("SELECT value FROM run_tags WHERE run_id = %s AND key = 'dagster/schedule_name'",
                    (tick["runIds"][0],))
        assert cur.fetchall() == [("ops_heartbeat",)]


def _render(exe: str, url: str, png: Path) -> str:
    """Screenshot ``url`` into ``png`` and return its rendered DOM (two headless runs)."""
    profile = tempfile.mkdtemp(prefix="taxoforge-chromium-")
    try:
        # a large window: the lineage graph renders only the nodes inside the viewport
        dom = subprocess.run(chromium_argv(exe, profile) + ["--window-size=2400,1800", "--dump-dom", url],
                             capture_output=True, text=True,
                             timeout=120)
        shot = subprocess.run(chromium_argv(exe, profile) + [f"--screenshot={png}", "--window-size=1600,1000", url],
                              capture_output=True, text=True, timeout=120)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    assert shot.returncode == 0 and png.exists(), f"chromium failed on {url}: {shot.stderr[-2000:]}"
    print(f"\nscreenshot of {url}: {png}")
    return dom.stdout


def _assert_not_blank(png: Path) -> None:
    import matplotlib.image as mpimg
    import numpy as np

    img = mpimg.imread(png)
    assert img.shape[0] >= 900 and img.shape[1] >= 1500, img.shape
    colours = np.unique((img[..., :3] * 255).astype(np.uint8).reshape(-1, 3), axis=0)
    assert len(colours) > 50, f"{png} looks blank ({len(colours)} colours)"


def test_asset_graph_screenshot(dagster_stack, heartbeat):
    """The lineage browser renders: the global graph shows every asset group, and the
    largest group's graph shows each of its assets. PNGs kept in tests/artifacts/."""
    exe = find_chromium()
    if exe is None:
        pytest.skip("chromium not installed (scripts/install-system-deps.sh installs it)")
    s = dagster_stack
    nodes = s.graphql(REPO_QUERY, {"sel": {"repositoryLocationName": LOCATION,
                                           "repositoryName": REPOSITORY}})["repositoryOrError"]["assetNodes"]
    groups: dict[str, list[str]] = {}
    for n in nodes:
        groups.setdefault(n["groupName"], []).append("/".join(n["assetKey"]["path"]))
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    png = ARTIFACTS / "asset-graph.png"
    png.unlink(missing_ok=True)
    dom = _render(exe, f"{s.url}/asset-groups", png)
    _assert_not_blank(png)
    missing = [g for g in groups if f">{g}<" not in dom]
    assert not missing, f"global asset lineage does not show groups {missing}"

    group = max(sorted(groups), key=lambda g: len(groups[g]))
    png = ARTIFACTS / "asset-group.png"
    png.unlink(missing_ok=True)
    dom = _render(exe, f"{s.url}/locations/{LOCATION}/asset-groups/{group}/lineage", png)
    _assert_not_blank(png)
    missing = [a for a in groups[group] if a not in dom]
    assert not missing, f"lineage of group {group} does not show assets {missing}"


def test_failed_run_is_logged_by_the_sensor_and_not_retried(dagster_stack, failed_run):
    """A step failure: visible through GraphQL, recorded by run_failure_log in
    data/ops/run_failures.jsonl, and — per run_retries in dagster.yaml — not retried."""
    s = dagster_stack
    st = s.wait(f"run {failed_run} to fail", lambda: s.graphql(RUN, {"runId": failed_run})["runOrError"]["status"]
                in {"FAILURE", "SUCCESS", "CANCELED"} and s.graphql(RUN, {"runId": failed_run})["runOrError"],
                timeout=120, interval=2)
    assert st["status"] == "FAILURE"
    (failure,) = [e for e in st["eventConnection"]["events"] if e["__typename"] == "ExecutionStepFailureEvent"]
    assert failure["stepKey"] == "ops_smoke"
    assert "failed on purpose" in json.dumps(failure["error"])

    log = s.data_dir / "ops" / "run_failures.jsonl"

    def recorded():
        if not log.exists():
            return None
        recs = [json.loads(line) for line in log.read_text().splitlines()]
        return next((r for r in recs if r["run_id"] == failed_run), None)

    rec = s.wait("run_failure_log to record the failed run", recorded, timeout=100, interval=3)
    assert rec["job"] == "ops_smoke_job" and rec["failed_steps"] == ["ops_smoke"]
    assert "failed on purpose" in rec["error"]
    with s.pg.connect() as conn, conn.cursor() as cur:
        cur.execute("SELECT status FROM runs WHERE run_id = %s", (failed_run,))
        assert cur.fetchall() == [("FAILURE",)]
        cur.execute("SELECT value FROM run_tags WHERE run_id = %s AND key = 'dagster/will_retry'", (failed_run,))
        assert cur.fetchall() == [("false",)]  # a step failure is not retried by default
        cur.execute("SELECT count(*) FROM run_tags WHERE key = 'dagster/parent_run_id' AND value = %s", (failed_run,))
        assert cur.fetchone()[0] == 0


def test_a_scored_file_shows_its_leaderboard_first_in_the_ui(dagster_stack):
    """A model-output file dropped into the watched folder is picked up by the running sensor,
    scored by a run the daemon launches, stored in PostgreSQL, and its asset page shows the
    leaderboard — rank, intervals, significance — first, in headless Chromium. PNG kept in
    tests/artifacts/."""
    from tests.assets.scoring.test_assets import RECORDS, mini_tree
    from tests.chromium import DevTools
    from taxoforge.snapshots import SnapshotStore

    exe = find_chromium()
    if exe is None:
        pytest.skip("chromium not installed (scripts/install-system-deps.sh installs it)")
    s = dagster_stack
    SnapshotStore(s.data_dir / "snapshots").publish(mini_tree(), name="imagenet1k", check=False)
    outputs = s.data_dir / "model_outputs" / "imagenet1k"
    outputs.mkdir(parents=True, exist_ok=True)
    path = outputs / "live.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS if r["label"]))
    old = time.time() - 60  # older than the sensor's two seconds of a file still being written
    os.utime(path, (old, old))

    def materialised():
        found = s.graphql(ASSET, {"path": ["imagenet1k_scores"]})["assetOrError"]
        return found.get("assetMaterializations")

    s.wait("the sensor's scoring run of live.jsonl", materialised, timeout=300, interval=5)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    png = ARTIFACTS / "scores-asset.png"
    with DevTools(exe, window="1920,1200", timeout=120) as page:
        page.navigate(f"{s.url}/assets/imagenet1k_scores")
        text = ""
        for _ in range(90):
            text = page.evaluate("document.body ? document.body.innerText : ''") or ""
            if "vs best" in text and "best_model" in text:
                break
            time.sleep(1)
        page.screenshot(png)
    assert "vs best" in text and "best_model" in text, text[-2000:]
    # the leaderboard comes before every other metadata entry, with intervals and the rank
    assert text.index("vs best") < text.index("best_model") < text.index("taxonomy_ref")
    m1 = next(line for line in text.splitlines() if line.startswith("m1\t"))
    assert re.search(r"\t1\t\d\.\d{3} \(\d\.\d{3}–\d\.\d{3}\)\tbest\t", m1), m1  # rank, hF (interval), vs best
    _assert_not_blank(png)
