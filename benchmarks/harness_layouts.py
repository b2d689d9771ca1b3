"""The harness layouts a researcher's disk really holds, built from the real VLM4Bio answers
by :mod:`benchmarks.harness_files`: each :class:`Layout` is a folder tree as lmms-eval or
VLMEvalKit leaves it (run folders, results and status files, judge files, score tables,
pickles, logs, the model folder's symbolic links, re-runs), what a user hands to
``taxoforge score`` (a file, a folder, a glob), and the (model, dataset) groups the
leaderboard must then show, each with the native file (and the rows of it) whose scoring it
must equal. The tests and ``bench_harness_layouts`` share it.

Where a layout needs a second model or an earlier run, the second model files the same
answers under another name and the earlier run is the same model stopped after its first
rows: the layout, not the answers, is under test.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.harness_files import (LMMS_MODEL, VLMEVALKIT_MODEL, dataset_names, harness_files, lmms_eval_run,
                                      vlmevalkit_run)

__all__ = ["Expected", "Layout", "build_layouts", "PARTIAL_ROWS"]

#: Rows of the earlier, stopped run of a re-run layout.
PARTIAL_ROWS = 12


@dataclass(frozen=True)
class Expected:
    """A leaderboard group a layout must give: its model and dataset, and the native file
    (its first ``rows`` records when set) whose scoring it must equal."""

    model: str
    dataset: str
    native: Path
    rows: int | None = None


@dataclass
class Layout:
    """One layout: ``args`` (paths and globs, relative to ``root``) and ``flags`` as given to
    ``taxoforge score``, and the groups ``expected``; ``harness_verdict``: whether the files
    carry the harness's own verdict on each row."""

    name: str
    harness: str
    root: Path
    args: list[str]
    expected: list[Expected]
    flags: list[str] = field(default_factory=list)
    harness_verdict: bool = True

    def paths(self) -> list[str]:
        """``args`` as absolute paths and patterns."""
        return [str(self.root / a) for a in self.args]


def _lmms(model: str, natives) -> list[Expected]:
    return [Expected(model, dataset_names(n)[1], n) for n in natives]


def _vlm(natives, model: str = VLMEVALKIT_MODEL, rows: int | None = None) -> list[Expected]:
    return [Expected(model, dataset_names(n)[0], n, rows) for n in natives]


def _lmms_layouts(natives, one, cot, base: Path) -> list[Layout]:
    out = []
    r = base / "lmms-full"
    lmms_eval_run(natives, r / "logs")
    task = dataset_names(one)[1]
    f = f"logs/{LMMS_MODEL}/20250301_101500_samples_{task}.jsonl"
    out += [Layout("lmms-eval 0.7: one samples file", "lmms-eval", r, [f], _lmms(LMMS_MODEL, [one])),
            Layout("lmms-eval 0.7: the output folder", "lmms-eval", r, ["logs"], _lmms(LMMS_MODEL, natives)),
            Layout("lmms-eval 0.7: the model folder", "lmms-eval", r, [f"logs/{LMMS_MODEL}"], _lmms(LMMS_MODEL, natives)),
            Layout("lmms-eval 0.7: glob **/*.jsonl", "lmms-eval", r, ["logs/**/*.jsonl"], _lmms(LMMS_MODEL, natives)),
            Layout("lmms-eval 0.7: glob **/* (results file too)", "lmms-eval", r, ["logs/**/*"],
                   _lmms(LMMS_MODEL, natives))]
    r = base / "lmms-nofolder"  # no pretrained= in --model_args: the model name is empty
    lmms_eval_run(natives, r / "logs", model_args="conv_template=vicuna_v1", model="llava")
    out += [Layout("lmms-eval 0.7: no model folder, one file", "lmms-eval", r,
                   [f"logs/20250301_101500_samples_{task}.jsonl"], _lmms("llava", [one])),
            Layout("lmms-eval 0.7: no model folder, the folder", "lmms-eval", r, ["logs"], _lmms("llava", natives))]
    r = base / "lmms-reasoning"
    lmms_eval_run([cot], r / "logs", reasoning=True)
    out.append(Layout("lmms-eval 0.7: resps kept (reasoning stripped)", "lmms-eval", r, ["logs"],
                      _lmms(LMMS_MODEL, [cot])))
    for metric, what in (("dict-score", "dict metric with a score"), ("dict-pred", "dict metric pred/answer")):
        r = base / f"lmms-{metric}"
        lmms_eval_run(natives, r / "logs", metric=metric)
        out.append(Layout(f"lmms-eval 0.7: {what}", "lmms-eval", r, ["logs"], _lmms(LMMS_MODEL, natives)))
    r = base / "lmms-rerun"
    lmms_eval_run([one], r / "logs", date_id="20250228_090000", limit=PARTIAL_ROWS)
    lmms_eval_run([one], r / "logs", date_id="20250301_101500")
    out += [Layout("lmms-eval 0.7: re-run, latest kept", "lmms-eval", r, ["logs"], _lmms(LMMS_MODEL, [one])),
            Layout("lmms-eval 0.7: re-run, every run apart", "lmms-eval", r, ["logs"],
                   [Expected(f"{LMMS_MODEL}@20250228_090000", task, one, PARTIAL_ROWS),
                    Expected(f"{LMMS_MODEL}@20250301_101500", task, one)], flags=["--all-runs"])]
    r = base / "lmms-two-models"
    lmms_eval_run(natives, r / "logs")
    lmms_eval_run(natives, r / "logs", model_args="pretrained=lmms-lab/llava-v1.5-7b-rerun,device_map=auto")
    out.append(Layout("lmms-eval 0.7: two models in one output folder", "lmms-eval", r, ["logs"],
                      _lmms(LMMS_MODEL, natives) + _lmms("lmms-lab__llava-v1.5-7b-rerun", natives)))
    r = base / "lmms-older"
    files = harness_files(one, r)
    for kind in ("lmms-eval v0.4", "lmms-eval v0.3", "lmms-eval v0.2"):
        model = "liuhaotian/llava-v1.5-7b" if kind.endswith("v0.2") else LMMS_MODEL
        out.append(Layout(kind, "lmms-eval", r, [str(files[kind].relative_to(r))], _lmms(model, [one])))
    return out


def _vlmevalkit_layouts(natives, one, base: Path) -> list[Layout]:
    m, out = VLMEVALKIT_MODEL, []
    r = base / "vlm-xlsx"
    run = vlmevalkit_run(natives, r / "outputs")
    d1 = dataset_names(one)[0]
    pred = run[d1]["prediction"].relative_to(r)
    out += [Layout("VLMEvalKit: the work_dir", "vlmevalkit", r, ["outputs"], _vlm(natives)),
            Layout("VLMEvalKit: glob outputs/**/*.xlsx", "vlmevalkit", r, ["outputs/**/*.xlsx"], _vlm(natives)),
            Layout("VLMEvalKit: glob outputs/**/* (every file)", "vlmevalkit", r, ["outputs/**/*"], _vlm(natives)),
            Layout("VLMEvalKit: the model folder", "vlmevalkit", r, [f"outputs/{m}"], _vlm(natives)),
            Layout("VLMEvalKit: the run folder", "vlmevalkit", r, [str(pred.parent)], _vlm(natives)),
            Layout("VLMEvalKit: one prediction file", "vlmevalkit", r, [str(pred)], _vlm([one])),
            Layout("VLMEvalKit: the judge file alone", "vlmevalkit", r, [str(run[d1]["judge"].relative_to(r))],
                   _vlm([one])),
            Layout("VLMEvalKit: prediction and judge files", "vlmevalkit", r,
                   [str(pred), str(run[d1]["judge"].relative_to(r))], _vlm([one])),
            Layout("VLMEvalKit: the model folder's link", "vlmevalkit", r, [f"outputs/{m}/{pred.name}"], _vlm([one]))]
    r = base / "vlm-tsv"
    vlmevalkit_run(natives, r / "outputs", pred_format="tsv", judge="gpt-4o-mini")
    out.append(Layout("VLMEvalKit: tsv, gpt-4o-mini judge, the work_dir", "vlmevalkit", r, ["outputs"], _vlm(natives)))
    r = base / "vlm-json"
    vlmevalkit_run(natives, r / "outputs", pred_format="json", eval_format="json")
    out.append(Layout("VLMEvalKit: json, glob outputs/**/*.json", "vlmevalkit", r, ["outputs/**/*.json"],
                      _vlm(natives)))
    r = base / "vlm-infer"
    vlmevalkit_run(natives, r / "outputs", judge=None)
    out.append(Layout("VLMEvalKit: --mode infer (no judge)", "vlmevalkit", r, ["outputs"], _vlm(natives),
                      harness_verdict=False))
    r = base / "vlm-legacy"
    vlmevalkit_run(natives, r / "outputs", eval_id="T20241121_G7739374c")
    out.append(Layout("VLMEvalKit: legacy T{date}_G{commit} run", "vlmevalkit", r, ["outputs"], _vlm(natives)))
    r = base / "vlm-oldest"
    vlmevalkit_run(natives, r / "outputs", run_folder=False)
    out.append(Layout("VLMEvalKit: no run folder (oldest)", "vlmevalkit", r, ["outputs"], _vlm(natives)))
    r = base / "vlm-rerun"
    vlmevalkit_run([one], r / "outputs", eval_id="T20250301-080000", limit=PARTIAL_ROWS)
    vlmevalkit_run([one], r / "outputs", eval_id="T20250302-141516")
    out += [Layout("VLMEvalKit: re-run, latest kept", "vlmevalkit", r, ["outputs"], _vlm([one])),
            Layout("VLMEvalKit: re-run, glob **/*.xlsx", "vlmevalkit", r, ["outputs/**/*.xlsx"], _vlm([one])),
            Layout("VLMEvalKit: re-run, every run apart", "vlmevalkit", r, ["outputs"],
                   [Expected(f"{m}@T20250301-080000", d1, one, PARTIAL_ROWS),
                    Expected(f"{m}@T20250302-141516", d1, one)], flags=["--all-runs"])]
    r = base / "vlm-rerun-legacy"
    vlmevalkit_run([one], r / "outputs", eval_id="T20241121_G7739374c", limit=PARTIAL_ROWS)
    vlmevalkit_run([one], r / "outputs", eval_id="T20250302-141516")
    out.append(Layout("VLMEvalKit: legacy run then a new one", "vlmevalkit", r, ["outputs"], _vlm([one])))
    r = base / "vlm-blank"
    vlmevalkit_run(natives, r / "outputs", blank=True, letters="ABCDE")
    out.append(Layout("VLMEvalKit: blank option cells", "vlmevalkit", r, ["outputs"], _vlm(natives)))
    r = base / "vlm-two-models"
    vlmevalkit_run(natives, r / "outputs")
    vlmevalkit_run(natives, r / "outputs", model="LLaVA_v1.5_7B_XTuner")
    out.append(Layout("VLMEvalKit: two models in one work_dir", "vlmevalkit", r, ["outputs"],
                      _vlm(natives) + _vlm(natives, "LLaVA_v1.5_7B_XTuner")))
    return out


def build_layouts(natives, base: Path) -> list[Layout]:
    """Every layout, its files written under ``base`` (one folder per layout family).

    Parameters
    ----------
    natives : list of Path
        The native VLM4Bio result files (the fish-easy file is the one-dataset layouts'; the
        chain-of-thought file, with its reasoning, the reasoning layout's).
    base : Path
        An empty folder.

    Returns
    -------
    list of Layout
    """
    natives = sorted(natives)
    one = next((n for n in natives if "fish-easy" in str(n)), natives[0])
    cot = next((n for n in natives if "/cot/" in n.as_posix()), natives[-1])
    layouts = _lmms_layouts(natives, one, cot, base) + _vlmevalkit_layouts(natives, one, base)
    r = base / "mixed"  # an lmms-eval output folder and a VLMEvalKit work_dir side by side
    lmms_eval_run(natives, r / "results" / "lmms")
    vlmevalkit_run(natives, r / "results" / "vlmevalkit")
    layouts.append(Layout("both harnesses in one folder", "mixed", r, ["results"],
                          _lmms(LMMS_MODEL, natives) + _vlm(natives)))
    return layouts
