"""What a killed run leaves behind is swept by the next run — only when provably stale:
older than the bound and claimed by no live process. The runs are real child processes,
killed with SIGKILL in the middle of their work (nothing of theirs gets to clean up)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from taxoforge.files import atomic_directory, write_text_atomic
from taxoforge.files.debris import STALE_AFTER, Claim, is_stale, sweep

REPO = Path(__file__).resolve().parents[3]

_KOUT = r"""
import sys, time
from taxoforge.files import atomic_directory
with atomic_directory(sys.argv[1]) as tmp:
    (tmp / "scores.parquet").write_bytes(b"half a result")
    print("ready", flush=True)
    time.sleep(120)
"""

_TMPFILE = r"""
import sys, time
from taxoforge.files import atomic_writer
with atomic_writer(sys.argv[1], "wb") as f:
    f.write(b"half a file")
    f.flush()
    print("ready", flush=True)
    time.sleep(120)
"""


def _start(script: str, *args: str) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE, text=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert p.stdout.readline().strip() == "ready"
    return p


def _kill(p: subprocess.Popen) -> None:
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)


def _age(path: Path, seconds: float) -> None:
    """Make ``path`` (and what it holds) look untouched for ``seconds``."""
    then = time.time() - seconds
    for q in [path, *(path.rglob("*") if path.is_dir() else [])]:
        os.utime(q, (then, then), follow_symlinks=False)


def _debris(folder: Path, name: str) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name.startswith(f".{name}."))


def test_a_killed_runs_results_folder_is_swept_by_the_next_run(tmp_path):
    out = tmp_path / "kout"
    p = _start(_KOUT, str(out))
    _kill(p)
    (left,) = _debris(tmp_path, "kout")  # .kout.<16 hex>, half written
    assert (left / "scores.parquet").exists()
    with atomic_directory(out) as tmp:  # the next run, right away: the debris is too young to be sure
        (tmp / "scores.parquet").write_bytes(b"whole")
    assert left.exists()
    _age(left, STALE_AFTER + 60)
    with atomic_directory(out) as tmp:  # the next run, an hour later: swept
        (tmp / "scores.parquet").write_bytes(b"whole")
    assert _debris(tmp_path, "kout") == [] and (out / "scores.parquet").read_bytes() == b"whole"


def test_the_work_of_a_live_run_is_never_swept_however_old(tmp_path):
    out = tmp_path / "kout"
    p = _start(_KOUT, str(out))  # still running (a long scoring run)
    try:
        (live,) = _debris(tmp_path, "kout")
        _age(live, 10 * STALE_AFTER)
        assert not is_stale(live)
        with atomic_directory(out) as tmp:
            (tmp / "x").write_text("another run beside it")
        assert live.exists() and (live / "scores.parquet").exists()
    finally:
        _kill(p)
    assert is_stale(live)  # its process is gone now: the claim went with it


def test_a_killed_writers_temporary_file_is_swept_by_the_next_write(tmp_path):
    dest = tmp_path / "index.json"
    p = _start(_TMPFILE, str(dest))
    _kill(p)
    (left,) = _debris(tmp_path, "index.json")  # .index.json.<16 hex>.tmp
    _age(left, STALE_AFTER + 60)
    write_text_atomic(dest, "{}")
    assert _debris(tmp_path, "index.json") == [] and dest.read_text() == "{}"


def test_a_sweep_touches_only_what_matches_and_never_raises(tmp_path):
    for name in (".kout.0123456789abcdef", ".kout.0123456789abcdef.old", ".kout.notours", "kout", ".other.0123456789abcdef"):
        (tmp_path / name).mkdir()
        _age(tmp_path / name, STALE_AFTER + 60)
    removed = sweep(tmp_path, r"\.kout\.[0-9a-f]{16}(\.old)?")
    assert sorted(p.name for p in removed) == [".kout.0123456789abcdef", ".kout.0123456789abcdef.old"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".kout.notours", ".other.0123456789abcdef", "kout"]
    assert sweep(tmp_path / "missing", r".*") == []


def test_a_claim_holds_until_released(tmp_path):
    d = tmp_path / ".x.0123456789abcdef"
    d.mkdir()
    _age(d, STALE_AFTER + 60)
    with Claim(d):
        assert not is_stale(d)
        with pytest.raises(TimeoutError, match="in use by another process"):
            Claim(d, wait=0.2)
    assert is_stale(d)
