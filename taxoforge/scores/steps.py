"""The named steps of a scoring run (:func:`taxoforge.scores.run.score_frame`), each a
function of the rows the step before kept:

1. :func:`screen_rows` — rows that cannot be scored become bad rows with a reason;
2. :func:`parse_rows` — each output parsed (:func:`~taxoforge.scores.mapping.parse.parse_answer`);
3. :func:`resolve_labels` — ground truth → node by the label linker
   (:class:`GroundTruthResolver`);
4. :func:`map_answers` — answer → node with Alg. 1 (:mod:`~taxoforge.scores.mapping`);
5. :func:`measure_rows` — hP, hR, hF, accuracy and the text measures;
6. :func:`assemble_samples` — the per-sample table; :func:`bad_rows_frame` the rows not scored.

What each step does in detail is in :mod:`taxoforge.scores.run`'s module docstring.
"""

from __future__ import annotations

import copy
import json
import re
import time
from dataclasses import dataclass

import numpy as np
import polars as pl

from taxoforge.links.resolve import is_partial
from taxoforge.links.resolve import resolve_labels as link_ground_truths
from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex
from taxoforge.scores.measures.hierarchical import hierarchical_scores
from taxoforge.scores.mapping.parse import ParsedAnswer, UnparseableAnswer, is_nota, parse_answer, resolve_letter
from taxoforge.scores.measures.text import TEXT_MEASURES, text_scores
from taxoforge.scores.memos import parse_table, parsed_from_memo
from taxoforge.trees.tables import TreeTables

__all__ = ["label_sets_of", "screen_rows", "parse_rows", "GroundTruthResolver", "resolve_labels", "MappedAnswers", "map_answers",
           "measure_rows", "assemble_samples", "bad_rows_frame", "BAD_ROW_SCHEMA", "ANSWER_LINK_METHODS"]

LINK_LABEL_COLUMNS = ("dataset", "label_id", "label_text")
BAD_ROW_SCHEMA = {"file": pl.String, "line": pl.Int64, "id": pl.String, "model": pl.String, "dataset": pl.String,
                  "prompt": pl.String, "reason": pl.String, "detail": pl.String}


def screen_rows(rows: pl.DataFrame, require_label: bool = True) -> tuple[list[dict], list[dict]]:
    """Step 1 — rows that cannot be scored (no output, no ground truth, output not text)
    become bad rows; the rest go on. Each row keeps its position ``_pos``.
    ``require_label=False`` (mapping answers without scoring them) lets rows without a
    ground truth through.

    Parameters
    ----------
    rows : polars.DataFrame
        The canonical table of answers.
    require_label : bool, optional
        Whether a row needs a ground truth (False for mapping only).

    Returns
    -------
    tuple[list[dict], list[dict]]
        Step 1 — rows that cannot be scored (no output, no ground truth, output not
        text) become bad rows; the rest go on.
    """
    keep, bad = [], []
    for pos, r in enumerate(rows.iter_rows(named=True)):
        label = r.get("label")
        r["_pos"] = pos
        if r["output_type"] == "str" and (not require_label or (label is not None and str(label).strip())):
            keep.append(r)  # a fresh dict per row: kept as it is
            continue
        where = _where(r)
        if r["output_type"] == "NoneType":
            bad.append({**where, "reason": "missing model output", "detail": "output is null or absent"})
        elif require_label and (label is None or not str(label).strip()):
            bad.append({**where, "reason": "missing ground truth",
                        "detail": r.get("note") or "label is null, absent or empty"})
        else:  # text output, ground truth given: kept above
            bad.append({**where, "reason": "unparseable output",
                        "detail": f"output is a JSON {r['output_type']}, not text"
                                  + ("; name one element with a column path, e.g. --column output=filtered_resps[0]"
                                     if r["output_type"] == "list" else "")})
    return keep, bad


_WHERE = ("file", "line", "id", "model", "dataset", "prompt")


def _where(row: dict) -> dict:
    """Where a row is (its position, file, line, id and group): the start of its bad row."""
    return {"_pos": row["_pos"], **{k: row.get(k) for k in _WHERE}}


def parse_rows(rows: list[dict], memo=None) -> tuple[list[dict], list[dict]]:
    """Step 2 — parse each output (:func:`~taxoforge.scores.mapping.parse.parse_answer`) against the
    row's options (its ``options`` fields, else those in its question). A ground truth given
    as an option letter (``B``, ``(B)``, ``B)``) is resolved through the same options by the
    same routine as a letter answer (:func:`~taxoforge.scores.mapping.parse.resolve_letter`); the row
    then carries the option's text as ``label_text`` (flag ``mc_label_letter``), and a letter
    that is not among the options makes the row a bad row (``unknown label``).

    Parameters
    ----------
    rows : list of dict
        The rows :func:`screen_rows` kept.
    memo : ContentMemo, optional
        Earlier calls' parses (:func:`taxoforge.scores.memos.parse_memo`): read for the
        outputs they parsed, the others stored.

    Returns
    -------
    (list of dict, list of dict)
        The rows parsed (the same dicts, ``parsed`` and ``answer`` added) and the bad rows.
    """
    keep, bad = [], []
    parsed: dict[tuple, ParsedAnswer | UnparseableAnswer] = {}  # identical answers to the same question: parsed once
    keys = [(r["output"], r.get("question"), r.get("options")) for r in rows]
    if memo is not None:
        parsed = parsed_from_memo(memo, list(dict.fromkeys(keys)))
    new: dict = {}
    for r, key in zip(rows, keys):
        pa = parsed.get(key)
        if pa is None:
            opts = json.loads(r["options"]) if r.get("options") else None
            try:
                pa = parsed[key] = new[key] = parse_answer(r["output"], r.get("question"), options=opts)
            except UnparseableAnswer as e:
                pa = parsed[key] = new[key] = e
        if isinstance(pa, UnparseableAnswer):
            bad.append({**_where(r), "reason": "unparseable output", "detail": str(pa)})
            continue
        label = r.get("label")
        if label is not None and len(str(label).strip()) <= 12 and pa.options:
            try:
                text, letter, flags = resolve_letter(str(label).strip(), pa.options, "label")
            except UnparseableAnswer as e:
                bad.append({**_where(r), "reason": "unknown label", "detail": str(e)})
                continue
            if letter is not None and "mc_letter_text_conflict" not in flags:
                r["label_text"] = text
                pa = copy.copy(pa)  # rows with the same answer share it: this row's own flags
                pa.flags = [*pa.flags, "mc_label_letter"]
        r["parsed"], r["answer"] = pa, pa.answer
        keep.append(r)
    if memo is not None and new:
        memo.save(parse_table(new))
    return keep, bad


#: Methods whose ground truth was given as an id, not as text: the reference text is the node's label.
_ID_METHODS = ("node_id", "external_id", "linked_label")


class GroundTruthResolver:
    """``(label, dataset)`` → ``(node_id or None, method or bad-row reason, detail)``, by the
    label linker :func:`taxoforge.links.resolve.resolve_labels` over the taxonomy's tables.

    :meth:`prefetch` resolves many labels in one batch (scoring prefetches every distinct
    label of a file); a label asked for without a prefetch is resolved alone and cached.
    ``links`` holds every label resolved so far (the links table). ``stored``: labels
    resolved against this tree by earlier runs
    (:class:`~taxoforge.snapshots.tree_cache.ResolvedLabels`), reused instead of resolving them
    again; what this resolver resolves is added to it.

    Parameters
    ----------
    tables : TreeTables
        The taxonomy's tables.
    tax : object
        Its in-memory tree.
    stored : ResolvedLabels, optional
        Labels resolved by earlier runs.
    """

    def __init__(self, tables: TreeTables, tax, stored=None) -> None:
        self.tables, self.tax, self.stored = tables, tax, stored
        self._cache: dict[tuple[str, str], tuple] = {}
        self.links = pl.DataFrame(schema={"dataset": pl.String, "label_id": pl.String})

    def prefetch(self, pairs) -> None:
        """Resolve the ``(label, dataset)`` pairs not resolved yet, in one batch.

        Parameters
        ----------
        pairs : object
            ``(label, dataset)`` pairs.
        """
        cache = self._cache
        todo = sorted({(d, lab) for lab, d in {(str(lab).strip(), str(d)) for lab, d in pairs} if (lab, d) not in cache})
        if not todo:
            return
        known = self.stored.lookup(todo) if self.stored is not None else None
        if known is not None and known.height:
            done = set(known.select("dataset", "label_id").iter_rows())
            todo = [p for p in todo if p not in done]
        links = known
        if todo:
            labels = pl.DataFrame({"dataset": [p[0] for p in todo], "label_id": [p[1] for p in todo],
                                   "label_text": [p[1] for p in todo]}, schema={c: pl.String for c in LINK_LABEL_COLUMNS})
            new = link_ground_truths(labels, self.tables.names, self.tables.nodes, links=self.tables.links)
            if self.stored is not None:
                self.stored.add(new)
            links = new if links is None or not links.height else pl.concat([links, new], how="diagonal_relaxed")
        self.links = pl.concat([self.links, links], how="diagonal_relaxed") if self.links.height else links
        rows = list(links.select("dataset", "label_id", "status", "method", "node_id", "detail").iter_rows())
        in_tree = self.tax.has([r[4] for r in rows]).tolist()
        for (ds, lid, status, method, nid, detail), node_in_tree in zip(rows, in_tree):
            if status != "linked" or not node_in_tree:
                reason = "ambiguous label" if status == "ambiguous" else "unknown label"
                self._cache[(lid, ds)] = (None, reason, f"{lid!r}: {detail}")
            else:
                self._cache[(lid, ds)] = (nid, method, detail)

    def __call__(self, label: str, dataset: str) -> tuple[str | None, str, str]:
        key = (str(label).strip(), str(dataset))
        if key not in self._cache:
            self.prefetch([key])
        return self._cache[key]


def resolve_labels(rows: list[dict], resolve: GroundTruthResolver) -> tuple[list[dict], list[dict]]:
    """Step 3 — ground truth → node by the label linker (:class:`GroundTruthResolver`), every
    distinct (label, dataset) in one batch. Each kept row gets ``gt_node``, ``gt_via`` (the
    method), ``gt_detail`` and ``gt_partial``; a label that does not resolve makes a bad row
    (``unknown label`` / ``ambiguous label``) whose detail says what was tried.

    Parameters
    ----------
    rows : list[dict]
        The screened rows.
    resolve : GroundTruthResolver
        The ground-truth resolver.

    Returns
    -------
    tuple[list[dict], list[dict]]
        Step 3 — ground truth → node by the label linker (:class:`GroundTruthResolver`),
        every distinct (label, dataset) in one batch.
    """
    given = [(r.get("label_text") or r["label"], r["dataset"]) for r in rows]
    resolve.prefetch((str(lab), d) for lab, d in set(given))
    keep, bad = [], []
    done: dict = {}  # labels repeat across rows and models: each (label, dataset) looked up once
    for r, key in zip(rows, given):
        res = done.get(key)
        if res is None:
            label = str(key[0]).strip()
            nid, method, detail = resolve(label, key[1])
            ref = ((resolve.tax.label(nid) or label) if method in _ID_METHODS else label) if nid is not None else None
            res = done[key] = (nid, method, detail, ref, is_partial(method))
        nid, method, detail, ref, partial = res
        if nid is None:
            bad.append({**_where(r), "reason": method, "detail": detail})
            continue
        r["gt_node"], r["gt_via"], r["gt_detail"], r["gt_partial"], r["reference"] = nid, method, detail, partial, ref
        keep.append(r)  # the row's own dict, its ground truth added
    return keep, bad


@dataclass
class MappedAnswers:
    """Step 4's result, per kept row: the predicted node, the deciding stage, similarity,
    nodes tied, whether the row abstained, the text that was mapped and the parse flags.

    Attributes
    ----------
    pred_idx : numpy.ndarray
        The predicted node of each kept row.
    stage : numpy.ndarray
        The deciding stage.
    score : numpy.ndarray
        The similarity of the chosen node.
    tied : numpy.ndarray
        Nodes tied under the deciding rule.
    abstained : numpy.ndarray
        Whether the row abstained.
    mapped_text : list
        The text that was mapped.
    flags : list
        The parse flags.
    stats : dict
        Counts per stage.
    seconds : float
        Time spent mapping.
    """

    pred_idx: np.ndarray
    stage: np.ndarray
    score: np.ndarray
    tied: np.ndarray
    abstained: np.ndarray
    mapped_text: list
    flags: list
    stats: dict
    seconds: float


def _nota_is_right(row: dict, resolve) -> bool:
    """A "none of the above" answer is right when the ground truth is none of the other options."""
    if row.get("gt_node") is None:  # no ground truth (mapping only): nothing to be right about
        return False
    others = [v for v in row["parsed"].options.values() if not is_nota(v)]
    nodes = {resolve(v.strip(), row["dataset"])[0] for v in others}
    return row["gt_node"] not in nodes


#: Label-linker methods by which an answer that is no name of the tree as written still names a
#: taxon (a renamed species, a gender variant, a rank marker): the answer then means the node the
#: same text means as a ground truth (stage ``linked_name``).
ANSWER_LINK_METHODS = ("normalised", "synonym", "epithet_variant", "genus_transfer")
_TAXON_NAME = re.compile(r"^[A-Za-z][a-z-]+(?:\s+(?:subsp\.|ssp\.|var\.|f\.)?\s*[a-z-]+){1,2}$")


def _taxon_name(text: str | None) -> str | None:
    """``text`` without a closing full stop when it has the shape of a binomial or trinomial
    (a genus then one or two lower-case epithets), else None."""
    t = (text or "").strip().rstrip(".").strip()
    return t if _TAXON_NAME.match(t) else None


def label_sets_of(rows: list[dict], tax, label_set=None) -> list | None:
    """Per row, the node indexes of the label set its answer is about (one array per
    distinct set, shared by the rows): ``label_set`` (node ids) for every row when given,
    else the ground-truth nodes of the row's own model × dataset — never another model's, so
    a model's answers map alike whatever else a call scores; None when there is neither.

    Parameters
    ----------
    rows : list[dict]
        The kept rows (``gt_node``, ``model``, ``dataset``).
    tax : object
        The in-memory tree.
    label_set : sequence of str, optional
        Node ids of a given label set.

    Returns
    -------
    list or None
    """
    if label_set is not None:
        ids = [x for x in label_set if x is not None]
        shared = tax.index_of(ids) if ids else np.zeros(0, np.int64)
        return [shared] * len(rows)
    by_group: dict = {}
    for r in rows:
        if r.get("gt_node") is not None:
            by_group.setdefault((r.get("model"), r.get("dataset")), set()).add(r["gt_node"])
    if not by_group:
        return None
    sets = {k: tax.index_of(sorted(nodes)) for k, nodes in by_group.items()}
    return [sets.get((r.get("model"), r.get("dataset"))) for r in rows]


def map_answers(rows: list[dict], index: TaxonomyIndex, resolve, progress: bool | None,
                label_set=None, memo=None) -> MappedAnswers:
    """Step 4 — answers → nodes with Alg. 1 (:mod:`~taxoforge.scores.mapping`).

    * an answer with a refusal cue is an abstention (stage ``abstention``, the root) unless
      its unrefused part names a node (``index.names_anything``); then that part is mapped
      (flag ``hedged_answer``);
    * "none of the above" chosen where the question offers it (stage
      ``none_of_the_above``) is right — the ground-truth node — when the ground truth is
      none of the other options, and otherwise wrong, scored as the root (an answer, not an
      abstention);
    * every other answer is mapped as it is; where several nodes name it equally well the
      label set decides first — ``label_set`` (node ids) when given, else the ground truths
      of the row's model × dataset (:func:`label_sets_of`) — then the question, then the mapping's
      own rule. An answer longer than the mapping's ``max_answer_chars`` is cut there
      and flagged ``truncated_to_<n>_chars`` (so the cost per answer stays bounded);
    * an answer shaped like a binomial or trinomial that no stage matched as a whole name
      (a species renamed since the model learnt it: *Notropis heterodon*) is resolved by the
      label linker, as a ground truth is: by one of :data:`ANSWER_LINK_METHODS` it is that
      node (stage ``linked_name``, flag ``answer_<method>``), so an answer equal to its label
      always means the label's node.

    Parameters
    ----------
    rows : list[dict]
        The kept rows.
    index : TaxonomyIndex
        The mapping index.
    resolve : object
        The ground-truth resolver (its links give each answer's context).
    progress : bool or None
        Whether to show a progress bar.
    label_set : sequence of str, optional
        Node ids whose nodes win ties (default: each model × dataset's ground truths).
    memo : ContentMemo, optional
        Earlier calls' decisions (:func:`taxoforge.scores.memos.mapping_memo`); whether a
        refusal's unrefused part names a node is kept beside them (its sibling
        ``naming-decisions``).

    Returns
    -------
    MappedAnswers
        Step 4 — answers → nodes with Alg. 1 (:mod:`~taxoforge.scores.mapping`).
    """
    tax = index.taxonomy
    n = len(rows)
    pred_idx = np.full(n, tax.root_idx, dtype=np.int64)
    stage = np.full(n, "abstention", dtype=object)
    score = np.zeros(n)
    tied = np.zeros(n, np.int64)
    abstained = np.zeros(n, bool)
    mapped_text: list = [None] * n
    flags = [[f for f in r["parsed"].flags if f not in ("abstention", "hedged_answer")] for r in rows]
    refusals = [i for i, r in enumerate(rows) if r["parsed"].refusal and not r["parsed"].nota]
    named = index.names_anything([rows[i]["parsed"].unrefused for i in refusals],
                                 memo=memo.sibling("naming-decisions", ["text"]) if memo is not None else None)
    names_something = dict(zip(refusals, named.tolist()))
    # the other options of every "none of the above" answer, resolved in one batch
    resolve.prefetch((v.strip(), r["dataset"]) for r in rows if r["parsed"].nota
                     for v in r["parsed"].options.values() if not is_nota(v))
    to_map: list[int] = []
    for i, r in enumerate(rows):
        pa = r["parsed"]
        if pa.nota:
            stage[i] = "none_of_the_above"
            if _nota_is_right(r, resolve):
                pred_idx[i] = tax.index_of([r["gt_node"]])[0]
                score[i], tied[i] = 1.0, 1
        elif pa.refusal and not names_something[i]:
            abstained[i] = True
            flags[i].append("abstention")
        else:
            if pa.refusal:
                flags[i].append("hedged_answer")
            mapped_text[i] = pa.unrefused if pa.refusal else pa.answer
            to_map.append(i)
    texts = [mapped_text[i] for i in to_map]
    if progress is None:
        progress = len(texts) >= 5000
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(set(texts)), desc="mapping answers", unit="answer", leave=False)
    t = time.perf_counter()
    sets = label_sets_of(rows, tax, label_set)
    mres = index.map(texts, progress=bar.update if bar else None,
                     contexts=[rows[i].get("question") for i in to_map],
                     label_sets=[sets[i] for i in to_map] if sets is not None else None, memo=memo)
    t = time.perf_counter() - t
    if bar:
        bar.close()
    sel = np.asarray(to_map, np.int64)
    pred_idx[sel] = mres.node_idx
    stage[sel] = mres.stage
    score[sel] = mres.score
    tied[sel] = mres.tied
    linkable = {i: name for i in to_map if stage[i] != "exact" and (name := _taxon_name(mapped_text[i]))}
    resolve.prefetch((name, rows[i]["dataset"]) for i, name in linkable.items())
    for i, name in linkable.items():
        nid, method, _detail = resolve(name, rows[i]["dataset"])
        if nid is not None and method in ANSWER_LINK_METHODS:
            pred_idx[i], stage[i], score[i], tied[i] = tax.index_of([nid])[0], "linked_name", 1.0, 1
            flags[i].append(f"answer_{method}")
    for i in np.flatnonzero(tied > 1).tolist():
        flags[i].append("ambiguous_name")
    for i in sel[mres.truncated].tolist():
        flags[i].append(f"truncated_to_{index.config.max_answer_chars}_chars")
    stages, counts = np.unique(stage, return_counts=True) if n else ([], [])
    stats = dict(mres.stats, stages=dict(zip([str(x) for x in stages], [int(c) for c in counts])))
    return MappedAnswers(pred_idx, stage, score, tied, abstained, mapped_text, [",".join(f) for f in flags],
                         stats, t)


def measure_rows(rows: list[dict], tax, mapped: MappedAnswers, text_measures: bool, meteor: bool, memo=None):
    """Step 5 — hP, hR, hF, accuracy and the text measures (an abstention's text is empty).
    Returns (hierarchical scores, text scores, METEOR status, seconds of the text measures).

    Parameters
    ----------
    rows : list[dict]
        The kept rows.
    tax : object
        The in-memory tree.
    mapped : MappedAnswers
        Step 4's result.
    text_measures : bool
        Whether the text measures are computed.
    meteor : bool
        Whether METEOR is computed.
    memo : callable, optional
        The text measures' memo for a METEOR status (:func:`taxoforge.scores.memos.text_memo`).

    Returns
    -------
    object
        Step 5 — hP, hR, hF, accuracy and the text measures (an abstention's text is
        empty).
    """
    n = len(rows)
    gt_idx = tax.index_of([r["gt_node"] for r in rows]) if n else np.zeros(0, np.int64)
    h = hierarchical_scores(tax, mapped.pred_idx, gt_idx)
    t = time.perf_counter()
    if text_measures and n:
        ts = text_scores(["" if ab else r["answer"] for r, ab in zip(rows, mapped.abstained.tolist())],
                         [r["reference"] for r in rows], meteor=meteor, memo=memo)
        meteor_status = ts.pop("meteor_status")
    else:
        ts = {m: np.full(n, np.nan) for m in TEXT_MEASURES}
        meteor_status = "text measures disabled" if not text_measures else "no rows"
    return h, ts, meteor_status, time.perf_counter() - t


def assemble_samples(rows: list[dict], tax, mapped: MappedAnswers, h: dict, ts: dict, tables: TreeTables,
                     version: str, config: MappingConfig, store: str | None = None) -> pl.DataFrame:
    """Step 6 — one row per scored sample, with the taxonomy version and mapping config.

    Parameters
    ----------
    rows : list[dict]
        The kept rows.
    tax : object
        The in-memory tree.
    mapped : MappedAnswers
        Step 4's result.
    h : dict
        Step 5's hierarchical scores.
    ts : dict
        Step 5's text scores.
    tables : TreeTables
        The tree's tables.
    version : str
        The version.
    config : MappingConfig
        The mapping configuration.
    store : str, optional
        The snapshot store.

    Returns
    -------
    polars.DataFrame
        Step 6 — one row per scored sample, with the taxonomy version and mapping
        config.
    """
    pred_idx = mapped.pred_idx

    def col(name):
        return [r[name] for r in rows]

    samples = pl.DataFrame({
        "file": col("file"), "line": col("line"), "id": col("id"), "model": col("model"),
        "dataset": col("dataset"), "prompt": col("prompt"), "output_raw": col("output"), "answer": col("answer"),
        "abstained": mapped.abstained, "mapped_text": mapped.mapped_text, "parse_flags": mapped.flags,
        "label": col("label"), "reference": col("reference"), "gt_node": col("gt_node"), "gt_via": col("gt_via"),
        "gt_detail": col("gt_detail"), "gt_partial": np.array(col("gt_partial"), dtype=bool),
        "pred_node": tax.ids_of(pred_idx),
        "pred_label": tax.labels_of(pred_idx),
        "map_stage": mapped.stage.tolist(), "map_similarity": mapped.score, "map_tied": mapped.tied,
        "depth_gt": h["depth_gt"],
        "depth_pred": h["depth_pred"], "depth_lca": h["depth_lca"], "correct": h["correct"],
        "hP": h["hP"], "hR": h["hR"], "hF": h["hF"], **{m: ts[m] for m in TEXT_MEASURES},
        "category": [r.get("category") for r in rows], "harness_correct": [r.get("harness_correct") for r in rows],
    }, schema_overrides={"category": pl.String, "harness_correct": pl.Float64, "line": pl.Int64, "label": pl.String, "pred_label": pl.String, "parse_flags": pl.String,
                         "mapped_text": pl.String,
                         "gt_via": pl.String, "gt_detail": pl.String,
                         "depth_gt": pl.Int64, "depth_pred": pl.Int64, "depth_lca": pl.Int64})
    return samples.with_columns(
        pl.lit(tables.name).alias("taxonomy"), pl.lit(version).alias("taxonomy_version"),
        pl.lit(store, dtype=pl.String).alias("taxonomy_store"),
        pl.lit(config.config_id).alias("mapping_config_id"), pl.lit(config.to_json()).alias("mapping_config"),
    )


def bad_rows_frame(bad: list[dict]) -> pl.DataFrame:
    """Bad rows in file order, whichever step rejected them.

    Parameters
    ----------
    bad : list[dict]
        The rejected rows, with line and reason.

    Returns
    -------
    polars.DataFrame
        Bad rows in file order, whichever step rejected them.
    """
    bad = sorted(bad, key=lambda b: b["_pos"])
    rows = [{k: b.get(k) for k in BAD_ROW_SCHEMA} for b in bad]
    return pl.DataFrame(rows, schema=BAD_ROW_SCHEMA) if rows else pl.DataFrame(schema=BAD_ROW_SCHEMA)
