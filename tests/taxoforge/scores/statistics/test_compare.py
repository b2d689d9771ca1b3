"""taxoforge compare: two real prompting strategies of VLM4Bio (the same 50 fish images,
contextual against chain-of-thought) scored as two systems and compared on their shared
images — McNemar equal to scipy's binomtest, intervals and permutation tests, Holm,
the tables and figure — plus the errors a user can meet."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner
from scipy import stats

from taxoforge.cli import main
from taxoforge.scores.statistics.compare import ComparisonError, compare_runs, compare_systems


@pytest.fixture(scope="module")
def two_runs(vlm4bio_files, inat_vlm4bio_tree, tmp_path_factory):
    from taxoforge.scores.cited_taxonomy import cite_taxonomy
    from taxoforge.scores.statistics.confidence import BootstrapConfig
    from taxoforge.scores.run import score_files

    cited = cite_taxonomy(inat_vlm4bio_tree)
    out = tmp_path_factory.mktemp("runs")
    runs = {}
    for prompt in ("contextual", "cot"):
        files = [f for f in vlm4bio_files if f"/fish-prompting/{prompt}/" in str(f)]
        assert len(files) == 1
        score_files(files, cited, meteor=False, text_measures=False, plots=False, out_dir=out / prompt,
                    defaults={"model": f"llava-{prompt}", "prompt": "classification"},
                    ci=BootstrapConfig(n_resamples=200))
        runs[prompt] = out / prompt
    return runs


def test_two_prompting_strategies_on_the_same_fish_images(two_runs, tmp_path):
    a = pl.read_parquet(two_runs["contextual"] / "scores.parquet")
    b = pl.read_parquet(two_runs["cot"] / "scores.parquet")
    if a["model"][0] != "llava-contextual" or a["prompt"][0] != "classification":
        pytest.skip("the reader keeps the path's model and prompt over --model/--prompt")
    cmp = compare_runs([two_runs["contextual"], two_runs["cot"]], n_resamples=2000, seed=0)
    t = cmp.table
    assert t.height == 1
    r = t.row(0, named=True)
    j = a.join(b, on=["dataset", "prompt", "id"], suffix="_b")
    assert r["n"] == j.height == 50 and r["only_a"] == r["only_b"] == 0
    only_a = int((j["correct"] & ~j["correct_b"]).sum())
    only_b = int((~j["correct"] & j["correct_b"]).sum())
    assert (r["only_a_right"], r["only_b_right"]) == (only_a, only_b)
    assert r["accuracy_p"] == stats.binomtest(only_a, only_a + only_b, 0.5).pvalue
    assert r["accuracy_diff"] == pytest.approx(a["correct"].mean() - b["correct"].mean())
    lb_a = pl.read_parquet(two_runs["contextual"] / "leaderboard.parquet").row(0, named=True)
    lb_b = pl.read_parquet(two_runs["cot"] / "leaderboard.parquet").row(0, named=True)
    assert (r["hF_a"], r["hF_b"]) == pytest.approx((lb_a["hF"], lb_b["hF"]))
    assert (r["mistake_severity_a"], r["mistake_severity_b"]) == pytest.approx(
        (lb_a["mistake_severity"], lb_b["mistake_severity"]))
    for m in ("accuracy", "hF", "mistake_severity"):
        assert r[f"{m}_ci_low"] <= r[f"{m}_diff"] <= r[f"{m}_ci_high"], m
        assert 0 < r[f"{m}_p"] <= 1 and r[f"{m}_p_holm"] == r[f"{m}_p"]  # one comparison: Holm changes nothing
    # the same numbers again: seeded
    again = compare_runs([two_runs["contextual"], two_runs["cot"]], n_resamples=2000, seed=0).table
    assert again.equals(t)
    # the command line writes the tables and the figure
    res = CliRunner().invoke(main, ["compare", str(two_runs["contextual"]), str(two_runs["cot"]), "-o",
                                    str(tmp_path / "cmp"), "--bootstrap", "500"])
    assert res.exit_code == 0, res.output
    assert "llava-contextual" in res.output and "McNemar" in res.output
    for name in ("comparison.md", "comparison.csv", "comparison.tex", "comparison.parquet", "comparison.png",
                 "comparison.pdf", "comparison.svg"):
        assert (tmp_path / "cmp" / name).stat().st_size > 0, name
    js = CliRunner().invoke(main, ["compare", str(two_runs["contextual"]), str(two_runs["cot"]), "--json",
                                   "--bootstrap", "0", "--no-plots"])
    doc = json.loads(js.output)
    assert doc["comparison"][0]["accuracy_p"] == r["accuracy_p"] and doc["comparison"][0]["hF_p"] is None


def _system(model, right, ids=None, dataset="d"):
    n = len(right)
    ids = ids or [str(i) for i in range(n)]
    right = np.asarray(right, dtype=bool)
    return pl.DataFrame({"id": ids, "model": model, "dataset": dataset, "prompt": "p", "correct": right,
                         "hP": np.where(right, 1.0, 0.6), "hR": np.where(right, 1.0, 0.5),
                         "mistake_severity": np.where(right, 0.0, 2.0), "abstained": False})


def test_items_are_matched_by_id_within_a_group_and_holm_over_several_pairs():
    rng = np.random.default_rng(0)
    base = rng.random(120)
    systems = {"a": _system("a", base < 0.7), "b": _system("b", base < 0.4),
               "c": _system("c", base < 0.69)}
    # c answers only 100 of the items, in another order
    systems["c"] = systems["c"].head(100).reverse()
    t = compare_systems(systems, n_resamples=1000)
    assert t.select("a", "b").rows() == [("a", "b"), ("a", "c"), ("b", "c")]
    ac = t.filter((pl.col("a") == "a") & (pl.col("b") == "c")).row(0, named=True)
    assert (ac["n"], ac["only_a"], ac["only_b"]) == (100, 20, 0)
    p = t["accuracy_p"].to_numpy()
    order = np.argsort(p)
    want = np.maximum.accumulate(np.minimum(1, (3 - np.arange(3)) * p[order]))
    assert t["accuracy_p_holm"].to_numpy()[order] == pytest.approx(want)
    ab = t.row(0, named=True)
    assert ab["accuracy_significant"] and ab["hF_significant"]
    assert not t.row(1, named=True)["accuracy_significant"]  # a and c differ on 1 item of 100


def test_what_cannot_be_compared_says_why(tmp_path):
    dup = pl.concat([_system("a", [True, False]), _system("a", [True])])
    with pytest.raises(ComparisonError, match="sample ids occur more than once"):
        compare_systems({"a": dup, "b": _system("b", [True, True])})
    with pytest.raises(ComparisonError, match="no two systems share an item"):
        compare_systems({"a": _system("a", [True]), "b": _system("b", [True], ids=["x"])})
    with pytest.raises(ComparisonError, match="no scores.parquet"):
        compare_runs([tmp_path])
    one = tmp_path / "one"
    one.mkdir()
    _system("a", [True, False]).write_parquet(one / "scores.parquet")
    with pytest.raises(ComparisonError, match="a comparison needs two"):
        compare_runs([one])
    res = CliRunner().invoke(main, ["compare", str(one), str(tmp_path / "missing")])
    assert res.exit_code == 2 and "no scores.parquet" in res.output


def test_a_pairs_numbers_depend_on_the_pair_alone():
    """The draws of a pair come from a stream fixed by the seed, the pair and the group: the
    same two systems give the same intervals and p-values whatever else is compared and in
    whatever order they are given (swapped, the differences change sign)."""
    rng = np.random.default_rng(1)
    base = rng.random(80)
    a, b, c = _system("a", base < 0.6), _system("b", base < 0.45), _system("c", rng.random(80) < 0.5)
    cols = [f"{m}_{x}" for m in ("accuracy", "hF", "mistake_severity") for x in ("diff", "ci_low", "ci_high", "p")]
    two = compare_systems({"a": a, "b": b}, n_resamples=999).select(cols)
    three = compare_systems({"c": c, "a": a, "b": b}, n_resamples=999)
    assert three.filter((pl.col("a") == "a") & (pl.col("b") == "b")).select(cols).equals(two)
    swapped = compare_systems({"b": b, "a": a}, n_resamples=999).row(0, named=True)
    for m in ("accuracy", "hF", "mistake_severity"):
        assert swapped[f"{m}_diff"] == pytest.approx(-two[f"{m}_diff"][0])
        assert (swapped[f"{m}_ci_low"], swapped[f"{m}_ci_high"]) == pytest.approx(
            (-two[f"{m}_ci_high"][0], -two[f"{m}_ci_low"][0]))
        assert swapped[f"{m}_p"] == two[f"{m}_p"][0]


def test_each_model_against_a_reference_with_holm_over_those_pairs(tmp_path):
    rng = np.random.default_rng(2)
    base = rng.random(100)
    systems = {m: _system(m, base < q) for m, q in (("base", 0.5), ("m1", 0.7), ("m2", 0.52), ("m3", 0.3))}
    t = compare_systems(systems, n_resamples=999, reference="base")
    assert t.select("a", "b").rows() == [("m1", "base"), ("m2", "base"), ("m3", "base")]
    p = t["accuracy_p"].to_numpy()
    order = np.argsort(p)
    assert t["accuracy_p_holm"].to_numpy()[order] == pytest.approx(
        np.maximum.accumulate(np.minimum(1, (3 - np.arange(3)) * p[order])))
    assert t.row(0, named=True)["accuracy_diff"] == pytest.approx(0.2, abs=0.05)  # model − reference
    with pytest.raises(ComparisonError, match="--reference 'nobody' is none of the systems"):
        compare_systems(systems, reference="nobody")
    for m, s in systems.items():
        (tmp_path / m).mkdir()
        s.write_parquet(tmp_path / m / "scores.parquet")
    res = CliRunner().invoke(main, ["compare", *[str(tmp_path / m) for m in systems], "--reference", "base",
                                    "--bootstrap", "200", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert [(r["a"], r["b"]) for r in doc["comparison"]] == [("m1", "base"), ("m2", "base"), ("m3", "base")]
    assert doc["settings"]["reference"] == "base"
    res = CliRunner().invoke(main, ["compare", *[str(tmp_path / m) for m in systems], "--reference", "m9"])
    assert res.exit_code == 2 and "names no system" in res.output


def test_no_shared_item_names_each_sides_datasets_and_a_few_ids():
    a = _system("a", [True] * 12, ids=[f"img-{i:03d}" for i in range(12)], dataset="fish-easy")
    b = _system("b", [True] * 3, ids=["1", "2", "3"], dataset="fish_easy")
    with pytest.raises(ComparisonError) as e:
        compare_systems({"a": a, "b": b})
    msg = str(e.value)
    assert "a: fish-easy · p: 12 items, ids 'img-000', 'img-001', 'img-002', 'img-003', 'img-004' and 7 more" in msg
    assert "b: fish_easy · p: 3 items, ids '1', '2', '3'" in msg


def test_severities_measured_on_different_height_trees_are_not_compared():
    a = _system("a", [True, False, False, True]).with_columns(pl.lit("labels:aaaaaaaaaaaa").alias("height_tree"))
    b = _system("b", [False, False, True, True]).with_columns(pl.lit("labels:bbbbbbbbbbbb").alias("height_tree"))
    r = compare_systems({"a": a, "b": b}, n_resamples=99).row(0, named=True)
    assert r["height_trees"] == "different" and r["mistake_severity_diff"] is None and r["hF_diff"] is not None
    same = compare_systems({"a": a, "b": b.with_columns(pl.lit("labels:aaaaaaaaaaaa").alias("height_tree"))},
                           n_resamples=99).row(0, named=True)
    assert same["height_trees"] == "same" and same["mistake_severity_diff"] is not None
