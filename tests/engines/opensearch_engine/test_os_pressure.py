"""Backpressure from a real node: bulk items rejected with 429
(``rejected_execution_exception``, a full write queue) are sent again with
growing pauses and never dropped.

The test starts its own one-node cluster (scripts/dev-cluster.sh, on a free
port, its directory under pytest's temporary folder) whose write thread pool
has one thread and a queue of one, so that a few bulk requests in flight
are enough to be rejected; the shared cluster is never touched. It stops
that cluster however the test ends.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from searchengine import build_index
from searchengine.cli import main
from searchengine.engines.opensearch import writer

from .test_os_dev_cluster import free_base_port, script, script_env  # noqa: F401 - a fixture

RECORDS = 2000


@pytest.fixture
def pressed_cluster(script_env, tmp_path) -> str:  # noqa: F811 - the fixture imported above
    """A one-node cluster with a write pool of one thread and a queue of one."""
    env = dict(
        script_env,
        SEARCHENGINE_CLUSTER_NAME="searchengine-pressure-test",
        SEARCHENGINE_CLUSTER_NODE_SETTINGS="thread_pool.write.size: 1; thread_pool.write.queue_size: 1",
        SEARCHENGINE_OPENSEARCH_HEAP="384m",
    )
    script_env.update(env)  # stopped with these settings too
    started = script("start", "1", env=env)
    assert started.returncode == 0, started.stderr[-3000:]
    config = (tmp_path / "started-here" / "node-0" / "config" / "opensearch.yml").read_text()
    assert config.endswith("thread_pool.write.size: 1\nthread_pool.write.queue_size: 1\n")
    return started.stdout.strip()


def papers(path: Path, count: int) -> Path:
    path.write_text(
        "".join(
            json.dumps({"id": f"2101.{n:05d}", "title": f"Paper {n}", "abstract": "words " * 80}) + "\n"
            for n in range(count)
        ),
        encoding="utf-8",
    )
    return path


@pytest.mark.cluster
def test_rejections_of_a_full_write_queue_are_sent_again_and_nothing_is_lost(pressed_cluster, tmp_path, monkeypatch):
    location = f"{pressed_cluster}/pressure"
    seen: Counter = Counter()
    passing = writer._passing

    def spy(status, error):
        kind = error.get("type") if isinstance(error, dict) else None
        seen[(status, kind)] += 1
        return passing(status, error)

    monkeypatch.setattr(writer, "_passing", spy)
    monkeypatch.setattr(writer, "BULK_DOCS", 100)  # more requests in flight than the node takes
    monkeypatch.setattr(writer, "RETRY_PAUSE", 0.2)
    summary = build_index([papers(tmp_path / "p.jsonl", RECORDS)], location, jobs=8)
    assert (summary.documents, summary.records, summary.problems, summary.refused) == (RECORDS, RECORDS, [], [])
    rejected = seen[(429, "rejected_execution_exception")] + seen[(429, "es_rejected_execution_exception")]
    assert rejected > 0 and sum(seen.values()) == rejected, seen  # real rejections, and only those
    # an update under the same pressure, through the command: every record in, the count checked
    seen.clear()
    more = papers(tmp_path / "more.jsonl", RECORDS + 500)
    result = CliRunner().invoke(main, ["index", str(more), "--update", "--index", location, "--jobs", "8"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(
        f"Updated {location}: 500 added, {RECORDS:,} replaced, 0 skipped ({RECORDS + 500:,} records read); "
        f"{RECORDS + 500:,} documents in "
    )
    assert sum(seen.values()) > 0, "the update was never rejected: the node's write queue did not fill"
