"""Scoring: model outputs → taxonomy nodes → hP/hR/hF, text measures, leaderboards and plots.

Data flow: :mod:`.readers` (JSONL/CSV/Parquet, VLM4Bio and generic adapters) →
:mod:`.parse` (templates, multiple-choice letters, abstentions) → :mod:`.mapping`
(paper 000 Alg. 1 over an indexed taxonomy, :mod:`.similarity` pluggable) →
:mod:`.measures` (hP/hR/hF) and :mod:`.text_measures` → :mod:`.run` (one scoring run,
:func:`score_file`) → :mod:`.leaderboard` (aggregation) and :mod:`.report` (Markdown
leaderboard, PNG plots).
"""

from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex
from taxoforge.scores.measures import aggregate_hierarchical, hierarchical_scores
from taxoforge.scores.leaderboard import leaderboard
from taxoforge.scores.run import ScoreRun, score_file, score_frame

__all__ = ["MappingConfig", "TaxonomyIndex", "ScoreRun", "score_file", "score_frame", "leaderboard",
           "hierarchical_scores", "aggregate_hierarchical"]
