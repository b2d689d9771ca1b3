"""The IO manager every asset stores its value with: Parquet files under the data folder."""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl

from taxoforge.files import write_parquet_atomic
from taxoforge.trees.tables import TreeTables

__all__ = ["ParquetIOManager", "RECENT_TREES"]

#: How many trees this process keeps after writing or reading them (the latest ones).
RECENT_TREES = 2
#: folder → (the signature of its files, the tree they hold): a later step of the same process
#: (the tree's checks, its snapshot, a tree built from it) takes the tree from memory instead of
#: reading and sorting its tables again, while no file of the folder changed.
_recent: OrderedDict[Path, tuple[tuple, TreeTables]] = OrderedDict()
_recent_lock = threading.Lock()


def _signature(folder: Path) -> tuple:
    """Name, size, modification time and inode of every file of ``folder``: a file rewritten
    (atomically, so under a new inode) or touched since gives another signature."""
    return tuple(sorted((p.name, st.st_size, st.st_mtime_ns, st.st_ino)
                        for p in folder.iterdir() if p.is_file() for st in (p.stat(),)))


def _keep(folder: Path, tree: TreeTables) -> None:
    with _recent_lock:
        _recent[folder] = (_signature(folder), tree)
        _recent.move_to_end(folder)
        while len(_recent) > RECENT_TREES:
            _recent.popitem(last=False)


def _kept(folder: Path) -> TreeTables | None:
    with _recent_lock:
        kept = _recent.get(folder)
    return kept[1] if kept is not None and kept[0] == _signature(folder) else None


class ParquetIOManager(dg.ConfigurableIOManager):
    """Stores asset values as Parquet under ``<data_dir>/assets/<asset key>/``.

    A :class:`~taxoforge.trees.tables.TreeTables` becomes a folder of the four tree tables
    and its ``info.json`` (seed, cycle policy, source versions: :meth:`TreeTables.write`);
    a polars DataFrame one ``table.parquet``; a dict of DataFrames one file per key.
    Every file is written to a temporary name and renamed. The last :data:`RECENT_TREES` trees
    written or read stay in memory: a step loading one whose files are unchanged gets it as
    :meth:`TreeTables.read` would give it, without reading the files again."""

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
            _keep(folder.resolve(), obj)
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
            kept = _kept(folder.resolve())
            if kept is not None:
                return kept.as_read(folder, name=context.asset_key.path[-1])
            tree = TreeTables.read(folder, name=context.asset_key.path[-1])
            _keep(folder.resolve(), tree)
            return tree
        if kind == "table":
            return pl.read_parquet(folder / "table.parquet")
        return {p.stem: pl.read_parquet(p) for p in sorted(folder.glob("*.parquet"))}
