"""What a cluster index publishes, and what it never does: a rebuild whose
input was not read to its end, a killed rebuild's leftovers, writes while a
rebuild holds the lock, refused records, and documents acknowledged but
missing at the end."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from searchengine import build_index
from searchengine.cli import main
from searchengine.engines.opensearch import writer
from searchengine.engines.opensearch.location import parse_location
from searchengine.errors import ClusterError

REPO = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.cluster


def lines(count: int, start: int = 1) -> str:
    return "".join(
        json.dumps({"id": f"2101.{n:05d}", "title": f"Paper number {n}", "abstract": "words " * 60 + str(n)}) + "\n"
        for n in range(start, start + count)
    )


def physical(client, alias: str) -> list[str]:
    return sorted(client.indices.get_alias(name=alias)) if client.indices.exists_alias(name=alias) else []


def all_physical(client, alias: str) -> list[str]:
    found = client.indices.get(index=f"{alias}-*", allow_no_indices=True, ignore_unavailable=True)
    return sorted(name for name in found if writer.is_physical_name(alias, name))


def count(client, alias: str) -> int:
    client.indices.refresh(index=alias)
    return client.count(index=alias)["count"]


def indexed(client, index: str) -> int:
    """Documents indexed into ``index`` so far (refreshed or not: a build does not refresh)."""
    stats = client.indices.stats(index=index, metric="indexing")
    return stats["_all"]["primaries"]["indexing"]["index_total"]


def test_a_cut_off_gzip_rebuild_is_not_published(cluster_client, location, index_name, tmp_path):
    old = tmp_path / "old.jsonl"
    old.write_text(lines(400), encoding="utf-8")
    assert build_index([old], location).documents == 400
    [before] = physical(cluster_client, index_name)
    whole = gzip.compress(lines(3000).encode(), compresslevel=1)
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(whole[: len(whole) * 9 // 10])
    kept = zlib.decompressobj(31).decompress(cut.read_bytes()).count(b"\n")
    assert 2000 < kept < 3000
    result = CliRunner().invoke(main, ["index", str(cut), "--index", location])
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr.splitlines() == [
        f"{cut}:{kept + 1}: the file ended early after {kept:,} records: the compressed data ends before its "
        "end-of-stream marker in this line; the rest of the file is missing",
        f"Error: {cut} stopped in line {kept + 1:,}: the rebuild was not published, the index in {location} "
        "is as it was (run it again when the whole input can be read)",
    ]
    # the alias is unchanged, the old index serves all its records, the new one is gone
    assert physical(cluster_client, index_name) == all_physical(cluster_client, index_name) == [before]
    assert count(cluster_client, index_name) == 400
    assert not cluster_client.exists(index=writer.lock_name(index_name), id=index_name)
    check = CliRunner().invoke(main, ["check", "--index", location])
    assert check.exit_code == 0, check.output


def test_a_refused_record_fails_the_command_and_is_listed(cluster_client, location, index_name, tmp_path):
    path = tmp_path / "refused.jsonl"
    # A version past 2**63 does not fit OpenSearch's long: a mapping error of one bulk item.
    records = [
        {"id": "2101.00010", "title": "Good One", "abstract": "One."},
        {"id": "2101.00012v" + "9" * 20, "title": "Version Too Large", "abstract": "Two."},
        {"id": "2101.00011", "title": "Good Two", "abstract": "Three."},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    for update in ([], ["--update"]):
        result = CliRunner().invoke(main, ["index", str(path), "--index", location, *update])
        assert result.exit_code == 1, result.output
        refused, error = result.stderr.splitlines()
        assert refused.startswith(f"{path}:2: 2101.00012: not indexed, the cluster refused it (400: ")
        assert error == "Error: the index refused 1 record (listed above): it is not in the index"
        assert "2 documents" in result.stdout
    assert count(cluster_client, index_name) == 2
    quiet = CliRunner().invoke(main, ["index", str(path), "--index", location, "--quiet"])
    assert quiet.exit_code == 1
    assert (
        quiet.stderr == "Error: the index refused 1 record (index without --quiet lists them): it is not in the index\n"
    )
    data = CliRunner().invoke(main, ["index", str(path), "--index", location, "--json"])
    assert data.exit_code == 1 and len(json.loads(data.stdout)["refused"]) == 1


def test_writes_while_a_rebuild_holds_the_lock_are_refused(cluster_client, location, index_name, tmp_path):
    path = tmp_path / "u.jsonl"
    path.write_text(lines(5), encoding="utf-8")
    assert build_index([path], location).documents == 5
    # What a rebuild holds while it writes its new index.
    with writer.WriteLock(cluster_client, parse_location(location), timeout=0):
        for command in (["index", str(path), "--update"], ["remove", "2101.00001"], ["index", str(path)]):
            started = time.monotonic()
            result = CliRunner().invoke(main, [*command, "--index", location, "--wait", "1"])
            assert result.exit_code == 1, result.output
            assert result.stderr == f"Error: {location}: another process is writing this index (waited 1 s)\n"
            assert 1 <= time.monotonic() - started < 10
    assert count(cluster_client, index_name) == 5
    result = CliRunner().invoke(main, ["remove", "2101.00001", "--index", location, "--wait", "0"])
    assert result.exit_code == 0 and count(cluster_client, index_name) == 4


def test_documents_missing_at_the_end_fail_an_update(cluster_client, location, index_name, tmp_path):
    from searchengine import update_index

    path = tmp_path / "u.jsonl"
    path.write_text(lines(5), encoding="utf-8")
    build_index([path], location)
    more = tmp_path / "more.jsonl"
    more.write_text(lines(3, start=6), encoding="utf-8")
    real = writer.ClusterWriter.publish

    def publish(self):
        # A document the cluster acknowledged, then lost (deleted behind the writer's back).
        cluster_client.delete(index=index_name, id="2101.00007", refresh=True)
        return real(self)

    writer.ClusterWriter.publish = publish  # type: ignore[method-assign]
    try:
        with pytest.raises(ClusterError) as raised:
            update_index([more], location)
    finally:
        writer.ClusterWriter.publish = real  # type: ignore[method-assign]
    assert str(raised.value) == (
        f"{location}: 1 acknowledged document missing from the index "
        "(7 counted after a refresh, 8 expected); run the same command again"
    )
    # a rebuild short of a document is not published
    [before] = physical(cluster_client, index_name)

    def publish_new(self):
        cluster_client.delete(index=self._new, id="2101.00002", refresh=True)
        return real(self)

    writer.ClusterWriter.publish = publish_new  # type: ignore[method-assign]
    try:
        with pytest.raises(
            ClusterError,
            match=r": 1 acknowledged document missing from the new index \(7 counted "
            r"after a refresh, 8 expected\); nothing was published, the index is as it was$",
        ):
            build_index([path, more], location)
    finally:
        writer.ClusterWriter.publish = real  # type: ignore[method-assign]
    assert physical(cluster_client, index_name) == all_physical(cluster_client, index_name) == [before]
    assert count(cluster_client, index_name) == 7


def test_a_killed_rebuild_is_reported_by_check_and_cleaned_by_the_next(cluster_client, location, index_name, tmp_path):
    old = tmp_path / "old.jsonl"
    old.write_text(lines(100), encoding="utf-8")
    build_index([old], location)
    [before] = physical(cluster_client, index_name)
    big = tmp_path / "big.jsonl"
    big.write_text(lines(60000), encoding="utf-8")
    # The rebuild in a process of its own, with a short lease (so that the test need not wait a minute).
    code = (
        "import sys; from searchengine.engines.opensearch import writer; "
        "writer.WriteLock.__init__.__defaults__ = (2.0,); "
        "from searchengine.cli import run; sys.argv = ['searchengine'] + sys.argv[1:]; run()"
    )
    env = dict(os.environ, PYTHONPATH=str(REPO))
    process = subprocess.Popen(
        [sys.executable, "-c", code, "index", str(big), "--index", location, "--jobs", "1", "--quiet"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "stderr").open("w"),
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            new = [name for name in all_physical(cluster_client, index_name) if name != before]
            if new and indexed(cluster_client, new[0]) > 0:
                break
            assert process.poll() is None, (tmp_path / "stderr").read_text()
            time.sleep(0.2)
        else:
            pytest.fail("the rebuild wrote nothing within 120 s")
        # a rebuild at work is no leftover
        busy = CliRunner().invoke(main, ["check", "--index", location])
        assert busy.exit_code == 0, busy.output
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    [stale] = new
    assert physical(cluster_client, index_name) == [before]
    assert count(cluster_client, index_name) == 100
    time.sleep(2.5)  # the killed writer's lease runs out
    result = CliRunner().invoke(main, ["check", "--index", location])
    assert result.exit_code == 3
    [error] = result.stderr.splitlines()
    assert error.startswith(
        f"Error: {location}: left by a rebuild or update that was stopped: an unfinished index {stale} "
        "(not behind the alias) and a write lock held by "
    )
    assert error.endswith(
        f"; searches are not affected, and the next 'searchengine index PATH... --index {location}' removes them"
    )
    report = json.loads(CliRunner().invoke(main, ["check", "--index", location, "--json"]).stdout)
    assert report["sound"] is False and stale in report["problem"]
    assert build_index([old], location, lock_timeout=0).documents == 100
    assert not cluster_client.indices.exists(index=stale)
    assert not cluster_client.exists(index=writer.lock_name(index_name), id=index_name)
    assert CliRunner().invoke(main, ["check", "--index", location]).exit_code == 0
