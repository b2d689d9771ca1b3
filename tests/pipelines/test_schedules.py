"""Rebuild schedules: configurable cron, WordNet never, skip when a domain is absent."""

import dagster as dg
import pytest

from pipelines.schedules import REBUILDS, cron_for, rebuild_jobs, rebuild_schedules

BY_NAME = {r.name: r for r in REBUILDS}


def test_default_crons_weekly_and_wordnet_never():
    assert cron_for(BY_NAME["wikidata"], {}) == "0 3 * * 1"
    assert cron_for(BY_NAME["catalogue_of_life"], {}) == "0 4 * * 1"
    assert cron_for(BY_NAME["wordnet"], {}) is None
    names = {s.name for s in rebuild_schedules(rebuild_jobs({}), {})}
    assert names == {"wikidata_rebuild_schedule", "catalogue_of_life_rebuild_schedule"}


def test_cron_from_environment_and_off():
    env = {"TAXOFORGE_CRON_WIKIDATA": "30 1 * * *", "TAXOFORGE_CRON_CATALOGUE_OF_LIFE": "off"}
    scheds = {s.name: s for s in rebuild_schedules(rebuild_jobs(env), env)}
    assert scheds["wikidata_rebuild_schedule"].cron_schedule == "30 1 * * *"
    assert "catalogue_of_life_rebuild_schedule" not in scheds


def test_invalid_cron_names_the_variable():
    with pytest.raises(ValueError, match=r"\$TAXOFORGE_CRON_WIKIDATA='every monday'"):
        cron_for(BY_NAME["wikidata"], {"TAXOFORGE_CRON_WIKIDATA": "every monday"})


def test_default_status_and_timezone():
    env = {"TAXOFORGE_SCHEDULES": "running", "TAXOFORGE_SCHEDULE_TZ": "Europe/Paris"}
    (s, *_) = rebuild_schedules(rebuild_jobs(env), env)
    assert s.default_status == dg.DefaultScheduleStatus.RUNNING
    assert s.execution_timezone == "Europe/Paris"
    (s, *_) = rebuild_schedules(rebuild_jobs({}), {})
    assert s.default_status == dg.DefaultScheduleStatus.STOPPED
    with pytest.raises(ValueError, match="TAXOFORGE_SCHEDULES"):
        rebuild_schedules(rebuild_jobs({}), {"TAXOFORGE_SCHEDULES": "yes"})


def test_network_rebuilds_retry_from_failure():
    jobs = {j.name: j for j in rebuild_jobs({"TAXOFORGE_REBUILD_RETRIES": "3"})}
    tags = jobs["wikidata_rebuild"].tags
    assert tags["dagster/max_retries"] == "3" and tags["dagster/retry_strategy"] == "FROM_FAILURE"
    assert "dagster/max_retries" not in jobs["wordnet_rebuild"].tags  # offline: nothing to retry
    with pytest.raises(ValueError, match="TAXOFORGE_REBUILD_RETRIES"):
        rebuild_jobs({"TAXOFORGE_REBUILD_RETRIES": "many"})


def _defs(*assets):
    jobs = rebuild_jobs({})
    return dg.Definitions(assets=list(assets), jobs=jobs, schedules=rebuild_schedules(jobs, {}))


def _tick(defs, name):
    repo = defs.get_repository_def()
    with dg.build_schedule_context(repository_def=repo) as ctx:
        return repo.get_schedule_def(name).evaluate_tick(ctx)


def test_schedule_skips_with_a_reason_when_its_groups_are_absent():
    @dg.asset(group_name="unrelated")
    def other():
        return 1

    data = _tick(_defs(other), "wikidata_rebuild_schedule")
    assert data.run_requests == [] and "no assets in groups wikidata" in data.skip_message


def test_schedule_requests_a_run_of_the_source_and_its_snapshots():
    @dg.asset(group_name="wikidata")
    def wikidata_tree():
        return 1

    @dg.asset(group_name="snapshots")
    def wikidata_snapshot(wikidata_tree):
        return 1

    @dg.asset(group_name="scores")
    def wikidata_scores(wikidata_tree):
        return 1

    defs = _defs(wikidata_tree, wikidata_snapshot, wikidata_scores)
    data = _tick(defs, "wikidata_rebuild_schedule")
    assert len(data.run_requests) == 1 and data.skip_message is None
    keys = {k.to_user_string() for k in defs.resolve_job_def("wikidata_rebuild").asset_layer.executable_asset_keys}
    assert keys == {"wikidata_tree", "wikidata_snapshot"}  # scores are not rebuilt by the schedule


def test_run_config_file_is_read_at_every_tick(tmp_path):
    @dg.asset(group_name="biology")
    def coldp_tree(config: dg.PermissiveConfig):
        return 1

    cfg = tmp_path / "col.yaml"
    env = {"TAXOFORGE_RUN_CONFIG_CATALOGUE_OF_LIFE": str(cfg)}
    jobs = rebuild_jobs(env)
    defs = dg.Definitions(assets=[coldp_tree], jobs=jobs, schedules=rebuild_schedules(jobs, env))
    cfg.write_text("ops:\n  coldp_tree:\n    config:\n      source: https://example.org/col.zip\n")
    (req,) = _tick(defs, "catalogue_of_life_rebuild_schedule").run_requests
    assert req.run_config == {"ops": {"coldp_tree": {"config": {"source": "https://example.org/col.zip"}}}}
    cfg.write_text("- not a mapping\n")
    with pytest.raises(dg.DagsterError) as err:
        _tick(defs, "catalogue_of_life_rebuild_schedule")
    assert "expected a YAML mapping" in str(err.value.__cause__)
    cfg.unlink()
    with pytest.raises(dg.DagsterError) as err:
        _tick(defs, "catalogue_of_life_rebuild_schedule")
    assert "$TAXOFORGE_RUN_CONFIG_CATALOGUE_OF_LIFE=" in str(err.value.__cause__)
    assert "cannot read" in str(err.value.__cause__)
    # without a run config the Catalogue of Life rebuild has no release to read: the tick skips, saying so
    jobs = rebuild_jobs({})
    defs = dg.Definitions(assets=[coldp_tree], jobs=jobs, schedules=rebuild_schedules(jobs, {}))
    data = _tick(defs, "catalogue_of_life_rebuild_schedule")
    assert not data.run_requests and "TAXOFORGE_RUN_CONFIG_CATALOGUE_OF_LIFE" in data.skip_message
    assert "coldp_tree" in data.skip_message


def test_catalogue_of_life_rebuild_takes_only_its_own_assets_from_a_shared_group():
    @dg.asset(group_name="biology")
    def coldp_tree():
        return 1

    @dg.asset(group_name="biology")
    def inat21_tree():
        return 1

    @dg.asset(group_name="biology")
    def biology_links(coldp_tree, inat21_tree):
        return 1

    defs = _defs(coldp_tree, inat21_tree, biology_links)
    keys = {k.to_user_string() for k in
            defs.resolve_job_def("catalogue_of_life_rebuild").asset_layer.executable_asset_keys}
    assert keys == {"coldp_tree", "biology_links"}
