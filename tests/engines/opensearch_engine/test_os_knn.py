"""Vector fields on the cluster: the k-NN plugin that scripts/dev-cluster.sh installs."""

from __future__ import annotations

import os

import pytest

from searchengine.engines.opensearch.knn import knn_available, nodes_without_knn, require_knn
from searchengine.engines.opensearch.location import parse_location
from searchengine.errors import ClusterError

LOCATION = parse_location("http://admin:secret@127.0.0.1:9230/papers")


class _Nodes:
    def __init__(self, answer: dict) -> None:
        self.answer = answer

    def info(self, metric: str) -> dict:
        assert metric == "plugins"
        return self.answer


class _Client:
    """Just the ``nodes.info`` of a client: the answer of ``GET _nodes/plugins``."""

    def __init__(self, plugins_by_node: dict[str, list[str]]) -> None:
        self.nodes = _Nodes(
            {
                "nodes": {
                    f"id-{name}": {"name": name, "plugins": [{"name": p} for p in plugins]}
                    for name, plugins in plugins_by_node.items()
                }
            }
        )


def test_the_plugin_must_be_on_every_node():
    assert knn_available(_Client({"node-0": ["opensearch-knn"], "node-1": ["opensearch-knn", "x"]})) is True
    partial = _Client({"node-0": ["opensearch-knn"], "node-2": [], "node-1": ["analysis-icu"]})
    assert knn_available(partial) is False
    assert nodes_without_knn(partial) == ["node-1", "node-2"]
    assert knn_available(_Client({})) is False


def test_a_cluster_without_the_plugin_is_refused_in_one_line():
    with pytest.raises(ClusterError) as caught:
        require_knn(_Client({"node-0": ["opensearch-knn"], "node-1": []}), LOCATION)
    assert str(caught.value) == (
        "http://127.0.0.1:9230/papers: cannot create a vector index: vector fields need the OpenSearch k-NN "
        "plugin (opensearch-knn) on every node, and node-1 lacks it (install it with bin/opensearch-plugin "
        "install opensearch-knn on each node and restart them; scripts/dev-cluster.sh installs it unless "
        "SEARCHENGINE_OPENSEARCH_KNN=0)"
    )
    require_knn(_Client({"node-0": ["opensearch-knn"]}), LOCATION)


@pytest.fixture
def knn_client(cluster_client):
    """The test cluster's client, when every node has the k-NN plugin."""
    if not knn_available(cluster_client):
        reason = (
            f"the test cluster lacks the k-NN plugin on {', '.join(nodes_without_knn(cluster_client))} "
            "(scripts/dev-cluster.sh installs it unless SEARCHENGINE_OPENSEARCH_KNN=0)"
        )
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    return cluster_client


@pytest.mark.cluster
def test_knn_queries_on_a_lucene_hnsw_field(knn_client, index_name):
    client = knn_client
    client.indices.create(
        index=index_name,
        body={
            "settings": {"index": {"knn": True, "number_of_shards": 1, "number_of_replicas": 0}},
            "mappings": {
                "properties": {
                    "kind": {"type": "keyword"},
                    "vector": {
                        "type": "knn_vector",
                        "dimension": 4,
                        "method": {"engine": "lucene", "name": "hnsw", "space_type": "cosinesimil"},
                    },
                }
            },
        },
    )
    mapping = client.indices.get_mapping(index=index_name)[index_name]["mappings"]["properties"]["vector"]
    assert (mapping["type"], mapping["dimension"], mapping["method"]["engine"]) == ("knn_vector", 4, "lucene")
    documents = {
        "a": ([1.0, 0.0, 0.0, 0.0], "paper"),  # cosine 1 with the query
        "b": ([1.0, 1.0, 0.0, 0.0], "paper"),  # 0.707
        "c": ([0.2, 0.0, 1.0, 0.0], "preprint"),
    }  # 0.196
    for doc_id, (vector, kind) in documents.items():
        client.index(index=index_name, id=doc_id, body={"vector": vector, "kind": kind})
    client.indices.refresh(index=index_name)
    query = [1.0, 0.0, 0.0, 0.0]

    found = client.search(index=index_name, body={"size": 2, "query": {"knn": {"vector": {"vector": query, "k": 2}}}})
    assert [hit["_id"] for hit in found["hits"]["hits"]] == ["a", "b"]
    # cosinesimil scores are (1 + cosine) / 2.
    assert [round(hit["_score"], 3) for hit in found["hits"]["hits"]] == [1.0, 0.854]

    filtered = client.search(
        index=index_name,
        body={
            "size": 2,
            "query": {
                "knn": {"vector": {"vector": query, "k": 2, "filter": {"bool": {"must_not": [{"term": {"_id": "a"}}]}}}}
            },
        },
    )
    assert [hit["_id"] for hit in filtered["hits"]["hits"]] == ["b", "c"]
    only_preprints = client.search(
        index=index_name,
        body={
            "size": 2,
            "query": {"knn": {"vector": {"vector": query, "k": 2, "filter": {"term": {"kind": "preprint"}}}}},
        },
    )
    assert [hit["_id"] for hit in only_preprints["hits"]["hits"]] == ["c"]

    client.indices.delete(index=index_name)
    assert not client.indices.exists(index=index_name)
