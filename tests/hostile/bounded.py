"""Run one hostile case in a child process with an address-space limit (``RLIMIT_AS``) and
a wall-clock timeout, and read back its exit code, output, peak resident memory and time.

A case that regresses — allocates gigabytes, or never ends — then fails its test (a
``MemoryError`` under the limit, or the timeout) instead of taking the shared machine down.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

#: address space a case may reserve (imports of polars and pyarrow reserve ~0.6 GB of it)
DEFAULT_AS_BYTES = 4_000_000_000
#: the most resident memory an answer file of under 10 MB may cost (docs/security.md)
MAX_PEAK_MB = 500
#: the most seconds of processor time a case may take (the wall-clock time of a shared 2-core
#: machine under load is several times longer; each case's timeout bounds that)
MAX_SECONDS = 30

_WRAPPER = r"""
import atexit, os, resource, sys
lim = int(os.environ["BOUNDED_AS_BYTES"])
resource.setrlimit(resource.RLIMIT_AS, (lim, lim))


def _peak():  # atexit: the command line ends the process through its exit handlers (taxoforge.cli.exit_now)
    sys.stdout.flush()
    u = resource.getrusage(resource.RUSAGE_SELF)
    peak = u.ru_maxrss  # inherited across fork and exec on Linux: the new address space's own high-water mark wins
    try:
        with open("/proc/self/status") as fh:
            peak = next(int(ln.split()[1]) for ln in fh if ln.startswith("VmHWM:"))
    except (OSError, StopIteration, ValueError):
        pass
    sys.stderr.write("\n@@peak_kb %d cpu_s %.3f\n" % (peak, u.ru_utime + u.ru_stime))
    sys.stderr.flush()


atexit.register(_peak)
exec(compile(sys.argv[1], "<case>", "exec"), {"__name__": "__case__"})
"""


@dataclass
class Bounded:
    """What a bounded case did.

    Attributes
    ----------
    rc : int or None
        Its exit code (None when it was killed at the timeout).
    out, err : str
        Its standard output and error (the peak line removed).
    peak_mb : float
        Its peak resident memory.
    seconds : float
        Its wall-clock time.
    cpu_seconds : float
        The processor time it took (user and system): what the case costs, whatever the
        load of the machine it shares.
    """

    rc: int | None
    out: str
    err: str
    peak_mb: float
    seconds: float
    cpu_seconds: float = float("nan")

    @property
    def timed_out(self) -> bool:
        return self.rc is None

    def describe(self) -> str:
        return (f"rc={self.rc} peak={self.peak_mb:.0f} MB in {self.seconds:.1f} s ({self.cpu_seconds:.1f} s of "
                f"processor)\nstdout: {self.out[-1500:]}\n"
                f"stderr: {self.err[-3000:]}")


def run_bounded(code: str, *, as_bytes: int = DEFAULT_AS_BYTES, timeout: float = 180, env: dict | None = None,
                cwd: str | os.PathLike | None = None, stdin=subprocess.DEVNULL) -> Bounded:
    """Run the Python ``code`` in a child process bounded by ``as_bytes`` and ``timeout``."""
    full_env = dict(os.environ, PYTHONPATH=str(REPO), BOUNDED_AS_BYTES=str(as_bytes), POLARS_MAX_THREADS="2",
                    OMP_NUM_THREADS="1", MPLBACKEND="Agg")
    full_env.update(env or {})
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", _WRAPPER, code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=stdin, env=full_env, cwd=cwd, text=True, errors="replace", start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, err = proc.communicate()
        rc = None
    seconds = time.perf_counter() - t0
    m = re.search(r"@@peak_kb (\d+) cpu_s ([\d.]+)", err)
    peak = int(m.group(1)) / 1024 if m else float("nan")
    cpu = float(m.group(2)) if m else float("nan")
    err = re.sub(r"\n?@@peak_kb \d+ cpu_s [\d.]+\n?", "\n", err)
    return Bounded(rc, out, err, peak, seconds, cpu)


def run_cli_bounded(args, **kwargs) -> Bounded:
    """``taxoforge ARGS…`` in a bounded child process (:func:`run_bounded`)."""
    return run_bounded(f"import sys\nsys.argv = ['taxoforge', *{list(map(str, args))!r}]\n"
                       "from taxoforge.cli import main\nmain()", **kwargs)


def assert_refused(res: Bounded, code: int, *patterns: str, max_mb: float = MAX_PEAK_MB,
                   max_seconds: float = MAX_SECONDS) -> None:
    """The case ended with exit ``code``, one line saying each of ``patterns`` (regexes), no
    traceback, within ``max_mb`` of memory and ``max_seconds``."""
    assert not res.timed_out, f"ran past its timeout: {res.describe()}"
    assert res.rc == code, res.describe()
    assert "Traceback" not in res.err, res.describe()
    for pat in patterns:
        assert re.search(pat, res.err + res.out), f"{pat!r} not said: {res.describe()}"
    assert res.peak_mb <= max_mb, f"peak {res.peak_mb:.0f} MB > {max_mb} MB: {res.describe()}"
    assert res.cpu_seconds <= max_seconds, f"{res.cpu_seconds:.1f} s of processor > {max_seconds} s: {res.describe()}"
