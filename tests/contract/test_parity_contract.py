"""Parity on real records: the same totals, hits, order and scores on both engines.

The first 3,000 records of the arXiv listing sample (generated records of the
same shape on a clone without ``../shared``) are indexed by the embedded
engine and on the cluster; every query of :data:`QUERIES` (words, phrases,
fields, compounds, joined words, fuzzy words, OR, negation alone, in a long
query and with a filter, a pasted question, typos) must give the same total, the same
correction, and the same top 10 in the same order with the same scores; so
must the papers similar to a paper. A prefix's terms are normalised by Lucene's
length on the cluster, and a fuzzy word's candidates come from its term
suggester (docs/opensearch-analysis.md): there the total and most of the top
10 must agree.
"""

from __future__ import annotations

import pytest

from .conftest import BUILDERS
from shareddata import write_listing

QUERIES = [
    "neural network",
    "graph neural network training",
    '"language model"',
    'title:"deep learning"',
    "abstract:transformer title:attention",
    "large-scale optimization",
    "multitask learning",
    "transformr~1",
    "learning -neural year:2025",
    "neural OR quantum",
    "(graph OR network) training",
    "-neural learning optimization method",
    "NOT neural",
    "How can we make large language models reason more reliably about mathematical problems?",
    # Typos: the same correction, searched or suggested, from the same words.
    "nueral network",
    "graph nueral network trainng",
]
# Prefixes' terms are normalised by Lucene's length; a fuzzy word's candidates
# come from the term suggester: the same papers, scores close.
APPROXIMATE = ["optimi* convergence", "quant* error", "model~1"]


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    source = tmp_path_factory.mktemp("parity") / "records.jsonl"
    assert write_listing(source, 3000) == 3000
    built = [BUILDERS[name](tmp_path_factory, source) for name in ("whoosh", "opensearch")]
    yield [index for index, _ in built]
    for index, drop in built:
        drop()
        index.close()


def answer(index, query: str):
    found = index.search(query, limit=10, with_snippets=False, time_budget=30)
    return (found.total, found.suggestion), [hit.id for hit in found.hits], [hit.score for hit in found.hits]


def test_the_same_totals_hits_order_and_scores(both):
    embedded, cluster = both
    answered = 0
    for query in QUERIES:
        total, ids, scores = answer(embedded, query)
        assert answer(cluster, query)[:2] == (total, ids), query
        assert answer(cluster, query)[2] == pytest.approx(scores, rel=1e-4), query
        answered += bool(total[0])
    assert answered >= 6  # the queries find papers: the comparison is not of empty answers


def test_the_same_similar_papers(both):
    embedded, cluster = both
    for query in ("graph neural network", "language model"):
        paper = embedded.search(query, limit=1).hits[0].id
        ours, theirs = embedded.similar(paper, limit=10), cluster.similar(paper, limit=10)
        assert theirs.total == ours.total > 10, query
        assert [hit.id for hit in theirs.hits] == [hit.id for hit in ours.hits], query
        assert [hit.score for hit in theirs.hits] == pytest.approx([hit.score for hit in ours.hits], rel=1e-4)


def test_prefixes_and_fuzzy_words_give_the_same_totals_and_most_of_the_top_10(both):
    embedded, cluster = both
    for query in APPROXIMATE:
        total, ids, _ = answer(embedded, query)
        found_total, found_ids, _ = answer(cluster, query)
        assert found_total == total, query
        assert len(set(ids) & set(found_ids)) >= min(8, len(ids)), query


def test_the_cluster_answers_the_same_every_time(both):
    _, cluster = both
    for query in QUERIES[:4]:
        first = answer(cluster, query)
        assert all(answer(cluster, query) == first for _ in range(4)), query
