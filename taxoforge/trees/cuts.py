"""Random tree cuts, and the tree-cut accuracy they give (ProTeCt, Wu, Ho & Vasconcelos,
CVPR 2024, "Prompt Tuning for Taxonomic Open Set Classification", arXiv:2306.02240).

A **tree cut** of the evaluation tree (the ground truths and all their ancestors) is the
label set of a pruned tree: starting at the root, every internal node is *expanded* (its
children replace it) or not; the cut is the set of nodes reached that are not expanded
(or are leaves of the evaluation tree). Each ground truth then has exactly one cut node on
its root path, and a classifier restricted to the cut is right when it picks that node.

Sampling (ProTeCt's ``sample_treecuts.py --multi``): each internal node is kept unexpanded
with probability ``p`` (a "dropout" of the node; the root is always expanded), for ``p`` in
``(0.9, 0.7, 0.5, 0.3, 0.1)``, the same number of cuts per ``p`` (25 in all by default), and
a cut already drawn is drawn again — so the cuts are distinct. Small trees have few
distinct cuts; sampling stops after ``max_attempts`` draws per ``p`` and the result says how
many cuts it found.

The draws are counter-based: the uniform of node ``v`` in attempt ``a`` is SplitMix64 of
BLAKE2b(node id) mixed with ``(seed, p, a)`` (:mod:`taxoforge.seeded`) — the same cuts on any machine, and a node's
draws do not depend on the rest of the tree.

**Tree-cut accuracy of one predicted node.** The cut node of the ground truth ``g`` is the
shallowest node on its root path that is not expanded (``g`` itself when every ancestor
is expanded). A prediction ``p`` is right for that cut when the cut node lies on ``p``'s
root path too, i.e. ``depth(lca(p, g)) ≥ depth(cut node)``: a prediction at or below the
right cut node is right, one above the cut (too generic to choose a cut node) or in another
branch is wrong. **MTA** is the mean of this accuracy over the cuts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from taxoforge.seeded import hash64, splitmix64, unit_interval

__all__ = ["TreeCuts", "sample_tree_cuts", "PROTECT_DROPOUT_RATES", "FewerCutsWarning"]

PROTECT_DROPOUT_RATES = (0.1, 0.3, 0.5, 0.7, 0.9)
_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)
_BATCH_VALUES = 1 << 22  # values per array of a batch of attempts (attempts × evaluation-tree nodes)


class FewerCutsWarning(UserWarning):
    """Fewer distinct tree cuts exist (or were found) than were asked for: a small tree."""


@dataclass
class TreeCuts:
    """``cut_depth[c, i]``: the depth of ground truth ``i``'s cut node in cut ``c``;
    ``dropout[c]``: the ``p`` cut ``c`` was drawn with; ``cut_nodes[c]``: its node indexes.

    Attributes
    ----------
    cut_depth : numpy.ndarray
        ``(cuts, ground truths)``: the depth of ground truth ``i``'s cut node in cut
        ``c``.
    dropout : numpy.ndarray
        The dropout rate ``p`` each cut was drawn with.
    cut_nodes : list[numpy.ndarray]
        Each cut's node indexes.
    requested : int
        How many cuts were asked for (more than were found on a small tree).
    """

    cut_depth: np.ndarray
    dropout: np.ndarray
    cut_nodes: list[np.ndarray]
    requested: int

    def __len__(self) -> int:
        return len(self.dropout)

    @property
    def shortfall(self) -> str | None:
        """A sentence saying how many distinct cuts were found of the number asked, when
        fewer; None when every cut asked for was found."""
        if len(self) >= self.requested:
            return None
        return (f"only {len(self)} distinct tree cuts of the {self.requested} asked for: the tree spanned by the "
                f"ground truths has no more (or none were found in the attempts per dropout rate)")

    def accuracy(self, lca_depth: np.ndarray, sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Accuracy of every cut for predictions whose LCA with the ground truth has depth
        ``lca_depth`` (one per ground truth, in the order given to :func:`sample_tree_cuts`).

        Parameters
        ----------
        lca_depth : numpy.ndarray
            Depth of the lowest common ancestor of each prediction and its ground truth, in
            the order the ground truths were given to :func:`sample_tree_cuts`.
        sample_weight : numpy.ndarray, optional
            A weight per sample (default: equal weights).

        Returns
        -------
        numpy.ndarray
            Accuracy of every cut for predictions whose LCA with the ground truth has depth
            ``lca_depth`` (one per ground truth, in the order given to
            :func:`sample_tree_cuts`).
        """
        right = np.asarray(lca_depth)[None, :] >= self.cut_depth
        if sample_weight is None:
            return right.mean(axis=1)
        w = np.asarray(sample_weight, dtype=np.float64)
        return (right * w[None, :]).sum(axis=1) / w.sum()


def sample_tree_cuts(tree, ground_truth_idx, *, n_cuts: int = 25, dropout_rates=PROTECT_DROPOUT_RATES,
                     seed: int = 0, max_attempts: int = 200) -> TreeCuts:
    """Distinct random tree cuts of the evaluation tree spanned by ``ground_truth_idx`` (module
    docstring); ``n_cuts`` is split evenly over ``dropout_rates`` (the remainder to the
    first rates, in ProTeCt's order from 0.9 down).

    Parameters
    ----------
    tree : taxoforge.trees.taxonomy.Taxonomy
        The tree.
    ground_truth_idx : array_like of int
        Node indexes of the ground truths; the evaluation tree is them and their ancestors.
    n_cuts : int
        Distinct cuts wanted.
    dropout_rates : sequence of float
        The probabilities of keeping an internal node unexpanded.
    seed : int
        Seed of the counter-based draws.
    max_attempts : int
        Draws per dropout rate before giving up on finding more distinct cuts.

    Returns
    -------
    TreeCuts
        ``len()`` is the number of distinct cuts found; ``requested`` the number asked and
        ``shortfall`` a sentence when fewer were found.
    """
    tax = tree
    gt = np.asarray(ground_truth_idx, dtype=np.int64)
    if not len(gt):
        raise ValueError("no ground truths")
    n = len(tax)
    parent, depth = tax.parent_idx, tax.depth_arr.astype(np.int64)
    # the evaluation tree: every ground truth and its ancestors
    in_eval = np.zeros(n, dtype=bool)
    frontier = np.unique(gt)
    while len(frontier):
        frontier = frontier[~in_eval[frontier]]
        in_eval[frontier] = True
        frontier = parent[frontier]
        frontier = np.unique(frontier[frontier >= 0])
    nodes = np.flatnonzero(in_eval)
    # everything below works on the evaluation tree alone, renumbered 0..m-1 in node order
    # (a few hundred nodes where the whole tree may have millions): per attempt, arrays of
    # the evaluation tree's size, not the tree's
    m = len(nodes)
    local = np.full(n, -1, dtype=np.int64)
    local[nodes] = np.arange(m)
    par_l = np.where(parent[nodes] >= 0, local[np.maximum(parent[nodes], 0)], -1)
    depth_l = depth[nodes]
    gt_l = local[gt]
    internal = np.zeros(m, dtype=bool)
    internal[par_l[par_l >= 0]] = True
    order = np.argsort(depth_l, kind="stable")
    keys = np.array([hash64(str(v)) for v in tax.ids_of(nodes[order])], dtype=np.uint64)
    root = local[tax.root_idx]
    rates = sorted(dropout_rates, reverse=True)
    per_rate = [n_cuts // len(rates) + (1 if i < n_cuts % len(rates) else 0) for i in range(len(rates))]
    seen: set[bytes] = set()
    depths, drops, members = [], [], []
    levels = _by_depth(order, depth_l)
    has_parent = par_l >= 0
    par_safe = np.maximum(par_l, 0)
    for rate, want in zip(rates, per_rate):
        got, attempt = 0, 0
        # attempts are drawn in batches (all of a batch's levels at once), then taken in
        # attempt order exactly as one at a time would: the same cuts, far fewer numpy calls
        while got < want and attempt < max_attempts:
            batch = min(max_attempts - attempt, max(1, min(8 << min(attempt // 8, 4), _BATCH_VALUES // max(m, 1))))
            for blocked, reach_exp in _draw_cuts(keys, order, levels, par_l, depth_l, internal, root, rate, seed,
                                                 range(attempt, attempt + batch)):
                attempt += 1
                sig = np.flatnonzero(reach_exp).tobytes()  # local numbering keeps node order: the same test
                if sig in seen:
                    continue
                seen.add(sig)
                got += 1
                depths.append(np.minimum(blocked[gt_l], depth_l[gt_l]))
                drops.append(rate)
                in_cut = (~reach_exp) & np.where(has_parent, reach_exp[par_safe], False)
                members.append(nodes[in_cut])
                if got >= want:
                    break
    return TreeCuts(np.vstack(depths).astype(np.int64), np.array(drops), members, n_cuts)


def _draw_cuts(keys, order, levels, par_l, depth_l, internal, root, rate, seed, attempts):
    """``(blocked, reach_exp)`` of each attempt in ``attempts``: the depth of the first
    unexpanded node on each root path (inclusive; max int where none) and whether the
    node is reached through expanded nodes only — every attempt's arrays in one pass."""
    inf = np.iinfo(np.int64).max
    m, a = len(par_l), len(attempts)
    salts = np.array([hash64(f"{int(seed)}|{rate!r}|{att}") for att in attempts], dtype=np.uint64)
    u = unit_interval(splitmix64(keys[None, :] ^ salts[:, None]))
    expanded = np.zeros((a, m), dtype=bool)
    expanded[:, order] = (u >= rate) & internal[order][None, :]
    expanded[:, root] = True
    # top-down, one depth level at a time
    blocked = np.full((a, m), inf, dtype=np.int64)
    reach_exp = np.zeros((a, m), dtype=bool)
    for v_chunk in levels:
        par = par_l[v_chunk]
        has = par >= 0
        pb = np.where(has[None, :], blocked[:, np.maximum(par, 0)], inf)
        pexp = np.where(has[None, :], reach_exp[:, np.maximum(par, 0)], True)
        exp = expanded[:, v_chunk]
        blocked[:, v_chunk] = np.where(pb < inf, pb, np.where(exp, inf, depth_l[v_chunk][None, :]))
        reach_exp[:, v_chunk] = pexp & exp & (pb == inf)
    return zip(blocked, reach_exp)


def _by_depth(order: np.ndarray, depth: np.ndarray):
    d = depth[order]
    bounds = np.flatnonzero(np.diff(d)) + 1
    return np.split(order, bounds)
