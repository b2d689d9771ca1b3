"""The Spark job of the dump filter, in local mode: the same graph as the one-pass local reader."""

from __future__ import annotations

import bz2
import gzip
import shutil

import pytest

from taxoforge.sources.wikidata.dump import graph_from_tables, read_dump

pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed (the 'spark' extra)")
if shutil.which("java") is None:
    pytest.skip("no Java runtime: Spark needs one (Debian's default-jre-headless, installed by "
                "scripts/install-system-deps.sh)", allow_module_level=True)

from taxoforge.sources.wikidata.dump_spark import (  # noqa: E402
    line_number,
    read_filter_dropped,
    read_filter_output,
    run_dump_filter,
)

pytestmark = pytest.mark.slow

WD = "http://www.wikidata.org/entity/"
P279 = "<http://www.wikidata.org/prop/direct/P279>"
P31 = "<http://www.wikidata.org/prop/direct/P31>"
LABEL = "<http://www.w3.org/2000/01/rdf-schema#label>"
ALIAS = "<http://www.w3.org/2004/02/skos/core#altLabel>"


@pytest.fixture(scope="module")
def spark():
    import os
    import sys

    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the workers run this environment's Python

    s = (SparkSession.builder.master("local[2]").appName("taxoforge-test")
         .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4")
         .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1").getOrCreate())
    yield s
    s.stop()


@pytest.fixture(scope="module")
def dump(tmp_path_factory):
    """A Wikidata-shaped file plus the odd lines both engines must agree on."""
    from benchmarks.generate import wikidata_like_ntriples

    d = tmp_path_factory.mktemp("spark")
    p = d / "gen.nt"
    info = wikidata_like_ntriples(p, 0.002, seed=11, alias_share=0.3, other_lang_share=0.3)
    seed = info["seeds"][0]
    extra = [
        f"<{WD}Q1> {P279} <{WD}Q10> . # a comment",
        f"<{WD}Q10>\t{P279}\t<{WD}Q35120> .",
        f"<{WD}Q35120> {P279} <{WD}Q7> .",  # out of the root: dropped by both
        f"<{WD}Q10> {P279} _:unknown .",
        f"<{WD}P31> {P279} <{WD}Q10> .",
        f"  # <{WD}Q3> {P279} <{WD}Q4> .",
        f"<{WD}{seed}> {P31} <{WD}Q1> .",
        f"<{WD}{seed}> {P31} <http://www.wikidata.org/entity/L1> .",
        f'<{WD}Q1> {LABEL} "one \\"quoted\\" \\u00E9"@en .',
        f'<{WD}Q1> {ALIAS} "eins"@DE . # case of the tag',
        f'<{WD}Q10> {LABEL} "ten"@en .',
        f'<{WD}Q10> {LABEL} "ten"@en .',
        f'<{WD}Q99999999> {LABEL} "not in the graph \\U00110000"@en .',
    ]
    with p.open("a", encoding="utf-8") as f:
        f.write("\n".join(extra) + "\n")
    gz = d / "gen.nt.gz"
    gz.write_bytes(gzip.compress(p.read_bytes()))
    return {"nt": p, "gz": gz, "seeds": info["seeds"][:30]}


def _spark_graph(spark, path, out, **kw):
    seeds = kw.pop("seeds", None)
    paths = [str(p) for p in path] if isinstance(path, list) else [str(path)]
    counts = run_dump_filter(spark, paths, str(out), seed_numbers=[int(q[1:]) for q in seeds] if seeds else None, **kw)
    edges, names, written = read_filter_output(out)
    assert written == counts
    return graph_from_tables(edges, names, seed_qids=seeds, non_items=read_filter_dropped(out)), counts


def test_spark_filter_gives_the_local_readers_graph(spark, dump, tmp_path):
    want = read_dump(dump["nt"])
    got, counts = _spark_graph(spark, dump["nt"], tmp_path / "all")
    assert got.edges.equals(want.edges)
    assert got.names.equals(want.names)
    assert got.dropped.equals(want.dropped) and got.dropped.height >= 3  # every dropped edge, the same reasons
    assert counts["non_item_edges"] == want.info["non_item_edges"]
    assert counts["p279_edges_read"] == want.info["p279_edges_read"]
    assert counts["lines"] == want.info["lines"]
    assert (tmp_path / "all" / "counts.json").is_file()
    assert not (tmp_path / "all" / "names-all").exists()  # every name read goes once the graph's are written
    assert sorted(p.name for p in (tmp_path / "all" / "edges").iterdir()) == [
        f"part-{i:05d}.parquet" for i in range(counts["ranges"])]  # no temporary file left


def _boundaries(data: bytes) -> dict[str, int]:
    """A byte offset of each kind: on a line's end, inside a line, inside a multi-byte character."""
    mid = len(data) // 2
    end = data.index(b"\n", mid) + 1
    inside = end + 10
    char = next(i for i in range(mid, len(data)) if data[i] & 0xC0 == 0x80)
    return {"line end": end, "inside a line": inside, "inside a character": char}


@pytest.mark.parametrize("where", ["line end", "inside a line", "inside a character"])
def test_spark_ranges_meeting_anywhere_give_the_local_readers_graph(spark, dump, tmp_path, where):
    """Two ranges of one file, meeting on a line's end, inside a line, inside a UTF-8 character."""
    data = dump["nt"].read_bytes()
    split = _boundaries(data)[where]
    assert (data[split - 1] == 10) == (where == "line end")
    assert (data[split] & 0xC0 == 0x80) == (where == "inside a character")
    want = read_dump(dump["nt"], seed_qids=dump["seeds"])
    got, counts = _spark_graph(spark, dump["nt"], tmp_path / "out", seeds=dump["seeds"], split_bytes=split)
    assert counts["ranges"] == -(-len(data) // split)
    assert got.edges.equals(want.edges) and got.names.equals(want.names) and got.dropped.equals(want.dropped)
    assert counts["lines"] == want.info["lines"] and counts["odd_lines"] == want.info["odd_lines"]


def test_spark_many_small_ranges_and_bzip2(spark, dump, tmp_path):
    """Ranges far smaller than a line's neighbourhood (many hold no line start); a .bz2 file is one
    range, decoded by the reader's own decoder."""
    want = read_dump(dump["nt"])
    got, counts = _spark_graph(spark, dump["nt"], tmp_path / "small", split_bytes=65_537)
    assert got.edges.equals(want.edges) and got.names.equals(want.names) and got.dropped.equals(want.dropped)
    bz = tmp_path / "gen.nt.bz2"
    bz.write_bytes(bz2.compress(dump["nt"].read_bytes()))
    got, counts = _spark_graph(spark, bz, tmp_path / "bz2", split_bytes=65_537)
    assert counts["ranges"] == 1
    assert got.edges.equals(want.edges) and got.names.equals(want.names) and got.dropped.equals(want.dropped)
    assert counts["lines"] == want.info["lines"]


def test_spark_filter_over_several_files_gives_the_same_graph(spark, dump, tmp_path):
    """The input cut into parts (one gzip among them) is read as one dump."""
    data = dump["nt"].read_bytes().splitlines(keepends=True)
    parts = [tmp_path / "part-0.nt", tmp_path / "part-1.nt.gz", tmp_path / "part-2.nt"]
    third = len(data) // 3
    parts[0].write_bytes(b"".join(data[:third]))
    parts[1].write_bytes(gzip.compress(b"".join(data[third:2 * third])))
    parts[2].write_bytes(b"".join(data[2 * third:]))
    want = read_dump(dump["nt"])
    got, counts = _spark_graph(spark, parts, tmp_path / "parts", split_bytes=100_003)
    assert got.edges.equals(want.edges) and got.names.equals(want.names) and got.dropped.equals(want.dropped)
    assert counts["lines"] == want.info["lines"]
    folder = tmp_path / "folder"  # a folder of them (and an empty one), read in name order
    folder.mkdir()
    for p in parts:
        p.rename(folder / p.name)
    (folder / "part-3.nt").write_bytes(b"")
    got, counts = _spark_graph(spark, folder, tmp_path / "from-folder")
    assert got.edges.equals(want.edges) and got.names.equals(want.names) and got.dropped.equals(want.dropped)


def test_spark_filter_with_seeds_languages_and_gzip(spark, dump, tmp_path):
    want = read_dump(dump["nt"], seed_qids=dump["seeds"], lang="en,de")
    got, counts = _spark_graph(spark, dump["gz"], tmp_path / "seeds", seeds=dump["seeds"], langs=("en", "de"))
    assert got.edges.equals(want.edges)
    assert got.names.equals(want.names)
    assert got.seed_node_ids == want.seed_node_ids
    assert set(got.names["lang"]) == {"en", "de"}
    assert counts["p31_edges_read"] == want.info["p31_edges_read"]


def test_spark_filter_names_the_bad_line(spark, tmp_path):
    p = tmp_path / "bad.nt"
    p.write_text(f"<{WD}Q2> {P279} <{WD}Q1> .\n<{WD}Q3> {P279} <{WD}Q1 > .\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.nt:2: expected an N-Triples statement"):
        run_dump_filter(spark, [str(p)], str(tmp_path / "out"))
    p.write_text(f"<{WD}Q2> {P279} <{WD}Q1> .\n<{WD}Q1> {LABEL} \"x \\U00110000\"@en .\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.nt:2: the escape \\U00110000 is not a Unicode character"):
        run_dump_filter(spark, [str(p)], str(tmp_path / "out"))
    assert line_number(p, f'<{WD}Q1> {LABEL} "x \\U00110000"@en .') == 2
    assert not any((tmp_path / "out").iterdir())  # a failed run leaves no table to the next


def test_spark_filter_numbers_a_bad_line_in_a_later_range(spark, tmp_path):
    """The line number counts the lines of the ranges before, in a later file too."""
    good = "".join(f"<{WD}Q{i + 2}> {P279} <{WD}Q1> .\n" for i in range(2000))
    first, second = tmp_path / "a.nt", tmp_path / "b.nt"
    first.write_text(good, encoding="utf-8")
    second.write_text(good + f"<{WD}Q3> {P279} <{WD}Q1 > .\n" + good, encoding="utf-8")
    with pytest.raises(ValueError, match=r"b\.nt:2001: expected an N-Triples statement"):
        run_dump_filter(spark, [str(first), str(second)], str(tmp_path / "out"), split_bytes=10_007)
    bad = tmp_path / "bad.nt.gz"
    bad.write_bytes(gzip.compress(good.encode())[:-20])
    with pytest.raises(ValueError, match=r"bad\.nt\.gz: cannot decompress"):
        run_dump_filter(spark, [str(bad)], str(tmp_path / "out"))


def test_spark_filter_of_files_without_a_kept_line(spark, tmp_path):
    """An empty file and one of comments give empty tables, as the local reader does."""
    empty, comments = tmp_path / "empty.nt", tmp_path / "comments.nt"
    empty.write_bytes(b"")
    comments.write_text(f"# nothing\n<{WD}Q2> <http://schema.org/name> \"two\"@en .\n", encoding="utf-8")
    for path, lines in ((empty, 0), (comments, 2)):
        want = read_dump(path)
        got, counts = _spark_graph(spark, path, tmp_path / f"out-{path.stem}")
        assert got.edges.equals(want.edges) and got.names.equals(want.names) and got.edges.height == 0
        assert counts["lines"] == want.info["lines"] == lines
