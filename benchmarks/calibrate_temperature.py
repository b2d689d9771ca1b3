"""Calibrate the softmax temperature of every string similarity measure (docs/method.md#mapping-an-answer-to-a-node).

    python -m benchmarks.calibrate_temperature [--species 10000] [--sample 3000] [--seed 0]

Rule (:mod:`taxoforge.scores.mapping.calibration`): the smallest temperature at which at
most 1 % of clear matches — node labels with one seeded character typo (a seeded sample of
``--sample`` labels per tree) —
pass the vote's near-tie test, pooled over the demo's ImageNet-1k tree
(:func:`benchmarks.trees.imagenet1k_tree`) and an iNat21-sized tree of real iNaturalist
taxa (:func:`benchmarks.bench_mapping.inat_sample_tree`). Prints JSON: per measure the
temperature, the answers it rests on, and for information how often the vote then fires
on answers naming no taxon (the benchmark's filler sentences). The printed temperatures
are what :data:`taxoforge.scores.mapping.config.CALIBRATED_TEMPERATURES` holds.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex
from taxoforge.scores.mapping.calibration import TEMPERATURE_GRID, near_tie_passes, one_edit_typos
from taxoforge.scores.mapping.similarity import STRING_SCORERS

MAX_SHARE = 0.01


def _trees(species: int, seed: int):
    from benchmarks.bench_mapping import inat_sample_tree
    from benchmarks.trees import imagenet1k_tree

    return {"imagenet1k": imagenet1k_tree(), f"inat-sample-{species}": inat_sample_tree(species, seed=seed)}


def _filler(n: int, seed: int) -> list[str]:
    from benchmarks.bench_mapping import FILLER

    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(FILLER, size=int(rng.integers(2, 6)))) for _ in range(n)]


def run(species: int = 10_000, seed: int = 0, sample: int = 3000, measures=tuple(STRING_SCORERS)) -> dict:
    trees = _trees(species, seed)
    out = {"rule": f"smallest temperature with at most {MAX_SHARE:.0%} of one-typo node labels passing the near-tie test",
           "trees": {k: len(v.nodes) for k, v in trees.items()}, "seed": seed, "sample_per_tree": sample,
           "measures": {}}
    for measure in measures:
        passes, tied, reaching, answers = [], 0, 0, 0
        filler_tops = []
        for tables in trees.values():
            tax = tables.taxonomy()
            index = TaxonomyIndex(tax, MappingConfig(similarity=measure, temperature=1.0))
            labels = sorted({x for x in tax._labels if x})
            rng = np.random.default_rng(seed)
            labels = [labels[i] for i in sorted(rng.choice(len(labels), min(sample, len(labels)), replace=False))]
            typos = one_edit_typos(labels, seed=seed)
            answers += len(typos)
            cfg = index.config
            for top in index.vote_candidates(typos):
                if top is None or len(top[1]) < 2:
                    continue
                reaching += 1
                p = near_tie_passes(top[1], cfg.thr_top2, cfg.thr_topk)
                if p.all():
                    tied += 1
                else:
                    passes.append(p)
            filler_tops += [t for t in index.vote_candidates(_filler(500, seed)) if t is not None and len(t[1]) >= 2]
        share = np.mean(passes, axis=0)
        j = int(np.flatnonzero(share <= MAX_SHARE)[0])
        T = float(TEMPERATURE_GRID[j])
        fires = np.mean([near_tie_passes(s, cfg.thr_top2, cfg.thr_topk, np.array([T]))[0] for _, s in filler_tops])
        out["measures"][measure] = {
            "temperature": T, "typo_answers": answers, "reaching_vote": reaching,
            "tied_at_every_temperature": tied, "share_passing_at_temperature": float(share[j]),
            "near_tie_share_on_filler_answers": float(fires), "filler_answers_reaching_vote": len(filler_tops),
        }
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--species", type=int, default=10_000)
    ap.add_argument("--sample", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--measure", action="append", choices=sorted(STRING_SCORERS), help="default: every string measure")
    a = ap.parse_args()
    print(json.dumps(run(a.species, a.seed, a.sample, tuple(a.measure or STRING_SCORERS)), indent=2))
