"""Map model answers to taxonomy nodes without scoring them: no ground truth needed.

For answers that have no label (OVEN-style open-world predictions, a model's answers to
unlabelled images) or to look at the mapping alone: the same reading as scoring — screen
(no output, output not text), parse (templates, multiple-choice letters, abstentions),
map with Alg. 1 (:func:`taxoforge.scores.steps.map_answers`) — and one row per answer:

``file``, ``line``, ``id``, ``model``, ``dataset``, ``prompt``  where the answer came from
``output``        the raw text
``answer``        the parsed answer (template stripped, letter resolved)
``mapped_text``   the text that was mapped (null for an abstention)
``node_id``, ``node_label``, ``node_depth``  the node it maps to (an abstention: the root)
``stage``         the Alg. 1 stage that decided (``exact``, ``contains``, ``ngram2`` …,
                  ``vote``, ``top1``, ``empty``, ``abstention``, ``none_of_the_above``)
``similarity``    the similarity of the chosen node's best name to the answer
``tied``          how many nodes tied under the deciding rule
``abstained``     the answer refused to answer
``parse_flags``   what the parser noticed (``hedged_answer``, ``truncated_to_<n>_chars`` …)
``label``         the row's ground truth when the file has one (not used)
``taxonomy_version``, ``taxonomy_store``, ``mapping_config_id``  the citation and configuration

"None of the above" (where the question offers it) cannot be right or wrong without a
ground truth: it is reported with stage ``none_of_the_above`` at the root.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import polars as pl

from taxoforge.files import atomic_writer, write_parquet_atomic
from taxoforge.scores.cited_taxonomy import cite_taxonomy
from taxoforge.scores.mapping import MappingConfig
from taxoforge.scores.mapping.embedding_measures import similarity_record
from taxoforge.scores.options import ReadOptions, ScoreOptions, split_options

__all__ = ["MappedOutputs", "map_frame", "map_files", "MAP_FORMATS"]

#: Output formats of :meth:`MappedOutputs.write`, by file suffix.
MAP_FORMATS = {".parquet": "parquet", ".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl"}


@dataclass
class MappedOutputs:
    """``table`` (one row per mapped answer, module docstring), ``bad_rows`` (rows not
    mapped, with line and reason) and ``info`` (citation, configuration, counts per stage).

    Attributes
    ----------
    table : polars.DataFrame
        One row per mapped answer (module docstring).
    bad_rows : polars.DataFrame
        Rows not mapped, with line and reason.
    info : dict
        Citation, configuration and counts per stage.
    """

    table: pl.DataFrame
    bad_rows: pl.DataFrame
    info: dict = field(default_factory=dict)

    def write(self, path: str | os.PathLike) -> Path:
        """Write :attr:`table` atomically as Parquet, CSV, TSV or JSONL (by ``path``'s suffix).

        Parameters
        ----------
        path : str or os.PathLike
            The file to write; its suffix picks the format.

        Returns
        -------
        Path
            ``path``.
        """
        path = Path(path)
        kind = MAP_FORMATS.get(path.suffix.lower())
        if kind is None:
            raise ValueError(f"{path}: unknown output format {path.suffix!r}; use one of {', '.join(MAP_FORMATS)}")
        if kind == "parquet":
            return write_parquet_atomic(self.table, path)
        with atomic_writer(path, "wb") as fh:
            if kind == "jsonl":
                self.table.write_ndjson(fh)
            else:
                self.table.write_csv(fh, separator="\t" if kind == "tsv" else ",")
        return path


def map_frame(rows: pl.DataFrame, taxonomy, options: ScoreOptions | None = None, **kwargs) -> MappedOutputs:
    """Map the answers of the canonical table ``rows`` (:func:`taxoforge.scores.readers.sources.read_files`
    with ``require=("output",)``) to nodes of ``taxonomy`` (anything
    :func:`~taxoforge.scores.cited_taxonomy.cite_taxonomy` takes, or a ``CitedTaxonomy``).
    ``options``: a :class:`~taxoforge.scores.options.ScoreOptions` (``config``, ``index``,
    ``store``, ``altered``, ``progress``, ``index_dir``; its scoring fields are not used);
    keyword options are the same fields. Without ``index``, the tree's stored mapping index
    is used (:func:`taxoforge.scores.run.index_for`).

    Parameters
    ----------
    rows : polars.DataFrame
        The canonical table of answers (:func:`taxoforge.scores.readers.sources.read_files`).
    taxonomy : object
        The taxonomy.
    options : ScoreOptions, optional
        How answers are mapped (:class:`~taxoforge.scores.options.ScoreOptions`).
    **kwargs
        Passed on.

    Returns
    -------
    MappedOutputs
        The mapped answers, the rows not mapped and the run's record.
    """
    from taxoforge.scores.run import index_for, index_record
    from taxoforge.trees.stored import ids_of, labels_of
    from taxoforge.scores.steps import GroundTruthResolver, bad_rows_frame, map_answers, parse_rows, screen_rows

    o = split_options(kwargs, score=options, where="map_frame")[1] if kwargs else (options or ScoreOptions())
    config, index, progress = o.config, o.index, o.progress
    t0 = time.perf_counter()
    cited = cite_taxonomy(taxonomy, store=o.store, altered=o.altered)
    config = config or (index.config if index is not None else MappingConfig())
    index = index_for(cited, config, index, index_dir=o.index_dir, progress=progress)
    tax = index.taxonomy
    screened, bad_screen = screen_rows(rows, require_label=False)
    parsed, bad_parse = parse_rows(screened)
    mapped = map_answers(parsed, index, GroundTruthResolver(cited.tables, tax, stored=cited.resolved_labels()), progress)
    idx = mapped.pred_idx

    def col(name):
        return [r.get(name) for r in parsed]

    table = pl.DataFrame({
        "file": col("file"), "line": col("line"), "id": col("id"), "model": col("model"), "dataset": col("dataset"),
        "prompt": col("prompt"), "output": col("output"), "answer": col("answer"), "mapped_text": mapped.mapped_text,
        "node_id": ids_of(tax, idx), "node_label": labels_of(tax, idx),
        "node_depth": tax.depth_arr[idx].astype("int64"), "stage": mapped.stage.tolist(),
        "similarity": mapped.score, "tied": mapped.tied, "abstained": mapped.abstained,
        "parse_flags": mapped.flags, "label": col("label"),
    }, schema_overrides={"line": pl.Int64, "mapped_text": pl.String, "node_label": pl.String, "label": pl.String,
                         "answer": pl.String, "parse_flags": pl.String, "file": pl.String, "id": pl.String,
                         "model": pl.String, "dataset": pl.String, "prompt": pl.String, "output": pl.String,
                         "node_depth": pl.Int64, "tied": pl.Int64})
    table = table.with_columns(pl.lit(cited.ref).alias("taxonomy_version"),
                               pl.lit(cited.store, dtype=pl.String).alias("taxonomy_store"),
                               pl.lit(config.config_id).alias("mapping_config_id"))
    if not table["label"].is_not_null().any():
        table = table.drop("label")
    bad = bad_rows_frame(bad_screen + bad_parse)
    info = {
        "taxonomy": cited.name, "taxonomy_version": cited.ref, "taxonomy_store": cited.store,
        "citation": cited.citation.as_dict(), "taxonomy_nodes": len(tax),
        "mapping_config": config.to_dict(), "mapping_config_id": config.config_id,
        "similarity": index.similarity.name, "similarity_model": similarity_record(index.similarity),
        "temperature": config.temperature, "mapping_index": index_record(index),
        "rows": rows.height, "mapped": table.height, "bad_rows": bad.height,
        "bad_rows_by_reason": {str(k): int(v) for k, v in bad.group_by("reason").len().iter_rows()} if bad.height else {},
        "abstentions": int(mapped.abstained.sum()), "stage_counts": mapped.stats["stages"],
        "files": rows["file"].unique(maintain_order=True).to_list() if rows.height and "file" in rows.columns else [],
        "seconds": {"mapping": round(mapped.seconds, 3), "total": round(time.perf_counter() - t0, 3)},
    }
    return MappedOutputs(table=table, bad_rows=bad, info=info)


def map_files(paths, taxonomy, *, out: str | os.PathLike | None = None, read: ReadOptions | None = None,
              score: ScoreOptions | None = None, **kwargs) -> MappedOutputs:
    """Map the answers of every file of ``paths`` (no ground truth needed; one taxonomy
    resolution, one index) and, with ``out``, write the table there (:meth:`MappedOutputs.write`).
    ``read``/``score`` and keyword options as for :func:`taxoforge.scores.run.score_files`.

    Parameters
    ----------
    paths : object
        Answer files, folders or glob patterns.
    taxonomy : object
        The taxonomy.
    out : str or os.PathLike, optional
        Where to write.
    read : ReadOptions, optional
        How the files are read (:class:`~taxoforge.scores.options.ReadOptions`).
    score : ScoreOptions, optional
        How answers are mapped (:class:`~taxoforge.scores.options.ScoreOptions`).
    **kwargs
        Passed on.

    Returns
    -------
    MappedOutputs
        The mapped answers, the rows not mapped and the run's record.
    """
    from taxoforge.scores.readers.sources import read_files

    read, score = split_options(kwargs, read, score, where="map_files")
    rows = read_files(paths, replace(read, require=("output",)))
    res = map_frame(rows, taxonomy, score)
    if out is not None:
        res.info["output"] = str(res.write(out))
    return res
