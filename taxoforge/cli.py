"""The ``taxoforge`` command line. Each domain contributes a click command or group:

* ``taxoforge.snapshots.cli`` — ``list``, ``pull``, ``verify``, ``show``, ``diff``, ``publish``, ``cite``, ``browse``
* ``taxoforge.scores.cli`` — ``score`` (many files, one run), ``map`` (answers → nodes, no ground truth);
  ``taxoforge.scores.reports.cli`` — ``plot`` (a written run's figures, drawn from its folder);
  ``taxoforge.scores.statistics.cli`` — ``compare`` (scoring runs on their shared items)
* ``taxoforge.links.cli`` — ``subset`` (the taxonomy of a label set, cut from a tree)
* ``taxoforge.evaluation.cli`` — ``mc`` (multiple-choice sets), ``evaluate`` (every other evaluation)

Commands are looked up lazily so one broken domain does not take the others down, and
``taxoforge --help`` imports none of them: it lists each command with its summary from
:data:`SUMMARIES` (a test keeps them equal to the commands' own help).

Whatever command raises a snapshot or download error (a snapshot that fails verification
while ``score`` loads it, an interrupted pull …) ends with ``error: …`` on stderr and that
error's documented exit code (see :mod:`taxoforge.snapshots.cli`: 3 not found, 4
verification failed, 8 download interrupted …), and a file that cannot be written or read
(no space left, a file where a folder goes …) with exit code 11 and its path
(:func:`taxoforge.cli_output.error_exit`) — never with a traceback.
"""

from __future__ import annotations

import importlib
import logging
import sys

import click

from taxoforge.cli_output import ARGV_KEY, error_exit

# command name -> "module:attribute"
COMMANDS = {
    "list": "taxoforge.snapshots.cli:list_cmd",
    "pull": "taxoforge.snapshots.cli:pull_cmd",
    "verify": "taxoforge.snapshots.cli:verify_cmd",
    "show": "taxoforge.snapshots.cli:show_cmd",
    "diff": "taxoforge.snapshots.cli:diff_cmd",
    "publish": "taxoforge.snapshots.cli:publish_cmd",
    "cite": "taxoforge.snapshots.cli:cite_cmd",
    "browse": "taxoforge.snapshots.cli:browse_cmd",
    "score": "taxoforge.scores.cli:score_cmd",
    "map": "taxoforge.scores.cli:map_cmd",
    "plot": "taxoforge.scores.reports.cli:plot_cmd",
    "compare": "taxoforge.scores.statistics.cli:compare_cmd",
    "subset": "taxoforge.links.cli:subset_cmd",
    "mc": "taxoforge.evaluation.cli:mc_group",
    "evaluate": "taxoforge.evaluation.cli:evaluate_group",
}


#: command name -> the first sentence of its help (what ``taxoforge --help`` lists)
SUMMARIES = {
    "list": "List the taxonomies and versions in a store (all, or only NAME's), oldest first; the latest "
            "version of each (what a bare NAME means) is marked with *.",
    "pull": "Download NAME[@VERSION] (latest by default) into the local store, verifying the SHA-256 of every "
            "file; an interrupted download resumes where it stopped, a corrupted file is deleted and the "
            "snapshot refused.",
    "verify": "Check a snapshot where it lies (a folder, or NAME[@VERSION] in any store: local, HTTP, S3 …) "
              "against its manifest, and the manifest against the store's index: every file's size and SHA-256 "
              "and, unless --fast, the content hash recomputed from the tables.",
    "show": "Print a snapshot's manifest and a summary: nodes, leaves, depth histogram, names, links by dataset "
            "and status, report rows by kind.",
    "diff": "Show what changed from snapshot A to snapshot B: nodes added, removed, renamed, moved to a new "
            "parent; names and links added, removed or changed.",
    "publish": "Publish FOLDER into the store.",
    "browse": "Write the browser of snapshot NAME[@VERSION] of the store (without REF: of every version that has "
              "none, or whose one compares with another version than the one before it): a static page, "
              "NAME/VERSION/browse/index.html, to search any name or id and see its path to the root, children with "
              "subtree sizes, depth, links out and what changed since the version before.",
    "cite": "Print how a paper cites snapshot NAME[@VERSION] of the store: BibTeX and CFF with the store's public "
            "URL, the snapshot's content hash, and every upstream source it was built from (Wikidata, Catalogue of "
            "Life, iNaturalist, iNat21, WordNet, ImageNet) with that source's own citation and licence.",
    "score": "Score model OUTPUTS (JSONL, JSON, CSV/TSV, Parquet or xlsx files — lmms-eval samples, VLMEvalKit "
             "predictions and judge files, VLM4Bio results read as written —, folders of them, or glob patterns "
             "such as 'results/**/*.jsonl') against TAXONOMY (a tree or snapshot folder, or NAME[@VERSION] in the "
             "snapshot store) in one run, and print the leaderboard: one row per model × dataset × prompt, with "
             "bootstrap 95 % intervals and the taxonomy it cites.",
    "map": "Map the answers in OUTPUTS to nodes of TAXONOMY without scoring them: no ground truth needed "
           "(unlabelled answers, e.g. OVEN-style open-world predictions: --column id=data_id --column "
           "output=prediction).",
    "plot": "Draw the figures of the scoring run written in RUN_FOLDER (by `taxoforge score -o`), in the "
            "foreground, from its leaderboard, breakdowns and run.json: for a run made with --plots none "
            "(--no-plots), after a drawing failed, or to draw them again.",
    "compare": "Is A better than B? Compare the models of scoring RUNS (output folders of `taxoforge score`, or "
               "their scores.parquet) on the items they share, matched by sample id within each dataset × prompt: "
               "accuracy by the exact McNemar test, hF and mistake severity by paired bootstrap intervals of the "
               "difference and a paired permutation test, p-values Holm-adjusted over all comparisons.",
    "subset": "Cut the taxonomy of the label set LABELS (.txt one per line, .csv/.tsv/.jsonl/.parquet with a label "
              "column) from TREE (a tree or snapshot folder, or NAME[@VERSION] in the store): the smallest subtree "
              "holding every label's node, written to OUT.",
    "mc": "Multiple-choice question sets from a taxonomy (VLM4Bio's easy / medium / hard, NOTA, FCT, rank probes) "
          "and the scores of the NOTA and FCT tests.",
    "evaluate": "Evaluations of the taxonomy-aware, VLM4Bio, open-world and granularity papers on a per-sample "
                "scores table (scores.parquet of `taxoforge score`), a score matrix, or a tree.",
}


class LazyGroup(click.Group):
    """The ``taxoforge`` group: commands are imported only when one is run (:data:`COMMANDS`), so ``--help`` stays fast and one broken domain does not take the others down."""

    def __call__(self, args=None, *rest, **kwargs):
        """Run as the program — the ``taxoforge`` script, ``python -m taxoforge.cli``: the
        arguments read from the command line, click's standalone mode, the main thread, no
        profiler or tracer — and end the process when the command ends (:func:`exit_now`).
        Called with arguments, outside standalone mode or off the main thread (Python code
        calling the group, a notebook), under a profiler, tracer or debugger (``python -m
        cProfile``, coverage, pdb: they report after the program returns), and through
        :meth:`main` (what :class:`click.testing.CliRunner` calls), it behaves as click's
        group does.

        Parameters
        ----------
        args : list of str, optional
            The arguments; ``None`` reads them from the command line.
        *rest, **kwargs
            The rest of :meth:`click.Group.main`'s parameters.
        """
        import threading

        if (args is not None or rest or not kwargs.get("standalone_mode", True)
                or threading.current_thread() is not threading.main_thread()
                or sys.getprofile() is not None or sys.gettrace() is not None):
            return self.main(args, *rest, **kwargs)
        try:
            self.main(args, **kwargs)
        except SystemExit as e:
            exit_now(e.code)
        exit_now(0)  # pragma: no cover - standalone mode always ends with SystemExit

    def make_context(self, info_name, args, parent=None, **extra) -> click.Context:
        """Click's context, keeping the command line's words for the records that cite it
        (:func:`taxoforge.cli_output.command_words`).

        Parameters
        ----------
        info_name : str
            The program's name.
        args : list of str
            The arguments.
        parent : click.Context, optional
            The enclosing context.
        **extra
            The rest of :meth:`click.Command.make_context`'s parameters.

        Returns
        -------
        click.Context
        """
        words = ["taxoforge", *args]
        ctx = super().make_context(info_name, args, parent=parent, **extra)
        ctx.meta[ARGV_KEY] = words
        return ctx

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of ``--help`` from :data:`SUMMARIES`, shortened as click shortens
        a command's help, without importing the commands.

        Parameters
        ----------
        ctx : click.Context
            The click context.
        formatter : click.HelpFormatter
            Where click writes the help.
        """
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(n) for n in names)
        with formatter.section("Commands"):
            formatter.write_dl([(n, click.Command(n, help=SUMMARIES.get(n, "")).get_short_help_str(limit)) for n in names])

    def list_commands(self, ctx: click.Context) -> list[str]:
        """The commands' names, sorted.

        Parameters
        ----------
        ctx : click.Context
            The click context.

        Returns
        -------
        list of str
            The names of :data:`COMMANDS`.
        """
        return sorted(COMMANDS)

    def invoke(self, ctx: click.Context):
        """Run the command; a snapshot, download or file-system error ends it with its documented exit code and ``error: …``, never a traceback.

        Parameters
        ----------
        ctx : click.Context
            The click context.

        Returns
        -------
        object
            What the command returned.
        """
        try:
            return super().invoke(ctx)
        except Exception as e:
            err = error_exit(e)
            if err is None:
                raise
            click.echo(f"error: {err}", err=True)
            ctx.exit(err.code)

    def get_command(self, ctx: click.Context, name: str):
        """The command ``name``, imported now.

        Parameters
        ----------
        ctx : click.Context
            The click context.
        name : str
            The command's name.

        Returns
        -------
        click.Command or None
            The command; None for an unknown name.
        """
        target = COMMANDS.get(name)
        if target is None:
            return None
        mod, attr = target.split(":")
        return getattr(importlib.import_module(mod), attr)


def exit_now(code=0) -> None:
    """End the process with ``code`` as :class:`SystemExit` would, skipping only the
    interpreter's teardown.

    What a normal exit does before the teardown is done in its order: the threads'
    ``atexit`` hooks (e.g. :mod:`concurrent.futures`' pools) run and every non-daemon thread
    is waited for (:func:`threading._shutdown`), then the :mod:`atexit` handlers run
    (logging flushed, temporary folders removed, ``weakref.finalize`` callbacks), then
    standard output and error are flushed; then :func:`os._exit`. What is skipped is freeing
    every object and module one by one — after a scoring run, its memory-mapped index,
    Arrow and polars buffers and a million-node tree: 0.3–0.5 s of a 2 s call, after every
    file was written and closed. Files still open at that point are not flushed, so every
    command writes through ``with`` blocks or :mod:`taxoforge.files`.

    Parameters
    ----------
    code : int, str or None
        ``None`` is 0; anything else that is no integer is printed to standard error and
        the exit code is 1 (as :func:`sys.exit` does).
    """
    import atexit
    import os
    import threading

    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    shutdown = getattr(threading, "_shutdown", None)
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if shutdown is None or run_exit_handlers is None:  # pragma: no cover - another Python: the ordinary exit
        sys.exit(code)
    shutdown()
    run_exit_handlers()
    for stream in (sys.stdout, sys.stderr):
        if stream is None:  # no console (pythonw, a daemon): nothing to flush
            continue
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (or stream): nothing more can be said
            code = code or 120  # what the interpreter exits with when it cannot flush
    os._exit(code)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]},
             epilog="Every command ends a file it cannot write or read (no space left on the device, a file "
                    "where a folder goes, -o a symbolic link or the working folder) with exit code 11 and the path; "
                    "each command's --help lists its other exit codes.")
@click.version_option(package_name="taxoforge")
def main() -> None:
    """taxoforge: versioned taxonomies and taxonomy-aware scoring of VLM answers."""
    log = logging.getLogger("taxoforge")
    if not any(isinstance(h, _Stderr) for h in log.handlers):  # once per process: the library's notices on stderr
        log.addHandler(_Stderr())


class _Stderr(logging.Handler):
    """The library's log records (``taxoforge.*`` loggers, warnings and up) as plain lines on
    the command's stderr, the one in use when the record is made."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        click.echo(record.getMessage(), err=True)


if __name__ == "__main__":  # pragma: no cover
    main()
