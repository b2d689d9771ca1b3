"""What each file a harness leaves is, told by the harnesses' own naming rules: VLMEvalKit run
folders (new and legacy run ids, status.json, judge tables, score files, pickles, the model
folder's links) and lmms-eval output folders (with and without a model folder), written by
the generator from the real VLM4Bio answers; and the order of run ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.harness_files import VLMEVALKIT_MODEL, dataset_names, lmms_eval_run, vlmevalkit_run
from taxoforge.scores.readers.run_folders import classify, run_order


@pytest.fixture(scope="module")
def fish_easy(vlm4bio_files):
    return next(p for p in vlm4bio_files if "fish-easy" in str(p))


def _real(p: Path) -> Path:
    return p.resolve()


def test_run_ids_order_in_time_as_the_harnesses_write_them():
    runs = ["T20250302-141516", None, "T20250302_G7739374c", "T20250301-235959", "T20241121_Gunknown"]
    assert sorted(runs, key=run_order) == [None, "T20241121_Gunknown", "T20250301-235959", "T20250302_G7739374c",
                                           "T20250302-141516"]  # a legacy id of the same day is the older
    assert sorted(["20250301_101500", "20250228_235959"], key=run_order)[0] == "20250228_235959"
    assert run_order("2024-06-25T10-53-17.123456") < run_order("2024-06-25T11-00-00.000001")


def test_every_file_of_a_vlmevalkit_run_has_its_role(fish_easy, tmp_path):
    m, d = VLMEVALKIT_MODEL, dataset_names(fish_easy)[0]
    files = vlmevalkit_run([fish_easy], tmp_path / "outputs", judge="gpt-4o-mini")[d]
    run = files["prediction"].parent
    pred = classify(files["prediction"])
    assert (pred.role, pred.harness, pred.model, pred.dataset, pred.run) == ("output", "vlmevalkit", m, d, run.name)
    assert pred.sidecar == run / "status.json"
    judge = classify(files["judge"])
    assert (judge.role, judge.of, judge.judge, judge.preferred) == ("judge", files["prediction"], "gpt-4o-mini", True)
    acc, pkl, status = classify(files["acc"]), classify(files["pkl"]), classify(run / "status.json")
    assert acc.role == pkl.role == status.role == "skip"
    assert "score file" in acc.reason and "_acc" in acc.reason and "pickle" in pkl.reason and "status" in status.reason
    link = run.parent / files["prediction"].name  # run.py's link in the model folder: read as its target
    assert link.is_symlink() and classify(_real(link)).run == run.name


def test_a_legacy_run_without_status_json_is_named_from_its_folders(fish_easy, tmp_path):
    d = dataset_names(fish_easy)[0]  # a dataset VLMEvalKit does not know: told by the files beside it
    files = vlmevalkit_run([fish_easy], tmp_path / "outputs", eval_id="T20241121_G7739374c")[d]
    assert not (files["prediction"].parent / "status.json").exists()
    pred, judge = classify(files["prediction"]), classify(files["judge"])
    assert (pred.role, pred.model, pred.dataset, pred.run) == ("output", VLMEVALKIT_MODEL, d, "T20241121_G7739374c")
    assert (judge.role, judge.dataset, judge.judge, judge.preferred) == ("judge", d, "exact_matching", False)
    assert Path(str((files["prediction"].parent.parent / files["prediction"].name).readlink())).is_absolute()


def test_status_json_names_the_prediction_file_and_known_datasets_are_not_prefixes(tmp_path):
    run = tmp_path / "m" / "T20250101-120000"
    run.mkdir(parents=True)
    for name in ("m_MMBench.xlsx", "m_MMBench_V11.xlsx", "m_MMBench_V11.tsv", "m_MMBench_V11_acc.csv"):
        (run / name).write_text("")
    (run / "status.json").write_text(json.dumps({"eval_id": run.name, "model_name": "m", "datasets": {
        "MMBench": {"prediction_file": "m_MMBench.xlsx"}, "MMBench_V11": {"prediction_file": "outputs/m/x/m_MMBench_V11.tsv"}}}))
    roles = {n: classify(run / n) for n in ("m_MMBench.xlsx", "m_MMBench_V11.xlsx", "m_MMBench_V11.tsv")}
    assert (roles["m_MMBench.xlsx"].role, roles["m_MMBench.xlsx"].dataset) == ("output", "MMBench")
    assert (roles["m_MMBench_V11.tsv"].role, roles["m_MMBench_V11.tsv"].dataset) == ("output", "MMBench_V11")
    skipped = roles["m_MMBench_V11.xlsx"]
    assert skipped.role == "skip" and "not the prediction file status.json names (m_MMBench_V11.tsv)" in skipped.reason
    assert classify(run / "m_MMBench_V11_acc.csv").dataset == "MMBench_V11"


def test_lmms_eval_samples_take_the_model_from_the_results_file_beside_them(fish_easy, tmp_path):
    task = dataset_names(fish_easy)[1]
    with_folder = lmms_eval_run([fish_easy], tmp_path / "a")
    no_folder = lmms_eval_run([fish_easy], tmp_path / "b", model_args="max_new_tokens=64", model="qwen2_vl")
    assert with_folder[task].parent.name == "liuhaotian__llava-v1.5-7b" and no_folder[task].parent == tmp_path / "b"
    a, b = classify(with_folder[task]), classify(no_folder[task])
    assert (a.role, a.harness, a.model, a.dataset, a.run) == ("output", "lmms-eval", "liuhaotian__llava-v1.5-7b", task,
                                                              "20250301_101500")
    assert (b.model, b.sidecar) == ("qwen2_vl", no_folder["results"])  # not the output folder "b"
    res = classify(no_folder["results"])
    assert res.role == "skip" and "aggregated results" in res.reason


def test_results_json_is_skipped_only_when_it_is_aggregated_results(tmp_path):
    (tmp_path / "results.json").write_text(json.dumps({"results": {"mme": {"acc,none": 0.5}}, "configs": {}}))
    assert classify(tmp_path / "results.json").role == "skip"
    (tmp_path / "results.json").write_text(json.dumps([{"output": "dog", "label": "dog"}]))
    assert classify(tmp_path / "results.json").role == "output"  # answers that bear the name
    (tmp_path / "results" / "x").mkdir(parents=True)
    own = tmp_path / "results" / "results_run1.jsonl"
    own.write_text(json.dumps({"output": "dog", "label": "dog"}) + "\n")
    assert (classify(own).role, classify(own).harness, classify(own).model) == ("output", None, None)
    (tmp_path / "run.log").write_text("")
    assert "not a model-output file (.log)" in classify(tmp_path / "run.log").reason
