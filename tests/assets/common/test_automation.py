"""Observed sources turn red when observation stops: the ``observed_recently`` check on a real
instance — passing right after an observation in the same run, failing with severity ERROR once
the last observation is older than allowed (or there is none) — and requested hourly by the
automation; the automation sensor's default status follows ``$TAXOFORGE_AUTOMATION``."""

from __future__ import annotations

import datetime
import time

import dagster as dg
import pytest

from assets.common.automation import automation_status, observed_recently, package_source

SOURCE = package_source("probe_source", group_name="probe", description="A probe.", version=lambda: {"v": "1"})
FRESH_FOR = datetime.timedelta(seconds=3)
CHECK = observed_recently(SOURCE, max_age=FRESH_FOR)
CHECK_KEY = dg.AssetCheckKey(SOURCE.key, "observed_recently")


def _run(defs, instance, *, observe: bool):
    job = defs.resolve_implicit_global_asset_job_def().get_subset(
        asset_selection={SOURCE.key} if observe else set(), asset_check_selection={CHECK_KEY})
    result = job.execute_in_process(instance=instance, raise_on_error=False)
    assert result.success
    (evaluation,) = result.get_asset_check_evaluations()
    return evaluation


def test_the_check_passes_after_an_observation_and_fails_once_it_is_too_old(tmp_path):
    defs = dg.Definitions(assets=[SOURCE], asset_checks=[CHECK])
    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        never = _run(defs, instance, observe=False)
        assert not never.passed and never.severity == dg.AssetCheckSeverity.ERROR
        assert "never been observed" in never.description
        fresh = _run(defs, instance, observe=True)  # the check runs after the observation of its run
        assert fresh.passed and fresh.metadata["age_hours"].value < 0.001
        time.sleep(FRESH_FOR.total_seconds() + 1)
        stale = _run(defs, instance, observe=False)
        assert not stale.passed and stale.severity == dg.AssetCheckSeverity.ERROR
        assert "last observed" in stale.description
        assert stale.metadata["last_observed"].value == pytest.approx(fresh.metadata["last_observed"].value)


def test_the_automation_asks_for_the_check_every_hour():
    defs = dg.Definitions(assets=[SOURCE], asset_checks=[CHECK])
    start = datetime.datetime(2026, 11, 27, 10, 30, tzinfo=datetime.timezone.utc)
    asked = []
    with dg.instance_for_test() as instance:
        cursor = None
        for hour in range(4):
            result = dg.evaluate_automation_conditions(
                defs=defs, instance=instance, asset_selection=dg.AssetSelection.assets(SOURCE), cursor=cursor,
                evaluation_time=start + datetime.timedelta(hours=hour))
            cursor = result.cursor
            asked.append({r.key for r in result.results if not r.true_subset.is_empty})
    assert asked[1:] == [{CHECK_KEY}] * 3  # one evaluation per hour that passed; the source waits for 05:00


@pytest.mark.parametrize("env, status", [
    ({}, dg.DefaultSensorStatus.STOPPED),
    ({"TAXOFORGE_AUTOMATION": "running"}, dg.DefaultSensorStatus.RUNNING),
    ({"TAXOFORGE_SCHEDULES": "running"}, dg.DefaultSensorStatus.RUNNING),
    ({"TAXOFORGE_SCHEDULES": "running", "TAXOFORGE_AUTOMATION": "stopped"}, dg.DefaultSensorStatus.STOPPED),
])
def test_the_automation_starts_as_the_environment_says(env, status):
    assert automation_status(env) == status


def test_a_wrong_value_names_the_variable():
    with pytest.raises(ValueError, match=r"\$TAXOFORGE_AUTOMATION='sometimes'"):
        automation_status({"TAXOFORGE_AUTOMATION": "sometimes"})
