"""Entry point and environment: the commands the container's entry point runs itself are named
by absolute path (an ``id`` planted earlier in ``PATH`` cannot let root through), and a renamed
environment variable is still read with a deprecation warning, or refused by name."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.deployment.test_compose import ENTRYPOINT, _as_uid


def test_a_planted_id_in_path_does_not_let_root_through(tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "id").write_text("#!/bin/sh\necho 1000\n")  # says "not root" whatever the user is
    (fake / "id").chmod(0o755)
    marker = tmp_path / "ran"
    env = {"PATH": f"{fake}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
    r = subprocess.run([*_as_uid(True), "sh", str(ENTRYPOINT), "touch", str(marker)], capture_output=True, text=True,
                       timeout=60, cwd=tmp_path, env=env)
    assert r.returncode == 77 and "refusing to run as root (uid 0)" in r.stderr, r.stderr
    assert not marker.exists()


def test_the_entry_point_names_its_own_commands_by_absolute_path():
    text = ENTRYPOINT.read_text()
    body = [ln.split("#", 1)[0] for ln in text.splitlines() if not ln.lstrip().startswith("#")]
    assert not any(" id " in f" {ln} " or "$(id" in ln for ln in body), "id is looked up in PATH"
    assert "/usr/bin/id" in text
