"""The library installs and imports without Dagster: every module under ``taxoforge`` imports
in a fresh interpreter where every distribution that only the ``dagster`` extra brings in
(Dagster itself, its webserver, GraphQL client, PostgreSQL driver, and all they pull in that
the library's own requirements do not) refuses to import."""

from __future__ import annotations

import ast
import importlib.metadata as md
import json
import re
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
    ("files", "text", "markdown", "latex", "seeded", "arrays", "versions", "params", "messages", "memory"),
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


# ---------------------------------------------------------------------------- every edge visible, no circle
#: The folders whose modules import one another: the library and the benchmarks (which import
#: the library and their shared modules, never a benchmark of their own kind).
CHECKED_FOLDERS = ("taxoforge", "benchmarks")


def project_modules() -> dict[str, Path]:
    """``module name → file`` of every module of :data:`CHECKED_FOLDERS`."""
    root = PACKAGE_ROOT.parent
    out = {}
    for folder in CHECKED_FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def import_graph(modules: dict[str, Path]) -> dict[str, dict[str, list[int]]]:
    """``module → {module it imports → lines}`` over ``modules``: every import, wherever it
    stands; a package's ``__init__`` re-exporting its own modules is no edge back."""
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: dict[str, list[int]] = {}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for t in targets:
                if t in modules and t != name and not name.startswith(t + "."):
                    edges.setdefault(t, []).append(node.lineno)
        graph[name] = edges
    return graph


def import_cycles(graph: dict[str, dict]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(graph[w])))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def test_the_cycle_finder_finds_a_circle_through_a_function_level_import(tmp_path):
    a, b, c = tmp_path / "a.py", tmp_path / "b.py", tmp_path / "c.py"
    a.write_text("import x.b\n")
    b.write_text("def f():\n    from x import c\n")
    c.write_text("from x.a import thing\n")
    graph = import_graph({"x.a": a, "x.b": b, "x.c": c})
    assert graph["x.b"] == {"x.c": [2]} and import_cycles(graph) == [["x.a", "x.b", "x.c"]]


def test_no_import_cycle_in_the_library_or_the_benchmarks():
    graph = import_graph(project_modules())
    cycles = import_cycles(graph)
    assert not cycles, "modules that import one another (directly or not):\n" + "\n".join(
        "  " + " → ".join(c) for c in cycles)


def test_the_library_imports_its_own_modules_at_the_top():
    """Every import of a module of the library (or of the benchmarks) stands at the top of the
    module that needs it, where a reader and this file see it: none inside a function."""
    inner = []
    for name, path in project_modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                mod = (node.module or "") if isinstance(node, ast.ImportFrom) else (
                    node.names[0].name if isinstance(node, ast.Import) else None)
                if mod is not None and (mod.split(".")[0] == "taxoforge" or getattr(node, "level", 0)):
                    if name.startswith("taxoforge"):
                        inner.append(f"{path.relative_to(PACKAGE_ROOT.parent)}:{node.lineno}: {mod}")
    assert not inner, "imports of the library inside functions (move them to the module's top):\n" + "\n".join(
        sorted(set(inner)))


def test_no_module_imports_a_private_name_of_another():
    """What a module of the library or the benchmarks takes from another is public: no
    ``from X import _name`` (a helper two modules share is a public function of one of them)."""
    modules = project_modules()
    found = []
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in CHECKED_FOLDERS:
                found += [f"{path.relative_to(PACKAGE_ROOT.parent)}:{node.lineno}: {node.module}.{a.name}"
                          for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
    assert not found, "private names imported from another module:\n" + "\n".join(found)


# ---------------------------------------------------------------------------- one idea a module
MAX_MODULE_LINES = 600



def test_no_module_is_over_the_line_limit():
    lengths = {path.relative_to(PACKAGE_ROOT.parent).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
               for path in sorted(PACKAGE_ROOT.rglob("*.py"))}
    assert {"taxoforge/trees/taxonomy.py", "taxoforge/sources/coldp.py"} <= set(lengths)
    long = {p: n for p, n in lengths.items() if n > MAX_MODULE_LINES}
    assert not long, (f"modules over {MAX_MODULE_LINES} lines: split each along the steps it holds, one idea a "
                      "module:\n" + "\n".join(f"  {p}: {n} lines" for p, n in sorted(long.items())))


# ---------------------------------------------------------------------------- numpydoc everywhere
#: What a public docstring must have (numpydoc's validation codes): a docstring (GL08) with a
#: summary (SS01); every parameter of the signature in ``Parameters`` (PR01) and none that
#: is not (PR02); ``Returns`` when the code returns a value (RT01), ``Yields`` when it yields
#: (YD01). A class documents its constructor's parameters in ``Parameters`` or, for a
#: dataclass's fields, ``Attributes``; a property needs a docstring with a summary.
DOCSTRING_CODES = ("GL08", "SS01", "PR01", "PR02", "RT01", "YD01")



def library_modules() -> list:
    """Every module of the library that imports here (one needing a missing optional package
    is left out, as the doctests leave it out)."""
    import importlib
    import pkgutil

    out = []
    for info in pkgutil.walk_packages(taxoforge.__path__, "taxoforge."):
        try:
            out.append(importlib.import_module(info.name))
        except ModuleNotFoundError as e:
            if not e.name or e.name.split(".")[0] == "taxoforge":
                raise
    return out


def public_objects(module) -> list[tuple[str, object]]:
    """``(dotted name, object)`` of the public functions and classes a module defines (in
    ``__all__`` or not underscore-prefixed), and of the public methods and properties those
    classes define themselves."""
    import functools
    import inspect

    names = set(getattr(module, "__all__", ())) | {n for n in vars(module) if not n.startswith("_")}
    found = []
    for name in sorted(names):
        obj = getattr(module, name, None)
        if not (inspect.isfunction(obj) or inspect.isclass(obj)) or obj.__module__ != module.__name__:
            continue  # imported from elsewhere: checked where it is defined
        found.append((f"{module.__name__}.{name}", obj))
        if inspect.isclass(obj):
            for attr_name, attr in vars(obj).items():
                if attr_name.startswith("_"):
                    continue
                attr = attr.__func__ if isinstance(attr, (staticmethod, classmethod)) else attr
                if inspect.isfunction(attr) or isinstance(attr, (property, functools.cached_property)):
                    found.append((f"{module.__name__}.{name}.{attr_name}", attr))
    return found


def docstring_problems(name: str, obj: object) -> list[str]:
    """numpydoc's :data:`DOCSTRING_CODES` problems of one public object."""
    import dataclasses
    import functools
    import inspect

    from numpydoc.docscrape import NumpyDocString
    from numpydoc.validate import validate

    errors = []
    for code, msg in validate(name)["errors"]:
        if code == "PR01":  # a parameter whose name starts with "_" is private: not documented
            missing = [n for n in re.findall(r"'([^']+)'", msg) if not n.lstrip("*").startswith("_")]
            msg = f"Parameters {set(missing)} not documented" if missing else None
        if code in DOCSTRING_CODES and msg:
            errors.append((code, msg))
    if isinstance(obj, (property, functools.cached_property)):
        errors = [(code, msg) for code, msg in errors if code in ("GL08", "SS01")]
    elif inspect.isclass(obj):
        if "__init__" not in vars(obj) and not dataclasses.is_dataclass(obj):
            errors = [(code, msg) for code, msg in errors if code not in ("PR01", "PR02")]  # an inherited constructor
        elif any(code == "PR01" for code, _ in errors):
            written = NumpyDocString(inspect.getdoc(obj) or "")  # what the docstring says, nothing inferred
            params = {p for p in inspect.signature(obj).parameters if not p.startswith("_")}
            documented = {n.strip().lstrip("*") for p in [*written["Parameters"], *written["Attributes"]]
                          for n in p.name.split(",")}  # "a, b : int" documents both
            missing = sorted(p for p in params if p.lstrip("*") not in documented)
            errors = [(code, msg) for code, msg in errors if code != "PR01"]
            errors += [("PR01", f"Parameters {missing} not documented")] if missing else []
    return [f"{code} {msg}" for code, msg in errors]


def test_every_public_function_and_class_has_a_numpydoc_docstring():
    problems: dict[str, list[str]] = {}
    for module in library_modules():
        for name, obj in public_objects(module):
            for p in docstring_problems(name, obj):
                problems.setdefault(module.__name__, []).append(f"{name}: {p}")
    assert not problems, ("public objects without the numpydoc docstring their signature needs (numpydoc.validate):\n"
                          + "\n".join(f"  {p}" for ps in problems.values() for p in ps))


def test_the_docstring_check_fails_where_it_should(tmp_path, monkeypatch):
    probe = tmp_path / "taxoforge_docstring_probe.py"
    probe.write_text('''"""A probe."""
from dataclasses import dataclass


def undocumented(x):
    return x


def prose_only(tree, seed=0):
    """The tree, cut with ``seed``."""
    return tree


def complete(tree, *, seed=0):
    """The tree, cut.

    Parameters
    ----------
    tree : TreeTables
        The tree.
    seed : int, optional
        The seed.

    Returns
    -------
    TreeTables
        The cut tree.
    """
    return tree


def wrong_name(tree):
    """Nothing.

    Parameters
    ----------
    trees : TreeTables
        A typo.
    """


def generator(n):
    """Counts.

    Parameters
    ----------
    n : int
        How far.
    """
    yield from range(n)


@dataclass
class Fields:
    """Two fields.

    Attributes
    ----------
    a : int
        One.
    """

    a: int
    b: int = 0

    @property
    def total(self):
        return self.a + self.b


class Failure(ValueError):
    """An inherited constructor needs no Parameters."""
''', encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    module = importlib.import_module("taxoforge_docstring_probe")
    got = {name.rsplit(".", 1)[-1] if name.count(".") == 1 else name.split(".", 1)[1]: docstring_problems(name, obj)
           for name, obj in public_objects(module)}
    assert got["undocumented"] == ["GL08 The object does not have a docstring"]
    assert sorted(p[:4] for p in got["prose_only"]) == ["PR01", "RT01"]
    assert got["complete"] == [] and got["Failure"] == []
    assert [p[:4] for p in got["wrong_name"]] == ["PR01", "PR02"]
    assert [p[:4] for p in got["generator"]] == ["YD01"]
    assert got["Fields"] == ["PR01 Parameters ['b'] not documented"]
    assert got["Fields.total"] == ["GL08 The object does not have a docstring"]


# ---------------------------------------------------------------------------- references that resolve
#: References a reader cannot follow: the name of a notes file no user has, a paper by its
#: number in a folder no user has, a tracker's issue number. Cite a paper by author, year and
#: its number in docs/references.md, a rule by its section of docs/method.md.
UNFOLLOWABLE = re.compile(r"\bSPEC\b|(?i:\bpapers? ?0\d\d(?!\d))|(?i:\bissues? #?\d+)")
REFERENCE_ROOTS = ("taxoforge", "tests", "benchmarks", "docs", "assets", "pipelines", "scripts", "deploy", ".ci")
REFERENCE_FILES = ("README.md", "CONTRIBUTING.md", "pyproject.toml", "setup.py", "Makefile", "Dockerfile",
                   "docker-compose.yml", "workspace.yaml")
TEXT_SUFFIXES = {".py", ".md", ".txt", ".toml", ".yaml", ".yml", ".cfg", ".sh", ".tsv", ".csv", ".json", ".sql", ".html",
                 ".j2", ""}


def reference_files() -> list[Path]:
    """The repository's own text files: code, tests, benchmarks, docs and configuration."""
    repo = PACKAGE_ROOT.parent
    files = [repo / f for f in REFERENCE_FILES if (repo / f).is_file()]
    for root in REFERENCE_ROOTS:
        for path in sorted((repo / root).rglob("*")):
            if (path.is_file() and path.suffix in TEXT_SUFFIXES and "__pycache__" not in path.parts
                    and "__snapshots__" not in path.parts and path.stat().st_size < 2_000_000):
                files.append(path)
    return files


def test_references_are_ones_a_reader_can_follow():
    spec, paper, issue = "SP" + "EC", "Pa" + "per", "is" + "sue"  # split, so this file does not match itself
    assert UNFOLLOWABLE.search(f"as {spec} §3 says") and UNFOLLOWABLE.search(f"({paper} 000 Table 9)")
    assert UNFOLLOWABLE.search(f"{issue} 14 item 1") and UNFOLLOWABLE.search(f"see data/{paper.lower()}000_table9.tsv")
    assert not UNFOLLOWABLE.search("Snæbjarnarson et al. 2025 [1] §4.1, docs/method.md#ground-truths, similarity_from_spec")
    files = reference_files()
    assert any(p.name == "method.md" for p in files) and any(p.name == "build.py" for p in files)
    found = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for lineno, line in enumerate(text.splitlines(), start=1):
            if m := UNFOLLOWABLE.search(line):
                found.append(f"  {path.relative_to(PACKAGE_ROOT.parent)}:{lineno}: {m.group(0)!r} in {line.strip()[:100]}")
    assert not found, ("references a reader cannot follow — cite the paper by author, year and its number in "
                       "docs/references.md, or the rule by its section of docs/method.md, or say what it says:\n"
                       + "\n".join(found))



# ---------------------------------------------------------------------------- one number, one paper
#: A paper cited as *Author Year [n]* (``Snæbjarnarson et al. 2025 [1]``, ``Bender and
#: Farach-Colton 2000 [11]``).
CITATION = re.compile(r"([A-ZÀ-Þ][\w'\-]+)(?: et al\.| and [A-ZÀ-Þ][\w\-]+)? (\d{4}) \[(\d+)\]")


def reference_authors() -> dict[int, str]:
    """docs/references.md's numbers → the text of each entry before its title (its authors)."""
    text = (PACKAGE_ROOT.parent / "docs" / "references.md").read_text(encoding="utf-8")
    return {int(m.group(1)): m.group(2) for m in re.finditer(r"^(\d+)\. (.+?)\*\*", text, re.M | re.S)}


def test_one_number_means_one_paper_in_every_module():
    """Every *Author Year [n]* in the library names docs/references.md's paper [n]; no module
    numbers references of its own (numpydoc's ``.. [1]``, which made [1] another paper in each
    module); and a module whose docstring has a References block lists every number it cites."""
    authors = reference_authors()
    assert "Snæbjarnarson" in authors[1] and "Bender" in authors[11]
    assert CITATION.search("the reduction of Bender and Farach-Colton 2000 [11]").group(1, 3) == ("Bender", "11")
    found = []
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        rel = path.relative_to(PACKAGE_ROOT.parent)
        text = path.read_text(encoding="utf-8")
        cited = set()
        for lineno, line in enumerate(text.splitlines(), start=1):
            if re.match(r"\s*\.\. \[\d+\]", line):
                found.append(f"  {rel}:{lineno}: a reference numbered in the module: {line.strip()[:80]}")
            for m in CITATION.finditer(line):
                n = int(m.group(3))
                cited.add(n)
                if n not in authors or m.group(1).lower() not in authors[n].lower():
                    found.append(f"  {rel}:{lineno}: {m.group(0)!r}, but [{n}] of docs/references.md is "
                                 f"{authors.get(n, 'no entry')[:60]!r}")
        doc = ast.get_docstring(ast.parse(text)) or ""
        if "References\n----------" in doc:
            block = doc.split("References\n----------", 1)[1].split("\nExamples\n", 1)[0]
            listed = {int(x) for x in re.findall(r"\[(\d+)\]", block)}
            if cited - listed:
                found.append(f"  {rel}: cites {sorted(cited - listed)} that its References block does not list")
    assert not found, "citations that do not match docs/references.md:\n" + "\n".join(found)