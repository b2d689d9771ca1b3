"""The dump filter of :func:`.dump.read_dump` as a Spark job, for dumps beyond one machine.

    spark-submit --master 'local[*]' taxoforge/sources/wikidata/dump_spark.py \\
        --input latest-truthy.nt.bz2 --output out/ --lang en [--seed-qids-file seed_qids.txt]

Input
    N-Triples files or folders of them, plain, ``.gz`` or ``.bz2`` (recognised by their magic
    bytes), local paths or URLs ``pyarrow.fs`` reads (``file:``, ``s3a:``/``s3:``, ``hdfs:``,
    ``gs:``); seed QIDs (optional); languages.

Output (Parquet, overwritten)
    ``out/edges`` — ``child, parent, relation``: every P279 edge between items and the P31
    edges of the seeds; ``out/names`` — ``node_id, name, kind, lang``: the labels and aliases,
    in the languages, of every node of those edges and of the seeds; ``out/dropped`` —
    ``child_id, parent_id, detail``: the edges to or from non-items; ``out/counts.json``.
    Each table is one part file per range, ``part-<range>.parquet``, in the input's order.
    :func:`.dump_tables.graph_from_tables` turns them into the graph :func:`.dump.read_dump`
    gives for the same file (it drops the root's out-edges and, with seeds, takes the
    closure: a few million edges, done on one machine in seconds); the tree step runs on it
    unchanged.

Algorithm
    Spark only schedules. The driver cuts the plain files into byte ranges (a compressed
    file is one range) and runs one task per range (:func:`.dump_range.scan_range`): the
    task reads its own bytes, aligned to line starts, cuts them into the local reader's
    blocks and scans them with the reader's compiled scanner and line grammar, so both
    engines agree line for line; it writes its part files itself (temporary name, then
    rename) and returns only counts. The driver then reads the edges' node numbers and runs
    a second round of tasks that cut each range's names to those nodes
    (:func:`.dump_range.filter_names`). No line and no kept row crosses the JVM.

Errors
    As :func:`.dump.read_dump`: a bad used line fails the job with ``file:line: message``
    (the tasks report their lines' counts, so the number is exact in every range and any
    file system) and leaves nothing in ``out``; a corrupt compressed file is named.

The executors need the taxoforge package (numba, numpy, polars, pyarrow): the environment of
the driver, or the same container image.
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import json
import os
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import numpy as np
import polars as pl

from taxoforge.sources.wikidata.dump_range import NAMES_ALL, file_system, filter_names, plan_ranges, scan_range

__all__ = ["run_dump_filter", "read_filter_output", "read_filter_dropped", "line_number", "main", "JOB_FILE"]

#: The file spark-submit runs.
JOB_FILE = os.path.abspath(__file__)


def _local_path(url: str) -> Path | None:
    u = urlparse(url)
    if u.scheme in ("", "file"):
        return Path(unquote(u.path))
    return None


def line_number(path: Path, line: str) -> int | None:
    """The number of the first line of a file equal to ``line``.

    Read only when a job reports an error, to name the line as the local reader does.

    Parameters
    ----------
    path : pathlib.Path
        A plain, ``.gz`` or ``.bz2`` file.
    line : str
        The line, without its end of line.

    Returns
    -------
    int or None
        Counted from 1; ``None`` when no line is equal.
    """
    want = line.encode("utf-8")
    opener = gzip.open if path.suffix == ".gz" else bz2.open if path.suffix == ".bz2" else open
    with opener(path, "rb") as f:
        for i, raw in enumerate(f, 1):
            if raw.rstrip(b"\n").rstrip(b"\r") == want.rstrip(b"\r"):
                return i
    return None


def _remove(output: str) -> None:
    """Remove what an earlier run wrote to ``output`` (any URL :func:`.dump_range.file_system` takes)."""
    from pyarrow import fs

    filesystem, root = file_system(output)
    for name in ("edges", "names", "dropped", NAMES_ALL, "counts.json", "error.txt"):
        where = f"{root.rstrip('/')}/{name}"
        info = filesystem.get_file_info(where)
        if info.type == fs.FileType.Directory:
            filesystem.delete_dir(where)
        elif info.type == fs.FileType.File:
            filesystem.delete_file(where)


def _line_of(results: list[dict], res: dict, idx: int) -> str:
    """``file:line`` of the line ``idx`` of a range: the lines of the ranges before it in its file counted."""
    before = sum(r["lines"] for r in results if r["url"] == res["url"] and r["start"] < res["start"])
    return f"{res['url']}:{before + idx + 1}"


def run_dump_filter(spark, inputs: list[str], output: str, *, langs: tuple[str, ...] = ("en",),
                    seed_numbers: list[int] | None = None, names: bool = True,
                    split_bytes: int | None = None) -> dict:
    """Run the filter (module docstring) on ``inputs`` into ``output``.

    Parameters
    ----------
    spark : pyspark.sql.SparkSession
        The session (local or a cluster).
    inputs : list of str
        Files or folders, local paths or URLs (``file:``, ``s3a:``, ``hdfs:`` …).
    output : str
        The folder for ``edges/``, ``names/``, ``dropped/`` and ``counts.json``.
    langs : tuple of str
        Lower-case language tags of the names.
    seed_numbers : list of int, optional
        The seed entities' QID numbers (their P31 edges are kept).
    names : bool
        Keep labels and aliases.
    split_bytes : int, optional
        The size of a plain file's ranges (default: two ranges a core, each within 64 MiB
        and 128 MiB).

    Returns
    -------
    dict
        Counts: lines, P279 and P31 edges read, non-item edges, names written, odd lines, ranges.

    Raises
    ------
    ValueError
        ``file:line: message`` for the first bad line used (nothing is left in ``output``).
    """
    from functools import partial

    langs = tuple(t.lower() for t in langs)
    seed_list = sorted(set(seed_numbers)) if seed_numbers is not None else None
    _remove(output)
    ranges = plan_ranges(list(inputs), split_bytes, parts=2 * max(1, spark.sparkContext.defaultParallelism))
    sc = spark.sparkContext
    scan = partial(scan_range, output=output, langs=langs, seeds=seed_list, names=names)
    try:
        results = sc.parallelize(ranges, len(ranges)).map(scan).collect() if ranges else []
        results.sort(key=lambda r: r["index"])
        bad = next((r for r in results if r["error"] is not None), None)
        if bad is not None:
            idx, msg = bad["error"]
            raise ValueError(msg if idx is None else f"{_line_of(results, bad, idx)}: {msg}")
        counts = {"lines": sum(r["lines"] for r in results), "p279_edges_read": sum(r["p279"] for r in results),
                  "p31_edges_read": sum(r["p31"] for r in results),
                  "non_item_edges": sum(r["non_items"] for r in results),
                  "odd_lines": sum(r["odd_lines"] for r in results), "ranges": len(ranges)}
        if names:
            nodes = _nodes(output, seed_list)
            for r in results:  # bad names: an error if their node is kept (the first in the input's order)
                for q, idx, msg in r["deferred"]:
                    k = int(np.searchsorted(nodes, q))
                    if k < len(nodes) and nodes[k] == q:
                        raise ValueError(f"{_line_of(results, r, idx)}: {msg}")
            shared = sc.broadcast(nodes)
            counts["names"] = sum(sc.parallelize([r["index"] for r in results], max(1, len(results)))
                                  .map(lambda i: filter_names(output, i, shared.value)).collect())
            shared.destroy()
            filesystem, root = file_system(output)
            filesystem.delete_dir(f"{root.rstrip('/')}/{NAMES_ALL}")
    except BaseException:  # nothing half-written answers the next reader
        _remove(output)
        raise
    counts.update(edges=counts["p279_edges_read"] + counts["p31_edges_read"], langs=list(langs),
                  seeds=len(seed_list) if seed_list is not None else None, inputs=list(inputs))
    filesystem, root = file_system(output)
    tmp = f"{root.rstrip('/')}/.counts.{os.getpid()}.tmp"
    with filesystem.open_output_stream(tmp) as f:
        f.write(json.dumps(counts, indent=2).encode("utf-8"))
    filesystem.move(tmp, f"{root.rstrip('/')}/counts.json")
    return counts


def _nodes(output: str, seeds: list[int] | None) -> np.ndarray:
    """The QID numbers of every node of the edges written, and of the seeds: sorted, unique."""
    import pyarrow.dataset as ds

    filesystem, root = file_system(output)
    edges = pl.from_arrow(ds.dataset(f"{root.rstrip('/')}/edges", filesystem=filesystem, format="parquet")
                          .to_table(columns=["child", "parent"]))
    numbers = [edges[c].str.slice(4).cast(pl.Int64).to_numpy() for c in ("child", "parent")] if edges.height else []
    numbers.append(np.asarray(seeds or (), dtype=np.int64))
    return pl.Series(np.concatenate(numbers)).unique().sort().to_numpy()  # polars: 20x numpy's sort-based unique


def read_filter_output(output: str | os.PathLike) -> tuple:
    """The tables of a finished job, for :func:`.dump_tables.graph_from_tables`.

    Parameters
    ----------
    output : path-like
        The job's output folder.

    Returns
    -------
    tuple
        ``(edges, names, counts)``: two polars tables and a dict.
    """
    import polars as pl

    out = Path(output)
    edges = pl.read_parquet(out / "edges" / "*.parquet")
    names_dir = out / "names"
    names = (pl.read_parquet(names_dir / "*.parquet") if names_dir.is_dir()
             else pl.DataFrame(schema={"node_id": pl.String, "name": pl.String, "kind": pl.String, "lang": pl.String}))
    counts = json.loads((out / "counts.json").read_text(encoding="utf-8"))
    return edges, names, counts


def read_filter_dropped(output: str | os.PathLike):
    """The edges to or from non-items a finished job saw.

    Parameters
    ----------
    output : path-like
        The job's output folder.

    Returns
    -------
    polars.DataFrame
        ``child_id``, ``parent_id``, ``detail`` (empty for a job of an older version).
    """
    import polars as pl

    folder = Path(output) / "dropped"
    schema = {"child_id": pl.String, "parent_id": pl.String, "detail": pl.String}
    if not folder.is_dir() or not any(folder.glob("*.parquet")):
        return pl.DataFrame(schema=schema)
    return pl.read_parquet(folder / "*.parquet").select([pl.col(c).cast(t) for c, t in schema.items()])


def _read_seed_file(path: str) -> list[int]:
    out = []
    for i, raw in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        s = raw.strip()
        if not s or s.startswith("#"):
            continue
        q = s.split()[0].removeprefix("wd:").removeprefix("http://www.wikidata.org/entity/")
        if not (q[:1] == "Q" and q[1:].isdigit() and q[1:2] != "0" and len(q) - 1 <= 18):
            raise ValueError(f"{path}:{i}: expected a QID like Q146, got {s[:80]!r}")
        out.append(int(q[1:]))
    return out


def main(argv: list[str] | None = None) -> int:
    """The job's command line (``spark-submit dump_spark.py --input … --output …``).

    Parameters
    ----------
    argv : list of str, optional
        Arguments (default: the command line's).

    Returns
    -------
    int
        0, or 2 for a bad line (its message also goes to ``<output>/error.txt``).
    """
    from taxoforge.sources.wikidata.ntriples import LANG_RE

    ap = argparse.ArgumentParser(prog="dump_spark.py", description="Filter a Wikidata N-Triples dump with Spark.")
    ap.add_argument("--input", action="append", required=True, help="N-Triples file or folder (repeatable)")
    ap.add_argument("--output", required=True, help="folder for edges/, names/, dropped/ and counts.json")
    ap.add_argument("--split-mb", type=int, help="size of a plain file's ranges in MiB (default: two a core, 64 to 128 MiB)")
    ap.add_argument("--lang", default="en", help="comma-separated language tags")
    ap.add_argument("--seed-qids-file", help="one QID a line (the P31 edges of these entities are kept)")
    ap.add_argument("--no-names", action="store_true")
    ap.add_argument("--master", help="Spark master when not given to spark-submit")
    a = ap.parse_args(argv)
    langs = tuple(t.strip().lower() for t in a.lang.split(",") if t.strip())
    for t in langs:
        if not LANG_RE.match(t):
            ap.error(f"--lang: {t!r} is not a language tag")
    seed_numbers = _read_seed_file(a.seed_qids_file) if a.seed_qids_file else None
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("taxoforge-wikidata-dump")
    if a.master:
        builder = builder.master(a.master)
    spark = builder.getOrCreate()
    try:
        counts = run_dump_filter(spark, a.input, a.output, langs=langs, seed_numbers=seed_numbers, names=not a.no_names,
                                 split_bytes=a.split_mb << 20 if a.split_mb else None)
    except ValueError as e:  # a bad line: the message (file:line) also goes to <output>/error.txt for the caller
        print(f"error: {e}", file=sys.stderr)
        local = _local_path(a.output)
        if local is not None:
            local.mkdir(parents=True, exist_ok=True)
            (local / "error.txt").write_text(f"{e}\n", encoding="utf-8")
        return 2
    finally:
        spark.stop()
    print(json.dumps(counts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
