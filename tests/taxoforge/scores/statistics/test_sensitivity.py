"""Taxonomy sensitivity: one answer file scored against two real trees — a subtree of the real
iNaturalist tree and the Pterophoroidea Catalogue of Life sample — with ground truths carried by a
crosswalk read through the loopback SPARQL engine; Kendall's τ and swaps on known rankings."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pyoxigraph as ox
import pytest
from click.testing import CliRunner

from taxoforge.links.crosswalk import build_crosswalk
from taxoforge.links.label_sets import label_set_subtree
from taxoforge.scores.statistics.confidence import BootstrapConfig
from taxoforge.scores.options import ScoreOptions
from taxoforge.scores.statistics.sensitivity import ranking_agreement, score_across, sensitivity_table
from taxoforge.sources.coldp import coldp_tree
from taxoforge.sources.wikidata.identifiers import fetch_identifier_claims
from taxoforge.sources.wikidata.sparql import SparqlClient
from tests.conftest import shared_file
from tests.taxoforge.sources.wikidata.loopback_sparql import LoopbackSparql

FIXTURE = Path(__file__).resolve().parents[2] / "sources" / "wikidata" / "fixtures" / "taxon_identifiers.ttl"
MOTHS = {"Emmelina monodactyla": 127431, "Pterophorus pentadactyla": 129485, "Nippoptilia vitis": 124118,
         "Platyptilia gonodactyla": 127432, "Platyptilia thyellopa": 127435}
FAST = ScoreOptions(meteor=False, plots=False, ci=BootstrapConfig(n_resamples=0))


def test_kendall_tau_and_swaps_on_known_rankings():
    boards = {
        "A": pl.DataFrame({"model": ["m1", "m2", "m3"], "dataset": "d", "prompt": "p", "n": [5, 5, 5],
                           "hP": [0.9, 0.8, 0.7], "hR": [0.9, 0.8, 0.7], "hF": [0.9, 0.8, 0.7], "rank": [1, 2, 3]}),
        "B": pl.DataFrame({"model": ["m1", "m2", "m3"], "dataset": "d", "prompt": "p", "n": [5, 5, 5],
                           "hP": [0.6, 0.7, 0.5], "hR": [0.6, 0.7, 0.5], "hF": [0.6, 0.7, 0.5], "rank": [2, 1, 3]}),
    }
    table = sensitivity_table(boards)
    assert table.columns[:4] == ["model", "dataset", "prompt", "n [A]"] and table["rank [B]"].to_list() == [2, 1, 3]
    agree, swaps = ranking_agreement(table, ["A", "B"])
    group = agree.filter(pl.col("dataset") == "d").row(0, named=True)
    assert group["rows"] == 3 and group["tau"] == pytest.approx(1 / 3)  # one discordant pair of three
    assert swaps.select("model_1", "model_2").rows() == [("m1", "m2")]
    # a tree that scored nothing (a leaderboard without ranks) keeps its columns, null
    empty = {"A": boards["A"], "C": boards["B"].head(0).drop("rank")}
    table = sensitivity_table(empty)
    assert [c for c in table.columns if c.endswith("[C]")] == ["n [C]", "hP [C]", "hR [C]", "hF [C]", "rank [C]"]
    assert table["rank [C]"].null_count() == 3
    # one model: no ranking to compare, τ undefined rather than made up
    one = ranking_agreement(sensitivity_table({k: v.head(1) for k, v in boards.items()}), ["A", "B"])[0]
    assert one["tau"].to_list() == [None, None]


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    from taxoforge.sources.inaturalist import inat_tree

    col = coldp_tree(shared_file("coldp", "pterophoroidea_world_catalogue", "taxon.csv").parent, name="coldp")
    labels = pl.DataFrame({"label_text": list(MOTHS)})
    inat, _ = label_set_subtree(inat_tree(), labels, "inaturalist")
    root = tmp_path_factory.mktemp("trees")
    inat.write(root / "inaturalist")
    col.write(root / "coldp")
    return root / "inaturalist", root / "coldp"


@pytest.fixture(scope="module")
def crosswalk(tmp_path_factory):
    store = ox.Store()
    store.load(path=str(FIXTURE), format=ox.RdfFormat.TURTLE)
    with LoopbackSparql(store) as srv:
        client = SparqlClient(endpoint=srv.url, contact="tests@taxoforge.invalid", timeout=5.0)
        claims = fetch_identifier_claims(client, list(MOTHS.values())).claims
    path = tmp_path_factory.mktemp("cw") / "crosswalk.parquet"
    build_crosswalk(claims).table.write_parquet(path)
    return path


@pytest.fixture
def answers(tmp_path) -> Path:
    """Two models' answers; the ground truths are iNaturalist node ids, which only the iNaturalist tree holds."""
    right = list(MOTHS)
    rows = []
    for model, outputs in (("good", right), ("poor", right[1:] + right[:1])):
        for i, (name, out) in enumerate(zip(right, outputs)):
            rows.append({"id": str(i), "model": model, "dataset": "moths", "prompt": "p", "output": out,
                         "label": f"inat:{MOTHS[name]}"})
    p = tmp_path / "answers.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def test_ground_truths_cross_to_a_tree_that_lacks_them(trees, crosswalk, answers, tmp_path):
    inat, col = trees
    without = score_across([answers], [inat, col], score=FAST)
    assert without.info["scored"] == {"inaturalist": 10, "coldp": 0}  # node ids of another tree resolve nowhere
    res = score_across([answers], [inat, col], crosswalk=crosswalk, score=FAST, out_dir=tmp_path / "out")
    # Platyptilia thyellopa (iNaturalist 127435) has no item in the fixture: its two rows stay unscored there
    assert res.info["scored"] == {"inaturalist": 10, "coldp": 8}
    assert res.info["bad_rows_by_reason"]["coldp"] == {"unknown label": 2}
    s = res.runs["coldp"].samples
    assert set(s["gt_via"]) == {"crosswalk"} and s["gt_detail"].str.contains("wikidata:Q").all()
    cw = dict(zip(res.crosswalked["label"], res.crosswalked["node_id"]))
    assert cw["inat:127431"] == "col:542"
    # the fixture's item for Platyptilia gonodactyla carries P. thyellopa's id: the crosswalk says so, and
    # the score follows it (what a wrong identifier does to a score is visible, not hidden)
    assert cw["inat:127432"] == "col:2057"
    assert res.table.filter(pl.col("model") == "good")["hF [inaturalist]"].item() == 1.0
    agree = res.agreement.filter(pl.col("dataset") == "moths").row(0, named=True)
    assert agree["rows"] == 2 and agree["tau"] == pytest.approx(1.0)  # good beats poor under both trees
    out = tmp_path / "out"
    assert (out / "inaturalist" / "leaderboard.md").exists() and (out / "coldp" / "scores.parquet").exists()
    assert pl.read_parquet(out / "sensitivity.parquet").equals(res.table)
    assert "## Agreement of the rankings" in (out / "sensitivity.md").read_text()
    # the tables people read round (no 0.9999999999999998); the Parquet keeps every digit
    for name in ("sensitivity.csv", "sensitivity_agreement.csv", "sensitivity_coverage.csv", "sensitivity.md"):
        assert not re.search(r"\d\.\d{5,}", (out / name).read_text()), name
    assert "| coldp | 10 | 8 | 80.0 |" in (out / "sensitivity.md").read_text()


def test_the_command_line(trees, crosswalk, answers, tmp_path):
    from taxoforge.cli import main

    inat, col = trees
    args = ["score", str(answers), "--taxonomy", str(inat), "--taxonomy", str(col), "--crosswalk", str(crosswalk),
            "--bootstrap", "0", "--no-meteor", "--no-plots", "-o", str(tmp_path / "o"), "--json"]
    r = CliRunner().invoke(main, args)
    # the CoL tree scores 8 of the 10 rows: below the default 90 %, named with every tree's coverage
    assert r.exit_code == 10, r.output
    doc = json.loads(r.stdout)
    assert doc["info"]["scored"] == {"inaturalist": 10, "coldp": 8} and len(doc["sensitivity"]) == 2
    assert "inaturalist 100.0 % (10 of 10 rows); coldp 80.0 % (8 of 10 rows)" in doc["error"]
    assert doc["info"]["coverage"] == {"inaturalist": 1.0, "coldp": 0.8}
    # compared on the 8 rows both trees score, not on 10 against 8
    assert set(doc["sensitivity"][0][k] for k in ("n [inaturalist]", "n [coldp]")) == {4}
    for extra in (["--force"], ["--min-scored", "0.8"]):
        r = CliRunner().invoke(main, [*args, *extra])
        assert r.exit_code == 0, r.output
    assert "warning" not in json.loads(r.stdout)
    r = CliRunner().invoke(main, [*args[:-1], "--force"])
    assert r.exit_code == 0 and "warning (--force): coverage below --min-scored 90 %" in r.output
    r = CliRunner().invoke(main, ["score", str(answers), "--taxonomy", str(inat)])
    assert r.exit_code == 2 and "two trees or more" in r.output
    r = CliRunner().invoke(main, ["score", str(answers), str(inat), "--crosswalk", str(crosswalk)])
    assert r.exit_code == 2 and "--crosswalk needs two trees" in r.output
