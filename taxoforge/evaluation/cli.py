"""``taxoforge mc …`` (multiple-choice sets) and ``taxoforge evaluate …`` (every other
evaluation of the taxonomy-aware, VLM4Bio, open-world and granularity papers on a scores table or a tree).

Exit codes: 0 ok; 1 the evaluation cannot be done on this input (e.g. a tree too shallow
for a difficulty); 2 unreadable input or bad usage (the message names the file and line).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from taxoforge.cli_output import fail

__all__ = ["mc_group", "evaluate_group"]


def _fail(msg: str, code: int = 2) -> None:
    fail(msg, code)


def _load_tree(ref: str):
    from taxoforge.snapshots.load import load_ranked_tree

    try:
        return load_ranked_tree(ref)
    except (FileNotFoundError, ValueError, KeyError) as e:
        _fail(f"{ref}: {e}")


# ============================================================================ mc
@click.group("mc", context_settings={"help_option_names": ["-h", "--help"]})
def mc_group() -> None:
    """Multiple-choice question sets from a taxonomy (VLM4Bio's easy / medium / hard, NOTA,
    FCT, rank probes) and the scores of the NOTA and FCT tests."""


@mc_group.command("build")
@click.argument("tree")
@click.argument("labels")
@click.option("--difficulty", type=click.Choice(["easy", "medium", "hard"]), default=None,
              help="Distractor band (see docs/evaluations.md). Give this or --probe-rank.")
@click.option("--probe-rank", default=None, metavar="RANK",
              help="Rank-level probes instead: ask for the ancestor at RANK (genus, family, order …; "
                   "a number = a depth on an unranked tree).")
@click.option("--options", "n_options", type=int, default=4, show_default=True, help="Options per question.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--variant", type=click.Choice(["standard", "nota", "fct"]), default="standard", show_default=True,
              help="nota: the true option replaced by 'None of the Above'; fct: a suggested 'Chosen Answer'.")
@click.option("--nota-position", type=click.Choice(["last", "in_place"]), default="last", show_default=True,
              help="NOTA: move 'None of the Above' to the last letter (VLM4Bio's code) or keep it in place.")
@click.option("--organism", default="organism", show_default=True, help="Word used in the question text.")
@click.option("--label-column", default=None, help="Label column of a CSV/JSONL/Parquet LABELS file.")
@click.option("--pool", default=None, metavar="POOL",
              help="Where distractors come from: 'labels' (the taxa of LABELS, as VLM4Bio draws from its "
                   "dataset; the default for a file), 'tree' (the whole tree; the default for sample:N), "
                   "a clade as 'clade:NAME' or a name or node id of TREE, or 'file:PATH' (a label file whose "
                   "taxa are the pool).")
@click.option("-o", "--out", "out", type=click.Path(dir_okay=False), required=True, help="Questions JSONL.")
@click.option("--skipped", "skipped_out", type=click.Path(dir_okay=False), default=None,
              help="Write the ground truths that got no question here (default: OUT with .skipped.jsonl).")
@click.option("--info", "info_out", type=click.Path(dir_okay=False), default=None,
              help="Write the set's metadata (pool, how the labels resolved, counts) here "
                   "(default: OUT with .info.json).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def mc_build_cmd(tree, labels, difficulty, probe_rank, n_options, seed, variant, nota_position, organism,
                 label_column, pool, out, skipped_out, info_out, as_json):
    """Build one question per ground truth in LABELS (a .txt/.csv/.tsv/.jsonl/.parquet file;
    other columns such as image-path are copied into the questions; or 'sample:N' for N
    seeded ground truths drawn from the tree) from TREE (a tree or snapshot folder, or
    NAME[@VERSION]), in VLM4Bio's question format. Labels resolve to nodes as scoring
    resolves ground truths (names, synonyms, genus transfers …). The same seed writes the
    same bytes."""
    from taxoforge.evaluation import multiple_choice as mc
    from taxoforge.evaluation.reasoning_tests import fct_variant, nota_variant
    from taxoforge.files.labels import LabelFileError, read_labels

    if (difficulty is None) == (probe_rank is None):
        _fail("give exactly one of --difficulty and --probe-rank")
    t = _load_tree(tree)
    try:
        if labels.startswith("sample:"):
            n = int(labels.split(":", 1)[1])
            gts = mc.sample_ground_truths(t, difficulty or "easy", n, seed=seed, options=n_options)
            pool = pool or "tree"
        else:
            gts = read_labels(labels, label_column)
            pool = pool or "labels"
        if pool.startswith("file:"):
            pool = read_labels(pool.removeprefix("file:"), label_column)["label"]
        if probe_rank is not None:
            rank = int(probe_rank) if probe_rank.isascii() and probe_rank.isdigit() else probe_rank
            qs = mc.build_rank_probes(t, gts, rank, options=n_options, seed=seed, organism=organism, pool=pool)
        else:
            qs = mc.build_questions(t, gts, difficulty, options=n_options, seed=seed, organism=organism, pool=pool)
    except mc.TreeTooShallow as e:
        _fail(str(e), 1)
    except (LabelFileError, ValueError) as e:
        _fail(str(e))
    if variant == "nota":
        qs = nota_variant(qs, position=nota_position)
    elif variant == "fct":
        qs = fct_variant(qs, seed=seed)
    qs.write_jsonl(out)
    skipped_path = Path(skipped_out) if skipped_out else Path(out).with_suffix(".skipped.jsonl")
    if qs.skipped.height:
        from taxoforge.files import write_text_atomic

        write_text_atomic(skipped_path, "".join(json.dumps(r, ensure_ascii=False) + "\n"
                                                 for r in qs.skipped.to_dicts()))
    info_path = Path(info_out) if info_out else Path(out).with_suffix(".info.json")
    qs.write_info(info_path)
    summary = dict(qs.info, out=str(out), skipped_file=str(skipped_path) if qs.skipped.height else None,
                   info_file=str(info_path))
    if as_json:
        click.echo(json.dumps(summary, indent=2, default=str))
    else:
        click.echo(f"{qs.questions.height} question(s) written to {out} ({summary['set']}, {variant}, "
                   f"{n_options} options, seed {seed}, {summary['mode']}; distractors from "
                   f"{_pool_words(summary['pool'])})")
        res = summary["resolution"]
        methods = ", ".join(f"{m} {k}" for m, k in res["by_method"].items())
        click.echo(f"{res['linked']} of {res['labels']} label(s) resolved ({methods or 'none'})"
                   + (f"; {res['partial']} only to their genus or species" if res["partial"] else "")
                   + (f"; {res['ambiguous']} ambiguous" if res["ambiguous"] else "")
                   + (f"; {res['unmatched']} unmatched" if res["unmatched"] else ""))
        if qs.skipped.height:
            click.echo(f"{qs.skipped.height} ground truth(s) got no question — reasons in {skipped_path}:")
            for reason, n in summary["skipped_by_reason"].items():
                click.echo(f"  {n:>7}  {reason}")


def _pool_words(pool: dict) -> str:
    """The pool of a question set's metadata, in words."""
    kind = pool.get("kind")
    if kind == "tree":
        return f"the whole tree ({pool['nodes']:,} nodes)"
    if kind == "clade":
        return f"the clade {pool['label']} ({pool['node']}, {pool['nodes']:,} nodes)"
    what = "the labels given" if kind == "labels" else "the pool given"
    return f"{what} ({pool['nodes']:,} taxa)"


@mc_group.command("check")
@click.argument("tree")
@click.argument("questions", type=click.Path(exists=True, dir_okay=False))
@click.option("--difficulty", type=click.Choice(["easy", "medium", "hard"]), default=None,
              help="Check the distractor band too (default: the set named in each question).")
def mc_check_cmd(tree, questions, difficulty):
    """Check every question of QUESTIONS against TREE: distinct options, the answer at
    option-gt, same rank, each distractor's relation to the answer, and — when the set's
    metadata (QUESTIONS with .info.json, written by mc build) is beside it — every distractor
    inside the set's distractor pool. Exit 1 on any problem, listing them."""
    from taxoforge.evaluation.multiple_choice import check_questions
    from taxoforge.evaluation.multiple_choice.pools import pool_of_info

    t = _load_tree(tree)
    rows = _read_jsonl(questions)
    info_path = Path(questions).with_suffix(".info.json")
    pool = None
    if info_path.is_file():
        try:
            pool = pool_of_info(t, json.loads(info_path.read_text(encoding="utf-8"))["pool"])
        except (ValueError, KeyError) as e:
            _fail(f"{info_path}: not the metadata of a question set ({e})")
    probs = check_questions(t, [r for r in rows if r.get("variant") in (None, "standard", "probe")], difficulty,
                            pool=pool)
    if probs.height:
        for qid, p in probs.head(50).iter_rows():
            click.echo(f"{qid}: {p}")
        _fail(f"{probs.height} problem(s) in {questions}", 1)
    click.echo(f"{len(rows)} question(s) checked: no problem")


@mc_group.command("score")
@click.argument("outputs", type=click.Path(exists=True, dir_okay=False))
@click.option("--json", "as_json", is_flag=True)
def mc_score_cmd(outputs, as_json):
    """Score a model's answers (OUTPUTS: the question rows with an 'output' field) to a NOTA
    or FCT set: NOTA accuracy; FCT accuracy and agreement score (VLM4Bio Table 5)."""
    from taxoforge.evaluation.reasoning_tests import fct_scores, nota_scores

    rows = _read_jsonl(outputs)
    if not rows:
        _fail(f"{outputs}: no rows")
    missing = [i for i, r in enumerate(rows, 1) if "output" not in r]
    if missing:
        _fail(f"{outputs}:{missing[0]}: no 'output' field ({len(missing)} row(s) without one)")
    fct = [r for r in rows if "fct-suggested-answer" in r]
    nota = [r for r in rows if "nota-target-class" in r or str(r.get("target-class", "")).lower().startswith("none of the above")]
    res = {}
    if fct:
        res["fct"] = fct_scores(fct)[1]
    if nota:
        res["nota"] = nota_scores(nota)[1]
    if not res:
        _fail(f"{outputs}: neither FCT rows (fct-suggested-answer) nor NOTA rows (target-class None of the Above)")
    if as_json:
        click.echo(json.dumps(res, indent=2))
    else:
        if "fct" in res:
            click.echo(f"FCT  n={res['fct']['n']}  accuracy={100 * res['fct']['accuracy']:.2f}%  "
                       f"agreement={100 * res['fct']['agreement']:.2f}%")
        if "nota" in res:
            click.echo(f"NOTA n={res['nota']['n']}  accuracy={100 * res['nota']['accuracy']:.2f}%")


def _read_jsonl(path) -> list[dict]:
    """The records of a JSON-lines file (:func:`taxoforge.files.records.read_jsonl_records`:
    strict, counted, a bad line named; a FIFO refused by name)."""
    from taxoforge.files.paths import NotARegularFile
    from taxoforge.files.records import RecordFileError, read_jsonl_records

    try:
        return read_jsonl_records(path)[0]
    except NotARegularFile as e:
        _fail(str(e), 11)
    except RecordFileError as e:
        _fail(str(e))


# ============================================================================ evaluate
@click.group("evaluate", context_settings={"help_option_names": ["-h", "--help"]})
def evaluate_group() -> None:
    """Evaluations of the taxonomy-aware, VLM4Bio, open-world and granularity papers on a per-sample scores table
    (scores.parquet of `taxoforge score`), a score matrix, or a tree."""


def _read_table(path: str):
    """A per-sample table handed to an evaluation, read through the counted readers of
    :mod:`taxoforge.files` (a FIFO or a device refused by name, exit code 11; what a file
    decodes to counted, a bad line named)."""
    import polars as pl

    from taxoforge.files.paths import NotARegularFile, check_regular
    from taxoforge.files.record_limits import RecordFileError, RecordLimits

    p = Path(path)
    if not p.exists():
        _fail(f"{path}: no such file")
    suf = p.suffix.lower()
    try:
        check_regular(p, "table")
        if suf == ".parquet":
            from taxoforge.files.parquet_records import read_parquet_table

            return read_parquet_table(p, limits=RecordLimits(max_records=20_000_000, max_cells=10**9), what="table")
        if suf in (".jsonl", ".ndjson"):
            return pl.DataFrame(_read_jsonl(p), infer_schema_length=None)
        if suf in (".csv", ".tsv"):
            return pl.read_csv(p, separator="\t" if suf == ".tsv" else ",")
    except NotARegularFile as e:
        _fail(str(e), 11)
    except RecordFileError as e:
        _fail(str(e))
    except Exception as e:  # noqa: BLE001 - reported with the file name
        _fail(f"{path}: cannot read ({e})")
    _fail(f"{path}: unknown table format {suf!r}; expected .parquet, .jsonl, .csv or .tsv")


def _show(title: str, df, out_dir: Path | None, name: str) -> None:
    from taxoforge.markdown import markdown_table

    click.echo(f"\n## {title}\n")
    click.echo(markdown_table(df, max_rows=60) if df.height else "(no rows)")
    if out_dir is not None:
        from taxoforge.trees.tables import write_parquet_atomic

        write_parquet_atomic(df, out_dir / f"{name}.parquet")


def _by(value: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in value.split(",") if x.strip())


@evaluate_group.command("breakdowns", short_help="Per level/rank, HCA, MTA, Correct/Incorrect/Other, four groups.")
@click.argument("scores", type=click.Path(exists=True, dir_okay=False))
@click.argument("tree")
@click.option("--by", default="model,dataset,prompt", show_default=True, help="Group keys (comma-separated).")
@click.option("--cuts", "n_cuts", type=int, default=25, show_default=True, help="Random tree cuts for MTA.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the tree cuts.")
@click.option("-o", "--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Also write every table as Parquet here.")
def evaluate_breakdowns_cmd(scores, tree, by, n_cuts, seed, out_dir):
    """Per-level and per-rank accuracy and hP/hR, rank-level correctness from the LCA, HCA,
    MTA, VLM4Bio's Correct/Incorrect/Other % and (with LI and CS columns) the open-world classification paper's four
    groups, from SCORES (scores.parquet of `taxoforge score`) on TREE."""
    from taxoforge.scores.measures.breakdowns import breakdown_tables

    samples = _read_table(scores)
    t = _load_tree(tree)
    try:
        tables = breakdown_tables(samples, t, _by(by), n_cuts=n_cuts, seed=seed)
    except (ValueError, KeyError) as e:
        _fail(f"{scores}: {e}")
    out = Path(out_dir) if out_dir else None
    titles = {"by_level": "Per ground-truth level", "by_rank": "Per ground-truth rank",
              "correct_by_level": "Right down to level k (depth_lca ≥ k)",
              "correct_by_rank": "Right at rank R (in the ground truth's rank-R taxon)",
              "consistency": f"HCA and MTA ({n_cuts} tree cuts, seed {seed})",
              "outcomes": "Correct / Incorrect / Other % (VLM4Bio)",
              "open_world_groups": "Four outcome groups (open-world paper: LI ≥ 0.5 correct, CS ≥ 0.6 specific)"}
    for name, df in tables.items():
        _show(titles.get(name, name), df, out, name)


@evaluate_group.command("probes", short_help="HCA from rank-probe answers.")
@click.argument("scores", type=click.Path(exists=True, dir_okay=False))
@click.argument("questions", type=click.Path(exists=True, dir_okay=False))
@click.option("--by", default="model", show_default=True)
def evaluate_probes_cmd(scores, questions, by):
    """HCA from rank-probe answers: SCORES (scored answers, `id` = question id, `correct`) and
    the QUESTIONS JSONL of `taxoforge mc build --probe-rank …` (one file or several ranks
    concatenated); a sample counts when every probe about it is right."""
    from taxoforge.scores.measures.breakdowns import probe_consistency

    try:
        t = probe_consistency(_read_table(scores), _read_table(questions), _by(by))
    except ValueError as e:
        _fail(str(e))
    _show("Hierarchical consistent accuracy from rank probes", t, None, "probes")


@evaluate_group.command("open-world", short_help="TI, SS, CS, LI and the four groups (open-world paper).")
@click.argument("scores", type=click.Path(exists=True, dir_okay=False))
@click.option("--prediction-column", default="answer", show_default=True)
@click.option("--reference-column", default="reference", show_default=True)
@click.option("--encoder", default="minilm", show_default=True,
              help="'minilm' (all-MiniLM-L6-v2 from the 'embeddings' extra), a local sentence-transformers folder, "
                   "or 'none' to skip SS and CS.")
@click.option("--judge-model", default=None, type=click.Path(file_okay=False),
              help="Local text-generation model folder for LI; without it LI is skipped (and said so).")
@click.option("--by", default="model,dataset,prompt", show_default=True)
@click.option("-o", "--out", "out", type=click.Path(dir_okay=False), default=None,
              help="Write the samples with TI/SS/CS/LI columns here (.parquet).")
def evaluate_open_world_cmd(scores, prediction_column, reference_column, encoder, judge_model, by, out):
    """The open-world classification paper's TI, SS, CS and LI for every answer in SCORES, their means per group, and
    the four outcome groups when LI and CS are both there."""
    import polars as pl

    from taxoforge.evaluation import open_world_measures as sm
    from taxoforge.scores.measures.breakdowns import open_world_groups

    s = _read_table(scores)
    for c in (prediction_column, reference_column):
        if c not in s.columns:
            _fail(f"{scores}: no column {c!r}; columns are {s.columns}")
    enc = None
    if encoder != "none":
        try:
            enc = sm.sentence_encoder(None if encoder == "minilm" else encoder)
        except (ImportError, OSError, ValueError) as e:
            _fail(str(e))
    judge = sm.local_text_generation_judge(judge_model) if judge_model else None
    preds = [x or "" for x in s[prediction_column].cast(pl.String).to_list()]
    refs = [x or "" for x in s[reference_column].cast(pl.String).to_list()]
    vals, skipped = sm.open_world_measures(preds, refs, encode=enc, judge=judge)
    s = s.with_columns(*[pl.Series(k, v) for k, v in vals.items()])
    for k, why in skipped.items():
        click.echo(f"{k} skipped: {why}", err=True)
    keys = [k for k in _by(by) if k in s.columns]
    means = s.group_by(keys or pl.lit(1).alias("_all")).agg(pl.len().alias("n"), *[pl.col(k).mean() for k in vals])
    _show("Open-world measures (open-world paper)", means.drop("_all", strict=False).sort(keys or "n"), None, "open_world")
    if "LI" in vals and "CS" in vals:
        _show("Four outcome groups", open_world_groups(s, keys), None, "groups")
    if out:
        from taxoforge.trees.tables import write_parquet_atomic

        write_parquet_atomic(s, out)


def _matrix(path: str, truth_column: str, drop: tuple[str, ...] = ("image", "id", "image-path")):
    import numpy as np

    df = _read_table(path)
    if truth_column not in df.columns:
        _fail(f"{path}: no ground-truth column {truth_column!r}; columns start {df.columns[:8]}")
    cols = [c for c in df.columns if c != truth_column and c not in drop]
    try:
        m = df.select(cols).to_numpy().astype(np.float64)
    except Exception as e:  # noqa: BLE001
        _fail(f"{path}: the score columns must be numeric ({e})")
    return m, cols, df[truth_column].cast(str).to_list()


@evaluate_group.command("granularity", short_help="Propagated mAP per level (granularity paper, Table 2, Fig. 3).")
@click.argument("scores", type=click.Path(exists=True, dir_okay=False))
@click.argument("tree")
@click.option("--truth-column", default="label", show_default=True)
def evaluate_granularity_cmd(scores, tree, truth_column):
    """The granularity paper, §4: SCORES is a matrix (one row per image, one column per class named by node
    id or name, plus the ground-truth column); prints mAP of the leaves, of the ancestors raw
    and propagated by max-child and max-leaf with Δ (Table 2), and mAP per level (Fig. 3)."""
    import polars as pl

    from taxoforge.evaluation.propagation import granularity_table, per_level_map

    m, cols, gts = _matrix(scores, truth_column)
    t = _load_tree(tree)
    try:
        table = granularity_table(m, cols, gts, t)
        levels = per_level_map(m, cols, gts, t)
    except ValueError as e:
        _fail(f"{scores}: {e}")
    _show("Granularity (granularity paper, Table 2)", pl.DataFrame([table]), None, "granularity")
    _show("mAP per level (granularity paper, Fig. 3)", levels, None, "levels")


@evaluate_group.command("tiered", short_help="Two-level fine/coarse benchmark (granularity paper, App. A).")
@click.argument("tree")
@click.argument("fine", type=click.Path(exists=True, dir_okay=False))
@click.option("--coarse-depth", type=int, default=None, help="Coarse class = the fine class's ancestor at this depth.")
@click.option("--coarse-rank", default=None, help="Coarse class = the fine class's ancestor of this rank.")
@click.option("--coarse", "coarse_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="File of coarse classes (e.g. tiered-ImageNet's 34 wnids), one per line.")
@click.option("--scores", "scores", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Fine-class score matrix (columns = the fine classes) with a ground-truth column.")
@click.option("--coarse-scores", "coarse_scores", multiple=True, metavar="NAME=FILE",
              help="Coarse-class score matrices, e.g. CG_direct=direct.parquet (repeatable).")
@click.option("--truth-column", default="label", show_default=True)
@click.option("-o", "--out", "out", type=click.Path(dir_okay=False), default=None, help="Write the two-level set here.")
def evaluate_tiered_cmd(tree, fine, coarse_depth, coarse_rank, coarse_file, scores, coarse_scores, truth_column, out):
    """The granularity paper, App. A: the two-level (fine / coarse) label set of the FINE classes (a labels
    file, e.g. the 1,000 ImageNet-1k wnids) and, with --scores, FG_direct, CG_FG-label and
    each coarse matrix's accuracy with its Δ to CG_direct."""
    import polars as pl

    from taxoforge.evaluation.propagation import tiered_accuracy, tiered_classes
    from taxoforge.files.labels import read_labels
    from taxoforge.links.tree_labels import node_indexes

    t = _load_tree(tree)
    fine_labels = read_labels(fine)["label"].to_list()
    coarse = read_labels(coarse_file)["label"].to_list() if coarse_file else None
    try:
        classes = tiered_classes(t, fine_labels, coarse=coarse, depth=coarse_depth, rank=coarse_rank)
    except ValueError as e:
        _fail(str(e))
    click.echo(f"{classes.height} fine classes under {classes['coarse_node'].n_unique()} coarse classes "
               f"({len(fine_labels) - classes.height} fine classes without a coarse class left out)")
    if out:
        from taxoforge.trees.tables import write_parquet_atomic

        write_parquet_atomic(classes, out)
    if scores:
        m, cols, gts = _matrix(scores, truth_column)
        ids = t.ids[node_indexes(t, cols, what="score column", partial=False)].tolist()
        order = {c: i for i, c in enumerate(ids)}
        missing = [c for c in classes["fine_node"].to_list() if c not in order]
        if missing:
            _fail(f"{scores}: no score column for fine class {missing[0]!r} ({len(missing)} missing)")
        fm = m[:, [order[c] for c in classes["fine_node"].to_list()]]
        cs = {}
        for spec in coarse_scores:
            name, _, path = spec.partition("=")
            cm, ccols, _ = _matrix(path, truth_column)
            cids = t.ids[node_indexes(t, ccols, what="coarse score column", partial=False)].tolist()
            want = sorted(set(classes["coarse_node"].to_list()))
            pos = {c: i for i, c in enumerate(cids)}
            if any(c not in pos for c in want):
                _fail(f"{path}: a coarse class has no score column")
            cs[name] = cm[:, [pos[c] for c in want]]
        res = tiered_accuracy(fm, gts, classes, coarse_scores=cs, tree=t)
        _show("Tiered benchmark (granularity paper, App. A)", pl.DataFrame([res]), None, "tiered")


_TEXT = ("exact_match", "contained", "rouge1_recall", "bleu2", "meteor")


@evaluate_group.command("validate", short_help="Kendall-τ validation of measures on synthetic pairs (taxonomy-aware evaluation paper, Table 1).")
@click.argument("tree")
@click.option("--measures", default="exact_match,contained,rouge1_recall,bleu2,meteor,TI", show_default=True,
              help="Comma-separated: the text measures (exact_match, contained, rouge1_recall, bleu2, meteor), TI, SS, CS (SS needs the 'embeddings' extra).")
@click.option("--pairs", "n_pairs", type=int, default=100_000, show_default=True)
@click.option("--max-distance", type=int, default=7, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
def evaluate_validate_cmd(tree, measures, n_pairs, max_distance, seed):
    """The taxonomy-aware evaluation paper, Table 1: Kendall's τ between each measure and hP (any node pairs) and hR
    (ancestor pairs) on synthetic pairs of TREE's labels at uniform distances."""
    from taxoforge.evaluation import open_world_measures as sm
    from taxoforge.evaluation.validation import kendall_tau_validation

    names = [m.strip() for m in measures.split(",") if m.strip()]
    fns = {}
    enc = None
    for name in names:
        if name in _TEXT:
            def fn(p, r, _n=name):
                from taxoforge.scores.measures.text import text_scores

                return text_scores(p, r, meteor=_n == "meteor")[_n]
            fns[name] = fn
        elif name == "TI":
            fns[name] = sm.text_inclusion
        elif name in ("SS", "CS"):
            if enc is None:
                try:
                    enc = sm.sentence_encoder()
                except ImportError as e:
                    _fail(str(e))
            fns[name] = (lambda p, r: sm.semantic_similarity(p, r, enc)) if name == "SS" else (
                lambda p, r: sm.concept_similarity(p, r, enc))
        else:
            _fail(f"unknown measure {name!r}; expected some of {', '.join(_TEXT)}, TI, SS, CS")
    t = _load_tree(tree)
    table = kendall_tau_validation(t, fns, n_pairs=n_pairs, max_distance=max_distance, seed=seed)
    _show(f"Kendall τ with hP and hR on {n_pairs} synthetic pairs (taxonomy-aware evaluation paper, Table 1)", table, None, "validation")


@evaluate_group.command("agreement", short_help="Agreement in node placement between mapping runs (taxonomy-aware evaluation paper, Fig. 4).")
@click.argument("scores", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--key", default="id", show_default=True, help="Column identifying an answer across the files.")
def evaluate_agreement_cmd(scores, key):
    """The taxonomy-aware evaluation paper, Fig. 4: the share of answers two mapping runs place on the same node, for
    every pair of SCORES files (scores.parquet of `taxoforge score` with different
    --similarity settings; each file is one method, named by its file or mapping config)."""
    import polars as pl

    from taxoforge.evaluation.validation import placement_agreement

    parts = []
    for path in scores:
        df = _read_table(path)
        if key not in df.columns or "pred_node" not in df.columns:
            _fail(f"{path}: needs columns {key!r} and 'pred_node'")
        name = Path(path).parent.name if Path(path).name == "scores.parquet" else Path(path).stem
        parts.append(df.select(pl.col(key).cast(pl.String), pl.col("pred_node"), pl.lit(name).alias("method")))
    try:
        t = placement_agreement(pl.concat(parts), key=key)
    except ValueError as e:
        _fail(str(e))
    _show("Agreement in node placement (taxonomy-aware evaluation paper, Fig. 4)", t, None, "agreement")
