"""Semantic and hybrid search on a real cluster: the same answers as the embedded engine."""

from __future__ import annotations

import pytest

from searchengine import build_index, open_index, semantic
from searchengine.indexer import update_index

from conftest import CORPUS

pytestmark = pytest.mark.skipif(not semantic.available(), reason="needs the semantic extra")

QUERIES = [
    "speeding up sparse linear algebra kernels on graphics cards",
    "finding anomalies in system logs",
    "brain",
    "GPU",
    "language models",
]


def test_vectors_on_the_cluster_rank_as_the_embedded_engine(location, cluster_client, index_name, tmp_path):
    from searchengine.engines.opensearch.knn import knn_available

    if not knn_available(cluster_client):
        pytest.skip("the cluster lacks the k-NN plugin (scripts/dev-cluster.sh installs it)")
    summary = build_index([CORPUS], location, vectors=True)
    assert (summary.documents, summary.vectors, summary.encoded) == (24, True, 24)
    mapping = cluster_client.indices.get_mapping(index=index_name)
    (body,) = mapping.values()
    assert body["mappings"]["properties"]["vector"]["method"] == {
        "name": "hnsw",
        "engine": "lucene",
        "space_type": "cosinesimil",
        "parameters": {},
    }
    build_index([CORPUS], tmp_path / "embedded", vectors=True)
    cluster, embedded = open_index(location), open_index(tmp_path / "embedded")
    try:
        assert cluster.has_vectors and cluster.search("GPU").mode == "hybrid"
        for query in QUERIES:
            mine = embedded.search(query, mode="semantic", limit=10)
            theirs = cluster.search(query, mode="semantic", limit=10)
            # The cluster keeps float vectors, the embedded index int8 ones: cosines differ by ~0.002,
            # so papers whose scores are that close may trade places.
            assert {h.id for h in theirs.hits} == {h.id for h in mine.hits}, query
            assert theirs.total == mine.total, query
            assert [h.score for h in theirs.hits] == pytest.approx([h.score for h in mine.hits], abs=0.005), query
            hybrid = cluster.search(query, mode="hybrid", limit=10)
            assert hybrid.mode == "hybrid" and hybrid.total == embedded.search(query, mode="hybrid").total, query
        # A phrase keeps the cluster's own keyword matches (which match stems: see docs/opensearch.md).
        phrase = cluster.search('"large language model"', mode="semantic", limit=30)
        assert {h.id for h in phrase.hits} == {
            h.id for h in cluster.search('"large language model"', mode="lexical", limit=30).hits
        }
        filtered = cluster.search("training", mode="semantic", year="2023", limit=10)
        assert {h.id for h in filtered.hits} == {
            "t-9c1bd2ca5e7c",
            "t-26b906fcdcbd",
            "t-4b8ebb019dd4",
            "t-b275e169d4d6",
            "t-5feb5d73a9aa",
        }
        like = cluster.similar(["t-30f1b8f5a2a1", "t-c0d04f741409"], limit=3)
        assert like.mode == "semantic"
        assert [h.id for h in like.hits] == [
            h.id for h in embedded.similar(["t-30f1b8f5a2a1", "t-c0d04f741409"], limit=3).hits
        ]
        # An update keeps the vectors of records whose text did not change.
        assert update_index([CORPUS], location).encoded == 0
    finally:
        cluster.close()
        embedded.close()
