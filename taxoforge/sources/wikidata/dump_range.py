"""The dump filter over byte ranges of files: the tasks of the Spark job :mod:`.dump_spark`.

A distributed engine only schedules these tasks; each one reads its own bytes, so no line
crosses the engine.

Ranges (:func:`plan_ranges`, on the driver)
    A plain file is cut into byte ranges of about ``split_bytes``; a range ``[a, b)`` owns the
    lines that *start* in it (:func:`.dump_blocks.line_start`): its first line starts at the
    first line start at or after ``a``, its last line is read to its end past ``b``. So the
    ranges of a file give every line once wherever their ends fall — inside a line, inside a
    multi-byte character, on a line's end. A ``.gz`` or ``.bz2`` file cannot be entered in
    the middle: it is one range, decoded by the local reader's own :class:`.dump_blocks.Blocks`.

One range (:func:`scan_range`, on an executor)
    The range's bytes are cut into blocks of whole lines exactly as the local reader's
    (:func:`.dump_blocks.stream_blocks`) and each block goes through the reader's own step
    (the compiled scanner, the line grammar for odd lines, the names' checks: ``scan_planned_block``
    of :mod:`.dump_pass`). The task writes its own Parquet part files — ``edges``, ``dropped``
    and, with names, ``names-all`` (every name in the languages: which are wanted is known
    only once every edge is read) — each to a temporary name then renamed, and returns only
    counts, its first bad line (as an index into its lines) and its bad names.

Names (:func:`filter_names`, on an executor)
    Once the driver knows the graph's nodes, each ``names-all`` part is cut to the names of
    those nodes and written to ``names``.

Files are read and written through ``pyarrow.fs`` (local paths, ``file:``, ``s3:``/``s3a:``,
``hdfs:``, ``gs:``), so the job takes any URL it took when Spark read the lines.
"""

from __future__ import annotations

import bz2
import gzip
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from taxoforge.sources.wikidata.dump_blocks import Blocks, compression_of, line_start, stream_blocks
from taxoforge.sources.wikidata.dump_pass import Plan, scan_planned_block
from taxoforge.sources.wikidata.dump_scan import encode_langs

__all__ = ["Range", "file_system", "plan_ranges", "scan_range", "filter_names", "write_part", "NAMES_ALL"]

#: The folder of every name in the languages, before :func:`filter_names` (removed at the end).
NAMES_ALL = "names-all"


def file_system(url: str):
    """The ``pyarrow`` file system of a path or URL, and the path in it.

    Parameters
    ----------
    url : str
        A local path, or a URL (``file:``, ``s3:``, ``s3a:`` (read as ``s3:``), ``hdfs:``, ``gs:`` …).

    Returns
    -------
    tuple
        ``(pyarrow.fs.FileSystem, str)``.
    """
    from pyarrow import fs

    u = urlparse(url)
    if u.scheme in ("", "file"):
        return fs.LocalFileSystem(), str(Path(unquote(u.path) if u.scheme else url).absolute())
    if u.scheme in ("s3a", "s3n"):
        url = "s3" + url[len(u.scheme):]
    return fs.FileSystem.from_uri(url)


@dataclass(frozen=True)
class Range:
    """One task's share of the input.

    Parameters
    ----------
    index : int
        Its place among all ranges (file order, then byte order): the name of its part files.
    url : str
        The file, as given (or found in a folder given).
    start, stop : int
        The bytes ``[start, stop)`` whose lines it owns; ``stop`` is ``None`` for a compressed
        file (read whole).
    kind : str
        ``"none"``, ``"gzip"`` or ``"bzip2"``.
    """

    index: int
    url: str
    start: int
    stop: int | None
    kind: str


def _files(url: str) -> list[tuple[str, int]]:
    from pyarrow import fs

    filesystem, path = file_system(url)
    info = filesystem.get_file_info(path)
    if info.type == fs.FileType.NotFound:
        raise ValueError(f"{url}: no such file or folder")
    if info.type == fs.FileType.Directory:
        found = filesystem.get_file_info(fs.FileSelector(path, recursive=True))
        base = url.rstrip("/")
        return sorted((base + "/" + i.path[len(path.rstrip("/")) + 1:], i.size) for i in found
                      if i.type == fs.FileType.File and not i.base_name.startswith((".", "_")))
    return [(url, info.size)]


def plan_ranges(inputs: list[str], split_bytes: int | None = None, parts: int = 1) -> list[Range]:
    """The ranges of the input files (module docstring).

    Parameters
    ----------
    inputs : list of str
        Files or folders (their files, hidden ones and ``_`` ones left out, in name order).
    split_bytes : int, optional
        The size of a plain file's ranges (default: the plain bytes over ``parts``, within
        64 MiB and 128 MiB: a task costs about a quarter of a second to schedule and write).
    parts : int
        The ranges wanted when ``split_bytes`` is not given (a few for each core).

    Returns
    -------
    list of Range
        In file order, then byte order; an empty file is one empty range.

    Raises
    ------
    ValueError
        For a missing input, a folder without files, or a compression the reader does not read.
    """
    found = []
    for url in inputs:
        files = _files(url)
        if not files:
            raise ValueError(f"{url}: the folder holds no file")
        for file, size in files:
            filesystem, path = file_system(file)
            with filesystem.open_input_stream(path, compression=None) as f:
                found.append((file, size, compression_of(f.read(6), file)))
    if split_bytes is None:
        plain = sum(size for _, size, kind in found if kind == "none")
        split_bytes = max(1 << 26, min(1 << 27, -(-plain // max(1, parts))))
    ranges: list[Range] = []
    for file, size, kind in found:
        if kind != "none":
            ranges.append(Range(len(ranges), file, 0, None, kind))
            continue
        for start in range(0, max(size, 1), max(1, split_bytes)):
            ranges.append(Range(len(ranges), file, start, min(size, start + split_bytes), kind))
    return ranges


def _blocks(r: Range):
    """The blocks of a range, as the local reader cuts them."""
    from pyarrow import fs

    filesystem, path = file_system(r.url)
    if isinstance(filesystem, fs.LocalFileSystem):  # the reader's own blocks: mapped, or its decoders
        with Blocks(Path(path), 1, r.start, r.stop) as blocks:
            yield from blocks
        return
    if r.kind != "none":
        opener = gzip.GzipFile if r.kind == "gzip" else bz2.BZ2File
        with filesystem.open_input_stream(path, compression=None) as raw, opener(fileobj=raw) as f:
            yield from stream_blocks(f)
        return
    if r.stop <= r.start:
        return
    with filesystem.open_input_file(path) as f:
        start = line_start(f, r.start)
        if start is None or start >= r.stop:
            return
        yield from stream_blocks(f, offset=start, stop=r.stop)


def write_part(url: str, folder: str, index: int, table: pa.Table) -> None:
    """Write ``table`` as ``<url>/<folder>/part-<index>.parquet``: to a temporary name, then renamed.

    Parameters
    ----------
    url : str
        The output folder (any URL :func:`file_system` takes).
    folder : str
        The table's folder in it.
    index : int
        The part's number (its range's).
    table : pyarrow.Table
        The rows.
    """
    filesystem, root = file_system(url)
    where = f"{root.rstrip('/')}/{folder}"
    filesystem.create_dir(where, recursive=True)
    final = f"{where}/part-{index:05d}.parquet"
    tmp = f"{where}/.part-{index:05d}.{uuid.uuid4().hex}.tmp"  # not *.parquet: readers skip it
    pq.write_table(table, tmp, filesystem=filesystem, compression="lz4")
    filesystem.move(tmp, final)


def scan_range(r: Range, output: str, langs: tuple[str, ...], seeds: list[int] | None, names: bool) -> dict:
    """Scan one range and write its part files (module docstring).

    Parameters
    ----------
    r : Range
        The range.
    output : str
        The job's output folder.
    langs : tuple of str
        Lower-case tags of the names kept.
    seeds : list of int, optional
        Seed QID numbers (their P31 edges are kept).
    names : bool
        Keep labels and aliases.

    Returns
    -------
    dict
        ``index``, ``url``, ``start``, ``lines``, ``odd_lines``, ``p279``, ``p31``,
        ``non_items``, ``names_read``; ``error``: ``None`` or ``(line index or None, message)``
        for the first bad line (the scan stops there); ``deferred``: ``(QID number, line index,
        message)`` of bad names, an error only if their node is kept.
    """
    table, lens = encode_langs(langs if names else ())
    plan = Plan(path=Path(r.url), want_p31=seeds is not None, seeds=np.asarray(sorted(seeds or ()), dtype=np.int64),
                want_names=names, langs=langs, lang_table=table, lang_lens=lens)
    lines = odd = 0
    p279, p31, name_frames, non_items, deferred = [], [], [], [], []
    error = None
    try:
        for block in _blocks(r):
            res = scan_planned_block(block, plan)
            if res.errors:
                idx, msg = res.errors[0]
                error = (lines + idx, msg)
                break
            p279.append(res.p279)
            p31.append(res.p31)
            if res.names is not None and res.names.height:
                name_frames.append(res.names)
            non_items += [(s, o, why) for _, s, o, why in res.non_items]
            deferred += [(q, lines + idx, msg) for q, idx, msg in res.deferred]
            odd += res.odd_lines
            lines += res.lines
    except ValueError as e:  # a corrupt compressed file: the reader's message names it
        error = (None, str(e))
    if error is not None:
        return {"index": r.index, "url": r.url, "start": r.start, "lines": lines, "error": error, "deferred": []}

    def cat(parts, k):
        return np.concatenate([p[k] for p in parts]).astype(np.int64) if parts else np.empty(0, np.int64)

    c279, q279, c31, q31 = cat(p279, 0), cat(p279, 1), cat(p31, 0), cat(p31, 1)
    edges = pl.DataFrame({"c": np.concatenate([c279, c31]), "p": np.concatenate([q279, q31]),
                          "relation": ["P279"] * len(c279) + ["P31"] * len(c31)},
                         schema={"c": pl.Int64, "p": pl.Int64, "relation": pl.String})
    edges = edges.select(pl.format("wd:Q{}", "c").alias("child"), pl.format("wd:Q{}", "p").alias("parent"), "relation")
    write_part(output, "edges", r.index, edges.to_arrow())
    dropped = pl.DataFrame([list(t) for t in zip(*non_items)] if non_items else [[], [], []],
                           schema={"child_id": pl.String, "parent_id": pl.String, "detail": pl.String})
    write_part(output, "dropped", r.index, dropped.to_arrow())
    names_read = 0
    if names:
        frame = (pl.concat(name_frames) if name_frames else
                 pl.DataFrame(schema={"q": pl.Int64, "kind": pl.Int8, "lang": pl.Int8, "name": pl.String}))
        frame = frame.select("q", "name", pl.Series(["label", "alias"]).gather(frame["kind"]).alias("kind"),
                             pl.Series(list(langs) or [""], dtype=pl.String).gather(frame["lang"]).alias("lang"))
        names_read = frame.height
        write_part(output, NAMES_ALL, r.index, frame.to_arrow())
    return {"index": r.index, "url": r.url, "start": r.start, "lines": lines, "odd_lines": odd, "p279": len(c279),
            "p31": len(c31), "non_items": len(non_items), "names_read": names_read, "error": None,
            "deferred": deferred}


def filter_names(output: str, index: int, nodes: np.ndarray) -> int:
    """Cut the ``names-all`` part ``index`` to the names of ``nodes``, written to ``names``.

    Parameters
    ----------
    output : str
        The job's output folder.
    index : int
        The part's number.
    nodes : numpy.ndarray
        The QID numbers of the graph's nodes and the seeds, sorted and unique.

    Returns
    -------
    int
        The names written.
    """
    filesystem, root = file_system(output)
    frame = pl.from_arrow(pq.read_table(f"{root.rstrip('/')}/{NAMES_ALL}/part-{index:05d}.parquet",
                                        filesystem=filesystem))
    q = frame["q"].to_numpy()
    at = np.minimum(np.searchsorted(nodes, q), max(len(nodes) - 1, 0))
    keep = nodes[at] == q if len(nodes) else np.zeros(len(q), dtype=bool)
    kept = frame.filter(pl.Series(keep)).select(pl.format("wd:Q{}", "q").alias("node_id"), "name", "kind", "lang")
    write_part(output, "names", index, kept.to_arrow())
    return kept.height
