"""Benchmark: the researcher's loop — a repeat ``taxoforge score`` of one file against a large tree.

Every call is a real ``python -m taxoforge.cli score FILE TREE -o OUT`` process, timed from
the outside with its own peak resident memory (``VmHWM``, :mod:`benchmarks.bench_index_store`'s
wrapper). The tree is written and its stored index, stored tree and resolved labels made by
a first call that is not measured; then, alternating, several repeats of each of:

* **default** — the command with its default options (text measures with METEOR, bootstrap
  intervals with 9,999 resamples, breakdowns, figures in PNG, PDF and SVG drawn by a process
  of their own once the tables are written): the command's own process is measured; the
  benchmark then waits until ``run.json``'s ``figures.status`` leaves ``drawing`` before the
  next call (so no drawing overlaps a measured call) and reports how long the figures took to
  appear after the command returned (``figures_after_s``) and the drawing's own seconds;
* **bare** — ``--no-text-measures``-equivalent bare call: ``--no-meteor --bootstrap 0
  --no-plots`` (the CLI always computes the cheap text measures);
* **baseline** — the same default command run by the code of ``--baseline-ref`` (default:
  the commit this wave started from), checked out into a temporary folder with
  ``git worktree``, with its own first call made beforehand: the code path being replaced,
  on the same machine in the same run. Skipped, with the reason, where git or the commit is
  not available.

Every call may write Python's bytecode cache (``__pycache__``), as an installed package has
it: where ``PYTHONDONTWRITEBYTECODE`` is set (some sandboxes set it), each call would otherwise
compile the repository's modules from source again (0.2–0.4 s of a 1–2 s call), for the
candidate and the baseline alike.

Also measured: ``taxoforge --help`` (a fresh process). Reported: median wall seconds, CPU
seconds (the child's user + system time, which the load of a shared machine moves far less)
and peak RSS of each, the ratios default/bare and baseline/default, ``run.json``'s seconds per
phase of the last default call (what holds the time), and whether every default call
printed the same leaderboard; ``same_results``: whether the default call and the baseline
wrote the same ``scores.parquet``, ``leaderboard.parquet`` and ``bad_rows.parquet``, every
column (the columns that differ where not).

Sizes: ``tiny`` — 300 iNaturalist species and everything above them, 100 rows, no baseline; ``small`` —
10,000 species, 1,000 rows; ``full`` — the whole iNaturalist tree (~1.4 M taxa), 1,000 rows.
Targets (``full``, the loop issue's): default ≤ 1.2 s, default ≤ 1.3 × bare, peak ≤ 1.2 GiB,
``--help`` ≤ 0.3 s.

    python -m benchmarks.bench_score_loop --size full
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harness import REPO, checkout, measure_process, same_results, settle, wait_for_figures
from benchmarks.trees import inat_tree_of

__all__ = ["run", "SIZES", "BASELINE_REF"]

SIZES = {"tiny": {"species": 300, "rows": 100, "repeats": 1, "baseline": False},
         "small": {"species": 10_000, "rows": 1000, "repeats": 3},
         "full": {"species": None, "rows": 1000, "repeats": 3}}
#: the code this wave started from (the loop before the stored tree, the METEOR table, …)
BASELINE_REF = "c077dd4"
TARGETS = {"default_s": 1.2, "default_over_bare": 1.3, "peak_rss_bytes": int(1.2 * 2**30), "help_s": 0.3}
TEMPLATES = ["{}", "A: {}", "The answer is {}.", "I think this is a {}", "{} (probably)"]
TIMEOUT = 1800
#: the longest wait for a background drawing of the figures
SEED = 0


def _prepare(size: str, folder: str) -> None:
    """In its own process: the tree of ``size`` in ``<folder>/tree`` and ``rows`` answers
    naming random species of it (one in four naming another species) in ``<folder>/answers.jsonl``."""
    import polars as pl

    cfg = SIZES[size]
    try:
        tables = inat_tree_of(cfg["species"])
    except Exception as e:  # noqa: BLE001 - no iNaturalist data on this machine
        print(json.dumps({"skipped": f"the iNaturalist tree cannot be built: {type(e).__name__}: {e}"}))
        return
    d = Path(folder)
    tables.write(d / "tree")
    rng = random.Random(SEED)
    nodes = tables.nodes.filter(pl.col("rank") == "species") if "rank" in tables.nodes.columns else tables.nodes
    labels = nodes["label"].drop_nulls().to_list()
    picks = [rng.choice(labels) for _ in range(cfg["rows"])]
    with (d / "answers.jsonl").open("w") as fh:
        for i, label in enumerate(picks):
            out = rng.choice(TEMPLATES).format(label if i % 4 else rng.choice(labels))
            fh.write(json.dumps({"id": str(i), "model": "m", "dataset": "loop", "output": out, "label": label}) + "\n")
    print(json.dumps({"nodes": tables.nodes.height, "rows": len(picks)}))


def _cli(code_root: Path, answers: Path, tree: Path, out: Path, extra: list[str]) -> list[str]:
    return ["-m", "taxoforge.cli", "score", str(answers), str(tree), "-o", str(out), "--no-progress",
            "--min-scored", "0", "--json", *extra]


def _call(code_root: Path, args: list[str], cache: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(code_root), TAXOFORGE_CACHE_DIR=str(cache))
    old = os.environ.copy()
    os.environ.update(env)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode cached, as in an installed package (NOTE below)
    try:  # _measure runs in this environment: the code under code_root, its own cache folder
        cwd = os.getcwd()
        os.chdir(code_root)
        try:
            return measure_process(args, timeout=TIMEOUT)
        finally:
            os.chdir(cwd)
    finally:
        os.environ.clear()
        os.environ.update(old)


def _board(out: Path) -> list:
    import polars as pl

    try:
        lb = pl.read_parquet(out / "leaderboard.parquet")
    except Exception:  # noqa: BLE001
        return []
    keep = [c for c in ("model", "dataset", "prompt", "n", "accuracy", "hP", "hR", "hF") if c in lb.columns]
    return lb.select(keep).to_dicts()


def _summary(recs: list[dict]) -> dict:
    ok = [r for r in recs if r.get("status") == "ok"]
    if not ok:
        return {"status": "error", "errors": [r.get("error") for r in recs]}
    return {"status": "ok", "calls": len(ok), "wall_s_median": statistics.median(r["wall_s"] for r in ok),
            "wall_s": [round(r["wall_s"], 3) for r in ok],
            "cpu_s_median": statistics.median(r.get("cpu_s") or 0 for r in ok),
            "cpu_s": [round(r.get("cpu_s") or 0, 3) for r in ok],
            "peak_rss_bytes": max(r["peak_rss_bytes"] or 0 for r in ok)}


def run(size: str = "small", baseline_ref: str | None = BASELINE_REF) -> dict:
    """Run the benchmark at ``size`` (module docstring)."""
    if size not in SIZES:
        raise ValueError(f"unknown size {size!r}; expected one of {sorted(SIZES)}")
    cfg = SIZES[size]
    with tempfile.TemporaryDirectory(prefix="taxoforge-bench-loop-") as d:
        d = Path(d)
        prep = subprocess.run([sys.executable, "-c", "import sys; from benchmarks.bench_score_loop import _prepare; "
                               "_prepare(sys.argv[1], sys.argv[2])", size, str(d)], capture_output=True, text=True,
                              timeout=TIMEOUT, cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)))
        if prep.returncode != 0:
            return {"status": "error", "error": f"preparing the tree failed: {prep.stderr[-2000:]}"}
        made = json.loads(prep.stdout.splitlines()[-1])
        if "skipped" in made:
            return {"status": "skipped", "reason": made["skipped"]}
        tree, answers = d / "tree", d / "answers.jsonl"
        trees = {"current": tree}
        roots = {"current": REPO}
        baseline_note = None
        if baseline_ref and not cfg.get("baseline", True):
            baseline_note = f"not run at size {size!r} (a smoke test: the baseline's first call builds its own index)"
        elif baseline_ref:
            baseline_note = checkout(baseline_ref, d / "baseline-code")
            if baseline_note is None:
                roots["baseline"] = d / "baseline-code"
                # its own tree folder (of the same name: the same citation), so its own stored index
                shutil.copytree(tree, d / "baseline" / "tree")
                trees["baseline"] = d / "baseline" / "tree"
        modes = {"default": ("current", []), "bare": ("current", ["--no-meteor", "--bootstrap", "0", "--no-plots"])}
        if "baseline" in roots:
            modes["baseline"] = ("baseline", [])
        caches = {k: d / f"cache-{k}" for k in roots}
        settle()
        try:
            print(f"[score-loop] {made['nodes']:,}-node tree, {made['rows']} rows: first calls …", file=sys.stderr,
                  flush=True)
            first = {k: _call(roots[k], _cli(roots[k], answers, trees[k], d / f"first-{k}", []), caches[k])
                     for k in roots}
            for k in roots:
                wait_for_figures(d / f"first-{k}")
            recs: dict[str, list] = {m: [] for m in modes}
            figures: list[dict] = []
            for i in range(cfg["repeats"]):
                for m, (code, extra) in modes.items():
                    print(f"[score-loop] {m} {i + 1} …", file=sys.stderr, flush=True)
                    recs[m].append(_call(roots[code], _cli(roots[code], answers, trees[code], d / f"out-{m}", extra),
                                         caches[code]))
                    waited = wait_for_figures(d / f"out-{m}")  # no drawing overlaps the next measured call
                    if m == "default":
                        figures.append(waited)
            helps = [_call(REPO, ["-m", "taxoforge.cli", "--help"], caches["current"]) for _ in range(3)]
            phases = json.loads((d / "out-default" / "run.json").read_text()).get("seconds") \
                if (d / "out-default" / "run.json").exists() else None
            boards = {m: _board(d / f"out-{m}") for m in modes}
            same = same_results(d / "out-default", d / "out-baseline") if "baseline" in modes else None
        finally:
            if "baseline" in roots:
                subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(roots["baseline"])],
                               capture_output=True)
    res = {"status": "ok", "size": size, "tree_nodes": made["nodes"], "rows": made["rows"],
           "first_call_wall_s": {k: round(v["wall_s"], 2) if v.get("wall_s") else None for k, v in first.items()},
           **{m: _summary(r) for m, r in recs.items()},
           "help": {"wall_s_median": statistics.median(h["wall_s"] for h in helps if h.get("wall_s"))},
           "default_figures": figures,
           "figures_after_s_median": statistics.median(f["after_s"] for f in figures) if figures else None,
           "default_phases_s": phases, "baseline_ref": baseline_ref, "baseline_note": baseline_note,
           "agree_with_baseline": (boards.get("baseline") == boards["default"]) if "baseline" in boards else None,
           "same_results": same,
           "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None, "targets": TARGETS}
    dflt, bare = res["default"], res["bare"]
    if dflt.get("status") == "ok" and bare.get("status") == "ok":
        res["default_over_bare"] = dflt["wall_s_median"] / bare["wall_s_median"]
        res["default_over_bare_cpu"] = dflt["cpu_s_median"] / bare["cpu_s_median"] if bare["cpu_s_median"] else None
        if res.get("baseline", {}).get("status") == "ok":
            res["baseline_over_default"] = res["baseline"]["wall_s_median"] / dflt["wall_s_median"]
            res["baseline_over_default_cpu"] = (res["baseline"]["cpu_s_median"] / dflt["cpu_s_median"]
                                                if dflt["cpu_s_median"] else None)
        res["meets_target"] = {"default_s": dflt["wall_s_median"] <= TARGETS["default_s"],
                               "default_over_bare": res["default_over_bare"] <= TARGETS["default_over_bare"],
                               "peak_rss_bytes": dflt["peak_rss_bytes"] <= TARGETS["peak_rss_bytes"],
                               "help_s": res["help"]["wall_s_median"] <= TARGETS["help_s"]}
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", choices=sorted(SIZES), default="small")
    ap.add_argument("--baseline-ref", default=BASELINE_REF, help="git ref of the baseline code ('' for none)")
    args = ap.parse_args(argv)
    print(json.dumps(run(args.size, args.baseline_ref or None), indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
