"""The ``taxoforge`` entry point: snapshot and download errors from any command end with
their documented exit code, not a traceback."""

from __future__ import annotations

import json

from click.testing import CliRunner

from taxoforge.cli import main
from taxoforge.snapshots import SnapshotStore
from tests.taxoforge.snapshots.helpers import make_tree, random_edges


def test_score_of_an_altered_snapshot_by_name_exits_4_not_with_a_traceback(tmp_path, monkeypatch):
    """Issue 15 item 6: ``taxoforge score FILE NAME@VERSION`` whose files were altered."""
    store = str(tmp_path / "store")
    a = SnapshotStore(store).publish(make_tree(random_edges(n=60, extra=20)))
    outputs = tmp_path / "outputs.jsonl"
    outputs.write_text(json.dumps({"id": "1", "model": "m", "prompt": "p", "dataset": "toy",
                                   "output": "thing t:1", "label": "thing t:1"}) + "\n")
    nodes = SnapshotStore(store).local_dir("demo", a.version) / "nodes.parquet"
    data = bytearray(nodes.read_bytes())
    data[len(data) // 2] ^= 0xFF
    nodes.write_bytes(bytes(data))
    monkeypatch.setenv("TAXOFORGE_SNAPSHOT_STORE", store)
    r = CliRunner().invoke(main, ["score", str(outputs), a.ref, "--no-meteor", "--no-progress"])
    assert r.exit_code == 4, r.output
    assert "error:" in r.stderr and "nodes.parquet" in r.stderr and "Traceback" not in r.output


def test_help_lists_every_command_with_its_own_summary_without_importing_them():
    """``taxoforge --help`` lists the commands from :data:`taxoforge.cli.SUMMARIES`, which
    must shorten exactly as each command's own help does; and it imports no command module."""
    import importlib
    import subprocess
    import sys

    import click

    from taxoforge.cli import COMMANDS, SUMMARIES

    assert set(SUMMARIES) == set(COMMANDS)
    for name, target in COMMANDS.items():
        mod, attr = target.split(":")
        cmd = getattr(importlib.import_module(mod), attr)
        for limit in (30, 45, 60, 66, 120):
            assert click.Command(name, help=SUMMARIES[name]).get_short_help_str(limit) == cmd.get_short_help_str(limit), name
    code = ("import sys\nfrom click.testing import CliRunner\nfrom taxoforge.cli import main\n"
            "r = CliRunner().invoke(main, ['--help'])\nassert r.exit_code == 0 and 'score ' in r.output, r.output\n"
            "loaded = sorted(m for m in sys.modules if m.startswith('taxoforge.') and m != 'taxoforge.cli'"
            " or m in ('polars', 'numpy', 'nltk', 'matplotlib', 'scipy', 'torch'))\nassert not loaded, loaded\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
