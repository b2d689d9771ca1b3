"""No traceback a user can cause: every error on bad input ends with its documented exit code
and one line naming the file, row or field; numbers read from runs and crosswalks are checked
(types, ranges, finite); nothing is written through a symbolic link given as the output."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import polars as pl
import pytest

from tests.hostile.bounded import assert_refused, run_cli_bounded

SCORE_AS = 8_000_000_000  # the whole scoring command (its thread pools reserve address space); memory is measured


def _run(folder: Path, **columns) -> Path:
    """A scoring run's output folder: ``scores.parquet`` (two models, four items) and ``run.json``."""
    folder.mkdir(parents=True, exist_ok=True)
    n = 4
    base = {"id": [str(i) for i in range(n)] * 2, "model": ["a"] * n + ["b"] * n, "dataset": "d", "prompt": "p",
            "correct": [True, True, False, True, False, False, True, True], "hP": [1.0, 1.0, 0.5, 1.0] * 2,
            "hR": [1.0, 1.0, 0.4, 1.0] * 2, "abstained": False, "gt_partial": False,
            "mistake_severity": [0.0, 0.0, 2.0, 0.0] * 2, "taxonomy": "pets", "taxonomy_version": "pets@abc"}
    base.update(columns)
    pl.DataFrame(base).write_parquet(folder / "scores.parquet")
    (folder / "run.json").write_text(json.dumps({"taxonomy_version": "pets@abc", "mapping_config_id": "x"}))
    return folder


def _compare(*args):
    return run_cli_bounded(["compare", *map(str, args), "--bootstrap", "0", "--no-plots"], timeout=120)


# ---------------------------------------------------------------------------- compare
@pytest.mark.parametrize("column,values,said", [
    ("correct", ["yes", "no", "yes", "no"] * 2, r"row 1 \(id '0'\): correct is 'yes', expected true or false"),
    ("correct", [1, 0, 2, 1] * 2, r"row 3 \(id '2'\): correct is 2, expected true or false"),
    ("hP", [1.0, 7.5, 0.5, 1.0] * 2, r"row 2 \(id '1'\): hP is 7\.5, expected a finite number in \[0, 1\]"),
    ("hR", [1.0, 1.0, -3.0, 1.0] * 2, r"row 3 \(id '2'\): hR is -3\.0, expected a finite number in \[0, 1\]"),
    ("hP", [math.nan, 1.0, 0.5, 1.0] * 2, r"row 1 \(id '0'\): hP is nan, expected a finite number"),
    ("hR", [math.inf, 1.0, 0.5, 1.0] * 2, r"row 1 \(id '0'\): hR is inf"),
    ("mistake_severity", [0.0, -1.0, 2.0, 0.0] * 2, r"row 2 \(id '1'\): mistake_severity is -1\.0"),
])
def test_compare_checks_every_number_a_run_holds(tmp_path, column, values, said):
    a = _run(tmp_path / "a", **{column: values})
    b = _run(tmp_path / "b")
    assert_refused(_compare(a, b), 2, r"a/scores\.parquet: " + said)


def test_a_run_json_that_is_not_an_object_is_named(tmp_path):
    a = _run(tmp_path / "a")
    (a / "run.json").write_text("[1, 2, 3]")
    assert_refused(_compare(a, _run(tmp_path / "b")), 2, r"a/run\.json: a JSON list, not a scoring run's record")
    (a / "run.json").write_text("{not json")
    assert_refused(_compare(a, _run(tmp_path / "b")), 2, r"a/run\.json: not readable JSON")


def test_a_forged_run_json_does_not_override_the_tables_own_taxonomy(tmp_path):
    a = _run(tmp_path / "a")
    (a / "run.json").write_text(json.dumps({"taxonomy_version": "forged@fff", "mapping_config_id": "x"}))
    res = run_cli_bounded(["compare", a, _run(tmp_path / "b"), "--bootstrap", "0", "--json"], timeout=120)
    assert res.rc == 0, res.describe()
    doc = json.loads(res.out)
    assert {s["taxonomy_version"] for s in doc["systems"].values()} == {"pets@abc"}
    assert any("cites forged@fff, but its scores table was scored against pets@abc" in n for n in doc["notes"])


def test_compare_never_writes_through_a_symlinked_output(tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir()
    link = tmp_path / "cmp"
    os.symlink(target, link)
    res = run_cli_bounded(["compare", _run(tmp_path / "a"), _run(tmp_path / "b"), "--bootstrap", "0", "--no-plots",
                           "-o", link], timeout=120)
    assert_refused(res, 11, r"cmp: is a symbolic link \(to .*elsewhere\); nothing is written through a link")
    assert list(target.iterdir()) == []


# ---------------------------------------------------------------------------- crosswalks
def _crosswalk(path: Path, **over) -> Path:
    cols = {"source_a": ["inaturalist"] * 3, "id_a": ["1", "2", "3"], "source_b": ["col"] * 3,
            "id_b": ["x", "y", "z"], "method": "name:exact", "confidence": [1.0, 0.9, 0.5]}
    cols.update(over)
    pl.DataFrame({k: v for k, v in cols.items() if v is not None}).write_parquet(path)
    return path


@pytest.mark.parametrize("over,said", [
    ({"id_b": None}, r"no column 'id_b' \(a crosswalk has source_a, id_a, source_b, id_b"),
    ({"confidence": ["high", "low", "mid"]}, r"column 'confidence' is String, expected Float64"),
    ({"id_a": [[1], [2], [3]]}, r"column 'id_a' is List\(Int64\), expected String"),
    ({"confidence": [1.0, math.nan, 0.5]}, r"row 2: confidence nan is not a number in \(0, 1\]"),
    ({"confidence": [1.0, 0.9, math.inf]}, r"row 3: confidence inf is not a number in \(0, 1\]"),
    ({"confidence": [99.0, 0.9, 0.5]}, r"row 1: confidence 99\.0 is not a number in \(0, 1\]"),
    ({"confidence": [0.0, 0.9, 0.5]}, r"row 1: confidence 0\.0 is not a number in \(0, 1\]"),
])
def test_a_crosswalk_is_checked_before_it_is_used(tmp_path, over, said):
    from taxoforge.links.crosswalk import CrosswalkError, read_crosswalk

    cw = _crosswalk(tmp_path / "cw.parquet", **over)
    with pytest.raises(CrosswalkError, match=r"cw\.parquet: " + said):
        read_crosswalk(cw)


def test_a_crosswalk_that_is_not_parquet_is_a_usage_error_naming_it(tmp_path):
    from tests.taxoforge.scores.conftest import INAT_LIKE, tree_tables

    for i in (1, 2):
        tree_tables(INAT_LIKE, name=f"t{i}").write(tmp_path / f"t{i}")
    ans = tmp_path / "a.jsonl"
    ans.write_text(json.dumps({"output": "toucan", "label": "Ramphastos toco"}) + "\n")
    bad = tmp_path / "cw.parquet"
    bad.write_text("source_a,id_a\ninaturalist,1\n")
    res = run_cli_bounded(["score", ans, "--taxonomy", tmp_path / "t1", "--taxonomy", tmp_path / "t2",
                           "--crosswalk", bad, "--no-meteor", "--no-plots"], timeout=180, as_bytes=SCORE_AS)
    assert_refused(res, 2, r"cw\.parquet: not a readable Parquet file")
    good = _crosswalk(tmp_path / "cw2.parquet", confidence=[1.0, 99.0, 0.5])
    res = run_cli_bounded(["score", ans, "--taxonomy", tmp_path / "t1", "--taxonomy", tmp_path / "t2",
                           "--crosswalk", good, "--no-meteor", "--no-plots"], timeout=180, as_bytes=SCORE_AS)
    assert_refused(res, 2, r"cw2\.parquet: row 2: confidence 99\.0")


# ---------------------------------------------------------------------------- citations
def test_cite_with_a_release_year_of_superscript_digits_and_a_noncharacter_in_a_version(tmp_path):
    import yaml

    from taxoforge.snapshots import SnapshotStore
    from tests.taxoforge.snapshots.helpers import make_tree, random_edges

    store = SnapshotStore(tmp_path / "store")
    r = store.publish(make_tree(random_edges(seed=3)))
    idx = json.loads((tmp_path / "store" / "index.json").read_text())
    idx["taxonomies"][r.taxonomy]["versions"][0]["source_versions"] = {
        "coldp:COL24": {"issued": "²⁰²⁴-03-01", "version": "2024.03\ufffe\uffff", "title": "Catalogue of Life"}}
    (tmp_path / "store" / "index.json").write_text(json.dumps(idx))
    res = run_cli_bounded(["cite", r.taxonomy, "--store", tmp_path / "store", "--format", "cff"], timeout=60)
    assert res.rc == 0 and "Traceback" not in res.err, res.describe()
    doc = yaml.safe_load(res.out)  # valid YAML: U+FFFE and U+FFFF escaped
    ref = doc["references"][0]
    assert "year" not in ref and ref["version"] == "2024.03\ufffe\uffff"
    res = run_cli_bounded(["cite", r.taxonomy, "--store", tmp_path / "store", "--format", "bibtex"], timeout=60)
    assert res.rc == 0 and "Traceback" not in res.err, res.describe()


# ---------------------------------------------------------------------------- outputs and names
@pytest.mark.parametrize("cmd", ["score", "map"])
def test_an_output_that_cannot_be_created_ends_with_11_and_its_path(tmp_path, cmd):
    from tests.taxoforge.scores.conftest import INAT_LIKE, tree_tables

    tree_tables(INAT_LIKE, name="t").write(tmp_path / "t")
    ans = tmp_path / "a.jsonl"
    ans.write_text(json.dumps({"output": "toucan", "label": "Ramphastos toco"}) + "\n")
    out = "/proc/self/x" if cmd == "score" else "/proc/self/x.parquet"
    extra = ["--no-meteor", "--no-plots"] if cmd == "score" else []
    res = run_cli_bounded([cmd, ans, tmp_path / "t", "-o", out, *extra], timeout=180, as_bytes=SCORE_AS)
    assert_refused(res, 11, rf"{out}: cannot be written: nothing can be created in /proc/self")


def test_a_nul_in_a_model_name_is_an_error_naming_the_line(tmp_path):
    ans = tmp_path / "a.jsonl"
    ans.write_text(json.dumps({"output": "dog", "label": "dog", "model": "llava"}) + "\n"
                   + json.dumps({"output": "dog", "label": "dog", "model": "lla\u0000va"}) + "\n")
    res = run_cli_bounded(["score", ans, tmp_path / "t", "--no-meteor"], timeout=120)
    assert_refused(res, 2, r"a\.jsonl:2: the model 'lla\\x00va' holds a control character \(U\+0000\)")


# ---------------------------------------------------------------------------- the snapshot browser
def test_a_malformed_browser_address_still_loads_the_page(tmp_path):
    from tests.chromium import DevTools, find_chromium
    from tests.taxoforge.snapshots.helpers import serve, stop
    from tests.taxoforge.snapshots.test_browser import READY_JS, _served_store

    exe = find_chromium()
    if exe is None:
        pytest.skip("chromium not installed (scripts/install-system-deps.sh installs it)")
    pytest.importorskip("websockets", reason="the DevTools client needs websockets (the dev extra)")
    root, _a, b = _served_store(tmp_path)
    srv, t = serve(root)
    try:
        with DevTools(exe) as page:
            page.navigate(f"{srv.url}/inat_mini/{b.version}/browse/index.html#%E0%A4%A")
            page.evaluate(READY_JS)
            text = page.evaluate("document.getElementById('node').textContent")
            assert "no node %E0%A4%A" in text
            assert page.evaluate("document.body.getAttribute('data-ready')") == "1"
    finally:
        stop(srv, t)
