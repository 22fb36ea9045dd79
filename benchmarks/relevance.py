"""Ranking quality of the product against SQLite FTS5 on test collections, in one run.

    python benchmarks/relevance.py [COLLECTION_DIR ...]

Default collections: ../shared/data/cranfield and ../shared/data/cisi
(relative to the repository root), and a known-item test made from the
arXiv listing sample (``arxiv-known-item``): the abstracts of its first
15,000 records are the documents (without their titles), the titles of 300
of them (seed 7) are the queries, and each query's one relevant document is
its own abstract. Cranfield and CISI judge many documents relevant per
question; this one judges one, like collections of claims or questions
with a single answer, where feedback from the best hits can do harm. For
each collection it prints one table with two rows:

* ``searchengine``: ``searchengine.evaluation.evaluate`` — the collection is
  indexed with the product's reader and indexer in a temporary directory and
  each judged query runs through ``SearchIndex.search``, exactly as
  ``searchengine eval`` does.
* ``sqlite-fts5``: the same documents in an FTS5 table
  (``tokenize='porter unicode61'``), ranked by ``bm25(docs, 0, 2, 1)``
  (title counts twice, as in the product). FTS5 has no natural-language
  mode, so each query is lower-cased, cut into words at anything that is not
  a letter or digit, stripped of the product's stop words and of words
  shorter than two characters, de-duplicated, and the words are OR-ed.

Both rows are scored by the same code (pytrec_eval, depth 1000, means over
the judged queries, a query without hits scoring 0). The load average is
printed too: the machine may be shared.
"""

from __future__ import annotations

import os
import re
import sqlite3
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from searchengine.analysis.stopwords import STOP_WORDS  # noqa: E402
from searchengine.evaluation import DEPTH, evaluate, load_collection, score_run  # noqa: E402

DEFAULT_COLLECTIONS = [REPO.parent / "shared" / "data" / "cranfield", REPO.parent / "shared" / "data" / "cisi"]
LISTING = REPO.parent / "shared" / "data" / "arxiv" / "arxiv_listing_sample.jsonl.gz"


def known_item_collection(folder: Path, documents: int = 15_000, queries: int = 300, seed: int = 7) -> Path:
    """Write the arXiv known-item test (see the module docstring) in BEIR layout under ``folder``."""
    import gzip
    import json
    import random

    records = []
    with gzip.open(LISTING, "rt", encoding="utf-8") as lines:
        for line in lines:
            item = json.loads(line)
            records.append((item["id"], item["title"], item["summary"]))
            if len(records) == documents:
                break
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as out:
        for doc_id, _, abstract in records:
            out.write(json.dumps({"_id": doc_id, "title": "", "text": abstract}) + "\n")
    chosen = random.Random(seed).sample(records, queries)
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as out:
        for doc_id, title, _ in chosen:
            out.write(json.dumps({"_id": f"q{doc_id}", "text": title}) + "\n")
    with open(folder / "qrels" / "test.tsv", "w", encoding="utf-8") as out:
        out.write("query-id\tcorpus-id\tscore\n")
        for doc_id, _, _ in chosen:
            out.write(f"q{doc_id}\t{doc_id}\t1\n")
    return folder


COLUMNS = ("ndcg@10", "map", "p@10", "recall@100")


def fts5_run(collection) -> dict[str, dict[str, float]]:
    """Rank every judged query with SQLite FTS5 BM25; a trec run like the product's."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE docs USING fts5(id UNINDEXED, title, abstract, tokenize='porter unicode61')")
    db.executemany("INSERT INTO docs VALUES (?, ?, ?)", collection.documents)
    run = {}
    for query_id in collection.judged_queries:
        words = []
        for word in re.split(r"[^0-9a-z]+", collection.queries[query_id].lower()):
            if len(word) >= 2 and word not in STOP_WORDS and word not in words:
                words.append(word)
        ranked = []
        if words:
            match = " OR ".join(f'"{w}"' for w in words)
            rows = db.execute(
                "SELECT id FROM docs WHERE docs MATCH ? ORDER BY bm25(docs, 0, 2, 1) LIMIT ?", (match, DEPTH)
            )
            ranked = [row[0] for row in rows]
        run[query_id] = {doc: float(DEPTH - rank) for rank, doc in enumerate(ranked)}
    return run


def main(paths: list[str]) -> None:
    import tempfile

    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    scratch = tempfile.TemporaryDirectory()
    if not paths:
        paths = list(DEFAULT_COLLECTIONS)
        if LISTING.exists():
            paths.append(known_item_collection(Path(scratch.name) / "arxiv-known-item"))
    for path in paths:
        collection = load_collection(path)
        started = time.perf_counter()
        product = evaluate(path)
        product_s = time.perf_counter() - started
        started = time.perf_counter()
        fts5 = score_run(collection, fts5_run(collection))
        fts5_s = time.perf_counter() - started
        print(f"\n{Path(path).name}: {len(collection.documents)} documents, {product['queries']} judged queries")
        print(f"| engine       | {' | '.join(f'{c:>10}' for c in COLUMNS)} | seconds |")
        print(f"|--------------|{'|'.join('-' * 12 for _ in COLUMNS)}|---------|")
        for name, result, seconds in (("searchengine", product, product_s), ("sqlite-fts5", fts5, fts5_s)):
            print(f"| {name:<12} | {' | '.join(f'{result[c]:>10.4f}' for c in COLUMNS)} | {seconds:7.1f} |")
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")
    scratch.cleanup()


if __name__ == "__main__":
    main(sys.argv[1:])
