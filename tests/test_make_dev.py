"""``make dev`` stops every process it started: the UI comes up on 127.0.0.1, and a SIGTERM to
make — what a supervisor or ``kill`` sends, and make passes on to its child — leaves none of
its processes behind (nor does Ctrl-C, SIGINT to the whole group, as a terminal sends it)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _processes_of(home: Path) -> list[tuple[int, str]]:
    """Every process whose environment names ``home`` as its DAGSTER_HOME."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            if f"DAGSTER_HOME={home}".encode() in env:
                found.append((int(pid), Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")[:100].decode()))
        except OSError:
            continue
    return found


def _as_from_a_terminal() -> None:
    """In the child, before ``make`` starts: SIGINT and SIGTERM as a user's shell leaves them.
    Ignored dispositions are inherited across exec, and this test process may have inherited or
    set some (a suite run in the background ignores SIGINT; Dagster code run in-process maps
    SIGTERM to SIGINT's handler): ``make`` keeps an ignored SIGTERM ignored, and would then
    never pass it on."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@pytest.mark.parametrize("how", ["SIGTERM to make", "Ctrl-C"])
def test_make_dev_leaves_no_process_behind(tmp_path, how):
    if shutil.which("make") is None or not Path("/proc/self/environ").exists():
        pytest.skip("needs make and /proc")
    home, port, venv = tmp_path / "dagster_home", _free_port(), Path(sys.executable).parents[1]
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    env = {**os.environ, "DAGSTER_HOME": str(home), "TAXOFORGE_DATA_DIR": str(tmp_path / "data"),
           "PYTHONPATH": str(REPO), "TAXOFORGE_AUTOMATION": "stopped"}  # nothing to build here: no runs
    # the installation and what is built after it (compiled kernels, METEOR's table) taken as done
    argv = ["make", "-C", str(REPO), "-o", str(venv / ".installed-demo"), "-o", str(venv / ".built-kernels-meteor"),
            "dev", f"VENV={venv}", f"DEV_PORT={port}"]
    log = open(tmp_path / "make-dev.log", "wb")
    make = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                            preexec_fn=_as_from_a_terminal)
    try:
        deadline = time.monotonic() + 400
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/server_info", timeout=5)
                break
            except OSError:
                assert make.poll() is None and time.monotonic() < deadline, (tmp_path / "make-dev.log").read_text()[-3000:]
                time.sleep(2)
        time.sleep(10)  # the daemon and the code server are up
        started = _processes_of(home)
        assert len(started) >= 5, started  # make, dagster dev, webserver, daemon, code server (+ its worker)
        if how == "Ctrl-C":
            os.killpg(make.pid, signal.SIGINT)
        else:
            os.kill(make.pid, signal.SIGTERM)
        deadline = time.monotonic() + 90
        while _processes_of(home) and time.monotonic() < deadline:
            time.sleep(1)
        assert _processes_of(home) == [], f"left running after {how}: {_processes_of(home)} of {started}"
    finally:
        for pid, _ in _processes_of(home):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
