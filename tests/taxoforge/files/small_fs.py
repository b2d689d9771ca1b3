"""A real full disk for the tests: a small tmpfs mounted in the test's folder.

``small_filesystem(path, size)`` mounts a tmpfs of ``size`` bytes at ``path`` (it needs
root or ``CAP_SYS_ADMIN``, as on the project's test machine) so a write past it fails
with a real ``ENOSPC`` from the kernel; where it cannot be mounted the test is skipped
with the reason. :func:`file_size_limit` is the portable companion: a ``preexec_fn``
setting ``RLIMIT_FSIZE`` for a child process (writes past it fail with ``EFBIG``,
``SIGXFSZ`` ignored), which needs no privilege.
"""

from __future__ import annotations

import contextlib
import resource
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def small_filesystem(path: Path, size: int) -> Iterator[Path]:
    """A tmpfs of ``size`` bytes at ``path`` (created), unmounted at the end."""
    path.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0777", "tmpfs", str(path)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({r.stderr.strip() or r.returncode}); the RLIMIT_FSIZE "
                    "tests cover the same path")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def file_size_limit(n: int) -> Callable[[], None]:
    """A ``preexec_fn``: no file of the child may grow past ``n`` bytes (``EFBIG``)."""

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (n, n))

    return limit
