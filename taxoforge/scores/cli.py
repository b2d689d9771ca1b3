"""``taxoforge score``: score a model-output file against a taxonomy and print the leaderboard."""

from __future__ import annotations

import sys

import click

__all__ = ["score_cmd"]


def _columns(values: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for v in values:
        if "=" not in v:
            raise click.BadParameter(f"{v!r}: expected CANONICAL=COLUMN, e.g. output=response")
        k, c = v.split("=", 1)
        out[k.strip()] = c.strip()
    return out


@click.command("score")
@click.argument("outputs", type=click.Path(exists=True, dir_okay=False))
@click.argument("taxonomy")
@click.option("-o", "--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Write scores.parquet, leaderboard.md/.parquet, bad_rows.parquet, run.json and PNG plots here.")
@click.option("--column", "columns", multiple=True, metavar="CANONICAL=COLUMN",
              help="Column mapping, repeatable: id, model, prompt, dataset, question, output, label.")
@click.option("--adapter", type=click.Choice(["auto", "vlm4bio", "generic"]), default="auto", show_default=True)
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv", "parquet"]), default=None,
              help="File format (default: from the extension).")
@click.option("--no-header", is_flag=True, help="CSV/TSV without a header line (name its fields with --names).")
@click.option("--names", "column_names", default=None, metavar="NAME,NAME,…",
              help="Names of the CSV/TSV fields in order (fields beyond them are column_<n>).")
@click.option("--derive", "derive", multiple=True, nargs=3, metavar="CANONICAL COLUMN REGEX",
              help="Take a canonical column from another column by a regex (group 'value', else group 1, "
                   "else the match), repeatable: e.g. --derive label image '([^/]+?)_\\d+\\.jpg$'.")
@click.option("--model", default=None, help="Model name for rows that have none.")
@click.option("--dataset", default=None, help="Dataset name for rows that have none.")
@click.option("--prompt", default=None, help="Prompt name for rows that have none.")
@click.option("--similarity", default="ratio", show_default=True,
              help="ratio | wratio | token_sort_ratio | token_set_ratio | partial_ratio | "
                   "sentence-transformers:<local model folder>")
@click.option("-k", "k", type=int, default=10, show_default=True, help="Alg. 1: top-k nodes for the vote.")
@click.option("--thr-topk", type=float, default=0.0015, show_default=True,
              help="Alg. 1: near-tie test, max softmax difference between top-1 and top-k.")
@click.option("--thr-top2", type=float, default=0.001, show_default=True,
              help="Alg. 1: near-tie test, max softmax difference between top-1 and top-2.")
@click.option("--thr-vote", type=int, default=4, show_default=True, help="Alg. 1: votes a node needs.")
@click.option("--vote-rule", type=click.Choice(["at_least", "more_than"]), default="at_least", show_default=True,
              help="at_least: the paper's prose (>= thr-vote); more_than: its pseudocode (> thr-vote).")
@click.option("--temperature", type=float, default=None,
              help="Softmax temperature of the near-tie test (default: calibrated for the similarity measure).")
@click.option("--exact-stage/--no-exact-stage", default=True, show_default=True,
              help="Whole-answer exact match first (SPEC §3); off: the pseudocode's order.")
@click.option("--drop-nested/--keep-nested", default=True, show_default=True,
              help="Drop a contained match lying inside a longer one (\"pig\" in \"guinea pig\").")
@click.option("--contains", type=click.Choice(["whole_word", "substring"]), default="whole_word", show_default=True)
@click.option("--contains-scope", type=click.Choice(["all", "topk_first"]), default="all", show_default=True,
              help="all: the deepest contained match (SPEC §3); topk_first: the pseudocode's scan.")
@click.option("--ngram-sizes", default="4,3,2", show_default=True, help="Word n-gram sizes, in order.")
@click.option("--base-forms/--no-base-forms", default=True, show_default=True,
              help="Compare words in their noun base form (plurals = singulars).")
@click.option("--skip-name-kind", "skip_name_kinds", multiple=True, default=("synset",), show_default=True,
              help="Name kinds that are identifiers, not names (repeatable).")
@click.option("--no-prefilter", is_flag=True, help="Always scan every name for the top-k (same results, slower).")
@click.option("--max-answer-chars", type=int, default=2000, show_default=True,
              help="Longer answers are cut to this many characters (flagged truncated_to_<n>_chars).")
@click.option("--no-meteor", is_flag=True, help="Skip METEOR (needs WordNet).")
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: on for long runs).")
@click.option("--index-dir", type=click.Path(file_okay=False), default=None, envvar="TAXOFORGE_INDEX_DIR",
              help="Where the mapping index is stored when the tree's folder cannot be written "
                   "(default: $TAXOFORGE_CACHE_DIR/mapping-index, i.e. ~/.cache/taxoforge/mapping-index). "
                   "Built once per tree and configuration, then loaded by every run.")
def score_cmd(outputs, taxonomy, out_dir, columns, adapter, fmt, no_header, column_names, derive, model, dataset,
              prompt, similarity, k, thr_topk, thr_top2, thr_vote, vote_rule, temperature, exact_stage, drop_nested,
              contains, contains_scope, ngram_sizes, base_forms, skip_name_kinds, no_prefilter, max_answer_chars,
              no_meteor, progress, index_dir):
    """Score model OUTPUTS (JSONL, CSV or Parquet) against TAXONOMY (a snapshot or tree
    folder, or NAME[@VERSION] in the snapshot store) and print the leaderboard.

    Every parameter of the mapping (paper 000 Alg. 1, SPEC §3) has an option; the run
    records them all (run.json, the leaderboard's footnote). Rows that cannot be scored
    are listed with their line numbers; the exit code is 0 when the file was scored (even
    with bad rows), 2 when it could not be read."""
    from taxoforge.scores.mapping import MappingConfig
    from taxoforge.scores.readers import OutputFileError
    from taxoforge.scores.run import score_file

    defaults = {k2: v for k2, v in (("model", model), ("dataset", dataset), ("prompt", prompt)) if v}
    try:
        sizes = tuple(int(x) for x in ngram_sizes.replace(" ", "").split(",") if x)
    except ValueError:
        raise click.BadParameter(f"{ngram_sizes!r}: expected comma-separated integers, e.g. 4,3,2",
                                 param_hint="--ngram-sizes") from None
    try:
        config = MappingConfig(k=k, thr_topk=thr_topk, thr_top2=thr_top2, thr_vote=thr_vote, vote_rule=vote_rule,
                               temperature=temperature, exact_stage=exact_stage, drop_nested=drop_nested,
                               contains=contains, contains_scope=contains_scope, ngram_sizes=sizes,
                               base_forms=base_forms, similarity=similarity, prefilter=not no_prefilter,
                               skip_name_kinds=skip_name_kinds, max_answer_chars=max_answer_chars)
        run = score_file(outputs, taxonomy, out_dir=out_dir, config=config, columns=_columns(columns),
                         adapter=adapter, fmt=fmt, defaults=defaults, meteor=not no_meteor, progress=progress,
                         header=not no_header,
                         column_names=[c.strip() for c in column_names.split(",")] if column_names else None,
                         derive={c: (col, rx) for c, col, rx in derive} or None, index_dir=index_dir)
    except (OutputFileError, FileNotFoundError, ValueError, ImportError) as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(2)
    click.echo(run.markdown())
    if out_dir:
        click.echo(f"Results written to {out_dir}/")
