"""Answers some shards failed: refused, never served with documents missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from searchengine.engines.opensearch.client import whole
from searchengine.engines.opensearch.location import parse_location
from searchengine.errors import ClusterError

CORPUS = Path(__file__).resolve().parents[3] / "corpus"
LOCATION = parse_location("http://admin:secret@127.0.0.1:9230,127.0.0.1:9231/papers")


def test_an_answer_from_every_shard_passes():
    answer = {"count": 7, "_shards": {"total": 3, "successful": 3, "skipped": 0, "failed": 0}}
    assert whole(LOCATION, "count matches", answer) is answer


def test_an_answer_without_shard_figures_passes():
    assert whole(LOCATION, "search", {"hits": {"hits": []}}) == {"hits": {"hits": []}}


def test_an_answer_some_shards_failed_is_refused_in_one_line():
    answer = {"count": 5, "_shards": {"total": 3, "successful": 2, "skipped": 0, "failed": 1, "failures": [
        {"shard": 1, "index": "papers-1", "reason": {
            "type": "node_disconnected_exception",
            "reason": "[node-2][127.0.0.1:9332][indices:data/read/search[phase/query]] disconnected"}}]}}
    with pytest.raises(ClusterError) as caught:
        whole(LOCATION, "count matches", answer)
    assert str(caught.value) == (
        "http://127.0.0.1:9230,127.0.0.1:9231/papers: count matches failed: 1 of 3 shards did not answer "
        "([node-2][127.0.0.1:9332][indices:data/read/search[phase/query]] disconnected); "
        "the answer would miss their documents")


def test_a_failure_without_a_reason_is_still_named():
    answer = {"_shards": {"total": 2, "successful": 0, "failed": 2, "failures": [{"reason": "shard closed"}]}}
    with pytest.raises(ClusterError, match=r"search failed: 2 of 2 shards did not answer \(shard closed\)"):
        whole(LOCATION, "search", answer)
    with pytest.raises(ClusterError, match=r"1 of 1 shards did not answer \(no reason given\)"):
        whole(LOCATION, "search", {"_shards": {"total": 1, "successful": 0, "failed": 1,
                                               "failures": [{"reason": {}}]}})


def test_shards_without_an_active_copy_are_missing_though_none_failed():
    """What OpenSearch answers for a red index: the unassigned shard is in the total only."""
    answer = {"count": 13, "_shards": {"total": 3, "successful": 2, "skipped": 0, "failed": 0}}
    with pytest.raises(ClusterError, match=r"count matches failed: 1 of 3 shards did not answer "
                                           r"\(no copy of them is active\)"):
        whole(LOCATION, "count matches", answer)


def test_skipped_shards_answered():
    """Shards a search skips (none of their documents can match) are not missing."""
    answer = {"_shards": {"total": 3, "successful": 3, "skipped": 1, "failed": 0}}
    assert whole(LOCATION, "search", answer) is answer


@pytest.mark.cluster
def test_searching_with_a_shard_lost_is_a_cluster_error(cluster_client, location, index_name):
    """One primary shard of three is taken away (its allocation cancelled, with nowhere to
    go): the other two still answer, but searches and counts must fail, not come back short."""
    from searchengine import build_index, open_index

    build_index([CORPUS], location)
    physical = next(iter(cluster_client.indices.get_alias(name=index_name)))
    cluster_client.indices.put_settings(index=physical, body={
        "index": {"number_of_replicas": 0, "routing.allocation.require._name": "no-such-node"}})
    shard = cluster_client.search_shards(index=physical)["shards"][0][0]
    assert shard["primary"]
    cluster_client.cluster.reroute(body={"commands": [{"cancel": {
        "index": physical, "shard": shard["shard"], "node": shard["node"], "allow_primary": True}}]})
    health = cluster_client.cluster.health(index=physical, wait_for_status="red")
    assert (health["status"], health["active_primary_shards"]) == ("red", 2)

    index = open_index(location)
    try:
        for work in (lambda: index.search("gpu"), lambda: index.doc_count,
                     lambda: index.search("matrix", facets=("year", "category"))):
            with pytest.raises(ClusterError, match=r"1 of 3 shards did not answer \(no copy of them is active\)"):
                work()
    finally:
        index.close()
