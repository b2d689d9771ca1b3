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
   scored as the root; an answer that is a renamed species' name resolves as its label would
   (:func:`map_answers`).
5. **Measure** hP, hR, hF, accuracy (:mod:`~taxoforge.scores.hierarchical`) and the text
   measures (:mod:`~taxoforge.scores.text_measures`) against the reference text — the
   row's label when it was given as text, else the ground-truth node's label.
6. **Assemble** the per-sample table, and aggregate it by model × dataset × prompt
   (:func:`taxoforge.scores.leaderboard.leaderboard`).

**Citation.** The taxonomy is resolved once (:func:`taxoforge.scores.cited.cite_taxonomy`,
through :func:`taxoforge.snapshots.cite.resolve_taxonomy`): a snapshot folder is verified
against its manifest before it is cited (an altered one is refused, or with
``altered="content"`` cited by its own content hash), and the run cites a reference a store
can resolve — ``NAME@VERSION`` with the store's URL, or ``sha256:<content hash>``. Every
sample row and leaderboard row carries it (``taxonomy_version``, ``taxonomy_store``), with
the mapping configuration (JSON and a short id); ``run.json`` holds the whole citation.

**Several files** (:func:`score_files`) are read one by one, then scored as one table: one
taxonomy resolution, one mapping index, one ground-truth batch, one leaderboard;
``info["per_file"]`` and the ``file`` column of the bad rows say what each file gave.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from taxoforge.files import atomic_directory, write_parquet_atomic, write_text_atomic

from taxoforge.links.resolve import PARTIAL_METHODS, is_partial
from taxoforge.links.resolve import resolve_labels as link_ground_truths
from taxoforge.scores.cited import CitedTaxonomy, cite_taxonomy
from taxoforge.scores.confidence import BootstrapConfig
from taxoforge.scores.leaderboard import GROUP_KEYS, LEADERBOARD_MEASURES, leaderboard
from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex
from taxoforge.scores.hierarchical import hierarchical_scores
from taxoforge.scores.parse import UnparseableAnswer, is_nota, parse_answer
from taxoforge.scores.readers import duplicate_ids, read_outputs
from taxoforge.scores.report import (FIGURE_FORMATS, leaderboard_latex, leaderboard_markdown, plot_hp_hr,
                                     plot_ranks)
from taxoforge.scores.text_measures import TEXT_MEASURES, text_scores
from taxoforge.trees.tables import TreeTables

__all__ = ["ScoreRun", "GroundTruthResolver", "score_file", "score_files", "score_frame", "read_files",
           "leaderboard", "GROUP_KEYS", "LEADERBOARD_MEASURES", "screen_rows", "parse_rows", "resolve_labels",
           "map_answers", "measure_rows", "assemble_samples", "index_for", "index_record", "RUN_FILES"]
LINK_LABEL_COLUMNS = ("dataset", "label_id", "label_text")
BAD_ROW_SCHEMA = {"file": pl.String, "line": pl.Int64, "id": pl.String, "model": pl.String, "dataset": pl.String,
                  "prompt": pl.String, "reason": pl.String, "detail": pl.String}


# ---------------------------------------------------------------------------- taxonomy
def index_for(cited: CitedTaxonomy, config: MappingConfig | None = None,
              index: TaxonomyIndex | None = None, *, index_dir: str | os.PathLike | None = None,
              progress: bool | None = None) -> TaxonomyIndex:
    """The mapping index of a run: ``index`` when given (its tree is then shared with
    ``cited``), else the stored index of ``cited``'s tree under ``config``
    (:meth:`TaxonomyIndex.open`): memory-mapped when an earlier call, process or Dagster run
    built it, else built once (with a progress bar) and stored — under ``index_dir`` when
    given, else beside the tree folder, in the snapshot store, or in the cache
    (:func:`taxoforge.scores.mapping.store.index_place`). ``index.store`` says where and
    whether this call built it."""
    if index is not None:
        cited.use_taxonomy(index.taxonomy)
        return index
    return TaxonomyIndex.open(cited.tables, config or MappingConfig(), taxonomy=cited.taxonomy,
                              index_dir=index_dir, progress=progress)


def index_record(index: TaxonomyIndex) -> dict:
    """``info["mapping_index"]`` of a run: the stored index's folder, whether it was built or
    loaded and the seconds it took (:meth:`IndexInfo.as_dict`), or ``place: "memory"`` for an
    index built in memory and not stored."""
    if index.store is not None:
        return index.store.as_dict()
    return {"path": None, "built": True, "loaded": False, "seconds": None, "place": "memory"}


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
    breakdowns: dict[str, pl.DataFrame] = field(default_factory=dict)

    def markdown(self, max_rows: int = 50) -> str:
        return leaderboard_markdown(self.leaderboard, self.info, self.bad_rows, max_rows=max_rows)

    def latex(self) -> str:
        return leaderboard_latex(self.leaderboard, self.info)

    @property
    def scored_fraction(self) -> float:
        """Rows scored / rows read (0 when there were none)."""
        rows = self.info.get("rows", 0)
        return self.info.get("scored", 0) / rows if rows else 0.0

    def write(self, out_dir: str | os.PathLike, plots: bool = True,
              formats: tuple[str, ...] = FIGURE_FORMATS) -> dict[str, Path]:
        """Write the run as one folder ``out_dir``:

        * ``scores.parquet`` (one row per sample), ``bad_rows.parquet`` and ``bad_rows.csv``
          (every row not scored, with its file, line and reason), ``run.json`` (the info,
          with the taxonomy citation);
        * ``leaderboard.parquet``, ``.csv``, ``.md`` and ``.tex`` (LaTeX, ``booktabs``);
        * ``breakdowns/<name>.parquet`` and ``.csv`` for each breakdown table (per level, per
          rank, consistency, outcomes …);
        * the figures ``hp_vs_hr`` and ``model_ranks`` in each of ``formats`` (PNG at 300 dpi,
          PDF, SVG), when there are samples.

        Everything is written into a temporary folder beside it, which then replaces
        ``out_dir`` whole (:func:`taxoforge.files.atomic_directory`), so a killed run never
        leaves a mix of two runs and a run without samples never keeps an older run's
        plots. An existing ``out_dir`` must be empty or an earlier run's folder."""

        out = Path(out_dir)
        _check_replaceable(out, RUN_FILES)
        info = json.dumps(_json_safe(self.info), indent=2, sort_keys=True, default=str)
        with atomic_directory(out) as tmp:
            paths = {
                "scores": write_parquet_atomic(self.samples, tmp / "scores.parquet"),
                "leaderboard": write_parquet_atomic(self.leaderboard, tmp / "leaderboard.parquet"),
                "leaderboard_csv": write_text_atomic(tmp / "leaderboard.csv", _csv(self.leaderboard)),
                "leaderboard_tex": write_text_atomic(tmp / "leaderboard.tex", self.latex()),
                "bad_rows": write_parquet_atomic(self.bad_rows, tmp / "bad_rows.parquet"),
                "bad_rows_csv": write_text_atomic(tmp / "bad_rows.csv", _csv(self.bad_rows)),
                "leaderboard_md": write_text_atomic(tmp / "leaderboard.md", self.markdown(max_rows=10_000)),
                "run": write_text_atomic(tmp / "run.json", info),
            }
            for name, table in self.breakdowns.items():
                paths[f"breakdown_{name}"] = write_parquet_atomic(table, tmp / "breakdowns" / f"{name}.parquet")
                paths[f"breakdown_{name}_csv"] = write_text_atomic(tmp / "breakdowns" / f"{name}.csv", _csv(table))
            if plots and self.samples.height:
                for fig, plot in (("hp_vs_hr", plot_hp_hr), ("model_ranks", plot_ranks)):
                    for fmt, p in plot(self.leaderboard, tmp / fig, formats=formats).items():
                        paths[fig if fmt == "png" else f"{fig}_{fmt}"] = p
        return {k: out / p.relative_to(tmp) for k, p in paths.items()}


RUN_FILES = frozenset({"scores.parquet", "leaderboard.parquet", "leaderboard.csv", "leaderboard.tex",
                       "bad_rows.parquet", "bad_rows.csv", "leaderboard.md", "run.json", "breakdowns",
                       *(f"{fig}.{fmt}" for fig in ("hp_vs_hr", "model_ranks") for fmt in ("png", "pdf", "svg"))})


def _csv(table: pl.DataFrame) -> str:
    """CSV text of ``table``; nested columns (lists) as JSON text."""
    nested = [c for c, t in table.schema.items() if t.is_nested()]
    if nested:
        table = table.with_columns([pl.col(c).map_elements(lambda v: json.dumps(v.to_list() if hasattr(v, "to_list")
                                                                                 else v, default=str),
                                                           return_dtype=pl.String) for c in nested])
    return table.write_csv()


def _json_safe(obj):
    """``obj`` with NaN and infinities as null (JSON has no NaN)."""
    if isinstance(obj, float):
        return None if obj != obj or obj in (float("inf"), float("-inf")) else obj
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    return obj


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


def screen_rows(rows: pl.DataFrame, require_label: bool = True) -> tuple[list[dict], list[dict]]:
    """Step 1 — rows that cannot be scored (no output, no ground truth, output not text)
    become bad rows; the rest go on. Each row keeps its position ``_pos``.
    ``require_label=False`` (mapping answers without scoring them) lets rows without a
    ground truth through."""
    keep, bad = [], []
    for pos, r in enumerate(rows.iter_rows(named=True)):
        where = {"_pos": pos, **{k: r.get(k) for k in ("file", "line", "id", "model", "dataset", "prompt")}}
        label = r.get("label")
        if r["output_type"] == "NoneType":
            bad.append({**where, "reason": "missing model output", "detail": "output is null or absent"})
        elif require_label and (label is None or not str(label).strip()):
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
      and flagged ``truncated_to_<n>_chars`` (so the cost per answer stays bounded);
    * an answer shaped like a binomial or trinomial that no stage matched as a whole name
      (a species renamed since the model learnt it: *Notropis heterodon*) is resolved by the
      label linker, as a ground truth is: by one of :data:`ANSWER_LINK_METHODS` it is that
      node (stage ``linked_name``, flag ``answer_<method>``), so an answer equal to its label
      always means the label's node."""
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
                     version: str, config: MappingConfig, store: str | None = None) -> pl.DataFrame:
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
        pl.lit(store, dtype=pl.String).alias("taxonomy_store"),
        pl.lit(config.config_id).alias("mapping_config_id"), pl.lit(config.to_json()).alias("mapping_config"),
    )


def _bad_rows_frame(bad: list[dict]) -> pl.DataFrame:
    """Bad rows in file order, whichever step rejected them."""
    bad = sorted(bad, key=lambda b: b["_pos"])
    rows = [{k: b.get(k) for k in BAD_ROW_SCHEMA} for b in bad]
    return pl.DataFrame(rows, schema=BAD_ROW_SCHEMA) if rows else pl.DataFrame(schema=BAD_ROW_SCHEMA)


def _per_file(rows: pl.DataFrame, samples: pl.DataFrame, bad: pl.DataFrame) -> list[dict]:
    """Rows read, scored and not scored (by reason) per file, in the order the files were given."""
    if not rows.height or "file" not in rows.columns:
        return []
    files = rows["file"].unique(maintain_order=True).to_list()
    n_rows = dict(rows.group_by("file").len().iter_rows())
    n_scored = dict(samples.group_by("file").len().iter_rows()) if samples.height else {}
    reasons: dict[str, dict[str, int]] = {}
    for f, r, n in (bad.group_by("file", "reason").len().iter_rows() if bad.height else []):
        reasons.setdefault(f, {})[str(r)] = int(n)
    return [{"file": f, "rows": int(n_rows.get(f, 0)), "scored": int(n_scored.get(f, 0)),
             "bad_rows": int(sum(reasons.get(f, {}).values())), "bad_rows_by_reason": reasons.get(f, {})}
            for f in files]


def score_frame(rows: pl.DataFrame, taxonomy, *, config: MappingConfig | None = None,
                index: TaxonomyIndex | None = None, text_measures: bool = True, meteor: bool = True,
                progress: bool | None = None, store=None, altered: str = "refuse",
                ci: BootstrapConfig | None = BootstrapConfig(), breakdowns: bool = True,
                index_dir: str | os.PathLike | None = None) -> ScoreRun:
    """Score the canonical table of :func:`~taxoforge.scores.readers.read_outputs` (one
    file's, or several files' concatenated) against ``taxonomy`` in the steps of the module
    docstring: screen, parse, resolve labels, map, measure, assemble.

    ``taxonomy``: a :class:`~taxoforge.scores.cited.CitedTaxonomy` (resolved once for many
    calls), or anything :func:`~taxoforge.scores.cited.cite_taxonomy` takes — ``NAME``,
    ``NAME@VERSION``, ``sha256:HEX`` in ``store``, a snapshot or tree folder, a
    :class:`TreeTables`; ``altered``: ``"refuse"`` a snapshot folder that no longer matches
    its manifest, or ``"content"`` (cite it by its content hash). ``index``: a mapping index
    of the same tree, shared between calls; without one the tree's stored index is loaded
    (built and stored the first time; ``index_dir``: where, see :func:`index_for`). ``ci``:
    the bootstrap of the leaderboard's intervals (None: none); ``breakdowns``: the
    leaderboard's breakdown columns and tables."""
    t0 = time.perf_counter()
    cited = cite_taxonomy(taxonomy, store=store, altered=altered)
    tables = cited.tables
    config = config or (index.config if index is not None else MappingConfig())
    t_index = time.perf_counter()
    index = index_for(cited, config, index, index_dir=index_dir, progress=progress)
    tax = index.taxonomy
    t_index = time.perf_counter() - t_index
    version = cited.ref

    screened, bad_screen = screen_rows(rows)
    parsed, bad_parse = parse_rows(screened)
    t_gt = time.perf_counter()
    resolve = _resolver(tables, tax, index)
    kept, bad_label = resolve_labels(parsed, resolve)
    t_gt = time.perf_counter() - t_gt
    bad_df = _bad_rows_frame(bad_screen + bad_parse + bad_label)
    mapped = map_answers(kept, index, resolve, progress)
    h, ts, meteor_status, t_text = measure_rows(kept, tax, mapped, text_measures, meteor)
    samples = assemble_samples(kept, tax, mapped, h, ts, tables, version, config, cited.store)
    t_lb = time.perf_counter()
    tree = cited.ranked_tree() if breakdowns and samples.height else None
    tabs = _breakdown_tables(samples, tree) if tree is not None else {}
    board = leaderboard(samples, GROUP_KEYS, ci=ci, tree=tree, breakdowns=tabs)  # its columns reuse the tables
    t_lb = time.perf_counter() - t_lb

    info = {
        "taxonomy": cited.name, "taxonomy_version": version, "taxonomy_store": cited.store,
        "citation": cited.citation.as_dict(), "taxonomy_nodes": len(tax),
        "mapping_config": config.to_dict(), "mapping_config_id": config.config_id,
        "similarity": index.similarity.name, "meteor": meteor_status, "mapping_index": index_record(index),
        "rows": rows.height, "scored": len(kept), "bad_rows": bad_df.height,
        "scored_fraction": round(len(kept) / rows.height, 6) if rows.height else 0.0,
        "bad_rows_by_reason": {str(k): int(v) for k, v in bad_df.group_by("reason").len().iter_rows()} if bad_df.height else {},
        "abstentions": int(samples["abstained"].sum()), "mapping_stats": mapped.stats,
        "duplicate_ids": duplicate_ids(rows).height if rows.height and {"model", "dataset", "prompt", "id", "line"} <= set(rows.columns) else 0,
        "truncated_answers": int(mapped.stats.get("truncated", 0)),
        "temperature": config.temperature, "stage_counts": mapped.stats["stages"],
        "ground_truth_methods": {m: int(n) for m, n in samples.group_by("gt_via").len().sort("gt_via").iter_rows()}
        if samples.height else {},
        "partial_ground_truths": int(samples["gt_partial"].sum()) if samples.height else 0,
        "partial_methods": list(PARTIAL_METHODS), "distinct_labels": resolve.links.height,
        "files": rows["file"].unique(maintain_order=True).to_list() if rows.height and "file" in rows.columns else [],
        "per_file": _per_file(rows, samples, bad_df),
        "confidence_intervals": (ci.as_dict() if ci is not None and ci.n_resamples > 0 else {}),
        "breakdowns": sorted(tabs),
        "seconds": {"index": round(t_index, 3), "ground_truths": round(t_gt, 3), "mapping": round(mapped.seconds, 3),
                    "text_measures": round(t_text, 3), "leaderboard": round(t_lb, 3),
                    "total": round(time.perf_counter() - t0, 3)},
    }
    return ScoreRun(samples=samples, leaderboard=board, bad_rows=bad_df, info=info, breakdowns=tabs)


def _breakdown_tables(samples: pl.DataFrame, tree) -> dict[str, pl.DataFrame]:
    """Issue 14's breakdown tables (:func:`taxoforge.scores.breakdowns.breakdown_tables`)
    over the rows with a full ground truth."""
    from taxoforge.scores.breakdowns import breakdown_tables

    full = samples.filter(~pl.col("gt_partial"))
    return breakdown_tables(full, tree, GROUP_KEYS) if full.height else {}


def read_files(paths, *, fmt: str | None = None, columns: dict[str, str] | None = None, adapter: str = "auto",
               defaults: dict[str, str] | None = None, header: bool = True, column_names=None,
               derive: dict[str, tuple[str, str]] | None = None,
               require: tuple[str, ...] = ("output", "label")) -> pl.DataFrame:
    """The canonical tables of ``paths`` (:func:`~taxoforge.scores.readers.read_outputs`),
    one after the other; the ``file`` column says where each row came from. A file that
    cannot be read raises :class:`~taxoforge.scores.readers.OutputFileError` naming it."""
    frames = [read_outputs(p, fmt=fmt, columns=columns, adapter=adapter, defaults=defaults, header=header,
                           column_names=column_names, derive=derive, require=require) for p in paths]
    if not frames:
        raise ValueError("no model-output files given")
    return pl.concat(frames, how="diagonal_relaxed") if len(frames) > 1 else frames[0]


def score_files(paths, taxonomy, *, out_dir: str | os.PathLike | None = None,
                config: MappingConfig | None = None, columns: dict[str, str] | None = None,
                adapter: str = "auto", fmt: str | None = None, defaults: dict[str, str] | None = None,
                index: TaxonomyIndex | None = None, text_measures: bool = True, meteor: bool = True,
                progress: bool | None = None, plots: bool = True, header: bool = True,
                column_names=None, derive: dict[str, tuple[str, str]] | None = None, store=None,
                altered: str = "refuse", ci: BootstrapConfig | None = BootstrapConfig(),
                breakdowns: bool = True, index_dir: str | os.PathLike | None = None) -> ScoreRun:
    """Score several model-output files against one taxonomy in one run (one citation, one
    mapping index, one combined leaderboard; ``info["per_file"]`` and the bad rows' ``file``
    say what each file gave) and, with ``out_dir``, write the results there
    (:meth:`ScoreRun.write`). Every file is read before anything is scored, so a file that
    cannot be read stops the run before any work.

    ``taxonomy``: a :class:`~taxoforge.scores.cited.CitedTaxonomy`, a :class:`TreeTables`,
    a snapshot or tree folder, or ``NAME[@VERSION]`` / ``sha256:HEX`` in ``store``
    (:func:`score_frame`, also for ``config``, ``index``, ``text_measures``, ``meteor``,
    ``progress``, ``altered``, ``ci``, ``breakdowns``, ``index_dir``).
    ``columns``/``adapter``/``fmt``/``defaults``/``header``/``column_names``/``derive``: see
    :func:`read_outputs`; ``plots``: write the figures with the results."""
    rows = read_files(paths, fmt=fmt, columns=columns, adapter=adapter, defaults=defaults, header=header,
                      column_names=column_names, derive=derive)
    run = score_frame(rows, taxonomy, config=config, index=index, text_measures=text_measures, meteor=meteor,
                      progress=progress, store=store, altered=altered, ci=ci, breakdowns=breakdowns,
                      index_dir=index_dir)
    if out_dir is not None:
        run.info["outputs"] = {k: str(v) for k, v in run.write(out_dir, plots=plots).items()}
    return run


def score_file(path: str | os.PathLike, taxonomy, **options) -> ScoreRun:
    """Score one model-output file against a taxonomy and, with ``out_dir``, write the
    results there (see :meth:`ScoreRun.write`): :func:`score_files` of one file, with the same
    keyword ``options``.

    >>> run = score_file("data/examples/imagenet_example_outputs.jsonl", "imagenet1k")  # doctest: +SKIP
    >>> print(run.markdown())                                          # doctest: +SKIP
    """
    return score_files([path], taxonomy, **options)
