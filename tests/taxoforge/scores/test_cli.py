"""``taxoforge score`` and ``taxoforge map`` as a researcher runs them: many files and glob
patterns in one run with one mapping index, snapshots from a local or HTTP store, exit codes
that say when too few rows scored, errors that name what is wrong — through click's
CliRunner and as a real subprocess."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

import taxoforge.scores.run as run_module
from taxoforge.cli import main
from taxoforge.scores.mapping import TaxonomyIndex
from taxoforge.snapshots import SnapshotStore
from tests.conftest import REPO, shared_file
from tests.taxoforge.snapshots.helpers import serve, stop

GOOD = [{"id": "1", "model": "m1", "output": "A: Aloe vera", "label": "aloe_vera"},
        {"id": "2", "model": "m1", "output": "Toucan", "label": "Black-mandibled Toucan"},
        {"id": "3", "model": "m2", "output": "I cannot tell", "label": "iris_sibirica"},
        {"id": "4", "model": "m2", "output": "Iris", "label": "Iris versicolor"}]
FOREIGN = [{"id": str(i), "model": "m", "output": "Canis lupus", "label": "Canis lupus"} for i in range(4)]
FAST = ["--no-meteor", "--bootstrap", "200", "--no-progress"]


def _jsonl(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture()
def tree(inat_like, tmp_path):
    folder = tmp_path / "tree"
    inat_like.write(folder)
    return folder


def test_many_files_and_a_glob_the_shell_left_alone_are_one_run_with_one_index(tree, tmp_path, monkeypatch):
    _jsonl(tmp_path / "results" / "a" / "x.jsonl", GOOD[:2])
    _jsonl(tmp_path / "results" / "b" / "deeper" / "y.jsonl", GOOD[2:])
    single = _jsonl(tmp_path / "single.jsonl", [dict(GOOD[0], model="m3")])
    built = []

    class CountingIndex(TaxonomyIndex):
        def __init__(self, *a, **k):
            built.append(1)
            super().__init__(*a, **k)

    monkeypatch.setattr(run_module, "TaxonomyIndex", CountingIndex)
    out = tmp_path / "res"
    r = CliRunner().invoke(main, ["score", str(single), str(tmp_path / "results" / "**" / "*.jsonl"), str(single),
                                  str(tree), "-o", str(out), "--plots", "wait", *FAST])
    assert r.exit_code == 0, r.output
    assert built == [1]  # one index for the three files
    assert "read 5 rows from 3 files" in r.stderr
    lb = pl.read_parquet(out / "leaderboard.parquet")
    assert sorted(lb["model"]) == ["m1", "m2", "m3"]  # one combined leaderboard
    info = json.loads((out / "run.json").read_text())
    assert [(f["file"].rsplit("/", 1)[-1], f["rows"], f["scored"]) for f in info["per_file"]] == [
        ("single.jsonl", 1, 1), ("x.jsonl", 2, 2), ("y.jsonl", 2, 2)]
    assert "**3 files:**" in r.output
    for name in ("leaderboard.csv", "leaderboard.tex", "hp_vs_hr.pdf", "rank_accuracy.svg", "breakdowns/consistency.csv"):
        assert (out / name).stat().st_size > 0, name
    # a folder means the model-output files under it
    r = CliRunner().invoke(main, ["score", str(tmp_path / "results"), str(tree), *FAST])
    assert r.exit_code == 0 and "read 4 rows from 2 files" in r.stderr


def test_a_pattern_matching_nothing_and_a_column_typo_are_usage_errors(tree, tmp_path):
    f = _jsonl(tmp_path / "o.jsonl", [{"id": "1", "response": "Aloe vera", "gt": "aloe_vera"}])
    r = CliRunner().invoke(main, ["score", str(tmp_path / "nope" / "*.jsonl"), str(tree), *FAST])
    assert r.exit_code == 2 and "no file matches this pattern" in r.stderr
    r = CliRunner().invoke(main, ["score", str(f), str(tree), "--column", "output=respones", "--column", "label=gt",
                                  *FAST])
    assert r.exit_code == 2
    assert "no column 'respones'" in r.stderr and "did you mean 'response'" in r.stderr
    assert "its columns are gt, id, response" in r.stderr and "Traceback" not in r.output
    r = CliRunner().invoke(main, ["score", str(f), str(tree), "--column", "outptu=response", *FAST])
    assert r.exit_code == 2 and "'outptu' is not a canonical column (did you mean 'output'?)" in r.stderr


def test_too_few_rows_scored_fails_and_still_writes_the_results(tree, tmp_path):
    mixed = _jsonl(tmp_path / "mixed.jsonl", GOOD[:3] + [{"id": "9", "model": "m1", "output": "x", "label": "Nowhere"}])
    out = tmp_path / "res"
    r = CliRunner().invoke(main, ["score", str(mixed), str(tree), "-o", str(out), *FAST])
    assert r.exit_code == 10
    assert "only 3 of 4 rows scored (75.0 %, below --min-scored 95 %): unknown label 1" in r.stderr
    assert (out / "leaderboard.md").exists() and pl.read_parquet(out / "bad_rows.parquet").height == 1
    r = CliRunner().invoke(main, ["score", str(mixed), str(tree), "--min-scored", "0.7", *FAST])
    assert r.exit_code == 0, r.output


def test_no_row_scored_exits_non_zero_as_a_real_process(tree, tmp_path):
    foreign = _jsonl(tmp_path / "results" / "vlm4bio.jsonl", FOREIGN)
    cmd = [sys.executable, "-m", "taxoforge.cli", "score", str(tmp_path / "results" / "*.jsonl"), str(tree),
           "--min-scored", "0", "--json", *FAST]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=300)
    assert p.returncode == 10, p.stderr
    doc = json.loads(p.stdout)
    assert doc["exit_code"] == 10 and "no row was scored (4 rows read: unknown label 4)" in doc["error"]
    assert doc["info"]["scored"] == 0 and len(doc["bad_rows"]) == 4 and doc["leaderboard"] == []
    assert foreign.exists()


def test_a_snapshot_by_name_is_cited_with_its_store_and_a_missing_one_lists_the_store(inat_like, tmp_path):
    store = tmp_path / "store"
    pub = SnapshotStore(store).publish(inat_like, name="inat_like", check=False)
    f = _jsonl(tmp_path / "o.jsonl", GOOD)
    r = CliRunner().invoke(main, ["score", str(f), "inat_like", "--store", str(store), "--json", *FAST])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    # a local store with no public URL: cited as local-only, never by its path
    assert doc["info"]["citation"]["ref"] == pub.ref and doc["info"]["citation"]["store"] is None
    assert doc["info"]["citation"]["local_only"] is True and str(store) not in json.dumps(doc["info"]["citation"])
    assert {row["taxonomy_version"] for row in doc["leaderboard"]} == {pub.ref}
    assert {row["taxonomy_store"] for row in doc["leaderboard"]} == {None}
    assert all(row["hF_ci_low"] <= row["hF"] <= row["hF_ci_high"] for row in doc["leaderboard"] if row["n"] > 1)

    r = CliRunner().invoke(main, ["score", str(f), "inaturalist", "--store", str(store), *FAST])
    assert r.exit_code == 3 and "Traceback" not in r.output
    assert "\nerror: inaturalist: not a folder" in r.stderr and pub.ref in r.stderr  # what the store has
    r = CliRunner().invoke(main, ["score", str(f), "inaturalist", "--store", str(store), "--json", *FAST])
    assert r.exit_code == 3 and json.loads(r.stdout)["kind"] == "TaxonomyNotFound"


def test_a_snapshot_of_a_remote_store_is_pulled_verified_and_cited(inat_like, tmp_path):
    remote = tmp_path / "remote"
    pub = SnapshotStore(remote).publish(inat_like, name="inat_like", check=False)
    f = _jsonl(tmp_path / "o.jsonl", GOOD)
    srv, t = serve(remote)
    try:
        args = ["score", str(f), f"inat_like@{pub.version}", "--store", srv.url, "--dest", str(tmp_path / "local"),
                "--json", *FAST]
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 0, r.output
        cit = json.loads(r.stdout)["info"]["citation"]
        assert cit["ref"] == pub.ref and cit["store"] == srv.url and cit["verified"] == "store"
        assert (tmp_path / "local" / "inat_like" / pub.version / "manifest.json").exists()
        assert CliRunner().invoke(main, args).exit_code == 0  # the second call finds it pulled
        # the local store lacks it: pulled from --remote into the local store, cited with the remote's URL
        local = tmp_path / "mine"
        r = CliRunner().invoke(main, ["score", str(f), "inat_like", "--store", str(local), "--remote", srv.url,
                                      "--json", *FAST])
        assert r.exit_code == 0, r.output
        assert json.loads(r.stdout)["info"]["citation"]["store"] == srv.url and "pulling it from" in r.stderr
        assert (local / "inat_like" / pub.version / "manifest.json").exists()
    finally:
        stop(srv, t)


def test_an_altered_snapshot_folder_is_refused_or_cited_by_its_own_content(inat_like, tmp_path):
    store = tmp_path / "store"
    pub = SnapshotStore(store).publish(inat_like, name="inat_like", check=False)
    copy = tmp_path / "copy"
    shutil.copytree(SnapshotStore(store).local_dir("inat_like", pub.version), copy)
    nodes = pl.read_parquet(copy / "nodes.parquet")
    nodes.with_columns(pl.when(pl.col("node_id") == "aloe").then(pl.lit("Aloes")).otherwise(pl.col("label"))
                       .alias("label")).write_parquet(copy / "nodes.parquet")
    f = _jsonl(tmp_path / "o.jsonl", GOOD)
    r = CliRunner().invoke(main, ["score", str(f), str(copy), *FAST])
    assert r.exit_code == 4 and "refusing to cite" in r.stderr and "Traceback" not in r.output
    r = CliRunner().invoke(main, ["score", str(f), str(copy), "--allow-altered", "--json", *FAST])
    assert r.exit_code == 0, r.output
    cit = json.loads(r.stdout)["info"]["citation"]
    assert cit["ref"].startswith("sha256:") and cit["content_sha256"] != pub.manifest["content_sha256"]
    assert cit["published"] is False


def test_map_writes_unlabelled_oven_answers_with_node_stage_and_similarity(imagenet_tree, tmp_path):
    oven = shared_file("predictions/oven_val_query_blip2_flant5xxl_bm25_predictions.jsonl")
    n = sum(1 for line in oven.read_text().splitlines() if line.strip())
    tree = tmp_path / "imagenet"
    imagenet_tree.write(tree)
    cols = ["--column", "id=data_id", "--column", "output=prediction", "--no-progress"]
    for suffix in (".parquet", ".csv", ".jsonl"):
        out = tmp_path / f"mapped{suffix}"
        r = CliRunner().invoke(main, ["map", str(oven), str(tree), "-o", str(out), *cols])
        assert r.exit_code == 0, r.output
        table = {".parquet": pl.read_parquet, ".csv": pl.read_csv, ".jsonl": pl.read_ndjson}[suffix](out)
        assert table.height == n and table["id"][0].startswith("oven_query_val_")
        assert {"node_id", "node_label", "stage", "similarity", "abstained"} <= set(table.columns)
        assert table["node_id"].null_count() == 0 and "label" not in table.columns
    assert f"{n:,} of {n:,} answers mapped" in r.output
    # the same file cannot be scored: it has no ground truths
    r = CliRunner().invoke(main, ["score", str(oven), str(tree), *cols])
    assert r.exit_code == 2 and "no ground-truth column" in r.stderr and "taxoforge map" in r.stderr
    r = CliRunner().invoke(main, ["map", str(oven), str(tree), "--json", *cols])
    doc = json.loads(r.stdout)
    assert doc["info"]["mapped"] == n and len(doc["rows"]) == 20 and sum(doc["info"]["stage_counts"].values()) == n


def test_harness_files_score_with_no_flag_and_report_the_harness_agreement(vlm4bio_files, inat_vlm4bio_tree,
                                                                           tmp_path):
    from benchmarks.harness_files import harness_files

    native = next(p for p in vlm4bio_files if "bird-medium" in str(p))
    files = harness_files(native, tmp_path / "h")
    tree = tmp_path / "tree"
    inat_vlm4bio_tree.write(tree)
    out = tmp_path / "res"
    r = CliRunner().invoke(main, ["score", str(files["VLMEvalKit judge xlsx"]), str(files["lmms-eval v0.4"]),
                                  str(tree), "-o", str(out), *FAST])
    assert r.exit_code == 0, r.output + r.stderr
    lb = pl.read_csv(out / "leaderboard.csv").sort("model")
    assert lb.select("model", "dataset").rows() == [("liuhaotian__llava-v1.5-7b", "vlm4bio_bird_medium"),
                                                    ("llava_v1.5_7b", "VLM4Bio_bird_medium")]
    assert lb["n"].to_list() == [20, 20] and lb["harness_n"].to_list() == [20, 20]
    assert lb["harness_agreement"].to_list() == [1.0, 1.0]
    run = json.loads((out / "run.json").read_text())
    assert run["command"].startswith("taxoforge score ") and run["argv"][-len(FAST):] == list(FAST)
    assert run["taxoforge_version"] and run["working_folder"]
    assert {(i["role"], Path(i["file"]).name) for i in run["inputs"]} == {  # the judge table's prediction file too
        ("output", files["VLMEvalKit xlsx"].name), ("judge", files["VLMEvalKit judge xlsx"].name),
        ("output", files["lmms-eval v0.4"].name)}
    assert all(len(i["sha256"]) == 64 and i["bytes"] > 0 for i in run["inputs"])
    # two runs of one model and dataset (a judge table of the legacy run, the tsv of a later one): the later is read
    r = CliRunner().invoke(main, ["score", str(files["VLMEvalKit judge xlsx"]), str(files["VLMEvalKit tsv"]),
                                  str(tree), "-o", str(out), *FAST])
    assert r.exit_code == 0 and "1 earlier run not read: llava_v1.5_7b / VLM4Bio_bird_medium T20250101_G1a2b3c4d " \
                                "(latest T20250102-093000)" in r.stderr
    run = json.loads((out / "run.json").read_text())
    assert [(s["file"], s["judge"]) for s in run["superseded"]] == [(str(files["VLMEvalKit xlsx"]),
                                                                     str(files["VLMEvalKit judge xlsx"]))]
    r = CliRunner().invoke(main, ["score", str(files["VLMEvalKit judge xlsx"]), str(files["VLMEvalKit tsv"]),
                                  str(tree), "--all-runs", "--json", *FAST])
    assert r.exit_code == 0 and sorted((x["model"], x["n"]) for x in json.loads(r.stdout)["leaderboard"]) == [
        ("llava_v1.5_7b@T20250101_G1a2b3c4d", 20), ("llava_v1.5_7b@T20250102-093000", 20)]
    # --format names a layout or a file kind explicitly
    r = CliRunner().invoke(main, ["score", str(files["VLMEvalKit xlsx"]), str(tree), "--format", "xlsx", "--json",
                                  *FAST])
    assert r.exit_code == 0 and json.loads(r.stdout)["info"]["scored"] == 20


def test_a_file_of_unknown_layout_prints_the_command_that_would_work(tree, tmp_path):
    f = _jsonl(tmp_path / "odd.jsonl", [{"qid": "1", "gen": ["Aloe vera"], "doc": {"gold": "aloe_vera"}}])
    r = CliRunner().invoke(main, ["score", str(f), str(tree), *FAST])
    assert r.exit_code == 2 and "cannot tell the format" in r.stderr
    assert f"taxoforge score '{f}' {tree} --column 'output=gen[0]' --column 'label=doc.gold'" in r.stderr
    r = CliRunner().invoke(main, ["score", str(f), str(tree), "--column", "output=gen[0]", "--column", "label=doc.gold",
                                  "--json", *FAST])  # the suggestion works as printed
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["info"]["scored"] == 1


def test_bounds_nan_and_environment_values_are_usage_errors_naming_them(tree, tmp_path):
    f = _jsonl(tmp_path / "o.jsonl", GOOD)
    cases = [(["--bootstrap", "2000000000"], "--bootstrap"), (["--min-scored", "nan"], "'nan' is not a finite number"),
             (["--thr-topk", "nan"], "--thr-topk"), (["--temperature", "inf"], "--temperature")]
    for args, says in cases:
        r = CliRunner().invoke(main, ["score", str(f), str(tree), *FAST, *args])
        assert r.exit_code == 2 and says in r.output + r.stderr, (args, r.output, r.stderr)
    r = CliRunner().invoke(main, ["score", str(f), str(tree), *FAST], env={"TAXOFORGE_MIN_SCORED": "abc"})
    assert r.exit_code == 2 and "TAXOFORGE_MIN_SCORED" in r.output + r.stderr
    r = CliRunner().invoke(main, ["score", str(f), str(tree), *FAST, "--json"], env={"TAXOFORGE_MIN_SCORED": "0.5"})
    assert r.exit_code == 0


def test_run_json_timings_add_up_to_the_wall_time(tree, tmp_path):
    """Every phase of a ``taxoforge score`` process is in ``run.json``'s ``seconds`` — the
    interpreter's start and the imports (``startup``), reading, the taxonomy, the stored
    tree and index, each scoring step, writing, the figures — and they add up to ``total``,
    which is the process's wall time up to writing ``run.json``."""
    import time

    f = _jsonl(tmp_path / "a.jsonl", [{"id": str(i), "model": "m", "output": out, "label": "aloe_vera"}
                                     for i, out in enumerate(["Aloe vera", "A: Aloe ferox", "an iris"])])
    cmd = [sys.executable, "-m", "taxoforge.cli", "score", str(f), str(tree), "-o", str(tmp_path / "out"),
           "--no-meteor", "--bootstrap", "200", "--no-progress", "--plots", "wait"]
    for _ in range(2):  # the second call loads the stored tree and index
        t = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
        wall = time.perf_counter() - t
        assert done.returncode == 0, done.stderr
    sec = json.loads((tmp_path / "out" / "run.json").read_text())["seconds"]
    parts = {k: v for k, v in sec.items() if k != "total"}
    assert abs(sum(parts.values()) - sec["total"]) < 0.005
    assert {"startup", "read", "taxonomy", "index", "parse", "ground_truths", "mapping", "measures",
            "samples", "breakdowns", "leaderboard", "write", "figures"} <= set(parts)
    assert abs(sec["other"]) < 0.05 + 0.05 * sec["total"]  # no phase is missing
    # total is the wall time up to run.json: only the atomic rename, printing and exit come after
    assert sec["total"] <= wall + 0.05 and sec["total"] >= wall - max(0.5, 0.25 * wall), (sec, wall)


def test_label_set_decides_ties_and_run_json_counts_them(tmp_path):
    """Two nodes named "monitor": the ground truths of the file (the display) decide; a
    ``--label-set`` file naming the Komodo dragon decides for the lizard instead."""
    from tests.taxoforge.scores.conftest import tree_tables

    rows = [("r", None, "entity"), ("animal", "r", "animal"), ("reptile", "animal", "reptile"),
            ("lizard", "reptile", "lizard"), ("varanus", "lizard", "monitor"), ("komodo", "varanus", "Komodo dragon"),
            ("device", "r", "device"), ("display", "device", "monitor"), ("screen", "device", "screen")]
    folder = tmp_path / "tree"
    tree_tables(rows).write(folder)
    f = _jsonl(tmp_path / "a.jsonl", [{"id": "1", "model": "m", "output": "a monitor", "label": "display"},
                                     {"id": "2", "model": "m", "output": "screen", "label": "screen"}])
    args = ["score", str(f), str(folder), "--no-meteor", "--no-plots", "--bootstrap", "0", "--no-progress"]
    r = CliRunner().invoke(main, [*args, "-o", str(tmp_path / "o1")])
    assert r.exit_code == 0, r.output
    got = pl.read_parquet(tmp_path / "o1" / "scores.parquet")
    assert got["pred_node"].to_list() == ["display", "screen"] and got["map_tied"].to_list() == [2, 1]
    info = json.loads((tmp_path / "o1" / "run.json").read_text())
    assert info["ties"] == {"answers": 1, "decided_by_label_set": 1, "decided_by_context": 0}
    assert info["label_set"]["source"] == "ground truths of each model × dataset"
    (tmp_path / "set.txt").write_text("Komodo dragon\nno such animal\n")
    r = CliRunner().invoke(main, [*args, "-o", str(tmp_path / "o2"), "--label-set", str(tmp_path / "set.txt")])
    assert r.exit_code == 0, r.output
    assert pl.read_parquet(tmp_path / "o2" / "scores.parquet")["pred_node"].to_list() == ["varanus", "screen"]
    info = json.loads((tmp_path / "o2" / "run.json").read_text())
    assert info["label_set"] | {"unresolved_examples": None} == {"source": "given", "labels": 2, "nodes": 1,
                                                                 "unresolved": 1, "unresolved_examples": None}
    assert info["ties"]["decided_by_label_set"] == 0  # the rule (the deeper node) already chose the lizard


def test_the_last_argument_is_the_taxonomy_and_with_taxonomy_options_every_argument_is_an_output(tree, tmp_path):
    f, g = _jsonl(tmp_path / "o.jsonl", GOOD), _jsonl(tmp_path / "p.jsonl", GOOD)
    runner = CliRunner()
    for command in ("score", "map"):  # a file where TAXONOMY goes is an error, never read as a taxonomy
        r = runner.invoke(main, [command, str(f), str(g), "--no-progress"])
        assert r.exit_code == 2 and "the last argument is TAXONOMY" in r.output and str(g) in r.output, r.output
    r = runner.invoke(main, ["score", str(f), *FAST])
    assert r.exit_code == 2 and "give OUTPUTS... TAXONOMY" in r.output
    # with --taxonomy there is no positional TAXONOMY: one among the outputs is an error, never an answer file
    two = ["--taxonomy", str(tree), "--taxonomy", str(tree)]
    r = runner.invoke(main, ["score", str(f), str(tree), *two, *FAST])
    assert r.exit_code == 2 and f"{tree}: a taxonomy folder among the output files" in r.output, r.output
    r = runner.invoke(main, ["score", str(f), "inaturalist", *two, *FAST])
    assert r.exit_code == 2 and "name it with --taxonomy inaturalist" in r.output, r.output
    r = runner.invoke(main, ["score", str(f), "--taxonomy", str(tree), *FAST])
    assert r.exit_code == 2 and "two trees or more" in r.output


def test_the_named_tree_reaches_the_command_in_twelve_stops_and_never_goes_back(tree, tmp_path, monkeypatch):
    """The tree a user names in ``taxoforge score``, followed call by call: every call of a
    function of taxoforge that is handed the tree or hands it on — the TAXONOMY argument, the
    tree's tables, the tree, its citation — from the command until the loaded tree is back in
    it. At most 12 stops in at most 6 files, and never back in a file already left (a tree
    folder whose content hash and working set were stored by an earlier call)."""
    import os

    import taxoforge.snapshots.open as opening

    monkeypatch.setattr(opening, "RACY_S", 0.0)  # the tree was just written: remember its content hash anyway
    f = _jsonl(tmp_path / "o.jsonl", GOOD)
    args = ["score", str(f), str(tree), "--index-dir", str(tmp_path / "index"), "--no-plots", *FAST]
    assert CliRunner().invoke(main, args).exit_code == 0  # stores the content hash, the tree and the index
    kinds = ("TreeTables", "Taxonomy", "Citation")

    def carries(v, depth=0):
        if isinstance(v, (str, os.PathLike)):
            return os.fspath(v) == str(tree) or (os.path.exists(os.fspath(v)) and os.path.samefile(v, tree))
        if type(v).__name__ in kinds:
            return True
        return depth == 0 and isinstance(v, (tuple, list)) and len(v) < 8 and any(carries(x, 1) for x in v)

    stops, frames, done = [], [], []
    root = str(REPO / "taxoforge")

    def follow(frame, event, arg):
        code = frame.f_code
        if done or event not in ("call", "return") or not code.co_filename.startswith(root) or code.co_name[0] == "<":
            return
        where = (os.path.relpath(code.co_filename, REPO), code.co_name)
        if event == "call":
            names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
            hit = code.co_name == "score_cmd" or any(carries(frame.f_locals.get(n)) for n in names if n != "self")
            frames.append((frame, hit))
            stops.extend([where] if hit else [])
        elif frames and frames[-1][0] is frame:
            hit = frames.pop()[1]
            stops.extend([where] if not hit and carries(arg) else [])
            if type(arg).__name__ == "Taxonomy" and frames and frames[-1][0].f_code.co_filename.endswith("cli.py"):
                done.append(True)

    sys.setprofile(follow)
    try:
        r = CliRunner().invoke(main, args)
    finally:
        sys.setprofile(None)
    assert r.exit_code == 0 and done, r.output
    files = list(dict.fromkeys(f for f, _ in stops))
    visits = [f for i, (f, _) in enumerate(stops) if i == 0 or stops[i - 1][0] != f]
    path = "\n".join(f"  {f}:{n}" for f, n in stops)
    assert len(stops) <= 12 and len(files) <= 6, f"{len(stops)} stops in {len(files)} files:\n{path}"
    assert len(visits) == len(files), f"back in a file already left:\n{path}"


def test_every_mapping_parameter_is_an_option_named_as_its_field():
    """The command line's options become the mapping's configuration by their names (no
    field copied by hand): every field of MappingConfig is an option of score and map."""
    from dataclasses import fields

    from taxoforge.scores.cli import map_cmd, score_cmd
    from taxoforge.scores.mapping import MappingConfig

    for command in (score_cmd, map_cmd):
        assert {f.name for f in fields(MappingConfig)} <= {p.name for p in command.params}, command.name
