"""``taxoforge score`` drawing its figures in a process of their own, and ``taxoforge plot RUN``,
as a researcher runs them: real processes, real run folders.

The drawing process is held at its start by a gate the test opens (a ``sitecustomize`` module
on the processes' ``PYTHONPATH`` that, in a ``taxoforge plot`` process only, waits for a file
to appear and notes when the process ends), so "the command returned before the figures were
drawn" is seen, not assumed; every wait polls with a deadline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from taxoforge.cli import main
from taxoforge.scores.reports.figures import FIGURE_FILES
from taxoforge.scores.reports.run_figures import RunReplaced, draw_folder_figures, read_run_record
from tests.conftest import REPO

ROWS = [{"id": "1", "model": "m1", "output": "A: Aloe vera", "label": "aloe_vera"},
        {"id": "2", "model": "m1", "output": "Toucan", "label": "Black-mandibled Toucan"},
        {"id": "3", "model": "m2", "output": "I cannot tell", "label": "iris_sibirica"},
        {"id": "4", "model": "m2", "output": "Iris", "label": "Iris versicolor"}]
FAST = ["--no-meteor", "--bootstrap", "200", "--no-progress"]
DEADLINE = 120.0

#: held at the start of a ``taxoforge plot`` process until ``$GATE_DIR/open`` exists; notes its end
_SITECUSTOMIZE = '''
import atexit, os, time
_argv = open("/proc/self/cmdline", "rb").read().split(b"\\0")
if b"plot" in _argv and b"taxoforge.cli" in _argv:
    _gate = os.environ["GATE_DIR"]
    open(os.path.join(_gate, "started-%d" % os.getpid()), "w").close()
    _end = time.monotonic() + 300
    while not os.path.exists(os.path.join(_gate, "open")) and time.monotonic() < _end:
        time.sleep(0.02)
    atexit.register(lambda: open(os.path.join(_gate, "ended-%d" % os.getpid()), "w").close())
'''


@pytest.fixture()
def tree(inat_like, tmp_path):
    folder = tmp_path / "tree"
    inat_like.write(folder)
    return folder


@pytest.fixture()
def answers(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return path


@pytest.fixture()
def gate(tmp_path):
    """The gate's folder; the environment of processes whose drawing waits on it."""
    if not Path("/proc/self/cmdline").exists():
        pytest.skip("the gate reads /proc/self/cmdline (Linux)")
    folder = tmp_path / "gate"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(_SITECUSTOMIZE)
    env = dict(os.environ, GATE_DIR=str(folder), PYTHONPATH=os.pathsep.join([str(folder), str(REPO)]))
    return folder, env


def _score(env, *args):
    return subprocess.run([sys.executable, "-m", "taxoforge.cli", "score", *map(str, args)], capture_output=True,
                          text=True, cwd=REPO, env=env, timeout=600)


def _until(condition, what: str):
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        got = condition()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"not within {DEADLINE:.0f} s: {what}")


def _status(folder: Path) -> str:
    return read_run_record(folder)["figures"]["status"]


def _figure_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name in FIGURE_FILES)


def test_score_returns_before_its_figures_are_drawn_and_they_appear_later(tree, answers, gate, tmp_path):
    """The command's process ends (its pipes close) while the drawing is still held at the
    gate: run.json says ``drawing`` and no figure is there; once let go, the figures appear
    and run.json says ``drawn``, naming the same files as a run that waits for them, each
    file byte for byte the same."""
    gate_dir, env = gate
    out = tmp_path / "out"
    done = _score(env, answers, tree, "-o", out, *FAST)
    assert done.returncode == 0, done.stderr
    assert f"Figures being drawn in the background into {out}/" in done.stdout
    _until(lambda: list(gate_dir.glob("started-*")), "the drawing process starts")
    rec = read_run_record(out)
    assert rec["figures"] == {"status": "drawing"} and rec["run_id"] and _figure_files(out) == []
    assert "figures" not in rec["seconds"]  # the command's own clock does not hold the drawing
    (gate_dir / "open").touch()
    _until(lambda: _status(out) != "drawing", "run.json's figures leave 'drawing'")
    entry = read_run_record(out)["figures"]
    assert entry["status"] == "drawn", entry
    waited = tmp_path / "waited"
    done = _score(env, answers, tree, "-o", waited, "--plots", "wait", *FAST)
    assert done.returncode == 0, done.stderr
    assert "background" not in done.stdout
    assert read_run_record(waited)["figures"]["status"] == "drawn"
    assert _figure_files(out) == _figure_files(waited) == entry["files"] == read_run_record(waited)["figures"]["files"]
    assert len(entry["files"]) == 18 and (out / "hp_vs_hr.png").read_bytes()[:4] == b"\x89PNG"
    # drawn from the written tables, they are the figures the run itself draws, byte for byte
    assert [name for name in entry["files"] if (out / name).read_bytes() != (waited / name).read_bytes()] == []
    assert read_run_record(out)["figures_not_drawn"] == read_run_record(waited)["figures_not_drawn"] == {}


def test_plot_draws_the_figures_of_a_run_written_without_them(tree, answers, tmp_path):
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["score", str(answers), str(tree), "-o", str(out), "--no-plots", *FAST])
    assert r.exit_code == 0, r.output
    assert _status(out) == "none" and _figure_files(out) == [] and "background" not in r.output
    r = CliRunner().invoke(main, ["plot", str(out)])
    assert r.exit_code == 0, r.output + r.stderr
    assert "18 figure files drawn" in r.output
    entry = read_run_record(out)["figures"]
    assert entry["status"] == "drawn" and entry["files"] == _figure_files(out) and len(entry["files"]) == 18
    # run.json keeps the rest of the run's record
    assert read_run_record(out)["scored"] == 4
    r = CliRunner().invoke(main, ["score", str(answers), str(tree), "--plots", "wait", "--no-plots", *FAST])
    assert r.exit_code == 2 and "give one of them" in r.output + r.stderr


def test_plot_of_a_folder_that_is_no_run_is_a_usage_error(tmp_path):
    (tmp_path / "empty").mkdir()
    r = CliRunner().invoke(main, ["plot", str(tmp_path / "empty")])
    assert r.exit_code == 2 and "not a scoring run's folder (no run.json)" in r.output + r.stderr


def test_a_drawing_whose_folder_a_newer_run_replaced_writes_nothing_there(tree, answers, gate, tmp_path):
    """The first run's drawing waits at the gate while a second run (no figures) replaces the
    folder; let go, it finds another run id and ends without writing: the second run's folder
    has no figure and its run.json still says ``none``."""
    gate_dir, env = gate
    out = tmp_path / "out"
    assert _score(env, answers, tree, "-o", out, *FAST).returncode == 0
    _until(lambda: list(gate_dir.glob("started-*")), "the first drawing starts")
    first = read_run_record(out)["run_id"]
    done = _score(env, answers, tree, "-o", out, "--plots", "none", *FAST)
    assert done.returncode == 0, done.stderr
    second = read_run_record(out)["run_id"]
    assert second != first
    (gate_dir / "open").touch()
    _until(lambda: list(gate_dir.glob("ended-*")), "the stale drawing ends")
    assert _figure_files(out) == [] and _status(out) == "none" and read_run_record(out)["run_id"] == second
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]  # no temporary file left either


def test_a_drawing_for_another_run_id_raises_before_writing(tree, answers, tmp_path):
    out = tmp_path / "out"
    assert CliRunner().invoke(main, ["score", str(answers), str(tree), "-o", str(out), "--no-plots",
                                     *FAST]).exit_code == 0
    before = (out / "run.json").read_bytes()
    with pytest.raises(RunReplaced):
        draw_folder_figures(out, run_id="0" * 32)
    assert _figure_files(out) == [] and (out / "run.json").read_bytes() == before


def test_a_failing_drawing_records_failed_with_its_error(tree, answers, gate, tmp_path):
    """In the background: the leaderboard the drawing reads is damaged while it waits;
    run.json says ``failed`` with the error, figures.log holds the traceback, and
    ``taxoforge plot`` (foreground) fails with exit code 1 and records it too."""
    gate_dir, env = gate
    out = tmp_path / "out"
    assert _score(env, answers, tree, "-o", out, *FAST).returncode == 0
    _until(lambda: list(gate_dir.glob("started-*")), "the drawing starts")
    (out / "leaderboard.parquet").write_bytes(b"not parquet")
    (gate_dir / "open").touch()
    _until(lambda: _status(out) != "drawing", "run.json's figures leave 'drawing'")
    entry = read_run_record(out)["figures"]
    assert entry["status"] == "failed" and "parquet" in entry["error"].lower(), entry
    _until(lambda: list(gate_dir.glob("ended-*")), "the drawing ends")
    assert "Traceback" in (out / "figures.log").read_text()
    assert _figure_files(out) == []
    r = CliRunner().invoke(main, ["plot", str(out)])
    assert r.exit_code == 1 and "the figures could not be drawn" in r.output + r.stderr
    assert _status(out) == "failed"
