"""Question sets: the ground truths resolved, one question row per ground truth, the set assembled.

* :func:`read_ground_truths` — the ground truths (a label list, or a table with a label
  column whose other columns are carried into the questions) resolved to nodes by the one
  label resolver (:func:`taxoforge.links.tree_labels.resolve_nodes`), exactly as scoring
  resolves them: a label that matches no node or several is skipped with the resolver's
  reason, never matched some other way.
* :class:`SetSpec` (what every question of a set shares) and :class:`Draft` (one question's
  answer and distractors) → :func:`question_row` → :func:`question_set`.
* :class:`QuestionSet` holds the questions, the skipped ground truths and ``info``.

Every question records how its ground truth was resolved (``ground-truth``, the label as
given; ``ground-truth-method``, :data:`taxoforge.links.resolve.METHODS`;
``ground-truth-detail``), and ``info`` counts the resolutions and records the distractor pool.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from taxoforge.evaluation.multiple_choice.pools import DistractorPool
from taxoforge.files import write_text_atomic
from taxoforge.files.labels import LABEL_COLUMNS
from taxoforge.links.resolve import METHODS
from taxoforge.links.tree_labels import resolve_nodes
from taxoforge.trees.taxonomy import Taxonomy

__all__ = ["DIFFICULTIES", "LETTERS", "QUESTION", "PROBE_QUESTION", "INSTRUCTION", "TreeTooShallow", "QuestionSet",
           "question_text", "GroundTruths", "read_ground_truths", "SetSpec", "Draft", "question_row", "question_set",
           "skipped_frame", "no_question_error"]

DIFFICULTIES = ("easy", "medium", "hard")
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
QUESTION = "What is the scientific name of the {organism} in the image?"
PROBE_QUESTION = "Which {rank} does the {organism} in the image belong to?"
INSTRUCTION = "Write the answer after writing 'The answer is: '."

_SKIPPED_SCHEMA = {"row": pl.Int64, "line": pl.Int64, "label": pl.String, "reason": pl.String, "detail": pl.String}


class TreeTooShallow(ValueError):
    """No ground truth supports the requested difficulty on this tree."""


@dataclass
class QuestionSet:
    """Questions, the ground truths that got none, and what was done.

    Attributes
    ----------
    questions : polars.DataFrame
        One row per question.
    skipped : polars.DataFrame
        ``row``, ``line``, ``label``, ``reason``, ``detail`` of every ground truth without a question.
    info : dict
        The set's metadata: counts, the distractor pool, how the labels resolved.
    """

    questions: pl.DataFrame
    skipped: pl.DataFrame
    info: dict = field(default_factory=dict)

    def rows(self) -> list[dict]:
        """The questions as dicts, in order.

        Returns
        -------
        list of dict
        """
        return self.questions.to_dicts()

    def to_jsonl(self) -> str:
        """The questions as JSON lines, keys in a fixed order, UTF-8, one question per line.

        Returns
        -------
        str
        """
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in self.rows())

    def write_jsonl(self, path: str | os.PathLike) -> Path:
        """Write :meth:`to_jsonl` to a file atomically (temporary file, then rename).

        Parameters
        ----------
        path : str or os.PathLike

        Returns
        -------
        Path
        """
        return write_text_atomic(path, self.to_jsonl())

    def write_info(self, path: str | os.PathLike) -> Path:
        """Write ``info`` (the set's metadata: the distractor pool, how the labels resolved,
        the counts) as JSON, atomically.

        Parameters
        ----------
        path : str or os.PathLike

        Returns
        -------
        Path
        """
        return write_text_atomic(path, json.dumps(self.info, indent=2, ensure_ascii=False, sort_keys=True) + "\n")


def question_text(options: list[str], *, question: str = QUESTION, instruction: str = INSTRUCTION,
                  organism: str = "organism", rank: str | None = None) -> str:
    """VLM4Bio's prompt: ``"<question> Options: A) …, B) …. <instruction>"``.

    Parameters
    ----------
    options : list of str
    question : str
        The question, with ``{organism}`` and ``{rank}`` filled in.
    instruction : str
    organism : str
    rank : str, optional

    Returns
    -------
    str

    Examples
    --------
    >>> question_text(["Esox lucius", "Cottus bairdii"], organism="fish")
    "What is the scientific name of the fish in the image? Options: A) Esox lucius, B) Cottus bairdii. Write the answer after writing 'The answer is: '."
    """
    opts = ", ".join(f"{LETTERS[i]}) {o}" for i, o in enumerate(options))
    q = question.format(organism=organism, rank=rank or "")
    return f"{q} Options: {opts}. {instruction}".rstrip()


# ---------------------------------------------------------------------------- ground truths
@dataclass
class GroundTruths:
    """The ground truths of a set, as given and as resolved.

    Attributes
    ----------
    table : polars.DataFrame
        The rows given (a ``line`` column added when missing).
    column : str
        The label column of ``table``.
    resolution : polars.DataFrame
        :func:`~taxoforge.links.tree_labels.resolve_nodes` of the labels, one row per row of
        ``table`` (``idx`` -1 where not linked).
    """

    table: pl.DataFrame
    column: str
    resolution: pl.DataFrame

    def __post_init__(self) -> None:
        self.idx = self.resolution["idx"].to_numpy()
        self.partial = self.resolution["partial"].to_numpy()
        self.labels = self.table[self.column].cast(pl.String).to_list()
        self.lines = self.table["line"].to_list()
        self._methods = self.resolution["method"].to_list()
        self._details = self.resolution["detail"].to_list()
        self.extra = sorted(c for c in self.table.columns if c not in (self.column, "line") and not c.startswith("_"))
        self._extra_values = {c: self.table[c].to_list() for c in self.extra}

    def __len__(self) -> int:
        return self.table.height

    def skip(self, row: int, reason: str, detail: str) -> tuple:
        """A row of the ``skipped`` table.

        Parameters
        ----------
        row : int
            The ground truth's row.
        reason : str
            The kind of reason (``no easy question`` …).
        detail : str
            The reason in words.

        Returns
        -------
        tuple
        """
        return (row, self.lines[row], self.labels[row], reason, detail)

    def fields(self, row: int) -> dict:
        """The extra fields of a ground truth's question: how it was resolved, and its carried columns.

        Parameters
        ----------
        row : int

        Returns
        -------
        dict
        """
        out = {"ground-truth": self.labels[row], "ground-truth-method": self._methods[row],
               "ground-truth-detail": self._details[row]}
        out.update({c: self._extra_values[c][row] for c in self.extra})
        return out

    def summary(self) -> dict:
        """Counts of the resolution.

        Returns
        -------
        dict
            ``labels``, ``linked``, ``ambiguous``, ``unmatched``, ``partial`` and ``by_method``
            (in the resolver's order).
        """
        r = self.resolution
        by_status = dict(r.group_by("status").len().iter_rows())
        by_method = dict(r.filter(pl.col("status") == "linked").group_by("method").len().iter_rows())
        return {"labels": r.height, **{s: int(by_status.get(s, 0)) for s in ("linked", "ambiguous", "unmatched")},
                "partial": int(r["partial"].sum()),
                "by_method": {m: int(by_method[m]) for m in METHODS if m in by_method}}


def read_ground_truths(tree: Taxonomy, ground_truths, label_column: str | None,
                       node_ref: str) -> tuple[GroundTruths, pl.DataFrame]:
    """The ground truths resolved, and the ``skipped`` rows of those that did not resolve.

    Parameters
    ----------
    tree : Taxonomy
    ground_truths : list of str or polars.DataFrame
        Labels or node ids, or a table with a label column (``label_column``, else the first
        of :data:`taxoforge.files.labels.LABEL_COLUMNS`).
    label_column : str, optional
    node_ref : {"auto", "id", "name"}
        Which rules of the resolver run (:mod:`taxoforge.links.tree_labels`).

    Returns
    -------
    (GroundTruths, polars.DataFrame)
    """
    if isinstance(ground_truths, pl.DataFrame):
        df = ground_truths
        col = label_column or next((c for c in LABEL_COLUMNS if c in df.columns), None)
        if col is None or col not in df.columns:
            raise ValueError(f"no label column among {df.columns}; expected one of {LABEL_COLUMNS} or label_column=…")
    else:
        col = "label"
        df = pl.DataFrame({"label": [None if g is None else str(g) for g in ground_truths]}, schema={"label": pl.String})
    if "line" not in df.columns:
        df = df.with_columns(pl.int_range(1, df.height + 1, dtype=pl.Int64).alias("line"))
    res = resolve_nodes(tree, df[col].cast(pl.String).to_list(), node_ref=node_ref)
    gts = GroundTruths(df, col, res)
    bad = res.filter(pl.col("idx") < 0)
    skipped = pl.DataFrame({
        "row": bad["row"], "line": df["line"].cast(pl.Int64).gather(bad["row"]), "label": bad["value"],
        "reason": ("unresolved label: " + bad["status"]), "detail": bad["detail"],
    }, schema=_SKIPPED_SCHEMA)
    return gts, skipped


def skipped_frame(rows: list[tuple], before: pl.DataFrame) -> pl.DataFrame:
    """The skipped ground truths, in ground-truth order.

    Parameters
    ----------
    rows : list of tuple
        From :meth:`GroundTruths.skip`.
    before : polars.DataFrame
        Skipped rows already found (the unresolved labels).

    Returns
    -------
    polars.DataFrame
    """
    return pl.concat([before, pl.DataFrame(rows, schema=_SKIPPED_SCHEMA, orient="row")]).sort("row")


def no_question_error(skipped: pl.DataFrame, set_name: str, tree: Taxonomy, n: int, options: int) -> TreeTooShallow:
    """The error of a set that got no question, with its three commonest reasons.

    Parameters
    ----------
    skipped : polars.DataFrame
    set_name : str
    tree : Taxonomy
    n : int
        How many ground truths were given.
    options : int

    Returns
    -------
    TreeTooShallow
    """
    reasons = skipped["detail"].drop_nulls().value_counts(sort=True).head(3)
    why = "; ".join(f"{r} ({k}×)" for r, k in reasons.iter_rows()) or "no ground truth resolved"
    return TreeTooShallow(f"no {set_name} question can be built on {tree.name} from {n} ground truth(s) "
                          f"with {options} options: {why}")


# ---------------------------------------------------------------------------- questions
@dataclass(frozen=True)
class SetSpec:
    """What every question of one set shares.

    Attributes
    ----------
    name : str
        The set (``easy``, ``medium``, ``hard``, ``probe-genus`` …): the prefix of question ids.
    variant : str
        ``standard`` or ``probe``.
    seed : int
    organism : str
        The organism word of the prompt (:func:`question_text`).
    question : str
        The question of the prompt.
    instruction : str
        The instruction of the prompt.
    rank_word : str or None
        The rank a probe asks for (``{rank}`` in the question).
    ranked : bool
        Whether the set follows ranks (else levels): how ``distractor-lca`` is written.
    """

    name: str
    variant: str
    seed: int
    organism: str
    question: str
    instruction: str
    rank_word: str | None
    ranked: bool


@dataclass(frozen=True)
class Draft:
    """One question before it is written.

    Attributes
    ----------
    row : int
        The ground truth's row.
    answer : int
        The answer's node index.
    distractors : list of int
        The distractors' node indexes.
    answer_pos : int
        The answer's position among the options.
    """

    row: int
    answer: int
    distractors: list[int]
    answer_pos: int


def question_row(tree: Taxonomy, spec: SetSpec, draft: Draft, extra: dict) -> dict:
    """The question of ``draft``: VLM4Bio's fields, the option nodes, and ``extra`` (the
    ground truth's fields, :meth:`GroundTruths.fields`; never overriding a field above).
    ``distractor-lca`` is filled in by :func:`question_set`.

    Parameters
    ----------
    tree : Taxonomy
    spec : SetSpec
    draft : Draft
    extra : dict

    Returns
    -------
    dict
    """
    nodes = list(draft.distractors)
    nodes.insert(draft.answer_pos, draft.answer)
    opts = [str(tree.labels[v]) for v in nodes]
    out = {
        "id": f"{spec.name}-{draft.row:06d}",
        "question": question_text(opts, question=spec.question, instruction=spec.instruction,
                                  organism=spec.organism, rank=spec.rank_word),
        "target-class": opts[draft.answer_pos],
        "option-gt": LETTERS[draft.answer_pos],
        "options": opts,
        "option-nodes": [str(tree.ids[v]) for v in nodes],
        "target-node": str(tree.ids[draft.answer]),
        "distractor-lca": None,
        "set": spec.name,
        "variant": spec.variant,
        "seed": int(spec.seed),
        "taxonomy": tree.version or tree.name,
        "row": draft.row,
        "_draft": draft,
    }
    for k, v in extra.items():
        if k not in out:
            out[k] = v
    return out


_FIXED_SCHEMA = {"id": pl.String, "question": pl.String, "target-class": pl.String, "option-gt": pl.String,
                 "options": pl.List(pl.String), "option-nodes": pl.List(pl.String), "target-node": pl.String,
                 "distractor-lca": pl.List(pl.String), "set": pl.String, "variant": pl.String, "seed": pl.Int64,
                 "taxonomy": pl.String, "row": pl.Int64, "ground-truth": pl.String, "ground-truth-method": pl.String,
                 "ground-truth-detail": pl.String}


def question_set(rows: list[dict], skipped: pl.DataFrame, tree: Taxonomy, spec: SetSpec, options: int,
                 gts: GroundTruths, pool: DistractorPool) -> QuestionSet:
    """The :class:`QuestionSet` of the question ``rows``: ``distractor-lca`` of every
    distractor (its LCA with the answer: a rank, or ``up<k>`` levels above the answer) in one
    vectorised query, the columns in a fixed order, and ``info``.

    Parameters
    ----------
    rows : list of dict
        From :func:`question_row`.
    skipped : polars.DataFrame
    tree : Taxonomy
    spec : SetSpec
    options : int
    gts : GroundTruths
    pool : DistractorPool

    Returns
    -------
    QuestionSet
    """
    k = options - 1
    drafts = [r["_draft"] for r in rows]
    d = np.array([v for dr in drafts for v in dr.distractors], dtype=np.int64)
    ans = np.repeat(np.array([dr.answer for dr in drafts], dtype=np.int64), k)
    lca = tree.lca_idx(d, ans)
    up = (tree.depth_arr[ans] - tree.depth_arr[lca]).tolist()
    words = [str(rk) if (spec.ranked and rk is not None) else f"up{u}" for rk, u in zip(tree.ranks[lca].tolist(), up)]
    lists = {"options": options, "option-nodes": options, "distractor-lca": k}
    for i, r in enumerate(rows):
        r["distractor-lca"] = words[i * k:(i + 1) * k]
    extra_cols = sorted({c for r in rows for c in r if c not in _FIXED_SCHEMA and not c.startswith("_")})
    data = {}
    for c, dtype in _FIXED_SCHEMA.items():
        if c in lists:  # fixed-width lists: one flat Series reshaped, not one Series per row
            flat = pl.Series(c, [x for r in rows for x in r[c]], dtype=pl.String)
            data[c] = flat.reshape((len(rows), lists[c])).cast(dtype)
        else:
            data[c] = pl.Series(c, [r.get(c) for r in rows], dtype=dtype)
    for c in extra_cols:
        data[c] = pl.Series(c, [r.get(c) for r in rows], strict=False)
    q = pl.DataFrame(data)
    info = {"set": spec.name, "options": options, "seed": spec.seed, "mode": "ranks" if spec.ranked else "levels",
            "ground_truths": len(gts), "questions": q.height, "skipped": skipped.height,
            "skipped_by_reason": {str(kk): int(v) for kk, v in skipped.group_by("reason").len().sort("reason").iter_rows()},
            "taxonomy": tree.version or tree.name, "pool": pool.info, "resolution": gts.summary()}
    return QuestionSet(q, skipped, info)
