"""Plans of a multiple-choice question: which subtrees its distractors come from, and the draw.

A :class:`Plan` is the relation rule of one difficulty for one answer: ``tiers`` of
``(inside, outside)`` subtrees tried in order, the candidate class (the answer's rank, or
its leaf-ness / depth on a tree without ranks), and what must differ between two
distractors. :func:`pick` draws the distractors of a plan, seeded, from the candidates of
the class inside the distractor pool.

On a tree with ``genus`` and ``species`` ranks:

``easy``    other genera: each distractor's LCA with the answer lies above the answer's
            genus, above its family where the pool has enough such taxa (otherwise within
            the family), and no two distractors share a genus;
``medium``  the same genus: the LCA is the answer's genus (other species of the genus);
``hard``    the same species: the answer is an infraspecific taxon and every distractor is
            another one of its species.

On a tree without those ranks the same three bands are taken by levels above the answer:
``hard`` = siblings (LCA = parent), ``medium`` = cousins (LCA = grandparent), ``easy`` = LCA
above the grandparent (above the great-grandparent where possible, distractors pairwise
under different parents); distractors are leaves when the answer is a leaf, otherwise nodes
at the answer's depth.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from taxoforge.evaluation.multiple_choice.draws import Candidates, draw_from_ranges
from taxoforge.evaluation.multiple_choice.pools import DistractorPool
from taxoforge.seeded import SeededStream
from taxoforge.trees.taxonomy import Taxonomy
from taxoforge.trees.ranks import INFRASPECIFIC_RANKS

__all__ = ["Plan", "is_ranked", "plan_for", "candidates", "pick", "option_key", "warm_indexes"]

_INFRASPECIFIC = frozenset(INFRASPECIFIC_RANKS)


@dataclass(frozen=True)
class Plan:
    """Where the distractors of one question come from (module docstring).

    Attributes
    ----------
    tiers : tuple of (int, int)
        ``(inside, outside)`` node indexes: candidates in ``subtree(inside)`` but not in
        ``subtree(outside)`` (-1: no exclusion), tried in order.
    cls : tuple
        The candidate class: ``("rank", r)``, ``("leaf",)`` or ``("depth", d)``.
    distinct_by : tuple or None
        What must differ between any two distractors: ``("rank", r)`` (their ancestor of
        that rank) or ``("up", k)`` (their ancestor ``k`` levels up).
    relation : str
        What the distractors are, in words, for skip reasons.
    """

    tiers: tuple[tuple[int, int], ...]
    cls: tuple
    distinct_by: tuple | None
    relation: str


def is_ranked(tree: Taxonomy) -> bool:
    """Whether a tree has the genus and species ranks the ranked plans need.

    Parameters
    ----------
    tree : Taxonomy

    Returns
    -------
    bool
    """
    return {"genus", "species"} <= tree.rank_set


def plan_for(tree: Taxonomy, a: int, difficulty: str, ranked: bool) -> tuple[Plan | None, str | None]:
    """The plan of a ``difficulty`` question whose answer is node ``a``.

    Parameters
    ----------
    tree : Taxonomy
    a : int
        The answer's node index.
    difficulty : {"easy", "medium", "hard"}
    ranked : bool
        Follow ranks (else levels).

    Returns
    -------
    (Plan or None, str or None)
        The plan, or ``None`` and the reason the answer cannot get such a question.
    """
    if ranked:
        rank = tree.ranks[a]
        if rank is None:
            return None, "the answer has no rank"
        genus = int(tree._rank_ancestor_table("genus")[a])
        species = int(tree._rank_ancestor_table("species")[a])
        family = int(tree._rank_ancestor_table("family")[a]) if "family" in tree.rank_order else -1
        cls = ("rank", rank)
        if difficulty == "hard":
            if rank not in _INFRASPECIFIC or species < 0:
                return None, f"hard questions need an infraspecific answer (subspecies, variety, form); this one is a {rank}"
            return Plan(((species, a),), cls, None, f"other infraspecific taxa of {tree.labels[species]}"), None
        if genus < 0:
            return None, f"the answer ({rank}) has no genus above it"
        if difficulty == "medium":
            if species < 0:
                return None, f"medium questions need a species or lower as the answer; this one is a {rank}"
            return Plan(((genus, species),), cls, None, f"other {rank} of the genus {tree.labels[genus]}"), None
        tiers = ((tree.root_idx, family), (family, genus)) if family >= 0 else ((tree.root_idx, genus),)
        return Plan(tiers, cls, ("rank", "genus"), f"{rank} of other genera"), None
    # unranked: levels above the answer
    up = [a]
    for _ in range(3):
        p = int(tree.parent_idx[up[-1]]) if up[-1] >= 0 else -1
        up.append(p)
    _, p1, p2, p3 = up
    cls = ("leaf",) if tree.is_leaf[a] else ("depth", int(tree.depth_arr[a]))
    if difficulty == "hard":
        if p1 < 0:
            return None, "the answer is the root"
        return Plan(((p1, a),), cls, None, "siblings of the answer"), None
    if difficulty == "medium":
        if p2 < 0:
            return None, "the answer has no grandparent (cousins are the medium level)"
        return Plan(((p2, p1),), cls, None, "cousins of the answer (same grandparent, other parent)"), None
    if p2 < 0:
        return None, "the answer has no grandparent (easy needs nodes outside it)"
    root = tree.root_idx
    tiers = ((root, p3), (p3, p2)) if p3 >= 0 else ((root, p2),)
    return Plan(tiers, cls, ("up", 1), "nodes outside the answer's grandparent"), None


def _class_mask(tree: Taxonomy, cls: tuple) -> np.ndarray:
    if cls[0] == "rank":
        return tree.rank_mask(cls[1])
    if cls[0] == "leaf":
        return tree.is_leaf.copy()
    return tree.depth_arr == cls[1]


def candidates(tree: Taxonomy, cls: tuple, pool: DistractorPool | None = None) -> Candidates:
    """The candidates of a class inside a distractor pool.

    The whole tree's candidates of a class are built once per tree and kept on it; a pool
    restricts them (one pass over the class's members).

    Parameters
    ----------
    tree : Taxonomy
    cls : tuple
        ``("rank", r)``, ``("leaf",)`` or ``("depth", d)``.
    pool : DistractorPool, optional
        ``None`` or a whole-tree pool: every member.

    Returns
    -------
    Candidates
    """
    cache = tree.__dict__.setdefault("_mc_candidates", {})
    if cls not in cache:
        cache[cls] = Candidates(tree, _class_mask(tree, cls))
    whole = cache[cls]
    return whole if pool is None or pool.mask is None else whole.restricted(pool.mask)


def warm_indexes(tree: Taxonomy) -> None:
    """Build the indexes plans use (pre-order numbering, genus/species/family ancestors, the
    candidates of every rank or the leaves) once, ahead of time.

    Parameters
    ----------
    tree : Taxonomy
    """
    tree._preorder
    if is_ranked(tree):
        for r in ("genus", "species", "family"):
            if r in tree.rank_set:
                tree._rank_ancestor_table(r)
        for r in sorted(tree.rank_set):
            candidates(tree, ("rank", r))
    else:
        candidates(tree, ("leaf",))


def _distinct_key(tree: Taxonomy, node: int, how: tuple | None):
    if how is None:
        return None
    if how[0] == "rank":
        return int(tree._rank_ancestor_table(how[1])[node])
    v = node
    for _ in range(how[1]):
        v = int(tree.parent_idx[v])
        if v < 0:
            break
    return v


def option_key(label) -> str:
    """The form in which two options count as the same text (case and spacing ignored).

    Parameters
    ----------
    label : str

    Returns
    -------
    str
    """
    return " ".join(str(label).casefold().split())


def pick(tree: Taxonomy, cand: Candidates, stream: SeededStream, plan: Plan, a: int, need: int) -> list[int]:
    """Up to ``need`` distractors for answer ``a`` by ``plan``, drawn from ``cand``.

    Tiers are tried in order; a candidate is skipped when it is the answer, when its label
    repeats an option's (:func:`option_key`), or when it shares the ``distinct_by`` group of
    an option.

    Parameters
    ----------
    tree : Taxonomy
    cand : Candidates
        The candidates of the plan's class inside the pool.
    stream : SeededStream
        The question's seeded stream.
    plan : Plan
    a : int
        The answer's node index.
    need : int
        How many distractors.

    Returns
    -------
    list of int
        The distractors' node indexes; fewer than ``need`` when the candidates run out
        (never padded).
    """
    picked: list[int] = []
    seen_labels = {option_key(tree.labels[a])}
    seen_groups = {_distinct_key(tree, a, plan.distinct_by)} if plan.distinct_by else set()
    for inside, outside in plan.tiers:
        if len(picked) >= need:
            break
        for pos in draw_from_ranges(stream, cand.ranges(inside, outside)):
            v = int(cand.nodes[pos])
            if v == a:
                continue
            lab = option_key(tree.labels[v])
            if lab in seen_labels:
                continue
            if plan.distinct_by:
                g = _distinct_key(tree, v, plan.distinct_by)
                if g in seen_groups:
                    continue
                seen_groups.add(g)
            seen_labels.add(lab)
            picked.append(v)
            if len(picked) >= need:
                break
    return picked
