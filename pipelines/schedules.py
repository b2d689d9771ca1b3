"""Schedules: the rebuilds of the taxonomies (and the jobs they run), and the
``ops_heartbeat`` of the deployment self-test.

How often each source changes decides its schedule:

==================  ===================  ==============================================
source              default cron (UTC)   why
==================  ===================  ==============================================
Wikidata            ``0 3 * * 1``        edited continuously; weekly keeps the tree fresh
                                         without leaning on the public SPARQL endpoint
Catalogue of Life   ``0 4 * * 1``        checklist releases come out every few weeks;
                                         a weekly check picks each one up
WordNet / ImageNet  never                WordNet 3.0 is frozen (last release 2006) and
                                         ImageNet-1k's classes are fixed: one build is final
==================  ===================  ==============================================

Each rebuild is an asset job over the source's asset groups plus the snapshot assets
downstream of them, so a scheduled rebuild publishes a new snapshot — and the blocking tree
checks (:mod:`assets.common.checks`) stop it from publishing a broken one.

Configuration (environment variables, read when the code location loads):

``TAXOFORGE_CRON_<NAME>``       cron string of a rebuild (``<NAME>`` = ``WIKIDATA``,
                                ``CATALOGUE_OF_LIFE``); ``off`` or ``never`` removes the
                                schedule (the job stays, for manual runs).
``TAXOFORGE_RUN_CONFIG_<NAME>`` a YAML file of run config for the scheduled runs (e.g. the
                                ColDP release to fetch); read at every tick.
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
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import yaml

from pipelines.jobs import ops_smoke_job

__all__ = ["Rebuild", "REBUILDS", "rebuild_job", "rebuild_schedule", "rebuild_jobs", "rebuild_schedules",
           "cron_for", "run_config_for", "SNAPSHOT_GROUPS", "ops_heartbeat"]

# Asset groups holding published snapshots; a rebuild includes the ones downstream of its source.
SNAPSHOT_GROUPS = ("snapshots",)

OFF_VALUES = {"off", "never", "none", "disabled", ""}


@dataclass(frozen=True)
class Rebuild:
    """One source's rebuild: the asset groups it refreshes and how often."""

    name: str
    groups: tuple[str, ...]
    default_cron: str | None  # None: never scheduled
    why: str
    network: bool = True
    # Within ``groups``, only assets whose key contains one of these (the source's own
    # assets, e.g. ``coldp`` in the shared ``biology`` group); empty: the whole groups.
    key_substrings: tuple[str, ...] = ()
    # What a run of this source cannot do without (its ``$TAXOFORGE_RUN_CONFIG_<NAME>``);
    # without a run config a tick skips and says this instead of starting a run that fails.
    needs_run_config: str | None = None

    @property
    def env_var(self) -> str:
        return f"TAXOFORGE_CRON_{self.name.upper()}"

    @property
    def job_name(self) -> str:
        return f"{self.name}_rebuild"

    @property
    def schedule_name(self) -> str:
        return f"{self.name}_rebuild_schedule"


REBUILDS: tuple[Rebuild, ...] = (
    Rebuild("wikidata", ("wikidata",), "0 3 * * 1",
            "Wikidata is edited continuously; rebuilt weekly (Mondays 03:00 UTC)."),
    Rebuild("catalogue_of_life", ("biology",), "0 4 * * 1",
            "Catalogue of Life releases come out every few weeks; checked weekly (Mondays 04:00 UTC).",
            key_substrings=("coldp",),
            needs_run_config="the ColDP release to read (ops: {coldp_tree: {config: {source: <URL, zip or "
                             "folder>}}}); taxoforge ships none"),
    Rebuild("wordnet", ("wordnet", "imagenet"), None,
            "WordNet 3.0 is frozen (last release 2006) and ImageNet-1k's classes are fixed: never rescheduled.",
            network=False),
)


def cron_for(rebuild: Rebuild, environ: Mapping[str, str] | None = None) -> str | None:
    """The cron string of ``rebuild``: ``$TAXOFORGE_CRON_<NAME>`` if set, else its default.

    Returns ``None`` when the rebuild is not scheduled. Raises ``ValueError`` naming the
    variable when its value is not a valid cron string."""
    env = os.environ if environ is None else environ
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
    """Run config of a scheduled rebuild: the YAML file named by ``$TAXOFORGE_RUN_CONFIG_<NAME>``
    (read at every tick, so an edit applies to the next run), or ``{}``.

    Raises ``ValueError`` naming the variable and the file when it is missing or is not a
    YAML mapping; the tick then fails visibly in the UI."""
    env = os.environ if environ is None else environ
    var = f"TAXOFORGE_RUN_CONFIG_{rebuild.name.upper()}"
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


def _valid_cron(value: str) -> bool:
    """Whether Dagster accepts ``value`` as a schedule's cron string."""
    try:
        dg.ScheduleDefinition(name="cron_probe", cron_schedule=value, job_name="cron_probe")
    except (dg.DagsterInvalidDefinitionError, ValueError):
        return False
    return True


def _selection(rebuild: Rebuild) -> dg.AssetSelection:
    """The source's assets, and everything downstream of them within the source's groups and
    the snapshot groups (links, published snapshots) — never scores or other sources."""
    groups = dg.AssetSelection.groups(*rebuild.groups)
    source = groups
    if rebuild.key_substrings:
        by_key = dg.AssetSelection.key_substring(rebuild.key_substrings[0])
        for sub in rebuild.key_substrings[1:]:
            by_key = by_key | dg.AssetSelection.key_substring(sub)
        source = groups & by_key
    return source | (source.downstream() & dg.AssetSelection.groups(*rebuild.groups, *SNAPSHOT_GROUPS))


def _retry_tags(rebuild: Rebuild, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    env = os.environ if environ is None else environ
    tags = {"taxoforge/rebuild": rebuild.name}
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


def rebuild_job(rebuild: Rebuild, environ: Mapping[str, str] | None = None):
    """The asset job that rebuilds ``rebuild``'s groups and the snapshots downstream of them.

    Groups that do not exist (yet) select nothing; the job then has no steps and its
    schedule skips with a reason."""
    return dg.define_asset_job(
        rebuild.job_name,
        selection=_selection(rebuild),
        description=f"Rebuild of {rebuild.name} (groups {', '.join(rebuild.groups)}"
                    + (f", only assets whose key contains {' or '.join(rebuild.key_substrings)}," if rebuild.key_substrings else "")
                    + f" and their snapshots). {rebuild.why}",
        tags=_retry_tags(rebuild, environ),
    )


def _default_status(environ: Mapping[str, str] | None = None) -> dg.DefaultScheduleStatus:
    env = os.environ if environ is None else environ
    value = env.get("TAXOFORGE_SCHEDULES", "stopped").strip().lower()
    if value not in {"running", "stopped"}:
        raise ValueError(f"$TAXOFORGE_SCHEDULES={value!r}: expected 'running' or 'stopped'")
    return dg.DefaultScheduleStatus.RUNNING if value == "running" else dg.DefaultScheduleStatus.STOPPED


def rebuild_schedule(rebuild: Rebuild, job, cron: str,
                     environ: Mapping[str, str] | None = None) -> dg.ScheduleDefinition:
    """A schedule running ``job`` on ``cron``; a tick skips, with the reason in the UI, when the
    job selects no assets (its domain module is not installed)."""
    env = os.environ if environ is None else environ

    @dg.schedule(
        name=rebuild.schedule_name,
        job=job,
        cron_schedule=cron,
        execution_timezone=env.get("TAXOFORGE_SCHEDULE_TZ", "UTC"),
        default_status=_default_status(env),
        description=f"{rebuild.why} Cron: {cron} (set ${rebuild.env_var} to change, 'off' to disable).",
        tags={"taxoforge/rebuild": rebuild.name},
    )
    def _schedule(context: dg.ScheduleEvaluationContext):
        repo = context.repository_def
        if repo is not None:
            job_def = repo.get_job(rebuild.job_name)
            if not job_def.asset_layer.executable_asset_keys:
                return dg.SkipReason(f"no assets in groups {', '.join(rebuild.groups)}: nothing to rebuild")
        run_config = run_config_for(rebuild, env)
        if not run_config and rebuild.needs_run_config:
            return dg.SkipReason(f"no run config: set $TAXOFORGE_RUN_CONFIG_{rebuild.name.upper()} to a YAML file "
                                 f"giving {rebuild.needs_run_config}")
        return dg.RunRequest(run_key=None, run_config=run_config)

    return _schedule


def rebuild_jobs(environ: Mapping[str, str] | None = None) -> list:
    return [rebuild_job(r, environ) for r in REBUILDS]


def rebuild_schedules(jobs: list,
                      environ: Mapping[str, str] | None = None) -> list[dg.ScheduleDefinition]:
    by_name = {j.name: j for j in jobs}
    out = []
    for r in REBUILDS:
        cron = cron_for(r, environ)
        if cron is not None:
            out.append(rebuild_schedule(r, by_name[r.job_name], cron, environ))
    return out


ops_heartbeat = dg.ScheduleDefinition(
    name="ops_heartbeat",
    job=ops_smoke_job,
    cron_schedule="* * * * *",
    execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="Every minute: materialise ops_smoke. Off by default; turn it on to check the daemon's scheduler.",
)
