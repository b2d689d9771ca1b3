"""The volume benchmark's generated answers (:func:`benchmarks.bench_score_volume.generate_answers`):
every family of answer shapes, five models over the same items, seeded."""

from __future__ import annotations

import polars as pl

from benchmarks.bench_score_volume import MIX, MODELS, generate_answers
from taxoforge.trees.tables import TreeTables


def _tree() -> TreeTables:
    """life → two families → two genera each → three species each; English names on some."""
    ids, parents, ranks, labels = ["life"], [None], ["kingdom"], ["Life"]
    names = []
    for f in range(2):
        fam = f"Famidae{f}"
        ids += [fam]; parents += ["life"]; ranks += ["family"]; labels += [fam]
        for g in range(2):
            gen = f"Genus{f}{g}"
            ids += [gen]; parents += [fam]; ranks += ["genus"]; labels += [gen]
            for s in range(3):
                sp = f"{gen} epithet{s}"
                ids += [sp]; parents += [gen]; ranks += ["species"]; labels += [sp]
                names.append((sp, f"spotted {gen.lower()} {s}", "vernacular", "en"))
    nodes = pl.DataFrame({"node_id": ids, "parent_id": parents, "rank": ranks, "label": labels})
    names = pl.DataFrame(names, schema=["node_id", "name", "kind", "lang"], orient="row")
    return TreeTables("t", nodes, names)


def test_every_family_five_models_and_seeded():
    tree = _tree()
    rows, made = generate_answers(tree, 2000, 10)
    assert len(rows) == 2000 and sum(made.values()) == 2000
    assert set(made) == set(MIX) and all(made[f] > 0 for f in MIX), made
    assert {r["model"] for r in rows} == {f"model-{k}" for k in range(MODELS)}
    by_item: dict = {}
    for r in rows:
        by_item.setdefault(r["id"], []).append(r)
    # every item answered by every model, against one ground truth (and one question)
    assert all(len(g) == MODELS and len({(r["label"], r.get("question")) for r in g}) == 1
               for g in list(by_item.values())[:-1])
    # answers repeat across models (the same text for the same item)
    assert len({(r["id"], r["output"]) for r in rows}) < 0.8 * len(rows)
    labels = set(tree.nodes["label"].to_list())
    genera = {x for x in labels if x.startswith("Genus") and " " not in x}
    families = {x for x in labels if x.startswith("Famidae")}
    for r in rows:
        fam = r["id"].split("-")[0]
        assert r["label"] in labels or fam in ("english", "plural", "free"), r
        if fam == "genus":
            assert any(g in r["output"] for g in genera) and not any(f in r["output"] for f in families), r
        elif fam == "family":
            assert any(f in r["output"] for f in families), r
        elif fam == "letter":
            assert r["question"].startswith("Which species") and r["label"] in r["question"]
    # models name the item's own taxon in most answers of the exact family, another in some
    exact = [r for r in rows if r["id"].startswith("exact-")]
    right = sum(r["label"] in r["output"] for r in exact) / len(exact)
    assert 0.6 < right < 0.95
    assert generate_answers(tree, 2000, 10) == (rows, made)
    assert generate_answers(tree, 2000, 10, seed=1)[0] != rows
