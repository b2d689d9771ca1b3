"""Resources shared by every domain's assets: where outputs live and how they are stored."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl

from taxoforge.sources.wikidata.sparql import WDQS_ENDPOINT, SparqlClient
from taxoforge.files import write_parquet_atomic, write_text_atomic
from taxoforge.trees.tables import TreeTables

__all__ = ["ParquetIOManager", "SnapshotStoreResource", "WikidataSparqlResource", "default_resources", "default_data_dir"]


def default_data_dir() -> str:
    """``$TAXOFORGE_DATA_DIR`` or ``data/`` in the current folder."""
    return os.environ.get("TAXOFORGE_DATA_DIR", "data")


class ParquetIOManager(dg.ConfigurableIOManager):
    """Stores asset values as Parquet under ``<data_dir>/assets/<asset key>/``.

    A :class:`~taxoforge.trees.tables.TreeTables` becomes a folder of the four tree tables;
    a polars DataFrame one ``table.parquet``; a dict of DataFrames one file per key.
    Every file is written to a temporary name and renamed."""

    data_dir: str = "data"

    def _folder(self, key: dg.AssetKey) -> Path:
        return Path(self.data_dir) / "assets" / "/".join(key.path)

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        if obj is None:
            return
        folder = self._folder(context.asset_key)
        if isinstance(obj, TreeTables):
            obj.write(folder)
            _write_info(folder, obj.info)  # source versions and seed, for snapshots downstream
            (folder / "KIND").write_text("tree\n")
        elif isinstance(obj, pl.DataFrame):
            write_parquet_atomic(obj, folder / "table.parquet")
            folder.joinpath("KIND").write_text("table\n")
        elif isinstance(obj, dict) and all(isinstance(v, pl.DataFrame) for v in obj.values()):
            for k, v in obj.items():
                write_parquet_atomic(v, folder / f"{k}.parquet")
            folder.joinpath("KIND").write_text("tables\n")
        else:
            raise TypeError(f"ParquetIOManager cannot store {type(obj).__name__} for {context.asset_key}")
        context.add_output_metadata({"path": dg.MetadataValue.path(str(folder.resolve()))})

    def load_input(self, context: dg.InputContext) -> Any:
        folder = self._folder(context.asset_key)
        kind_file = folder / "KIND"
        if not kind_file.exists():
            raise FileNotFoundError(f"{folder}: asset {context.asset_key.to_user_string()} has not been materialised")
        kind = kind_file.read_text().strip()
        if kind == "tree":
            tree = TreeTables.read(folder, name=context.asset_key.path[-1])
            if (folder / "info.json").exists():
                tree.info = json.loads((folder / "info.json").read_text())
            return tree
        if kind == "table":
            return pl.read_parquet(folder / "table.parquet")
        return {p.stem: pl.read_parquet(p) for p in sorted(folder.glob("*.parquet"))}


def _write_info(folder: Path, info: dict) -> None:
    """``info.json`` beside a tree's tables (temp file + rename); non-JSON values as text."""
    write_text_atomic(folder / "info.json", json.dumps(info or {}, indent=2, sort_keys=True, default=str) + "\n")


class SnapshotStoreResource(dg.ConfigurableResource):
    """Where snapshot assets publish: a local folder or any fsspec URL (see
    :mod:`taxoforge.snapshots.store`). Default ``$TAXOFORGE_SNAPSHOT_STORE`` or
    ``<data_dir>/snapshots``."""

    url: str = "data/snapshots"
    min_link_coverage: float | None = None  # extra publishing gate, per dataset

    def store(self):
        from taxoforge.snapshots.store import SnapshotStore

        return SnapshotStore(self.url)


class WikidataSparqlResource(dg.ConfigurableResource):
    """The Wikidata Query Service client (:class:`taxoforge.sources.wikidata.sparql.SparqlClient`):
    endpoint, contact for the User-Agent (required by the public WDQS; default
    ``$TAXOFORGE_WIKIDATA_CONTACT``), politeness and retry settings, and the folder where
    finished query batches are checkpointed so an interrupted extraction resumes."""

    # the client's own defaults, so the two cannot drift apart
    endpoint: str = WDQS_ENDPOINT
    contact: str = ""
    timeout: float = SparqlClient.timeout
    max_retries: int = SparqlClient.max_retries
    backoff_base: float = SparqlClient.backoff_base
    backoff_max: float = SparqlClient.backoff_max
    min_interval: float = SparqlClient.min_interval
    checkpoint_dir: str = "data/checkpoints/wikidata"

    def client(self, *, endpoint: str | None = None, contact: str | None = None):
        """A client; ``endpoint``/``contact`` override the resource's (e.g. from asset config)."""
        return SparqlClient(endpoint=endpoint or self.endpoint, contact=contact or self.contact, timeout=self.timeout,
                            max_retries=self.max_retries, backoff_base=self.backoff_base,
                            backoff_max=self.backoff_max, min_interval=self.min_interval)


class ScoringResource(dg.ConfigurableResource):
    """Where the scoring sensor looks for new model-output files, what they are scored
    against by default, and where results go (``assets/scoring.py``).

    ``taxonomy``: a snapshot reference ``NAME[@VERSION]`` or a tree or snapshot folder
    (default: the materialised ``imagenet1k_taxonomy`` asset's folder)."""

    outputs_dir: str = "data/model_outputs"
    taxonomy: str = ""
    scores_dir: str = "data/scores"


def default_resources(data_dir: str | None = None) -> dict[str, Any]:
    """The resources every code location gets. Domains add theirs here, by key."""
    data_dir = data_dir or default_data_dir()
    return {
        "io_manager": ParquetIOManager(data_dir=data_dir),
        "snapshot_store": SnapshotStoreResource(
            url=os.environ.get("TAXOFORGE_SNAPSHOT_STORE") or str(Path(data_dir) / "snapshots")),
        "wikidata_sparql": WikidataSparqlResource(
            endpoint=os.environ.get("TAXOFORGE_WIKIDATA_ENDPOINT") or "https://query.wikidata.org/sparql",
            contact=os.environ.get("TAXOFORGE_WIKIDATA_CONTACT", ""),
            checkpoint_dir=str(Path(data_dir) / "checkpoints" / "wikidata")),
        "scoring": ScoringResource(
            outputs_dir=os.environ.get("TAXOFORGE_MODEL_OUTPUTS_DIR") or str(Path(data_dir) / "model_outputs"),
            taxonomy=os.environ.get("TAXOFORGE_SCORING_TAXONOMY") or str(Path(data_dir) / "assets" / "imagenet1k_taxonomy"),
            scores_dir=str(Path(data_dir) / "scores")),
    }
