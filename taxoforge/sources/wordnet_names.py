"""English names of the taxa of a biological tree, read from WordNet 3.0 (offline).

WordNet names many taxa twice: a species synset holds its common names beside its Latin
binomial ("mallard, drake, Anas platyrhynchos"), and a taxon synset ("genus Acer, Acer")
has as member meronyms the organisms it holds ("maple"). Those English names are given to
the nodes of a tree whose scientific names they match, so "mallard" finds *Anas
platyrhynchos* in a tree that has scientific names only (the iNaturalist tree).

Input
    A :class:`~taxoforge.trees.tables.TreeTables` with ``label`` (the scientific name) and
    ``rank``; WordNet 3.0's noun synsets (:func:`taxoforge.sources.wordnet_files.wordnet_nouns`).

Output
    :func:`wordnet_english_names`: ``node_id``, ``name``, ``kind`` (``vernacular``), ``lang``
    (``en``), ``source`` (``wordnet:<synset>``); :func:`with_wordnet_names`: the tree with them
    merged into its names (:func:`taxoforge.links.external_names.merge_names`, source
    ``wordnet``, the WordNet version and data file checksums in ``source_versions``).

Algorithm
    1. A synset with a Latin binomial lemma ("Anas_platyrhynchos") gives its other lemmas to
       the tree's species of that name.
    2. A taxon synset (a lemma "genus_Acer", "family_Formicidae", "division_…"; any of its
       Latin lemmas, e.g. *Compositae* and *Asteraceae*) whose Latin name is the label of the
       node of the same rank gives that node the lemmas of its member meronyms that are not
       taxa themselves ("maple" for *Acer*, "ant" for *Formicidae*): a member with a binomial
       lemma names its species by step 1, and members such as "dicot family" (a rank word
       last) name no taxon.
    3. **Unambiguous only**: a Latin name must be the label of exactly one node of its rank
       (homonyms across kingdoms get nothing), and an English name WordNet would give to
       several nodes is given to none (counted in ``info``).
"""

from __future__ import annotations

import polars as pl

from taxoforge.links.external_names import merge_names
from taxoforge.sources.wordnet_files import MEMBER_MERONYM, WordNetNouns, wordnet_nouns
from taxoforge.trees.tables import TreeTables

__all__ = ["wordnet_english_names", "with_wordnet_names", "WORDNET_NAME_SOURCE", "RANK_OF_WORDNET"]

#: The ``source`` of the names, and its key in ``source_versions``.
WORDNET_NAME_SOURCE = "wordnet"
#: WordNet's rank words of Latin taxa (a lemma "genus_Acer") and the tree rank each is.
RANK_OF_WORDNET = {"kingdom": "kingdom", "phylum": "phylum", "division": "phylum", "class": "class",
                   "order": "order", "family": "family", "genus": "genus"}
_RANK_WORDS = frozenset(RANK_OF_WORDNET) | {"subkingdom", "subphylum", "subdivision", "superclass", "subclass",
                                            "superorder", "suborder", "infraorder", "superfamily", "subfamily",
                                            "tribe", "subgenus", "section", "series"}
_SCHEMA = {"node_id": pl.String, "name": pl.String, "source": pl.String}


def _binomial(lemma: str) -> str | None:
    """``"Anas_platyrhynchos"`` → ``"Anas platyrhynchos"``; None for any other lemma."""
    parts = lemma.split("_")
    if len(parts) == 2 and parts[0][:1].isupper() and parts[0][1:].islower() and parts[1].islower():
        return " ".join(parts)
    return None


def _names_of(lemmas) -> list[str]:
    """The English lemmas of a synset: not a binomial, not ending in a rank word."""
    return [lemma.replace("_", " ") for lemma in lemmas
            if _binomial(lemma) is None and lemma.split("_")[-1].lower() not in _RANK_WORDS]


def _is_taxon_or_rank_name(lemmas: list[str]) -> bool:
    """A member meronym that names no organism of the taxon: a taxon itself ("genus_X"), a rank
    word ("dicot family"), a Latin name alone ("Acer"), or a species (named by step 1)."""
    if any("_" in x and x.split("_", 1)[0] in _RANK_WORDS for x in lemmas):
        return True
    if any(x.split("_")[-1].lower() in _RANK_WORDS for x in lemmas):
        return True
    if any(x[:1].isupper() and "_" not in x and x[1:].islower() for x in lemmas) and all(x[:1].isupper() for x in lemmas):
        return True
    return any(_binomial(x) for x in lemmas)


def wordnet_english_names(tree: TreeTables, nouns: WordNetNouns | None = None) -> pl.DataFrame:
    """English names WordNet gives the taxa of ``tree`` (module docstring).

    Parameters
    ----------
    tree : TreeTables
        A tree whose ``label`` is the scientific name and whose ``rank`` is set.
    nouns : WordNetNouns, optional
        WordNet 3.0's noun synsets (default: :func:`~taxoforge.sources.wordnet_files.wordnet_nouns`,
        never downloading).

    Returns
    -------
    polars.DataFrame
        ``node_id``, ``name``, ``kind`` (``vernacular``), ``lang`` (``en``), ``source``
        (``wordnet:<synset>``); one row per node and name.
    """
    nouns = nouns if nouns is not None else wordnet_nouns()
    if not isinstance(nouns, WordNetNouns):
        raise TypeError(f"wordnet_english_names: expected WordNet's noun synsets (taxoforge.sources.wordnet_files.wordnet_nouns()), "
                        f"got {type(nouns).__name__}")
    by_offset = nouns.by_offset()
    ranks = sorted(set(RANK_OF_WORDNET.values()) | {"species"})
    # the nodes whose (label, rank) is theirs alone: a homonym names nothing. Only the labels a lemma
    # can name are looked up (a binomial, a Latin name with or without its rank word), so only
    # those are kept: of a tree of a million species, a few thousand
    named = {b for s in nouns.synsets for x in s.lemma_names for b in (x, _binomial(x), x.split("_", 1)[-1]) if b}
    single = (tree.nodes.filter(pl.col("rank").is_in(ranks) & pl.col("label").is_in(pl.Series(list(named)).implode()))
              .group_by("label", "rank").agg(pl.col("node_id").first(), pl.len().alias("_n")).filter(pl.col("_n") == 1))
    by_label_rank = {(label, rank): nid for label, rank, nid in single.select("label", "rank", "node_id").iter_rows()}

    def unique(label: str, rank: str) -> str | None:
        return by_label_rank.get((label, rank))

    rows: list[tuple[str, str, str]] = []
    for s in nouns.synsets:
        lemmas = s.lemma_names
        for b in (b for x in lemmas if (b := _binomial(x))):
            if (nid := unique(b, "species")) is not None:
                rows += [(nid, name, f"wordnet:{s.name}") for name in _names_of(lemmas)]
        ranked = [x.split("_", 1) for x in lemmas if "_" in x and x.split("_", 1)[0] in RANK_OF_WORDNET]
        if not ranked:
            continue
        rank = RANK_OF_WORDNET[ranked[0][0]]
        latin = {x[1] for x in ranked} | {x for x in lemmas if "_" not in x and x[:1].isupper()}
        hits = {nid for x in latin if (nid := unique(x, rank)) is not None}
        if len(hits) != 1:
            continue
        taxon = hits.pop()
        for m in (by_offset[o] for o in s.related(MEMBER_MERONYM)):  # in offset order: the file's
            if not _is_taxon_or_rank_name(m.lemma_names):
                rows += [(taxon, name, f"wordnet:{m.name}") for name in _names_of(m.lemma_names)]
    out = pl.DataFrame(rows, schema=_SCHEMA, orient="row").unique(["node_id", "name"], keep="first",
                                                                   maintain_order=True)
    # an English name WordNet gives to several taxa names none of them
    key = pl.col("name").str.to_lowercase()
    out = out.filter(pl.col("node_id").n_unique().over(key) == 1)
    return out.select("node_id", "name", pl.lit("vernacular").alias("kind"), pl.lit("en").alias("lang"),
                      "source").sort("node_id", "name")


def with_wordnet_names(tree: TreeTables, nouns: WordNetNouns | None = None) -> TreeTables:
    """``tree`` with WordNet's English names of its taxa (:func:`wordnet_english_names`) in its
    names table, each with its source; ``info["source_versions"]["wordnet"]`` records the
    WordNet version and the SHA-256 of the files read.

    Parameters
    ----------
    tree : TreeTables
        A tree whose ``label`` is the scientific name and whose ``rank`` is set.
    nouns : WordNetNouns, optional
        WordNet 3.0's noun synsets (default: the installed WordNet, never downloaded).

    Returns
    -------
    TreeTables
        The tree with the names added (:func:`~taxoforge.links.external_names.merge_names`).
    """
    nouns = nouns if nouns is not None else wordnet_nouns()
    if not isinstance(nouns, WordNetNouns):
        raise TypeError(f"with_wordnet_names: expected WordNet's noun synsets (taxoforge.sources.wordnet_files.wordnet_nouns()), "
                        f"got {type(nouns).__name__}")
    version = {k: v for k, v in nouns.source_version().items() if k != "folder"}  # no local path
    return merge_names(tree, wordnet_english_names(tree, nouns), source=WORDNET_NAME_SOURCE, source_version=version)
