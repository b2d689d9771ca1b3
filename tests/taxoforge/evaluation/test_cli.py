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
