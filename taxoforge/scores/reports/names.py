"""Model names as a paper prints them: harness prefixes shortened by one rule, a map for the
rest, and names wrapped to the width of a table column or a figure's legend.

**The rule** (:func:`short_name`). lmms-eval names a model's folder after its Hugging Face id
with ``/`` written as ``__`` (``lmms-lab/llava-onevision-qwen2-72b-ov-chat`` →
``lmms-lab__llava-onevision-qwen2-72b-ov-chat``: its ``sanitize_model_name``), and an id given
by hand keeps its ``/``. The organisation is not the model: a name is shown from after its last
``__`` or ``/`` (``llava-onevision-qwen2-72b-ov-chat``). Names without either (VLMEvalKit's
``InternVL2_5-78B-MPO``, ``llava_v1.5_7b``) are shown as they are. When two models of one table
would show the same name, both keep their whole names.

**A map** (:func:`read_display_names`, ``--display-names FILE``): a CSV or TSV file of two
columns, the model's name as the run has it and the name to show (``Qwen__Qwen2-VL-72B-Instruct,
Qwen2-VL 72B``); an optional header ``model,display``. A map's name wins over the rule.

Display names are for what is printed — the LaTeX tables and the figures. ``scores.parquet``,
the CSV and Markdown tables keep every name exactly as given, and the LaTeX files list the names
they shortened in a comment, so a printed name can always be traced back.

Examples
--------
>>> short_name("lmms-lab__llava-onevision-qwen2-72b-ov-chat")
'llava-onevision-qwen2-72b-ov-chat'
>>> display_names(["org__m1", "other__m1", "Qwen/Qwen2-VL-7B", "llava_v1.5_7b"])
{'org__m1': 'org__m1', 'other__m1': 'other__m1', 'Qwen/Qwen2-VL-7B': 'Qwen2-VL-7B', 'llava_v1.5_7b': 'llava_v1.5_7b'}
>>> wrap_name("llava-onevision-qwen2-72b-ov-chat", 18)
['llava-onevision-', 'qwen2-72b-ov-chat']
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

from taxoforge.files.records import RecordFileError, read_csv_records

__all__ = ["short_name", "display_names", "read_display_names", "wrap_name", "DisplayNamesError"]

_BREAK_AFTER = re.compile(r"(?<=[-_/.\s])")


class DisplayNamesError(RecordFileError):
    """A display-names file that cannot be used; the message names the file and line."""


def short_name(name: str) -> str:
    """``name`` from after its last ``__`` or ``/`` (module docstring), else as it is.

    Parameters
    ----------
    name : str
        A model's name.

    Returns
    -------
    str
    """
    text = str(name)
    tail = re.split(r"__|/", text)[-1]
    return tail if tail.strip() else text


def display_names(names: Iterable[str], mapping: Mapping[str, str] | None = None) -> dict[str, str]:
    """The name each model of a table is shown with: ``mapping``'s, else :func:`short_name`'s,
    unless two models would then show the same name (both keep their whole names).

    Parameters
    ----------
    names : iterable of str
        The models' names.
    mapping : mapping, optional
        Name → display name (:func:`read_display_names`).

    Returns
    -------
    dict
        Name → display name, in the order given.
    """
    mapping = mapping or {}
    names = list(dict.fromkeys(str(n) for n in names))
    shown = {n: mapping.get(n, short_name(n)) for n in names}
    clash = Counter(shown.values())
    return {n: (s if clash[s] == 1 or n in mapping else n) for n, s in shown.items()}


def read_display_names(path: str | os.PathLike) -> dict[str, str]:
    """A display-names file (module docstring): CSV, or TSV when it is named ``.tsv`` or its
    first line holds a tab.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    dict
        Model name → display name.

    Raises
    ------
    DisplayNamesError
        A row without two non-empty fields, a model named twice, or a file that cannot be read;
        the message names the file and line.
    """
    p = Path(path)
    try:
        with open(p, encoding="utf-8-sig", errors="replace") as fh:
            first = fh.readline()
        delimiter = "\t" if p.suffix.lower() == ".tsv" or "\t" in first else ","
        rows, lines = read_csv_records(p, delimiter, header=False, error=DisplayNamesError)
    except OSError as e:
        raise DisplayNamesError(f"{p}: cannot read the display names ({e})") from None
    except RecordFileError as e:
        raise DisplayNamesError(f"{e}; a display-names file holds two fields a line, the model's name and the name "
                                "to show") from None
    out: dict[str, str] = {}
    where: dict[str, int] = {}
    for k, (row, line) in enumerate(zip(rows, lines)):
        cells = [v.strip() if isinstance(v, str) else v for v in row.values()]
        cells = [c for c in cells if c not in (None, "")]
        if k == 0 and [str(c).lower() for c in cells] in (["model", "display"], ["name", "display"],
                                                            ["model", "display_name"]):
            continue
        if not cells:
            continue
        if len(cells) != 2:
            raise DisplayNamesError(f"{p}:{line}: expected two fields, the model's name and the name to show "
                                    f"(e.g. 'Qwen__Qwen2-VL-72B-Instruct,Qwen2-VL 72B'); got {len(cells)}: {cells!r:.120}")
        name, shown = str(cells[0]), str(cells[1])
        if name in out:
            raise DisplayNamesError(f"{p}:{line}: {name!r} is already named on line {where[name]}")
        out[name], where[name] = shown, line
    return out


def wrap_name(name: str, width: int) -> list[str]:
    """``name`` in lines of at most ``width`` characters, broken after a hyphen, underscore,
    slash, full stop or space where it can, else inside a word.

    Parameters
    ----------
    name : str
    width : int
        The most characters a line holds (at least 4).

    Returns
    -------
    list of str
        At least one line; the lines joined give ``name`` back (a space at a break is kept at the
        end of its line).
    """
    width = max(int(width), 4)
    parts = [p for p in _BREAK_AFTER.split(str(name)) if p]
    lines: list[str] = []
    cur = ""
    for part in parts:
        while len(part) > width:  # a piece longer than a line: cut it
            room = width - len(cur)
            if room < 2:
                lines.append(cur)
                cur, room = "", width
            lines.append(cur + part[:room])
            cur, part = "", part[room:]
        if len(cur) + len(part.rstrip()) > width and cur:
            lines.append(cur)
            cur = ""
        cur += part
    if cur or not lines:
        lines.append(cur)
    return [ln for ln in lines if ln] or [""]
