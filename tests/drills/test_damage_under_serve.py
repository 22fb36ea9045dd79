"""Damage under a running server: a segment cut short while ``serve --workers 2`` holds it.

A small index (``corpus/`` and a few hundred arXiv records) is served by the
real server (``searchengine serve --workers 2`` as a process, on a free
loopback port). Once both server processes have the index open (its largest
segment mapped into each), that segment is cut to half its size in place,
as a full disk or a stray ``truncate`` would.

Every request then (the JSON API, once with a facet listed in full, and the
HTML search page, with a query and bare, which shows the document count)
must be answered 503, with ``{"error": ...}`` from the API: no 500, no
connection error, and no server process may be lost or replaced (a read of
the mapped segment past its new end would kill one). After a
rebuild with the same inputs (``searchengine index`` as a process), the same
server, without a restart, answers 200 again with the answers it gave
before the damage.
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
from pathlib import Path
from urllib.parse import urlencode

from conftest import child_processes
from drills.conftest import REPO
from shareddata import write_listing

RECORDS = 300
WORKERS = 2
ROUNDS = 5  # of the four requests below while the index is damaged, and again after the rebuild
# The API always counts the facets; ``more=year`` lists the year facet in full.
REQUESTS = [
    ("/api/search", {"q": "gpu"}),
    ("/api/search", {"q": "memory", "more": "year"}),
    ("/", {"q": "gpu"}),
    ("/", {}),
]


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (exists and is not a zombie)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def maps(pid: int, path: Path) -> bool:
    """Whether process ``pid`` has the file at ``path`` mapped into memory."""
    try:
        return str(path) in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


def get(port: int, route: str, params: dict) -> tuple[int | None, bytes, str | None]:
    """``(status, body, None)``, or ``(None, b"", what failed)`` when the connection failed."""
    path = route + ("?" + urlencode(params) if params else "")
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request("GET", path, headers={"Connection": "close"})
        response = connection.getresponse()
        return response.status, response.read(), None
    except (OSError, http.client.HTTPException) as exc:
        return None, b"", f"{path}: {type(exc).__name__}: {exc}"
    finally:
        connection.close()


def api_key(body: bytes) -> str:
    """An API answer, all of it but the time it took."""
    found = json.loads(body)
    found.pop("took_ms", None)
    return json.dumps(found, sort_keys=True)


def index_command(inputs: list[Path], index_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "searchengine",
            "index",
            *map(str, inputs),
            "--index-dir",
            str(index_dir),
            "-q",
            "-j",
            "1",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
    )


def test_segment_cut_under_serve(tmp_path, figures):
    listing = tmp_path / "arxiv.jsonl"
    write_listing(listing, RECORDS)
    inputs = [REPO / "corpus", listing]
    index_dir = tmp_path / "index"
    built = index_command(inputs, index_dir)
    assert built.returncode == 0, built.stderr

    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "searchengine",
            "serve",
            "--workers",
            str(WORKERS),
            "--port",
            "0",
            "--host",
            "127.0.0.1",
            "--index-dir",
            str(index_dir),
            "--rate-limit",
            "off",  # the load comes from one address on purpose
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    log: list[str] = []
    try:
        # "Loading ..." first, "Serving ... on http://127.0.0.1:PORT/ with 2 processes" once one is
        # ready, "All 2 server processes ready" once both are: a cut under a process still warming
        # up (reading postings through its maps) is the one case that can stop a process.
        match = ready = None
        for line in iter(server.stderr.readline, ""):
            log.append(line)
            match = match or re.search(r"on http://127\.0\.0\.1:(\d+)/", line)
            ready = re.match(rf"All {WORKERS} server processes ready", line)
            if ready:
                break
        assert match and ready, "".join(log)
        threading.Thread(target=lambda: log.extend(server.stderr), daemon=True).start()
        port = int(match.group(1))

        deadline = time.monotonic() + 120
        while get(port, "/api/search", {"q": "gpu"})[0] != 200:
            assert time.monotonic() < deadline, "".join(log)
            time.sleep(0.2)

        generation = index_dir / (index_dir / "CURRENT").read_text().strip()
        segment = max(generation.glob("*.seg"), key=lambda path: path.stat().st_size)
        # Both server processes hold the index open: the segment is mapped into each.
        while True:
            workers = child_processes(server.pid)
            if len(workers) == WORKERS and all(maps(pid, segment) for pid in workers):
                break
            assert time.monotonic() < deadline, (workers, "".join(log))
            time.sleep(0.2)
        intact = {}
        for route, params in REQUESTS:
            status, body, failed = get(port, route, params)
            assert status == 200, (route, params, status, failed)
            if route.startswith("/api/"):
                intact[json.dumps(params)] = api_key(body)
        assert json.loads(intact[json.dumps({"q": "gpu"})])["total"] > 0

        # The damage: the largest segment cut to half, in place.
        size = segment.stat().st_size
        os.truncate(segment, size // 2)

        statuses: list[int] = []
        other_5xx, connection_errors, not_json_errors = [], [], []
        for _ in range(ROUNDS):
            for route, params in REQUESTS:
                status, body, failed = get(port, route, params)
                if status is None:
                    connection_errors.append(failed)
                    continue
                statuses.append(status)
                if status >= 500 and status != 503:
                    other_5xx.append(f"{route} {params}: {status}")
                if route.startswith("/api/"):
                    try:
                        if "error" not in json.loads(body):
                            not_json_errors.append(f"{route} {params}: {body[:200]!r}")
                    except ValueError:
                        not_json_errors.append(f"{route} {params}: {body[:200]!r}")
        workers_damaged = child_processes(server.pid)
        alive_damaged = [pid for pid in workers if alive(pid)]
        server_running = server.poll() is None

        # The rebuild, with the same inputs; the same server picks it up.
        rebuilt = index_command(inputs, index_dir)
        assert rebuilt.returncode == 0, rebuilt.stderr
        deadline = time.monotonic() + 60
        while get(port, "/api/search", {"q": "gpu"})[0] != 200 and time.monotonic() < deadline:
            time.sleep(0.2)
        after: list[int] = []
        answers_differ = []
        for _ in range(ROUNDS):
            for route, params in REQUESTS:
                status, body, failed = get(port, route, params)
                if status is None:
                    connection_errors.append(f"after the rebuild: {failed}")
                    continue
                after.append(status)
                if status == 200 and route.startswith("/api/") and api_key(body) != intact[json.dumps(params)]:
                    answers_differ.append(f"{route} {params}")
        workers_after = child_processes(server.pid)
        alive_after = [pid for pid in workers if alive(pid)]
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=60)
    text = "".join(log)

    figures.add("requests while damaged", len(statuses) + len(connection_errors))
    figures.add("503 while damaged", statuses.count(503))
    figures.add("5xx other than 503", len(other_5xx))
    figures.add("connection errors", len(connection_errors))
    figures.add("server processes before -> after", f"{len(workers)} -> {len(alive_after)}")
    figures.add("server processes replaced", len(set(workers_after) ^ set(workers)))
    figures.add("requests after rebuild", len(after))
    figures.add("200 after rebuild", after.count(200))
    figures.add("answers unlike before the damage", len(answers_differ))

    assert other_5xx == [], other_5xx
    assert connection_errors == [], connection_errors
    assert statuses == [503] * ROUNDS * len(REQUESTS), statuses
    assert not_json_errors == [], not_json_errors
    assert server_running, text
    assert workers_damaged == workers and alive_damaged == workers, (workers, workers_damaged, text)
    assert workers_after == workers and alive_after == workers, (workers, workers_after, text)
    assert after == [200] * ROUNDS * len(REQUESTS), after
    assert answers_differ == [], answers_differ
    assert "Traceback" not in text, text
    assert "was killed by signal" not in text and "starting another" not in text, text
