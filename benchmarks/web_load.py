"""Load test of ``/api/search``: concurrent clients against ``searchengine serve``.

Builds (or reuses) an index of the 74,728-record arXiv listing sample in
``../shared/data/arxiv/``, starts the production server (waitress) on a free
loopback port, and sends distinct two-word queries (every request asks for
all three facets) first from one client, then from ``--clients`` concurrent
clients over keep-alive connections. Prints latency percentiles (ms, per
request, measured by the client), throughput, the number of errors and the
machine's load average.

    python benchmarks/web_load.py                     # build into a temp dir
    python benchmarks/web_load.py --index-dir /tmp/arxiv-index   # build once, reuse

Target: p95 < 150 ms at 8 clients, zero errors.
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

REPO = Path(__file__).resolve().parent.parent
LISTING = REPO.parent / "shared" / "data" / "arxiv" / "arxiv_listing_sample.jsonl.gz"

# Common words that do not make a query on their own: the analyzer's stop
# words and a few more that are frequent in titles.
STOP_WORDS = frozenset(
    """a an and are as at be by for from in into is it its of on or over the this
to towards toward under via vs with without using based through their our we can""".split()
)
SEED = 42


def two_word_queries(source: Path, count: int, seed: int = SEED) -> list[str]:
    """``count`` queries of two consecutive content words from random titles of ``source``.

    Words are lower-cased, stripped of punctuation, at least three letters and
    not in :data:`STOP_WORDS`; the same seed gives the same queries.
    """
    import random

    with gzip.open(source, "rt", encoding="utf-8") as lines:
        titles = [json.loads(line)["title"] for line in lines]
    sys.path.insert(0, str(REPO))
    from searchengine.analysis.stopwords import STOP_WORDS as ANALYZER_STOP_WORDS

    stop_words = STOP_WORDS | ANALYZER_STOP_WORDS
    rng = random.Random(seed)
    queries: list[str] = []
    seen: set[str] = set()
    while len(queries) < count:
        words = [w.strip(".,:;()[]{}\"'!?").lower() for w in rng.choice(titles).split()]
        pairs = [
            (a, b)
            for a, b in zip(words, words[1:])
            if all(len(w) >= 3 and w.isalpha() and w not in stop_words for w in (a, b))
        ]
        if pairs:
            query = " ".join(rng.choice(pairs))
            if query not in seen:
                seen.add(query)
                queries.append(query)
    return queries


def ensure_index(index_dir: Path) -> None:
    if (index_dir / "CURRENT").exists():
        print(f"reusing index {index_dir}", flush=True)
        return
    print(f"indexing {LISTING.name} (a few minutes) ...", flush=True)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "searchengine", "index", str(LISTING), "--quiet", "--index-dir", str(index_dir)],
        check=True,
    )
    print(f"indexed in {time.perf_counter() - started:.0f} s", flush=True)


def start_server(
    index_dir: Path, threads: int, workers: int | None = None, seconds: float = 120
) -> tuple[subprocess.Popen, str, int, dict]:
    """Start ``searchengine serve`` on a free loopback port and return once it has answered a search.

    Returns the process, host, port and the start's timings in seconds from
    the process's start: ``loading`` (its "Loading ... port N" line),
    ``serving`` (its "Serving ... ready in N s" line), ``ready_in`` (the N it
    reports), ``first_connection`` (the first connection the port accepted:
    probed every 20 ms from the "Loading" line on) and ``first_answer`` (a
    search sent on that connection answered), and ``answered_first``: whether
    that first accepted connection got a 200 answer (the server listens only
    once ready, so it must). The caller stops the process (terminate, wait).

    Raises:
        SystemExit: the server exited or did not answer within ``seconds``.
    """
    started = time.perf_counter()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "searchengine",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--threads",
            str(threads),
            "--index-dir",
            str(index_dir),
            "--rate-limit",
            "off",  # the load comes from one address on purpose
        ]
        + (["--workers", str(workers)] if workers else []),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    startup: dict = {}
    serving = threading.Event()

    def read_log() -> None:
        for line in process.stderr:
            found = re.search(r"ready in ([\d.]+) s", line)
            if found and not serving.is_set():
                startup.update(serving=time.perf_counter() - started, ready_in=float(found.group(1)))
                serving.set()

    for line in process.stderr:
        found = re.search(r"port (\d+) accepts connections", line)
        if found:
            startup["loading"] = time.perf_counter() - started
            host, port = "127.0.0.1", int(found.group(1))
            break
    else:
        process.wait()
        raise SystemExit("the server did not start (no 'Loading ... port N' line)")
    threading.Thread(target=read_log, daemon=True).start()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        try:
            connection = http.client.HTTPConnection(host, port, timeout=seconds)
            connection.connect()
        except ConnectionRefusedError:
            time.sleep(0.02)
            continue
        startup["first_connection"] = time.perf_counter() - started
        try:
            connection.request("GET", "/api/search?q=warm")
            response = connection.getresponse()
            response.read()
            startup["answered_first"] = response.status == 200
        except (OSError, http.client.HTTPException):
            startup["answered_first"] = False
        connection.close()
        startup["first_answer"] = time.perf_counter() - started
        if startup["answered_first"]:
            serving.wait(10)
            return process, host, port, startup
    process.terminate()
    process.wait(timeout=10)
    raise SystemExit(f"the server did not answer a search within {seconds:.0f} s (first connection: {startup})")


def client(host: str, port: int, paths: list[str], latencies: list[float], errors: list[str]) -> None:
    connection = http.client.HTTPConnection(host, port, timeout=30)
    for path in paths:
        started = time.perf_counter()
        try:
            connection.request("GET", path)
            response = connection.getresponse()
            body = response.read()
            elapsed = (time.perf_counter() - started) * 1000
            if response.status != 200:
                errors.append(f"{response.status} {path}: {body[:200]!r}")
            else:
                latencies.append(elapsed)
        except (OSError, http.client.HTTPException) as exc:
            errors.append(f"{type(exc).__name__} {path}: {exc}")
            connection.close()
            connection = http.client.HTTPConnection(host, port, timeout=30)
    connection.close()


def run_load(host: str, port: int, queries: list[str], clients: int, requests: int) -> dict:
    """Send ``/api/search`` requests (the API counts facets year, author and category on every
    search) from one client, then from
    ``clients`` concurrent ones, each over its own keep-alive connection.

    ``queries`` needs ``(clients + 1) * requests`` entries: the last ``requests`` go to the lone
    client (after 5 unmeasured ones: the first search reads the facet columns), the others to the
    concurrent clients, ``requests`` each. Returns ``single`` and ``latencies`` (client-side
    milliseconds per answered request), their ``single_errors`` and ``errors`` (messages),
    ``wall`` (seconds of the concurrent run) and ``load_before`` (load average before it).
    """

    def path(query: str) -> str:
        return "/api/search?" + urlencode({"q": query})

    warm = [path(q) for q in queries[-requests:]]
    client(host, port, warm[:5], [], [])
    single: list[float] = []
    single_errors: list[str] = []
    client(host, port, warm, single, single_errors)
    latencies: list[float] = []
    errors: list[str] = []
    plans = [[path(q) for q in queries[c * requests : (c + 1) * requests]] for c in range(clients)]
    threads = [threading.Thread(target=client, args=(host, port, plan, latencies, errors)) for plan in plans]
    load_before = os.getloadavg()
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {
        "single": single,
        "single_errors": single_errors,
        "latencies": latencies,
        "errors": errors,
        "wall": time.perf_counter() - started,
        "load_before": load_before,
    }


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index-dir", type=Path, help="index to build once and reuse (default: a temp dir)")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--requests", type=int, default=40, help="requests per client")
    parser.add_argument("--threads", type=int, default=4, help="server worker threads (serve's default)")
    parser.add_argument(
        "--workers", type=int, default=None, help="server processes (serve --workers; default: serve's, one per core)"
    )
    args = parser.parse_args()

    tmp = None
    index_dir = args.index_dir
    if index_dir is None:
        tmp = tempfile.TemporaryDirectory()
        index_dir = Path(tmp.name) / "index"
    ensure_index(index_dir)

    process, host, port, _ = start_server(index_dir, args.threads, args.workers)
    try:
        queries = two_word_queries(LISTING, args.clients * args.requests + args.requests)
        load = run_load(host, port, queries, args.clients, args.requests)
        single, single_errors, latencies, errors = (
            load[key] for key in ("single", "single_errors", "latencies", "errors")
        )
        wall, load_before = load["wall"], load["load_before"]
        hits = []
        connection = http.client.HTTPConnection(host, port, timeout=30)
        for query in queries[:50]:
            connection.request("GET", "/api/search?" + urlencode({"q": query}))
            hits.append(json.loads(connection.getresponse().read())["total"])
        connection.close()
    finally:
        process.terminate()
        process.wait(timeout=10)
        if tmp is not None:
            tmp.cleanup()

    print(
        f"\n/api/search, two-word queries from random titles (seed {SEED}), facets year,author,category; "
        f"server threads {args.threads}, processes {args.workers or os.cpu_count()}"
    )
    print(f"hits per query (first 50 queries): min {min(hits)}, median {statistics.median(hits):.0f}, max {max(hits)}")
    if single:
        print(
            f"1 client  x {args.requests} requests: p50 {percentile(single, 50):.1f} ms  "
            f"p95 {percentile(single, 95):.1f} ms  errors {len(single_errors)}"
        )
    if latencies:
        print(
            f"{args.clients} clients x {args.requests} requests: p50 {percentile(latencies, 50):.1f} ms  "
            f"p95 {percentile(latencies, 95):.1f} ms  p99 {percentile(latencies, 99):.1f} ms  "
            f"max {max(latencies):.1f} ms  errors {len(errors)}"
        )
    print(f"throughput: {len(latencies) / wall:.1f} requests/s over {wall:.1f} s")
    for error in errors[:5]:
        print(f"  {error}")
    print(
        f"load average before / after the concurrent run: {' '.join(f'{x:.2f}' for x in load_before)} / "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    print(
        f"target p95 < 150 ms at {args.clients} clients with zero errors: "
        f"{'met' if latencies and percentile(latencies, 95) < 150 and not errors else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
