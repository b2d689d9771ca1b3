"""Reading model outputs: formats, adapters, column mapping, clear errors with file:line."""

from __future__ import annotations

import json

import polars as pl
import pytest

from taxoforge.scores.readers.files import OutputFileError, read_outputs, vlm4bio_path_info


def test_vlm4bio_rows_and_path_info(vlm4bio_files):
    f = next(p for p in vlm4bio_files if "fish-prompting" in str(p) and "cot" in str(p))
    df = read_outputs(f)
    assert df.height == sum(1 for _ in f.open())
    assert set(df["adapter"]) == {"vlm4bio"}
    assert set(df["model"]) == {"llava-v1.5-7b"}
    assert set(df["dataset"]) == {"fish-prompting"}
    assert set(df["prompt"]) == {"cot/selection"}
    first = json.loads(f.open().readline())
    assert df["label"][0] == first["target-class"] and df["output"][0] == first["output"]
    assert df["line"].to_list() == list(range(1, df.height + 1))


def test_path_info_without_prompt_folder():
    info = vlm4bio_path_info("x/results/bird-medium/classification/selection/classification_llava-v1.5-7b_selection_num_20_chunk_0.jsonl")
    assert info == {"model": "llava-v1.5-7b", "dataset": "bird-medium", "prompt": "selection"}


def test_generic_csv_with_column_mapping(tmp_path):
    p = tmp_path / "out.csv"
    p.write_text('qid,response,gt\n1,"A: a dog",n02099601\n2,"multi\nline",n01443537\n3,,n01443537\n')
    df = read_outputs(p, columns={"id": "qid", "output": "response", "label": "gt"}, defaults={"model": "m1"})
    assert df["id"].to_list() == ["1", "2", "3"]
    assert df["line"].to_list() == [2, 3, 5]  # the quoted newline makes record 2 span lines 3–4
    assert df["output"].to_list() == ["A: a dog", "multi\nline", None]
    assert set(df["model"]) == {"m1"} and set(df["dataset"]) == {"out"}  # no dataset named: the file stem


def test_parquet(tmp_path):
    p = tmp_path / "o.parquet"
    pl.DataFrame({"id": ["a", "b"], "output": ["dog", "cat"], "label": ["x", None]}).write_parquet(p)
    df = read_outputs(p)
    assert df["line"].to_list() == [1, 2] and df["label"].to_list() == ["x", None]


def test_malformed_jsonl_names_file_and_line(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text('{"output": "dog", "label": "x"}\n\n{"output": "cat", "label": \n')
    with pytest.raises(OutputFileError, match=r"bad\.jsonl:3: not valid JSON"):
        read_outputs(p)


def test_csv_wrong_field_count_names_line(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("id,output,label\n1,dog,x\n2,cat,y,extra\n")
    with pytest.raises(OutputFileError, match=r"bad\.csv:3: 4 fields, the header has 3"):
        read_outputs(p)


def test_unknown_columns_and_types(tmp_path):
    p = tmp_path / "o.jsonl"
    p.write_text('{"answer": "dog", "truth": "x"}\n')
    with pytest.raises(OutputFileError, match="cannot tell the format"):
        read_outputs(p)
    assert read_outputs(p, columns={"output": "answer", "label": "truth"})["output"].to_list() == ["dog"]
    with pytest.raises(OutputFileError, match=r"o\.xlsx: not an \.xlsx workbook"):
        read_outputs(_touch(tmp_path / "o.xlsx"))
    with pytest.raises(OutputFileError, match=r"cannot tell the file kind .*--format"):
        read_outputs(_touch(tmp_path / "o.txt"))


def _touch(p):
    p.write_text("")
    return p


def test_bytes_that_are_not_utf8_are_named_by_file_and_line(tmp_path):
    j = tmp_path / "latin1.jsonl"
    j.write_bytes(b'{"output": "a dog", "label": "x"}\n{"output": "caf\xe9", "label": "x"}\n')
    with pytest.raises(OutputFileError, match=r"latin1\.jsonl:2: not UTF-8 text .*column 16"):
        read_outputs(j)
    c = tmp_path / "latin1.csv"
    c.write_bytes(b'output,label\n"a dog",x\n"multi\nline caf\xe9",x\n')
    with pytest.raises(OutputFileError, match=r"latin1\.csv:4: not UTF-8 text"):
        read_outputs(c)


def test_byte_order_marks_are_allowed(tmp_path):
    c = tmp_path / "bom.csv"
    c.write_bytes("\ufeffoutput,label\nA: a dog,x\n".encode("utf-8"))
    assert read_outputs(c)["output"].to_list() == ["A: a dog"]
    j = tmp_path / "bom.jsonl"
    j.write_bytes("\ufeff".encode() + b'{"output": "a dog", "label": "x"}\n')
    assert read_outputs(j)["output"].to_list() == ["a dog"]


def test_deeply_nested_json_and_repeated_csv_columns_are_errors_with_lines(tmp_path):
    j = tmp_path / "deep.jsonl"
    j.write_text('{"output": "a", "label": "x"}\n{"output": ' + "[" * 100_000 + "]" * 100_000 + ', "label": "x"}\n')
    with pytest.raises(OutputFileError, match=r"deep\.jsonl:2: JSON nested too deeply"):
        read_outputs(j)
    c = tmp_path / "twice.csv"
    c.write_text("output,label,output\na,b,c\n")
    with pytest.raises(OutputFileError, match=r"twice\.csv:1: .*column twice \(output\)"):
        read_outputs(c)


def test_duplicate_ids_are_an_error_naming_files_and_lines_unless_allowed(tmp_path):
    from taxoforge.scores.readers.files import duplicate_ids
    from taxoforge.scores.readers.sources import read_files

    p = tmp_path / "dup.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in [
        {"id": "a", "model": "m", "output": "x", "label": "y"}, {"id": "b", "model": "m", "output": "x", "label": "y"},
        {"id": "a", "model": "m", "output": "z", "label": "y"}, {"id": "a", "model": "other", "output": "z", "label": "y"},
    ]))
    with pytest.raises(OutputFileError, match=r"(?s)1 sample id occurs more than once .*\n  'a' \(m / dup\): "
                                              r"\S*dup\.jsonl:1, \S*dup\.jsonl:3\n.*--allow-duplicate-ids"):
        read_outputs(p)
    many = tmp_path / "many.jsonl"  # 600 of them: a few, then the count, on short lines
    many.write_text("".join(json.dumps({"id": f"x{i // 2}", "output": "x", "label": "y"}) + "\n" for i in range(1200)))
    with pytest.raises(OutputFileError) as e:
        read_outputs(many)
    msg = str(e.value)
    assert msg.startswith("600 sample ids occur more than once") and "… and 597 more ids" in msg
    assert max(len(line) for line in msg.splitlines()) < 200 and msg.count("many.jsonl") == 6
    df = read_outputs(p, allow_duplicate_ids=True)
    assert df.height == 4 and duplicate_ids(df)["lines"].to_list() == [[1, 3]]
    # across files: the same model and dataset in two files is an error naming both
    q = tmp_path / "other.jsonl"
    q.write_text(json.dumps({"id": "b", "model": "m", "dataset": "dup", "output": "x", "label": "y"}) + "\n")
    r = tmp_path / "first.jsonl"
    r.write_text(json.dumps({"id": "b", "model": "m", "dataset": "dup", "output": "x", "label": "y"}) + "\n")
    with pytest.raises(OutputFileError, match=r"'b' \(m / dup\): \S*first\.jsonl:1, \S*other\.jsonl:1"):
        read_files([r, q])
    assert read_files([r, q], allow_duplicate_ids=True).height == 2


# A classifier's top-k file: no header, the image path then name/probability pairs (and a
# trailing tab), the ground truth only in the image file name.
TOP2 = ("../img/general/acacia_saligna_gold_01.jpg\tAcacia pycnantha\t0.65\tAcacia saligna\t0.30\t\n"
        "../img/general/esox_lucius_obs_02.png\tEsox lucius\t0.91\tEsox niger\t0.05\t\n"
        "../img/general/thumbnail.jpg\tEsox lucius\t0.50\tEsox niger\t0.40\t\n")
NAMES = ["image", "top1", "p1", "top2", "p2"]
FROM_FILE_NAME = r"([^/]+?)_(?:(?:gold|obs)_)?\d+[^/]*$"


def test_headerless_tsv_with_declared_columns_and_a_derived_label(tmp_path):
    p = tmp_path / "top2.tsv"
    p.write_text(TOP2)
    df = read_outputs(p, header=False, column_names=NAMES, columns={"output": "top1", "id": "image"},
                      derive={"label": ("image", FROM_FILE_NAME)}, defaults={"model": "clf"})
    assert df["line"].to_list() == [1, 2, 3]  # the first line is data
    assert df["output"].to_list() == ["Acacia pycnantha", "Esox lucius", "Esox lucius"]
    assert df["label"].to_list() == ["acacia_saligna", "esox_lucius", None]
    assert df["id"][0] == "../img/general/acacia_saligna_gold_01.jpg" and set(df["model"]) == {"clf"}
    assert df["note"].to_list()[:2] == [None, None]
    assert "does not match column 'image'" in df["note"][2] and "thumbnail.jpg" in df["note"][2]
    # a named group 'value' wins over group 1; without groups the whole match is the value
    df = read_outputs(p, header=False, column_names=NAMES, columns={"output": "top1"},
                      derive={"label": ("image", r"(gold|obs)_(?P<value>\d+)"), "model": ("top2", r"Esox|Acacia")})
    assert df["label"].to_list() == ["01", "02", None] and df["model"].to_list() == ["Acacia", "Esox", "Esox"]
    # undeclared fields get positional names
    df = read_outputs(p, header=False, column_names=["image"], columns={"output": "column_2", "label": "column_4"})
    assert df["label"].to_list() == ["Acacia saligna", "Esox niger", "Esox niger"]


def test_headerless_and_derive_errors_name_the_file_and_line(tmp_path):
    p = tmp_path / "top2.tsv"
    p.write_text(TOP2 + "../img/x_gold_01.jpg\tEsox lucius\n")
    with pytest.raises(OutputFileError, match=r"top2.tsv:4: 2 fields, the first line has 6"):
        read_outputs(p, header=False, column_names=NAMES, columns={"output": "top1", "label": "top2"})
    p.write_text(TOP2)
    with pytest.raises(OutputFileError, match="does not compile"):
        read_outputs(p, header=False, column_names=NAMES, columns={"output": "top1"}, derive={"label": ("image", "(")})
    with pytest.raises(OutputFileError, match="no column 'picture'"):
        read_outputs(p, header=False, column_names=NAMES, columns={"output": "top1"},
                     derive={"label": ("picture", FROM_FILE_NAME)})
    with pytest.raises(OutputFileError, match="cannot derive 'colour'"):
        read_outputs(p, header=False, column_names=NAMES, columns={"output": "top1"}, derive={"colour": ("image", "x")})
    j = tmp_path / "x.jsonl"
    j.write_text('{"output": "a", "label": "b"}\n')
    with pytest.raises(OutputFileError, match="apply to CSV/TSV"):
        read_outputs(j, header=False)


def test_a_column_mapping_typo_names_the_column_and_lists_the_files(tmp_path):
    from taxoforge.scores.readers.files import OutputFileError, read_outputs

    f = tmp_path / "o.jsonl"
    f.write_text('{"response": "a", "gt": "b", "mdl": "m"}\n')
    with pytest.raises(OutputFileError, match=r"model=modl: the file has no column 'modl' \(did you mean 'mdl'\?\); "
                                              r"its columns are gt, mdl, response"):
        read_outputs(f, columns={"output": "response", "label": "gt", "model": "modl"})
    with pytest.raises(OutputFileError, match="'labels' is not a canonical column"):
        read_outputs(f, columns={"output": "response", "labels": "gt"})
    rows = read_outputs(f, columns={"output": "response"}, require=("output",))
    assert rows["label"].to_list() == [None] and rows["output"].to_list() == ["a"]


def test_a_ranked_top_k_is_read_as_a_list_and_its_first_is_the_answer(tmp_path):
    from taxoforge.scores.options import InvalidParameterError, ReadOptions
    from taxoforge.scores.readers.files import OutputFileError, read_outputs

    p = tmp_path / "top3.tsv"
    p.write_text("img/a_1.jpg\tAcacia saligna\t0.6\tAcacia pycnantha\t0.3\t\t\n"
                 "img/b_2.jpg\tOlea europaea\t0.9\tAcacia confusa\t0.05\tSalix alba\t0.01\n")
    names = ["image", "top1", "p1", "top2", "p2", "top3", "p3"]
    t = read_outputs(p, options=ReadOptions(header=False, column_names=names, ranked=["top1", "top2", "top3"],
                                            columns={"id": "image", "label": "top2"}))
    assert t["output"].to_list() == ["Acacia saligna", "Olea europaea"]
    assert t["ranked_outputs"].to_list() == [["Acacia saligna", "Acacia pycnantha", None],
                                             ["Olea europaea", "Acacia confusa", "Salix alba"]]
    with pytest.raises(OutputFileError, match=r"--ranked names no column \['top9'\]"):
        read_outputs(p, options=ReadOptions(header=False, column_names=names, ranked=["top1", "top9"],
                                            columns={"id": "image", "label": "top2"}))
    with pytest.raises(InvalidParameterError, match="'ranked' parameter"):
        ReadOptions(ranked="top1,top2")


def _answers_file(path, n, word="oak"):
    with path.open("w") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": str(i), "output": f"A: {word} {i}", "label": "Quercus", "model": "m"}) + "\n")
    return path


def test_a_large_file_is_read_once_per_content(tmp_path, monkeypatch):
    import taxoforge.scores.readers.files as files

    monkeypatch.setenv("TAXOFORGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(files, "READ_MEMO_MIN_BYTES", 1024)
    p = _answers_file(tmp_path / "run.jsonl", 200)
    first = read_outputs(p)
    calls = []
    real = files._read_outputs
    monkeypatch.setattr(files, "_read_outputs", lambda *a: calls.append(a) or real(*a))
    again = read_outputs(p)
    assert calls == [] and again.equals(first) and again.schema == first.schema  # the memo's table, not a parse
    assert read_outputs(p, defaults={"dataset": "d"})["dataset"].unique().to_list() == ["d"]  # other options: read
    assert len(calls) == 1
    _answers_file(p, 200, word="elm")  # the same path, other bytes: read again, never the old table
    changed = read_outputs(p)
    assert len(calls) == 2 and changed["output"][0] == "A: elm 0"
    assert read_outputs(p).equals(changed) and len(calls) == 2


def test_a_file_that_cannot_be_read_is_never_kept(tmp_path, monkeypatch):
    import taxoforge.scores.readers.files as files

    monkeypatch.setenv("TAXOFORGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(files, "READ_MEMO_MIN_BYTES", 1024)
    p = _answers_file(tmp_path / "run.jsonl", 200)
    with p.open("a") as fh:
        fh.write("{not json\n")
    for _ in range(2):
        with pytest.raises(OutputFileError, match=r"run\.jsonl:201"):
            read_outputs(p)
