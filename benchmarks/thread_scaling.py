"""Stage timings at several thread counts: which part of a step runs serially (Amdahl).

A benchmark measures its candidate once per thread count, each in a fresh process whose
environment caps every thread pool at that count (:func:`thread_env`: the library's own
``threads`` argument, polars' ``POLARS_MAX_THREADS``, numba's ``NUMBA_NUM_THREADS``, and the
BLAS and OpenMP variables), with a wall and a CPU clock around each stage. :func:`amdahl_table`
then gives, per stage, the wall and CPU time at each count, the speed-up from one thread to
each count, and the parallel share ``p`` that Amdahl's law ``S(t) = 1 / ((1 - p) + p / t)``
gives for that speed-up: a stage whose time does not fall from one thread to two (``p`` near
0) runs serially, on any machine. On a shared machine another process's load slows the
several-thread runs more than the one-thread run; the load average goes with every table.
"""

from __future__ import annotations

import contextlib
import os

__all__ = ["THREAD_VARIABLES", "thread_counts", "thread_env", "amdahl_table", "markdown_table"]

#: The variables that cap the thread pools of the libraries the candidates use.
THREAD_VARIABLES = ("POLARS_MAX_THREADS", "NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                    "MKL_NUM_THREADS", "RAYON_NUM_THREADS")


def thread_counts() -> list[int]:
    """1, 2 and, on a larger machine, every core this process may use."""
    from taxoforge.trees.threads import cpus

    return sorted({1, 2, cpus()})


@contextlib.contextmanager
def thread_env(threads: int):
    """Processes started inside see every thread pool capped at ``threads``."""
    saved = {k: os.environ.get(k) for k in THREAD_VARIABLES}
    os.environ.update({k: str(threads) for k in THREAD_VARIABLES})
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _parallel_share(speedup: float | None, t: int) -> float | None:
    if not speedup or t < 2:
        return None
    return round((1 - 1 / speedup) / (1 - 1 / t), 3)


def amdahl_table(runs: dict[int, dict[str, dict]], what: dict[str, str] | None = None) -> list[dict]:
    """Per stage, its times at every thread count and what share of it runs in parallel.

    ``runs[t][stage] = {"wall_s": …, "cpu_s": …}``; the stage ``"total"`` is the whole call.
    Returns one row per stage: ``wall_s`` and ``cpu_s`` by thread count, ``speedup`` (wall at
    one thread / wall at ``t``) and ``parallel_share`` (Amdahl's ``p`` from that speed-up) for
    every count above one.
    """
    counts = sorted(runs)
    stages: list[str] = []
    for t in counts:
        stages += [s for s in runs[t] if s not in stages]
    rows = []
    for s in stages:
        row: dict = {"stage": s, "what": (what or {}).get(s, ""), "wall_s": {}, "cpu_s": {}, "speedup": {},
                     "parallel_share": {}}
        for t in counts:
            rec = runs[t].get(s) or {}
            row["wall_s"][t] = rec.get("wall_s")
            row["cpu_s"][t] = rec.get("cpu_s")
        one = row["wall_s"].get(1)
        for t in counts[1:]:
            w = row["wall_s"].get(t)
            sp = round(one / w, 3) if one and w else None
            row["speedup"][t] = sp
            row["parallel_share"][t] = _parallel_share(sp, t)
        rows.append(row)
    return rows


def markdown_table(rows: list[dict]) -> str:
    """The rows of :func:`amdahl_table` as a Markdown table."""
    counts = sorted({t for r in rows for t in r["wall_s"]})
    head = ["stage"] + [f"{t} thread{'s' if t > 1 else ''}: wall (CPU)" for t in counts]
    head += [f"speed-up 1→{t}, parallel share" for t in counts[1:]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def sec(x):
        return "–" if x is None else f"{x:.3f} s"

    for r in rows:
        cells = [r["what"] or r["stage"]]
        cells += [f"{sec(r['wall_s'].get(t))} ({sec(r['cpu_s'].get(t))})" for t in counts]
        cells += [("–" if r["speedup"].get(t) is None else f"{r['speedup'][t]:.2f}×, p = {r['parallel_share'][t]:.2f}")
                  for t in counts[1:]]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
