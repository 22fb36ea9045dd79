"""Whole search output, for checking that a change keeps behaviour byte-identical.

    python benchmarks/same_output.py INDEX OUT.jsonl     # write every answer
    python benchmarks/same_output.py --compare A.jsonl B.jsonl

The queries (about 1,100): titles of 300 records of the arXiv listing sample
(seed 11, cut to their first eight words: pasted titles), every query of
Cranfield, CISI and 400 of SciFact's training claims (questions), and a list
of keyword queries of every kind (phrases, fields, prefixes, fuzzy words,
negation, typos), each run plain, with year and category filters, with
facets and the date histogram, sorted newest first and on page 2. Each
answer is ``SearchResults.to_dict()`` without ``took_ms``, one JSON line a
query, so two runs compare with ``--compare`` (or ``cmp``). The index is
normally the whole listing sample (``searchengine index
../shared/data/arxiv/arxiv_listing_sample.jsonl.gz --index INDEX``).
"""

from __future__ import annotations

import gzip
import json
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
DATA = REPO.parent / "shared" / "data"

KEYWORDS = [
    "SpMV GPU",
    "graph neural network",
    '"large language model" hallucination',
    'title:"diffusion model" video',
    "retrieval augmented generation",
    "quantiz* LLM 4-bit",
    "diffusion -video year:2026",
    "sparce matrix",
    "nueral network",
    "transfomer",
    "memroy~2",
    "optimizaton~2",
    "au:qian",
    'author:"Yann LeCun"',
    "cat:cs.DC",
    "boson",
    "matroid",
    "braid",
    "lepton",
    "flashattention",
    "FlashAttention kernel",
    "reinforcment learning",
    "mixture of experts",
    "(sparse OR dense) attention",
    "+quantum -annealing",
    "id:2101.00001",
    'abstract:"contrastive learning"',
    "protein folding",
    "black hole merger",
    "federated learning privacy",
    "LLM agents tool use",
    "speculative decoding",
    "KV cache compression",
    "vision transformer",
    "self-supervised",
    "zero-shot",
    "state space model Mamba",
    "Bayesian optimization",
]
BUDGET = 120.0
VARIANTS = [
    {},
    {"year": "2025"},
    {"category": "cs.LG"},
    {"facets": "year,author,category,date"},
    {"sort": "newest"},
    {"page": 2},
]


def queries() -> list[tuple[str, dict]]:
    """``(query, options)`` pairs, in a fixed order."""
    found: list[tuple[str, dict]] = []
    listing = DATA / "arxiv" / "arxiv_listing_sample.jsonl.gz"
    if listing.exists():
        with gzip.open(listing, "rt", encoding="utf-8") as lines:
            titles = [json.loads(line)["title"] for line in lines]
        for title in random.Random(11).sample(titles, 300):
            found.append((" ".join(title.split()[:8]), {}))
    for name, most in (("cranfield", None), ("cisi", None), ("scifact-train", 400)):
        path = DATA / name / "queries.jsonl"
        if not path.exists():
            continue
        with open(path, encoding="utf-8") as lines:
            texts = [json.loads(line)["text"] for line in lines]
        found.extend((text, {}) for text in texts[:most])
    found.extend((query, variant) for query in KEYWORDS for variant in VARIANTS)
    return found


def write(index_path: str, out_path: str) -> None:
    """Run every query on the index at ``index_path``; one JSON line per answer into ``out_path``."""
    from searchengine import QueryError, open_index

    index = open_index(index_path)
    with open(out_path, "w", encoding="utf-8") as out:
        for query, options in queries():
            try:
                answer = index.search(query, time_budget=BUDGET, **options).to_dict()
                answer.pop("took_ms", None)
            except QueryError as exc:
                answer = {"error": str(exc)}
            out.write(json.dumps({"q": query, "options": options, "answer": answer}, sort_keys=True) + "\n")


def compare(first: str, second: str) -> int:
    """Print the queries whose answers differ; 0 when none does."""
    with open(first, encoding="utf-8") as a, open(second, encoding="utf-8") as b:
        left, right = a.readlines(), b.readlines()
    differ = [json.loads(x)["q"] for x, y in zip(left, right) if x != y]
    print(f"{len(left)} and {len(right)} answers; {len(differ)} differ")
    for query in differ[:20]:
        print("  differs:", query)
    return 1 if differ or len(left) != len(right) else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--compare"]:
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    write(sys.argv[1], sys.argv[2])
