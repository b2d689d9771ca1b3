"""Markdown cells show names as written: no emphasis, code, links, images, inline HTML,
entities, strikethrough or broken table cells from a model's or dataset's name."""

from __future__ import annotations

import pytest

from taxoforge.markdown import markdown_cell, markdown_escape, markdown_table


@pytest.mark.parametrize("name,escaped", [
    ("<script>alert(1)</script>", "\\<script\\>alert(1)\\</script\\>"),
    ("**gpt**", "\\*\\*gpt\\*\\*"),
    ("_v2_", "\\_v2\\_"),
    ("snake_case_model", "snake_case_model"),
    ("[x](javascript:alert(1))", "\\[x\\](javascript:alert(1))"),
    ("![i](http://h/i.png)", "\\!\\[i\\](http://h/i.png)"),
    ("a|b", "a\\|b"),
    ("`code`", "\\`code\\`"),
    ("&lt;", "\\&lt;"),
    ("~~gone~~", "\\~\\~gone\\~\\~"),
    ("back\\slash", "back\\\\slash"),
    ("two\nlines", "two lines"),
    ("llava-v1.5-7b", "llava-v1.5-7b"),
])
def test_markup_is_escaped(name, escaped):
    assert markdown_escape(name) == escaped
    assert markdown_cell(name) == escaped


def test_a_table_keeps_its_columns_whatever_the_names():
    md = markdown_table([["a|b|c", 1]], columns=["model", "n"])
    assert md.splitlines()[2] == "| a\\|b\\|c | 1 |"
    assert markdown_cell("x" * 10 + "|", max_chars=10) == "x" * 10
