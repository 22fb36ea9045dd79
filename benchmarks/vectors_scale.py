"""Vector search at scale: the graph (``vectors.usearch``) against exact search, on derived vectors.

    python benchmarks/vectors_scale.py [--vectors N] [--queries Q] [--seeds S] [--work DIR] [--reuse]

Encoding millions of abstracts takes hours here, so the N vectors (default
2,800,000, all of arXiv) are derived from S real ones (default 2,000: every
20th record of ``../shared/data/arxiv/arxiv_listing_sample.jsonl.gz``,
encoded by the product's model): each is ``a + u·b + g`` normalised, ``a``
and ``b`` two seeds drawn at random, ``u`` uniform in [0, 0.7] and ``g``
Gaussian noise of 0.035 a dimension (seed 0). The Q query vectors (default
1,000) are real: the titles of the next Q records of the sample, encoded.

In one run, on the same rows (int8 and a scale, as ``vectors.npy`` holds
them) it prints:

* the graph's build time (both cores) and its bytes on disk;
* recall@10 of the product's nearest-neighbour search
  (:meth:`GenerationVectors.nearest`, graph and exact re-ranking) against
  exact search over every row, over the Q queries (the exact answers
  found a slice of rows times all queries at a time);
* p50 and p95 milliseconds of a search for the 10 and the 100 nearest
  (hybrid mode asks for 100) with the graph (Q queries) and exactly (the
  peer: every row, a slice at a time, one thread; the first T queries,
  ``--timed``, default 100), in the same process;
* the same with a filter keeping a tenth of the documents (a year);
* the cost of the similarities of a hybrid query's keyword matches (10,000
  and 100,000 random documents);
* the process's resident and private (not file-backed) memory after the
  graph searches.

``uptime`` is printed at both ends: the machine may be shared.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
LISTING = REPO.parent / "shared" / "data" / "arxiv" / "arxiv_listing_sample.jsonl.gz"


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def seed_vectors(work: Path, seeds: int, queries: int):
    """``(seed vectors, query vectors)``, encoded once and kept in ``work``."""
    import numpy as np

    path = work / f"seeds-{seeds}-{queries}.npz"
    if path.is_file():
        with np.load(path) as data:
            return data["seeds"], data["queries"]
    from searchengine.semantic.encoder import EncodingPool, record_text

    items = []
    with gzip.open(LISTING, "rt", encoding="utf-8") as lines:
        for number, line in enumerate(lines):
            if number % 20 == 0:
                items.append(json.loads(line))
            if len(items) >= seeds + queries:
                break
    texts = [record_text(item.get("title", ""), item.get("abstract", "")) for item in items[:seeds]]
    titles = [item.get("title", "") for item in items[seeds:]]
    with EncodingPool(os.cpu_count() or 1) as pool:
        found, asked = pool.encode(texts), pool.encode(titles)
    np.savez(path, seeds=found, queries=asked)
    return found, asked


def derive(seeds, count: int, generation: Path) -> None:
    """Write ``vectors.npy`` and ``vector-scales.npy`` of ``count`` derived vectors into ``generation``."""
    import numpy as np

    from searchengine.engines.whoosh.vectors import SCALES_FILE, VECTORS_FILE, quantize

    rng = np.random.default_rng(0)
    rows = np.lib.format.open_memmap(generation / VECTORS_FILE, mode="w+", dtype=np.int8, shape=(count, 384))
    scales = np.lib.format.open_memmap(generation / SCALES_FILE, mode="w+", dtype=np.float32, shape=(count,))
    step = 100_000
    for start in range(0, count, step):
        n = min(step, count - start)
        a = seeds[rng.integers(0, len(seeds), n)]
        b = seeds[rng.integers(0, len(seeds), n)]
        mixed = a + rng.uniform(0, 0.7, (n, 1)).astype(np.float32) * b
        mixed += rng.normal(0, 0.035, (n, 384)).astype(np.float32)
        mixed /= np.linalg.norm(mixed, axis=1, keepdims=True)
        rows[start : start + n], scales[start : start + n] = quantize(mixed)
    rows.flush()
    scales.flush()
    del rows, scales


def exact_truth(store, queries, count: int, pool=None) -> list[set]:
    """The exact ``count`` nearest of each query (rows ``(q, 384)``) among
    ``pool`` (every row: ``None``), as sets of document numbers: one
    product of a slice of rows with every query at a time."""
    import numpy as np

    wanted = np.arange(len(store.rows)) if pool is None else pool
    best_docs = np.zeros((len(queries), 0), dtype=np.int64)
    best_sims = np.zeros((len(queries), 0), dtype=np.float32)
    for start in range(0, len(wanted), 65_536):
        part = wanted[start : start + 65_536]
        sims = (store.rows[part].astype(np.float32) @ queries.T).T * store.scales[part]
        sims = np.concatenate([best_sims, sims], axis=1)
        docs = np.concatenate([best_docs, np.broadcast_to(part, (len(queries), len(part)))], axis=1)
        top = np.argpartition(-sims, count - 1, axis=1)[:, :count]
        best_sims, best_docs = np.take_along_axis(sims, top, 1), np.take_along_axis(docs, top, 1)
    return [set(row.tolist()) for row in best_docs]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def timed(run, queries) -> tuple[list, float, float]:
    found, times = [], []
    for query in queries:
        started = time.perf_counter()
        found.append(run(query))
        times.append((time.perf_counter() - started) * 1000)
    return found, pct(times, 0.5), pct(times, 0.95)


def memory() -> str:
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, value = line.partition(":")
        fields[name] = value.strip()
    return (
        f"resident {fields.get('VmRSS')}, of it private (anonymous) {fields.get('RssAnon')}, "
        f"file-backed {fields.get('RssFile')}"
    )


def exact_alone(generation: Path, count: int, queries) -> None:
    """Exact search over every row (a slice at a time, one thread): latency and memory."""
    import numpy as np

    from searchengine.engines.whoosh.vectors import GenerationVectors

    store = GenerationVectors(generation, count)
    store.graph = None  # (a slice of the rows at a time all the same: past ANN_MIN documents)
    assert store.by_slices
    rows = np.arange(count)

    def nearest(query):
        similarities = store.similarities(query, rows)
        return np.argpartition(-similarities, 9)[:10]

    _, p50, p95 = timed(nearest, [q.astype(np.float32) for q in queries])
    print(f"exact, 10 nearest of {count:,}: p50 {p50:.1f} ms, p95 {p95:.1f}")
    print(memory())
    rng = np.random.default_rng(1)
    for matches in (10_000, 100_000):
        times = []
        for query in queries[:50]:
            docnums = np.sort(rng.choice(count, matches, replace=False))
            started = time.perf_counter()
            store.similarities(query.astype(np.float32), docnums)
            times.append((time.perf_counter() - started) * 1000)
        print(f"similarities of {matches:,} keyword matches: p50 {pct(times, 0.5):.1f} ms, p95 {pct(times, 0.95):.1f}")
    print(uptime())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vectors", type=int, default=2_800_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--seeds", type=int, default=2000)
    parser.add_argument("--timed", type=int, default=100, help="queries whose exact search is timed one by one")
    parser.add_argument("--work", type=Path, default=Path("/tmp/searchengine-vectors-bench"))
    parser.add_argument("--reuse", action="store_true", help="keep the vectors and graph a previous run wrote")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="cores to build the graph on")
    parser.add_argument(
        "--exact-only",
        action="store_true",
        help="no graph: exact search's latency and memory alone (hours saved at 2.8M)",
    )
    args = parser.parse_args()

    import numpy as np

    from searchengine.engines.whoosh import ann
    from searchengine.engines.whoosh.vectors import SCALES_FILE, VECTORS_FILE, GenerationVectors

    print(uptime())
    args.work.mkdir(parents=True, exist_ok=True)
    seeds, queries = seed_vectors(args.work, args.seeds, args.queries)
    generation = args.work / f"gen-{args.vectors}"
    generation.mkdir(exist_ok=True)
    if args.exact_only:
        if not (args.reuse and (generation / VECTORS_FILE).is_file()):
            derive(seeds, args.vectors, generation)
        exact_alone(generation, args.vectors, queries)
        return
    if not (args.reuse and (generation / ann.ANN_FILE).is_file()):
        started = time.perf_counter()
        derive(seeds, args.vectors, generation)
        print(
            f"derived {args.vectors:,} vectors from {len(seeds):,} encoded records "
            f"in {time.perf_counter() - started:.0f} s"
        )
        rows = np.load(generation / VECTORS_FILE, mmap_mode="r")
        scales = np.load(generation / SCALES_FILE, mmap_mode="r")
        saved, ann.ANN_MIN = ann.ANN_MIN, 0  # a graph at any size here
        started, cpu = time.perf_counter(), time.process_time()
        ann.write_ann(
            generation,
            rows,
            scales,
            threads=args.threads,
            progress=lambda done, total: print(f"  graph: {done:,} of {total:,} added", flush=True),
        )
        ann.ANN_MIN = saved
        print(
            f"graph built in {time.perf_counter() - started:.0f} s "
            f"({time.process_time() - cpu:.0f} CPU s, {args.threads} threads)"
        )
        del rows, scales
    size = (generation / ann.ANN_FILE).stat().st_size
    print(
        f"graph: {size:,} bytes ({size / args.vectors:.0f} a vector); vectors.npy "
        f"{(generation / VECTORS_FILE).stat().st_size:,} bytes"
    )
    store = GenerationVectors(generation, args.vectors)
    assert store.graph is not None

    def exact_nearest(query, count, pool=None):
        # Every row (of the pool), a slice at a time, as an index without a graph past memory would.
        wanted = np.arange(args.vectors) if pool is None else pool
        similarities = store.similarities(query, None if pool is None else pool)
        best = np.argpartition(-similarities, count - 1)[:count]
        return wanted[best], similarities[best]

    queries = [q.astype(np.float32) for q in queries]
    rng = np.random.default_rng(1)
    pool = np.sort(rng.choice(args.vectors, args.vectors // 10, replace=False))
    for name, count, chosen in (
        ("10 nearest", 10, None),
        ("100 nearest", 100, None),
        ("10 nearest, a tenth", 10, pool),
    ):
        truth = exact_truth(store, np.stack(queries), count, chosen)
        _, exact_p50, exact_p95 = timed(lambda q: exact_nearest(q, count, chosen), queries[: args.timed])
        ann_found, ann_p50, ann_p95 = timed(lambda q: store.nearest(q, count, chosen), queries)
        recall = np.mean([len(set(a[0].tolist()) & e) / count for a, e in zip(ann_found, truth)])
        print(
            f"{name}: recall@{count} {recall:.4f} ({len(queries)} queries); graph p50 {ann_p50:.2f} ms, "
            f"p95 {ann_p95:.2f}; exact p50 {exact_p50:.1f} ms, p95 {exact_p95:.1f} ({args.timed} queries)"
        )
    print(memory())
    for matches in (m for m in (10_000, 100_000) if m <= args.vectors):
        chosen = [np.sort(rng.choice(args.vectors, matches, replace=False)) for _ in range(50)]
        times = []
        for query, docnums in zip(queries, chosen):
            started = time.perf_counter()
            store.similarities(query, docnums)
            times.append((time.perf_counter() - started) * 1000)
        print(f"similarities of {matches:,} keyword matches: p50 {pct(times, 0.5):.1f} ms, p95 {pct(times, 0.95):.1f}")
    print(uptime())


if __name__ == "__main__":
    main()
