"""One scoring run: model outputs + a taxonomy → per-sample scores, leaderboard, bad rows.

:func:`score_file` reads a file (:mod:`~taxoforge.scores.readers.files`), :func:`score_frame`
does the rest in named steps, each a function of :mod:`taxoforge.scores.steps`
(:func:`screen_rows`, :func:`parse_rows`, :func:`resolve_labels`, :func:`map_answers`,
:func:`measure_rows`, :func:`assemble_samples`):

1. **Screen.** Rows that cannot be scored are reported with their line numbers and a reason —
   ``missing ground truth``, ``missing model output``, ``unparseable output``,
   ``unknown label``, ``ambiguous label`` — and counted; they never vanish silently.
2. **Parse** each output (:func:`~taxoforge.scores.mapping.parse.parse_answer`): templates
   stripped, multiple-choice letters resolved, abstentions detected.
3. **Resolve labels**: ground truth → node by the label linker,
   :func:`taxoforge.links.resolve.resolve_labels` (docs/method.md#ground-truths: node id, id with
   the taxonomy's source prefix, the taxonomy's ``links`` table, exact and normalised name,
   synonym, epithet variant, genus transfer, and last the species or genus as a *partial*
   ground truth). Every sample says how (``gt_via``, ``gt_detail``) and whether its ground
   truth is partial (``gt_partial``; counted apart in the leaderboard); ``info`` counts the
   rows per method. A label that does not resolve is a bad row (``unknown label`` or
   ``ambiguous label``) whose detail says what was tried.
4. **Map** answer → node with Alg. 1 (:mod:`~taxoforge.scores.mapping`); abstentions are
   scored as the root; an answer that is a renamed species' name resolves as its label would
   (:func:`map_answers`).
5. **Measure** hP, hR, hF, accuracy (:mod:`~taxoforge.scores.measures.hierarchical`) and the text
   measures (:mod:`~taxoforge.scores.measures.text`) against the reference text — the
   row's label when it was given as text, else the ground-truth node's label.
6. **Assemble** the per-sample table, and aggregate it by model × dataset × prompt
   (:func:`taxoforge.scores.reports.leaderboard.leaderboard`).

**Citation.** The taxonomy is opened once (:func:`taxoforge.snapshots.open.open_taxonomy`:
resolved, verified, cited and memory-mapped): a snapshot folder is verified
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

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from taxoforge.files import atomic_directory, write_parquet_atomic, write_text_atomic
from taxoforge.files.debris import WORK_SUFFIX
from taxoforge.files.tables import csv_text
from taxoforge.links.genus_rules import is_guess
from taxoforge.links.resolve import PARTIAL_METHODS
from taxoforge.memory import cycle_collection_paused
from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex
from taxoforge.scores.mapping.embedding_measures import similarity_record
from taxoforge.scores.measures.breakdowns import breakdown_tables
from taxoforge.scores.measures.heights import height_record
from taxoforge.scores.memos import mapping_memo, parse_memo, resampling_memo, text_memo
from taxoforge.scores.measures.mistakes import map_ranked, mistake_columns
from taxoforge.scores.options import ReadOptions, ScoreOptions, split_options
from taxoforge.scores.readers.files import duplicate_ids
from taxoforge.scores.readers.sources import read_files, read_paths
from taxoforge.scores.reports.figures import FIGURE_FILES, FIGURE_FORMATS, write_run_figures
from taxoforge.scores.reports.latex_tables import leaderboard_latex
from taxoforge.scores.reports.leaderboard import (GROUP_KEYS, LEADERBOARD_MEASURES, harness_agreement, leaderboard,
                                                  with_harness_agreement)
from taxoforge.scores.reports.run_figures import FIGURES_LOG, figures_entry, new_run_id, write_run_record
from taxoforge.scores.reports.tables import leaderboard_markdown
from taxoforge.scores.steps import (BAD_ROW_SCHEMA, GroundTruthResolver, MappedAnswers, assemble_samples,
                                    bad_rows_frame, map_answers, measure_rows, parse_rows, resolve_labels, screen_rows)
from taxoforge.scores.timings import Timings
from taxoforge.snapshots.open import open_taxonomy
from taxoforge.snapshots.tree_cache import ResolvedLabels
from taxoforge.trees.taxonomy import Taxonomy
from taxoforge.versions import package_versions

__all__ = ["ScoreRun", "GroundTruthResolver", "score_file", "score_files", "score_frame", "read_files",
           "leaderboard", "GROUP_KEYS", "LEADERBOARD_MEASURES", "screen_rows", "parse_rows", "resolve_labels",
           "map_answers", "measure_rows", "assemble_samples", "index_for", "index_record", "RUN_FILES", "ReadOptions", "ScoreOptions",
           "harness_agreement", "with_harness_agreement",
           "MappedAnswers", "BAD_ROW_SCHEMA"]


# ---------------------------------------------------------------------------- taxonomy
def index_for(tree: Taxonomy, config: MappingConfig | None = None,
              index: TaxonomyIndex | None = None, *, index_dir: str | os.PathLike | None = None,
              progress: bool | None = None, ahead=None) -> TaxonomyIndex:
    """The mapping index of a run: ``index`` when given (built for a tree of as many nodes as
    ``tree``), else the stored index of ``tree`` under ``config`` (:meth:`TaxonomyIndex.open`):
    memory-mapped when an earlier call, process or Dagster run built it, else built once (with
    a progress bar) and stored — under ``index_dir`` when given, else beside the tree folder,
    in the snapshot store, or in the cache (:func:`taxoforge.snapshots.tree_cache.index_place`).
    ``index.store`` says where and whether this call built it.

    Parameters
    ----------
    tree : Taxonomy
        The run's taxonomy (:func:`~taxoforge.snapshots.open.open_taxonomy`).
    config : MappingConfig, optional
        The mapping configuration.
    index : TaxonomyIndex, optional
        The mapping index.
    index_dir : str or os.PathLike, optional
        A folder the user named for indexes, if any.
    progress : bool, optional
        Whether to show a progress bar.
    ahead : TablesBuiltAhead, optional
        The index's name tables, built since the tree's tables were read
        (:class:`~taxoforge.scores.mapping.store.TablesBuiltAhead`, given to
        :func:`~taxoforge.snapshots.open.open_taxonomy` as ``when_read``).

    Returns
    -------
    TaxonomyIndex
    """
    if index is not None:
        if len(index.taxonomy) != len(tree):
            raise ValueError(f"the mapping index was built for a tree of {len(index.taxonomy)} nodes, not for "
                             f"{tree.ref} ({len(tree)} nodes)")
        return index
    return TaxonomyIndex.open(tree, config or MappingConfig(), index_dir=index_dir, progress=progress, ahead=ahead)


def _guesses(samples: pl.DataFrame) -> dict:
    """How many scored rows rest on a genus transfer no synonym supports (a guess,
    :func:`taxoforge.links.genus_rules.is_guess`), and their labels (up to 50)."""
    if not samples.height or "gt_detail" not in samples.columns:
        return {"rows": 0, "labels": []}
    g = samples.filter((pl.col("gt_via") == "genus_transfer") & is_guess(pl.col("gt_detail")))
    return {"rows": g.height, "labels": g["label"].cast(pl.String).unique().sort().head(50).to_list()}


def index_record(index: TaxonomyIndex) -> dict:
    """``info["mapping_index"]`` of a run: the stored index's folder, whether it was built or
    loaded and the seconds it took (:meth:`IndexInfo.as_dict`), or ``place: "memory"`` for an
    index built in memory and not stored.

    Parameters
    ----------
    index : TaxonomyIndex
        The mapping index.

    Returns
    -------
    dict
        ``info["mapping_index"]`` of a run: the stored index's folder, whether it was
        built or loaded and the seconds it took (:meth:`IndexInfo.as_dict`), or ``place:
        "memory"`` for an index built in memory and not stored.
    """
    if index.store is not None:
        return index.store.as_dict()
    return {"path": None, "built": True, "loaded": False, "seconds": None, "place": "memory"}


# ---------------------------------------------------------------------------- run
@dataclass
class ScoreRun:
    """The result of one run. ``samples`` (one row per scored sample), ``leaderboard`` (model ×
    dataset × prompt), ``bad_rows`` (every row not scored, with its line and reason), ``info``
    (taxonomy, version, mapping configuration, counts, timings).

    Attributes
    ----------
    samples : polars.DataFrame
        One row per scored sample.
    leaderboard : polars.DataFrame
        One row per model × dataset × prompt.
    bad_rows : polars.DataFrame
        Every row not scored, with its line and reason.
    info : dict
        The run's record (citation, configuration, counts, timings).
    breakdowns : dict[str, polars.DataFrame]
        The breakdown tables (:func:`~taxoforge.scores.measures.breakdowns.breakdown_tables`).
    """

    samples: pl.DataFrame
    leaderboard: pl.DataFrame
    bad_rows: pl.DataFrame
    info: dict = field(default_factory=dict)
    breakdowns: dict[str, pl.DataFrame] = field(default_factory=dict)

    def markdown(self, max_rows: int = 50) -> str:
        """The run's leaderboard as Markdown (:func:`~taxoforge.scores.reports.tables.leaderboard_markdown`).

        Parameters
        ----------
        max_rows : int, optional
            Most leaderboard rows shown.

        Returns
        -------
        str
            The Markdown text.
        """
        return leaderboard_markdown(self.leaderboard, self.info, self.bad_rows, max_rows=max_rows)

    def latex(self, wide: bool = False) -> str:
        """The run's leaderboard as a LaTeX table one column wide, or page wide
        (:func:`~taxoforge.scores.reports.latex_tables.leaderboard_latex`).

        Parameters
        ----------
        wide : bool, optional
            The page-wide ``table*``.

        Returns
        -------
        str
            The LaTeX text.
        """
        return leaderboard_latex(self.leaderboard, self.info, wide=wide, names=self.info.get("display_names"))

    @property
    def scored_fraction(self) -> float:
        """Rows scored / rows read (0 when there were none)."""
        rows = self.info.get("rows", 0)
        return self.info.get("scored", 0) / rows if rows else 0.0

    def write(self, out_dir: str | os.PathLike, plots: bool | str = True,
              formats: tuple[str, ...] = FIGURE_FORMATS, timings: Timings | None = None) -> dict[str, Path]:
        """Write the run as one folder ``out_dir``:

        * ``scores.parquet`` (one row per sample), ``bad_rows.parquet`` and ``bad_rows.csv``
          (every row not scored, with its file, line and reason), ``run.json`` (the info,
          with the taxonomy citation);
        * ``leaderboard.parquet``, ``.csv``, ``.md``, ``.tex`` (LaTeX, ``booktabs``, one column
          wide) and ``leaderboard_wide.tex`` (page wide; :mod:`~taxoforge.scores.reports.latex_tables`);
        * ``breakdowns/<name>.parquet`` and ``.csv`` for each breakdown table (per level, per
          rank, consistency, outcomes …);
        * the figures ``hp_vs_hr``, ``model_ranks`` and ``rank_accuracy``, one column wide and
          page wide (``<name>_wide``), in each of ``formats`` (PNG at 300 dpi, PDF, SVG), when
          there are samples
          (:func:`taxoforge.scores.reports.figures.write_run_figures`; a figure with nothing to show
          is not drawn, and ``run.json``'s ``figures_not_drawn`` says why); ``run.json``'s
          ``figures`` entry says whether they were drawn
          (:mod:`~taxoforge.scores.reports.run_figures`).

        Each write gives the run a new ``run_id`` (``info["run_id"]``, in ``run.json``): a
        drawing of the figures in another process
        (:func:`~taxoforge.scores.reports.run_figures.draw_folder_figures`) writes only while
        the folder holds the run it was started for.

        CSV files hold every text cell safe in spreadsheets
        (:func:`taxoforge.files.tables.csv_text`).

        Everything is written into a temporary folder beside it, which then replaces
        ``out_dir`` whole (:func:`taxoforge.files.atomic_directory`), so a killed run never
        leaves a mix of two runs and a run without samples never keeps an older run's
        plots. An existing ``out_dir`` must be empty or an earlier run's folder.

        Parameters
        ----------
        out_dir : str or os.PathLike
            The folder to write.
        plots : bool or str, optional
            ``True`` (or ``"now"``): the figures are drawn here, before the folder takes its
            place; ``False`` (or ``"none"``): none (``figures.status`` ``none``); ``"later"``:
            none here, and ``figures.status`` is ``drawing`` — the caller then draws them in
            another process (what ``taxoforge score`` does) with
            :func:`~taxoforge.scores.reports.run_figures.draw_folder_figures`.
        formats : tuple[str, ...], optional
            The figures' formats.
        timings : Timings, optional
            The run's clock: drawing the figures (``figures``) and writing the tables
            (``write``) are timed into it, and ``run.json``, written last, holds its seconds
            (``info["seconds"]``) up to that moment.

        Returns
        -------
        dict[str, Path]
            What was written, by name.
        """

        mode = {True: "now", False: "none"}.get(plots, plots) if isinstance(plots, bool) else plots
        if mode not in ("now", "none", "later"):
            raise ValueError(f"plots={plots!r}: expected True, False, 'now', 'none' or 'later'")
        out = Path(out_dir)
        _check_replaceable(out, RUN_FILES)
        t = timings if timings is not None else Timings()
        self.info["run_id"] = new_run_id()
        with atomic_directory(out) as tmp:
            figures = {}
            if not self.samples.height:
                self.info["figures"] = figures_entry("none", reason="no samples")
            elif mode == "now":
                f0 = time.perf_counter()
                with t.phase("figures"):
                    figures, self.info["figures_not_drawn"] = write_run_figures(
                        self.leaderboard, self.breakdowns, tmp, formats, names=self.info.get("display_names"))
                self.info["figures"] = figures_entry("drawn", files=sorted(p.name for p in figures.values()),
                                                     not_drawn=self.info["figures_not_drawn"],
                                                     seconds=round(time.perf_counter() - f0, 3))
            else:
                self.info["figures"] = figures_entry("drawing" if mode == "later" else "none")
            w0 = time.perf_counter()
            paths = {
                "scores": write_parquet_atomic(self.samples, tmp / "scores.parquet"),
                "leaderboard": write_parquet_atomic(self.leaderboard, tmp / "leaderboard.parquet"),
                "leaderboard_csv": write_text_atomic(tmp / "leaderboard.csv", _csv(self.leaderboard)),
                "leaderboard_tex": write_text_atomic(tmp / "leaderboard.tex", self.latex()),
                "leaderboard_wide_tex": write_text_atomic(tmp / "leaderboard_wide.tex", self.latex(wide=True)),
                "bad_rows": write_parquet_atomic(self.bad_rows, tmp / "bad_rows.parquet"),
                "bad_rows_csv": write_text_atomic(tmp / "bad_rows.csv", _csv(self.bad_rows)),
                "leaderboard_md": write_text_atomic(tmp / "leaderboard.md", self.markdown(max_rows=10_000)),
            }
            for name, table in self.breakdowns.items():
                paths[f"breakdown_{name}"] = write_parquet_atomic(table, tmp / "breakdowns" / f"{name}.parquet")
                paths[f"breakdown_{name}_csv"] = write_text_atomic(tmp / "breakdowns" / f"{name}.csv", _csv(table))
            paths.update(figures)
            t.add("write", time.perf_counter() - w0)
            if timings is not None:
                self.info["seconds"] = t.as_dict()
            paths["run"] = write_run_record(tmp, self.info)
        return {k: out / p.relative_to(tmp) for k, p in paths.items()}


RUN_FILES = frozenset({"scores.parquet", "leaderboard.parquet", "leaderboard.csv", "leaderboard.tex",
                       "leaderboard_wide.tex", "bad_rows.parquet", "bad_rows.csv", "leaderboard.md", "run.json",
                       "breakdowns", FIGURES_LOG, *FIGURE_FILES})


def _csv(table: pl.DataFrame) -> str:
    """CSV text of ``table``: nested columns as JSON text, text cells safe in spreadsheets
    (:func:`taxoforge.files.tables.csv_text`)."""
    return csv_text(table)


#: a file an atomic write is still writing (:func:`taxoforge.files.atomic_writer`): ``.NAME.<hex>.tmp``
_WRITING = re.compile(rf"\.(.+)\.{WORK_SUFFIX}\.tmp")


def _check_replaceable(out: Path, allowed: frozenset[str]) -> None:
    """``out`` may be replaced by a new run: absent, or a folder holding only ``allowed``
    names (an earlier run's, and the temporary files of a figure its drawing is writing) —
    a folder of other files is never replaced."""
    if not out.exists():
        return
    if not out.is_dir():
        raise FileExistsError(f"{out}: exists and is not a folder")
    foreign = sorted(p.name for p in out.iterdir()
                     if p.name not in allowed and not (_WRITING.fullmatch(p.name) and
                                                       _WRITING.fullmatch(p.name)[1] in allowed))
    if foreign:
        raise FileExistsError(f"{out}: holds files that are not a scoring run's ({', '.join(foreign[:5])}); "
                              "write the results to a new or empty folder")


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


@cycle_collection_paused()
def score_frame(rows: pl.DataFrame, taxonomy, options: ScoreOptions | None = None, *,
                timings: Timings | None = None, **kwargs) -> ScoreRun:
    """Score the canonical table of :func:`~taxoforge.scores.readers.files.read_outputs` (one
    file's, or several files' concatenated) against ``taxonomy`` in the steps of the module
    docstring: screen, parse, resolve labels, map, measure, assemble.

    ``taxonomy``: a :class:`~taxoforge.trees.taxonomy.Taxonomy` opened by
    :func:`~taxoforge.snapshots.open.open_taxonomy` (once for many calls), or anything it
    opens — ``NAME``, ``NAME@VERSION``, ``sha256:HEX`` in ``store``, a snapshot or tree
    folder, a :class:`TreeTables`. ``options``: a :class:`~taxoforge.scores.options.ScoreOptions` (the
    mapping configuration, a shared ``index``, ``index_dir``, ``text_measures``, ``meteor``,
    ``progress``, ``store``, ``altered``, ``ci``, ``breakdowns``); keyword options are the
    same fields, applied on top of it (``score_frame(rows, tax, meteor=False)``). Ties
    between nodes that name an answer equally well go to ``label_set``'s nodes (default: the
    ground truths of each row's dataset).

    Parameters
    ----------
    rows : polars.DataFrame
    taxonomy : Taxonomy, TreeTables, str or path
    options : ScoreOptions, optional
    timings : Timings, optional
        The run's clock (:class:`~taxoforge.scores.timings.Timings`; default: one started
        here): its phases (``taxonomy``, ``tree``, ``index``, ``parse``, ``ground_truths``,
        ``mapping``, ``measures``, ``text_measures``, ``samples``, ``breakdowns``,
        ``leaderboard``) and their ``total`` are ``info["seconds"]``.
    **kwargs
        Fields of :class:`~taxoforge.scores.options.ScoreOptions`.

    Returns
    -------
    ScoreRun
    """
    o = split_options(kwargs, score=options, where="score_frame")[1] if kwargs else (options or ScoreOptions())
    config, index, progress, ci, breakdowns = o.config, o.index, o.progress, o.ci, o.breakdowns
    text_measures, meteor = o.text_measures, o.meteor
    t = timings if timings is not None else Timings()
    with t.phase("taxonomy"):
        tree = open_taxonomy(taxonomy, o.store, remote=o.remote, cache=o.cache, altered=o.altered,
                             index_dir=o.index_dir)
    if tree.tables is None or tree.citation is None:
        raise ValueError(f"{tree.name}: a scoring run needs the taxonomy's tables and citation; give its tables, "
                         "a folder or NAME[@VERSION] (taxoforge.snapshots.open.open_taxonomy)")
    tables, version, store = tree.tables, tree.ref, tree.citation.store
    config = config or (index.config if index is not None else MappingConfig())
    with t.phase("index"):
        index = index_for(tree, config, index, index_dir=o.index_dir, progress=progress)
        tax = index.taxonomy

    with t.phase("parse"):
        screened, bad_screen = screen_rows(rows)
        parsed, bad_parse = parse_rows(screened, memo=parse_memo())
    with t.phase("ground_truths"):
        stored = ResolvedLabels(tree.stored_path) if tree.stored_path is not None and tax is tree else None
        resolve = GroundTruthResolver(tables, tax, stored=stored)
        kept, bad_label = resolve_labels(parsed, resolve)
        bad_df = bad_rows_frame(bad_screen + bad_parse + bad_label)
    with t.phase("mapping"):
        label_nodes, label_info = _label_set_nodes(o.label_set, resolve)
        mapped = map_answers(kept, index, resolve, progress, label_set=label_nodes, memo=mapping_memo(tree, index))
    with t.phase("measures"):  # both memos: what an earlier call on the same answers computed (taxoforge.scores.memos)
        h, ts, meteor_status, t_text = measure_rows(kept, tax, mapped, text_measures, meteor, memo=text_memo)
    t.move("measures", t_text, "text_measures")
    with t.phase("samples"):
        samples = assemble_samples(kept, tax, mapped, h, ts, tables, version, config, store)
    if kept and "ranked_outputs" in kept[0]:  # a ranked top-k: its nodes, for hdist@k
        with t.phase("mapping"):
            ranked = map_ranked([r["ranked_outputs"] for r in kept], index, resolve, [r["dataset"] for r in kept])
        samples = samples.with_columns(pl.Series("ranked_nodes", ranked, dtype=pl.List(pl.String)))
    with t.phase("samples"):  # tree distance, severity and granularity per answer (milliseconds)
        samples = mistake_columns(samples, tax, heights=o.heights, label_set=label_nodes)
    with t.phase("breakdowns"):
        by_rank = tax if breakdowns and samples.height else None  # the tree whose ranks the breakdowns read
        tabs = _breakdown_tables(samples, by_rank, label_nodes) if by_rank is not None else {}
    with t.phase("leaderboard"):
        resampled = resampling_memo()
        board = leaderboard(samples, GROUP_KEYS, ci=ci, tree=by_rank, breakdowns=tabs,  # its columns reuse the tables
                            rank_by=o.rank_by, memo=resampled)
        resampled.flush()
        board = with_harness_agreement(board, samples, GROUP_KEYS)

    info = {
        "taxonomy": tree.name, "taxonomy_version": version, "taxonomy_store": store,
        "citation": tree.citation.as_dict(), "taxonomy_nodes": len(tax),
        "mapping_config": config.to_dict(), "mapping_config_id": config.config_id,
        "similarity": index.similarity.name, "similarity_model": similarity_record(index.similarity),
        "meteor": meteor_status, "mapping_index": index_record(index),
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
        "genus_transfer_guesses": _guesses(samples),
        "partial_methods": list(PARTIAL_METHODS), "distinct_labels": resolve.links.height,
        "files": rows["file"].unique(maintain_order=True).to_list() if rows.height and "file" in rows.columns else [],
        "per_file": _per_file(rows, samples, bad_df),
        "confidence_intervals": (ci.as_dict() if ci is not None and ci.n_resamples > 0 else {}),
        "breakdowns": sorted(tabs), "label_set": label_info, "ties": mapped.stats.get("ties", {}),
        "heights": height_record(samples, heights=o.heights, label_set_given=label_nodes is not None),
        "rank_by": o.rank_by, "display_names": dict(o.display_names or {}),
        "packages": package_versions(),  # the versions that shaped the numbers (taxoforge.versions)
    }
    info["seconds"] = t.as_dict()
    return ScoreRun(samples=samples, leaderboard=board, bad_rows=bad_df, info=info, breakdowns=tabs)


def _label_set_nodes(label_set, resolve) -> tuple[list[str] | None, dict]:
    """The node ids of a given label set (its labels resolved as ground truths are, under
    the dataset name ``label set``) and what ``info["label_set"]`` says of it."""
    if label_set is None:
        return None, {"source": "ground truths of each model × dataset"}
    labels = [str(x).strip() for x in label_set if x is not None and str(x).strip()]
    resolve.prefetch((lab, "label set") for lab in labels)
    got = [resolve(lab, "label set") for lab in labels]
    nodes = sorted({nid for nid, _m, _d in got if nid is not None})
    missed = [lab for lab, (nid, _m, _d) in zip(labels, got) if nid is None]
    return nodes, {"source": "given", "labels": len(labels), "nodes": len(nodes), "unresolved": len(missed),
                   "unresolved_examples": missed[:10]}


def _breakdown_tables(samples: pl.DataFrame, tree, label_set=None) -> dict[str, pl.DataFrame]:
    """The breakdown tables (:func:`taxoforge.scores.measures.breakdowns.breakdown_tables`)
    over the rows with a full ground truth; MTA's tree cuts are drawn on the tree the label
    set spans (given, else each model × dataset's own ground truths)."""
    full = samples.filter(~pl.col("gt_partial"))
    return breakdown_tables(full, tree, GROUP_KEYS, label_set=label_set) if full.height else {}


def score_files(paths, taxonomy, *, out_dir: str | os.PathLike | None = None, read: ReadOptions | None = None,
                score: ScoreOptions | None = None, timings: Timings | None = None, **kwargs) -> ScoreRun:
    """Score the model outputs ``paths`` name — files, folders, glob patterns, one source per
    model and dataset (:mod:`~taxoforge.scores.readers.sources`) — against one taxonomy in one run (one
    citation, one mapping index, one combined leaderboard; ``info["per_file"]`` and the bad
    rows' ``file`` say what each file gave, ``info["inputs"]`` each file read with its sha256)
    and, with ``out_dir``, write the results there
    (:meth:`ScoreRun.write`). Every file is read before anything is scored, so a file that
    cannot be read stops the run before any work.

    ``taxonomy``: a :class:`~taxoforge.trees.taxonomy.Taxonomy` opened by
    :func:`~taxoforge.snapshots.open.open_taxonomy`, a :class:`TreeTables`, a snapshot or tree
    folder, or ``NAME[@VERSION]`` / ``sha256:HEX`` in ``store``.
    ``read``: how the files are read (:class:`~taxoforge.scores.options.ReadOptions`:
    ``fmt``, ``layout``, ``columns``, ``defaults``, ``header``, ``column_names``, ``derive``,
    ``allow_duplicate_ids`` …); ``score``: how they are scored
    (:class:`~taxoforge.scores.options.ScoreOptions`: ``config``, ``index``, ``meteor``,
    ``ci``, ``plots`` …). Keyword options name fields of either, applied on top of them
    (``score_files(paths, tax, meteor=False, columns={"output": "pred"})``).

    Parameters
    ----------
    paths : iterable of str or Path
    taxonomy : Taxonomy, TreeTables, str or path
    out_dir : str or path, optional
    read : ReadOptions, optional
    score : ScoreOptions, optional
    timings : Timings, optional
        Where the seconds of each phase go (default: a clock started here), ``info["seconds"]``.
    **kwargs
        Fields of either option object.

    Returns
    -------
    ScoreRun
    """
    read, score = split_options(kwargs, read, score)
    t = timings if timings is not None else Timings()
    with t.phase("read"):
        rows, sources = read_paths(list(paths), read)
    run = score_frame(rows, taxonomy, score, timings=t)
    run.info.update(sources.record())
    if out_dir is not None:
        run.info["outputs"] = {k: str(v) for k, v in run.write(out_dir, plots=score.plots, timings=t).items()}
    return run


def score_file(path: str | os.PathLike, taxonomy, **options) -> ScoreRun:
    """Score one model-output file against a taxonomy and, with ``out_dir``, write the
    results there (see :meth:`ScoreRun.write`): :func:`score_files` of one file, with the same
    keyword ``options``.

    >>> run = score_file("data/examples/imagenet_example_outputs.jsonl", "imagenet1k")  # doctest: +SKIP
    >>> print(run.markdown())                                          # doctest: +SKIP

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    taxonomy : object
        The taxonomy.
    **options
        Those of :func:`score_files`.

    Returns
    -------
    ScoreRun
        The run.
    """
    return score_files([path], taxonomy, **options)
