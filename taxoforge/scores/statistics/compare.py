"""Is A better than B? Scoring runs compared on the items they share.

A **system** is one model of one run (the output folder of ``taxoforge score``, or its
``scores.parquet``). Two systems are compared within each dataset × prompt group on the
items both answered — matched by sample ``id`` — never across groups, and never on items
only one of them has (those are counted: ``only_a``, ``only_b``). Rows with a partial
ground truth are left out, as the leaderboard leaves them out.

For every pair of systems and group (:func:`compare_systems`):

``accuracy``          the difference A − B, its paired-bootstrap interval, and the exact
                      McNemar test (:func:`taxoforge.scores.statistics.paired.mcnemar_exact`: the
                      two-sided binomial test of the discordant items, ``only_a_right`` and
                      ``only_b_right``);
``hF``                the leaderboard's hF (harmonic mean of mean hP and mean hR) of each,
                      the difference, its paired-bootstrap interval and the paired
                      permutation test (:func:`taxoforge.scores.statistics.paired.paired_differences`);
``mistake_severity``  the mean height of the LCA over each system's own wrong answers
                      (:mod:`taxoforge.scores.measures.mistakes`), the same way (lower is better).

With several pairs (or groups), every p-value is also given Holm-adjusted over all the
comparisons of that measure (``<measure>_p_holm``); a difference is called significant when
that adjusted p-value is below ``alpha``. :func:`against_the_best` does the same for the
leaderboard: each model against its group's best.

Examples
--------
>>> import numpy as np, polars as pl
>>> rng = np.random.default_rng(0)
>>> def run(model, right):
...     return pl.DataFrame({"id": [str(i) for i in range(40)], "model": model, "dataset": "d",
...                          "prompt": "p", "correct": right, "hP": np.where(right, 1.0, 0.5),
...                          "hR": np.where(right, 1.0, 0.4), "mistake_severity": np.where(right, 0.0, 2.0),
...                          "abstained": False})
>>> t = compare_systems({"a": run("a", np.arange(40) < 30), "b": run("b", np.arange(40) < 20)}, n_resamples=999)
>>> t.select("a", "b", "n", "only_a_right", "only_b_right", "accuracy_diff").rows()
[('a', 'b', 40, 10, 0, 0.25)]
>>> round(t["accuracy_p"][0], 6)        # scipy.stats.binomtest(10, 10, 0.5).pvalue
0.001953
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from taxoforge.files.parquet_records import read_parquet_table
from taxoforge.files.paths import distinct_tails, open_regular
from taxoforge.files.record_limits import RecordFileError, RecordLimits
from taxoforge.messages import few
from taxoforge.scores.statistics.paired import hf_of_sums, holm, mcnemar_exact, paired_differences, severity_of_sums

__all__ = ["compare_runs", "compare_systems", "against_the_best", "load_scores", "Comparison", "COMPARED_MEASURES",
           "GROUP", "ComparisonError", "pair_stream", "check_scores", "COMPARE_COLUMNS", "SCORES_LIMITS"]

#: The keys that make a group: systems are compared within one dataset × prompt.
GROUP = ("dataset", "prompt")
#: Measures compared, and whether higher is better.
COMPARED_MEASURES = {"accuracy": True, "hF": True, "mistake_severity": False}
_LOWER_IS_BETTER = frozenset(m for m, higher in COMPARED_MEASURES.items() if not higher)


class ComparisonError(ValueError):
    """Runs that cannot be compared; the message names the run and what is wrong."""


#: What a run's scores table may decode to, counted as decoded: 20 million rows, 1 GiB of column data.
SCORES_LIMITS = RecordLimits(max_records=20_000_000, max_cells=10**9)


def _accuracy_of_sums(sums, n):
    return sums[..., 0] / n


#: The columns of a scores table a comparison reads (the others are never decoded).
COMPARE_COLUMNS = ("id", "model", "dataset", "prompt", "correct", "hP", "hR", "abstained", "gt_partial",
                   "mistake_severity", "height_tree", "taxonomy", "taxonomy_version")
#: What each measure read from a run may hold: (least, greatest); every value finite.
_RANGES = {"hP": (0.0, 1.0), "hR": (0.0, 1.0), "mistake_severity": (0.0, None)}


def _first_bad(samples: pl.DataFrame, bad: pl.Series, col: str, where: str, expected: str) -> ComparisonError:
    i = int(bad.arg_true()[0])
    sid = samples["id"][i] if "id" in samples.columns else None
    return ComparisonError(f"{where}: row {i + 1}{f' (id {sid!r})' if sid is not None else ''}: {col} is "
                           f"{samples[col][i]!r}, expected {expected} ({int(bad.sum()):,} such rows)")


def check_scores(samples: pl.DataFrame, where: str) -> None:
    """Refuse a scores table whose values no scoring run writes: ``correct`` that is not
    true/false (text, numbers other than 0 and 1), ``hP``/``hR`` outside [0, 1], a negative
    ``mistake_severity``, NaN, infinities or nulls in any of them (nulls are allowed in
    ``mistake_severity``, which a correct answer lacks).

    Parameters
    ----------
    samples : polars.DataFrame
        A scores table (``scores.parquet``).
    where : str
        The file or run, for the message.

    Raises
    ------
    ComparisonError
        Naming ``where``, the row, its id, the column and the value.
    """
    need = [c for c in ("id", "correct", "hP", "hR") if c not in samples.columns]
    if need:
        raise ComparisonError(f"{where}: the scores table lacks {need}; give the output folder of `taxoforge score` "
                              "or its scores.parquet")
    c = samples.schema["correct"]
    if c != pl.Boolean:
        if not c.is_numeric():
            raise _first_bad(samples, pl.Series([True] * samples.height), "correct", where,
                             f"true or false (the column is {c})")
        v = samples["correct"].cast(pl.Float64)
        bad = (v.is_null() | ~v.is_in([0.0, 1.0])).fill_null(True)
        if bad.any():
            raise _first_bad(samples, bad, "correct", where, "true or false")
    elif samples["correct"].null_count():
        raise _first_bad(samples, samples["correct"].is_null(), "correct", where, "true or false")
    for col, (lo, hi) in _RANGES.items():
        if col not in samples.columns:
            continue
        if not samples.schema[col].is_numeric() and samples.schema[col] != pl.Null:
            raise _first_bad(samples, pl.Series([True] * samples.height), col, where,
                             f"a number (the column is {samples.schema[col]})")
        v = samples[col].cast(pl.Float64)
        bad = ~v.is_finite() | (v < lo)
        if hi is not None:
            bad = bad | (v > hi)
        bad = bad.fill_null(col != "mistake_severity")
        if bad.any():
            rng = f"[{lo:g}, {hi:g}]" if hi is not None else f"a finite number ≥ {lo:g}"
            raise _first_bad(samples, bad, col, where, f"a finite number in {rng}" if hi is not None else rng)


def _item_table(samples: pl.DataFrame, where: str) -> pl.DataFrame:
    """The per-item values a comparison needs, for rows with a full ground truth."""
    check_scores(samples, where)
    s = samples.filter(~pl.col("gt_partial")) if "gt_partial" in samples.columns else samples
    abstained = pl.col("abstained") if "abstained" in s.columns else pl.lit(False)
    has_sev = "mistake_severity" in s.columns
    mistake = (~pl.col("correct") & ~abstained).cast(pl.Float64)
    return s.select(
        *[pl.col(k).cast(pl.String).fill_null("") for k in GROUP if k in s.columns],
        pl.col("id").cast(pl.String), pl.col("correct").cast(pl.Float64).alias("correct"),
        pl.col("hP").cast(pl.Float64), pl.col("hR").cast(pl.Float64),
        ((pl.col("mistake_severity").cast(pl.Float64).fill_null(0.0) if has_sev else pl.lit(0.0)) * mistake)
        .alias("severity_of_mistake"),
        (mistake if has_sev else pl.lit(float("nan"))).alias("mistake"),
        (pl.col("height_tree").cast(pl.String) if "height_tree" in s.columns else pl.lit(None, dtype=pl.String))
        .alias("height_tree"),
    ).with_columns(*[pl.lit("").alias(k) for k in GROUP if k not in s.columns])


def _check_unique(items: pl.DataFrame, where: str) -> None:
    dup = items.group_by([*GROUP, "id"]).len().filter(pl.col("len") > 1)
    if dup.height:
        ex = ", ".join(f"{r['id']!r} ({r['dataset']} · {r['prompt']}: {r['len']} rows)"
                       for r in dup.head(5).iter_rows(named=True))
        raise ComparisonError(f"{where}: {dup.height} sample ids occur more than once within a dataset × prompt "
                              f"({ex}); a comparison pairs items by id, so ids must be unique there")


def compare_systems(systems: dict[str, pl.DataFrame], *, n_resamples: int = 9999, level: float = 0.95,
                    seed: int = 0, alpha: float = 0.05, reference: str | None = None, memo=None) -> pl.DataFrame:
    """Every pair of ``systems`` (or each against ``reference``) compared within each dataset ×
    prompt on their shared items.

    Parameters
    ----------
    systems : dict of polars.DataFrame
        Label → that system's samples (``id``, ``correct``, ``hP``, ``hR``; ``dataset``,
        ``prompt``, ``abstained``, ``gt_partial``, ``mistake_severity`` and ``height_tree``
        when present).
    n_resamples : int
        Bootstrap resamples and permutations per test (0: differences and McNemar only).
    level : float
        Confidence level of the intervals.
    seed : int
        Seed of every draw. Each pair and group draws from its own stream, fixed by the seed,
        the two labels and the group alone (:func:`pair_stream`): a pair's numbers do not
        depend on the other systems or on the order the systems are given in.
    alpha : float
        Level below which a Holm-adjusted p-value is called significant.
    reference : str, optional
        A label of ``systems``: compare every other system with it (A = the system, B = the
        reference) instead of every pair; Holm's adjustment is then over those pairs.
    memo : ContentMemo, optional
        Earlier calls' paired tests by the digest of their inputs
        (:func:`~taxoforge.scores.statistics.paired.paired_differences`).

    Returns
    -------
    polars.DataFrame
        One row per group and pair: ``dataset``, ``prompt``, ``a``, ``b``, ``n`` (shared
        items), ``only_a``, ``only_b`` (items one of them lacks), for each of
        :data:`COMPARED_MEASURES` ``<m>_a``, ``<m>_b``, ``<m>_diff``, ``<m>_ci_low``,
        ``<m>_ci_high``, ``<m>_p``, ``<m>_p_holm`` and ``<m>_significant``; the McNemar
        counts ``only_a_right`` and ``only_b_right``; ``height_trees`` (``same``,
        ``different`` — mistake severity is then not compared —, or null when a side does
        not say).

    Raises
    ------
    ComparisonError
        Ids repeated within a group, an unknown ``reference``, or no pair sharing an item
        (the message names each side's datasets and a few of its ids).
    """
    items = {}
    for label, s in systems.items():
        t = _item_table(s, label)
        _check_unique(t, label)
        items[label] = t
    labels = list(items)
    if reference is not None:
        if reference not in items:
            raise ComparisonError(f"--reference {reference!r} is none of the systems compared "
                                  f"({', '.join(map(repr, labels[:8]))}{' …' if len(labels) > 8 else ''})")
        pairs = [(la, reference) for la in labels if la != reference]
    else:
        pairs = list(itertools.combinations(labels, 2))
    rows = []
    for la, lb in pairs:
        a_all, b_all = items[la], items[lb]
        groups = sorted(set(a_all.select(GROUP).unique().rows()) | set(b_all.select(GROUP).unique().rows()))
        for grp in groups:
            fa = a_all.filter((pl.col("dataset") == grp[0]) & (pl.col("prompt") == grp[1]))
            fb = b_all.filter((pl.col("dataset") == grp[0]) & (pl.col("prompt") == grp[1]))
            j = fa.join(fb, on=[*GROUP, "id"], how="inner", suffix="_b").sort("id")
            row = {"dataset": grp[0], "prompt": grp[1], "a": la, "b": lb, "n": j.height,
                   "only_a": fa.height - j.height, "only_b": fb.height - j.height}
            if not j.height:
                continue
            trees = _height_trees(fa, fb)
            row["height_trees"] = trees
            mc = mcnemar_exact(j["correct"].to_numpy() > 0.5, j["correct_b"].to_numpy() > 0.5)
            row.update(only_a_right=mc["b"], only_b_right=mc["c"])
            cols = ["correct", "hP", "hR", "severity_of_mistake", "mistake"]
            av = j.select(cols).to_numpy()
            bv = j.select([f"{c}_b" for c in cols]).to_numpy()
            stats = {"accuracy": ([0], _accuracy_of_sums), "hF": ([1, 2], hf_of_sums)}
            if np.isfinite(av[:, 4]).all() and np.isfinite(bv[:, 4]).all() and trees != "different":
                stats["mistake_severity"] = ([3, 4], severity_of_sums)
            res = paired_differences(av, bv, stats, n_resamples=n_resamples, level=level,
                                     seed=pair_stream(seed, la, lb, grp), memo=memo)
            for m in COMPARED_MEASURES:
                r = res.get(m)
                row.update({f"{m}_a": r.a if r else None, f"{m}_b": r.b if r else None,
                            f"{m}_diff": r.difference if r else None, f"{m}_ci_low": r.ci_low if r else None,
                            f"{m}_ci_high": r.ci_high if r else None,
                            f"{m}_p": (mc["p_value"] if m == "accuracy" else (r.p_value if r else None))})
            rows.append(row)
    if not rows:
        raise ComparisonError(_nothing_shared(items, pairs))
    table = pl.DataFrame(rows, infer_schema_length=None)
    for m in COMPARED_MEASURES:
        p = table[f"{m}_p"].cast(pl.Float64).fill_null(float("nan")).to_numpy()
        adj = holm(p)
        table = table.with_columns(pl.Series(f"{m}_p_holm", adj).fill_nan(None),
                                   pl.Series(f"{m}_significant", np.where(np.isfinite(adj), adj < alpha, False)))
    for m in COMPARED_MEASURES:
        table = table.with_columns(pl.col(f"{m}_p").cast(pl.Float64).fill_nan(None))
    order = ["dataset", "prompt", "a", "b", "n", "only_a", "only_b", "only_a_right", "only_b_right"]
    order += [f"{m}_{x}" for m in COMPARED_MEASURES for x in ("a", "b", "diff", "ci_low", "ci_high", "p", "p_holm",
                                                               "significant")]
    order += ["height_trees"]
    return table.select([c for c in order if c in table.columns])


def _height_trees(fa: pl.DataFrame, fb: pl.DataFrame) -> str | None:
    """``same`` when both sides measured severity on one height tree, ``different`` when not,
    None when a side's scores do not say (an older run)."""
    ta = set(fa["height_tree"].drop_nulls().to_list())
    tb = set(fb["height_tree"].drop_nulls().to_list())
    if not ta or not tb:
        return None
    return "same" if ta == tb and len(ta) == 1 else "different"


def _nothing_shared(items: dict[str, pl.DataFrame], pairs) -> str:
    """The error of a comparison with no shared item: each side's datasets × prompts and a
    few of its ids, so the mismatch shows (other datasets, other id schemes)."""
    lines = ["no two systems share an item (a sample id within one dataset × prompt): nothing to compare"]
    for label in dict.fromkeys(x for p in pairs for x in p):
        t = items[label]
        parts = []
        for (d, pr), g in t.group_by("dataset", "prompt", maintain_order=True):
            parts.append(f"{d or '(no dataset)'} · {pr or '(no prompt)'}: {g.height:,} items, ids {few(g['id'].sort(), 5)}")
        lines.append(f"  {label}: " + ("; ".join(parts) if parts else "no items with a full ground truth"))
    return "\n".join(lines)


def pair_stream(seed: int, a: str, b: str, group: tuple = ()) -> np.random.SeedSequence:
    """The seed of one pair × group's draws: fixed by ``seed``, the two labels (in either
    order) and the group alone — never by the pair's position among the others.

    Parameters
    ----------
    seed : int
        The comparison's seed.
    a, b : str
        The two systems' labels.
    group : tuple
        The dataset × prompt.

    Returns
    -------
    numpy.random.SeedSequence

    Examples
    --------
    >>> x = pair_stream(0, "m1", "m2", ("d", "p")).generate_state(2).tolist()
    >>> x == pair_stream(0, "m2", "m1", ("d", "p")).generate_state(2).tolist()
    True
    >>> x == pair_stream(0, "m1", "m3", ("d", "p")).generate_state(2).tolist()
    False
    """
    key = json.dumps([sorted([str(a), str(b)]), [str(g) for g in group]], ensure_ascii=False)
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return np.random.SeedSequence([int(seed), *np.frombuffer(digest[:16], dtype="<u4").tolist()])


def against_the_best(samples: pl.DataFrame, board: pl.DataFrame, *, measure: str = "hF", n_resamples: int = 9999,
                     seed: int = 0, alpha: float = 0.05, keys=("model", "dataset", "prompt"),
                     memo=None) -> pl.DataFrame:
    """Rank the models within each dataset × prompt group by ``measure`` (1 = best; ties
    share the best rank) and test each against the group's best on their shared items.

    Parameters
    ----------
    samples : polars.DataFrame
        The leaderboard's samples (``id`` needed for the tests).
    board : polars.DataFrame
        The leaderboard (one row per model × dataset × prompt, with ``measure``).
    measure : {"hF", "accuracy", "mistake_severity"}
        What ranks the models (mistake severity: lowest first) and which paired test
        compares them with the best.
    n_resamples, seed, alpha
        As for :func:`compare_systems` (0 resamples: ranks only).
    keys : sequence of str
        The leaderboard's keys: model, then the group keys.
    memo : ContentMemo, optional
        As for :func:`compare_systems`.

    Returns
    -------
    polars.DataFrame
        ``keys``, ``rank``, ``vs_best_p`` (Holm-adjusted over the group's comparisons; null
        for the best, for a group of one model, or without shared ids) and ``tied_with_best``
        (true for the best and for every model not significantly below it).
    """
    keys = [k for k in keys if k in board.columns]
    group = [k for k in keys if k != "model"]
    out = []
    for _, g in (board.group_by(group, maintain_order=True) if group else [((), board)]):
        vals = g[measure].cast(pl.Float64).fill_nan(None)
        rank = vals.rank(method="min", descending=measure not in _LOWER_IS_BETTER)
        g = g.select(keys).with_columns(rank.cast(pl.Int64).alias("rank"))
        best = g.filter(pl.col("rank") == 1)
        p = {m: None for m in g["model"].to_list()} if "model" in keys else {}
        if "model" in keys and best.height and g.height > 1 and n_resamples > 0 and "id" in samples.columns:
            b_model = best["model"][0]
            cond = pl.all_horizontal([pl.col(k) == g[k][0] for k in group]) if group else pl.lit(True)
            part = samples.filter(cond)
            others = [m for m in g["model"].to_list() if m != b_model]
            try:
                t = compare_systems({m: part.filter(pl.col("model") == m) for m in [b_model, *others]},
                                    n_resamples=n_resamples, seed=seed, alpha=alpha, reference=b_model,
                                    memo=memo)
            except ComparisonError:
                t = None
            if t is not None:
                col = f"{measure}_p"
                adj = holm(t[col].cast(pl.Float64).fill_null(float("nan")).to_numpy())
                p.update(dict(zip(t["a"].to_list(), adj.tolist())))
        pv = [p.get(m) if "model" in keys else None for m in g["model"].to_list()] if "model" in keys else \
            [None] * g.height
        pv = [None if v is None or v != v else v for v in pv]
        tied = [r == 1 or (v is not None and v >= alpha) for r, v in zip(g["rank"].to_list(), pv)]
        out.append(g.with_columns(pl.Series("vs_best_p", pv, dtype=pl.Float64),
                                  pl.Series("tied_with_best", tied, dtype=pl.Boolean)))
    if not out:
        return pl.DataFrame(schema={**{k: pl.String for k in keys}, "rank": pl.Int64, "vs_best_p": pl.Float64,
                                    "tied_with_best": pl.Boolean})
    return pl.concat(out, how="vertical_relaxed")


#: The most bytes a run's ``run.json`` may take.
MAX_RUN_JSON_BYTES = 16 * 2**20


def load_scores(path: str | os.PathLike) -> tuple[pl.DataFrame, dict]:
    """The samples table and ``run.json`` of a scoring run, checked.

    The scores table is read in counted batches, only the columns a comparison uses
    (:data:`COMPARE_COLUMNS`; :func:`taxoforge.files.parquet_records.read_parquet_table`), and
    its values checked (:func:`check_scores`); ``run.json``, when present, must be a JSON
    object. A FIFO, a device or a folder in place of either is refused by name.

    Parameters
    ----------
    path : str or os.PathLike
        The output folder of ``taxoforge score`` (``scores.parquet``, ``run.json``), or a
        ``scores.parquet`` file.

    Returns
    -------
    (polars.DataFrame, dict)

    Raises
    ------
    ComparisonError
        No scores table there, one that cannot be read or holds values no run writes, a
        ``run.json`` that is not a JSON object.
    """
    p = Path(path)
    table = p / "scores.parquet" if p.is_dir() else p
    if not table.exists():
        raise ComparisonError(f"{path}: no scores.parquet there; give the output folder of `taxoforge score -o DIR` "
                              "or its scores.parquet")
    try:
        samples = read_parquet_table(table, keep=COMPARE_COLUMNS, limits=SCORES_LIMITS, what="scores table")
    except RecordFileError as e:
        raise ComparisonError(f"{e}; give the output folder of `taxoforge score -o DIR` or its scores.parquet") \
            from None
    check_scores(samples, str(table))
    info = {}
    run_json = table.parent / "run.json"
    if run_json.exists():
        with open_regular(run_json, "run record") as fh:
            raw = fh.read(MAX_RUN_JSON_BYTES + 1)
        if len(raw) > MAX_RUN_JSON_BYTES:
            raise ComparisonError(f"{run_json}: more than {MAX_RUN_JSON_BYTES:,} bytes; not a scoring run's record")
        try:
            info = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError) as e:
            raise ComparisonError(f"{run_json}: not readable JSON ({e}); a scoring run's record is a JSON object "
                                  "(remove it to compare the scores table alone)") from None
        if not isinstance(info, dict):
            raise ComparisonError(f"{run_json}: a JSON {type(info).__name__}, not a scoring run's record (a JSON "
                                  "object); remove it to compare the scores table alone")
    return samples, info


def _table_citation(s: pl.DataFrame, info: dict, label: str, run: Path, notes: list[str]) -> str | None:
    """The taxonomy a system was scored against: its scores table's own ``taxonomy_version``
    column, which ``run.json`` may only repeat (a ``run.json`` saying otherwise is noted, not believed)."""
    said = info.get("taxonomy_version")
    said = said if isinstance(said, str) else None
    if "taxonomy_version" not in s.columns:
        return said
    own = [v for v in s["taxonomy_version"].cast(pl.String).unique(maintain_order=True).to_list() if v]
    if not own:
        return said
    if said is not None and said not in own:
        notes.append(f"{label}: {run / 'run.json'} cites {said}, but its scores table was scored against "
                     f"{', '.join(own)}: the table's own column is used")
    return ", ".join(own)


@dataclass
class Comparison:
    """The result of :func:`compare_runs`.

    Attributes
    ----------
    table : polars.DataFrame
        :func:`compare_systems`'s table.
    systems : dict
        Label → run folder, model, taxonomy cited.
    settings : dict
        Resamples, level, seed, alpha.
    notes : list of str
        What was left out and why.
    """

    table: pl.DataFrame
    systems: dict[str, dict]
    settings: dict
    notes: list[str] = field(default_factory=list)


def _run_names(paths: list[Path]) -> dict[Path, str]:
    """Each run as the shortest tail of its path that tells it from the others."""
    parts = {p: (p if p.is_dir() else p.parent).resolve().parts for p in paths}
    tails = distinct_tails(set(parts.values()))
    return {p: tails[ps] for p, ps in parts.items()}


def compare_runs(runs, *, n_resamples: int = 9999, level: float = 0.95, seed: int = 0,
                 alpha: float = 0.05, reference: str | None = None) -> Comparison:
    """Compare the systems of several scoring runs (module docstring).

    Parameters
    ----------
    runs : sequence of str or os.PathLike
        Output folders of ``taxoforge score`` (or their ``scores.parquet``). A run of several
        models gives several systems.
    n_resamples, level, seed, alpha
        As for :func:`compare_systems`.
    reference : str, optional
        The system every other one is compared with: its label, or the model name of exactly
        one system.

    Returns
    -------
    Comparison

    Raises
    ------
    ComparisonError
        A run that cannot be read, fewer than two systems, ids repeated within a group, no
        shared items, a reference that names no system or several.
    """
    paths = [Path(r) for r in runs]
    if not paths:
        raise ComparisonError("no runs given")
    names = _run_names(paths)
    loaded = [(p, *load_scores(p)) for p in paths]
    pairs = [(p, str(m)) for p, s, _ in loaded
             for m in (s["model"].unique(maintain_order=True).to_list() if "model" in s.columns else [""])]
    models = [m for _, m in pairs]
    systems, meta, notes = {}, {}, []
    for p, s, info in loaded:
        for m in (s["model"].unique(maintain_order=True).to_list() if "model" in s.columns else [""]):
            label = str(m) if models.count(str(m)) == 1 and m else f"{names[p]}:{m}" if m else names[p]
            systems[label] = s.filter(pl.col("model") == m) if "model" in s.columns else s
            meta[label] = {"run": str(p), "model": m,
                           "taxonomy_version": _table_citation(systems[label], info, label, p, notes),
                           "mapping_config_id": info.get("mapping_config_id"),
                           "heights": (info.get("heights") or {}).get("rule")}
            if "mistake_severity" not in s.columns:
                notes.append(f"{label}: its scores have no mistake_severity (scored by an older taxoforge): "
                             "mistake severity is not compared")
    if len(systems) < 2:
        raise ComparisonError(f"{len(systems)} system(s) in {', '.join(map(str, paths))}: a comparison needs two "
                              "(two runs, or a run of several models)")
    versions = {v["taxonomy_version"] for v in meta.values() if v["taxonomy_version"]}
    if len(versions) > 1:
        notes.append(f"the runs cite different taxonomies ({', '.join(sorted(versions))}): hP, hR and severities "
                     "are measured on different trees")
    ref = _reference_label(reference, meta) if reference is not None else None
    table = compare_systems(systems, n_resamples=n_resamples, level=level, seed=seed, alpha=alpha, reference=ref)
    left = table.filter((pl.col("only_a") > 0) | (pl.col("only_b") > 0))
    for r in left.iter_rows(named=True):
        notes.append(f"{r['dataset']} · {r['prompt']}: {r['only_a']} items of {r['a']} and {r['only_b']} of "
                     f"{r['b']} have no counterpart and are left out")
    if "height_trees" in table.columns:
        for r in table.filter(pl.col("height_trees") == "different").iter_rows(named=True):
            notes.append(f"{r['dataset']} · {r['prompt']}: mistake severity of {r['a']} and {r['b']} is not compared: "
                         "their heights were measured on different trees (different label sets, or --heights "
                         "labels against tree); score both with the same --label-set FILE, or with --heights tree")
    return Comparison(table, meta, {"n_resamples": n_resamples, "level": level, "seed": seed, "alpha": alpha,
                                    "reference": ref},
                      sorted(set(notes)))


def _reference_label(reference: str, meta: dict[str, dict]) -> str:
    """The label of the system ``reference`` names: a label, else the model of exactly one system."""
    if reference in meta:
        return reference
    hits = [label for label, m in meta.items() if str(m["model"]) == reference]
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise ComparisonError(f"--reference {reference!r}: several systems are that model ({few(hits)}); "
                              "name one by its label")
    raise ComparisonError(f"--reference {reference!r} names no system; the systems are {few(list(meta), 8)}")
