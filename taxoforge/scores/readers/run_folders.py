"""What each file an evaluation harness leaves in a folder is, told from its name, its folder
and the run's own record — the rules of the harnesses' writers, not guesses from examples.

**lmms-eval** (``lmms_eval/loggers/evaluation_tracker.py``) writes one run as
``{output_path}/{model_name_sanitized}/{date_id}_samples_{task}.jsonl`` per task beside
``{date_id}_results.json`` (``date_id``: ``%Y%m%d_%H%M%S``, the run id). The model name comes
from ``--model_args`` (``pretrained=`` …); where none is given it is empty and the files go
straight into ``output_path``: the model is then what the results file names
(``model_name_sanitized``, else ``model_source``, else ``config.model``), never the folder.
lm-evaluation-harness writes ``samples_{task}_{datetime}.jsonl`` and ``results_{datetime}.json``.

**VLMEvalKit** (``run.py``, ``vlmeval/smp/file.py``, ``vlmeval/smp/status_report.py``) writes
one run into ``{work_dir}/{model}/{eval_id}/`` — ``eval_id`` ``T{YYYYMMDD-HHMMSS}``, before it
``T{YYYYMMDD}_G{commit}`` — with ``status.json`` naming each dataset's prediction file and
judge; the prediction file ``{model}_{dataset}.{xlsx|tsv|json}``; the judge's per-row table
``{model}_{dataset}_{judge}_result.{ext}`` (``hit``); score and intermediate files
``{model}_{dataset}_{suffix}.{ext}`` (``_acc``, ``_score``, ``_rating``, ``.pkl`` caches …);
and links to all of them in the model folder (the latest run's). Without ``status.json`` the
dataset is the file's name less the model, where no other prediction file of the folder is a
prefix of it followed by ``_``, or a dataset VLMEvalKit knows.

:func:`classify` gives each file its :class:`FileRole`: rows to read (``output``), a judge
table whose verdict joins its prediction file (``judge``), or skipped with the reason.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

__all__ = ["FileRole", "classify", "run_order", "OUTPUT_SUFFIXES", "RUN_STATUS"]

#: The file kinds read as model outputs.
OUTPUT_SUFFIXES = (".jsonl", ".ndjson", ".json", ".csv", ".tsv", ".parquet", ".xlsx")
#: VLMEvalKit's record of a run (``vlmeval/smp/file.py``: ``RUN_STATUS_NAME``).
RUN_STATUS = "status.json"
_TABLE_SUFFIXES = (".xlsx", ".tsv", ".csv", ".json")
_NEW_EVAL_ID = re.compile(r"^T(?P<date>\d{8})-(?P<time>\d{6})$")
_LEGACY_EVAL_ID = re.compile(r"^T(?P<date>\d{8})_G(?P<commit>\w+)$")
_LMMS_SAMPLES = re.compile(r"^(?P<run>\d{8}_\d{6})_samples_(?P<task>.+)\.jsonl?$")
_LMMS_RESULTS = re.compile(r"^(?P<run>\d{8}_\d{6})_results\.json$")
_HARNESS_SAMPLES = re.compile(r"^samples_(?P<task>.+?)_(?P<run>\d{4}-\d{2}-\d{2}T[\d\-.]+)\.jsonl$")
_HARNESS_RESULTS = re.compile(r"^results(?:_\d{4}-\d{2}-\d{2}T[\d\-.]+)?\.json$")
#: Suffixes of VLMEvalKit's score and intermediate files (``get_intermediate_file_path``).
_SCORE_SUFFIX = re.compile(r"_(?:acc|acc_all|score|scores|rating|final_rating|config|meta|metrics|fine|tmp|"
                           r"detail|details|detailed_results|results|overall|predict|extract|judge|verbose|"
                           r"auxmatch|cotpost|PREV|checkpoint|structs)(?:_[^.]*)?$")
#: VLMEvalKit's short names of some judges in file names (``image_mcq.py``: ``name_str_map``).
_JUDGE_FILE_NAMES = {"chatgpt-0125": "openai", "gpt-4-0125": "gpt4"}


@dataclass(frozen=True)
class FileRole:
    """What one file is.

    Attributes
    ----------
    path : Path
        The file (a link's target, as it lies in its run folder).
    role : str
        ``output`` (rows to read), ``judge`` (a VLMEvalKit judge table of ``of``), ``skip``.
    harness : str or None
        ``lmms-eval``, ``vlmevalkit``, or None (told from the columns when read).
    model, dataset : str or None
        As the harness's files name them (None: from the path and the rows when read).
    run : str or None
        The harness's run id (``T20250302-141516``, ``20250301_101500`` …).
    reason : str or None
        Why a skipped file is skipped.
    of : Path or None
        The prediction file a judge table judges.
    judge : str or None
        The judge a judge table's name or the run's ``status.json`` names.
    preferred : bool
        A judge table of the judge the run's ``status.json`` names.
    sidecar : Path or None
        The run's own record read to name the file (``status.json``, ``*_results.json``).
    """

    path: Path
    role: str
    harness: str | None = None
    model: str | None = None
    dataset: str | None = None
    run: str | None = None
    reason: str | None = None
    of: Path | None = None
    judge: str | None = None
    preferred: bool = False
    sidecar: Path | None = None


def run_order(run: str | None) -> tuple:
    """The key that orders a harness's run ids in time.

    Parameters
    ----------
    run : str or None
        ``T{YYYYMMDD-HHMMSS}`` or the older ``T{YYYYMMDD}_G{commit}`` (VLMEvalKit; on the same
        day the older form first), ``{YYYYMMDD}_{HHMMSS}`` (lmms-eval), an ISO date-time
        (lm-evaluation-harness); None (no run folder: the oldest layout) first of all.

    Returns
    -------
    tuple
    """
    if run is None:
        return ("",)
    m = _NEW_EVAL_ID.match(run)
    if m:
        return (m["date"], 1, m["time"])
    m = _LEGACY_EVAL_ID.match(run)
    if m:
        return (m["date"], 0, "")
    digits = re.sub(r"\D", "", run)
    return (digits[:8], 1, digits[8:])


#: the most bytes of a run's JSON record read (a results or status file is kilobytes)
MAX_RECORD_JSON_BYTES = 64 * 2**20


@lru_cache(maxsize=512)
def _read_json(path: Path, stamp: tuple) -> dict:
    from taxoforge.files.paths import open_regular

    try:
        with open_regular(path, "run record") as fh:  # a FIFO or a device is never waited on
            raw = fh.read(MAX_RECORD_JSON_BYTES + 1)
        if len(raw) > MAX_RECORD_JSON_BYTES:
            return {}
        doc = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _json_record(path: Path) -> dict:
    """A run's JSON record (``status.json``, ``*_results.json``), ``{}`` when unreadable."""
    try:
        st = path.stat()
    except OSError:
        return {}
    return _read_json(path, (st.st_mtime_ns, st.st_size))


@lru_cache(maxsize=512)
def _listing(folder: Path, stamp: int) -> tuple[str, ...]:
    try:
        return tuple(sorted(e.name for e in os.scandir(folder) if e.is_file()))
    except OSError:
        return ()


def _files_in(folder: Path) -> tuple[str, ...]:
    try:
        return _listing(folder, folder.stat().st_mtime_ns)
    except OSError:
        return ()


# ---------------------------------------------------------------------------- lmms-eval
def _lmms_model(results: dict) -> str | None:
    """The model a results file names: the folder name lmms-eval gave it, else the model class."""
    name = results.get("model_name_sanitized") or results.get("model_source")
    if not name and isinstance(results.get("config"), dict):
        name = results["config"].get("model")
    return str(name) if name else None


def _results_document(path: Path) -> bool:
    """Whether a ``results*.json`` is the harness's aggregated results (a JSON object whose
    first key is ``results``), not answers that happen to bear the name."""
    from taxoforge.files.paths import open_regular

    try:
        with open_regular(path, "results file") as fh:  # a FIFO or a device is never waited on
            head = fh.read(256).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError:
        return False
    return re.match(rb'^\{\s*"results"\s*:', head) is not None


def _lmms_eval(path: Path) -> FileRole | None:
    name = path.name
    if _LMMS_RESULTS.match(name) or (_HARNESS_RESULTS.match(name) and _results_document(path)):
        return FileRole(path, "skip", "lmms-eval", reason="lmms-eval aggregated results (scores, not answers)")
    m = _LMMS_SAMPLES.match(name)
    sidecar = path.with_name(f"{m['run']}_results.json") if m else None
    if not m:
        m = _HARNESS_SAMPLES.match(name)
        sidecar = path.with_name(f"results_{m['run']}.json") if m else None
    if not m:
        return None
    model = None
    if sidecar.is_file():
        model = _lmms_model(_json_record(sidecar))
    else:
        sidecar = None
    return FileRole(path, "output", "lmms-eval", model or path.parent.name or None, m["task"], m["run"],
                    sidecar=sidecar)


# ---------------------------------------------------------------------------- VLMEvalKit
@lru_cache(maxsize=1)
def _known_datasets() -> tuple[str, ...]:
    from taxoforge.scores.readers.harness_layouts import vlmevalkit_datasets

    return vlmevalkit_datasets()


def _run_of(folder: Path) -> tuple[str | None, Path]:
    """(run id, model folder) of a folder holding VLMEvalKit files."""
    if _NEW_EVAL_ID.match(folder.name) or _LEGACY_EVAL_ID.match(folder.name):
        return folder.name, folder.parent
    return None, folder


def _status(folder: Path) -> tuple[dict, Path | None]:
    path = folder / RUN_STATUS
    if not path.is_file():
        return {}, None
    doc = _json_record(path)
    return (doc, path) if isinstance(doc.get("datasets"), dict) else ({}, None)


def _prediction_stems(folder: Path, model: str, datasets) -> tuple[set[str], set[str]]:
    """(the datasets of the folder's prediction files as far as names tell, every
    ``{model}_…`` table name less the model): a name no other one of the folder extends
    with ``_…``, or a dataset the run's status or VLMEvalKit names."""
    rests = {Path(n).stem[len(model) + 1:] for n in _files_in(folder)
             if n.startswith(model + "_") and Path(n).suffix.lower() in _TABLE_SUFFIXES}
    known = set(datasets) | set(_known_datasets())
    preds = {r for r in rests if r in known
             or (not r.endswith("_result") and not any(r.startswith(o + "_") for o in rests if o != r))}
    return preds, rests


def _split(rest: str, datasets) -> tuple[str, str] | None:
    """(dataset, suffix) of ``{dataset}[_{suffix}]``, the longest dataset first."""
    for d in sorted(datasets, key=len, reverse=True):
        if rest == d:
            return d, ""
        if rest.startswith(d + "_"):
            return d, rest[len(d) + 1:]
    return None


def _vlmevalkit(path: Path) -> FileRole | None:
    """The role of a file named ``{model}_{…}`` where the folder or its run says VLMEvalKit
    wrote it (a run folder, ``status.json``, or the prediction file it extends beside it);
    None for any other file (named from its rows and path when read)."""
    from taxoforge.scores.readers.harness_layouts import split_vlmevalkit_dataset

    folder = path.parent
    run, meta = _run_of(folder)
    status, status_path = _status(folder)
    model = str(status.get("model_name") or meta.name)
    stem = path.stem
    if not model or not stem.startswith(model + "_"):
        return None
    rest = stem[len(model) + 1:]
    entries = status.get("datasets") or {}
    preds, rests = _prediction_stems(folder, model, entries)
    split = _split(rest, entries)
    known = _split(rest, _known_datasets())
    if split is None and known and known[1] and (known[1].endswith("_result") or _SCORE_SUFFIX.search("_" + known[1])):
        split = known  # a known dataset's judge or score file, its prediction file here or not
    split = split or _split(rest, preds) or known
    in_run = run is not None or status_path is not None
    if split is None or (split[1] == "" and rest.endswith("_result")):
        if not in_run or path.suffix.lower() not in _TABLE_SUFFIXES:
            return None
        split = (split_vlmevalkit_dataset(rest), "")  # a judge table whose prediction file is gone
    dataset, suffix = split
    extended = any(r.startswith(rest + "_") for r in rests)
    if not (in_run or suffix or extended):
        return None
    base = dict(harness="vlmevalkit", model=model, dataset=dataset, run=run, sidecar=status_path)
    entry = entries.get(dataset) if isinstance(entries.get(dataset), dict) else {}
    if path.suffix.lower() in (".pkl", ".pickle"):
        return FileRole(path, "skip", reason=f"VLMEvalKit cache of {model}_{dataset} (a pickle)", **base)
    if not suffix:
        named = Path(str(entry.get("prediction_file") or "")).name
        if named and named != path.name and named in _files_in(folder):
            return FileRole(path, "skip", reason=f"not the prediction file status.json names ({named})", **base)
        return FileRole(path, "output", **base)
    pred = next((folder / n for n in _files_in(folder) if Path(n).stem == f"{model}_{dataset}"
                 and Path(n).suffix.lower() in _TABLE_SUFFIXES), None)
    if suffix.endswith("_result") and path.suffix.lower() in _TABLE_SUFFIXES:
        judge = suffix[: -len("_result")]
        named = entry.get("judge_model")
        preferred = bool(named) and judge == _JUDGE_FILE_NAMES.get(named, named)
        return FileRole(path, "judge", of=pred, judge=judge, preferred=preferred, **base)
    what = "score" if _SCORE_SUFFIX.search("_" + suffix) else "intermediate"
    return FileRole(path, "skip", reason=f"VLMEvalKit {what} file of {model}_{dataset} (_{suffix})", **base)


# ---------------------------------------------------------------------------- every file
def classify(path: Path) -> FileRole:
    """What ``path`` is (module docstring).

    Parameters
    ----------
    path : Path
        An existing file (a link's target: the run folder it lies in names its run).

    Returns
    -------
    FileRole
    """
    if path.name == RUN_STATUS:
        return FileRole(path, "skip", "vlmevalkit", reason="VLMEvalKit run status (read for the run's files)")
    found = _lmms_eval(path) or _vlmevalkit(path)
    if found is not None:
        return found
    if path.suffix.lower() in (".pkl", ".pickle"):
        return FileRole(path, "skip", reason="a pickle (a harness's cache), not answers")
    if path.suffix.lower() not in OUTPUT_SUFFIXES:
        return FileRole(path, "skip", reason=f"not a model-output file ({path.suffix or 'no suffix'})")
    return FileRole(path, "output")
