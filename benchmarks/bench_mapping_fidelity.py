"""Benchmark: do node names in answer templates map back to their node? (issue 12 targets)

    python -m benchmarks.bench_mapping_fidelity --size small

Trees: the demo's ImageNet-1k taxonomy and the full WordNet 3.0 noun tree
(:mod:`benchmarks.trees`, built as the assets build them). Gold: every name of every node
(display labels, lemmas, dataset labels; synset identifiers are not names) — all of them for
ImageNet-1k, a seeded sample for WordNet — put into answer templates:

* singular family: bare, article, sentence ("This is a …."), hedge ("I think it's a …."),
  "It looks like a …", upper case, answer prefix ("The answer is: …"), hedge with a
  refusal cue ("Probably a …, but I'm not sure.");
* plural family (plural by the ``inflect`` library, independent of taxoforge's own base
  forms; not for proper or scientific names, which have no English plural, nor for names
  already plural): bare plural, "There are two … in the picture.", "These are ….",
  "Several …".

Each answer goes through :func:`taxoforge.scores.parse.parse_answer` (templates, refusal
cues: a hedged answer keeps its named part) and :class:`TaxonomyIndex` with the default
configuration. An answer is right when it maps to its node or — for a name several nodes
share (same key once words are in base form; for plurals also the nodes whose own name is
the plural, e.g. *brakes*) — to one of them; how many answers carried such a shared name is
reported. Targets: ≥ 99.5 % singular, ≥ 97 % plural, on both trees.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections import Counter, defaultdict

import numpy as np
import polars as pl

SIZES = {"tiny": {"wordnet_names": 400, "imagenet_names": 600},
         "small": {"wordnet_names": 4_000, "imagenet_names": None},
         "full": {"wordnet_names": 20_000, "imagenet_names": None}}
SINGULAR = ["{n}", "a {n}", "This is a {n}.", "I think it's a {n}.", "It looks like a {n}", "{N}",
            "The answer is: {n}", "Probably a {n}, but I'm not sure."]
PLURAL = ["{p}", "There are two {p} in the picture.", "These are {p}.", "Several {p}"]
TARGETS = {"singular": 0.995, "plural": 0.97}


def _plural(engine, name: str) -> str | None:
    if not name[:1].isalpha() or re.match(r"[A-Z]", name) or any(c.isdigit() for c in name):
        return None
    if engine.singular_noun(name) is not False:  # already plural
        return None
    return engine.plural_noun(name)


def _gold(tables, sample: int | None, seed: int):
    tax = tables.taxonomy()
    names = tables.names.filter(pl.col("kind").is_null() | (pl.col("kind") != "synset")).select("node_id", "name")
    labels = pl.DataFrame({"node_id": tax.ids.tolist(), "name": tax._labels}, schema={"node_id": pl.String, "name": pl.String})
    rows = pl.concat([names, labels]).drop_nulls().unique().sort("node_id", "name").rows()
    if sample is not None and sample < len(rows):
        rng = np.random.default_rng(seed)
        rows = [rows[i] for i in sorted(rng.choice(len(rows), sample, replace=False))]
    return tax, rows


def evaluate(tables, sample: int | None = None, seed: int = 0) -> dict:
    import inflect

    from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex
    from taxoforge.scores.parse import parse_answer

    engine = inflect.engine()
    tax, rows = _gold(tables, sample, seed)
    t = time.perf_counter()
    index = TaxonomyIndex(tax, MappingConfig())
    t_index = time.perf_counter() - t
    items = []  # (family, template, text, acceptable nodes, shared)
    for nid, name in rows:
        own = int(tax.index_of([nid])[0])
        named = {int(x) for x in index.nodes_named(name)}
        for tpl in SINGULAR:
            items.append(("singular", tpl, tpl.format(n=name, N=name.upper()), named | {own}, len(named) > 1))
        p = _plural(engine, name)
        if p:
            also = named | {int(x) for x in index.nodes_named(p)}
            for tpl in PLURAL:
                items.append(("plural", tpl, tpl.format(p=p), also | {own}, len(also) > 1))
    texts = []
    for _, _, text, _, _ in items:
        pa = parse_answer(text)
        texts.append(pa.unrefused if pa.refusal else pa.answer)
    t = time.perf_counter()
    res = index.map(texts)
    wall = time.perf_counter() - t
    ok, tot, shared = Counter(), Counter(), Counter()
    stages = defaultdict(Counter)
    wrong = defaultdict(list)
    for (fam, tpl, text, want, is_shared), v, st in zip(items, res.node_idx.tolist(), res.stage.tolist()):
        good = v in want
        for key in (fam, f"{fam}: {tpl}"):
            ok[key] += good
            tot[key] += 1
        shared[fam] += is_shared
        stages[fam][st] += 1
        if not good and len(wrong[fam]) < 15:
            wrong[fam].append({"answer": text, "got": str(tax.ids[v]), "got_label": tax.label(str(tax.ids[v])),
                               "stage": st})
    acc = {k: ok[k] / tot[k] for k in tot}
    return {
        "tree": tables.name, "nodes": len(tax), "names_in_gold": len(rows), "answers": len(items),
        "index_build_s": round(t_index, 2), "mapping_wall_s": round(wall, 2),
        "answers_per_s": round(len(items) / wall) if wall else None,
        "accuracy": {k: round(v, 5) for k, v in sorted(acc.items())},
        "answers_per_template": {k: tot[k] for k in sorted(tot)},
        "answers_with_shared_names": dict(shared),
        "stages": {k: dict(v) for k, v in stages.items()},
        "targets": TARGETS, "meets_target": {f: acc.get(f, 0.0) >= TARGETS[f] for f in TARGETS},
        "wrong_examples": dict(wrong),
    }


def run(size: str = "small", seed: int = 0) -> dict:
    from benchmarks.trees import imagenet1k_tree, wordnet_tree

    cfg = SIZES[size]
    cases = [evaluate(imagenet1k_tree(), cfg["imagenet_names"], seed), evaluate(wordnet_tree(), cfg["wordnet_names"], seed)]
    return {"benchmark": "mapping_fidelity", "size": size, "seed": seed, "cases": cases,
            "meets_target": all(all(c["meets_target"].values()) for c in cases)}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", choices=sorted(SIZES), default="small")
    print(json.dumps(run(ap.parse_args().size), indent=2))
