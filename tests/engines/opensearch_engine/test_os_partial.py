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
    answer = {
        "count": 5,
        "_shards": {
            "total": 3,
            "successful": 2,
            "skipped": 0,
            "failed": 1,
            "failures": [
                {
                    "shard": 1,
                    "index": "papers-1",
                    "reason": {
                        "type": "node_disconnected_exception",
                        "reason": "[node-2][127.0.0.1:9332][indices:data/read/search[phase/query]] disconnected",
                    },
                }
            ],
        },
    }
    with pytest.raises(ClusterError) as caught:
        whole(LOCATION, "count matches", answer)
    assert str(caught.value) == (
        "http://127.0.0.1:9230,127.0.0.1:9231/papers: count matches failed: 1 of 3 shards did not answer "
        "([node-2][127.0.0.1:9332][indices:data/read/search[phase/query]] disconnected); "
        "the answer would miss their documents"
    )


def test_a_failure_without_a_reason_is_still_named():
    answer = {"_shards": {"total": 2, "successful": 0, "failed": 2, "failures": [{"reason": "shard closed"}]}}
    with pytest.raises(ClusterError, match=r"search failed: 2 of 2 shards did not answer \(shard closed\)"):
        whole(LOCATION, "search", answer)
    with pytest.raises(ClusterError, match=r"1 of 1 shards did not answer \(no reason given\)"):
        whole(LOCATION, "search", {"_shards": {"total": 1, "successful": 0, "failed": 1, "failures": [{"reason": {}}]}})


def test_shards_without_an_active_copy_are_missing_though_none_failed():
    """What OpenSearch answers for a red index: the unassigned shard is in the total only."""
    answer = {"count": 13, "_shards": {"total": 3, "successful": 2, "skipped": 0, "failed": 0}}
    with pytest.raises(
        ClusterError,
        match=r"count matches failed: 1 of 3 shards did not answer "
        r"\(no copy of them is active\)",
    ):
        whole(LOCATION, "count matches", answer)


def test_skipped_shards_answered():
    """Shards a search skips (none of their documents can match) are not missing."""
    answer = {"_shards": {"total": 3, "successful": 3, "skipped": 1, "failed": 0}}
    assert whole(LOCATION, "search", answer) is answer


@pytest.mark.cluster
def test_searching_with_a_shard_lost_is_a_cluster_error(cluster_client, location, index_name, short_pause):
    """The alias also covers an index whose one shard can never be assigned (a red
    index): the other shards still answer, but searches and counts must fail, not
    come back short, even when asked again. (A shard whose copy is taken away from
    a node comes back within moments, forced onto the node that holds its data:
    what the second attempt is for.)"""
    from searchengine import build_index, open_index
    from searchengine.engines.opensearch.mapping import index_body

    build_index([CORPUS], location)
    red = f"{index_name}-red"
    body = index_body(index_name, shards=1)
    body["settings"]["index"]["routing.allocation.require._name"] = "no-such-node"
    cluster_client.indices.create(index=red, body=body, params={"wait_for_active_shards": "0"})
    cluster_client.indices.update_aliases(body={"actions": [{"add": {"index": red, "alias": index_name}}]})
    health = cluster_client.cluster.health(index=red, wait_for_status="red")
    assert (health["status"], health["active_primary_shards"], health["unassigned_shards"]) == ("red", 0, 1)

    index = open_index(location)
    try:
        for work in (
            lambda: index.search("gpu"),
            lambda: index.doc_count,
            lambda: index.search("matrix", facets=("year", "category")),
        ):
            with pytest.raises(ClusterError, match=r"1 of 4 shards did not answer \(no copy of them is active\)"):
                work()
    finally:
        index.close()


def test_shards_out_of_time_are_a_cut_answer_even_without_timed_out():
    """A shard out of time in a phase that cannot stop early fails with time_exceeded,
    and OpenSearch may leave timed_out false: the answer is cut, not an error."""
    from searchengine.engines.opensearch.client import CUT_SHARDS

    answer = {
        "timed_out": False,
        "hits": {"hits": [{"_id": "a"}]},
        "_shards": {
            "total": 3,
            "successful": 1,
            "skipped": 0,
            "failed": 2,
            "failures": [
                {"shard": 0, "reason": {"type": "time_exceeded_exception", "reason": "Time exceeded"}},
                {"shard": 2, "reason": {"type": "time_exceeded_exception", "reason": "Time exceeded"}},
            ],
        },
    }
    assert whole(LOCATION, "search", dict(answer), timed=True) == dict(answer, timed_out=True, **{CUT_SHARDS: 2})
    with pytest.raises(ClusterError, match=r"2 of 3 shards did not answer \(Time exceeded\)"):
        whole(LOCATION, "search", dict(answer))  # no timeout was asked for
    mixed = {
        "_shards": {
            "total": 3,
            "successful": 1,
            "failed": 2,
            "failures": [
                {"reason": {"type": "time_exceeded_exception", "reason": "Time exceeded"}},
                {"reason": {"type": "node_disconnected_exception", "reason": "[node-2] disconnected"}},
            ],
        }
    }
    with pytest.raises(ClusterError, match="2 of 3 shards did not answer"):
        whole(LOCATION, "search", mixed, timed=True)
    unassigned = {
        "_shards": {
            "total": 3,
            "successful": 1,
            "failed": 1,
            "failures": [{"reason": {"type": "time_exceeded_exception", "reason": "Time exceeded"}}],
        }
    }
    with pytest.raises(ClusterError, match="2 of 3 shards did not answer"):
        whole(LOCATION, "search", unassigned, timed=True)


class Answers:
    """A request that answers each call with the next of ``answers`` (an exception is raised)."""

    def __init__(self, *answers) -> None:
        self.answers = list(answers)
        self.times: list[float] = []

    def __call__(self) -> dict:
        import time

        self.times.append(time.monotonic())
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer


MISSING = {
    "count": 16,
    "_shards": {
        "total": 3,
        "successful": 2,
        "failed": 1,
        "failures": [{"reason": {"type": "node_disconnected_exception", "reason": "[node-1] disconnected"}}],
    },
}
WHOLE = {"count": 24, "_shards": {"total": 3, "successful": 3, "failed": 0}}


@pytest.fixture
def short_pause(monkeypatch):
    from searchengine.engines.opensearch import client

    monkeypatch.setattr(client, "SHARD_RETRY_PAUSE", 0.05)
    return 0.05


def test_an_answer_with_shards_missing_is_asked_again_once_after_a_pause(short_pause):
    from searchengine.engines.opensearch.client import whole_answer

    send = Answers(MISSING, WHOLE)
    assert whole_answer(LOCATION, "count matches", send) == WHOLE
    assert len(send.times) == 2 and send.times[1] - send.times[0] >= short_pause

    send = Answers(MISSING, MISSING, WHOLE)
    with pytest.raises(
        ClusterError,
        match=r"count matches failed: 1 of 3 shards did not answer "
        r"\(\[node-1\] disconnected\)",
    ):
        whole_answer(LOCATION, "count matches", send)
    assert len(send.times) == 2


def test_no_shard_available_is_asked_again_other_errors_are_not(short_pause):
    from opensearchpy.exceptions import NotFoundError, TransportError

    from searchengine.engines.opensearch.client import whole_answer

    unavailable = TransportError(
        503,
        "search_phase_execution_exception",
        {"error": {"type": "search_phase_execution_exception", "reason": "all shards failed"}},
    )
    send = Answers(unavailable, WHOLE)
    assert whole_answer(LOCATION, "search", send) == WHOLE
    assert len(send.times) == 2

    bad_query = TransportError(
        400,
        "search_phase_execution_exception",
        {"error": {"type": "search_phase_execution_exception", "reason": "failed to parse"}},
    )
    for error in (bad_query, NotFoundError(404, "index_not_found_exception", {}), ValueError("not the client's")):
        send = Answers(error, WHOLE)
        with pytest.raises(type(error)):
            whole_answer(LOCATION, "search", send)
        assert len(send.times) == 1


class _StubClient:
    def __init__(self, answer: dict) -> None:
        self.answer = answer

    def search(self, **request) -> dict:
        return self.answer


class _StubEngine:
    def __init__(self, answer: dict) -> None:
        self.client = _StubClient(answer)
        self.cluster = LOCATION
        self.index = "papers"


def test_a_page_some_shards_ran_out_of_time_for_says_papers_may_be_missing():
    import time

    from searchengine.engines.opensearch.searcher import Matches, OpenSearchSearcher
    from searchengine.filters import build_filters

    hit = {"_id": "2101.00001", "_score": 3.5, "_source": {"id": "2101.00001"}}
    answer = {
        "timed_out": False,
        "hits": {"hits": [hit]},
        "_shards": {
            "total": 2,
            "successful": 1,
            "failed": 1,
            "failures": [{"shard": 1, "reason": {"type": "time_exceeded_exception", "reason": "Time exceeded"}}],
        },
    }
    matches = Matches(None, {"match": {"title": "gpu"}}, build_filters(), 5)
    searcher = OpenSearchSearcher(_StubEngine(answer))
    window, timed_out = searcher.window(matches, "relevance", 0, 10, time.monotonic() + 1)
    assert (window, timed_out, matches.cut) == ([hit], True, True)


def test_one_unreachable_address_says_how_to_name_several(monkeypatch):
    from searchengine.engines.opensearch import client
    from searchengine.engines.opensearch.engine import OpenSearchEngine

    port = _closed_port()
    location = f"http://user:secret@127.0.0.1:{port}/papers"
    engine = OpenSearchEngine(location)
    try:
        with pytest.raises(ClusterError) as caught:
            engine.doc_count()
        assert str(caught.value) == (
            f"http://127.0.0.1:{port}/papers: count documents failed: cluster unreachable (connection refused); "
            "only one node's address is given: name several, comma-separated, so that another answers when "
            f"one is down (http://127.0.0.1:{port},HOST2:PORT/papers)"
        )
        # Nodes learned earlier in the process (a server's warm-up) are named.
        monkeypatch.setitem(
            client._LEARNED,
            ("http", (("127.0.0.1", port),)),
            (("127.0.0.1", port), ("127.0.0.1", port + 1), ("127.0.0.1", port + 2)),
        )
        with pytest.raises(ClusterError) as caught:
            engine.doc_count()
        assert str(caught.value) == (
            f"http://127.0.0.1:{port}/papers: count documents failed: cluster unreachable (connection refused); "
            f"the cluster's other nodes were 127.0.0.1:{port + 1}, 127.0.0.1:{port + 2} when last asked: name "
            "several in the location, so that another answers when one is down "
            f"(http://127.0.0.1:{port},127.0.0.1:{port + 1},127.0.0.1:{port + 2}/papers)"
        )
    finally:
        engine.close()
    several = OpenSearchEngine(f"http://127.0.0.1:{port},127.0.0.1:{_closed_port()}/papers")
    try:
        with pytest.raises(ClusterError) as caught:
            several.doc_count()
        assert str(caught.value).endswith("count documents failed: cluster unreachable (connection refused)")
    finally:
        several.close()


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
