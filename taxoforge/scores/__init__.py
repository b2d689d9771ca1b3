"""Scoring: model outputs → taxonomy nodes → hP/hR/hF, text measures, statistics, leaderboards and figures.

The subpackages, in the order the data flows through them:

1. :mod:`.readers` — files → rows: JSONL, JSON, CSV/TSV, Parquet and xlsx read through the
   bounded :mod:`taxoforge.files.records` (:mod:`.readers.files`), in the layouts of the
   harnesses that write them — lmms-eval, VLMEvalKit, VLM4Bio, generic
   (:mod:`.readers.harness_layouts`); files, folders and globs → one source per model and
   dataset (:mod:`.readers.sources`, by the harnesses' own naming rules in
   :mod:`.readers.run_folders`).
2. :mod:`.mapping` — answers → nodes: the raw text parsed (:mod:`.mapping.parse`: templates,
   multiple-choice letters, abstentions; :mod:`.mapping.vocabulary`: words that name nothing
   on their own), then Snæbjarnarson et al. 2025 [1] Alg. 1 over an indexed taxonomy, with
   a pluggable similarity (:mod:`.mapping.similarity`; the sentence models of the embedding
   measure in :mod:`.mapping.sentence_models`).
3. :mod:`.measures` — per-answer and per-table measures: hP/hR/hF
   (:mod:`.measures.hierarchical`), the text-overlap measures (:mod:`.measures.text`,
   METEOR in :mod:`.measures.meteor`), how bad the mistakes are (:mod:`.measures.mistakes`)
   and the per-level, per-rank, consistency and outcome tables (:mod:`.measures.breakdowns`).
4. :mod:`.statistics` — how sure a figure is: bootstrap intervals
   (:mod:`.statistics.confidence`), paired tests of two systems (:mod:`.statistics.paired`),
   runs compared on their shared items (:mod:`.statistics.compare`) and how much the choice
   of tree moves the leaderboard (:mod:`.statistics.sensitivity`).
5. :mod:`.reports` — what people read: the aggregated leaderboard
   (:mod:`.reports.leaderboard`), Markdown, CSV and LaTeX tables (:mod:`.reports.tables`)
   and PNG/PDF/SVG figures (:mod:`.reports.figures`).

Orchestration and the command line sit at the top of the package: :mod:`.options` (the
reading and scoring options, checked by :mod:`taxoforge.params`), :mod:`.cited_taxonomy`
(the taxonomy resolved and cited once, :func:`cite_taxonomy`) with :mod:`.tree_store` (its
working set stored once and memory-mapped), :mod:`.steps` (the named steps of a run),
:mod:`.run` (one scoring run over one or many files, :func:`score_files`), :mod:`.timings`
(where a run's time went), :mod:`.map_outputs` (answers → nodes without ground truths) and
:mod:`.cli` (``taxoforge score``, ``taxoforge map`` and ``taxoforge compare``). Which taxonomy
a file dropped into a watched folder is scored against is the Dagster sensor's routing
(``assets/scoring/folders.py``).
"""

import importlib

#: Public name → the module that holds it. Loaded on first use (PEP 562), so importing one
#: module of the package (``taxoforge.scores.statistics.compare``) does not load the mapping machinery.
_EXPORTS = {
    "MappingConfig": "taxoforge.scores.mapping", "TaxonomyIndex": "taxoforge.scores.mapping",
    "aggregate_hierarchical": "taxoforge.scores.measures.hierarchical", "hierarchical_scores": "taxoforge.scores.measures.hierarchical",
    "leaderboard": "taxoforge.scores.reports.leaderboard",
    "ScoreRun": "taxoforge.scores.run", "score_file": "taxoforge.scores.run", "score_files": "taxoforge.scores.run",
    "score_frame": "taxoforge.scores.run",
    "ReadOptions": "taxoforge.scores.options", "ScoreOptions": "taxoforge.scores.options",
    "CitedTaxonomy": "taxoforge.scores.cited_taxonomy", "cite_taxonomy": "taxoforge.scores.cited_taxonomy",
}

__all__ = ["MappingConfig", "TaxonomyIndex", "ReadOptions", "ScoreOptions", "ScoreRun", "score_file", "score_files",
           "score_frame", "leaderboard",
           "hierarchical_scores", "aggregate_hierarchical", "CitedTaxonomy", "cite_taxonomy"]


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'taxoforge.scores' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
