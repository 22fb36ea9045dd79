"""Keyword queries on real arXiv records: the words standing together rank first.

Built from the listing sample (``../shared/data``; skipped without it): for
each query, the first 400 records (in file order) that have all its words
anywhere in the title or abstract, the hard cases, and every 20th other
record as the rest of the collection (5,640 records). Each query's 5 best
hits must use its words together: spaced or hyphenated, singular or plural.
"""

from __future__ import annotations

import gzip
import json
import re

import pytest

from searchengine import build_index, open_index

# Query → the words together as written (hyphen or space, plural allowed);
# and the words anywhere, which makes a record a hard case for the query.
TOGETHER = {
    "graph neural network": r"graph[\s-]+neural[\s-]+networks?\b",
    "diffusion model": r"diffusion[\s-]+models?\b",
    "reinforcement learning": r"reinforcement[\s-]+learning\b",
    "sparse matrix": r"sparse[\s-]+(?:matrix|matrices)\b",
    "neural network": r"neural[\s-]+networks?\b",
    "language model": r"language[\s-]+models?\b",
}
HARD_CASES = 400
EVERY = 20


def _has_all(text: str, query: str) -> bool:
    return all(re.search(rf"\b{word[:5]}", text) for word in query.split())


@pytest.fixture(scope="module")
def arxiv_words(shared_data, tmp_path_factory):
    chosen, taken = [], dict.fromkeys(TOGETHER, 0)
    with gzip.open(shared_data / "arxiv" / "arxiv_listing_sample.jsonl.gz", "rt", encoding="utf-8") as lines:
        for number, line in enumerate(lines):
            record = json.loads(line)
            text = f"{record['title']} {record['summary']}".lower()
            wanted = [query for query in TOGETHER if taken[query] < HARD_CASES and _has_all(text, query)]
            for query in wanted:
                taken[query] += 1
            if wanted or number % EVERY == 0:
                chosen.append(line)
    folder = tmp_path_factory.mktemp("arxiv-words")
    (folder / "records.jsonl").write_text("".join(chosen), encoding="utf-8")
    build_index([folder / "records.jsonl"], folder / "index")
    index = open_index(folder / "index")
    yield index
    index.close()


@pytest.mark.parametrize("query", list(TOGETHER))
def test_the_best_hits_use_the_words_together(arxiv_words, query):
    hits = arxiv_words.search(query, limit=5).hits
    assert len(hits) == 5
    records = [arxiv_words.record(hit.id) for hit in hits]
    apart = [
        (record.id, record.title)
        for record in records
        if not re.search(TOGETHER[query], f"{record.title} {record.abstract}", re.IGNORECASE)
    ]
    assert apart == []
