"""Every example in taxoforge's docstrings runs and gives what it shows: doctest over each
module of the package (a module that needs an optional package that is not installed is
skipped, naming it)."""

from __future__ import annotations

import doctest
import importlib
import io
import pkgutil

import pytest

import taxoforge

MODULES = sorted(m.name for m in pkgutil.walk_packages(taxoforge.__path__, "taxoforge.", onerror=lambda _name: None))
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def test_the_package_has_modules_with_examples():
    assert {"taxoforge.trees.taxonomy", "taxoforge.trees.build", "taxoforge.sources.wikidata.queries"} <= set(MODULES)


@pytest.mark.parametrize("name", ["taxoforge", *MODULES])
def test_docstring_examples(name):
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name and e.name.split(".")[0] != "taxoforge":
            pytest.skip(f"{name} needs the optional package {e.name!r}")
        raise
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    out = io.StringIO()
    for test in doctest.DocTestFinder(exclude_empty=True).find(module, name):
        runner.run(test, out=out.write)
    assert runner.failures == 0, f"{runner.failures} failing example(s) in {name}:\n{out.getvalue()}"
