"""Semantic search's costs on arXiv records: encoding, vectors on disk, distinct queries, an update.

    python benchmarks/semantic.py [--records N] [--queries Q] [--work DIR] [--jobs J] [--reuse]

Takes the first N records (default 5,000) of
``../shared/data/arxiv/arxiv_listing_sample.jsonl.gz`` and, in one run:

* builds an index of them without vectors and one with (``--vectors``, J
  threads for the model, default one per core), each in a fresh process
  (``searchengine index``, wall time); the difference is the encoding. It
  prints records encoded per second and per CPU-second, and the time the
  whole 74,728-record sample would take at that rate;
* the size of the vector files of the generation, and per record;
* Q distinct queries (default 200: two or three content words of random
  titles, seed 42, and 20 titles pasted whole), each run once in a process
  that ran 20 others first, top 10 with snippets through the Python API, in
  lexical and in hybrid mode (the peer: the same index, the same process):
  p50 and p95 milliseconds of each and their ratio;
* an update of 1,000 new records (ids changed, text shuffled) into a copy
  of the index with vectors: wall time including their encoding.

``uptime`` is printed at both ends: the machine may be shared.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
LISTING = REPO.parent / "shared" / "data" / "arxiv" / "arxiv_listing_sample.jsonl.gz"
SAMPLE_SIZE = 74_728
STOP = {"a", "an", "and", "for", "in", "of", "on", "the", "to", "with", "via", "from", "by", "is", "are"}


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def records(count: int, work: Path) -> tuple[Path, list[dict]]:
    path = work / f"records-{count}.jsonl"
    with gzip.open(LISTING, "rt", encoding="utf-8") as lines:
        chosen = [json.loads(line) for _, line in zip(range(count), lines)]
    path.write_text("".join(json.dumps(item) + "\n" for item in chosen), encoding="utf-8")
    return path, chosen


def queries(items: list[dict], count: int, seed: int = 42) -> list[str]:
    rng = random.Random(seed)
    found: list[str] = []
    while len(found) < count + 20:  # 20 for the warm-up
        title = rng.choice(items)["title"]
        if len(found) % 10 == 9:
            found.append(" ".join(title.split()))  # a title pasted whole
            continue
        words = [w for w in re.findall(r"[A-Za-z][A-Za-z-]+", title) if w.lower() not in STOP]
        width = rng.choice((2, 3))
        if len(words) >= width:
            start = rng.randrange(len(words) - width + 1)
            found.append(" ".join(words[start : start + width]))
    return list(dict.fromkeys(found))


def build(source: Path, index: Path, *extra: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "searchengine", "index", str(source), "--index-dir", str(index), "--quiet", *extra],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def cpu_of_children() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=5000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--work", type=Path, default=Path("/tmp/searchengine-semantic-bench"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--reuse", action="store_true", help="keep the indexes a previous run built in --work")
    args = parser.parse_args()
    from searchengine import open_index
    from searchengine.indexer import update_index

    print(uptime())
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    source, items = records(args.records, work)
    if args.reuse and (work / "plain").is_dir() and (work / "vectors").is_dir():
        print("indexes of a previous run reused: builds not timed")
    else:
        for name in ("plain", "vectors"):
            subprocess.run(["rm", "-rf", str(work / name)], check=True)
        plain = build(source, work / "plain", "--no-vectors", "--jobs", str(args.jobs))
        cpu_before = cpu_of_children()
        with_vectors = build(source, work / "vectors", "--vectors", "--jobs", str(args.jobs))
        cpu = cpu_of_children() - cpu_before
        encoding = max(with_vectors - plain, 1e-9)
        per_second = len(items) / encoding
        print(
            f"build without vectors {plain:.1f} s, with vectors {with_vectors:.1f} s ({cpu:.0f} CPU-s): "
            f"encoding {per_second:.1f} records/s on {args.jobs} threads; the {SAMPLE_SIZE:,}-record sample "
            f"would take {SAMPLE_SIZE / per_second / 60:.1f} min"
        )
    generation = next(p for p in (work / "vectors").glob("gen-*") if (p / "vectors.npy").exists())
    size = sum((generation / name).stat().st_size for name in ("vectors.npy", "vector-scales.npy"))
    print(
        f"vectors on disk {size / 1e6:.2f} MB, {size / len(items):.0f} bytes a record; "
        f"{size / len(items) * SAMPLE_SIZE / 1e6:.1f} MB for the sample"
    )

    asked = queries(items, args.queries)
    index = open_index(work / "vectors")
    for query in asked[:20]:
        index.search(query, mode="hybrid", limit=10)
    timed: dict[str, list[float]] = {"lexical": [], "hybrid": []}
    for query in asked[20:]:
        for mode in ("hybrid", "lexical"):  # the query's vector is encoded by the hybrid run, first
            started = time.perf_counter()
            index.search(query, mode=mode, limit=10)
            timed[mode].append((time.perf_counter() - started) * 1000)
    index.close()
    lexical, hybrid = timed["lexical"], timed["hybrid"]
    print(
        f"{len(hybrid)} distinct queries, top 10 with snippets: hybrid p50 {pct(hybrid, 0.5):.1f} ms, "
        f"p95 {pct(hybrid, 0.95):.1f} ms; lexical p50 {pct(lexical, 0.5):.1f} ms, p95 {pct(lexical, 0.95):.1f} ms; "
        f"ratio p50 {pct(hybrid, 0.5) / pct(lexical, 0.5):.2f}, p95 {pct(hybrid, 0.95) / pct(lexical, 0.95):.2f}"
    )

    rng = random.Random(7)
    new = work / "update.jsonl"
    with open(new, "w", encoding="utf-8") as out:
        for number, item in enumerate(rng.sample(items, min(1000, len(items)))):
            words = item["summary"].split()
            rng.shuffle(words)
            out.write(json.dumps({**item, "id": f"bench-{number}", "summary": " ".join(words)}) + "\n")
    copy = work / "updated"
    subprocess.run(["rm", "-rf", str(copy)], check=True)
    subprocess.run(["cp", "-r", str(work / "vectors"), str(copy)], check=True)
    started = time.perf_counter()
    summary = update_index([new], copy, jobs=args.jobs)
    print(
        f"update of {summary.added:,} new records: {time.perf_counter() - started:.1f} s, {summary.encoded:,} encoded"
    )
    print(uptime())


if __name__ == "__main__":
    main()
