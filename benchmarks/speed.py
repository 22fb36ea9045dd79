"""Indexing and query speed of searchengine beside SQLite FTS5, in one run.

    python benchmarks/speed.py [--sizes 10000 30000 0] [--work DIR] [--jobs N]

For each size (0 = the whole 74,728-record listing sample in
``../shared/data/arxiv/``), the first N records are written to a JSON-lines
file and indexed by both engines, each in a fresh process:

* searchengine: ``python -m searchengine index FILE --quiet --json`` (a full
  rebuild: reading, analysis, parallel writing, commit, switch);
* SQLite FTS5: the same records, read by the same reader, inserted into an
  FTS5 table (``tokenize='porter unicode61'``) in one transaction, then
  ``optimize``; journal off, synchronous off.

Figures: records/s (whole run, reading included), peak RSS (sum over the
process and its children, sampled every 20 ms), index size on disk; query
latency p50/p95 over 200 distinct queries of the kinds people type
(:func:`typed_queries`: three fixed ones, then 1 to 6 content words of random
titles, some with a year or category filter, and pasted titles; seed 42; the
top 10 hits with snippets, every word required): first each query timed once
in a new process after 20 other queries (:func:`first_pass`, the headline),
then the median of 3 timed passes in this process after a first one;
a pasted 3,000-character query (the abstracts of the records after the
indexed ones, joined and cut at a word; searched three times, each a new
question for the postings cache: CPU and wall time, and whether the time
budget cut it); facet cost (exact counts over all hits of 20 queries, by year and by
category: every category of a paper in searchengine, through Whoosh's
grouping; the primary category, a column, in FTS5); cold start of ``searchengine search`` as a new process against
``python -c`` running the FTS5 query (median of 5 after a warm-up). Each
row gives searchengine / FTS5 as a ratio (time ratios: above 1 means
searchengine is slower; records/s: above 1 means faster). ``uptime`` is
printed before and after, because the machine is shared.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LISTING = REPO.parent / "shared" / "data" / "arxiv" / "arxiv_listing_sample.jsonl.gz"
FIXED_QUERIES = ["SpMV GPU", "large language model inference", "graph neural network"]
STOP = {
    "a",
    "an",
    "and",
    "are",
    "as",
    "at",
    "be",
    "by",
    "for",
    "from",
    "in",
    "into",
    "is",
    "it",
    "of",
    "on",
    "or",
    "the",
    "to",
    "via",
    "with",
    "without",
    "we",
    "our",
    "using",
    "towards",
    "toward",
}


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def subset(size: int, work: Path) -> tuple[Path, int]:
    """The first ``size`` listing records (0: all) as an uncompressed JSON-lines file."""
    path = work / f"records-{size or 'all'}.jsonl"
    if not path.exists():
        with gzip.open(LISTING, "rt", encoding="utf-8") as lines:
            chosen = itertools.islice(lines, size) if size else lines
            path.write_text("".join(chosen), encoding="utf-8")
    with open(path, encoding="utf-8") as handle:
        return path, sum(1 for _ in handle)


def _tree_rss_kb(pid: int) -> int:
    """Resident set size of ``pid`` and all its descendants, in kB."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*"):
        try:
            fields = (stat / "stat").read_text().rsplit(")", 1)[1].split()
            status = (stat / "status").read_text()
        except OSError:
            continue
        child = int(stat.name)
        parents[child] = int(fields[1])
        found = re.search(r"VmRSS:\s+(\d+)", status)
        rss[child] = int(found.group(1)) if found else 0
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        total += rss.get(current, 0)
        stack.extend(c for c, p in parents.items() if p == current)
    return total


def measured(command: list[str], **kwargs) -> tuple[float, int, str, float]:
    """Run ``command``; return (wall seconds, peak tree RSS in MB, stdout, CPU seconds of the tree)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)
    peak = 0
    while process.poll() is None:
        peak = max(peak, _tree_rss_kb(process.pid))
        time.sleep(0.02)
    out, err = process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {err.strip()}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return time.perf_counter() - started, peak // 1024, out, cpu


def disk_mb(path: Path) -> float:
    seen, total = set(), 0
    for file in path.rglob("*"):
        if file.is_file():
            info = file.stat()
            if (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                total += info.st_size
    return total / 1e6


# --- SQLite FTS5 ---------------------------------------------------------


def fts5_build(source: str, database: str) -> None:
    """Build the FTS5 table from ``source`` (run in its own process by ``main``)."""
    sys.path.insert(0, str(REPO))
    from searchengine.readers import read_records

    started = time.perf_counter()
    connection = sqlite3.connect(database)
    connection.executescript(
        "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
        "CREATE VIRTUAL TABLE docs USING fts5(id UNINDEXED, title, abstract, authors,"
        " year UNINDEXED, category UNINDEXED, tokenize='porter unicode61');"
    )
    rows = (
        (r.id, r.title, r.abstract, " ".join(r.authors), r.year, r.categories[0] if r.categories else None)
        for r in read_records([source], [])
    )
    with connection:
        connection.executemany("INSERT INTO docs VALUES (?, ?, ?, ?, ?, ?)", rows)
        connection.execute("INSERT INTO docs(docs) VALUES ('optimize')")
    count = connection.execute("SELECT count(*) FROM docs").fetchone()[0]
    connection.close()
    print(json.dumps({"documents": count, "seconds": time.perf_counter() - started}))


FTS5_TOP10 = (
    "SELECT id, title, snippet(docs, 2, '', '', ' … ', 16) FROM docs WHERE docs MATCH ?"
    " ORDER BY bm25(docs, 0, 2.0, 1.0, 1.0) LIMIT 10"
)


def fts5_match(query: str) -> str:
    """Every word required, as searchengine does: quoted words joined by spaces (AND)."""
    return " ".join('"' + word.replace('"', "") + '"' for word in re.findall(r"[^\W_]+", query))


# --- queries ---------------------------------------------------------------


def make_queries(source: Path, count: int = 200, seed: int = 42) -> list[str]:
    titles = [json.loads(line)["title"] for line in source.open(encoding="utf-8")]
    rng = random.Random(seed)
    queries = list(FIXED_QUERIES)
    while len(queries) < count:
        words = [w for w in re.findall(r"[A-Za-z][A-Za-z-]+", rng.choice(titles)) if w.lower() not in STOP]
        width = rng.choice((2, 3))
        if len(words) >= width:
            start = rng.randrange(len(words) - width + 1)
            queries.append(" ".join(words[start : start + width]))
    return queries


# The mix of :func:`typed_queries`: (share, kind), the shares adding up to 1.
TYPED_MIX = ((0.55, "words"), (0.15, "year"), (0.10, "category"), (0.20, "title"))
# Words of a "words" query and how often each width is drawn (1 to 6 words).
WORD_WIDTHS = ((1, 2, 3, 4, 5, 6), (15, 30, 25, 15, 8, 7))
WARMUP = 20
_FILTER = re.compile(r"\s*\b(year|cat):(\S+)")


def typed_queries(source: Path, count: int = 200, seed: int = 42) -> list[str]:
    """``count`` distinct queries of the kinds people type, from the titles of
    the Record JSON lines in ``source``: the three :data:`FIXED_QUERIES`, then
    drawn by :data:`TYPED_MIX` (seed ``seed``): 1 to 6 consecutive content
    words of a title (:data:`WORD_WIDTHS`); 2 or 3 of them with the record's
    ``year:`` or its first ``cat:``egory as a filter; or a whole title pasted
    (its first 12 words). Content words are those that are not stop words
    (the product's list), so every query has a searchable word."""
    from searchengine.analysis.stopwords import STOP_WORDS

    records = [json.loads(line) for line in source.open(encoding="utf-8")]
    rng = random.Random(seed)
    shares, kinds = zip(*TYPED_MIX)
    queries = dict.fromkeys(FIXED_QUERIES)
    while len(queries) < count:
        record = rng.choice(records)
        kind = rng.choices(kinds, weights=shares)[0]
        title = " ".join(record["title"].split())
        if kind == "title":
            query = " ".join(title.split()[:12])
        else:
            words = [
                w
                for w in re.findall(r"[A-Za-z][A-Za-z-]+", title)
                if w.lower() not in STOP_WORDS and w.lower() not in STOP
            ]
            width = rng.choices(*WORD_WIDTHS)[0] if kind == "words" else rng.choice((2, 3))
            if len(words) < width:
                continue
            start = rng.randrange(len(words) - width + 1)
            query = " ".join(words[start : start + width])
            if kind == "year" and record.get("year"):
                query += f" year:{record['year']}"
            elif kind == "category" and record.get("categories"):
                query += f" cat:{record['categories'][0]}"
            elif kind != "words":
                continue
        queries.setdefault(query, None)
    return list(queries)


def fts5_top10(connection, query: str) -> list:
    """FTS5's top 10 with snippets for ``query``: its words all required
    (:func:`fts5_match`), a ``year:`` or ``cat:`` filter as a condition on
    the table's year or (primary) category column."""
    conditions, values = [], []
    for name, value in _FILTER.findall(query):
        conditions.append(" AND year = ?" if name == "year" else " AND category = ?")
        values.append(int(value) if name == "year" else value)
    sql = FTS5_TOP10.replace(" ORDER BY", "".join(conditions) + " ORDER BY", 1)
    return connection.execute(sql, (fts5_match(_FILTER.sub("", query)), *values)).fetchall()


def first_pass(index: Path, database: Path, queries: list[str], warmup: list[str]) -> dict[str, tuple]:
    """Wall and CPU milliseconds of each of ``queries``, timed once each by
    both engines in a new process that opened the searchengine index at
    ``index`` (top 10 with snippets through the Python API) and the FTS5
    database at ``database`` (:func:`fts5_top10`), and ran the ``warmup``
    queries (others) first: the cost of queries that process has not seen
    before. The engines take turns query by query, so that both meet the
    same load of a shared machine.

    Returns:
        ``{"searchengine": (wall, cpu), "fts5": (wall, cpu)}``, lists in the order of ``queries``.
    """
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as plan:
        json.dump({"queries": queries, "warmup": warmup}, plan)
    try:
        done = subprocess.run(
            [sys.executable, __file__, "_first", str(index), str(database), plan.name],
            capture_output=True,
            text=True,
            cwd=REPO,
        )
    finally:
        Path(plan.name).unlink()
    if done.returncode != 0:
        raise SystemExit(f"the first pass over the queries failed: {done.stderr.strip()[-2000:]}")
    return {engine: tuple(timed) for engine, timed in json.loads(done.stdout).items()}


def first_passes(
    index: Path, database: Path, queries: list[str], warmup: list[str], runs: int = 3
) -> list[dict[str, tuple]]:
    """:func:`first_pass` ``runs`` times, each in a new process."""
    return [first_pass(index, database, queries, warmup) for _ in range(runs)]


def _first_pass_here(index_path: str, database: str, plan_path: str) -> None:
    """The process of :func:`first_pass`: prints ``{engine: [wall, cpu]}``."""
    sys.path.insert(0, str(REPO))
    from searchengine import open_index

    plan = json.loads(Path(plan_path).read_text(encoding="utf-8"))
    index = open_index(index_path)
    connection = sqlite3.connect(database)
    engines = {
        "searchengine": lambda query: index.search(query, limit=10).to_dict(),
        "fts5": lambda query: fts5_top10(connection, query),
    }
    for query in plan["warmup"]:
        for run_query in engines.values():
            run_query(query)
    timed = {engine: ([], []) for engine in engines}
    for query in plan["queries"]:
        for engine, run_query in engines.items():
            started, started_cpu = time.perf_counter(), time.thread_time()
            run_query(query)
            timed[engine][1].append((time.thread_time() - started_cpu) * 1000)
            timed[engine][0].append((time.perf_counter() - started) * 1000)
    print(json.dumps(timed))


def latencies(run_query, queries: list[str], passes: int = 3) -> tuple[list[float], ...]:
    """Wall and CPU milliseconds per query: the median of ``passes`` timed
    passes after a first pass, and the first pass itself.

    CPU time (this thread's) is what the query costs; wall time also counts
    waiting for the CPU, which other processes on a shared machine inflate.
    The first pass meets each query once, with what earlier queries left in
    the engine's caches (searchengine keeps recent terms' postings; SQLite
    its page cache); the later passes show repeated queries.
    """
    first_wall, first_cpu = [], []
    for query in queries:
        started, started_cpu = time.perf_counter(), time.thread_time()
        run_query(query)
        first_cpu.append((time.thread_time() - started_cpu) * 1000)
        first_wall.append((time.perf_counter() - started) * 1000)
    wall = [[] for _ in queries]
    cpu = [[] for _ in queries]
    for _ in range(passes):
        for i, query in enumerate(queries):
            started, started_cpu = time.perf_counter(), time.thread_time()
            run_query(query)
            cpu[i].append((time.thread_time() - started_cpu) * 1000)
            wall[i].append((time.perf_counter() - started) * 1000)
    return ([statistics.median(t) for t in wall], [statistics.median(t) for t in cpu], first_wall, first_cpu)


PASTE_CHARS = 3000


def pasted_queries(size: int, count: int = 3) -> list[str]:
    """``count`` texts of :data:`PASTE_CHARS` characters made of the abstracts
    of listing records ``size`` onwards (not in the index), cut at a word; past
    the listing's end, from its start (records in the index: with the whole
    listing indexed there are no others)."""
    texts, text = [], ""
    for start in (size, 0):
        with gzip.open(LISTING, "rt", encoding="utf-8") as lines:
            for line in itertools.islice(lines, start, None):
                text = f"{text} {json.loads(line)['summary']}".strip()
                if len(text) >= PASTE_CHARS:
                    texts.append(" ".join(text[:PASTE_CHARS].split()[:-1]))
                    text = ""
                    if len(texts) == count:
                        return texts
    return texts


def pasted(index, texts: list[str]) -> list[tuple[float, float, bool]]:
    """``(CPU ms, wall ms, timed_out)`` of searching each pasted text (top 10 with snippets)."""
    found = []
    for text in texts:
        started, started_cpu = time.perf_counter(), time.thread_time()
        results = index.search(text, limit=10)
        results.to_dict()
        found.append(
            ((time.thread_time() - started_cpu) * 1000, (time.perf_counter() - started) * 1000, results.timed_out)
        )
    return found


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def product_facets(index, query: str) -> None:
    """Exact year and category counts over every hit, as ``search --facets`` computes them."""
    index.search(query, facets="year,category", limit=1)


def cold_start(command: list[str], runs: int = 5) -> tuple[float, float]:
    """Median (wall, CPU) milliseconds of ``command`` as a new process, after one warm-up run."""
    import resource

    subprocess.run(command, capture_output=True, check=True)
    wall, cpu = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(command, capture_output=True, check=True)
        wall.append((time.perf_counter() - started) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    return statistics.median(wall), statistics.median(cpu)


def bench_size(size: int, work: Path, jobs: int | None, memory_mb: int) -> dict:
    sys.path.insert(0, str(REPO))
    from searchengine import open_index

    source, records = subset(size, work)
    index_dir = work / f"index-{size or 'all'}"
    database = work / f"fts5-{size or 'all'}.db"
    shutil.rmtree(index_dir, ignore_errors=True)
    database.unlink(missing_ok=True)
    row: dict = {"size": records}

    command = [
        sys.executable,
        "-m",
        "searchengine",
        "index",
        str(source),
        "--index-dir",
        str(index_dir),
        "--quiet",
        "--json",
        "--memory-mb",
        str(memory_mb),
    ] + (["--jobs", str(jobs)] if jobs else [])
    _, rss, out, cpu = measured(command, cwd=REPO)
    summary = json.loads(out)
    row["se_build"] = (summary["documents"] / summary["seconds"], rss, disk_mb(index_dir), summary["documents"] / cpu)
    _, rss, out, cpu = measured([sys.executable, __file__, "_fts5", str(source), str(database)])
    built = json.loads(out)
    row["fts_build"] = (
        built["documents"] / built["seconds"],
        rss,
        database.stat().st_size / 1e6,
        built["documents"] / cpu,
    )

    typed = typed_queries(source, count=200 + WARMUP)
    queries, warmup = typed[:200], typed[200:]
    first = first_pass(index_dir, database, queries, warmup)
    row["se_first"], row["fts_first"] = first["searchengine"], first["fts5"]
    index = open_index(index_dir)
    connection = sqlite3.connect(database)
    row["se_query"] = latencies(lambda q: index.search(q, limit=10).to_dict(), queries)
    row["fts_query"] = latencies(lambda q: fts5_top10(connection, q), queries)
    facet_queries = make_queries(source)[:20]

    def fts_facets(q: str) -> None:
        match = fts5_match(q)
        connection.execute("SELECT year, count(*) FROM docs WHERE docs MATCH ? GROUP BY year", (match,)).fetchall()
        connection.execute(
            "SELECT category, count(*) FROM docs WHERE docs MATCH ? GROUP BY category", (match,)
        ).fetchall()

    row["se_facet"] = latencies(lambda q: product_facets(index, q), facet_queries)
    row["fts_facet"] = latencies(fts_facets, facet_queries)
    row["pasted"] = pasted(index, pasted_queries(records))
    row["zero_hits"] = (
        sum(index.search(q).total == 0 for q in queries),
        sum(not fts5_top10(connection, q) for q in queries),
    )
    index.close()
    connection.close()
    row["se_cold"] = cold_start(
        [sys.executable, "-m", "searchengine", "search", "graph neural network", "--index-dir", str(index_dir)]
    )
    fts_script = (
        "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); "
        f"print(c.execute({FTS5_TOP10!r}, ({fts5_match('graph neural network')!r},)).fetchall())"
    )
    row["fts_cold"] = cold_start([sys.executable, "-c", fts_script, str(database)])
    return row


def report(rows: list[dict]) -> None:
    print("\n| records | metric | searchengine | SQLite FTS5 | ratio |")
    print("|---|---|---|---|---|")
    for row in rows:
        n = f"{row['size']:,}"
        se, fts = row["se_build"], row["fts_build"]
        print(f"| {n} | build records/s | {se[0]:,.0f} | {fts[0]:,.0f} | {se[0] / fts[0]:.3f} |")
        print(
            f"| {n} | build records per CPU-second (all processes) | {se[3]:,.0f} | {fts[3]:,.0f} | "
            f"{se[3] / fts[3]:.3f} |"
        )
        print(f"| {n} | build peak RSS MB | {se[1]} | {fts[1]} | {se[1] / max(fts[1], 1):.1f} |")
        print(f"| {n} | index size MB | {se[2]:.1f} | {fts[2]:.1f} | {se[2] / fts[2]:.2f} |")
        # Queries: the distinct queries each timed once in a new process (the
        # headline), then the median of the repeated passes.
        passes = [
            ("query", "first", "wall, distinct, first pass", 0),
            ("query", "first", "CPU, distinct, first pass", 1),
            ("query", "query", "wall, repeated, median of 3", 0),
            ("query", "query", "CPU, repeated, median of 3", 1),
        ]
        passes += [
            ("facets", "facet", clock, which)
            for clock, which in (("wall", 0), ("CPU", 1), ("wall, first pass", 2), ("CPU, first pass", 3))
        ]
        for name, key, clock, which in passes:
            s, f = row[f"se_{key}"][which], row[f"fts_{key}"][which]
            for label, q in (("p50", 0.5), ("p95", 0.95)):
                print(
                    f"| {n} | {name} {label} ms ({clock}) | {pct(s, q):.2f} | {pct(f, q):.2f} | "
                    f"{pct(s, q) / max(pct(f, q), 0.001):.1f} |"
                )
        for label, key in (("cold start ms (wall)", 0), ("cold start ms (CPU)", 1)):
            se_cold, fts_cold = row["se_cold"][key], row["fts_cold"][key]
            print(f"| {n} | {label} | {se_cold:.0f} | {fts_cold:.0f} | {se_cold / fts_cold:.1f} |")
        for cpu_ms, wall_ms, cut in row["pasted"]:
            print(
                f"| {n} | pasted {PASTE_CHARS:,}-character query ms (CPU / wall) | {cpu_ms:.0f} / {wall_ms:.0f}"
                f"{' (timed out)' if cut else ''} | | |"
            )
        print(
            f"| {n} | zero-hit queries of {len(row['se_query'][0])} | {row['zero_hits'][0]} | {row['zero_hits'][1]} | |"
        )


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "_first":
        _first_pass_here(*sys.argv[2:])
        return
    if len(sys.argv) == 4 and sys.argv[1] == "_fts5":
        fts5_build(sys.argv[2], sys.argv[3])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=[10_000, 30_000, 0],
        help="record counts to index; 0 means the whole sample",
    )
    parser.add_argument(
        "--work",
        type=Path,
        default=Path(tempfile.gettempdir()) / "searchengine-speed",
        help="scratch directory for subsets and indexes",
    )
    parser.add_argument("--jobs", type=int, default=None, help="searchengine index --jobs")
    parser.add_argument("--memory-mb", type=int, default=512, help="searchengine index --memory-mb")
    args = parser.parse_args()
    if not LISTING.exists():
        raise SystemExit(f"{LISTING}: not found (the shared arXiv sample is needed)")
    args.work.mkdir(parents=True, exist_ok=True)
    print("start:", uptime(), flush=True)
    rows = []
    for size in args.sizes:
        rows.append(bench_size(size, args.work, args.jobs, args.memory_mb))
        print(f"done {rows[-1]['size']:,} records:", uptime(), flush=True)
    report(rows)
    print("\nend:", uptime())


if __name__ == "__main__":
    main()
