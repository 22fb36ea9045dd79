"""Rebuild drill of the OpenSearch engine: a full rebuild under searching clients.

An index of the first :data:`OLD_RECORDS` records of the arXiv sample is
built on the test cluster (``SEARCHENGINE_TEST_CLUSTER``, under a name of
its own, deleted afterwards); ``searchengine serve`` serves it. Four
clients query ``/api/search`` back to back, each with a query of its own
(four common words), while
``searchengine index`` rebuilds the index from the first
:data:`NEW_RECORDS` records (a process of its own). The clients go on for
a few seconds after the rebuild ends.

The product's promise: no search fails (every answer a 200), and each
client's answers switch from the old index's total to the new one's exactly
once, never back and never to anything else: searches are answered from the
old index while the new one is written, then from the new one. The
rebuild's new physical index replaces the old one behind the alias, and the
old one is deleted.

Environment: ``REBUILD_DRILL_OLD`` (default 2,000) and ``REBUILD_DRILL_NEW``
(default 3,000) records.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from urllib.parse import urlencode

import pytest

from drills.conftest import REPO
from shareddata import write_listing

OLD_RECORDS = int(os.environ.get("REBUILD_DRILL_OLD", 2000))
NEW_RECORDS = int(os.environ.get("REBUILD_DRILL_NEW", 3000))
QUERIES = ["learning", "network", "model", "graph"]  # one per client
AFTER_SECONDS = 5.0  # the clients go on this long after the rebuild ends
SERVE_LINE = re.compile(r"on http://127\.0\.0\.1:(\d+)/")


def product_env() -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    env.pop("SEARCHENGINE_INDEX", None)
    return env


def search(port: int, query: str) -> tuple[int, int | None]:
    """``(status, total)`` of ``/api/search`` for ``query`` (``total`` ``None`` unless a 200)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.request("GET", "/api/search?" + urlencode({"q": query}), headers={"Connection": "close"})
        response = connection.getresponse()
        body = response.read()
    finally:
        connection.close()
    return response.status, json.loads(body)["total"] if response.status == 200 else None


@pytest.fixture
def cluster_location(tmp_path):
    url = os.environ.get("SEARCHENGINE_TEST_CLUSTER", "").strip().rstrip("/")
    if not url:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("SEARCHENGINE_TEST_CLUSTER is not set under CI=true", pytrace=False)
        pytest.skip("needs an OpenSearch cluster: SEARCHENGINE_TEST_CLUSTER=http://127.0.0.1:9200")
    from searchengine.engines.opensearch.client import connect
    from searchengine.engines.opensearch.location import parse_location

    name = f"drill-rebuild-{uuid.uuid4().hex[:8]}"
    client = connect(parse_location(f"{url}/{name}"))
    try:
        yield f"{url}/{name}", client, name
    finally:
        for index in client.indices.get(index=f"{name}-*", allow_no_indices=True, ignore_unavailable=True):
            client.indices.delete(index=index, ignore_unavailable=True)
        client.close()


def test_a_rebuild_under_searching_clients(cluster_location, tmp_path, figures):
    location, client, name = cluster_location
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    write_listing(old, OLD_RECORDS)
    write_listing(new, NEW_RECORDS)
    index = [sys.executable, "-m", "searchengine", "index", "--index", location, "-q"]
    built = subprocess.run([*index, str(old)], capture_output=True, text=True, cwd=REPO, env=product_env(), timeout=900)
    assert built.returncode == 0, built.stderr
    [old_physical] = client.indices.get_alias(name=name)

    process = subprocess.Popen(
        [sys.executable, "-m", "searchengine", "serve", "--port", "0", "--index", location, "--rate-limit", "off"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=product_env(),
    )
    log: list[str] = []
    try:
        match = None
        for line in iter(process.stderr.readline, ""):  # "Serving ... on http://127.0.0.1:PORT/" when ready
            log.append(line)
            match = SERVE_LINE.search(line)
            if match:
                break
        assert match, "".join(log)
        threading.Thread(target=lambda: log.extend(process.stderr), daemon=True).start()
        port = int(match.group(1))
        deadline = time.monotonic() + 60
        while True:
            try:
                before = {query: search(port, query) for query in QUERIES}
                break
            except OSError:
                assert time.monotonic() < deadline, "the server did not answer in 60 s"
                time.sleep(0.2)
        assert all(status == 200 for status, _ in before.values()), before

        answers: dict[str, list[int | None]] = {query: [] for query in QUERIES}
        failures: list[str] = []
        slowest = [0.0]
        stop = threading.Event()

        def client_loop(query: str) -> None:
            while not stop.is_set():
                started = time.monotonic()
                try:
                    status, total = search(port, query)
                except (OSError, http.client.HTTPException) as exc:
                    failures.append(f"{query!r}: {type(exc).__name__}: {exc}")
                    continue
                slowest[0] = max(slowest[0], time.monotonic() - started)
                if status != 200:
                    failures.append(f"{query!r}: {status}")
                answers[query].append(total)

        threads = [threading.Thread(target=client_loop, args=(query,)) for query in QUERIES]
        for thread in threads:
            thread.start()
        try:
            time.sleep(1.0)  # the clients answer from the old index first
            started = time.monotonic()
            rebuilt = subprocess.run(
                [*index, str(new)], capture_output=True, text=True, cwd=REPO, env=product_env(), timeout=900
            )
            rebuild_seconds = time.monotonic() - started
            time.sleep(AFTER_SECONDS)
        finally:
            stop.set()
            for thread in threads:
                thread.join()
        assert rebuilt.returncode == 0, rebuilt.stderr
        after = {query: search(port, query) for query in QUERIES}
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)

    assert all(status == 200 for status, _ in after.values()), after
    client.indices.refresh(index=name)
    assert client.count(index=name)["count"] == NEW_RECORDS
    [new_physical] = client.indices.get_alias(name=name)
    assert new_physical != old_physical and not client.indices.exists(index=old_physical)
    requests = sum(len(totals) for totals in answers.values())
    switches = {}
    for query, totals in answers.items():
        old_total, new_total = before[query][1], after[query][1]
        assert old_total != new_total, f"{query!r} answers {old_total} from both indexes: choose another query"
        assert set(totals) <= {old_total, new_total}, (query, sorted(set(totals) - {old_total, new_total}))
        switches[query] = sum(1 for a, b in zip(totals, totals[1:]) if a != b)
        assert totals[0] == old_total and totals[-1] == new_total, (query, totals[0], totals[-1])
    figures.add("documents before, after", f"{OLD_RECORDS:,}, {NEW_RECORDS:,}")
    figures.add("rebuild seconds", round(rebuild_seconds, 1))
    figures.add("searches", requests)
    figures.add("failed searches", len(failures))
    figures.add("switches per client", ", ".join(str(switches[query]) for query in QUERIES))
    figures.add("slowest search (s)", round(slowest[0], 2))
    assert failures == []
    assert all(count == 1 for count in switches.values()), switches
