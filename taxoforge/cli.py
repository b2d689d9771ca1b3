"""The ``taxoforge`` command line. Each domain contributes a click command or group:

* ``taxoforge.snapshots.cli`` — ``list``, ``pull``, ``verify``, ``show``, ``diff``, ``publish``
* ``taxoforge.scores.cli`` — ``score`` (many files, one run), ``map`` (answers → nodes, no ground truth)
* ``taxoforge.trees.cli`` — ``subset`` (the taxonomy of a label set, cut from a tree)
* ``taxoforge.evaluation.cli`` — ``mc`` (multiple-choice sets), ``evaluate`` (every other evaluation)

Commands are looked up lazily so one broken domain does not take the others down, and
``taxoforge --help`` imports none of them: it lists each command with its summary from
:data:`SUMMARIES` (a test keeps them equal to the commands' own help).

Whatever command raises a snapshot or download error (a snapshot that fails verification
while ``score`` loads it, an interrupted pull …) ends with ``error: …`` on stderr and that
error's documented exit code (see :mod:`taxoforge.snapshots.cli`: 3 not found, 4
verification failed, 8 download interrupted …), never with a traceback.
"""

from __future__ import annotations

import importlib

import click

# command name -> "module:attribute"
COMMANDS = {
    "list": "taxoforge.snapshots.cli:list_cmd",
    "pull": "taxoforge.snapshots.cli:pull_cmd",
    "verify": "taxoforge.snapshots.cli:verify_cmd",
    "show": "taxoforge.snapshots.cli:show_cmd",
    "diff": "taxoforge.snapshots.cli:diff_cmd",
    "publish": "taxoforge.snapshots.cli:publish_cmd",
    "score": "taxoforge.scores.cli:score_cmd",
    "map": "taxoforge.scores.cli:map_cmd",
    "subset": "taxoforge.trees.cli:subset_cmd",
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
    "score": "Score model OUTPUTS (JSONL, CSV/TSV or Parquet files, folders of them, or glob patterns such as "
             "'results/**/*.jsonl') against TAXONOMY (a tree or snapshot folder, or NAME[@VERSION] in the "
             "snapshot store) in one run, and print the leaderboard: one row per model × dataset × prompt, with "
             "bootstrap 95 % intervals and the taxonomy it cites.",
    "map": "Map the answers in OUTPUTS to nodes of TAXONOMY without scoring them: no ground truth needed "
           "(unlabelled answers, e.g. OVEN-style open-world predictions: --column id=data_id --column "
           "output=prediction).",
    "subset": "Cut the taxonomy of the label set LABELS (.txt one per line, .csv/.tsv/.jsonl/.parquet with a label "
              "column) from TREE (a tree or snapshot folder, or NAME[@VERSION] in the store): the smallest subtree "
              "holding every label's node, written to OUT.",
    "mc": "Multiple-choice question sets from a taxonomy (VLM4Bio's easy / medium / hard, NOTA, FCT, rank probes) "
          "and the scores of the NOTA and FCT tests.",
    "evaluate": "Evaluations of the taxonomy-aware, VLM4Bio, open-world and granularity papers on a per-sample "
                "scores table (scores.parquet of `taxoforge score`), a score matrix, or a tree.",
}


class LazyGroup(click.Group):
    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of ``--help`` from :data:`SUMMARIES`, shortened as click shortens
        a command's help, without importing the commands."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(n) for n in names)
        with formatter.section("Commands"):
            formatter.write_dl([(n, click.Command(n, help=SUMMARIES.get(n, "")).get_short_help_str(limit)) for n in names])

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def invoke(self, ctx: click.Context):
        from taxoforge.files import DownloadError
        from taxoforge.snapshots.errors import SnapshotError

        try:
            return super().invoke(ctx)
        except (SnapshotError, DownloadError) as e:
            click.echo(f"error: {e}", err=True)
            ctx.exit(getattr(e, "exit_code", 1))

    def get_command(self, ctx: click.Context, name: str):
        target = COMMANDS.get(name)
        if target is None:
            return None
        mod, attr = target.split(":")
        return getattr(importlib.import_module(mod), attr)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="taxoforge")
def main() -> None:
    """taxoforge: versioned taxonomies and taxonomy-aware scoring of VLM answers."""


if __name__ == "__main__":  # pragma: no cover
    main()
