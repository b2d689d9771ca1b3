"""Where the distractors of a multiple-choice set come from: the distractor pool.

VLM4Bio draws every option of a question from the species of the same dataset — fish among
fish, birds among birds — so its easy questions are easy only within that dataset. Drawing
from a whole tree of life instead offers a fern or a fungus beside a fish and makes the
questions far easier than the paper's. The pool says which nodes may be offered:

``"labels"`` (the default)
    the nodes the ground truths given resolve to — the dataset's own taxa, as VLM4Bio does;
``"tree"``
    every node of the tree;
a clade, ``"clade:NAME"`` or ``"NAME"`` (a name or node id of the tree)
    the nodes of that clade's subtree (a clade named ``labels`` or ``tree`` needs the
    ``clade:`` prefix);
a list of labels or node ids
    the nodes they resolve to (by the one label resolver).

Every difficulty keeps its relation rule and draws only inside the pool; a ground truth
whose pool has too few valid distractors is skipped with the reason, never padded. The pool
is recorded in the question set's ``info["pool"]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from taxoforge.links.tree_labels import resolve_nodes
from taxoforge.trees.taxonomy import Taxonomy

__all__ = ["POOL_KINDS", "DistractorPool", "distractor_pool", "pool_of_info"]

#: The kinds of pool: the labels given, the whole tree, a clade, an explicit list.
POOL_KINDS = ("labels", "tree", "clade", "list")


@dataclass(frozen=True)
class DistractorPool:
    """The nodes distractors may be drawn from (module docstring).

    Attributes
    ----------
    kind : str
        One of :data:`POOL_KINDS`.
    mask : numpy.ndarray or None
        One boolean per node of the tree; ``None`` for the whole tree.
    description : str
        The pool in words, for skip reasons ("the 37 taxa of the labels given").
    info : dict
        What is recorded in the question set's metadata.
    """

    kind: str
    mask: np.ndarray | None
    description: str
    info: dict

    def restricted_to(self, nodes: np.ndarray) -> "DistractorPool":
        """The same pool over other nodes — used by rank probes, whose options are the pool's
        ancestors at the probed rank.

        Parameters
        ----------
        nodes : numpy.ndarray
            One boolean per node of the tree.

        Returns
        -------
        DistractorPool
        """
        return DistractorPool(self.kind, nodes, self.description, self.info)


def _clade(tree: Taxonomy, ref: str) -> DistractorPool:
    res = resolve_nodes(tree, [ref], partial=False).row(0, named=True)
    if res["idx"] < 0:
        raise ValueError(f"distractor pool: the clade {ref!r} is not a node of {tree.name}: {res['detail']}")
    x = int(res["idx"])
    pre, size = tree._preorder
    mask = (pre >= pre[x]) & (pre < pre[x] + size[x])
    label = str(tree.labels[x])
    return DistractorPool("clade", mask, f"the clade {label} ({tree.ids[x]})",
                          {"kind": "clade", "clade": ref, "node": str(tree.ids[x]), "label": label,
                           "resolved_by": res["method"], "nodes": int(mask.sum())})


def _of_nodes(tree: Taxonomy, kind: str, idx: np.ndarray, description: str, extra: dict) -> DistractorPool:
    mask = np.zeros(len(tree), dtype=bool)
    mask[idx[idx >= 0]] = True
    ids = sorted(tree.ids[mask].tolist())
    return DistractorPool(kind, mask, description, {"kind": kind, "nodes": len(ids), **extra, "node_ids": ids})


def distractor_pool(tree: Taxonomy, pool, answers: np.ndarray) -> DistractorPool:
    """The :class:`DistractorPool` that ``pool`` names.

    Parameters
    ----------
    tree : Taxonomy
    pool : str or sequence of str or DistractorPool
        ``"labels"``, ``"tree"``, ``"clade:NAME"`` or ``"NAME"``, a list of labels or node
        ids, or a pool already made (module docstring).
    answers : numpy.ndarray
        The node indexes the ground truths resolved to (-1: unresolved); the ``"labels"`` pool.

    Returns
    -------
    DistractorPool

    Raises
    ------
    ValueError
        A clade that names no node of the tree, or a list of which no label resolves.
    """
    if isinstance(pool, DistractorPool):
        return pool
    if isinstance(pool, str):
        if pool == "labels":
            n = int(len(np.unique(answers[answers >= 0])))
            return _of_nodes(tree, "labels", np.asarray(answers), f"the {n} taxa of the labels given", {})
        if pool == "tree":
            return DistractorPool("tree", None, f"{tree.name} (the whole tree)",
                                  {"kind": "tree", "nodes": len(tree)})
        return _clade(tree, pool.removeprefix("clade:"))
    if isinstance(pool, Sequence) or hasattr(pool, "to_list"):
        values = pool.to_list() if hasattr(pool, "to_list") else list(pool)
        res = resolve_nodes(tree, values, partial=False)
        idx = res["idx"].to_numpy()
        if not (idx >= 0).any():
            raise ValueError(f"distractor pool: none of the {len(values)} labels given as the pool resolves to a "
                             f"node of {tree.name}")
        n = int(len(np.unique(idx[idx >= 0])))
        return _of_nodes(tree, "list", idx, f"the {n} taxa of the pool given",
                         {"labels": len(values), "unresolved": int((idx < 0).sum())})
    raise TypeError(f"distractor pool: expected 'labels', 'tree', a clade name or id, or a list of labels; "
                    f"got {type(pool).__name__}")


def pool_of_info(tree: Taxonomy, info: dict) -> DistractorPool:
    """The pool a question set's ``info["pool"]`` records, on ``tree`` (to check the set).

    Parameters
    ----------
    tree : Taxonomy
    info : dict
        ``info["pool"]`` of a :class:`~taxoforge.evaluation.multiple_choice.questions.QuestionSet`.

    Returns
    -------
    DistractorPool
    """
    kind = info.get("kind")
    if kind == "tree":
        return distractor_pool(tree, "tree", np.zeros(0, dtype=np.int64))
    if kind == "clade":
        return distractor_pool(tree, f"clade:{info['node']}", np.zeros(0, dtype=np.int64))
    if kind in ("labels", "list"):
        idx = tree.index_of(list(info["node_ids"])) if info["node_ids"] else np.zeros(0, dtype=np.int64)
        return _of_nodes(tree, kind, np.asarray(idx, dtype=np.int64), f"the {len(info['node_ids'])} taxa of the pool",
                         {})
    raise ValueError(f"not a distractor pool record: {info!r}")
