"""Markdown tables: the one renderer behind every table a person reads (leaderboards, the
Dagster UI's metadata, check results, benchmark reports).

>>> import polars as pl
>>> print(markdown_table(pl.DataFrame({"model": ["a|b"], "hF": [0.5]})))
| model | hF |
|---|---:|
| a\\|b | 0.5 |
>>> print(markdown_cell("<img src=x onerror=alert(1)> *llava* [x](http://e) _v1_ gpt_4o"))
\\<img src=x onerror=alert(1)\\> \\*llava\\* \\[x\\](http://e) \\_v1\\_ gpt_4o
>>> print(markdown_table(pl.DataFrame({"n": [1, 2, 3]}), max_rows=2, align_numeric=False))
| n |
|---|
| 1 |
| 2 |
<BLANKLINE>
… 1 more rows
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import polars as pl

__all__ = ["markdown_table", "markdown_cell", "markdown_escape"]

# Characters that start Markdown or HTML markup inside a table cell: backslash-escaped
# (CommonMark lets any ASCII punctuation be escaped), so a name is always shown as written.
# An underscore only where it can open or close emphasis (not inside a word: gpt_4o stays).
_MARKUP = re.compile(r"[\\`*\[\]<>&|~!]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")


def markdown_escape(text: str) -> str:
    """``text`` shown as written in Markdown (GitHub's, the Dagster UI's) and in the HTML it
    renders to: the characters of emphasis, code, links, images, inline HTML, entities,
    strikethrough and table cells (``\\ ` * [ ] < > & | ~ !`` and an ``_`` at a word's edge)
    are backslash-escaped; line breaks become spaces. A model named ``<script>…`` or
    ``[x](http://…)`` is text, never markup.

    Parameters
    ----------
    text : str

    Returns
    -------
    str

    Examples
    --------
    >>> print(markdown_escape("a*b* <b>&amp; snake_case"))
    a\\*b\\* \\<b\\>\\&amp; snake_case
    """
    return _MARKUP.sub(lambda m: "\\" + m.group(0), str(text).replace("\r", " ").replace("\n", " "))


def markdown_cell(value: Any, max_chars: int | None = None) -> str:
    """One cell's text: ``None`` → empty, lists joined with ", ", markup escaped
    (:func:`markdown_escape`), newlines folded to spaces, cut to ``max_chars`` (before
    escaping, so an escape is never cut in half).

    Parameters
    ----------
    value : Any
        Any value.
    max_chars : int, optional
        Longest cell text (before escaping); longer text is cut.

    Returns
    -------
    str
        The cell's text.
    """
    if value is None:
        s = ""
    elif isinstance(value, (list, tuple)):
        s = ", ".join(map(str, value))
    else:
        s = str(value)
    s = s.replace("\r", " ").replace("\n", " ")
    return markdown_escape(s[:max_chars] if max_chars is not None else s)


def markdown_table(
    table: pl.DataFrame | Sequence[Sequence[Any]],
    *,
    columns: Sequence[str] | None = None,
    max_rows: int | None = None,
    format_cell: Callable[[str, Any], str] | None = None,
    align_numeric: bool = True,
    empty: str | None = None,
    more_rows: str = "\n… {n} more rows",
    right_align: Sequence[str] | None = None,
) -> str:
    """A GitHub-flavoured Markdown table of ``table``.

    Parameters
    ----------
    table
        A polars DataFrame, or rows (sequences of values) with ``columns`` naming them.
    columns
        Column names when ``table`` is a list of rows (ignored for a DataFrame).
    max_rows
        Show at most this many rows; a line ``more_rows`` (``{n}``: rows left out) follows.
    format_cell
        ``format_cell(column, value) -> str``; default :func:`markdown_cell`.
    align_numeric
        Right-align numeric columns of a DataFrame (``---:``).
    empty
        Text returned instead of a header-only table when there are no rows (default: the
        header-only table).
    right_align
        The columns to right-align (default: the numeric columns of a DataFrame, see
        ``align_numeric``; none for rows).
    more_rows : str, optional
        A line saying how many rows were left out, or None for the default one.

    Returns
    -------
    str
        A GitHub-flavoured Markdown table of ``table``.
    """
    if isinstance(table, pl.DataFrame):
        cols = list(table.columns)
        numeric = [align_numeric and table[c].dtype.is_numeric() for c in cols]
        total = table.height
        rows = (table.head(max_rows) if max_rows is not None else table).iter_rows()
    else:
        if columns is None:
            raise ValueError("markdown_table: rows given without column names")
        cols = list(columns)
        numeric = [False] * len(cols)
        total = len(table)
        rows = table[:max_rows] if max_rows is not None else table
    if right_align is not None:
        numeric = [c in set(right_align) for c in cols]
    if total == 0 and empty is not None:
        return empty
    fmt = format_cell or (lambda _c, v: markdown_cell(v))
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
    lines += ["| " + " | ".join(fmt(c, v) for c, v in zip(cols, row)) + " |" for row in rows]
    if max_rows is not None and total > max_rows:
        lines.append(more_rows.format(n=f"{total - max_rows:,}"))
    return "\n".join(lines)
