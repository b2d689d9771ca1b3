"""Standard question sets (easy / medium / hard) and seeded ground truths to build them from."""

from __future__ import annotations

import numpy as np
import polars as pl

from taxoforge.evaluation.multiple_choice.draws import Candidates
from taxoforge.evaluation.multiple_choice.plans import candidates, is_ranked, pick, plan_for, warm_indexes
from taxoforge.evaluation.multiple_choice.pools import distractor_pool
from taxoforge.evaluation.multiple_choice.questions import (
    DIFFICULTIES,
    INSTRUCTION,
    LETTERS,
    QUESTION,
    Draft,
    QuestionSet,
    SetSpec,
    TreeTooShallow,
    no_question_error,
    question_row,
    question_set,
    read_ground_truths,
    skipped_frame,
)
from taxoforge.seeded import SeededStream
from taxoforge.snapshots.open import open_taxonomy
from taxoforge.trees.taxonomy import Taxonomy
from taxoforge.trees.ranks import INFRASPECIFIC_RANKS

__all__ = ["build_questions", "sample_ground_truths", "prepare_tree"]


def prepare_tree(tree) -> Taxonomy:
    """The :class:`~taxoforge.trees.taxonomy.Taxonomy` of ``tree`` with the indexes question
    sets use (pre-order numbering, genus/species/family ancestors, the candidates of every
    rank) built ahead of time; later sets reuse them.

    Parameters
    ----------
    tree : Taxonomy or anything :func:`~taxoforge.snapshots.open.open_taxonomy` accepts

    Returns
    -------
    Taxonomy
    """
    tree = open_taxonomy(tree)
    warm_indexes(tree)
    return tree


def build_questions(tree, ground_truths, difficulty: str, *, options: int = 4, seed: int = 0,
                    organism: str = "organism", question: str = QUESTION, instruction: str = INSTRUCTION,
                    label_column: str | None = None, node_ref: str = "auto", mode: str = "auto",
                    pool="labels") -> QuestionSet:
    """One question per ground truth at ``difficulty`` (:mod:`taxoforge.evaluation.multiple_choice`).

    Parameters
    ----------
    tree : Taxonomy or anything :func:`~taxoforge.snapshots.open.open_taxonomy` accepts
    ground_truths : list of str or polars.DataFrame
        Labels or node ids, or a table with a label column (other columns, e.g.
        ``image-path``, are copied into each question). Labels are resolved by the one label
        resolver, as scoring resolves ground truths.
    difficulty : {"easy", "medium", "hard"}
    options : int
        Number of options (2–26), the answer included.
    seed : int
        The seed of every draw.
    organism, question, instruction : str
        The prompt (VLM4Bio's by default).
    label_column : str, optional
        The label column of a table.
    node_ref : {"auto", "id", "name"}
        Which rules of the resolver run.
    mode : {"auto", "ranks", "levels"}
        Ranks when the tree has genus and species ranks (``auto``), else levels.
    pool : str, sequence of str or DistractorPool
        Where distractors come from: ``"labels"`` (default: the taxa of the ground truths
        given, as VLM4Bio draws from its dataset), ``"tree"``, a clade (``"clade:NAME"`` or
        a name or node id), or a list of labels
        (:mod:`taxoforge.evaluation.multiple_choice.pools`).

    Returns
    -------
    QuestionSet
        ``info["pool"]`` records the pool, ``info["resolution"]`` how the labels resolved.

    Raises
    ------
    TreeTooShallow
        When no ground truth gets a question.
    """
    if difficulty not in DIFFICULTIES:
        raise ValueError(f"difficulty must be one of {DIFFICULTIES}, not {difficulty!r}")
    if not 2 <= options <= len(LETTERS):
        raise ValueError(f"options must be between 2 and {len(LETTERS)}, not {options}")
    if mode not in ("auto", "ranks", "levels"):
        raise ValueError(f"mode must be 'auto', 'ranks' or 'levels', not {mode!r}")
    tree = open_taxonomy(tree)
    ranked = is_ranked(tree) if mode == "auto" else mode == "ranks"
    gts, skipped = read_ground_truths(tree, ground_truths, label_column, node_ref)
    drawn_from = distractor_pool(tree, pool, np.where(gts.partial, -1, gts.idx))
    spec = SetSpec(difficulty, "standard", seed, organism, question, instruction, None, ranked)
    classes: dict[tuple, Candidates] = {}
    need = options - 1
    rows, skips = [], []
    for row in range(len(gts)):
        a = int(gts.idx[row])
        if a < 0:
            continue
        if gts.partial[row]:
            skips.append(gts.skip(row, "partial ground truth",
                                  f"{gts.fields(row)['ground-truth-detail']}; a {difficulty} question needs the "
                                  "taxon the label names"))
            continue
        plan, why = plan_for(tree, a, difficulty, ranked)
        if plan is None:
            skips.append(gts.skip(row, f"no {difficulty} question", why))
            continue
        cand = classes.get(plan.cls)
        if cand is None:
            cand = classes[plan.cls] = candidates(tree, plan.cls, drawn_from)
        stream = SeededStream(seed, f"{difficulty}|{row}|{tree.ids[a]}")
        answer_pos = stream.below(options)
        picked = pick(tree, cand, stream, plan, a, need)
        if len(picked) < need:
            skips.append(gts.skip(row, f"no {difficulty} question",
                                  f"only {len(picked)} valid distractor(s) ({plan.relation}) in "
                                  f"{drawn_from.description}; {need} needed"))
            continue
        rows.append(question_row(tree, spec, Draft(row, a, picked, answer_pos), gts.fields(row)))
    skipped = skipped_frame(skips, skipped)
    if not rows:
        raise no_question_error(skipped, difficulty, tree, len(gts), options)
    return question_set(rows, skipped, tree, spec, options, gts, drawn_from)


def sample_ground_truths(tree, difficulty: str, n: int, *, seed: int = 0, options: int = 4) -> pl.DataFrame:
    """``n`` ground truths drawn from the tree, for a set of ``difficulty``.

    Drawn seeded, with replacement (like images of a species), from the nodes that can get
    a question at ``difficulty`` with the whole tree as the pool: species with at least
    ``options - 1`` valid distractors for ``easy``/``medium``, infraspecific taxa for
    ``hard`` (levels on an unranked tree: leaves).

    Parameters
    ----------
    tree : Taxonomy or anything :func:`~taxoforge.snapshots.open.open_taxonomy` accepts
    difficulty : {"easy", "medium", "hard"}
    n : int
        How many ground truths.
    seed : int
        The seed of the draw.
    options : int
        The options per question the ground truths must support.

    Returns
    -------
    polars.DataFrame
        A ``label`` column of node ids.
    """
    tree = open_taxonomy(tree)
    if is_ranked(tree):
        if difficulty == "hard":
            mask = np.zeros(len(tree), dtype=bool)
            for r in INFRASPECIFIC_RANKS:
                mask |= tree.rank_mask(r)
            mask &= tree.rank_mask("species")[np.maximum(tree.parent_idx, 0)]
            sib = _sibling_counts(tree, mask)
        else:
            mask = tree.rank_mask("species")
            sib = _sibling_counts(tree, mask) if difficulty == "medium" else np.full(len(tree), 1 << 30)
    else:
        mask = tree.is_leaf.copy()
        sib = _sibling_counts(tree, mask) if difficulty == "hard" else np.full(len(tree), 1 << 30)
    eligible = np.flatnonzero(mask & (sib >= options))
    if not len(eligible):
        raise TreeTooShallow(f"{tree.name} has no node that supports {difficulty} questions with {options} options")
    stream = SeededStream(seed, f"sample|{difficulty}")
    picks = [int(eligible[stream.below(len(eligible))]) for _ in range(n)]
    return pl.DataFrame({"label": tree.ids[picks].tolist()}, schema={"label": pl.String})


def _sibling_counts(tree: Taxonomy, mask: np.ndarray) -> np.ndarray:
    """For every node: how many nodes of ``mask`` share its parent (itself included)."""
    par = tree.parent_idx
    counts = np.bincount(np.maximum(par[mask], 0), minlength=len(tree))
    return np.where(par >= 0, counts[np.maximum(par, 0)], 0)
