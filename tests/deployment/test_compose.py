"""docker-compose.yml, statically: valid against the Compose specification (Debian's
docker-compose validates with the spec's JSON schema, no Docker engine needed) and shaped
like Dagster's Docker deployment — PostgreSQL with a healthcheck, the code location as a
gRPC server, the webserver and the daemon — with data/ on a volume."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
COMPOSE = REPO / "docker-compose.yml"


@pytest.fixture(scope="module")
def resolved() -> dict:
    """The file as ``docker-compose config`` resolves it (anchors merged, variables filled)."""
    exe = shutil.which("docker-compose")
    if exe is None:
        pytest.skip("docker-compose not installed (scripts/install-system-deps.sh installs Debian's)")
    r = subprocess.run([exe, "-f", str(COMPOSE), "config"], capture_output=True, text=True, timeout=60,
                       cwd=REPO, env={"PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, f"docker-compose config rejected {COMPOSE}:\n{r.stderr}"
    return yaml.safe_load(r.stdout)


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
                       cwd=tmp_path, env={"PATH": "/usr/bin:/bin"})
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
