"""The library installs and imports without Dagster: every module under ``taxoforge`` imports
in a fresh interpreter where every distribution that only the ``dagster`` extra brings in
(Dagster itself, its webserver, GraphQL client, PostgreSQL driver, and all they pull in that
the library's own requirements do not) refuses to import."""

from __future__ import annotations

import importlib.metadata as md
import json
import subprocess
import sys

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

#: Import names of optional extras the library loads lazily (not installed here, not needed).
OPTIONAL = {"sentence_transformers"}

CHILD = r"""
import importlib, importlib.abc, json, pkgutil, sys

refused, optional = set(json.loads(sys.argv[1])), set(json.loads(sys.argv[2]))


class RefuseDagsterExtra(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in refused:
            raise ModuleNotFoundError(f"{name} is installed only for the dagster extra", name=name)
        return None


sys.meta_path.insert(0, RefuseDagsterExtra())
failed, imported = {}, []


def record(name, exc=None):
    exc = exc or sys.exc_info()[1]
    if isinstance(exc, ModuleNotFoundError) and (exc.name or "").split(".")[0] in optional:
        return
    failed[name] = f"{type(exc).__name__}: {exc}"


import taxoforge

for info in pkgutil.walk_packages(taxoforge.__path__, prefix="taxoforge.", onerror=record):
    try:
        importlib.import_module(info.name)
        imported.append(info.name)
    except Exception as exc:  # noqa: BLE001 - every failure is reported
        record(info.name, exc)
print(json.dumps({"failed": failed, "imported": imported,
                  "refused_loaded": sorted(m for m in sys.modules if m.split(".")[0] in refused)}))
"""


def _active(dist: str, extra: str) -> list[Requirement]:
    """The requirements of ``dist`` that apply when ``extra`` ("" for none) is asked for."""
    reqs = [Requirement(r) for r in md.distribution(dist).requires or []]
    return [r for r in reqs if r.marker is None or r.marker.evaluate({"extra": extra})]


def _closure(reqs: list[Requirement]) -> set[str]:
    """Every installed distribution ``reqs`` pull in, transitively (canonical names)."""
    seen: set[tuple[str, str]] = set()
    todo = [(canonicalize_name(r.name), e) for r in reqs for e in (r.extras or {""})]
    while todo:
        name, extra = todo.pop()
        if (name, extra) in seen:
            continue
        try:
            reqs = _active(name, extra)
        except md.PackageNotFoundError:  # not installed here: an optional or platform-specific one
            continue
        seen.add((name, extra))
        todo += [(canonicalize_name(r.name), e) for r in reqs for e in (r.extras or {""})]
    return {name for name, _ in seen}


def dagster_only_modules() -> set[str]:
    """Top-level import names provided only by distributions the ``dagster`` extra adds."""
    base = _closure(_active("taxoforge", ""))
    extra = [r for r in _active("taxoforge", "dagster") if r not in _active("taxoforge", "")]
    only = _closure(extra) - base
    return {module for module, dists in md.packages_distributions().items()
            if dists and all(canonicalize_name(d) in only for d in dists)}


def test_every_taxoforge_module_imports_without_the_dagster_extra():
    refused = dagster_only_modules()
    assert {"dagster", "dagster_webserver", "dagster_graphql", "dagster_postgres"} <= refused
    assert not refused & {"polars", "numpy", "taxoforge"}  # the library's own requirements stay importable
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(sorted(refused)), json.dumps(sorted(OPTIONAL))],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.splitlines()[-1])
    assert report["failed"] == {}, "modules of taxoforge that need the dagster extra:\n" + "\n".join(
        f"  {m}: {e}" for m, e in report["failed"].items())
    assert report["refused_loaded"] == []
    assert {"taxoforge.cli", "taxoforge.trees.build", "taxoforge.snapshots.store", "taxoforge.scores.run"} <= set(
        report["imported"])
