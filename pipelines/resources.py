"""The code location's resources, configured from the environment: the one place that reads
``$TAXOFORGE_DATA_DIR`` and the other location-wide settings. The resource classes themselves
live below the assets, in :mod:`assets.common`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from assets.common.io_manager import ParquetIOManager
import dagster as dg

from assets.common.resources import (DataDirResource, ScoringResource, SnapshotStoreResource, SparkSubmitResource,
                                     WikidataSparqlResource)
from taxoforge.scores.options import env_fraction
from taxoforge.sources.wikidata.sparql import WDQS_ENDPOINT

__all__ = ["default_resources", "default_data_dir", "default_store"]


def default_data_dir() -> str:
    """``$TAXOFORGE_DATA_DIR`` or ``data/`` in the current folder."""
    return os.environ.get("TAXOFORGE_DATA_DIR", "data")


def default_store(data_dir: str | None = None) -> str:
    """Where the code location publishes snapshots: ``$TAXOFORGE_STORE`` (or its former name
    ``$TAXOFORGE_SNAPSHOT_STORE``); else ``<data_dir>/snapshots`` when a data folder is named
    (``data_dir``, or ``$TAXOFORGE_DATA_DIR``); else the library's default store
    (:func:`taxoforge.snapshots.store.default_store_url`, the user's data folder) — the one
    ``taxoforge score`` reads from any folder, so ``make demo`` publishes where the README's
    commands look."""
    from taxoforge.snapshots.store import STORE_VARIABLES, default_store_url

    named = next((os.environ[v] for v in STORE_VARIABLES if os.environ.get(v)), None)
    if named:
        return named
    if data_dir is not None or os.environ.get("TAXOFORGE_DATA_DIR"):
        return str(Path(data_dir or default_data_dir()) / "snapshots")
    return default_store_url()


def default_resources(data_dir: str | None = None) -> dict[str, Any]:
    """The resources of the code location, every path under ``data_dir`` (default
    :func:`default_data_dir`). Domains add theirs here, by key."""
    store = default_store(data_dir)
    data_dir = data_dir or default_data_dir()
    return {
        "io_manager": ParquetIOManager(data_dir=data_dir),
        "data_dir": DataDirResource(path=data_dir),
        "snapshot_store": SnapshotStoreResource(
            url=store,
            public_url=os.environ.get("TAXOFORGE_SNAPSHOT_PUBLIC_URL", "")),
        "wikidata_sparql": WikidataSparqlResource(
            endpoint=os.environ.get("TAXOFORGE_WIKIDATA_ENDPOINT") or WDQS_ENDPOINT,
            contact=os.environ.get("TAXOFORGE_WIKIDATA_CONTACT", ""),
            checkpoint_dir=str(Path(data_dir) / "checkpoints" / "wikidata")),
        "scoring": ScoringResource(
            outputs_dir=os.environ.get("TAXOFORGE_MODEL_OUTPUTS_DIR") or str(Path(data_dir) / "model_outputs"),
            taxonomy=os.environ.get("TAXOFORGE_SCORING_TAXONOMY", "imagenet1k"),
            min_scored_fraction=env_fraction("TAXOFORGE_MIN_SCORED_FRACTION", 0.95),
            scores_dir=str(Path(data_dir) / "scores"),
            index_dir=os.environ.get("TAXOFORGE_INDEX_DIR", "")),
        "spark": SparkSubmitResource(master=os.environ.get("TAXOFORGE_SPARK_MASTER") or "local[*]"),
        "pipes_subprocess_client": dg.PipesSubprocessClient(),
    }
