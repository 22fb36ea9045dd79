"""Web under load while re-indexing: many clients search while rebuilds replace the index.

The real server (``searchengine serve`` as a process, its default workers and
threads, on a free port) serves an index in a temporary directory. Fifty
clients request search pages (``/`` with queries, filters and sorting, and the
bare ``/`` that shows the document count) and ``/api/search`` for sixty
seconds, each on a new connection, while rebuilds replace the index again and
again with two record sets in turn (A, then B, then A ...).

Every response must be a 200 from a complete index: its total (and, from the
API, its facet counts) must equal what an index of set A or of set B answers,
never anything else; the reference answers come from separate indexes of A
and B opened in the test. No 5xx, no connection error or timeout.

Open file descriptors of every server process (the master and each worker,
counted in ``/proc/PID/fd``) are compared after a warm-up round and after the
load, a last round of requests and a settle pause. The tolerance is zero:
requests are made with ``Connection: close`` and the settle pause outlasts
them, so no client socket is open at either count, and both record sets are
indexed by one process into one segment (one compound file), so a worker
holds as many index files on either generation. No process may hold a file of
a generation other than the current one, nor a deleted file of the index.

Environment: ``WEB_LOAD_SECONDS`` (default 60), ``WEB_LOAD_CLIENTS``
(default 50) and ``WEB_LOAD_RECORDS`` (records in set A, default 1,000; B
has a fifth more; fewer records make rebuilds, and so switches, more frequent;
keep it under 1,600 so that B stays one segment).
"""

from __future__ import annotations

import http.client
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

import pytest

from conftest import child_processes
from drills.conftest import REPO
from shareddata import write_listing

SECONDS = float(os.environ.get("WEB_LOAD_SECONDS", 60))
CLIENTS = int(os.environ.get("WEB_LOAD_CLIENTS", 50))
# Set A's size; B has a fifth more. Below 2,000 records a rebuild writes one segment.
RECORDS_A = int(os.environ.get("WEB_LOAD_RECORDS", 1000))
RECORDS_B = RECORDS_A + RECORDS_A // 5
WORDS = [
    "learning",
    "quantum",
    "graph",
    "neural network",
    "diffusion",
    "language models",
    "robot",
    "reinforcement learning",
    "galaxy",
    "optimization",
    "transformer",
    "segmentation",
    "privacy",
    "protein",
    "causal",
    "federated",
    "benchmark",
    "attention",
    "spectral",
    "control",
]

HTML_TOTAL = re.compile(r'<h1 id="results-heading" class="summary">\s*([\d,]+) hits?\b')
HTML_DOCUMENTS = re.compile(r"<p>([\d,]+) papers? indexed\.")


def probes() -> list[tuple[str, dict]]:
    """Requests the clients make: ``(route, parameters)``."""
    found = [("/", {})]
    for word in WORDS:
        found += [
            ("/api/search", {"q": word}),
            ("/api/search", {"q": word, "category": "cs.LG", "sort": "newest"}),
            ("/", {"q": word}),
            ("/", {"q": word, "year": "2025", "category": "cs"}),
        ]
    return found


def answer_key(route: str, params: dict, index) -> tuple:
    """What a complete index answers to the request: the total, and for the API the facet counts."""
    if route == "/" and not params:
        return ("documents", index.doc_count)
    from werkzeug.datastructures import MultiDict

    from searchengine.web.params import SearchParams

    wanted = SearchParams.from_args(MultiDict(params))  # as the server reads the query string
    found = index.run(wanted.request())
    if route == "/":
        return ("total", found.total)
    return ("api", found.total, json.dumps(found.to_dict()["facets"], sort_keys=True))


def response_key(route: str, params: dict, body: bytes) -> tuple | None:
    """The same key read from a response body (``None`` when it cannot be read)."""
    text = body.decode("utf-8")
    if route == "/" and not params:
        match = HTML_DOCUMENTS.search(text)
        return ("documents", int(match.group(1).replace(",", ""))) if match else None
    if route == "/":
        match = HTML_TOTAL.search(text)
        return ("total", int(match.group(1).replace(",", ""))) if match else None
    data = json.loads(text)
    return ("api", data["total"], json.dumps(data["facets"], sort_keys=True))


def server_processes(master: int) -> list[int]:
    """The first server process and its children (the server processes)."""
    return [master, *child_processes(master)]


def open_files(pid: int) -> list[str]:
    """What each open descriptor of ``pid`` points at (``/proc/PID/fd``)."""
    targets = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            targets.append(os.readlink(fd))
        except OSError:  # closed while listing
            continue
    return targets


class Load:
    """Clients that request the probes until a deadline, counting every outcome."""

    def __init__(self, port: int, expected: dict) -> None:
        self.port, self.expected = port, expected
        self.lock = threading.Lock()
        self.served = 0
        self.server_errors: list[str] = []
        self.other_errors: list[str] = []
        self.incomplete: list[str] = []
        self.keys_seen: dict[str, set] = {"A": set(), "B": set()}

    def request(self, route: str, params: dict) -> None:
        path = route + ("?" + urlencode(params) if params else "")
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            connection.request("GET", path, headers={"Connection": "close"})
            response = connection.getresponse()
            body = response.read()
        except (OSError, http.client.HTTPException) as exc:
            with self.lock:
                self.other_errors.append(f"{path}: {type(exc).__name__}: {exc}")
            return
        finally:
            connection.close()
        with self.lock:
            if response.status >= 500:
                self.server_errors.append(f"{path}: {response.status}")
                return
            if response.status != 200:
                self.other_errors.append(f"{path}: {response.status}")
                return
            key = response_key(route, params, body)
            a, b = self.expected[(route, json.dumps(params))]
            if key == a:
                self.keys_seen["A"].add(path)
            elif key == b:
                self.keys_seen["B"].add(path)
            else:
                self.incomplete.append(f"{path}: {key} is neither {a} nor {b}")
            self.served += 1

    def run(self, clients: int, until: float | None = None, rounds: int | None = None) -> None:
        """``clients`` threads, each requesting random probes until ``until`` or for ``rounds`` requests."""
        chosen = [(route, json.loads(params)) for route, params in self.expected]

        def client(seed: int) -> None:
            rng = random.Random(seed)
            done = 0
            while (until is None or time.monotonic() < until) and (rounds is None or done < rounds):
                route, params = rng.choice(chosen)
                self.request(route, params)
                done += 1

        threads = [threading.Thread(target=client, args=(seed,)) for seed in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()


@pytest.fixture(scope="module")
def record_sets(tmp_path_factory):
    """Two record sets and an index of each, opened, as the reference answers."""
    from searchengine import build_index, open_index

    folder = tmp_path_factory.mktemp("reindex")
    sets = {}
    for name, count, start in (("A", RECORDS_A, 0), ("B", RECORDS_B, RECORDS_A)):
        source = folder / f"{name}.jsonl"
        write_listing(source, count, start)
        build_index([source], folder / f"index-{name}", jobs=1)
        sets[name] = (source, folder / f"index-{name}")
    expected = {}
    indexes = {name: open_index(index_dir) for name, (_, index_dir) in sets.items()}
    for route, params in probes():
        a, b = (answer_key(route, params, indexes[n]) for n in "AB")
        if a != b:  # only requests whose answer tells a complete A from a complete B
            expected[(route, json.dumps(params))] = (a, b)
    for index in indexes.values():
        index.close()
    return folder, sets, expected


def test_web_under_load_while_reindexing(record_sets, tmp_path, figures):
    _, sets, expected = record_sets
    assert len(expected) >= 60
    index_dir = tmp_path / "index"
    shutil.copytree(sets["A"][1], index_dir)
    server = subprocess.Popen(
        [sys.executable, "-m", "searchengine", "serve", "--port", "0", "--index-dir", str(index_dir)]
        + ["--rate-limit", "off"],  # the load comes from one address on purpose
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    log: list[str] = []
    try:
        # "Loading ..." comes first, "Serving ... on http://127.0.0.1:PORT/" once the index is ready.
        match = None
        for line in iter(server.stderr.readline, ""):
            log.append(line)
            match = re.search(r"on http://127\.0\.0\.1:(\d+)/", line)
            if match:
                break
        assert match, "".join(log)
        threading.Thread(target=lambda: log.extend(server.stderr), daemon=True).start()
        port = int(match.group(1))
        load = Load(port, expected)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                http.client.HTTPConnection("127.0.0.1", port, timeout=5).request("GET", "/api/openapi.json")
                break
            except OSError:
                time.sleep(0.2)

        # Warm-up: every kind of request, on every worker; then count descriptors.
        load.run(CLIENTS, rounds=4)
        time.sleep(2)
        processes = server_processes(server.pid)
        workers = os.cpu_count() or 1  # serve's default: one process per core
        assert len(processes) == (1 + workers if workers > 1 else 1), processes
        before = {pid: len(open_files(pid)) for pid in processes}

        # The load, while rebuilds alternate B, A, B ...
        stop = threading.Event()
        rebuilds, failures = [], []

        def reindex() -> None:
            turn = 0
            while not stop.is_set():
                name = "BA"[turn % 2]
                result = subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "searchengine",
                        "index",
                        str(sets[name][0]),
                        "--quiet",
                        "--wait",
                        "120",
                        "--index-dir",
                        str(index_dir),
                    ],
                    capture_output=True,
                    text=True,
                    cwd=REPO,
                )
                (rebuilds if result.returncode == 0 else failures).append((name, result.stderr))
                turn += 1

        rebuilder = threading.Thread(target=reindex)
        started = time.monotonic()
        rebuilder.start()
        served_before = load.served
        load.run(CLIENTS, until=started + SECONDS)
        # On a busy machine a rebuild takes longer: the load goes on until two are done.
        while len(rebuilds) + len(failures) < 2 and time.monotonic() < started + 4 * SECONDS:
            load.run(CLIENTS, until=time.monotonic() + 5)
        elapsed = time.monotonic() - started
        served = load.served - served_before
        stop.set()
        rebuilder.join(timeout=300)
        assert failures == []

        # After: a last round (every worker moves to the final generation), a pause, the count.
        load.run(CLIENTS, rounds=4)
        time.sleep(2)
        after = {pid: len(open_files(pid)) for pid in server_processes(server.pid)}
        current = (index_dir / "CURRENT").read_text().strip()
        held = {pid: [t for t in open_files(pid) if t.startswith(str(index_dir))] for pid in after}
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)

    assert load.server_errors == []
    assert load.other_errors == []
    assert load.incomplete == []
    assert len(rebuilds) >= 2, "the index was not replaced during the load"
    # Responses came from both record sets, so the switches were seen.
    assert load.keys_seen["A"] and load.keys_seen["B"]
    assert sorted(after) == sorted(before), "a server process was replaced during the load"
    assert after == before
    for pid, targets in held.items():
        assert all(t.startswith(str(index_dir / current) + "/") and not t.endswith("(deleted)") for t in targets), (
            pid,
            targets,
        )
    assert not any("Traceback" in line for line in log), "".join(log)

    figures.add("clients", CLIENTS)
    figures.add("seconds", round(elapsed, 1))
    figures.add("requests served", served)
    figures.add("requests per second", round(served / elapsed, 1))
    figures.add("5xx", len(load.server_errors))
    figures.add("other errors", len(load.other_errors))
    figures.add("responses not from a complete index", len(load.incomplete))
    figures.add("rebuilds completed during load", len(rebuilds))
    for number, pid in enumerate(processes):
        figures.add(f"fds worker {number}" if number else "fds master", f"{before[pid]} -> {after[pid]}")
