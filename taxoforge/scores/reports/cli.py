"""``taxoforge plot RUN``: the figures of a written scoring run drawn from its folder
(:mod:`taxoforge.scores.reports.run_figures`), and the process of their own in which
``taxoforge score`` draws them (:func:`draw_in_background`).

Exit codes: 0 drawn; 2 not a scoring run's folder; 1 the drawing failed (``run.json``'s
``figures`` says why); 11 a file that cannot be written.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click

import taxoforge
from taxoforge.cli_output import emit_json, handle_errors
from taxoforge.scores.reports.run_figures import (FIGURES_LOG, RunFolderError, RunReplaced, draw_folder_figures,
                                                  read_run_record)

__all__ = ["plot_cmd", "draw_in_background", "background_command"]


def background_command(folder: str | os.PathLike, run_id: str) -> list[str]:
    """The command line of the process that draws the figures of the run ``run_id`` in
    ``folder``: this interpreter running ``taxoforge plot FOLDER --run-id RUN_ID --quiet``.

    Parameters
    ----------
    folder : str or os.PathLike
        The run folder.
    run_id : str
        The run's id (``run.json``'s ``run_id``).

    Returns
    -------
    list of str
    """
    return [sys.executable, "-m", "taxoforge.cli", "plot", str(Path(folder).resolve()), "--run-id", run_id, "--quiet"]


def draw_in_background(folder: str | os.PathLike, run_id: str) -> int:
    """Start the process that draws the figures of the run ``run_id`` written in ``folder``
    (:func:`background_command`), detached: in a session of its own (a terminal's Ctrl-C
    or hang-up does not reach it), reading nothing, its output and errors appended to
    ``FOLDER/figures.log`` — so nothing of it holds the caller's standard output or error,
    and a caller waiting for this process's output to end (a pipe, ``subprocess.run``)
    never waits for the drawing. It runs this process's taxoforge (its folder added to
    ``PYTHONPATH`` when it is not on the path already). Nothing waits for it: when this process ends first, the
    system takes the drawing over.

    Parameters
    ----------
    folder : str or os.PathLike
        The run folder.
    run_id : str
        The run's id.

    Returns
    -------
    int
        The drawing process's id.
    """
    cmd = background_command(folder, run_id)
    log = str(Path(folder) / FIGURES_LOG)
    env = dict(os.environ)
    root = str(Path(taxoforge.__file__).resolve().parents[1])
    if root not in {str(Path(p).resolve()) for p in sys.path if p}:  # a taxoforge the child would not find by itself
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    if hasattr(os, "posix_spawn"):  # no Popen object: nothing in this process waits for the child or warns of it
        actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                   (os.POSIX_SPAWN_OPEN, 1, log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666),
                   (os.POSIX_SPAWN_DUP2, 1, 2)]
        return os.posix_spawn(sys.executable, cmd, env, file_actions=actions, setsid=True)
    with open(log, "ab") as out:  # pragma: no cover - a system without posix_spawn (Windows)
        flags = getattr(subprocess, "DETACHED_PROCESS", 0) | getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
        return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                env=env, creationflags=flags, start_new_session=not flags, close_fds=True).pid


@click.command("plot", epilog="Exit codes: 0 drawn, 1 the drawing failed (run.json's figures says why), 2 not a "
                              "scoring run's folder, 11 a file that cannot be written.")
@click.argument("run_folder", type=click.Path(file_okay=False, exists=True), metavar="RUN_FOLDER")
@click.option("--run-id", default=None, metavar="ID",
              help="Draw only while the folder holds this run (run.json's run_id), and stop quietly when a newer run "
                   "replaced it (what `taxoforge score`'s background drawing does).")
@click.option("--quiet", is_flag=True, help="Print nothing when done.")
@click.option("--json", "as_json", is_flag=True, help="Print run.json's figures entry as JSON.")
@handle_errors(usage_errors=(RunFolderError,))
def plot_cmd(run_folder, run_id, quiet, as_json):
    """Draw the figures of the scoring run written in RUN_FOLDER (by `taxoforge score -o`),
    in the foreground, from its leaderboard, breakdowns and run.json: for a run made with
    --plots none (--no-plots), after a drawing failed, or to draw them again. Each figure
    (one column wide and page wide; PNG 300 dpi, PDF, SVG) is written atomically, and
    run.json's figures entry records them."""
    read_run_record(run_folder)  # not a run's folder: exit code 2 before anything is drawn
    try:
        entry = draw_folder_figures(run_folder, run_id=run_id)
    except RunReplaced as e:  # a newer run took the folder: its own drawing is under way
        if not quiet:
            click.echo(f"stopped: {e}", err=True)
        sys.exit(0)
    except RunFolderError:
        raise
    except Exception as e:
        if as_json:
            emit_json({"figures": {"status": "failed", "error": f"{type(e).__name__}: {e}"}, "exit_code": 1})
        click.echo(f"error: the figures could not be drawn: {type(e).__name__}: {e}", err=True)
        if quiet:  # the background drawing: the traceback goes to figures.log
            raise
        sys.exit(1)
    if as_json:
        emit_json({"figures": entry, "exit_code": 0})
    elif not quiet:
        click.echo(f"{len(entry['files'])} figure files drawn in {run_folder}/ ({entry['seconds']:.1f} s)"
                   + "".join(f"; {name} not drawn: {why}" for name, why in entry["not_drawn"].items()))
