"""Checks of a question set from the tree alone: every rule a question must keep."""

from __future__ import annotations

import numpy as np
import polars as pl

from taxoforge.evaluation.multiple_choice.plans import is_ranked, option_key
from taxoforge.evaluation.multiple_choice.pools import DistractorPool, distractor_pool, pool_of_info
from taxoforge.evaluation.multiple_choice.questions import DIFFICULTIES, LETTERS, QuestionSet
from taxoforge.snapshots.open import open_taxonomy
from taxoforge.trees.taxonomy import Taxonomy

__all__ = ["check_questions"]


def check_questions(tree, questions, difficulty: str | None = None, *, pool=None) -> pl.DataFrame:
    """Every problem of a question set, one row each (empty when all questions are valid).

    Parameters
    ----------
    tree : Taxonomy or anything :func:`~taxoforge.snapshots.open.open_taxonomy` accepts
    questions : QuestionSet, polars.DataFrame or list of dict
    difficulty : str, optional
        The band every distractor must keep (default: each question's ``set``).
    pool : str, sequence of str or DistractorPool, optional
        The distractor pool every distractor must be in (``"tree"``, a clade, a list of
        labels); default: the pool a :class:`QuestionSet` records in ``info["pool"]``.

    Returns
    -------
    polars.DataFrame
        ``id`` and ``problem``.

    Notes
    -----
    Checked: the options are distinct nodes with distinct labels; the answer sits at
    ``option-gt``; every option has the answer's rank (or, on an unranked tree, the answer's
    leaf-ness / depth); every distractor is in the pool (for a probe: the pool's ancestor at
    the probed rank); and for a difficulty, every distractor's lowest common ancestor with
    the answer lies in the difficulty's band (:mod:`taxoforge.evaluation.multiple_choice.plans`).
    """
    tree = open_taxonomy(tree)
    q = questions.questions if isinstance(questions, QuestionSet) else questions
    if isinstance(q, list):
        q = pl.DataFrame(q, infer_schema_length=None)
    if pool is None and isinstance(questions, QuestionSet) and "pool" in questions.info:
        pool = pool_of_info(tree, questions.info["pool"])
    elif pool is not None:
        pool = distractor_pool(tree, pool, np.zeros(0, dtype=np.int64))
    ranked = is_ranked(tree)
    problems = []
    for r in q.iter_rows(named=True):
        nodes = tree.index_of(r["option-nodes"])
        a = int(tree.index_of([r["target-node"]])[0])
        qid = r["id"]
        pos = LETTERS.index(r["option-gt"])
        if int(nodes[pos]) != a or r["options"][pos] != r["target-class"]:
            problems.append((qid, "answer not at option-gt"))
        if len(set(nodes.tolist())) != len(nodes):
            problems.append((qid, "repeated option node"))
        if len({option_key(o) for o in r["options"]}) != len(r["options"]):
            problems.append((qid, "repeated option text"))
        for i, v in enumerate(nodes.tolist()):
            if str(tree.labels[v]) != r["options"][i]:
                problems.append((qid, f"option {LETTERS[i]} text is not the label of {tree.ids[v]}"))
        d = np.array([v for v in nodes.tolist() if v != a], dtype=np.int64)
        probe = r.get("variant") == "probe"
        if ranked or (probe and tree.ranks[a] is not None):
            if any(tree.ranks[v] != tree.ranks[a] for v in d.tolist()):
                problems.append((qid, "a distractor has another rank than the answer"))
        elif not probe:
            same = (tree.is_leaf[d] == tree.is_leaf[a]) if tree.is_leaf[a] else (tree.depth_arr[d] == tree.depth_arr[a])
            if not np.all(same):
                problems.append((qid, "a distractor is of another kind (leaf/depth) than the answer"))
        elif np.any(tree.depth_arr[d] != tree.depth_arr[a]):
            problems.append((qid, "a probe distractor is at another depth than the answer"))
        if pool is not None and pool.mask is not None:
            outside = [tree.ids[v] for v in d.tolist() if not _in_pool(tree, pool, v, a, probe)]
            if outside:
                problems.append((qid, f"distractor(s) outside the pool: {', '.join(outside)}"))
        diff = difficulty or (r.get("set") if r.get("set") in DIFFICULTIES else None)
        if diff and not probe:
            for msg in _band_problems(tree, a, d, diff, ranked):
                problems.append((qid, msg))
    return pl.DataFrame(problems, schema={"id": pl.String, "problem": pl.String}, orient="row")


def _in_pool(tree: Taxonomy, pool: DistractorPool, v: int, answer: int, probe: bool) -> bool:
    """Whether distractor ``v`` is in the pool; for a probe, whether some pool member lies in
    ``v``'s subtree at the answer's rank or depth (the pool mapped to the probed rank)."""
    if not probe:
        return bool(pool.mask[v])
    pre, size = tree._preorder
    inside = np.flatnonzero(pool.mask)
    return bool(np.any((pre[inside] >= pre[v]) & (pre[inside] < pre[v] + size[v])))


def _band_problems(tree: Taxonomy, a: int, d: np.ndarray, difficulty: str, ranked: bool) -> list[str]:
    if not len(d):
        return ["no distractors"]
    lca = tree.lca_idx(d, np.full(len(d), a, dtype=np.int64))
    lca_depth = tree.depth_arr[lca]
    out = []
    if ranked:
        genus = int(tree.ancestor_at_rank([a], "genus")[0])
        species = int(tree.ancestor_at_rank([a], "species")[0])
        if difficulty == "hard" and not np.all(lca == species):
            out.append("hard: a distractor is not of the answer's species")
        if difficulty == "medium" and not np.all(lca == genus):
            out.append("medium: a distractor is not of the answer's genus (or is of its species)")
        if difficulty == "easy":
            if not np.all(lca_depth < tree.depth_arr[genus]):
                out.append("easy: a distractor is of the answer's genus")
            gen = tree.ancestor_at_rank(d, "genus")
            if len(set(gen.tolist())) != len(gen):
                out.append("easy: two distractors share a genus")
    else:
        da = int(tree.depth_arr[a])
        if difficulty == "hard" and not np.all(lca_depth == da - 1):
            out.append("hard: a distractor is not a sibling")
        if difficulty == "medium" and not np.all(lca_depth == da - 2):
            out.append("medium: a distractor is not a cousin")
        if difficulty == "easy" and not np.all(lca_depth < da - 2):
            out.append("easy: a distractor shares the answer's grandparent")
    return out
