"""The scoring jobs: one per scoring asset, each materialising one partition (one model-output
file) at a time; the sensor (:mod:`assets.scoring.sensors`) requests their runs. Their
partitions are the assets' (Dagster infers them from the selection)."""

from collections.abc import Iterable

import dagster as dg

__all__ = ["score_model_outputs", "scoring_jobs"]

score_model_outputs = dg.define_asset_job(
    "score_model_outputs", selection=dg.AssetSelection.assets("model_output_scores"),
    description="Score one model-output file against a taxonomy without a snapshot asset here (partition = its "
                "path under the model-outputs folder).",
)


def scoring_jobs(taxonomies: Iterable[str]) -> dict:
    """``score_<name>_outputs`` for each of ``taxonomies``: score one file against the ``<name>``
    snapshot (its asset ``<name>_scores``).

    Parameters
    ----------
    taxonomies : iterable of str
        Taxonomies with a scoring asset in the code location.

    Returns
    -------
    dict
        Taxonomy name → its job (an unresolved asset job, as ``define_asset_job`` makes it).
    """
    return {
        name: dg.define_asset_job(
            f"score_{name}_outputs", selection=dg.AssetSelection.assets(f"{name}_scores"),
            description=f"Score one model-output file against the {name} snapshot (partition = its path under the "
                        "model-outputs folder).")
        for name in taxonomies
    }
