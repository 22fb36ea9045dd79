"""Fixtures for the OpenSearch engine's tests: a real cluster, never a mock.

The cluster's URL comes from ``SEARCHENGINE_TEST_CLUSTER`` (for example
``http://127.0.0.1:9200`` after ``scripts/dev-cluster.sh start``). Without
it the tests that need a cluster are skipped with one reason, except under
``CI=true``, where a missing cluster is a failure. Each test writes under a
unique index name and deletes everything it made (the alias, its physical
indexes and its lock index).
"""

from __future__ import annotations

import os
import uuid

import pytest

CLUSTER_VARIABLE = "SEARCHENGINE_TEST_CLUSTER"
SKIP_REASON = (
    f"needs an OpenSearch cluster: scripts/dev-cluster.sh start, then {CLUSTER_VARIABLE}=http://127.0.0.1:9200"
)


@pytest.fixture(scope="session")
def cluster_url() -> str:
    """The test cluster's URL, without an index name (``http://127.0.0.1:9200``)."""
    url = os.environ.get(CLUSTER_VARIABLE, "").strip().rstrip("/")
    if not url:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(
                f"{CLUSTER_VARIABLE} is not set under CI=true: the OpenSearch tests must run "
                "(start a cluster with scripts/dev-cluster.sh start)",
                pytrace=False,
            )
        pytest.skip(SKIP_REASON)
    return url


@pytest.fixture(scope="session")
def cluster_client(cluster_url):
    """A client of the test cluster (for checks that look behind the writer)."""
    from searchengine.engines.opensearch.client import connect
    from searchengine.engines.opensearch.location import parse_location

    client = connect(parse_location(cluster_url + "/probe"))
    try:
        client.cluster.health()
    except Exception as exc:  # noqa: BLE001 - any failure means there is no usable cluster
        pytest.fail(f"{CLUSTER_VARIABLE}={cluster_url} does not answer: {type(exc).__name__}", pytrace=False)
    yield client
    client.close()


@pytest.fixture
def index_name(cluster_client, request) -> str:
    """A fresh index name for one test; everything under it is deleted afterwards."""
    name = f"test-{request.node.name.lower()[:40].strip('_-')}-{uuid.uuid4().hex[:8]}"
    name = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in name)
    yield name
    delete_everything(cluster_client, name)


@pytest.fixture
def location(cluster_url, index_name) -> str:
    """The test's index location URL (``http://127.0.0.1:9200/test-...``)."""
    return f"{cluster_url}/{index_name}"


def delete_everything(client, name: str) -> None:
    """Delete the alias ``name``, its physical indexes and its lock index."""
    found = client.indices.get(
        index=f"{name}-*", expand_wildcards="all", allow_no_indices=True, ignore_unavailable=True
    )
    for index in found:
        client.indices.delete(index=index, ignore_unavailable=True)
    if client.indices.exists(index=name):
        client.indices.delete(index=name, ignore_unavailable=True)
