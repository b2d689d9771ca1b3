"""The leaderboard aggregates through hierarchical.aggregate_hierarchical (hF = harmonic mean of the means)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import taxoforge.scores as scores_pkg
from taxoforge.scores.leaderboard import LEADERBOARD_MEASURES, leaderboard
from taxoforge.scores.hierarchical import aggregate_hierarchical
from taxoforge.scores.text_measures import TEXT_MEASURES


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
    assert lb["hF"].to_list() == sorted(lb["hF"].to_list(), reverse=True)
    assert [c for c in lb.columns if c in LEADERBOARD_MEASURES] == list(LEADERBOARD_MEASURES)


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
