"""Taxonomy sensitivity: the same answers scored against several trees, and how much the choice
of tree moves the leaderboard (docs/method.md#taxonomy-sensitivity).

Algorithm (:func:`score_across`)
    1. The files are read once; the rows are scored against the first tree as
       :func:`taxoforge.scores.run.score_frame` does.
    2. For every other tree, each distinct ground-truth label is first resolved in that tree
       by the label resolver. A label it does not resolve (unknown or ambiguous there) but
       whose node in the first tree the crosswalk links to a node of this tree
       (:func:`taxoforge.links.crosswalk.translate`, directly or through a Wikidata item, the
       most confident link, only when it is a node of this tree and no other link is as
       confident) is scored against that node: the row's label is replaced by the node id, and
       ``gt_via`` says ``crosswalk`` with the path in ``gt_detail``. Answers are mapped to each
       tree on their own.
    3. **Coverage.** Each tree's coverage is the share of the rows read that it scores with
       a full ground truth (a label it resolves only to a genus counts apart, as the
       leaderboard counts it); the **common items** are the rows every tree scores so.
       Rankings are compared on the common items only — each tree's leaderboard is made
       again over them — so a difference between trees is the trees', never the rows'. A
       tree's full results, every row it scored, stay in its own run. The command line
       fails (exit 10) when a tree's coverage, or the common items' share, is below
       ``--min-scored`` (90 %), naming each, unless ``--force``.
    4. The sensitivity table has one row per model × dataset × prompt and, per tree, ``n``
       (common items), hP, hR, hF and the rank by hF within the dataset × prompt (as the
       leaderboard ranks). Between every two trees, Kendall's τ-b of the models' hF within
       each dataset × prompt (``scipy.stats.kendalltau``; undefined with fewer than two
       models), and over every row of the table (the order of all model × dataset × prompt
       rows); and the pairs of models that swap places. Tables print their numbers rounded
       to four decimals (:data:`DECIMALS`); the Parquet files keep them whole.

References
----------
.. [1] Kendall, M. G. (1945), "The treatment of ties in ranking problems", *Biometrika* 33(3),
   239–251 (τ-b).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from taxoforge.files import write_parquet_atomic, write_text_atomic
from taxoforge.links.crosswalk import NODE_PREFIXES, read_crosswalk, translate
from taxoforge.links.resolve import resolve_labels
from taxoforge.markdown import markdown_table
from taxoforge.scores.cited_taxonomy import CitedTaxonomy, cite_taxonomy
from taxoforge.scores.reports.leaderboard import GROUP_KEYS, leaderboard
from taxoforge.scores.options import ReadOptions, ScoreOptions
from taxoforge.scores.run import ScoreRun, score_frame

__all__ = ["SensitivityRun", "score_across", "sensitivity_table", "ranking_agreement", "tree_source",
           "common_items", "coverage_table", "coverage_failure", "DECIMALS", "ITEM_KEYS"]

_MEASURES = ("n", "hP", "hR", "hF", "rank")
#: Decimals the Markdown and CSV tables round to (``0.9999999999999998`` prints as ``1.0``).
DECIMALS = 4
#: The columns that name one row of the files read: the same row under every tree.
ITEM_KEYS = ("file", "line", "id", "model", "dataset", "prompt")


def tree_source(cited: CitedTaxonomy) -> str | None:
    """The crosswalk source whose ids a tree's node ids are (``inat:…`` → ``inaturalist``), by
    the prefix most of its nodes carry.

    Parameters
    ----------
    cited : CitedTaxonomy
        The tree.

    Returns
    -------
    str or None
        A key of :data:`~taxoforge.links.crosswalk.NODE_PREFIXES`, or None.
    """
    prefixes = cited.tables.nodes.select(pl.col("node_id").str.extract(r"^([a-z0-9_]+):", 1).alias("p"))
    top = prefixes.drop_nulls().group_by("p").len().sort("len", descending=True)
    if not top.height:
        return None
    by_prefix = {v: k for k, v in NODE_PREFIXES.items()}
    return by_prefix.get(top["p"][0])


@dataclass
class SensitivityRun:
    """What :func:`score_across` returns.

    Attributes
    ----------
    runs : dict
        Tree name → its :class:`~taxoforge.scores.run.ScoreRun`.
    table : polars.DataFrame
        The sensitivity table (:func:`sensitivity_table`).
    agreement : polars.DataFrame
        Kendall's τ between every two trees, per dataset × prompt and over all rows
        (:func:`ranking_agreement`).
    swaps : polars.DataFrame
        The model pairs whose order differs between two trees.
    crosswalked : polars.DataFrame
        The ground truths scored through the crosswalk: tree, dataset, label, the first
        tree's node, this tree's node, method, confidence.
    info : dict
        Trees, their citations, rows scored under each, coverage, crosswalk counts.
    coverage : polars.DataFrame
        Per tree (and ``common items``): rows read, rows scored with a full ground truth,
        their share (:func:`coverage_table`).
    """

    runs: dict
    table: pl.DataFrame
    agreement: pl.DataFrame
    swaps: pl.DataFrame
    crosswalked: pl.DataFrame
    info: dict = field(default_factory=dict)
    coverage: pl.DataFrame = field(default_factory=pl.DataFrame)

    def markdown(self) -> str:
        """The sensitivity table, the agreement between rankings and the swaps, as Markdown.

        Returns
        -------
        str
            Three tables with headings.
        """
        common = self.info.get("common_items", {})
        cov = self.coverage.with_columns((100 * pl.col("coverage")).round(1).alias("coverage (%)")).drop("coverage") \
            if self.coverage.height else self.coverage
        parts = ["## Coverage of each tree", "",
                 markdown_table(cov) if cov.height else "(no rows)", "",
                 f"Rankings are compared on the {common.get('rows', 0):,} rows every tree scores with a full ground "
                 f"truth ({_pct(common.get('fraction'))} of the {self.info.get('rows', 0):,} rows read); each tree's "
                 "own results, every row it scored, are in its folder.", "",
                 "## Taxonomy sensitivity", "", markdown_table(_rounded(self.table)), "",
                 "## Agreement of the rankings", "",
                 markdown_table(_rounded(self.agreement)) if self.agreement.height else "(no two trees to compare)", "",
                 "## Models that swap places", "",
                 markdown_table(_rounded(self.swaps)) if self.swaps.height else "(none)", ""]
        if self.crosswalked.height:
            parts += ["## Ground truths scored through the crosswalk", "", markdown_table(_rounded(self.crosswalked)),
                      ""]
        return "\n".join(parts)

    def write(self, out_dir: str | os.PathLike, plots: bool = True) -> dict[str, Path]:
        """Write each tree's results into ``out_dir/<tree>/`` and the sensitivity tables beside them.

        Parameters
        ----------
        out_dir : str or os.PathLike
            The folder.
        plots : bool
            Draw each run's figures.

        Returns
        -------
        dict
            What was written, by name.
        """
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        written: dict[str, Path] = {}
        for name, run in self.runs.items():
            run.write(out / _slug(name), plots=plots)
            written[f"run_{name}"] = out / _slug(name)
        for stem, df in (("sensitivity", self.table), ("sensitivity_agreement", self.agreement),
                         ("sensitivity_swaps", self.swaps), ("sensitivity_crosswalked", self.crosswalked),
                         ("sensitivity_coverage", self.coverage)):
            write_parquet_atomic(df, out / f"{stem}.parquet")
            write_text_atomic(out / f"{stem}.csv", _rounded(df).write_csv())
            written[stem] = out / f"{stem}.parquet"
        write_text_atomic(out / "sensitivity.md", self.markdown())
        write_text_atomic(out / "sensitivity.json", json.dumps(self.info, indent=2, default=str) + "\n")
        written["markdown"], written["info"] = out / "sensitivity.md", out / "sensitivity.json"
        return written


def _rounded(df: pl.DataFrame) -> pl.DataFrame:
    """``df`` with its float columns rounded to :data:`DECIMALS` (for the tables people read)."""
    return df.with_columns([pl.col(c).round(DECIMALS) for c, t in df.schema.items() if t.is_float()])


def _pct(x) -> str:
    return "–" if x is None else f"{100 * x:.1f} %"


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "tree"


def _crosswalk_labels(rows: pl.DataFrame, first: ScoreRun, first_source: str | None, cited: CitedTaxonomy,
                      source: str | None, crosswalk: pl.DataFrame | None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Rows with the labels this tree does not resolve replaced by the crosswalk's node, and the
    table of what was replaced."""
    empty = pl.DataFrame(schema={"dataset": pl.String, "label": pl.String, "from_node": pl.String,
                                 "node_id": pl.String, "method": pl.String, "confidence": pl.Float64, "via": pl.String})
    if crosswalk is None or first_source is None or source is None or not first.samples.height:
        return rows, empty
    labels = rows.select(pl.col("dataset").cast(pl.String), pl.col("label").cast(pl.String).str.strip_chars()
                         ).drop_nulls().unique()
    if not labels.height:
        return rows, empty
    res = resolve_labels(labels.select("dataset", pl.col("label").alias("label_id"), pl.col("label").alias("label_text")),
                         cited.tables)
    missing = res.filter(pl.col("status") != "linked").select("dataset", pl.col("label_id").alias("label"))
    gt = (first.samples.select(pl.col("dataset").cast(pl.String), pl.col("label").cast(pl.String).str.strip_chars(),
                               pl.col("gt_node").alias("from_node"), "gt_partial")
          .filter(~pl.col("gt_partial")).unique(["dataset", "label"]).drop("gt_partial"))
    todo = missing.join(gt, on=["dataset", "label"])
    prefix = NODE_PREFIXES[first_source] + ":"
    todo = todo.filter(pl.col("from_node").str.starts_with(prefix)).with_columns(
        pl.col("from_node").str.slice(len(prefix)).alias("from_id"))
    if not todo.height:
        return rows, empty
    t = translate(crosswalk, todo["from_id"].to_list(), first_source, source)
    t = t.with_columns((pl.lit(NODE_PREFIXES[source] + ":") + pl.col("target_id")).alias("node_id"))
    t = t.filter(pl.col("node_id").is_in(cited.tables.nodes["node_id"].implode()))
    best = t.filter(pl.col("confidence") == pl.col("confidence").max().over("id"))
    best = best.filter(pl.len().over("id") == 1)  # an equally sure second link: no guess
    done = todo.join(best.select(pl.col("id").alias("from_id"), "node_id", "method", "confidence", "via"),
                     on="from_id")
    done = done.select("dataset", "label", "from_node", "node_id", "method", "confidence", "via").sort("dataset", "label")
    if not done.height:
        return rows, empty
    key = pl.col("label").cast(pl.String).str.strip_chars()
    swap = done.select("dataset", pl.col("label").alias("_key"), pl.col("node_id").alias("_node"))
    out = (rows.with_columns(key.alias("_key"), pl.col("dataset").cast(pl.String))
           .join(swap, on=["dataset", "_key"], how="left", maintain_order="left")
           .with_columns(pl.coalesce("_node", pl.col("label").cast(pl.String)).alias("label")).drop("_key", "_node"))
    return out, done


def _mark_crosswalked(run: ScoreRun, done: pl.DataFrame) -> None:
    """``gt_via`` ``crosswalk`` and the path in ``gt_detail`` for the rows scored through it."""
    if not done.height or not run.samples.height:
        return
    mark = done.select("dataset", pl.col("node_id").alias("_label"), pl.lit(True).alias("_cw"),
                       pl.format("crosswalk: '{}' is {} in the first tree, linked to {} through {} ({}, confidence {})",
                                 "label", "from_node", "node_id", "via", "method", "confidence").alias("_detail"))
    s = run.samples.with_columns(pl.col("label").cast(pl.String).alias("_label"))
    s = s.join(mark, on=["dataset", "_label"], how="left", maintain_order="left")
    run.samples = s.with_columns(
        pl.when(pl.col("_cw")).then(pl.lit("crosswalk")).otherwise(pl.col("gt_via")).alias("gt_via"),
        pl.when(pl.col("_cw")).then(pl.col("_detail")).otherwise(pl.col("gt_detail")).alias("gt_detail"),
    ).drop("_label", "_cw", "_detail")


def score_across(paths, taxonomies, *, crosswalk: pl.DataFrame | str | os.PathLike | None = None,
                 out_dir: str | os.PathLike | None = None, read: ReadOptions | None = None,
                 score: ScoreOptions | None = None, record: dict | None = None) -> SensitivityRun:
    """Score the same answer files against several trees (module docstring).

    Parameters
    ----------
    paths : list
        Model-output files, folders or glob patterns (:func:`~taxoforge.scores.readers.sources.read_paths`).
    taxonomies : list
        Two or more taxonomies (anything :func:`~taxoforge.scores.cited_taxonomy.cite_taxonomy`
        takes); the first is the one whose ground truths the crosswalk carries to the others.
    crosswalk : polars.DataFrame or path, optional
        A crosswalk table (:mod:`taxoforge.links.crosswalk`; a Parquet file); without it each
        tree resolves the labels on its own.
    out_dir : str or path, optional
        Where to write each tree's results and the sensitivity tables.
    read : ReadOptions, optional
        How the files are read.
    score : ScoreOptions, optional
        How they are scored (``index`` and ``config`` are per tree: leave ``index`` unset).
    record : dict, optional
        More for each tree's ``run.json`` (the command line that ran it).

    Returns
    -------
    SensitivityRun
    """
    from taxoforge.scores.readers.sources import read_paths

    if len(taxonomies) < 2:
        raise ValueError(f"taxonomy sensitivity needs two taxonomies or more; got {len(taxonomies)}")
    score = score or ScoreOptions()
    if score.index is not None:
        raise ValueError("score_across: leave ScoreOptions.index unset (each tree has its own mapping index)")
    if crosswalk is not None:
        crosswalk = read_crosswalk(crosswalk)  # columns, types, finite confidences; a file read in counted batches
    rows, sources = read_paths(paths, read or ReadOptions())
    record = {**(record or {}), **sources.record()}
    runs: dict[str, ScoreRun] = {}
    crossed: list[pl.DataFrame] = []
    first: ScoreRun | None = None
    first_source = None
    names: list[str] = []
    for i, tax in enumerate(taxonomies):
        cited = cite_taxonomy(tax, store=score.store, altered=score.altered)
        name = cited.ref if cited.name in names else cited.name
        names.append(name)
        source = tree_source(cited)
        these, done = (rows, None) if first is None else _crosswalk_labels(rows, first, first_source, cited, source,
                                                                            crosswalk)
        run = score_frame(these, cited, score)
        run.info.update(record)
        if done is not None and done.height:
            _mark_crosswalked(run, done)
            crossed.append(done.with_columns(pl.lit(name).alias("tree")))
        runs[name] = run
        if first is None:
            first, first_source = run, source
    common = common_items(runs)
    table = sensitivity_table({name: _on_items(run, common, score) for name, run in runs.items()})
    agreement, swaps = ranking_agreement(table, list(runs))
    coverage = coverage_table(runs, rows.height, common.height)
    cw = (pl.concat(crossed).select("tree", "dataset", "label", "from_node", "node_id", "method", "confidence", "via")
          if crossed else pl.DataFrame(schema={"tree": pl.String, "dataset": pl.String, "label": pl.String,
                                               "from_node": pl.String, "node_id": pl.String, "method": pl.String,
                                               "confidence": pl.Float64, "via": pl.String}))
    info = {"trees": list(runs), "citations": {n: r.info.get("citation") for n, r in runs.items()},
            "rows": rows.height, "scored": {n: r.info["scored"] for n, r in runs.items()},
            "bad_rows_by_reason": {n: r.info["bad_rows_by_reason"] for n, r in runs.items()},
            "crosswalked_labels": {n: int(cw.filter(pl.col("tree") == n).height) for n in runs},
            "coverage": {r["tree"]: r["coverage"] for r in coverage.iter_rows(named=True) if r["tree"] in runs},
            "common_items": {"rows": common.height, "fraction": common.height / rows.height if rows.height else None},
            "kendall_tau": agreement.to_dicts(), "swaps": swaps.height}
    result = SensitivityRun(runs, table, agreement, swaps, cw, info, coverage)
    if out_dir is not None:
        info["outputs"] = {k: str(v) for k, v in result.write(out_dir, plots=score.plots).items()}
    return result


def _full_items(run: ScoreRun) -> pl.DataFrame:
    """The rows a run scored with a full ground truth, by :data:`ITEM_KEYS`."""
    s = run.samples
    if not s.height:
        return pl.DataFrame(schema={k: pl.String for k in ITEM_KEYS})
    return s.filter(~pl.col("gt_partial")).select([pl.col(k).cast(pl.String) for k in ITEM_KEYS]).unique()


def common_items(runs: dict) -> pl.DataFrame:
    """The rows every tree's run scored with a full ground truth (:data:`ITEM_KEYS`).

    Parameters
    ----------
    runs : dict
        Tree name → :class:`~taxoforge.scores.run.ScoreRun` of the same rows.

    Returns
    -------
    polars.DataFrame
        One row per common item.
    """
    out = None
    for run in runs.values():
        items = _full_items(run)
        out = items if out is None else out.join(items, on=list(ITEM_KEYS), how="semi", nulls_equal=True)
    return out if out is not None else pl.DataFrame(schema={k: pl.String for k in ITEM_KEYS})


def _on_items(run: ScoreRun, items: pl.DataFrame, score: ScoreOptions) -> pl.DataFrame:
    """The run's leaderboard made again over ``items`` only (no intervals: the table compares
    rankings, and each run keeps its intervals)."""
    s = run.samples
    if not s.height:
        return run.leaderboard
    keyed = s.with_columns([pl.col(k).cast(pl.String).alias(f"_{k}") for k in ITEM_KEYS])
    mine = keyed.join(items.rename({k: f"_{k}" for k in ITEM_KEYS}), on=[f"_{k}" for k in ITEM_KEYS], how="semi",
                      nulls_equal=True).drop([f"_{k}" for k in ITEM_KEYS])
    return leaderboard(mine.filter(~pl.col("gt_partial")), GROUP_KEYS, ci=None, rank_by=score.rank_by)


def coverage_table(runs: dict, rows: int, common: int) -> pl.DataFrame:
    """Per tree: the rows read, the rows it scored with a full ground truth and their share
    (``coverage``), then the same for the common items.

    Parameters
    ----------
    runs : dict
        Tree name → its run.
    rows : int
        Rows read.
    common : int
        Rows every tree scored.

    Returns
    -------
    polars.DataFrame
        ``tree``, ``rows``, ``scored``, ``coverage`` (a share in [0, 1]; null without rows).
    """
    out = [{"tree": name, "rows": rows, "scored": _full_items(run).height} for name, run in runs.items()]
    out.append({"tree": "common items", "rows": rows, "scored": common})
    for r in out:
        r["coverage"] = r["scored"] / rows if rows else None
    return pl.DataFrame(out, schema={"tree": pl.String, "rows": pl.Int64, "scored": pl.Int64,
                                     "coverage": pl.Float64})


def coverage_failure(result: "SensitivityRun", min_scored: float) -> str | None:
    """Why a sensitivity run fails the ``--min-scored`` gate — a tree's coverage or the common
    items' share below it —, naming the coverage of each tree; None when it passes.

    Parameters
    ----------
    result : SensitivityRun
        The run.
    min_scored : float
        The least share, in [0, 1].

    Returns
    -------
    str or None
    """
    cov = result.coverage
    low = cov.filter(pl.col("coverage").is_null() | (pl.col("coverage") < min_scored))
    if not low.height:
        return None
    each = "; ".join(f"{r['tree']} {_pct(r['coverage'])} ({r['scored']:,} of {r['rows']:,} rows)"
                     for r in cov.iter_rows(named=True))
    return (f"coverage below --min-scored {100 * min_scored:g} %: {each}. Rankings across trees are compared on the "
            "rows every tree scores; a tree that scores few of them compares little. Check each tree's bad_rows.csv "
            "(a --crosswalk may carry ground truths to a tree that lacks them), or pass --force to accept")


def sensitivity_table(runs: dict) -> pl.DataFrame:
    """One row per model × dataset × prompt: ``n``, hP, hR, hF and the rank under each tree.

    Parameters
    ----------
    runs : dict
        Tree name → :class:`~taxoforge.scores.run.ScoreRun` (or its leaderboard).

    Returns
    -------
    polars.DataFrame
        ``model``, ``dataset``, ``prompt``, then ``n [tree]``, ``hP [tree]``, ``hR [tree]``,
        ``hF [tree]``, ``rank [tree]`` per tree; a row a tree did not score has nulls there.
    """
    out = None
    for name, run in runs.items():
        board = run.leaderboard if hasattr(run, "leaderboard") else run
        # every measure of every tree, null where it scored nothing (its leaderboard has no rank then)
        types = {"n": pl.Int64, "rank": pl.Int64}
        part = board.select(*GROUP_KEYS, *[(pl.col(c) if c in board.columns else pl.lit(None))
                                           .cast(types.get(c, pl.Float64)).alias(f"{c} [{name}]") for c in _MEASURES])
        out = part if out is None else out.join(part, on=list(GROUP_KEYS), how="full", coalesce=True)
    return out.sort(*GROUP_KEYS) if out is not None else pl.DataFrame()


def ranking_agreement(table: pl.DataFrame, trees: list[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Kendall's τ-b between the hF rankings of every two trees, and the pairs of models that swap.

    Parameters
    ----------
    table : polars.DataFrame
        The sensitivity table.
    trees : list of str
        Its trees, in order.

    Returns
    -------
    (polars.DataFrame, polars.DataFrame)
        ``tree_a``, ``tree_b``, ``dataset``, ``prompt`` (``all`` for the order of every row),
        ``rows`` compared, ``tau``, ``p_value`` (null when undefined: fewer than two rows, or
        no variation); and ``tree_a``, ``tree_b``, ``dataset``, ``prompt``, ``model_1``,
        ``model_2``, ``hF_1/2 [tree_a]``, ``hF_1/2 [tree_b]`` for each pair of models whose
        order differs.
    """
    from scipy.stats import kendalltau

    agree, swaps = [], []
    for i, a in enumerate(trees):
        for b in trees[i + 1:]:
            fa, fb = f"hF [{a}]", f"hF [{b}]"
            both = table.filter(pl.col(fa).is_not_null() & pl.col(fb).is_not_null())
            groups = [((d, p), g) for (d, p), g in both.group_by("dataset", "prompt", maintain_order=True)]
            for (d, p), g in [*groups, (("all", "all"), both)]:
                x, y = g[fa].to_list(), g[fb].to_list()
                tau = pv = None
                if len(x) >= 2 and len(set(x)) > 1 and len(set(y)) > 1:
                    res = kendalltau(x, y)
                    tau, pv = float(res.statistic), float(res.pvalue)
                agree.append({"tree_a": a, "tree_b": b, "dataset": d, "prompt": p, "rows": len(x), "tau": tau,
                              "p_value": pv})
                if d == "all":
                    continue
                m = g["model"].to_list()
                for j in range(len(m)):
                    for k in range(j + 1, len(m)):
                        if (x[j] - x[k]) * (y[j] - y[k]) < 0:
                            swaps.append({"tree_a": a, "tree_b": b, "dataset": d, "prompt": p, "model_1": m[j],
                                          "model_2": m[k], "hF_1 [a]": x[j], "hF_2 [a]": x[k], "hF_1 [b]": y[j],
                                          "hF_2 [b]": y[k]})
    schema_a = {"tree_a": pl.String, "tree_b": pl.String, "dataset": pl.String, "prompt": pl.String, "rows": pl.Int64,
                "tau": pl.Float64, "p_value": pl.Float64}
    schema_s = {"tree_a": pl.String, "tree_b": pl.String, "dataset": pl.String, "prompt": pl.String,
                "model_1": pl.String, "model_2": pl.String, "hF_1 [a]": pl.Float64, "hF_2 [a]": pl.Float64,
                "hF_1 [b]": pl.Float64, "hF_2 [b]": pl.Float64}
    return pl.DataFrame(agree, schema=schema_a), pl.DataFrame(swaps, schema=schema_s)
