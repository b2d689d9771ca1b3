"""Headless Chromium for the tests that look at a page as a person would (the Dagster UI,
a snapshot store's catalogue): Debian's ``chromium`` with no sandbox, no GPU, no network
of its own beyond the page asked for, and a throw-away profile."""

from __future__ import annotations

import shutil
import subprocess
import tempfile

__all__ = ["find_chromium", "chromium_argv", "dump_dom"]


def find_chromium() -> str | None:
    """The Chromium executable, or None (``scripts/install-system-deps.sh`` installs it)."""
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium_argv(exe: str, profile: str) -> list[str]:
    return [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-dev-shm-usage", "--hide-scrollbars", f"--user-data-dir={profile}",
            "--virtual-time-budget=25000"]


def dump_dom(exe: str, url: str, *, window: str = "1400,1000", timeout: float = 120) -> str:
    """The DOM of ``url`` after its scripts ran, as Chromium serialises it."""
    profile = tempfile.mkdtemp(prefix="taxoforge-chromium-")
    try:
        out = subprocess.run(chromium_argv(exe, profile) + [f"--window-size={window}", "--dump-dom", url],
                             capture_output=True, text=True, timeout=timeout)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    assert out.returncode == 0, f"chromium failed on {url}: {out.stderr[-2000:]}"
    return out.stdout
