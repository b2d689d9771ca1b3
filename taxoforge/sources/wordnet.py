"""WordNet 3.0's noun hypernym graph and tree (WordNet's database files, read by
:func:`taxoforge.sources.wordnet_files.wordnet_nouns`).

:func:`noun_graph` walks all 82,115 noun synsets, with hypernym (``@``) **and** instance
hypernym (``@i``) edges; node ids are ``wn:n<offset>`` (the ImageNet wnid form).
"""

from __future__ import annotations

import polars as pl

from taxoforge.sources.wordnet_data import WORDNET_VERSION
from taxoforge.sources.wordnet_files import HYPERNYM, INSTANCE_HYPERNYM, WordNetNouns, wordnet_nouns
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


def noun_graph(nouns: WordNetNouns | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The WordNet noun graph: ``(edges, names)``.

    ``edges``: ``child``, ``parent``, ``relation`` (``hypernym`` | ``instance_hypernym``), a
    synset's parents in offset order. ``names``: ``node_id``, ``name`` (lemma with spaces),
    ``kind`` (``lemma``; the first lemma also as ``label``; the NLTK synset name
    ``dog.n.01`` as ``synset``), ``lang``.

    Parameters
    ----------
    nouns : WordNetNouns, optional
        WordNet's noun synsets (default :func:`~taxoforge.sources.wordnet_files.wordnet_nouns`).

    Returns
    -------
    tuple[polars.DataFrame, polars.DataFrame]
        The WordNet noun graph: ``(edges, names)``.
    """
    nouns = nouns if nouns is not None else wordnet_nouns()
    if not isinstance(nouns, WordNetNouns):
        raise TypeError(f"noun_graph: expected WordNet's noun synsets (taxoforge.sources.wordnet_files.wordnet_nouns()), "
                        f"got {type(nouns).__name__}")
    child, parent, rel = [], [], []
    n_id, n_name, n_kind = [], [], []
    for s in nouns.synsets:
        sid = wnid(s.offset)
        for symbol, relation in ((HYPERNYM, "hypernym"), (INSTANCE_HYPERNYM, "instance_hypernym")):
            for h in s.related(symbol):
                child.append(sid)
                parent.append(wnid(h))
                rel.append(relation)
        lemmas = [l.replace("_", " ") for l in s.lemma_names]
        n_id.append(sid)
        n_name.append(lemmas[0])
        n_kind.append("label")
        for lem in lemmas:
            n_id.append(sid)
            n_name.append(lem)
            n_kind.append("lemma")
        n_id.append(sid)
        n_name.append(s.name)
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
