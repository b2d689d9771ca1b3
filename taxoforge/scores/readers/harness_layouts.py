"""The layouts model outputs come in, told from a file's columns and name: where each
canonical column is, what the path says about the model and dataset, where the options of a
multiple-choice question are, and the harness's own verdict on each answer.

Layouts (:data:`LAYOUT_COLUMNS`; the first of a canonical column's candidate paths that a row
has is used):

``vlm4bio``     VLM4Bio result rows ``{question, target-class, output, option-gt, image-path}``;
                model, dataset and prompt from the path
                (``results/<dataset>/[<prompt>/]classification/<mode>/classification_<model>_<mode>_num_…jsonl``).
``lmms-eval``   lmms-eval's ``--log_samples`` records (and lm-evaluation-harness's, which share
                them): ``doc_id``, ``target``, ``filtered_resps`` (from v0.4 on a single-element
                list is written as its element; before, the whole ``doc``, ``arguments`` and
                nested ``resps`` are kept), the prompt in ``input`` (``arguments[0]`` before),
                one field per metric. The file is
                ``{output_path}/{model_name_sanitized}/{date_id}_samples_{task}.jsonl``
                (lm-evaluation-harness: ``samples_{task}_{datetime}.jsonl``): the folder names
                the model, the file the task. lmms-eval before v0.3 wrote
                ``{output_path}/{datetime}_{suffix}_{model}_model_args_{hash}/{task}.json``, one
                JSON document whose ``logs`` hold the records and whose ``args.model_args``
                names the model (``pretrained=…``).
``vlmevalkit``  VLMEvalKit's prediction files: the dataset's table (``index, question, hint,
                A, B, …, answer, category``) plus ``prediction``; the judge step's
                ``…_result`` files add ``hit`` and ``log``. Written as
                ``{work_dir}/{model}/{eval_id}/{model}_{dataset}.xlsx`` (``eval_id``
                ``T20250101-120000`` or ``T20250101_G<commit>``; older:
                ``{work_dir}/{model}/{model}_{dataset}.xlsx``), ``.tsv``/``.csv`` with every field
                quoted or ``.json`` (an indented array) by ``PRED_FORMAT``; judge files
                ``{model}_{dataset}_{judge}_result.{ext}``. Names may hold underscores: the model is
                the folder's name; where no folder names it, the file name is split at a dataset
                name VLMEvalKit knows (``vlmevalkit_datasets.txt``).
``generic``     ``{id, model, prompt, dataset, output, label}`` (``question``, ``category`` optional).

Whatever no row and no path names falls back to the file's stem (model and dataset) and
``default`` (prompt): rows of different files are never pooled under a shared "unknown".

**Column paths.** A canonical column may name a nested field or a list element:
``filtered_resps[0]``, ``doc.target-class``, ``arguments[0][0]``, ``doc.choices[2]``. A
column whose whole name is a key of the row (``image.path`` in a CSV) is that key.

**Options.** A multiple-choice row's options come from columns ``A``–``Z`` (VLMEvalKit: every
one whose cell is not empty — a blank cell ends nothing),
from the ``doc``'s ``A``/``B``/… fields or its ``options``/``choices`` list (lmms-eval before
v0.4), else from the question's text (:func:`taxoforge.scores.mapping.parse.parse_options`).

**The harness's verdict** (:func:`harness_verdicts`). The first of :data:`HARNESS_CORRECT_FIELDS`
a row carries as a number in [0, 1] (or a boolean) is its ``harness_correct``; lmms-eval 0.7's
dict-valued metrics give theirs too (a ``score``, ``acc`` … field in [0, 1], or the equality of
the extracted answer and the truth, as SEED-Bench's ``{"pred", "answer"}``); a VLMEvalKit
prediction file takes its judge table's ``hit`` (:mod:`~taxoforge.scores.readers.sources`). The
leaderboard reports how often it agrees with the project's exact-match ``correct``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

__all__ = ["LAYOUT_COLUMNS", "HARNESS_CORRECT_FIELDS", "detect_layout", "path_info", "column_value", "may_name_a_value",
           "parse_column_path", "row_options", "harness_correct", "suggest_columns", "vlm4bio_path_info",
           "vlmevalkit_datasets", "unwrap", "split_vlmevalkit_dataset", "harness_verdicts",
           "METRIC_VERDICT_FIELDS"]

#: Candidate paths of each canonical column, per layout (first present wins).
LAYOUT_COLUMNS: dict[str, dict[str, tuple[str, ...]]] = {
    "vlm4bio": {"question": ("question",), "output": ("output",), "label": ("target-class",), "id": ("image-path",)},
    "lmms-eval": {"id": ("doc_id",), "output": ("filtered_resps", "resps"), "label": ("target",),
                  # the prompt: v0.3+ ``input``; before, the request's context; lm-evaluation-harness's gen_args
                  "question": ("input", "arguments[0][0]", "arguments[0]", "arguments.0",
                               "arguments.gen_args_0.arg_0"),
                  "category": ("doc.category",)},
    "vlmevalkit": {"id": ("index",), "output": ("prediction",), "label": ("answer",), "question": ("question",),
                   "category": ("category",)},
    "generic": {c: (c,) for c in ("id", "model", "prompt", "dataset", "question", "output", "label", "category")},
}
#: Per-row correctness fields a harness writes, in the order they are looked for.
HARNESS_CORRECT_FIELDS = ("hit", "exact_match", "acc", "accuracy", "correct", "is_correct", "match", "em")


# ---------------------------------------------------------------------------- column paths
_SEGMENT = re.compile(r"\[(-?\d+)\]")


def parse_column_path(path: str) -> list:
    """The steps of a column path: ``"doc.choices[2]"`` → ``["doc", "choices", 2]``.

    Parameters
    ----------
    path : str
        Keys separated by dots, ``[n]`` list indices (negative from the end).

    Returns
    -------
    list of str and int

    Raises
    ------
    ValueError
        For what is no column path.
    """
    out: list = []
    for part in path.split("."):
        m = re.match(r"^([^\[]*)((?:\[-?\d+\])*)$", part)
        if not m:
            raise ValueError(f"{path!r}: not a column path (KEY[.KEY…] with [N] list indices)")
        if m.group(1):
            out.append(m.group(1))
        out.extend(int(i) for i in _SEGMENT.findall(m.group(2)))
    if not out:
        raise ValueError(f"{path!r}: an empty column path")
    return out


_MISSING = object()


def column_value(row: dict, path: str, default=_MISSING):
    """The value a column or column path names in a row.

    Parameters
    ----------
    row : dict
        One record.
    path : str
        A key of the row (taken as it is first), else a column path (:func:`parse_column_path`).
    default : object, optional
        Returned when a step is missing (without it: :class:`KeyError`).

    Returns
    -------
    object
    """
    if path in row:
        return row[path]
    v = row
    for step in _path_steps(path):
        if isinstance(step, int):
            if not isinstance(v, list) or not -len(v) <= step < len(v):
                if default is _MISSING:
                    raise KeyError(path)
                return default
            v = v[step]
        else:
            if not isinstance(v, dict) or step not in v:
                if default is _MISSING:
                    raise KeyError(path)
                return default
            v = v[step]
    return v


def may_name_a_value(path: str, present) -> bool:
    """Whether the column path ``path`` can name a value in rows whose keys are among
    ``present``: it is one of them, or a path of several steps whose first step is one.
    Where not, :func:`column_value` gives its default for every such row.

    Parameters
    ----------
    path : str
        A key or a column path.
    present : collection of str
        Every key of the rows.

    Returns
    -------
    bool
    """
    if path in present:
        return True
    steps = _path_steps(path)
    return len(steps) > 1 and steps[0] in present


@lru_cache(maxsize=256)
def _path_steps(path: str) -> tuple:
    try:
        return tuple(parse_column_path(path))
    except ValueError:
        return (path,)


def unwrap(v):
    """A single-element list as its element, repeatedly (lmms-eval's ``[["text"]]``).

    Parameters
    ----------
    v : object

    Returns
    -------
    object
    """
    while isinstance(v, list) and len(v) == 1:
        v = v[0]
    return v


# ---------------------------------------------------------------------------- layouts
def detect_layout(columns) -> str | None:
    """The layout column names say.

    Parameters
    ----------
    columns : iterable of str
        The keys of a file's records.

    Returns
    -------
    str or None
        ``vlm4bio``, ``lmms-eval``, ``vlmevalkit``, ``generic``, or None when none fits.
    """
    cols = set(columns)
    if {"target-class", "output"} <= cols or {"option-gt", "output"} <= cols:
        return "vlm4bio"
    if "doc_id" in cols and cols & {"filtered_resps", "resps"} and "target" in cols:
        return "lmms-eval"
    if "prediction" in cols and cols & {"index", "answer"}:
        return "vlmevalkit"
    if {"output", "label"} <= cols:
        return "generic"
    return None


_VLM4BIO_FILE = re.compile(r"classification_(?P<model>.+?)_(?P<mode>selection|direct|open)"
                           r"(?:_num_\d+)?(?:_chunk_\d+)?$")


def vlm4bio_path_info(path: str | Path) -> dict[str, str]:
    """The model, dataset and prompt of a VLM4Bio result file from its path.

    Parameters
    ----------
    path : str or Path
        ``…/results/<dataset>/[<prompt>/]classification/<mode>/classification_<model>_<mode>_num_….jsonl``.

    Returns
    -------
    dict
        ``model``, ``dataset``, ``prompt`` (the file's stem where the path does not say).
    """
    p = Path(path)
    m = _VLM4BIO_FILE.match(p.stem)
    model = m.group("model") if m else p.stem
    mode = m.group("mode") if m else "default"
    parts = list(p.parts)
    dataset, prompt = p.stem, mode
    if "results" in parts:
        rest = parts[parts.index("results") + 1:-1]
        if rest:
            dataset = rest[0]
        if "classification" in rest:
            pre = rest[1:rest.index("classification")]
            if pre:
                prompt = f"{'/'.join(pre)}/{mode}"
    elif len(parts) >= 2 and m:
        dataset = parts[-2]
    return {"model": model, "dataset": dataset, "prompt": prompt}


_LMMS_SAMPLES = (re.compile(r"^(?P<date>\d{8}_\d{6})_samples_(?P<task>.+)$"),
                 re.compile(r"^samples_(?P<task>.+?)_(?P<date>\d{4}-\d{2}-\d{2}T[\d\-.]+)$"),
                 re.compile(r"^samples_(?P<task>.+)$"))
_LMMS_OLD_FOLDER = re.compile(r"^\d{4}-?\d{2}-?\d{2}[_T-]?[\d\-:]*_(?P<rest>.+)_model_args_[0-9a-f]+$")
_MODEL_ARG_KEYS = ("peft=", "delta=", "pretrained=", "model=", "model_version=", "model_name=", "model_id=", "path=",
                   "engine=")


def _model_from_args(args) -> str | None:
    """The model named in lmms-eval's ``args`` (``model_args`` by its own prefix order, else ``model``)."""
    if not isinstance(args, dict):
        return None
    margs = args.get("model_args")
    if isinstance(margs, str):
        for key in _MODEL_ARG_KEYS:
            if key in margs:
                name = margs.split(key, 1)[1].split(",", 1)[0].strip()
                if name:
                    return name.rstrip("/").split("/")[-1] if "/" in name and name.startswith("/") else name
    model = args.get("model")
    return str(model) if model else None


def _lmms_eval_info(path: Path, meta: dict) -> dict[str, str]:
    stem = path.stem
    out: dict[str, str] = {}
    for rx in _LMMS_SAMPLES:
        m = rx.match(stem)
        if m:
            out["dataset"] = m.group("task")
            out["model"] = path.parent.name or stem
            break
    else:
        out["dataset"] = stem
    named = _model_from_args(meta.get("args"))
    if named:
        out["model"] = named
    elif "model" not in out:
        m = _LMMS_OLD_FOLDER.match(path.parent.name)
        if m:
            out["model"] = m.group("rest")
    return out


_EVAL_ID = re.compile(r"^T\d{8}(?:-\d{6}|_G[0-9a-fA-F]+)$")
_RESULT = re.compile(r"_result$")


@lru_cache(maxsize=1)
def vlmevalkit_datasets() -> tuple[str, ...]:
    """VLMEvalKit's dataset names (``vlmevalkit_datasets.txt``).

    Returns
    -------
    tuple of str
        Longest first, so the longest name a file name holds is found first.
    """
    text = (Path(__file__).with_name("vlmevalkit_datasets.txt")).read_text(encoding="utf-8")
    names = {ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")}
    return tuple(sorted(names, key=lambda n: (-len(n), n)))


def _split_dataset(rest: str, judged: bool) -> str:
    """The dataset part of ``{dataset}[_{judge}_result]`` or ``{dataset}[_{suffix}]``."""
    base = _RESULT.sub("", rest)
    for name in vlmevalkit_datasets():
        if base == name or base.startswith(name + "_"):
            return name
    if base != rest:  # a judge's result file: {dataset}_{judge}_result
        for judge in ("_exact_matching", "_vanilla"):
            if base.endswith(judge):
                return base[: -len(judge)] or rest
        return base.rsplit("_", 1)[0] if "_" in base else base
    return base


def split_vlmevalkit_dataset(rest: str) -> str:
    """The dataset of a VLMEvalKit file name less its ``{model}_``: a dataset VLMEvalKit knows
    that starts it, else the name less a judge's ``_{judge}_result``.

    Parameters
    ----------
    rest : str
        ``{dataset}``, ``{dataset}_{judge}_result`` …

    Returns
    -------
    str
    """
    return _split_dataset(rest, rest.endswith("_result"))


def _vlmevalkit_info(path: Path, judged: bool) -> dict[str, str]:
    stem = path.stem
    folder = path.parent
    model = None
    if _EVAL_ID.match(folder.name):
        folder = folder.parent
    if folder.name and stem.startswith(folder.name + "_"):
        model = folder.name
    if model is not None:
        return {"model": model, "dataset": _split_dataset(stem[len(model) + 1:], judged)}
    base = _RESULT.sub("", stem)
    for name in vlmevalkit_datasets():
        i = base.find("_" + name)
        while i > 0:
            after = base[i + 1 + len(name):]
            if after == "" or after.startswith("_"):
                return {"model": base[:i], "dataset": name}
            i = base.find("_" + name, i + 1)
    return {}


def path_info(layout: str, path: Path, meta: dict | None = None, rows=()) -> dict[str, str]:
    """What a file's path says about its rows under a layout.

    Parameters
    ----------
    layout : str
        One of :data:`LAYOUT_COLUMNS`.
    path : Path
        The file.
    meta : dict, optional
        The document's own fields (lmms-eval's ``args``).
    rows : sequence of dict
        The file's records (a VLMEvalKit judge file has ``hit``).

    Returns
    -------
    dict
        ``model``/``dataset``/``prompt`` as far as the path names them; the rest absent.
    """
    if layout == "vlm4bio":
        return vlm4bio_path_info(path)
    if layout == "lmms-eval":
        return _lmms_eval_info(path, meta or {})
    if layout == "vlmevalkit":
        judged = any("hit" in r for r in rows[:1])
        return _vlmevalkit_info(path, judged)
    return {}


# ---------------------------------------------------------------------------- options, verdicts
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _letter_fields(d: dict) -> dict[str, str]:
    """Every ``A``–``Z`` field whose cell is not empty (VLMEvalKit's ``build_choices``: a
    blank cell ends nothing), when two or more are."""
    out = {}
    for letter in _LETTERS:
        v = d.get(letter)
        if v is None or (isinstance(v, float) and v != v) or (isinstance(v, str) and not v.strip()):
            continue
        out[letter] = str(int(v)) if isinstance(v, float) and v.is_integer() else str(v).strip()
    return out if len(out) >= 2 else {}


def row_options(row: dict) -> dict[str, str]:
    """The options of a multiple-choice row given as fields (module docstring).

    Parameters
    ----------
    row : dict

    Returns
    -------
    dict
        Letter → option text; ``{}`` when the row has none as fields (its question is read then).
    """
    opts = _letter_fields(row)
    if opts:
        return opts
    doc = row.get("doc")
    if isinstance(doc, dict):
        opts = _letter_fields(doc)
        if opts:
            return opts
        for key in ("options", "choices"):
            lst = doc.get(key)
            if isinstance(lst, list) and 2 <= len(lst) <= 26 and all(isinstance(x, str) for x in lst):
                return {_LETTERS[i]: x.strip() for i, x in enumerate(lst)}
    return {}


#: Fields of a dict-valued metric (lmms-eval's ``process_results``: MME's ``{"score"}``,
#: MMStar's ``{"score"}``, ``{"acc"}`` …) that hold the harness's verdict.
METRIC_VERDICT_FIELDS = ("score", "hit", "correct", "is_correct", "acc", "accuracy", "exact_match", "match", "em")
#: A dict-valued metric holding the extracted answer and the truth, no verdict (SEED-Bench's
#: ``{"pred", "answer"}``): the verdict is their equality.
_PRED_FIELDS = ("pred", "parsed_pred", "pred_answer", "pred_ans")
_GOLD_FIELDS = ("answer", "gt", "gt_answer", "ground_truth", "true_answer")
#: Fields of a harness's record that are no metric.
_NOT_METRICS = frozenset({"doc", "arguments", "resps", "filtered_resps", "token_counts", "input_media", "input",
                          "target", "doc_id", "doc_hash", "prompt_hash", "target_hash", "filter", "metrics"})


def _verdict_value(v) -> float | None:
    """A verdict as 0..1, None for what is none (a number outside [0, 1] is a rating: ``nan``)."""
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, str):
        s = v.strip().lower()
        if s in ("true", "false"):
            return float(s == "true")
        try:
            v = float(s)
        except ValueError:
            return None
    if isinstance(v, (int, float)) and v == v:
        return float(v) if 0.0 <= float(v) <= 1.0 else float("nan")
    return None


def _verdicts_of(row: dict):
    """``(path, value)`` of each place a row may hold the harness's verdict, in order."""
    for f in HARNESS_CORRECT_FIELDS:
        if row.get(f) is not None:
            yield f, _verdict_value(row[f])
    for key, metric in row.items():
        if not isinstance(metric, dict) or key in _NOT_METRICS:
            continue
        for f in METRIC_VERDICT_FIELDS:
            if metric.get(f) is not None:
                yield f"{key}.{f}", _verdict_value(metric[f])
        pred = next((metric[f] for f in _PRED_FIELDS if isinstance(metric.get(f), (str, int))), None)
        gold = next((metric[f] for f in _GOLD_FIELDS if isinstance(metric.get(f), (str, int))), None)
        if pred is not None and gold is not None:
            yield f"{key}.pred=answer", float(str(pred).strip().casefold() == str(gold).strip().casefold())


def harness_verdicts(rows) -> list[float | None]:
    """The harness's own verdict on each row of a file (module docstring): the first of
    :data:`HARNESS_CORRECT_FIELDS` a row carries as a number in [0, 1] or a boolean, else a
    dict-valued metric's verdict field (:data:`METRIC_VERDICT_FIELDS`), else the equality of
    a dict-valued metric's extracted answer and truth. A field holding a number outside
    [0, 1] in any row of the file is a rating, no verdict, in every row.

    Parameters
    ----------
    rows : sequence of dict
        A file's records.

    Returns
    -------
    list of float or None
    """
    found = [list(_verdicts_of(r)) for r in rows]
    ratings = {path for cands in found for path, v in cands if v is not None and v != v}
    out = []
    for cands in found:
        out.append(next((v for path, v in cands if v is not None and path not in ratings), None))
    return out


def harness_correct(row: dict) -> float | None:
    """The harness's own verdict on one row (:func:`harness_verdicts` of a one-row file).

    Parameters
    ----------
    row : dict

    Returns
    -------
    float or None
    """
    return harness_verdicts([row])[0]


_OUTPUT_NAMES = ("output", "prediction", "response", "pred", "predicted", "answer_pred", "model_output",
                 "model_answer", "generation", "gen", "completion", "filtered_resps", "resps", "text", "answer")
_LABEL_NAMES = ("label", "target", "gt", "ground_truth", "groundtruth", "gold", "gt_answer", "target-class",
                "target_class", "class", "class_name", "species", "truth", "reference", "answer")


def _flat_names(row: dict, depth: int = 2, prefix: str = "") -> list[tuple[str, object]]:
    out = []
    for k, v in row.items():
        name = f"{prefix}{k}"
        if isinstance(v, list) and v:
            out.append((f"{name}[0]", v[0]) if not isinstance(unwrap(v), list) else (name, v))
        else:
            out.append((name, v))
        if isinstance(v, dict) and depth > 1:
            out.extend(_flat_names(v, depth - 1, name + "."))
    return out


def suggest_columns(rows, require) -> list[str]:
    """``--column`` options that would read a file.

    For each required canonical column: the best-named field of the first row holding text
    (else the first text field left that does not look like an id), a nested field or list
    element written as a column path; ``<COLUMN>`` where nothing fits.

    Parameters
    ----------
    rows : sequence of dict
        The file's records.
    require : sequence of str
        The canonical columns needed (``output``, ``label``).

    Returns
    -------
    list of str
        Command-line words: ``["--column", "output=resps[0]", …]``.
    """
    first = rows[0] if rows else {}
    flat = [(name, v) for name, v in _flat_names(first) if isinstance(unwrap(v), (str, int, float))
            and not isinstance(unwrap(v), bool)]
    picks: dict[str, str | None] = {}
    used: set[str] = set()
    wanted = [c for c in ("output", "label") if c in require]
    for canon in wanted:
        names = _OUTPUT_NAMES if canon == "output" else _LABEL_NAMES
        picks[canon] = next((name for want in names for name, _ in flat if name not in used
                             and re.sub(r"\[\d+\]$", "", name).rsplit(".", 1)[-1].lower() == want), None)
        used.add(picks[canon] or "")
    for canon in wanted:
        if picks[canon] is None:
            picks[canon] = next((name for name, v in flat if name not in used and isinstance(unwrap(v), str)
                                 and not _ID_LIKE.search(name)), None)
            used.add(picks[canon] or "")
    words: list[str] = []
    for canon in wanted:
        words += ["--column", f"{canon}={picks[canon] or '<COLUMN>'}"]
    return words


_ID_LIKE = re.compile(r"(?:^|[._\-])(?:id|idx|index|hash|path|file|image|url)(?:$|[._\-\[])|_id\b", re.IGNORECASE)
