"""The ``taxoforge`` command line. Each domain contributes a click command or group:

* ``taxoforge.snapshots.cli`` — ``list``, ``pull``, ``verify``, ``show``, ``diff``, ``publish``
* ``taxoforge.scores.cli`` — ``score`` (many files, one run), ``map`` (answers → nodes, no ground truth)
* ``taxoforge.trees.cli`` — ``subset`` (the taxonomy of a label set, cut from a tree)
* ``taxoforge.evaluation.cli`` — ``mc`` (multiple-choice sets), ``evaluate`` (every other evaluation)

Commands are looked up lazily so ``taxoforge --help`` stays fast and one broken domain does
not take the others down.

Whatever command raises a snapshot or download error (a snapshot that fails verification
while ``score`` loads it, an interrupted pull …) ends with ``error: …`` on stderr and that
error's documented exit code (see :mod:`taxoforge.snapshots.cli`: 3 not found, 4
verification failed, 8 download interrupted …), and a file that cannot be written or read
(no space left, a file where a folder goes …) with exit code 11 and its path
(:func:`taxoforge.cli_output.error_exit`) — never with a traceback.
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


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def invoke(self, ctx: click.Context):
        from taxoforge.cli_output import error_exit

        try:
            return super().invoke(ctx)
        except Exception as e:
            err = error_exit(e)
            if err is None:
                raise
            click.echo(f"error: {err}", err=True)
            ctx.exit(err.code)

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
