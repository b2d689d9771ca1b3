"""Genus transfer only on evidence: a transfer no synonym or linked record of the tree
supports is reported as a guess — in the label's resolution detail, in ``run.json`` — and
scoring says how many rows rest on guesses (docs/method.md#ground-truths)."""

from __future__ import annotations

import json

import polars as pl

from taxoforge.links.genus_rules import GUESS, is_guess
from taxoforge.links.resolve import resolve_labels
from taxoforge.trees.tables import TreeTables
from tests.hostile.bounded import run_cli_bounded

# Blenniidae as a tree lacking Omobranchus longispinis: its epithet lives in one other genus
NODES = [("life", None, "Life", None), ("blenniidae", "life", "Blenniidae", "family"),
         ("omobranchus", "blenniidae", "Omobranchus", "genus"),
         ("o_elegans", "omobranchus", "Omobranchus elegans", "species"),
         ("laiphognathus", "blenniidae", "Laiphognathus", "genus"),
         ("l_longispinis", "laiphognathus", "Laiphognathus longispinis", "species"),
         ("cambaridae", "life", "Cambaridae", "family"), ("faxonius", "cambaridae", "Faxonius", "genus"),
         ("f_virilis", "faxonius", "Faxonius virilis", "species"), ("orconectes", "cambaridae", "Orconectes", "genus"),
         ("o_limosus", "orconectes", "Orconectes limosus", "species")]
SYNONYMS = [("f_virilis", "Orconectes virilis")]  # the tree records that move


def _tables(synonyms=SYNONYMS):
    nodes = pl.DataFrame({"node_id": [n[0] for n in NODES], "parent_id": [n[1] for n in NODES],
                          "label": [n[2] for n in NODES], "rank": [n[3] for n in NODES]},
                         schema_overrides={"parent_id": pl.String, "rank": pl.String})
    names = pl.DataFrame({"node_id": [n[0] for n in NODES] + [s[0] for s in synonyms],
                          "name": [n[2] for n in NODES] + [s[1] for s in synonyms],
                          "kind": ["scientific"] * len(NODES) + ["synonym"] * len(synonyms)})
    return nodes, names


def _resolve(texts, synonyms=SYNONYMS):
    nodes, names = _tables(synonyms)
    labels = pl.DataFrame({"dataset": "d", "label_id": texts, "label_text": texts})
    out = resolve_labels(labels, names, nodes, synonyms=pl.DataFrame({"name": [], "accepted_name": []},
                                                                      schema={"name": pl.String,
                                                                              "accepted_name": pl.String}))
    return {r["label_text"]: r for r in out.iter_rows(named=True)}


def test_an_unsupported_transfer_is_linked_and_said_to_be_a_guess():
    r = _resolve(["Omobranchus longispinis"])["Omobranchus longispinis"]
    assert (r["status"], r["method"], r["node_id"]) == ("linked", "genus_transfer", "l_longispinis")
    assert f"; {GUESS}: no synonym or linked record supports this transfer" in r["detail"]
    assert pl.select(is_guess(pl.lit(r["detail"]))).item()


def test_a_transfer_the_tree_records_is_supported_not_a_guess():
    # the synonym itself is a name of the tree, so it resolves as a synonym, not a transfer
    r = _resolve(["Orconectes virilis"])["Orconectes virilis"]
    assert r["method"] == "synonym" and r["node_id"] == "f_virilis"
    # an epithet spelled otherwise still moves, and the synonym in the label's genus supports it
    r = _resolve(["Orconectes virile"])["Orconectes virile"]
    assert (r["method"], r["node_id"]) == ("genus_transfer", "f_virilis"), r
    assert "supported by the synonym Orconectes virilis of Faxonius virilis" in r["detail"]
    assert not pl.select(is_guess(pl.lit(r["detail"]))).item()


def test_scoring_counts_the_rows_that_rest_on_a_guess(tmp_path):
    nodes, names = _tables()
    TreeTables("blennies", nodes, names).write(tmp_path / "tree")
    ans = tmp_path / "a.jsonl"
    ans.write_text("".join(json.dumps(r) + "\n" for r in [
        {"id": "1", "output": "Laiphognathus longispinis", "label": "Omobranchus longispinis"},
        {"id": "2", "output": "a blenny", "label": "Omobranchus longispinis"},
        {"id": "3", "output": "Faxonius virilis", "label": "Faxonius virilis"}]))
    res = run_cli_bounded(["score", ans, tmp_path / "tree", "-o", tmp_path / "out", "--no-meteor", "--no-plots"],
                          timeout=180, as_bytes=8_000_000_000)
    assert res.rc == 0, res.describe()
    assert "2 scored row(s) rest on a genus transfer no synonym supports (a guess: Omobranchus longispinis)" in res.err
    info = json.loads((tmp_path / "out" / "run.json").read_text())
    assert info["genus_transfer_guesses"] == {"rows": 2, "labels": ["Omobranchus longispinis"]}
    s = pl.read_parquet(tmp_path / "out" / "scores.parquet")
    assert s.filter(pl.col("id") == "1")["gt_detail"][0].count(GUESS) == 1
