"""Seeded, vectorised generators of benchmark inputs.

:func:`wikidata_like_edges`
    A subclass-of graph with the shape of Wikidata's P279 graph (defaults at full
    scale: about 4.9 M edges over 4.2 M classes, 667 k classes with more than one
    parent), with heavy-tailed fan-out (a few classes with very many subclasses), long
    chains, injected cycles and self loops, and ids ``wd:Q<n>`` in an order unrelated
    to the graph's.
:func:`random_tree_nodes`
    A rooted tree of ``n`` nodes (``node_id``, ``parent_id``) with a realistic depth
    profile, for the hierarchical-measure benchmarks.

Everything is numpy over whole arrays (no Python loop per node or edge); the same
arguments and seed give the same table.
"""

from __future__ import annotations

import numpy as np
import polars as pl

__all__ = ["WIKIDATA_SHAPE", "wikidata_like_edges", "random_tree_nodes", "subsample_inat_taxa"]

# Wikidata's subclass-of (P279) graph, in round figures (issue 8).
WIKIDATA_SHAPE = {"classes": 4_200_000, "edges": 4_900_000, "multi_parent": 667_000}


def _ids(prefix: str, numbers: np.ndarray) -> pl.Series:
    return pl.select((pl.lit(prefix) + pl.Series("n", numbers).cast(pl.String)).alias("id")).to_series()


def wikidata_like_edges(scale: float = 1.0, *, seed: int = 0, root_share: float = 0.01,
                        chains_per_million: int = 40, chain_len: tuple[int, int] = (20, 120),
                        cycles_per_million: int = 600, self_loops_per_million: int = 20) -> tuple[pl.DataFrame, dict]:
    """``(child, parent)`` edges of a Wikidata-shaped graph at ``scale`` × full size, and
    a dict describing what was generated.

    Construction, over topological positions ``0 … N-1`` (0 is the most general):

    1. The first ``root_share · N`` positions are parentless (top classes).
    2. Every other class gets a primary parent at an earlier position: with probability
       0.35 a near predecessor (``i - 1 - Geometric(0.3)``, deep local chains), otherwise
       ``⌊i · U³⌋`` (fan-out concentrated on a few very general classes).
    3. Long chains: ``chains_per_million`` runs of ``chain_len`` consecutive positions,
       each the parent of the next.
    4. ``multi_parent`` classes get extra parents at earlier positions ``⌊i · U²⌋`` until
       the edge count is reached.
    5. Cycles: a random class ``x`` and its ancestor ``a`` 1–5 primary steps up get the
       edge ``a → x`` (a subclass of x), closing a cycle of length 2–6. Plus a few self loops.
    6. Ids are distinct random ``wd:Q<n>``; rows are shuffled.
    """
    rng = np.random.default_rng(seed)
    n = max(50, int(round(WIKIDATA_SHAPE["classes"] * scale)))
    n_edges_target = int(round(WIKIDATA_SHAPE["edges"] * scale))
    n_multi = int(round(WIKIDATA_SHAPE["multi_parent"] * scale))
    n_roots = max(1, int(n * root_share))
    i = np.arange(n, dtype=np.int64)

    # 2. primary parents
    local = rng.random(n) < 0.35
    parent = np.where(local, i - rng.geometric(0.3, n), np.floor(i * rng.random(n) ** 3).astype(np.int64))
    parent = np.minimum(parent, i - 1)
    # 3. long chains
    n_chains = max(1, int(round(chains_per_million * n / 1e6)))
    lens = rng.integers(chain_len[0], chain_len[1] + 1, n_chains)
    starts = rng.integers(n_roots, max(n_roots + 1, n - chain_len[1] - 1), n_chains)
    pos = np.repeat(starts, lens) + (np.arange(lens.sum()) - np.repeat(np.cumsum(lens) - lens, lens))
    pos = pos[(pos > starts.min()) & (pos < n)]
    parent[pos] = pos - 1
    parent = np.maximum(parent, 0)
    child_p, parent_p = i[n_roots:], parent[n_roots:]

    # 4. extra parents for multi-parent classes
    n_extra_total = max(0, n_edges_target - len(child_p))
    multi = rng.choice(np.arange(n_roots + 1, n), size=min(n_multi, n - n_roots - 1), replace=False)
    extra_counts = np.ones(len(multi), dtype=np.int64)
    surplus = n_extra_total - len(multi)
    if surplus > 0:
        extra_counts += rng.multinomial(surplus, np.full(len(multi), 1 / len(multi)))
    ec = np.repeat(multi, extra_counts)
    ep = np.floor(ec * rng.random(len(ec)) ** 2).astype(np.int64)

    # 5. cycles and self loops
    n_cycles = max(1, int(round(cycles_per_million * n / 1e6)))
    x = rng.integers(n_roots, n, n_cycles)
    k = rng.integers(1, 6, n_cycles)
    a = x.copy()
    for s in range(1, 6):
        up = k >= s
        a[up] = parent[a[up]]
    cyc = a != x
    n_loops = int(round(self_loops_per_million * n / 1e6))
    sl = rng.integers(0, n, n_loops)

    child_all = np.concatenate([child_p, ec, a[cyc], sl])
    parent_all = np.concatenate([parent_p, ep, x[cyc], sl])
    perm = rng.permutation(len(child_all))
    child_all, parent_all = child_all[perm], parent_all[perm]
    qnum = 1 + rng.choice(3 * n, size=n, replace=False)
    qid = _ids("wd:Q", qnum)
    edges = pl.DataFrame({"child": qid.gather(child_all), "parent": qid.gather(parent_all)})
    uniq = edges.unique()
    n_par = uniq.filter(pl.col("child") != pl.col("parent")).group_by("child").len()
    info = {
        "scale": scale, "seed": seed, "classes": n, "edges": edges.height,
        "classes_with_several_parents": int((n_par["len"] > 1).sum()),
        "parentless_classes": n_roots, "long_chains": n_chains, "injected_cycles": int(cyc.sum()),
        "self_loops": n_loops,
    }
    return edges, info


def random_tree_nodes(n: int, *, seed: int = 0, prefix: str = "t:") -> pl.DataFrame:
    """A rooted tree with ``n`` nodes as a ``node_id, parent_id`` table: node ``i`` hangs
    under ``⌊i · U^0.3⌋`` (recent nodes, so depths reach ~20–40 like a biological taxonomy)."""
    rng = np.random.default_rng(seed)
    i = np.arange(n, dtype=np.int64)
    parent = np.floor(i * rng.random(n) ** 0.3).astype(np.int64)
    parent = np.minimum(parent, i - 1)
    ids = _ids(prefix, rng.permutation(n))
    return pl.DataFrame({"node_id": ids, "parent_id": ids.gather(np.maximum(parent, 0))}).with_columns(
        pl.when(pl.Series(i) == 0).then(None).otherwise(pl.col("parent_id")).alias("parent_id"))


def subsample_inat_taxa(taxa: pl.DataFrame, fraction: float, *, seed: int = 0) -> pl.DataFrame:
    """Taxa of a random ``fraction`` of the iNaturalist families (whole lineages kept), plus
    every taxon above family rank, so the subset is a smaller taxonomy of the same shape."""
    fam = taxa.select("family").drop_nulls().unique().sort("family")
    keep = fam.sample(fraction=fraction, seed=seed)
    return taxa.filter(pl.col("family").is_null() | pl.col("family").is_in(keep["family"].implode()))
