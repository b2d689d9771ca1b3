"""Seeded draws of a multiple-choice set: distractor candidates in pre-order, drawn without repeats.

Every random choice of a question set is drawn from BLAKE2b of ``(seed, key, counter)``
(:class:`taxoforge.seeded.SeededStream`) — never from process state, hash seeds or numpy's
generators — so the same tree, labels and
seed give the same questions on any machine and in any order of building. Candidates are
the nodes of one class (a rank, the leaves, or a depth) in the tree's pre-order, so the
members inside ``subtree(X)`` but outside ``subtree(Y)`` are at most two contiguous slices,
and :func:`draw_from_ranges` draws distinct positions from them by a sparse Fisher–Yates
shuffle: a question costs O(options), not O(candidates).
"""

from __future__ import annotations

import numpy as np

from taxoforge.seeded import SeededStream
from taxoforge.trees.taxonomy import Taxonomy

__all__ = ["Candidates", "draw_from_ranges"]


class Candidates:
    """The nodes of one class (``mask``), in the tree's pre-order (module docstring).

    Parameters
    ----------
    tree : Taxonomy
    mask : numpy.ndarray
        Booleans, one per node: the members.
    """

    def __init__(self, tree: Taxonomy, mask: np.ndarray) -> None:
        pre, size = tree._preorder
        members = np.flatnonzero(mask)
        order = np.argsort(pre[members], kind="stable")
        self._set(members[order], pre, size)

    def _set(self, nodes: np.ndarray, pre: np.ndarray, size: np.ndarray) -> None:
        self.nodes = nodes
        self.pre = pre[nodes]
        self._tree_pre, self._tree_size = pre, size
        self._spans: dict[int, tuple[int, int]] = {}

    def restricted(self, mask: np.ndarray) -> "Candidates":
        """The members a mask keeps, still in pre-order.

        Parameters
        ----------
        mask : numpy.ndarray
            One boolean per node of the tree.

        Returns
        -------
        Candidates
        """
        out = Candidates.__new__(Candidates)
        out._set(self.nodes[mask[self.nodes]], self._tree_pre, self._tree_size)
        return out

    def __len__(self) -> int:
        return len(self.nodes)

    def span(self, x: int) -> tuple[int, int]:
        """The positions of the members inside ``subtree(x)``.

        Parameters
        ----------
        x : int
            A node index.

        Returns
        -------
        (int, int)
            ``[lo, hi)``.
        """
        got = self._spans.get(x)
        if got is None:
            lo, hi = np.searchsorted(self.pre, [self._tree_pre[x], self._tree_pre[x] + self._tree_size[x]], "left")
            got = self._spans[x] = (int(lo), int(hi))
        return got

    def ranges(self, inside: int, outside: int) -> list[tuple[int, int]]:
        """Position ranges of the members in ``subtree(inside)`` but not in ``subtree(outside)``.

        Parameters
        ----------
        inside : int
            A node index.
        outside : int
            A node index, or -1: no exclusion.

        Returns
        -------
        list of (int, int)
            At most two ``[start, stop)`` ranges.
        """
        lo, hi = self.span(inside)
        if outside < 0:
            return [(lo, hi)] if hi > lo else []
        elo, ehi = self.span(outside)
        elo, ehi = max(elo, lo), min(ehi, hi)
        if ehi <= elo:
            return [(lo, hi)] if hi > lo else []
        return [(a, b) for a, b in ((lo, elo), (ehi, hi)) if b > a]


def draw_from_ranges(stream: SeededStream, ranges: list[tuple[int, int]]):
    """Distinct positions from the union of ``ranges`` (one or two ``(start, stop)`` pairs), in
    a seeded random order (a sparse Fisher–Yates shuffle: O(1) memory per draw).

    Parameters
    ----------
    stream : SeededStream
    ranges : list of (int, int)

    Yields
    ------
    int
        Every position of the ranges, once each.

    Examples
    --------
    >>> sorted(draw_from_ranges(SeededStream(1, "k"), [(0, 3), (10, 12)]))
    [0, 1, 2, 10, 11]
    """
    if not ranges:
        return
    a0, b0 = ranges[0]
    s0 = b0 - a0
    a1 = ranges[1][0] - s0 if len(ranges) > 1 else 0
    m = sum(b - a for a, b in ranges)
    swapped: dict[int, int] = {}
    for i in range(m):
        j = i + stream.below(m - i)
        vj, vi = swapped.get(j, j), swapped.get(i, i)
        swapped[j] = vi
        yield a0 + vj if vj < s0 else a1 + vj
