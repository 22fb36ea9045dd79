"""One node's address: a server learns the other nodes and goes on when that node dies.

The node-kill test needs the test cluster to be a 3-node cluster of
``scripts/dev-cluster.sh`` whose state folder is ``SEARCHENGINE_CLUSTER_DIR``
(default ``~/.cache/searchengine/dev-cluster``, as CI starts it); it kills one
node that is neither the elected cluster manager nor named in
``SEARCHENGINE_TEST_CLUSTER``, and starts it again (waiting for green) however
the test ends.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from searchengine import build_index, open_index
from searchengine.engines.opensearch.client import learned_nodes
from searchengine.engines.opensearch.engine import OpenSearchEngine
from searchengine.engines.opensearch.location import parse_location
from searchengine.errors import ClusterError

REPO = Path(__file__).resolve().parents[3]
CORPUS = REPO / "corpus"


def published(cluster_client) -> tuple[tuple[str, int], ...]:
    """``((host, port), ...)`` of the test cluster's nodes, sorted."""
    nodes = cluster_client.nodes.info(metric="http")["nodes"].values()
    found = []
    for node in nodes:
        host, _, port = node["http"]["publish_address"].rpartition(":")
        found.append((host.split("/")[-1].strip("[]"), int(port)))
    return tuple(sorted(found))


@pytest.mark.cluster
def test_a_server_learns_the_nodes_and_adds_those_that_answer(
    cluster_client, cluster_url, location, index_name, monkeypatch
):
    build_index([CORPUS], location)
    nodes = published(cluster_client)
    host, port = parse_location(location).hosts[0]
    single = f"http://{host}:{port}/{index_name}"
    index = open_index(single)
    try:
        assert len(index.engine.client.transport.connection_pool.connections) == 1
        index.warm_up(1)  # what a server does before it serves
        assert learned_nodes(index.engine.cluster) == nodes
        assert len(index.engine.client.transport.connection_pool.connections) == len(nodes)
        every = open_index(location)
        try:
            assert index.search("matrix").total == every.search("matrix").total > 0
        finally:
            every.close()
    finally:
        index.close()

    monkeypatch.setenv("SEARCHENGINE_CLUSTER_SNIFF", "0")
    engine = OpenSearchEngine(single)
    try:
        assert engine.learn_nodes() == nodes
        assert len(engine.client.transport.connection_pool.connections) == 1
    finally:
        engine.close()


def _dev_cluster_dir() -> Path:
    return Path(os.environ.get("SEARCHENGINE_CLUSTER_DIR") or Path.home() / ".cache" / "searchengine" / "dev-cluster")


def _script(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, SEARCHENGINE_CLUSTER_DIR=str(_dev_cluster_dir()))
    return subprocess.run(
        ["bash", str(REPO / "scripts" / "dev-cluster.sh"), *args],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


@pytest.mark.cluster
def test_a_warmed_up_index_of_one_address_goes_on_when_that_node_dies(
    cluster_client, cluster_url, location, index_name
):
    state = _dev_cluster_dir() / "cluster.env"
    settings = dict(re.findall(r"^(\w+)=(\S*)$", state.read_text(), re.M)) if state.exists() else {}
    given = parse_location(cluster_url + "/x").hosts
    base, count = int(settings.get("HTTP_BASE") or 0), int(settings.get("NODES") or 0)
    if count < 3 or not all(host in ("127.0.0.1", "localhost") and base <= port < base + count for host, port in given):
        pytest.skip(
            f"needs the test cluster to be a dev cluster of 3 nodes or more whose state is in "
            f"{_dev_cluster_dir()} (SEARCHENGINE_CLUSTER_DIR)"
        )
    manager = cluster_client.cat.cluster_manager(format="json")[0]["node"]
    victim = max(i for i in range(count) if f"node-{i}" != manager and base + i not in {p for _, p in given})
    victim_port = base + victim

    build_index([CORPUS], location)  # one replica per shard: every shard outlives one node
    single = f"http://127.0.0.1:{victim_port}/{index_name}"
    index = open_index(single)
    killed = False
    try:
        index.warm_up(1)
        before = index.search("matrix", facets=("year",))
        assert before.total > 0

        done = _script("kill", str(victim))
        assert done.returncode == 0, done.stderr
        killed = True
        deadline = time.monotonic() + 60
        while cluster_client.cluster.health()["number_of_nodes"] != count - 1 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert cluster_client.cluster.health()["number_of_nodes"] == count - 1

        started = time.monotonic()
        after = index.search("matrix", facets=("year",))
        assert (after.total, after.facets, [hit.id for hit in after.hits]) == (
            before.total,
            before.facets,
            [hit.id for hit in before.hits],
        )
        assert index.doc_count == 24
        assert time.monotonic() - started < 10

        # A process that never learned the nodes has only the dead address, and says
        # which other nodes this process saw and how to name several.
        others = [f"127.0.0.1:{base + i}" for i in range(count) if i != victim]
        with pytest.raises(ClusterError) as caught:
            open_index(single).search("matrix")
        assert str(caught.value) == (
            f"{single}: search failed: cluster unreachable (connection refused); the cluster's other nodes "
            f"were {', '.join(others)} when last asked: name several in the location, so that another "
            f"answers when one is down (http://127.0.0.1:{victim_port},{','.join(others)}/{index_name})"
        )
    finally:
        index.close()
        if killed:
            done = _script("restart-node", str(victim))
            assert done.returncode == 0, done.stderr[-3000:]
