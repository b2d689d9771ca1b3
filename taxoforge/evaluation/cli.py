"""``taxoforge mc …`` (multiple-choice sets) and ``taxoforge evaluate …`` (every other
evaluation of papers 000, 002, 003 and 004 on a scores table or a tree).

Exit codes: 0 ok; 1 the evaluation cannot be done on this input (e.g. a tree too shallow
for a difficulty); 2 unreadable input or bad usage (the message names the file and line).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

__all__ = ["mc_group", "evaluate_group"]


def _fail(msg: str, code: int = 2) -> None:
    click.echo(f"error: {msg}", err=True)
    sys.exit(code)


def _load_tree(ref: str):
    from taxoforge.evaluation.ranked_tree import RankedTree

    try:
        return RankedTree.of(ref)
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
@click.option("--organism", default="organism", show_default=True, help="Word used in the question text.")
@click.option("--label-column", default=None, help="Label column of a CSV/JSONL/Parquet LABELS file.")
@click.option("-o", "--out", "out", type=click.Path(dir_okay=False), required=True, help="Questions JSONL.")
@click.option("--skipped", "skipped_out", type=click.Path(dir_okay=False), default=None,
              help="Write the ground truths that got no question here (default: OUT with .skipped.jsonl).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def mc_build_cmd(tree, labels, difficulty, probe_rank, n_options, seed, variant, organism, label_column, out,
                 skipped_out, as_json):
    """Build one question per ground truth in LABELS (a .txt/.csv/.tsv/.jsonl/.parquet file;
    other columns such as image-path are copied into the questions; or 'sample:N' for N
    seeded ground truths drawn from the tree) from TREE (a tree or snapshot folder, or
    NAME[@VERSION]), in VLM4Bio's question format. The same seed writes the same bytes."""
    from taxoforge.evaluation import multiple_choice as mc
    from taxoforge.evaluation.reasoning_tests import fct_variant, nota_variant

    if (difficulty is None) == (probe_rank is None):
        _fail("give exactly one of --difficulty and --probe-rank")
    t = _load_tree(tree)
    try:
        if labels.startswith("sample:"):
            n = int(labels.split(":", 1)[1])
            gts = mc.sample_ground_truths(t, difficulty or "easy", n, seed=seed, options=n_options)
        else:
            gts = mc.read_labels(labels, label_column)
        if probe_rank is not None:
            rank = int(probe_rank) if probe_rank.isdigit() else probe_rank
            qs = mc.build_rank_probes(t, gts, rank, options=n_options, seed=seed, organism=organism)
        else:
            qs = mc.build_questions(t, gts, difficulty, options=n_options, seed=seed, organism=organism)
    except mc.TreeTooShallow as e:
        _fail(str(e), 1)
    except (mc.LabelFileError, ValueError) as e:
        _fail(str(e))
    if variant == "nota":
        qs = nota_variant(qs)
    elif variant == "fct":
        qs = fct_variant(qs, seed=seed)
    qs.write_jsonl(out)
    skipped_path = Path(skipped_out) if skipped_out else Path(out).with_suffix(".skipped.jsonl")
    if qs.skipped.height:
        from taxoforge.evaluation.multiple_choice import _write_text_atomic

        _write_text_atomic(skipped_path, "".join(json.dumps(r, ensure_ascii=False) + "\n"
                                                 for r in qs.skipped.to_dicts()))
    summary = dict(qs.info, out=str(out), skipped_file=str(skipped_path) if qs.skipped.height else None)
    if as_json:
        click.echo(json.dumps(summary, indent=2, default=str))
    else:
        click.echo(f"{qs.questions.height} question(s) written to {out} ({summary['set']}, {variant}, "
                   f"{n_options} options, seed {seed}, {summary['mode']})")
        if qs.skipped.height:
            click.echo(f"{qs.skipped.height} ground truth(s) got no question — reasons in {skipped_path}:")
            for reason, n in summary["skipped_by_reason"].items():
                click.echo(f"  {n:>7}  {reason}")


@mc_group.command("check")
@click.argument("tree")
@click.argument("questions", type=click.Path(exists=True, dir_okay=False))
@click.option("--difficulty", type=click.Choice(["easy", "medium", "hard"]), default=None,
              help="Check the distractor band too (default: the set named in each question).")
def mc_check_cmd(tree, questions, difficulty):
    """Check every question of QUESTIONS against TREE: distinct options, the answer at
    option-gt, same rank, and each distractor's relation to the answer. Exit 1 on any
    problem, listing them."""
    from taxoforge.evaluation.multiple_choice import check_questions

    t = _load_tree(tree)
    rows = _read_jsonl(questions)
    probs = check_questions(t, [r for r in rows if r.get("variant") in (None, "standard", "probe")], difficulty)
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
    or FCT set: NOTA accuracy; FCT accuracy and agreement score (paper 002 Table 5)."""
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
    rows = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as e:
                    _fail(f"{path}:{n}: not valid JSON ({e.msg})")
    return rows


# ============================================================================ evaluate
@click.group("evaluate", context_settings={"help_option_names": ["-h", "--help"]})
def evaluate_group() -> None:
    """Evaluations of papers 000, 002, 003 and 004 on a per-sample scores table
    (scores.parquet of `taxoforge score`), a score matrix, or a tree."""
