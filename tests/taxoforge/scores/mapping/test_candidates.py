"""Candidate retrieval: the prefilter never changes a result.

A hypothesis property over 10,000 generated answers on an iNat21-sized tree of real
iNaturalist taxa (the benchmark's tree): names, misspelt names, names in answer templates,
truncated and reordered names, words of the tree mixed with filler and non-naming words,
arbitrary text — mapped with the prefilter on and off, the nodes, stages and similarities
are identical. The bounds are switched on for this tree size (by default they serve trees of 100,000 names
and more), and a second configuration (k = 2, the pseudocode's top-k-first scan; 2,000
answers) makes the k-th-best bound serve answers too, so every path is exercised."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex
from taxoforge.scores.mapping.candidates import lth_largest
from taxoforge.trees.taxonomy import Taxonomy

TEMPLATES = ["{}", "A: {}", "The answer is: {}", "This is a {}.", "I think it's a {}", "two {}s", "{} sp.",
             "It looks like a {} on a branch", "{}!!", "a photo of the {} in the image", "maybe {} or {}"]
FILLER = ["the", "a", "photo", "image", "species", "small", "green", "bird", "plant", "on", "branch", "two",
          "looks", "like", "probably", "wild", "leaf", "123", "sp", "x"]


@pytest.fixture(scope="module")
def inat21_sized():
    from benchmarks.bench_mapping import inat_sample_tree

    return Taxonomy.of(inat_sample_tree(10_000, seed=0))


@st.composite
def answers(draw, names: list[str], words: list[str]):
    kind = draw(st.integers(0, 6))
    name = names[draw(st.integers(0, len(names) - 1))]
    if kind == 0:
        return name
    if kind == 1:  # one character edit
        i = draw(st.integers(0, max(0, len(name) - 1)))
        c = draw(st.sampled_from("abcdefghijklmnopqrstuvwxyz -"))
        return draw(st.sampled_from([name[:i] + name[i + 1:], name[:i] + c + name[i + 1:], name[:i] + c + name[i:]]))
    if kind == 2:  # template
        t = draw(st.sampled_from(TEMPLATES))
        other = names[draw(st.integers(0, len(names) - 1))]
        return t.format(name, other) if t.count("{}") == 2 else t.format(name)
    if kind == 3:  # truncated or reordered words
        w = name.split()
        return " ".join(draw(st.permutations(w))[: draw(st.integers(1, len(w)))])
    if kind == 4:  # words of the tree among filler
        n = draw(st.integers(1, 6))
        return " ".join(draw(st.sampled_from(words + FILLER)) for _ in range(n))
    if kind == 5:
        return draw(st.text(max_size=30))
    return " ".join(draw(st.sampled_from(FILLER)) for _ in range(draw(st.integers(1, 5))))


@pytest.mark.parametrize("cfg,examples", [({}, 200), ({"k": 2, "contains_scope": "topk_first"}, 40)],
                         ids=["default", "k2-topk-first"])
def test_prefilter_on_and_off_map_every_answer_alike(inat21_sized, cfg, examples):
    on = TaxonomyIndex(inat21_sized, MappingConfig(**cfg))
    on.retrieval.bound_min_names = 0  # the bounds serve trees of every size here (by default: ≥ 100,000 names)
    off = TaxonomyIndex(inat21_sized, MappingConfig(prefilter=False, **cfg))
    names = [x for x in inat21_sized._labels if x]
    words = sorted({w for x in names for w in x.split()})
    seen = {"answers": 0}

    @settings(max_examples=examples, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(st.lists(answers(names, words), min_size=50, max_size=50))
    def prop(batch):
        a, b = on.map(batch), off.map(batch)
        assert a.node_idx.tolist() == b.node_idx.tolist()
        assert a.stage.tolist() == b.stage.tolist()
        assert np.array_equal(a.score, b.score) and a.tied.tolist() == b.tied.tolist()
        seen["answers"] += len(batch)

    prop()
    assert seen["answers"] >= 50 * examples
    assert off.stats["bounded"] == off.stats["top1_bounded"] == 0 and off.stats["full_scans"] > 0
    # the bounds served answers: the top-1 shortcut (typos), the k-th-best bound (k = 2)
    assert on.stats["top1_bounded"] > 0 and on.stats["full_scans"] > 0, on.stats
    if cfg:
        assert on.stats["bounded"] > 0, on.stats


def test_index_survives_pickling(inat_like):
    ix = TaxonomyIndex(Taxonomy.of(inat_like))
    again = pickle.loads(pickle.dumps(ix))  # rebuilt: string hashes differ per process
    preds = ["Aloe vera", "two toucans", "zzz", "keel billed hornbill"]
    assert again.map(preds).node_idx.tolist() == ix.map(preds).node_idx.tolist()


def test_names_reaching_a_threshold_are_never_missed(inat21_sized):
    """The length and q-gram prefix filters keep every name whose ratio reaches t."""
    from rapidfuzz import fuzz, process

    ix = TaxonomyIndex(inat21_sized)
    names = ix.names
    rng = np.random.default_rng(5)
    checked = 0
    for j in rng.choice(len(names), 300, replace=False):
        q = names[j]
        i = int(rng.integers(len(q)))
        q = q[:i] + "xyz"[int(rng.integers(3))] + q[i + 1:]  # one substitution
        scores = process.cdist([q], names, scorer=fuzz.ratio, dtype=np.float64)[0] / 100
        for t in (0.81, 0.85, 0.9, 0.95):
            want = set(np.flatnonzero(scores >= t).tolist())
            got = set(ix.retrieval._names_reaching(q, t).tolist())
            assert want <= got, (q, t, sorted(want - got)[:3])
            checked += len(want)
    assert checked > 300


def _partitioned(S, L):
    n = S.shape[1]
    return np.partition(S, n - L, axis=1)[:, n - L]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.uint8])
def test_lth_largest_is_what_a_whole_partition_gives(dtype):
    """The L-th largest of every row, read from a strided sample's floor, equals
    ``np.partition`` of the whole row: random rows, rows of few distinct values (ties at the
    threshold and everywhere), rows whose largest values all sit between the sample's
    columns, constant rows, NaN (partitioned whole), every L from 1 to the row length."""
    rng = np.random.default_rng(0)
    n = 20_000
    cases = [rng.random((6, n)) * 100,
             rng.integers(0, 4, (6, n)).astype(float),  # four values: ties everywhere
             np.zeros((2, n)), np.full((2, n), 7.0)]
    hidden = np.zeros((3, n))  # the largest values between the sample's columns
    hidden[:, 1::7] = rng.random((3, len(range(1, n, 7)))) + 1
    cases.append(hidden)
    peaks = rng.random((4, n)) * 0.1
    peaks[np.arange(4)[:, None], rng.integers(0, n, (4, 30))] = 1.0  # a few tied best names
    cases.append(peaks)
    for S in cases:
        S = (S * (50 if dtype is np.uint8 else 1)).astype(dtype)
        for L in (1, 2, 5, 17, 40, 200, 1250, n // 2, n):
            got = lth_largest(S, L)
            assert got.dtype == S.dtype
            np.testing.assert_array_equal(got, _partitioned(S, L))
    S = rng.random((5, n))
    S[1, 5] = S[3, ::11] = np.nan  # NaN sorts last in a partition: the same answer
    for L in (1, 40, 400):
        np.testing.assert_array_equal(lth_largest(S, L), _partitioned(S, L))
    small = rng.random((3, 50))  # too few columns to sample: partitioned whole
    np.testing.assert_array_equal(lth_largest(small, 8), _partitioned(small, 8))
    assert lth_largest(np.zeros((0, n)), 4).shape == (0,)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 400), st.integers(1, 6), st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_lth_largest_on_generated_rows(L_max, rows, distinct, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 30_000))
    S = rng.integers(0, distinct * 20, (rows, n)).astype(np.float32) / 20
    L = min(n, L_max)
    np.testing.assert_array_equal(lth_largest(S, L), _partitioned(S, L))
