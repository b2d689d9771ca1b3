"""The installable package: the wheel built from pyproject.toml alone, installed into a fresh
virtual environment outside the checkout, runs the command line against a snapshot store served
on 127.0.0.1 — pull, score the shipped example, build multiple-choice questions, verify —
with no file of the repository at run time."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import sysconfig
import time
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO


def _run(cmd, **kw) -> subprocess.CompletedProcess:
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)
    assert out.returncode == 0, f"{cmd}: exit {out.returncode}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel, built from the checkout by pip with the setuptools of this environment."""
    out = tmp_path_factory.mktemp("wheel")
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(REPO)],
         cwd=out)
    (whl,) = out.glob("taxoforge-*.whl")
    return whl


def test_wheel_holds_the_queries_and_tables_and_no_top_level_data(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = sorted(n.removeprefix("taxoforge/sql/") for n in names if n.endswith(".rq"))
    in_repo = sorted(p.relative_to(REPO / "sql").as_posix() for p in (REPO / "sql").rglob("*.rq"))
    assert shipped == in_repo and "wikidata/subclass_of.rq" in shipped
    assert "taxoforge/noun_base_forms.tsv" in names
    assert "taxoforge/scores/readers/vlmevalkit_datasets.txt" in names  # splits VLMEvalKit file names at a dataset name
    for top in ("taxoforge", "pipelines", "assets"):
        for py in (REPO / top).rglob("*.py"):
            rel = py.relative_to(REPO).as_posix()
            if "__pycache__" not in rel:
                assert rel in names, f"{rel} is not in the wheel"
    assert not any(n.startswith(("sql/", "tests/", "data/", "benchmarks/")) for n in names)
    assert not (REPO / "setup.py").exists()  # one build configuration: pyproject.toml


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A fresh venv outside the checkout with the wheel installed. Its third-party
    dependencies are this environment's (a .pth line; the lock file installs them), so the
    test is about the package's own files, which come from the wheel alone."""
    root = tmp_path_factory.mktemp("fresh")
    env_dir = root / "venv"
    _run([sys.executable, "-m", "venv", str(env_dir)])
    py = env_dir / "bin" / "python"
    _run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)])
    site = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    (site / "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return env_dir


def _env(venv: Path, home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TAXOFORGE_", "PYTHON"))}
    env.update(PATH=f"{venv / 'bin'}:{env.get('PATH', '')}", TAXOFORGE_OFFLINE="1", HOME=str(home),
               TAXOFORGE_CACHE_DIR=str(home / "cache"), HF_HUB_OFFLINE="1")
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


BUILD = """
import sys
from taxoforge.sources.wordnet import noun_graph, wordnet_tree
from taxoforge.sources.imagenet import imagenet1k_labels, imagenet1k_taxonomy, link_imagenet1k
import taxoforge
assert taxoforge.__file__.startswith(sys.argv[2]), taxoforge.__file__
edges, names = noun_graph()
wn = wordnet_tree(edges, names)
imagenet1k_taxonomy(wn, link_imagenet1k(imagenet1k_labels(), wn)).write(sys.argv[1])
"""


@pytest.mark.slow
def test_installed_wheel_pulls_scores_builds_questions_and_verifies(venv, tmp_path):
    pytest.importorskip("nltk")
    work = tmp_path / "work"  # the current folder of every command: nothing of the checkout around
    work.mkdir()
    env = _env(venv, tmp_path)
    bin_ = venv / "bin"
    site = _run([str(bin_ / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    version = _run([str(bin_ / "taxoforge"), "--version"], cwd=work, env=env).stdout
    assert "0." in version or "1." in version
    # the publisher's side: a taxonomy built by the installed library, published to a store served over HTTP
    try:
        _run([str(bin_ / "python"), "-c", BUILD, str(work / "tree"), site], cwd=work, env=env)
    except AssertionError as e:
        if "WordNet" in str(e):
            pytest.skip(f"WordNet 3.0 is not installed: {e}")
        raise
    served = tmp_path / "served"
    _run([str(bin_ / "taxoforge"), "publish", str(work / "tree"), "--name", "imagenet1k", "--store", str(served),
          "--latest"], cwd=work, env=env)
    # its browser, written from the wheel's own script and style (package data)
    [page] = served.glob("imagenet1k/*/browse/index.html")
    assert "taxoforgeBrowser" in page.read_text() and "browse/index.html" in (served / "index.html").read_text()
    port = _free_port()
    server = subprocess.Popen([str(bin_ / "python"), "-m", "http.server", str(port), "--bind", "127.0.0.1",
                               "--directory", str(served)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        local = work / "snapshots"
        tf = [str(bin_ / "taxoforge")]
        pulled = json.loads(_run(tf + ["pull", "imagenet1k", "--store", url, "--dest", str(local), "--no-progress",
                                       "--json"], cwd=work, env=env).stdout)
        assert "imagenet1k@" in json.dumps(pulled)
        example = work / "answers.jsonl"  # the shipped example, as a user's own file
        example.write_bytes((REPO / "data" / "examples" / "imagenet_example_outputs.jsonl").read_bytes())
        _run(tf + ["score", str(example), "imagenet1k", "--store", str(local), "-o", str(work / "results")],
             cwd=work, env=env)
        run = json.loads((work / "results" / "run.json").read_text())
        assert run and (work / "results" / "leaderboard.md").read_text().count("|") > 10
        _run(tf + ["mc", "build", "imagenet1k", "sample:20", "--probe-rank", "3", "-o", str(work / "questions.jsonl")],
             cwd=work, env={**env, "TAXOFORGE_SNAPSHOT_STORE": str(local)})
        questions = [json.loads(x) for x in (work / "questions.jsonl").read_text().splitlines()]
        assert questions
        _run(tf + ["verify", "imagenet1k", "--store", str(local)], cwd=work, env=env)
        _run(tf + ["verify", "imagenet1k", "--store", url], cwd=work, env=env)
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:  # a loaded machine: end it for sure, never hide the test's own error
            server.kill()
            server.wait(timeout=30)
