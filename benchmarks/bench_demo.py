"""Benchmark: the README's first command, ``make demo``, from a fresh clone.

    python -m benchmarks.bench_demo [--baseline-ref REF] [--no-baseline]

Each side is a ``git clone`` of this repository (its committed ``HEAD``; the baseline: the
same clone checked out at ``--baseline-ref``) into a temporary folder, and ``make demo`` run
there with a home folder of its own — no snapshot store, no cache folder, no NLTK data, no
numba cache, no Dagster instance from an earlier run: what a newcomer's machine has. Only
the package caches of ``uv`` and ``pip`` (``$UV_CACHE_DIR``, ``$PIP_CACHE_DIR``, default the
user's) and their configuration are shared, so the figure is not a measure of the network. The sides run one after
the other on the same machine, the candidate first.

Reported per side: wall seconds of the whole command and its two halves, split at the
Makefile's ``[make HH:MM:SS] demo`` line (set-up: the virtualenv, the locked packages, the
compiled kernels and the tables built at install; demo: the embedded default materialised
and the example scored), the assets built and checks passed as the demo prints them, and
the machine's load before and after. ``same_results``: whether both wrote the same scores,
leaderboard and bad rows for the example (every column; the columns that differ if not), each
side's folder as its demo prints it.
Target: the candidate's whole command ≤ 75 s on a quiet two-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harness import REPO, machine_info, same_results

__all__ = ["run", "BASELINE_REF", "TARGET_S"]

#: the commit this wave started from
BASELINE_REF = "7c757fb"
#: the whole ``make demo`` of the candidate, from a fresh clone
TARGET_S = 75.0
TIMEOUT_S = 3600
_STAMP = re.compile(r"^\[make (\d\d):(\d\d):(\d\d)\] (.*)$", re.MULTILINE)
_EXAMPLE = Path("data", "scores", "imagenet1k__imagenet_example_outputs.jsonl")


def _seconds(hms: tuple[str, str, str]) -> int:
    h, m, s = (int(x) for x in hms)
    return h * 3600 + m * 60 + s


#: state a run leaves in the environment's folders: a fresh machine has none of it
_STATE_VARIABLES = ("DAGSTER_HOME", "NLTK_DATA", "NUMBA_CACHE_DIR", "VIRTUAL_ENV", "PYTHONPATH", "XDG_CACHE_HOME",
                    "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME")
#: configuration kept from the user's home (where pip and uv find wheels and certificates), not state
_CONFIG_FILES = (".config/pip", ".pip", ".config/uv", ".pydistutils.cfg")


def _env(home: Path) -> dict:
    """The environment of one side: the user's, less what points at state (``TAXOFORGE_*``,
    Dagster's home, NLTK data, numba's cache, XDG folders), with ``home`` as the home folder
    (the user's pip and uv configuration copied into it) and the package caches shared."""
    user_home = Path(os.path.expanduser("~"))
    for rel in _CONFIG_FILES:
        src = user_home / rel
        if src.is_dir():
            shutil.copytree(src, home / rel)
        elif src.is_file():
            (home / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, home / rel)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TAXOFORGE_") and k not in _STATE_VARIABLES}
    env.update(HOME=str(home), UV_CACHE_DIR=os.environ.get("UV_CACHE_DIR", str(user_home / ".cache" / "uv")),
               PIP_CACHE_DIR=os.environ.get("PIP_CACHE_DIR", str(user_home / ".cache" / "pip")))
    return env


def _side(ref: str | None, where: Path) -> dict:
    clone = where / "clone"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(REPO), str(clone)], check=True)
    if ref:
        subprocess.run(["git", "-C", str(clone), "checkout", "-q", ref], check=True)
    commit = subprocess.run(["git", "-C", str(clone), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=True).stdout.strip()
    home = where / "home"
    home.mkdir()
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    done = subprocess.run(["make", "demo"], cwd=clone, env=_env(home), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=TIMEOUT_S)
    wall = time.perf_counter() - t0
    out = done.stdout + done.stderr
    stamps = {what: _seconds(hms) for *hms, what in _STAMP.findall(out)}
    first = min(stamps.values()) if stamps else None
    demo_at = stamps.get("demo")
    built = re.search(r"Built (\d+) assets in ([\d.]+) s", out)
    checks = re.search(r"Asset checks: (\d+) passed, (\d+) warnings, (\d+) failed", out)
    rec = {"ref": ref or "HEAD", "commit": commit, "rc": done.returncode, "wall_s": round(wall, 1),
           "setup_s": (demo_at - first) if demo_at is not None and first is not None else None,
           "demo_s": round(wall - (demo_at - first), 1) if demo_at is not None and first is not None else None,
           "assets_built": int(built.group(1)) if built else None,
           "materialise_s": float(built.group(2)) if built else None,
           "checks": {"passed": int(checks.group(1)), "warnings": int(checks.group(2)),
                      "failed": int(checks.group(3))} if checks else None,
           "load_before": [round(x, 2) for x in load_before], "load_after": [round(x, 2) for x in os.getloadavg()]}
    scores = re.search(r"^Scores, leaderboard and plots: (.+?)/?$", out, re.MULTILINE)
    rec["scores_folder"] = scores.group(1) if scores else str(clone / _EXAMPLE)
    if done.returncode:
        rec["tail"] = out[-3000:]
    return rec


def run(baseline_ref: str | None = BASELINE_REF) -> dict:
    """Run the benchmark (module docstring).

    Parameters
    ----------
    baseline_ref : str or None, optional
        The baseline's git ref; None measures the candidate alone.

    Returns
    -------
    dict
    """
    if shutil.which("make") is None or shutil.which("git") is None:
        return {"status": "skipped", "reason": "make and git are needed"}
    with tempfile.TemporaryDirectory(prefix="taxoforge-bench-demo-") as d:
        root = Path(d)
        (root / "candidate").mkdir()
        doc = {"status": "ok", "machine": machine_info(), "target_s": TARGET_S,
               "candidate": _side(None, root / "candidate")}
        if baseline_ref:
            (root / "baseline").mkdir()
            doc["baseline"] = _side(baseline_ref, root / "baseline")
            doc["baseline_over_candidate"] = (round(doc["baseline"]["wall_s"] / doc["candidate"]["wall_s"], 2)
                                              if doc["candidate"]["wall_s"] else None)
            doc["same_results"] = same_results(Path(doc["candidate"]["scores_folder"]),
                                               Path(doc["baseline"]["scores_folder"]))
        doc["meets_target"] = doc["candidate"]["rc"] == 0 and doc["candidate"]["wall_s"] <= TARGET_S
    return doc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline-ref", default=BASELINE_REF, help="git ref of the baseline")
    ap.add_argument("--no-baseline", action="store_true", help="measure the candidate alone")
    args = ap.parse_args(argv)
    doc = run(None if args.no_baseline else args.baseline_ref)
    print(json.dumps(doc, indent=2))
    return 0 if doc.get("status") != "ok" or doc["candidate"]["rc"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
