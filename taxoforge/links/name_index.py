"""The names of a tree, keyed for one batch of labels: what the label resolver's rules look in.

:class:`NameIndex` holds a taxonomy's tables as the resolver reads them (names, nodes, the
links table) and, once :meth:`NameIndex.key_names` has seen the labels at hand, the names
that may match them (keyed by their scientific key) and the genera those labels name
(with their families). It is not a tree: walking up and down uses the tree functions of
:mod:`taxoforge.trees.ranks` over the nodes table.
"""

from __future__ import annotations

from functools import cached_property

import polars as pl

from taxoforge.links.label_table import raw_last_word
from taxoforge.links.scientific_names import RANK_MARKERS, epithet_stem_expr, with_scientific_key
from taxoforge.trees.ranks import GENUS_RANKS, ancestor_at_rank, descendants_at_ranks

__all__ = ["NameIndex", "SCIENTIFIC_KINDS", "SYNONYM_KIND", "INFRAGENERIC_KIND"]

#: Name kinds that are a taxon's own scientific name.
SCIENTIFIC_KINDS = ("scientific", "label")
#: The name kind of a synonym.
SYNONYM_KIND = "synonym"
#: Names of a subgenus or section, given to its genus (:mod:`taxoforge.sources.inaturalist`, written
#: "Quercus sect. Ilex"; a bare one-word name is read the same): they name part of the genus, so
#: their last word finds the genus for genus transfer and partial ground truths, but they never
#: resolve a label whole.
INFRAGENERIC_KIND = "infrageneric"


class NameIndex:
    """A tree's tables prepared for one call of the label resolver (module docstring).

    The tables are prepared on first use, so a call that settles every label by its node id
    never touches the names.

    Attributes
    ----------
    names : polars.DataFrame
        ``node_id``, ``name``, ``kind``.
    nodes : polars.DataFrame
        ``node_id``, ``parent_id``, ``label``, ``rank``.
    links : polars.DataFrame or None
        The linked rows of the tree's links table (``dataset``, ``label_id``, ``label_text``,
        ``node_id``, ``_link_method``), restricted to nodes of the tree.
    ranked : bool
        Whether the tree has a genus rank (the rules that use ranks apply).
    prefixes : list of str
        The id prefixes of the tree's nodes (``inat``, ``wn`` …).
    keyed : polars.DataFrame
        After :meth:`key_names`: the names that may match a label, with ``_key`` and ``rank``.
    genera : polars.DataFrame
        After :meth:`key_names`: the genera named by the labels' first words (:meth:`_genera`).
    """

    def __init__(self, names: pl.DataFrame, nodes: pl.DataFrame | None, links: pl.DataFrame | None) -> None:
        self._raw = (names, nodes, links)
        self.keyed = pl.DataFrame()
        self.genera = pl.DataFrame()

    @classmethod
    def of(cls, names: pl.DataFrame, nodes: pl.DataFrame | None, links: pl.DataFrame | None) -> "NameIndex":
        """The index of a tree's names table, nodes table (``None``: the nodes of ``names``,
        without ranks) and links table.

        Parameters
        ----------
        names, nodes, links : polars.DataFrame

        Returns
        -------
        NameIndex

        Raises
        ------
        ValueError
            A table missing a column the resolver needs.
        """
        for c in ("node_id", "name"):
            if c not in names.columns:
                raise ValueError(f"names table is missing column {c!r}; got {names.columns}")
        if nodes is not None and "node_id" not in nodes.columns:
            raise ValueError(f"nodes table is missing column 'node_id'; got {nodes.columns}")
        return cls(names, nodes, links)

    @cached_property
    def names(self) -> pl.DataFrame:
        """``node_id``, ``name``, ``kind`` of every name (null ids and names dropped)."""
        names = self._raw[0]
        return names.select(pl.col("node_id").cast(pl.String), pl.col("name").cast(pl.String),
                            (pl.col("kind").cast(pl.String) if "kind" in names.columns else pl.lit("label"))
                            .alias("kind")).drop_nulls(["node_id", "name"])

    @cached_property
    def nodes(self) -> pl.DataFrame:
        """``node_id``, ``parent_id``, ``label``, ``rank`` of every node."""
        nodes = self._raw[1]
        if nodes is None:
            return self.names.group_by("node_id", maintain_order=True).agg(
                pl.col("name").first().alias("label")).select(
                "node_id", pl.lit(None, dtype=pl.String).alias("parent_id"), "label",
                pl.lit(None, dtype=pl.String).alias("rank"))
        return nodes.select(
            pl.col("node_id").cast(pl.String),
            *[(pl.col(c).cast(pl.String) if c in nodes.columns else pl.lit(None, dtype=pl.String)).alias(c)
              for c in ("parent_id", "label", "rank")])

    @cached_property
    def links(self) -> pl.DataFrame | None:
        """The linked rows of the tree's links table whose node is in the tree, or ``None``."""
        links = self._raw[2]
        if links is None or not links.height or not {"status", "node_id"} <= set(links.columns):
            return None
        return links.filter(pl.col("status") == "linked").select(
            pl.col("dataset").cast(pl.String), pl.col("label_id").cast(pl.String),
            pl.col("label_text").cast(pl.String), pl.col("node_id").cast(pl.String),
            pl.col("method").cast(pl.String).alias("_link_method")).join(self.nodes.select("node_id"), on="node_id")

    @cached_property
    def ranked(self) -> bool:
        """Whether the tree has a genus rank."""
        return bool(self.nodes["rank"].is_in(list(GENUS_RANKS)).any())

    @cached_property
    def prefixes(self) -> list[str]:
        """The id prefixes of the tree's nodes (``inat``, ``wn`` …), sorted."""
        return sorted(p for p in self.nodes.select(pl.col("node_id").str.extract(r"^([^:\s]+):", 1)).to_series()
                      .drop_nulls().unique().to_list())

    def key_names(self, first_words: pl.Series, stems: pl.Series) -> None:
        """Key the names that may equal a label up to its epithets' endings, and find the
        genus nodes (with their families) the labels' first words name.

        Parameters
        ----------
        first_words : polars.Series
            The first words of the labels' keys (and of accepted names, common names).
        stems : polars.Series
            The epithet stems of every word of those keys.

        Notes
        -----
        The cut is made before keying and keeps a superset: a case-insensitive
        multi-substring search (Aho-Corasick) for the first words, then the raw last word's
        stem (names beyond printable ASCII, and names ending in a rank marker, are kept
        whole), then keyed exactly and cut to the first words.
        """
        words = first_words.cast(pl.String).drop_nulls().unique()
        words = words.filter(words != "")
        if words.len():
            wl = words.to_list()
            other = pl.col("name").str.contains(r"[^\x20-\x7e]")
            last = raw_last_word("name")
            ascii_cut = self.names.filter(~other & pl.col("name").str.contains_any(wl, ascii_case_insensitive=True))
            ascii_cut = ascii_cut.filter(epithet_stem_expr(last).is_in(stems.drop_nulls().unique().implode())
                                         | last.is_in(sorted(RANK_MARKERS)))
            cut = pl.concat([
                ascii_cut,
                self.names.filter(other).filter(pl.col("name").str.normalize("NFKC").str.to_lowercase()
                                                .str.contains_any(wl, ascii_case_insensitive=True)),
            ])
        else:
            cut = self.names.clear()
        keyed = with_scientific_key(cut, "name").filter(pl.col("_key") != "")
        # the name of a part of a genus ("Quercus sect. Ilex", "Faxonius (Gremicambarus)") is keyed by
        # the part's own epithet, the word a label using it as a genus starts with
        keyed = keyed.with_columns(pl.when(pl.col("kind") == INFRAGENERIC_KIND)
                                   .then(pl.col("_key").str.split(" ").list.last()).otherwise(pl.col("_key"))
                                   .alias("_key"))
        keyed = keyed.filter(pl.col("_key").str.split(" ").list.first().is_in(words.implode()))
        self.keyed = keyed.join(self.nodes_of(keyed["node_id"]).select("node_id", "rank"), on="node_id", how="left")
        self.genera = self._genera()

    def nodes_of(self, ids: pl.Series) -> pl.DataFrame:
        """The rows of :attr:`nodes` of some ids (a filter: cheaper than a join with the whole
        table when there are few ids).

        Parameters
        ----------
        ids : polars.Series

        Returns
        -------
        polars.DataFrame
        """
        return self.nodes.filter(pl.col("node_id").is_in(ids.unique().implode()))

    def descendants(self, roots: pl.Series, ranks) -> pl.DataFrame:
        """Every descendant of some roots whose rank is one of ``ranks``
        (:func:`taxoforge.trees.ranks.descendants_at_ranks`).

        Parameters
        ----------
        roots : polars.Series
            Node ids.
        ranks : sequence of str

        Returns
        -------
        polars.DataFrame
            ``root``, ``node_id``.
        """
        return descendants_at_ranks(self.nodes, roots, ranks)

    def _genera(self) -> pl.DataFrame:
        """``_genus_word`` (a key word) → the genus node named so (``_genus_id``,
        ``_genus_name``; ``_genus_note`` and ``_genus_via`` say so when a synonym or a subgenus
        name finds it) and its family (``_family_id``, ``_family_name``)."""
        gen = self.keyed.filter(pl.col("rank").is_in(list(GENUS_RANKS))
                                & pl.col("kind").is_in([*SCIENTIFIC_KINDS, SYNONYM_KIND, INFRAGENERIC_KIND])
                                & ~pl.col("_key").str.contains(" "))
        g = gen.select(pl.col("_key").alias("_genus_word"), pl.col("node_id").alias("_genus_id"), "kind")
        # a genus named by its own name is not also reached through a synonym or a subgenus
        # and a word that is a genus's own name does not also find other genera through them
        indirect = pl.col("kind").is_in([SYNONYM_KIND, INFRAGENERIC_KIND])
        g = g.sort(indirect).unique(["_genus_word", "_genus_id"], keep="first", maintain_order=True)
        g = g.filter(~indirect | ~(~indirect).any().over("_genus_word"))
        g = g.join(self.label_of(g["_genus_id"]).rename({"node_id": "_genus_id", "_node_label": "_genus_name"}),
                   on="_genus_id", how="left")
        fam = ancestor_at_rank(self.nodes, g["_genus_id"], "family").select(
            pl.col("node_id").alias("_genus_id"), pl.col("ancestor_id").alias("_family_id"),
            pl.col("ancestor_label").alias("_family_name"))
        return g.join(fam, on="_genus_id", how="left").with_columns(
            pl.when(pl.col("kind") == SYNONYM_KIND)
            .then(pl.format("{} is a synonym of the genus {}", pl.col("_genus_word").str.to_titlecase(),
                            "_genus_name"))
            .when(pl.col("kind") == INFRAGENERIC_KIND)
            .then(pl.format("{} is a subgenus or section of {}", pl.col("_genus_word").str.to_titlecase(),
                            "_genus_name"))
            .otherwise(pl.lit("")).alias("_genus_note")).with_columns(
            pl.when(pl.col("_genus_note") != "").then(pl.format(" ({})", "_genus_note")).otherwise(pl.lit(""))
            .alias("_genus_via")
        ).drop("kind")

    def scientific(self) -> pl.DataFrame:
        """The keyed names that are a taxon's own scientific name.

        Returns
        -------
        polars.DataFrame
            Rows of :attr:`keyed`.
        """
        return self.keyed.filter(pl.col("kind").is_in(SCIENTIFIC_KINDS))

    def label_of(self, ids: pl.Series) -> pl.DataFrame:
        """The labels of some nodes.

        Parameters
        ----------
        ids : polars.Series
            Node ids.

        Returns
        -------
        polars.DataFrame
            ``node_id``, ``_node_label``.
        """
        return self.nodes_of(ids).select("node_id", pl.col("label").alias("_node_label"))
