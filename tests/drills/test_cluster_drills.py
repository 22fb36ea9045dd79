"""Node-kill drills of the OpenSearch engine: a 3-node cluster loses a node under load.

The module starts its own cluster (``scripts/dev-cluster.sh start --clean 3``
on ``CLUSTER_DRILL_PORT``, default 9230, its data and logs in
``~/.cache/searchengine/drill-cluster-PORT``), so that the cluster other tests share is never touched,
and stops it by pid however the tests end. The index lives on all three
nodes (3 primary shards, 1 replica each) and every process is given the
three nodes in its location, ``http://127.0.0.1:9230,127.0.0.1:9231,127.0.0.1:9232/drill``.

The drills run in order, on one index:

(a) ``searchengine serve`` answers 4 clients that query ``/api/search`` with
    a fixed mix of queries for 30 s; a few seconds in, a data node that is
    not the elected master is killed with SIGKILL. Every answer that is not
    a 200 is recorded (status, seconds since the kill, error). The product's
    promise: every failure is a 503 with a JSON error (never a 500, never a
    hang), none comes later than :data:`SETTLE_SECONDS` after the kill, and
    every 200 carries the total and facet counts the query had before the
    kill. Once the replicas of the dead node's primaries are promoted (all
    primaries active), every query answers as it did.
(c) The node is started again: the cluster is green and answers unchanged.
(b) ``searchengine index --update`` of :data:`UPDATE_RECORDS` records (a
    thousand of which replace indexed ones with a higher version) runs as a
    process; when a fifth of them is written, the elected master is killed. The
    run must either complete with the right count or exit 1 with a one-line
    message (never a traceback). The node is started again and the same
    update run once more: the index then holds exactly the expected
    documents, each replaced one at its new version, and the cluster is green.

Without Java the drills are skipped with one reason; under ``CI=true`` a
cluster that cannot start fails them. Environment: ``CLUSTER_DRILL_PORT``,
``CLUSTER_DRILL_RECORDS`` (records indexed first, default 2,000),
``CLUSTER_DRILL_UPDATE_RECORDS`` (default 10,000) and
``CLUSTER_DRILL_SECONDS`` (the query load, default 30) and
``CLUSTER_DRILL_START_TIMEOUT`` (seconds a start may take to green, default 600).
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

import pytest

from drills.conftest import REPO
from synthetic import listing_lines

PORT = int(os.environ.get("CLUSTER_DRILL_PORT", "9230"))
# Node data and logs, kept after the run for a look at a failed drill (the next run wipes them).
CLUSTER_DIR = Path.home() / ".cache" / "searchengine" / f"drill-cluster-{PORT}"
NODES = 3
BASE_RECORDS = int(os.environ.get("CLUSTER_DRILL_RECORDS", "2000"))
UPDATE_RECORDS = int(os.environ.get("CLUSTER_DRILL_UPDATE_RECORDS", "10000"))
# Of the update's records, this many replace indexed ones (as their version 2).
REPLACED = min(1000, BASE_RECORDS, UPDATE_RECORDS)
LOAD_SECONDS = float(os.environ.get("CLUSTER_DRILL_SECONDS", "30"))
CLIENTS = 4
# Seconds into the load when the node is killed.
KILL_AFTER = 5.0
# After this many seconds from the kill, no request may fail any more.
SETTLE_SECONDS = 10.0
QUERIES = [
    {"q": "learning"},
    {"q": "quantum"},
    {"q": "graph"},
    {"q": "neural network"},
    {"q": '"language models"'},
    {"q": "optimization", "category": "cs.LG"},
    {"q": "transformer", "sort": "newest"},
    {"q": "diffusion OR robot"},
    {"q": "privacy", "year": "2025"},
    {"q": "spectral -graph"},
    {"q": "", "year": "2024"},
    {"q": "attention", "page": "2"},
]
SERVE_LINE = re.compile(r"on http://127\.0\.0\.1:(\d+)/")


def script_env(cluster_dir) -> dict:
    """The environment of ``scripts/dev-cluster.sh`` for the drills' own cluster."""
    env = dict(os.environ)
    # Settings of another cluster (CI exports 9200's) must not leak in.
    env.pop("SEARCHENGINE_CLUSTER_TRANSPORT_PORT", None)
    env.update(
        SEARCHENGINE_CLUSTER_PORT=str(PORT),
        SEARCHENGINE_CLUSTER_DIR=str(cluster_dir),
        SEARCHENGINE_CLUSTER_NAME="searchengine-drills",
        # The script's wait for green (not the client's request timeout of the
        # same name): three nodes starting at once on two busy cores can take minutes.
        SEARCHENGINE_CLUSTER_WAIT=os.environ.get("CLUSTER_DRILL_START_TIMEOUT", "600"),
    )
    return env


def product_env() -> dict:
    """The environment of ``searchengine`` processes: 3 shards, 1 replica."""
    env = dict(
        os.environ,
        SEARCHENGINE_OPENSEARCH_SHARDS="3",
        SEARCHENGINE_OPENSEARCH_REPLICAS="1",
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    )
    env.pop("SEARCHENGINE_INDEX", None)
    return env


def java_found() -> bool:
    """Whether the cluster script can find a Java to run OpenSearch on."""
    return bool(
        shutil.which("java")
        or any(
            os.environ.get(name) and os.path.exists(os.path.join(os.environ[name], "bin", "java"))
            for name in ("SEARCHENGINE_JAVA_HOME", "JAVA_HOME")
        )
    )


class Cluster:
    """The drills' 3-node cluster: its script, its nodes and a few looks at its state."""

    def __init__(self, cluster_dir) -> None:
        self.dir = cluster_dir
        self.env = script_env(cluster_dir)
        hosts = ",".join(f"127.0.0.1:{PORT + i}" for i in range(NODES))
        self.location = f"http://{hosts}/drill"
        self.down: set[int] = set()

    def script(self, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["bash", str(REPO / "scripts" / "dev-cluster.sh"), *args],
            check=False,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=REPO,
        )

    def get(self, path: str, body: dict | None = None, timeout: float = 30) -> dict:
        """The JSON answer of the first live node to ``path`` (a GET, or a POST of ``body``);
        an error status's JSON body too (a health check's 408 still tells the status)."""
        data = None if body is None else json.dumps(body).encode()
        last = None
        for i in range(NODES):
            if i in self.down:
                continue
            request = urllib.request.Request(
                f"http://127.0.0.1:{PORT + i}{path}", data=data, headers={"Content-Type": "application/json"}
            )
            try:
                with urllib.request.urlopen(request, timeout=timeout) as answer:
                    return json.load(answer)
            except urllib.error.HTTPError as exc:
                return json.loads(exc.read() or b"{}")
            except OSError as exc:
                last = exc
        raise AssertionError(f"no node answered {path}: {last}")

    def health(self, wait: str = "", timeout: int = 120, index: str = "") -> dict:
        """Cluster health (of ``index`` only, if given) once it is ``wait`` or better
        with the live nodes in it, or after ``timeout`` seconds."""
        query = f"?timeout={timeout}s&wait_for_nodes={NODES - len(self.down)}"
        query += f"&wait_for_status={wait}" if wait else ""
        return self.get(f"/_cluster/health/{index}{query}", timeout=timeout + 30)

    def seconds_to_promotion(self, since: float, timeout: float = 120) -> float:
        """Seconds from ``since`` until the cluster has dropped the killed node and every
        primary of the index is active again (its replicas promoted): yellow or green."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            health = self.get("/_cluster/health/drill?timeout=1s")
            if health.get("number_of_nodes") == NODES - len(self.down) and health.get("status") in ("yellow", "green"):
                return time.monotonic() - since
            time.sleep(0.2)
        raise AssertionError(f"no promotion within {timeout:g} s: {health}")

    def master(self) -> int:
        """The number of the elected cluster manager node (1 for ``node-1``)."""
        return int(self.get("/_cat/cluster_manager?format=json")[0]["node"].removeprefix("node-"))

    def count(self, query: dict | None = None) -> int:
        """Documents of the index (matching ``query``)."""
        return int(self.get("/drill/_count", None if query is None else {"query": query})["count"])

    def kill(self, node: int) -> None:
        result = self.script("kill", str(node), timeout=60)
        assert result.returncode == 0, result.stderr
        self.down.add(node)

    def restart(self, node: int) -> float:
        """Start ``node`` again; returns the seconds until the cluster was green."""
        started = time.monotonic()
        result = self.script("restart-node", str(node))
        assert result.returncode == 0, result.stderr
        self.down.discard(node)
        return time.monotonic() - started


@pytest.fixture(scope="module")
def cluster():
    """A fresh 3-node cluster of the drills' own, stopped at the end of the module."""
    in_ci = os.environ.get("CI", "").lower() == "true"
    if not java_found():
        if in_ci:
            pytest.fail("no Java to run OpenSearch on under CI=true: the cluster drills must run", pytrace=False)
        pytest.skip("needs Java 11-21 for a local OpenSearch cluster (scripts/dev-cluster.sh)")
    pytest.importorskip("opensearchpy", reason="needs opensearch-py: pip install '.[opensearch]'")
    found = Cluster(CLUSTER_DIR)
    started = time.monotonic()
    try:
        result = found.script("start", "--clean", str(NODES))
        if result.returncode != 0:
            said = "\n".join(line for line in result.stderr.splitlines() if line.startswith("dev-cluster:"))
            pytest.fail(f"the drills' cluster did not start:\n{said}", pytrace=False)
        found.seconds_to_start = time.monotonic() - started
        yield found
    finally:
        stopped = found.script("stop", timeout=180)
        assert stopped.returncode == 0, stopped.stderr


@pytest.fixture(scope="module")
def drill_data(tmp_path_factory, cluster) -> dict:
    """The record files, and the index of the first ones built on the cluster."""
    folder = tmp_path_factory.mktemp("cluster-drill-records")
    base = folder / "base.jsonl"
    base.write_text("".join(listing_lines(BASE_RECORDS)), encoding="utf-8")
    # The update: the last REPLACED indexed records again as version 2 with a
    # new title, then new records.
    update_lines = []
    for line in listing_lines(UPDATE_RECORDS, BASE_RECORDS - REPLACED):
        record = json.loads(line)
        if len(update_lines) < REPLACED:
            record["id"] += "v2"
            record["title"] = "Revised: " + record["title"]
        update_lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    update = folder / "update.jsonl"
    update.write_text("".join(update_lines), encoding="utf-8")
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "searchengine", "index", str(base), "--index", cluster.location, "-q"],
        check=False,
        capture_output=True,
        text=True,
        env=product_env(),
        cwd=REPO,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    assert cluster.count() == BASE_RECORDS
    shards = cluster.get("/drill/_settings")
    settings = next(iter(shards.values()))["settings"]["index"]
    assert (settings["number_of_shards"], settings["number_of_replicas"]) == ("3", "1")
    assert cluster.health("green")["status"] == "green"
    return {
        "base": base,
        "update": update,
        "build_seconds": time.monotonic() - started,
        "replaced_ids": [json.loads(line)["id"].removesuffix("v2") for line in update_lines[:REPLACED]],
    }


class QueryLoad:
    """Clients querying ``/api/search`` until a deadline; every outcome is kept."""

    def __init__(self, port: int, expected: dict[str, tuple[int, str]]) -> None:
        self.port, self.expected = port, expected
        self.lock = threading.Lock()
        self.killed_at: float | None = None
        self.served = 0
        self.failures: list[tuple[float | None, str, str, str]] = []  # (since kill, path, status, error)
        self.short: list[str] = []  # 200s whose total or facets differ from before the kill
        self.slowest = 0.0

    def since_kill(self) -> float | None:
        return None if self.killed_at is None else round(time.monotonic() - self.killed_at, 2)

    def request(self, params: dict) -> None:
        path = "/api/search?" + urlencode(params)
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        started = time.monotonic()
        try:
            connection.request("GET", path, headers={"Connection": "close"})
            response = connection.getresponse()
            body = response.read()
        except (OSError, http.client.HTTPException) as exc:
            with self.lock:
                self.failures.append((self.since_kill(), path, type(exc).__name__, str(exc)))
            return
        finally:
            connection.close()
        took = time.monotonic() - started
        with self.lock:
            self.slowest = max(self.slowest, took)
            if response.status != 200:
                try:
                    error = json.loads(body)["error"]
                except (ValueError, KeyError, TypeError):
                    error = f"not a JSON error: {body[:200]!r}"
                self.failures.append((self.since_kill(), path, str(response.status), error))
                return
            key = answer_key(json.loads(body))
            if key != self.expected[path]:
                self.short.append(
                    f"{path}: {key}, before the kill {self.expected[path]} ({self.since_kill()} s after the kill)"
                )
            self.served += 1

    def run(self, until: float) -> None:
        paths = [dict(params) for params in QUERIES]

        def client(number: int) -> None:
            turn = number
            while time.monotonic() < until:
                self.request(paths[turn % len(paths)])
                turn += 1

        threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()


def get_json(port: int, path: str) -> tuple[int, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def answer_key(answer: dict) -> tuple[int, str]:
    """What an answer of ``/api/search`` must keep through a node's loss: its total and facet counts."""
    return answer["total"], json.dumps(answer["facets"], sort_keys=True)


def totals(port: int) -> dict[str, tuple[int, str]]:
    """``{path: answer_key}`` for every query of the mix, all answered 200."""
    found = {}
    for params in QUERIES:
        path = "/api/search?" + urlencode(params)
        status, body = get_json(port, path)
        assert status == 200, (path, status, body)
        found[path] = answer_key(body)
    return found


@pytest.fixture(scope="module")
def server(cluster, drill_data):
    """``searchengine serve`` of the drills' index (default processes and threads), stopped by pid."""
    process = subprocess.Popen(
        [sys.executable, "-m", "searchengine", "serve", "--port", "0", "--index", cluster.location]
        + ["--rate-limit", "off"],  # the load comes from one address on purpose,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=product_env(),
    )
    log: list[str] = []
    try:
        # "Loading ..." comes first, "Serving ... on http://127.0.0.1:PORT/" once the index is ready.
        match = None
        for line in iter(process.stderr.readline, ""):
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
                get_json(port, "/api/openapi.json")
                break
            except OSError:
                assert time.monotonic() < deadline, "the server did not answer in 60 s"
                time.sleep(0.2)
        yield port, log
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)


@pytest.fixture(scope="module")
def before_kill(server) -> dict[str, tuple[int, str]]:
    """Every query's total and facet counts while the cluster is whole."""
    port, _ = server
    return totals(port)


def test_a_kill_a_node_while_clients_query(cluster, server, before_kill, figures):
    port, log = server
    assert len(before_kill) == len(QUERIES) and all(total for total, _ in before_kill.values())
    # A data node that is not the elected master (drill (b) kills the master).
    master = cluster.master()
    victim = max(set(range(NODES)) - {master})
    cluster.killed_by_a = victim
    load = QueryLoad(port, before_kill)
    started = time.monotonic()
    load_thread = threading.Thread(target=load.run, args=(started + LOAD_SECONDS,))
    load_thread.start()
    time.sleep(KILL_AFTER)
    load.killed_at = time.monotonic()
    cluster.kill(victim)
    promoted = cluster.seconds_to_promotion(load.killed_at)
    load_thread.join()
    health = cluster.health("yellow", index="drill")

    for since, path, status, error in load.failures:
        print(f"  non-200 {since:>6} s after the kill: {status} {path}: {error}")
    for line in log:  # the server's reasons for its 503s
        if "unavailable" in line:
            print(f"  server: {line.strip()}")
    print(
        f"  killed node-{victim} (elected master: node-{master}); {load.served} requests served, "
        f"{len(load.failures)} failed; all primaries active {promoted:.1f} s after the kill"
    )
    statuses = sorted({status for _, _, status, _ in load.failures})
    last_failure = max((since for since, *_ in load.failures), default=None)
    figures.add("(a) node killed", f"node-{victim}, not the master")
    figures.add("(a) requests served", load.served)
    figures.add("(a) requests failed", len(load.failures))
    figures.add("(a) failed statuses", ",".join(statuses) or "-")
    figures.add("(a) last failure after kill (s)", last_failure if last_failure is not None else "-")
    figures.add("(a) slowest request (s)", round(load.slowest, 2))
    figures.add("(a) 200s with a short total", len(load.short))
    figures.add("(a) primaries active after kill (s)", round(promoted, 1))
    after = totals(port)

    assert health["status"] in ("yellow", "green") and health["active_primary_shards"] == 3, health
    assert health["number_of_nodes"] == NODES - 1, health
    assert load.served > 0
    # Failures may only be 503s with a JSON error, within SETTLE_SECONDS of the kill.
    assert all(status == "503" and not error.startswith("not a JSON error") for _, _, status, error in load.failures), (
        load.failures
    )
    assert all(since is not None and since <= SETTLE_SECONDS for since, *_ in load.failures), load.failures
    assert load.short == []
    assert after == before_kill
    assert not any("Traceback" in line for line in log), "".join(log)


def test_c_restart_the_node(cluster, server, before_kill, figures):
    victim = getattr(cluster, "killed_by_a", None)
    assert victim in cluster.down, "drill (a) did not run first"
    seconds = cluster.restart(victim)
    health = cluster.health("green", timeout=300)  # its shards recover slowly on a busy machine
    print(f"  node-{victim} restarted: green after {seconds:.1f} s")
    figures.add("(c) restart to green (s)", round(seconds, 1))
    assert health["status"] == "green" and health["number_of_nodes"] == NODES, health
    assert totals(server[0]) == before_kill
    assert cluster.count() == BASE_RECORDS


def update_summary(out: str) -> tuple[int, int, int, int]:
    """(added, replaced, records read, documents) from the summary of ``index --update``."""
    summary = re.search(
        r": ([\d,]+) added, ([\d,]+) replaced, \d+ skipped \(([\d,]+) records read\); "
        r"([\d,]+) documents in ",
        out,
    )
    assert summary, out
    added, replaced, read, documents = (int(n.replace(",", "")) for n in summary.groups())
    return added, replaced, read, documents


def test_b_kill_a_node_during_update(cluster, drill_data, figures):
    expected = BASE_RECORDS + UPDATE_RECORDS - REPLACED
    # Not --quiet: records that could not be written are listed on stderr.
    command = [
        sys.executable,
        "-m",
        "searchengine",
        "index",
        "--update",
        str(drill_data["update"]),
        "--index",
        cluster.location,
    ]
    started = time.monotonic()
    run = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=product_env()
    )
    written_at_kill = None
    victim = cluster.master()  # the elected master, a data node too
    try:
        # Kill once a fifth of the update is in (refreshes make it countable within a second).
        while run.poll() is None and written_at_kill is None:
            count = cluster.count()
            if count >= BASE_RECORDS + UPDATE_RECORDS // 5:
                cluster.kill(victim)
                written_at_kill = count - BASE_RECORDS
            time.sleep(0.5)
        out, err = run.communicate(timeout=900)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    first_seconds = time.monotonic() - started
    assert written_at_kill is not None, "the update ended before the node could be killed"
    print(
        f"  first run: exit {run.returncode} after {first_seconds:.1f} s, node-{victim} (master) killed "
        f"after {written_at_kill:,} new documents\n  stdout: {out.strip()}\n  stderr: {err.strip()}"
    )
    assert "Traceback" not in err and "internal error" not in err, err
    unwritten = [line for line in err.splitlines() if ": not indexed, " in line]
    if run.returncode == 0:
        # Complete, or each record it could not write named at its file:line.
        added, replaced, read, documents = update_summary(out)
        assert read == UPDATE_RECORDS and added + replaced == UPDATE_RECORDS - len(unwritten), out
        assert all(line.startswith(f"{drill_data['update']}:") for line in unwritten), unwritten
        assert documents == cluster.count()
        assert expected - len(unwritten) <= documents <= expected
    else:
        assert run.returncode == 1 and out == "", (run.returncode, out)
        # One line saying what failed, naming the cluster.
        assert err.splitlines()[-1].startswith("Error: http://127.0.0.1:"), err

    new_master = cluster.master()
    restart_seconds = cluster.restart(victim)
    rerun = subprocess.run(
        command, check=False, capture_output=True, text=True, cwd=REPO, env=product_env(), timeout=900
    )
    print(f"  re-run: exit {rerun.returncode}: {rerun.stdout.strip()} {rerun.stderr.strip()}")
    assert rerun.returncode == 0, rerun.stderr
    added, replaced, read, documents = update_summary(rerun.stdout)
    # What the first run wrote is replaced (ids are unique), the rest added.
    assert (added + replaced, read, documents) == (UPDATE_RECORDS, UPDATE_RECORDS, expected)
    assert cluster.count() == expected
    # The replaced documents are the version 2 records, whole (their new titles).
    assert cluster.count({"term": {"version": 2}}) == REPLACED
    assert (
        cluster.count({"bool": {"filter": [{"term": {"version": 2}}, {"prefix": {"sort_title": "revised: "}}]}})
        == REPLACED
    )
    health = cluster.health("green")
    assert health["status"] == "green" and health["number_of_nodes"] == NODES, health

    figures.add("(b) node killed", f"node-{victim}, the master (then node-{new_master})")
    figures.add("(b) update records", UPDATE_RECORDS)
    figures.add("(b) new documents written at the kill", written_at_kill)
    figures.add("(b) first run exit status", run.returncode)
    figures.add("(b) records the first run could not write", len(unwritten))
    figures.add("(b) first run (s)", round(first_seconds, 1))
    figures.add("(b) restart to green (s)", round(restart_seconds, 1))
    figures.add("(b) documents after the re-run", documents)
    figures.add("(b) expected documents", expected)
    figures.add("cluster start (s)", round(cluster.seconds_to_start, 1))
    figures.add("first build (s)", round(drill_data["build_seconds"], 1))
