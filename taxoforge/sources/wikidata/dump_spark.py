"""The dump filter of :func:`.dump.read_dump` as a Spark job, for dumps beyond one machine.

    spark-submit --master 'local[*]' taxoforge/sources/wikidata/dump_spark.py \\
        --input latest-truthy.nt.bz2 --output out/ --lang en [--seed-qids-file seed_qids.txt]

Input
    N-Triples files, plain or compressed (recognised by their extension, ``.gz`` or ``.bz2``:
    Hadoop splits bzip2 and plain files between tasks; a gzip file is one task — cut it into
    parts to spread it), any URL Spark reads (``file:``, ``hdfs:``, ``s3a:``); seed QIDs
    (optional); languages.

Output (Parquet, overwritten)
    ``out/edges`` — ``child, parent, relation``: every P279 edge between items and the P31
    edges of the seeds; ``out/names`` — ``node_id, name, kind, lang``: the labels and aliases,
    in the languages, of every node of those edges and of the seeds; ``out/dropped`` —
    ``child_id, parent_id, detail``: the edges to or from non-items; ``out/counts.json``.
    :func:`.dump_graph.graph_from_tables` turns them into the graph :func:`.dump.read_dump`
    gives for the same file (it drops the root's out-edges and, with seeds, takes the
    closure: a few million edges, done on one machine in seconds); the tree step runs on it
    unchanged.

Algorithm
    Spark reads the lines (``spark.read.text``: Hadoop's splits and decompression) and hands
    them to Python in Arrow batches (``mapInArrow``); each batch is laid end to end and read
    by the local reader's own compiled scanner and line grammar
    (:func:`.dump_pass.scan_lines`), so both engines agree line for line and no Python runs
    per line. The kept rows (edges, names, edges to non-items, bad lines) come back as Arrow
    batches and are written once, by kind (``out/scanned``, removed at the end); the steps
    after read only their kind; the names are semi-joined with the graph's nodes.

Errors
    As :func:`.dump.read_dump`: a bad used line fails the job with ``file:line: message``
    (the line number is found by reading the file on the driver, only when there is an
    error, for local files; for others the line itself is quoted). Spark decodes text as
    UTF-8 with replacement characters, so a label that is not UTF-8 is not reported.

The executors need the taxoforge package (numba, numpy, polars, pyarrow): the environment of
the driver, or the same container image.
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import json
import os
import shutil
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

__all__ = ["run_dump_filter", "read_filter_output", "read_filter_dropped", "line_number", "main", "JOB_FILE",
           "ROWS_SCHEMA"]

#: The file spark-submit runs.
JOB_FILE = os.path.abspath(__file__)

#: The rows the scanning tasks return (one table for every kind of row).
ROWS_SCHEMA = ("kind string, c long, p long, name_kind string, lang string, name string, subject string, "
               "object string, detail string, seq long, lines long")


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


def _where(files: list[str], line: str) -> str:
    for file in files:
        path = _local_path(file)
        if path is not None and path.is_dir():
            candidates = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith((".", "_")))
        else:
            candidates = [path] if path is not None and path.is_file() else []
        for p in candidates:
            number = line_number(p, line)
            if number:
                return f"{p}:{number}"
    return f"{', '.join(files)} (the line {line[:200]!r})"


def _remove(spark, url: str) -> None:
    """Remove a folder the job wrote, through Hadoop's file system (any URL Spark writes)."""
    local = _local_path(url)
    if local is not None:
        shutil.rmtree(local, ignore_errors=True)
        return
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(url)
    path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).delete(path, True)


def _scan_batches(langs: tuple[str, ...], seeds: list[int] | None, names: bool):
    """The function ``mapInArrow`` runs on the executors: Arrow batches of lines in, rows out."""

    def scan(batches):
        from taxoforge.sources.wikidata.dump_pass import scan_lines

        done = 0
        for batch in batches:
            table = scan_lines(batch.column(0), langs=langs, seeds=seeds, names=names, first_line=done)
            done += batch.num_rows
            yield from table.to_batches()

    return scan


def run_dump_filter(spark, inputs: list[str], output: str, *, langs: tuple[str, ...] = ("en",),
                    seed_numbers: list[int] | None = None, names: bool = True) -> dict:
    """Run the filter (module docstring) on ``inputs`` into ``output``.

    Parameters
    ----------
    spark : pyspark.sql.SparkSession
        The session (local or a cluster).
    inputs : list of str
        Files or folders, any URL Spark reads.
    output : str
        The folder for ``edges/``, ``names/``, ``dropped/`` and ``counts.json``.
    langs : tuple of str
        Lower-case language tags of the names.
    seed_numbers : list of int, optional
        The seed entities' QID numbers (their P31 edges are kept).
    names : bool
        Keep labels and aliases.

    Returns
    -------
    dict
        Counts: lines, P279 and P31 edges read, non-item edges, names written, odd lines.

    Raises
    ------
    ValueError
        ``file:line: message`` for the first bad line used.
    """
    from pyspark.sql import functions as F

    langs = tuple(t.lower() for t in langs)
    seed_list = sorted(set(seed_numbers)) if seed_numbers is not None else None
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "100000")
    # one scan of the input: every kept row written once, by kind; the steps below read what they need
    scanned = os.path.join(output, "scanned")  # no leading "_": Spark would call it hidden
    (spark.read.text(inputs).mapInArrow(_scan_batches(langs, seed_list, names), ROWS_SCHEMA)
     .withColumn("part", F.spark_partition_id())
     .write.mode("overwrite").partitionBy("kind").parquet(scanned))
    try:
        # the schema given: a job that kept no row at all wrote no file to infer it from
        rows = spark.read.schema(ROWS_SCHEMA + ", part int").parquet(scanned)
        first = rows.where(F.col("kind") == "error").orderBy("part", "seq").limit(1).collect()
        if first:
            raise ValueError(f"{_where(inputs, first[0]['object'])}: {first[0]['detail']}")
        node_id = lambda c: F.concat(F.lit("wd:Q"), F.col(c).cast("string"))  # noqa: E731
        edges = rows.where(F.col("kind").isin("P279", "P31"))
        edges.select(node_id("c").alias("child"), node_id("p").alias("parent"), F.col("kind").alias("relation")) \
            .write.mode("overwrite").parquet(os.path.join(output, "edges"))
        rows.where(F.col("kind") == "non_item").select(F.col("subject").alias("child_id"),
                                                       F.col("object").alias("parent_id"), "detail") \
            .write.mode("overwrite").parquet(os.path.join(output, "dropped"))
        tally = {r["kind"]: (int(r["n"]), int(r["lines"] or 0), int(r["odd"] or 0)) for r in
                 rows.groupBy("kind").agg(F.count("*").alias("n"), F.sum("lines").alias("lines"),
                                          F.sum("c").alias("odd")).collect()}
        nothing = (0, 0, 0)
        counts = {
            "lines": tally.get("count", nothing)[1],
            "p279_edges_read": tally.get("P279", nothing)[0],
            "p31_edges_read": tally.get("P31", nothing)[0],
            "non_item_edges": tally.get("non_item", nothing)[0],
            "odd_lines": tally.get("count", nothing)[2],
        }
        if names:  # the nodes as QID numbers: the semi-join compares longs, not strings
            nodes = edges.select(F.col("c").alias("q")).union(edges.select(F.col("p").alias("q")))
            if seed_list:
                nodes = nodes.union(spark.createDataFrame([(q,) for q in seed_list], "q long"))
            nodes = nodes.distinct()
            wanted = rows.where(F.col("kind").isin("name", "deferred")).join(nodes, rows["c"] == nodes["q"],
                                                                            "left_semi")
            bad = wanted.where(F.col("kind") == "deferred").orderBy("part", "seq").limit(1).collect()
            if bad:
                raise ValueError(f"{_where(inputs, bad[0]['object'])}: {bad[0]['detail']}")
            wanted.where(F.col("kind") == "name").select(node_id("c").alias("node_id"), "name",
                                                         F.col("name_kind").alias("kind"), "lang") \
                .write.mode("overwrite").parquet(os.path.join(output, "names"))
            counts["names"] = spark.read.parquet(os.path.join(output, "names")).count()
    finally:  # the scanned rows of a failed run must not answer the next run on a changed file
        _remove(spark, scanned)
    counts.update(edges=counts["p279_edges_read"] + counts["p31_edges_read"], langs=list(langs),
                  seeds=len(seed_list) if seed_list is not None else None, inputs=list(inputs))
    with open(os.path.join(_local_path(output) or output, "counts.json"), "w", encoding="utf-8") as f:
        json.dump(counts, f, indent=2)
    return counts


def read_filter_output(output: str | os.PathLike) -> tuple:
    """The tables of a finished job, for :func:`.dump_graph.graph_from_tables`.

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
        counts = run_dump_filter(spark, a.input, a.output, langs=langs, seed_numbers=seed_numbers, names=not a.no_names)
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
