"""How a message lists things: a few of them, then how many more — so an error about 600
sample ids stays one readable line, and the count is never lost.

>>> few(["a", "b", "c", "d", "e"])
"'a', 'b', 'c' and 2 more"
>>> few(["x.jsonl:3", "y.jsonl:9"], quote=False)
'x.jsonl:3, y.jsonl:9'
>>> few([], empty="none")
'none'
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["few", "FEW"]

#: How many items a message shows before the count of the rest.
FEW = 3


def few(items: Iterable, n: int = FEW, *, quote: bool = True, empty: str = "", total: int | None = None) -> str:
    """The first ``n`` of ``items``, then ``and K more``.

    Parameters
    ----------
    items : iterable
        What to list (read as far as needed, then counted).
    n : int
        How many to show.
    quote : bool
        Show each with :func:`repr` (ids, names), else as :class:`str` (paths, ``file:line``).
    empty : str
        What an empty list reads as.
    total : int, optional
        How many there are when ``items`` holds only the first of them.

    Returns
    -------
    str
    """
    shown, count = [], 0
    for x in items:
        if count < n:
            shown.append(repr(x) if quote else str(x))
        count += 1
    count = max(count, total or 0)
    if not shown:
        return empty
    rest = count - len(shown)
    return ", ".join(shown) + (f" and {rest:,} more" if rest > 0 else "")
