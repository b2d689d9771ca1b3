"""Benchmark: scoring at volume — 100,000 answers against the 1.4 M-node iNaturalist tree in one call.

    python -m benchmarks.bench_score_volume --size full

The answers are generated, seeded, from the tree's own names for a label set of 10,000
species (the size of iNat21's): ``n / 5`` items, each answered by :data:`MODELS` (five) models,
so that most answers repeat across models as they do in real runs. Each item's ground truth
is the taxon its answer was made from; each model names that taxon in three answers of four
(:data:`RIGHT`), else another one of the same kind. Families (the id's prefix):

* ``exact`` — the species' scientific name in answer templates ("A: …", "The answer is …");
* ``genus`` / ``family`` — the name of the species' genus or family (its nearest ancestor
  of that rank in the tree) in templates ("Genus: …", "It belongs to the family …");
* ``english`` / ``plural`` — an English name of a taxon (from WordNet 3.0, offline:
  :func:`taxoforge.sources.wordnet_names.wordnet_english_names`, merged into the tree's names), with an
  article or as a plural (``inflect``);
* ``free`` — free-text sentences naming the taxon (scientific or English name) among other
  words, and hedged answers (:data:`benchmarks.mapping_gold.HEDGES`);
* ``refusal`` — refusal templates (:data:`benchmarks.mapping_gold.REFUSALS`);
* ``letter`` — a multiple-choice question with four species options and the answer as a
  letter ("B", "(C)", "Answer: D").

A preparing process writes the tree and the answers, and makes the tree's mapping index (and
stored tree) with one small ``taxoforge score`` call, so the measured call starts with the
index in place. The measured call is ``python -m taxoforge.cli score ANSWERS TREE -o OUT``
with default options, timed from outside with its own peak RSS (``VmHWM``); its
``run.json`` gives the seconds of each stage. The figures a call draws in a process of its own
are waited for before the next call (:func:`benchmarks.harness.wait_for_figures`), so no
drawing overlaps a measured call; when they appeared is reported (``figures``). Reported: wall, CPU (user + system) seconds,
peak, and answers/s per stage —
parse, resolve (ground truths), map, measure (hierarchical and text measures, samples,
breakdowns, leaderboard with intervals), write (tables and figures); then a second call on
the same file (its labels resolved by the first: the repeat loop).

**Baseline**: the same two calls made by the code of ``--baseline-ref`` (default
:data:`BASELINE_REF`), checked out with
``git worktree``, on its own copy of the tree with its own index made beforehand, in the
same run; reported: its wall and stages, ``baseline_over_first`` (its first call's wall over
this code's), and whether both wrote the same ``scores.parquet``, ``leaderboard.parquet``
and ``bad_rows.parquet`` (``same_results``, with the columns that differ if not). Skipped,
with the reason, where git or the commit is not available (and at ``tiny``).

Targets (``full``): ≤ 20 s wall for the first call after the index exists, ≤ 6 s for the repeat
call, ≤ 2 GiB peak for both.
Sizes: ``tiny`` — 300 species, 1,000 answers, no English names; ``small`` — 10,000 species, 20,000 answers;
``full`` — the whole tree, 100,000 answers.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.harness import REPO, checkout, measure_process, same_results, settle, wait_for_figures
from benchmarks.trees import inat_tree_of

__all__ = ["run", "SIZES", "generate_answers", "BASELINE_REF", "MODELS"]

#: the base commit of the work on the repeat call (main before distinct answers were parsed,
#: mapped and measured across calls): the same results, the time it took. An older base is
#: no use: the tables gained columns since, so its results cannot be compared.
BASELINE_REF = "b706da6"
SIZES = {"tiny": {"species": 300, "answers": 1000, "labels": 200, "english": False, "baseline": False},
         "small": {"species": 10_000, "answers": 20_000, "labels": 2000},
         "full": {"species": None, "answers": 100_000, "labels": 10_000}}
MIX = {"exact": 0.22, "english": 0.10, "plural": 0.05, "genus": 0.10, "family": 0.05, "free": 0.10, "refusal": 0.12,
       "letter": 0.26}
MODELS = 5
RIGHT = 0.75  # how often a model names the item's own taxon (else another species of the label set)
TEMPLATES = ["{}", "A: {}", "The answer is {}.", "I think this is {}.", "{} (probably)", "Species: {}"]
GENUS_TEMPLATES = ["{}", "Genus: {}", "It is a {} species.", "Some kind of {}.", "This belongs to the genus {}."]
FAMILY_TEMPLATES = ["{}", "Family: {}", "It belongs to the family {}.", "A member of the {}.",
                    "This is something in the family {}, but I can't tell the species."]
FREE_TEMPLATES = ["The image shows {a} {n} sitting on a branch in its natural habitat.",
                  "This appears to be {a} {n}, recognisable by its shape and colouring.",
                  "Looking at the picture, I would say it is {a} {n}; the markings are typical of it.",
                  "Based on the visible features, this is most likely {a} {n}.",
                  "The organism in this photo is {a} {n}, seen from the side in good light."]
LETTER_ANSWERS = ["{}", "({})", "Answer: {}", "{}."]
TARGETS = {"wall_s": 20.0, "repeat_wall_s": 6.0, "peak_rss_bytes": 2 * 2**30}
SEED = 0
TIMEOUT = 3600


def _ancestors(nodes, labels: list[str], ranks=("genus", "family")) -> dict[str, dict[str, str]]:
    """For each species label of ``labels``: the label of its nearest ancestor at each of
    ``ranks`` (where the tree has one), found by following ``parent_id`` upwards."""
    import polars as pl

    if not {"rank", "parent_id", "label"} <= set(nodes.columns):
        return {}
    up = nodes.select("node_id", "parent_id", "rank", "label")
    cur = (up.filter(pl.col("label").is_in(labels) & (pl.col("rank") == "species"))
           .unique("label", keep="first", maintain_order=True).select(pl.col("label").alias("species"), "parent_id"))
    out: dict[str, dict[str, str]] = {}
    for _ in range(30):
        if cur.height == 0:
            break
        cur = cur.join(up, left_on="parent_id", right_on="node_id").select(
            "species", pl.col("parent_id_right").alias("parent_id"), "rank", "label")
        for sp, rank, label in cur.filter(pl.col("rank").is_in(list(ranks))).select("species", "rank", "label").rows():
            out.setdefault(sp, {}).setdefault(rank, label)
        cur = cur.filter(pl.col("parent_id").is_not_null()).select("species", "parent_id")
    return out


def generate_answers(tables, n: int, n_labels: int, seed: int = SEED) -> tuple[list[dict], dict]:
    """``n`` seeded answer rows (module docstring) over ``n_labels`` species of ``tables``:
    ``n / MODELS`` items, each answered by :data:`MODELS` models; and how many rows of each
    family were made."""
    import polars as pl

    from benchmarks.mapping_gold import HEDGES, ORGANISM_WORDS, REFUSALS, TASK_WORDS

    rng = random.Random(seed)
    nodes = tables.nodes
    species = nodes.filter(pl.col("rank") == "species") if "rank" in nodes.columns else nodes
    labels = sorted(species["label"].drop_nulls().unique().to_list())
    pool = rng.sample(labels, min(n_labels, len(labels)))
    higher = _ancestors(nodes, pool)
    with_rank = {r: sorted(s for s in pool if r in higher.get(s, {})) for r in ("genus", "family")}
    english = (tables.names.filter(pl.col("kind") == "vernacular").join(nodes.select("node_id", "label"), on="node_id")
               .select("name", "label").unique().sort("name", "label").rows())
    try:
        import inflect

        engine = inflect.engine()
    except ImportError:  # pragma: no cover - inflect is a dev dependency
        engine = None

    def article(name: str) -> str:
        return engine.a(name).split(" ", 1)[0] if engine else "a"

    free = FREE_TEMPLATES + [h for h in HEDGES if "{task}" not in h]
    rows, made = [], {k: 0 for k in MIX}
    families, weights = list(MIX), list(MIX.values())
    fam = label = name = question = options = None
    for i in range(n):
        item, k = divmod(i, MODELS)
        if k == 0:  # a new item: its family, ground truth and (multiple choice) question
            fam = rng.choices(families, weights)[0]
            if (fam in ("english", "plural") and not english) or (fam in with_rank and not with_rank[fam]):
                fam = "exact"
            question = None
            if fam in ("english", "plural") or (fam == "free" and english and rng.random() < 0.5):
                name, label = rng.choice(english)
                source = english
            else:
                label = name = rng.choice(with_rank.get(fam) or pool)
                source = None
            if fam == "letter":
                options = rng.sample(pool, 4)
                right = rng.randrange(4)
                label = options[right]
                question = "Which species is in the image? " + " ".join(f"{'ABCD'[j]}) {o}" for j, o in enumerate(options))
        row = {"id": f"{fam}-{item}", "model": f"model-{k}", "dataset": "volume", "prompt": "p", "label": label}
        is_right = rng.random() < RIGHT
        named = name if is_right else (rng.choice(source)[0] if source else rng.choice(with_rank.get(fam) or pool))
        if fam == "exact":
            output = rng.choice(TEMPLATES).format(named)
        elif fam in ("genus", "family"):
            output = rng.choice(GENUS_TEMPLATES if fam == "genus" else FAMILY_TEMPLATES).format(higher[named][fam])
        elif fam == "english":
            output = f"This is {article(named)} {named}."
        elif fam == "plural":
            plural = engine.plural_noun(named) if engine else f"{named}s"
            output = f"There are two {plural} in the picture."
        elif fam == "free":
            output = rng.choice(free).format(a=article(named), n=named)
        elif fam == "refusal":
            output = rng.choice(REFUSALS).format(task=rng.choice(TASK_WORDS), organism=rng.choice(ORGANISM_WORDS))
        else:
            pick = right if is_right else rng.choice([j for j in range(4) if j != right])
            output = rng.choice(LETTER_ANSWERS).format("ABCD"[pick])
        row["output"] = output
        if question is not None:
            row["question"] = question
        made[fam] += 1
        rows.append(row)
    return rows, made


def _warm(code_root: Path, folder: Path, tree: Path, cache: Path) -> subprocess.CompletedProcess:
    """One small scoring call by the code under ``code_root``: the tree's stored index made."""
    return subprocess.run([sys.executable, "-m", "taxoforge.cli", "score", str(folder / "warm.jsonl"), str(tree),
                           "--no-progress", "--min-scored", "0", "--json"], capture_output=True, text=True,
                          cwd=code_root, env=_env(code_root, cache))


def _env(code_root: Path, cache: Path) -> dict:
    """The environment of a call: the code under ``code_root``, its own cache folder, bytecode
    cached as in an installed package (:mod:`benchmarks.bench_score_loop`)."""
    env = dict(os.environ, PYTHONPATH=str(code_root), TAXOFORGE_CACHE_DIR=str(cache))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _prepare(size: str, folder: str) -> None:
    """In its own process: the tree (with English names where WordNet is there), the answers,
    and the stored index (one small scoring call)."""
    import polars as pl

    cfg = SIZES[size]
    try:
        tables = inat_tree_of(cfg["species"])
    except Exception as e:  # noqa: BLE001 - no iNaturalist data on this machine
        print(json.dumps({"skipped": f"the iNaturalist tree cannot be built: {type(e).__name__}: {e}"}))
        return
    english_note = "WordNet English names merged"
    try:
        if not cfg.get("english", True):
            raise RuntimeError(f"not read at size {size!r} (reading WordNet takes longer than the rest)")
        from taxoforge.sources.wordnet_names import wordnet_english_names
        from taxoforge.trees.tables import TreeTables

        en = wordnet_english_names(tables).select("node_id", "name", "kind", "lang")
        tables = TreeTables(tables.name, tables.nodes, pl.concat([tables.names, en], how="diagonal_relaxed"),
                            tables.links, tables.report, tables.info)
    except Exception as e:  # noqa: BLE001 - no WordNet: no English names
        english_note = f"no English names ({type(e).__name__}: {e})"
    d = Path(folder)
    tables.write(d / "tree")
    rows, made = generate_answers(tables, cfg["answers"], cfg["labels"])
    with (d / "answers.jsonl").open("w") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
    with (d / "warm.jsonl").open("w") as fh:
        fh.write(json.dumps(rows[0]) + "\n")
    settle()  # the warm call remembers the tree's content hash
    warm = _warm(REPO, d, d / "tree", Path(os.environ.get("TAXOFORGE_CACHE_DIR") or d / "cache"))
    print(json.dumps({"nodes": tables.nodes.height, "names": tables.names.height, "answers": len(rows),
                      "families": made, "english_names": english_note, "index_ready": warm.returncode == 0,
                      "warm_error": warm.stderr[-500:] if warm.returncode else None}))


#: run.json phases → the stages of the report
STAGES = {"parse": ("parse",), "resolve": ("ground_truths",), "map": ("mapping",),
          "measure": ("measures", "text_measures", "samples", "breakdowns", "leaderboard"),
          "write": ("write", "figures")}


def _by_family(scores: Path, bad: Path) -> dict:
    """Per answer family (the id's prefix): rows, scored, right (exact node), abstained."""
    import polars as pl

    try:
        s = pl.read_parquet(scores).with_columns(pl.col("id").str.extract(r"^([a-z]+)-", 1).alias("family"))
        b = pl.read_parquet(bad).with_columns(pl.col("id").str.extract(r"^([a-z]+)-", 1).alias("family"))
    except Exception:  # noqa: BLE001
        return {}
    out = {}
    for fam, g in s.group_by("family"):
        out[fam[0]] = {"scored": g.height, "correct": round(float(g["correct"].mean()), 4),
                       "abstained": round(float(g["abstained"].mean()), 4)}
    for fam, n in b.group_by("family").len().iter_rows():
        out.setdefault(fam, {})["bad_rows"] = int(n)
    return dict(sorted(out.items()))


def _stages(seconds: dict | None, n: int) -> dict:
    if not seconds:
        return {}
    out = {}
    for stage, phases in STAGES.items():
        s = sum(seconds.get(p, 0.0) for p in phases)
        out[stage] = {"seconds": round(s, 3), "answers_per_s": round(n / s) if s > 0 else None}
    return out


def _calls(code_root: Path, d: Path, tree: Path, out: Path, cache: Path, n: int = 2) -> list[dict]:
    cmd = ["-m", "taxoforge.cli", "score", str(d / "answers.jsonl"), str(tree), "-o", str(out),
           "--no-progress", "--min-scored", "0", "--json"]
    old, cwd = os.environ.copy(), os.getcwd()
    os.environ.clear()
    os.environ.update(_env(code_root, cache))
    os.chdir(code_root)
    try:  # _measure runs in this environment: the code under code_root, its own cache folder
        calls = []
        for _ in range(n):
            calls.append(measure_process(cmd, timeout=TIMEOUT))
            calls[-1]["figures"] = wait_for_figures(out)  # no drawing overlaps the next measured call
        return calls
    finally:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(old)


def _record(c: dict, n: int) -> dict:
    info = (c.get("doc") or {}).get("info", {})
    return {"wall_s": round(c.get("wall_s") or 0, 2), "cpu_s": round(c.get("cpu_s") or 0, 2),
            "peak_rss_bytes": c.get("peak_rss_bytes"),
            "answers_per_s": round(n / c["wall_s"]) if c.get("wall_s") else None,
            "scored": info.get("scored"), "bad_rows": info.get("bad_rows"),
            "stage_counts": info.get("stage_counts"), "seconds": info.get("seconds"),
            "stages": _stages(info.get("seconds"), n), "figures": c.get("figures"), "error": c.get("error")}


def run(size: str = "small", baseline_ref: str | None = BASELINE_REF) -> dict:
    """Run the benchmark at ``size`` (module docstring)."""
    if size not in SIZES:
        raise ValueError(f"unknown size {size!r}; expected one of {sorted(SIZES)}")
    with tempfile.TemporaryDirectory(prefix="taxoforge-bench-volume-") as d:
        d = Path(d)
        env = dict(os.environ, PYTHONPATH=str(REPO), TAXOFORGE_CACHE_DIR=str(d / "cache"))
        prep = subprocess.run([sys.executable, "-c", "import sys; from benchmarks.bench_score_volume import _prepare; "
                               "_prepare(sys.argv[1], sys.argv[2])", size, str(d)], capture_output=True, text=True,
                              timeout=TIMEOUT, cwd=REPO, env=env)
        if prep.returncode != 0:
            return {"status": "error", "error": f"preparing failed: {prep.stderr[-2000:]}"}
        made = json.loads(prep.stdout.splitlines()[-1])
        if "skipped" in made:
            return {"status": "skipped", "reason": made["skipped"]}
        baseline_note, base_calls, same = None, None, None
        if baseline_ref and not SIZES[size].get("baseline", True):
            baseline_note = f"not run at size {size!r}"
        elif baseline_ref:
            baseline_note = checkout(baseline_ref, d / "baseline-code")
        try:
            print(f"[score-volume] {made['answers']:,} answers, {made['nodes']:,}-node tree …", file=sys.stderr,
                  flush=True)
            calls = _calls(REPO, d, d / "tree", d / "out", d / "cache")
            families = _by_family(d / "out" / "scores.parquet", d / "out" / "bad_rows.parquet")
            if baseline_ref and baseline_note is None:
                import shutil

                print(f"[score-volume] baseline {baseline_ref} …", file=sys.stderr, flush=True)
                base_tree = d / "baseline" / "tree"  # its own folder (same name: the same citation): its own index
                base_tree.mkdir(parents=True)
                for f in (d / "tree").iterdir():
                    if f.is_file():
                        shutil.copy2(f, base_tree / f.name)
                settle()
                warm = _warm(d / "baseline-code", d, base_tree, d / "cache-baseline")
                if warm.returncode != 0:
                    baseline_note = f"the baseline's first call failed: {warm.stderr[-300:]}"
                else:
                    base_calls = _calls(d / "baseline-code", d, base_tree, d / "out-baseline", d / "cache-baseline")
                    same = same_results(d / "out", d / "out-baseline")
        finally:
            if baseline_ref and (d / "baseline-code").exists():
                subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(d / "baseline-code")],
                               capture_output=True)
    out = {"status": "ok" if all(c["status"] == "ok" for c in calls) else "error", "size": size,
           "tree_nodes": made["nodes"], "tree_names": made["names"], "answers": made["answers"],
           "families": families or made["families"], "english_names": made["english_names"], "index_ready": made["index_ready"],
           "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None, "targets": TARGETS}
    for name, c in zip(("first_call", "repeat_call"), calls):
        out[name] = _record(c, made["answers"])
    out["baseline_ref"], out["baseline_note"] = baseline_ref, baseline_note
    if base_calls:
        out["baseline"] = {name: _record(c, made["answers"]) for name, c in zip(("first_call", "repeat_call"),
                                                                                 base_calls)}
        b, f = out["baseline"]["first_call"]["wall_s"], out["first_call"]["wall_s"]
        out["baseline_over_first"] = round(b / f, 2) if b and f else None
        b, f = out["baseline"]["repeat_call"]["wall_s"], out["repeat_call"]["wall_s"]
        out["baseline_over_repeat"] = round(b / f, 2) if b and f else None
        out["same_results"] = same
    first, repeat = out["first_call"], out.get("repeat_call", {})
    out["meets_target"] = {"wall_s": (first["wall_s"] or 1e9) <= TARGETS["wall_s"],
                           "repeat_wall_s": (repeat.get("wall_s") or 1e9) <= TARGETS["repeat_wall_s"],
                           "peak_rss_bytes": max(first["peak_rss_bytes"] or 1e18, repeat.get("peak_rss_bytes") or 0)
                           <= TARGETS["peak_rss_bytes"]}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", choices=sorted(SIZES), default="small")
    ap.add_argument("--baseline-ref", default=BASELINE_REF, help="git ref of the baseline code ('' for none)")
    args = ap.parse_args(argv)
    print(json.dumps(run(args.size, args.baseline_ref or None), indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
