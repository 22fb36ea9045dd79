"""Abuse drill: one client sending expensive requests as fast as it can, eight
well-behaved clients, against the real ``searchengine serve --workers 2``.

The server runs as a process on a free loopback port over the drills' arXiv
subset, with its default limits (``60/minute`` cost units per client, an
expensive request costing 10, one expensive request at a time per process).
Each client has its own loopback address (127.0.0.x: Linux routes all of
127.0.0.0/8 to this machine), so the server tells them apart by socket
address, as it would tell apart clients on the network.

- **Baseline**: 8 well-behaved clients (127.0.0.10-17), each
  :data:`REQUESTS` cheap searches and pages with :data:`THINK` seconds
  between them; their latencies give the baseline p95.
- **Under abuse**: 8 fresh well-behaved clients (127.0.0.20-27) do the same
  while an abuser (127.0.0.66, its own process) sends expensive requests
  (exports of 1,000 hits, two-edit fuzzy words, pasted abstracts, feeds of
  100 entries, "papers like these") back to back on one connection, each
  with a made-up ``X-Forwarded-For`` naming another address.

Asserted: the well-behaved clients' p95 under abuse is at most twice the
baseline's (a baseline under :data:`P95_FLOOR` counts as that floor: timer
noise on a 2-core machine), none of their requests is refused or fails,
and the abuser is answered 429 with ``Retry-After``, most of the time, its
spoofed header notwithstanding. Bounded: :data:`REQUESTS` per client and at
most :data:`ABUSE_SECONDS` of abuse.
"""

from __future__ import annotations

import http.client
import multiprocessing
import re
import signal
import subprocess
import sys
import threading
import time
from urllib.parse import quote

import pytest

from drills.conftest import REPO

WORKERS = 2
CLIENTS = 8
REQUESTS = 50  # per well-behaved client and phase
THINK = 0.1  # seconds between a well-behaved client's requests
ABUSE_SECONDS = 60  # at most
P95_FLOOR = 0.02  # seconds
ABUSER = "127.0.0.66"
CHEAP = [
    "/api/search?q=neural+network",
    "/?q=quantum+field",
    "/api/search?q=graph&sort=newest",
    "/?q=galaxy+cluster&year=2020-",
    "/api/search?q=learning",
    "/?sort=newest",
]
PASTED = (
    "We study sparse matrix vector multiplication on graphics processors and show that the proposed "
    "storage format improves throughput over the state of the art on a wide range of matrices from "
    "scientific computing, graph analytics and machine learning, while using less memory."
)
EXPENSIVE = [
    "/api/export?q=learning&format=bibtex",
    "/api/search?q=" + quote("learnin~2 netwrk~2 quantun~2"),
    "/api/search?q=" + quote(PASTED),
    "/feed.atom?q=model&limit=100",
    "/api/export?format=csv&sort=newest",
    "/api/search?q=" + quote("co* ne* pro*"),
]


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(0.95 * len(ordered)) - 1)] if ordered else 0.0


def well_behaved(port: int, address: str, paths: list[str], out: dict) -> None:
    """One client: ``paths`` in turn on one keep-alive connection from ``address``;
    latencies and statuses into ``out``."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(address, 0))
    latencies, statuses = [], []
    try:
        for number in range(REQUESTS):
            path = paths[number % len(paths)]
            began = time.perf_counter()
            try:
                connection.request("GET", path)
                response = connection.getresponse()
                response.read()
                statuses.append(response.status)
            except (OSError, http.client.HTTPException) as exc:
                statuses.append(f"{type(exc).__name__}")
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(address, 0))
            latencies.append(time.perf_counter() - began)
            time.sleep(THINK)
    finally:
        connection.close()
    out[address] = (latencies, statuses)


def abuse(port: int, stop, results) -> None:
    """The abuser's process: expensive requests back to back from :data:`ABUSER`,
    each with another made-up ``X-Forwarded-For``, until ``stop`` is set or
    :data:`ABUSE_SECONDS` pass; ``(status, Retry-After)`` of each into ``results``."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(ABUSER, 0))
    deadline = time.monotonic() + ABUSE_SECONDS
    number = 0
    found = []
    while not stop.is_set() and time.monotonic() < deadline:
        path = EXPENSIVE[number % len(EXPENSIVE)]
        spoofed = f"198.51.100.{number % 250 + 1}, 203.0.113.{number % 200 + 1}"
        try:
            connection.request("GET", path, headers={"X-Forwarded-For": spoofed, "X-Real-IP": spoofed})
            response = connection.getresponse()
            response.read()
            found.append((response.status, response.getheader("Retry-After")))
        except (OSError, http.client.HTTPException) as exc:
            found.append((type(exc).__name__, None))
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(ABUSER, 0))
        number += 1
    connection.close()
    results.extend(found)


def phase(port: int, first: int) -> dict:
    out: dict = {}
    threads = [
        threading.Thread(
            target=well_behaved,
            args=(port, f"127.0.0.{first + n}", CHEAP[n % len(CHEAP) :] + CHEAP[: n % len(CHEAP)], out),
        )
        for n in range(CLIENTS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(REQUESTS * (THINK + 30))
    return out


@pytest.fixture
def server(arxiv_index_dir):
    """``serve --workers 2`` with its default limits; yields its port, stopped by pid."""
    process = subprocess.Popen(
        [sys.executable, "-m", "searchengine", "serve", "--workers", str(WORKERS), "--port", "0"]
        + ["--host", "127.0.0.1", "--index-dir", str(arxiv_index_dir)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    log: list[str] = []
    try:
        port = None
        for line in iter(process.stderr.readline, ""):
            log.append(line)
            match = re.search(r"on http://127\.0\.0\.1:(\d+)/", line)
            port = port or (int(match.group(1)) if match else None)
            if line.startswith(f"All {WORKERS} server processes ready"):
                break
        assert port, "".join(log)
        threading.Thread(target=lambda: log.extend(process.stderr), daemon=True).start()
        yield port, log
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


def test_an_abusive_client_does_not_slow_the_others(server, figures):
    port, log = server
    phase(port, 100)  # warm-up of both processes, from other addresses
    baseline = phase(port, 10)
    context = multiprocessing.get_context("fork")
    stop = context.Event()
    manager = context.Manager()
    abuser_results = manager.list()
    abuser = context.Process(target=abuse, args=(port, stop, abuser_results))
    abuser.start()
    try:
        time.sleep(1.0)  # the abuser is at full speed before the clients start
        under_abuse = phase(port, 20)
    finally:
        stop.set()
        abuser.join(ABUSE_SECONDS + 30)
        if abuser.is_alive():
            abuser.kill()
    abused = list(abuser_results)
    manager.shutdown()

    base_latencies = [value for latencies, _ in baseline.values() for value in latencies]
    abuse_latencies = [value for latencies, _ in under_abuse.values() for value in latencies]
    good_statuses = [status for _, statuses in [*baseline.values(), *under_abuse.values()] for status in statuses]
    abuser_statuses = [status for status, _ in abused]
    refused = [wait for status, wait in abused if status == 429]
    base_p95, abuse_p95 = p95(base_latencies), p95(abuse_latencies)

    figures.add("well-behaved requests per phase", len(abuse_latencies))
    figures.add("p95 without abuser (ms)", base_p95 * 1000)
    figures.add("p95 with abuser (ms)", abuse_p95 * 1000)
    figures.add("abuser requests", len(abused))
    figures.add("abuser answered 200", abuser_statuses.count(200))
    figures.add("abuser answered 429", len(refused))
    figures.add("abuser answered 503", abuser_statuses.count(503))

    assert len(base_latencies) == len(abuse_latencies) == CLIENTS * REQUESTS
    assert set(good_statuses) == {200}, sorted(set(map(str, good_statuses)))
    assert abuse_p95 <= 2 * max(base_p95, P95_FLOOR), (base_p95, abuse_p95)
    assert set(abuser_statuses) <= {200, 429, 503}, sorted(set(map(str, abuser_statuses)))
    # The abuser spent its budget (60 cost units: 6 expensive requests) and was refused from then on,
    # although each request named another client in X-Forwarded-For.
    assert abuser_statuses.count(200) <= 6, abuser_statuses[:40]
    # Each refusal is held back half a second: the abuser waits instead of the processors.
    assert len(refused) >= 0.5 * len(abused) and len(refused) >= 10, (len(refused), len(abused))
    assert all(wait is not None and wait.isdigit() and 1 <= int(wait) <= 60 for wait in refused)
    assert not [line for line in log if "Traceback" in line or "killed" in line], "".join(log)


def test_every_request_of_the_abuser_counts_as_expensive():
    from searchengine.web import create_app
    from searchengine.web.guard import is_expensive

    app = create_app(index=object())  # type: ignore[arg-type]
    for path in EXPENSIVE:
        with app.test_request_context(path):
            assert is_expensive(), path
    for path in CHEAP:
        with app.test_request_context(path):
            assert not is_expensive(), path
