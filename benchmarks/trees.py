"""The demo's WordNet and ImageNet-1k trees, built as the Dagster assets build them
(``assets/wordnet/assets.py``, ``assets/imagenet/assets.py``): WordNet 3.0's noun graph → ``build_tree``
(seed 0) → the WordNet tree; the ImageNet-1k labels linked to it → the spanning subtree of
the 1,000 linked classes with the classes' own names added. Needs WordNet installed
(Debian ``wordnet-base``; nothing is downloaded)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import polars as pl

from benchmarks.bench_mapping import inat_sample_tree
from taxoforge.sources.inaturalist import inat_tree
from taxoforge.trees.taxonomy import Taxonomy

__all__ = ["wordnet_tree", "imagenet1k_tree", "inat_tree_of"]


@lru_cache(maxsize=1)
def wordnet_tree():
    from taxoforge.sources.wordnet import noun_graph
    from taxoforge.sources.wordnet import wordnet_tree as build_wordnet_tree

    return build_wordnet_tree(*noun_graph(), tie_seed=0)


@lru_cache(maxsize=1)
def imagenet1k_tree():
    from taxoforge.sources.imagenet import imagenet1k_labels, imagenet1k_taxonomy, link_imagenet1k

    wt = wordnet_tree()
    return imagenet1k_taxonomy(wt, link_imagenet1k(imagenet1k_labels(), wt))


# ---------------------------------------------------------------------- iNat21-shaped tree


@lru_cache(maxsize=1)
def inat_full_tree():
    """The whole offline iNaturalist tree (:func:`taxoforge.sources.inaturalist.inat_tree`)."""
    from taxoforge.sources.inaturalist import inat_tree

    return inat_tree()


def resolve_species(labels: list[str], tree=None, dataset: str = "names") -> pl.DataFrame:
    """``label_text`` → ``node_id`` by the label linker (:func:`taxoforge.links.resolve.resolve_labels`:
    exact, normalised, synonym, epithet variant, genus transfer) against the iNaturalist tree;
    labels that resolve only partially (to a genus) or not at all get a null ``node_id``."""
    from taxoforge.links.resolve import is_partial, resolve_labels

    tree = tree or inat_full_tree()
    uniq = sorted({x.strip() for x in labels if x and x.strip()})
    lab = pl.DataFrame({"dataset": [dataset] * len(uniq), "label_id": uniq, "label_text": uniq},
                       schema={"dataset": pl.String, "label_id": pl.String, "label_text": pl.String})
    links = resolve_labels(lab, tree.names, tree.nodes)
    return links.select(pl.col("label_text"), pl.col("method"),
                        pl.when((pl.col("status") == "linked") & ~pl.col("method").map_elements(
                            is_partial, return_dtype=pl.Boolean)).then(pl.col("node_id")).alias("node_id"))


def one_species_below(tree, taxa: list[str]) -> list[str]:
    """For each node id of ``taxa``: itself when it is a species or below, else the species
    with the smallest numeric id under it (so the taxon stays in a tree cut to species)."""
    tax = Taxonomy.of(tree)
    ranks = dict(tree.nodes.select("node_id", "rank").iter_rows())
    species = tree.nodes.filter(pl.col("rank") == "species")["node_id"].to_numpy()
    sp_idx = tax.index_of(species.tolist())
    num = np.asarray([int(x.split(":", 1)[1]) for x in species.tolist()])
    out = []
    for t in taxa:
        if ranks.get(t) in ("species", "subspecies", "variety", "form", "hybrid", "infrahybrid"):
            out.append(t)
            continue
        below = tax.is_ancestor_idx(np.full(len(sp_idx), int(tax.index_of([t])[0])), sp_idx)
        if below.any():
            out.append(str(species[below][np.argmin(num[below])]))
    return out


@lru_cache(maxsize=1)
def inat_wordnet_names() -> pl.DataFrame:
    """:func:`taxoforge.sources.wordnet_names.wordnet_english_names` of the whole iNaturalist tree
    (homonyms checked there)."""
    from taxoforge.sources.wordnet_names import wordnet_english_names

    return wordnet_english_names(inat_full_tree())


def _shared_species_labels() -> dict[str, list[str]]:
    """Species names of iNat21-era data in the shared reference data, per source (absent
    files give nothing): VLM4Bio targets and options, the iNat2021 classifier's top-6
    predictions and ground truths."""
    import json
    import re

    from benchmarks.shared_data import shared_path
    from taxoforge.scores.mapping.parse import parse_options

    out: dict[str, list[str]] = {}
    root = shared_path("vlm4bio", "results")
    if root is not None:
        labels = []
        for f in sorted(root.rglob("*.jsonl")):
            for line in f.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    r = json.loads(line)
                    labels += [r.get("target-class") or "", *parse_options(r.get("question")).values()]
        out["vlm4bio"] = [x for x in labels if x]
    top6 = shared_path("predictions", "inat2021_supervised_model_top6_predictions_EibSReM.tsv")
    if top6 is not None:
        labels = []
        for line in top6.read_text(encoding="utf-8").splitlines():
            cells = line.split("\t")
            if len(cells) > 1:
                stem = re.sub(r"_gold_\d+$", "", cells[0].rsplit("/", 1)[-1].rsplit(".", 1)[0])
                labels.append(stem.replace("_", " ").capitalize())
                labels += [c for c in cells[1::2] if c.strip()]
        out["inat2021_top6"] = labels
    return out


def rare_species_common_names() -> pl.DataFrame | None:
    """BioCLIP's Rare Species list (400 species, scientific and English common name), or None
    when the shared file is absent."""
    from benchmarks.shared_data import shared_path

    p = shared_path("bioclip", "rare_species_400_lineage_common_names.csv")
    if p is None:
        return None
    return pl.read_csv(p).select(pl.col("scientific_name").str.strip_chars(), pl.col("common_name").str.strip_chars())


def inat21_shaped_tree(n_species: int = 10_000, seed: int = 0, extra_taxa: tuple[str, ...] = ()):
    """An iNat21-shaped tree with Latin and English names, from the offline iNaturalist tree.

    iNat21's own tree needs its annotation file (not available offline), so: the spanning
    subtree of a species set of the whole offline iNaturalist tree (every ancestor kept,
    depths unchanged) with

    * species: those of the shared reference data (BioCLIP's Rare Species, VLM4Bio targets and
      options, the iNat2021 classifier's top-6 file; resolved by the label linker, renamed ones
      included), one species under each of ``extra_taxa`` (node ids that must be in the tree),
      then random species (seeded) up to ``n_species`` (iNat21 has 10,000);
    * English names (kind ``vernacular``, lang ``en``): the Rare Species common names (where the
      list gives the scientific name as the common name, none), and
      WordNet's English names of Latin taxa (:func:`taxoforge.sources.wordnet_names.wordnet_english_names`).

    ``info["english_names"]`` counts the English names per source; ``info["species_sources"]``
    the species per source."""
    from taxoforge.trees.subtree import spanning_subtree

    full = inat_full_tree()
    keep: dict[str, str] = {}
    english = []
    rare = rare_species_common_names()
    if rare is not None:
        res = resolve_species(rare["scientific_name"].to_list(), full)
        named = (rare.join(res, left_on="scientific_name", right_on="label_text").drop_nulls("node_id")
                 .filter(pl.col("common_name").str.to_lowercase() != pl.col("scientific_name").str.to_lowercase()))
        english.append(named.select("node_id", pl.col("common_name").alias("name"),
                                    pl.lit("bioclip_rare_species").alias("source")))
        keep.update({n: "bioclip_rare_species" for n in named["node_id"].to_list()})
    for src, labels in _shared_species_labels().items():
        for n in resolve_species(labels, full)["node_id"].drop_nulls().to_list():
            keep.setdefault(n, src)
    for n in one_species_below(full, list(extra_taxa)):
        keep.setdefault(n, "required_taxa")
    species = full.nodes.filter(pl.col("rank") == "species")["node_id"]
    fill = max(0, n_species - len(keep))
    if fill:
        pool = species.filter(~species.is_in(list(keep))).sample(min(fill, len(species)), seed=seed).to_list()
        keep.update({n: "random" for n in pool})
    wn_names = inat_wordnet_names().select("node_id", "name", pl.lit("wordnet").alias("source"))
    extra = pl.concat([*english, wn_names]) if english else wn_names
    sub = spanning_subtree(full, list(keep), "inat21-shaped",
                           extra_names=extra.select("node_id", "name", pl.lit("vernacular").alias("kind"),
                                                    pl.lit("en").alias("lang")))
    kept = sub.nodes.select("node_id")
    counts = extra.join(kept, on="node_id", how="semi").group_by("source").len()
    sub.info["english_names"] = {s: int(c) for s, c in counts.sort("source").iter_rows()}
    sub.info["species_sources"] = {s: sum(1 for v in keep.values() if v == s) for s in sorted(set(keep.values()))}
    return sub


def inat_tree_of(species: int | None, seed: int = 0):
    """The iNaturalist tree (``species`` None) or a sample of ``species`` random species and
    every taxon above them (:func:`benchmarks.bench_mapping.inat_sample_tree`).

    Parameters
    ----------
    species : int or None
        How many species; None: the whole tree.
    seed : int, optional
        The sample's seed.

    Returns
    -------
    TreeTables
    """
    if species is None:
        return inat_tree()
    return inat_sample_tree(species, seed=seed)
