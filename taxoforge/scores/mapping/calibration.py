"""Choosing the softmax temperature of a similarity measure (docs/method.md#mapping-an-answer-to-a-node).

The vote of Alg. 1 fires only when the softmax of the top-k similarities is near-tied
(``p0 − p1 < thr_top2`` and ``p0 − p_{k−1} < thr_topk``). How near depends on the
temperature ``T`` and on the spread of the measure: with CLIP cosine similarities the
paper's ``T = 100`` (CLIP's logit scale) fits, while string ratios in [0, 1] with ``T =
100`` never pass the test, so the vote was dead code.

**Rule.** The vote must not override a clear best match; the clearest is an answer that is
a node's name with a one-character typo (its top-1 is that node, by a margin the measure
itself defines). So ``T`` is the **smallest temperature at which at most 1 % of such
answers pass the near-tie test** — small temperatures make the test pass more often, so
this is the temperature at which the vote fires as often as it can without overriding
clear matches. Only answers that reach the vote (no exact, contained or n-gram match)
count, and answers whose top-k are exactly tied (the test passes at every temperature)
are reported apart.

:func:`calibrate_temperature` applies the rule to one index and a list of answers;
``python -m benchmarks.calibrate_temperature`` runs it on the ImageNet-1k and
iNat21-sized trees for every string measure and prints the table kept in
:data:`taxoforge.scores.mapping.config.CALIBRATED_TEMPERATURES`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["TEMPERATURE_GRID", "near_tie_passes", "calibrate_temperature", "one_edit_typos"]

# temperatures tried, from almost uniform to sharper than CLIP's logit scale
TEMPERATURE_GRID = np.round(np.geomspace(1e-2, 1e4, 1201), 6)


def near_tie_passes(top_scores: np.ndarray, thr_top2: float, thr_topk: float,
                    grid: np.ndarray = TEMPERATURE_GRID) -> np.ndarray:
    """For one answer's top-k similarities (descending), whether the near-tie test passes
    at each temperature of ``grid`` (bool array).

    Parameters
    ----------
    top_scores : numpy.ndarray
        One answer's top-k similarities, descending.
    thr_top2 : float
        The vote's threshold on the gap of the top two softmax probabilities.
    thr_topk : float
        The vote's threshold on the spread of the top-k probabilities.
    grid : numpy.ndarray, optional
        The temperatures to test.

    Returns
    -------
    numpy.ndarray
        For one answer's top-k similarities (descending), whether the near-tie test
        passes at each temperature of ``grid`` (bool array).
    """
    s = np.asarray(top_scores, np.float64)
    if len(s) < 2:
        return np.zeros(len(grid), bool)
    z = np.outer(grid, s - s[0])  # ≤ 0
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    return (p[:, 0] - p[:, 1] < thr_top2) & (p[:, 0] - p[:, -1] < thr_topk)


def calibrate_temperature(index, answers: list[str], max_share: float = 0.01,
                          grid: np.ndarray = TEMPERATURE_GRID) -> dict:
    """The calibration rule (module docstring) on ``index`` (a
    :class:`~taxoforge.scores.mapping.TaxonomyIndex`) and ``answers`` (clear matches:
    node names with a one-character typo). Returns the temperature and what it rests on.

    Parameters
    ----------
    index : object
        The mapping index of a taxonomy.
    answers : list[str]
        Clear matches: node names with a one-character typo.
    max_share : float, optional
        Most share of clear matches whose near-tie test may pass.
    grid : numpy.ndarray, optional
        The temperatures tried, increasing.

    Returns
    -------
    dict
        The calibration rule (module docstring) on ``index`` (a
        :class:`~taxoforge.scores.mapping.TaxonomyIndex`) and ``answers`` (clear
        matches: node names with a one-character typo).
    """
    cfg = index.config
    tops = [t for t in index.vote_candidates(answers) if t is not None and len(t[1]) >= 2]
    if not tops:
        raise ValueError("no answer reaches the vote stage: nothing to calibrate on")
    passes = np.stack([near_tie_passes(s, cfg.thr_top2, cfg.thr_topk, grid) for _, s in tops])
    always = passes.all(axis=1)
    share = passes[~always].mean(axis=0) if (~always).any() else np.zeros(len(grid))
    ok = np.flatnonzero(share <= max_share)
    if not len(ok):
        raise ValueError(f"no temperature up to {grid[-1]} keeps the vote off {1 - max_share:.0%} of clear matches")
    j = int(ok[0])
    return {"temperature": float(grid[j]), "answers": len(answers), "reaching_vote": len(tops),
            "tied_at_every_temperature": int(always.sum()), "share_passing": float(share[j]),
            "max_share": max_share, "similarity": index.similarity.name}


def one_edit_typos(names: list[str], seed: int = 0) -> list[str]:
    """One seeded character edit (delete, substitute, insert or swap two neighbours, at a
    position inside a word) of each name longer than four characters.

    Parameters
    ----------
    names : list[str]
        The names table.
    seed : int, optional
        The seed of the random draws.

    Returns
    -------
    list[str]
        One seeded character edit (delete, substitute, insert or swap two neighbours, at
        a position inside a word) of each name longer than four characters.
    """
    rng = np.random.default_rng(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    out = []
    for s in names:
        pos = [i for i, c in enumerate(s) if c.isalpha()]
        if len(s) <= 4 or len(pos) < 2:
            continue
        i = int(pos[rng.integers(len(pos))])
        kind = int(rng.integers(4))
        c = letters[int(rng.integers(26))]
        if kind == 0:
            t = s[:i] + s[i + 1:]
        elif kind == 1:
            t = s[:i] + (c if c != s[i].lower() else letters[(letters.index(c) + 1) % 26]) + s[i + 1:]
        elif kind == 2:
            t = s[:i] + c + s[i:]
        else:
            j = i + 1 if i + 1 < len(s) else i - 1
            a, b = sorted((i, j))
            t = s[:a] + s[b] + s[a] + s[b + 1:]
        if t.lower() != s.lower():
            out.append(t)
    return out
