"""The set-up of the checkout: the design card's top-level layout, and the lock files.

The lock files (``requirements/demo.lock``, ``requirements/test.lock``) are hashed
requirements files made by ``uv pip compile --generate-hashes`` from ``pyproject.toml``
(``make lock``), and
``make demo`` / ``make test`` install from them alone. These tests fail, offline, as soon
as the two disagree: a requirement of ``pyproject.toml`` with no pin or a pin outside its
range, a pin that no requirement asks for any more, a pin without hashes, the demo's pins
not those of the tests, or the CPU build of PyTorch turned into a CUDA one. And, in an
environment that ``make`` set up, every pinned distribution is installed at its pinned
version.
"""

from __future__ import annotations

import re
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.conftest import REPO

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

LOCKS = REPO / "requirements"
PROJECT = "taxoforge"


# --------------------------------------------------------------------------- the layout

def test_the_design_cards_top_level_layout():
    for name in ("pyproject.toml", "docker-compose.yml"):
        assert (REPO / name).is_file(), f"{name} is missing at the top level"
    for name in ("pipelines", "assets", "sql", "data", "tests", "taxoforge"):
        assert (REPO / name).is_dir(), f"{name}/ is missing at the top level"
    assert not (REPO / "setup.py").exists()  # one build configuration: pyproject.toml


def test_sql_is_the_home_of_the_queries_and_the_package_links_to_it():
    sql = REPO / "sql"
    assert sql.is_dir() and not sql.is_symlink()
    assert sorted(p.name for p in (sql / "wikidata").glob("*.rq")), "no .rq files in sql/wikidata"
    link = REPO / "taxoforge" / "sql"
    assert link.is_symlink() and link.resolve() == sql.resolve(), "taxoforge/sql must be a link to ../sql"
    from taxoforge.sources.wikidata.queries import query_dir

    assert Path(str(query_dir())).resolve() == (sql / "wikidata").resolve()


# --------------------------------------------------------------------------- the lock files

class Pin:
    """One ``name==version`` of a pip-compile output: its hashes and what asked for it."""

    def __init__(self, name: str, version: str, line: int):
        self.name, self.version, self.line = canonicalize_name(name), version, line
        self.hashes: set[str] = set()
        self.via: list[str] = []


def read_lock(path: Path) -> dict[str, Pin]:
    """The pins of a hashed requirements file (``uv pip compile --generate-hashes``, the
    format of pip-tools too): ``name==version``, its ``--hash=`` lines and ``# via`` notes."""
    pins: dict[str, Pin] = {}
    current: Pin | None = None
    in_via = False
    for no, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+?)\s*(\\)?$", raw)
        if m:
            current = Pin(m.group(1), m.group(2), no)
            assert current.name not in pins, f"{path.name}:{no}: {current.name} pinned twice"
            pins[current.name] = current
            in_via = False
            continue
        if current is None or not line:
            continue
        if line.startswith("--hash="):
            current.hashes.add(line.removeprefix("--hash=").rstrip(" \\"))
        elif line.startswith("# via"):
            rest = line.removeprefix("# via").strip()
            in_via = not rest
            if rest:
                current.via.append(rest)
        elif in_via and line.startswith("#   "):
            current.via.append(line.removeprefix("#").strip())
        elif raw[:1] not in (" ", "#"):
            raise AssertionError(f"{path.name}:{no}: expected 'name==version' or its hashes, got {raw!r}")
    return pins


def _pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def pyproject_requirements(extras: list[str]) -> list[Requirement]:
    """The requirements of ``pyproject.toml`` for the base install plus ``extras``, whose
    markers hold on this Python and platform."""
    project = _pyproject()["project"]
    optional = project.get("optional-dependencies", {})
    unknown = set(extras) - set(optional)
    assert not unknown, f"the lock names extras that pyproject.toml does not have: {sorted(unknown)}"
    reqs = []
    for extra, texts in [("", project.get("dependencies", []))] + [(e, optional[e]) for e in extras]:
        for text in texts:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({**default_environment(), "extra": extra}):
                reqs.append(req)
    return reqs


def build_requirements() -> list[Requirement]:
    """``[build-system] requires``: locked too, since ``make`` builds the project without isolation."""
    return [Requirement(t) for t in _pyproject()["build-system"]["requires"]]


def _make_dry_run(tmp_path: Path, *targets: str) -> list[str]:
    """The commands ``make`` would run for ``targets`` from scratch, variables expanded."""
    import shutil
    import subprocess

    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    out = subprocess.run(["make", "-n", "-B", *targets, f"VENV={tmp_path / 'venv'}"], cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.replace("\\\n", " ").splitlines()


#: The lock files and the extras of ``pyproject.toml`` each one covers.
LOCK_FILES = {"demo.lock": ["dagster"], "test.lock": ["dagster", "dev", "embeddings", "s3", "spark"]}


@pytest.fixture(scope="module", params=sorted(LOCK_FILES))
def lock(request):
    path = LOCKS / request.param
    assert path.is_file(), f"{path} is missing: run `make lock`"
    return path, read_lock(path), LOCK_FILES[request.param]


def test_make_lock_compiles_each_lock_for_its_extras(tmp_path):
    lines = [x for x in _make_dry_run(tmp_path, "lock") if " pip compile " in x]
    for name, extras in LOCK_FILES.items():
        (line,) = [x for x in lines if f"-o requirements/{name}" in x]
        assert sorted(re.findall(r"--extra[= ](\S+)", line)) == extras, line
        assert "--generate-hashes" in line and "requirements/build.in" in line, line


def test_the_build_requirements_are_locked_as_pyproject_states_them():
    listed = [Requirement(x) for x in (LOCKS / "build.in").read_text().splitlines() if x.strip() and x[0] != "#"]
    assert sorted(map(str, listed)) == sorted(map(str, build_requirements())), (
        "requirements/build.in must repeat pyproject.toml's [build-system] requires")


def test_every_requirement_of_pyproject_has_a_pin_in_its_range(lock):
    path, pins, extras = lock
    for req in pyproject_requirements(extras) + build_requirements():
        name = canonicalize_name(req.name)
        assert name in pins, f"pyproject.toml requires {req} but {path.name} has no pin for it: run `make lock`"
        pinned = Version(pins[name].version)
        assert req.specifier.contains(pinned, prereleases=True), (
            f"pyproject.toml requires {req} but {path.name}:{pins[name].line} pins {name}=={pinned}: run `make lock`")


def test_every_pin_is_still_asked_for_and_has_hashes(lock):
    path, pins, extras = lock
    direct = {canonicalize_name(r.name) for r in pyproject_requirements(extras)}
    built = {canonicalize_name(r.name) for r in build_requirements()}
    for pin in pins.values():
        assert pin.hashes, f"{path.name}:{pin.line}: {pin.name} has no --hash (--generate-hashes)"
        assert pin.via, f"{path.name}:{pin.line}: {pin.name} says nothing of what asked for it"
        for parent in pin.via:
            if parent.startswith(f"{PROJECT} ("):
                assert pin.name in direct, (f"{path.name}:{pin.line}: {pin.name} is pinned as a requirement of "
                                            "pyproject.toml, which no longer asks for it: run `make lock`")
            elif parent == "-r requirements/build.in":
                assert pin.name in built, f"{path.name}:{pin.line}: {pin.name} is no build requirement"
            elif not parent.startswith("-c "):
                assert canonicalize_name(parent) in pins, (
                    f"{path.name}:{pin.line}: {pin.name} is pinned for {parent}, which is not in the lock")


def test_the_demo_installs_the_tests_versions():
    demo, test = read_lock(LOCKS / "demo.lock"), read_lock(LOCKS / "test.lock")
    assert set(demo) <= set(test), f"pinned for the demo only: {sorted(set(demo) - set(test))}"
    for name, pin in demo.items():
        assert (pin.version, pin.hashes) == (test[name].version, test[name].hashes), (
            f"{name}: demo.lock pins {pin.version}, test.lock {test[name].version}: run `make lock`")


def test_torch_is_the_cpu_build_and_pulls_no_cuda():
    test = read_lock(LOCKS / "test.lock")
    wanted = [Requirement(x) for x in (LOCKS / "lock-constraints.txt").read_text().splitlines()
              if x.strip() and not x.startswith("#")]
    torch = next(r for r in wanted if r.name == "torch")
    assert "torch" in test and test["torch"].version == str(torch.specifier).removeprefix("=="), "torch"
    assert Version(test["torch"].version).local == "cpu"
    cuda = sorted(n for n in test if n.startswith(("nvidia-", "triton", "cuda-")))
    assert not cuda, f"the lock pulls CUDA packages: {cuda}"


def test_make_installs_from_the_lock_files_alone(tmp_path):
    """Every install command of ``make demo`` and ``make test`` (as ``make -n`` prints them)
    installs lock files with their hashes checked, or the project itself with ``--no-deps``."""
    lines = _make_dry_run(tmp_path, "demo", "test")
    installs = [x for x in lines if re.search(r"\b(pip|uv)\b.*\b(install|sync)\b", x)]
    assert len(installs) >= 5, lines
    for line in installs:
        assert not re.search(r"[A-Za-z0-9_\]'\"]\s*(==|>=|<=|~=|!=)", line), f"a version outside the lock: {line}"
        locks = re.findall(r"requirements/([\w-]+\.lock)\b", line)
        assert locks or re.search(r"--no-deps\b.*-e \.", line), f"installs without a lock file: {line}"
        if locks:
            assert "--require-hashes" in line, f"hashes not checked: {line}"
    synced = {name for line in installs for name in re.findall(r"requirements/([\w-]+\.lock)\b", line)}
    assert synced == {"demo.lock", "test.lock", "tools.lock"}, synced


def test_an_environment_set_up_by_make_has_the_locked_versions():
    """Only where this interpreter is the checkout's own ``.venv`` that ``make`` set up."""
    stamps = {"test.lock": REPO / ".venv" / ".installed-test", "demo.lock": REPO / ".venv" / ".installed-demo"}
    if Path(sys.prefix).resolve() != (REPO / ".venv").resolve():
        pytest.skip(f"not the checkout's .venv ({sys.prefix})")
    name = next((n for n, stamp in stamps.items() if stamp.exists()), None)
    if name is None:
        pytest.skip("the checkout's .venv was not set up by make")
    pins = read_lock(LOCKS / name)
    wrong = []
    for pin in pins.values():
        try:
            got = version(pin.name)
        except PackageNotFoundError:
            got = None
        if got is None or Version(got) != Version(pin.version):
            wrong.append(f"{pin.name}: {got} installed, {pin.version} locked")
    assert not wrong, f"{name}: " + "; ".join(wrong)
