"""One source per model and dataset, however given: every harness layout of
:mod:`benchmarks.harness_layouts` (the real VLM4Bio answers as the current lmms-eval and
VLMEvalKit releases leave them) read with no column flag into exactly its groups, each with
its native file's rows once and the harness's verdict; judge tables joined, score and status
files skipped with their reasons, the latest run read and the others listed, every run apart
on request; and what run.json records of the inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.harness_files import (LMMS_MODEL, VLMEVALKIT_MODEL, dataset_names, lmms_eval_run, vlm4bio_records,
                                      vlmevalkit_run)
from benchmarks.harness_layouts import PARTIAL_ROWS, build_layouts
from taxoforge.files import file_sha256
from taxoforge.scores.options import ReadOptions
from taxoforge.scores.readers.files import OutputFileError
from taxoforge.scores.readers.sources import expand_paths, gather_sources, read_paths


@pytest.fixture(scope="module")
def fish_easy(vlm4bio_files):
    return next(p for p in vlm4bio_files if "fish-easy" in str(p))


@pytest.fixture(scope="module")
def layouts(vlm4bio_files, tmp_path_factory):
    return build_layouts(vlm4bio_files, tmp_path_factory.mktemp("layouts"))


def test_every_layout_reads_into_its_groups_each_row_once_with_the_harness_verdict(layouts):
    assert len(layouts) >= 25
    wrong = {}
    for lay in layouts:
        rows, src = read_paths(lay.paths(), ReadOptions(all_runs="--all-runs" in lay.flags))
        got = {(m, d): n for m, d, n in rows.group_by("model", "dataset").len().iter_rows()}
        want = {(e.model, e.dataset): e.rows or len(vlm4bio_records(e.native)) for e in lay.expected}
        verdict = rows["harness_correct"].is_not_null().all()
        if got != want or verdict != lay.harness_verdict or rows["prompt"].n_unique() != 1:
            wrong[lay.name] = (sorted(set(got.items()) ^ set(want.items()))[:4], verdict)
        # the rows of a group are the native file's, in its order
        for e in lay.expected:
            g = rows.filter((rows["model"] == e.model) & (rows["dataset"] == e.dataset))
            native = vlm4bio_records(e.native)[:e.rows]
            if g["output"].to_list() != [r["output"] for r in native]:
                wrong[f"{lay.name}: {e.model} / {e.dataset}"] = "answers differ from the native file's"
    assert not wrong, wrong


def test_a_prediction_file_and_its_judge_table_are_one_source_however_named(fish_easy, tmp_path):
    d = dataset_names(fish_easy)[0]
    files = vlmevalkit_run([fish_easy], tmp_path / "outputs")[d]
    hits = [int(r["hit"]) for r in _judge_rows(files["judge"])]
    for given in ([files["prediction"]], [files["judge"]], [files["judge"], files["prediction"]],
                  [tmp_path / "outputs" / VLMEVALKIT_MODEL / files["prediction"].name]):
        src = gather_sources(given)
        assert [(s.file.name, s.judge.name) for s in src.sources] == [(files["prediction"].name, files["judge"].name)]
        rows, _ = read_paths(given)
        assert rows.height == 20 and rows["harness_correct"].to_list() == hits


def _judge_rows(path):
    from taxoforge.files.records import read_xlsx_records

    return read_xlsx_records(path)[0]


def test_score_and_status_files_are_skipped_each_with_its_reason(fish_easy, tmp_path):
    vlmevalkit_run([fish_easy], tmp_path / "outputs")
    src = gather_sources([str(tmp_path / "outputs" / "**" / "*")])
    reasons = {Path(s["file"]).name: s["reason"] for s in src.skipped}
    d = dataset_names(fish_easy)[0]
    assert "score file" in reasons[f"{VLMEVALKIT_MODEL}_{d}_acc.csv"]
    assert "pickle" in reasons[f"{VLMEVALKIT_MODEL}_{d}_exact_matching_result.pkl"]
    assert "run status" in reasons["status.json"] and "not a model-output file (.log)" in next(
        r for n, r in reasons.items() if n.endswith(".log"))
    assert src.links == 5  # the model folder's links to the run's five files: each read (or skipped) once
    notes = "\n".join(src.notes())
    assert f"skipped 1 file, VLMEvalKit score file: T20250302-141516/{VLMEVALKIT_MODEL}_{d}_acc.csv" in notes
    assert "5 links to a file read through another name" in notes
    only_scores = [tmp_path / "outputs" / VLMEVALKIT_MODEL / f"{VLMEVALKIT_MODEL}_{d}_acc.csv",
                   tmp_path / "outputs" / VLMEVALKIT_MODEL / "status.json"]
    with pytest.raises(OutputFileError, match=r"no model-output file among the paths given: skipped .*_acc\.csv "
                                              r"\(VLMEvalKit score file"):
        gather_sources(only_scores)


def test_a_score_table_by_name_is_read_when_it_holds_answers_and_skipped_when_not(tmp_path):
    answers = tmp_path / "my_scores.csv"
    answers.write_text("id,output,label\n1,dog,dog\n")
    table = tmp_path / "model_acc.csv"
    table.write_text("split,Overall\nnone,0.5\n")
    rows, src = read_paths([tmp_path])
    assert rows["file"].unique().to_list() == [str(answers)]
    assert src.skipped == [{"file": str(table), "reason": "a score table (no answers in its columns)"}]
    other = tmp_path / "preds.csv"
    other.write_text("split,Overall\nnone,0.5\n")
    with pytest.raises(OutputFileError, match="cannot tell the format"):  # a file of one's own: the usual help
        read_paths([other])


def test_the_latest_run_is_read_and_the_others_listed_or_every_run_apart(fish_easy, tmp_path):
    d, task = dataset_names(fish_easy)
    vlmevalkit_run([fish_easy], tmp_path / "v", eval_id="T20241121_G7739374c", limit=PARTIAL_ROWS)
    vlmevalkit_run([fish_easy], tmp_path / "v", eval_id="T20250302-141516")
    lmms_eval_run([fish_easy], tmp_path / "l", date_id="20250302_090000")
    lmms_eval_run([fish_easy], tmp_path / "l", date_id="20250228_120000", limit=PARTIAL_ROWS)
    rows, src = read_paths([tmp_path])
    assert sorted(rows.group_by("model", "dataset").len().iter_rows()) == [(LMMS_MODEL, task, 20),
                                                                          (VLMEVALKIT_MODEL, d, 20)]
    assert sorted((s["model"], s["run"], s["latest_run"]) for s in src.superseded) == [
        (LMMS_MODEL, "20250228_120000", "20250302_090000"), (VLMEVALKIT_MODEL, "T20241121_G7739374c", "T20250302-141516")]
    assert any("2 earlier runs not read" in n and "--all-runs" in n for n in src.notes())
    rows, src = read_paths([tmp_path], ReadOptions(all_runs=True))
    assert sorted(rows.group_by("model").len().iter_rows()) == [
        (f"{LMMS_MODEL}@20250228_120000", PARTIAL_ROWS), (f"{LMMS_MODEL}@20250302_090000", 20),
        (f"{VLMEVALKIT_MODEL}@T20241121_G7739374c", PARTIAL_ROWS), (f"{VLMEVALKIT_MODEL}@T20250302-141516", 20)]
    assert src.superseded == [] and src.all_runs


def test_the_record_names_every_input_with_its_sha256_and_size(fish_easy, tmp_path):
    d = dataset_names(fish_easy)[0]
    files = vlmevalkit_run([fish_easy], tmp_path / "o")[d]
    rec = gather_sources([tmp_path / "o"]).record()
    by_role = {i["role"]: i for i in rec["inputs"]}
    assert set(by_role) == {"output", "judge", "record"}
    for role, path in (("output", files["prediction"]), ("judge", files["judge"])):
        assert by_role[role]["file"] == str(path) and by_role[role]["sha256"] == file_sha256(path)
        assert by_role[role]["bytes"] == path.stat().st_size
    assert by_role["record"]["file"].endswith("status.json")
    assert rec["sources"][0]["run"] == "T20250302-141516" and rec["sources"][0]["judge"] == str(files["judge"])
    json.dumps(rec)


def test_paths_globs_and_folders_expand_to_files_once(tmp_path):
    for rel in ("r/a/x.jsonl", "r/b/c/y.csv", "r/b/notes.txt", "r/.hidden/z.jsonl", "r/a/w.parquet"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    got = expand_paths([tmp_path / "r" / "a" / "x.jsonl", str(tmp_path / "r" / "**" / "*.jsonl"), tmp_path / "r" / "b"])
    assert [p.relative_to(tmp_path).as_posix() for p in got] == ["r/a/x.jsonl", "r/b/c/y.csv", "r/b/notes.txt"]
    assert [p.name for p in expand_paths([tmp_path / "r"])] == ["w.parquet", "x.jsonl", "y.csv", "notes.txt"]
    with pytest.raises(OutputFileError, match=r"\*\.tsv: no file matches"):
        expand_paths([str(tmp_path / "r" / "*.tsv")])
    with pytest.raises(OutputFileError, match="missing.jsonl: no such file"):
        expand_paths([tmp_path / "missing.jsonl"])


def test_a_harness_output_folder_gives_its_per_sample_files_by_their_names(tmp_path):
    names = ["m/T20250101-120000/m_MMBench.xlsx", "m/T20250101-120000/m_MMBench_exact_matching_result.xlsx",
             "m/T20250101-120000/m_MMBench_acc.csv", "m/T20250101-120000/m_AI2D_TEST.tsv",
             "m/T20250101-120000/m_OCRBench_score.json", "lmms/model/20250101_120000_results.json",
             "lmms/model/20250101_120000_samples_mme.jsonl", "old/results.json", "old/mme.json"]
    for n in names:
        (tmp_path / n).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / n).write_text('{"results": {"mme": {}}}' if n.endswith("results.json") else "")
    src = gather_sources([tmp_path])
    got = {s.file.relative_to(tmp_path).as_posix(): s.judge.name if s.judge else None for s in src.sources}
    assert got == {"lmms/model/20250101_120000_samples_mme.jsonl": None, "m/T20250101-120000/m_AI2D_TEST.tsv": None,
                   "m/T20250101-120000/m_MMBench.xlsx": "m_MMBench_exact_matching_result.xlsx", "old/mme.json": None}
    assert sorted(Path(s["file"]).name for s in src.skipped) == [
        "20250101_120000_results.json", "m_MMBench_acc.csv", "m_OCRBench_score.json", "results.json"]


def test_a_letter_beyond_a_blank_option_cell_keeps_its_ground_truth_and_a_missing_one_names_what_it_saw(tmp_path):
    from taxoforge.scores.mapping.parse import UnparseableAnswer, resolve_letter
    from taxoforge.scores.readers.files import read_outputs

    p = tmp_path / "m" / "m_Custom.tsv"
    p.parent.mkdir()
    p.write_text('"index"\t"question"\t"A"\t"B"\t"C"\t"D"\t"E"\t"answer"\t"prediction"\n'
                 '"0"\t"Which fish?"\t"Esox lucius"\t""\t"Perca fluviatilis"\t"Salmo trutta"\t""\t"D"\t"D"\n')
    opts = json.loads(read_outputs(p)["options"][0])
    assert opts == {"A": "Esox lucius", "C": "Perca fluviatilis", "D": "Salmo trutta"}
    assert resolve_letter("D", opts, "label")[0] == "Salmo trutta"
    with pytest.raises(UnparseableAnswer, match=r"label letter 'B' is not among the row's options "
                                                r"\(A\) Esox lucius; C\) Perca fluviatilis; D\) Salmo trutta\)"):
        resolve_letter("B", opts, "label")
