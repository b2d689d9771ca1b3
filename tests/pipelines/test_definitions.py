"""The whole code location loads, every job resolves, and every asset is documented and owned."""

from __future__ import annotations

import ast
import pkgutil
from importlib import import_module
from pathlib import Path

import dagster as dg
import pytest
from syrupy.extensions.json import JSONSnapshotExtension

import assets
from assets.common.deployment import built_for
from pipelines.definitions import build_definitions


def asset_modules() -> list:
    """Every module of the ``assets`` package, sub-packages included."""
    return [import_module(m.name) for m in pkgutil.walk_packages(assets.__path__, prefix="assets.")]


def test_definitions_load_and_jobs_resolve():
    # every taxonomy configured: then nothing defined under assets/ is left out
    defs = build_definitions(environ={"TAXOFORGE_TAXONOMIES": "coldp,inat21,wikidata,inaturalist_named"})
    graph = defs.resolve_asset_graph()
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    assert {"wordnet_tree", "imagenet1k_taxonomy"} <= keys
    for job in defs.resolve_all_job_defs():
        assert job.name
    assert defs.resolve_job_def("embedded_default") is not None
    # every asset and check defined at module scope anywhere under assets/ is in the code location
    loaded = {k for k in graph.get_all_asset_keys()}
    checks = {c for k in loaded for c in graph.get(k).check_keys}
    for mod in asset_modules():
        for a in dg.load_assets_from_modules([mod]):
            assert set(a.keys) <= loaded, f"{mod.__name__}: {a.keys} not loaded"
        for c in dg.load_asset_checks_from_modules([mod]):
            assert set(c.check_keys) <= checks, f"{mod.__name__}: {c.check_keys} not loaded"
    assert {m.__name__ for m in asset_modules()} >= {"assets.wordnet", "assets.imagenet"}


def test_each_domain_keeps_its_jobs_schedules_and_sensors():
    """Each domain package under ``assets/`` holds its own jobs, schedules and sensors (the code
    location adds only what spans the domains: the embedded default's job and the automation
    sensor); ``common`` holds no Dagster object at module scope; ``definitions.py`` imports no
    private name."""
    env = {"TAXOFORGE_TAXONOMIES": "coldp,wikidata"}
    tree = dg.ComponentTree.from_module(defs_module=assets, project_root=Path(assets.__file__).parents[1])
    by_domain = {}
    with built_for(env):
        for domain in ("wikidata", "biology", "operations", "scoring", "common"):
            d = tree.build_defs_at_path(Path(domain))
            by_domain[domain] = ({s.name for s in d.schedules or []}, {s.name for s in d.sensors or []},
                                 {j.name for j in d.jobs or []})
    assert by_domain["wikidata"] == ({"wikidata_sparql_rebuild_schedule", "wikidata_dump_rebuild_schedule"}, set(),
                                     {"wikidata_sparql_rebuild", "wikidata_dump_rebuild"})
    assert by_domain["biology"] == ({"catalogue_of_life_rebuild_schedule"}, set(), {"catalogue_of_life_rebuild"})
    assert by_domain["operations"] == ({"ops_heartbeat"}, {"run_failure_log"}, {"ops_smoke_job"})
    assert by_domain["scoring"] == (set(), {"model_outputs_sensor"}, {
        "score_model_outputs", *(f"score_{n}_outputs" for n in ("wordnet", "imagenet1k", "inaturalist", "coldp",
                                                                  "wikidata"))})
    assert by_domain["common"] == (set(), set(), set())
    common = [import_module(m.name) for m in pkgutil.walk_packages(import_module("assets.common").__path__,
                                                                   prefix="assets.common.")]
    for mod in common:
        found = dg.load_definitions_from_module(mod)
        assert not (found.assets or found.asset_checks or found.jobs or found.schedules or found.sensors), mod.__name__
    everything = build_definitions(environ=env).get_repository_def()
    spanning = {s.name for s in everything.sensor_defs} - set().union(*(v[1] for v in by_domain.values()))
    assert spanning == {"default_automation_condition_sensor", "observed_recently_sensor"}
    tree_ast = ast.parse(Path(import_module("pipelines.definitions").__file__).read_text(encoding="utf-8"))
    private = [f"{node.module}.{a.name}" for node in ast.walk(tree_ast) if isinstance(node, ast.ImportFrom)
               for a in node.names if a.name.startswith("_")]
    assert not private, f"pipelines/definitions.py imports private names: {private}"


def test_every_schedule_and_job_resolves_in_the_code_location():
    defs = build_definitions()
    repo = defs.get_repository_def()
    jobs = {j.name for j in repo.get_all_jobs()}
    assert {"ops_smoke_job", "wikidata_sparql_rebuild", "wikidata_dump_rebuild", "catalogue_of_life_rebuild"} <= jobs
    for sched in repo.schedule_defs:
        assert sched.job_name in jobs, sched.name
    assert {s.name for s in repo.sensor_defs} >= {"run_failure_log"}
    # WordNet is never rescheduled: its files are observed and the tree follows them (automation).
    assert not any(s.name.startswith("wordnet") for s in repo.schedule_defs)


def leaf_selections(selection: dg.AssetSelection):
    """The selections a composed selection is made of (``a | b``, ``a & b``, ``a - b``,
    ``a.downstream()``, …), one per group for a selection of several groups."""
    parts = [*getattr(selection, "operands", ())]
    parts += [getattr(selection, a) for a in ("child", "left", "right") if isinstance(getattr(selection, a, None), dg.AssetSelection)]
    if parts:
        for part in parts:
            yield from leaf_selections(part)
    elif len(getattr(selection, "selected_groups", ())) > 1:
        for group in selection.selected_groups:
            yield dg.AssetSelection.groups(group)
    else:
        yield selection


def test_every_job_selection_names_assets_that_exist():
    """Every job (and so every schedule and sensor, which run jobs) selects assets, and every
    group, tag, key or key part its selection names matches at least one asset: a selection
    naming a group that does not exist fails here instead of quietly selecting nothing."""
    defs = build_definitions()
    graph = defs.resolve_asset_graph()
    jobs = [j for j in defs.jobs if getattr(j, "selection", None) is not None]  # asset jobs
    assert {j.name for j in jobs} >= {"embedded_default", "wikidata_sparql_rebuild", "catalogue_of_life_rebuild"}
    for job in jobs:
        for leaf in leaf_selections(job.selection):
            assert leaf.resolve(graph), f"job {job.name}: {leaf} matches no asset"
    for job in defs.resolve_all_job_defs():
        if not job.name.startswith("__"):
            assert job.asset_layer.executable_asset_keys, f"job {job.name} selects no asset"
    repo = defs.get_repository_def()
    targets = [s.job_name for s in repo.schedule_defs] + [j.name for s in repo.sensor_defs if s.has_jobs for j in s.jobs]
    assert set(targets) <= {j.name for j in jobs}


def test_resources_are_defined_once_for_the_code_location():
    """Asset modules take resources as parameters; none makes its own instance."""
    for mod in asset_modules():
        made = [name for name, value in vars(mod).items()
                if isinstance(value, (dg.ResourceDefinition, dg.ConfigurableResource, dg.ConfigurableIOManager))]
        assert not made, f"{mod.__name__} defines resource instances {made}; configure them in pipelines/resources.py"
    assert set(build_definitions().resources) >= {"io_manager", "data_dir", "snapshot_store", "wikidata_sparql", "scoring"}


def test_every_asset_has_group_description_and_owner():
    defs = build_definitions()
    for spec in defs.resolve_all_asset_specs():
        name = spec.key.to_user_string()
        assert spec.group_name and spec.group_name != "default", f"{name} has no group"
        assert spec.description, f"{name} has no description"
        assert spec.owners, f"{name} has no owner"


def test_embedded_default_selects_only_offline_assets():
    defs = build_definitions()
    job = defs.resolve_job_def("embedded_default")
    selected = {k.to_user_string() for k in job.asset_layer.selected_asset_keys}
    assert {"wordnet_noun_graph", "wordnet_tree", "imagenet1k_labels", "imagenet1k_links", "imagenet1k_taxonomy"} <= selected
    assert not any(k.startswith("wikidata") for k in selected)
    assert isinstance(job, dg.JobDefinition)


@pytest.fixture()
def snapshot_json(snapshot):
    """syrupy's snapshot stored as JSON: ``__snapshots__/test_definitions/<test name>.json``."""
    return snapshot.use_extension(JSONSnapshotExtension)


def lineage_snapshot() -> dict:
    """Asset keys with group, upstream keys, checks and automation condition; jobs, schedules and
    sensors by name (for a deployment that configured nothing beyond the embedded default)."""
    defs = build_definitions(environ={})
    graph = defs.resolve_asset_graph()
    assets = {}
    for key in sorted(graph.get_all_asset_keys(), key=lambda k: k.to_user_string()):
        node = graph.get(key)
        assets[key.to_user_string()] = {
            "group": node.group_name,
            "upstream": sorted(k.to_user_string() for k in node.parent_keys),
            "checks": sorted(c.name for c in node.check_keys),
            "automation": node.automation_condition.get_label() if node.automation_condition else None,
        }
    return {
        "assets": assets,
        "jobs": sorted(j.name for j in defs.resolve_all_job_defs() if not j.name.startswith("__")),
        "schedules": sorted([s.name, s.cron_schedule if isinstance(s.cron_schedule, str) else list(s.cron_schedule)]
                            for s in defs.get_repository_def().schedule_defs),
        "sensors": sorted(s.name for s in defs.get_repository_def().sensor_defs),
    }


def test_lineage_matches_the_reviewed_snapshot(snapshot_json):
    """A change in lineage, checks, jobs or automation fails here and shows as a diff of
    ``__snapshots__/test_definitions/test_lineage_matches_the_reviewed_snapshot.json``; a
    missing snapshot fails too. After an intended change run
    ``pytest --snapshot-update tests/pipelines/test_definitions.py`` and commit the diff."""
    assert lineage_snapshot() == snapshot_json
