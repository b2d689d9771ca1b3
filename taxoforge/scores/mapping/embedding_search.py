"""Exact top-L search of unit embeddings: the names most similar to each query, in blocks.

The embedding measure's full scan (:meth:`taxoforge.scores.mapping.candidates.CandidateRetrieval.top_k_full`)
needs, for each query, every name whose cosine similarity reaches the query's ``L``-th best
(ties at that value included, so that the node-level top-k taken from them is exact). Both
searches here give exactly that set, never holding more than one block of similarities:

* :func:`top_names_cpu` — numpy, float32: one block of queries against one block of names at
  a time (a matrix product into a reused buffer), each row's ``L`` best of the block found by
  a partial sort (``np.argpartition``). The names may be memory-mapped (the embeddings
  stored beside a persisted index).
* :func:`top_names_torch` — the same on a torch device (``torch.topk`` per block), the
  names' embeddings kept on the device (:class:`DeviceEmbeddings`); memory bounded by
  ``max_block_bytes``. On CUDA this is the GPU search; it runs on the CPU too, which is how
  the tests check it.

**One similarity per pair, wherever it is computed.** A float32 matrix product rounds each
entry according to the kernel the BLAS library picks for the block's shape, so the same
query and name can differ in the last bit between a block of 11 queries and one of 256, or
between the CPU and a GPU. The searches therefore only *select* with the float32 products
``g`` and return :func:`exact_scores` ``c`` — the dot product accumulated in float64, row
by row in one fixed order — of the selected names. With ``|g − c| ≤ ε`` for every pair (``ε`` the float32 dot product's
rounding bound ``γ_d = d·u / (1 − d·u)`` for unit rows, ``u`` the unit roundoff of the
product), let ``t_g`` and ``t_c`` be a query's ``L``-th largest ``g`` and ``c``: the ``L``
names with ``g ≥ t_g`` have ``c ≥ t_g − ε``, so ``t_c ≥ t_g − ε``, and every name with
``c ≥ t_c`` has ``g ≥ t_g − 2ε``. So the names with ``g ≥ t_g − 2ε`` (a few more than ``L``)
hold every name reaching ``t_c``, and ``t_c`` is their ``L``-th largest ``c``: the result
is the exact set, ties included, the same for any block shape and on any device.

**Why the blocks lose nothing.** Each block keeps its ``l = min(L, block)`` largest ``g``,
whose smallest is ``b``, and every name of the block with ``g ≥ b − 2ε``. The union of the
blocks' ``l`` largest holds the ``L`` largest overall, so ``t_g`` is found; a name of the
block scoring ``g ≥ t_g − 2ε`` scores ``g ≥ b − 2ε`` since ``t_g ≥ b`` (the block alone has
``l`` values ``≥ b``), so it was kept.
"""

from __future__ import annotations

import numpy as np

__all__ = ["top_names_cpu", "top_names_torch", "exact_scores", "rounding_bound", "DeviceEmbeddings",
           "QUERY_BLOCK", "NAME_BLOCK"]

QUERY_BLOCK = 256  # queries per matrix product on the CPU: enough rows for the BLAS kernel to run at speed
NAME_BLOCK = 16_384  # names per block on the CPU: a 256 × 16,384 float32 buffer is 16 MiB
EXACT_ROWS = 65_536  # names widened to float64 at a time by exact_scores


def rounding_bound(d: int, unit_roundoff: float = 2.0 ** -24) -> float:
    """``ε``: the most a dot product of two vectors of length at most 1 (1.01, for rows
    normalised in float32) computed with ``unit_roundoff`` can differ from the exact one
    (module docstring), plus the float64 rescoring's own error.

    Parameters
    ----------
    d : int
        The vectors' length.
    unit_roundoff : float, optional
        ``u`` of the product's arithmetic (float32: ``2**-24``).

    Returns
    -------
    float
        The bound.

    Examples
    --------
    >>> 2.2e-5 < rounding_bound(384) < 2.4e-5
    True
    """
    du = d * unit_roundoff
    return 1.0201 * du / (1.0 - du) + 1e-12


def exact_scores(query: np.ndarray, names: np.ndarray, ids: np.ndarray | None = None) -> np.ndarray:
    """``names[ids] · query`` accumulated in float64: the one similarity of each pair,
    whatever computed it first (module docstring).

    Parameters
    ----------
    query : numpy.ndarray
        ``(d,)`` float32.
    names : numpy.ndarray
        ``(n, d)`` float32 (may be memory-mapped).
    ids : numpy.ndarray, optional
        The rows scored (default: all, in blocks).

    Returns
    -------
    numpy.ndarray
        float64, one per row scored.
    """
    q = np.asarray(query, np.float64)
    if ids is not None:
        return _row_dots(np.asarray(names[ids]), q)
    n = int(names.shape[0])
    out = np.empty(n)
    for i in range(0, n, EXACT_ROWS):
        out[i:i + EXACT_ROWS] = _row_dots(np.asarray(names[i:i + EXACT_ROWS]), q)
    return out


def _row_dots(rows: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Each row · q in float64 (the float32 × float32 products are exact there), each row
    summed alone by einsum's inner loop — the same bits for the same row wherever it lies
    (a matrix-vector product may take another path for the rows at a block's edge)."""
    return np.einsum("ij,j->i", rows, q, dtype=np.float64)


def _lth_by_row(R: np.ndarray, V: np.ndarray, m: int, L: int) -> np.ndarray:
    """Each row's ``L``-th largest of the values ``V`` it owns (``R``: the owning rows, below
    ``m``), or ``-inf`` for a row owning fewer than ``L``. One sort of ``4·R − V`` orders by
    row, then value descending (the values are similarities, within ``[-1.02, 1.02]``)."""
    order = np.argsort(R * 4.0 - V.astype(np.float64))
    start = np.searchsorted(R[order], np.arange(m))
    count = np.bincount(R, minlength=m)
    out = np.full(m, -np.inf, V.dtype)
    has = count >= L
    out[has] = V[order[start[has] + L - 1]]
    return out


def _exact_sets(q: np.ndarray, names: np.ndarray, L: int, R: np.ndarray, C: np.ndarray, V: np.ndarray,
                eps: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """From a block of queries' kept (row, name, float32 product): each query's exact set and
    its float64 scores (module docstring), with one gather and one product for the block."""
    m = len(q)
    t_g = _lth_by_row(R, V, m, L)  # -inf for a row with fewer than L names: it keeps them all
    near = V >= (t_g - 2 * eps)[R]
    R, C = R[near], C[near]
    c = np.einsum("ij,ij->i", np.asarray(names[C]), q[R], dtype=np.float64)  # as _row_dots, all rows at once
    t_c = _lth_by_row(R, c, m, L)
    keep = c >= t_c[R]
    R, C, c = R[keep], C[keep], c[keep]
    order = np.lexsort((C, R))
    R, C, c = R[order], C[order], c[order]
    bounds = np.searchsorted(R, np.arange(m + 1))
    return [(C[bounds[i]:bounds[i + 1]], c[bounds[i]:bounds[i + 1]]) for i in range(m)]


def top_names_cpu(queries: np.ndarray, names: np.ndarray, L: int, *, query_block: int = QUERY_BLOCK,
                  name_block: int = NAME_BLOCK) -> list[tuple[np.ndarray, np.ndarray]]:
    """Every name scoring at least each query's ``L``-th best similarity (module docstring).

    Parameters
    ----------
    queries : numpy.ndarray
        ``(m, d)`` float32 query embeddings.
    names : numpy.ndarray
        ``(n, d)`` float32 name embeddings, rows unit length (may be memory-mapped).
    L : int
        How many of the best similarities the threshold takes (``1 ≤ L``; more than ``n``
        means every name).
    query_block, name_block : int, optional
        Block sizes (a ``query_block × name_block`` float32 buffer is the only similarity
        matrix held).

    Returns
    -------
    list[tuple[numpy.ndarray, numpy.ndarray]]
        Per query: the name indexes (ascending, int64) and their similarities
        (:func:`exact_scores`, float64).

    Examples
    --------
    >>> e = np.eye(3, dtype=np.float32)
    >>> [ids.tolist() for ids, _ in top_names_cpu(e[:1], np.vstack([e, e[:1]]), 1)]
    [[0, 3]]
    """
    if L < 1:
        raise ValueError(f"L must be at least 1, not {L}")
    q_all = np.ascontiguousarray(queries, np.float32)
    n = int(names.shape[0])
    eps = rounding_bound(int(names.shape[1]) if names.ndim == 2 else 1)
    out: list[tuple[np.ndarray, np.ndarray]] = []
    for q0 in range(0, len(q_all), query_block):
        q = q_all[q0:q0 + query_block]
        m = len(q)
        if n == 0:
            out += [(np.zeros(0, np.int64), np.zeros(0))] * m
            continue
        buf = np.empty((m, min(name_block, n)), np.float32)
        T = np.full(m, -np.inf, np.float32)  # each row's L-th best product so far (-inf: fewer than L seen)
        R, C, V = np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32)
        for j0 in range(0, n, name_block):
            e = np.asarray(names[j0:j0 + name_block])
            s = buf[:, :len(e)]
            np.matmul(q, e.T, out=s)
            thr = T.copy()
            if np.isneginf(thr).any():
                thr = np.where(np.isneginf(thr), _block_floor(s, L), thr)
            idx = np.flatnonzero(s >= (thr - 2 * eps)[:, None])
            b = s.shape[1]
            R = np.concatenate([R, idx // b])
            C = np.concatenate([C, idx % b + j0])
            V = np.concatenate([V, s.ravel()[idx]])
            T = _lth_by_row(R, V, m, L).astype(np.float32)
            keep = V >= (T - 2 * eps)[R]
            R, C, V = R[keep], C[keep], V[keep]
        out += _exact_sets(q, names, L, R, C, V, eps)
    return out


def _block_floor(s: np.ndarray, L: int) -> np.ndarray:
    """A lower bound of each row's ``min(L, width)``-th largest value: that value itself in a
    narrow block, else the same rank in a strided sample of the row (a sample's ``l``-th
    largest is at most the row's), which costs a partition of 1/64 of the row or less."""
    b = s.shape[1]
    l = min(L, b)
    step = b // (64 * l)
    if step < 2:
        return np.partition(s, b - l, axis=1)[:, b - l]
    sample = s[:, ::step]
    return np.partition(sample, sample.shape[1] - l, axis=1)[:, sample.shape[1] - l]


class DeviceEmbeddings:
    """Name embeddings held on a torch device for :func:`top_names_torch`, uploaded once
    (the host array is kept too: the selected names are rescored from it).

    Parameters
    ----------
    names : numpy.ndarray
        ``(n, d)`` float32 unit-length name embeddings.
    device : str
        A torch device (``"cuda"``, ``"cpu"``).
    """

    def __init__(self, names: np.ndarray, device: str) -> None:
        import torch

        self.device = device
        self.host = names
        self.tensor = torch.from_numpy(np.ascontiguousarray(names, np.float32)).to(device)
        tf32 = device.startswith("cuda") and bool(torch.backends.cuda.matmul.allow_tf32)
        # TF32 products keep 10 mantissa bits: a wider ε, still exact after the rescoring
        self.eps = rounding_bound(int(names.shape[1]), 2.0 ** -11 if tf32 else 2.0 ** -24)


def top_names_torch(queries: np.ndarray, names: DeviceEmbeddings, L: int, *, query_block: int = 4096,
                    max_block_bytes: int = 1 << 30) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`top_names_cpu` on a torch device: float32 products, ``torch.topk`` per block of
    names, the same result (module docstring), memory bounded by ``max_block_bytes`` of
    similarities at a time.

    Parameters
    ----------
    queries : numpy.ndarray
        ``(m, d)`` float32 query embeddings.
    names : DeviceEmbeddings
        The name embeddings, on the device.
    L : int
        How many of the best similarities the threshold takes.
    query_block : int, optional
        Most queries per block.
    max_block_bytes : int, optional
        Most bytes of similarities held at once (sets the names per block).

    Returns
    -------
    list[tuple[numpy.ndarray, numpy.ndarray]]
        Per query: the name indexes (ascending, int64) and their similarities (float64).
    """
    import torch

    if L < 1:
        raise ValueError(f"L must be at least 1, not {L}")
    E = names.tensor
    n = int(E.shape[0])
    eps = names.eps
    out: list[tuple[np.ndarray, np.ndarray]] = []
    with torch.inference_mode():
        for q0 in range(0, len(queries), query_block):
            q_host = np.ascontiguousarray(queries[q0:q0 + query_block], np.float32)
            q = torch.from_numpy(q_host).to(E.device)
            m = int(q.shape[0])
            if n == 0:
                out += [(np.zeros(0, np.int64), np.zeros(0))] * m
                continue
            block = max(L, min(n, max_block_bytes // (4 * max(1, m))))
            rows, cols, vals = [], [], []
            for j0 in range(0, n, block):
                s = q @ E[j0:j0 + block].T
                l = min(L, int(s.shape[1]))
                floor = torch.topk(s, l, dim=1, sorted=False).values.min(dim=1).values
                r, c = torch.nonzero(s >= (floor - 2 * eps)[:, None], as_tuple=True)
                rows.append(r)
                cols.append(c + j0)
                vals.append(s[r, c])
            R = torch.cat(rows).cpu().numpy().astype(np.int64)
            C = torch.cat(cols).cpu().numpy().astype(np.int64)
            V = torch.cat(vals).cpu().numpy()
            out += _exact_sets(q_host, names.host, L, R, C, V, eps)
    return out
