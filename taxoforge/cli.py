"""The ``taxoforge`` command line. Each domain contributes a click command or group:

* ``taxoforge.snapshots.cli`` — ``list``, ``pull``, ``verify``, ``show``, ``diff``, ``publish``
* ``taxoforge.scores.cli`` — ``score``
* ``taxoforge.evaluation.cli`` — ``mc`` (multiple-choice sets), ``evaluate`` (every other evaluation)

Commands are looked up lazily so ``taxoforge --help`` stays fast and one broken domain does
not take the others down.
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
    "mc": "taxoforge.evaluation.cli:mc_group",
    "evaluate": "taxoforge.evaluation.cli:evaluate_group",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

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
