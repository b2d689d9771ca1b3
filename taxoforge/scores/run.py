"""One scoring run: model outputs + a taxonomy → per-sample scores, leaderboard, bad rows.

:func:`score_file` reads a file (:mod:`~taxoforge.scores.readers`), :func:`score_frame`
does the rest in named steps, each a function of :mod:`taxoforge.scores.steps`
(:func:`screen_rows`, :func:`parse_rows`, :func:`resolve_labels`, :func:`map_answers`,
:func:`measure_rows`, :func:`assemble_samples`):

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

**Citation.** The taxonomy is resolved once (:func:`taxoforge.scores.cited_taxonomy.cite_taxonomy`,
through :func:`taxoforge.snapshots.citation.resolve_taxonomy`): a snapshot folder is verified
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
import time
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from taxoforge.files import atomic_directory, write_parquet_atomic, write_text_atomic
from taxoforge.links.resolve import PARTIAL_METHODS
from taxoforge.scores.cited_taxonomy import CitedTaxonomy, cite_taxonomy
from taxoforge.scores.confidence import BootstrapConfig
from taxoforge.scores.leaderboard import GROUP_KEYS, LEADERBOARD_MEASURES, leaderboard
from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex
from taxoforge.scores.readers import duplicate_ids, read_outputs
from taxoforge.scores.report import (FIGURE_FORMATS, leaderboard_latex, leaderboard_markdown, plot_hp_hr,
                                     plot_ranks)
from taxoforge.scores.steps import (BAD_ROW_SCHEMA, GroundTruthResolver, MappedAnswers, assemble_samples,
                                    bad_rows_frame, map_answers, measure_rows, parse_rows, resolve_labels,
                                    screen_rows)
from taxoforge.versions import package_versions

__all__ = ["ScoreRun", "GroundTruthResolver", "score_file", "score_files", "score_frame", "read_files",
           "leaderboard", "GROUP_KEYS", "LEADERBOARD_MEASURES", "screen_rows", "parse_rows", "resolve_labels",
           "map_answers", "measure_rows", "assemble_samples", "index_for", "index_record", "RUN_FILES",
           "MappedAnswers", "BAD_ROW_SCHEMA"]


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

    ``taxonomy``: a :class:`~taxoforge.scores.cited_taxonomy.CitedTaxonomy` (resolved once for many
    calls), or anything :func:`~taxoforge.scores.cited_taxonomy.cite_taxonomy` takes — ``NAME``,
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
    resolve = GroundTruthResolver(tables, tax)
    kept, bad_label = resolve_labels(parsed, resolve)
    t_gt = time.perf_counter() - t_gt
    bad_df = bad_rows_frame(bad_screen + bad_parse + bad_label)
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
        "packages": package_versions(),  # the versions that shaped the numbers (taxoforge.versions)
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

    ``taxonomy``: a :class:`~taxoforge.scores.cited_taxonomy.CitedTaxonomy`, a :class:`TreeTables`,
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
