"""Smoke test of the browser benchmark (it runs on its own, outside ``benchmarks.run``): at its
tiniest size it publishes, serves, measures the page and the baseline in Chromium, and says
whether the targets hold."""

from __future__ import annotations

import pytest

from tests.chromium import find_chromium


@pytest.mark.timeout(600)
def test_the_browser_benchmark_runs_at_tiny_size():
    if find_chromium() is None:
        pytest.skip("chromium not installed (scripts/install-system-deps.sh installs it)")
    pytest.importorskip("websockets", reason="the DevTools client needs websockets (the dev extra)")
    from benchmarks.bench_browser import run

    r = run("tiny")
    assert r["browser"]["files"] > 10 and r["browser"]["compared_with"]
    for side in ("candidate", "baseline"):
        assert r[side]["first_paint"]["n"] == 2 and r[side]["ready"]["median_ms"] > 0
        assert r[side]["search"]["all"]["n"] >= sum(r["queries"].values())  # typed names: one per key
    assert set(r["targets"]) == {"first_paint_le_1000_ms", "search_le_200_ms"}
