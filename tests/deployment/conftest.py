"""The docker-compose topology without Docker: Debian's PostgreSQL, the code location as a
gRPC server, the webserver and the daemon, as local processes on 127.0.0.1, with the
project's ``deploy/dagster.yaml`` and ``workspace.yaml``.

Every process is started in its own process group and stopped (TERM, then KILL) by the
fixture that started it; on a test failure the last lines of every log are printed."""

from __future__ import annotations

import glob
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
ARTIFACTS = Path(os.environ.get("TAXOFORGE_TEST_ARTIFACTS", REPO / "tests" / "artifacts"))
PG_USER = "taxoforge"
PG_PASSWORD = "taxoforge-test"
PG_DB = "dagster"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tail(path: Path, n: int = 60) -> str:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return "(no log)"
    return "\n".join(lines[-n:])


class Proc:
    """A child process in its own session, its output in ``log``."""

    def __init__(self, name: str, argv: list[str], log: Path, env: dict, cwd: Path, user: str | None = None):
        self.name, self.argv, self.log = name, argv, log
        if user:
            argv = ["runuser", "-u", user, "--", *argv]
        self._fh = open(log, "ab")
        self.popen = subprocess.Popen(argv, stdout=self._fh, stderr=subprocess.STDOUT, env=env, cwd=cwd,
                                      start_new_session=True)

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, timeout: float = 20) -> None:
        if self.alive():
            try:
                os.killpg(self.popen.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.popen.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.popen.wait(10)
        else:
            # The leader is gone; children (run workers) may still hold the group.
            try:
                os.killpg(self.popen.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self._fh.close()


class Logs:
    """Every log file of the stack, printed when a test fails."""

    def __init__(self) -> None:
        self.files: dict[str, Path] = {}

    def dump(self) -> str:
        return "\n".join(f"----- {name}: {path} -----\n{tail(path)}" for name, path in self.files.items())


LOGS = Logs()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.when == "call" and rep.failed and LOGS.files and "deployment" in str(item.fspath):
        rep.sections.append(("deployment logs", LOGS.dump()))


# --------------------------------------------------------------------------- PostgreSQL


def _pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


class Postgres:
    def __init__(self, bin_dir: Path, root: Path, port: int, user: str | None):
        self.bin_dir, self.root, self.port, self.user = bin_dir, root, port, user
        self.data = root / "pgdata"
        self.log = root / "postgres.log"

    def _run(self, argv: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
        if self.user:
            argv = ["runuser", "-u", self.user, "--", *argv]
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)

    def start(self) -> None:
        pwfile = self.root / "pw"
        pwfile.write_text(PG_PASSWORD + "\n")
        self.data.mkdir()
        if self.user:
            pw = pwd.getpwnam(self.user)
            for p in (self.data, pwfile, self.root):
                os.chown(p, pw.pw_uid, pw.pw_gid)
        r = self._run([str(self.bin_dir / "initdb"), "-D", str(self.data), "-U", PG_USER, "--pwfile", str(pwfile),
                       "--auth-host=scram-sha-256", "--auth-local=trust", "-E", "UTF8", "--no-sync"])
        if r.returncode:
            raise RuntimeError(f"initdb failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
        opts = (f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} -c fsync=off "
                "-c synchronous_commit=off -c full_page_writes=off -c max_connections=100")
        r = self._run([str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-o", opts, "-l", str(self.log),
                       "-w", "-t", "60", "start"])
        if r.returncode:
            raise RuntimeError(f"pg_ctl start failed ({r.returncode}):\n{r.stdout}\n{r.stderr}\n{tail(self.log)}")
        import psycopg2

        conn = psycopg2.connect(host="127.0.0.1", port=self.port, user=PG_USER, password=PG_PASSWORD,
                                dbname="postgres", connect_timeout=10)
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE {PG_DB}")
        conn.close()

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self._run([str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"], timeout=60)

    def connect(self):
        import psycopg2

        return psycopg2.connect(host="127.0.0.1", port=self.port, user=PG_USER, password=PG_PASSWORD,
                                dbname=PG_DB, connect_timeout=10)


@pytest.fixture(scope="module")
def postgres():
    """A throw-away PostgreSQL server on 127.0.0.1 (skips when the binaries are absent)."""
    pytest.importorskip("psycopg2", reason="psycopg2 is needed to query the Dagster storage")
    bin_dir = _pg_bin()
    if bin_dir is None:
        pytest.skip("PostgreSQL binaries not found (/usr/lib/postgresql/*/bin/initdb); "
                    "install Debian's postgresql package (scripts/install-system-deps.sh does)")
    user = None
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no 'postgres' system user to run PostgreSQL as")
        if not shutil.which("runuser"):
            pytest.skip("running as root and runuser is not available to drop privileges for PostgreSQL")
        user = "postgres"
    root = Path(tempfile.mkdtemp(prefix="taxoforge-pg-"))
    os.chmod(root, 0o755)
    pg = Postgres(bin_dir, root, free_port(), user)
    LOGS.files["postgres"] = pg.log
    try:
        pg.start()
        yield pg
    finally:
        pg.stop()
        shutil.rmtree(root, ignore_errors=True)


# --------------------------------------------------------------------------- Dagster


def http_json(url: str, payload: dict | None = None, timeout: float = 30) -> dict:
    data = json.dumps(payload).encode() if payload is not None else None
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read().decode())


class Stack:
    """The three Dagster processes of docker-compose.yml, on loopback."""

    def __init__(self, root: Path, pg: Postgres):
        self.root, self.pg = root, pg
        self.grpc_port, self.web_port = free_port(), free_port()
        self.home = root / "dagster_home"
        self.data_dir = root / "data"
        self.home.mkdir()
        self.data_dir.mkdir()
        shutil.copy(REPO / "deploy" / "dagster.yaml", self.home / "dagster.yaml")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DAGSTER_", "TAXOFORGE_CRON", "TAXOFORGE_SCHEDULE"))}
        env.update({
            "DAGSTER_HOME": str(self.home),
            "DAGSTER_POSTGRES_HOST": "127.0.0.1",
            "DAGSTER_POSTGRES_PORT": str(pg.port),
            "DAGSTER_POSTGRES_USER": PG_USER,
            "DAGSTER_POSTGRES_PASSWORD": PG_PASSWORD,
            "DAGSTER_POSTGRES_DB": PG_DB,
            "TAXOFORGE_CODE_HOST": "127.0.0.1",
            "TAXOFORGE_CODE_PORT": str(self.grpc_port),
            "TAXOFORGE_DATA_DIR": str(self.data_dir),
            "PYTHONPATH": os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
            "PYTHONUNBUFFERED": "1",
            "DAGSTER_DISABLE_TELEMETRY": "1",
        })
        self.env = env
        self.procs: list[Proc] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"

    def start(self, name: str, argv: list[str]) -> Proc:
        log = self.root / f"{name}.log"
        LOGS.files[name] = log
        p = Proc(name, argv, log, self.env, REPO)
        self.procs.append(p)
        return p

    def wait(self, what: str, fn, timeout: float, interval: float = 1.0, procs: list[Proc] | None = None):
        """Poll ``fn`` until it returns a truthy value; fail naming ``what`` (with logs) on timeout
        or when one of ``procs`` exits."""
        end = time.monotonic() + timeout
        last = None
        while time.monotonic() < end:
            for p in procs or self.procs:
                if not p.alive():
                    pytest.fail(f"{p.name} exited with code {p.popen.returncode} while waiting for {what}\n"
                                f"{LOGS.dump()}")
            try:
                value = fn()
                if value:
                    return value
            except (OSError, urllib.error.URLError, ValueError, KeyError, TypeError) as exc:
                last = exc
            time.sleep(interval)
        pytest.fail(f"timed out after {timeout:.0f} s waiting for {what} (last error: {last!r})\n{LOGS.dump()}")

    def graphql(self, query: str, variables: dict | None = None) -> dict:
        out = http_json(f"{self.url}/graphql", {"query": query, "variables": variables or {}})
        if out.get("errors"):
            raise AssertionError(f"GraphQL errors: {out['errors']}")
        return out["data"]

    def stop(self) -> None:
        for p in reversed(self.procs):
            p.stop()


WORKSPACE_QUERY = """
{ workspaceOrError { __typename ... on Workspace { locationEntries { name loadStatus
    locationOrLoadError { __typename ... on PythonError { message } } } } } }
"""


@pytest.fixture(scope="module")
def dagster_stack(postgres):
    """Code server, webserver and daemon against ``postgres``; yields a :class:`Stack`."""
    for exe in ("dagster", "dagster-webserver", "dagster-daemon"):
        if not (VENV_BIN / exe).exists():
            pytest.skip(f"{exe} not installed beside {sys.executable}")
    root = Path(tempfile.mkdtemp(prefix="taxoforge-stack-"))
    stack = Stack(root, postgres)
    try:
        grpc = stack.start("code_server", [str(VENV_BIN / "dagster"), "api", "grpc", "-m", "pipelines.definitions",
                                           "-h", "127.0.0.1", "-p", str(stack.grpc_port),
                                           "--location-name", "taxoforge", "-d", str(REPO)])

        def grpc_healthy() -> bool:
            r = subprocess.run([str(VENV_BIN / "dagster"), "api", "grpc-health-check", "-h", "127.0.0.1",
                                "-p", str(stack.grpc_port)], capture_output=True, timeout=60, env=stack.env)
            return r.returncode == 0

        stack.wait("the code server's gRPC health check", grpc_healthy, timeout=150, interval=2, procs=[grpc])
        web = stack.start("webserver", [str(VENV_BIN / "dagster-webserver"), "-h", "127.0.0.1",
                                        "-p", str(stack.web_port), "-w", str(REPO / "workspace.yaml")])
        stack.start("daemon", [str(VENV_BIN / "dagster-daemon"), "run", "-w", str(REPO / "workspace.yaml")])
        stack.wait("the webserver", lambda: http_json(f"{stack.url}/server_info", timeout=5), timeout=120,
                   procs=[grpc, web])

        def location_loaded():
            entries = stack.graphql(WORKSPACE_QUERY)["workspaceOrError"]["locationEntries"]
            entry = next(e for e in entries if e["name"] == "taxoforge")
            loc = entry["locationOrLoadError"]
            if loc and loc["__typename"] == "PythonError":
                pytest.fail(f"code location failed to load in the webserver: {loc['message']}\n{LOGS.dump()}")
            return entry["loadStatus"] == "LOADED" and loc and loc["__typename"] == "RepositoryLocation"

        stack.wait("the code location in the webserver", location_loaded, timeout=120)
        yield stack
    finally:
        stack.stop()
        shutil.rmtree(root, ignore_errors=True)
