"""Seeded draws that are the same on every machine, one home for all of them.

Every random choice taxoforge makes — which parent a tied node keeps
(:func:`taxoforge.trees.build.build_tree`), which tree cuts are sampled
(:func:`taxoforge.trees.cuts.sample_tree_cuts`), which distractors a multiple-choice question
offers (:mod:`taxoforge.evaluation.multiple_choice`) — is a hash, not a generator's state:

* :func:`hash64` — the first 8 bytes of BLAKE2b of a key, as an unsigned integer. The same
  on every machine, Python and numpy version, and independent of the order in which keys
  are drawn: a node's draw depends on its own key only.
* :func:`unit_interval` — the top 53 bits of such hashes as floats in ``[0, 1)``, exact in
  float64.
* :func:`splitmix64` — SplitMix64's output function (Steele, Lea & Flood, 2014), vectorised:
  mixes a hash with a salt so one BLAKE2b per key serves many draws.
* :func:`tie_draw` — one uniform per node id for a seed (the tie-breaking draw);
  :class:`SeededStream` — a stream of uniform integers for ``(seed, key)``.

Examples
--------
>>> hash64("wn:n02084071") == hash64(b"wn:n02084071")
True
>>> float(tie_draw(0, ["wd:Q5"])[0]) == float(tie_draw(0, ["wd:Q5", "wd:Q1"])[0])
True
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import numpy as np

__all__ = ["hash64", "unit_interval", "splitmix64", "tie_draw", "SeededStream"]


def hash64(key: str | bytes) -> int:
    """The first 8 bytes of the BLAKE2b hash of ``key``, big-endian.

    Parameters
    ----------
    key : str or bytes
        What to hash; a string is encoded as UTF-8.

    Returns
    -------
    int
        An integer in ``[0, 2**64)``.
    """
    data = key.encode() if isinstance(key, str) else key
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


def unit_interval(hashes: np.ndarray) -> np.ndarray:
    """Uniform floats in ``[0, 1)`` from 64-bit hashes: their top 53 bits, exact in float64.

    Parameters
    ----------
    hashes : numpy.ndarray
        Unsigned 64-bit integers (or Python ints below ``2**64``).

    Returns
    -------
    numpy.ndarray
        ``float64`` values, one per hash.
    """
    return (np.asarray(hashes, dtype=np.uint64) >> np.uint64(11)).astype(np.float64) / float(1 << 53)


def splitmix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's output function over an array: a bijective mix of 64-bit integers.

    Parameters
    ----------
    x : numpy.ndarray
        ``uint64`` values (a hash xor a salt).

    Returns
    -------
    numpy.ndarray
        ``uint64`` values, each depending on every bit of its input.
    """
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def tie_draw(tie_seed: int, node_ids: Iterable[str]) -> np.ndarray:
    """Uniform draws in ``[0, 1)``, one per node id, depending only on ``(tie_seed, node id)``.

    The draw that decides which parent a tied node keeps (:func:`taxoforge.trees.build.build_tree`):
    BLAKE2b of ``"taxoforge-tie", seed, node id`` (``\\x1f``-separated).

    Parameters
    ----------
    tie_seed : int
        The seed.
    node_ids : iterable of str
        The nodes to draw for.

    Returns
    -------
    numpy.ndarray
        One ``float64`` per node id, in the order given.

    Examples
    --------
    >>> float(tie_draw(0, ["wd:Q5"])[0]) == float(tie_draw(0, ["wd:Q5"])[0])
    True
    """
    prefix = f"taxoforge-tie\x1f{int(tie_seed)}\x1f".encode()
    return unit_interval(np.fromiter((hash64(prefix + nid.encode()) for nid in node_ids), dtype=np.uint64))


class SeededStream:
    """Uniform integers from BLAKE2b of ``(seed, key, counter)``: the same on every machine
    and Python version, independent of the order in which the keys are drawn.

    Parameters
    ----------
    seed : int
        The seed.
    key : str
        What the stream is for (a question's difficulty, row and node, say).

    Examples
    --------
    >>> a, b = SeededStream(7, "easy|12|inat:1"), SeededStream(7, "easy|12|inat:1")
    >>> [a.below(10) for _ in range(5)] == [b.below(10) for _ in range(5)]
    True
    >>> SeededStream(7, "easy|12|inat:1").next64() != SeededStream(8, "easy|12|inat:1").next64()
    True
    """

    __slots__ = ("_prefix", "_counter")

    def __init__(self, seed: int, key: str) -> None:
        self._prefix = f"{int(seed)}\x1f{key}\x1f".encode()
        self._counter = 0

    def next64(self) -> int:
        """The next 64-bit integer of the stream.

        Returns
        -------
        int
            An integer in ``[0, 2**64)``.
        """
        h = hash64(self._prefix + str(self._counter).encode())
        self._counter += 1
        return h

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` (rejection sampling: no modulo bias).

        Parameters
        ----------
        n : int
            The bound, positive.

        Returns
        -------
        int
            The draw.
        """
        if n <= 0:
            raise ValueError("n must be positive")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            x = self.next64()
            if x < limit:
                return x % n
