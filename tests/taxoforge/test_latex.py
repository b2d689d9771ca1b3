"""LaTeX escaping, checked by a real LaTeX parser (pylatexenc): whatever the text, its
escape is plain text and text macros — no math mode, no comment, no alignment tab, no
active character, no open group — and reads back as the text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pylatexenc.latex2text import LatexNodes2Text
from pylatexenc.latexwalker import (LatexCharsNode, LatexGroupNode, LatexMacroNode, LatexWalker)

from taxoforge.latex import latex_escape, latex_table

HOSTILE = ["50% of C&O_x", "{a} ~ $5 #1", "back\\slash", "a^b", "x < y > z | w", "line\nbreak\ttab",
           "\\textbf{bold}", "$\\alpha$", "% comment", "a & b \\\\ c", "naïve café", "}{", "_\\_"]


def _nodes(tex: str):
    nodes, _, _ = LatexWalker(tex, tolerant_parsing=False).get_latex_nodes()
    return nodes


def _plain(nodes) -> bool:
    """Only characters, macros and empty groups (the ``{}`` after ``\\textbackslash``)."""
    for n in nodes:
        if isinstance(n, LatexGroupNode):
            if n.nodelist:
                return False
        elif isinstance(n, LatexCharsNode):
            if any(c in n.chars for c in "_^#$&%~{}\\"):  # characters LaTeX treats specially in text
                return False
        elif not isinstance(n, LatexMacroNode):
            return False
        if isinstance(n, LatexMacroNode) and n.macroname in ("textbf", "alpha", "item", "\\"):
            return False
    return True


@pytest.mark.parametrize("text", HOSTILE)
def test_escaped_text_is_plain_text_to_a_latex_parser(text):
    tex = latex_escape(text)
    assert _plain(_nodes(tex)), tex
    # what pylatexenc can render reads back as the text (it does not know \textless & co.)
    known = text.replace("\n", " ").replace("\t", " ")
    if not any(c in known for c in "<>|^"):
        assert LatexNodes2Text().latex_to_text(tex) == known


@given(st.text(alphabet=st.sampled_from(list("ab _%&$#{}~^\\<>|\n")), max_size=30))
def test_any_text_escapes_to_plain_text(text):
    assert _plain(_nodes(latex_escape(text)))


def test_escaping_is_one_pass_and_none_is_empty():
    assert latex_escape("\\%") == r"\textbackslash{}\%"
    assert latex_escape(None) == "" and latex_escape(3.5) == "3.5"


def test_table_rows_and_header_must_agree():
    tex = latex_table(["model", "hF"], [[latex_escape("m_1 & co"), "0.5"]], align="lr")
    assert r"m\_1 \& co & 0.5 \\" in tex and tex.startswith(r"\begin{tabular}{lr}")
    with pytest.raises(ValueError, match="2 cells"):
        latex_table(["a", "b", "c"], [["1", "2"]])
    with pytest.raises(ValueError, match="align"):
        latex_table(["a"], [["1"]], align="lr")
