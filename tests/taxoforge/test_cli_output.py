"""taxoforge.cli_output: one way for every command to end — a message and an exit code,
or one JSON document, never a traceback."""

from __future__ import annotations

import json

import click
from click.testing import CliRunner

from taxoforge.cli import main
from taxoforge.cli_output import CommandFailed, emit_json, handle_errors
from taxoforge.snapshots.errors import TaxonomyNotFound


@click.command()
@click.option("--json", "as_json", is_flag=True)
@click.argument("what")
@handle_errors(usage_errors=lambda: (KeyError,))
def _cmd(what, as_json):
    if what == "missing":
        raise TaxonomyNotFound("no taxonomy 'x' in the store")
    if what == "usage":
        raise KeyError("column 'lable'")
    if what == "failed":
        raise CommandFailed("too few rows", 10, "TooFew")
    if what == "bug":
        raise RuntimeError("a bug shows its traceback")
    emit_json({"value": float("nan"), 1: [float("inf"), "ü"]})


def test_errors_end_with_their_exit_code_and_a_message():
    r = CliRunner().invoke(_cmd, ["missing"])
    assert r.exit_code == TaxonomyNotFound.exit_code == 3 and "error: no taxonomy 'x'" in r.output
    assert "Traceback" not in r.output
    r = CliRunner().invoke(_cmd, ["usage"])
    assert r.exit_code == 2 and "lable" in r.output
    r = CliRunner().invoke(_cmd, ["failed", "--json"])
    assert r.exit_code == 10 and json.loads(r.output) == {"error": "too few rows", "exit_code": 10, "kind": "TooFew"}


def test_other_errors_are_not_swallowed():
    r = CliRunner().invoke(_cmd, ["bug"])
    assert isinstance(r.exception, RuntimeError)


def test_json_output_is_valid_json_without_nan():
    r = CliRunner().invoke(_cmd, ["ok"])
    assert json.loads(r.output) == {"value": None, "1": [None, "ü"]}


def test_subset_of_a_taxonomy_the_store_lacks_is_exit_code_3(tmp_path):
    labels = tmp_path / "labels.txt"
    labels.write_text("Anas acuta\n")
    r = CliRunner().invoke(main, ["subset", "nosuchtree", str(labels), "-o", str(tmp_path / "out"),
                                  "--store", str(tmp_path / "store")])
    assert r.exit_code == 3 and "error:" in r.output and isinstance(r.exception, SystemExit)
    assert "Traceback" not in r.output
