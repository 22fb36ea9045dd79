"""Dead-worker drill: segments cut under searches, server processes killed by
SIGBUS, and every request still answered.

``searchengine serve --workers 2`` (a process, free loopback port, no rate
limit: the load comes from one address) serves a small index (``corpus/``
and :data:`RECORDS` generated arXiv records) while :data:`CLIENTS` clients
send searches back to back, each on a new connection, among them slow
fuzzy ones so that searches are under way most of the time. :data:`CUTS`
times, the index's largest segment is cut to half its size in place, and
after :data:`DAMAGED_SECONDS` the index is rebuilt with the same inputs
(``searchengine index``); the server follows the rebuild.

A search reading the cut segment through its memory map kills its process
(SIGBUS); the supervisor answers that process's connections with 503 and
``Retry-After``, and starts another. A search that starts after the cut is
refused 503 by the check of the files' stamps.

Asserted: every request gets an HTTP answer (no connection closed without
an answer), 200 or 503, every 503 with ``Retry-After``, but for a
connection its process had accepted and not yet handed to the supervisor
in the instant it died (reset: counted apart, at most one per death); the
server runs to the end; after the last rebuild every client gets 200s.
Bounded: :data:`CUTS` cuts and at most :data:`SECONDS` seconds in all.
"""

from __future__ import annotations

import http.client
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import quote

from drills.conftest import REPO
from shareddata import write_listing

RECORDS = 1000
CLIENTS = 4
CUTS = 8
DAMAGED_SECONDS = 1.5
SECONDS = 400
PATHS = [
    "/api/search?q=" + quote("learnin~2 netwrk~2 quantun~2 galaxi~2"),
    "/api/search?q=gpu",
    "/?q=" + quote("co* ne* pro*"),
    "/api/search?q=memory&more=year",
    "/?q=" + quote("matrx~2 procesors~2"),
]


def request(port: int, path: str) -> tuple[object, str | None]:
    """``(status, Retry-After)`` of one request on a new connection, or
    ``(what failed, None)`` when no HTTP answer came."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request("GET", path, headers={"Connection": "close"})
        response = connection.getresponse()
        try:
            response.read()
        except http.client.IncompleteRead:
            # Answered, but the process died while writing the body (another
            # request's SIGBUS): a cut answer, which a client sees as failed.
            return CUT, None
        return response.status, response.getheader("Retry-After")
    except (OSError, http.client.HTTPException) as exc:
        return f"{path}: {type(exc).__name__}: {exc}", None
    finally:
        connection.close()


CUT = "answer cut off while its process died"


def index_command(inputs: list[Path], index_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "searchengine", "index", *map(str, inputs), "--index-dir", str(index_dir)]
        + ["-q", "-j", "1"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )


def test_every_request_is_answered_while_segments_are_cut(tmp_path, figures):
    listing = tmp_path / "arxiv.jsonl"
    write_listing(listing, RECORDS)
    inputs = [REPO / "corpus", listing]
    index_dir = tmp_path / "index"
    built = index_command(inputs, index_dir)
    assert built.returncode == 0, built.stderr
    server = subprocess.Popen(
        [sys.executable, "-m", "searchengine", "serve", "--workers", "2", "--port", "0", "--host", "127.0.0.1"]
        + ["--index-dir", str(index_dir), "--rate-limit", "off"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    log: list[str] = []
    answers: list[tuple[object, str | None]] = []
    stop = threading.Event()
    deadline = time.monotonic() + SECONDS
    try:
        port = None
        for line in iter(server.stderr.readline, ""):
            log.append(line)
            match = re.search(r"on http://127\.0\.0\.1:(\d+)/", line)
            port = port or (int(match.group(1)) if match else None)
            if line.startswith("All 2 server processes ready"):
                break
        assert port, "".join(log)
        threading.Thread(target=lambda: log.extend(server.stderr), daemon=True).start()

        def client(number: int) -> None:
            turn = number
            while not stop.is_set() and time.monotonic() < deadline:
                answers.append(request(port, PATHS[turn % len(PATHS)]))
                turn += 1

        clients = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
        for thread in clients:
            thread.start()
        rebuild_seconds = []
        for _ in range(CUTS):
            time.sleep(0.7)
            generation = index_dir / (index_dir / "CURRENT").read_text().strip()
            segment = max(generation.glob("*.seg"), key=lambda path: path.stat().st_size)
            os.truncate(segment, segment.stat().st_size // 2)
            time.sleep(DAMAGED_SECONDS)
            began = time.monotonic()
            rebuilt = index_command(inputs, index_dir)
            assert rebuilt.returncode == 0, rebuilt.stderr
            rebuild_seconds.append(time.monotonic() - began)
            while request(port, "/api/search?q=gpu")[0] != 200:
                assert time.monotonic() < deadline, "".join(log)
                time.sleep(0.2)
        time.sleep(1.0)
        settled = len(answers)
        time.sleep(2.0)
        stop.set()
        for thread in clients:
            thread.join(90)
        running = server.poll() is None
    finally:
        stop.set()
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=60)
    text = "".join(log)
    statuses = [status for status, _ in answers if status != CUT]
    cut = len(answers) - len(statuses)
    failed = [status for status in statuses if not isinstance(status, int)]
    # A connection accepted in the instant before its process died, before the
    # supervisor got its duplicate, is reset by the kernel: counted apart.
    reset = [status for status in failed if "ConnectionResetError" in status]
    failed = [status for status in failed if status not in reset]
    deaths = len(re.findall(r"was killed by signal 7", text))
    answered_for_dead = sum(int(n) for n in re.findall(r"503 sent on the (\d+) connections", text))

    figures.add("requests", len(answers))
    figures.add("answered 200", statuses.count(200))
    figures.add("answered 503", statuses.count(503))
    figures.add("no answer", len(failed))
    figures.add("answers cut off mid-body by their process's death", cut)
    figures.add("connections reset: accepted as their process died", len(reset))
    figures.add("server processes killed by SIGBUS", deaths)
    figures.add("connections answered for dead processes", answered_for_dead)
    figures.add("rebuild (s, mean)", sum(rebuild_seconds) / len(rebuild_seconds))

    assert failed == [], failed[:10]
    assert len(reset) <= deaths, (reset[:10], deaths)
    # An answer already being written when its process dies cannot be completed;
    # at most one per client per death (the clients wait for each answer).
    assert cut <= deaths * CLIENTS, (cut, deaths)
    assert set(statuses) <= {200, 503}, sorted(set(map(str, statuses)))
    assert all(wait is not None and wait.isdigit() for status, wait in answers if status == 503)
    assert running, text
    # (the first answer of each client after that may be of a request sent before the rebuild)
    tail = [str(status) for status, _ in answers[settled + CLIENTS :]]
    assert tail and set(tail) == {"200"}, (" ".join(tail), text)
    assert "Traceback" not in text, text
