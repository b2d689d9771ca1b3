"""The thread count of a step and the pool that runs kernels on several threads."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from taxoforge.trees import threads


def test_thread_count_never_exceeds_the_cores_or_the_work(monkeypatch):
    monkeypatch.setattr(threads, "cpus", lambda: 4)
    assert threads.threads_for(10**9) == 4
    assert threads.threads_for(10**9, threads=64) == 4  # more than the cores: the cores
    assert threads.threads_for(10**9, threads=3) == 3
    assert threads.threads_for(3 * threads.GRAIN + 1) == 3  # no thread for less than GRAIN items
    assert threads.threads_for(10) == 1
    assert threads.threads_for(1000, grain=100) == 4
    with pytest.raises(ValueError, match="at least 1"):
        threads.threads_for(10, threads=0)


def test_cpus_follows_the_cgroup_quota(monkeypatch):
    monkeypatch.setattr(threads, "_cgroup_quota", lambda: 1)
    assert threads.cpus() == 1
    monkeypatch.setattr(threads, "_cgroup_quota", lambda: None)
    assert threads.cpus() >= 1


@pytest.mark.parametrize("n,parts", [(0, 1), (10, 3), (7, 7), (5, 8)])
def test_split_covers_the_range_in_order(n, parts):
    ranges = threads.split(n, parts)
    assert len(ranges) == parts and ranges[0][0] == 0 and ranges[-1][1] == n
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
    sizes = [hi - lo for lo, hi in ranges]
    assert max(sizes) - min(sizes) <= 1


def test_run_keeps_the_order_of_the_calls_and_uses_other_threads():
    seen = []

    def work(k):
        seen.append(threading.current_thread().name)
        return k * k

    assert threads.run(work, [(k,) for k in range(6)]) == [0, 1, 4, 9, 16, 25]
    assert seen.count(threading.current_thread().name) >= 1  # the caller runs the first call itself


def test_run_inside_a_pool_thread_runs_on_that_thread():
    inner = threads.run(lambda: threads.run(lambda k: threading.current_thread().name, [(0,), (1,)]), [(), ()])
    in_pool = inner[1]  # the second outer call ran on a pool thread: its own calls ran there too
    assert len(set(in_pool)) == 1 and in_pool[0].startswith("taxoforge-kernel")


def test_run_waits_for_every_call_before_an_error_goes_up():
    done = np.zeros(4, dtype=bool)

    def work(k):
        if k == 0:
            raise RuntimeError("first call fails")
        done[k] = True

    with pytest.raises(RuntimeError, match="first call fails"):
        threads.run(work, [(k,) for k in range(4)])
    assert done[1:].all()


def test_a_forked_child_runs_its_calls():
    import os

    threads.run(lambda k: k, [(1,), (2,)])  # the parent's pool exists
    pid = os.fork()
    if pid == 0:  # the child: the parent's pool threads are gone; a new pool must run the calls
        import signal

        signal.alarm(60)  # a child waiting on threads that do not exist dies instead of hanging
        try:
            ok = threads.run(lambda k: k * 2, [(1,), (2,), (3,)]) == [2, 4, 6]
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
