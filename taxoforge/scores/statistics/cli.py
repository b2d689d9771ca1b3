"""``taxoforge compare``: is A better than B? Scoring runs compared on the items they share
(:mod:`taxoforge.scores.statistics.compare`), written as tables and a figure
(:mod:`taxoforge.scores.reports.tables`).

Exit codes: 0 ok; 2 a run that cannot be read or compared; 11 a file that cannot be read or
written (a FIFO or a device as a run, ``-o`` a symbolic link, no space left).
"""

from __future__ import annotations

import click

from taxoforge.cli_output import emit_json, handle_errors
from taxoforge.files import check_output_folder
from taxoforge.scores.reports.names import DisplayNamesError, read_display_names
from taxoforge.scores.reports.tables import comparison_markdown, write_comparison
from taxoforge.scores.statistics.compare import ComparisonError, compare_runs

__all__ = ["compare_cmd", "display_names_option"]


def _read_display_names(path, param):
    try:
        return read_display_names(path) if path else None
    except DisplayNamesError as e:
        raise click.BadParameter(str(e), param=param) from None


#: ``--display-names FILE`` of ``compare`` and ``score``: the names the LaTeX tables and figures show
display_names_option = click.option(
    "--display-names", "display_names", type=click.Path(exists=True, dir_okay=False), metavar="FILE",
    callback=lambda _ctx, param, v: _read_display_names(v, param),
    help="Two columns (CSV or TSV): a model's name and the name the LaTeX tables and figures show. Others lose "
         "their harness prefix (lmms-eval's 'org__': the text after the last '__' or '/').")


def _compare_errors() -> tuple[type, ...]:
    """The errors ``compare`` ends with exit code 2: runs that cannot be read or compared (an
    output folder that cannot be written, a FIFO or a device given as a run, end with 11)."""
    return (ComparisonError,)


@click.command("compare", epilog="Exit codes: 0 ok, 2 a run that cannot be read or compared, 11 a file that cannot be "
                                 "read or written (a FIFO or a device as a run, -o a symbolic link, no space left).")
@click.argument("runs", nargs=-1, required=True, metavar="RUN_A RUN_B [RUN_C ...]")
@click.option("-o", "--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Write comparison.md/.csv/.tex/.parquet and the figure (PNG 300 dpi, PDF, SVG) here.")
@click.option("--bootstrap", "n_resamples", type=click.IntRange(0, 100_000), default=9999, show_default=True,
              help="Paired-bootstrap resamples of each interval, and the most permutations of each test (0: none).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the resamples and permutations.")
@click.option("--level", type=click.FloatRange(0.5, 1, max_open=True), default=0.95, show_default=True,
              help="Confidence level of the intervals.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True,
              help="Significance level of the Holm-adjusted p-values.")
@click.option("--reference", default=None, metavar="MODEL",
              help="Compare every other model with this one (A = the model, B = MODEL; Holm over those pairs) "
                   "instead of every pair: a model name, or a system's label when several runs share it.")
@click.option("--no-plots", is_flag=True, help="Write no figure.")
@display_names_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@handle_errors(usage_errors=lambda: _compare_errors())
def compare_cmd(runs, out_dir, n_resamples, seed, level, alpha, reference, no_plots, display_names, as_json):
    """Is A better than B? Compare the models of scoring RUNS (output folders of
    `taxoforge score`, or their scores.parquet) on the items they share, matched by sample
    id within each dataset × prompt: accuracy by the exact McNemar test, hF and mistake
    severity by paired bootstrap intervals of the difference and a paired permutation test,
    p-values Holm-adjusted over all comparisons. A run of several models gives several."""
    if out_dir:
        check_output_folder(out_dir)  # before any work: nothing is written through a symbolic link
    cmp = compare_runs(runs, n_resamples=n_resamples, level=level, seed=seed, alpha=alpha, reference=reference)
    written = write_comparison(cmp, out_dir, plots=not no_plots, names=display_names) if out_dir else {}
    if as_json:
        emit_json({"comparison": cmp.table.to_dicts(), "systems": cmp.systems, "settings": cmp.settings,
                   "notes": cmp.notes, "outputs": {k: str(v) for k, v in written.items()}})
    else:
        click.echo(comparison_markdown(cmp))
        if out_dir:
            click.echo(f"Comparison written to {out_dir}/")
