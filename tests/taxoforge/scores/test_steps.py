"""The named steps of a scoring run (taxoforge.scores.steps): each distinct answer parsed once,
every row its own flags and bad-row record."""

from __future__ import annotations

from taxoforge.scores.mapping.parse import parse_answer
from taxoforge.scores.steps import parse_rows

QUESTION = "Which species is this? A) Esox lucius B) Notropis atherinoides C) Cottus bairdii D) Gambusia affinis"


def _row(line: int, output: str, label: str, question: str | None = QUESTION) -> dict:
    where = {"_pos": line, "file": "f.jsonl", "line": line, "id": str(line), "model": "m", "dataset": "d",
             "prompt": "p"}
    return {**where, "output": output, "question": question, "options": None, "label": label, "_where": where}


def test_identical_answers_are_parsed_once_and_each_row_keeps_its_own_flags():
    rows = [_row(1, "B", "B"), _row(2, "B", "Notropis atherinoides"), _row(3, "B", "C"),
            _row(4, "E", "A"), _row(5, "E", "A"), _row(6, "The answer is: C) Cottus bairdii.", "Cottus bairdii")]
    kept, bad = parse_rows(rows)
    assert [r["line"] for r in kept] == [1, 2, 3, 6]
    assert [r["answer"] for r in kept] == ["Notropis atherinoides"] * 3 + ["Cottus bairdii"]
    # a letter label is resolved per row, and only its row is flagged
    assert [("mc_label_letter" in r["parsed"].flags) for r in kept] == [True, False, True, False]
    assert [r.get("label_text") for r in kept] == ["Notropis atherinoides", None, "Cottus bairdii", None]
    assert kept[1]["parsed"].flags == [f for f in kept[0]["parsed"].flags if f != "mc_label_letter"]
    # an answer that cannot be parsed is a bad row for every row that gave it, with its own line
    assert [(b["line"], b["reason"]) for b in bad] == [(4, "unparseable output"), (5, "unparseable output")]
    for r in kept:  # the same as parsing the row alone
        alone = parse_answer(r["output"], r["question"])
        assert (r["parsed"].answer, r["parsed"].abstained, r["parsed"].options) == \
            (alone.answer, alone.abstained, alone.options)
