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


# ---- a file that cannot be written: exit code 11 and the path, for every command that writes ----
# Each command runs through the ``taxoforge`` group (CliRunner, in the test's folder) against a
# real tree; the output is then given as the working folder, a symbolic link, a file where a
# folder goes (or its reverse) and a folder on a full disk (a real tmpfs of 64 KiB).
import os  # noqa: E402

import pytest  # noqa: E402

from taxoforge.cli_output import EXIT_FILE_SYSTEM  # noqa: E402
from tests.taxoforge.files.small_fs import small_filesystem  # noqa: E402
from tests.taxoforge.scores.conftest import inat_like  # noqa: E402,F401 - the fixture

ANSWERS = [{"id": str(i), "model": "m", "output": out, "label": label}
           for i, (out, label) in enumerate([("Aloe vera", "aloe_vera"), ("Toco Toucan", "Toco Toucan")] * 40)]


@pytest.fixture()
def inputs(inat_like, tmp_path, monkeypatch):
    """A tree folder, an answers file and a labels file; the working folder is ``work/``."""
    inat_like.write(tmp_path / "tree")
    (tmp_path / "answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ANSWERS))
    (tmp_path / "labels.txt").write_text("Aloe vera\nToco Toucan\n")
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "mine.txt").write_text("the user's own file")
    monkeypatch.chdir(tmp_path / "work")
    return tmp_path


def _argv(command: str, t, out: str) -> list[str]:
    tree, answers, labels = str(t / "tree"), str(t / "answers.jsonl"), str(t / "labels.txt")
    return {
        "score": ["score", answers, tree, "-o", out, "--no-meteor", "--bootstrap", "0", "--no-plots", "--no-progress"],
        "map": ["map", answers, tree, "-o", out, "--no-progress"],
        "subset": ["subset", tree, labels, "-o", out, "--min-linked", "0"],
        "mc build": ["mc", "build", tree, labels, "--difficulty", "easy", "--pool", "tree", "-o", out],
        "publish": ["publish", tree, "--name", "demo", "--store", out, "--skip-checks"],
    }[command]


FOLDER_OUTPUT = {"score", "subset", "publish"}  # the others write one file
COMMANDS = ["score", "map", "subset", "mc build", "publish"]


def _clean_failure(r, path_named: str, why: str, code: int = EXIT_FILE_SYSTEM) -> None:
    assert r.exit_code == code, r.output
    assert "Traceback" not in r.output and isinstance(r.exception, SystemExit)
    assert path_named in r.output and why in r.output, r.output


@pytest.mark.parametrize("command", COMMANDS)
def test_an_output_that_cannot_be_written_ends_with_exit_code_11_and_its_path(inputs, command):
    t = inputs
    out = "mine.txt/out" if command in FOLDER_OUTPUT else "mine.txt/out.jsonl"
    # a file where a folder must go (a parent of the output is a file)
    r = CliRunner().invoke(main, _argv(command, t, out))
    _clean_failure(r, "mine.txt", "a file is where a folder must go")
    # a symbolic link as the output: replacing it would not write where it points
    (t / "elsewhere").mkdir()
    (t / "elsewhere.jsonl").write_text("")
    os.symlink(t / ("elsewhere" if command in FOLDER_OUTPUT else "elsewhere.jsonl"), "link.jsonl")
    if command != "publish":  # a store reached through a link is the user's choice
        r = CliRunner().invoke(main, _argv(command, t, "link.jsonl"))
        _clean_failure(r, "link.jsonl", "symbolic link")
        assert (t / "elsewhere.jsonl").read_text() == "" and list((t / "elsewhere").iterdir()) == []
    # the reverse: an existing file where the command writes a folder, or a folder where it writes a
    # file — the command-line parser or the command refuses it as bad usage (exit code 2), naming it
    r = CliRunner().invoke(main, _argv(command, t, "mine.txt" if command in FOLDER_OUTPUT else "."))
    named = "mine.txt" if command in FOLDER_OUTPUT else "'.'"
    if command == "publish":
        _clean_failure(r, "mine.txt", "a file is where a folder must go")
    else:
        _clean_failure(r, named, "", code=2)
    assert (t / "work" / "mine.txt").read_text() == "the user's own file"


@pytest.mark.parametrize("command", ["score", "subset"])
def test_the_working_folder_as_output_is_refused_not_replaced(inputs, command):
    os.remove("mine.txt")  # even an empty working folder: replacing it whole would pull it away
    r = CliRunner().invoke(main, _argv(command, inputs, "."))
    _clean_failure(r, ".", "is the working folder")
    assert (inputs / "work").is_dir()


@pytest.mark.parametrize("command", COMMANDS)
def test_no_space_left_ends_with_exit_code_11_and_the_path(inputs, command):
    with small_filesystem(inputs / "full", 64 * 1024) as full:
        with open(full / "ballast", "wb", buffering=0) as f:  # fill it to the last byte
            try:
                while f.write(b"\0" * 4096):
                    pass
            except OSError:
                pass
        out = full / ("out" if command in FOLDER_OUTPUT else "out.jsonl")
        r = CliRunner().invoke(main, _argv(command, inputs, str(out)))
        _clean_failure(r, str(full), "No space left on device")
        assert sorted(p.name for p in full.iterdir()) in (["ballast"], ["ballast", "out"])  # no temporary left
