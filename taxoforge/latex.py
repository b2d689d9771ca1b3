r"""LaTeX tables: text escaped for LaTeX and a ``booktabs`` tabular from rows of cells.

:func:`latex_escape` makes any text safe in a LaTeX document (text mode): the ten special
characters ``\ & % $ # _ { } ~ ^`` and ``< > |`` (which the default OT1 font encoding
prints as other glyphs) become commands; a line break becomes a space. One pass, so an
escape is never escaped again.

>>> print(latex_escape(r"50% of C&O_x {a} ~ $5 #1 \ ^"))
50\% of C\&O\_x \{a\} \textasciitilde{} \$5 \#1 \textbackslash{} \textasciicircum{}
>>> print(latex_table(["model", "hF"], [["a\\_b", "0.500"]], align="lr"))
\begin{tabular}{lr}
\toprule
model & hF \\
\midrule
a\_b & 0.500 \\
\bottomrule
\end{tabular}
<BLANKLINE>
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["latex_escape", "latex_table"]

_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
    "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}", ">": r"\textgreater{}",
    "|": r"\textbar{}", "\n": " ", "\r": " ", "\t": " ",
}
_RX = re.compile("|".join(re.escape(k) for k in _SPECIAL))


def latex_escape(text) -> str:
    """``text`` (any value; ``None`` → empty) safe in LaTeX text mode (module docstring).

    Parameters
    ----------
    text : object
        The text.

    Returns
    -------
    str
        ``text`` (any value; ``None`` → empty) safe in LaTeX text mode (module
        docstring).
    """
    if text is None:
        return ""
    return _RX.sub(lambda m: _SPECIAL[m.group(0)], str(text))


def latex_table(header: Sequence[str], rows: Sequence[Sequence[str]], *, align: str | None = None,
                escape_header: bool = True) -> str:
    r"""A ``booktabs`` tabular (``\usepackage{booktabs}``). ``rows`` are cells already in
    LaTeX (escape text cells with :func:`latex_escape`); ``header`` is escaped unless
    ``escape_header`` is false; ``align`` one letter per column (default all ``l``).

    Parameters
    ----------
    header : Sequence[str]
        The column names, as plain text (escaped unless ``escape_header`` is false).
    rows : Sequence[Sequence[str]]
        The cells, already in LaTeX (escape text cells with :func:`latex_escape`).
    align : str, optional
        One column specifier per column (``l``, ``r``, ``c``); default all ``l``.
    escape_header : bool, optional
        Whether the header cells are escaped.

    Returns
    -------
    str
        A ``booktabs`` tabular (``\usepackage{booktabs}``).
    """
    align = align or "l" * len(header)
    if len(align) != len(header):
        raise ValueError(f"align {align!r} has {len(align)} columns, the header {len(header)}")
    head = [latex_escape(h) if escape_header else h for h in header]
    lines = [f"\\begin{{tabular}}{{{align}}}", "\\toprule", " & ".join(head) + " \\\\", "\\midrule"]
    for r in rows:
        if len(r) != len(header):
            raise ValueError(f"a row has {len(r)} cells, the header {len(header)}")
        lines.append(" & ".join(r) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"
