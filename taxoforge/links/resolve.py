"""Dataset labels → tree nodes: the one label resolver (docs/method.md#ground-truths).

Every label that becomes a node anywhere in taxoforge becomes one here: the linking assets
(``biology_links``, ``imagenet1k_links``, the Wikidata links), scoring
(:mod:`taxoforge.scores.run`), the label-set subtree (``taxoforge subset``), and every
evaluation — the metric functions, the multiple-choice builders, score propagation — through
:func:`taxoforge.links.tree_labels.resolve_nodes`. So a ground truth means the same node
wherever it is used. An evaluation that needs fewer rules switches them off
(``by_id``, ``by_name``, ``epithet_variants``, ``genus_transfer``, ``partial``); it never
uses another matcher, and the ``method`` vocabulary (:data:`METHODS`) is the same everywhere.

Input
    A label set: ``dataset``, ``label_id``, ``label_text`` and optionally ``external_id`` and
    ``common_name``; the tree's ``names`` (``node_id``, ``name``, ``kind``), its ``nodes``
    (``node_id``, ``parent_id``, ``label``, ``rank``) and optionally its ``links`` table; an
    optional external synonym table (``name`` → ``accepted_name``, e.g.
    :func:`taxoforge.sources.coldp.coldp_synonyms`).

Output
    The links table (:data:`~taxoforge.trees.tables.LINKS_SCHEMA`), one row per label:
    ``status`` ``linked`` (``node_id`` set), ``ambiguous`` (all ``candidates`` listed, with
    their names in ``detail``) or ``unmatched`` (``detail`` says what was tried and why each
    rule failed). Every row has a ``method`` when a rule found something and a ``detail`` a
    person can read. Methods in :data:`PARTIAL_METHODS` give a *partial* ground truth: a node
    above the one the label names.

Rules, in order (the first rule that finds a candidate decides: one candidate links,
several make the label ambiguous)
     1. ``node_id`` — the label (or its ``external_id``) is a node id.
     2. ``external_id`` — the label or ``external_id`` with one of the tree's id prefixes is
        a node id (``n02084071`` → ``wn:n02084071``, ``Q146`` → ``wd:Q146``, ``55387`` →
        ``inat:55387``), or ``external_id_to_node`` maps it to one.
     3. ``linked_label`` — the tree's own links table links the label (by label id or text;
        the row's dataset first, then any dataset).
     4. ``exact`` — the label equals a name of a node (any kind but synonyms);
        ``prefer_kinds`` settles a tie between kinds (a scientific name beats a vernacular one).
     5. ``normalised`` — equal :func:`~taxoforge.links.scientific_names.scientific_key`
        (case, punctuation and rank markers ignored: "ESOX LUCIUS", "Esox_lucius",
        "Crepis bakeri subsp. bakeri" = "Crepis bakeri bakeri").
     6. ``synonym`` — a ``synonym`` name of the tree itself (e.g. merged from Wikidata P1420
        or a ColDP release, :mod:`taxoforge.links.external_names`), or a name of the external
        synonym table whose accepted name is a name of the tree.
     7. ``vernacular`` — the label's ``common_name`` is a vernacular name of the tree.
     8. ``epithet_variant`` — same genus, epithets equal up to their Latin gender ending
        (*Alopochen aegyptiacus* → *A. aegyptiaca*).
     9. ``genus_transfer`` — the label's genus is a genus of the tree (or a synonym of one),
        and its epithet(s) occur in exactly one *other* genus of the same family: spelled the
        same, or failing that up to the Latin ending (*Orconectes virilis* → *Faxonius
        virilis*, *Notropis buccatus* → *Ericymba buccata*). Several such genera make the
        label ambiguous, and then no genus is guessed: the species may have left its genus.
    10. ``species`` (partial) — a trinomial not in the tree whose species resolves by rules
        4–9: the species.
    11. ``genus`` (partial) — a binomial or trinomial whose genus is a genus of the tree and
        whose epithet is in no other genus of the family: the genus.
    Rules 8–11 use ranks, so they apply only to trees whose nodes have ranks (a genus rank at
    least); candidates of rule 8 must be species or infraspecific taxa.

Trinomials (subspecies, varieties) resolve to their own node when the tree has it; otherwise
the same rules run on the trinomial (synonym, epithet variant, genus transfer) before rule 10.

The steps live in their own modules: the working table and how a rule settles labels
(:mod:`taxoforge.links.label_table`), the tree's names keyed for the labels at hand
(:mod:`taxoforge.links.name_index`), rules 1–7 (:mod:`taxoforge.links.name_rules`), rules
8–11 and the reasons of unmatched labels (:mod:`taxoforge.links.genus_rules`).

Speed: every rule is a join. The tree's names are keyed only where their first word is the
first word of a label (or of an accepted name, or a common name); genus transfer reads the
species whose last epithet has a label's stem. Thousands of labels resolve against the
1.4 M-taxon iNaturalist tree in a few seconds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import polars as pl

from taxoforge.links import genus_rules, name_rules
from taxoforge.links.label_table import initial_state, pending, word_stems
from taxoforge.links.name_index import NameIndex
from taxoforge.links.scientific_names import with_scientific_key
from taxoforge.trees.tables import LINKS_SCHEMA, TreeTables, conform

__all__ = [
    "resolve_labels",
    "resolution_summary",
    "METHODS",
    "PARTIAL_METHODS",
    "PREFER_KINDS",
    "is_partial",
]

#: Every method, in the order the rules run.
METHODS = ("node_id", "external_id", "linked_label", "exact", "normalised", "synonym", "vernacular",
           "epithet_variant", "genus_transfer", "species", "genus")
#: Methods whose node is above the one the label names (a partial ground truth).
PARTIAL_METHODS = ("species", "genus")
#: Name kinds in order of preference when one label matches names of several kinds.
PREFER_KINDS = ("scientific", "label", "dataset_label", "lemma", "alias", "qid", "vernacular")


def is_partial(method: pl.Expr | str | None):
    """Whether a method gives a partial ground truth.

    Parameters
    ----------
    method : str or polars.Expr or None

    Returns
    -------
    bool or polars.Expr
        An expression for an expression.

    Examples
    --------
    >>> is_partial("genus"), is_partial("genus_transfer")
    (True, False)
    """
    if isinstance(method, pl.Expr):
        return method.is_in(list(PARTIAL_METHODS)).fill_null(False)
    return method in PARTIAL_METHODS


def _keyed_synonyms(synonyms: pl.DataFrame | None, keys: pl.Series) -> pl.DataFrame | None:
    """The external synonyms whose name has one of the labels' ``keys``, keyed:
    ``_synonym_key`` and ``_accepted_key`` beside ``name`` and ``accepted_name``."""
    if synonyms is None or not synonyms.height:
        return None
    for c in ("name", "accepted_name"):
        if c not in synonyms.columns:
            raise ValueError(f"synonym table is missing column {c!r}; got {synonyms.columns}")
    syn = with_scientific_key(synonyms.select(pl.col("name").cast(pl.String), pl.col("accepted_name").cast(pl.String)),
                              "name", "_synonym_key")
    syn = syn.filter(pl.col("_synonym_key").is_in(keys.implode()))
    return with_scientific_key(syn, "accepted_name", "_accepted_key")


def _key_the_names(index: NameIndex, todo: pl.DataFrame, syn: pl.DataFrame | None) -> None:
    """Key the tree's names for the pending labels ``todo`` (their first words and epithet
    stems, and those of the accepted names of their synonyms and of their common names)."""
    firsts = [todo.select(pl.col("_genus_word").alias("_first"))]
    keys = [todo.select("_key")]
    if syn is not None:
        firsts.append(syn.select(pl.col("_accepted_key").str.split(" ").list.first().alias("_first")))
        keys.append(syn.select(pl.col("_accepted_key").alias("_key")))
    if todo["common_name"].is_not_null().any():
        common = with_scientific_key(todo.select("common_name"), "common_name", "_key").select("_key")
        firsts.append(common.select(pl.col("_key").str.split(" ").list.first().alias("_first")))
        keys.append(common)
    stems = pl.concat(keys).select(word_stems(pl.col("_key").fill_null("")).explode()).to_series()
    index.key_names(pl.concat(firsts).to_series().drop_nulls(), stems)


def _tried(index: NameIndex, by_id: bool, by_name: bool, epithet_variants: bool, genus_transfer: bool,
           partial: bool) -> list[str]:
    """The rules that run, in words (for the details of unmatched labels)."""
    out = []
    if by_id:
        shown = f" ({', '.join(p + ':' for p in index.prefixes[:5])})" if index.prefixes else ""
        out += ["node id", f"id prefixes{shown}", "linked labels"]
    if by_name:
        out += ["exact and normalised names", "synonyms"]
        if epithet_variants:
            out.append("epithet variants")
        if genus_transfer and index.ranked:
            out.append("genus transfer")
        if partial and index.ranked:
            out.append("species and genus")
    return out


def resolve_labels(
    labels: pl.DataFrame,
    names: pl.DataFrame | TreeTables,
    nodes: pl.DataFrame | None = None,
    *,
    links: pl.DataFrame | None = None,
    synonyms: pl.DataFrame | None = None,
    synonym_source: str = "synonym table",
    external_id_to_node: Mapping[str, str] | Callable[[str], str | None] | None = None,
    prefer_kinds: Sequence[str] = PREFER_KINDS,
    by_id: bool = True,
    by_name: bool = True,
    epithet_variants: bool = True,
    genus_transfer: bool = True,
    partial: bool = True,
) -> pl.DataFrame:
    """Resolve every label of ``labels`` to a node of the tree (rules in the module docstring).

    Parameters
    ----------
    labels : polars.DataFrame
        ``dataset``, ``label_id``, ``label_text``; optional ``external_id``, ``common_name``.
        ``(dataset, label_id)`` must be unique.
    names : polars.DataFrame or TreeTables
        The tree's names table; or the tree's :class:`~taxoforge.trees.tables.TreeTables`,
        whose names, nodes and links are then used (``nodes`` and ``links`` must be left out).
    nodes : polars.DataFrame, optional
        The tree's nodes table (``rank`` enables rules 8–11; without ``nodes`` every node of
        ``names`` counts and no rank is known).
    links : polars.DataFrame, optional
        The tree's links table (rule 3).
    synonyms : polars.DataFrame, optional
        ``name`` → ``accepted_name`` pairs from another source (rule 6).
    synonym_source : str
        The synonym table's name, in the details.
    external_id_to_node : mapping or callable, optional
        Maps an ``external_id`` to a node id (rule 2), beside the tree's own id prefixes.
    prefer_kinds : sequence of str
        Name kinds in order of preference for rules 4 and 5.
    by_id : bool
        Run rules 1–3 (node ids, id prefixes and external ids, the tree's links table).
    by_name : bool
        Run rules 4–11 (names, synonyms, common names, and the rules that use ranks).
    epithet_variants, genus_transfer, partial : bool
        Run rule 8, rule 9, rules 10–11 (with ``by_name``).

    Returns
    -------
    polars.DataFrame
        The links table, one row per label, in ``(dataset, label_id)`` order.

    Examples
    --------
    >>> nodes = pl.DataFrame({"node_id": ["f", "g", "h", "s", "t"], "parent_id": [None, "f", "f", "g", "h"],
    ...                       "label": ["Cambaridae", "Orconectes", "Faxonius", "Orconectes limosus", "Faxonius virilis"],
    ...                       "rank": ["family", "genus", "genus", "species", "species"]})
    >>> names = nodes.select("node_id", pl.col("label").alias("name"), pl.lit("scientific").alias("kind"))
    >>> labels = pl.DataFrame({"dataset": "d", "label_id": ["1", "2", "3", "4"],
    ...                        "label_text": ["ORCONECTES LIMOSUS", "Orconectes virilis", "Orconectes rusticus", "t"]})
    >>> resolve_labels(labels, names, nodes).select("label_id", "method", "node_id").rows()
    [('1', 'normalised', 's'), ('2', 'genus_transfer', 't'), ('3', 'genus', 'g'), ('4', 'node_id', 't')]
    >>> resolve_labels(labels, names, nodes, by_id=False, partial=False).select("label_id", "status").rows()
    [('1', 'linked'), ('2', 'linked'), ('3', 'unmatched'), ('4', 'unmatched')]
    """
    if isinstance(names, TreeTables):
        if nodes is not None or links is not None:
            raise ValueError("give either a TreeTables or the names, nodes and links tables, not both")
        names, nodes, links = names.names, names.nodes, (names.links if names.links.height else None)
    index = NameIndex.of(names, nodes, links)
    state = initial_state(labels)
    if by_id:
        state = name_rules.by_node_id(state, index)
        state = name_rules.by_external_id(state, index, external_id_to_node)
        state = name_rules.by_linked_label(state, index)
    if by_name and pending(state).height:
        todo = pending(state)
        syn = _keyed_synonyms(synonyms, todo["_key"])
        _key_the_names(index, todo, syn)
        rules = [
            lambda s: name_rules.by_names(s, index, prefer_kinds),
            lambda s: name_rules.by_synonyms(s, index, syn, synonym_source),
            lambda s: name_rules.by_common_name(s, index),
        ]
        if epithet_variants:
            rules.append(lambda s: genus_rules.by_epithet_variants(s, index))
        if genus_transfer:
            rules.append(lambda s: genus_rules.by_genus_transfer(s, index))
        for rule in rules:
            state = rule(state)
        if partial:
            state = genus_rules.by_species(state, index, rules)
            state = genus_rules.by_genus(state, index)
    elif pending(state).height:  # nothing keyed: the reasons of unmatched labels see no genus
        index.key_names(pl.Series([], dtype=pl.String), pl.Series([], dtype=pl.String))
    if pending(state).height:
        state = genus_rules.explain_unmatched(
            state, index, _tried(index, by_id, by_name, epithet_variants, genus_transfer, partial),
            {"by_name": by_name, "genus_transfer": genus_transfer and by_name, "partial": partial and by_name})
    out = state.with_columns(pl.col("candidates").fill_null(pl.lit([], dtype=pl.List(pl.String))))
    return conform(out.select([c for c in LINKS_SCHEMA if c in out.columns]), "links")


def resolution_summary(links: pl.DataFrame) -> dict:
    """Counts of a links table.

    Parameters
    ----------
    links : polars.DataFrame
        A links table (:func:`resolve_labels`).

    Returns
    -------
    dict
        ``labels``, ``linked``, ``ambiguous``, ``unmatched``, ``partial`` (linked labels with
        a partial ground truth) and ``by_method`` (linked labels per method, in
        :data:`METHODS` order).
    """
    by_status = dict(links.group_by("status").len().iter_rows())
    linked = links.filter(pl.col("status") == "linked")
    by_method = dict(linked.group_by("method").len().iter_rows())
    return {
        "labels": links.height,
        "linked": int(by_status.get("linked", 0)),
        "ambiguous": int(by_status.get("ambiguous", 0)),
        "unmatched": int(by_status.get("unmatched", 0)),
        "partial": int(linked.filter(is_partial(pl.col("method"))).height),
        "by_method": {m: int(by_method[m]) for m in METHODS if m in by_method},
    }
