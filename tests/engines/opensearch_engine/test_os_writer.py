"""Indexing into a real OpenSearch cluster: builds behind an alias, updates,
removals, versions and repeats, bad records, rejected items, locks and errors."""

from __future__ import annotations

import json
import re
import socket
import time
from pathlib import Path

import pytest

from searchengine import build_index, remove_documents, update_index
from searchengine.engines.opensearch import mapping, writer
from searchengine.engines.opensearch.location import parse_location
from searchengine.errors import (
    ClusterError,
    IndexBusyError,
    IndexDamagedError,
    IndexNotFoundError,
    InputError,
    SearchEngineError,
)

REPO = Path(__file__).resolve().parents[3]
CORPUS = REPO / "corpus"
CORPUS_RECORDS = 24


def physical(client, alias: str) -> list[str]:
    """The physical indexes the alias points at."""
    if not client.indices.exists_alias(name=alias):
        return []
    return sorted(client.indices.get_alias(name=alias))


def all_physical(client, alias: str) -> list[str]:
    """Every index named like the alias's physical indexes."""
    found = client.indices.get(index=f"{alias}-*", allow_no_indices=True, ignore_unavailable=True)
    return sorted(name for name in found if writer.is_physical_name(alias, name))


def count(client, alias: str) -> int:
    client.indices.refresh(index=alias)
    return client.count(index=alias)["count"]


def source(client, alias: str, doc_id: str) -> dict:
    return client.get(index=alias, id=doc_id)["_source"]


def held_keys(client, alias: str, doc_id: str, field: str, candidates: list[str]) -> list[str]:
    """The ``candidates`` that the document's ``field`` holds as terms (a field
    kept for filters only: in neither ``_source`` nor doc values), in their order."""
    found = client.search(
        index=alias,
        body={
            "size": 0,
            "query": {"ids": {"values": [doc_id]}},
            "aggs": {"keys": {"filters": {"filters": {key: {"term": {field: key}} for key in candidates}}}},
        },
    )["aggregations"]["keys"]["buckets"]
    return [key for key in candidates if found[key]["doc_count"]]


def doc_values(client, alias: str, doc_id: str, field: str) -> list:
    """The doc values of one document's ``field`` (a field kept only to sort or count by)."""
    found = client.search(
        index=alias, body={"query": {"ids": {"values": [doc_id]}}, "docvalue_fields": [field], "_source": False}
    )
    return found["hits"]["hits"][0]["fields"][field]


def jsonl(path: Path, *records: dict) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def paper(doc_id: str, title: str, authors=("Ada Lovelace",), **fields) -> dict:
    return {
        "id": doc_id,
        "title": title,
        "abstract": f"An abstract about {title.lower()}.",
        "authors": list(authors),
        "year": 2021,
        "categories": ["cs.DC"],
        **fields,
    }


@pytest.mark.cluster
class TestBuild:
    def test_build_of_the_corpus(self, cluster_client, location, index_name):
        progress = []
        summary = build_index([CORPUS], location, progress=progress.append)
        assert (summary.documents, summary.records, summary.added) == (CORPUS_RECORDS, CORPUS_RECORDS, CORPUS_RECORDS)
        assert (summary.replaced, summary.merged, summary.skipped) == (0, 0, 0)
        assert summary.index_dir == location
        assert progress.count(1) == CORPUS_RECORDS and progress[-1] == 0
        assert count(cluster_client, index_name) == CORPUS_RECORDS
        [name] = physical(cluster_client, index_name)
        assert re.fullmatch(re.escape(index_name) + r"-\d{20}", name)
        meta = cluster_client.indices.get_mapping(index=name)[name]["mappings"]["_meta"]
        assert meta[mapping.META_KEY] == {"alias": index_name, "layout": mapping.LAYOUT}
        settings = cluster_client.indices.get_settings(index=name)[name]["settings"]["index"]
        assert settings["number_of_shards"] == str(mapping.DEFAULT_SHARDS)
        assert "refresh_interval" not in settings  # back to OpenSearch's default after the load
        assert cluster_client.cluster.health(index=name)["status"] == "green"

    def test_documents_hold_the_filter_and_sort_fields(self, cluster_client, location, index_name, tmp_path):
        build_index(
            [
                jsonl(
                    tmp_path / "a.jsonl",
                    paper(
                        "2101.00001v3",
                        "Épée Fencing",
                        authors=["Depei Qian", "Zoë Pérez"],
                        categories=["cs.DC", "math.NA"],
                    ),
                )
            ],
            location,
        )
        doc = source(cluster_client, index_name, "2101.00001")
        assert doc["version"] == 3
        authors = ["qian", "qian/d", "qian/depei", "^qian", "^qian/d", "^qian/depei", "perez", "perez/z", "perez/zoe"]
        assert (
            held_keys(cluster_client, index_name, "2101.00001", "author_keys", [*authors, "zoe", "^perez"]) == authors
        )
        categories = ["cs.dc", "^cs.dc", "cs.*", "^cs.*", "math.na", "math.*"]
        assert (
            held_keys(cluster_client, index_name, "2101.00001", "category_keys", [*categories, "^math.na"])
            == categories
        )
        assert doc_values(cluster_client, index_name, "2101.00001", "primary_category") == ["cs.DC"]
        assert doc_values(cluster_client, index_name, "2101.00001", "sort_title") == ["epee fencing"]
        # Made again from the record when needed: not kept in _source.
        assert not {"author_keys", "category_keys", "primary_category", "sort_title", "spelling"} & set(doc)
        assert doc["source"].endswith("a.jsonl:1")

    def test_two_builds_leave_one_physical_index(self, cluster_client, location, index_name):
        build_index([CORPUS], location)
        [first] = physical(cluster_client, index_name)
        time.sleep(0.01)  # a new timestamp
        summary = build_index([CORPUS], location)
        assert summary.documents == CORPUS_RECORDS
        [second] = physical(cluster_client, index_name)
        assert second != first
        assert not cluster_client.indices.exists(index=first)
        assert all_physical(cluster_client, index_name) == [second]
        assert count(cluster_client, index_name) == CORPUS_RECORDS

    def test_a_build_of_only_bad_records_leaves_the_index_as_it_was(
        self, cluster_client, location, index_name, tmp_path
    ):
        build_index([CORPUS], location)
        before = physical(cluster_client, index_name)
        bad = tmp_path / "bad.jsonl"
        bad.write_text('{"id": "x1"}\nnot json at all\n{"title": ""}\n', encoding="utf-8")
        with pytest.raises(InputError, match="nothing to index") as caught:
            build_index([bad], location)
        assert len(caught.value.problems) == 3
        assert all(str(p).startswith(f"{bad}:") for p in caught.value.problems)
        assert physical(cluster_client, index_name) == before
        assert all_physical(cluster_client, index_name) == before
        assert count(cluster_client, index_name) == CORPUS_RECORDS

    @pytest.mark.parametrize("jobs", [1, 4])
    def test_a_build_that_fails_half_way_leaves_the_index_as_it_was(self, cluster_client, location, index_name, jobs):
        build_index([CORPUS], location)
        before = physical(cluster_client, index_name)

        class Stop(Exception):
            pass

        def progress(records: int) -> None:
            progress.seen += records
            if progress.seen == 20:
                raise Stop

        progress.seen = 0
        with pytest.raises(Stop):
            build_index([CORPUS, CORPUS], location, jobs=jobs, progress=progress)
        assert physical(cluster_client, index_name) == before
        assert all_physical(cluster_client, index_name) == before
        assert count(cluster_client, index_name) == CORPUS_RECORDS
        assert not cluster_client.exists(index=writer.lock_name(index_name), id=index_name)

    def test_a_missing_path_fails_before_touching_the_cluster(self, cluster_client, location, index_name):
        with pytest.raises(InputError, match="no such file"):
            build_index([CORPUS / "missing.jsonl"], location)
        assert cluster_client.indices.get(index=f"{index_name}*", allow_no_indices=True) == {}

    def test_repeats_in_one_run_are_one_document(self, cluster_client, location, index_name, tmp_path):
        path = jsonl(
            tmp_path / "r.jsonl",
            paper("2101.00002", "Shared Paper", authors=["Ada Lovelace"]),
            paper("2101.00002", "Shared Paper", authors=["Alan Turing"], categories=["cs.LG"]),
            paper("2101.00003v1", "Old Version"),
            paper("2101.00003v2", "New Version"),
            paper("2101.00003v1", "Old Version Again"),
        )
        summary = build_index([path], location)
        assert (summary.documents, summary.records, summary.added, summary.merged) == (2, 5, 2, 3)
        merged = source(cluster_client, index_name, "2101.00002")
        assert merged["authors"] == ["Ada Lovelace", "Alan Turing"]
        assert merged["categories"] == ["cs.DC", "cs.LG"]
        keys = ["lovelace", "lovelace/a", "lovelace/ada", "^lovelace", "^lovelace/a", "^lovelace/ada"]
        keys += ["turing", "turing/a", "turing/alan"]
        assert held_keys(cluster_client, index_name, "2101.00002", "author_keys", [*keys, "^turing"]) == keys
        assert source(cluster_client, index_name, "2101.00003")["title"] == "New Version"

    def test_a_plain_index_with_the_name_is_refused(self, cluster_client, location, index_name):
        cluster_client.indices.create(
            index=index_name, body={"settings": {"number_of_shards": 1, "number_of_replicas": 0}}
        )
        for run in (
            lambda: build_index([CORPUS], location),
            lambda: update_index([CORPUS], location),
            lambda: remove_documents(["x"], location),
        ):
            with pytest.raises(IndexDamagedError, match="is a plain index, not an alias"):
                run()
        assert cluster_client.count(index=index_name)["count"] == 0
        assert all_physical(cluster_client, index_name) == []

    def test_a_killed_build_is_cleaned_up_by_the_next(self, cluster_client, location, index_name):
        build_index([CORPUS], location)
        # What a build killed before its switch leaves: a marked physical index the alias does not name.
        stale = writer.physical_name(index_name)
        cluster_client.indices.create(index=stale, body=mapping.index_body(index_name, shards=1))
        build_index([CORPUS], location)
        assert not cluster_client.indices.exists(index=stale)
        assert len(all_physical(cluster_client, index_name)) == 1

    def test_an_item_the_cluster_refuses_is_reported_and_the_rest_indexed(
        self, cluster_client, location, index_name, tmp_path
    ):
        # A version past 2**63 does not fit OpenSearch's long: a real refusal of one bulk item.
        path = jsonl(
            tmp_path / "refused.jsonl",
            paper("2101.00010", "Good One"),
            paper("2101.00012v" + "9" * 20, "Version Too Large"),
            paper("2101.00011", "Good Two"),
        )
        summary = build_index([path], location)
        assert (summary.documents, summary.records, summary.added) == (2, 3, 2)
        [problem] = summary.problems
        assert summary.refused == [problem]
        assert str(problem).startswith(f"{path}:2: 2101.00012: not indexed, the cluster refused it (400: ")
        assert str(problem).endswith("(skipped)")
        assert count(cluster_client, index_name) == 2

    def test_an_id_too_long_for_opensearch_is_reported_and_the_rest_indexed(
        self, cluster_client, location, index_name, tmp_path
    ):
        # An id over 512 bytes would fail the whole bulk request, so it is reported before sending.
        path = jsonl(
            tmp_path / "long.jsonl",
            paper("2101.00010", "Good One"),
            paper("x" * 600, "Id Too Long"),
            paper("2101.00011", "Good Two"),
        )
        summary = build_index([path], location)
        assert (summary.documents, summary.records, summary.added) == (2, 3, 2)
        [problem] = summary.problems
        assert str(problem) == f"{path}:2: id is longer than 512 bytes, the most OpenSearch takes (skipped)"

    def test_huge_words_and_values_do_not_lose_the_record(self, cluster_client, location, index_name, tmp_path):
        # Lucene refuses a term over 32,766 bytes; words are cut and long keyword values left out.
        huge = "é" * 20000
        path = jsonl(
            tmp_path / "huge.jsonl",
            paper("2101.00013", f"Title {huge}", authors=[f"Ada {huge}"], abstract=f"words {huge} end"),
        )
        summary = build_index([path], location)
        assert (summary.documents, summary.skipped) == (1, 0)
        assert source(cluster_client, index_name, "2101.00013")["abstract"] == f"words {huge} end"

    def test_jobs_one_and_several_index_the_same(self, cluster_client, location, index_name, cluster_url):
        assert build_index([CORPUS], location, jobs=1).documents == CORPUS_RECORDS
        assert build_index([CORPUS], location, jobs=4).documents == CORPUS_RECORDS


@pytest.mark.cluster
class TestUpdate:
    def test_versions_on_update(self, cluster_client, location, index_name, tmp_path):
        build_index(
            [
                jsonl(
                    tmp_path / "base.jsonl",
                    paper("2101.00001v2", "First", authors=["Ada Lovelace"]),
                    paper("2101.00002v2", "Second"),
                    paper("2101.00003v2", "Third"),
                )
            ],
            location,
        )
        update = jsonl(
            tmp_path / "update.jsonl",
            paper("2101.00001v3", "First, Revised"),  # higher: replaces
            paper("2101.00002v2", "Second", authors=["Alan Turing"]),  # equal: replaces
            paper("2101.00003v1", "Third, Older"),  # older: skipped
            paper("2101.00004", "Fourth"),
        )  # new
        summary = update_index([update], location)
        assert (summary.records, summary.added, summary.replaced, summary.merged) == (4, 1, 2, 0)
        assert summary.documents == 4
        [older] = summary.problems
        assert str(older) == f"{update}:3: 2101.00003 v1 is older than the indexed v2 (skipped)"
        assert source(cluster_client, index_name, "2101.00001")["title"] == "First, Revised"
        assert source(cluster_client, index_name, "2101.00002")["authors"] == ["Alan Turing"]
        assert source(cluster_client, index_name, "2101.00003")["title"] == "Third"
        assert count(cluster_client, index_name) == 4

    def test_equal_versions_in_one_update_merge(self, cluster_client, location, index_name, tmp_path):
        build_index([CORPUS], location)
        update = jsonl(
            tmp_path / "u.jsonl",
            paper("2101.00005", "Twice Listed", authors=["Ada Lovelace"]),
            paper("2101.00005", "Twice Listed", authors=["Alan Turing"]),
        )
        summary = update_index([update], location)
        assert (summary.added, summary.replaced, summary.merged, summary.documents) == (1, 0, 1, 25)
        assert source(cluster_client, index_name, "2101.00005")["authors"] == ["Ada Lovelace", "Alan Turing"]

    def test_re_indexing_the_same_input_changes_no_count(self, cluster_client, location, index_name):
        build_index([CORPUS], location)
        [before] = physical(cluster_client, index_name)
        summary = update_index([CORPUS], location)
        assert (summary.added, summary.replaced, summary.documents) == (0, CORPUS_RECORDS, CORPUS_RECORDS)
        assert physical(cluster_client, index_name) == [before]  # written through the alias

    def test_update_without_an_index_builds_one(self, cluster_client, location, index_name):
        summary = update_index([CORPUS], location)
        assert (summary.added, summary.documents) == (CORPUS_RECORDS, CORPUS_RECORDS)
        assert len(physical(cluster_client, index_name)) == 1


@pytest.mark.cluster
class TestRejectedWrites:
    """Items the cluster rejects for a passing reason: a read-only-allow-delete block
    (what OpenSearch sets at the disk flood stage) answers each bulk item with 429."""

    @staticmethod
    def block(client, alias: str, on: bool) -> None:
        client.indices.put_settings(index=alias, body={"index.blocks.read_only_allow_delete": on or None})

    def test_a_passing_rejection_is_sent_again(self, cluster_client, location, index_name, tmp_path, monkeypatch):
        import threading

        build_index([CORPUS], location)
        monkeypatch.setattr(writer, "RETRY_PAUSE", 0.5)
        self.block(cluster_client, index_name, True)
        lift = threading.Timer(1.0, self.block, (cluster_client, index_name, False))
        lift.start()
        try:
            summary = update_index(
                [
                    jsonl(
                        tmp_path / "u.jsonl",
                        paper("2101.00020", "Blocked For A While"),
                        paper("2101.00021", "Also Blocked"),
                    )
                ],
                location,
            )
        finally:
            lift.join()
        assert (summary.added, summary.skipped, summary.documents) == (2, 0, CORPUS_RECORDS + 2)

    def test_a_lasting_rejection_fails_the_run_and_drops_nothing(
        self, cluster_client, location, index_name, tmp_path, monkeypatch
    ):
        build_index([CORPUS], location)
        monkeypatch.setattr(writer, "RETRY_PAUSE", 0.05)
        monkeypatch.setattr(writer, "RETRY_PAUSE_MAX", 0.2)
        path = jsonl(tmp_path / "u.jsonl", paper("2101.00022", "Never Written"), paper("2101.00023", "Nor This"))
        self.block(cluster_client, index_name, True)
        try:
            with pytest.raises(ClusterError) as raised:
                update_index([path], location)
        finally:
            self.block(cluster_client, index_name, False)
        message = str(raised.value)
        assert message.startswith(
            f"{location}: 2 documents still rejected after {writer.RETRY_ROUNDS + 1} tries over "
        ), message
        assert f"(the first: 2101.00022 at {path}:1, 429: index [{index_name}-" in message
        assert "read-only-allow-delete" in message
        assert message.endswith("; the documents before were written: run the same command again")
        assert count(cluster_client, index_name) == CORPUS_RECORDS
        # a rebuild so rejected is not published: the alias keeps its index
        [before] = physical(cluster_client, index_name)
        # (the new physical index is made with the same block, by a template of this test's names)
        template = f"{index_name}-blocked"
        cluster_client.indices.put_template(
            name=template,
            body={"index_patterns": [f"{index_name}-2*"], "settings": {"index.blocks.read_only_allow_delete": True}},
        )
        try:
            with pytest.raises(ClusterError, match=r"; nothing was published, the index is as it was$"):
                build_index([path], location)
        finally:
            cluster_client.indices.delete_template(name=template)
        assert physical(cluster_client, index_name) == all_physical(cluster_client, index_name) == [before]
        assert count(cluster_client, index_name) == CORPUS_RECORDS

    @staticmethod
    def drop_bulk_requests(monkeypatch, times: int) -> list:
        """Make the next ``times`` bulk requests fail as a whole, as when their node
        dies mid-request and the client's retries fail too; returns the calls made."""
        import opensearchpy

        calls, real = [], opensearchpy.OpenSearch.bulk

        def bulk(client, *args, **kwargs):
            calls.append(len(calls))
            if len(calls) <= times:
                raise opensearchpy.ConnectionError("N/A", "Remote end closed connection without response", None)
            return real(client, *args, **kwargs)

        monkeypatch.setattr(opensearchpy.OpenSearch, "bulk", bulk)
        return calls

    def test_a_bulk_request_lost_with_its_node_is_sent_again(
        self, cluster_client, location, index_name, tmp_path, monkeypatch
    ):
        build_index([CORPUS], location)
        monkeypatch.setattr(writer, "RETRY_PAUSE", 0.1)
        calls = self.drop_bulk_requests(monkeypatch, 2)
        summary = update_index(
            [jsonl(tmp_path / "u.jsonl", paper("2101.00024", "Sent Three Times"), paper("2101.00025", "Also Three"))],
            location,
        )
        assert len(calls) == 3
        assert (summary.added, summary.skipped, summary.problems, summary.documents) == (2, 0, [], CORPUS_RECORDS + 2)

    def test_bulk_requests_lost_every_time_fail_the_run(
        self, cluster_client, location, index_name, tmp_path, monkeypatch
    ):
        build_index([CORPUS], location)
        monkeypatch.setattr(writer, "RETRY_PAUSE", 0.05)
        monkeypatch.setattr(writer, "RETRY_PAUSE_MAX", 0.2)
        path = jsonl(tmp_path / "u.jsonl", paper("2101.00026", "Never Sent"))
        calls = self.drop_bulk_requests(monkeypatch, 100)
        with pytest.raises(ClusterError, match=r"1 document still rejected after 9 tries .*Remote end closed"):
            update_index([path], location)
        assert len(calls) == writer.RETRY_ROUNDS + 1
        monkeypatch.undo()
        assert count(cluster_client, index_name) == CORPUS_RECORDS


@pytest.mark.cluster
class TestRemove:
    def test_remove_by_id(self, cluster_client, location, index_name, tmp_path):
        build_index(
            [
                jsonl(
                    tmp_path / "r.jsonl",
                    paper("2101.00001v2", "One"),
                    paper("2101.00002", "Two"),
                    paper("t-30f1b8f5a2a1", "Three"),
                )
            ],
            location,
        )
        summary = remove_documents(["2101.00001v5", "t-30f1b8f5a2a1", "0704.9999", "2101.00001"], location)
        assert (summary.removed, summary.not_found, summary.documents) == (2, ["0704.9999"], 1)
        assert count(cluster_client, index_name) == 1

    def test_remove_from_a_missing_index(self, cluster_client, location, index_name):
        with pytest.raises(IndexNotFoundError, match=r"no index here \(run 'searchengine index"):
            remove_documents(["x"], location)


@pytest.mark.cluster
class TestLock:
    def test_a_second_writer_waits_then_gives_up(self, cluster_client, location, index_name):
        build_index([CORPUS], location)
        client = cluster_client
        with writer.WriteLock(client, parse_location(location), timeout=0):
            started = time.monotonic()
            with pytest.raises(IndexBusyError, match=r"another process is writing this index \(waited 1 s\)"):
                update_index([CORPUS], location, lock_timeout=1)
            assert 1 <= time.monotonic() - started < 5
        assert update_index([CORPUS], location, lock_timeout=1).documents == CORPUS_RECORDS

    def test_an_expired_lease_is_taken_over(self, cluster_client, location, index_name):
        build_index([CORPUS], location)
        # What a killed writer leaves: its lock document, with a lease that has run out.
        cluster_client.index(
            index=writer.lock_name(index_name),
            id=index_name,
            body={"owner": "killed", "expires": time.time() - 1},
            refresh=True,
        )
        assert update_index([CORPUS], location, lock_timeout=0).documents == CORPUS_RECORDS
        assert not cluster_client.exists(index=writer.lock_name(index_name), id=index_name)

    # The client retries a request whose reply is slow (retry_on_timeout): a
    # create or a renewal the cluster applied is then sent again, and refused
    # as a conflict with the writer's own write.

    def test_a_retried_create_of_the_lock_document_takes_the_lock(self, cluster_client, location, index_name):
        lock = writer.WriteLock(cluster_client, parse_location(location), timeout=0)
        lock._ensure_index()
        cluster_client.create(index=lock.index, id=lock.doc_id, body=lock._body(), refresh=True)  # the first try
        assert lock._try_take()
        held = cluster_client.get(index=lock.index, id=lock.doc_id)
        assert lock._seq == (held["_seq_no"], held["_primary_term"])

    def test_a_renewal_applied_twice_keeps_the_lease(self, cluster_client, location, index_name):
        with writer.WriteLock(cluster_client, parse_location(location), timeout=0, lease=0.4) as lock:
            # The renewal's first try, applied: the sequence number the lock knows is now stale.
            cluster_client.index(index=lock.index, id=lock.doc_id, body=lock._body(), refresh=True)
            time.sleep(0.5)  # several renewals (every 0.1 s)
            lock.check()
            held = cluster_client.get(index=lock.index, id=lock.doc_id)
            assert held["_source"]["owner"] == lock.owner and held["_seq_no"] >= 2
        assert not cluster_client.exists(index=lock.index, id=lock.doc_id)

    def test_a_lease_taken_over_by_another_writer_is_lost(self, cluster_client, location, index_name):
        with writer.WriteLock(cluster_client, parse_location(location), timeout=0, lease=0.4) as lock:
            cluster_client.index(
                index=lock.index, id=lock.doc_id, body={"owner": "other", "expires": time.time() + 60}, refresh=True
            )
            time.sleep(0.3)
            with pytest.raises(
                ClusterError,
                match=r"another process took the write lock over \(the run was too slow "
                r"to renew it\); nothing was published$",
            ):
                lock.check()
        held = cluster_client.get(index=lock.index, id=lock.doc_id)
        assert held["_source"]["owner"] == "other"  # the lost lock is left to its new holder


def test_a_retried_index_create_is_the_runs_own_index(cluster_client, index_name):
    body = {"settings": {"index": {"number_of_shards": 1, "number_of_replicas": 0}}}
    name = f"{index_name}-created"  # deleted with the test's index
    assert writer._create_index(cluster_client, name, body)["shards_acknowledged"]
    # The retried create: refused as already existing, answered as created.
    assert writer._create_index(cluster_client, name, body) == {"shards_acknowledged": True}
    from opensearchpy.exceptions import RequestError

    with pytest.raises(RequestError):  # any other refusal is an error
        writer._create_index(cluster_client, f"{index_name}-BAD", body)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("run", ["build", "update", "remove"])
def test_an_unreachable_cluster_is_one_line_without_the_password(run, tmp_path):
    location = f"http://admin:secret@127.0.0.1:{closed_port()}/papers"
    calls = {
        "build": lambda: build_index([CORPUS], location),
        "update": lambda: update_index([CORPUS], location),
        "remove": lambda: remove_documents(["x"], location),
    }
    with pytest.raises(ClusterError) as caught:
        calls[run]()
    message = str(caught.value)
    assert "cluster unreachable (connection refused)" in message
    assert message.startswith("http://127.0.0.1:")
    assert "secret" not in message and "admin" not in message and "\n" not in message
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_unreachable_on_the_command_line(tmp_path):
    """No traceback and no password from the Python API's caller either."""
    import subprocess
    import sys

    code = (
        "import searchengine, sys\n"
        "try:\n"
        f"    searchengine.build_index(['{CORPUS}'], 'http://u:secret@127.0.0.1:{closed_port()}/p')\n"
        "except searchengine.SearchEngineError as exc:\n"
        "    print(exc); sys.exit(1)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr == ""  # nothing logged by the client
    assert "secret" not in done.stdout and done.stdout.count("\n") == 1


@pytest.mark.cluster
def test_a_timeout_is_one_line(cluster_url, monkeypatch, index_name):
    monkeypatch.setenv("SEARCHENGINE_CLUSTER_TIMEOUT", "0.0001")
    with pytest.raises(ClusterError, match=r"no answer within 0\.0001 s \(timed out"):
        build_index([CORPUS], f"{cluster_url}/{index_name}")


def test_without_the_client_package(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "opensearchpy", None)
    with pytest.raises(SearchEngineError, match=r"needs the opensearch-py package: pip install"):
        build_index([CORPUS], "http://127.0.0.1:9/papers")


def test_searching_an_unreachable_cluster_is_one_line_without_the_password():
    from click.testing import CliRunner

    from searchengine import ClusterError, open_index
    from searchengine.cli import main

    with pytest.raises(ClusterError, match="unreachable") as caught:
        open_index("http://user:secret@127.0.0.1:9/papers").search("gpu")
    assert "secret" not in str(caught.value) and "\n" not in str(caught.value)
    result = CliRunner().invoke(main, ["search", "gpu", "--index", "http://user:secret@127.0.0.1:9/papers"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: http://127.0.0.1:9/papers: ") and result.output.count("\n") == 1
    assert "secret" not in result.output and "Traceback" not in result.output


@pytest.mark.cluster
def test_engine_skeleton_counts(cluster_client, location, index_name):
    from searchengine.engines.opensearch.engine import OpenSearchEngine

    engine = OpenSearchEngine(location)
    try:
        with pytest.raises(IndexNotFoundError) as missing:
            engine.doc_count()
        assert str(missing.value) == (
            f"{location}: no index here (run 'searchengine index PATH... --index {location}' first)"
        )
        build_index([CORPUS], location)
        assert engine.doc_count() == CORPUS_RECORDS
        assert engine.location == location and engine.index == index_name
    finally:
        engine.close()


def test_an_index_of_another_layout_is_refused_with_a_rebuild_hint(cluster_client, location, index_name):
    from searchengine import IndexDamagedError, open_index

    build_index([CORPUS], location)
    assert open_index(location).search("gpu").total == 12
    physical = writer.aliased_indexes(cluster_client, parse_location(location))[0]
    cluster_client.indices.put_mapping(
        index=physical, body={"_meta": {mapping.META_KEY: {"alias": index_name, "layout": mapping.LAYOUT - 1}}}
    )
    with pytest.raises(IndexDamagedError) as refused:
        open_index(location).search("gpu")
    assert str(refused.value) == (
        f"{location}: the index {physical} was built by another version of searchengine (layout "
        f"{mapping.LAYOUT - 1}, this version reads layout {mapping.LAYOUT}); rebuild it with "
        f"'searchengine index PATH... --index {location}'"
    )
    build_index([CORPUS], location)  # a rebuild makes a new index of this layout
    assert open_index(location).search("gpu").total == 12
