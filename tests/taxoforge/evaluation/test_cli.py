"""The `taxoforge evaluate …` commands on small files made here (every command of
docs/evaluations.md runs on user data of this shape)."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

from taxoforge.cli import main
from tests.taxoforge.evaluation.conftest import toy_tables


@pytest.fixture
def tree_dir(tmp_path):
    d = tmp_path / "tree"
    toy_tables().write(d)
    return d


def _run(*args):
    r = CliRunner().invoke(main, [str(a) for a in args])
    return r


def test_breakdowns_and_agreement(tmp_path, tree_dir):
    s = pl.DataFrame({"model": ["m"] * 4, "dataset": "d", "prompt": "p", "id": ["1", "2", "3", "4"],
                      "gt_node": ["e_lucius", "e_lucius", "u_limi", "u_limi"],
                      "pred_node": ["e_lucius", "e_niger", "umbridae", "life"], "abstained": [False, False, False, True]})
    s.write_parquet(tmp_path / "scores.parquet")
    r = _run("evaluate", "breakdowns", tmp_path / "scores.parquet", tree_dir, "-o", tmp_path / "out", "--cuts", "5")
    assert r.exit_code == 0, r.output
    for title in ("Per ground-truth level", "Right at rank R", "HCA and MTA", "Correct / Incorrect / Other %"):
        assert title in r.output
    assert pl.read_parquet(tmp_path / "out" / "consistency.parquet")["HCA"][0] == pytest.approx(0.25)
    other = s.with_columns(pl.Series("pred_node", ["e_lucius", "e_lucius", "umbridae", "umbra"]))
    (tmp_path / "b").mkdir()
    other.write_parquet(tmp_path / "b" / "scores.parquet")
    a = _run("evaluate", "agreement", tmp_path / "scores.parquet", tmp_path / "b" / "scores.parquet")
    assert a.exit_code == 0, a.output
    assert "| b | 0.5 | 1.0 |" in a.output or "| b | 1.0 | 0.5 |" in a.output
    bad = _run("evaluate", "breakdowns", tree_dir / "nodes.parquet", tree_dir)
    assert bad.exit_code == 2 and "needs column" in bad.output


def test_granularity_and_tiered(tmp_path, tree_dir):
    fine = ["e_lucius", "e_niger", "u_limi", "u_pygmaea", "n_hudsonius"]
    rng = np.random.default_rng(0)
    gts = [fine[i] for i in rng.integers(0, 5, 30)]
    m = rng.random((30, 5)) * 0.5
    m[np.arange(30), [fine.index(g) for g in gts]] = 1.0
    pl.DataFrame({**{f: m[:, i] for i, f in enumerate(fine)}, "label": gts}).write_parquet(tmp_path / "m.parquet")
    r = _run("evaluate", "granularity", tmp_path / "m.parquet", tree_dir)
    assert r.exit_code == 0, r.output
    assert "leaves_mAP" in r.output and "ancestor_max-leaf" in r.output
    (tmp_path / "fine.txt").write_text("\n".join(fine))
    t = _run("evaluate", "tiered", tree_dir, tmp_path / "fine.txt", "--coarse-rank", "family", "--scores",
             tmp_path / "m.parquet", "-o", tmp_path / "classes.parquet")
    assert t.exit_code == 0, t.output
    assert "5 fine classes under 3 coarse classes" in t.output and "| 1.0 | 1.0 |" in t.output
    assert pl.read_parquet(tmp_path / "classes.parquet")["coarse_node"].to_list() == [
        "esocidae", "esocidae", "umbridae", "umbridae", "cyprinidae"]


def test_validate_probes_and_open_world(tmp_path, tree_dir):
    v = _run("evaluate", "validate", tree_dir, "--pairs", "300", "--measures", "rouge1_recall,TI")
    assert v.exit_code == 0, v.output
    assert "| rouge1_recall | 300 |" in v.output
    assert _run("evaluate", "validate", tree_dir, "--measures", "bogus").exit_code == 2
    q = tmp_path / "q.jsonl"
    r = _run("mc", "build", tree_dir, "sample:4", "--difficulty", "medium", "--probe-rank", "family", "-o", q)
    assert r.exit_code == 2  # one of the two
    r = _run("mc", "build", tree_dir, "sample:4", "--probe-rank", "family", "-o", q)
    assert r.exit_code == 1 and "only 2 other family(s) in tree (the whole tree); 3 needed" in r.output
    r = _run("mc", "build", tree_dir, "sample:4", "--probe-rank", "family", "--options", "3", "-o", q)
    assert r.exit_code == 0, r.output
    ids = [json.loads(x)["id"] for x in q.read_text().splitlines()]
    pl.DataFrame({"model": "m", "id": ids, "correct": [True] * len(ids)}).write_parquet(tmp_path / "a.parquet")
    p = _run("evaluate", "probes", tmp_path / "a.parquet", q)
    assert p.exit_code == 0, p.output and "| m |" in p.output
    pl.DataFrame({"model": "m", "answer": ["a labrador dog", "cat"], "reference": ["labrador", "dog"]}).write_parquet(
        tmp_path / "ow.parquet")
    o = _run("evaluate", "open-world", tmp_path / "ow.parquet", "--encoder", "none", "-o", tmp_path / "ow_out.parquet")
    assert o.exit_code == 0, o.output
    assert "LI skipped" in o.output and pl.read_parquet(tmp_path / "ow_out.parquet")["TI"].to_list() == [1.0, 0.0]


def test_mc_build_pools_on_the_command_line(tmp_path, tree_dir):
    labels = tmp_path / "fish.txt"
    labels.write_text("Esox lucius\nEsox niger\nESOX AMERICANUS\nUmbra limi\n")
    q = tmp_path / "q.jsonl"
    r = _run("mc", "build", tree_dir, labels, "--difficulty", "medium", "--options", "3", "-o", q)
    assert r.exit_code == 0, r.output
    assert "distractors from the labels given (4 taxa)" in r.output
    assert "4 of 4 label(s) resolved (exact 3, normalised 1)" in r.output
    info = json.loads((tmp_path / "q.info.json").read_text())
    assert info["pool"]["kind"] == "labels" and info["resolution"]["by_method"] == {"exact": 3, "normalised": 1}
    rows = [json.loads(x) for x in q.read_text().splitlines()]
    assert {o for x in rows for o in x["option-nodes"]} <= {"e_lucius", "e_niger", "e_americanus"}
    assert _run("mc", "check", tree_dir, q).exit_code == 0
    # a distractor from outside the pool is caught by mc check (it reads q.info.json)
    bad = [dict(rows[0])]
    i = next(k for k, n in enumerate(bad[0]["option-nodes"]) if n != bad[0]["target-node"])
    bad[0]["option-nodes"][i], bad[0]["options"][i] = "e_masquinongy", "Esox masquinongy"
    q.write_text(json.dumps(bad[0]) + "\n")
    r = _run("mc", "check", tree_dir, q)
    assert r.exit_code == 1 and "outside the pool: e_masquinongy" in r.output
    # a clade, and a pool file
    r = _run("mc", "build", tree_dir, labels, "--difficulty", "easy", "--options", "2", "--pool", "Esociformes",
             "-o", tmp_path / "c.jsonl")
    assert r.exit_code == 0 and "distractors from the clade Esociformes (esociformes" in r.output
    pool = tmp_path / "pool.txt"
    pool.write_text("Esox masquinongy\nEsox lucius\n")
    r = _run("mc", "build", tree_dir, labels, "--difficulty", "medium", "--options", "2", "--pool", f"file:{pool}",
             "-o", tmp_path / "f.jsonl", "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.output)
    assert s["pool"]["kind"] == "list" and s["pool"]["node_ids"] == ["e_lucius", "e_masquinongy"]
    r = _run("mc", "build", tree_dir, labels, "--difficulty", "easy", "--pool", "Felidae", "-o", tmp_path / "x.jsonl")
    assert r.exit_code == 2 and "the clade 'Felidae' is not a node of tree" in r.output
