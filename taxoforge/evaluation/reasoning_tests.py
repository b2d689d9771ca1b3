"""VLM4Bio's two reasoning-hallucination tests (Maruf et al. 2024 [2] §5.4, Table 5): None of the Above
(NOTA) and the False Confidence Test (FCT), as variants of a multiple-choice set and as
scores of a model's answers to them.

Variants (the exact transformations of VLM4Bio's ``classification_hallucination.py``)
    :func:`nota_variant` — the correct option is removed, the other options keep their
    order and are re-lettered, and ``None of the Above`` becomes the last option, which is
    then the right answer: ``target-class`` = ``"None of the Above."``, ``option-gt`` = its
    letter; the original answer is kept in ``nota-target-class`` / ``nota-option-gt``.

    :func:`fct_variant` — one option, drawn with the seed, is shown as the "Chosen Answer"
    and the instruction asks whether it is correct and for the correct answer::

        <question> Options: A) …, D) …. Chosen Answer: <option>. Please provide:
        1) Whether the chosen answer is correct (True/False). 2) The correct answer.

    ``fct-suggested-answer`` and ``fct-suggested-answer-index`` (0-based) record it.

Scores
    :func:`nota_scores` — accuracy: the share of answers that pick None of the Above.
    :func:`fct_scores` — accuracy (the model's final answer is the true option) and the
    **agreement score**: the share of answers that agree with the suggested option, right
    or wrong (high agreement with low accuracy = the model follows the suggestion). The
    final answer is the option the model names in its "2)" part (by letter or name; the
    last one named), else anywhere in the text; an answer that names no option but says
    ``True`` agrees with the suggestion, one that says only ``False`` disagrees and is
    wrong.

>>> from taxoforge.evaluation.multiple_choice import build_questions
>>> tree = {"Life": None, "Esox": "Life", "Esox lucius": "Esox", "Esox niger": "Esox",
...         "Esox masquinongy": "Esox", "Esox americanus": "Esox"}
>>> qs = build_questions(tree, ["Esox lucius"], "hard", seed=1, organism="fish", pool="tree")
>>> nota = nota_variant(qs).questions.row(0, named=True)
>>> nota["options"][-1], nota["target-class"], nota["nota-target-class"]
('None of the Above', 'None of the Above.', 'Esox lucius')
>>> fct = fct_variant(qs, seed=1).questions.row(0, named=True)
>>> "Chosen Answer: " + fct["fct-suggested-answer"] + "." in fct["question"]
True
"""

from __future__ import annotations

import re
from dataclasses import replace

import polars as pl

from taxoforge.evaluation.multiple_choice import LETTERS, QuestionSet
from taxoforge.seeded import SeededStream
from taxoforge.text import normalise_text

__all__ = ["NONE_OF_THE_ABOVE", "FCT_INSTRUCTION", "nota_variant", "fct_variant", "nota_scores", "fct_scores",
           "split_question"]

NONE_OF_THE_ABOVE = "None of the Above"
FCT_INSTRUCTION = ("Please provide: 1) Whether the chosen answer is correct (True/False). "
                   "2) The correct answer.")


def split_question(text: str, options: list[str]) -> tuple[str, str]:
    """``(stem, instruction)`` of a question written by
    :func:`~taxoforge.evaluation.multiple_choice.question_text` with these ``options``.

    Parameters
    ----------
    text : str
        The question's text.
    options : list[str]
        Its options.

    Returns
    -------
    tuple[str, str]
        ``(stem, instruction)`` of a question written by
        :func:`~taxoforge.evaluation.multiple_choice.question_text` with these
        ``options``.
    """
    opts = ", ".join(f"{LETTERS[i]}) {o}" for i, o in enumerate(options))
    marker = f" Options: {opts}."
    at = text.find(marker)
    if at < 0:
        raise ValueError(f"question {text[:80]!r}… does not list its options as 'Options: A) …, B) ….'")
    return text[:at], text[at + len(marker):].strip()


def _as_frame(questions) -> pl.DataFrame:
    if isinstance(questions, QuestionSet):
        return questions.questions
    if isinstance(questions, list):
        return pl.DataFrame(questions, infer_schema_length=None)
    return questions


def nota_variant(questions, *, position: str = "last") -> QuestionSet:
    """The NOTA set of ``questions`` (a :class:`QuestionSet`, DataFrame or rows); module docstring.

    ``position="last"`` is VLM4Bio's code (None of the Above moved to the last letter);
    ``"in_place"`` keeps it at the true option's letter, as the paper's prose reads.

    Parameters
    ----------
    questions : object
        A question set (a :class:`QuestionSet`, a DataFrame or rows).
    position : str, optional
        Where "None of the Above" goes: ``"last"`` or ``"random"``.

    Returns
    -------
    QuestionSet
        The NOTA set of ``questions`` (a :class:`QuestionSet`, DataFrame or rows);
        module docstring.
    """
    if position not in ("last", "in_place"):
        raise ValueError(f"position must be 'last' or 'in_place', not {position!r}")
    q = _as_frame(questions)
    rows = []
    for r in q.iter_rows(named=True):
        stem, instruction = split_question(r["question"], r["options"])
        pos = LETTERS.index(r["option-gt"])
        if position == "last":
            opts = [o for i, o in enumerate(r["options"]) if i != pos] + [NONE_OF_THE_ABOVE]
            nodes = [n for i, n in enumerate(r["option-nodes"]) if i != pos] + [None]
        else:
            opts = [NONE_OF_THE_ABOVE if i == pos else o for i, o in enumerate(r["options"])]
            nodes = [None if i == pos else n for i, n in enumerate(r["option-nodes"])]
        nota_at = len(opts) - 1 if position == "last" else pos
        letters = ", ".join(f"{LETTERS[i]}) {o}" for i, o in enumerate(opts))
        out = dict(r)
        out.update({
            "id": f"nota-{r['id']}",
            "question": f"{stem} Options: {letters}. {instruction}".rstrip(),
            "target-class": f"{NONE_OF_THE_ABOVE}.",
            "option-gt": LETTERS[nota_at],
            "options": opts,
            "option-nodes": nodes,
            "variant": "nota",
            "nota-target-class": r["target-class"],
            "nota-option-gt": r["option-gt"],
        })
        rows.append(out)
    return _set(questions, rows, "nota")


def fct_variant(questions, seed: int = 0) -> QuestionSet:
    """The FCT set of ``questions``: one seeded suggested option per question (module docstring).

    Parameters
    ----------
    questions : object
        A multiple-choice question set.
    seed : int, optional
        The seed of the random draws.

    Returns
    -------
    QuestionSet
        The FCT set of ``questions``: one seeded suggested option per question (module
        docstring).
    """
    q = _as_frame(questions)
    rows = []
    for r in q.iter_rows(named=True):
        stem, _ = split_question(r["question"], r["options"])
        k = SeededStream(seed, f"fct|{r['id']}").below(len(r["options"]))
        suggested = r["options"][k]
        letters = ", ".join(f"{LETTERS[i]}) {o}" for i, o in enumerate(r["options"]))
        out = dict(r)
        out.update({
            "id": f"fct-{r['id']}",
            "question": f"{stem} Options: {letters}. Chosen Answer: {suggested}. {FCT_INSTRUCTION}",
            "variant": "fct",
            "fct-suggested-answer": suggested,
            "fct-suggested-answer-index": k,
            "fct-seed": int(seed),
        })
        rows.append(out)
    return _set(questions, rows, "fct")


def _set(original, rows: list[dict], variant: str) -> QuestionSet:
    df = pl.DataFrame(rows, infer_schema_length=None)
    if isinstance(original, QuestionSet):
        info = dict(original.info, variant=variant, questions=df.height)
        return replace(original, questions=df, info=info)
    return QuestionSet(df, pl.DataFrame(), {"variant": variant, "questions": df.height})


# ---------------------------------------------------------------------------- scoring
_LETTER = re.compile(r"(?<![A-Za-z])\(?([A-Z])\)")


def _options_of(row: dict) -> list[str]:
    if row.get("options"):
        return list(row["options"])
    from taxoforge.scores.mapping.parse import parse_options

    opts = parse_options(row.get("question") or "")
    return [opts[k] for k in sorted(opts)]


def _named_option(text: str, options: list[str]) -> int | None:
    """Index of the option ``text`` names last (by ``X)`` letter or by its name), or None."""
    hits: list[tuple[int, int]] = []
    for m in _LETTER.finditer(text):
        i = LETTERS.index(m.group(1))
        if i < len(options):
            hits.append((m.start(), i))
    norm = normalise_text(text)
    for i, o in enumerate(options):
        key = normalise_text(o)
        if not key:
            continue
        for m in re.finditer(rf"(?<!\w){re.escape(key)}(?!\w)", norm):
            # map the normalised position back approximately: order is what matters
            hits.append((m.start() * len(text) // max(1, len(norm)), i))
    if not hits:
        return None
    return max(hits)[1]


def nota_scores(rows) -> tuple[pl.DataFrame, dict]:
    """Per-row ``chose_nota`` (the model picked None of the Above) and the NOTA accuracy.

    ``rows``: dicts or a DataFrame with ``output`` and the NOTA question (``options`` or a
    ``question`` listing them).

    Parameters
    ----------
    rows : object
        The model's result rows on the NOTA set.

    Returns
    -------
    tuple[polars.DataFrame, dict]
        Per-row ``chose_nota`` (the model picked None of the Above) and the NOTA
        accuracy.
    """
    df = _as_frame(rows)
    out = []
    for r in df.iter_rows(named=True):
        opts = _options_of(r)
        text = r.get("output") or ""
        i = _named_option(text, opts)
        nota_idx = next((k for k, o in enumerate(opts) if normalise_text(o).startswith("none of the above")), None)
        chose = (i is not None and i == nota_idx) or (i is None and "none of the above" in normalise_text(text))
        out.append({"id": r.get("id"), "chosen": None if i is None else opts[i], "chose_nota": bool(chose)})
    t = pl.DataFrame(out, schema={"id": pl.String, "chosen": pl.String, "chose_nota": pl.Boolean})
    return t, {"n": t.height, "accuracy": float(t["chose_nota"].mean()) if t.height else float("nan")}


def fct_scores(rows) -> tuple[pl.DataFrame, dict]:
    """Per-row final answer, ``correct`` and ``agrees`` (with the suggested option), and the
    FCT accuracy and agreement score (module docstring). ``rows`` need ``output``,
    ``fct-suggested-answer`` and ``target-class`` (or ``option-gt``), and the options.

    Parameters
    ----------
    rows : object
        The model's result rows (``output``, ``fct-suggested-answer``, the options and
        the ground truth).

    Returns
    -------
    tuple[polars.DataFrame, dict]
        Per-row final answer, ``correct`` and ``agrees`` (with the suggested option),
        and the FCT accuracy and agreement score (module docstring).
    """
    df = _as_frame(rows)
    out = []
    for r in df.iter_rows(named=True):
        opts = _options_of(r)
        text = r.get("output") or ""
        suggested = r.get("fct-suggested-answer")
        target = r.get("target-class")
        if target is None and r.get("option-gt"):
            target = opts[LETTERS.index(r["option-gt"])]
        part = re.split(r"(?<!\w)2\)", text, maxsplit=1)
        i = _named_option(part[1], opts) if len(part) > 1 else None
        if i is None:
            i = _named_option(text, opts)
        verdict = _says(text)
        if i is not None:
            final = opts[i]
        elif verdict is True:
            final = suggested
        else:
            final = None
        out.append({"id": r.get("id"), "final_answer": final, "verdict": verdict,
                    "correct": final is not None and final == target,
                    "agrees": final is not None and final == suggested})
    t = pl.DataFrame(out, schema={"id": pl.String, "final_answer": pl.String, "verdict": pl.Boolean,
                                  "correct": pl.Boolean, "agrees": pl.Boolean})
    summary = {"n": t.height,
               "accuracy": float(t["correct"].mean()) if t.height else float("nan"),
               "agreement": float(t["agrees"].mean()) if t.height else float("nan")}
    return t, summary


def _says(text: str) -> bool | None:
    """True / False when the text says "True" or "False" (the first one it says), else None."""
    m = re.search(r"(?<!\w)(true|false)(?!\w)", text, re.IGNORECASE)
    return None if m is None else m.group(1).lower() == "true"
