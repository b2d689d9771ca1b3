"""Every evaluation of the seed papers, as plain functions over one tree and a samples table.

Nothing here knows of Dagster; every function takes a tree (a
:class:`~taxoforge.trees.ranked_tree.RankedTree`, or anything
:func:`~taxoforge.snapshots.load.load_ranked_tree` accepts) and plain
tables or arrays, and returns tables or numbers.

=====================================  ===================================================
module                                 what it holds
=====================================  ===================================================
:mod:`.multiple_choice`                VLM4Bio-style easy / medium / hard question sets and
                                       rank-level probes from any tree, seeded, checked
:mod:`.reasoning_tests`                VLM4Bio's NOTA and FCT variants and the FCT
                                       agreement score
:mod:`.label_metrics`                  scikit-learn-style ``hierarchical_precision_recall_fscore``,
                                       ``hierarchical_consistent_accuracy``, ``mean_tree_cut_accuracy``
                                       over node ids or names (the computation:
                                       :mod:`taxoforge.scores.measures.hierarchical`; the tree cuts:
                                       :mod:`taxoforge.trees.cuts`; the breakdown tables:
                                       :mod:`taxoforge.scores.measures.breakdowns`)
:mod:`.propagation`                    Xu et al. 2024 [4]: max-child / max-leaf score propagation,
                                       average precision, per-level mAP, the tiered benchmark
:mod:`.open_world_measures`            Conti et al. 2025 [3]: TI, SS, CS (NLTK noun phrases), LI judge hook
:mod:`.validation`                     Snæbjarnarson et al. 2025 [1] §5: Kendall-τ validation of any measure on
                                       synthetic node pairs; Fig. 4 node-placement agreement
:mod:`.cli`                            ``taxoforge mc …`` and ``taxoforge evaluate …``
=====================================  ===================================================

See ``docs/evaluations.md`` for the table of every evaluation and the command that
reproduces it on user data.
"""
