"""Tests of taxoforge.scores.memos: what a repeat call reads back is what parsing gave."""

import json

from taxoforge.files.memo import ContentMemo
from taxoforge.scores.mapping.parse import UnparseableAnswer, parse_answer
from taxoforge.scores.memos import parse_table, parsed_from_memo


def test_parses_read_back_equal_what_parsing_gave_each_with_options_of_its_own(tmp_path):
    options = json.dumps({"A": "Turdus merula", "B": "Parus major", "C": "none of the above"})
    keys = [("B", "Which bird?", options), ("(A)", "Which bird?", options), ("Parus major", None, None),
            ("I cannot tell", None, None)]
    parsed = {k: parse_answer(k[0], k[1], options=json.loads(k[2]) if k[2] else None) for k in keys}
    parsed[("", None, None)] = UnparseableAnswer("empty output")
    memo = ContentMemo("parsed-answers-test", {"v": 1}, ["output", "question", "options_given"], cache_dir=tmp_path)
    memo.save(parse_table(parsed))
    back = parsed_from_memo(ContentMemo("parsed-answers-test", {"v": 1}, ["output", "question", "options_given"],
                                        cache_dir=tmp_path), [*keys, ("", None, None), ("never seen", None, None)])
    assert set(back) == set(parsed)  # what was never stored is not given back
    for k in keys:
        assert back[k] == parsed[k]
    assert isinstance(back[("", None, None)], UnparseableAnswer) and str(back[("", None, None)]) == "empty output"
    a, b = back[keys[0]].options, back[keys[1]].options  # the same options' text: equal, never one shared dict
    assert a == b == {"A": "Turdus merula", "B": "Parus major", "C": "none of the above"} and a is not b
    a["A"] = "changed"
    assert b["A"] == "Turdus merula"
