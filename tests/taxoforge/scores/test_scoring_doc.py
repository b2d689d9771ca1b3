"""docs/scoring.md stays true: its three-command quickstart runs as written and gives the
files it names, and its glossary defines every column, stage, method and reason a run can
produce (a new column without a definition fails here)."""

from __future__ import annotations

import json
import re
import shlex
import time

import polars as pl
import pytest
from click.testing import CliRunner

from taxoforge.cli import main
from taxoforge.links.resolve import METHODS
from taxoforge.scores.mapping.config import STAGES
from taxoforge.scores.readers.files import read_outputs
from taxoforge.scores.run import score_frame
from taxoforge.snapshots import SnapshotStore
from taxoforge.trees.tables import TreeTables
from tests.conftest import REPO

DOC = REPO / "docs" / "scoring.md"


def _section(title: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(title)
    nxt = re.search(r"^#{2,3} ", text[start + len(title):], flags=re.M)
    return text[start:start + len(title) + nxt.start()] if nxt else text[start:]


def _glossary(title: str) -> dict[str, str]:
    """``column → meaning`` of the first table under ``title``."""
    rows = {}
    for line in _section(title).splitlines():
        m = re.match(r"\|\s*`([^`]+)`\s*\|\s*(.+?)\s*\|\s*$", line)
        if m:
            rows[m.group(1)] = m.group(2)
    return rows


def _ranked_tree() -> TreeTables:
    rows = [("life", None, "Life", "stateofmatter"), ("animalia", "life", "Animalia", "kingdom"),
            ("aves", "animalia", "Aves", "class"), ("anseriformes", "aves", "Anseriformes", "order"),
            ("anatidae", "anseriformes", "Anatidae", "family"), ("anas", "anatidae", "Anas", "genus"),
            ("a_platy", "anas", "Anas platyrhynchos", "species"), ("a_acuta", "anas", "Anas acuta", "species"),
            ("aythya", "anatidae", "Aythya", "genus"), ("ay_fer", "aythya", "Aythya ferina", "species")]
    nodes = pl.DataFrame({"node_id": [r[0] for r in rows], "parent_id": [r[1] for r in rows],
                          "label": [r[2] for r in rows], "rank": [r[3] for r in rows]},
                         schema_overrides={"parent_id": pl.String})
    names = pl.DataFrame({"node_id": [r[0] for r in rows], "name": [r[2] for r in rows],
                          "kind": ["scientific"] * len(rows)})
    return TreeTables("ducks", nodes, names)


@pytest.fixture(scope="module")
def ranked_run(tmp_path_factory):
    path = tmp_path_factory.mktemp("outputs") / "ducks.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [
        {"id": "1", "model": "m", "output": "Anas platyrhynchos", "label": "Anas platyrhynchos", "exact_match": 1.0},
        {"id": "2", "model": "m", "output": "It is a pintail, Anas acuta", "label": "Anas platyrhynchos",
         "exact_match": 1.0},  # a harness's own verdict: the leaderboard reports its agreement
        {"id": "3", "model": "m", "output": "I cannot tell from this image.", "label": "Aythya ferina"},
        {"id": "4", "model": "m", "output": "Aythya", "label": "Anas imaginaria"},
        {"id": "5", "model": "m", "output": "Anas", "label": None},
        {"id": "6", "model": "m", "output": "Anas", "label": "Nonexistia imaginaria"},
    ]))
    # a ranked second guess per row (--ranked output,second): the hdist@k columns too
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    path.write_text("".join(json.dumps({**r, "second": "Aythya ferina"}) + "\n" for r in lines))
    from taxoforge.scores.options import ReadOptions

    return score_frame(read_outputs(path, options=ReadOptions(ranked=["output", "second"])), _ranked_tree(),
                       meteor=False)


def test_the_glossary_defines_every_leaderboard_column(ranked_run):
    defined = _glossary("### Leaderboard columns")
    columns = [re.sub(r"^hdist@\d+$", "hdist@<k>", c) for c in ranked_run.leaderboard.columns]
    assert "hdist@<k>" in columns  # the run has a ranked top-k
    missing = [c for c in columns if c not in defined]
    assert not missing, f"docs/scoring.md defines no leaderboard column {missing}"
    assert {"accuracy_genus", "HCA", "hF_ci_low"} <= set(ranked_run.leaderboard.columns)  # the ranked run has them all
    stale = [c for c in defined if c not in columns]
    assert not stale, f"docs/scoring.md defines leaderboard columns a run no longer has: {stale}"


def test_the_glossary_defines_every_per_answer_column_stage_and_method(ranked_run):
    defined = _glossary("### Per-answer columns")
    assert [c for c in ranked_run.samples.columns if c not in defined] == []
    assert [c for c in defined if c not in ranked_run.samples.columns] == []
    stage_text, method_text = defined["map_stage"], defined["gt_via"]
    for stage in (*STAGES, "linked_name", "none_of_the_above", "abstention"):
        assert f"`{stage}`" in stage_text, stage
    for m in METHODS:
        assert f"`{m}`" in method_text, m
    for s in ranked_run.samples["map_stage"].unique():
        assert f"`{s}`" in stage_text


def test_the_glossary_names_every_bad_row_reason_and_breakdown_file(ranked_run, tmp_path):
    reasons = _glossary("### Rows not scored")
    assert set(ranked_run.bad_rows["reason"]) <= set(reasons)
    assert {"unknown label", "missing ground truth"} <= set(ranked_run.bad_rows["reason"])
    assert ranked_run.samples["gt_partial"].sum() == 1  # 'Anas imaginaria': the genus only
    ranked_run.write(tmp_path, plots=False)
    files = " ".join(_glossary("### Breakdown tables"))
    for f in (tmp_path / "breakdowns").glob("*.csv"):
        assert f.name in files, f.name


def test_the_readme_opens_with_the_same_three_commands():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    title = "## Score your model in three commands"
    block = re.search(r"```sh\n(.*?)```", _section(title), flags=re.S).group(1)
    assert title in readme and block in readme[readme.index(title):]
    assert readme.index(title) < readme.index("## The two commands")


def test_the_three_command_quickstart_runs_as_written(imagenet_tree, tmp_path, monkeypatch):
    """Command 1 (``make demo``) publishes the ImageNet-1k taxonomy as ``imagenet1k``; here the
    same tree is published into a fresh store, then commands 2 and 3 run as the doc writes
    them (in a copy of the example file's folder layout) and every file the doc names exists."""
    block = re.search(r"```sh\n(.*?)```", _section("## Score your model in three commands"), flags=re.S).group(1)
    commands = [shlex.split(c) for c in block.strip().splitlines()]
    assert [c[:2] for c in commands] == [["make", "demo"], [".venv/bin/taxoforge", "score"], ["cat", "results/leaderboard.md"]]
    store = tmp_path / "snapshots"
    SnapshotStore(store).publish(imagenet_tree, name="imagenet1k", latest=True)
    (tmp_path / "data" / "examples").mkdir(parents=True)
    example = "data/examples/imagenet_example_outputs.jsonl"
    (tmp_path / example).write_bytes((REPO / example).read_bytes())
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(main, [*commands[1][1:], "--store", str(store), "--no-meteor", "--bootstrap", "200"])
    assert res.exit_code == 0, res.output
    assert "imagenet1k@" in res.output
    board = (tmp_path / commands[2][1]).read_text()
    assert "| example-vlm-alpha |" in board
    end = time.monotonic() + 120  # the figures come from a process of their own: run.json says when
    while json.loads((tmp_path / "results" / "run.json").read_text())["figures"]["status"] == "drawing":
        assert time.monotonic() < end, "the figures were not drawn within 120 s"
        time.sleep(0.05)
    named = re.findall(r"`results/([a-z_]+)\.\{([a-z,]+)\}`", _section("## Score your model in three commands"))
    named += [(n, "md,csv,tex,parquet") for n in ["leaderboard"]]
    for stem, exts in named:
        for ext in exts.split(","):
            assert (tmp_path / "results" / f"{stem}.{ext}").exists(), f"{stem}.{ext}"
    for f in ("scores.parquet", "bad_rows.csv"):
        assert (tmp_path / "results" / f).exists()
    info = json.loads((tmp_path / "results" / "run.json").read_text())
    assert info["citation"]["ref"].startswith("imagenet1k@") and info["citation"]["published"]
