"""Only regular files are read: FIFOs, devices and folders refused by name with exit code 11,
never waited on; every wait has a deadline that says what it waits for; globs never follow a
symbolic-link loop."""

from __future__ import annotations

import json
import logging
import os
import threading
import time

import pytest

from tests.hostile.bounded import assert_refused, run_bounded, run_cli_bounded

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs need a POSIX system")


def _fifo(path):
    os.mkfifo(path)
    return path


def _score(*args, **kw):
    return run_cli_bounded(["score", *map(str, args), "--no-meteor", "--no-plots"], timeout=90, **kw)


@pytest.mark.parametrize("name,fmt", [("answers.jsonl", ()), ("answers.csv", ()), ("answers.parquet", ()),
                                      ("answers.xlsx", ()), ("answers.json", ()), ("answers", ())])
def test_a_fifo_as_answer_file_is_refused_by_name_not_waited_on(tmp_path, name, fmt):
    fifo = _fifo(tmp_path / name)
    assert_refused(_score(fifo, tmp_path / "tree", "-o", tmp_path / "out", *fmt), 11,
                   rf"{name}: a FIFO \(named pipe\), not a regular file", max_seconds=20)


def test_a_device_as_answer_file_is_refused_by_name(tmp_path):
    assert_refused(_score("/dev/zero", tmp_path / "tree"), 11,
                   r"/dev/zero: a character device, not a regular file")


def test_a_fifo_in_a_folder_or_matched_by_a_glob_is_skipped_and_the_rest_read(tmp_path):
    from taxoforge.scores.readers.sources import expand_paths

    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "good.jsonl").write_text(json.dumps({"output": "dog", "label": "dog"}) + "\n")
    _fifo(tmp_path / "runs" / "pipe.jsonl")
    found = [p.name for p in expand_paths([tmp_path / "runs"])]
    assert "good.jsonl" in found


def test_a_fifo_as_crosswalk_is_refused_by_name(tmp_path):
    from taxoforge.links.crosswalk import read_crosswalk
    from taxoforge.files.paths import NotARegularFile

    fifo = _fifo(tmp_path / "cw.parquet")
    t0 = time.perf_counter()
    with pytest.raises(NotARegularFile, match=r"cw\.parquet: a FIFO"):
        read_crosswalk(fifo)
    assert time.perf_counter() - t0 < 5


def test_a_fifo_as_a_compared_run_is_refused_by_name(tmp_path):
    (tmp_path / "a").mkdir()
    _fifo(tmp_path / "a" / "scores.parquet")
    (tmp_path / "b").mkdir()
    _fifo(tmp_path / "b" / "scores.parquet")
    assert_refused(run_cli_bounded(["compare", tmp_path / "a", tmp_path / "b"], timeout=60), 11,
                   r"scores\.parquet: a FIFO \(named pipe\), not a regular file")


def test_a_fifo_as_a_label_set_or_run_record_is_never_waited_on(tmp_path):
    from taxoforge.files.labels import read_labels
    from taxoforge.files.paths import NotARegularFile

    for name in ("labels.txt", "labels.csv", "labels.parquet"):
        fifo = _fifo(tmp_path / name)
        with pytest.raises(NotARegularFile, match=rf"{name}: a FIFO"):
            read_labels(fifo)


def test_a_glob_over_a_symlink_loop_ends(tmp_path):
    root = tmp_path / "runs"
    (root / "a").mkdir(parents=True)
    (root / "a" / "x.jsonl").write_text(json.dumps({"output": "dog", "label": "dog"}) + "\n")
    os.symlink(root, root / "a" / "loop")  # runs/a/loop → runs: every level holds itself again
    os.symlink(root / "a", root / "a" / "self")
    res = run_bounded(f"""
from taxoforge.scores.readers.sources import expand_paths
print([str(p) for p in expand_paths([{str(root / '**' / '*.jsonl')!r}])])
""", timeout=60)
    assert res.rc == 0 and "x.jsonl" in res.out, res.describe()
    assert res.cpu_seconds < 10


def test_a_held_lock_is_said_and_waited_for_only_until_its_deadline(tmp_path, caplog):
    import filelock

    from taxoforge.files.locks import LockWaitTimeout, held_lock

    lock = tmp_path / "x.lock"
    other = filelock.FileLock(str(lock))
    held = threading.Event()
    release = threading.Event()

    def holder():
        with other:
            held.set()
            release.wait(10)

    t = threading.Thread(target=holder)
    t.start()
    held.wait(5)
    try:
        caplog.set_level(logging.WARNING, logger="taxoforge.files")
        t0 = time.perf_counter()
        with pytest.raises(LockWaitTimeout, match=r"x\.lock: held by another process for more than 1 s while "
                                                  r"waiting for the demo cache"):
            with held_lock(lock, "the demo cache", 1.0):
                pass
        assert 0.9 <= time.perf_counter() - t0 < 5
        assert any("waiting for the demo cache" in r.getMessage() and "at most 1 s" in r.getMessage()
                   for r in caplog.records)
    finally:
        release.set()
        t.join()


def test_a_lock_in_a_folder_where_none_can_be_made_is_an_error_at_once(tmp_path):
    from taxoforge.files.errors import LocalFileError
    from taxoforge.files.locks import held_lock

    t0 = time.perf_counter()
    with pytest.raises(LocalFileError, match=r"/proc/1/x\.lock: cannot create the lock file of the demo cache"):
        with held_lock("/proc/1/x.lock", "the demo cache", 3600):
            pass
    assert time.perf_counter() - t0 < 5
