"""The library installs and imports without Dagster: every module under ``taxoforge`` imports
in a fresh interpreter where every distribution that only the ``dagster`` extra brings in
(Dagster itself, its webserver, GraphQL client, PostgreSQL driver, and all they pull in that
the library's own requirements do not) refuses to import."""

from __future__ import annotations

import ast
import importlib.metadata as md
import json
import subprocess
import sys
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import taxoforge

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


# ---------------------------------------------------------------------------- one way down
#: The layers of the library, lowest first: a module may import its own layer and the layers
#: below it, never one above. The command-line modules (``taxoforge/cli.py``,
#: ``taxoforge/cli_output.py`` and every ``taxoforge/<package>/cli.py``) sit on top of all.
LAYERS = (
    ("files", "text", "markdown", "latex", "seeded"),
    ("trees",),
    ("links",),
    ("sources",),
    ("snapshots",),
    ("scores",),
    ("evaluation",),
)
COMMAND_LINE = len(LAYERS)

PACKAGE_ROOT = Path(taxoforge.__file__).parent


def module_name(path: Path) -> str:
    """``taxoforge.scores.run`` for ``<root>/taxoforge/scores/run.py`` (a package's ``__init__``
    is the package)."""
    parts = path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str) -> bool:
    """Whether ``name`` (``taxoforge.…``) is a module or package of the library's source tree."""
    path = PACKAGE_ROOT.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def layer_of(module: str) -> int:
    """The layer of a library module (see :data:`LAYERS`); a module in no layer is an error."""
    parts = module.split(".")
    if parts[-1] in ("cli", "cli_output"):
        return COMMAND_LINE
    if len(parts) == 1:  # taxoforge/__init__.py: the version, nothing else
        return 0
    for i, names in enumerate(LAYERS):
        if parts[1] in names:
            return i
    raise AssertionError(f"{module}: in no layer of LAYERS (tests/taxoforge/test_package.py): add its "
                         "top-level name to the layer it belongs to, and to the order in README.md and CONTRIBUTING.md")


def imported_modules(path: Path, module: str | None = None) -> list[tuple[int, str]]:
    """``(line, module)`` for every import of a ``taxoforge`` module in ``path`` (the module
    ``module``, by default the one the path names), wherever it stands (module level, inside
    functions and classes, under ``if TYPE_CHECKING``), relative imports resolved, ``from X
    import Y`` counted as ``X.Y`` where ``Y`` is a module, and ``importlib.import_module("…")``
    with a literal name counted too."""
    module = module or module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            subs = [f"{source}.{a.name}" for a in node.names if is_module(f"{source}.{a.name}")]
            if len(subs) < len(node.names):
                subs.append(source)
            found += [(node.lineno, s) for s in subs]
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.append((node.lineno, node.args[0].value))
    return [(line, m) for line, m in found if m.split(".")[0] == "taxoforge"]


def upward_imports() -> dict[tuple[str, str], list[str]]:
    """(importing module, imported module) -> ``file:line`` of each import from a lower layer to
    a higher one."""
    out: dict[tuple[str, str], list[str]] = {}
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        module = module_name(path)
        for line, target in imported_modules(path):
            if layer_of(target) > layer_of(module):
                out.setdefault((module, target), []).append(f"{path.relative_to(PACKAGE_ROOT.parent)}:{line}")
    return out


def test_the_import_reader_sees_every_kind_of_import(tmp_path):
    assert layer_of("taxoforge.trees.taxonomy") == 1 and layer_of("taxoforge.scores.cli") == COMMAND_LINE
    assert layer_of("taxoforge.text") == layer_of("taxoforge.files.atomic") == 0
    assert is_module("taxoforge.files") and is_module("taxoforge.trees.taxonomy") and not is_module("taxoforge.trees.nope")
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import taxoforge.links.linker\n"
        "from ..scores import run\n"
        "from . import taxonomy\n"
        "def f():\n"
        "    from taxoforge.evaluation.metrics import hierarchical_precision_recall_fscore\n"
        "    import importlib\n"
        "    return importlib.import_module('taxoforge.snapshots.store')\n"
        "class C:\n"
        "    if True:\n"
        "        from .. import sources\n", encoding="utf-8")
    got = imported_modules(probe, "taxoforge.trees.probe")
    assert got == [(1, "taxoforge.links.linker"), (2, "taxoforge.scores.run"), (3, "taxoforge.trees.taxonomy"),
                   (5, "taxoforge.evaluation.metrics"), (7, "taxoforge.snapshots.store"), (10, "taxoforge.sources")]
    assert [line for line, m in got if layer_of(m) > layer_of("taxoforge.trees.probe")] == [1, 2, 5, 7, 10]


def test_imports_run_one_way_down_the_layers():
    found = upward_imports()
    assert not found, ("imports from a lower layer to a higher one (order, lowest first: "
                       + " → ".join("/".join(names) for names in LAYERS) + " → command-line modules):\n"
                       + "\n".join(f"  {', '.join(where)}: {a} imports {b}" for (a, b), where in sorted(found.items())))


# ---------------------------------------------------------------------------- one idea a module
MAX_MODULE_LINES = 600

#: Modules over the limit that their owners are splitting right now: path -> who splits it.
#: The list only shrinks; an entry for a module now within the limit must be deleted.
ALLOWED_LONG: dict[str, str] = {
    "taxoforge/sources/wikidata/dump.py": "w-speed: read blocks, scan and spill, Turtle, graph assembly",
    "taxoforge/evaluation/multiple_choice.py": "w-resolve: draws, plans, rank probes, checks, label files",
    "taxoforge/links/resolve.py": "w-resolve",
}


def test_no_module_is_over_the_line_limit():
    lengths = {path.relative_to(PACKAGE_ROOT.parent).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
               for path in sorted(PACKAGE_ROOT.rglob("*.py"))}
    assert {"taxoforge/trees/taxonomy.py", "taxoforge/sources/coldp.py"} <= set(lengths)
    long = {p: n for p, n in lengths.items() if n > MAX_MODULE_LINES and p not in ALLOWED_LONG}
    assert not long, (f"modules over {MAX_MODULE_LINES} lines: split each along the steps it holds, one idea a "
                      "module:\n" + "\n".join(f"  {p}: {n} lines" for p, n in sorted(long.items())))
    stale = sorted(p for p in ALLOWED_LONG if lengths.get(p, 0) <= MAX_MODULE_LINES)
    assert not stale, ("within the limit now (or gone) — delete from ALLOWED_LONG in tests/taxoforge/test_package.py:\n"
                       + "\n".join(f"  {p} ({lengths.get(p, 'gone')} lines; {ALLOWED_LONG[p]})" for p in stale))
