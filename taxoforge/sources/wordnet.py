"""WordNet 3.0's noun hypernym graph and tree (the WordNet files found or set up by
:func:`taxoforge.sources.wordnet_data.ensure_wordnet`).

:func:`noun_graph` walks all 82,115 noun synsets, with ``hypernyms()`` **and**
``instance_hypernyms()`` edges; node ids are ``wn:n<offset>`` (the ImageNet wnid form).
"""

from __future__ import annotations

import polars as pl

from taxoforge.sources.wordnet_data import WORDNET_VERSION, ensure_wordnet
from taxoforge.trees.build import build_tree
from taxoforge.trees.tables import TreeTables

__all__ = ["wordnet_tree", "noun_graph", "wnid"]


def wnid(offset: int, pos: str = "n") -> str:
    """The taxoforge node id of a synset: ``wn:n02084071``.

    Parameters
    ----------
    offset : int
        The synset's offset.
    pos : str, optional
        Its part of speech.

    Returns
    -------
    str
        The taxoforge node id of a synset: ``wn:n02084071``.
    """
    return f"wn:{pos}{offset:08d}"


def noun_graph(wn=None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The WordNet noun graph: ``(edges, names)``.

    ``edges``: ``child``, ``parent``, ``relation`` (``hypernym`` | ``instance_hypernym``).
    ``names``: ``node_id``, ``name`` (lemma with spaces), ``kind`` (``lemma``; the first
    lemma also as ``label``; the NLTK synset name ``dog.n.01`` as ``synset``), ``lang``.

    Parameters
    ----------
    wn : optional
        NLTK's WordNet reader (default :func:`ensure_wordnet`).

    Returns
    -------
    tuple[polars.DataFrame, polars.DataFrame]
        The WordNet noun graph: ``(edges, names)``.
    """
    wn = wn or ensure_wordnet()
    child, parent, rel = [], [], []
    n_id, n_name, n_kind = [], [], []
    for s in wn.all_synsets("n"):
        sid = wnid(s.offset())
        # NLTK keeps a synset's pointers in a set (order varies with PYTHONHASHSEED):
        # parents in offset order, so the same WordNet gives the same bytes
        for h in sorted(s.hypernyms(), key=lambda x: x.offset()):
            child.append(sid)
            parent.append(wnid(h.offset()))
            rel.append("hypernym")
        for h in sorted(s.instance_hypernyms(), key=lambda x: x.offset()):
            child.append(sid)
            parent.append(wnid(h.offset()))
            rel.append("instance_hypernym")
        lemmas = [l.replace("_", " ") for l in s.lemma_names()]
        n_id.append(sid)
        n_name.append(lemmas[0])
        n_kind.append("label")
        for lem in lemmas:
            n_id.append(sid)
            n_name.append(lem)
            n_kind.append("lemma")
        n_id.append(sid)
        n_name.append(s.name())
        n_kind.append("synset")
    edges = pl.DataFrame({"child": child, "parent": parent, "relation": rel})
    names = pl.DataFrame({"node_id": n_id, "name": n_name, "kind": n_kind}).with_columns(
        pl.when(pl.col("kind") == "synset").then(None).otherwise(pl.lit("en")).alias("lang")
    ).unique(maintain_order=True)
    return edges, names


def wordnet_tree(edges: pl.DataFrame, names: pl.DataFrame, *, tie_seed: int = 0,
                 cycle_policy: str = "dfs_back_edges", exclude=()):
    """The WordNet noun tree from :func:`noun_graph`'s ``(edges, names)``: the graph→tree step
    (:func:`taxoforge.trees.build.build_tree`, source ``wn``) with WordNet's version recorded.
    The ``wordnet_tree`` asset, the tests and the benchmarks all build it here.

    Parameters
    ----------
    edges : polars.DataFrame
        The edge table (``child``, ``parent``).
    names : polars.DataFrame
        The names table.
    tie_seed : int, optional
        The seed of the tie draws.
    cycle_policy : str, optional
        How cycles are broken (:data:`taxoforge.trees.build.CYCLE_POLICIES`).
    exclude : optional
        Node ids removed with their edges first.

    Returns
    -------
    object
        The WordNet noun tree from :func:`noun_graph`'s ``(edges, names)``: the
        graph→tree step (:func:`taxoforge.trees.build.build_tree`, source ``wn``) with
        WordNet's version recorded.
    """
    build = build_tree(edges, source="wn", tie_seed=tie_seed, cycle_policy=cycle_policy, exclude=exclude)
    return TreeTables.from_build("wordnet", build, names,
                                 info={"source_versions": {"wordnet": WORDNET_VERSION}, "seed": tie_seed,
                                       "cycle_policy": cycle_policy})
