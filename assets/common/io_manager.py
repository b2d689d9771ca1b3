"""The IO manager every asset stores its value with: Parquet files under the data folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl

from taxoforge.files import write_parquet_atomic
from taxoforge.trees.tables import TreeTables

__all__ = ["ParquetIOManager"]


class ParquetIOManager(dg.ConfigurableIOManager):
    """Stores asset values as Parquet under ``<data_dir>/assets/<asset key>/``.

    A :class:`~taxoforge.trees.tables.TreeTables` becomes a folder of the four tree tables
    and its ``info.json`` (seed, cycle policy, source versions: :meth:`TreeTables.write`);
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
            obj.write(folder)  # tables and info.json (the provenance snapshots downstream record)
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
            return TreeTables.read(folder, name=context.asset_key.path[-1])
        if kind == "table":
            return pl.read_parquet(folder / "table.parquet")
        return {p.stem: pl.read_parquet(p) for p in sorted(folder.glob("*.parquet"))}
