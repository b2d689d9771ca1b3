"""Scientific-name linking (VLM4Bio, BioCLIP, iNat21 labels) on top of the generic linker.

Input
    A label set (``dataset``, ``label_id``, ``label_text``, optional ``external_id`` and
    ``common_name``), the ``names`` and ``nodes`` tables of a biological tree, and
    optionally a synonym table (``name``, ``accepted_name``; e.g.
    :func:`taxoforge.sources.coldp.coldp_synonyms`).

Output
    The links table (:data:`~taxoforge.trees.tables.LINKS_SCHEMA`), one row per label,
    ``linked`` / ``ambiguous`` / ``unmatched``, with the ``method`` that decided and a
    ``detail`` a person can read.

Algorithm (the first stage that finds anything decides)
    1. ``exact`` / ``normalised`` — :func:`taxoforge.links.linker.link_labels` over the
       tree's scientific and vernacular names, with :func:`scientific_key` as the normal
       form: case-insensitive ("Esox Americanus"), punctuation and rank markers dropped,
       so "Crepis bakeri subsp. bakeri" equals the trinomial "Crepis bakeri bakeri".
       A scientific name wins over a vernacular one.
    2. ``synonym`` — the label is a synonym: either a ``synonym`` name of the tree itself
       (a ColDP tree) or a name of the external synonym table, whose accepted name is then
       looked up as in stage 1. This recovers names that revisions moved (the VLM4Bio
       *Notropis* shiners).
    3. ``vernacular`` — the label's optional ``common_name`` equals a vernacular name.
    4. ``epithet_variant`` — same genus, epithets equal up to the Latin gender ending
       (*Strigops habroptila* → *S. habroptilus*). Only a unique candidate links.
    5. ``species_fallback`` / ``genus_fallback`` — a trinomial whose species is in the
       tree links to the species, a binomial whose genus is in the tree links to the genus
       node (rank ``genus``); the method says so, so scores can treat it apart.
    Anything left is ``unmatched`` with the reason (genus unknown too, or ambiguous).

The tree's names are first cut down, with vectorised string operations, to those whose
first word is the first word of some label, so linking against the 1.4 M-taxon
iNaturalist tree takes well under a second of Python work.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl

from taxoforge.links.linker import link_labels
from taxoforge.text import normalise_text
from taxoforge.trees.tables import LINKS_SCHEMA, conform

__all__ = [
    "RANK_MARKERS",
    "scientific_key",
    "epithet_stem",
    "link_scientific_names",
    "vlm4bio_labels",
    "bioclip_labels",
    "unmatched_report",
]

# Words that mark a rank inside a name; they carry no identity ("subsp. bakeri" = "bakeri").
RANK_MARKERS = frozenset({"subsp", "ssp", "var", "subvar", "f", "fo", "forma", "morph", "nothosubsp",
                          "nothovar", "cv", "agg", "sp", "spp", "cf", "aff"})
_GENDER_ENDINGS = re.compile(r"(ensis|ense|ior|ius|ium|ia|us|um|a|is|e|er|ra|rum|os|on|es)$")


def scientific_key(text: str | None) -> str:
    """The normal form used to compare scientific names.

    >>> scientific_key("Esox Americanus")
    'esox americanus'
    >>> scientific_key("Crepis bakeri subsp. bakeri")
    'crepis bakeri bakeri'
    """
    words = normalise_text(text).split()
    return " ".join(w for w in words if w not in RANK_MARKERS)


def epithet_stem(epithet: str) -> str:
    """An epithet without its Latin gender ending (``habroptila`` → ``habroptil``).

    >>> epithet_stem("habroptilus") == epithet_stem("habroptila")
    True
    """
    stem = _GENDER_ENDINGS.sub("", epithet)
    return stem if len(stem) >= 3 else epithet


def _first_word_expr(col: str) -> pl.Expr:
    return (pl.col(col).str.to_lowercase().str.replace_all(r"[\p{Pd}_]", " ")
            .str.replace_all(r"[^\p{L}\p{N}\s]", "").str.strip_chars().str.split(" ").list.first())


def link_scientific_names(
    labels: pl.DataFrame,
    names: pl.DataFrame,
    nodes: pl.DataFrame | None = None,
    *,
    synonyms: pl.DataFrame | None = None,
    synonym_source: str = "synonym table",
    epithet_variants: bool = True,
    fallback: bool = True,
) -> pl.DataFrame:
    """Link scientific-name labels to tree nodes (module docstring, stages 1–5).

    Parameters
    ----------
    labels : polars.DataFrame
        ``dataset``, ``label_id``, ``label_text``; optional ``external_id``, ``common_name``.
    names, nodes : polars.DataFrame
        The tree's names table, and its nodes table (needed for ranks in the fallbacks).
    synonyms : polars.DataFrame, optional
        ``name`` → ``accepted_name`` pairs from another source (e.g. a ColDP archive).
    synonym_source : str
        Named in the ``detail`` of synonym links.
    epithet_variants, fallback : bool
        Run stage 4, stage 5.

    Returns
    -------
    polars.DataFrame
        The links table; ``method`` is one of ``exact``, ``normalised``, ``synonym``,
        ``vernacular``, ``epithet_variant``, ``species_fallback``, ``genus_fallback``.

    Examples
    --------
    >>> names = pl.DataFrame({"node_id": ["g", "s"], "name": ["Esox", "Esox lucius"],
    ...                       "kind": ["scientific", "scientific"], "lang": ["la", "la"]})
    >>> nodes = pl.DataFrame({"node_id": ["g", "s"], "rank": ["genus", "species"]})
    >>> labels = pl.DataFrame({"dataset": "d", "label_id": ["1", "2"], "label_text": ["ESOX LUCIUS", "Esox niger"]})
    >>> link_scientific_names(labels, names, nodes).select("label_id", "method", "node_id").rows()
    [('1', 'normalised', 's'), ('2', 'genus_fallback', 'g')]
    """
    for c in ("dataset", "label_id", "label_text"):
        if c not in labels.columns:
            raise ValueError(f"label set is missing column {c!r}")
    keyed = _keyed_labels(labels)
    synonyms = _synonyms_of_labels(synonyms, keyed)
    names = _names_sharing_a_first_word(names, keyed, synonyms)
    sci_names = names.filter(pl.col("kind").is_in(["scientific", "label"]))

    links = _link_names(labels, keyed, names)  # 1. exact / normalised
    links = _link_synonyms(links, names, synonyms, sci_names, synonym_source)  # 2.
    links = _link_common_names(links, names)  # 3.
    if epithet_variants:
        links = _link_epithet_variants(links, sci_names)  # 4.
    if fallback:
        ranks = nodes.select("node_id", "rank") if nodes is not None else None
        links = _link_species_or_genus(links, sci_names, ranks)  # 5.
    links = _explain_unmatched(links, sci_names, epithet_variants)
    return conform(links.select([c for c in LINKS_SCHEMA if c in links.columns]), "links")


def _keyed_labels(labels: pl.DataFrame) -> pl.DataFrame:
    """``labels`` with ``_key``, the :func:`scientific_key` of ``label_text``."""
    return labels.with_columns(
        pl.col("label_text").map_elements(scientific_key, return_dtype=pl.String).alias("_key"))


def _synonyms_of_labels(synonyms: pl.DataFrame | None, keyed: pl.DataFrame) -> pl.DataFrame | None:
    """The rows of the synonym table whose name (``_skey``) is a label's key; ``None`` when
    there is no synonym table or it is empty."""
    if synonyms is None or not synonyms.height:
        return None
    syn = synonyms.select("name", "accepted_name").with_columns(
        pl.col("name").map_elements(scientific_key, return_dtype=pl.String).alias("_skey"))
    return syn.filter(pl.col("_skey").is_in(keyed["_key"].implode()))


def _names_sharing_a_first_word(names: pl.DataFrame, keyed: pl.DataFrame,
                                synonyms: pl.DataFrame | None) -> pl.DataFrame:
    """The tree's names whose first word is the first word of a label, of its common name or
    of an accepted name it is a synonym of (vectorised), with their ``_key``."""
    firsts = keyed.select(pl.col("_key").str.split(" ").list.first().alias("_f")).unique()
    if "common_name" in keyed.columns:
        firsts = pl.concat([firsts, keyed.select(_first_word_expr("common_name").alias("_f")).drop_nulls()]).unique()
    if synonyms is not None:
        firsts = pl.concat([firsts, synonyms.select(_first_word_expr("accepted_name").alias("_f"))]).unique()
    nm = names.filter(_first_word_expr("name").is_in(firsts["_f"].implode()))
    return nm.with_columns(pl.col("name").map_elements(scientific_key, return_dtype=pl.String).alias("_key"))


def _link_names(labels: pl.DataFrame, keyed: pl.DataFrame, names: pl.DataFrame) -> pl.DataFrame:
    """Stage 1: :func:`~taxoforge.links.linker.link_labels` over the scientific, label and
    vernacular names; the result keeps each label's ``_key`` (and ``common_name``)."""
    main_names = names.filter(pl.col("kind").is_in(["scientific", "label", "vernacular"]))
    base = labels.select("dataset", "label_id", "label_text",
                         *(["external_id"] if "external_id" in labels.columns else []))
    links = link_labels(base, main_names.drop("_key"), prefer_kinds=("scientific", "label", "vernacular"),
                        normalise=scientific_key)
    return links.join(keyed.select("dataset", "label_id", "_key",
                                   *(["common_name"] if "common_name" in keyed.columns else [])),
                      on=["dataset", "label_id"], how="left")


def _link_synonyms(links: pl.DataFrame, names: pl.DataFrame, synonyms: pl.DataFrame | None,
                   sci_names: pl.DataFrame, synonym_source: str) -> pl.DataFrame:
    """Stage 2: a label that is a synonym name of the tree itself, or a name of the synonym
    table whose accepted name is a scientific name of the tree."""
    todo = _pending(links)
    if not todo.height:
        return links
    own = names.filter(pl.col("kind") == "synonym")
    hits = todo.join(own.select("_key", "node_id", pl.col("name").alias("_syn")), on="_key").with_columns(
        pl.format("synonym {} of the tree", "_syn").alias("_detail"))
    if synonyms is not None and synonyms.height:
        acc = synonyms.with_columns(pl.col("accepted_name").map_elements(scientific_key, return_dtype=pl.String)
                                    .alias("_akey"))
        via = todo.join(acc, left_on="_key", right_on="_skey").join(
            sci_names.select(pl.col("_key").alias("_akey"), "node_id"), on="_akey").with_columns(
            pl.format("synonym of {} ({})", "accepted_name", pl.lit(synonym_source)).alias("_detail"))
        hits = pl.concat([hits.select("dataset", "label_id", "node_id", "_detail"),
                          via.select("dataset", "label_id", "node_id", "_detail")])
    return _decide(links, hits.select("dataset", "label_id", "node_id", "_detail"), "synonym")


def _link_common_names(links: pl.DataFrame, names: pl.DataFrame) -> pl.DataFrame:
    """Stage 3: the label's ``common_name`` equals a vernacular name of the tree."""
    todo = _pending(links)
    if not todo.height or "common_name" not in todo.columns:
        return links
    vern = names.filter(pl.col("kind") == "vernacular")
    ck = todo.filter(pl.col("common_name").is_not_null()).with_columns(
        pl.col("common_name").map_elements(normalise_text, return_dtype=pl.String).alias("_ck"))
    vk = vern.with_columns(pl.col("name").map_elements(normalise_text, return_dtype=pl.String).alias("_ck"))
    hits = ck.join(vk.select("_ck", "node_id"), on="_ck").with_columns(
        pl.format("common name {}", "common_name").alias("_detail"))
    return _decide(links, hits.select("dataset", "label_id", "node_id", "_detail"), "vernacular")


def _link_epithet_variants(links: pl.DataFrame, sci_names: pl.DataFrame) -> pl.DataFrame:
    """Stage 4: same genus, epithets equal up to their Latin gender ending."""
    todo = _pending(links)
    if not todo.height:
        return links
    a = _with_epithet_stems(todo, "_key")
    b = _with_epithet_stems(sci_names, "_key")
    hits = a.join(b.select("_stem", "node_id", pl.col("name").alias("_nm")), on="_stem").with_columns(
        pl.format("epithet differs only in its Latin ending from {}", "_nm").alias("_detail"))
    return _decide(links, hits.select("dataset", "label_id", "node_id", "_detail"), "epithet_variant")


def _with_epithet_stems(df: pl.DataFrame, key: str) -> pl.DataFrame:
    """Rows of ``df`` whose ``key`` has at least two words, with ``_stem``: the first word and
    the :func:`epithet_stem` of every other word."""
    w = pl.col(key).str.split(" ")
    return df.filter(w.list.len() >= 2).with_columns(
        pl.concat_str([w.list.first(), w.list.slice(1).list.eval(
            pl.element().map_elements(epithet_stem, return_dtype=pl.String)).list.join(" ")],
            separator=" ").alias("_stem"))


def _link_species_or_genus(links: pl.DataFrame, sci_names: pl.DataFrame, ranks: pl.DataFrame | None) -> pl.DataFrame:
    """Stage 5: a trinomial whose species is in the tree links to the species
    (``species_fallback``), then a binomial whose genus is in the tree to the genus
    (``genus_fallback``); with ``ranks``, only to nodes of that rank."""
    todo = _pending(links)
    if not todo.height:
        return links
    w = pl.col("_key").str.split(" ")
    sp = todo.filter(w.list.len() >= 3).with_columns(w.list.slice(0, 2).list.join(" ").alias("_up"))
    hits_sp = sp.join(sci_names.select(pl.col("_key").alias("_up"), "node_id", pl.col("name").alias("_nm")),
                      on="_up")
    if ranks is not None:
        hits_sp = hits_sp.join(ranks, on="node_id").filter(pl.col("rank") == "species")
    hits_sp = hits_sp.with_columns(pl.format("trinomial not in the tree; linked to its species {}", "_nm")
                                   .alias("_detail"))
    links = _decide(links, hits_sp.select("dataset", "label_id", "node_id", "_detail"), "species_fallback")
    todo = _pending(links)
    ge = todo.filter(w.list.len() >= 2).with_columns(w.list.first().alias("_up"))
    hits_ge = ge.join(sci_names.select(pl.col("_key").alias("_up"), "node_id", pl.col("name").alias("_nm")),
                      on="_up")
    if ranks is not None:
        hits_ge = hits_ge.join(ranks, on="node_id").filter(pl.col("rank").is_in(["genus", "genushybrid"]))
    hits_ge = hits_ge.with_columns(pl.format("species not in the tree; linked to its genus {} (genus-level "
                                             "fallback)", "_nm").alias("_detail"))
    return _decide(links, hits_ge.select("dataset", "label_id", "node_id", "_detail"), "genus_fallback")


def _explain_unmatched(links: pl.DataFrame, sci_names: pl.DataFrame, epithet_variants: bool) -> pl.DataFrame:
    """The ``detail`` of every label left unmatched: empty, or what was tried and whether its
    genus is in the tree."""
    genus_known = sci_names.select(pl.col("_key").alias("_g")).unique()
    links = links.with_columns(pl.col("_key").str.split(" ").list.first().alias("_g"))
    links = links.join(genus_known.with_columns(pl.lit(True).alias("_gk")), on="_g", how="left")
    tried = "no name, synonym" + (" or epithet-variant" if epithet_variants else "") + " match"
    return links.with_columns(
        pl.when(pl.col("status") == "unmatched")
        .then(pl.when(pl.col("_key") == "").then(pl.lit("empty label"))
              .when(pl.col("_gk").fill_null(False))
              .then(pl.format(f"{tried}; genus {{}} is in the tree (fallback off)", pl.col("_g").str.to_titlecase()))
              .otherwise(pl.format(f"{tried}; genus {{}} is not in the tree either", pl.col("_g").str.to_titlecase())))
        .otherwise(pl.col("detail")).alias("detail"))


def _pending(links: pl.DataFrame) -> pl.DataFrame:
    """The labels still unmatched: ``dataset``, ``label_id``, ``_key`` (and ``common_name``)."""
    keep = ["dataset", "label_id", "_key"] + (["common_name"] if "common_name" in links.columns else [])
    return links.filter(pl.col("status") == "unmatched").select(keep)


def _decide(links: pl.DataFrame, hits: pl.DataFrame, method: str) -> pl.DataFrame:
    """Settle the unmatched labels that have ``hits`` (``dataset``, ``label_id``, ``node_id``,
    ``_detail``) by ``method``: one candidate node links, several make the label ambiguous."""
    if not hits.height:
        return links
    g = hits.group_by("dataset", "label_id").agg(
        pl.col("node_id").unique().sort().alias("_cands"), pl.col("_detail").first())
    g = g.with_columns(
        pl.when(pl.col("_cands").list.len() == 1).then(pl.lit("linked")).otherwise(pl.lit("ambiguous")).alias("_st"))
    out = links.join(g, on=["dataset", "label_id"], how="left")
    upd = (pl.col("status") == "unmatched") & pl.col("_st").is_not_null()
    out = out.with_columns(
        pl.when(upd).then(pl.col("_st")).otherwise(pl.col("status")).alias("status"),
        pl.when(upd).then(pl.lit(method)).otherwise(pl.col("method")).alias("method"),
        pl.when(upd & (pl.col("_st") == "linked")).then(pl.col("_cands").list.first())
        .when(upd).then(None).otherwise(pl.col("node_id")).alias("node_id"),
        pl.when(upd).then(pl.col("_cands")).otherwise(pl.col("candidates")).alias("candidates"),
        pl.when(upd & (pl.col("_st") == "linked")).then(pl.col("_detail"))
        .when(upd).then(pl.format("{}: several nodes match; see candidates", pl.lit(method)))
        .otherwise(pl.col("detail")).alias("detail"),
    )
    return out.drop("_cands", "_detail", "_st")


def unmatched_report(links: pl.DataFrame) -> pl.DataFrame:
    """The labels not linked (unmatched or ambiguous) with their reasons, for metadata and reports."""
    return links.filter(pl.col("status") != "linked").select("dataset", "label_text", "status", "detail",
                                                             "candidates")


# --------------------------------------------------------------------------- label sets

_OPTION = re.compile(r"(?:^|,\s*)\(?([A-Da-d])\)\s*([^,\n]+?)(?=\s*,\s*\(?[A-Da-d]\)|\s*$)")


def _options(question: str) -> list[str]:
    m = re.search(r"Options:\s*(.*?)(?:\.\s*(?:\n|Write|Please|$)|\n|$)", question, re.S)
    if not m:
        return []
    return [o.strip().rstrip(".") for _, o in _OPTION.findall(m.group(1).strip())]


def vlm4bio_labels(folder: str | Path) -> pl.DataFrame:
    """Every species name of VLM4Bio result files under ``folder`` (``target-class`` and the
    multiple-choice options): ``dataset`` = ``vlm4bio-<organism>`` (fish, bird, butterfly),
    ``label_id`` = ``label_text`` = the name as written."""
    folder = Path(folder)
    files = sorted(folder.rglob("*.jsonl"))
    rows: dict[tuple[str, str], None] = {}
    for f in files:
        rel = f.relative_to(folder).parts
        if "results" in rel:
            rel = rel[rel.index("results") + 1:]
        if not rel or len(rel) < 2:
            continue
        organism = rel[0].split("-")[0].lower()
        with open(f, encoding="utf-8") as fh:
            for ln, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    r = json.loads(line)
                except json.JSONDecodeError as e:
                    raise ValueError(f"{f}: line {ln}: invalid JSON ({e.msg})") from e
                if "question" not in r:
                    continue
                names = _options(r.get("question") or "")
                if r.get("target-class"):
                    names.append(str(r["target-class"]).strip())
                for n in names:
                    if n:
                        rows[(f"vlm4bio-{organism}", n)] = None
    if not rows:
        raise ValueError(f"{folder}: no VLM4Bio result rows (*.jsonl with 'question') found")
    ds, txt = zip(*sorted(rows))
    return pl.DataFrame({"dataset": list(ds), "label_id": list(txt), "label_text": list(txt)})


def bioclip_labels(csv_path: str | Path, dataset: str = "bioclip-rare-species") -> pl.DataFrame:
    """Species of a BioCLIP lineage CSV (``scientific_name``, ``common_name``)."""
    df = pl.read_csv(csv_path, infer_schema=False)
    for c in ("scientific_name",):
        if c not in df.columns:
            raise ValueError(f"{csv_path}: missing column {c!r}; found {df.columns}")
    out = df.select(pl.lit(dataset).alias("dataset"), pl.col("scientific_name").alias("label_id"),
                    pl.col("scientific_name").alias("label_text"),
                    (pl.col("common_name") if "common_name" in df.columns else pl.lit(None, dtype=pl.String))
                    .alias("common_name"))
    return out.unique(["dataset", "label_id"], keep="first", maintain_order=True)
