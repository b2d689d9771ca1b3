"""Catalogue of Life Data Package (ColDP) → taxonomy tree.

Input
    A ColDP archive, as a folder or a ``.zip``, in either flavour:

    * **split**: ``Taxon`` (``ID``, ``parentID``, ``nameID``), ``Name`` (``ID``,
      ``scientificName`` or its parts, ``rank``), optional ``Synonym`` (``taxonID``,
      ``nameID``, ``status``) and ``VernacularName`` (``taxonID``, ``name``, ``language``);
    * **NameUsage**: one ``NameUsage`` table (``ID``, ``parentID``, ``status``,
      ``scientificName``, ``rank``) in which a synonym's ``parentID`` is its accepted
      taxon; optional ``VernacularName``.

    Files are tab-separated (``.tsv``/``.tab``/``.txt``, unquoted) or comma-separated
    (``.csv``, quoted); file names are matched case-insensitively and without ``-``/``_``
    (``vernacular-name.tsv``, ``VernacularName.tsv``); column names case-insensitively and
    with or without the ``col:`` prefix. Files are UTF-8, as ColDP requires, read strictly:
    a byte that is not UTF-8 is an error naming the file, line and byte. A dataset in
    another encoding says so — ``read_coldp(..., encoding="latin-1")`` or an ``encoding``
    key in its ``metadata.yaml`` — and is transcoded on the way in.

Output
    :class:`~taxoforge.trees.tables.TreeTables`: accepted taxa (``col:<ID>``) linked by
    ``parentID``, ranks kept, the scientific name as label; the ``names`` table holds the
    accepted scientific names (kind ``scientific``, lang ``la``), synonyms (``synonym``,
    ``la``), misapplied names (``misapplied``) and vernacular names (``vernacular``,
    language as BCP-47 where a two-letter code exists).

Algorithm
    1. Locate the tables (:mod:`taxoforge.sources.coldp_files`); two files for one table
       (``Taxon.tsv`` and ``data/Taxon.tsv``) are an error naming both. Of a zip only those
       members are extracted, into a temporary folder, after checking every member
       (:func:`taxoforge.files.archives.safe_extract_zip`): an archive with a member that
       is absolute, contains ``..`` or is a link is refused whole; so is one whose needed
       members expand more than ``max_ratio`` (default 100×: a zip bomb) or beyond
       ``max_extract_bytes`` (default 32 GiB) or the free disk space.
    2. Scan only the needed columns lazily with polars, as strings, and collect with the
       streaming engine, so a full release (millions of name usages) stays within memory.
    3. Validate: missing IDs, duplicate taxon IDs and names that do not resolve are errors
       naming the file and line; a ``parentID`` outside the dataset (a partial export)
       makes that taxon a root and is reported (``dangling_parent``); synonyms of unknown
       taxa are reported (``dangling_synonym``) and skipped.
    4. Build the tree with :func:`taxoforge.trees.build.build_tree` (which roots a forest
       under ``col:root`` and breaks any cycle, reporting what it removed).

Names for another tree
    :func:`coldp_names` gives every synonym, misapplied and vernacular name keyed by its
    accepted taxon's scientific name, rank and kingdom; :func:`coldp_names_for_tree` resolves
    those accepted names to the nodes of another tree (e.g. the iNaturalist tree: ColDP
    synonym → accepted name → iNaturalist node by scientific name), ready for
    :func:`taxoforge.links.external_names.merge_names`.

Releases are downloaded with :func:`taxoforge.files.download_file` (checksum, HTTP Range resume).
"""

from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from taxoforge.files.archives import DEFAULT_MAX_EXTRACT_BYTES, DEFAULT_MAX_RATIO, is_macos_metadata
from taxoforge.links.external_names import names_onto_tree
from taxoforge.sources.coldp_files import EXTENSIONS, ColdpError, TableFile, encoding_error, open_tables
from taxoforge.sources.ranked import ranked_tree_tables, report_frame
from taxoforge.trees.ranks import ancestor_at_rank
from taxoforge.trees.tables import TreeTables

__all__ = [
    "ColdpError",
    "ColdpTables",
    "read_coldp",
    "coldp_tree",
    "coldp_synonyms",
    "coldp_names",
    "coldp_names_for_tree",
    "coldp_version",
    "LANG_3_TO_2",
]

SOURCE = "col"
_MAX_METADATA_BYTES = 16 << 20  # a metadata.yaml larger than this is not read
ACCEPTED_STATUSES = {"accepted", "provisionally accepted"}
SYNONYM_STATUSES = {"synonym", "ambiguous synonym"}
MISAPPLIED_STATUSES = {"misapplied"}

# ISO 639-3 (ColDP) → ISO 639-1 (BCP-47 prefers the shortest code) for common languages.
LANG_3_TO_2 = {
    "eng": "en", "deu": "de", "ger": "de", "fra": "fr", "fre": "fr", "spa": "es", "por": "pt",
    "ita": "it", "nld": "nl", "dut": "nl", "jpn": "ja", "zho": "zh", "chi": "zh", "rus": "ru",
    "pol": "pl", "ces": "cs", "cze": "cs", "swe": "sv", "nor": "no", "nob": "nb", "dan": "da",
    "fin": "fi", "hun": "hu", "tur": "tr", "ara": "ar", "heb": "he", "hin": "hi", "kor": "ko",
    "vie": "vi", "ind": "id", "msa": "ms", "tha": "th", "ukr": "uk", "ron": "ro", "rum": "ro",
    "ell": "el", "gre": "el", "cat": "ca", "eus": "eu", "baq": "eu", "glg": "gl", "est": "et",
    "lav": "lv", "lit": "lt", "slk": "sk", "slo": "sk", "slv": "sl", "hrv": "hr", "srp": "sr",
    "bul": "bg", "isl": "is", "ice": "is", "gle": "ga", "cym": "cy", "wel": "cy", "afr": "af",
    "swa": "sw", "fas": "fa", "per": "fa", "mri": "mi", "mao": "mi", "lat": "la",
}

@dataclass
class ColdpTables:
    """The parts of a ColDP archive that make a tree, in the split flavour's shape.

    ``taxa``: ``node_id``, ``parent_id``, ``label``, ``rank``, ``provisional``;
    ``names``: names table rows; ``synonyms``: ``name``, ``accepted_id``, ``accepted_name``,
    ``status``, ``rank``; ``report``: rows for dangling parents/synonyms;
    ``info``: flavour, files, row counts.

    Attributes
    ----------
    taxa : polars.DataFrame
        ``node_id``, ``parent_id``, ``label``, ``rank``, ``provisional``.
    names : polars.DataFrame
        Names table rows.
    synonyms : polars.DataFrame
        ``name``, ``accepted_id``, ``accepted_name``, ``status``, ``rank``.
    report : polars.DataFrame
        Rows for dangling parents/synonyms.
    info : dict
        Flavour, files, row counts.
    """

    taxa: pl.DataFrame
    names: pl.DataFrame
    synonyms: pl.DataFrame
    report: pl.DataFrame
    info: dict = field(default_factory=dict)


def _canon_column(c: str) -> str:
    c = c.strip().lstrip("\ufeff")
    if c.lower().startswith("col:"):
        c = c[4:]
    return c.lower()


def _first_bad_line(path: Path, sep: str) -> str:
    """Locate the first record whose field count differs from the header's (error path only)."""
    import csv

    with open(path, newline="", encoding="utf-8", errors="replace") as fh:
        if sep == ",":
            reader = csv.reader(fh)
            header = next(reader, [])
            for i, row in enumerate(reader, start=2):
                if row and len(row) != len(header):
                    return f"line {reader.line_num}: expected {len(header)} fields, found {len(row)}"
        else:
            header = fh.readline().rstrip("\r\n").split("\t")
            for i, line in enumerate(fh, start=2):
                line = line.rstrip("\r\n")
                if line and len(line.split("\t")) != len(header):
                    return f"line {i}: expected {len(header)} fields, found {len(line.split(chr(9)))}"
    return "could not locate the faulty line"


def _scan(table: TableFile, wanted: dict[str, bool]) -> pl.DataFrame:
    """Read the ``wanted`` columns (canonical lower-case name → required) of one table as
    strings, with a ``_line`` column (the 1-based line of the record; header is line 1).
    The file is UTF-8 (strictly: a byte that is not is an error naming line and byte)."""
    path = table.path
    sep = EXTENSIONS[path.suffix.lower()]
    try:
        lf = pl.scan_csv(path, separator=sep, infer_schema=False, quote_char='"' if sep == "," else None,
                         with_column_names=lambda cols: [_canon_column(c) for c in cols],
                         row_index_name="_line", row_index_offset=2, encoding="utf8")
        cols = lf.collect_schema().names()
    except pl.exceptions.NoDataError as e:
        raise ColdpError(f"{table}: the file is empty (expected a header line naming the columns, "
                         "then one record per line)") from e
    except pl.exceptions.PolarsError as e:
        if "utf-8" in str(e).lower():
            raise encoding_error(table, "utf-8", "") from e
        raise ColdpError(f"{table}: cannot read the header ({e})") from e  # pragma: no cover
    missing = [c for c, req in wanted.items() if req and c not in cols]
    if missing:
        raise ColdpError(f"{table}: missing required column(s) {missing}; found {cols[1:]}")
    sel = ["_line"] + [c for c in wanted if c in cols]
    try:
        df = lf.select(sel).collect(engine="streaming")
    except pl.exceptions.ComputeError as e:
        if "utf-8" in str(e).lower():
            raise encoding_error(table, "utf-8", "") from e
        raise ColdpError(f"{table}: {_first_bad_line(path, sep)} ({str(e).splitlines()[0]})") from e
    for c in wanted:
        if c not in df.columns:
            df = df.with_columns(pl.lit(None, dtype=pl.String).alias(c))
    return df.with_columns(pl.col(c).str.strip_chars() for c in wanted)


def _require_records(df: pl.DataFrame, table: TableFile, what: str) -> None:
    if df.height == 0:
        raise ColdpError(f"{table}: a header but no records: no {what} to build a tree from")


def _require(df: pl.DataFrame, col: str, path: TableFile, what: str) -> None:
    bad = df.filter(pl.col(col).is_null())
    if bad.height:
        raise ColdpError(f"{path}: line {bad['_line'][0]}: {what} is empty ({bad.height} row(s) in all)")


def _unique_ids(df: pl.DataFrame, col: str, path: TableFile) -> None:
    dup = df.filter(pl.col(col).is_duplicated()).sort("_line")
    if dup.height:
        raise ColdpError(f"{path}: line {dup['_line'][1]}: duplicate {col} {dup[col][0]!r} "
                         f"(first at line {dup['_line'][0]})")


def _name_expr() -> pl.Expr:
    """scientificName, or the name assembled from its parsed parts."""
    parts = pl.concat_str([pl.col("genus").fill_null(pl.col("genericname")), pl.col("specificepithet"),
                           pl.col("infraspecificepithet")], separator=" ", ignore_nulls=True)
    return pl.coalesce(pl.col("scientificname"), pl.col("uninomial"),
                       pl.when(parts.str.len_chars() > 0).then(parts))


def _lang_expr(col: str = "language") -> pl.Expr:
    low = pl.col(col).str.to_lowercase()
    return low.replace(LANG_3_TO_2)


_NAME_COLS = {"scientificname": False, "uninomial": False, "genus": False, "genericname": False,
              "specificepithet": False, "infraspecificepithet": False, "rank": False}


def _read_split(files: dict[str, TableFile]) -> ColdpTables:
    tpath, npath = files["taxon"], files.get("name")
    if npath is None:
        raise ColdpError(f"{tpath}: a Taxon table but no Name table beside it")
    taxon = _scan(tpath, {"id": True, "parentid": False, "nameid": True, "provisional": False})
    _require_records(taxon, tpath, "taxa")
    _require(taxon, "id", tpath, "ID")
    _require(taxon, "nameid", tpath, "nameID")
    _unique_ids(taxon, "id", tpath)
    name = _scan(npath, {"id": True, **_NAME_COLS})
    _require(name, "id", npath, "ID")
    _unique_ids(name, "id", npath)
    name = name.with_columns(_name_expr().alias("sci"), pl.col("rank").str.to_lowercase())
    noname = name.filter(pl.col("sci").is_null())
    if noname.height:
        raise ColdpError(f"{npath}: line {noname['_line'][0]}: name {noname['id'][0]!r} has neither "
                         "scientificName nor name parts")
    t = taxon.join(name.select(pl.col("id").alias("nameid"), "sci", "rank"), on="nameid", how="left")
    unresolved = t.filter(pl.col("sci").is_null()).sort("_line")
    if unresolved.height:
        raise ColdpError(f"{tpath}: line {unresolved['_line'][0]}: nameID {unresolved['nameid'][0]!r} "
                         f"is not an ID of {npath.name}")
    taxa = t.select(pl.col("id"), pl.col("parentid"), pl.col("sci").alias("label"), "rank",
                    (pl.col("provisional").str.to_lowercase() == "true").fill_null(False).alias("provisional"))

    synonyms = pl.DataFrame(schema={"taxonid": pl.String, "sci": pl.String, "status": pl.String,
                                    "rank": pl.String, "_line": pl.UInt32})
    dangling_syn = pl.DataFrame(schema={"taxonid": pl.String, "detail": pl.String})
    if "synonym" in files:
        spath = files["synonym"]
        syn = _scan(spath, {"taxonid": True, "nameid": True, "status": False})
        _require(syn, "taxonid", spath, "taxonID")
        _require(syn, "nameid", spath, "nameID")
        syn = syn.join(name.select(pl.col("id").alias("nameid"), "sci", "rank"), on="nameid", how="left")
        bad = syn.filter(pl.col("sci").is_null()).sort("_line")
        if bad.height:
            raise ColdpError(f"{spath}: line {bad['_line'][0]}: nameID {bad['nameid'][0]!r} is not an ID of "
                             f"{npath.name}")
        syn = syn.with_columns(pl.col("status").str.to_lowercase().fill_null("synonym"))
        known = syn["taxonid"].is_in(taxa["id"].implode())
        dangling_syn = syn.filter(~known).select(
            "taxonid", pl.format("{}: line {}: synonym {} of unknown taxon", pl.lit(spath.name), "_line", "sci")
            .alias("detail"))
        synonyms = syn.filter(known).select("taxonid", "sci", "status", "rank", "_line")
    info = {"flavour": "split", "files": {k: v.source for k, v in files.items()},
            "rows": {"taxon": taxon.height, "name": name.height, "synonym": synonyms.height + dangling_syn.height}}
    return _assemble(taxa, synonyms, dangling_syn, files, info)


def _read_nameusage(files: dict[str, TableFile]) -> ColdpTables:
    upath = files["nameusage"]
    nu = _scan(upath, {"id": True, "parentid": False, "status": False, **_NAME_COLS})
    _require_records(nu, upath, "name usages")
    _require(nu, "id", upath, "ID")
    _unique_ids(nu, "id", upath)
    nu = nu.with_columns(_name_expr().alias("sci"), pl.col("rank").str.to_lowercase(),
                         pl.col("status").str.to_lowercase().fill_null("accepted"))
    noname = nu.filter(pl.col("sci").is_null())
    if noname.height:
        raise ColdpError(f"{upath}: line {noname['_line'][0]}: name usage {noname['id'][0]!r} has neither "
                         "scientificName nor name parts")
    accepted = nu.filter(pl.col("status").is_in(list(ACCEPTED_STATUSES)))
    taxa = accepted.select("id", "parentid", pl.col("sci").alias("label"), "rank",
                           (pl.col("status") == "provisionally accepted").alias("provisional"))
    syn = nu.filter(pl.col("status").is_in(list(SYNONYM_STATUSES | MISAPPLIED_STATUSES)))
    no_parent = syn.filter(pl.col("parentid").is_null()).sort("_line")
    if no_parent.height:
        raise ColdpError(f"{upath}: line {no_parent['_line'][0]}: {no_parent['status'][0]} "
                         f"{no_parent['sci'][0]!r} has no parentID (its accepted name usage)")
    known = syn["parentid"].is_in(taxa["id"].implode())
    dangling_syn = syn.filter(~known).select(
        pl.col("parentid").alias("taxonid"),
        pl.format("{}: line {}: synonym {} of unknown or non-accepted usage", pl.lit(upath.name), "_line", "sci")
        .alias("detail"))
    synonyms = syn.filter(known).select(pl.col("parentid").alias("taxonid"), "sci", "status", "rank", "_line")
    other = nu.filter(~pl.col("status").is_in(list(ACCEPTED_STATUSES | SYNONYM_STATUSES | MISAPPLIED_STATUSES)))
    info = {"flavour": "nameusage", "files": {k: v.source for k, v in files.items()},
            "rows": {"nameusage": nu.height}, "skipped_statuses": dict(other.group_by("status").len().rows())}
    return _assemble(taxa, synonyms, dangling_syn, files, info)


def _assemble(taxa: pl.DataFrame, synonyms: pl.DataFrame, dangling_syn: pl.DataFrame,
              files: dict[str, TableFile], info: dict) -> ColdpTables:
    nid = lambda c: pl.concat_str([pl.lit(f"{SOURCE}:"), pl.col(c)])  # noqa: E731
    ids = taxa["id"].implode()
    has_dangling = pl.col("parentid").is_not_null() & ~pl.col("parentid").is_in(ids)
    dangling = taxa.filter(has_dangling)
    taxa = taxa.with_columns(pl.when(has_dangling).then(None).otherwise(pl.col("parentid")).alias("parentid"))
    out_taxa = taxa.select(nid("id").alias("node_id"), pl.when(pl.col("parentid").is_not_null())
                           .then(nid("parentid")).alias("parent_id"), "label", "rank", "provisional")

    vern = pl.DataFrame(schema={"node_id": pl.String, "name": pl.String, "kind": pl.String, "lang": pl.String})
    if "vernacular" in files:
        vpath = files["vernacular"]
        v = _scan(vpath, {"taxonid": True, "name": True, "language": False})
        _require(v, "taxonid", vpath, "taxonID")
        v = v.filter(pl.col("name").is_not_null())
        unknown = v.filter(~pl.col("taxonid").is_in(ids))
        info.setdefault("rows", {})["vernacular_unknown_taxon"] = unknown.height
        vern = v.filter(pl.col("taxonid").is_in(ids)).select(
            nid("taxonid").alias("node_id"), "name", pl.lit("vernacular").alias("kind"),
            _lang_expr("language").alias("lang"))
    sci = out_taxa.select("node_id", pl.col("label").alias("name"), pl.lit("scientific").alias("kind"),
                          pl.lit("la").alias("lang"))
    syn_names = synonyms.select(
        nid("taxonid").alias("node_id"), pl.col("sci").alias("name"),
        pl.when(pl.col("status").is_in(list(MISAPPLIED_STATUSES))).then(pl.lit("misapplied"))
        .otherwise(pl.lit("synonym")).alias("kind"), pl.lit("la").alias("lang"))
    names = pl.concat([sci, syn_names, vern]).unique(maintain_order=True)

    synonyms_out = synonyms.join(out_taxa.select(pl.col("node_id").alias("accepted_id"),
                                                 pl.col("label").alias("accepted_name"),
                                                 pl.col("node_id").str.slice(len(SOURCE) + 1).alias("taxonid")),
                                 on="taxonid", how="left").select(
        pl.col("sci").alias("name"), "accepted_id", "accepted_name", "status", "rank")
    report = pl.concat([
        report_frame("dangling_parent", ("col:" + dangling["id"]), ("col:" + dangling["parentid"]),
                     "parentID is not a taxon of this dataset; the taxon becomes a root"),
        report_frame("dangling_synonym", ("col:" + dangling_syn["taxonid"]), None, dangling_syn["detail"]),
    ])
    info["counts"] = {"accepted_taxa": out_taxa.height, "synonyms": int((syn_names["kind"] == "synonym").sum()),
                      "misapplied": int((syn_names["kind"] == "misapplied").sum()),
                      "vernacular_names": vern.height, "dangling_parents": dangling.height,
                      "dangling_synonyms": dangling_syn.height}
    return ColdpTables(taxa=out_taxa, names=names, synonyms=synonyms_out, report=report, info=info)


def read_coldp(path: str | os.PathLike, *, encoding: str | None = None,
               max_extract_bytes: int = DEFAULT_MAX_EXTRACT_BYTES,
               max_ratio: float = DEFAULT_MAX_RATIO) -> ColdpTables:
    """Read a ColDP folder or zip (either flavour) into :class:`ColdpTables`.

    ``encoding``: the tables' encoding when it is not UTF-8 (ColDP requires UTF-8; an
    ``encoding`` key in ``metadata.yaml`` is read too). Undeclared, a byte that is not
    UTF-8 is an error naming the file, line and byte — never silent mojibake.
    ``max_extract_bytes``, ``max_ratio``: limits of a zip's extraction
    (:func:`taxoforge.files.archives.safe_extract_zip`);
    only the tables the reader needs are extracted.

    Parameters
    ----------
    path : str or os.PathLike
        A ColDP folder or ``.zip``.
    encoding : str, optional
        The text encoding.
    max_extract_bytes : int, optional
        Most bytes the extracted tables of a zip may hold together.
    max_ratio : float, optional
        Highest compression ratio of a table in a zip.

    Returns
    -------
    ColdpTables
        The taxa, names, synonyms and report of the dataset.
    """
    with open_tables(path, encoding=encoding, max_extract_bytes=max_extract_bytes, max_ratio=max_ratio) as (files, how):
        if "taxon" in files:
            tables = _read_split(files)
        elif "nameusage" in files:
            tables = _read_nameusage(files)
        else:
            raise ColdpError(f"{path}: no Taxon or NameUsage table found (looked for taxon.tsv/.csv, "
                             "NameUsage.tsv/.csv, case-insensitively)")
        tables.info["files"] = {k: v.source for k, v in files.items()}
        tables.info["path"] = str(path)
        tables.info.update(how)
    return tables


def coldp_tree(path: str | os.PathLike, *, name: str = "coldp", **read_options) -> TreeTables:
    """Build the tree of accepted taxa of a ColDP folder or zip.

    Parameters
    ----------
    path : str or os.PathLike
        A ColDP folder or ``.zip``.
    name : str, optional
        The name.
    **read_options
        Passed to :func:`read_coldp` (``encoding``, ``max_extract_bytes``,
        ``max_ratio``).

    Returns
    -------
    TreeTables
        The tree of accepted taxa, with their names and the report.

    Examples
    --------
    >>> t = coldp_tree("../shared/data/coldp/coldp_spec_example")  # doctest: +SKIP
    >>> t.nodes.filter(pl.col("rank") == "genus").height  # doctest: +SKIP
    4
    """
    ct = read_coldp(path, **read_options)
    edges = ct.taxa.filter(pl.col("parent_id").is_not_null()).select(
        pl.col("node_id").alias("child"), pl.col("parent_id").alias("parent"))
    return ranked_tree_tables(name, source=SOURCE, edges=edges, taxa=ct.taxa, names=ct.names,
                              report=ct.report, root_label="Catalogue of Life root", info=ct.info)


def coldp_synonyms(path: str | os.PathLike, **read_options) -> pl.DataFrame:
    """Synonym → accepted name table of a ColDP archive (``name``, ``accepted_id``,
    ``accepted_name``, ``status``, ``rank``); misapplied names excluded. ``read_options``:
    those of :func:`read_coldp`.

    Parameters
    ----------
    path : str or os.PathLike
        A ColDP folder or ``.zip``.
    **read_options
        Those of :func:`read_coldp`.

    Returns
    -------
    polars.DataFrame
        Synonym → accepted name table of a ColDP archive (``name``, ``accepted_id``,
        ``accepted_name``, ``status``, ``rank``); misapplied names excluded.
    """
    s = read_coldp(path, **read_options).synonyms
    return s.filter(~pl.col("status").is_in(list(MISAPPLIED_STATUSES)))


def coldp_names(source: str | os.PathLike | ColdpTables) -> pl.DataFrame:
    """Every name of a ColDP archive that is not an accepted scientific name, keyed by its
    accepted taxon: ``accepted_id``, ``accepted_name``, ``accepted_rank``, ``accepted_kingdom``
    (label of the kingdom-rank ancestor, null if none), ``name``, ``kind`` (``synonym``,
    ``misapplied``, ``vernacular``), ``lang`` (``la`` for scientific names; vernacular names
    as BCP-47 where a two-letter code exists).

    ``source``: a ColDP folder or zip, or the :class:`ColdpTables` already read.

    Parameters
    ----------
    source : str or os.PathLike or ColdpTables
        A ColDP folder or zip, or the :class:`ColdpTables` already read.

    Returns
    -------
    polars.DataFrame
        Every name of a ColDP archive that is not an accepted scientific name, keyed by
        its accepted taxon: ``accepted_id``, ``accepted_name``, ``accepted_rank``,
        ``accepted_kingdom`` (label of the kingdom-rank ancestor, null if none),
        ``name``, ``kind`` (``synonym``, ``misapplied``, ``vernacular``), ``lang``
        (``la`` for scientific names; vernacular names as BCP-47 where a two-letter code
        exists).

    Examples
    --------
    >>> n = coldp_names("../shared/data/coldp/coldp_spec_example")  # doctest: +SKIP
    >>> n.filter(pl.col("name") == "Leontodon saxatilis")["accepted_name"].to_list()  # doctest: +SKIP
    ['Leontodon taraxacoides']
    """
    ct = source if isinstance(source, ColdpTables) else read_coldp(source)
    taxa = ct.taxa.select("node_id", "parent_id", "label", "rank")
    kingdoms = ancestor_at_rank(taxa, taxa["node_id"], "kingdom")
    accepted = taxa.join(kingdoms, on="node_id", how="left").select(
        pl.col("node_id").alias("accepted_id"), pl.col("label").alias("accepted_name"),
        pl.col("rank").alias("accepted_rank"), pl.col("ancestor_label").alias("accepted_kingdom"))
    other = ct.names.filter(pl.col("kind") != "scientific")
    return other.join(accepted, left_on="node_id", right_on="accepted_id", how="inner").select(
        pl.col("node_id").alias("accepted_id"), "accepted_name", "accepted_rank", "accepted_kingdom",
        "name", "kind", "lang")


def coldp_names_for_tree(source: str | os.PathLike | ColdpTables, tree: TreeTables, *,
                         kinds: tuple[str, ...] = ("synonym", "vernacular")):
    """The synonyms and vernacular names of a ColDP archive placed on the nodes of another
    ``tree`` through their accepted scientific names
    (:func:`taxoforge.links.external_names.names_onto_tree`).

    Returns a :class:`~taxoforge.links.external_names.CarriedNames`; merge its ``names``
    into the tree with :func:`~taxoforge.links.external_names.merge_names`, e.g.::

        carried = coldp_names_for_tree("col-release.zip", inat_tree())
        tree = merge_names(inat_tree(), carried.names, source="col", source_version=coldp_version(...))

    Parameters
    ----------
    source : str or os.PathLike or ColdpTables
        The source.
    tree : TreeTables
        The tree.
    kinds : tuple[str, ...], optional
        The kinds of names to carry (``synonym``, ``vernacular``, ``misapplied``).

    Returns
    -------
    object
        The synonyms and vernacular names of a ColDP archive placed on the nodes of
        another ``tree`` through their accepted scientific names
        (:func:`taxoforge.links.external_names.names_onto_tree`).
    """
    return names_onto_tree(coldp_names(source), tree, kinds=kinds)


def coldp_version(path: str | os.PathLike) -> dict:
    """What identifies a ColDP archive in a snapshot manifest: its path, and ``title``,
    ``version``, ``issued`` from its ``metadata.yaml`` when it has one (folder or zip).

    Parameters
    ----------
    path : str or os.PathLike
        A ColDP folder or ``.zip``.

    Returns
    -------
    dict
        What identifies a ColDP archive in a snapshot manifest: its path, and ``title``,
        ``version``, ``issued`` from its ``metadata.yaml`` when it has one (folder or
        zip).
    """
    import yaml

    path = Path(path)
    out: dict = {"path": str(path)}
    text = None
    if path.is_dir():
        meta = next((p for p in sorted(path.rglob("metadata.yaml")) if len(p.relative_to(path).parts) <= 2), None)
        text = meta.read_text(encoding="utf-8", errors="replace") if meta else None
    elif path.is_file() and zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zf:
            member = next((m for m in zf.infolist() if m.filename.rsplit("/", 1)[-1] == "metadata.yaml"
                           and not is_macos_metadata(m.filename) and m.file_size <= _MAX_METADATA_BYTES), None)
            text = zf.read(member).decode("utf-8", "replace") if member else None
        out["bytes"] = path.stat().st_size
    if text:
        try:
            meta = yaml.safe_load(text) or {}
        except yaml.YAMLError:
            meta = {}
        if isinstance(meta, dict):
            out.update({k: str(meta[k]) for k in ("title", "version", "issued") if meta.get(k) is not None})
    return out

