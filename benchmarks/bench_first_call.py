"""Benchmark: a newcomer's first call — ``taxoforge score`` of a 20-row file against a tree that
has no stored index yet, from a cache folder never used before.

Every call is a real ``python -m taxoforge.cli score FILE TREE -o OUT`` process with default
options (METEOR, 9,999-resample intervals, breakdowns, figures), timed from the outside with
its own peak resident memory (:func:`benchmarks.harness.measure_process`), and every call
starts as a newcomer's does: a fresh copy of the tree folder (no ``.taxoforge-index``: no
stored tree, no mapping index), a new ``$TAXOFORGE_CACHE_DIR`` and a new
``$TAXOFORGE_TRUST_DIR`` (no trusted digest recorded: not the tree's content hash, not METEOR's
table). What the installation built stays (numba's compiled kernels, METEOR's synonym table in
``<sys.prefix>/share/taxoforge``): the benchmark runs the install step that builds the table,
``python -m taxoforge.scores.measures.meteor``, first (untimed; it keeps an intact table), as
``make demo`` does.

* **current** — this checkout's code;
* **baseline** — the same command run by the code of ``--baseline-ref`` (default: the commit
  this session started from), checked out with ``git worktree``, on its own fresh copies, in
  the same run, alternating with the current code. Skipped, with the reason, where git or the
  commit is not available.

Inputs: ``generated`` — 20 rows naming random species of the tree in templated sentences (one
in four naming another species, as :mod:`benchmarks.bench_score_loop`'s); at size ``full``,
also ``vlm4bio`` — a real VLM4Bio results file of 20 rows (LLaVA-1.5 on bird species, shared
reference data ``vlm4bio/results/bird-medium``), when the shared data are there.

Reported per input and code: wall and CPU seconds of each call and their medians, peak RSS,
``run.json``'s seconds per phase of the last call (where the time goes: ``taxonomy`` = the
content hash and the stored tree, ``index`` = the mapping index, ``text_measures`` = METEOR's
table when a call builds it, ``figures`` …), the ratio baseline/current, and ``same_results``:
whether current and baseline wrote the same ``scores.parquet``, ``leaderboard.parquet`` and
``bad_rows.parquet``, every column.

Sizes: ``tiny`` — 300 iNaturalist species and everything above them, one call, no baseline;
``full`` — the whole iNaturalist tree (~1.4 M taxa), two calls of each code. Target
(``full``): a first call ≤ 15 s.

    python -m benchmarks.bench_first_call --size full
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
from pathlib import Path

from benchmarks.harness import REPO, checkout, measure_process, same_results
from benchmarks.shared_data import missing, shared_path
from benchmarks.trees import inat_tree_of

__all__ = ["run", "SIZES", "BASELINE_REF", "TARGETS"]

SIZES = {"tiny": {"species": 300, "repeats": 1, "baseline": False, "vlm4bio": False},
         "full": {"species": None, "repeats": 2, "baseline": True, "vlm4bio": True}}
#: the code this session started from (METEOR's table built by the first call, the index steps one after another)
BASELINE_REF = "b706da6"
TARGETS = {"first_call_s": 15.0}
ROWS = 20
TEMPLATES = ["{}", "A: {}", "The answer is {}.", "I think this is a {}", "{} (probably)"]
VLM4BIO = "vlm4bio/results/bird-medium/classification/selection/classification_llava-v1.5-7b_selection_num_20_chunk_0.jsonl"
TIMEOUT = 1800
SEED = 0


def _prepare(size: str, folder: str) -> None:
    """In its own process: the tree of ``size`` in ``<folder>/tree`` and 20 generated answers in
    ``<folder>/generated.jsonl``."""
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
    with (d / "generated.jsonl").open("w") as fh:
        for i in range(ROWS):
            label = rng.choice(labels)
            out = rng.choice(TEMPLATES).format(label if i % 4 else rng.choice(labels))
            fh.write(json.dumps({"id": str(i), "model": "m", "dataset": "first", "output": out, "label": label}) + "\n")
    print(json.dumps({"nodes": tables.nodes.height}))


def _first_call(code_root: Path, answers: Path, tree0: Path, scratch: Path) -> dict:
    """One newcomer's call (module docstring) in ``scratch``: a fresh copy of ``tree0``, new
    cache and trust folders; the measurement and ``run.json``'s phases."""
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    shutil.copytree(tree0, scratch / "tree")
    trust = scratch / "trust"
    trust.mkdir(mode=0o700)
    env = dict(os.environ, PYTHONPATH=str(code_root), TAXOFORGE_CACHE_DIR=str(scratch / "cache"),
               TAXOFORGE_TRUST_DIR=str(trust))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode cached, as in an installed package
    old, cwd = os.environ.copy(), os.getcwd()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(code_root)
    try:
        rec = measure_process(["-m", "taxoforge.cli", "score", str(answers), str(scratch / "tree"), "-o",
                               str(scratch / "out"), "--no-progress", "--min-scored", "0", "--json"], timeout=TIMEOUT)
    finally:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(old)
    try:
        rec["phases"] = json.loads((scratch / "out" / "run.json").read_text()).get("seconds")
    except (OSError, ValueError):
        rec["phases"] = None
    rec.pop("doc", None)
    return rec


def _summary(recs: list[dict]) -> dict:
    ok = [r for r in recs if r.get("status") == "ok"]
    if not ok:
        return {"status": "error", "errors": [r.get("error") for r in recs]}
    return {"status": "ok", "calls": len(ok), "wall_s_median": statistics.median(r["wall_s"] for r in ok),
            "wall_s": [round(r["wall_s"], 2) for r in ok], "cpu_s": [round(r["cpu_s"] or 0, 2) for r in ok],
            "cpu_s_median": statistics.median(r["cpu_s"] or 0 for r in ok),
            "peak_rss_bytes": max(r["peak_rss_bytes"] or 0 for r in ok), "phases_s": ok[-1]["phases"]}


def _install_meteor_table() -> dict:
    """The install step that builds METEOR's synonym table (``make demo`` runs it), untimed."""
    done = subprocess.run([sys.executable, "-m", "taxoforge.scores.measures.meteor"], capture_output=True, text=True,
                          timeout=TIMEOUT, cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)))
    return {"exit_code": done.returncode, "said": (done.stdout + done.stderr).strip()[-300:]}


def run(size: str = "full", baseline_ref: str | None = BASELINE_REF) -> dict:
    """Run the benchmark at ``size`` (module docstring).

    Parameters
    ----------
    size : str
        ``tiny`` or ``full``.
    baseline_ref : str or None
        The baseline's git ref (None: no baseline).

    Returns
    -------
    dict
    """
    if size not in SIZES:
        raise ValueError(f"unknown size {size!r}; expected one of {sorted(SIZES)}")
    cfg = SIZES[size]
    with tempfile.TemporaryDirectory(prefix="taxoforge-bench-first-") as d:
        d = Path(d)
        prep = subprocess.run([sys.executable, "-c", "import sys; from benchmarks.bench_first_call import _prepare; "
                               "_prepare(sys.argv[1], sys.argv[2])", size, str(d)], capture_output=True, text=True,
                              timeout=TIMEOUT, cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)))
        if prep.returncode != 0:
            return {"status": "error", "error": f"preparing the tree failed: {prep.stderr[-2000:]}"}
        made = json.loads(prep.stdout.splitlines()[-1])
        if "skipped" in made:
            return {"status": "skipped", "reason": made["skipped"]}
        inputs, skipped = {"generated": d / "generated.jsonl"}, {}
        if cfg["vlm4bio"]:
            real = shared_path(*VLM4BIO.split("/"))
            if real is not None:
                inputs["vlm4bio"] = real
            else:
                skipped["vlm4bio"] = missing(*VLM4BIO.split("/"))
        install = _install_meteor_table()
        roots, note = {"current": REPO}, None
        if baseline_ref and cfg["baseline"]:
            note = checkout(baseline_ref, d / "baseline-code")
            if note is None:
                roots["baseline"] = d / "baseline-code"
        elif baseline_ref:
            note = f"not run at size {size!r}"
        results: dict = {}
        try:
            for name, answers in inputs.items():
                recs: dict[str, list] = {k: [] for k in roots}
                for i in range(cfg["repeats"]):
                    for k, root in roots.items():
                        print(f"[first-call] {name} {k} {i + 1} …", file=sys.stderr, flush=True)
                        recs[k].append(_first_call(root, answers, d / "tree", d / "calls" / f"{name}-{k}"))
                res = {k: _summary(v) for k, v in recs.items()}
                if "baseline" in roots:
                    res["same_results"] = same_results(d / "calls" / f"{name}-current" / "out",
                                                       d / "calls" / f"{name}-baseline" / "out")
                    cur, base = res["current"], res["baseline"]
                    if cur.get("status") == "ok" and base.get("status") == "ok":
                        res["baseline_over_current"] = base["wall_s_median"] / cur["wall_s_median"]
                        res["baseline_over_current_cpu"] = (base["cpu_s_median"] / cur["cpu_s_median"]
                                                            if cur["cpu_s_median"] else None)
                cur = res["current"]
                res["meets_target"] = cur.get("status") == "ok" and cur["wall_s_median"] <= TARGETS["first_call_s"]
                results[name] = res
        finally:
            if "baseline" in roots:
                subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(roots["baseline"])],
                               capture_output=True)
    return {"status": "ok", "size": size, "tree_nodes": made["nodes"], "rows": ROWS, "install": install,
            "inputs": results, "inputs_skipped": skipped, "baseline_ref": baseline_ref, "baseline_note": note,
            "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None, "targets": TARGETS}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", choices=sorted(SIZES), default="full")
    ap.add_argument("--baseline-ref", default=BASELINE_REF, help="git ref of the baseline code ('' for none)")
    args = ap.parse_args(argv)
    print(json.dumps(run(args.size, args.baseline_ref or None), indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
