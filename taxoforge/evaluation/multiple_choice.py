"""Multiple-choice question sets from any tree: VLM4Bio's easy / medium / hard sets and
rank-level probes, seeded and checked (Maruf et al. 2024 [2] §5.1).

Input
    a tree (anything :func:`~taxoforge.snapshots.load.load_ranked_tree` accepts) and the ground truths, one question per
    row (a label list, or a table with a label column whose other columns — an image path,
    an id — are carried into the questions).

Output
    :class:`QuestionSet`: ``questions`` (one row per question, VLM4Bio's fields
    ``question``, ``target-class``, ``option-gt`` plus ``options``, ``option-nodes``,
    ``target-node``, ``distractor-lca``, the set and seed), ``skipped`` (every ground truth
    that got no question, with the reason) and ``info``. :meth:`QuestionSet.write_jsonl`
    writes the questions as JSON lines (atomically; the same seed gives the same bytes).

Difficulties (the relation of every distractor to the answer, by its lowest common
ancestor with it)
    On a tree with ``genus`` and ``species`` ranks (Catalogue of Life, iNaturalist):

    ``easy``    other genera: each distractor's LCA with the answer lies above the answer's
                genus, above its family where the tree has enough such taxa (otherwise
                within the family), and no two distractors share a genus;
    ``medium``  the same genus: the LCA is the answer's genus (other species of the genus);
    ``hard``    the same species: the answer is an infraspecific taxon (subspecies,
                variety, form) and every distractor is another one of its species.

    Distractors have the answer's rank. On a tree without those ranks (WordNet, ImageNet)
    the same three bands are taken by levels above the answer: ``hard`` = siblings (LCA =
    parent), ``medium`` = cousins (LCA = grandparent), ``easy`` = LCA above the grandparent
    (above the great-grandparent where possible, distractors pairwise under different
    parents); distractors are leaves when the answer is a leaf, otherwise nodes at the
    answer's depth.

    A ground truth with fewer than ``options - 1`` valid distractors gets no question: it is
    listed in ``skipped`` with the reason, never padded with weaker distractors. When no
    ground truth can get a question, :class:`TreeTooShallow` says why.

Rank-level probes (:func:`build_rank_probes`)
    For every ground truth, the question asks for its ancestor at a chosen rank (genus,
    family, order …; or a depth on an unranked tree); the distractors are that ancestor's
    siblings of the same rank (same parent-rank taxon), widened one rank up at a time only
    when there are too few, and the widening is recorded per distractor (``distractor-lca``).

Determinism
    Every random choice is drawn from BLAKE2b of ``(seed, set, row, answer id, counter)``
    — never from process state, hash seeds or numpy's generators — and candidates are
    enumerated in the tree's pre-order (children in id order), so the same tree, labels and
    seed give byte-identical files on any machine. Distractors are drawn by a sparse
    Fisher–Yates shuffle over the candidate ranges, so a question costs O(options), not
    O(candidates): 10,000 questions on the 1.38 M-node iNaturalist tree take well under a
    second.

Question text (VLM4Bio's, ``zero_shot_eval`` templates)::

    What is the scientific name of the fish in the image? Options: A) Cottus bairdii,
    B) Noturus insignis, C) Notropis heterolepis, D) Notropis buchanani. Write the answer
    after writing 'The answer is: '.

>>> tree = {"Life": None, "Esox": "Life", "Esox lucius": "Esox", "Esox niger": "Esox",
...         "Esox masquinongy": "Esox", "Esox americanus": "Esox"}
>>> qs = build_questions(tree, ["Esox lucius"], "hard", options=4, seed=1, organism="fish")
>>> row = qs.questions.row(0, named=True)
>>> sorted(row["options"])
['Esox americanus', 'Esox lucius', 'Esox masquinongy', 'Esox niger']
>>> row["options"]["ABCD".index(row["option-gt"])]
'Esox lucius'
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from taxoforge.files import write_text_atomic
from taxoforge.files.labels import LABEL_COLUMNS
from taxoforge.seeded import SeededStream

from taxoforge.snapshots.load import load_ranked_tree
from taxoforge.trees.ranked_tree import RankedTree
from taxoforge.trees.ranks import INFRASPECIFIC_RANKS

__all__ = ["DIFFICULTIES", "QuestionSet", "TreeTooShallow", "build_questions", "prepare_tree",
           "build_rank_probes", "check_questions", "sample_ground_truths", "question_text",
           "LETTERS"]

DIFFICULTIES = ("easy", "medium", "hard")
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
QUESTION = "What is the scientific name of the {organism} in the image?"
PROBE_QUESTION = "Which {rank} does the {organism} in the image belong to?"
INSTRUCTION = "Write the answer after writing 'The answer is: '."


class TreeTooShallow(ValueError):
    """No ground truth supports the requested difficulty on this tree."""


# ---------------------------------------------------------------------------- candidate classes
class _Candidates:
    """Nodes of one class (a rank, the leaves, or a depth) in pre-order, so the members
    inside ``subtree(X)`` minus ``subtree(Y)`` are at most two contiguous slices."""

    def __init__(self, tree: RankedTree, mask: np.ndarray) -> None:
        pre, size = tree.taxonomy._preorder
        members = np.flatnonzero(mask)
        order = np.argsort(pre[members], kind="stable")
        self.nodes = members[order]
        self.pre = pre[self.nodes]
        self._tree_pre, self._tree_size = pre, size
        self._spans: dict[int, tuple[int, int]] = {}

    def span(self, x: int) -> tuple[int, int]:
        got = self._spans.get(x)
        if got is None:
            lo, hi = np.searchsorted(self.pre, [self._tree_pre[x], self._tree_pre[x] + self._tree_size[x]], "left")
            got = self._spans[x] = (int(lo), int(hi))
        return got

    def ranges(self, inside: int, outside: int) -> list[tuple[int, int]]:
        """Position ranges of the members in ``subtree(inside)`` but not in ``subtree(outside)``
        (``outside`` -1: no exclusion)."""
        lo, hi = self.span(inside)
        if outside < 0:
            return [(lo, hi)] if hi > lo else []
        elo, ehi = self.span(outside)
        elo, ehi = max(elo, lo), min(ehi, hi)
        if ehi <= elo:
            return [(lo, hi)] if hi > lo else []
        return [(a, b) for a, b in ((lo, elo), (ehi, hi)) if b > a]


def _draw_from_ranges(stream: SeededStream, ranges: list[tuple[int, int]]):
    """Yield distinct positions from the union of ``ranges`` (one or two ``(start, stop)``
    pairs) in a seeded random order (a sparse Fisher–Yates shuffle: O(1) memory per draw)."""
    if not ranges:
        return
    a0, b0 = ranges[0]
    s0 = b0 - a0
    a1 = ranges[1][0] - s0 if len(ranges) > 1 else 0
    m = sum(b - a for a, b in ranges)
    swapped: dict[int, int] = {}
    for i in range(m):
        j = i + stream.below(m - i)
        vj, vi = swapped.get(j, j), swapped.get(i, i)
        swapped[j] = vi
        yield a0 + vj if vj < s0 else a1 + vj


# ---------------------------------------------------------------------------- rules
@dataclass(frozen=True)
class _Plan:
    """Where the distractors of one question come from: ``tiers`` of ``(inside, outside)``
    subtrees tried in order, the candidate class, and the node whose identity must differ
    between any two distractors (``distinct_by``: a rank or a number of levels up)."""

    tiers: tuple[tuple[int, int], ...]
    cls: tuple
    distinct_by: tuple | None
    relation: str  # what the distractors are, in words, for ``skipped`` reasons


def _ranked(tree: RankedTree) -> bool:
    return {"genus", "species"} <= tree.rank_set


def _plan(tree: RankedTree, a: int, difficulty: str, ranked: bool) -> tuple[_Plan | None, str | None]:
    if ranked:
        rank = tree.ranks[a]
        if rank is None:
            return None, "the answer has no rank"
        genus = int(tree._rank_ancestor_table("genus")[a])
        species = int(tree._rank_ancestor_table("species")[a])
        family = int(tree._rank_ancestor_table("family")[a]) if "family" in tree.rank_order else -1
        cls = ("rank", rank)
        if difficulty == "hard":
            if rank not in INFRASPECIFIC_RANKS or species < 0:
                return None, f"hard questions need an infraspecific answer (subspecies, variety, form); this one is a {rank}"
            return _Plan(((species, a),), cls, None, f"other infraspecific taxa of {tree.labels[species]}"), None
        if genus < 0:
            return None, f"the answer ({rank}) has no genus above it"
        if difficulty == "medium":
            if species < 0:
                return None, f"medium questions need a species or lower as the answer; this one is a {rank}"
            return _Plan(((genus, species),), cls, None, f"other {rank} of the genus {tree.labels[genus]}"), None
        tiers = ((tree.taxonomy.root_idx, family), (family, genus)) if family >= 0 else ((tree.taxonomy.root_idx, genus),)
        return _Plan(tiers, cls, ("rank", "genus"), f"{rank} of other genera"), None
    # unranked: levels above the answer
    up = [a]
    for _ in range(3):
        p = int(tree.parent[up[-1]]) if up[-1] >= 0 else -1
        up.append(p)
    _, p1, p2, p3 = up
    cls = ("leaf",) if tree.is_leaf[a] else ("depth", int(tree.depth[a]))
    if difficulty == "hard":
        if p1 < 0:
            return None, "the answer is the root"
        return _Plan(((p1, a),), cls, None, "siblings of the answer"), None
    if difficulty == "medium":
        if p2 < 0:
            return None, "the answer has no grandparent (cousins are the medium level)"
        return _Plan(((p2, p1),), cls, None, "cousins of the answer (same grandparent, other parent)"), None
    if p2 < 0:
        return None, "the answer has no grandparent (easy needs nodes outside it)"
    root = tree.taxonomy.root_idx
    tiers = ((root, p3), (p3, p2)) if p3 >= 0 else ((root, p2),)
    return _Plan(tiers, cls, ("up", 1), "nodes outside the answer's grandparent"), None


def _class_mask(tree: RankedTree, cls: tuple) -> np.ndarray:
    if cls[0] == "rank":
        return tree.rank_mask(cls[1])
    if cls[0] == "leaf":
        return tree.is_leaf.copy()
    return tree.depth == cls[1]


def prepare_tree(tree) -> RankedTree:
    """Build the indexes question sets use (pre-order numbering, genus/species/family
    ancestors, the candidates of every rank) once, ahead of time; later sets reuse them."""
    tree = load_ranked_tree(tree)
    tree.taxonomy._preorder
    if _ranked(tree):
        for r in ("genus", "species", "family"):
            if r in tree.rank_set:
                tree._rank_ancestor_table(r)
        for r in sorted(tree.rank_set):
            _candidates(tree, ("rank", r))
    else:
        _candidates(tree, ("leaf",))
    return tree


def _candidates(tree: RankedTree, cls: tuple) -> _Candidates:
    """The candidates of ``cls``, built once per tree."""
    cache = tree.__dict__.setdefault("_mc_candidates", {})
    if cls not in cache:
        cache[cls] = _Candidates(tree, _class_mask(tree, cls))
    return cache[cls]


def _distinct_key(tree: RankedTree, node: int, how: tuple | None):
    if how is None:
        return None
    if how[0] == "rank":
        return int(tree._rank_ancestor_table(how[1])[node])
    v = node
    for _ in range(how[1]):
        v = int(tree.parent[v])
        if v < 0:
            break
    return v


def _lca_word(tree: RankedTree, lca: int, ranked: bool, answer: int) -> str:
    if ranked and tree.ranks[lca] is not None:
        return str(tree.ranks[lca])
    return f"up{int(tree.depth[answer]) - int(tree.depth[lca])}"


# ---------------------------------------------------------------------------- the set
@dataclass
class QuestionSet:
    """Questions, the ground truths that got none (``skipped``), and what was done (``info``)."""

    questions: pl.DataFrame
    skipped: pl.DataFrame
    info: dict = field(default_factory=dict)

    def rows(self) -> list[dict]:
        return self.questions.to_dicts()

    def to_jsonl(self) -> str:
        """The questions as JSON lines, keys in a fixed order, UTF-8, one question per line."""
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in self.rows())

    def write_jsonl(self, path: str | os.PathLike) -> Path:
        """Write :meth:`to_jsonl` to ``path`` atomically (temporary file, then rename)."""
        return write_text_atomic(path, self.to_jsonl())


def question_text(options: list[str], *, question: str = QUESTION, instruction: str = INSTRUCTION,
                  organism: str = "organism", rank: str | None = None) -> str:
    """VLM4Bio's prompt: ``"<question> Options: A) …, B) …. <instruction>"``.

    >>> question_text(["Esox lucius", "Cottus bairdii"], organism="fish")
    "What is the scientific name of the fish in the image? Options: A) Esox lucius, B) Cottus bairdii. Write the answer after writing 'The answer is: '."
    """
    opts = ", ".join(f"{LETTERS[i]}) {o}" for i, o in enumerate(options))
    q = question.format(organism=organism, rank=rank or "")
    return f"{q} Options: {opts}. {instruction}".rstrip()


def _ground_truth_table(tree: RankedTree, ground_truths, label_column: str | None) -> tuple[pl.DataFrame, str]:
    if isinstance(ground_truths, pl.DataFrame):
        df = ground_truths
        col = label_column or next((c for c in LABEL_COLUMNS if c in df.columns), None)
        if col is None:
            raise ValueError(f"no label column among {df.columns}; expected one of {LABEL_COLUMNS} or label_column=…")
    else:
        col = "label"
        df = pl.DataFrame({"label": [None if g is None else str(g) for g in ground_truths]}, schema={"label": pl.String})
    if "line" not in df.columns:
        df = df.with_columns(pl.int_range(1, df.height + 1, dtype=pl.Int64).alias("line"))
    return df, col


def _resolve(tree: RankedTree, df: pl.DataFrame, col: str, node_ref: str) -> tuple[np.ndarray, pl.DataFrame]:
    res = tree.resolve(df[col].cast(pl.String).to_list(), node_ref)
    idx = res["idx"].to_numpy()
    bad = res.filter(pl.col("idx") < 0)
    skipped = pl.DataFrame({
        "row": bad["row"], "line": df["line"].gather(bad["row"]), "label": bad["value"],
        "reason": ("unresolved label: " + bad["method"]), "detail": bad["detail"],
    }, schema=_SKIPPED_SCHEMA)
    return idx, skipped


_SKIPPED_SCHEMA = {"row": pl.Int64, "line": pl.Int64, "label": pl.String, "reason": pl.String, "detail": pl.String}


def _passthrough(df: pl.DataFrame, col: str) -> list[str]:
    return sorted(c for c in df.columns if c not in (col, "line") and not c.startswith("_"))


def build_questions(tree, ground_truths, difficulty: str, *, options: int = 4, seed: int = 0,
                    organism: str = "organism", question: str = QUESTION, instruction: str = INSTRUCTION,
                    label_column: str | None = None, node_ref: str = "auto", mode: str = "auto") -> QuestionSet:
    """One question per ground truth at ``difficulty`` (module docstring).

    Parameters
    ----------
    tree : RankedTree or anything :func:`~taxoforge.snapshots.load.load_ranked_tree` accepts
    ground_truths : list of labels or node ids, or a DataFrame with a label column (other
        columns, e.g. ``image-path``, are copied into each question)
    difficulty : ``"easy"``, ``"medium"`` or ``"hard"``
    options : number of options (2–26), the answer included
    seed : the seed of every draw
    organism, question, instruction : the prompt (VLM4Bio's by default)
    mode : ``"auto"`` (ranks when the tree has genus and species ranks, else levels),
        ``"ranks"`` or ``"levels"``

    Raises
    ------
    TreeTooShallow
        when no ground truth gets a question.
    """
    if difficulty not in DIFFICULTIES:
        raise ValueError(f"difficulty must be one of {DIFFICULTIES}, not {difficulty!r}")
    if not 2 <= options <= len(LETTERS):
        raise ValueError(f"options must be between 2 and {len(LETTERS)}, not {options}")
    if mode not in ("auto", "ranks", "levels"):
        raise ValueError(f"mode must be 'auto', 'ranks' or 'levels', not {mode!r}")
    tree = load_ranked_tree(tree)
    ranked = _ranked(tree) if mode == "auto" else mode == "ranks"
    df, col = _ground_truth_table(tree, ground_truths, label_column)
    idx, skipped = _resolve(tree, df, col, node_ref)
    classes: dict[tuple, _Candidates] = {}
    need = options - 1
    rows, skips = [], []
    extra = _passthrough(df, col)
    extra_vals = {c: df[c].to_list() for c in extra}
    lines = df["line"].to_list()
    labels_in = df[col].cast(pl.String).to_list()
    for row in range(df.height):
        a = int(idx[row])
        if a < 0:
            continue
        plan, why = _plan(tree, a, difficulty, ranked)
        if plan is None:
            skips.append((row, lines[row], labels_in[row], f"no {difficulty} question", why))
            continue
        cand = classes.get(plan.cls)
        if cand is None:
            cand = classes[plan.cls] = _candidates(tree, plan.cls)
        stream = SeededStream(seed, f"{difficulty}|{row}|{tree.ids[a]}")
        answer_pos = stream.below(options)
        picked = _pick(tree, cand, stream, plan, a, need)
        if len(picked) < need:
            skips.append((row, lines[row], labels_in[row], f"no {difficulty} question",
                          f"only {len(picked)} valid distractor(s) ({plan.relation}); {need} needed"))
            continue
        rows.append(_question_row(tree, a, picked, answer_pos, ranked, row, difficulty, "standard", seed,
                                  organism, question, instruction, None,
                                  {c: extra_vals[c][row] for c in extra}))
    skipped = pl.concat([skipped, pl.DataFrame(skips, schema=_SKIPPED_SCHEMA, orient="row")]).sort("row")
    if not rows:
        reasons = skipped["detail"].drop_nulls().value_counts(sort=True).head(3)
        why = "; ".join(f"{r} ({n}×)" for r, n in reasons.iter_rows()) or "no ground truth resolved"
        raise TreeTooShallow(f"no {difficulty} question can be built on {tree.name} from {df.height} ground truth(s) "
                             f"with {options} options: {why}")
    return _question_set(rows, skipped, tree, difficulty, options, seed, ranked, df.height)


def _pick(tree: RankedTree, cand: _Candidates, stream: SeededStream, plan: _Plan, a: int, need: int) -> list[int]:
    picked: list[int] = []
    seen_labels = {_key(tree.labels[a])}
    seen_groups = {_distinct_key(tree, a, plan.distinct_by)} if plan.distinct_by else set()
    for inside, outside in plan.tiers:
        if len(picked) >= need:
            break
        for pos in _draw_from_ranges(stream, cand.ranges(inside, outside)):
            v = int(cand.nodes[pos])
            if v == a:
                continue
            lab = _key(tree.labels[v])
            if lab in seen_labels:
                continue
            if plan.distinct_by:
                g = _distinct_key(tree, v, plan.distinct_by)
                if g in seen_groups:
                    continue
                seen_groups.add(g)
            seen_labels.add(lab)
            picked.append(v)
            if len(picked) >= need:
                break
    return picked


def _key(label) -> str:
    return " ".join(str(label).casefold().split())


def _question_row(tree, a, picked, answer_pos, ranked, row, set_name, kind, seed, organism, question,
                  instruction, rank, extra) -> dict:
    nodes = list(picked)
    nodes.insert(answer_pos, a)
    opts = [str(tree.labels[v]) for v in nodes]
    out = {
        "id": f"{set_name}-{row:06d}",
        "question": question_text(opts, question=question, instruction=instruction, organism=organism, rank=rank),
        "target-class": opts[answer_pos],
        "option-gt": LETTERS[answer_pos],
        "options": opts,
        "option-nodes": [str(tree.ids[v]) for v in nodes],
        "target-node": str(tree.ids[a]),
        "distractor-lca": None,  # filled in by _question_set, one vectorised LCA query for all
        "set": set_name,
        "variant": kind,
        "seed": int(seed),
        "taxonomy": tree.version or tree.name,
        "row": row,
        "_a": a,
        "_picked": picked,
        "_ranked": ranked,
    }
    for k, v in extra.items():
        if k not in out:
            out[k] = v
    return out


_FIXED_SCHEMA = {"id": pl.String, "question": pl.String, "target-class": pl.String, "option-gt": pl.String,
                 "options": pl.List(pl.String), "option-nodes": pl.List(pl.String), "target-node": pl.String,
                 "distractor-lca": pl.List(pl.String), "set": pl.String, "variant": pl.String, "seed": pl.Int64,
                 "taxonomy": pl.String, "row": pl.Int64}


def _question_set(rows, skipped, tree, set_name, options, seed, ranked, n_in) -> QuestionSet:
    k = options - 1
    d = np.array([v for r in rows for v in r["_picked"]], dtype=np.int64)
    ans = np.repeat(np.array([r["_a"] for r in rows], dtype=np.int64), k)
    lca = tree.taxonomy.lca_idx(d, ans)
    lca_rank = tree.ranks[lca]
    up = (tree.depth[ans] - tree.depth[lca]).tolist()
    words = [str(rk) if (rr and rk is not None) else f"up{u}"
             for rk, u, rr in zip(lca_rank.tolist(), up, np.repeat([r["_ranked"] for r in rows], k).tolist())]
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
            data[c] = pl.Series(c, [r[c] for r in rows], dtype=dtype)
    for c in extra_cols:
        data[c] = pl.Series(c, [r.get(c) for r in rows], strict=False)
    q = pl.DataFrame(data)
    info = {"set": set_name, "options": options, "seed": seed, "mode": "ranks" if ranked else "levels",
            "ground_truths": n_in, "questions": q.height, "skipped": skipped.height,
            "skipped_by_reason": {str(kk): int(v) for kk, v in skipped.group_by("reason").len().sort("reason").iter_rows()},
            "taxonomy": tree.version or tree.name}
    return QuestionSet(q, skipped, info)


# ---------------------------------------------------------------------------- rank probes
def build_rank_probes(tree, ground_truths, rank: str | int, *, options: int = 4, seed: int = 0,
                      organism: str = "organism", question: str = PROBE_QUESTION, instruction: str = INSTRUCTION,
                      label_column: str | None = None, node_ref: str = "auto") -> QuestionSet:
    """One question per ground truth asking for its ancestor at ``rank`` (a rank name, or a
    depth on an unranked tree), with seeded sibling distractors of the same rank, widened
    one rank (or level) up only where the siblings are too few (module docstring).

    >>> tree = {"Life": None, "Esocidae": "Life", "Cyprinidae": "Life", "Esox": "Esocidae", "Dallia": "Esocidae",
    ...         "Novumbra": "Esocidae", "Umbra": "Esocidae", "Esox lucius": "Esox"}
    >>> q = build_rank_probes(tree, ["Esox lucius"], 2, seed=3)
    >>> sorted(q.questions["options"][0].to_list())
    ['Dallia', 'Esox', 'Novumbra', 'Umbra']
    """
    if not 2 <= options <= len(LETTERS):
        raise ValueError(f"options must be between 2 and {len(LETTERS)}, not {options}")
    tree = load_ranked_tree(tree)
    df, col = _ground_truth_table(tree, ground_truths, label_column)
    idx, skipped = _resolve(tree, df, col, node_ref)
    by_depth = isinstance(rank, int) or (isinstance(rank, str) and rank.isdigit())
    set_name = f"probe-{rank}" if not by_depth else f"probe-depth{int(rank)}"
    valid = idx >= 0
    if by_depth:
        answers = np.full(len(idx), -1, dtype=np.int64)
        answers[valid] = tree.ancestor_at_depth(idx[valid], int(rank))
        higher: list = []
        cls = ("depth", int(rank))
        rank_word = f"level-{int(rank)} group"
    else:
        if rank not in tree.rank_order:
            raise ValueError(f"{tree.name} has no rank {rank!r}; its ranks are {tree.rank_order}")
        answers = np.full(len(idx), -1, dtype=np.int64)
        answers[valid] = tree.ancestor_at_rank(idx[valid], rank)
        order = tree.rank_order
        higher = [r for r in reversed(order[: order.index(rank)])]
        cls = ("rank", rank)
        rank_word = rank
    cand = _candidates(tree, cls)
    need = options - 1
    rows, skips = [], []
    extra = _passthrough(df, col)
    extra_vals = {c: df[c].to_list() for c in extra}
    lines = df["line"].to_list()
    labels_in = df[col].cast(pl.String).to_list()
    for row in range(df.height):
        if idx[row] < 0:
            continue
        b = int(answers[row])
        if b < 0:
            skips.append((row, lines[row], labels_in[row], f"no {set_name} question", f"the ground truth has no {rank_word} above it"))
            continue
        # tiers: siblings under the closest higher-rank ancestor, then one rank up at a time
        ups: list[int] = []
        if by_depth:
            v = b
            while int(tree.parent[v]) >= 0:
                v = int(tree.parent[v])
                ups.append(v)
        else:
            for r in higher:
                u = int(tree.ancestor_at_rank([b], r)[0])
                if u >= 0 and (not ups or u != ups[-1]):
                    ups.append(u)
            if not ups or ups[-1] != tree.taxonomy.root_idx:
                ups.append(tree.taxonomy.root_idx)
        tiers, prev = [], b
        for u in ups:
            tiers.append((u, prev))
            prev = u
        plan = _Plan(tuple(tiers), cls, None, f"other {rank_word}s")
        stream = SeededStream(seed, f"{set_name}|{row}|{tree.ids[b]}")
        answer_pos = stream.below(options)
        picked = _pick(tree, cand, stream, plan, b, need)
        if len(picked) < need:
            skips.append((row, lines[row], labels_in[row], f"no {set_name} question",
                          f"only {len(picked)} other {rank_word}(s) in the tree; {need} needed"))
            continue
        r = _question_row(tree, b, picked, answer_pos, not by_depth, row, set_name, "probe", seed, organism,
                          question, instruction, rank_word, {c: extra_vals[c][row] for c in extra})
        r["ground-truth-node"] = str(tree.ids[idx[row]])
        r["probe-rank"] = str(rank)
        rows.append(r)
    skipped = pl.concat([skipped, pl.DataFrame(skips, schema=_SKIPPED_SCHEMA, orient="row")]).sort("row")
    if not rows:
        reasons = skipped["detail"].drop_nulls().value_counts(sort=True).head(3)
        why = "; ".join(f"{r} ({n}×)" for r, n in reasons.iter_rows()) or "no ground truth resolved"
        raise TreeTooShallow(f"no {set_name} question can be built on {tree.name} from {df.height} ground truth(s) "
                             f"with {options} options: {why}")
    return _question_set(rows, skipped, tree, set_name, options, seed, not by_depth, df.height)


# ---------------------------------------------------------------------------- checks
def check_questions(tree, questions, difficulty: str | None = None) -> pl.DataFrame:
    """Every problem of a question set, one row each (empty when all questions are valid).

    Checks, from the tree alone: the options are distinct nodes with distinct labels; the
    answer sits at ``option-gt``; every option has the answer's rank (or, on an unranked
    tree, the answer's leaf-ness / depth); and for a difficulty, every distractor's lowest
    common ancestor with the answer lies in the difficulty's band (module docstring)."""
    tree = load_ranked_tree(tree)
    q = questions.questions if isinstance(questions, QuestionSet) else questions
    if isinstance(q, list):
        q = pl.DataFrame(q, infer_schema_length=None)
    ranked = _ranked(tree)
    problems = []
    for r in q.iter_rows(named=True):
        nodes = tree.taxonomy.index_of(r["option-nodes"])
        a = int(tree.taxonomy.index_of([r["target-node"]])[0])
        qid = r["id"]
        pos = LETTERS.index(r["option-gt"])
        if int(nodes[pos]) != a or r["options"][pos] != r["target-class"]:
            problems.append((qid, "answer not at option-gt"))
        if len(set(nodes.tolist())) != len(nodes):
            problems.append((qid, "repeated option node"))
        if len({_key(o) for o in r["options"]}) != len(r["options"]):
            problems.append((qid, "repeated option text"))
        for i, v in enumerate(nodes.tolist()):
            if str(tree.labels[v]) != r["options"][i]:
                problems.append((qid, f"option {LETTERS[i]} text is not the label of {tree.ids[v]}"))
        d = np.array([v for v in nodes.tolist() if v != a], dtype=np.int64)
        if ranked or (r.get("variant") == "probe" and tree.ranks[a] is not None):
            if any(tree.ranks[v] != tree.ranks[a] for v in d.tolist()):
                problems.append((qid, "a distractor has another rank than the answer"))
        elif r.get("variant") != "probe":
            same = (tree.is_leaf[d] == tree.is_leaf[a]) if tree.is_leaf[a] else (tree.depth[d] == tree.depth[a])
            if not np.all(same):
                problems.append((qid, "a distractor is of another kind (leaf/depth) than the answer"))
        elif np.any(tree.depth[d] != tree.depth[a]):
            problems.append((qid, "a probe distractor is at another depth than the answer"))
        diff = difficulty or (r.get("set") if r.get("set") in DIFFICULTIES else None)
        if diff and r.get("variant") != "probe":
            for msg in _band_problems(tree, a, d, diff, ranked):
                problems.append((qid, msg))
    return pl.DataFrame(problems, schema={"id": pl.String, "problem": pl.String}, orient="row")


def _band_problems(tree: RankedTree, a: int, d: np.ndarray, difficulty: str, ranked: bool) -> list[str]:
    if not len(d):
        return ["no distractors"]
    lca = tree.taxonomy.lca_idx(d, np.full(len(d), a, dtype=np.int64))
    lca_depth = tree.depth[lca]
    out = []
    if ranked:
        genus = int(tree.ancestor_at_rank([a], "genus")[0])
        species = int(tree.ancestor_at_rank([a], "species")[0])
        if difficulty == "hard" and not np.all(lca == species):
            out.append("hard: a distractor is not of the answer's species")
        if difficulty == "medium" and not np.all(lca == genus):
            out.append("medium: a distractor is not of the answer's genus (or is of its species)")
        if difficulty == "easy":
            if not np.all(lca_depth < tree.depth[genus]):
                out.append("easy: a distractor is of the answer's genus")
            gen = tree.ancestor_at_rank(d, "genus")
            if len(set(gen.tolist())) != len(gen):
                out.append("easy: two distractors share a genus")
    else:
        da = int(tree.depth[a])
        if difficulty == "hard" and not np.all(lca_depth == da - 1):
            out.append("hard: a distractor is not a sibling")
        if difficulty == "medium" and not np.all(lca_depth == da - 2):
            out.append("medium: a distractor is not a cousin")
        if difficulty == "easy" and not np.all(lca_depth < da - 2):
            out.append("easy: a distractor shares the answer's grandparent")
    return out


# ---------------------------------------------------------------------------- samples
def sample_ground_truths(tree, difficulty: str, n: int, *, seed: int = 0, options: int = 4) -> pl.DataFrame:
    """``n`` ground truths drawn (seeded, with replacement like images of a species) from the
    nodes that can get a question at ``difficulty``: species with at least ``options - 1``
    valid distractors for ``easy``/``medium``, infraspecific taxa for ``hard`` (levels on an
    unranked tree: leaves). Returns a ``label`` column of node ids."""
    tree = load_ranked_tree(tree)
    ranked = _ranked(tree)
    if ranked:
        if difficulty == "hard":
            mask = np.zeros(len(tree), dtype=bool)
            for r in INFRASPECIFIC_RANKS:
                mask |= tree.rank_mask(r)
            mask &= tree.rank_mask("species")[np.maximum(tree.parent, 0)]
            sib = _sibling_counts(tree, mask)
        else:
            mask = tree.rank_mask("species")
            sib = _sibling_counts(tree, mask) if difficulty == "medium" else np.full(len(tree), 1 << 30)
    else:
        mask = tree.is_leaf.copy()
        sib = _sibling_counts(tree, mask) if difficulty == "hard" else np.full(len(tree), 1 << 30)
    eligible = np.flatnonzero(mask & (sib >= options))
    if not len(eligible):
        raise TreeTooShallow(f"{tree.name} has no node that supports {difficulty} questions with {options} options")
    stream = SeededStream(seed, f"sample|{difficulty}")
    picks = [int(eligible[stream.below(len(eligible))]) for _ in range(n)]
    return pl.DataFrame({"label": tree.ids[picks].tolist()}, schema={"label": pl.String})


def _sibling_counts(tree: RankedTree, mask: np.ndarray) -> np.ndarray:
    """For every node: how many nodes of ``mask`` share its parent (itself included)."""
    par = tree.parent
    counts = np.bincount(np.maximum(par[mask], 0), minlength=len(tree))
    return np.where(par >= 0, counts[np.maximum(par, 0)], 0)
