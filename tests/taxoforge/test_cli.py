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
    full = inat_vlm4bio_tree.taxonomy()
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
