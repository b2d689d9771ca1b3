"""The embedding measure's exact top-L search: float32 blocks that only select, float64 scores.

Checked against a brute force written independently here (every pair's dot product in
float64, the set of names reaching each query's ``L``-th best, ties included), on random unit
embeddings with duplicated rows (exact ties) and near-duplicates (ties within float32
rounding), for several block shapes, on numpy and on torch's CPU build (the GPU search's code
path with ``device="cpu"``); then the mapping's top-k nodes through the search against
today's path (the whole similarity matrix, ``batch_scores``) on a real tree's names.
"""

from __future__ import annotations

import numpy as np
import pytest

from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex
from taxoforge.scores.mapping.embedding_search import (
    DeviceEmbeddings,
    exact_scores,
    rounding_bound,
    top_names_cpu,
    top_names_torch,
)
from taxoforge.scores.mapping.similarity import EmbeddingSimilarity
from taxoforge.trees.taxonomy import Taxonomy


def unit_rows(rng, n: int, d: int) -> np.ndarray:
    e = rng.standard_normal((n, d)).astype(np.float32)
    return e / np.linalg.norm(e, axis=1, keepdims=True)


def names_with_ties(seed: int, n: int = 3_000, d: int = 48) -> tuple[np.ndarray, np.ndarray]:
    """Names (a fifth of them exact copies of others, a tenth moved by one float32 step) and
    queries (half of them equal to names: similarity 1 ties with the copies)."""
    rng = np.random.default_rng(seed)
    names = unit_rows(rng, n, d)
    copies = rng.choice(n, n // 5, replace=False)
    names[copies] = names[rng.integers(0, n, len(copies))]
    nudged = rng.choice(n, n // 10, replace=False)
    names[nudged] = np.nextafter(names[nudged], np.float32(2.0))
    queries = np.vstack([unit_rows(rng, 40, d), names[rng.integers(0, n, 40)]])
    return queries, names


def brute_force(queries: np.ndarray, names: np.ndarray, L: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Every name whose float64 dot product reaches the query's L-th largest (ties included)."""
    out = []
    full = names.astype(np.float64) @ queries.astype(np.float64).T
    for j in range(len(queries)):
        c = full[:, j]
        t = np.sort(c)[-min(L, len(c))]
        ids = np.flatnonzero(c >= t)
        out.append((ids, exact_scores(queries[j], names, ids)))
    return out


def assert_same(got, want):
    assert len(got) == len(want)
    for (ids, sc), (wids, wsc) in zip(got, want):
        assert ids.dtype == np.int64 and sc.dtype == np.float64
        np.testing.assert_array_equal(ids, wids)
        np.testing.assert_array_equal(sc, wsc)  # the same bits, wherever computed


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("L", [1, 4, 40])
def test_cpu_search_is_the_brute_force_set_for_any_block_shape(seed, L):
    queries, names = names_with_ties(seed)
    want = brute_force(queries, names, L)
    assert any(len(ids) > L for ids, _ in want)  # the ties are there to be found
    for qb, nb in [(256, 16_384), (7, 500), (1, 97), (80, L)]:
        assert_same(top_names_cpu(queries, names, L, query_block=qb, name_block=nb), want)


def test_cpu_search_on_memory_mapped_names(tmp_path):
    queries, names = names_with_ties(2)
    np.save(tmp_path / "e.npy", names)
    mapped = np.load(tmp_path / "e.npy", mmap_mode="r")
    assert_same(top_names_cpu(queries, mapped, 10, name_block=700), brute_force(queries, names, 10))


def test_torch_search_on_the_cpu_gives_the_numpy_result():
    pytest.importorskip("torch")
    queries, names = names_with_ties(3)
    on_device = DeviceEmbeddings(names, "cpu")
    for L in (1, 12):
        want = top_names_cpu(queries, names, L)
        assert_same(top_names_torch(queries, on_device, L), want)
        # a memory bound of a few blocks: the same set
        assert_same(top_names_torch(queries, on_device, L, query_block=9, max_block_bytes=9 * 4 * 256), want)


def test_edges_every_name_no_name_and_a_bad_L():
    queries, names = names_with_ties(4, n=30)
    every = top_names_cpu(queries, names, 1_000)
    assert all(ids.tolist() == list(range(30)) for ids, _ in every)
    empty = top_names_cpu(queries, names[:0], 5)
    assert all(len(ids) == 0 and len(sc) == 0 for ids, sc in empty)
    with pytest.raises(ValueError, match="L must be at least 1"):
        top_names_cpu(queries, names, 0)


def test_exact_scores_do_not_depend_on_where_a_row_lies():
    rng = np.random.default_rng(5)
    names = unit_rows(rng, 200_000, 32)  # more rows than one float64 block
    q = unit_rows(rng, 1, 32)[0]
    ids = rng.choice(len(names), 500, replace=False)
    np.testing.assert_array_equal(exact_scores(q, names)[ids], exact_scores(q, names, ids))
    float64 = names[ids].astype(np.float64) @ q.astype(np.float64)
    assert np.abs(exact_scores(q, names, ids) - float64).max() < 1e-14
    # the float32 product is within the bound the search widens its threshold by
    assert np.abs(names[ids] @ q - float64).max() <= rounding_bound(32)


def hashed_trigrams(texts):
    """A real (tiny) encoder, the same in every process: character trigrams hashed by their
    code points into 64 dimensions."""
    out = np.zeros((len(texts), 64), np.float32)
    for i, t in enumerate(texts):
        t = f"  {t} "
        for j in range(len(t) - 2):
            out[i, (ord(t[j]) * 961 + ord(t[j + 1]) * 31 + ord(t[j + 2])) % 64] += 1
    return out


class WholeMatrix(EmbeddingSimilarity):
    """Today's full scan: the whole (queries × names) similarity matrix, float32 widened to
    float64 (``batch_scores``), no search of its own."""

    top_names = None

    def batch_scores(self, queries):
        return (self._queries(list(queries)) @ self.embeddings.T).astype(np.float64)


def test_the_mapping_finds_the_top_k_nodes_the_whole_matrix_finds():
    """On the iNat21-sized tree of the candidate tests, the full scan's top-k nodes through the
    search equal those of the whole matrix (similarities within float32 rounding), and whole
    mappings agree node for node."""
    from benchmarks.bench_mapping import inat_sample_tree

    tax = Taxonomy.of(inat_sample_tree(2_000, seed=0))
    config = MappingConfig(prefilter=False, similarity="ratio")
    searched = TaxonomyIndex(tax, config, similarity=EmbeddingSimilarity(hashed_trigrams, name="trigrams"))
    whole = TaxonomyIndex(tax, config, similarity=WholeMatrix(hashed_trigrams, name="trigrams"))
    names = searched.names
    rng = np.random.default_rng(0)
    queries = [names[i] for i in rng.integers(0, len(names), 150)] + [
        f"a photo of {names[i]} on a branch" for i in rng.integers(0, len(names), 150)] + ["", "zzzz", "the"]
    eps, checked = rounding_bound(64), 0
    got, want = searched.retrieval.top_k_full(queries), whole.retrieval.top_k_full(queries)
    for (nodes, sc), (wnodes, wsc) in zip(got, want):
        assert len(nodes) == len(wnodes) == config.k
        np.testing.assert_allclose(sc, wsc, atol=eps, rtol=0)
        # a node whose similarity stands more than the rounding apart from its neighbours' (and
        # is not the k-th, whose follower is unseen) is at the same place in both
        gaps = -np.diff(wsc)
        apart = np.r_[True, gaps > 2 * eps] & np.r_[gaps > 2 * eps, False]
        np.testing.assert_array_equal(nodes[apart], wnodes[apart])
        checked += int(apart.sum())
    assert checked > len(queries)
    a, b = searched.map(queries), whole.map(queries)
    np.testing.assert_array_equal(a.node_idx, b.node_idx)
    np.testing.assert_array_equal(a.stage, b.stage)
