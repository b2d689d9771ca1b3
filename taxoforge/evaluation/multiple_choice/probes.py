"""Rank-level probes: for every ground truth, a question asking for its ancestor at one rank.

The rank is a rank name (genus, family, order …) or, on an unranked tree, a depth. The
distractors are that ancestor's siblings of the same rank (same parent-rank taxon), widened
one rank up at a time only when there are too few, and the widening is recorded per
distractor (``distractor-lca``). Distractors come from the distractor pool mapped to the
probed rank: with the default pool, the ancestors at that rank of the labels given.

A partial ground truth (a label resolved only to its genus) still gets a probe at the genus
or any rank above it.
"""

from __future__ import annotations

import numpy as np

from taxoforge.evaluation.multiple_choice.plans import Plan, candidates, pick
from taxoforge.evaluation.multiple_choice.pools import DistractorPool, distractor_pool
from taxoforge.evaluation.multiple_choice.questions import (
    INSTRUCTION,
    LETTERS,
    PROBE_QUESTION,
    Draft,
    QuestionSet,
    SetSpec,
    no_question_error,
    question_row,
    question_set,
    read_ground_truths,
    skipped_frame,
)
from taxoforge.seeded import SeededStream
from taxoforge.snapshots.load import load_ranked_tree
from taxoforge.trees.ranked_tree import RankedTree

__all__ = ["build_rank_probes"]


def _at_level(tree: RankedTree, idx: np.ndarray, rank: str | int, by_depth: bool) -> np.ndarray:
    """The ancestor of every valid ``idx`` at the probed rank or depth (-1: none, or ``idx`` -1)."""
    out = np.full(len(idx), -1, dtype=np.int64)
    valid = idx >= 0
    if valid.any():
        out[valid] = (tree.ancestor_at_depth(idx[valid], int(rank)) if by_depth
                      else tree.ancestor_at_rank(idx[valid], rank))
    return out


def _pool_at_level(tree: RankedTree, pool: DistractorPool, rank, by_depth: bool) -> DistractorPool:
    """The pool's members mapped to their ancestors at the probed rank or depth."""
    if pool.mask is None:
        return pool
    anc = _at_level(tree, np.flatnonzero(pool.mask).astype(np.int64), rank, by_depth)
    mask = np.zeros(len(tree), dtype=bool)
    mask[anc[anc >= 0]] = True
    return pool.restricted_to(mask)


def _tiers(tree: RankedTree, b: int, higher: list[str], by_depth: bool) -> tuple[tuple[int, int], ...]:
    """Siblings under the closest higher-rank ancestor (or the parent), then one rank (level)
    up at a time."""
    ups: list[int] = []
    if by_depth:
        v = b
        while int(tree.parent[v]) >= 0:
            v = int(tree.parent[v])
            ups.append(v)
    else:
        for r in higher:
            u = int(tree.ancestor_at_rank([b], r)[0])
            if u >= 0 and (not ups or u != ups[-1]):
                ups.append(u)
        if not ups or ups[-1] != tree.taxonomy.root_idx:
            ups.append(tree.taxonomy.root_idx)
    tiers, prev = [], b
    for u in ups:
        tiers.append((u, prev))
        prev = u
    return tuple(tiers)


def build_rank_probes(tree, ground_truths, rank: str | int, *, options: int = 4, seed: int = 0,
                      organism: str = "organism", question: str = PROBE_QUESTION, instruction: str = INSTRUCTION,
                      label_column: str | None = None, node_ref: str = "auto", pool="labels") -> QuestionSet:
    """One question per ground truth asking for its ancestor at ``rank`` (module docstring).

    Parameters
    ----------
    tree : RankedTree or anything :func:`~taxoforge.snapshots.load.load_ranked_tree` accepts
    ground_truths : list of str or polars.DataFrame
        As for :func:`~taxoforge.evaluation.multiple_choice.build.build_questions`.
    rank : str or int
        A rank of the tree, or a depth (an int or a string of digits).
    options, seed, organism, question, instruction, label_column, node_ref
        As for :func:`~taxoforge.evaluation.multiple_choice.build.build_questions`.
    pool : str, sequence of str or DistractorPool
        The distractor pool, mapped to the probed rank (default: the labels given).

    Returns
    -------
    QuestionSet
        Each question also has ``ground-truth-node`` and ``probe-rank``.

    Examples
    --------
    >>> tree = {"Life": None, "Esocidae": "Life", "Cyprinidae": "Life", "Esox": "Esocidae", "Dallia": "Esocidae",
    ...         "Novumbra": "Esocidae", "Umbra": "Esocidae", "Esox lucius": "Esox"}
    >>> q = build_rank_probes(tree, ["Esox lucius"], 2, seed=3, pool="tree")
    >>> sorted(q.questions["options"][0].to_list())
    ['Dallia', 'Esox', 'Novumbra', 'Umbra']
    """
    if not 2 <= options <= len(LETTERS):
        raise ValueError(f"options must be between 2 and {len(LETTERS)}, not {options}")
    tree = load_ranked_tree(tree)
    gts, skipped = read_ground_truths(tree, ground_truths, label_column, node_ref)
    by_depth = isinstance(rank, int) or (isinstance(rank, str) and rank.isascii() and rank.isdigit())
    set_name = f"probe-{rank}" if not by_depth else f"probe-depth{int(rank)}"
    if by_depth:
        higher: list = []
        cls = ("depth", int(rank))
        rank_word = f"level-{int(rank)} group"
    else:
        if rank not in tree.rank_order:
            raise ValueError(f"{tree.name} has no rank {rank!r}; its ranks are {tree.rank_order}")
        order = tree.rank_order
        higher = [r for r in reversed(order[: order.index(rank)])]
        cls = ("rank", rank)
        rank_word = rank
    answers = _at_level(tree, gts.idx, rank, by_depth)
    drawn_from = _pool_at_level(tree, distractor_pool(tree, pool, gts.idx), rank, by_depth)
    cand = candidates(tree, cls, drawn_from)
    spec = SetSpec(set_name, "probe", seed, organism, question, instruction, rank_word, not by_depth)
    need = options - 1
    rows, skips = [], []
    for row in range(len(gts)):
        if gts.idx[row] < 0:
            continue
        b = int(answers[row])
        if b < 0:
            why = f"the ground truth has no {rank_word} above it"
            if gts.partial[row]:
                why += f" (a partial ground truth: {gts.fields(row)['ground-truth-detail']})"
            skips.append(gts.skip(row, f"no {set_name} question", why))
            continue
        plan = Plan(_tiers(tree, b, higher, by_depth), cls, None, f"other {rank_word}s")
        stream = SeededStream(seed, f"{set_name}|{row}|{tree.ids[b]}")
        answer_pos = stream.below(options)
        picked = pick(tree, cand, stream, plan, b, need)
        if len(picked) < need:
            skips.append(gts.skip(row, f"no {set_name} question", f"only {len(picked)} other {rank_word}(s) in "
                                  f"{drawn_from.description}; {need} needed"))
            continue
        r = question_row(tree, spec, Draft(row, b, picked, answer_pos), gts.fields(row))
        r["ground-truth-node"] = str(tree.ids[gts.idx[row]])
        r["probe-rank"] = str(rank)
        rows.append(r)
    skipped = skipped_frame(skips, skipped)
    if not rows:
        raise no_question_error(skipped, set_name, tree, len(gts), options)
    return question_set(rows, skipped, tree, spec, options, gts, drawn_from)
