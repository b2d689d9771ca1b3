"""Rebuild schedules (the shared machinery, with the Wikidata and Catalogue of Life rebuilds of
their domains): configurable cron, WordNet never, a tick that skips with the reason when the
source's configuration is missing, and every scheduled run launched for real against sources
on 127.0.0.1 (a SPARQL endpoint, a dump file, a ColDP release over HTTP)."""

import io
import zipfile
from importlib import import_module

import dagster as dg
import pytest

from assets.biology.rebuilds import BIOLOGY_REBUILDS, CATALOGUE_OF_LIFE
from assets.common.resources import WikidataSparqlResource
from assets.common.schedules import cron_for, rebuild_jobs, rebuild_schedules, tick_run_config
from assets.wikidata.rebuilds import WIKIDATA_REBUILDS
from pipelines.definitions import build_definitions

REBUILDS = (*WIKIDATA_REBUILDS, *BIOLOGY_REBUILDS)
BY_NAME = {r.name: r for r in REBUILDS}


def schedules(env):
    return rebuild_schedules(REBUILDS, rebuild_jobs(REBUILDS, (), env), env)


def test_default_crons_weekly():
    assert cron_for(BY_NAME["wikidata_sparql"], {}) == "0 3 * * 1"
    assert cron_for(BY_NAME["wikidata_dump"], {}) == "0 5 * * 3"
    assert cron_for(BY_NAME["catalogue_of_life"], {}) == "0 4 * * 1"
    names = {s.name for s in schedules({})}
    assert names == {"wikidata_sparql_rebuild_schedule", "wikidata_dump_rebuild_schedule",
                     "catalogue_of_life_rebuild_schedule"}


def test_cron_from_environment_and_off():
    env = {"TAXOFORGE_CRON_WIKIDATA_SPARQL": "30 1 * * *", "TAXOFORGE_CRON_CATALOGUE_OF_LIFE": "off"}
    scheds = {s.name: s for s in schedules(env)}
    assert scheds["wikidata_sparql_rebuild_schedule"].cron_schedule == "30 1 * * *"
    assert "catalogue_of_life_rebuild_schedule" not in scheds


def test_invalid_cron_names_the_variable():
    with pytest.raises(ValueError, match=r"\$TAXOFORGE_CRON_WIKIDATA_DUMP='every monday'"):
        cron_for(BY_NAME["wikidata_dump"], {"TAXOFORGE_CRON_WIKIDATA_DUMP": "every monday"})


def test_default_status_and_timezone():
    env = {"TAXOFORGE_SCHEDULES": "running", "TAXOFORGE_SCHEDULE_TZ": "Europe/Paris"}
    (s, *_) = schedules(env)
    assert s.default_status == dg.DefaultScheduleStatus.RUNNING
    assert s.execution_timezone == "Europe/Paris"
    (s, *_) = schedules({})
    assert s.default_status == dg.DefaultScheduleStatus.STOPPED
    with pytest.raises(ValueError, match="TAXOFORGE_SCHEDULES"):
        schedules({"TAXOFORGE_SCHEDULES": "yes"})


def test_network_rebuilds_retry_from_failure_and_one_source_has_one_concurrency_key():
    jobs = {j.name: j for j in rebuild_jobs(REBUILDS, (), {"TAXOFORGE_REBUILD_RETRIES": "3"})}
    tags = jobs["wikidata_sparql_rebuild"].tags
    assert tags["dagster/max_retries"] == "3" and tags["dagster/retry_strategy"] == "FROM_FAILURE"
    assert "dagster/max_retries" not in jobs["wikidata_dump_rebuild"].tags  # a local file
    # the two Wikidata rebuilds write the same assets: one key, so they never run at once
    assert jobs["wikidata_sparql_rebuild"].tags["taxoforge/rebuild"] == jobs["wikidata_dump_rebuild"].tags[
        "taxoforge/rebuild"] == "wikidata"
    with pytest.raises(ValueError, match="TAXOFORGE_REBUILD_RETRIES"):
        rebuild_jobs(REBUILDS, (), {"TAXOFORGE_REBUILD_RETRIES": "many"})


def test_sparql_and_dump_rebuilds_are_separate_and_leave_the_spark_reading_out():
    defs = build_definitions(environ={"TAXOFORGE_WIKIDATA_SEEDS": "seeds.txt"})  # configured: with its snapshot
    for name in ("wikidata_sparql_rebuild", "wikidata_dump_rebuild"):
        keys = {k.to_user_string() for k in defs.resolve_job_def(name).asset_layer.executable_asset_keys}
        assert keys == {"wikidata_graph", "wikidata_labels", "wikidata_tree", "wikidata_links", "wikidata_snapshot"}
        # the jobs' config needs nothing the tick cannot give: {} is valid, the tick's checks do the rest
        assert dg.validate_run_config(defs.resolve_job_def(name), {}) is not None
    with pytest.raises(dg.DagsterInvalidConfigError):  # what the old mixed job failed on at every tick
        dg.validate_run_config(dg.Definitions(assets=dg.load_assets_from_modules([import_module("assets.wikidata.dump_spark")]),
                                              jobs=[dg.define_asset_job("spark", selection="wikidata_dump_graph")],
                                              resources=defs.resources).resolve_job_def("spark"), {})


def _tick(defs, name, instance=None):
    repo = defs.get_repository_def()
    with dg.build_schedule_context(repository_def=repo, resources=defs.resources, instance=instance) as ctx:
        return repo.get_schedule_def(name).evaluate_tick(ctx)


@pytest.mark.parametrize("env, schedule, reason", [
    ({}, "wikidata_sparql_rebuild_schedule", "no seed entities: set $TAXOFORGE_WIKIDATA_SEEDS"),
    ({"TAXOFORGE_WIKIDATA_SEEDS": "{seeds}"}, "wikidata_sparql_rebuild_schedule", "no contact address"),
    ({"TAXOFORGE_WIKIDATA_SEEDS": "{tmp}/gone.txt", "TAXOFORGE_WIKIDATA_CONTACT": "a@b.org"},
     "wikidata_sparql_rebuild_schedule", "seed file '{tmp}/gone.txt' does not exist"),
    ({}, "wikidata_dump_rebuild_schedule", "no dump: set $TAXOFORGE_WIKIDATA_DUMP"),
    ({"TAXOFORGE_WIKIDATA_DUMP": "{tmp}/latest-truthy.nt.gz"}, "wikidata_dump_rebuild_schedule",
     "dump file '{tmp}/latest-truthy.nt.gz' does not exist"),
    ({}, "catalogue_of_life_rebuild_schedule", "no release: set $TAXOFORGE_COLDP_SOURCE"),
])
def test_a_tick_without_its_configuration_skips_with_the_reason(tmp_path, monkeypatch, env, schedule, reason):
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("Q12418\n")
    for var in ("TAXOFORGE_WIKIDATA_SEEDS", "TAXOFORGE_WIKIDATA_CONTACT", "TAXOFORGE_WIKIDATA_DUMP",
                "TAXOFORGE_WIKIDATA_ENDPOINT", "TAXOFORGE_COLDP_SOURCE"):
        monkeypatch.delenv(var, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v.format(seeds=seeds, tmp=tmp_path))
    data = _tick(build_definitions(str(tmp_path)), schedule)
    assert data.run_requests == []
    assert reason.format(tmp=tmp_path) in data.skip_message


def test_run_config_file_is_read_at_every_tick_and_laid_over_the_environment(tmp_path, monkeypatch):
    cfg = tmp_path / "col.yaml"
    monkeypatch.setenv("TAXOFORGE_COLDP_SOURCE", "https://example.org/col.zip")
    monkeypatch.setenv("TAXOFORGE_RUN_CONFIG_CATALOGUE_OF_LIFE", str(cfg))
    defs = build_definitions(str(tmp_path))
    cfg.write_text("ops:\n  coldp_tree:\n    config:\n      checksum: 'sha256:00'\n")
    (req,) = _tick(defs, "catalogue_of_life_rebuild_schedule").run_requests
    assert req.run_config == {"ops": {"coldp_tree": {"config": {"source": "https://example.org/col.zip",
                                                                "checksum": "sha256:00"}}}}
    cfg.write_text("- not a mapping\n")
    with pytest.raises(dg.DagsterError) as err:
        _tick(defs, "catalogue_of_life_rebuild_schedule")
    assert "expected a YAML mapping" in str(err.value.__cause__)
    cfg.unlink()
    with pytest.raises(dg.DagsterError) as err:
        _tick(defs, "catalogue_of_life_rebuild_schedule")
    assert "$TAXOFORGE_RUN_CONFIG_CATALOGUE_OF_LIFE=" in str(err.value.__cause__)
    assert "cannot read" in str(err.value.__cause__)


def test_a_rebuild_publishes_its_snapshot_only_when_the_taxonomy_is_configured():
    (job,) = rebuild_jobs([CATALOGUE_OF_LIFE], ())
    assert job.name == "catalogue_of_life_rebuild" and CATALOGUE_OF_LIFE.job_assets(()) == ["coldp_tree"]
    assert [s.name for s in rebuild_schedules([CATALOGUE_OF_LIFE], [job], {})] == ["catalogue_of_life_rebuild_schedule"]
    assert CATALOGUE_OF_LIFE.job_assets(["coldp"]) == ["coldp_tree", "coldp_snapshot"]
    unconfigured = build_definitions(environ={}).resolve_job_def("catalogue_of_life_rebuild")
    assert {k.to_user_string() for k in unconfigured.asset_layer.executable_asset_keys} == {"coldp_tree"}
    assert tick_run_config(BY_NAME["wikidata_dump"], {"TAXOFORGE_WIKIDATA_DUMP": "/d.nt"}) == {
        "ops": {"wikidata_graph": {"config": {"input_file": "/d.nt"}}}}
    # the variables each rebuild reads are what configure its taxonomy
    assert set(CATALOGUE_OF_LIFE.variables) == {"TAXOFORGE_COLDP_SOURCE", "TAXOFORGE_RUN_CONFIG_CATALOGUE_OF_LIFE"}


# --- every scheduled run, launched -------------------------------------------------------------

INSTANCES = {
    "Q12418": {"classes": ["Q3305213"], "label": "Mona Lisa", "aliases": ["La Gioconda"]},
    "Q990000001": {"classes": ["Q87167", "Q83790"], "label": "test manuscript textbook"},
}


def _zip_folder(folder) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for p in sorted(folder.iterdir()):
            zf.write(p, p.name)
    return buf.getvalue()


@pytest.fixture()
def loopback_sources(tmp_path, monkeypatch, shared_data):
    """Every source a schedule reads, on 127.0.0.1 or on disk, named by the environment."""
    from tests.taxoforge.files.scripted_http import ScriptedServer, file_reply
    from tests.taxoforge.sources.wikidata.loopback_sparql import LoopbackSparql, build_store

    seeds = tmp_path / "seeds.txt"
    seeds.write_text("".join(f"{q}\n" for q in sorted(INSTANCES)))
    import pyoxigraph as ox

    release = _zip_folder(shared_data / "coldp" / "coldp_pypi_test_Tonzidae")
    store = build_store(shared_data / "wikidata", INSTANCES)
    dump = tmp_path / "latest-truthy.nt.gz"  # the endpoint's triples as a gzip N-Triples dump
    import gzip

    with gzip.open(dump, "wb") as f:
        f.write(store.dump(format=ox.RdfFormat.N_TRIPLES, from_graph=ox.DefaultGraph()))
    with LoopbackSparql(store) as sparql, ScriptedServer() as http:
        http.routes["/col/latest.zip"] = lambda r: file_reply(r, release, etag='"1"')
        env = {
            "TAXOFORGE_DATA_DIR": str(tmp_path / "data"),
            "TAXOFORGE_SNAPSHOT_STORE": str(tmp_path / "store"),
            "TAXOFORGE_WIKIDATA_ENDPOINT": sparql.url,
            "TAXOFORGE_WIKIDATA_CONTACT": "tests@taxoforge.invalid",
            "TAXOFORGE_WIKIDATA_SEEDS": str(seeds),
            "TAXOFORGE_WIKIDATA_DUMP": str(dump),
            "TAXOFORGE_COLDP_SOURCE": f"{http.url}/col/latest.zip",
        }
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        yield {"sparql": sparql, "http": http}


@pytest.mark.slow
def test_every_schedule_requests_a_valid_run_that_succeeds_against_loopback_sources(tmp_path, loopback_sources):
    defs = build_definitions(str(tmp_path / "data"))
    repo = defs.get_repository_def()
    assert isinstance(defs.resources["wikidata_sparql"], WikidataSparqlResource)
    launched = {}
    with dg.instance_for_test() as instance:
        for sched in repo.schedule_defs:
            data = _tick(defs, sched.name, instance)
            assert data.run_requests, f"{sched.name} skipped: {data.skip_message}"
            job = defs.resolve_job_def(sched.job_name)
            for req in data.run_requests:
                dg.validate_run_config(job, req.run_config)  # raises DagsterInvalidConfigError
                result = job.execute_in_process(run_config=req.run_config, instance=instance, tags=req.tags,
                                                raise_on_error=False)
                assert result.success, f"{sched.name}: {[e.message for e in result.all_events if e.is_failure]}"
                launched[sched.name] = {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()}
    assert set(launched) == {s.name for s in repo.schedule_defs}
    assert {"wikidata_tree", "wikidata_snapshot"} <= launched["wikidata_sparql_rebuild_schedule"]
    assert {"wikidata_tree", "wikidata_snapshot"} <= launched["wikidata_dump_rebuild_schedule"]
    assert launched["catalogue_of_life_rebuild_schedule"] == {"coldp_tree", "coldp_snapshot"}
    assert loopback_sources["sparql"].requests and loopback_sources["http"].log


def test_a_renamed_cron_variable_is_refused_by_name_not_ignored():
    with pytest.raises(ValueError, match=r"\$TAXOFORGE_CRON_WIKIDATA is no longer read.*TAXOFORGE_CRON_WIKIDATA_SPARQL"):
        cron_for(BY_NAME["wikidata_sparql"], {"TAXOFORGE_CRON_WIKIDATA": "0 3 * * 1"})
