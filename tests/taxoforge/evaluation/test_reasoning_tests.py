"""NOTA and FCT variants (VLM4Bio's transformations) and their scores, by hand and as properties."""

from __future__ import annotations

import json

import polars as pl
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from taxoforge.cli import main
from taxoforge.evaluation import multiple_choice as mc
from taxoforge.evaluation.reasoning_tests import fct_scores, fct_variant, nota_scores, nota_variant, split_question
from tests.taxoforge.evaluation.conftest import toy_tables

STEM = "What is the scientific name of the fish in the image?"
INSTR = "Write the answer after writing 'The answer is: '."


def _one(options, gt):
    q = mc.question_text(options, organism="fish")
    return pl.DataFrame([{"id": "q1", "question": q, "target-class": options["ABCD".index(gt)], "option-gt": gt,
                          "options": options, "option-nodes": [f"n{i}" for i in range(len(options))]}])


def test_nota_replaces_the_answer_moves_nota_last_and_reletters():
    q = _one(["Esox lucius", "Notropis atherinoides", "Notropis hudsonius", "Gambusia affinis"], "B")
    r = nota_variant(q).questions.row(0, named=True)
    assert r["question"] == (f"{STEM} Options: A) Esox lucius, B) Notropis hudsonius, C) Gambusia affinis, "
                             f"D) None of the Above. {INSTR}")
    assert (r["target-class"], r["option-gt"]) == ("None of the Above.", "D")
    assert (r["nota-target-class"], r["nota-option-gt"]) == ("Notropis atherinoides", "B")
    assert r["option-nodes"] == ["n0", "n2", "n3", None]
    inplace = nota_variant(q, position="in_place").questions.row(0, named=True)
    assert inplace["options"] == ["Esox lucius", "None of the Above", "Notropis hudsonius", "Gambusia affinis"]
    assert inplace["option-gt"] == "B" and inplace["nota-option-gt"] == "B"


def test_fct_adds_the_chosen_answer_and_vlm4bio_instruction():
    q = _one(["Esox lucius", "Notropis atherinoides", "Notropis hudsonius", "Gambusia affinis"], "D")
    r = fct_variant(q, seed=3).questions.row(0, named=True)
    k = r["fct-suggested-answer-index"]
    assert r["fct-suggested-answer"] == r["options"][k]
    assert r["question"] == (f"{STEM} Options: A) Esox lucius, B) Notropis atherinoides, C) Notropis hudsonius, "
                             f"D) Gambusia affinis. Chosen Answer: {r['options'][k]}. Please provide: 1) Whether the "
                             "chosen answer is correct (True/False). 2) The correct answer.")
    # seeded: same seed same suggestion
    assert fct_variant(q, seed=3).questions["fct-suggested-answer"].to_list() == [r["fct-suggested-answer"]]


def test_fct_scores_by_hand():
    opts = ["Esox lucius", "Notropis atherinoides", "Notropis hudsonius", "Gambusia affinis"]
    base = {"options": opts, "target-class": "Gambusia affinis", "fct-suggested-answer": "Esox lucius"}
    rows = [
        {**base, "id": "agree-wrong", "output": "1) True 2) A) Esox lucius"},
        {**base, "id": "right", "output": "1) False. 2) The correct answer is D) Gambusia affinis."},
        {**base, "id": "true-only", "output": "True"},
        {**base, "id": "false-only", "output": "False, I cannot say which."},
        {**base, "id": "by-name", "output": "The chosen answer is wrong; it is Notropis hudsonius."},
        {**base, "id": "right-suggested", "fct-suggested-answer": "Gambusia affinis", "output": "1) True 2) Gambusia affinis"},
    ]
    t, s = fct_scores(rows)
    got = {r["id"]: (r["final_answer"], r["correct"], r["agrees"]) for r in t.to_dicts()}
    assert got == {
        "agree-wrong": ("Esox lucius", False, True),
        "right": ("Gambusia affinis", True, False),
        "true-only": ("Esox lucius", False, True),
        "false-only": (None, False, False),
        "by-name": ("Notropis hudsonius", False, False),
        "right-suggested": ("Gambusia affinis", True, True),
    }
    assert s == {"n": 6, "accuracy": 2 / 6, "agreement": 3 / 6}


def test_nota_scores_by_hand():
    q = nota_variant(_one(["Esox lucius", "Notropis atherinoides", "Notropis hudsonius", "Gambusia affinis"], "A"))
    r = q.questions.row(0, named=True)
    outs = ["The answer is: D) None of the Above.", "The answer is: A) Notropis atherinoides", "none of the above",
            "I think it is Gambusia affinis"]
    t, s = nota_scores([{**r, "output": o} for o in outs])
    assert t["chose_nota"].to_list() == [True, False, True, False]
    assert s["accuracy"] == 0.5


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(2, 6), gt=st.integers(0, 5))
def test_variants_keep_the_options_and_the_truth(seed, n, gt):
    gt = gt % n
    opts = [f"Genus{i} species{i}" for i in range(n)]
    q = pl.DataFrame([{"id": "q", "question": mc.question_text(opts), "target-class": opts[gt],
                       "option-gt": mc.LETTERS[gt], "options": opts, "option-nodes": opts}])
    nota = nota_variant(q).questions.row(0, named=True)
    assert nota["options"][:-1] == [o for o in opts if o != opts[gt]] and len(nota["options"]) == n
    assert split_question(nota["question"], nota["options"])[1] == INSTR.replace("fish", "organism")
    fct = fct_variant(q, seed=seed).questions.row(0, named=True)
    assert fct["options"] == opts and fct["fct-suggested-answer"] in opts
    # a model that always repeats the suggestion agrees 100 % and is right exactly when it is the truth
    t, s = fct_scores([{**fct, "output": f"1) True 2) {fct['fct-suggested-answer']}"}])
    assert s["agreement"] == 1.0 and s["accuracy"] == float(fct["fct-suggested-answer"] == opts[gt])


def test_cli_build_check_and_score(tmp_path):
    tree_dir = tmp_path / "tree"
    toy_tables().write(tree_dir)
    labels = tmp_path / "labels.csv"
    labels.write_text("image-path,scientific_name\na.jpg,Esox lucius\nb.jpg,Umbra limi\nc.jpg,Felis catus\n")
    out = tmp_path / "q.jsonl"
    r = CliRunner().invoke(main, ["mc", "build", str(tree_dir), str(labels), "--difficulty", "easy", "--options", "3",
                                  "--seed", "7", "--pool", "tree", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "2 question(s) written" in r.output and "1 ground truth(s) got no question" in r.output
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["image-path"] for x in rows] == ["a.jpg", "b.jpg"]
    skipped = [json.loads(x) for x in (tmp_path / "q.skipped.jsonl").read_text().splitlines()]
    assert skipped[0]["line"] == 4 and "Felis catus" in skipped[0]["detail"]
    r2 = CliRunner().invoke(main, ["mc", "build", str(tree_dir), str(labels), "--difficulty", "easy", "--options", "3",
                                   "--seed", "7", "--pool", "tree", "-o", str(tmp_path / "q2.jsonl")])
    assert r2.exit_code == 0 and (tmp_path / "q2.jsonl").read_bytes() == out.read_bytes()
    assert CliRunner().invoke(main, ["mc", "check", str(tree_dir), str(out)]).exit_code == 0
    info = json.loads((tmp_path / "q.info.json").read_text())
    assert info["pool"] == {"kind": "tree", "nodes": 27} and info["resolution"]["unmatched"] == 1
    assert [x["ground-truth-method"] for x in rows] == ["exact", "exact"]
    shallow = CliRunner().invoke(main, ["mc", "build", str(tree_dir), str(labels), "--difficulty", "hard", "-o",
                                        str(tmp_path / "h.jsonl")])
    assert shallow.exit_code == 1 and "no hard question can be built" in shallow.output
    fct = tmp_path / "fct.jsonl"
    assert CliRunner().invoke(main, ["mc", "build", str(tree_dir), str(labels), "--difficulty", "easy", "--options", "3",
                                     "--variant", "fct", "--pool", "tree", "-o", str(fct)]).exit_code == 0
    answered = tmp_path / "answered.jsonl"
    answered.write_text("".join(json.dumps({**json.loads(x), "output": "1) True"}) + "\n"
                                for x in fct.read_text().splitlines()))
    s = CliRunner().invoke(main, ["mc", "score", str(answered), "--json"])
    assert s.exit_code == 0, s.output
    assert json.loads(s.output)["fct"]["agreement"] == 1.0
