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
@click.option("-k", "k", type=int, default=10, show_default=True, help="Top-k of Alg. 1.")
@click.option("--temperature", type=float, default=100.0, show_default=True, help="Softmax temperature.")
@click.option("--thr-vote", type=int, default=4, show_default=True)
@click.option("--vote-rule", type=click.Choice(["at_least", "more_than"]), default="at_least", show_default=True)
@click.option("--contains", type=click.Choice(["whole_word", "substring"]), default="whole_word", show_default=True)
@click.option("--no-prefilter", is_flag=True, help="Score every name for the top-k (exact, slower).")
@click.option("--no-meteor", is_flag=True, help="Skip METEOR (needs WordNet).")
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: on for long runs).")
def score_cmd(outputs, taxonomy, out_dir, columns, adapter, fmt, no_header, column_names, derive, model, dataset,
              prompt, similarity, k, temperature, thr_vote, vote_rule, contains, no_prefilter, no_meteor, progress):
    """Score model OUTPUTS (JSONL, CSV or Parquet) against TAXONOMY (a snapshot or tree
    folder, or NAME[@VERSION] in the snapshot store) and print the leaderboard.

    Rows that cannot be scored are listed with their line numbers; the exit code is 0 when
    the file was scored (even with bad rows), 2 when it could not be read."""
    from taxoforge.scores.mapping import MappingConfig
    from taxoforge.scores.readers import OutputFileError
    from taxoforge.scores.run import score_file

    defaults = {k2: v for k2, v in (("model", model), ("dataset", dataset), ("prompt", prompt)) if v}
    try:
        config = MappingConfig(k=k, temperature=temperature, thr_vote=thr_vote, vote_rule=vote_rule,
                               contains=contains, similarity=similarity, prefilter=not no_prefilter)
        run = score_file(outputs, taxonomy, out_dir=out_dir, config=config, columns=_columns(columns),
                         adapter=adapter, fmt=fmt, defaults=defaults, meteor=not no_meteor, progress=progress,
                         header=not no_header,
                         column_names=[c.strip() for c in column_names.split(",")] if column_names else None,
                         derive={c: (col, rx) for c, col, rx in derive} or None)
    except (OutputFileError, FileNotFoundError, ValueError, ImportError) as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(2)
    click.echo(run.markdown())
    if out_dir:
        click.echo(f"Results written to {out_dir}/")
