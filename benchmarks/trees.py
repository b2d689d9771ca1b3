"""The demo's WordNet and ImageNet-1k trees, built as the Dagster assets build them
(``assets/wordnet.py``, ``assets/imagenet.py``): WordNet 3.0's noun graph → ``build_tree``
(seed 0) → the WordNet tree; the ImageNet-1k labels linked to it → the spanning subtree of
the 1,000 linked classes with the classes' own names added. Needs WordNet installed
(Debian ``wordnet-base``; nothing is downloaded)."""

from __future__ import annotations

from functools import lru_cache

import polars as pl

__all__ = ["wordnet_tree", "imagenet1k_tree"]


@lru_cache(maxsize=1)
def wordnet_tree():
    from taxoforge.sources.wordnet import ensure_wordnet, noun_graph
    from taxoforge.trees.build import build_tree
    from taxoforge.trees.tables import TreeTables

    edges, names = noun_graph(ensure_wordnet(allow_download=False))
    return TreeTables.from_build("wordnet", build_tree(edges, source="wn", tie_seed=0), names)


@lru_cache(maxsize=1)
def imagenet1k_tree():
    from taxoforge.links.linker import link_labels
    from taxoforge.sources.imagenet import imagenet1k_labels, wnid_to_node
    from taxoforge.trees.subtree import spanning_subtree

    wt = wordnet_tree()
    links = link_labels(imagenet1k_labels(), wt.names, external_id_to_node=wnid_to_node, prefer_kinds=("label", "lemma"))
    linked = links.filter(pl.col("status") == "linked")
    extra = linked.select("node_id", pl.col("label_text").alias("name"), pl.lit("dataset_label").alias("kind"),
                          pl.lit("en").alias("lang"))
    return spanning_subtree(wt, linked["node_id"].to_list(), "imagenet1k", links=links, extra_names=extra)
