"""Rules 8–11 of the label resolver, the ones that use ranks, and the reasons of the rest.

* :func:`by_epithet_variants` — rule 8, same genus, epithets equal up to their Latin ending;
* :func:`by_genus_transfer` — rule 9, the epithet found in exactly one other genus of the
  label's family; a transfer no synonym supports is linked but said to be a guess
  (:data:`GUESS`, docs/method.md#ground-truths);
* :func:`by_species`, :func:`by_genus` — rules 10 and 11, the partial ground truths;
* :func:`explain_unmatched` — why every label still pending matched nothing.

The rules and their order are documented in :mod:`taxoforge.links.resolve`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import polars as pl

from taxoforge.links.label_table import (
    epithet_stems,
    hits,
    initial_state,
    pending,
    raw_last_word,
    settle,
    split_name_keys,
    word_stems,
)
from taxoforge.links.name_index import SCIENTIFIC_KINDS, SYNONYM_KIND, NameIndex
from taxoforge.links.scientific_names import RANK_MARKERS, epithet_stem_expr, with_scientific_key
from taxoforge.trees.ranks import INFRASPECIFIC_RANKS, SPECIES_RANKS, ancestor_at_rank

__all__ = ["by_epithet_variants", "by_genus_transfer", "by_species", "by_genus", "label_genera", "explain_unmatched",
           "GUESS", "is_guess"]

#: How the detail of a genus transfer that no synonym supports begins its caveat; scoring
#: counts the rows whose ground truth rests on one (:func:`is_guess`).
GUESS = "a guess"

Rule = Callable[[pl.DataFrame], pl.DataFrame]
_SPECIES_LEVEL = [*SPECIES_RANKS, *INFRASPECIFIC_RANKS]


def by_epithet_variants(state: pl.DataFrame, index: NameIndex) -> pl.DataFrame:
    """Rule 8, ``epithet_variant``: same genus word, epithets equal up to their Latin gender
    ending (*Alopochen aegyptiacus* → *A. aegyptiaca*); on a tree with ranks the candidates
    are species or infraspecific taxa.

    Parameters
    ----------
    state : polars.DataFrame
        The working table (:mod:`taxoforge.links.label_table`).
    index : NameIndex
        The tree's names, keyed for the labels.

    Returns
    -------
    polars.DataFrame
        ``state`` with the labels this rule settles settled.
    """
    todo = pending(state).filter(pl.col("_n_words") >= 2)
    if not todo.height:
        return state
    sci = split_name_keys(index.scientific()).filter(pl.col("_name_n_words") >= 2)
    if index.ranked:
        sci = sci.filter(pl.col("rank").is_in(_SPECIES_LEVEL))
    a = todo.with_columns(epithet_stems(pl.col("_epithets")).alias("_epithet_stems"))
    b = sci.with_columns(epithet_stems(pl.col("_name_epithets")).alias("_name_epithet_stems"))
    found = a.join(b, left_on=["_genus_word", "_n_words", "_epithet_stems"],
                   right_on=["_name_genus_word", "_name_n_words", "_name_epithet_stems"]).filter(
        pl.col("_key") != pl.col("_key_right"))
    return settle(state, hits(found, pl.format("epithet differs only in its Latin ending: '{}' → {}", "label_text",
                                               "name")), "epithet_variant", index.label_of)


def label_genera(state: pl.DataFrame, index: NameIndex) -> pl.DataFrame:
    """``_row`` and the genus rows of :class:`~taxoforge.links.name_index.NameIndex` (``genera``)
    of every pending label of two words or more.

    Parameters
    ----------
    state : polars.DataFrame
        The working table (:mod:`taxoforge.links.label_table`).
    index : NameIndex
        The tree's names, keyed for the labels.

    Returns
    -------
    polars.DataFrame
        ``_row`` and the genus columns (``_genus_id``, ``_genus_name``, ``_family_id`` …).
    """
    return (pending(state).filter(pl.col("_n_words") >= 2).select("_row", "_genus_word")
            .join(index.genera, on="_genus_word"))


def by_genus_transfer(state: pl.DataFrame, index: NameIndex) -> pl.DataFrame:
    """Rule 9, ``genus_transfer``: the label's genus is a genus of the tree (or a synonym or
    subgenus of one) and its epithet(s) occur in exactly one *other* genus of the same family —
    spelled the same, or failing that up to the Latin ending.

    Parameters
    ----------
    state : polars.DataFrame
        The working table (:mod:`taxoforge.links.label_table`).
    index : NameIndex
        The tree's names, keyed for the labels.

    Returns
    -------
    polars.DataFrame
        ``state`` with the labels this rule settles settled.
    """
    if not index.ranked:
        return state
    genera = label_genera(state, index).filter(pl.col("_family_id").is_not_null())
    if not genera.height:
        return state
    todo = pending(state).join(genera.select("_row", "_family_id", "_family_name", "_genus_note", "_genus_id").unique(),
                               on="_row")
    todo = todo.with_columns(epithet_stems(pl.col("_epithets")).alias("_epithet_stems"))
    # every species-level taxon of those families, keyed
    members = index.descendants(todo["_family_id"].unique(), _SPECIES_LEVEL).rename({"root": "_family_id"})
    sci = index.names.filter(pl.col("node_id").is_in(members["node_id"].unique().implode())
                             & pl.col("kind").is_in(SCIENTIFIC_KINDS))
    # cut to the names whose last word has the stem of a label's last word before keying
    last_stems = todo.select(word_stems(pl.col("_epithets")).list.last()).to_series().unique()
    last = raw_last_word("name")
    sci = sci.filter(epithet_stem_expr(last).is_in(last_stems.implode()) | last.is_in(sorted(RANK_MARKERS))
                     | pl.col("name").str.contains(r"[^\x20-\x7e]"))
    sci = split_name_keys(with_scientific_key(sci, "name").filter(pl.col("_key") != "")).join(members, on="node_id")
    sci = sci.with_columns(epithet_stems(pl.col("_name_epithets")).alias("_name_epithet_stems"))
    pairs = todo.join(sci, on=["_family_id"]).filter(
        (pl.col("_name_genus_word") != pl.col("_genus_word")) & (pl.col("_name_n_words") == pl.col("_n_words"))
        & (pl.col("_name_epithet_stems") == pl.col("_epithet_stems")))
    # same spelling first; the Latin-ending variants only where no genus has the same spelling
    pairs = pairs.with_columns((pl.col("_name_epithets") == pl.col("_epithets")).alias("_same_spelling"))
    pairs = pairs.filter(pl.col("_same_spelling") | ~pl.col("_same_spelling").any().over("_row"))
    pairs = _evidence(pairs, index)
    note = pl.when(pl.col("_genus_note") != "").then(pl.format("; {}", "_genus_note")).otherwise(pl.lit(""))
    ending = pl.when(pl.col("_same_spelling")).then(pl.lit("")).otherwise(pl.lit(", up to its Latin ending"))
    found = hits(pairs, pl.format("genus transfer: '{}' → {} (its epithet occurs in no other genus of {}{}{}){}",
                                  "label_text", "name", "_family_name", ending, note, "_evidence"))
    return settle(state, found, "genus_transfer", index.label_of)


def _evidence(pairs: pl.DataFrame, index: NameIndex) -> pl.DataFrame:
    """``pairs`` with ``_evidence``: what supports each transfer, or that it is :data:`GUESS`.

    A transfer is supported when the tree records it: the candidate has a synonym in the
    label's genus (*Orconectes virilis* among the names of *Faxonius virilis*), or the label's
    genus is a synonym or subgenus of the candidate's genus. An epithet found in one other
    genus of the family is no such record — two valid species may share it (*Omobranchus
    longispinis* is not *Laiphognathus longispinis*) — so the link stays, said to be a guess."""
    if not pairs.height:
        return pairs.with_columns(pl.lit("").alias("_evidence"))
    ids = pairs["node_id"].unique()
    syn = index.names.filter(pl.col("node_id").is_in(ids.implode()) & (pl.col("kind") == SYNONYM_KIND))
    syn = split_name_keys(with_scientific_key(syn, "name").filter(pl.col("_key") != "")).select(
        "node_id", pl.col("_name_genus_word").alias("_genus_word"), pl.col("name").alias("_synonym")).unique(
        ["node_id", "_genus_word"], keep="first", maintain_order=True)
    genus = ancestor_at_rank(index.nodes, ids, "genus").select("node_id", pl.col("ancestor_id").alias("_cand_genus"))
    pairs = (pairs.join(syn, on=["node_id", "_genus_word"], how="left")
             .join(genus, on="node_id", how="left"))
    return pairs.with_columns(
        pl.when(pl.col("_synonym").is_not_null())
        .then(pl.format("; supported by the synonym {} of {}", "_synonym", "name"))
        .when((pl.col("_genus_note") != "") & (pl.col("_genus_id") == pl.col("_cand_genus")))
        .then(pl.lit("; supported by the genus synonymy"))
        .otherwise(pl.lit(f"; {GUESS}: no synonym or linked record supports this transfer, and two valid species "
                          "may share an epithet (docs/method.md#ground-truths)"))
        .alias("_evidence")).drop("_synonym", "_cand_genus")


def is_guess(detail: pl.Expr) -> pl.Expr:
    """Whether a link's ``detail`` says its genus transfer is :data:`GUESS`.

    Parameters
    ----------
    detail : polars.Expr
        A ``detail`` (or ``gt_detail``) column.

    Returns
    -------
    polars.Expr
        Boolean, false for null.
    """
    return detail.str.contains(f"; {GUESS}: ", literal=True).fill_null(False)


def by_species(state: pl.DataFrame, index: NameIndex, rules: Sequence[Rule]) -> pl.DataFrame:
    """Rule 10, ``species`` (partial): a trinomial not in the tree whose species (its first two
    words) resolves by ``rules`` (rules 4–9) to a species.

    Parameters
    ----------
    state : polars.DataFrame
        The working table (:mod:`taxoforge.links.label_table`).
    index : NameIndex
        The tree's names, keyed for the labels.
    rules : sequence of callable
        Rules 4–9, each ``state -> state``.

    Returns
    -------
    polars.DataFrame
        ``state`` with the labels this rule settles settled.
    """
    todo = pending(state).filter(pl.col("_n_words") >= 3)
    if not todo.height or not index.ranked:
        return state
    sub = todo.select("dataset", pl.col("_row").cast(pl.String).alias("label_id"), pl.concat_str([
        pl.col("_genus_word").str.slice(0, 1).str.to_uppercase(), pl.col("_genus_word").str.slice(1),
        pl.lit(" "), pl.col("_epithets").str.split(" ").list.first()]).alias("label_text"))
    inner = initial_state(sub)
    for rule in rules:
        inner = rule(inner)
    found = inner.filter(pl.col("status").is_not_null()).select(
        pl.col("label_id").cast(pl.UInt32).alias("_row"), "method", pl.col("detail").alias("_species_detail"),
        pl.col("candidates").alias("node_id")).explode("node_id")
    found = found.join(index.nodes_of(found["node_id"]).select("node_id", "rank"), on="node_id").filter(
        pl.col("rank").is_in(list(SPECIES_RANKS)))
    found = found.join(todo.select("_row", "label_text"), on="_row")
    found = found.select("_row", "node_id", pl.format(
        "'{}' is not in the tree; partial ground truth: its species, found by {} ({})", "label_text", "method",
        "_species_detail").alias("_detail"))
    return settle(state, found, "species", index.label_of)


def by_genus(state: pl.DataFrame, index: NameIndex) -> pl.DataFrame:
    """Rule 11, ``genus`` (partial): a binomial or trinomial whose genus is a genus of the tree
    and whose epithet is in no other genus of the family — the genus.

    Parameters
    ----------
    state : polars.DataFrame
        The working table (:mod:`taxoforge.links.label_table`).
    index : NameIndex
        The tree's names, keyed for the labels.

    Returns
    -------
    polars.DataFrame
        ``state`` with the labels this rule settles settled.
    """
    if not index.ranked:
        return state
    g = label_genera(state, index)
    if not g.height:
        return state
    g = g.join(pending(state).select("_row", "label_text"), on="_row")
    why = pl.when(pl.col("_family_name").is_null()).then(pl.lit(
        "its genus has no family in the tree to look for a genus transfer in")).otherwise(
        pl.format("its epithet is in no other genus of {}", "_family_name"))
    found = g.select("_row", pl.col("_genus_id").alias("node_id"), pl.format(
        "'{}' is not in the tree and {}; partial ground truth: the genus {}{}", "label_text", why, "_genus_name",
        "_genus_via").alias("_detail"))
    return settle(state, found, "genus", index.label_of)


def explain_unmatched(state: pl.DataFrame, index: NameIndex, tried: list[str], flags: dict[str, bool]) -> pl.DataFrame:
    """Mark every label still pending ``unmatched``, with a detail saying what was tried and why
    each rule failed.

    Parameters
    ----------
    state : polars.DataFrame
        The working table after the rules.
    index : NameIndex
    tried : list of str
        The rules that ran, in words.
    flags : dict
        ``by_name``, ``genus_transfer`` and ``partial``: whether those rules were switched on.

    Returns
    -------
    polars.DataFrame
    """
    todo = pending(state)
    if not todo.height:
        return state
    done = ", ".join(tried)
    genera = label_genera(state, index) if index.ranked else pl.DataFrame(
        schema={"_row": pl.UInt32, "_genus_name": pl.String, "_family_name": pl.String})
    gen = genera.group_by("_row").agg(pl.col("_genus_name").first(), pl.col("_family_name").first())
    todo = todo.join(gen, on="_row", how="left")
    partial_off = "" if flags["partial"] else "; partial ground truths are off"
    why = (pl.when(pl.col("_key") == "").then(pl.lit("empty label"))
           .when(pl.lit(not flags["by_name"])).then(pl.format("'{}' is no node id and no linked label (tried {}; "
                                                              "names were not tried)", "label_text", pl.lit(done)))
           .when(pl.col("_n_words") == 1).then(pl.format("no node is named '{}' (tried {})", "label_text",
                                                         pl.lit(done)))
           .when(pl.lit(not index.ranked)).then(pl.format(
               "no node is named '{}' and the tree has no ranks, so no genus rule applies (tried {})", "label_text",
               pl.lit(done)))
           .when(pl.col("_genus_name").is_null()).then(pl.format(
               "no node is named '{}' and its genus {} is not a genus of the tree (nor a synonym of one), so neither "
               "a genus transfer nor the genus can be found (tried {})", "label_text",
               pl.col("_genus_word").str.to_titlecase(), pl.lit(done)))
           .when(pl.col("_family_name").is_null() & pl.lit(flags["genus_transfer"])).then(pl.format(
               "no node is named '{}'; its genus {} has no family in the tree, so no genus transfer was possible"
               "{} (tried {})", "label_text", "_genus_name", pl.lit(partial_off), pl.lit(done)))
           .otherwise(pl.format("no node is named '{}'; its genus {} is in the tree{} (tried {})", "label_text",
                                "_genus_name", pl.lit("" if flags["partial"] else " (partial ground truths are off)"),
                                pl.lit(done))))
    todo = todo.select("_row", pl.lit("unmatched").alias("_new_status"), why.alias("_why"))
    out = state.join(todo, on="_row", how="left")
    return out.with_columns(pl.coalesce("status", "_new_status").alias("status"),
                            pl.when(pl.col("_new_status").is_not_null()).then(pl.col("_why"))
                            .otherwise(pl.col("detail")).alias("detail")).drop("_new_status", "_why")
