"""Seeded, vectorised generators of benchmark inputs.

:func:`wikidata_like_edges`
    A subclass-of graph with the shape of Wikidata's P279 graph (defaults at full
    scale: about 4.9 M edges over 4.2 M classes, 667 k classes with more than one
    parent), with heavy-tailed fan-out (a few classes with very many subclasses), long
    chains, injected cycles and self loops, and ids ``wd:Q<n>`` in an order unrelated
    to the graph's.
:func:`random_tree_nodes`
    A rooted tree of ``n`` nodes (``node_id``, ``parent_id``) with a realistic depth
    profile, for the hierarchical-measure benchmarks.

Everything is numpy over whole arrays (no Python loop per node or edge); the same
arguments and seed give the same table.
"""

from __future__ import annotations

import datetime

import numpy as np
import polars as pl

__all__ = ["WIKIDATA_SHAPE", "wikidata_like_edges", "wikidata_like_ntriples", "random_tree_nodes",
           "subsample_inat_taxa"]

# Wikidata's subclass-of (P279) graph, in round figures.
WIKIDATA_SHAPE = {"classes": 4_200_000, "edges": 4_900_000, "multi_parent": 667_000}


def _ids(prefix: str, numbers: np.ndarray) -> pl.Series:
    return pl.select((pl.lit(prefix) + pl.Series("n", numbers).cast(pl.String)).alias("id")).to_series()


def wikidata_like_edges(scale: float = 1.0, *, seed: int = 0, root_share: float = 0.01,
                        chains_per_million: int = 40, chain_len: tuple[int, int] = (20, 120),
                        cycles_per_million: int = 600, self_loops_per_million: int = 20) -> tuple[pl.DataFrame, dict]:
    """``(child, parent)`` edges of a Wikidata-shaped graph at ``scale`` × full size, and
    a dict describing what was generated.

    Construction, over topological positions ``0 … N-1`` (0 is the most general):

    1. The first ``root_share · N`` positions are parentless (top classes).
    2. Every other class gets a primary parent at an earlier position: with probability
       0.35 a near predecessor (``i - 1 - Geometric(0.3)``, deep local chains), otherwise
       ``⌊i · U³⌋`` (fan-out concentrated on a few very general classes).
    3. Long chains: ``chains_per_million`` runs of ``chain_len`` consecutive positions,
       each the parent of the next.
    4. ``multi_parent`` classes get extra parents at earlier positions ``⌊i · U²⌋`` until
       the edge count is reached.
    5. Cycles: a random class ``x`` and its ancestor ``a`` 1–5 primary steps up get the
       edge ``a → x`` (a subclass of x), closing a cycle of length 2–6. Plus a few self loops.
    6. Ids are distinct random ``wd:Q<n>``; rows are shuffled.
    """
    rng = np.random.default_rng(seed)
    n = max(50, int(round(WIKIDATA_SHAPE["classes"] * scale)))
    n_edges_target = int(round(WIKIDATA_SHAPE["edges"] * scale))
    n_multi = int(round(WIKIDATA_SHAPE["multi_parent"] * scale))
    n_roots = max(1, int(n * root_share))
    i = np.arange(n, dtype=np.int64)

    # 2. primary parents
    local = rng.random(n) < 0.35
    parent = np.where(local, i - rng.geometric(0.3, n), np.floor(i * rng.random(n) ** 3).astype(np.int64))
    parent = np.minimum(parent, i - 1)
    # 3. long chains
    n_chains = max(1, int(round(chains_per_million * n / 1e6)))
    lens = rng.integers(chain_len[0], chain_len[1] + 1, n_chains)
    starts = rng.integers(n_roots, max(n_roots + 1, n - chain_len[1] - 1), n_chains)
    pos = np.repeat(starts, lens) + (np.arange(lens.sum()) - np.repeat(np.cumsum(lens) - lens, lens))
    pos = pos[(pos > starts.min()) & (pos < n)]
    parent[pos] = pos - 1
    parent = np.maximum(parent, 0)
    child_p, parent_p = i[n_roots:], parent[n_roots:]

    # 4. extra parents for multi-parent classes
    n_extra_total = max(0, n_edges_target - len(child_p))
    multi = rng.choice(np.arange(n_roots + 1, n), size=min(n_multi, n - n_roots - 1), replace=False)
    extra_counts = np.ones(len(multi), dtype=np.int64)
    surplus = n_extra_total - len(multi)
    if surplus > 0:
        extra_counts += rng.multinomial(surplus, np.full(len(multi), 1 / len(multi)))
    ec = np.repeat(multi, extra_counts)
    ep = np.floor(ec * rng.random(len(ec)) ** 2).astype(np.int64)

    # 5. cycles and self loops
    n_cycles = max(1, int(round(cycles_per_million * n / 1e6)))
    x = rng.integers(n_roots, n, n_cycles)
    k = rng.integers(1, 6, n_cycles)
    a = x.copy()
    for s in range(1, 6):
        up = k >= s
        a[up] = parent[a[up]]
    cyc = a != x
    n_loops = int(round(self_loops_per_million * n / 1e6))
    sl = rng.integers(0, n, n_loops)

    child_all = np.concatenate([child_p, ec, a[cyc], sl])
    parent_all = np.concatenate([parent_p, ep, x[cyc], sl])
    perm = rng.permutation(len(child_all))
    child_all, parent_all = child_all[perm], parent_all[perm]
    qnum = 1 + rng.choice(3 * n, size=n, replace=False)
    qid = _ids("wd:Q", qnum)
    edges = pl.DataFrame({"child": qid.gather(child_all), "parent": qid.gather(parent_all)})
    uniq = edges.unique()
    n_par = uniq.filter(pl.col("child") != pl.col("parent")).group_by("child").len()
    info = {
        "scale": scale, "seed": seed, "classes": n, "edges": edges.height,
        "classes_with_several_parents": int((n_par["len"] > 1).sum()),
        "parentless_classes": n_roots, "long_chains": n_chains, "injected_cycles": int(cyc.sum()),
        "self_loops": n_loops,
    }
    return edges, info


def random_tree_nodes(n: int, *, seed: int = 0, prefix: str = "t:") -> pl.DataFrame:
    """A rooted tree with ``n`` nodes as a ``node_id, parent_id`` table: node ``i`` hangs
    under ``⌊i · U^0.3⌋`` (recent nodes, so depths reach ~20–40 like a biological taxonomy)."""
    rng = np.random.default_rng(seed)
    i = np.arange(n, dtype=np.int64)
    parent = np.floor(i * rng.random(n) ** 0.3).astype(np.int64)
    parent = np.minimum(parent, i - 1)
    ids = _ids(prefix, rng.permutation(n))
    return pl.DataFrame({"node_id": ids, "parent_id": ids.gather(np.maximum(parent, 0))}).with_columns(
        pl.when(pl.Series(i) == 0).then(None).otherwise(pl.col("parent_id")).alias("parent_id"))


def subsample_inat_taxa(taxa: pl.DataFrame, fraction: float, *, seed: int = 0) -> pl.DataFrame:
    """Taxa of a random ``fraction`` of the iNaturalist families (whole lineages kept), plus
    every taxon above family rank, so the subset is a smaller taxonomy of the same shape."""
    fam = taxa.select("family").drop_nulls().unique().sort("family")
    keep = fam.sample(fraction=fraction, seed=seed)
    return taxa.filter(pl.col("family").is_null() | pl.col("family").is_in(keep["family"].implode()))


# ------------------------------------------------------------------ Wikidata-shaped N-Triples
_WD_ENTITY = "<http://www.wikidata.org/entity/Q"
_WD_PRED = {
    "P279": "<http://www.wikidata.org/prop/direct/P279>",
    "P31": "<http://www.wikidata.org/prop/direct/P31>",
    "label": "<http://www.w3.org/2000/01/rdf-schema#label>",
    "alias": "<http://www.w3.org/2004/02/skos/core#altLabel>",
    "description": "<http://schema.org/description>",
}
# syllables for label words; a few carry N-Triples escapes and non-ASCII letters
_SYLLABLES = ["ka", "to", "ri", "men", "sal", "or", "ve", "lin", "dus", "pa", "ne", "qu", "bri", "tal", "mo", "zer",
              "é", "ü", "日本", "\\\"", "\\\\", "\\u00E9", "\\U0001F600", "ß", "ø", "ine", "ta", "gon"]


def _words(rng: np.random.Generator, n: int, *, escapes: bool = True) -> pl.Series:
    """``n`` random label texts of one to three words of two to four syllables (vectorised)."""
    syl = np.array(_SYLLABLES if escapes else _SYLLABLES[:16] + _SYLLABLES[25:], dtype=object)
    p = np.ones(len(syl))
    if escapes:  # escapes and non-ASCII letters are rare, as in Wikidata
        p[16:25] = 0.004
    p /= p.sum()
    parts = []
    n_words = rng.integers(1, 4, n)
    for w in range(3):
        k = rng.integers(2, 5, n)
        word = pl.Series(syl[rng.choice(len(syl), n, p=p)]).cast(pl.String)
        for s in range(1, 4):
            more = pl.Series(syl[rng.choice(len(syl), n, p=p)]).cast(pl.String)
            word = pl.select(pl.when(pl.Series(k > s)).then(word + more).otherwise(word)).to_series()
        parts.append(pl.select(pl.when(pl.Series(n_words > w)).then(pl.lit(" " if w else "") + word)
                               .otherwise(pl.lit(""))).to_series())
    return pl.select(parts[0] + parts[1] + parts[2]).to_series()


#: Lines a reader skips, per named entity, in the ``mixed`` shape (expected counts): the
#: predicates and literal forms that fill Wikidata's truthy dump around the few it keeps.
MIXED_FILLER = {
    "description": {"en": 1.0, "de": 0.6, "fr": 0.5, "es": 0.4},
    "label": {"de": 0.7, "fr": 0.6, "es": 0.5, "it": 0.4, "nl": 0.4, "ja": 0.3},  # other languages
    "prefLabel": {"en": 1.0},  # the truthy dump repeats every label as skos:prefLabel and schema:name
    "name": {"en": 1.0},
    "item": {"P17": 0.6, "P131": 0.5, "P361": 0.3, "P1343": 0.2},  # item-valued statements
    "external_id": {"P214": 0.4, "P227": 0.3, "P646": 0.6},
    "dateModified": 1.0,
}
#: How many times more entities than classes the ``mixed`` shape names (instances of the classes).
MIXED_INSTANCES_PER_CLASS = 1.0


def wikidata_like_ntriples(path, scale: float = 1.0, *, seed: int = 0, instances: int = 50_000,
                           alias_share: float = 0.1, other_lang_share: float = 0.06,
                           description_share: float = 0.0, non_item_per_million: int = 200,
                           shape: str = "dense") -> dict:
    """Write a Wikidata-shaped *truthy* N-Triples file to ``path`` and describe it.

    The subclass-of graph is :func:`wikidata_like_edges` at ``scale``; around it, as in
    ``latest-truthy.nt``: ``instances × scale`` entities with one to three P31 classes each
    (the seeds of a benchmark), an English label for every class and instance, English
    aliases for ``alias_share`` of them, German and British-English labels for
    ``other_lang_share``, optional ``schema:description`` lines, and a few P279 edges to
    non-items (blank nodes of "unknown value", lexemes). Label texts are random syllables,
    a few with N-Triples escapes (``\\"``, ``\\\\``, ``\\u00E9``, ``\\U0001F600``) and UTF-8
    letters. Lines are grouped by subject (as in Wikidata's dumps), in a seeded order.
    At ``scale=1``: 4.9 M P279 edges, 4.2 M classes, about 1.22 GB.

    ``shape="dense"`` (the default) is the file described so far: nearly every line (9.7 M of
    10.2 M at ``scale=1``) is one a reader keeps — a P279 or P31 edge or an English label or
    alias. ``shape="mixed"`` adds what fills the real truthy dump around those lines and a
    reader skips (:data:`MIXED_FILLER`): ``MIXED_INSTANCES_PER_CLASS`` more named entities
    per class, and per named entity descriptions in four languages, labels in six other
    languages, the ``skos:prefLabel`` / ``schema:name`` copies of the English label,
    item-valued statements of other properties, external identifiers and
    ``schema:dateModified`` typed literals; at ``scale=0.1`` about 1.2 GB and 11 M lines, an
    eighth of them kept.

    Returns a dict with the counts written and ``seeds`` (the instances' QIDs)."""
    if shape not in ("dense", "mixed"):
        raise ValueError(f"shape must be 'dense' or 'mixed', got {shape!r}")
    rng = np.random.default_rng(seed + 1)
    edges, info = wikidata_like_edges(scale, seed=seed)
    child = edges["child"].str.slice(4).cast(pl.Int64).to_numpy()
    parent = edges["parent"].str.slice(4).cast(pl.Int64).to_numpy()
    classes = np.unique(np.concatenate([child, parent]))
    n_inst = max(5, int(round(instances * scale)))
    inst = classes.max() + 1 + rng.choice(3 * n_inst, n_inst, replace=False)
    k = rng.integers(1, 4, n_inst)
    p31_child = np.repeat(inst, k)
    p31_parent = classes[rng.integers(0, len(classes), len(p31_child))]
    n_ni = max(2, int(round(non_item_per_million * len(child) / 1e6)))
    ni_child = classes[rng.integers(0, len(classes), n_ni)]
    named = np.concatenate([classes, inst])
    n_named = len(named)
    alias_of = named[rng.random(n_named) < alias_share]
    other = named[rng.random(n_named) < other_lang_share]
    desc_of = named[rng.random(n_named) < description_share]

    ent = pl.lit(_WD_ENTITY)
    frames = []

    def add(subject: np.ndarray, pred: str, obj: pl.Series | pl.Expr, order: int) -> None:
        obj = pl.select(obj).to_series() if isinstance(obj, pl.Expr) else obj
        frames.append(pl.DataFrame({"s": subject, "o": obj, "k": np.full(len(subject), order, np.int16)}).select(
            "s", "k", (ent + pl.col("s").cast(pl.String) + pl.lit("> " + _WD_PRED.get(pred, pred) + " ") + pl.col("o")
                       + pl.lit(" .")).alias("line")))

    add(named, "label", pl.lit('"') + _words(rng, n_named) + pl.lit('"@en'), 0)
    add(alias_of, "alias", pl.lit('"') + _words(rng, len(alias_of)) + pl.lit('"@en'), 1)
    add(other, "label", pl.lit('"') + _words(rng, len(other), escapes=False) + pl.lit('"@de'), 2)
    add(other, "label", pl.lit('"') + _words(rng, len(other), escapes=False) + pl.lit('"@en-gb'), 3)
    if len(desc_of):
        add(desc_of, "description", pl.lit('"') + _words(rng, len(desc_of), escapes=False) + pl.lit('"@en'), 4)
    add(child, "P279", ent + pl.Series(parent).cast(pl.String) + pl.lit(">"), 5)
    add(p31_child, "P31", ent + pl.Series(p31_parent).cast(pl.String) + pl.lit(">"), 6)
    ni = pl.Series(np.where(np.arange(n_ni) % 2 == 0, "_:b", "<http://www.wikidata.org/entity/L")).cast(pl.String)
    add(ni_child, "P279", ni + pl.Series(np.arange(n_ni)).cast(pl.String) + pl.Series(
        np.where(np.arange(n_ni) % 2 == 0, "", ">")).cast(pl.String), 5)
    filler = _mixed_filler(np.random.default_rng(seed + 2), named, classes.max() + 1 + 3 * n_inst, add) \
        if shape == "mixed" else 0
    lines = pl.concat(frames)
    # grouped by subject in a seeded order of subjects, predicates in a fixed order within one
    subjects = np.unique(lines["s"].to_numpy())
    rank = pl.DataFrame({"s": subjects, "r": rng.permutation(len(subjects))})
    lines = lines.join(rank, on="s").sort("r", "k", maintain_order=True).select("line")
    lines.write_csv(path, include_header=False, quote_style="never")
    return {
        "scale": scale, "seed": seed, "lines": lines.height, "p279_edges": int(len(child)),
        "non_item_edges": int(n_ni), "classes": int(len(classes)), "instances": int(n_inst),
        "p31_edges": int(len(p31_child)), "aliases": int(len(alias_of)), "other_language_labels": 2 * int(len(other)),
        "descriptions": int(len(desc_of)), "seeds": [f"Q{q}" for q in np.sort(inst)],
        "shape": shape, "skipped_filler_lines": int(filler), "graph": info,
    }


def _mixed_filler(rng: np.random.Generator, named: np.ndarray, first_free: int, add) -> int:
    """The ``mixed`` shape's skipped lines (:data:`MIXED_FILLER`), through ``add(subject,
    predicate IRI, object, order)``; returns how many."""
    n_more = int(round(len(named) * MIXED_INSTANCES_PER_CLASS))
    more = first_free + rng.choice(3 * max(1, n_more), n_more, replace=False)
    everyone = np.concatenate([named, more])
    total = 0
    order = 10

    def subjects(rate: float) -> np.ndarray:
        return everyone[rng.random(len(everyone)) < rate]

    def literal(n: int, lang: str) -> pl.Series:
        return pl.lit('"') + _words(rng, n, escapes=False) + pl.lit(f'"@{lang}')

    iri = {"description": "<http://schema.org/description>", "label": _WD_PRED["label"],
           "prefLabel": "<http://www.w3.org/2004/02/skos/core#prefLabel>", "name": "<http://schema.org/name>"}
    # the new entities' own English labels (kept lines, like every entity's)
    add(more, "label", pl.lit('"') + _words(rng, len(more)) + pl.lit('"@en'), 0)
    for kind in ("description", "label", "prefLabel", "name"):
        for lang, rate in MIXED_FILLER[kind].items():
            subj = subjects(rate)
            add(subj, iri[kind], literal(len(subj), lang), order)
            order += 1
            total += len(subj)
    for prop, rate in MIXED_FILLER["item"].items():
        subj = subjects(rate)
        add(subj, f"<http://www.wikidata.org/prop/direct/{prop}>",
            pl.lit(_WD_ENTITY) + pl.Series(rng.choice(everyone, len(subj))).cast(pl.String) + pl.lit(">"), order)
        order += 1
        total += len(subj)
    for prop, rate in MIXED_FILLER["external_id"].items():
        subj = subjects(rate)
        add(subj, f"<http://www.wikidata.org/prop/direct/{prop}>",
            pl.lit('"') + pl.Series(rng.integers(10**5, 10**10, len(subj))).cast(pl.String) + pl.lit('"'), order)
        order += 1
        total += len(subj)
    subj = subjects(MIXED_FILLER["dateModified"])
    days = pl.Series(rng.integers(0, 3650, len(subj)))
    stamp = pl.select(pl.lit(datetime.date(2016, 1, 1)) + pl.duration(days=days)).to_series()
    add(subj, "<http://schema.org/dateModified>", pl.lit('"') + stamp.cast(pl.String)
        + pl.lit('T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>'), order)
    return total + len(subj)
