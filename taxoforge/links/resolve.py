"""Dataset labels → tree nodes: the one label-resolution routine (docs/method.md#ground-truths).

The linking assets (``biology_links``) and scoring (:mod:`taxoforge.scores.run`) both resolve
labels here, so a ground truth means the same wherever it is used.

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

Speed: every rule is a join. The tree's names are keyed only where their first word is the
first word of a label (or of an accepted name, or a common name); genus transfer reads the
species whose last epithet has a label's stem. Thousands of labels resolve against the
1.4 M-taxon iNaturalist tree in a few seconds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import polars as pl

from taxoforge.links.scientific_names import (
    RANK_MARKERS,
    epithet_stem_expr,
    first_word_expr,
    with_scientific_key,
)
from taxoforge.trees.tables import LINKS_SCHEMA, conform

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

SPECIES_RANKS = ("species", "hybrid")
INFRASPECIFIC_RANKS = ("subspecies", "variety", "form", "infrahybrid", "infraspecific name", "natio", "forma")
GENUS_RANKS = ("genus", "genushybrid")
_SCIENTIFIC_KINDS = ("scientific", "label")
_SYNONYM_KIND = "synonym"
# Names of a subgenus or section, given to its genus (taxoforge.sources.inaturalist): they name
# part of the genus, so they find the genus for rules 9 and 11 but never resolve a label whole.
_INFRAGENERIC_KIND = "infrageneric"
_MAX_LISTED = 8


def is_partial(method: pl.Expr | str | None):
    """Whether ``method`` gives a partial ground truth (an expression for an expression)."""
    if isinstance(method, pl.Expr):
        return method.is_in(list(PARTIAL_METHODS)).fill_null(False)
    return method in PARTIAL_METHODS


# --------------------------------------------------------------------------- the tree


@dataclass
class _Tree:
    """The tree's tables, prepared once per call."""

    names: pl.DataFrame  # node_id, name, kind
    nodes: pl.DataFrame  # node_id, parent_id, label, rank
    links: pl.DataFrame | None
    ranked: bool
    prefixes: list[str]
    keyed: pl.DataFrame = field(default_factory=pl.DataFrame)  # names sharing a first word with a label, + _key
    genera: pl.DataFrame = field(default_factory=pl.DataFrame)  # see _genera

    @classmethod
    def of(cls, names: pl.DataFrame, nodes: pl.DataFrame | None, links: pl.DataFrame | None) -> "_Tree":
        for c in ("node_id", "name"):
            if c not in names.columns:
                raise ValueError(f"names table is missing column {c!r}; got {names.columns}")
        nm = names.select(pl.col("node_id").cast(pl.String), pl.col("name").cast(pl.String),
                          (pl.col("kind").cast(pl.String) if "kind" in names.columns else pl.lit("label"))
                          .alias("kind")).drop_nulls(["node_id", "name"])
        if nodes is None:
            nd = nm.group_by("node_id", maintain_order=True).agg(pl.col("name").first().alias("label")).with_columns(
                pl.lit(None, dtype=pl.String).alias("parent_id"), pl.lit(None, dtype=pl.String).alias("rank"))
        else:
            if "node_id" not in nodes.columns:
                raise ValueError(f"nodes table is missing column 'node_id'; got {nodes.columns}")
            nd = nodes.select(
                pl.col("node_id").cast(pl.String),
                *[(pl.col(c).cast(pl.String) if c in nodes.columns else pl.lit(None, dtype=pl.String)).alias(c)
                  for c in ("parent_id", "label", "rank")])
        nd = nd.select("node_id", "parent_id", "label", "rank")
        ranked = bool(nd["rank"].is_in(list(GENUS_RANKS)).any())
        prefixes = sorted(p for p in nd.select(pl.col("node_id").str.extract(r"^([^:\s]+):", 1)).to_series()
                          .drop_nulls().unique().to_list())
        lk = None
        if links is not None and links.height and {"status", "node_id"} <= set(links.columns):
            lk = links.filter(pl.col("status") == "linked").select(
                pl.col("dataset").cast(pl.String), pl.col("label_id").cast(pl.String),
                pl.col("label_text").cast(pl.String), pl.col("node_id").cast(pl.String),
                pl.col("method").cast(pl.String).alias("_lmethod")).join(nd.select("node_id"), on="node_id")
        return cls(nm, nd, lk, ranked, prefixes)

    def key_names(self, first_words: pl.Series, word_stems: pl.Series) -> None:
        """Key the names that may equal a label up to its epithets' endings: whose key's first
        word is in ``first_words`` and whose last word's epithet stem is in ``word_stems``;
        and find the genus nodes (and their families) named by those first words.

        The cut is made before keying and keeps a superset: a case-insensitive multi-substring
        search (Aho-Corasick) for the first words, then the raw last word's stem (names beyond
        printable ASCII, and names ending in a rank marker, are kept whole), then keyed exactly
        and cut to the first words."""
        words = first_words.cast(pl.String).drop_nulls().unique()
        words = words.filter(words != "")
        if words.len():
            wl = words.to_list()
            other = pl.col("name").str.contains(r"[^\x20-\x7e]")
            last = _raw_last_word("name")
            ascii_cut = self.names.filter(~other & pl.col("name").str.contains_any(wl, ascii_case_insensitive=True))
            ascii_cut = ascii_cut.filter(epithet_stem_expr(last).is_in(word_stems.drop_nulls().unique().implode())
                                         | last.is_in(sorted(RANK_MARKERS)))
            cut = pl.concat([
                ascii_cut,
                self.names.filter(other).filter(pl.col("name").str.normalize("NFKC").str.to_lowercase()
                                                .str.contains_any(wl, ascii_case_insensitive=True)),
            ])
        else:
            cut = self.names.clear()
        keyed = with_scientific_key(cut, "name").filter(pl.col("_key") != "")
        keyed = keyed.filter(pl.col("_key").str.split(" ").list.first().is_in(words.implode()))
        self.keyed = keyed.join(self.nodes_of(keyed["node_id"]).select("node_id", "rank"), on="node_id", how="left")
        self.genera = self._genera()

    def nodes_of(self, ids: pl.Series) -> pl.DataFrame:
        """The rows of ``nodes`` of the given ids (a filter, cheaper than a join with the
        whole table when there are few ids)."""
        return self.nodes.filter(pl.col("node_id").is_in(ids.unique().implode()))

    def ancestor(self, ids: pl.Series, rank: str, max_steps: int = 100) -> pl.DataFrame:
        """``node_id`` → nearest ancestor-or-self of ``rank``: ``ancestor_id``, ``ancestor_label``."""
        u = ids.cast(pl.String).unique()
        walk = pl.DataFrame({"node_id": u, "_at": u}, schema={"node_id": pl.String, "_at": pl.String})
        found = []
        for _ in range(max_steps):
            if not walk.height:
                break
            step = walk.join(self.nodes_of(walk["_at"]), left_on="_at", right_on="node_id")
            hit = step.filter(pl.col("rank") == rank)
            found.append(hit.select("node_id", pl.col("_at").alias("ancestor_id"), pl.col("label").alias("ancestor_label")))
            walk = step.filter((pl.col("rank").fill_null("") != rank) & pl.col("parent_id").is_not_null()).select(
                "node_id", pl.col("parent_id").alias("_at"))
        schema = {"node_id": pl.String, "ancestor_id": pl.String, "ancestor_label": pl.String}
        return pl.concat([f.cast(schema) for f in found]) if found else pl.DataFrame(schema=schema)

    def descendants(self, roots: pl.DataFrame, ranks: Sequence[str], max_steps: int = 100) -> pl.DataFrame:
        """``roots`` (``_root``) → every descendant whose rank is in ``ranks``: ``_root``, ``node_id``."""
        frontier = roots.select(pl.col("_root"), pl.col("_root").alias("_at"))
        found = []
        for _ in range(max_steps):
            if not frontier.height:
                break
            kids = self.nodes.filter(pl.col("parent_id").is_in(frontier["_at"].unique().implode())).select(
                "node_id", "parent_id", "rank")
            step = frontier.join(kids, left_on="_at", right_on="parent_id")
            found.append(step.filter(pl.col("rank").is_in(list(ranks))).select("_root", "node_id"))
            frontier = step.select("_root", pl.col("node_id").alias("_at"))
        schema = {"_root": pl.String, "node_id": pl.String}
        return pl.concat([f.cast(schema) for f in found]) if found else pl.DataFrame(schema=schema)

    def _genera(self) -> pl.DataFrame:
        """``_g`` (a key word) → genus node named so (``_gid``, ``_gname``; ``_gnote`` and
        ``_gvia`` say so when a synonym or a subgenus name finds it) and its family (``_fam``,
        ``_famname``)."""
        gen = self.keyed.filter(pl.col("rank").is_in(list(GENUS_RANKS))
                                & pl.col("kind").is_in([*_SCIENTIFIC_KINDS, _SYNONYM_KIND, _INFRAGENERIC_KIND])
                                & ~pl.col("_key").str.contains(" "))
        g = gen.select(pl.col("_key").alias("_g"), pl.col("node_id").alias("_gid"), "kind")
        # a genus named by its own name is not also reached through a synonym or a subgenus
        # and a word that is a genus's own name does not also find other genera through them
        indirect = pl.col("kind").is_in([_SYNONYM_KIND, _INFRAGENERIC_KIND])
        g = g.sort(indirect).unique(["_g", "_gid"], keep="first", maintain_order=True)
        g = g.filter(~indirect | ~(~indirect).any().over("_g"))
        g = g.join(self.label_of(g["_gid"]).rename({"node_id": "_gid", "_nlabel": "_gname"}), on="_gid", how="left")
        fam = self.ancestor(g["_gid"], "family").select(
            pl.col("node_id").alias("_gid"), pl.col("ancestor_id").alias("_fam"), pl.col("ancestor_label").alias("_famname"))
        return g.join(fam, on="_gid", how="left").with_columns(
            pl.when(pl.col("kind") == _SYNONYM_KIND)
            .then(pl.format("{} is a synonym of the genus {}", pl.col("_g").str.to_titlecase(), "_gname"))
            .when(pl.col("kind") == _INFRAGENERIC_KIND)
            .then(pl.format("{} is a subgenus or section of {}", pl.col("_g").str.to_titlecase(), "_gname"))
            .otherwise(pl.lit("")).alias("_gnote")).with_columns(
            pl.when(pl.col("_gnote") != "").then(pl.format(" ({})", "_gnote")).otherwise(pl.lit("")).alias("_gvia")
        ).drop("kind")

    def scientific(self) -> pl.DataFrame:
        return self.keyed.filter(pl.col("kind").is_in(_SCIENTIFIC_KINDS))

    def label_of(self, ids: pl.Series) -> pl.DataFrame:
        """``node_id``, ``_nlabel`` of the given ids."""
        return self.nodes_of(ids).select("node_id", pl.col("label").alias("_nlabel"))


# --------------------------------------------------------------------------- state


def _initial_state(labels: pl.DataFrame) -> pl.DataFrame:
    missing = [c for c in ("dataset", "label_id", "label_text") if c not in labels.columns]
    if missing:
        raise ValueError(f"label set is missing column(s) {missing}; expected dataset, label_id, label_text "
                         "(optional external_id, common_name)")
    lab = labels.select(
        pl.col("dataset").cast(pl.String), pl.col("label_id").cast(pl.String), pl.col("label_text").cast(pl.String),
        *[(pl.col(c).cast(pl.String) if c in labels.columns else pl.lit(None, dtype=pl.String)).alias(c)
          for c in ("external_id", "common_name")])
    dup = lab.filter(pl.struct("dataset", "label_id").is_duplicated())
    if dup.height:
        r = dup.row(0)
        raise ValueError(f"label set has duplicate (dataset, label_id) {r[0]!r}, {r[1]!r}")
    lab = with_scientific_key(lab.with_row_index("_row"), "label_text").with_columns(pl.col("_key").fill_null(""))
    w = pl.col("_key").str.split(" ")
    return lab.with_columns(
        pl.when(pl.col("_key") == "").then(0).otherwise(w.list.len()).cast(pl.Int32).alias("_nw"),
        w.list.first().alias("_g"),
        w.list.slice(1).list.join(" ").alias("_rest"),
        pl.lit(None, dtype=pl.String).alias("status"), pl.lit(None, dtype=pl.String).alias("method"),
        pl.lit(None, dtype=pl.String).alias("node_id"), pl.lit(None, dtype=pl.List(pl.String)).alias("candidates"),
        pl.lit(None, dtype=pl.String).alias("detail"),
    ).sort("_row")


_LABEL_COLS = ("_row", "dataset", "label_id", "label_text", "external_id", "common_name", "_key", "_nw", "_g", "_rest")


def _raw_last_word(col: str) -> pl.Expr:
    """The last run of letters and digits of ``col``, lower case, apostrophes dropped: the last
    word of its scientific key for printable-ASCII text that does not end in a rank marker."""
    return (pl.col(col).str.to_lowercase().str.replace_all("['\u2019\u02bc]", "")
            .str.extract(r"([\p{L}\p{N}]+)[^\p{L}\p{N}]*$", 1))


def _word_stems(keys: pl.Expr) -> pl.Expr:
    """The epithet stems of every word of ``keys`` (one list per row)."""
    return keys.str.split(" ").list.eval(epithet_stem_expr(pl.element()))


def _pending(state: pl.DataFrame) -> pl.DataFrame:
    """The labels no rule has settled yet (their label columns only)."""
    return state.filter(pl.col("status").is_null()).select(_LABEL_COLS)


def _decide(state: pl.DataFrame, hits: pl.DataFrame, method: str, tree: _Tree) -> pl.DataFrame:
    """Settle the pending labels that have ``hits`` (``_row``, ``node_id``, ``_detail`` and
    optionally ``_krank``, lower is better): one best node links, several are ambiguous."""
    if not hits.height:
        return state
    hits = hits.filter(pl.col("_row").is_in(_pending(state)["_row"].implode()))
    if not hits.height:
        return state
    if "_krank" not in hits.columns:
        hits = hits.with_columns(pl.lit(0, dtype=pl.Int32).alias("_krank"))
    per_node = hits.sort("_krank", "node_id").group_by("_row", "node_id", maintain_order=True).agg(
        pl.col("_krank").min(), pl.col("_detail").first())
    best = pl.col("_krank") == pl.col("_krank").min()
    g = per_node.group_by("_row").agg(
        pl.col("node_id").sort().alias("_cands"),
        pl.col("node_id").filter(best).sort().alias("_best"),
        pl.col("_detail").filter(best).first().alias("_d"),
    )
    many = g.filter(pl.col("_best").list.len() > 1).select("_row", pl.col("_best").alias("node_id")).explode("node_id")
    listed = (many.join(tree.label_of(many["node_id"]), on="node_id", how="left")
              .group_by("_row").agg(pl.format("{} ({})", pl.col("_nlabel").fill_null("?"), "node_id")
                                    .head(_MAX_LISTED).str.join("; ").alias("_list"), pl.len().alias("_n")))
    g = g.join(listed, on="_row", how="left")
    one = pl.col("_best").list.len() == 1
    g = g.select(
        "_row",
        pl.when(one).then(pl.lit("linked")).otherwise(pl.lit("ambiguous")).alias("_st"),
        pl.when(one).then(pl.col("_best").list.first()).otherwise(None).alias("_nid"),
        pl.col("_cands"),
        pl.when(one).then(pl.col("_d")).otherwise(
            pl.format("{}: {} candidates: {}{}", pl.lit(method), "_n", "_list",
                      pl.when(pl.col("_n") > _MAX_LISTED).then(pl.lit(" …")).otherwise(pl.lit("")))).alias("_dd"),
    )
    out = state.join(g, on="_row", how="left")
    upd = pl.col("status").is_null() & pl.col("_st").is_not_null()
    out = out.with_columns(
        pl.when(upd).then(pl.col("_st")).otherwise(pl.col("status")).alias("status"),
        pl.when(upd).then(pl.lit(method)).otherwise(pl.col("method")).alias("method"),
        pl.when(upd).then(pl.col("_nid")).otherwise(pl.col("node_id")).alias("node_id"),
        pl.when(upd).then(pl.col("_cands")).otherwise(pl.col("candidates")).alias("candidates"),
        pl.when(upd).then(pl.col("_dd")).otherwise(pl.col("detail")).alias("detail"),
    )
    return out.drop("_st", "_nid", "_cands", "_dd")


def _hits(df: pl.DataFrame, detail: pl.Expr, *extra: str) -> pl.DataFrame:
    return df.select("_row", "node_id", detail.alias("_detail"), *extra)


# --------------------------------------------------------------------------- rules 1–3


def _by_node_id(state: pl.DataFrame, tree: _Tree) -> pl.DataFrame:
    todo = _pending(state)
    ids = tree.nodes.select("node_id")
    hits = pl.concat([
        todo.join(ids, left_on="label_text", right_on="node_id").select("_row", pl.col("label_text").alias("node_id")),
        todo.join(ids, left_on="external_id", right_on="node_id").select("_row", pl.col("external_id").alias("node_id")),
    ])
    return _decide(state, _hits(hits, pl.format("the label is the node id {}", "node_id")), "node_id", tree)


def _by_external_id(state: pl.DataFrame, tree: _Tree,
                    external_id_to_node: Mapping[str, str] | Callable[[str], str | None] | None) -> pl.DataFrame:
    todo = _pending(state).select("_row", "label_text", "external_id")
    parts = []
    if tree.prefixes:
        for col in ("label_text", "external_id"):
            vals = todo.select("_row", pl.col(col).str.strip_chars().alias("_x")).filter(
                pl.col("_x").is_not_null() & (pl.col("_x") != "") & ~pl.col("_x").str.contains(r"\s"))
            for p in tree.prefixes:
                parts.append(vals.select("_row", pl.format(f"{p}:{{}}", "_x").alias("node_id"),
                                         pl.format(f"{{}} with the tree's id prefix '{p}:' is node {p}:{{}}",
                                                   "_x", "_x").alias("_detail")))
    if external_id_to_node is not None:
        ext = todo.filter(pl.col("external_id").is_not_null())
        if ext.height:
            f = external_id_to_node.get if isinstance(external_id_to_node, Mapping) else external_id_to_node
            uniq = ext["external_id"].unique().to_list()
            m = pl.DataFrame({"external_id": uniq, "node_id": [f(x) for x in uniq]},
                             schema={"external_id": pl.String, "node_id": pl.String}).drop_nulls()
            parts.append(ext.join(m, on="external_id").select(
                "_row", "node_id", pl.format("external id {} maps to node {}", "external_id", "node_id").alias("_detail")))
    if not parts:
        return state
    hits = pl.concat(parts).join(tree.nodes.select("node_id"), on="node_id")
    return _decide(state, hits, "external_id", tree)


def _by_linked_label(state: pl.DataFrame, tree: _Tree) -> pl.DataFrame:
    if tree.links is None or not tree.links.height:
        return state
    for same_dataset in (True, False):
        todo = _pending(state)
        if not todo.height:
            break
        keys = pl.concat([todo.select("_row", "dataset", pl.col("label_id").alias("_k")),
                          todo.select("_row", "dataset", pl.col("label_text").alias("_k"))]).unique()
        lk = pl.concat([tree.links.select("dataset", pl.col("label_id").alias("_k"), "node_id", "_lmethod"),
                        tree.links.select("dataset", pl.col("label_text").alias("_k"), "node_id", "_lmethod")]
                       ).drop_nulls("_k").unique()
        on = ["dataset", "_k"] if same_dataset else ["_k"]
        hits = keys.join(lk.rename({"dataset": "_lds"}) if not same_dataset else lk, on=on)
        ds = pl.col("dataset") if same_dataset else pl.col("_lds")
        hits = _hits(hits, pl.format("label {} of dataset {} is linked to {} in the tree's links table ({})",
                                     "_k", ds, "node_id", pl.col("_lmethod").fill_null("?")))
        state = _decide(state, hits, "linked_label", tree)
    return state


# --------------------------------------------------------------------------- rules 4–9


def _by_names(state: pl.DataFrame, tree: _Tree, prefer_kinds: Sequence[str]) -> pl.DataFrame:
    """Rules 4 (exact) and 5 (normalised) over every name kind but synonyms."""
    rank = {k: i for i, k in enumerate(prefer_kinds)}
    nm = tree.keyed.filter(~pl.col("kind").is_in([_SYNONYM_KIND, _INFRAGENERIC_KIND])).with_columns(
        pl.col("kind").replace_strict(rank, default=len(rank), return_dtype=pl.Int32).alias("_krank"))
    todo = _pending(state)
    exact = todo.join(nm, left_on="label_text", right_on="name").select(
        "_row", "node_id", pl.format("exact {} name", "kind").alias("_detail"), "_krank")
    state = _decide(state, exact, "exact", tree)
    todo = _pending(state).filter(pl.col("_key") != "")
    norm = todo.join(nm, on="_key").select(
        "_row", "node_id", pl.format("equals the {} name '{}' up to case, punctuation and rank words", "kind", "name")
        .alias("_detail"), "_krank")
    return _decide(state, norm, "normalised", tree)


def _by_synonyms(state: pl.DataFrame, tree: _Tree, synonyms: pl.DataFrame | None, source: str) -> pl.DataFrame:
    todo = _pending(state).filter(pl.col("_key") != "")
    own = tree.keyed.filter(pl.col("kind") == _SYNONYM_KIND)
    own = todo.join(own, on="_key")
    parts = [own.join(tree.label_of(own["node_id"]), on="node_id", how="left").select(
        "_row", "node_id", pl.format("'{}' is a synonym of {} in the tree's names", "name", "_nlabel").alias("_detail"))]
    if synonyms is not None and synonyms.height:
        acc = synonyms.join(tree.scientific().select(pl.col("_key").alias("_akey"), "node_id"), on="_akey")
        parts.append(todo.join(acc, left_on="_key", right_on="_skey").select(
            "_row", "node_id", pl.format("'{}' is a synonym of {} ({})", "name", "accepted_name", pl.lit(source))
            .alias("_detail")))
    return _decide(state, pl.concat(parts), "synonym", tree)


def _by_common_name(state: pl.DataFrame, tree: _Tree) -> pl.DataFrame:
    todo = _pending(state).filter(pl.col("common_name").is_not_null())
    if not todo.height:
        return state
    todo = with_scientific_key(todo.drop("_key"), "common_name", "_ckey")
    vern = tree.keyed.filter(pl.col("kind") == "vernacular").select(pl.col("_key").alias("_ckey"), "node_id")
    hits = todo.filter(pl.col("_ckey") != "").join(vern, on="_ckey")
    return _decide(state, _hits(hits, pl.format("common name '{}'", "common_name")), "vernacular", tree)


def _stems(rest: pl.Expr) -> pl.Expr:
    """The epithet stems of the words of ``rest`` (space separated), joined by spaces."""
    return rest.str.split(" ").list.eval(epithet_stem_expr(pl.element())).list.join(" ")


def _by_epithet_variants(state: pl.DataFrame, tree: _Tree) -> pl.DataFrame:
    todo = _pending(state).filter(pl.col("_nw") >= 2)
    if not todo.height:
        return state
    sci = _split(tree.scientific()).filter(pl.col("_nw2") >= 2)
    if tree.ranked:
        sci = sci.filter(pl.col("rank").is_in([*SPECIES_RANKS, *INFRASPECIFIC_RANKS]))
    a = todo.with_columns(_stems(pl.col("_rest")).alias("_st"))
    b = sci.with_columns(_stems(pl.col("_rest2")).alias("_st2"))
    hits = a.join(b, left_on=["_g", "_nw", "_st"], right_on=["_g2", "_nw2", "_st2"]).filter(pl.col("_key") != pl.col("_key_right"))
    return _decide(state, _hits(hits, pl.format("epithet differs only in its Latin ending: '{}' → {}", "label_text", "name")),
                   "epithet_variant", tree)


def _split(names: pl.DataFrame) -> pl.DataFrame:
    """``names`` with ``_g2`` (first word of the key), ``_rest2`` (the others), ``_nw2``."""
    w = pl.col("_key").str.split(" ")
    return names.with_columns(w.list.first().alias("_g2"), w.list.slice(1).list.join(" ").alias("_rest2"),
                              w.list.len().cast(pl.Int32).alias("_nw2"))


def _label_genera(state: pl.DataFrame, tree: _Tree) -> pl.DataFrame:
    """``_row`` and :meth:`_Tree._genera` of every pending label of two words or more."""
    return _pending(state).filter(pl.col("_nw") >= 2).select("_row", "_g").join(tree.genera, on="_g")


def _by_genus_transfer(state: pl.DataFrame, tree: _Tree) -> pl.DataFrame:
    if not tree.ranked:
        return state
    genera = _label_genera(state, tree).filter(pl.col("_fam").is_not_null())
    if not genera.height:
        return state
    todo = _pending(state).join(genera.select("_row", "_fam", "_famname", "_gnote").unique(), on="_row")
    todo = todo.with_columns(_stems(pl.col("_rest")).alias("_st"))
    # every species-level taxon of those families, keyed
    ranks = [*SPECIES_RANKS, *INFRASPECIFIC_RANKS]
    members = tree.descendants(todo.select(pl.col("_fam").alias("_root")).unique(), ranks).rename({"_root": "_fam"})
    sci = tree.names.filter(pl.col("node_id").is_in(members["node_id"].unique().implode())
                            & pl.col("kind").is_in(_SCIENTIFIC_KINDS))
    # cut to the names whose last word has the stem of a label's last word before keying
    last_stems = todo.select(_word_stems(pl.col("_rest")).list.last()).to_series().unique()
    last = _raw_last_word("name")
    sci = sci.filter(epithet_stem_expr(last).is_in(last_stems.implode()) | last.is_in(sorted(RANK_MARKERS))
                     | pl.col("name").str.contains(r"[^\x20-\x7e]"))
    sci = _split(with_scientific_key(sci, "name").filter(pl.col("_key") != "")).join(members, on="node_id")
    sci = sci.with_columns(_stems(pl.col("_rest2")).alias("_st2"))
    pairs = todo.join(sci, on=["_fam"]).filter(
        (pl.col("_g2") != pl.col("_g")) & (pl.col("_nw2") == pl.col("_nw")) & (pl.col("_st2") == pl.col("_st")))
    # same spelling first; the Latin-ending variants only where no genus has the same spelling
    pairs = pairs.with_columns((pl.col("_rest2") == pl.col("_rest")).alias("_same"))
    pairs = pairs.filter(pl.col("_same") | ~pl.col("_same").any().over("_row"))
    note = pl.when(pl.col("_gnote") != "").then(pl.format("; {}", "_gnote")).otherwise(pl.lit(""))
    ending = pl.when(pl.col("_same")).then(pl.lit("")).otherwise(pl.lit(", up to its Latin ending"))
    hits = _hits(pairs, pl.format("genus transfer: '{}' → {} (its epithet occurs in no other genus of {}{}{})",
                                  "label_text", "name", "_famname", ending, note))
    return _decide(state, hits, "genus_transfer", tree)


def _by_species(state: pl.DataFrame, tree: _Tree, rules) -> pl.DataFrame:
    """Rule 10: a trinomial's species, resolved by rules 4–9 (partial)."""
    todo = _pending(state).filter(pl.col("_nw") >= 3)
    if not todo.height or not tree.ranked:
        return state
    sub = todo.select("dataset", pl.col("_row").cast(pl.String).alias("label_id"),
                      pl.concat_str([pl.col("_g").str.slice(0, 1).str.to_uppercase(), pl.col("_g").str.slice(1),
                                     pl.lit(" "), pl.col("_rest").str.split(" ").list.first()]).alias("label_text"))
    inner = _initial_state(sub)
    for rule in rules:
        inner = rule(inner)
    found = inner.filter(pl.col("status").is_not_null()).select(
        pl.col("label_id").cast(pl.UInt32).alias("_row"), "method", pl.col("detail").alias("_sd"),
        pl.col("candidates").alias("node_id")).explode("node_id")
    found = found.join(tree.nodes.select("node_id", "rank"), on="node_id").filter(
        pl.col("rank").is_in(list(SPECIES_RANKS)))
    found = found.join(todo.select("_row", "label_text"), on="_row")
    hits = found.select("_row", "node_id", pl.format(
        "'{}' is not in the tree; partial ground truth: its species, found by {} ({})", "label_text", "method", "_sd")
        .alias("_detail"))
    return _decide(state, hits, "species", tree)


def _by_genus(state: pl.DataFrame, tree: _Tree) -> pl.DataFrame:
    """Rule 11: the label's genus (partial)."""
    if not tree.ranked:
        return state
    g = _label_genera(state, tree)
    if not g.height:
        return state
    g = g.join(_pending(state).select("_row", "label_text"), on="_row")
    why = pl.when(pl.col("_famname").is_null()).then(pl.lit("its genus has no family in the tree to look for a "
                                                             "genus transfer in")).otherwise(
        pl.format("its epithet is in no other genus of {}", "_famname"))
    hits = g.select("_row", pl.col("_gid").alias("node_id"), pl.format(
        "'{}' is not in the tree and {}; partial ground truth: the genus {}{}", "label_text", why, "_gname", "_gvia")
        .alias("_detail"))
    return _decide(state, hits, "genus", tree)


# --------------------------------------------------------------------------- reasons


def _explain_unmatched(state: pl.DataFrame, tree: _Tree, flags: dict[str, bool]) -> pl.DataFrame:
    todo = _pending(state)
    if not todo.height:
        return state
    tried = "node id, id prefixes" + (f" ({', '.join(p + ':' for p in tree.prefixes[:5])})" if tree.prefixes else "")
    tried += ", linked labels, exact and normalised names, synonyms"
    if flags["epithet_variants"]:
        tried += ", epithet variants"
    if flags["genus_transfer"] and tree.ranked:
        tried += ", genus transfer"
    if flags["partial"] and tree.ranked:
        tried += ", species and genus"
    genera = _label_genera(state, tree) if tree.ranked else pl.DataFrame(
        schema={"_row": pl.UInt32, "_gname": pl.String, "_famname": pl.String, "_gvia": pl.String})
    gen = genera.group_by("_row").agg(pl.col("_gname").first(), pl.col("_famname").first())
    todo = todo.join(gen, on="_row", how="left")
    why = (pl.when(pl.col("_key") == "").then(pl.lit("empty label"))
           .when(pl.col("_nw") == 1).then(pl.format("no node is named '{}' (tried {})", "label_text", pl.lit(tried)))
           .when(pl.lit(not tree.ranked)).then(pl.format("no node is named '{}' and the tree has no ranks, so no genus "
                                                         "rule applies (tried {})", "label_text", pl.lit(tried)))
           .when(pl.col("_gname").is_null()).then(pl.format(
               "no node is named '{}' and its genus {} is not a genus of the tree (nor a synonym of one), so neither "
               "a genus transfer nor the genus can be found (tried {})", "label_text",
               pl.col("_g").str.to_titlecase(), pl.lit(tried)))
           .when(pl.col("_famname").is_null() & pl.lit(flags["genus_transfer"])).then(pl.format(
               "no node is named '{}'; its genus {} has no family in the tree, so no genus transfer was possible"
               "{} (tried {})", "label_text", "_gname",
               pl.lit("" if flags["partial"] else "; partial ground truths are off"), pl.lit(tried)))
           .otherwise(pl.format("no node is named '{}'; its genus {} is in the tree{} (tried {})", "label_text",
                                "_gname", pl.lit("" if flags["partial"] else " (partial ground truths are off)"),
                                pl.lit(tried))))
    todo = todo.select("_row", pl.lit("unmatched").alias("_st"), why.alias("_why"))
    out = state.join(todo, on="_row", how="left")
    return out.with_columns(pl.coalesce("status", "_st").alias("status"),
                            pl.when(pl.col("_st").is_not_null()).then(pl.col("_why")).otherwise(pl.col("detail"))
                            .alias("detail")).drop("_st", "_why")


# --------------------------------------------------------------------------- entry point


def resolve_labels(
    labels: pl.DataFrame,
    names: pl.DataFrame,
    nodes: pl.DataFrame | None = None,
    *,
    links: pl.DataFrame | None = None,
    synonyms: pl.DataFrame | None = None,
    synonym_source: str = "synonym table",
    external_id_to_node: Mapping[str, str] | Callable[[str], str | None] | None = None,
    prefer_kinds: Sequence[str] = PREFER_KINDS,
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
    names, nodes : polars.DataFrame
        The tree's names table and nodes table (``rank`` enables rules 8–11; without
        ``nodes`` every node of ``names`` counts and no rank is known).
    links : polars.DataFrame, optional
        The tree's links table (rule 3).
    synonyms : polars.DataFrame, optional
        ``name`` → ``accepted_name`` pairs from another source (rule 6); ``synonym_source``
        names it in the details.
    external_id_to_node : mapping or callable, optional
        Maps an ``external_id`` to a node id (rule 2), beside the tree's own id prefixes.
    prefer_kinds : sequence of str
        Name kinds in order of preference for rules 4 and 5.
    epithet_variants, genus_transfer, partial : bool
        Run rule 8, rule 9, rules 10–11.

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
    """
    tree = _Tree.of(names, nodes, links)
    state = _initial_state(labels)
    syn = None
    firsts = [state.select(pl.col("_g").alias("_f"))]
    if synonyms is not None and synonyms.height:
        for c in ("name", "accepted_name"):
            if c not in synonyms.columns:
                raise ValueError(f"synonym table is missing column {c!r}; got {synonyms.columns}")
        syn = with_scientific_key(synonyms.select(pl.col("name").cast(pl.String), pl.col("accepted_name").cast(pl.String)),
                                  "name", "_skey")
        syn = syn.filter(pl.col("_skey").is_in(state["_key"].implode()))
        syn = with_scientific_key(syn, "accepted_name", "_akey")
        firsts.append(syn.select(pl.col("_akey").str.split(" ").list.first().alias("_f")))
    if state["common_name"].is_not_null().any():
        firsts.append(with_scientific_key(state.select("common_name"), "common_name", "_c").select(
            pl.col("_c").str.split(" ").list.first().alias("_f")))
    keys = [state.select("_key")]
    if syn is not None:
        keys.append(syn.select(pl.col("_akey").alias("_key")))
    if state["common_name"].is_not_null().any():
        keys.append(with_scientific_key(state.select("common_name"), "common_name", "_key").select("_key"))
    stems = pl.concat(keys).select(_word_stems(pl.col("_key").fill_null("")).explode()).to_series()
    tree.key_names(pl.concat(firsts).to_series().drop_nulls(), stems)

    name_rules = [
        lambda s: _by_names(s, tree, prefer_kinds),
        lambda s: _by_synonyms(s, tree, syn, synonym_source),
        lambda s: _by_common_name(s, tree),
    ]
    if epithet_variants:
        name_rules.append(lambda s: _by_epithet_variants(s, tree))
    if genus_transfer:
        name_rules.append(lambda s: _by_genus_transfer(s, tree))

    state = _by_node_id(state, tree)
    state = _by_external_id(state, tree, external_id_to_node)
    state = _by_linked_label(state, tree)
    for rule in name_rules:
        state = rule(state)
    if partial:
        state = _by_species(state, tree, name_rules)
        state = _by_genus(state, tree)
    state = _explain_unmatched(state, tree, {"epithet_variants": epithet_variants, "genus_transfer": genus_transfer,
                                             "partial": partial})
    out = state.with_columns(pl.col("candidates").fill_null(pl.lit([], dtype=pl.List(pl.String))))
    return conform(out.select([c for c in LINKS_SCHEMA if c in out.columns]), "links")


def resolution_summary(links: pl.DataFrame) -> dict:
    """Counts of a links table: labels, per status, per method (linked labels), partial."""
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
