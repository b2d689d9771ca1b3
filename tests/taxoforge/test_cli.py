"""The ``taxoforge`` entry point: snapshot and download errors from any command end with
their documented exit code, not a traceback; ``taxoforge subset TREE LABELS -o OUT``: the real
VLM4Bio species of one result file cut from the real iNaturalist tree, and the exit codes."""

from __future__ import annotations

import json

import polars as pl
from click.testing import CliRunner

from taxoforge.cli import main
from taxoforge.snapshots import SnapshotStore
from taxoforge.trees.tables import TreeTables
from taxoforge.trees.taxonomy import Taxonomy
from tests.taxoforge.scores.conftest import inat_like, inat_vlm4bio_tree, vlm4bio_files  # noqa: F401 - fixtures
from tests.taxoforge.snapshots.helpers import make_tree, random_edges


def test_score_of_an_altered_snapshot_by_name_exits_4_not_with_a_traceback(tmp_path, monkeypatch):
    """``taxoforge score FILE NAME@VERSION`` whose files were altered."""
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


def test_subset_of_real_vlm4bio_species_from_the_inaturalist_tree(inat_vlm4bio_tree, vlm4bio_files, tmp_path):
    f = next(p for p in vlm4bio_files if "fish" in str(p))
    species = sorted({json.loads(x)["target-class"] for x in f.read_text().splitlines()})
    labels = tmp_path / "labels.csv"
    pl.DataFrame({"scientific_name": species}).write_csv(labels)
    store = tmp_path / "store"
    pub = SnapshotStore(store).publish(inat_vlm4bio_tree, name="inaturalist", check=False)
    out = tmp_path / "fish"
    r = CliRunner().invoke(main, ["subset", "inaturalist", str(labels), "-o", str(out), "--store", str(store),
                                  "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["linked"] == doc["labels"] == len(species) and doc["not_linked"] == []
    sub = TreeTables.read(out)
    tax = Taxonomy(sub.nodes)
    full = Taxonomy.of(inat_vlm4bio_tree)
    linked = sub.links.filter(pl.col("status") == "linked")["node_id"].to_list()
    # every label's node is a leaf of the subset, every node of the subset is on a label's path
    assert set(tax.ids[tax.is_leaf].tolist()) == set(linked)
    on_paths = {a for n in linked for a in full.ancestors(n)}
    assert set(sub.nodes["node_id"]) == on_paths
    assert sub.info["parent_citation"]["ref"] == pub.ref and sub.info["label_set"]["labels"] == len(species)
    # the subset is a taxonomy to score against
    r = CliRunner().invoke(main, ["score", str(f), str(out), "--no-meteor", "--bootstrap", "100", "--no-progress"])
    assert r.exit_code == 0, r.output


def test_subset_exit_codes(inat_like, tmp_path):
    tree = tmp_path / "tree"
    inat_like.write(tree)
    labels = tmp_path / "labels.txt"
    labels.write_text("Aloe vera\nToco Toucan\nUnicornus\n")
    r = CliRunner().invoke(main, ["subset", str(tree), str(labels), "-o", str(tmp_path / "a")])
    assert r.exit_code == 10 and "only 2 of 3 labels resolved" in r.stderr and "'Unicornus'" in r.output
    assert (tmp_path / "a" / "nodes.parquet").exists()  # still written
    r = CliRunner().invoke(main, ["subset", str(tree), str(labels), "-o", str(tmp_path / "a"), "--min-linked", "0.6"])
    assert r.exit_code == 0, r.output
    (tmp_path / "none.txt").write_text("Unicornus\n")
    r = CliRunner().invoke(main, ["subset", str(tree), str(tmp_path / "none.txt"), "-o", str(tmp_path / "b")])
    assert r.exit_code == 10 and "none of the 1 labels resolves" in r.stderr and not (tmp_path / "b").exists()
    r = CliRunner().invoke(main, ["subset", "nosuch", str(labels), "-o", str(tmp_path / "c"),
                                  "--store", str(tmp_path / "store")])
    assert r.exit_code == 3 and r.stderr.startswith("error:")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "thesis.tex").write_text("x")
    r = CliRunner().invoke(main, ["subset", str(tree), str(labels), "-o", str(tmp_path / "d")])
    assert r.exit_code == 2 and "not a tree's" in r.output and (tmp_path / "d" / "thesis.tex").exists()


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
            "loaded = sorted(m for m in sys.modules if m.startswith('taxoforge.') and m not in ('taxoforge.cli', 'taxoforge.cli_output')"
            " or m in ('polars', 'numpy', 'nltk', 'matplotlib', 'scipy', 'torch'))\nassert not loaded, loaded\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# ---------------------------------------------------------------- the end of the process
# Run as the program, the group ends the process with ``exit_now`` (no interpreter teardown).
# These run the real program in child processes and check that nothing written is lost, that
# every exit code arrives, and that Python callers of the group (CliRunner, code passing
# arguments) still get click's own behaviour.

def _program(*args, **kw):
    import subprocess
    import sys

    from tests.conftest import REPO

    return subprocess.run([sys.executable, "-m", "taxoforge.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=REPO, timeout=600, **kw)


def _files(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_score_run_as_the_program_writes_what_the_in_process_call_writes(inat_vlm4bio_tree, vlm4bio_files, tmp_path):
    """``python -m taxoforge.cli score`` on a real VLM4Bio file, figures and intervals on:
    every table equal to the in-process (CliRunner) call's, every figure whole, run.json and
    the JSON on standard output complete."""
    import xml.etree.ElementTree as ET

    from PIL import Image

    tree = tmp_path / "tree"
    inat_vlm4bio_tree.write(tree)
    f = next(p for p in vlm4bio_files if "fish-easy" in str(p))
    common = ["--no-meteor", "--bootstrap", "300", "--no-progress", "--min-scored", "0", "--plots", "wait"]
    done = _program("score", f, tree, "-o", tmp_path / "proc", "--json", *common)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)  # the whole document arrived
    r = CliRunner().invoke(main, ["score", str(f), str(tree), "-o", str(tmp_path / "inproc"), *common])
    assert r.exit_code == 0, r.output
    a, b = tmp_path / "proc", tmp_path / "inproc"
    assert _files(a) == _files(b)
    assert {"run.json", "scores.parquet", "leaderboard.parquet", "leaderboard.csv", "leaderboard.md",
            "leaderboard.tex", "hp_vs_hr.png", "hp_vs_hr.pdf", "hp_vs_hr.svg"} <= set(_files(a))
    for name in _files(a):
        if name.endswith(".parquet"):
            assert pl.read_parquet(a / name).equals(pl.read_parquet(b / name)), name
        elif name.endswith((".csv", ".md", ".tex")):
            assert (a / name).read_bytes() == (b / name).read_bytes(), name
        elif name.endswith(".png"):
            with Image.open(a / name) as im:
                im.load()  # every row of pixels there
                with Image.open(b / name) as other:
                    assert im.size == other.size
        elif name.endswith(".pdf"):
            assert (a / name).read_bytes().rstrip().endswith(b"%%EOF"), name
        elif name.endswith(".svg"):
            ET.parse(a / name)
    run = json.loads((a / "run.json").read_text())
    assert run["scored"] == json.loads((b / "run.json").read_text())["scored"] == doc["info"]["scored"] > 0
    assert len(doc["leaderboard"]) == pl.read_parquet(a / "leaderboard.parquet").height


def test_exit_codes_of_the_program_arrive(inat_like, tmp_path):
    """0, a command's own codes (1 ``diff --exit-code`` with changes, 10 too few rows scored,
    11 an output that cannot be written) and click's usage error 2, with their messages."""
    from taxoforge.snapshots import SnapshotStore

    tree = tmp_path / "tree"
    inat_like.write(tree)
    rows = tmp_path / "a.jsonl"
    rows.write_text("".join(json.dumps({"id": str(i), "model": "m", "output": o, "label": "aloe_vera"}) + "\n"
                            for i, o in enumerate(["Aloe vera", "A: Aloe vera", "an iris"])))
    fast = ["--no-meteor", "--bootstrap", "0", "--no-plots", "--no-progress"]
    assert _program("score", rows, tree, "--min-scored", "0", *fast).returncode == 0
    bad = tmp_path / "b.jsonl"
    bad.write_text(rows.read_text() + json.dumps({"id": "9", "model": "m", "output": "x", "label": "Nowhere"}) + "\n")
    done = _program("score", bad, tree, *fast)
    assert done.returncode == 10 and "only 3 of 4 rows scored" in done.stderr
    (tmp_path / "taken").write_text("a file where the output folder goes")
    done = _program("score", rows, tree, "-o", tmp_path / "taken" / "out", *fast)
    assert done.returncode == 11 and "taken" in done.stderr and "Traceback" not in done.stderr
    done = _program("score", rows, tree, "--no-such-option")
    assert done.returncode == 2 and "No such option '--no-such-option'" in done.stderr
    store = SnapshotStore(tmp_path / "store")
    one = store.publish(make_tree(random_edges(n=80, extra=5, seed=1)), name="demo")
    two = store.publish(make_tree(random_edges(n=81, extra=5, seed=1)), name="demo")
    done = _program("diff", one.ref, two.ref, "--store", tmp_path / "store", "--exit-code")
    assert done.returncode == 1 and done.stdout == CliRunner().invoke(
        main, ["diff", one.ref, two.ref, "--store", str(tmp_path / "store"), "--exit-code"]).stdout
    assert _program("diff", one.ref, one.ref, "--store", tmp_path / "store", "--exit-code").returncode == 0


def test_exit_now_waits_for_threads_runs_exit_handlers_and_flushes(tmp_path):
    """What a normal exit does before tearing the interpreter down, exit_now does: a
    non-daemon thread still writing is waited for, ``atexit`` handlers run, a megabyte still
    in standard output's buffer arrives; the code is the one given, 1 for a message."""
    import subprocess
    import sys

    code = ("import atexit, sys, threading, time\n"
            "from taxoforge.cli import exit_now\n"
            "def late():\n"
            "    time.sleep(0.3)\n"
            "    open(sys.argv[1] + '/thread', 'w').write('done')\n"
            "threading.Thread(target=late).start()\n"
            "atexit.register(lambda: open(sys.argv[1] + '/atexit', 'w').write('ran'))\n"
            "sys.stdout.write('x' * 1_000_000 + 'end')\n"
            "exit_now(int(sys.argv[2]) if sys.argv[2].isdigit() else sys.argv[2])\n"
            "print('never')\n")
    for given, rc in (("0", 0), ("7", 7), ("a message", 1)):
        done = subprocess.run([sys.executable, "-c", code, str(tmp_path), given], capture_output=True, text=True)
        assert done.returncode == rc and done.stdout == "x" * 1_000_000 + "end", done.stderr[-500:]
        assert (tmp_path / "thread").read_text() == "done" and (tmp_path / "atexit").read_text() == "ran"
        assert done.stderr == ("a message\n" if rc == 1 else "")
        (tmp_path / "thread").unlink()
        (tmp_path / "atexit").unlink()
    # no standard output at all (pythonw, a daemon); standard output a pipe closed by its reader
    done = subprocess.run([sys.executable, "-c", "import sys\nfrom taxoforge.cli import exit_now\nsys.stdout = None\n"
                           "exit_now(3)"], capture_output=True, text=True)
    assert done.returncode == 3 and done.stderr == "", done.stderr
    import os

    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # output held in the buffer
    codes = {}
    for end in ("exit_now(0)", "sys.exit(0)"):
        r, w = os.pipe()
        os.close(r)  # the reader is gone before anything is written
        done = subprocess.run([sys.executable, "-c", "import sys\nfrom taxoforge.cli import exit_now\n"
                               f"sys.stdout.write('unread')\n{end}"], stdout=w, stderr=subprocess.PIPE, env=env)
        os.close(w)
        codes[end] = done.returncode
    assert codes["exit_now(0)"] == codes["sys.exit(0)"] == 120  # what the interpreter exits with then


def test_python_callers_get_clicks_behaviour():
    """CliRunner (``main.main``), a call with arguments and one outside standalone mode
    return or raise ``SystemExit`` as click does; the calling process goes on."""
    import subprocess
    import sys

    r = CliRunner().invoke(main, ["--version"])
    assert r.exit_code == 0 and "version" in r.output
    assert main.main(["--help"], standalone_mode=False) == 0
    code = ("from taxoforge.cli import main\n"
            "try:\n    main(['--version'])\nexcept SystemExit as e:\n    print('SystemExit', e.code)\n"
            "try:\n    main(['no-such-command'])\nexcept SystemExit as e:\n    print('SystemExit', e.code)\n"
            "print('returned', main(['--version'], standalone_mode=False))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [x for x in lines if x.startswith(("SystemExit", "returned"))] == ["SystemExit 0", "SystemExit 2",
                                                                               "returned 0"], done.stdout
