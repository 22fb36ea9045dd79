"""Indexing throughput: build an index of N arXiv records and print records per second.

    python benchmarks/index_speed.py [--records N] [--repeats R] [--jobs J] [--package-root DIR]
    python benchmarks/index_speed.py --tokenizer

Reads the first N records of ../shared/data/arxiv/arxiv_listing_sample.jsonl.gz,
writes them as JSON lines in the Record format (id, title, abstract,
authors, categories) to a temporary file, and times
``searchengine.build_index`` on it R times (median reported, each build in a
fresh directory), with J indexing processes (default: one per core). Besides
wall-clock time it prints the CPU seconds of the process and its workers,
since the machine may be shared. ``--package-root`` imports ``searchengine``
from another checkout, so that two versions can be compared on the same
input and machine.

``--tokenizer`` times the analyzer's tokenizer instead: microseconds per
abstract of the first N records, and 100 kB inputs made to provoke
backtracking (long runs of letters, of dash- and dot-joined parts, of ``++``
and ``#`` endings), which must take milliseconds, growing linearly.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO.parent / "shared" / "data" / "arxiv" / "arxiv_listing_sample.jsonl.gz"


def write_records(count: int, path: Path) -> int:
    """Write ``count`` listing records as Record JSON lines; return the number written."""
    written = 0
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as source, open(path, "w", encoding="utf-8") as out:
        for line in source:
            item = json.loads(line)
            record = {
                "id": item["id"],
                "title": item.get("title") or "",
                "abstract": item.get("summary") or "",
                "authors": item.get("authors") or [],
                "categories": item.get("categories") or [],
            }
            if not record["title"]:
                continue
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            written += 1
            if written == count:
                break
    return written


PATHOLOGICAL = {
    "letters": "a" * 100_000,
    "dash-joined parts": "a-" * 50_000,
    "dot-joined digits": "1." * 50_000,
    "trailing ++ then a letter": "a-b++x" * 16_666,
    "# glued to letters": "C#x" * 33_333,
    "mixed separators": "ab-1.2++#c" * 10_000,
}


def time_tokenizer(source: Path) -> None:
    """Print the tokenizer's cost per abstract and on the pathological inputs."""
    from searchengine.analysis.tokens import TechTokenizer
    from searchengine.readers import read_records

    tokenizer = TechTokenizer()
    list(tokenizer("warm up"))
    abstracts = [record.abstract for record in read_records([source], [])]
    started = time.perf_counter()
    tokens = sum(1 for text in abstracts for _ in tokenizer(text, positions=True, chars=True))
    spent = time.perf_counter() - started
    print(f"{len(abstracts)} abstracts, {tokens} tokens: {spent / len(abstracts) * 1e6:.0f} us per abstract")
    for name, text in PATHOLOGICAL.items():
        for size in (len(text) // 10, len(text)):
            started = time.perf_counter()
            count = sum(1 for _ in tokenizer(text[:size], positions=True, chars=True))
            print(f"{name:26s} {size:7d} chars: {count:6d} tokens in {(time.perf_counter() - started) * 1000:6.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--package-root", type=Path, default=REPO)
    parser.add_argument("--tokenizer", action="store_true", help="time the tokenizer instead of builds")
    args = parser.parse_args()
    sys.path.insert(0, str(args.package_root.resolve()))
    from searchengine import build_index
    from searchengine.readers import read_records

    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "records.jsonl"
        count = write_records(args.records, source)
        if args.tokenizer:
            time_tokenizer(source)
            return
        list(read_records([source], []))  # warm imports (NLTK, pylatexenc) outside the timing
        times, cpus = [], []
        options = {} if args.jobs is None else {"jobs": args.jobs}
        for repeat in range(args.repeats):
            cpu = _cpu_seconds()
            started = time.perf_counter()
            build_index([source], Path(tmp) / f"index-{repeat}", **options)
            times.append(time.perf_counter() - started)
            cpus.append(_cpu_seconds() - cpu)
    median = statistics.median(times)
    print(f"package: {args.package_root}")
    print(
        f"{count} records, builds (s): {', '.join(f'{t:.1f}' for t in times)}; "
        f"CPU (s, all processes): {', '.join(f'{c:.1f}' for c in cpus)}"
    )
    print(
        f"median {median:.1f} s = {count / median:.0f} records/s, "
        f"{count / statistics.median(cpus):.0f} records per CPU-second; load average {os.getloadavg()[0]:.2f}"
    )


def _cpu_seconds() -> float:
    """CPU time of this process and its finished children (the indexing workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


if __name__ == "__main__":
    main()
