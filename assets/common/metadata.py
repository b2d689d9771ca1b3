"""Materialisation metadata a person can read in the Dagster UI, shared by every domain."""

from __future__ import annotations

from typing import Any

import dagster as dg
import polars as pl

from taxoforge.markdown import markdown_cell, markdown_table
from taxoforge.trees.tables import TreeTables, name_kind_counts

__all__ = ["tree_metadata", "markdown_preview", "table_metadata"]

_TYPES = {pl.Boolean: "bool", pl.String: "string", pl.Date: "date", pl.Datetime: "datetime"}


def _column_type(dtype: pl.DataType) -> str:
    if dtype.is_integer():
        return "int"
    if dtype.is_float():
        return "float"
    return _TYPES.get(type(dtype), _TYPES.get(dtype, "string"))


def table_metadata(df: pl.DataFrame, *, max_rows: int = 200, descriptions: dict[str, str] | None = None
                   ) -> dg.TableMetadataValue:
    """``df`` as a table with a schema (column names, types and descriptions, under *Show
    schema* in the UI); numbers stay numbers, other values become text; the first ``max_rows``
    rows. Dagster 1.13's UI shows the rows in the order given: its tables cannot be sorted
    there, so sort ``df`` as a reader wants it."""
    descriptions = descriptions or {}
    schema = dg.TableSchema(columns=[dg.TableColumn(c, _column_type(t), description=descriptions.get(c))
                                     for c, t in df.schema.items()])
    records = []
    for row in df.head(max_rows).iter_rows(named=True):
        records.append(dg.TableRecord({c: (v if isinstance(v, (int, float, bool)) or v is None else str(v))
                                       for c, v in row.items()}))
    return dg.MetadataValue.table(records=records, schema=schema)


def markdown_preview(df: pl.DataFrame, max_rows: int = 10) -> str:
    """A Markdown preview for the UI: the first ``max_rows`` rows, cells cut to 80 characters."""
    return markdown_table(df, max_rows=max_rows, align_numeric=False,
                           format_cell=lambda _c, v: markdown_cell(v, max_chars=80))


def tree_metadata(tree: TreeTables) -> dict[str, Any]:
    """Row counts, depth histogram, what the graph→tree step removed and chose, a preview."""
    stats = tree.info.get("build", {})
    hist = tree.nodes.group_by("depth").len().sort("depth")
    report_counts = tree.report.group_by("kind").len().sort("kind")
    kinds = name_kind_counts(tree)
    md: dict[str, Any] = {
        "nodes": dg.MetadataValue.int(tree.nodes.height),
        "leaves": dg.MetadataValue.int(int(tree.nodes["is_leaf"].sum() or 0)),
        "names": dg.MetadataValue.int(tree.names.height),
        # which kinds of names answers and labels can match (scientific, vernacular, synonym …)
        "name_kinds": dg.MetadataValue.text(
            ", ".join(f"{k} {n:,}" for k, n in kinds.select("kind", "names").iter_rows()) or "none"),
        "links": dg.MetadataValue.int(tree.links.height),
        "max_depth": dg.MetadataValue.int(int(tree.nodes["depth"].max() or 0)),
        "root": dg.MetadataValue.text(str(tree.nodes.filter(pl.col("parent_id").is_null())["node_id"][0])),
        "cycle_edges_removed": dg.MetadataValue.int(int(stats.get("cycle_edges_removed", 0))),
        "ties": dg.MetadataValue.int(int(stats.get("ties", 0))),
        "not_longest_edges_dropped": dg.MetadataValue.int(int(stats.get("not_longest", 0))),
        "depth_histogram": table_metadata(hist.rename({"len": "nodes"}).cast({"nodes": pl.Int64}), max_rows=1000,
                                          descriptions={"depth": "longest root path (root = 0)",
                                                        "nodes": "nodes at that depth"}),
        "report_by_kind": dg.MetadataValue.md(markdown_preview(report_counts.rename({"len": "rows"}), max_rows=50)),
        "preview": dg.MetadataValue.md(
            markdown_preview(tree.nodes.sort("depth", "node_id").select("node_id", "parent_id", "depth", "label", "rank"))
        ),
    }
    return md
