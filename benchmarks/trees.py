"""The demo's WordNet and ImageNet-1k trees, built as the Dagster assets build them
(``assets/wordnet.py``, ``assets/imagenet.py``): WordNet 3.0's noun graph → ``build_tree``
(seed 0) → the WordNet tree; the ImageNet-1k labels linked to it → the spanning subtree of
the 1,000 linked classes with the classes' own names added. Needs WordNet installed
(Debian ``wordnet-base``; nothing is downloaded)."""

from __future__ import annotations

from functools import lru_cache


__all__ = ["wordnet_tree", "imagenet1k_tree"]


@lru_cache(maxsize=1)
def wordnet_tree():
    from taxoforge.sources.wordnet import ensure_wordnet, noun_graph
    from taxoforge.sources.wordnet import wordnet_tree as build_wordnet_tree

    return build_wordnet_tree(*noun_graph(ensure_wordnet(allow_download=False)), tie_seed=0)


@lru_cache(maxsize=1)
def imagenet1k_tree():
    from taxoforge.sources.imagenet import imagenet1k_labels, imagenet1k_taxonomy, link_imagenet1k

    wt = wordnet_tree()
    return imagenet1k_taxonomy(wt, link_imagenet1k(imagenet1k_labels(), wt))
