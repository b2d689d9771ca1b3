"""From what a user names — files, folders, glob patterns — to the sources a run reads: one
per model and dataset, however it was given.

:func:`gather_sources` expands the paths (a folder: every file under it, hidden ones
aside; a glob: its matches, ``**`` any depth), reads a link as the file it points to (so
VLMEvalKit's links in the model folder and the run folder's files are one file, counted
once), and gives each file its role by the harnesses' own naming rules
(:mod:`~taxoforge.scores.readers.run_folders`):

* a prediction file and its judge table are **one source**: the prediction file's rows, the
  judge's ``hit`` as the harness's verdict (whichever of the two was named, or both; the
  judge the run's ``status.json`` names, else the newest);
* score and status files — ``status.json``, lmms-eval's ``*_results.json``, VLMEvalKit's
  ``_acc.*``, ``_score.*`` …, pickles, logs — are **skipped, each with its reason**
  (:attr:`SourceSet.skipped`; a file whose name looks like a score table and whose columns
  are no answers is skipped when read);
* **re-runs**: of the runs of one harness, model and dataset only the latest is read, by the
  harness's own run id (:func:`~taxoforge.scores.readers.run_folders.run_order`); the others are
  listed in :attr:`SourceSet.superseded`. With ``all_runs`` every run is read as its own
  model, ``{model}@{run}`` — apart, never pooled.

:func:`read_sources` reads them into one canonical table (:func:`~taxoforge.scores.readers.files.read_outputs`);
:meth:`SourceSet.record` is what ``run.json`` says of them, each input with its sha256 and
size.
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import polars as pl

from taxoforge.files.paths import check_regular
from taxoforge.messages import few
from taxoforge.scores.options import ReadOptions, split_options
from taxoforge.scores.readers.files import OutputFileError, check_duplicate_ids, read_outputs
from taxoforge.scores.readers.run_folders import FileRole, classify, run_order

__all__ = ["Source", "SourceSet", "gather_sources", "read_sources", "read_paths", "read_files", "expand_paths"]

#: Names of score tables written by harnesses and by hand; such a file is skipped when its
#: columns hold no answers (read first: a file of answers may bear such a name).
_SCORE_NAME = re.compile(r"(?:^|[_\-.])(?:results|acc|accuracy|acc_all|score|scores|rating|metrics|summary|"
                         r"leaderboard|status)(?:[_\-.][^/]*)?\.(?:json|csv|tsv|xlsx)$", re.IGNORECASE)


@dataclass(frozen=True)
class Source:
    """The rows of one model and dataset of one run.

    Attributes
    ----------
    file : Path
        The file read.
    judge : Path or None
        A judge table whose per-row verdict (``hit``) joins the rows by sample id.
    harness, model, dataset, run : str or None
        As the harness's files name them (None: from the rows and the path when read).
    given : tuple of str
        The names the paths given reached it by (links, the judge table).
    sidecar : Path or None
        The run's record read to name it (``status.json``, ``*_results.json``).
    suffix_run : bool
        Name its model ``{model}@{run}`` (every run read apart).
    """

    file: Path
    judge: Path | None = None
    harness: str | None = None
    model: str | None = None
    dataset: str | None = None
    run: str | None = None
    given: tuple[str, ...] = ()
    sidecar: Path | None = None
    suffix_run: bool = False

    def as_dict(self) -> dict:
        """What ``run.json`` says of it.

        Returns
        -------
        dict
        """
        return {"file": str(self.file), "judge": str(self.judge) if self.judge else None, "harness": self.harness,
                "model": self.model, "dataset": self.dataset, "run": self.run, "given": list(self.given)}


@dataclass
class SourceSet:
    """The sources of a run and what else the paths named.

    Attributes
    ----------
    sources : list of Source
        Read, in the order the paths gave them.
    skipped : list of dict
        ``{"file", "reason"}`` of every file not read.
    superseded : list of dict
        ``{"file", "judge", "harness", "model", "dataset", "run", "latest_run"}`` of the
        earlier runs not read.
    links : int
        Links to files read once through another name.
    all_runs : bool
        Every run read apart.
    """

    sources: list[Source]
    skipped: list[dict] = field(default_factory=list)
    superseded: list[dict] = field(default_factory=list)
    links: int = 0
    all_runs: bool = False

    def input_files(self) -> list[tuple[Path, str]]:
        """Every file the run reads: ``(path, role)`` with role ``output``, ``judge`` or ``record``.

        Returns
        -------
        list of (Path, str)
        """
        out, seen = [], set()
        for s in self.sources:
            for p, role in ((s.file, "output"), (s.judge, "judge"), (s.sidecar, "record")):
                if p is not None and p not in seen:
                    seen.add(p)
                    out.append((p, role))
        return out

    def record(self, hashes: bool = True) -> dict:
        """What ``run.json`` records: ``inputs`` (each file read with its ``sha256`` and
        ``bytes``), ``sources``, ``skipped_files``, ``superseded``, ``all_runs``.

        Parameters
        ----------
        hashes : bool
            Hash every input (the content a result rests on).

        Returns
        -------
        dict
        """
        from taxoforge.files.checksums import file_record

        inputs = [file_record(p, role) if hashes else {"file": str(p), "role": role, "bytes": p.stat().st_size}
                  for p, role in self.input_files()]
        return {"inputs": inputs, "sources": [s.as_dict() for s in self.sources], "skipped_files": self.skipped,
                "superseded": self.superseded, "all_runs": self.all_runs}

    def notes(self) -> list[str]:
        """Lines for a person: what was skipped and why, the runs not read.

        Returns
        -------
        list of str
        """
        lines = []
        by_reason: dict[str, list[str]] = {}
        for s in self.skipped:
            f = Path(s["file"])
            by_reason.setdefault(re.sub(r" of \S+| \(.*\)$", "", s["reason"]), []).append(
                f"{f.parent.name}/{f.name}" if f.parent.name else f.name)
        for reason, names in sorted(by_reason.items(), key=lambda kv: -len(kv[1])):
            lines.append(f"skipped {len(names)} file{'s' if len(names) != 1 else ''}, {reason}: "
                         f"{few(names, quote=False)}")
        if self.links:
            lines.append(f"{self.links} link{'s' if self.links != 1 else ''} to a file read through another name: "
                         "counted once")
        if self.superseded:
            runs = [f"{s['model']} / {s['dataset']} {s['run'] or Path(s['file']).parent.name} (latest {s['latest_run']})"
                    for s in self.superseded]
            lines.append(f"{len(runs)} earlier run{'s' if len(runs) != 1 else ''} not read: {few(runs, quote=False)}; "
                         "--all-runs scores every run apart")
        return lines


def _error(message: str):
    return OutputFileError(message)


def _glob_files(pattern: str) -> list[Path]:
    """What ``pattern`` matches that is no folder, sorted; ``**`` descends into folders but
    never through a symbolic link to one (a link loop would never end: :func:`glob.glob`
    follows them), and hidden names are left out unless the pattern names one (a part
    starting with a dot), as :mod:`glob` does."""
    parts = Path(pattern).parts
    i = next(k for k, part in enumerate(parts) if glob.has_magic(part))
    root = Path(*parts[:i]) if i else Path(".")
    rest = parts[i:]
    hidden_asked = any(part.startswith(".") for part in rest)
    out = []
    for f in root.glob("/".join(rest)):
        if not hidden_asked and any(name.startswith(".") for name in f.relative_to(root).parts):
            continue
        if not f.is_dir():
            out.append(f)
    return sorted(out)


def expand_paths(patterns) -> list[Path]:
    """The files ``patterns`` name, in order, each name once: a file as it is; a folder as
    every file under it (recursively, sorted; hidden files and folders left out); a glob
    pattern (``*``, ``?``, ``[…]``, ``**`` for any depth) as its matching files, sorted — so
    ``'results/**/*.jsonl'`` works whether or not the shell expanded it.

    Parameters
    ----------
    patterns : iterable of str or Path

    Returns
    -------
    list of Path

    Raises
    ------
    OutputFileError
        For a pattern that matches nothing, a path that does not exist, an empty folder.
    """
    out: list[Path] = []
    for pat in patterns:
        text = os.fspath(pat)
        p = Path(text)
        if p.exists() and not p.is_dir() and not p.is_file():  # a FIFO, a device, a socket named as a file
            check_regular(p, "model-output file")  # refused by name (exit code 11), never waited on
        if p.is_file() or (p.is_symlink() and not p.exists()):
            found = [p]
        elif p.is_dir():
            found = sorted(f for f in p.rglob("*") if (f.is_file() or f.is_symlink()) and not f.is_dir()
                           and not any(part.startswith(".") for part in f.relative_to(p).parts))
            if not found:
                raise _error(f"{text}: a folder without files")
        elif glob.escape(text) != text:
            found = _glob_files(text)
            if not found:
                raise _error(f"{text}: no file matches this pattern")
        else:
            raise _error(f"{text}: no such file")
        out.extend(found)
    seen: set[Path] = set()
    unique = []
    for f in out:
        if f.absolute() not in seen:
            seen.add(f.absolute())
            unique.append(f)
    return unique


def _real(p: Path) -> Path:
    """The file a path names, links followed (relative to the working folder when the path
    given was relative and the file lies below it)."""
    real = Path(os.path.realpath(p))
    if real == Path(os.path.abspath(p)):
        return p
    if p.is_absolute():
        return real
    rel = Path(os.path.relpath(real))
    return real if ".." in rel.parts else rel


def _judges_beside(pred: FileRole) -> list[FileRole]:
    """The judge tables of a VLMEvalKit prediction file lying beside it."""
    prefix = f"{pred.model}_{pred.dataset}_"
    out = []
    for f in sorted(pred.path.parent.iterdir()):
        if f.name.startswith(prefix) and f.is_file() and "_result." in f.name:
            role = classify(f)
            if role.role == "judge" and role.of is not None and role.of.name == pred.path.name:
                out.append(role)
    return out


def _pick_judge(judges: list[FileRole], skipped: list[dict]) -> FileRole | None:
    if not judges:
        return None
    best = max(judges, key=lambda j: (j.preferred, j.path.stat().st_mtime, j.path.name))
    for j in judges:
        if j is not best:
            skipped.append({"file": str(j.path), "reason": f"another judge's table of {j.model}_{j.dataset} "
                                                            f"(the verdict read is {best.judge}'s)"})
    return best


def gather_sources(patterns, all_runs: bool = False) -> SourceSet:
    """The sources ``patterns`` name (module docstring).

    Parameters
    ----------
    patterns : iterable of str or Path
        Files, folders, glob patterns.
    all_runs : bool
        Read every run of a harness, model and dataset apart (default: the latest).

    Returns
    -------
    SourceSet

    Raises
    ------
    OutputFileError
        For a path that names nothing, and when no file named holds model outputs.
    """
    roles: dict[Path, FileRole] = {}
    given: dict[Path, list[str]] = {}
    skipped: list[dict] = []
    links = 0
    for p in expand_paths(patterns):
        if p.is_symlink() and not p.exists():
            skipped.append({"file": str(p), "reason": "a link to a file that is gone"})
            continue
        real = _real(p)
        key = real.resolve()
        if key in roles:
            links += 1
            given[key].append(str(p))
            continue
        roles[key] = classify(real)
        given[key] = [str(p)]
    outputs: dict[Path, FileRole] = {}  # a judge table named: its prediction file, when there is one
    for key, role in roles.items():
        if role.role == "skip":
            skipped.append({"file": str(role.path), "reason": role.reason})
        elif role.role == "judge" and role.of is not None and role.of.is_file():
            pred_key = role.of.resolve()
            if pred_key not in outputs:
                outputs[pred_key] = roles.get(pred_key) or classify(role.of)
                given.setdefault(pred_key, [])
            given[pred_key] += given[key]
        else:
            outputs[key] = role
    sources = []
    for key, role in outputs.items():
        judge = None
        if role.harness == "vlmevalkit" and role.role == "output":
            judge = _pick_judge(_judges_beside(role), skipped)
        sources.append(Source(role.path, judge.path if judge else None, role.harness, role.model, role.dataset,
                              role.run, tuple(given.get(key, ())), role.sidecar))
    chosen, superseded = _latest_runs(sources, all_runs)
    if not chosen:
        why = few((f"{Path(s['file']).name} ({s['reason']})" for s in skipped), quote=False) or "nothing"
        raise _error(f"no model-output file among the paths given: skipped {why}")
    return SourceSet(chosen, skipped, superseded, links, all_runs)


def _latest_runs(sources: list[Source], all_runs: bool) -> tuple[list[Source], list[dict]]:
    """The sources to read: per harness, model and dataset, the latest run (or each run apart)."""
    groups: dict[tuple, list[Source]] = {}
    for s in sources:
        if s.harness and s.model and s.dataset:
            groups.setdefault((s.harness, s.model, s.dataset), []).append(s)
    drop, rename, superseded = set(), set(), []
    for runs in groups.values():
        if len(runs) < 2:
            continue
        runs = sorted(runs, key=lambda s: (run_order(s.run), s.file.stat().st_mtime, str(s.file)))
        if all_runs:
            rename.update(id(s) for s in runs)
            continue
        latest = runs[-1]
        for s in runs[:-1]:
            drop.add(id(s))
            superseded.append({"file": str(s.file), "judge": str(s.judge) if s.judge else None, "harness": s.harness,
                               "model": s.model, "dataset": s.dataset, "run": s.run, "latest_run": latest.run})
    kept = [replace(s, suffix_run=True) if id(s) in rename else s for s in sources if id(s) not in drop]
    return kept, superseded


def _with_judge(rows: pl.DataFrame, judge: Path, options) -> pl.DataFrame:
    """The rows with the judge table's per-row verdict where they carry none of their own."""
    verdicts = read_outputs(judge, replace(options, require=("output",), allow_duplicate_ids=True)) \
        .select("id", pl.col("harness_correct").alias("_judge")).unique("id", keep="first")
    return (rows.join(verdicts, on="id", how="left", maintain_order="left")
            .with_columns(pl.coalesce("harness_correct", "_judge").alias("harness_correct")).drop("_judge"))


def read_sources(sources: SourceSet, options=None) -> pl.DataFrame:
    """The canonical table of every source (:func:`~taxoforge.scores.readers.files.read_outputs`),
    each named as its harness's files name it (unless the options' ``defaults`` name it),
    with its judge's verdict; a file whose name looks like a score table and whose columns
    hold no answers is moved to :attr:`SourceSet.skipped`.

    Parameters
    ----------
    sources : SourceSet
    options : ReadOptions, optional

    Returns
    -------
    polars.DataFrame

    Raises
    ------
    OutputFileError
        For a file that cannot be read, and for sample ids shared within one model, dataset
        and prompt across sources (unless ``allow_duplicate_ids``).
    """
    o = options or ReadOptions()
    frames, kept = [], []
    for s in sources.sources:
        names = {k: v for k, v in (("model", s.model), ("dataset", s.dataset)) if v}
        so = replace(o, defaults={**names, **o.defaults}) if names else o
        try:
            df = read_outputs(s.file, so)
        except OutputFileError as e:
            if s.harness is None and _SCORE_NAME.search(s.file.name) and "cannot tell the format" in str(e):
                sources.skipped.append({"file": str(s.file), "reason": "a score table (no answers in its columns)"})
                continue
            raise
        if s.judge is not None:
            df = _with_judge(df, s.judge, so)
        if s.suffix_run:
            df = df.with_columns((pl.col("model") + "@" + (s.run or s.file.parent.name)).alias("model"))
        frames.append(df)
        kept.append(s)
    if not frames:
        raise OutputFileError("no model-output file among the paths given: skipped "
                              + few((f"{Path(x['file']).name} ({x['reason']})" for x in sources.skipped), quote=False))
    sources.sources = kept
    rows = frames[0] if len(frames) == 1 else pl.concat(frames, how="diagonal_relaxed")
    check_duplicate_ids(rows, o.allow_duplicate_ids)
    return rows


def read_paths(patterns, options=None) -> tuple[pl.DataFrame, SourceSet]:
    """:func:`read_sources` of :func:`gather_sources` (``options.all_runs`` says which runs).

    Parameters
    ----------
    patterns : iterable of str or Path
        Files, folders, glob patterns.
    options : ReadOptions, optional

    Returns
    -------
    (polars.DataFrame, SourceSet)
    """
    sources = gather_sources(patterns, all_runs=bool(options is not None and options.all_runs))
    return read_sources(sources, options), sources


def read_files(paths, options: ReadOptions | None = None, **kwargs) -> pl.DataFrame:
    """The canonical table of the model outputs ``paths`` name — files, folders, glob
    patterns —, one source per model and dataset however given
    (:func:`~taxoforge.scores.readers.sources.read_paths`: judge tables joined, score files skipped,
    the latest run of each).

    Parameters
    ----------
    paths : iterable of str or Path
    options : ReadOptions, optional
    **kwargs
        Fields of :class:`~taxoforge.scores.options.ReadOptions`, as for :func:`read_outputs`.

    Returns
    -------
    polars.DataFrame
        :func:`read_outputs`'s tables concatenated; ``file`` says where each row came from.

    Raises
    ------
    OutputFileError
        For a file that cannot be read, and for sample ids shared within one model, dataset
        and prompt — in one file or across files — unless ``allow_duplicate_ids``.
    """
    o = split_options(kwargs, read=options, where="read_files")[0] if kwargs else (options or ReadOptions())
    paths = list(paths)
    if not paths:
        raise ValueError("no model-output files given")
    return read_paths(paths, o)[0]
