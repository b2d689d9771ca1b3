"""setup.py: the top-level sql/ folder installs as the package taxoforge.sql, every package
folder is installed, and the installed library reads its queries from there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO


@pytest.fixture(scope="module")
def build_lib(tmp_path_factory) -> Path:
    """What a wheel would hold: ``setup.py build_py`` into a fresh folder."""
    out = tmp_path_factory.mktemp("build_lib")
    subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(out)], cwd=REPO, check=True,
                   capture_output=True)
    return out


def test_query_files_install_inside_taxoforge_and_no_top_level_sql(build_lib):
    shipped = sorted(p.relative_to(build_lib / "taxoforge" / "sql").as_posix()
                     for p in (build_lib / "taxoforge" / "sql").rglob("*.rq"))
    in_repo = sorted(p.relative_to(REPO / "sql").as_posix() for p in (REPO / "sql").rglob("*.rq"))
    assert shipped == in_repo and "wikidata/subclass_of.rq" in shipped
    assert not (build_lib / "sql").exists()


def test_every_package_folder_is_installed(build_lib):
    for top in ("taxoforge", "pipelines", "assets"):
        for init in (REPO / top).rglob("*.py"):
            rel = init.relative_to(REPO)
            if "__pycache__" not in rel.parts:
                assert (build_lib / rel).is_file(), f"{rel} is not installed"


def test_installed_library_reads_its_queries_with_importlib_resources(build_lib, tmp_path):
    code = ("import sys; sys.path.insert(0, sys.argv[1])\n"
            "from taxoforge.sources.wikidata import queries\n"
            "assert queries.__file__.startswith(sys.argv[1]), queries.__file__\n"
            "print(queries.query_dir()); print(queries.render('instance_of', items=['Q5']))\n")
    out = subprocess.run([sys.executable, "-c", code, str(build_lib)], cwd=tmp_path, check=True,
                         capture_output=True, text=True).stdout
    assert out.splitlines()[0] == str(build_lib / "taxoforge" / "sql" / "wikidata")
    assert "VALUES ?item { wd:Q5 }" in out
