"""What checksums cost: at commit, at open (trusted and hashed), and in a cold command-line search.

    python benchmarks/integrity.py [--size 10000] [--index DIR] [--runs 9]

On one embedded index (the first ``--size`` records of the arXiv listing
sample, built once, or ``--index``), in one run:

* **at commit**: writing ``CHECKSUMS`` (hashing every file), against the
  peer of reading the same bytes without hashing them;
* **at open**: :func:`integrity.verify` with the files' stamps trusted (what
  every open does), and hashing every file (an index copied or written to,
  and ``searchengine check``'s first half); medians of ``--runs``;
* **cold CLI search** (``searchengine search 'SpMV GPU' --facets
  year,author,category`` as new processes, interleaved, medians): as it
  runs, and with ``VERIFIED`` removed before each run, so that every open
  hashes every file; a bare ``python -c pass`` is the peer.

``uptime`` is printed before and after: the machine is shared.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cold import checkout_env, sample_index, timed  # noqa: E402
from speed import REPO, uptime  # noqa: E402


def seconds(work, runs: int) -> float:
    """Median wall seconds of ``work()`` over ``runs`` calls."""
    found = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        found.append(time.perf_counter() - started)
    return statistics.median(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000, help="listing records to index (0: all)")
    parser.add_argument("--index", type=Path, help="an existing index instead of building one")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "searchengine-cold")
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()

    from searchengine.engines.whoosh import integrity, store

    print(f"uptime at start: {uptime()}")
    env = checkout_env(REPO)
    index = sample_index(args, env)
    generation = store.current_generation(index)
    listed = integrity.read_checksums(generation)
    size = sum(size for _, size in listed.values())

    def read_all() -> None:
        for name in listed:
            with open(generation / name, "rb", buffering=0) as handle:
                while handle.read(1 << 22):
                    pass

    rows = [
        ("read every file (peer)", seconds(read_all, args.runs)),
        ("write CHECKSUMS (at commit)", seconds(lambda: integrity.write_checksums(generation), args.runs)),
        ("verify, stamps trusted (every open)", seconds(lambda: integrity.verify(generation), args.runs)),
        ("verify, every file hashed", seconds(lambda: integrity.verify(generation, everything=True), args.runs)),
    ]
    print(f"\nindex {index}: {len(listed)} files, {size / 1e6:,.1f} MB; median of {args.runs} runs")
    print("| step | seconds | MB/s |\n|---|---|---|")
    for name, value in rows:
        print(f"| {name} | {value:.4f} | {size / 1e6 / value:,.0f} |")

    search = [
        sys.executable,
        "-m",
        "searchengine",
        "search",
        "SpMV GPU",
        "--facets",
        "year,author,category",
        "--index",
        str(index),
    ]
    bare = [sys.executable, "-c", "pass"]
    verified = generation / integrity.VERIFIED
    for command in (bare, search):
        timed(command, env)  # page cache, bytecode
    found: dict[str, list[float]] = {"bare": [], "trusted": [], "hashed": []}
    for _ in range(args.runs):
        found["bare"].append(timed(bare, env)[0])
        found["trusted"].append(timed(search, env)[0])
        verified.unlink(missing_ok=True)
        found["hashed"].append(timed(search, env)[0])
    median = {name: statistics.median(values) for name, values in found.items()}
    print(f"\ncold CLI search with 3 facets, wall, median of {args.runs} interleaved runs")
    print("| row | seconds | above bare |\n|---|---|---|")
    for name, label in (
        ("bare", "python -c pass (peer)"),
        ("trusted", "search, stamps trusted"),
        ("hashed", "search, every file hashed at open"),
    ):
        print(f"| {label} | {median[name]:.3f} | {median[name] - median['bare']:+.3f} |")
    print(f"\nuptime at end: {uptime()}")


if __name__ == "__main__":
    main()
