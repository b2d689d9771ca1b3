"""Measure one piece of work in a fresh process: wall time, CPU time and peak memory.

Every measurement runs in its own process started with ``multiprocessing``'s *spawn*
method, so nothing the parent or an earlier measurement allocated is counted and the
candidate and its baseline are measured the same way. Inside that process:

1. ``setup(*args)`` runs untimed (typically: read the input from a Parquet file);
2. the peak-RSS counter is reset (``/proc/self/clear_refs`` ← ``5`` resets ``VmHWM`` on
   Linux), the current RSS is noted, and ``work(state)`` runs under a wall clock and a
   CPU clock (``time.process_time``, all threads), ``repeat`` times (fastest kept);
3. ``VmHWM`` is read: ``peak_rss_bytes`` is the process's peak resident memory while the
   work ran (interpreter, libraries and the loaded input included — what a user's
   machine must have), ``peak_delta_bytes`` the part above the RSS before the work.

Where ``clear_refs`` is unavailable the peak falls back to ``ru_maxrss`` (which then
includes the set-up) and the record says so (``peak_includes_setup``).

``work`` returns a dict; its ``"summary"`` entry (plain JSON values) is reported (that of the
fastest of the ``repeat`` runs), and
its ``"check"`` entry (any picklable value, e.g. a depth array) is returned to the parent
for comparing candidate and baseline, never written to the results. A callable ``"check"``
is called after the clocks stop and the peak is read, so a costly check (a digest of large
tables) is neither timed nor counted in the peak.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["REPO", "measure", "measure_process", "ratio", "loglog_slope", "machine_info", "checkout", "settle",
           "same_results", "wait_for_figures"]

#: The repository's root (the benchmarks' own checkout).
REPO = Path(__file__).resolve().parents[1]


def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status") as fh:
            m = re.search(rf"^{field}:\s+(\d+)\s+kB", fh.read(), re.MULTILINE)
        return int(m.group(1)) if m else None
    except OSError:
        return None


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _child(conn, setup: Callable, work: Callable, args: tuple, repeat: int = 1) -> None:
    try:
        state = setup(*args)
        reset = _reset_peak()
        rss_before = (_status_kib("VmRSS") or 0) * 1024
        walls, cpus = [], []
        summary = {}
        for _ in range(max(1, repeat)):
            out = None  # the previous result is freed before the next run
            c0, w0 = time.process_time(), time.perf_counter()
            out = work(state)
            walls.append(time.perf_counter() - w0)
            cpus.append(time.process_time() - c0)
            if walls[-1] == min(walls):  # the summary (stage times) of the fastest run
                summary = (out or {}).get("summary", {})
        wall, cpu = min(walls), min(cpus)
        if reset and _status_kib("VmHWM") is not None:
            peak = _status_kib("VmHWM") * 1024
        else:
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)
        out = out or {}
        check = out.get("check")
        if callable(check):  # after the clocks and the peak (module docstring)
            check = check()
        conn.send({
            "status": "ok",
            "wall_s": wall,
            "cpu_s": cpu,
            "repeats": len(walls),
            "wall_s_all": walls,
            "peak_rss_bytes": peak,
            "rss_before_bytes": rss_before,
            "peak_delta_bytes": max(0, peak - rss_before),
            "peak_includes_setup": not reset,
            "summary": summary,
            "check": check,
        })
    except BaseException as exc:  # report, never hang the parent
        conn.send({"status": "error", "error": f"{type(exc).__name__}: {exc}",
                   "traceback": traceback.format_exc()})
    finally:
        conn.close()


def measure(setup: Callable, work: Callable, *args: Any, timeout: float | None = None, repeat: int = 1) -> dict:
    """Run ``work(setup(*args))`` in a fresh spawned process and measure it (module docstring).

    With ``repeat > 1`` the work runs that many times on the same state and the record
    keeps the fastest wall and CPU times (as ``timeit`` does; every time is in
    ``wall_s_all``) and the peak memory over all runs.

    ``setup`` and ``work`` must be module-level functions (spawn pickles them by name).
    Returns a dict with ``status`` (``ok``, ``error`` or ``timeout``), ``wall_s``,
    ``cpu_s``, ``peak_rss_bytes``, ``peak_delta_bytes``, ``summary`` and ``check``.
    On timeout the process is killed and the record says after how many seconds.
    """
    ctx = mp.get_context("spawn")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, setup, work, args, repeat))  # not daemonic: may nest
    proc.start()
    send.close()
    timed_out = False
    try:
        if recv.poll(timeout):
            try:
                res = recv.recv()
            except EOFError:
                res = {"status": "error", "error": f"worker died (exit code {proc.exitcode})"}
        else:
            timed_out = True
            res = {"status": "timeout", "error": f"did not finish within {timeout:.0f} s", "timeout_s": timeout}
    finally:
        proc.join(0.1 if timed_out else 5)
        if proc.is_alive():
            proc.kill()  # only the process started above
            proc.join()
        recv.close()
    if res.get("status") != "ok" and proc.exitcode not in (0, None) and "exit code" not in res.get("error", ""):
        res["exit_code"] = proc.exitcode
    return res


def ratio(baseline: dict, candidate: dict, key: str) -> float | None:
    """``baseline[key] / candidate[key]`` when both ran (how many times better the candidate is)."""
    if baseline.get("status") != "ok" or candidate.get("status") != "ok":
        return None
    b, c = baseline.get(key), candidate.get(key)
    if not b or not c:
        return None
    return float(b) / float(c)


def loglog_slope(sizes: list[float], costs: list[float]) -> float | None:
    """Slope of the least-squares line through ``(log size, log cost)``: 1.0 is linear growth."""
    import numpy as np

    pts = [(s, c) for s, c in zip(sizes, costs) if s and c and s > 0 and c > 0]
    if len(pts) < 2:
        return None
    x = np.log([p[0] for p in pts])
    y = np.log([p[1] for p in pts])
    return float(np.polyfit(x, y, 1)[0])


def machine_info() -> dict:
    """Where and under what load the benchmarks ran."""
    import platform

    info = {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()}
    try:
        info["load_average_1_5_15"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        pass
    try:
        with open("/proc/meminfo") as fh:
            m = re.search(r"MemTotal:\s+(\d+)", fh.read())
        info["memory_bytes"] = int(m.group(1)) * 1024 if m else None
    except OSError:
        pass
    for mod in ("numpy", "polars", "networkx", "hiclass", "scipy"):
        try:
            info[f"{mod}_version"] = __import__(mod).__version__
        except Exception:  # noqa: BLE001 - optional
            pass
    return info


# ---------------------------------------------------------------------------- a command, from the outside
#: runs a module (``-m NAME ARGS…``) or code (``-c CODE ARGS…``) and, at exit, writes the
#: process's own peak RSS (``VmHWM``: this process image only — ``ru_maxrss`` would also
#: count the parent's memory at fork, which exec carries over) to ``$BENCH_PEAK_FILE``
_PEAK_WRAPPER = """
import atexit, os, re, runpy, sys
def _peak():
    try:
        with open("/proc/self/status") as fh:
            kib = int(re.search(r"^VmHWM:\\s+(\\d+) kB", fh.read(), re.M).group(1))
    except (OSError, AttributeError):
        import resource
        kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with open(os.environ["BENCH_PEAK_FILE"], "w") as fh:
        fh.write(str(kib))
atexit.register(_peak)
mode, what, args = sys.argv[1], sys.argv[2], sys.argv[3:]
if mode == "-m":
    sys.argv = [what, *args]
    runpy.run_module(what, run_name="__main__", alter_sys=True)
else:
    sys.argv = ["-c", *args]
    exec(compile(what, "<benchmark>", "exec"), {"__name__": "__main__"})
"""


def measure_process(cmd: list[str], timeout: float = 1800.0) -> dict:
    """Run ``python -m …`` / ``python -c …`` (``cmd`` without the interpreter) as a child
    process: wall seconds, CPU seconds (the child's, what load does not move), its own peak
    RSS, its stdout parsed as JSON (``doc``) — a command measured from the outside, as a
    user runs it (:func:`measure` measures a function in a fresh process instead).

    Parameters
    ----------
    cmd : list of str
        ``["-m", MODULE, ARG…]`` or ``["-c", CODE, ARG…]``.
    timeout : float, optional
        Seconds before the child is stopped (a ``timeout`` record).

    Returns
    -------
    dict
        ``status``, ``exit_code``, ``wall_s``, ``cpu_s``, ``peak_rss_bytes`` and ``doc``
        (or ``error``).
    """
    with tempfile.TemporaryDirectory(prefix="bench-peak-") as tmp:
        peak_file = Path(tmp) / "peak"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        try:
            proc = subprocess.run([sys.executable, "-c", _PEAK_WRAPPER, *cmd], capture_output=True, text=True,
                                  timeout=timeout, env=dict(os.environ, BENCH_PEAK_FILE=str(peak_file)))
        except subprocess.TimeoutExpired:
            return {"status": "timeout", "error": f"did not finish within {timeout:.0f} s"}
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the child's CPU time: what load does not move
        peak = int(peak_file.read_text()) * 1024 if peak_file.exists() else None
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rec = {"status": "ok" if proc.returncode == 0 else "error", "exit_code": proc.returncode, "wall_s": wall,
           "cpu_s": cpu, "peak_rss_bytes": peak}
    try:
        rec["doc"] = json.loads(proc.stdout)
    except ValueError:
        rec["status"], rec["error"] = "error", (proc.stderr or proc.stdout)[-2000:]
    return rec


def checkout(ref: str, where: Path) -> str | None:
    """``ref`` checked out (detached) at ``where`` with ``git worktree`` (a baseline's code);
    None when done, else why not.

    Parameters
    ----------
    ref : str
        A commit or branch of this repository.
    where : pathlib.Path
        The folder it goes to.

    Returns
    -------
    str or None
    """
    if shutil.which("git") is None:
        return "git is not installed"
    done = subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(where), ref],
                          capture_output=True, text=True)
    return None if done.returncode == 0 else f"git worktree add {ref}: {done.stderr.strip()[-300:]}"


def settle() -> None:
    """Wait until the tree files just written are older than the content-hash cache's racy
    window, so the first call remembers the tree's content hash (as it does for any tree
    not written a moment ago) and the repeat calls measure the loop, not a fresh file."""
    from taxoforge.snapshots.open import RACY_S  # here, not at the top: every measured child process imports harness

    time.sleep(RACY_S + 0.5)


def same_results(a: Path, b: Path) -> dict:
    """Whether two scoring runs' folders hold the same scores, leaderboard and bad rows
    (every column, every row, in order); the columns that differ where not.

    Parameters
    ----------
    a, b : pathlib.Path
        The two output folders.

    Returns
    -------
    dict
        Per table: True, or what differs.
    """
    import polars as pl  # here, not at the top: every measured child process imports harness

    out = {}
    for name in ("scores", "leaderboard", "bad_rows"):
        try:
            x, y = pl.read_parquet(a / f"{name}.parquet"), pl.read_parquet(b / f"{name}.parquet")
        except Exception as e:  # noqa: BLE001
            out[name] = f"cannot compare: {type(e).__name__}: {e}"
            continue
        if x.columns != y.columns or x.height != y.height:
            out[name] = f"shape or columns differ: {x.shape} {y.shape}"
            continue
        diff = [c for c in x.columns if not x[c].equals(y[c], check_names=True, null_equal=True)]
        out[name] = True if not diff else {"columns_differ": diff}
    return out


def wait_for_figures(out: Path, timeout: float = 300) -> dict:
    """After a call that returned while its figures are drawn in the background: poll
    ``run.json`` until ``figures.status`` leaves ``drawing`` (a call of code that draws in
    the foreground, or writes no such entry, is done at once), so no drawing overlaps the next
    measured call; at most ``timeout`` seconds."""
    t0 = time.perf_counter()
    while True:
        try:
            entry = json.loads((out / "run.json").read_text()).get("figures") or {}
        except (OSError, ValueError):
            entry = {}
        if entry.get("status") != "drawing":
            return {"status": entry.get("status"), "after_s": round(time.perf_counter() - t0, 3),
                    "drawing_s": entry.get("seconds"), "files": len(entry.get("files") or []),
                    **({"error": entry["error"]} if "error" in entry else {})}
        if time.perf_counter() - t0 > timeout:
            return {"status": "timeout", "after_s": round(time.perf_counter() - t0, 3)}
        time.sleep(0.02)
