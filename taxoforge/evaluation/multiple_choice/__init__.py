"""Multiple-choice question sets from any tree: VLM4Bio's easy / medium / hard sets and
rank-level probes, seeded and checked (Maruf et al. 2024 [2] §5.1).

Input
    a tree (anything :func:`~taxoforge.snapshots.open.open_taxonomy` accepts) and the
    ground truths, one question per row (a label list, or a table with a label column whose
    other columns — an image path, an id — are carried into the questions). Labels become
    nodes through the one label resolver, exactly as scoring resolves ground truths
    (:func:`taxoforge.links.tree_labels.resolve_nodes`: node id, id prefix, exact and
    normalised name, synonym, epithet variant, genus transfer …); a partial ground truth (a
    label resolved only to its genus) gets no standard question, but does get rank probes.

Output
    :class:`QuestionSet`: ``questions`` (one row per question, VLM4Bio's fields
    ``question``, ``target-class``, ``option-gt`` plus ``options``, ``option-nodes``,
    ``target-node``, ``distractor-lca``, the set and seed, and how the ground truth was
    resolved: ``ground-truth``, ``ground-truth-method``, ``ground-truth-detail``),
    ``skipped`` (every ground truth that got no question, with the reason) and ``info``
    (the distractor pool, the resolution counts). :meth:`QuestionSet.write_jsonl` writes the
    questions as JSON lines (atomically; the same seed gives the same bytes).

Distractor pool (:mod:`.pools`)
    Distractors are drawn only from the pool: by default the taxa of the ground truths given
    (the dataset's own species, as VLM4Bio draws its options), or the whole tree, or one
    clade, or a list of labels.

Difficulties (:mod:`.plans`; the relation of every distractor to the answer, by its lowest
common ancestor with it)
    On a tree with ``genus`` and ``species`` ranks: ``easy`` other genera (above the
    answer's family where the pool allows; no two distractors of one genus), ``medium`` the
    same genus, ``hard`` the same species (infraspecific answers). On a tree without them:
    siblings, cousins, and nodes outside the grandparent. A ground truth with fewer than
    ``options - 1`` valid distractors in the pool gets no question: it is listed in
    ``skipped`` with the reason, never padded with weaker distractors. When no ground truth
    can get a question, :class:`TreeTooShallow` says why.

Rank-level probes (:mod:`.probes`)
    For every ground truth, the question asks for its ancestor at a chosen rank (genus,
    family, order …; or a depth on an unranked tree); the distractors are that ancestor's
    siblings of the same rank, widened one rank up at a time only when there are too few.

Determinism (:mod:`.draws`)
    Every random choice is drawn from BLAKE2b of ``(seed, set, row, answer id, counter)``,
    and candidates are enumerated in the tree's pre-order, so the same tree, labels and seed
    give byte-identical files on any machine. Distractors are drawn by a sparse Fisher–Yates
    shuffle over the candidate ranges, so a question costs O(options), not O(candidates).

Modules: :mod:`.draws` (seeded draws, candidates), :mod:`.pools` (distractor pools),
:mod:`.plans` (relation rules, the draw), :mod:`.questions` (ground truths, question rows,
the set), :mod:`.build` (standard sets, sampled ground truths), :mod:`.probes` (rank
probes), :mod:`.checks` (:func:`check_questions`).

Question text (VLM4Bio's, ``zero_shot_eval`` templates)::

    What is the scientific name of the fish in the image? Options: A) Cottus bairdii,
    B) Noturus insignis, C) Notropis heterolepis, D) Notropis buchanani. Write the answer
    after writing 'The answer is: '.

>>> tree = {"Life": None, "Esox": "Life", "Esox lucius": "Esox", "Esox niger": "Esox",
...         "Esox masquinongy": "Esox", "Esox americanus": "Esox"}
>>> qs = build_questions(tree, ["Esox lucius"], "hard", options=4, seed=1, organism="fish", pool="tree")
>>> row = qs.questions.row(0, named=True)
>>> sorted(row["options"])
['Esox americanus', 'Esox lucius', 'Esox masquinongy', 'Esox niger']
>>> row["options"]["ABCD".index(row["option-gt"])], row["ground-truth-method"]
('Esox lucius', 'node_id')
"""

from taxoforge.evaluation.multiple_choice.build import build_questions, prepare_tree, sample_ground_truths
from taxoforge.evaluation.multiple_choice.checks import check_questions
from taxoforge.evaluation.multiple_choice.pools import POOL_KINDS, DistractorPool, distractor_pool
from taxoforge.evaluation.multiple_choice.probes import build_rank_probes
from taxoforge.evaluation.multiple_choice.questions import (
    DIFFICULTIES,
    INSTRUCTION,
    LETTERS,
    PROBE_QUESTION,
    QUESTION,
    QuestionSet,
    TreeTooShallow,
    question_text,
)

__all__ = ["DIFFICULTIES", "LETTERS", "QUESTION", "PROBE_QUESTION", "INSTRUCTION", "QuestionSet", "TreeTooShallow",
           "build_questions", "prepare_tree", "build_rank_probes", "check_questions", "sample_ground_truths",
           "question_text", "DistractorPool", "distractor_pool", "POOL_KINDS"]
