"""The import budget of the scoring commands: what ``taxoforge score --help`` and a bare import
of the scoring run load, in a fresh interpreter, held to a list of heavy libraries each must
not load. A module that starts importing one of them at its top (a figure library for the
run, a statistics or compiled-kernel library for the help text) fails here, naming it.

Measured with ``python -X importtime -m taxoforge.cli score --help`` (cumulative
microseconds per module): the libraries below cost tenths of a second to seconds each at
start-up, and the command's path does not need them before its work starts."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import REPO

#: never loaded by ``taxoforge score --help`` nor by a bare import of the scoring run: the
#: figures' library, statistics, compiled kernels, Dagster, the embedding models, WordNet's
#: reader, pandas (each loaded where its step runs, when it runs)
HEAVY = ("pandas", "matplotlib", "scipy", "numba", "dagster", "torch", "sentence_transformers", "sklearn", "nltk")


def _loaded_after(code: str) -> list[str]:
    probe = (f"import sys\n{code}\n"
             f"print(__import__('json').dumps(sorted({{m.split('.')[0] for m in sys.modules}})))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_score_help_loads_no_heavy_library():
    loaded = _loaded_after("from click.testing import CliRunner\nfrom taxoforge.cli import main\n"
                           "r = CliRunner().invoke(main, ['score', '--help'])\n"
                           "assert r.exit_code == 0 and 'TAXONOMY' in r.output.upper(), r.output")
    assert not [m for m in HEAVY if m in loaded]


def test_a_bare_import_of_the_scoring_run_loads_no_heavy_library():
    loaded = _loaded_after("import taxoforge.scores.run")
    assert not [m for m in HEAVY if m in loaded]


def test_a_repeat_score_call_never_imports_arrow_compute(inat_like, tmp_path):
    """A call that loads the stored tree and mapping index (not the first, which builds them)
    reads them without ``pyarrow.compute``, whose import alone costs a tenth of a second:
    the stored tree through polars' own IPC reader, the index's build kernels never run."""
    tree, answers = tmp_path / "tree", tmp_path / "a.jsonl"
    inat_like.write(tree)
    answers.write_text(json.dumps({"id": "1", "model": "m", "output": "Aloe vera", "label": "aloe_vera"}) + "\n")
    call = (f"from click.testing import CliRunner\nfrom taxoforge.cli import main\n"
            f"r = CliRunner().invoke(main, ['score', {str(answers)!r}, {str(tree)!r}, '-o', {str(tmp_path / 'out')!r}, "
            f"'--no-meteor', '--bootstrap', '0', '--plots', 'none', '--no-progress'])\n"
            "assert r.exit_code == 0, r.output\n")
    assert "pyarrow" in _loaded_after(call)  # the first call builds the index (with pyarrow.compute)
    done = subprocess.run([sys.executable, "-c", f"import sys\n{call}print('pyarrow.compute' in sys.modules)"],
                          capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "False"
