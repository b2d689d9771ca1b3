"""One scoring run: model outputs + a taxonomy → per-sample scores, leaderboard, bad rows.

:func:`score_file` reads a file (:mod:`~taxoforge.scores.readers`), :func:`score_frame`
does the rest in named steps (:func:`screen_rows`, :func:`parse_rows`,
:func:`resolve_labels`, :func:`map_answers`, :func:`measure_rows`, :func:`assemble_samples`):

1. **Screen.** Rows that cannot be scored are reported with their line numbers and a reason —
   ``missing ground truth``, ``missing model output``, ``unparseable output``,
   ``unknown label``, ``ambiguous label`` — and counted; they never vanish silently.
2. **Parse** each output (:func:`~taxoforge.scores.parse.parse_answer`): templates
   stripped, multiple-choice letters resolved, abstentions detected.
3. **Resolve labels**: ground truth → node by the label linker,
   :func:`taxoforge.links.resolve.resolve_labels` (SPEC §3 "Ground truths": node id, id with
   the taxonomy's source prefix, the taxonomy's ``links`` table, exact and normalised name,
   synonym, epithet variant, genus transfer, and last the species or genus as a *partial*
   ground truth). Every sample says how (``gt_via``, ``gt_detail``) and whether its ground
   truth is partial (``gt_partial``; counted apart in the leaderboard); ``info`` counts the
   rows per method. A label that does not resolve is a bad row (``unknown label`` or
   ``ambiguous label``) whose detail says what was tried.
4. **Map** answer → node with Alg. 1 (:mod:`~taxoforge.scores.mapping`); abstentions are
   scored as the root.
5. **Measure** hP, hR, hF, accuracy (:mod:`~taxoforge.scores.measures`) and the text
   measures (:mod:`~taxoforge.scores.text_measures`) against the reference text — the
   row's label when it was given as text, else the ground-truth node's label.
6. **Assemble** the per-sample table, and aggregate it by model × dataset × prompt
   (:func:`taxoforge.scores.leaderboard.leaderboard`).

Every sample row and every leaderboard row carries the taxonomy name, its snapshot
version (``NAME@VERSION``; for an unpublished tree the content id a snapshot of it would
get) and the mapping configuration (JSON and a short id).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from taxoforge.files import atomic_directory, write_parquet_atomic, write_text_atomic

from taxoforge.links.resolve import PARTIAL_METHODS, is_partial
from taxoforge.links.resolve import resolve_labels as link_ground_truths
from taxoforge.scores.leaderboard import GROUP_KEYS, LEADERBOARD_MEASURES, leaderboard
from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex
from taxoforge.scores.measures import hierarchical_scores
from taxoforge.scores.parse import UnparseableAnswer, is_nota, parse_answer
from taxoforge.scores.readers import duplicate_ids, read_outputs
from taxoforge.scores.report import leaderboard_markdown, plot_hp_hr, plot_ranks
from taxoforge.scores.text_measures import TEXT_MEASURES, text_scores
from taxoforge.trees.tables import TreeTables

__all__ = ["ScoreRun", "GroundTruthResolver", "score_file", "score_frame", "load_taxonomy_tables", "leaderboard", "GROUP_KEYS",
           "LEADERBOARD_MEASURES", "screen_rows", "parse_rows", "resolve_labels", "map_answers", "measure_rows",
           "assemble_samples"]
LINK_LABEL_COLUMNS = ("dataset", "label_id", "label_text")
BAD_ROW_SCHEMA = {"file": pl.String, "line": pl.Int64, "id": pl.String, "model": pl.String, "dataset": pl.String,
                  "prompt": pl.String, "reason": pl.String, "detail": pl.String}


# ---------------------------------------------------------------------------- taxonomy
def load_taxonomy_tables(ref) -> TreeTables:
    """A :class:`TreeTables` from ``ref``: a TreeTables; a snapshot folder (with
    ``manifest.json``); a tree folder (``nodes.parquet`` …); or a snapshot reference
    ``NAME[@VERSION]`` in the default snapshot store."""
    if isinstance(ref, TreeTables):
        return ref
    p = Path(ref)
    if p.is_dir():
        if (p / "manifest.json").exists():
            from taxoforge.snapshots.verify import read_snapshot

            return read_snapshot(p)
        return TreeTables.read(p)
    if p.suffix or os.sep in str(ref):
        raise FileNotFoundError(f"{ref}: no such taxonomy folder")
    from taxoforge.snapshots.load import load_taxonomy

    return load_taxonomy(str(ref))


def taxonomy_version(tables: TreeTables) -> str:
    """``NAME@VERSION`` of a snapshot; for other trees the content id a snapshot would get."""
    snap = tables.info.get("snapshot") if tables.info else None
    if snap:
        return str(snap)
    from taxoforge.snapshots.manifest import content_id

    return f"{tables.name}@{content_id(tables)[0]}"


# ---------------------------------------------------------------------------- run
@dataclass
class ScoreRun:
    """The result of one run. ``samples`` (one row per scored sample), ``leaderboard`` (model ×
    dataset × prompt), ``bad_rows`` (every row not scored, with its line and reason), ``info``
    (taxonomy, version, mapping configuration, counts, timings)."""

    samples: pl.DataFrame
    leaderboard: pl.DataFrame
    bad_rows: pl.DataFrame
    info: dict = field(default_factory=dict)

    def markdown(self, max_rows: int = 50) -> str:
        return leaderboard_markdown(self.leaderboard, self.info, self.bad_rows, max_rows=max_rows)

    def write(self, out_dir: str | os.PathLike, plots: bool = True) -> dict[str, Path]:
        """Write ``scores.parquet``, ``leaderboard.parquet``, ``leaderboard.md``,
        ``bad_rows.parquet``, ``run.json`` and the PNG plots (when there are samples) as one
        folder ``out_dir``: everything is written into a temporary folder beside it, which
        then replaces ``out_dir`` whole (:func:`taxoforge.files.atomic_directory`), so a killed run never
        leaves a mix of two runs and a run without samples never keeps an older run's plots.
        An existing ``out_dir`` must be empty or an earlier run's folder."""

        out = Path(out_dir)
        _check_replaceable(out, RUN_FILES)
        with atomic_directory(out) as tmp:
            paths = {
                "scores": write_parquet_atomic(self.samples, tmp / "scores.parquet"),
                "leaderboard": write_parquet_atomic(self.leaderboard, tmp / "leaderboard.parquet"),
                "bad_rows": write_parquet_atomic(self.bad_rows, tmp / "bad_rows.parquet"),
                "leaderboard_md": write_text_atomic(tmp / "leaderboard.md", self.markdown(max_rows=10_000)),
                "run": write_text_atomic(tmp / "run.json", json.dumps(self.info, indent=2, sort_keys=True, default=str)),
            }
            if plots and self.samples.height:
                paths["hp_vs_hr"] = plot_hp_hr(self.samples, tmp / "hp_vs_hr.png")
                paths["ranks"] = plot_ranks(self.samples, tmp / "model_ranks.png")
        return {k: out / p.name for k, p in paths.items()}


RUN_FILES = frozenset({"scores.parquet", "leaderboard.parquet", "bad_rows.parquet", "leaderboard.md", "run.json",
                       "hp_vs_hr.png", "model_ranks.png"})


def _check_replaceable(out: Path, allowed: frozenset[str]) -> None:
    """``out`` may be replaced by a new run: absent, or a folder holding only ``allowed``
    names (an earlier run's) — a folder of other files is never replaced."""
    if not out.exists():
        return
    if not out.is_dir():
        raise FileExistsError(f"{out}: exists and is not a folder")
    foreign = sorted(p.name for p in out.iterdir() if p.name not in allowed)
    if foreign:
        raise FileExistsError(f"{out}: holds files that are not a scoring run's ({', '.join(foreign[:5])}); "
                              "write the results to a new or empty folder")


def screen_rows(rows: pl.DataFrame) -> tuple[list[dict], list[dict]]:
    """Step 1 — rows that cannot be scored (no output, no ground truth, output not text)
    become bad rows; the rest go on. Each row keeps its position ``_pos``."""
    keep, bad = [], []
    for pos, r in enumerate(rows.iter_rows(named=True)):
        where = {"_pos": pos, **{k: r.get(k) for k in ("file", "line", "id", "model", "dataset", "prompt")}}
        label = r["label"]
        if r["output_type"] == "NoneType":
            bad.append({**where, "reason": "missing model output", "detail": "output is null or absent"})
        elif label is None or not str(label).strip():
            bad.append({**where, "reason": "missing ground truth",
                        "detail": r.get("note") or "label is null, absent or empty"})
        elif r["output_type"] != "str":
            bad.append({**where, "reason": "unparseable output",
                        "detail": f"output is a JSON {r['output_type']}, not text"})
        else:
            keep.append({**r, "_pos": pos, "_where": where})
    return keep, bad


def parse_rows(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """Step 2 — parse each output (:func:`~taxoforge.scores.parse.parse_answer`)."""
    keep, bad = [], []
    for r in rows:
        try:
            pa = parse_answer(r["output"], r.get("question"))
        except UnparseableAnswer as e:
            bad.append({**r["_where"], "reason": "unparseable output", "detail": str(e)})
            continue
        keep.append({**r, "parsed": pa, "answer": pa.answer})
    return keep, bad


#: Methods whose ground truth was given as an id, not as text: the reference text is the node's label.
_ID_METHODS = ("node_id", "external_id", "linked_label")


class GroundTruthResolver:
    """``(label, dataset)`` → ``(node_id or None, method or bad-row reason, detail)``, by the
    label linker :func:`taxoforge.links.resolve.resolve_labels` over the taxonomy's tables.

    :meth:`prefetch` resolves many labels in one batch (scoring prefetches every distinct
    label of a file); a label asked for without a prefetch is resolved alone and cached.
    ``links`` holds every label resolved so far (the links table)."""

    def __init__(self, tables: TreeTables, tax) -> None:
        self.tables, self.tax = tables, tax
        self._cache: dict[tuple[str, str], tuple] = {}
        self.links = pl.DataFrame(schema={"dataset": pl.String, "label_id": pl.String})

    def prefetch(self, pairs) -> None:
        """Resolve the ``(label, dataset)`` pairs not resolved yet, in one batch."""
        todo = sorted({(str(d), str(lab).strip()) for lab, d in pairs} - set((d, lab) for lab, d in self._cache))
        if not todo:
            return
        labels = pl.DataFrame({"dataset": [p[0] for p in todo], "label_id": [p[1] for p in todo],
                               "label_text": [p[1] for p in todo]}, schema={c: pl.String for c in LINK_LABEL_COLUMNS})
        links = link_ground_truths(labels, self.tables.names, self.tables.nodes, links=self.tables.links)
        self.links = pl.concat([self.links, links], how="diagonal_relaxed") if self.links.height else links
        for ds, lid, status, method, nid, detail in links.select(
                "dataset", "label_id", "status", "method", "node_id", "detail").iter_rows():
            if status != "linked" or nid not in self.tax:
                reason = "ambiguous label" if status == "ambiguous" else "unknown label"
                self._cache[(lid, ds)] = (None, reason, f"{lid!r}: {detail}")
            else:
                self._cache[(lid, ds)] = (nid, method, detail)

    def __call__(self, label: str, dataset: str) -> tuple[str | None, str, str]:
        key = (str(label).strip(), str(dataset))
        if key not in self._cache:
            self.prefetch([key])
        return self._cache[key]


def _resolver(tables: TreeTables, tax, index=None) -> GroundTruthResolver:
    """The ground-truth resolver of a run (``index`` is not needed; kept for callers)."""
    return GroundTruthResolver(tables, tax)


def resolve_labels(rows: list[dict], resolve: GroundTruthResolver) -> tuple[list[dict], list[dict]]:
    """Step 3 — ground truth → node by the label linker (:class:`GroundTruthResolver`), every
    distinct (label, dataset) in one batch. Each kept row gets ``gt_node``, ``gt_via`` (the
    method), ``gt_detail`` and ``gt_partial``; a label that does not resolve makes a bad row
    (``unknown label`` / ``ambiguous label``) whose detail says what was tried."""
    resolve.prefetch((str(r["label"]), r["dataset"]) for r in rows)
    keep, bad = [], []
    for r in rows:
        label = str(r["label"]).strip()
        nid, method, detail = resolve(label, r["dataset"])
        if nid is None:
            bad.append({**r["_where"], "reason": method, "detail": detail})
            continue
        ref = (resolve.tax.label(nid) or label) if method in _ID_METHODS else label
        keep.append({**r, "gt_node": nid, "gt_via": method, "gt_detail": detail, "gt_partial": is_partial(method),
                     "reference": ref})
    return keep, bad


@dataclass
class MappedAnswers:
    """Step 4's result, per kept row: the predicted node, the deciding stage, similarity,
    nodes tied, whether the row abstained, the text that was mapped and the parse flags."""

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
    others = [v for v in row["parsed"].options.values() if not is_nota(v)]
    nodes = {resolve(v.strip(), row["dataset"])[0] for v in others}
    return row["gt_node"] not in nodes


def map_answers(rows: list[dict], index: TaxonomyIndex, resolve, progress: bool | None) -> MappedAnswers:
    """Step 4 — answers → nodes with Alg. 1 (:mod:`~taxoforge.scores.mapping`).

    * an answer with a refusal cue is an abstention (stage ``abstention``, the root) unless
      its unrefused part names a node (``index.names_anything``); then that part is mapped
      (flag ``hedged_answer``);
    * "none of the above" chosen where the question offers it (stage
      ``none_of_the_above``) is right — the ground-truth node — when the ground truth is
      none of the other options, and otherwise wrong, scored as the root (an answer, not an
      abstention);
    * every other answer is mapped as it is; the question breaks ties between nodes
      sharing a name. An answer longer than the mapping's ``max_answer_chars`` is cut there
      and flagged ``truncated_to_<n>_chars`` (so the cost per answer stays bounded)."""
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
    named = index.names_anything([rows[i]["parsed"].unrefused for i in refusals])
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
    mres = index.map(texts, progress=bar.update if bar else None,
                     contexts=[rows[i].get("question") for i in to_map])
    t = time.perf_counter() - t
    if bar:
        bar.close()
    sel = np.asarray(to_map, np.int64)
    pred_idx[sel] = mres.node_idx
    stage[sel] = mres.stage
    score[sel] = mres.score
    tied[sel] = mres.tied
    for i in np.flatnonzero(tied > 1).tolist():
        flags[i].append("ambiguous_name")
    for i in sel[mres.truncated].tolist():
        flags[i].append(f"truncated_to_{index.config.max_answer_chars}_chars")
    stages, counts = np.unique(stage, return_counts=True) if n else ([], [])
    stats = dict(mres.stats, stages=dict(zip([str(x) for x in stages], [int(c) for c in counts])))
    return MappedAnswers(pred_idx, stage, score, tied, abstained, mapped_text, [",".join(f) for f in flags],
                         stats, t)


def measure_rows(rows: list[dict], tax, mapped: MappedAnswers, text_measures: bool, meteor: bool):
    """Step 5 — hP, hR, hF, accuracy and the text measures (an abstention's text is empty).
    Returns (hierarchical scores, text scores, METEOR status, seconds of the text measures)."""
    n = len(rows)
    gt_idx = tax.index_of([r["gt_node"] for r in rows]) if n else np.zeros(0, np.int64)
    h = hierarchical_scores(tax, mapped.pred_idx, gt_idx)
    t = time.perf_counter()
    if text_measures and n:
        ts = text_scores(["" if ab else r["answer"] for r, ab in zip(rows, mapped.abstained.tolist())],
                         [r["reference"] for r in rows], meteor=meteor)
        meteor_status = ts.pop("meteor_status")
    else:
        ts = {m: np.full(n, np.nan) for m in TEXT_MEASURES}
        meteor_status = "text measures disabled" if not text_measures else "no rows"
    return h, ts, meteor_status, time.perf_counter() - t


def assemble_samples(rows: list[dict], tax, mapped: MappedAnswers, h: dict, ts: dict, tables: TreeTables,
                     version: str, config: MappingConfig) -> pl.DataFrame:
    """Step 6 — one row per scored sample, with the taxonomy version and mapping config."""
    labels = tax._labels
    pred_idx = mapped.pred_idx

    def col(name):
        return [r[name] for r in rows]

    samples = pl.DataFrame({
        "file": col("file"), "line": col("line"), "id": col("id"), "model": col("model"),
        "dataset": col("dataset"), "prompt": col("prompt"), "output_raw": col("output"), "answer": col("answer"),
        "abstained": mapped.abstained, "mapped_text": mapped.mapped_text, "parse_flags": mapped.flags,
        "label": col("label"), "reference": col("reference"), "gt_node": col("gt_node"), "gt_via": col("gt_via"),
        "gt_detail": col("gt_detail"), "gt_partial": np.array(col("gt_partial"), dtype=bool),
        "pred_node": tax.ids[pred_idx].tolist(),
        "pred_label": [labels[i] if labels else None for i in pred_idx.tolist()],
        "map_stage": mapped.stage.tolist(), "map_similarity": mapped.score, "map_tied": mapped.tied,
        "depth_gt": h["depth_gt"],
        "depth_pred": h["depth_pred"], "depth_lca": h["depth_lca"], "correct": h["correct"],
        "hP": h["hP"], "hR": h["hR"], "hF": h["hF"], **{m: ts[m] for m in TEXT_MEASURES},
    }, schema_overrides={"line": pl.Int64, "label": pl.String, "pred_label": pl.String, "parse_flags": pl.String,
                         "mapped_text": pl.String,
                         "gt_via": pl.String, "gt_detail": pl.String,
                         "depth_gt": pl.Int64, "depth_pred": pl.Int64, "depth_lca": pl.Int64})
    return samples.with_columns(
        pl.lit(tables.name).alias("taxonomy"), pl.lit(version).alias("taxonomy_version"),
        pl.lit(config.config_id).alias("mapping_config_id"), pl.lit(config.to_json()).alias("mapping_config"),
    )


def _bad_rows_frame(bad: list[dict]) -> pl.DataFrame:
    """Bad rows in file order, whichever step rejected them."""
    bad = sorted(bad, key=lambda b: b["_pos"])
    rows = [{k: b.get(k) for k in BAD_ROW_SCHEMA} for b in bad]
    return pl.DataFrame(rows, schema=BAD_ROW_SCHEMA) if rows else pl.DataFrame(schema=BAD_ROW_SCHEMA)


def score_frame(rows: pl.DataFrame, taxonomy, *, config: MappingConfig | None = None,
                index: TaxonomyIndex | None = None, text_measures: bool = True, meteor: bool = True,
                progress: bool | None = None, index_dir: str | os.PathLike | None = None) -> ScoreRun:
    """Score the canonical table of :func:`~taxoforge.scores.readers.read_outputs`
    against ``taxonomy`` (anything :func:`load_taxonomy_tables` accepts), in the steps of
    the module docstring: screen, parse, resolve labels, map, measure, assemble.

    Without ``index``, the mapping index is the one stored beside the tree's folder (or
    under ``index_dir``, default ``$TAXOFORGE_CACHE_DIR/mapping-index``), built and stored
    the first time (:meth:`TaxonomyIndex.open`)."""
    t0 = time.perf_counter()
    tables = load_taxonomy_tables(taxonomy)
    config = config or (index.config if index is not None else MappingConfig())
    tax = tables.taxonomy() if index is None else index.taxonomy
    version = taxonomy_version(tables)
    t_index = time.perf_counter()
    index = index or TaxonomyIndex.open(tables, config, taxonomy=tax, cache_dir=index_dir, progress=progress)
    t_index = time.perf_counter() - t_index

    screened, bad_screen = screen_rows(rows)
    parsed, bad_parse = parse_rows(screened)
    t_gt = time.perf_counter()
    resolve = _resolver(tables, tax, index)
    kept, bad_label = resolve_labels(parsed, resolve)
    t_gt = time.perf_counter() - t_gt
    bad_df = _bad_rows_frame(bad_screen + bad_parse + bad_label)
    mapped = map_answers(kept, index, resolve, progress)
    h, ts, meteor_status, t_text = measure_rows(kept, tax, mapped, text_measures, meteor)
    samples = assemble_samples(kept, tax, mapped, h, ts, tables, version, config)

    info = {
        "taxonomy": tables.name, "taxonomy_version": version, "taxonomy_nodes": len(tax),
        "mapping_config": config.to_dict(), "mapping_config_id": config.config_id,
        "similarity": index.similarity.name, "meteor": meteor_status,
        "mapping_index": index.store.as_dict() if index.store is not None else {"built": True, "path": None},
        "rows": rows.height, "scored": len(kept), "bad_rows": bad_df.height,
        "bad_rows_by_reason": {str(k): int(v) for k, v in bad_df.group_by("reason").len().iter_rows()} if bad_df.height else {},
        "abstentions": int(samples["abstained"].sum()), "mapping_stats": mapped.stats,
        "duplicate_ids": duplicate_ids(rows).height if rows.height and {"model", "dataset", "prompt", "id", "line"} <= set(rows.columns) else 0,
        "truncated_answers": int(mapped.stats.get("truncated", 0)),
        "temperature": config.temperature, "stage_counts": mapped.stats["stages"],
        "ground_truth_methods": {m: int(n) for m, n in samples.group_by("gt_via").len().sort("gt_via").iter_rows()}
        if samples.height else {},
        "partial_ground_truths": int(samples["gt_partial"].sum()) if samples.height else 0,
        "partial_methods": list(PARTIAL_METHODS), "distinct_labels": resolve.links.height,
        "files": sorted(set(rows["file"].to_list())) if rows.height and "file" in rows.columns else [],
        "seconds": {"index": round(t_index, 3), "ground_truths": round(t_gt, 3), "mapping": round(mapped.seconds, 3),
                    "text_measures": round(t_text, 3),
                    "total": round(time.perf_counter() - t0, 3)},
    }
    return ScoreRun(samples=samples, leaderboard=leaderboard(samples), bad_rows=bad_df, info=info)


def score_file(path: str | os.PathLike, taxonomy, *, out_dir: str | os.PathLike | None = None,
               config: MappingConfig | None = None, columns: dict[str, str] | None = None,
               adapter: str = "auto", fmt: str | None = None, defaults: dict[str, str] | None = None,
               index: TaxonomyIndex | None = None, text_measures: bool = True, meteor: bool = True,
               progress: bool | None = None, plots: bool = True, header: bool = True,
               column_names=None, derive: dict[str, tuple[str, str]] | None = None,
               index_dir: str | os.PathLike | None = None) -> ScoreRun:
    """Score one model-output file against a taxonomy and, with ``out_dir``, write the
    results there (see :meth:`ScoreRun.write`).

    ``taxonomy``: a :class:`TreeTables`, a snapshot or tree folder, or ``NAME[@VERSION]``.
    ``columns``/``adapter``/``fmt``/``defaults``/``header``/``column_names``/``derive``: see
    :func:`read_outputs`.

    >>> run = score_file("data/examples/imagenet_example_outputs.jsonl",
    ...                  "data/assets/imagenet1k_taxonomy")            # doctest: +SKIP
    >>> print(run.markdown())                                          # doctest: +SKIP
    """
    rows = read_outputs(path, fmt=fmt, columns=columns, adapter=adapter, defaults=defaults, header=header,
                        column_names=column_names, derive=derive)
    run = score_frame(rows, taxonomy, config=config, index=index, text_measures=text_measures, meteor=meteor,
                      progress=progress, index_dir=index_dir)
    if out_dir is not None:
        run.info["outputs"] = {k: str(v) for k, v in run.write(out_dir, plots=plots).items()}
    return run
