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

import multiprocessing as mp
import os
import re
import resource
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

__all__ = ["measure", "ratio", "loglog_slope", "machine_info"]


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
