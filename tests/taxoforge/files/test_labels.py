"""read_labels: label-set files of every kind, with line numbers and errors naming the line."""

from __future__ import annotations

import polars as pl
import pytest

from taxoforge.files.labels import LabelFileError, label_column_of, read_labels
from taxoforge.files.records import RecordFileError


def test_text_file_one_label_a_line_without_blanks_and_comments(tmp_path):
    (tmp_path / "a.txt").write_text("# species\nEsox lucius\n\n  Umbra limi  \n")
    t = read_labels(tmp_path / "a.txt")
    assert t["label"].to_list() == ["Esox lucius", "Umbra limi"] and t["line"].to_list() == [2, 4]


def test_csv_tsv_jsonl_parquet_keep_their_other_columns(tmp_path):
    (tmp_path / "b.csv").write_text("image,scientific_name\nx.jpg,Esox lucius\n\ny.jpg,Umbra limi\n")
    t = read_labels(tmp_path / "b.csv")
    assert t.select("label", "image", "line").rows() == [("Esox lucius", "x.jpg", 2), ("Umbra limi", "y.jpg", 4)]
    (tmp_path / "b.tsv").write_text("name\tn\nEsox lucius\t1\n")
    assert read_labels(tmp_path / "b.tsv").select("label", "n").rows() == [("Esox lucius", "1")]
    (tmp_path / "c.jsonl").write_text('{"target-class": "Esox lucius", "image-path": "p.jpg", "box": [1, 2]}\n')
    t = read_labels(tmp_path / "c.jsonl")
    assert t.select("label", "image-path", "box").rows() == [("Esox lucius", "p.jpg", "[1, 2]")]
    pl.DataFrame({"species": ["Esox niger", "Esox lucius"], "k": [1, 2]}).write_parquet(tmp_path / "d.parquet")
    t = read_labels(tmp_path / "d.parquet")
    assert t.select("label", "k", "line").rows() == [("Esox niger", 1, 1), ("Esox lucius", 2, 2)]


def test_a_named_label_column_wins(tmp_path):
    (tmp_path / "e.csv").write_text("label,latin\ncarp,Cyprinus carpio\n")
    assert read_labels(tmp_path / "e.csv")["label"].to_list() == ["carp"]
    t = read_labels(tmp_path / "e.csv", "latin")
    assert t["label"].to_list() == ["Cyprinus carpio"]
    assert label_column_of(["a", "species"]) == "species" and label_column_of(["a"], "b") is None


@pytest.mark.parametrize(("name", "text", "match"), [
    ("b.csv", "image,scientific_name\nx.jpg,Esox lucius\ny.jpg\n", r"b.csv:3: 1 fields"),
    ("c.jsonl", '{"target-class": "Esox lucius"}\n{oops\n', r"c.jsonl:2: not valid JSON"),
    ("c2.jsonl", '["Esox lucius"]\n', r"c2.jsonl:1: expected a JSON object"),
    ("d.csv", "foo\nbar\n", "no label column; the columns are foo"),
    ("e.txt", "# only a comment\n\n", "no labels"),
    ("f.csv", "label\n", "no labels"),
    ("g.xlsx", "x", "unknown label file type '.xlsx'"),
])
def test_errors_name_the_file_and_line(tmp_path, name, text, match):
    (tmp_path / name).write_text(text)
    with pytest.raises(LabelFileError, match=match):
        read_labels(tmp_path / name)


def test_bytes_that_are_not_utf8_name_the_line(tmp_path):
    (tmp_path / "h.txt").write_bytes("Esox lucius\n".encode() + b"Umbra \xff limi\n")
    with pytest.raises(LabelFileError, match=r"h.txt:2: not UTF-8 text") as e:
        read_labels(tmp_path / "h.txt")
    assert isinstance(e.value, RecordFileError) and isinstance(e.value, ValueError)


def test_a_missing_file_and_a_bad_label_column_are_named(tmp_path):
    with pytest.raises(LabelFileError, match="no such file"):
        read_labels(tmp_path / "nope.txt")
    (tmp_path / "i.csv").write_text("label\nEsox lucius\n")
    with pytest.raises(LabelFileError, match="--label-column 'latin' is not one of them"):
        read_labels(tmp_path / "i.csv", "latin")
