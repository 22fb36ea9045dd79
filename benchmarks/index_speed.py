"""Indexing throughput: build an index of N arXiv records and print records per second.

    python benchmarks/index_speed.py [--records N] [--repeats R] [--package-root DIR]

Reads the first N records of ../shared/data/arxiv/arxiv_listing_sample.jsonl.gz,
writes them as JSON lines in the Record format (id, title, abstract,
authors, categories) to a temporary file, and times
``searchengine.build_index`` on it R times (median reported, each build in a
fresh directory). ``--package-root`` imports ``searchengine`` from another
checkout, so that two versions can be compared on the same input and machine.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--package-root", type=Path, default=REPO)
    args = parser.parse_args()
    sys.path.insert(0, str(args.package_root.resolve()))
    from searchengine import build_index
    from searchengine.readers import read_records

    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "records.jsonl"
        count = write_records(args.records, source)
        list(read_records([source], []))  # warm imports (NLTK, pylatexenc) outside the timing
        times = []
        for repeat in range(args.repeats):
            started = time.perf_counter()
            build_index([source], Path(tmp) / f"index-{repeat}")
            times.append(time.perf_counter() - started)
    median = statistics.median(times)
    print(f"package: {args.package_root}")
    print(f"{count} records, builds (s): {', '.join(f'{t:.1f}' for t in times)}")
    print(f"median {median:.1f} s = {count / median:.0f} records/s; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
