"""iNaturalist 2021 (iNat21) categories → a seven-rank tree with Latin and English names.

Input
    The ``categories`` of an official iNat21 annotation file (``train.json``,
    ``val.json``, ``train_mini.json``; plain, gzip, bzip2 or xz — recognised by their
    magic bytes — or the published ``.tar.gz``), from a local path or an ``http(s)`` URL.
    Of a tar archive, the member read is the one the caller names (``member``), else the
    one the archive is named after (``train.json`` of ``train.json.tar.gz``), else the only
    ``.json`` file; an archive holding several and naming none is an error, never a guess.
    macOS metadata (``._train.json``, ``__MACOSX/``) is never picked. A truncated or
    corrupt archive or compressed file is an error naming it. Each category has ``id``, ``name`` (the binomial),
    ``common_name``, ``supercategory``, ``kingdom``, ``phylum``, ``class``, ``order``,
    ``family``, ``genus`` and ``specific_epithet``.

Output
    :class:`~taxoforge.trees.tables.TreeTables`: ``inat21:root`` ("Life") → kingdom →
    phylum → class → order → family → genus → species. Species are ``inat21:<category
    id>``; a higher taxon is ``inat21:<rank>:<Name>`` (``inat21:genus:Esox``), or, where
    the same name occurs at that rank under two different lineages, ``inat21:<rank>:<full
    lineage joined by '/'>``. Names: every taxon's Latin name (``scientific``, ``la``), the
    species' ``name`` field when it differs from genus + epithet, and the English
    ``common_name`` (``vernacular``, ``en``) — Snæbjarnarson et al. 2025 [1] §11 matches against both.
    Every species is a leaf at depth 7.
"""

from __future__ import annotations

import io
import json
import os
import tarfile
import tempfile
from pathlib import Path, PurePosixPath

import polars as pl

from taxoforge.files import cache_path, download
from taxoforge.files.archives import (DAMAGED, NOT_DAMAGE, TAR_SUFFIXES, ArchiveError, is_macos_metadata, is_tar,
                                      open_decompressed, single_member)
from taxoforge.sources.ranked import ranked_tree_tables
from taxoforge.trees.tables import TreeTables


__all__ = ["INAT21_RANKS", "Inat21Error", "read_inat21_categories", "inat21_tree", "categories_frame"]

SOURCE = "inat21"
INAT21_RANKS = ["kingdom", "phylum", "class", "order", "family", "genus"]
REQUIRED = ["id", *INAT21_RANKS, "specific_epithet"]


class Inat21Error(ValueError):
    """Malformed iNat21 annotation input; the message names the file and category."""


def _choose_member(path: Path, members: list[tarfile.TarInfo], member: str | None) -> tarfile.TarInfo:
    """The annotation file of a tar archive (see the module docstring); never a guess."""
    cands = [m for m in members if m.isfile() and m.name.lower().endswith(".json") and not is_macos_metadata(m.name)]
    names = [m.name for m in cands]
    if not cands:
        raise Inat21Error(f"{path}: archive holds no .json file"
                          + (f" (only macOS metadata: {[m.name for m in members if m.isfile()][:5]})"
                             if members else ""))
    if member is not None:
        hits = [m for m in cands if m.name == member or PurePosixPath(m.name).name == member]
        if len(hits) != 1:
            raise Inat21Error(f"{path}: {'no' if not hits else 'more than one'} member {member!r}; "
                              f"the annotation files are {names}")
        return hits[0]
    low = path.name.lower()
    stem = next((low[: -len(s)] for s in TAR_SUFFIXES if low.endswith(s)), low)
    expected = stem if stem.endswith(".json") else stem + ".json"
    hits = [m for m in cands if PurePosixPath(m.name).name.lower() == expected]
    if len(hits) == 1:
        return hits[0]
    try:
        chosen = single_member(path, names, "annotation files",
                               "say which split to read (member='train.json', or an archive named after it)")
    except ArchiveError as e:
        raise Inat21Error(str(e)) from None
    return cands[names.index(chosen)]


def _load_json(path: Path, member: str | None = None) -> tuple[dict, str | None]:
    """The parsed annotation file and, for a tar archive, the member it came from."""
    if is_tar(path):
        try:
            with tarfile.open(path) as tf:
                chosen = _choose_member(path, tf.getmembers(), member)
                where = f"{path} (member {chosen.name})"
                fh = tf.extractfile(chosen)
                assert fh is not None
                return _parse(io.TextIOWrapper(fh, encoding="utf-8"), where), chosen.name
        except NOT_DAMAGE:
            raise
        except DAMAGED as e:
            raise Inat21Error(f"{path}: truncated or corrupt archive ({type(e).__name__}: {e})") from e
    if member is not None:
        raise Inat21Error(f"{path}: not a tar archive, so there is no member {member!r} to choose")
    fh, kind = open_decompressed(path)
    try:
        with fh:
            return _parse(io.TextIOWrapper(fh, encoding="utf-8"), str(path)), None
    except NOT_DAMAGE:
        raise
    except DAMAGED as e:
        what = "file" if kind == "file" else f"{kind} file"
        raise Inat21Error(f"{path}: truncated or corrupt {what} ({type(e).__name__}: {e})") from e


def _parse(text: io.TextIOWrapper, where: str) -> dict:
    try:
        return json.load(text)
    except json.JSONDecodeError as e:
        raise Inat21Error(f"{where}: line {e.lineno}: invalid JSON ({e.msg})") from e
    except UnicodeDecodeError as e:
        raise Inat21Error(f"{where}: not UTF-8 text (byte 0x{e.object[e.start]:02x}: {e.reason})") from e


def read_inat21_categories(source: str | os.PathLike, *, cache_dir: str | os.PathLike | None = None,
                           checksum: str | None = None, member: str | None = None) -> tuple[list[dict], str]:
    """The ``categories`` list of an iNat21 annotation file and where it was read from.

    ``source`` is a local path or an ``http(s)://`` URL; a URL is downloaded (with resume,
    the optional ``checksum`` and the server's validators, see :func:`taxoforge.files.download`)
    into ``cache_dir`` (default: a temporary folder), in a slot keyed by the URL. ``member``:
    the annotation file to read from a tar archive holding several (``"train.json"``; module
    docstring).

    Parameters
    ----------
    source : str or os.PathLike
        The source.
    cache_dir : str or os.PathLike, optional
        The cache folder (default: a temporary one).
    checksum : str, optional
        The expected checksum, if known.
    member : str, optional
        The annotation file to read from a tar archive holding several
        (``"train.json"``).

    Returns
    -------
    tuple[list[dict], str]
        The ``categories`` list of an iNat21 annotation file and where it was read from.
    """
    cats, where, _ = _read_categories(source, cache_dir=cache_dir, checksum=checksum, member=member)
    return cats, where


def _read_categories(source: str | os.PathLike, *, cache_dir, checksum,
                     member: str | None = None) -> tuple[list[dict], str, dict | None]:
    """:func:`read_inat21_categories` plus the download's provenance (None for a local file)."""
    src = str(source)
    if src.startswith(("http://", "https://")):
        if cache_dir is None:
            with tempfile.TemporaryDirectory(prefix="inat21-") as tmp:
                got = download(src, cache_path(tmp, src), checksum=checksum)
                cats, where = _categories_of(got.path, src, member)
                return cats, where, got.provenance()
        got = download(src, cache_path(cache_dir, src), checksum=checksum)
        cats, where = _categories_of(got.path, src, member)
        return cats, where, got.provenance()
    path = Path(src)
    if not path.exists():
        raise Inat21Error(f"{path}: no such file")
    cats, where = _categories_of(path, src, member)
    return cats, where, None


def _categories_of(path: Path, src: str, member: str | None) -> tuple[list[dict], str]:
    data, chosen = _load_json(path, member)
    where = f"{src} (member {chosen})" if chosen else src
    return _categories(data, where), where


def _categories(data: object, where: str) -> list[dict]:
    cats = data.get("categories") if isinstance(data, dict) else None
    if not isinstance(cats, list) or not cats:
        raise Inat21Error(f"{where}: no 'categories' list (expected an iNat21 annotation file)")
    for i, c in enumerate(cats):
        if not isinstance(c, dict):
            raise Inat21Error(f"{where}: categories[{i}] is not an object")
        missing = [k for k in REQUIRED if c.get(k) in (None, "")]
        if missing:
            raise Inat21Error(f"{where}: categories[{i}] (id {c.get('id')!r}) is missing {missing}")
    return cats


def categories_frame(categories: list[dict], where: str = "categories") -> pl.DataFrame:
    """The categories as a table with one column per field (strings; ``id`` as text).

    Parameters
    ----------
    categories : list[dict]
        The ``categories`` of an annotation file.
    where : str, optional
        Where they were read from, for messages.

    Returns
    -------
    polars.DataFrame
        The categories as a table with one column per field (strings; ``id`` as text).
    """
    rows = [{"id": str(c["id"]), **{r: str(c[r]).strip() for r in INAT21_RANKS},
             "specific_epithet": str(c["specific_epithet"]).strip(),
             "name": (c.get("name") or "").strip() or None,
             "common_name": (c.get("common_name") or "").strip() or None,
             "supercategory": c.get("supercategory")} for c in categories]
    df = pl.DataFrame(rows, schema={"id": pl.String, **{r: pl.String for r in INAT21_RANKS},
                                    "specific_epithet": pl.String, "name": pl.String,
                                    "common_name": pl.String, "supercategory": pl.String})
    dup = df.with_row_index("i").filter(pl.col("id").is_duplicated())
    if dup.height:
        raise Inat21Error(f"{where}: categories[{dup['i'][1]}]: duplicate category id {dup['id'][0]!r}")
    return df


def _higher_ids(df: pl.DataFrame) -> pl.DataFrame:
    """Add ``<rank>_id`` columns: short ids unless a name recurs under different lineages."""
    out = df
    for i, rank in enumerate(INAT21_RANKS):
        path = pl.concat_str([pl.col(r) for r in INAT21_RANKS[: i + 1]], separator="/")
        lineages = df.select(pl.col(rank), path.alias("_p")).unique().group_by(rank).len()
        clashing = lineages.filter(pl.col("len") > 1)[rank].implode()
        out = out.with_columns(
            pl.when(pl.col(rank).is_in(clashing))
            .then(pl.format(f"{SOURCE}:{rank}:{{}}", path))
            .otherwise(pl.format(f"{SOURCE}:{rank}:{{}}", pl.col(rank)))
            .alias(f"{rank}_id"))
    return out


def inat21_tree(source: str | os.PathLike | list[dict], *, name: str = "inat21",
                cache_dir: str | os.PathLike | None = None, checksum: str | None = None,
                member: str | None = None) -> TreeTables:
    """Build the iNat21 tree from a file, a URL or an already loaded ``categories`` list
    (``member``: see :func:`read_inat21_categories`).

    Parameters
    ----------
    source : str or os.PathLike or list[dict]
        The source.
    name : str, optional
        The name.
    cache_dir : str or os.PathLike, optional
        The cache folder (default: a temporary one).
    checksum : str, optional
        The expected checksum, if known.
    member : str, optional
        See :func:`read_inat21_categories`.

    Returns
    -------
    TreeTables
        The seven-rank tree of the categories, with Latin and English names.
    """
    provenance = None
    if isinstance(source, list):
        cats, where = _categories({"categories": source}, "categories"), "categories"
    else:
        cats, where, provenance = _read_categories(source, cache_dir=cache_dir, checksum=checksum, member=member)
    df = _higher_ids(categories_frame(cats, where)).with_columns(
        pl.format(f"{SOURCE}:{{}}", "id").alias("species_id"),
        pl.concat_str(["genus", "specific_epithet"], separator=" ").alias("binomial"))
    root = f"{SOURCE}:root"
    levels = [*INAT21_RANKS, "species"]
    edge_parts = [df.select(pl.col("kingdom_id").alias("child"), pl.lit(root).alias("parent"))]
    taxa_parts = [pl.DataFrame({"node_id": [root], "label": ["Life"], "rank": [None]},
                               schema={"node_id": pl.String, "label": pl.String, "rank": pl.String})]
    for i, rank in enumerate(levels):
        cid = f"{rank}_id"
        label = "binomial" if rank == "species" else rank
        if i:
            edge_parts.append(df.select(pl.col(cid).alias("child"), pl.col(f"{levels[i - 1]}_id").alias("parent")))
        taxa_parts.append(df.select(pl.col(cid).alias("node_id"), pl.col(label).alias("label"),
                                    pl.lit(rank).alias("rank")))
    edges = pl.concat(edge_parts).unique()
    taxa = pl.concat(taxa_parts).unique("node_id", keep="first")
    names = pl.concat([
        taxa.select("node_id", pl.col("label").alias("name"), pl.lit("scientific").alias("kind"), pl.lit("la").alias("lang")),
        df.filter(pl.col("name").is_not_null() & (pl.col("name") != pl.col("binomial"))).select(
            pl.col("species_id").alias("node_id"), "name", pl.lit("scientific").alias("kind"), pl.lit("la").alias("lang")),
        df.filter(pl.col("common_name").is_not_null()).select(
            pl.col("species_id").alias("node_id"), pl.col("common_name").alias("name"),
            pl.lit("vernacular").alias("kind"), pl.lit("en").alias("lang")),
    ]).unique()
    info = {"source": where, "categories": df.height,
            "supercategories": dict(sorted(df.group_by("supercategory").len().rows(), key=lambda r: str(r[0])))}
    if provenance is not None:  # the release actually read: URL, validators, SHA-256
        info["source_versions"] = {SOURCE: provenance}
    return ranked_tree_tables(name, source=SOURCE, edges=edges, taxa=taxa, names=names, root_label="Life", info=info)
