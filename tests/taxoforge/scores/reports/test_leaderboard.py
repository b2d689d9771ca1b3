"""The leaderboard aggregates through hierarchical.aggregate_hierarchical (hF = harmonic mean of the means)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import taxoforge.scores as scores_pkg
from taxoforge.scores.statistics.confidence import BootstrapConfig
from taxoforge.scores.reports.leaderboard import LEADERBOARD_MEASURES, leaderboard
from taxoforge.scores.measures.hierarchical import aggregate_hierarchical
from taxoforge.scores.measures.text import TEXT_MEASURES


def _samples(seed: int = 3, n: int = 60) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    hp, hr = rng.uniform(0.1, 1, n), rng.uniform(0.1, 1, n)
    return pl.DataFrame({
        "model": rng.choice(["m1", "m2", "m3"], n), "dataset": "d", "prompt": rng.choice(["p", "q"], n),
        "abstained": rng.random(n) < 0.1, "correct": rng.random(n) < 0.4, "hP": hp, "hR": hr,
        "hF": 2 * hp * hr / (hp + hr), **{m: rng.random(n) for m in TEXT_MEASURES},
        "taxonomy_version": "t@1", "mapping_config_id": "c",
    })


def test_each_row_is_aggregate_hierarchical_of_its_group():
    s = _samples()
    lb = leaderboard(s)
    assert lb.height == s.select("model", "prompt").unique().height
    for row in lb.iter_rows(named=True):
        g = s.filter((pl.col("model") == row["model"]) & (pl.col("prompt") == row["prompt"]))
        want = aggregate_hierarchical(g["hP"].to_numpy(), g["hR"].to_numpy(), g["hF"].to_numpy())
        for m in ("hP", "hR", "hF", "hF_pairs"):
            assert row[m] == pytest.approx(want[m], rel=1e-12), m
        assert row["n"] == g.height and row["accuracy"] == pytest.approx(g["correct"].mean())
    # ranked within each dataset × prompt group only, best hF first
    for _, grp in lb.group_by("dataset", "prompt", maintain_order=True):
        assert grp["hF"].to_list() == sorted(grp["hF"].to_list(), reverse=True)
        assert grp["rank"].to_list() == list(range(1, grp.height + 1))
    assert lb["prompt"].to_list() == sorted(lb["prompt"].to_list())
    assert [c for c in lb.columns if c in LEADERBOARD_MEASURES] == list(LEADERBOARD_MEASURES)


def test_answered_only_measures_and_the_abstention_rate():
    s = _samples()
    lb = leaderboard(s, ci=None)
    for row in lb.iter_rows(named=True):
        g = s.filter((pl.col("model") == row["model"]) & (pl.col("prompt") == row["prompt"]))
        a = g.filter(~pl.col("abstained"))
        want = aggregate_hierarchical(a["hP"].to_numpy(), a["hR"].to_numpy())
        assert (row["hP_answered"], row["hR_answered"], row["hF_answered"]) == pytest.approx(
            (want["hP"], want["hR"], want["hF"]))
        assert row["abstained_pct"] == pytest.approx(100 * g["abstained"].mean())


def _paired(n=200, seed=0):
    """Three models on the same items of two groups: m_good beats m_bad by far; m_twin equals m_good."""
    rng = np.random.default_rng(seed)
    rows = []
    for ds in ("easy", "hard"):
        base = rng.random(n)
        for model, shift in (("m_good", 0.0), ("m_twin", 0.0), ("m_bad", 0.45)):
            ok = base > (0.3 if ds == "easy" else 0.6) + shift
            hp = np.where(ok, 1.0, 0.5)
            rows.append(pl.DataFrame({"id": [f"{ds}{i}" for i in range(n)], "model": model, "dataset": ds,
                                      "prompt": "p", "abstained": False, "correct": ok, "hP": hp, "hR": hp,
                                      "hF": hp, **{m: np.zeros(n) for m in TEXT_MEASURES}}))
    return pl.concat(rows)


def test_ranks_stay_within_a_group_and_ties_with_the_best_are_marked():
    lb = leaderboard(_paired(), ci=BootstrapConfig(n_resamples=999))
    for ds in ("easy", "hard"):
        g = {r["model"]: r for r in lb.filter(pl.col("dataset") == ds).iter_rows(named=True)}
        assert g["m_good"]["rank"] == 1 and g["m_twin"]["rank"] == 1 and g["m_bad"]["rank"] == 3
        assert g["m_good"]["tied_with_best"] and g["m_twin"]["tied_with_best"]
        assert g["m_twin"]["vs_best_p"] == pytest.approx(1.0)
        assert not g["m_bad"]["tied_with_best"] and g["m_bad"]["vs_best_p"] < 0.05
    # easy's worst beats hard's best on hF, yet each group has its own rank 1
    assert lb.filter(pl.col("rank") == 1).height == 4
    # no resamples: ranks only, nothing tested
    plain = leaderboard(_paired(), ci=None)
    assert plain["vs_best_p"].null_count() == plain.height and plain.filter(pl.col("rank") == 1).height == 4


def test_empty_samples_give_an_empty_leaderboard_with_the_columns():
    lb = leaderboard(_samples().head(0))
    assert lb.height == 0 and "hF" in lb.columns and "mapping_config_id" in lb.columns


def _imports(path: Path) -> set[str]:
    mods = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            mods.add(node.module)
        elif isinstance(node, ast.Import):
            mods.update(a.name for a in node.names)
    return mods


def test_scores_modules_import_one_way():
    """No module of taxoforge.scores imports one that (directly or not) imports it back."""
    root = Path(scores_pkg.__file__).parent
    files = {f"taxoforge.scores.{'.'.join(p.relative_to(root).with_suffix('').parts)}".removesuffix(".__init__"): p
             for p in root.rglob("*.py")}
    graph = {m: {i for i in _imports(p) if i in files and i != m} for m, p in files.items()}
    # a package's __init__ re-exporting its modules is not an upward import
    graph = {m: {i for i in deps if not m.startswith(i + ".")} for m, deps in graph.items()}

    def reach(start):
        seen, todo = set(), [start]
        while todo:
            for nxt in graph[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    cycles = sorted(m for m in graph if m in reach(m))
    assert not cycles, cycles
