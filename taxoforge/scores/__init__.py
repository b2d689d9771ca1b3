"""Scoring: model outputs → taxonomy nodes → hP/hR/hF, text measures, leaderboards and plots.

Data flow: :mod:`.readers` (JSONL, JSON, CSV/TSV, Parquet, xlsx through the bounded
:mod:`taxoforge.files.records`; the layouts of :mod:`.harness_layouts`: lmms-eval, VLMEvalKit, VLM4Bio,
generic; options in :mod:`.options`) →
:mod:`.parse` (templates, multiple-choice letters, abstentions) → :mod:`.mapping`
(Snæbjarnarson et al. 2025 [1] Alg. 1 over an indexed taxonomy, :mod:`.name_similarity` pluggable) →
:mod:`.hierarchical` (hP/hR/hF) and :mod:`.text_measures` → :mod:`.run` (one scoring run over
one or many files, :func:`score_files`) → :mod:`.leaderboard` (aggregation, with
:mod:`.confidence` bootstrap intervals and the breakdown columns) and :mod:`.report`
(Markdown, CSV and LaTeX leaderboards; PNG/PDF/SVG figures); :mod:`.breakdowns` (per level,
per rank, consistency and outcome tables of a samples table).

:mod:`.cited_taxonomy` resolves and cites the taxonomy once (:func:`cite_taxonomy`);
:mod:`.map_outputs` maps answers to nodes without ground truths; :mod:`.folders` says which
taxonomy a file in a watched folder is scored against; :mod:`.cli` holds ``taxoforge score``
and ``taxoforge map``.
"""

import importlib

#: Public name → the module that holds it. Loaded on first use (PEP 562), so importing one
#: module of the package (``taxoforge.scores.compare``) does not load the mapping machinery.
_EXPORTS = {
    "MappingConfig": "taxoforge.scores.mapping", "TaxonomyIndex": "taxoforge.scores.mapping",
    "aggregate_hierarchical": "taxoforge.scores.hierarchical", "hierarchical_scores": "taxoforge.scores.hierarchical",
    "leaderboard": "taxoforge.scores.leaderboard",
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
