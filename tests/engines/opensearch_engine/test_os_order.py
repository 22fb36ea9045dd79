"""The same search asks the same shard copies, so its order never changes between runs."""

from __future__ import annotations

import json
from pathlib import Path

from searchengine import build_index, open_index, update_index
from searchengine.engines.opensearch.searcher import routing_preference

CORPUS = Path(__file__).resolve().parents[3] / "corpus"


def test_the_preference_is_the_query_s_own():
    first = {"query": {"match": {"title": "gpu"}}, "size": 10, "from": 0}
    assert routing_preference(first) == routing_preference({**first, "from": 10, "size": 20})
    assert routing_preference(first) != routing_preference({"query": {"match": {"title": "cpu"}}})
    assert not routing_preference(first).startswith("_")  # a custom preference, not a keyword


def test_repeated_searches_give_the_same_scores_and_order(location, tmp_path, cluster_client):
    build_index([CORPUS], location)
    # Documents replaced: shard copies now hold different deleted documents
    # (each merges on its own), which is what made the order vary.
    changed = tmp_path / "changed.jsonl"
    changed.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"extra-{n}",
                    "title": f"GPU memory planning {n}",
                    "abstract": "Sparse matrix kernels on GPUs and memory.",
                }
            )
            + "\n"
            for n in range(30)
        ),
        encoding="utf-8",
    )
    update_index([changed], location)
    update_index([changed], location)
    index = open_index(location)
    runs = [
        [(hit.id, hit.score) for hit in index.search(query, limit=10).hits]
        for query in ("gpu memory", "sparse matrix", "training")
        for _ in range(6)
    ]
    for at in range(0, len(runs), 6):
        assert runs[at] and all(run == runs[at] for run in runs[at : at + 6]), runs[at : at + 6]
    index.close()
