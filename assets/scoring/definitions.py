"""The scoring assets, jobs and sensor of the taxonomies the deployment configures
(:mod:`assets.snapshots.taxonomies`): ``<name>_scores`` and ``score_<name>_outputs`` for each,
and ``model_outputs_sensor`` routing files to them (files of any other taxonomy go to
``model_output_scores``, defined in :mod:`assets.scoring.assets` for every deployment)."""

import dagster as dg

from assets.common.deployment import deployment_environ
from assets.scoring.assets import scores_asset
from assets.scoring.jobs import scoring_jobs
from assets.scoring.sensors import model_outputs_sensor_for
from assets.snapshots.taxonomies import configured_taxonomies


@dg.definitions
def configured_scoring() -> dg.Definitions:
    """``<name>_scores``, its job and the sensor, for every configured taxonomy."""
    taxonomies = configured_taxonomies(deployment_environ())
    jobs = scoring_jobs(taxonomies)
    return dg.Definitions(assets=[scores_asset(name) for name in taxonomies], jobs=list(jobs.values()),
                          sensors=[model_outputs_sensor_for(jobs)])
