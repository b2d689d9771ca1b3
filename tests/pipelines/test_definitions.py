"""The whole code location loads, every job resolves, and every asset is documented and owned."""

from __future__ import annotations

import dagster as dg

from pipelines.definitions import build_definitions, domain_modules


def test_definitions_load_and_jobs_resolve():
    defs = build_definitions()
    graph = defs.resolve_asset_graph()
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    assert {"wordnet_tree", "imagenet1k_taxonomy"} <= keys
    for job in defs.resolve_all_job_defs():
        assert job.name
    assert defs.resolve_job_def("embedded_default") is not None
    assert {m.__name__ for m in domain_modules()} >= {"assets.wordnet", "assets.imagenet"}


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


SNAPSHOT = __import__("pathlib").Path(__file__).parent / "__snapshots__" / "definitions.json"


def lineage_snapshot() -> dict:
    """Asset keys with group, upstream keys and checks; jobs, schedules and sensors by name."""
    defs = build_definitions()
    graph = defs.resolve_asset_graph()
    assets = {}
    for key in sorted(graph.get_all_asset_keys(), key=lambda k: k.to_user_string()):
        node = graph.get(key)
        assets[key.to_user_string()] = {
            "group": node.group_name,
            "upstream": sorted(k.to_user_string() for k in node.parent_keys),
            "checks": sorted(c.name for c in node.check_keys),
        }
    return {
        "assets": assets,
        "jobs": sorted(j.name for j in defs.resolve_all_job_defs() if not j.name.startswith("__")),
        "schedules": sorted((s.name, s.cron_schedule if isinstance(s.cron_schedule, str) else list(s.cron_schedule))
                            for s in defs.get_repository_def().schedule_defs),
        "sensors": sorted(s.name for s in defs.get_repository_def().sensor_defs),
    }


def test_lineage_matches_the_reviewed_snapshot():
    """A change in lineage, checks, jobs or automation shows up in review as a diff of
    ``__snapshots__/definitions.json``. Regenerate with ``TAXOFORGE_UPDATE_SNAPSHOTS=1``."""
    import json
    import os

    current = json.loads(json.dumps(lineage_snapshot()))
    if os.environ.get("TAXOFORGE_UPDATE_SNAPSHOTS") or not SNAPSHOT.exists():
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n")
    assert current == json.loads(SNAPSHOT.read_text())
