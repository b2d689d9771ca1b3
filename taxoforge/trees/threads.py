"""How many threads a compiled step gets, and the pool that runs them.

The compiled kernels of the library (:mod:`.graph_kernels`, :mod:`.parallel_sort`, the Wikidata
dump scanner) release the GIL (numba ``nogil``), so a step that splits its arrays into ranges
runs one kernel call per range on Python threads, and they run on as many cores. Python
threads rather than numba's own ``parallel=True``: the count is the library's to choose per
call, a kernel may be called from threads the caller already runs (the dump reader's pool)
without numba's threading layers (its default one aborts on concurrent calls, OpenMP does not
survive a ``fork``), and the on-disk cache of the compiled code works as for every other
kernel.

The thread count of a step (:func:`threads_for`)
    ``min(asked, cores, items // grain)``, at least 1: ``asked`` is the caller's ``threads``
    argument (default: every core); ``cores`` the cores this process may run on
    (:func:`cpus`: its CPU affinity, and the CPU quota of its control group where one is
    set); ``grain`` the least work that pays for a thread (:data:`GRAIN` items by default:
    handing a range to a waiting thread costs some tens of microseconds, a kernel does a few
    nanoseconds an item). So asking for more threads than there are cores, or than the work
    can use, never adds a thread: a step is never slower for a larger count, and a small
    step (a small graph, a small frontier) runs on the calling thread alone.

The pool
    One pool of :func:`cpus` threads for the process, started on first use (and again in a
    child made by ``fork``, which has none of its parent's threads). The calling thread
    runs the first range itself and waits for the others; a call made from inside a pool
    thread runs its ranges one after the other on that thread (so nested parallel steps never
    wait on each other for a thread).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, wait

__all__ = ["GRAIN", "cpus", "threads_for", "split", "run", "every_step_split"]

#: The least number of items (array elements) worth a thread of its own.
GRAIN = 1 << 17
_PREFIX = "taxoforge-kernel"
_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()
_cores: int | None = None  # set by every_step_split


def _cgroup_quota() -> int | None:
    """Cores allowed by the control group's CPU quota (cgroup v2 ``cpu.max``), if one is set."""
    try:
        with open("/sys/fs/cgroup/cpu.max") as fh:
            quota, period = fh.read().split()[:2]
    except (OSError, ValueError):
        return None
    if quota == "max":
        return None
    try:
        return max(1, int(int(quota) / int(period) + 0.5))
    except (ValueError, ZeroDivisionError):
        return None


def cpus() -> int:
    """The number of cores this process may run on.

    Its CPU affinity (``os.sched_getaffinity``), capped by the CPU quota of its control group
    where one is set (a container limited to two CPUs on a larger machine).

    Returns
    -------
    int
        At least 1.
    """
    if _cores is not None:
        return _cores
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        n = os.cpu_count() or 1
    quota = _cgroup_quota()
    return max(1, min(n, quota) if quota else n)


def threads_for(items: int, threads: int | None = None, grain: int | None = None) -> int:
    """The thread count of a step over ``items`` (module docstring).

    Parameters
    ----------
    items : int
        The size of the work (array elements).
    threads : int, optional
        The most threads the caller allows (default: every core).
    grain : int, optional
        The least number of items worth a thread (default :data:`GRAIN`).

    Returns
    -------
    int
        ``min(threads, cpus(), items // grain)``, at least 1.

    Raises
    ------
    ValueError
        For ``threads`` below 1.

    Examples
    --------
    >>> threads_for(10, threads=8)
    1
    """
    if threads is not None and int(threads) < 1:
        raise ValueError(f"threads must be at least 1, got {threads}")
    asked = cpus() if threads is None else int(threads)
    per_thread = GRAIN if grain is None else max(1, int(grain))
    return max(1, min(asked, cpus(), int(items) // per_thread))


def split(n: int, parts: int) -> list[tuple[int, int]]:
    """``parts`` contiguous ranges ``(lo, hi)`` covering ``range(n)``, their sizes within one.

    Parameters
    ----------
    n : int
        The length to cover.
    parts : int
        How many ranges.

    Returns
    -------
    list of tuple of int
        The ranges, in order.

    Examples
    --------
    >>> split(10, 3)
    [(0, 4), (4, 7), (7, 10)]
    """
    parts = max(1, int(parts))
    q, r = divmod(int(n), parts)
    out, lo = [], 0
    for k in range(parts):
        hi = lo + q + (1 if k < r else 0)
        out.append((lo, hi))
        lo = hi
    return out


def _get_pool() -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=cpus(), thread_name_prefix=_PREFIX)
        return _pool


def _forget_pool() -> None:
    """In a child made by ``fork``: the parent's pool threads do not exist here, and a pool that
    believes it has them never runs a call; the child starts its own on first use."""
    global _pool, _lock
    _pool, _lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def run(fn: Callable, calls: Sequence[tuple]) -> list:
    """``[fn(*args) for args in calls]``, the calls on as many threads (module docstring).

    Parameters
    ----------
    fn : callable
        A function that releases the GIL for most of its time (a ``nogil`` compiled kernel).
    calls : sequence of tuple
        The arguments of each call; one thread per call.

    Returns
    -------
    list
        The results, in the order of ``calls``.
    """
    calls = list(calls)
    if len(calls) <= 1 or threading.current_thread().name.startswith(_PREFIX):
        return [fn(*args) for args in calls]
    pool = _get_pool()
    futures = [pool.submit(fn, *args) for args in calls[1:]]
    try:
        first = fn(*calls[0])
    finally:
        wait(futures)  # no call still writing into the arrays when this returns or raises
    return [first, *(f.result() for f in futures)]


@contextlib.contextmanager
def every_step_split(cores: int = 2, grain: int = 1) -> Iterator[None]:
    """Within: as on a machine of ``cores`` cores with a thread for every ``grain`` items, so that
    tiny inputs take the paths that only large ones take elsewhere (what
    :func:`taxoforge.sources.kernels.compile_kernels` needs to compile every kernel). Not for
    concurrent use: it changes this module's settings for the whole process.

    Parameters
    ----------
    cores : int
        The cores :func:`cpus` reports.
    grain : int
        :data:`GRAIN` meanwhile.

    Yields
    ------
    None
    """
    global _cores, GRAIN
    saved = _cores, GRAIN
    _cores, GRAIN = int(cores), int(grain)
    try:
        yield
    finally:
        _cores, GRAIN = saved
