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

from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex
from taxoforge.scores.hierarchical import aggregate_hierarchical, hierarchical_scores
from taxoforge.scores.leaderboard import leaderboard
from taxoforge.scores.options import ReadOptions, ScoreOptions
from taxoforge.scores.run import ScoreRun, score_file, score_files, score_frame
from taxoforge.scores.cited_taxonomy import CitedTaxonomy, cite_taxonomy

__all__ = ["MappingConfig", "TaxonomyIndex", "ReadOptions", "ScoreOptions", "ScoreRun", "score_file", "score_files", "score_frame", "leaderboard",
           "hierarchical_scores", "aggregate_hierarchical", "CitedTaxonomy", "cite_taxonomy"]
