"""``taxoforge score`` and ``taxoforge map``: model outputs against a taxonomy (``taxoforge
compare``, scoring runs against each other, is :mod:`taxoforge.scores.statistics.cli`).

``taxoforge score A.jsonl B.jsonl 'results/**/*.jsonl' TAXONOMY`` scores every file named
(globs expanded here too, for shells that leave them alone; a folder means its model-output
files) in one run: one taxonomy resolution, one mapping index, one combined leaderboard,
the rows each file gave. ``taxoforge map FILE… TAXONOMY -o OUT`` maps answers to nodes
without ground truths.

The last positional argument is TAXONOMY, never a file (a file there is an error, not a
taxonomy); with ``--taxonomy A --taxonomy B`` there is no positional TAXONOMY: every
positional argument is an output file, and a taxonomy folder or a name among them is an
error. TAXONOMY is opened by :func:`taxoforge.snapshots.open.open_taxonomy`: a tree or
snapshot folder, ``NAME[@VERSION]`` or ``sha256:HEX`` in the snapshot
store (``--store``: a folder, HTTP(S), S3 or any fsspec URL; a remote snapshot is pulled
into ``--dest`` and verified first). A name the local store lacks is pulled from
``--remote`` (``$TAXOFORGE_SNAPSHOT_REMOTE``) into it, verified, and cited with the remote's
URL; the next call finds it local. A snapshot folder is verified against its manifest
before it is used: an altered one is refused (exit code 4) unless ``--allow-altered``,
which cites it by the content hash of what it holds.

The mapping index of TAXONOMY (its name tables) is built once per tree and mapping
configuration, with a progress bar, and stored; every later call, process or Dagster run
loads it memory-mapped (``run.json``'s ``mapping_index`` says where, and whether it was
built or loaded). It is kept beside a tree folder (``.taxoforge-index/``), beside the
snapshots of a local store (never inside a snapshot), else in
``$TAXOFORGE_CACHE_DIR/mapping-index``; ``--index-dir`` (``$TAXOFORGE_INDEX_DIR``) puts it
elsewhere (:mod:`taxoforge.scores.mapping.store`).

Exit codes (both commands; ``--json`` prints errors as ``{"error", "exit_code"}`` too):

====  =============================================================
0     success: at least ``--min-scored`` of the rows were scored (mapped)
2     bad usage or an unreadable model-output file (the message names file and line,
      or the column a ``--column`` mapping names and the file's columns)
3     taxonomy not found (the message lists what the store has)
4     verification failed: the snapshot does not match its manifest
8     download interrupted (run the same command again to resume)
10    too few rows scored: none, or fewer than ``--min-scored`` of them (the
      results are still written, and the reasons printed)
11    a file cannot be written or read: no space left on the device, a file where a folder
      goes, ``-o`` a symbolic link, the working folder or a place nothing can be created
      (``/proc/self/x``), an input that is a FIFO, a device or a folder, an index folder
      where no lock can be made (the message names the path)
====  =============================================================
"""

from __future__ import annotations

import errno
import sys
import time
from dataclasses import fields, replace
from pathlib import Path

import click

from taxoforge.cli_output import FiniteFloat, command_words, emit_json, handle_errors
from taxoforge.files import LocalFileError, check_can_create_in, check_replaceable
from taxoforge.files.checksums import file_record
from taxoforge.files.labels import read_labels
from taxoforge.markdown import markdown_table
from taxoforge.memory import cycle_collection_paused
from taxoforge.scores.map_outputs import MAP_FORMATS, map_frame
from taxoforge.scores.mapping import MappingConfig
from taxoforge.scores.mapping.store import TablesBuiltAhead
from taxoforge.scores.options import FILE_KINDS, LAYOUTS, MAX_BOOTSTRAP_RESAMPLES, ReadOptions, ScoreOptions
from taxoforge.scores.readers.files import OutputFileError
from taxoforge.scores.readers.sources import read_paths
from taxoforge.scores.reports.cli import draw_in_background
from taxoforge.scores.reports.run_figures import FIGURES_LOG
from taxoforge.scores.run import index_for, score_frame
from taxoforge.scores.statistics.cli import display_names_option
from taxoforge.scores.statistics.confidence import BootstrapConfig
from taxoforge.scores.statistics.sensitivity import coverage_failure, score_across
from taxoforge.scores.timings import Timings
from taxoforge.snapshots.manifest import MANIFEST_NAME
from taxoforge.snapshots.open import open_taxonomy
from taxoforge.versions import invocation

__all__ = ["score_cmd", "map_cmd", "EXIT_TOO_FEW_SCORED"]

#: Exit code of a run that scored no row, or fewer than ``--min-scored`` of them.
EXIT_TOO_FEW_SCORED = 10
#: ``--min-scored`` of one run, and of a sensitivity run (each tree's coverage).
MIN_SCORED, SENSITIVITY_MIN_SCORED = 0.95, 0.90
_EPILOG = ("Exit codes: 0 ok, 2 usage or unreadable file, 3 taxonomy not found, 4 verification failed, "
           "8 download interrupted, 10 too few rows scored (results still written), 11 a file not writable or "
           "not readable (no space left, a file where a folder goes, -o a symlink or the working folder, an input "
           "that is a FIFO or a device).")
FRACTION = FiniteFloat(0.0, 1.0)
#: ``--rank-by`` → the leaderboard's measure.
_RANK_BY = {"hF": "hF", "accuracy": "accuracy", "severity": "mistake_severity"}
def _columns(values: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for v in values:
        if "=" not in v:
            raise click.BadParameter(f"{v!r}: expected CANONICAL=COLUMN, e.g. output=response", param_hint="--column")
        k, c = v.split("=", 1)
        out[k.strip()] = c.strip()
    return out


class IntList(click.ParamType):
    """Comma-separated integers (``4,3,2``) as a tuple, or a usage error naming the value."""

    name = "ints"

    def convert(self, value, param, ctx):
        """The value as a tuple of ints.

        Parameters
        ----------
        value : object
            What the user gave.
        param : click.Parameter
            The option.
        ctx : click.Context
            The click context.

        Returns
        -------
        tuple of int
        """
        if isinstance(value, tuple):
            return value
        try:
            return tuple(int(x) for x in str(value).replace(" ", "").split(",") if x)
        except ValueError:
            self.fail(f"{value!r}: expected comma-separated integers, e.g. 4,3,2", param, ctx)


# ---------------------------------------------------------------------------- shared options
def _option_group(*decorators):
    def apply(f):
        """Attach a group of the commands' shared options to a click command.

        Parameters
        ----------
        f : callable
            The command's function.

        Returns
        -------
        callable
            ``f`` with the options attached, in order.
        """
        for d in reversed(decorators):
            f = d(f)
        return f
    return apply


read_options = _option_group(
    click.option("--column", "columns", multiple=True, metavar="CANONICAL=COLUMN",
                 help="Column mapping, repeatable: id, model, prompt, dataset, question, output, label."),
    click.option("--adapter", type=click.Choice(list(LAYOUTS)), default="auto", show_default=True,
                 help="The rows' layout (the same as --format LAYOUT)."),
    click.option("--format", "fmt", type=click.Choice([*FILE_KINDS, *LAYOUTS[1:]]), default=None,
                 help="The file kind (jsonl, json, csv, tsv, parquet, xlsx) or the layout (generic, vlm4bio, "
                      "lmms-eval, "
                      "vlmevalkit). Default: both told from the file's name and columns."),
    click.option("--all-runs", is_flag=True,
                 help="Score every run of a harness, model and dataset, each as its own model MODEL@RUN (default: "
                      "the latest run, by the harness's run id; the others are listed in run.json)."),
    click.option("--allow-duplicate-ids", is_flag=True,
                 help="Score rows of one model, dataset and prompt that share a sample id (default: an error naming "
                      "the files and lines)."),
    click.option("--no-header", is_flag=True, help="CSV/TSV without a header line (name its fields with --names)."),
    click.option("--names", "column_names", default=None, metavar="NAME,NAME,…",
                 help="Names of the CSV/TSV fields in order (fields beyond them are column_<n>)."),
    click.option("--derive", "derive", multiple=True, nargs=3, metavar="CANONICAL COLUMN REGEX",
                 help="Take a canonical column from another column by a regex (group 'value', else group 1, "
                      "else the match), repeatable: e.g. --derive label image '([^/]+?)_\\d+\\.jpg$'."),
    click.option("--ranked", default=None, metavar="COLUMN,COLUMN,…",
                 help="Columns of a ranked top-k, best first (e.g. top1,top2,…,top6): each is mapped to a node and "
                      "the leaderboard gets the hierarchical distance@k (hdist@k); the first is the answer unless "
                      "--column output=… names another."),
    click.option("--max-records", type=click.IntRange(1, None), default=None, metavar="N",
                 help="Records one file may hold (default 1,000,000; counted as read)."),
    click.option("--max-cells", type=click.IntRange(1, None), default=None, metavar="N",
                 help="Fields one file's records may hold in all (default 2,000,000; counted as read)."),
    click.option("--model", default=None, help="Model name for rows that have none."),
    click.option("--dataset", default=None, help="Dataset name for rows that have none."),
    click.option("--prompt", default=None, help="Prompt name for rows that have none."),
)

mapping_options = _option_group(
    click.option("--similarity", default="ratio", show_default=True,
                 help="ratio | wratio | token_sort_ratio | token_set_ratio | partial_ratio | "
                      "sentence-transformers (all-MiniLM-L6-v2 from the 'embeddings' extra; "
                      "= sentence-transformers:minilm) | sentence-transformers:<local model folder> "
                      "(@fp16 after it: half precision, for a GPU) | minilm-static (a static model "
                      "distilled once on this machine from all-MiniLM-L6-v2: fast on a CPU). "
                      "Embeddings run on CUDA when present; TAXOFORGE_DEVICE=cpu|cuda forces one."),
    click.option("-k", "k", type=int, default=10, show_default=True, help="Alg. 1: top-k nodes for the vote."),
    click.option("--thr-topk", type=FiniteFloat(0.0, None), default=0.0015, show_default=True,
                 help="Alg. 1: near-tie test, max softmax difference between top-1 and top-k."),
    click.option("--thr-top2", type=FiniteFloat(0.0, None), default=0.001, show_default=True,
                 help="Alg. 1: near-tie test, max softmax difference between top-1 and top-2."),
    click.option("--thr-vote", type=int, default=4, show_default=True, help="Alg. 1: votes a node needs."),
    click.option("--vote-rule", type=click.Choice(["at_least", "more_than"]), default="at_least", show_default=True,
                 help="at_least: the paper's prose (>= thr-vote); more_than: its pseudocode (> thr-vote)."),
    click.option("--temperature", type=FiniteFloat(0.0, None), default=None,
                 help="Softmax temperature of the near-tie test (default: calibrated for the similarity measure)."),
    click.option("--exact-stage/--no-exact-stage", default=True, show_default=True,
                 help="Whole-answer exact match first; off: the pseudocode's order."),
    click.option("--drop-nested/--keep-nested", default=True, show_default=True,
                 help="Drop a contained match lying inside a longer one (\"pig\" in \"guinea pig\")."),
    click.option("--contains", type=click.Choice(["whole_word", "substring"]), default="whole_word",
                 show_default=True),
    click.option("--contains-scope", type=click.Choice(["all", "topk_first"]), default="all", show_default=True,
                 help="all: the deepest contained match; topk_first: the pseudocode's scan."),
    click.option("--ngram-sizes", type=IntList(), default="4,3,2", show_default=True, help="Word n-gram sizes, in order."),
    click.option("--base-forms/--no-base-forms", default=True, show_default=True,
                 help="Compare words in their noun base form (plurals = singulars)."),
    click.option("--skip-name-kind", "skip_name_kinds", multiple=True, default=("synset",), show_default=True,
                 help="Name kinds that are identifiers, not names (repeatable)."),
    click.option("--prefilter/--no-prefilter", default=True, show_default=True,
                 help="Bound the top-k's candidates exactly before scanning; off: always scan every name (same "
                      "results, slower)."),
    click.option("--max-answer-chars", type=int, default=2000, show_default=True,
                 help="Longer answers are cut to this many characters (flagged truncated_to_<n>_chars)."),
)

taxonomy_options = _option_group(
    click.option("--store", "store", envvar=["TAXOFORGE_STORE", "TAXOFORGE_SNAPSHOT_STORE"], default=None,
                 show_envvar=True,
                 metavar="URL", help="Snapshot store TAXONOMY is looked up in: a folder, file://, http(s):// or any "
                                     "fsspec URL (s3:// …). Default: $TAXOFORGE_STORE, else "
                                     "~/.local/share/taxoforge/snapshots."),
    click.option("--remote", "remote", envvar="TAXOFORGE_SNAPSHOT_REMOTE", default=None, show_envvar=True,
                 metavar="URL", help="Store to pull TAXONOMY from when --store does not have it (HTTP(S), S3 …); "
                                     "it is pulled into --store (or --dest), verified, and cited with this URL."),
    click.option("--dest", default=None, metavar="DIR",
                 help="Local store a snapshot of a remote --store is pulled into (default: the default store)."),
    click.option("--allow-altered", is_flag=True,
                 help="Use a snapshot folder whose tables no longer match its manifest, cited by the content hash "
                      "of what it holds (default: refuse it, exit code 4)."),
    click.option("--index-dir", "index_dir", envvar="TAXOFORGE_INDEX_DIR", default=None, show_envvar=True,
                 type=click.Path(file_okay=False), metavar="DIR",
                 help="Where the mapping index of TAXONOMY is stored: built once per tree and mapping configuration "
                      "(with a progress bar), then loaded by every later call. Default: beside a tree folder, in the "
                      "snapshot store of a snapshot, else $TAXOFORGE_CACHE_DIR/mapping-index "
                      "(~/.cache/taxoforge/mapping-index)."),
    click.option("--progress/--no-progress", default=None, help="Progress bars (default: on for long runs)."),
    click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout (errors too)."),
)


def _options(o: dict, require: tuple[str, ...]):
    """The command line's options as the objects the library takes — how the files are read
    (:class:`~taxoforge.scores.options.ReadOptions`), how they are scored and the taxonomy opened
    (:class:`~taxoforge.scores.options.ScoreOptions`, with the mapping's
    :class:`~taxoforge.scores.mapping.MappingConfig`: one option per field, named as the field)
    — and whether to print JSON."""
    config = MappingConfig(**{f.name: o[f.name] for f in fields(MappingConfig)})
    score = ScoreOptions(config=config, store=o["store"], remote=o["remote"], cache=o["dest"], index_dir=o["index_dir"],
                         altered="content" if o["allow_altered"] else "refuse", progress=o["progress"])
    return _read_options(o, require), score, o["as_json"]


def _read_options(o: dict, require: tuple[str, ...]):
    """The :class:`~taxoforge.scores.options.ReadOptions` the command line asks for."""
    defaults = {k: o[k] for k in ("model", "dataset", "prompt") if o.get(k)}
    names = o.get("column_names")
    fmt, layout = o["fmt"], o["adapter"]
    if fmt in LAYOUTS:
        fmt, layout = None, fmt
    return ReadOptions(columns=_columns(o["columns"]), layout=layout, fmt=fmt, defaults=defaults,
                       header=not o["no_header"], column_names=[c.strip() for c in names.split(",")] if names else None,
                       derive={c: (col, rx) for c, col, rx in o["derive"]} or None, require=require,
                       allow_duplicate_ids=o["allow_duplicate_ids"], all_runs=o["all_runs"],
                       ranked=[c.strip() for c in o["ranked"].split(",") if c.strip()] if o.get("ranked") else (),
                       **{k: o[k] for k in ("max_records", "max_cells") if o.get(k)})


def _say(message: str) -> None:
    """Progress for a person, on stderr (never mixed into --json output)."""
    click.echo(message, err=True)


def _usage_errors():
    # a missing input is an OutputFileError (2); an OSError (a file that cannot be written or
    # read, a FIFO given as a file) ends with 11 and its path
    return (OutputFileError, ValueError, ImportError)


#: errors end with ``error: …`` on stderr (or a JSON document) and their exit code, never a traceback
_handled = handle_errors(usage_errors=_usage_errors)


@cycle_collection_paused()  # the rows, the tree and the index: many containers, no cycles that matter
def _prepare(args: tuple[str, ...], read, score, timings=None):
    """The positional arguments split (the last one is TAXONOMY, never a file), the files read
    (``read``), the taxonomy opened (resolved, verified, cited, memory-mapped) and one mapping
    index built (``score``): (rows, tree, index, sources); each step timed into ``timings``
    (:class:`~taxoforge.scores.timings.Timings`)."""
    command = "score" if "label" in read.require else "map"
    if len(args) < 2:
        raise click.UsageError(f"give OUTPUTS... TAXONOMY: the model-output files, then the taxonomy "
                               f"(`taxoforge {command} results/*.jsonl inaturalist`)")
    outputs, taxonomy = args[:-1], args[-1]
    if Path(taxonomy).is_file():
        raise click.UsageError(f"{taxonomy}: the last argument is TAXONOMY (a tree or snapshot folder, NAME[@VERSION] "
                               "or sha256:HEX), and this is a file; give the taxonomy after the output files")
    tm = timings if timings is not None else Timings()
    with tm.phase("read"):
        try:
            rows, sources = read_paths(outputs, read)
        except OutputFileError as e:  # the suggested command names the taxonomy given
            if "TAXONOMY" in str(e):
                raise OutputFileError(str(e).replace("taxoforge score", f"taxoforge {command}")
                                      .replace(" TAXONOMY", f" {taxonomy}"), e.suggestion) from None
            raise
    for line in sources.notes():
        _say(line)
    n, judged = len(sources.sources), sum(s.judge is not None for s in sources.sources)
    _say(f"read {rows.height:,} rows from {n} file{'s' if n != 1 else ''}"
         + (f" and the verdicts of {judged} judge table{'s' if judged != 1 else ''}" if judged else ""))
    # on a tree's first use its mapping index is built from the moment its tables are read, while
    # they are hashed and the tree is made and stored
    ahead = TablesBuiltAhead(score.config or MappingConfig(), score.index_dir)
    with tm.phase("taxonomy"):
        try:
            tree = open_taxonomy(taxonomy, score.store, remote=score.remote, cache=score.cache,
                                 altered=score.altered, index_dir=score.index_dir,
                                 progress=score.progress is not False, when_read=ahead)
        except BaseException:
            ahead.cancel()  # the error is said now, not once an index nobody needs is built
            raise
    _say(f"taxonomy {tree.citation}" + (" — verified against its manifest"
                                         if tree.citation.verified in ("store", "content") else ""))
    t = time.perf_counter()
    _say(f"mapping index of {len(tree):,} nodes …")
    with tm.phase("index"):
        index = index_for(tree, score.config, index_dir=score.index_dir, progress=score.progress, ahead=ahead)
    how = "built and stored in" if index.store.built else "loaded from"
    _say(f"mapping index {how} {index.store.path} ({time.perf_counter() - t:.1f} s)")
    return rows, tree, index, sources


def _outputs_only(args: tuple[str, ...]) -> tuple[str, ...]:
    """The positional arguments of a run with ``--taxonomy``: every one is an output file, folder
    or pattern; one that is a tree or snapshot folder, or names nothing on disk, is refused
    (a taxonomy there would otherwise be read as an answer file)."""
    import glob

    if not args:
        raise click.UsageError("give the output files to score: OUTPUTS... --taxonomy A --taxonomy B")
    for a in args:
        p = Path(a)
        if p.is_dir() and ((p / MANIFEST_NAME).is_file() or (p / "nodes.parquet").is_file()):
            raise click.UsageError(f"{a}: a taxonomy folder among the output files; with --taxonomy every positional "
                                   f"argument is an output file: name each tree with --taxonomy")
        if not p.exists() and not glob.has_magic(a):
            raise click.UsageError(f"{a}: no such output file or folder; with --taxonomy every positional argument "
                                   f"is an output file (a taxonomy? name it with --taxonomy {a})")
    return args


def _quality_gate(done: int, rows: int, min_fraction: float, verb: str, reasons: dict) -> str | None:
    """Why the run fails the ``--min-scored`` gate, or None."""
    why = "; ".join(f"{r} {n}" for r, n in sorted(reasons.items(), key=lambda kv: -kv[1])) or "no rows in the files"
    if done == 0:
        return f"no row was {verb} ({rows:,} rows read: {why})"
    if done / rows < min_fraction:
        return (f"only {done:,} of {rows:,} rows {verb} ({100 * done / rows:.1f} %, below --min-scored "
                f"{100 * min_fraction:g} %): {why}")
    return None


# ---------------------------------------------------------------------------- score
@click.command("score", epilog=_EPILOG)
@click.argument("args", nargs=-1, metavar="OUTPUTS... [TAXONOMY]")
@click.option("--taxonomy", "taxonomies", multiple=True, metavar="TAXONOMY",
              help="Score against several trees (repeat it; then every positional argument is an output file, "
                   "and a taxonomy among them is an error): each tree's "
                   "results in -o/<tree>/, and the taxonomy sensitivity table (hP/hR/hF and ranks under each tree, "
                   "Kendall's tau between the rankings, models that swap places) beside them.")
@click.option("--crosswalk", "crosswalk", type=click.Path(exists=True, dir_okay=False), default=None, metavar="FILE",
              help="With --taxonomy: a crosswalk table (Parquet) that carries the first tree's ground truths to a "
                   "tree that does not hold them.")
@click.option("-o", "--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Write scores, leaderboard (.md/.csv/.tex/.parquet), breakdowns/, bad rows, run.json and the "
                   "figures (PNG 300 dpi, PDF, SVG) here.")
@read_options
@mapping_options
@taxonomy_options
@click.option("--min-scored", type=FRACTION, default=None, metavar="FRACTION",
              envvar="TAXOFORGE_MIN_SCORED", show_envvar=True,
              help="Fail (exit code 10) when fewer than this share of the rows is scored (default 0.95); no row "
                   "scored always fails. With --taxonomy: when a tree scores fewer (default 0.90), naming the "
                   "coverage of each.")
@click.option("--force", is_flag=True,
              help="With --taxonomy: compare the rankings even when a tree's coverage is below --min-scored.")
@click.option("--bootstrap", "n_resamples", type=click.IntRange(0, MAX_BOOTSTRAP_RESAMPLES), default=9999,
              show_default=True,
              help=f"Bootstrap resamples of the 95 % intervals of accuracy, hP, hR, hF (0: none; at most "
                   f"{MAX_BOOTSTRAP_RESAMPLES:,}).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
@click.option("--plots", "plots", type=click.Choice(["background", "wait", "none"]), default=None,
              help="The figures (with -o): background — drawn by a process of their own once the tables are "
                   "written, so the command returns at once (run.json's figures says drawing, then drawn or failed; "
                   "the default); wait — drawn before the command returns; none — none (draw them later with "
                   "`taxoforge plot OUT`).")
@click.option("--no-plots", is_flag=True, help="Write no figures (= --plots none).")
@click.option("--no-meteor", is_flag=True, help="Skip METEOR (needs WordNet).")
@click.option("--label-set", "label_set", type=click.Path(exists=True, dir_okay=False), default=None, metavar="FILE",
              help="The dataset's labels (.txt one per line, or a CSV/TSV/JSONL/Parquet label column): their nodes "
                   "win when an answer names several nodes equally well, and they span the tree mistake severity's "
                   "heights are measured on. Default: the ground truths of each model × dataset's own rows.")
@click.option("--heights", type=click.Choice(["labels", "tree"]), default="labels", show_default=True,
              help="Where mistake severity and hdist@k measure heights: labels, the tree the label set spans "
                   "(Bertinetto et al.'s class hierarchy); tree, the whole taxonomy.")
@click.option("--rank-by", "rank_by", type=click.Choice(["hF", "accuracy", "severity"]), default="hF",
              show_default=True, help="The measure that ranks models within a dataset × prompt (severity: lowest "
                                      "first); the leaderboard's caption says which.")
@display_names_option
@_handled
def score_cmd(args, taxonomies, crosswalk, out_dir, min_scored, force, n_resamples, seed, plots, no_plots, no_meteor,
              label_set, heights, rank_by, display_names, **o):
    """Score model OUTPUTS (JSONL, JSON, CSV/TSV, Parquet or xlsx files — lmms-eval samples,
    VLMEvalKit predictions and judge files, VLM4Bio results read as written —, folders of
    them, or glob patterns such as 'results/**/*.jsonl') against TAXONOMY (a tree or snapshot folder, or
    NAME[@VERSION] in the snapshot store) in one run, and print the leaderboard: one row per
    model × dataset × prompt, with bootstrap 95 % intervals and the taxonomy it cites.

    The last positional argument is TAXONOMY; with --taxonomy (two or more), there is none:
    every positional argument is an output file, and a taxonomy among them is an error.

    Every parameter of the mapping (Alg. 1) has an option; the run records them all
    (run.json, the leaderboard's footnote). Rows that cannot be scored are listed with
    their file, line and reason."""
    timings = Timings(from_process_start=True)  # the interpreter's start and the imports are a phase too
    read, score, as_json = _options(o, ("output", "label"))
    if no_plots and plots not in (None, "none"):
        raise click.UsageError(f"--no-plots and --plots {plots}: give one of them")
    plots = "none" if no_plots else plots or "background"
    score = replace(score, meteor=not no_meteor, plots=plots != "none",
                    ci=BootstrapConfig(n_resamples=n_resamples, seed=seed), heights=heights,
                    rank_by=_RANK_BY[rank_by], display_names=display_names)
    if out_dir:
        check_replaceable(out_dir)  # a symlink, a file or the working folder: refused before the work (exit 11)
    if label_set is not None:
        with timings.phase("read"):
            score = replace(score, label_set=read_labels(label_set)["label"].to_list())
    if taxonomies:
        sys.exit(_score_across_trees(_outputs_only(args), taxonomies, crosswalk, out_dir,
                                     SENSITIVITY_MIN_SCORED if min_scored is None else min_scored, force, read,
                                     score, as_json))
    if force:
        raise click.UsageError("--force goes with --taxonomy A --taxonomy B (the coverage of several trees)")
    min_scored = MIN_SCORED if min_scored is None else min_scored
    if crosswalk:
        raise click.UsageError("--crosswalk needs two trees or more: --taxonomy A --taxonomy B")
    rows, tree, index, sources = _prepare(args, read, score, timings)
    run = score_frame(rows, tree, replace(score, index=index), timings=timings)
    run.info.update(invocation(command_words()), **sources.record())
    if label_set is not None:
        run.info["inputs"].append(file_record(label_set, "label_set"))
    if out_dir:
        mode = {"background": "later", "wait": "now"}.get(plots, "none")
        run.info["outputs"] = {k: str(v) for k, v in run.write(out_dir, plots=mode, timings=timings).items()}
        if run.info["figures"]["status"] == "drawing":  # the tables are written: the figures come in their own process
            draw_in_background(out_dir, run.info["run_id"])
    failure = _quality_gate(run.info["scored"], run.info["rows"], min_scored, "scored", run.info["bad_rows_by_reason"])
    code = EXIT_TOO_FEW_SCORED if failure else 0
    guesses = run.info.get("genus_transfer_guesses", {})
    if guesses.get("rows"):
        _say(f"{guesses['rows']:,} scored row(s) rest on a genus transfer no synonym supports (a guess: "
             f"{', '.join(guesses['labels'][:5])}{' …' if len(guesses['labels']) > 5 else ''}); see "
             "run.json's genus_transfer_guesses")
    if as_json:
        bad = run.bad_rows.head(1000).to_dicts()
        emit_json({"leaderboard": run.leaderboard.to_dicts(), "info": run.info, "bad_rows": bad,
                    "bad_rows_truncated": run.bad_rows.height > len(bad), "exit_code": code,
                    **({"error": failure} if failure else {})})
    else:
        click.echo(run.markdown())
        if out_dir:
            click.echo(f"Results written to {out_dir}/")
            if run.info["figures"]["status"] == "drawing":
                click.echo(f"Figures being drawn in the background into {out_dir}/ (run.json's figures says when they "
                           f"are drawn; errors in {FIGURES_LOG})")
        if failure:
            click.echo(f"error: {failure}" + (f"; the leaderboard and bad rows are in {out_dir}/" if out_dir else ""),
                       err=True)
    sys.exit(code)


def _score_across_trees(files, taxonomies, crosswalk, out_dir, min_scored, force, read, score, as_json: bool) -> int:
    """``taxoforge score FILES --taxonomy A --taxonomy B …``: the taxonomy sensitivity run
    (:func:`taxoforge.scores.statistics.sensitivity.score_across`) with the read and score
    options of the command line; the exit code: 10 when a tree's coverage, or the common
    items' share, is below ``min_scored`` and not ``force``d
    (:func:`~taxoforge.scores.statistics.sensitivity.coverage_failure`)."""
    if len(taxonomies) < 2:
        raise click.UsageError("--taxonomy: give two trees or more (or OUTPUTS... TAXONOMY for one)")
    res = score_across(list(files), list(taxonomies), crosswalk=crosswalk, out_dir=out_dir, read=read, score=score,
                       record=invocation(command_words()))
    failure = coverage_failure(res, min_scored)
    code = EXIT_TOO_FEW_SCORED if failure and not force else 0
    if as_json:
        emit_json({"sensitivity": res.table.to_dicts(), "agreement": res.agreement.to_dicts(),
                   "swaps": res.swaps.to_dicts(), "crosswalked": res.crosswalked.to_dicts(),
                   "coverage": res.coverage.to_dicts(), "info": res.info, "exit_code": code,
                   **({"error": failure} if code else {"warning": failure} if failure else {})})
    else:
        click.echo(res.markdown())
        if out_dir:
            click.echo(f"Results written to {out_dir}/ (one folder per tree, sensitivity.md beside them)")
        if failure:
            click.echo(("error: " if code else "warning (--force): ") + failure, err=True)
    return code


# ---------------------------------------------------------------------------- map
@click.command("map", epilog=_EPILOG)
@click.argument("args", nargs=-1, required=True, metavar="OUTPUTS... TAXONOMY")
@click.option("-o", "--out", "out", type=click.Path(dir_okay=False), default=None,
              help="Write the mapped answers here: .parquet, .csv, .tsv or .jsonl (default: print the first rows).")
@read_options
@mapping_options
@taxonomy_options
@click.option("--min-scored", "min_mapped", type=FRACTION, default=0.95, show_default=True,
              envvar="TAXOFORGE_MIN_SCORED", show_envvar=True,
              metavar="FRACTION", help="Fail (exit code 10) when fewer than this share of the rows is mapped.")
@_handled
def map_cmd(args, out, min_mapped, **o):
    """Map the answers in OUTPUTS to nodes of TAXONOMY without scoring them: no ground
    truth needed (unlabelled answers, e.g. OVEN-style open-world predictions:
    --column id=data_id --column output=prediction). One row per answer: the node id, its
    label and depth, the mapping stage that decided, the similarity, ties, whether the
    answer abstained."""
    read, score, as_json = _options(o, ("output",))
    if out is not None and not any(out.lower().endswith(s) for s in MAP_FORMATS):
        raise click.BadParameter(f"{out}: use one of {', '.join(MAP_FORMATS)}", param_hint="-o/--out")
    if out is not None:
        if Path(out).is_symlink():
            raise LocalFileError(errno.ELOOP, "is a symbolic link: nothing is written through a link", out)
        check_can_create_in(Path(out).parent, out)  # before any work (exit 11)
    rows, tree, index, sources = _prepare(args, read, score)
    res = map_frame(rows, tree, replace(score, index=index))
    if out is not None:
        res.info["output"] = str(res.write(out))
    info = res.info
    failure = _quality_gate(info["mapped"], info["rows"], min_mapped, "mapped", info["bad_rows_by_reason"])
    code = EXIT_TOO_FEW_SCORED if failure else 0
    if as_json:
        emit_json({"info": info, "rows": res.table.head(20).to_dicts() if out is None else [],
                    "bad_rows": res.bad_rows.head(1000).to_dicts(), "exit_code": code,
                    **({"error": failure} if failure else {})})
    else:
        stages = ", ".join(f"{s} {n}" for s, n in sorted(info["stage_counts"].items(), key=lambda kv: -kv[1]))
        click.echo(f"{info['mapped']:,} of {info['rows']:,} answers mapped to {tree.ref} "
                   f"({info['abstentions']:,} abstentions); by stage: {stages or '–'}.")
        if res.bad_rows.height:
            click.echo(f"{res.bad_rows.height:,} rows not mapped: "
                       + ", ".join(f"{r} {n}" for r, n in sorted(info["bad_rows_by_reason"].items())))
        if out is not None:
            click.echo(f"Written to {out}")
        else:
            show = res.table.select("line", "id", "answer", "node_id", "node_label", "stage", "similarity",
                                    "abstained")
            click.echo(markdown_table(show, max_rows=20))
        if failure:
            click.echo(f"error: {failure}", err=True)
    sys.exit(code)
