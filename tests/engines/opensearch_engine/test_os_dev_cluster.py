"""scripts/dev-cluster.sh finds the nodes it started wherever their directory is.

The test starts its own one-node cluster (on a free port from
:data:`FIRST_PORT`, its directory under pytest's temporary folder), so the
cluster the other tests share is never touched, and stops it however the
test ends.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SCRIPT = REPO / "scripts" / "dev-cluster.sh"
FIRST_PORT = 9260


def _free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_base_port() -> int:
    """An HTTP port whose transport port (+100) is free too."""
    for base in range(FIRST_PORT, FIRST_PORT + 100, 3):
        if _free(base) and _free(base + 100):
            return base
    pytest.fail(f"no free port pair from {FIRST_PORT}", pytrace=False)


def alive(pid: int) -> bool:
    """Running and not a zombie (a daemonised node's parent may never reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def script(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=900, cwd=REPO, check=False
    )


@pytest.fixture
def script_env(tmp_path) -> dict:
    if not shutil.which("java") and not os.environ.get("SEARCHENGINE_JAVA_HOME"):
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("no Java to run OpenSearch on", pytrace=False)
        pytest.skip("needs Java 11-21 to run OpenSearch (scripts/dev-cluster.sh)")
    env = dict(
        os.environ,
        SEARCHENGINE_CLUSTER_PORT=str(free_base_port()),
        SEARCHENGINE_CLUSTER_DIR=str(tmp_path / "started-here"),
        SEARCHENGINE_CLUSTER_NAME="searchengine-stop-test",
    )
    # Settings of another cluster (CI exports its own) must not leak in.
    env.pop("SEARCHENGINE_CLUSTER_TRANSPORT_PORT", None)
    yield env
    script("stop", env=env)


@pytest.mark.cluster
def test_stop_with_another_directory_stops_the_cluster_that_runs(script_env, tmp_path):
    port = script_env["SEARCHENGINE_CLUSTER_PORT"]
    started = script("start", "1", env=script_env)
    assert started.returncode == 0, started.stderr[-3000:]
    assert started.stdout == f"http://127.0.0.1:{port}\n"
    pid = int((tmp_path / "started-here" / "node-0" / "opensearch.pid").read_text())
    assert alive(pid)

    elsewhere = dict(script_env, SEARCHENGINE_CLUSTER_DIR=str(tmp_path / "elsewhere"))
    status = script("status", env=elsewhere)
    assert status.returncode == 3
    assert status.stdout.startswith(f"no dev cluster configured in {tmp_path / 'elsewhere'}\n")
    assert (
        f"  cluster 'searchengine-stop-test', 1 of 1 node(s) running, http 127.0.0.1:{port}, "
        f"dir {tmp_path / 'started-here'}\n"
    ) in status.stdout

    stopped = script("stop", env=elsewhere)
    assert stopped.returncode == 0, stopped.stderr
    assert f"no cluster in {tmp_path / 'elsewhere'}; stopping the one running elsewhere" in stopped.stderr
    assert not alive(pid)
    assert not (tmp_path / "started-here" / "node-0" / "opensearch.pid").exists()

    again = script("stop", env=elsewhere)
    assert again.returncode == 0 and "no node running" in again.stderr
    status = script("status", env=script_env)
    assert status.returncode == 3
    assert "  node-0  stopped" in status.stdout
