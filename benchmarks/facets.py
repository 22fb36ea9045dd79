"""Facet counting speed on the arXiv listing sample, against SQLite FTS5.

    python benchmarks/facets.py [--work DIR] [--repeats 5]

Converts ``../shared/data/arxiv/arxiv_listing_sample.jsonl.gz`` (74,728
records) to the JSON-lines Record format (``summary`` is the abstract, the
year comes from the new-style id ``YYMM.NNNNN``), builds this product's index
and an SQLite FTS5 index of the same records (both kept in ``--work`` and
reused by later runs), then, for every benchmark query:

* **product, count**: :func:`searchengine.engines.whoosh.facetcolumns.count_facets` of year,
  author and category over all matching document numbers;
* **product, match + count**: collecting those document numbers
  (:meth:`searchengine.engines.whoosh.facetcolumns.SearcherCache.docnums`) plus the counting, i.e.
  the facet cost of a search, with the term cache emptied before every run
  ("cold") and kept ("warm");
* **product, search / faceted search**: ``SearchIndex.search(q)`` and
  ``SearchIndex.search(q, facets=all three)``, top 10 hits with snippets
  included, end to end, term cache emptied before every run (cold) and kept
  (warm);
* **FTS5 GROUP BY**: three ``SELECT value, count(*) ... WHERE docs MATCH ?
  GROUP BY value`` statements (authors and categories from side tables
  joined on rowid), i.e. the same counts over the same query in SQL.

Each time is the median of ``--repeats`` runs after one warm-up. Query words
are matched with AND in both engines over title, abstract and authors;
the analyzers differ slightly (NLTK Porter with stop words here, FTS5
``porter unicode61``), so hit counts are printed side by side.
Prints one table and a summary; exit status 0.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO.parent / "shared" / "data" / "arxiv" / "arxiv_listing_sample.jsonl.gz"
sys.path.insert(0, str(REPO))

QUERIES = [
    # broad single words and phrases: thousands of hits
    "model",
    "learning",
    "language",
    "image",
    "reasoning",
    "diffusion",
    "video",
    "agent",
    "graph",
    "benchmark",
    "segmentation",
    "robot",
    "medical",
    "large language model",
    "vision transformer",
    "graph neural network",
    "diffusion model image editing",
    "retrieval augmented generation",
    "reinforcement learning from human feedback",
    "object detection",
    "3D reconstruction",
    "speech recognition",
    "knowledge distillation",
    # narrow queries: tens to hundreds of hits
    "SpMV GPU",
    "sparse matrix",
    "federated learning privacy",
    "point cloud registration",
    "hallucination detection",
    "chain of thought",
    "autonomous driving planning",
    "low rank adaptation",
    "machine translation",
    "protein",
    "quantum",
]
FACETS = ("year", "author", "category")


def arxiv_year(arxiv_id: str) -> int | None:
    """Year of a new-style arXiv id ``YYMM.NNNNN`` (``2506.06837`` → 2025)."""
    head = arxiv_id.split(".", 1)[0]
    return 2000 + int(head[:2]) if len(head) == 4 and head.isdigit() else None


def convert(sample: Path, target: Path, limit: int = 0) -> int:
    """Write the listing sample's first ``limit`` records (0: all) as Record JSON lines; return the count."""
    count = 0
    with gzip.open(sample, "rt", encoding="utf-8") as src, open(target, "w", encoding="utf-8") as out:
        for line in itertools.islice(src, limit or None):
            obj = json.loads(line)
            record = {
                "id": obj["id"],
                "title": obj["title"],
                "abstract": obj["summary"],
                "authors": obj["authors"],
                "year": arxiv_year(obj["id"]),
                "categories": obj["categories"],
                "url": obj.get("abs") or "",
            }
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    return count


def build_fts(records_path: Path, db_path: Path) -> None:
    """An FTS5 table over title, abstract and authors, with facet side tables."""
    from searchengine.readers import read_records

    db = sqlite3.connect(db_path)
    db.executescript("""
        PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;
        CREATE VIRTUAL TABLE docs USING fts5(title, abstract, authors, year UNINDEXED,
                                             tokenize='porter unicode61');
        CREATE TABLE doc_authors(doc INTEGER, name TEXT);
        CREATE TABLE doc_cats(doc INTEGER, code TEXT);
    """)
    for rowid, record in enumerate(read_records([records_path], []), start=1):
        db.execute(
            "INSERT INTO docs(rowid, title, abstract, authors, year) VALUES (?,?,?,?,?)",
            (rowid, record.title, record.abstract, "\n".join(record.authors), record.year),
        )
        db.executemany("INSERT INTO doc_authors VALUES (?,?)", [(rowid, a) for a in dict.fromkeys(record.authors)])
        db.executemany("INSERT INTO doc_cats VALUES (?,?)", [(rowid, c) for c in dict.fromkeys(record.categories)])
    db.executescript("""
        CREATE INDEX doc_authors_doc ON doc_authors(doc);
        CREATE INDEX doc_cats_doc ON doc_cats(doc);
        INSERT INTO docs(docs) VALUES ('optimize');
    """)
    db.commit()
    db.close()


def fts_expression(query: str) -> str:
    return " AND ".join(f'"{word}"' for word in query.split())


FTS_SQL = (
    "SELECT year, count(*) FROM docs WHERE docs MATCH ? GROUP BY year",
    "SELECT a.name, count(*) FROM docs JOIN doc_authors a ON a.doc = docs.rowid WHERE docs MATCH ? GROUP BY a.name",
    "SELECT c.code, count(*) FROM docs JOIN doc_cats c ON c.doc = docs.rowid WHERE docs MATCH ? GROUP BY c.code",
)


def fts_facets(db, query: str):
    expression = fts_expression(query)
    return [db.execute(sql, (expression,)).fetchall() for sql in FTS_SQL]


def timed(function, repeats: int) -> tuple[float, object]:
    """Median wall milliseconds of ``repeats`` calls after one warm-up call."""
    value = function()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), value


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--work",
        type=Path,
        default=Path(tempfile.gettempdir()) / "searchengine-facets-bench",
        help="where the converted records and both indexes are kept (reused)",
    )
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    from searchengine import build_index, open_index
    from searchengine.engines.whoosh.facetcolumns import count_facets
    from searchengine.engines.whoosh.query import parse

    args.work.mkdir(parents=True, exist_ok=True)
    records_path = args.work / "arxiv.jsonl"
    if not records_path.exists():
        print(f"converting {SAMPLE.name} ...", flush=True)
        convert(SAMPLE, records_path)
    index_dir = args.work / "index"
    if not (index_dir / "CURRENT").exists():
        print("building the product's index (a few minutes) ...", flush=True)
        summary = build_index([records_path], index_dir)
        print(f"  {summary.documents} documents in {summary.seconds:.0f} s", flush=True)
    db_path = args.work / "fts.db"
    if not db_path.exists():
        print("building the FTS5 index ...", flush=True)
        build_fts(records_path, db_path)

    index = open_index(index_dir)
    searcher = index._current()
    started = time.perf_counter()
    cache = index._searcher_cache(searcher)
    columns = cache.columns()
    load_ms = (time.perf_counter() - started) * 1000
    db = sqlite3.connect(db_path)

    def cold(function):
        def run():
            cache.forget_terms()
            return function()

        return run

    rows = []
    print(
        f"\n{'query':<44} {'hits':>6} {'fts':>6} {'count':>7} {'m+c cold':>8} {'m+c warm':>8} "
        f"{'search':>7} {'fac cold':>8} {'fac warm':>8} {'fts5':>7} {'ratio':>6}"
    )
    for text in QUERIES:
        parsed = parse(text, searcher.schema).query
        docnums = cache.docnums(parsed)
        assert docnums == sorted(searcher.docs_for_query(parsed)), text
        count_ms, _ = timed(lambda: count_facets(columns, docnums, FACETS), args.repeats)
        both = lambda: count_facets(columns, cache.docnums(parsed), FACETS)  # noqa: E731
        cold_ms, _ = timed(cold(both), args.repeats)
        warm_ms, _ = timed(both, args.repeats)
        plain_ms, _ = timed(cold(lambda: index.search(text)), args.repeats)
        faceted_cold_ms, _ = timed(cold(lambda: index.search(text, facets=FACETS)), args.repeats)
        faceted_ms, _ = timed(lambda: index.search(text, facets=FACETS), args.repeats)
        fts_ms, counts = timed(lambda: fts_facets(db, text), args.repeats)
        fts_hits = sum(n for _, n in counts[0])
        rows.append(
            (text, len(docnums), fts_hits, count_ms, cold_ms, warm_ms, plain_ms, faceted_cold_ms, faceted_ms, fts_ms)
        )
        print(
            f"{text:<44} {len(docnums):>6} {fts_hits:>6} {count_ms:>7.2f} {cold_ms:>8.2f} {warm_ms:>8.2f} "
            f"{plain_ms:>7.1f} {faceted_cold_ms:>8.1f} {faceted_ms:>8.1f} {fts_ms:>7.2f} "
            f"{cold_ms / fts_ms if fts_ms else 0:>6.2f}",
            flush=True,
        )

    browse = []
    for label, options in (
        ("--year 2026", {"year": "2026"}),
        ("--year 2025", {"year": "2025"}),
        ("--category cs.CL", {"category": "cs.CL"}),
        ("--author 'Wang, Y.'", {"author": "Wang, Y."}),
    ):
        ms, results = timed(cold(lambda: index.search("", facets=FACETS, **options)), args.repeats)
        browse.append((label, results.total, ms))

    upto = [r for r in rows if r[1] <= 20_000]
    total = lambda i: sum(r[i] for r in rows)  # noqa: E731
    p = lambda i, share: percentile([r[i] for r in upto], share)  # noqa: E731
    print(f"\nfacet columns read once per searcher: {load_ms:.0f} ms for {columns.size} documents")
    print(f"queries: {len(rows)}, {len(upto)} with at most 20,000 hits (max hits {max(r[1] for r in rows)})")
    print(
        f"sum over queries (ms): count {total(3):.1f}, match+count cold {total(4):.1f}, warm {total(5):.1f}; "
        f"FTS5 GROUP BY {total(9):.1f}"
    )
    print(
        f"ratio to FTS5 (sum): count only {total(3) / total(9):.2f}, match+count cold {total(4) / total(9):.2f}, "
        f"warm {total(5) / total(9):.2f} (target <= 1.5)"
    )
    print(
        "ratio to FTS5 (median per query): match+count cold "
        f"{statistics.median(r[4] / r[9] for r in rows if r[9]):.2f}, "
        f"warm {statistics.median(r[5] / r[9] for r in rows if r[9]):.2f}"
    )
    for label, i in (
        ("search without facets, cold", 6),
        ("faceted search, cold", 7),
        ("faceted search, warm", 8),
        ("match+count, cold", 4),
    ):
        print(
            f"{label:<28} queries <= 20,000 hits: p50 {p(i, 0.5):7.1f} ms, p95 {p(i, 0.95):7.1f} ms, "
            f"max {max(r[i] for r in upto):7.1f} ms (target for faceted search: p95 < 150)"
        )
    for label, hits, ms in browse:
        print(f"browse {label:<22} {hits:>6} hits, faceted, cold {ms:.1f} ms")
    print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
