"""Measures of answers against the tree and the text, per answer and per table of answers.

:mod:`.hierarchical` — hierarchical precision, recall and F-score (hP/hR/hF), per answer and
aggregated: the one computation every caller shares; :mod:`.text` — the text-overlap
measures of VLM papers (exact match, containment, ROUGE-1 recall, BLEU-2), equal to the reference
implementations, with METEOR over a stored WordNet synonym table in :mod:`.meteor`;
:mod:`.mistakes` — how bad the wrong answers are: where they meet the truth in the tree;
:mod:`.breakdowns` — the per-level, per-rank, consistency and outcome tables of a
per-sample scores table.
"""
