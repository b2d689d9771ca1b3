"""The figures of a written scoring run, drawn from its folder: by ``taxoforge plot RUN``, or by
the process of their own that ``taxoforge score`` starts once the tables are written (so the
command returns without waiting for them), and recorded in the folder's ``run.json``.

Drawing reads only what the run wrote — ``leaderboard.parquet``, ``breakdowns/*.parquet`` and
``run.json`` (the display names) — and draws what
:func:`~taxoforge.scores.reports.figures.write_run_figures` draws in the run itself, file for
file: each written atomically (a temporary file, then a rename). ``run.json``'s ``figures``
entry says where the drawing stands, rewritten atomically at each change:

===========  =================================================================================
status       meaning
===========  =================================================================================
``drawing``  a process is drawing them (``log``: where it writes what goes wrong)
``drawn``    done: ``files`` (the names written), ``not_drawn`` (figure → why it has nothing to
             show, as ``figures_not_drawn`` beside it), ``seconds``
``failed``   the drawing stopped: ``error`` says why; ``taxoforge plot RUN`` draws them again
``none``     none asked for (``--plots none``, a run without samples): ``taxoforge plot RUN``
             draws them
===========  =================================================================================

**A folder replaced while drawing.** Each written run has its own ``run_id`` in ``run.json``.
A drawing started for one run id reads it again before writing each figure and before
recording what it drew, and when the folder now holds another run (a newer ``taxoforge score
-o`` into the same folder replaced it) it stops without writing anything more
(:class:`RunReplaced`).
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path

import polars as pl

from taxoforge.files import write_text_atomic
from taxoforge.scores.reports.figures import FIGURE_FORMATS, write_run_figures

__all__ = ["draw_folder_figures", "figures_entry", "new_run_id", "read_run_record", "write_run_record",
           "RunReplaced", "RunFolderError", "RUN_RECORD", "FIGURES_LOG", "FIGURE_STATUSES"]

#: The run's record in its folder.
RUN_RECORD = "run.json"
#: Where a background drawing writes what goes wrong (its standard output and error).
FIGURES_LOG = "figures.log"
#: The values of ``run.json``'s ``figures.status``.
FIGURE_STATUSES = ("drawing", "drawn", "failed", "none")


class RunReplaced(Exception):
    """The run folder holds another run than the one whose figures were being drawn."""


class RunFolderError(ValueError):
    """A folder that is not a written scoring run (no ``run.json``, or no leaderboard)."""


def new_run_id() -> str:
    """A new run's id (``run.json``'s ``run_id``): 32 random hexadecimal digits.

    Returns
    -------
    str
    """
    return uuid.uuid4().hex


def figures_entry(status: str, **fields) -> dict:
    """``run.json``'s ``figures`` entry (module docstring).

    Parameters
    ----------
    status : str
        One of :data:`FIGURE_STATUSES`.
    **fields
        The entry's other fields (``files``, ``not_drawn``, ``seconds``, ``error``, ``log``).

    Returns
    -------
    dict
    """
    if status not in FIGURE_STATUSES:
        raise ValueError(f"figure status {status!r}: expected one of {', '.join(FIGURE_STATUSES)}")
    return {"status": status, **fields}


def read_run_record(folder: str | os.PathLike) -> dict:
    """The ``run.json`` of the run folder ``folder``.

    Parameters
    ----------
    folder : str or os.PathLike
        A folder ``taxoforge score -o`` (or :meth:`ScoreRun.write`) wrote.

    Returns
    -------
    dict

    Raises
    ------
    RunFolderError
        No ``run.json`` there, or one that is not a JSON object.
    """
    path = Path(folder) / RUN_RECORD
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunFolderError(f"{folder}: not a scoring run's folder (no {RUN_RECORD}); give the folder "
                             "`taxoforge score -o` wrote") from None
    except ValueError as e:
        raise RunFolderError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(rec, dict):
        raise RunFolderError(f"{path}: expected a JSON object, found {type(rec).__name__}")
    return rec


def write_run_record(folder: str | os.PathLike, record: dict) -> Path:
    """Write ``record`` as the run folder's ``run.json``, atomically, as
    :meth:`~taxoforge.scores.run.ScoreRun.write` writes it (keys sorted, indented, NaN as null).

    Parameters
    ----------
    folder : str or os.PathLike
        The run folder.
    record : dict
        The run's record.

    Returns
    -------
    pathlib.Path
        The file written.
    """
    return write_text_atomic(Path(folder) / RUN_RECORD,
                             json.dumps(_json_safe(record), indent=2, sort_keys=True, default=str))


def _json_safe(obj):
    """``obj`` with NaN and infinities as null (JSON has no NaN)."""
    if isinstance(obj, float):
        return None if obj != obj or obj in (float("inf"), float("-inf")) else obj
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    return obj


def _same_run(folder: Path, run_id: str | None) -> dict:
    """``run.json`` of ``folder`` while it is still the run ``run_id`` (any run when None),
    else :class:`RunReplaced`."""
    try:
        rec = read_run_record(folder)
    except (RunFolderError, OSError):
        if run_id is None:
            raise
        raise RunReplaced(f"{folder}: no longer holds run {run_id}") from None
    if run_id is not None and rec.get("run_id") != run_id:
        raise RunReplaced(f"{folder}: holds run {rec.get('run_id')}, not {run_id}")
    return rec


def draw_folder_figures(folder: str | os.PathLike, *, run_id: str | None = None,
                        formats: tuple[str, ...] = FIGURE_FORMATS) -> dict:
    """Draw the figures of the run written in ``folder`` into it and record them in its
    ``run.json`` (module docstring): ``figures`` says ``drawn`` with the files, or ``failed``
    with the error (which is raised again).

    Parameters
    ----------
    folder : str or os.PathLike
        A run folder (``taxoforge score -o``, :meth:`~taxoforge.scores.run.ScoreRun.write`).
    run_id : str, optional
        Draw only while the folder holds this run (``run.json``'s ``run_id``); default: the
        run it holds now.
    formats : tuple of str, optional
        The figures' formats.

    Returns
    -------
    dict
        The ``figures`` entry recorded.

    Raises
    ------
    RunFolderError
        ``folder`` is not a run folder.
    RunReplaced
        The folder came to hold another run: nothing more was written.
    """
    folder = Path(folder)
    t0 = time.perf_counter()
    rec = _same_run(folder, run_id)
    run_id = rec.get("run_id") if run_id is None else run_id
    try:
        board_path = folder / "leaderboard.parquet"
        if not board_path.is_file():
            raise RunFolderError(f"{folder}: not a scoring run's folder (no leaderboard.parquet)")
        board = pl.read_parquet(board_path)
        breakdowns = {p.stem: pl.read_parquet(p) for p in sorted((folder / "breakdowns").glob("*.parquet"))}
        names = rec.get("display_names") or None
        paths, not_drawn = write_run_figures(board, breakdowns, folder, formats, names=names,
                                             before_write=lambda: _same_run(folder, run_id))
        entry = figures_entry("drawn", files=sorted(p.name for p in paths.values()), not_drawn=not_drawn,
                              seconds=round(time.perf_counter() - t0, 3))
    except RunReplaced:
        raise
    except Exception as e:
        _record(folder, run_id, figures_entry("failed", error=f"{type(e).__name__}: {e}"))
        raise
    _record(folder, run_id, entry, not_drawn=not_drawn)
    return entry


def _record(folder: Path, run_id: str | None, entry: dict, **extra) -> None:
    """``entry`` as ``run.json``'s ``figures`` (and ``extra`` beside it), written while the
    folder still holds ``run_id``."""
    rec = _same_run(folder, run_id)
    rec["figures"] = entry
    if "not_drawn" in extra:
        rec["figures_not_drawn"] = extra["not_drawn"]
    _same_run(folder, run_id)  # the last look before the rename
    write_run_record(folder, rec)
