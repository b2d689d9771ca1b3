"""The dump filter of :func:`.dump.read_dump` as a Spark job, for dumps beyond one machine.

    spark-submit --master 'local[*]' taxoforge/sources/wikidata/dump_spark.py \\
        --input latest-truthy.nt.bz2 --output out/ --lang en [--seed-qids-file seed_qids.txt]

Input
    N-Triples files, plain or compressed (recognised by their extension, ``.gz`` or
    ``.bz2``: Hadoop splits bzip2 and plain files between workers; a gzip file is one task),
    any URL Spark reads (``file:``, ``hdfs:``, ``s3a:``); seed QIDs (optional); languages.

Output (Parquet, overwritten)
    ``out/edges`` — ``child, parent, relation``: every P279 edge between items and the P31
    edges of the seeds; ``out/names`` — ``node_id, name, kind, lang``: the labels and aliases,
    in the languages, of every node of those edges and of the seeds; ``out/counts.json``.
    :func:`.dump.graph_from_tables` turns them into the graph :func:`.dump.read_dump` gives
    for the same file (it drops the root's out-edges and, with seeds, takes the closure: a
    few million edges, done on one machine in seconds); the tree step runs on it unchanged.

Algorithm
    One scan of the input (``spark.read.text``): the second term of each line picks the
    lines with the four predicates; Java regular expressions take the canonical lines
    (item IRIs, as :mod:`.dump_scan` does on one machine); the other lines of those
    predicates — rare — get the verdict of :func:`.ntriples.classify` in a Python UDF, so
    both engines agree line for line. Labels with escapes are decoded by
    :func:`.ntriples.unescape`. The kept rows are persisted, the names semi-joined with
    the graph's nodes.

Errors
    As :func:`.dump.read_dump`: a bad used line fails the job with ``file:line: message``
    (the line number is found by reading the file on the driver, only when there is an
    error, for local files; for others the line itself is quoted). One difference: Spark
    decodes text as UTF-8 with replacement characters, so a label that is not UTF-8 is not
    reported.

The executors need pyspark only: the UDFs and :mod:`.ntriples` (standard library) are
shipped to them as code. The driver needs this file and ``ntriples.py`` beside it.
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

try:  # inside the package, or run as a file by spark-submit with ntriples.py beside it / in --py-files
    from taxoforge.sources.wikidata import ntriples
except ImportError:  # pragma: no cover - the spark-submit route
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import ntriples  # type: ignore[no-redef]

__all__ = ["run_dump_filter", "read_filter_output", "line_number", "main", "JOB_FILE", "GRAMMAR_FILE"]

#: The files spark-submit needs: this job, and the line grammar its executors import.
JOB_FILE = os.path.abspath(__file__)
GRAMMAR_FILE = os.path.abspath(ntriples.__file__)

_E = r"<http://www\.wikidata\.org/entity/Q([1-9][0-9]{0,17})>"
_TAIL = r"[ \t]*\.[ \t]*(?:#.*)?\r?$"
# the second term of a line (not a comment), when it is one of the four predicates
_PRED_RE = (r"^[ \t]*(?!#)(?:<[^>]*>|[^ \t<]*)[ \t]*<(" + "|".join(
    v.replace(".", r"\.") for v in ntriples.PREDICATE_IRIS.values()) + r")>")
_EDGE_RE = r"^[ \t]*" + _E + r"[ \t]*<http://www\.wikidata\.org/prop/direct/P(?:279|31)>[ \t]*" + _E + _TAIL
_NAME_RE = (r"^[ \t]*" + _E + r"[ \t]*<http://www\.w3\.org/(?:2000/01/rdf-schema#label|2004/02/skos/core#altLabel)>"
            r"[ \t]*\"((?:[^\"\\\r\n]|\\.)*+)\"@([A-Za-z]+(?:-[A-Za-z0-9]+)*)" + _TAIL)
_KINDS = ("label", "alias")


def _classify_line(line: str, pred: int, seeds, langs: tuple[str, ...]) -> tuple:
    """:func:`.ntriples.classify` as a row: (verdict, a, b, kind, lang, text, message)."""
    try:
        v = ntriples.classify(line.encode("utf-8"), pred, seeds.value.__contains__, langs)
    except ntriples.LineError as e:
        return ("error", None, None, None, None, None, str(e))
    if v[0] in ("P279", "P31"):
        return (v[0], v[1], v[2], None, None, None, None)
    if v[0] == "name":
        return ("name", v[1], None, v[2], v[3], v[4], None)
    if v[0] == "deferred":
        return ("deferred", v[1], None, None, None, None, v[2])
    return (v[0], None, None, None, None, None, None)


def _unescape_row(text: str) -> tuple:
    try:
        return (ntriples.unescape(text), None)
    except ValueError as e:
        return (None, str(e))


def _ship_by_value() -> None:
    """The UDFs and the grammar go to the executors as code, not as references to taxoforge
    (whose package imports numpy, polars, numba…): executors need pyspark and nothing else."""
    from pyspark import cloudpickle

    for module in (ntriples, sys.modules[__name__]):
        if module.__name__ != "__main__":
            cloudpickle.register_pickle_by_value(module)


def _local_path(url: str) -> Path | None:
    u = urlparse(url)
    if u.scheme in ("", "file"):
        return Path(unquote(u.path))
    return None


def line_number(path: Path, line: str) -> int | None:
    """The number of the first line of ``path`` (plain, ``.gz``, ``.bz2``) equal to ``line``:
    read only when a job reports an error, to name the line as the local reader does.

    Parameters
    ----------
    path : Path
        The file.
    line : str
        The text of the line.

    Returns
    -------
    int or None
        The number of the first line of ``path`` (plain, ``.gz``, ``.bz2``) equal to
        ``line``: read only when a job reports an error, to name the line as the local
        reader does.
    """
    want = line.encode("utf-8")
    opener = gzip.open if path.suffix == ".gz" else bz2.open if path.suffix == ".bz2" else open
    with opener(path, "rb") as f:
        for i, raw in enumerate(f, 1):
            if raw.rstrip(b"\n").rstrip(b"\r") == want.rstrip(b"\r"):
                return i
    return None


def _where(file: str, line: str) -> str:
    path = _local_path(file)
    number = line_number(path, line) if path is not None and path.is_file() else None
    return f"{path or file}:{number}" if number else f"{file} (the line {line[:200]!r})"


def run_dump_filter(spark, inputs: list[str], output: str, *, langs: tuple[str, ...] = ("en",),
                    seed_numbers: list[int] | None = None, names: bool = True) -> dict:
    """Run the filter (module docstring) on ``inputs`` into ``output``; returns the counts.
    ``seed_numbers`` are the seed entities' QID numbers; ``langs`` lower-case tags.

    Parameters
    ----------
    spark : object
        A Spark session.
    inputs : list[str]
        N-Triples files or folders.
    output : str
        The folder to write (``edges/``, ``names/``, ``counts.json``).
    langs : tuple[str, ...], optional
        Lower-case language tags of the names kept.
    seed_numbers : list[int], optional
        The seed entities' QID numbers (None: no seeds).
    names : bool, optional
        Whether names are kept.

    Returns
    -------
    dict
        The counts of the job.
    """
    from pyspark import StorageLevel
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    _ship_by_value()
    langs = tuple(t.lower() for t in langs)
    seed_list = sorted(set(seed_numbers)) if seed_numbers is not None else None
    iris = ntriples.PREDICATE_IRIS
    code = (F.when(F.col("p") == iris[1], 1).when(F.col("p") == iris[2], 2).when(F.col("p") == iris[3], 3)
            .when(F.col("p") == iris[4], 4))
    wanted = [1] + ([2] if seed_list is not None else []) + ([3, 4] if names else [])
    lines = (spark.read.text(inputs).select(F.input_file_name().alias("file"), F.col("value").alias("line"))
             .withColumn("mid", F.monotonically_increasing_id())
             .withColumn("p", F.regexp_extract("line", _PRED_RE, 1))
             .where(F.col("p") != "")
             .withColumn("code", code).where(F.col("code").isin(wanted)))
    is_edge = F.col("code") <= 2
    edge_ok = is_edge & F.col("line").rlike(_EDGE_RE)
    name_ok = ~is_edge & F.col("line").rlike(_NAME_RE)
    x = lines.select(
        "file", "mid", "code",
        F.when(edge_ok, "edge").when(name_ok, "name").otherwise("odd").alias("form"),
        F.when(edge_ok, F.regexp_extract("line", _EDGE_RE, 1).cast("long"))
         .when(name_ok, F.regexp_extract("line", _NAME_RE, 1).cast("long")).alias("a"),
        F.when(edge_ok, F.regexp_extract("line", _EDGE_RE, 2).cast("long")).alias("b"),
        F.when(name_ok, F.regexp_extract("line", _NAME_RE, 2)).alias("text"),
        F.when(name_ok, F.lower(F.regexp_extract("line", _NAME_RE, 3))).alias("lang"),
        # the line itself only where it may be needed: odd lines, and names with escapes (for errors)
        F.when((~edge_ok & ~name_ok) | (name_ok & F.col("line").contains("\\")), F.col("line")).alias("line"),
    )
    keep_p31 = F.col("a").isin(seed_list) if seed_list else F.lit(False)
    x = x.where(((F.col("form") == "edge") & ((F.col("code") == 1) | keep_p31))
                | ((F.col("form") == "name") & F.col("lang").isin(list(langs)))
                | (F.col("form") == "odd")).persist(StorageLevel.MEMORY_AND_DISK)

    odd = None
    try:
        # the odd lines, one by one, through the shared grammar
        seeds_b = spark.sparkContext.broadcast(frozenset(seed_list or ()))
        verdict_t = T.StructType([T.StructField("v", T.StringType()), T.StructField("a", T.LongType()),
                                  T.StructField("b", T.LongType()), T.StructField("kind", T.IntegerType()),
                                  T.StructField("lang", T.IntegerType()), T.StructField("text", T.StringType()),
                                  T.StructField("message", T.StringType())])
        classify_udf = F.udf(lambda line, pred: _classify_line(line, pred, seeds_b, langs), verdict_t, useArrow=False)
        odd = (x.where(F.col("form") == "odd").select("file", "mid", "line", classify_udf("line", "code").alias("r"))
               .select("file", "mid", "line", "r.*").persist(StorageLevel.MEMORY_AND_DISK))
        first_error = odd.where(F.col("v") == "error").orderBy("mid").limit(1).collect()
        if first_error:
            e = first_error[0]
            raise ValueError(f"{_where(e['file'], e['line'])}: {e['message']}")

        rel = F.when(F.col("code") == 1, "P279").otherwise("P31")
        edges = (x.where(F.col("form") == "edge")
                 .select(F.col("a").alias("c"), F.col("b").alias("p"), rel.alias("relation"))
                 .unionByName(odd.where(F.col("v").isin("P279", "P31"))
                              .select(F.col("a").alias("c"), F.col("b").alias("p"), F.col("v").alias("relation"))))
        node_id = lambda c: F.concat(F.lit("wd:Q"), F.col(c).cast("string"))  # noqa: E731
        edges_out = edges.select(node_id("c").alias("child"), node_id("p").alias("parent"), "relation")
        edges_out.write.mode("overwrite").parquet(os.path.join(output, "edges"))
        edges_written = spark.read.parquet(os.path.join(output, "edges"))

        counts = {
            "p279_edges_read": edges_written.where(F.col("relation") == "P279").count(),
            "p31_edges_read": edges_written.where(F.col("relation") == "P31").count(),
            "non_item_edges": odd.where(F.col("v") == "non_item").count(),
            "odd_lines": odd.count(),
        }
        if names:
            nodes = (edges_written.select(F.col("child").alias("node_id"))
                     .union(edges_written.select(F.col("parent").alias("node_id"))))
            if seed_list:
                nodes = nodes.union(spark.createDataFrame([(f"wd:Q{q}",) for q in seed_list], ["node_id"]))
            nodes = nodes.distinct()
            unescape_udf = F.udf(_unescape_row, T.StructType([T.StructField("text", T.StringType()),
                                                              T.StructField("message", T.StringType())]),
                                 useArrow=False)
            lang_of = F.create_map(*[v for i, t in enumerate(langs) for v in (F.lit(i), F.lit(t))])
            strict = (x.where(F.col("form") == "name")
                      .select("file", "mid", "line", "a",
                              F.when(F.col("code") == 3, "label").otherwise("alias").alias("kind"),
                              "lang", "text"))
            cols = ["file", "mid", "line", "a", "kind", "lang", "text", "message"]
            plain = strict.where(~F.col("text").contains("\\")).withColumn("message", F.lit(None).cast("string"))
            escaped = (strict.where(F.col("text").contains("\\")).withColumn("u", unescape_udf("text"))
                       .withColumn("text", F.col("u.text")).withColumn("message", F.col("u.message")))
            from_odd = odd.where(F.col("v").isin("name", "deferred")).select(
                "file", "mid", "line", "a", F.when(F.col("kind") == 0, "label").otherwise("alias").alias("kind"),
                F.element_at(lang_of, F.col("lang")).alias("lang"), "text", "message")
            all_names = (plain.select(cols).unionByName(escaped.select(cols)).unionByName(from_odd.select(cols))
                         .withColumn("node_id", node_id("a")).join(nodes, "node_id", "left_semi"))
            bad = all_names.where(F.col("message").isNotNull()).orderBy("mid").limit(1).collect()
            if bad:
                raise ValueError(f"{_where(bad[0]['file'], bad[0]['line'])}: {bad[0]['message']}")
            all_names.where(F.col("message").isNull()).select("node_id", F.col("text").alias("name"), "kind", "lang") \
                .write.mode("overwrite").parquet(os.path.join(output, "names"))
            counts["names"] = spark.read.parquet(os.path.join(output, "names")).count()
    finally:  # cached rows of a failed run must not answer the next run on a changed file
        x.unpersist()
        if odd is not None:
            odd.unpersist()
    counts.update(edges=counts["p279_edges_read"] + counts["p31_edges_read"], langs=list(langs),
                  seeds=len(seed_list) if seed_list is not None else None, inputs=list(inputs))
    with open(os.path.join(_local_path(output) or output, "counts.json"), "w", encoding="utf-8") as f:
        json.dump(counts, f, indent=2)
    return counts


def read_filter_output(output: str | os.PathLike) -> tuple:
    """``(edges, names, counts)`` of a finished job's folder, as polars tables and a dict (for
    :func:`.dump.graph_from_tables`).

    Parameters
    ----------
    output : str or os.PathLike
        The finished job's folder.

    Returns
    -------
    tuple
        ``(edges, names, counts)`` of a finished job's folder, as polars tables and a
        dict (for :func:`.dump.graph_from_tables`).
    """
    import polars as pl

    out = Path(output)
    edges = pl.read_parquet(out / "edges" / "*.parquet")
    names_dir = out / "names"
    names = (pl.read_parquet(names_dir / "*.parquet") if names_dir.is_dir()
             else pl.DataFrame(schema={"node_id": pl.String, "name": pl.String, "kind": pl.String, "lang": pl.String}))
    counts = json.loads((out / "counts.json").read_text(encoding="utf-8"))
    return edges, names, counts


def _read_seed_file(path: str) -> list[int]:
    out = []
    for i, raw in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        s = raw.strip()
        if not s or s.startswith("#"):
            continue
        q = s.split()[0].removeprefix("wd:").removeprefix("http://www.wikidata.org/entity/")
        if not (q[:1] == "Q" and q[1:].isdigit() and q[1:2] != "0" and len(q) - 1 <= ntriples.MAX_QID_DIGITS):
            raise ValueError(f"{path}:{i}: expected a QID like Q146, got {s[:80]!r}")
        out.append(int(q[1:]))
    return out


def main(argv: list[str] | None = None) -> int:
    """The command line of the Spark job (``spark-submit dump_spark.py --input … --output …``).

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default: the process's).

    Returns
    -------
    int
        The exit code.
    """
    ap = argparse.ArgumentParser(prog="dump_spark.py", description="Filter a Wikidata N-Triples dump with Spark.")
    ap.add_argument("--input", action="append", required=True, help="N-Triples file or folder (repeatable)")
    ap.add_argument("--output", required=True, help="folder for edges/, names/ and counts.json")
    ap.add_argument("--lang", default="en", help="comma-separated language tags")
    ap.add_argument("--seed-qids-file", help="one QID a line (the P31 edges of these entities are kept)")
    ap.add_argument("--no-names", action="store_true")
    ap.add_argument("--master", help="Spark master when not given to spark-submit")
    a = ap.parse_args(argv)
    langs = tuple(t.strip().lower() for t in a.lang.split(",") if t.strip())
    for t in langs:
        if not ntriples.LANG_RE.match(t):
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
