"""Harness outputs read as written: lmms-eval samples of every generation and VLMEvalKit
prediction and judge files (xlsx, QUOTE_ALL TSV, JSON array, CSV), generated from the real
VLM4Bio answers by :mod:`benchmarks.harness_files`, scored with no flag; path conventions,
column paths, letter labels, the harness's own verdict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.harness_files import (HARNESS_KINDS, LMMS_MODEL, VLMEVALKIT_MODEL, expected_names, harness_files,
                                      options_of, vlm4bio_records)
from taxoforge.scores.readers.harness_layouts import (LAYOUT_COLUMNS, column_value, detect_layout, harness_correct,
                                              may_name_a_value, parse_column_path, path_info, row_options,
                                              vlmevalkit_datasets)
from taxoforge.scores.readers.files import OutputFileError, read_outputs


@pytest.fixture(scope="module")
def fish_easy(vlm4bio_files):
    return next(p for p in vlm4bio_files if "fish-easy" in str(p))


@pytest.fixture(scope="module")
def generated(fish_easy, tmp_path_factory):
    return harness_files(fish_easy, tmp_path_factory.mktemp("harness"))


def test_every_generated_layout_reads_with_no_flag_and_names_model_and_dataset_from_its_path(fish_easy, generated):
    native = read_outputs(fish_easy)
    names = expected_names(fish_easy)
    recs = vlm4bio_records(fish_easy)
    for kind, path in generated.items():
        df = read_outputs(path)
        assert df.height == native.height, kind
        assert (df["model"][0], df["dataset"][0]) == names[kind], kind
        assert set(df["model"]) == {names[kind][0]} and set(df["prompt"]) == {"default"}, kind
        assert df["output"].to_list() == native["output"].to_list(), kind  # flattened / unwrapped, unchanged
        assert df["output_type"].unique().to_list() == ["str"], kind
        assert df["id"].to_list() == [str(i) for i in range(df.height)], kind  # doc_id / index
        if kind.startswith("VLMEvalKit"):
            assert [json.loads(o) for o in df["options"]] == [options_of(r["question"]) for r in recs]
            assert df["label"].to_list() == [r["option-gt"] for r in recs]  # VLMEvalKit's answer is the letter
            assert set(df["category"]) == {names[kind][1]}
        # the harness's verdict where it wrote one
        has_verdict = kind.startswith("lmms-eval") or "judge" in kind
        assert df["harness_correct"].is_not_null().all() == has_verdict, kind
    first = generated["lmms-eval v0.4"].read_text().splitlines()[0]
    assert json.loads(first)["target"] in "ABCD" and "doc" not in json.loads(first)  # as v0.4 writes it


def test_the_harness_files_have_the_harnesses_byte_layouts(generated):
    tsv = generated["VLMEvalKit tsv"].read_text(encoding="utf-8").splitlines()
    assert tsv[0].startswith('"index"\t"question"\t"hint"\t"A"') and tsv[1].startswith('"0"\t')
    assert all(f.startswith('"') and f.endswith('"') for f in tsv[1].split("\t"))  # QUOTE_ALL, the empty hint too
    js = generated["VLMEvalKit json"].read_text(encoding="utf-8")
    assert js.startswith("[\n    {\n        \"index\": 0,") and "\"hint\": NaN" in js
    assert generated["VLMEvalKit xlsx"].read_bytes()[:2] == b"PK"
    old = json.loads(generated["lmms-eval v0.3"].read_text().splitlines()[0])
    assert isinstance(old["doc"], dict) and old["resps"] == [[old["filtered_resps"][0]]] and "input" not in old
    v02 = json.loads(generated["lmms-eval v0.2"].read_text())
    assert set(v02) == {"args", "model_configs", "logs", "time"}


def test_harness_files_score_like_the_native_file_with_no_flag(fish_easy, generated, inat_vlm4bio_tree):
    from taxoforge.scores.cited_taxonomy import cite_taxonomy
    from taxoforge.scores.mapping import TaxonomyIndex
    from taxoforge.scores.run import score_file

    cited = cite_taxonomy(inat_vlm4bio_tree)
    index = TaxonomyIndex(cited.taxonomy)
    native = score_file(fish_easy, cited, index=index, meteor=False, ci=None)
    for kind, path in generated.items():
        run = score_file(path, cited, index=index, meteor=False, ci=None)
        assert run.bad_rows.height == 0 and run.samples.height == native.samples.height, (kind, run.bad_rows)
        assert run.samples["correct"].to_list() == native.samples["correct"].to_list(), kind
        assert run.samples["gt_node"].to_list() == native.samples["gt_node"].to_list(), kind
        lb = run.leaderboard.row(0, named=True)
        assert lb["accuracy"] == native.leaderboard["accuracy"][0], kind
        if kind in ("VLMEvalKit tsv", "VLMEvalKit json"):  # no judge table beside them
            assert "harness_agreement" not in run.leaderboard.columns
            assert "mc_label_letter" in run.samples["parse_flags"][0]  # the letter label went through the options
        else:  # agreement of the harness's verdict (the xlsx: its judge's, beside it) with the project's exact match
            verdict = run.samples["harness_correct"].to_list()
            agree = sum((v >= 0.5) == c for v, c in zip(verdict, run.samples["correct"].to_list())) / len(verdict)
            assert lb["harness_n"] == len(verdict) and lb["harness_agreement"] == pytest.approx(agree)
            assert lb["harness_accuracy"] == pytest.approx(sum(verdict) / len(verdict))


def test_rows_of_two_harness_files_of_one_model_and_task_are_never_pooled(generated):
    from taxoforge.scores.readers.sources import read_files

    # two lmms-eval runs of one model and task: the later run is read, never both
    rows = read_files([generated["lmms-eval v0.4"], generated["lmms-eval v0.3"]])
    assert rows.height == 20 and set(rows["file"]) == {str(generated["lmms-eval v0.4"])}
    both = read_files([generated["lmms-eval v0.4"], generated["VLMEvalKit tsv"]])  # different models: two groups
    assert both.group_by("model", "dataset").len().height == 2


def test_layouts_are_told_from_content_not_the_suffix(generated, tmp_path):
    # a VLMEvalKit JSON array saved as .jsonl, an lmms-eval file named .json, a TSV named .csv
    arr = tmp_path / VLMEVALKIT_MODEL / f"{VLMEVALKIT_MODEL}_MMBench_DEV_EN.jsonl"
    arr.parent.mkdir()
    arr.write_text(generated["VLMEvalKit json"].read_text())
    assert read_outputs(arr)["dataset"][0] == "MMBench_DEV_EN"  # an array, whatever the suffix says
    with pytest.raises(OutputFileError, match="not valid JSON"):  # named JSON Lines: read as such
        read_outputs(arr, fmt="jsonl")
    tsv_as_csv = arr.with_name(f"{VLMEVALKIT_MODEL}_AI2D_TEST.csv")
    tsv_as_csv.write_text(generated["VLMEvalKit tsv"].read_text())
    df = read_outputs(tsv_as_csv)
    assert df["dataset"][0] == "AI2D_TEST" and df.height == read_outputs(generated["VLMEvalKit tsv"]).height
    j = tmp_path / "20250101_120000_samples_mmbench_en_dev.json"
    j.write_text(generated["lmms-eval v0.4"].read_text())
    df = read_outputs(j)
    assert df["adapter"][0] == "lmms-eval" and df["dataset"][0] == "mmbench_en_dev"


def test_vlmevalkit_path_conventions_with_underscores_in_both_names():
    ds = vlmevalkit_datasets()
    assert len(ds) > 300 and "MMBench_DEV_EN_V11" in ds and "MME" in ds
    judged = [{"hit": 1}]
    cases = {
        # {work_dir}/{model}/{eval_id}/{model}_{dataset}.xlsx, new and legacy eval ids
        "out/Qwen2-VL-7B-Instruct/T20250101-120000/Qwen2-VL-7B-Instruct_MMBench_DEV_EN_V11.xlsx":
            ("Qwen2-VL-7B-Instruct", "MMBench_DEV_EN_V11"),
        "out/llava_v1.5_7b/T20241121_G7739374c/llava_v1.5_7b_AI2D_TEST.tsv": ("llava_v1.5_7b", "AI2D_TEST"),
        # older: {work_dir}/{model}/{model}_{dataset}.xlsx; an unknown (custom) dataset keeps its whole name
        "out/llava_v1.5_7b/llava_v1.5_7b_My_Custom_Set.xlsx": ("llava_v1.5_7b", "My_Custom_Set"),
        # a loose file: split at a dataset name VLMEvalKit knows
        "somewhere/llava_v1.5_7b_MMBench_DEV_EN_V11.xlsx": ("llava_v1.5_7b", "MMBench_DEV_EN_V11"),
        # judge files: {model}_{dataset}_{judge}_result.{ext}
        "out/llava_v1.5_7b/T20250101-120000/llava_v1.5_7b_MMBench_DEV_EN_gpt-4o-mini_result.xlsx":
            ("llava_v1.5_7b", "MMBench_DEV_EN"),
        "out/m_x/m_x_Custom_Bio_exact_matching_result.json": ("m_x", "Custom_Bio"),
        "out/m_x/m_x_Custom_Bio_openai_result.xlsx": ("m_x", "Custom_Bio"),
    }
    for path, (model, dataset) in cases.items():
        info = path_info("vlmevalkit", Path(path), {}, judged if "result" in path else [{}])
        assert (info.get("model"), info.get("dataset")) == (model, dataset), path
    assert path_info("vlmevalkit", Path("x/preds.xlsx"), {}, [{}]) == {}  # names neither: the stem is used


def test_lmms_eval_path_conventions():
    assert path_info("lmms-eval", Path("logs/lmms-lab__llava-onevision-qwen2-7b-ov/20240625_105317_samples_mme.jsonl")) \
        == {"model": "lmms-lab__llava-onevision-qwen2-7b-ov", "dataset": "mme"}
    assert path_info("lmms-eval", Path("o/EleutherAI__pythia-160m/samples_hellaswag_2024-06-25T10-53-17.123456.jsonl")) \
        == {"model": "EleutherAI__pythia-160m", "dataset": "hellaswag"}
    meta = {"args": {"model": "llava", "model_args": "pretrained=liuhaotian/llava-v1.5-7b,conv_template=vicuna_v1"}}
    assert path_info("lmms-eval", Path("logs/0301_1000_x_llava_model_args_ab12cd/mmbench_en.json"), meta) \
        == {"model": "liuhaotian/llava-v1.5-7b", "dataset": "mmbench_en"}


def test_a_file_naming_neither_model_nor_dataset_gets_its_stem(tmp_path):
    p = tmp_path / "my_answers.jsonl"
    p.write_text(json.dumps({"output": "dog", "label": "dog"}) + "\n")
    df = read_outputs(p)
    assert (df["model"][0], df["dataset"][0], df["prompt"][0]) == ("my_answers", "my_answers", "default")
    df = read_outputs(p, defaults={"model": "m", "dataset": "d"})
    assert (df["model"][0], df["dataset"][0]) == ("m", "d")


def test_column_paths_reach_nested_fields_and_list_elements(tmp_path):
    assert parse_column_path("filtered_resps[0]") == ["filtered_resps", 0]
    assert parse_column_path("doc.target-class") == ["doc", "target-class"]
    assert parse_column_path("arguments[0][-1]") == ["arguments", 0, -1]
    row = {"doc": {"target-class": "Esox lucius", "choices": ["a", "b"]}, "resps": [["x", "y"]], "a.b": 1}
    assert column_value(row, "doc.target-class") == "Esox lucius"
    assert column_value(row, "resps[0][1]") == "y" and column_value(row, "doc.choices[-1]") == "b"
    assert column_value(row, "a.b") == 1  # a key with a dot is that key
    assert column_value(row, "doc.nothing", None) is None and column_value(row, "resps[3]", None) is None
    p = tmp_path / "custom.jsonl"
    p.write_text(json.dumps({"qid": 1, "doc": {"target-class": "Esox lucius"}, "gen": ["pike", "perch"]}) + "\n")
    df = read_outputs(p, columns={"output": "gen[1]", "label": "doc.target-class", "id": "qid"})
    assert df.row(0, named=True)["output"] == "perch" and df["label"][0] == "Esox lucius" and df["id"][0] == "1"
    with pytest.raises(OutputFileError, match=r"label=doc\.target_class: the file has nothing at 'doc\.target_class'"):
        read_outputs(p, columns={"output": "gen[0]", "label": "doc.target_class"})


def test_a_path_that_names_no_value_is_told_from_the_keys_alone(generated):
    """The reader skips the candidate columns :func:`may_name_a_value` rules out: for the
    rows of every generated harness file, each ruled-out path gives None in every row."""
    from taxoforge.files.records import read_json_records, read_jsonl_records

    paths = {p for cols in LAYOUT_COLUMNS.values() for cands in cols.values() for p in cands}
    paths |= {"doc.target-class", "filtered_resps[0]", "resps[0][0]", "arguments[0][-1]", "a.b", "doc", "nothing[0]"}
    checked = 0
    for f in map(Path, generated.values() if isinstance(generated, dict) else generated):
        if f.suffix == ".jsonl":
            rows = read_jsonl_records(f)[0]
        elif f.suffix == ".json":
            rows = read_json_records(f)[0]
        else:
            continue
        present = set().union(*(r.keys() for r in rows))
        for p in paths:
            if not may_name_a_value(p, present):
                assert all(column_value(r, p, None) is None for r in rows), (f.name, p)
                checked += 1
    assert checked > 20
    assert may_name_a_value("a.b", {"a.b"}) and may_name_a_value("doc.x", {"doc"}) and not may_name_a_value("doc", {"x"})


def test_options_come_from_letter_columns_or_the_doc():
    assert row_options({"A": "x", "B": "y", "C": None, "D": "z"}) == {"A": "x", "B": "y", "D": "z"}  # a blank ends nothing
    assert row_options({"A": "x", "B": float("nan"), "C": " ", "E": "w"}) == {"A": "x", "E": "w"}
    assert row_options({"doc": {"choices": ["p", "q", "r"]}}) == {"A": "p", "B": "q", "C": "r"}
    assert row_options({"doc": {"A": "p", "B": "q"}}) == {"A": "p", "B": "q"}
    assert row_options({"A": "only one"}) == {}
    assert harness_correct({"hit": "1"}) == 1.0 and harness_correct({"exact_match": 0.0}) == 0.0
    assert harness_correct({"acc": True}) == 1.0 and harness_correct({"exact_match": {"x": 1}}) is None
    assert harness_correct({"score": 7}) is None


def test_the_harness_verdict_of_dict_valued_metrics(fish_easy, tmp_path):
    """lmms-eval 0.7 writes a task's metrics as ``process_results`` returns them: MMStar's
    ``{"score"}``, SEED-Bench's ``{"pred", "answer"}``; a field that is a rating somewhere in
    the file is no verdict anywhere in it."""
    from benchmarks.harness_files import lmms_eval_run
    from taxoforge.scores.readers.harness_layouts import harness_verdicts

    recs = vlm4bio_records(fish_easy)
    hits = [float(r["output"].split(") ")[0][-1:] == r["option-gt"]) for r in recs]
    for metric in ("exact_match", "dict-score", "dict-pred"):
        path = next(p for k, p in lmms_eval_run([fish_easy], tmp_path / metric, metric=metric).items()
                    if k != "results")
        df = read_outputs(path)
        assert df["harness_correct"].to_list() == hits, metric
    assert harness_verdicts([{"mme": {"score": 1.0}}, {"mme": {"score": 0}}]) == [1.0, 0.0]
    assert harness_verdicts([{"llava_wild": {"score": 1}}, {"llava_wild": {"score": 7}}]) == [None, None]
    assert harness_verdicts([{"seed_all": {"pred": "b", "answer": "B "}}]) == [1.0]
    assert harness_verdicts([{"doc": {"pred": "A", "answer": "B"}, "exact_match": True}]) == [1.0]


def test_cannot_tell_the_format_suggests_a_working_command(tmp_path):
    p = tmp_path / "odd.jsonl"
    p.write_text(json.dumps({"qid": 3, "resps": [["Esox lucius"]], "meta": {"gold_name": "Esox lucius"}}) + "\n")
    with pytest.raises(OutputFileError) as e:
        read_outputs(p)
    msg = str(e.value)
    assert "cannot tell the format" in msg and "taxoforge score" in msg and "--column 'output=resps[0]'" in msg
    assert e.value.suggestion[:2] == ["--column", "output=resps[0]"]
    p.write_text(json.dumps({"prediction_text": "Esox", "gt": "Esox lucius"}) + "\n")
    with pytest.raises(OutputFileError, match=r"--column 'output=prediction_text' --column 'label=gt'"):
        read_outputs(p)
    p.write_text(json.dumps({"sample_id": "x1", "n": 3}) + "\n")  # nothing that could be an answer
    with pytest.raises(OutputFileError, match=r"--column 'output=<COLUMN>' --column 'label=<COLUMN>'"):
        read_outputs(p)


def test_detect_layout_by_columns():
    assert detect_layout({"doc_id", "target", "filtered_resps", "doc_hash"}) == "lmms-eval"
    assert detect_layout({"index", "question", "answer", "prediction", "hit"}) == "vlmevalkit"
    assert detect_layout({"question", "target-class", "output"}) == "vlm4bio"
    assert detect_layout({"output", "label"}) == "generic"
    assert detect_layout({"pred", "gt"}) is None
    assert set(HARNESS_KINDS) >= {"lmms-eval v0.4", "VLMEvalKit xlsx"} and LMMS_MODEL


def test_a_vlmevalkit_csv_with_every_field_quoted_reads_like_its_tsv(fish_easy, generated, tmp_path):
    from benchmarks.harness_files import _tsv, _vlmevalkit_table

    cols, rows = _vlmevalkit_table(vlm4bio_records(fish_easy), "VLM4Bio_fish_easy")
    csv_path = _tsv(tmp_path / VLMEVALKIT_MODEL / f"{VLMEVALKIT_MODEL}_VLM4Bio_fish_easy.csv", cols, rows, sep=",")
    a, b = read_outputs(csv_path), read_outputs(generated["VLMEvalKit tsv"])
    cols = ["id", "model", "dataset", "question", "output", "label", "options", "category"]
    assert a.select(cols).equals(b.select(cols)) and a["line"].to_list() == b["line"].to_list()


def test_lm_evaluation_harness_samples_read_like_lmms_eval_ones(fish_easy, tmp_path):
    recs = vlm4bio_records(fish_easy)[:3]
    path = tmp_path / "org__my-model" / "samples_vlm4bio_fish_2024-06-25T10-53-17.123456.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps({
        "doc_id": i, "doc": r, "target": r["target-class"],
        "arguments": {"gen_args_0": {"arg_0": r["question"], "arg_1": {"until": ["\n\n"]}}},
        "resps": [[r["output"]]], "filtered_resps": [r["output"]], "filter": "none", "metrics": ["exact_match"],
        "exact_match": 1.0}) + "\n" for i, r in enumerate(recs)))
    df = read_outputs(path)
    assert (df["model"][0], df["dataset"][0], df["adapter"][0]) == ("org__my-model", "vlm4bio_fish", "lmms-eval")
    assert df["question"].to_list() == [r["question"] for r in recs]
    assert df["output"].to_list() == [r["output"] for r in recs] and df["harness_correct"].to_list() == [1.0] * 3


def test_lmms_eval_writes_a_missing_target_as_none_which_is_no_ground_truth(tmp_path):
    p = tmp_path / "org__m" / "20250301_101500_samples_inat_species.jsonl"
    p.parent.mkdir()
    p.write_text("".join(json.dumps({"doc_id": i, "target": t, "filtered_resps": "Esox lucius", "doc_hash": "h",
                                     "input": "Which fish?"}) + "\n" for i, t in enumerate(["Esox lucius", "None"])))
    df = read_outputs(p)
    assert df["label"].to_list() == ["Esox lucius", None] and "target None" in df["note"][1]
    assert row_options({"A": 1.0, "B": 2.5, "C": "3"}) == {"A": "1", "B": "2.5", "C": "3"}  # xlsx numbers as written
