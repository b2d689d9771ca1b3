"""docker-compose.yml, statically: valid against the Compose specification (Debian's
docker-compose validates with the spec's JSON schema, no Docker engine needed) and shaped
like Dagster's Docker deployment — PostgreSQL with a healthcheck, the code location as a
gRPC server, the webserver and the daemon — with data/ on a volume.

And safe by default (docs/security.md): the UI published on 127.0.0.1
only, no default database password (compose refuses to start without one), no container
running as root, files written with the umask the deployer chose."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
COMPOSE = REPO / "docker-compose.yml"
DOCKERFILE = REPO / "Dockerfile"
ENTRYPOINT = REPO / "deploy" / "entrypoint.sh"
DAGSTER_SERVICES = ("taxoforge_code", "webserver", "daemon")
TEST_PASSWORD = "compose-test-password"


def _compose_exe() -> str:
    exe = shutil.which("docker-compose")
    if exe is None:
        pytest.skip("docker-compose not installed (scripts/install-system-deps.sh installs Debian's)")
    return exe


def compose_config(tmp_path: Path, env: dict[str, str], *files: Path) -> subprocess.CompletedProcess:
    """``docker-compose config`` of ``files`` (default: the project's file) with exactly the
    variables ``env`` — an empty ``--env-file`` keeps a developer's ``.env`` out of it."""
    env_file = tmp_path / "empty.env"
    env_file.write_text("")
    args = [a for f in (files or (COMPOSE,)) for a in ("-f", str(f))]
    return subprocess.run([_compose_exe(), "--env-file", str(env_file), *args, "config"], capture_output=True,
                          text=True, timeout=60, cwd=REPO, env={"PATH": "/usr/bin:/bin", **env})


def resolve(tmp_path: Path, **env: str) -> dict:
    r = compose_config(tmp_path, {"DAGSTER_POSTGRES_PASSWORD": TEST_PASSWORD, **env})
    assert r.returncode == 0, f"docker-compose config rejected {COMPOSE}:\n{r.stderr}"
    return yaml.safe_load(r.stdout)


@pytest.fixture(scope="module")
def resolved(tmp_path_factory) -> dict:
    """The file as ``docker-compose config`` resolves it (anchors merged, variables filled),
    with the one variable that has no default: the database password."""
    return resolve(tmp_path_factory.mktemp("compose"))


def test_schema_validation_catches_a_broken_file(tmp_path):
    """The validator is real: a misspelt key in a copy of the file is rejected."""
    exe = shutil.which("docker-compose")
    if exe is None:
        pytest.skip("docker-compose not installed")
    bad = tmp_path / "docker-compose.yml"
    text = COMPOSE.read_text()
    assert "      interval: 5s\n" in text
    bad.write_text(text.replace("      interval: 5s\n", "      intervall: 5s\n", 1))
    r = subprocess.run([exe, "-f", str(bad), "config", "-q"], capture_output=True, text=True, timeout=60,
                       cwd=tmp_path, env={"PATH": "/usr/bin:/bin", "DAGSTER_POSTGRES_PASSWORD": TEST_PASSWORD})
    assert r.returncode != 0 and "intervall" in r.stderr


def _command(svc: dict) -> list[str]:
    cmd = svc.get("command") or []
    return cmd.split() if isinstance(cmd, str) else list(cmd)


def test_postgres_with_healthcheck(resolved):
    pg = resolved["services"]["postgres"]
    assert pg["image"].startswith("postgres:")
    assert "pg_isready" in " ".join(pg["healthcheck"]["test"])
    assert any(v["target"] == "/var/lib/postgresql/data" if isinstance(v, dict) else
               v.split(":")[1] == "/var/lib/postgresql/data" for v in pg["volumes"])


def test_dagster_services_and_their_order(resolved):
    svcs = resolved["services"]
    code = svcs["taxoforge_code"]
    assert _command(code)[:3] == ["dagster", "api", "grpc"] and "pipelines.definitions" in _command(code)
    assert _command(svcs["webserver"])[0] == "dagster-webserver" and "workspace.yaml" in _command(svcs["webserver"])
    assert _command(svcs["daemon"])[:2] == ["dagster-daemon", "run"]
    assert svcs["webserver"]["ports"], "the UI port is not published"
    for name in ("taxoforge_code", "webserver", "daemon"):
        deps = svcs[name]["depends_on"]
        assert deps["postgres"]["condition"] == "service_healthy", name
        env = svcs[name]["environment"]
        for var in ("DAGSTER_POSTGRES_HOST", "DAGSTER_POSTGRES_USER", "DAGSTER_POSTGRES_PASSWORD",
                    "DAGSTER_POSTGRES_DB", "DAGSTER_POSTGRES_PORT"):
            assert env.get(var), f"{name}: {var} not set"
        assert env["DAGSTER_POSTGRES_HOST"] == "postgres"
    for name in ("webserver", "daemon"):
        assert svcs[name]["depends_on"]["taxoforge_code"]["condition"] == "service_healthy"
        env = svcs[name]["environment"]
        assert (env["TAXOFORGE_CODE_HOST"], env["TAXOFORGE_CODE_PORT"]) == ("taxoforge_code", "4000")
    assert "4000" in _command(code)
    assert "grpc-health-check" in " ".join(code["healthcheck"]["test"])


def test_data_directory_is_a_volume_shared_by_the_runs(resolved):
    svcs = resolved["services"]
    data_dir = svcs["taxoforge_code"]["environment"]["TAXOFORGE_DATA_DIR"]

    def targets(svc):
        return {(v["target"] if isinstance(v, dict) else v.split(":")[1]): v for v in svc.get("volumes", [])}

    # Runs execute in the code server (DefaultRunLauncher): its data dir must be on a volume.
    assert data_dir in targets(svcs["taxoforge_code"])
    source = targets(svcs["taxoforge_code"])[data_dir]
    source = source["source"] if isinstance(source, dict) else source.split(":")[0]
    assert Path(source) == REPO / "data"  # on the host: survives restarts and `down`
    for name in ("webserver", "daemon"):
        assert data_dir in targets(svcs[name])
    # the snapshot store the assets publish to is the one `taxoforge score` reads in the containers, on that volume
    for name in ("taxoforge_code", "webserver", "daemon"):
        assert svcs[name]["environment"]["TAXOFORGE_STORE"] == f"{data_dir}/snapshots", name


def test_instance_and_workspace_files_are_the_ones_the_image_uses():
    docker = (REPO / "Dockerfile").read_text()
    assert "COPY deploy/dagster.yaml ${DAGSTER_HOME}/dagster.yaml" in docker
    assert "COPY workspace.yaml" in docker
    inst = yaml.safe_load((REPO / "deploy" / "dagster.yaml").read_text())
    db = inst["storage"]["postgres"]["postgres_db"]
    assert {k: v["env"] for k, v in db.items() if isinstance(v, dict)} == {
        "hostname": "DAGSTER_POSTGRES_HOST", "port": "DAGSTER_POSTGRES_PORT", "username": "DAGSTER_POSTGRES_USER",
        "password": "DAGSTER_POSTGRES_PASSWORD", "db_name": "DAGSTER_POSTGRES_DB"}
    assert inst["run_coordinator"]["class"] == "QueuedRunCoordinator"
    assert inst["run_retries"]["enabled"] is True
    ws = yaml.safe_load((REPO / "workspace.yaml").read_text())
    (entry,) = ws["load_from"]
    assert entry["grpc_server"]["location_name"] == "taxoforge"


# --------------------------------------------------------------------------- safe by default


def _ports(svc: dict) -> list[tuple[str | None, str, str]]:
    """(host ip, host port, container port) of each published port, in either output form of
    ``docker-compose config`` (Compose v1 strings, Compose v2 mappings)."""
    out = []
    for p in svc.get("ports") or []:
        if isinstance(p, dict):
            out.append((p.get("host_ip"), str(p.get("published")), str(p["target"])))
            continue
        parts = str(p).split("/")[0].split(":")
        if len(parts) == 3:
            out.append((parts[0], parts[1], parts[2]))
        elif len(parts) == 2:
            out.append((None, parts[0], parts[1]))
        else:
            out.append((None, None, parts[0]))
    return out


def test_ui_open_to_the_world_attack_ui_published_on_loopback_only(resolved, tmp_path):
    """The UI launches runs with arbitrary source URLs and paths and has no authentication:
    by default it is reachable from this machine only, and nothing else is published."""
    assert _ports(resolved["services"]["webserver"]) == [("127.0.0.1", "3000", "3000")]
    for name, svc in resolved["services"].items():
        if name != "webserver":
            assert not svc.get("ports"), f"{name} publishes {svc['ports']}"
    # The port moves, the interface stays loopback.
    assert _ports(resolve(tmp_path, TAXOFORGE_UI_PORT="8080")["services"]["webserver"]) == [
        ("127.0.0.1", "8080", "3000")]
    # The documented switch for a reverse proxy on another interface does what it says.
    opened = resolve(tmp_path, TAXOFORGE_UI_BIND="10.1.2.3")["services"]["webserver"]
    assert _ports(opened) == [("10.1.2.3", "3000", "3000")]
    doc = (REPO / "docs" / "deployment.md").read_text()
    assert "TAXOFORGE_UI_BIND" in doc and "basic_auth" in doc and "auth_basic" in doc


def test_default_database_password_attack_compose_refuses_to_start_without_one(tmp_path):
    """No default database password: without DAGSTER_POSTGRES_PASSWORD (unset or empty)
    compose refuses the file, naming the variable."""
    for env in ({}, {"DAGSTER_POSTGRES_PASSWORD": ""}):
        r = compose_config(tmp_path, env)
        assert r.returncode != 0, f"compose accepted the file without a password (env {env})"
        assert "DAGSTER_POSTGRES_PASSWORD" in r.stderr and "no default" in r.stderr
    text = COMPOSE.read_text()
    assert not re.search(r"DAGSTER_POSTGRES_PASSWORD:-", text), "a default password is back in the file"
    # What is given is what the database and every Dagster service get.
    svcs = resolve(tmp_path, DAGSTER_POSTGRES_PASSWORD="s3cret!")["services"]
    assert svcs["postgres"]["environment"]["POSTGRES_PASSWORD"] == "s3cret!"
    for name in DAGSTER_SERVICES:
        assert svcs[name]["environment"]["DAGSTER_POSTGRES_PASSWORD"] == "s3cret!", name


def _is_root(user: str | None) -> bool:
    if not user:
        return True  # the image's default; for the official images that is root
    name = str(user).split(":")[0]
    return name in ("root", "0")


def test_containers_as_root_attack_every_service_runs_as_a_non_root_user(resolved, tmp_path):
    svcs = resolved["services"]
    for name, svc in svcs.items():
        assert not _is_root(svc.get("user")), f"{name} runs as root ({svc.get('user')!r})"
    assert svcs["postgres"]["user"] == "postgres"
    for name in DAGSTER_SERVICES:
        assert svcs[name]["user"] == "10001:10001", name
        assert svcs[name]["build"]["args"] == {"TAXOFORGE_UID": "10001", "TAXOFORGE_GID": "10001"}, name
    # The deployer's own uid/gid reach both the image (build args) and the containers.
    mine = resolve(tmp_path, TAXOFORGE_UID="1234", TAXOFORGE_GID="2345")["services"]
    for name in DAGSTER_SERVICES:
        assert mine[name]["user"] == "1234:2345"
        assert mine[name]["build"]["args"] == {"TAXOFORGE_UID": "1234", "TAXOFORGE_GID": "2345"}
        assert mine[name]["environment"]["TAXOFORGE_UMASK"] == "0022"


def _dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile, continuation lines joined, comments dropped."""
    out, buf = [], ""
    for line in text.splitlines():
        if not buf and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            buf += line.rstrip()[:-1] + " "
            continue
        buf += line
        word, _, rest = buf.strip().partition(" ")
        out.append((word.upper(), rest.strip()))
        buf = ""
    return out


def test_containers_as_root_attack_image_user_has_a_fixed_non_root_uid():
    ins = _dockerfile_instructions(DOCKERFILE.read_text())
    args = dict(a.split("=", 1) for k, a in ins if k == "ARG" and "=" in a)
    assert args["TAXOFORGE_UID"].isdigit() and int(args["TAXOFORGE_UID"]) > 0
    assert args["TAXOFORGE_GID"].isdigit() and int(args["TAXOFORGE_GID"]) > 0
    users = [i for i, (k, _) in enumerate(ins) if k == "USER"]
    assert users, "the image has no USER: it runs as root"
    assert ins[users[-1]][1] == "${TAXOFORGE_UID}:${TAXOFORGE_GID}"
    # Nothing runs as root after the switch, and uid 0 is refused at build time.
    assert all(k != "USER" or i == users[-1] for i, (k, _) in enumerate(ins[users[-1]:], users[-1]))
    run_user = next(a for k, a in ins if k == "RUN" and "useradd" in a)
    assert '"$TAXOFORGE_UID" = 0' in run_user and "exit 1" in run_user
    assert '--uid "$TAXOFORGE_UID"' in run_user
    entry = next(a for k, a in ins if k == "ENTRYPOINT")
    assert "taxoforge-entrypoint" in entry
    assert "COPY deploy/entrypoint.sh /usr/local/bin/taxoforge-entrypoint" in DOCKERFILE.read_text()


def _as_uid(root: bool) -> list[str]:
    """A command prefix that runs what follows as root (uid 0) or as a user that is not,
    whichever user the tests run as: ``unshare --user`` gives a process of root uid 65534
    in a new user namespace (it keeps its access to the files it owns),
    ``unshare --user --map-root-user`` gives a user's process uid 0 there."""
    if (os.getuid() == 0) == root:
        return []
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare (util-linux) to run the entry point as " + ("root" if root else "a non-root user"))
    probe = subprocess.run(["unshare", "--user", *(["--map-root-user"] if root else []), "id", "-u"],
                           capture_output=True, text=True)
    if probe.returncode != 0 or (probe.stdout.strip() == "0") != root:
        pytest.skip(f"user namespaces are not available here ({probe.stderr.strip() or probe.stdout.strip()})")
    return ["unshare", "--user", *(["--map-root-user"] if root else [])]


def _entrypoint(tmp_path: Path, umask: str | None, *argv: str, root: bool = False) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(REPO)}
    if umask is not None:
        env["TAXOFORGE_UMASK"] = umask
    return subprocess.run([*_as_uid(root), "sh", str(ENTRYPOINT), *argv], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, env=env)


def test_containers_as_root_attack_the_entrypoint_refuses_uid_0_at_start_up(tmp_path):
    """``docker run --user 0`` or ``user: root`` in a compose file passes the build-time
    check; the entry point refuses uid 0 before running anything. (Run as root, the test
    runs the script directly; as another user, in a user namespace that maps it to uid 0.)"""
    marker = tmp_path / "ran"
    r = _entrypoint(tmp_path, None, "touch", str(marker), root=True)
    assert r.returncode == 77 and "refusing to run as root (uid 0)" in r.stderr
    assert not marker.exists()
    r = _entrypoint(tmp_path, None, "touch", str(marker))  # the same call as a non-root user runs
    assert r.returncode == 0, r.stderr
    assert marker.exists()


_WRITE_TREE_TABLE = (
    "import sys, polars as pl; from taxoforge.trees.tables import write_parquet_atomic; "
    "write_parquet_atomic(pl.DataFrame({'a': [1]}), sys.argv[1])")


@pytest.mark.parametrize("umask,mode", [("0022", 0o644), ("0027", 0o640), ("0002", 0o664), (None, 0o644)])
def test_root_owned_0600_files_attack_data_files_follow_the_deployers_umask(tmp_path, umask, mode):
    """The entry point sets TAXOFORGE_UMASK (default 0022) and the pipeline's data files
    follow it — not a fixed 0600 from a temporary file, not root-owned."""
    out = tmp_path / "assets" / "t" / "nodes.parquet"
    r = _entrypoint(tmp_path, umask, sys.executable, "-c", _WRITE_TREE_TABLE, str(out))
    assert r.returncode == 0, r.stderr
    assert stat.S_IMODE(out.stat().st_mode) == mode
    assert out.stat().st_uid == os.getuid()


@pytest.mark.parametrize("bad", ["22; rm -rf /", "0999", "abc", ""])
def test_entrypoint_refuses_a_malformed_umask(tmp_path, bad):
    marker = tmp_path / "ran"
    r = _entrypoint(tmp_path, bad, "touch", str(marker))
    if bad == "":  # empty means unset: the default applies
        assert r.returncode == 0 and marker.exists()
        return
    assert r.returncode == 64 and "TAXOFORGE_UMASK" in r.stderr
    assert not marker.exists()
