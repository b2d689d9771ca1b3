"""The seeded tie draws of many nodes at once (step 6 of :func:`taxoforge.trees.build.build_tree`).

:func:`taxoforge.seeded.tie_draw` defines a node's draw: the top 53 bits of the first 8 bytes
of BLAKE2b of ``"taxoforge-tie\\x1f<seed>\\x1f<node id>"`` (big-endian), over ``[0, 1)``. It hashes
one id at a time in Python (``hashlib``), a few microseconds each; a Wikidata-shaped graph has
hundreds of thousands of tied nodes. :func:`tie_draws` computes the same numbers with BLAKE2b
compiled (RFC 7693, an 8-byte digest, no key), straight from the ids' Arrow buffers, in ranges
on :func:`taxoforge.trees.threads.threads_for` threads: equal bit for bit (tested against
``hashlib`` on ids of every length, across block boundaries).

References
----------
M.-J. Saarinen and J.-P. Aumasson, *The BLAKE2 Cryptographic Hash and Message Authentication
Code (MAC)*, RFC 7693, 2015.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from taxoforge.trees.graph_kernels import compiled
from taxoforge.trees.id_codes import string_buffers
from taxoforge.trees.threads import run, split, threads_for

__all__ = ["tie_draws"]

_IV = np.array([0x6A09E667F3BCC908, 0xBB67AE8584CAA73B, 0x3C6EF372FE94F82B, 0xA54FF53A5F1D36F1,
                0x510E527FADE682D1, 0x9B05688C2B3E6C1F, 0x1F83D9ABFB41BD6B, 0x5BE0CD19137E2179], dtype=np.uint64)
_SIGMA = np.array([
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
    [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
    [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
    [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
    [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
    [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
    [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
    [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
    [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0]], dtype=np.int64)
_G = np.array([[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15],
               [0, 5, 10, 15], [1, 6, 11, 12], [2, 7, 8, 13], [3, 4, 9, 14]], dtype=np.int64)


@compiled(inline=True)
def _rotr(x, n):
    return (x >> np.uint64(n)) | (x << np.uint64(64 - n))


@compiled
def _compress(h, block, t, last, iv, sigma, g, v, m):
    for i in range(16):
        w = np.uint64(0)
        for k in range(8):
            w |= np.uint64(block[8 * i + k]) << np.uint64(8 * k)
        m[i] = w
    for i in range(8):
        v[i] = h[i]
        v[i + 8] = iv[i]
    v[12] ^= np.uint64(t)
    if last:
        v[14] = ~v[14]
    for r in range(12):
        s = sigma[r % 10]
        for j in range(8):
            a, b, c, d = g[j, 0], g[j, 1], g[j, 2], g[j, 3]
            v[a] = v[a] + v[b] + m[s[2 * j]]
            v[d] = _rotr(v[d] ^ v[a], 32)
            v[c] = v[c] + v[d]
            v[b] = _rotr(v[b] ^ v[c], 24)
            v[a] = v[a] + v[b] + m[s[2 * j + 1]]
            v[d] = _rotr(v[d] ^ v[a], 16)
            v[c] = v[c] + v[d]
            v[b] = _rotr(v[b] ^ v[c], 63)
    for i in range(8):
        h[i] ^= v[i] ^ v[i + 8]


@compiled
def _draws(prefix, offsets, data, lo, hi, iv, sigma, g, out):
    """The draws of ids ``lo`` to ``hi``: BLAKE2b-64 of ``prefix + id``, its big-endian value's
    top 53 bits over ``2**53``."""
    h = np.empty(8, dtype=np.uint64)
    v = np.empty(16, dtype=np.uint64)
    m = np.empty(16, dtype=np.uint64)
    block = np.zeros(128, dtype=np.uint8)
    p = prefix.shape[0]
    for i in range(lo, hi):
        s0 = offsets[i]
        n = p + (offsets[i + 1] - s0)
        for k in range(8):
            h[k] = iv[k]
        h[0] ^= np.uint64(0x01010008)  # digest of 8 bytes, no key
        done = 0
        while True:
            take = min(128, n - done)
            for k in range(take):
                at = done + k
                block[k] = prefix[at] if at < p else data[s0 + at - p]
            for k in range(take, 128):
                block[k] = 0
            done += take
            last = done == n
            _compress(h, block, done, last, iv, sigma, g, v, m)
            if last:
                break
        x = h[0]
        be = np.uint64(0)
        for k in range(8):  # the digest's 8 bytes are h[0] little-endian; read them big-endian
            be = (be << np.uint64(8)) | ((x >> np.uint64(8 * k)) & np.uint64(0xFF))
        out[i] = np.float64(be >> np.uint64(11)) / 9007199254740992.0


def tie_draws(tie_seed: int, node_ids: pl.Series, threads: int | None = None) -> np.ndarray:
    """:func:`taxoforge.seeded.tie_draw` of every id of ``node_ids``, compiled (module docstring).

    Parameters
    ----------
    tie_seed : int
        The seed.
    node_ids : polars.Series
        String ids without nulls.
    threads : int, optional
        The most threads to use.

    Returns
    -------
    numpy.ndarray
        One ``float64`` in ``[0, 1)`` per id, in order.

    Examples
    --------
    >>> from taxoforge.seeded import tie_draw
    >>> bool(tie_draws(3, pl.Series(["wd:Q5", "x"])).tolist() == tie_draw(3, ["wd:Q5", "x"]).tolist())
    True
    """
    n = len(node_ids)
    out = np.empty(n, dtype=np.float64)
    if n == 0:
        return out
    offsets, data = string_buffers(node_ids.rechunk())
    prefix = np.frombuffer(f"taxoforge-tie\x1f{int(tie_seed)}\x1f".encode(), dtype=np.uint8).copy()
    run(_draws, [(prefix, offsets, data, lo, hi, _IV, _SIGMA, _G, out)
                 for lo, hi in split(n, threads_for(n, threads, grain=1 << 12))])
    return out
