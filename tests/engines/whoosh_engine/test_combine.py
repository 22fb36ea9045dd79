"""Combining scores with numpy gives exactly the numbers of the dictionary path."""

import heapq
import random

import numpy as np
import pytest

from searchengine.engines.whoosh import combine
from searchengine.engines.whoosh.combine import ScoredDocs
from searchengine.engines.whoosh.evaluate import score_documents
from searchengine.engines.whoosh.querying import parse
from tests.engines.whoosh_engine.test_ranking import QUERIES


def scores_of(searcher, text, dense: bool, monkeypatch) -> dict:
    monkeypatch.setattr(combine, "DENSE_FROM", 0 if dense else 10**12)
    monkeypatch.setattr(combine, "LOADED_DENSE_FROM", 0 if dense else 10**12)
    monkeypatch.setattr(combine, "SEGMENT_SHARE", 0.0)
    found = score_documents(parse(text, searcher.schema).query, searcher)
    assert found is not None
    return dict(found.items())


@pytest.mark.parametrize("text", QUERIES + ["large language model inference", "GPU memory training"])
def test_dense_path_gives_the_same_floats(corpus_searcher, text, monkeypatch):
    by_dict = scores_of(corpus_searcher, text, False, monkeypatch)
    assert scores_of(corpus_searcher, text, True, monkeypatch) == by_dict  # equal floats, not approximately


def test_keyword_queries_of_many_postings_come_as_scored_docs(corpus_searcher, monkeypatch):
    monkeypatch.setattr(combine, "DENSE_FROM", 0)
    monkeypatch.setattr(combine, "LOADED_DENSE_FROM", 0)
    monkeypatch.setattr(combine, "SEGMENT_SHARE", 0.0)
    assert isinstance(score_documents(parse("GPU memory", corpus_searcher.schema).query, corpus_searcher), ScoredDocs)
    # An Or of other nodes (a quoted phrase in each field) is combined too, once numpy is loaded;
    # a node that is not an Or, DisjunctionMax or word (a phrase in one field) is not.
    assert isinstance(
        score_documents(parse('"sparse matrix"', corpus_searcher.schema).query, corpus_searcher), ScoredDocs
    )
    assert type(score_documents(parse('title:"sparse matrix"', corpus_searcher.schema).query, corpus_searcher)) is dict


def test_dense_needs_enough_postings_for_the_segment(monkeypatch):
    monkeypatch.setattr(combine, "loaded", lambda: False)  # a new process: numpy not imported yet
    assert not combine.dense(4999, 10_000)
    assert combine.dense(5000, 10_000)
    assert not combine.dense(10_000, 64 * 10_000 + 64)


def test_dense_once_numpy_is_loaded_needs_fewer_postings():
    assert combine.loaded()
    assert not combine.dense(combine.LOADED_DENSE_FROM - 1, 10**6)
    assert combine.dense(combine.LOADED_DENSE_FROM, 10**6)


@pytest.mark.parametrize(
    "text",
    [
        '"sparse matrix" OR GPU',
        "sparse-matrix GPU kernels on multicore CPUs and GPUs",
        'title:"sparse matrix" OR abstract:"matrix multiplication"',
    ],
)
def test_or_of_other_nodes_gives_the_same_floats(corpus_searcher, text, monkeypatch):
    by_dict = scores_of(corpus_searcher, text, False, monkeypatch)
    assert scores_of(corpus_searcher, text, True, monkeypatch) == by_dict


@pytest.fixture
def scored():
    rng = random.Random(7)
    docs = sorted(rng.sample(range(10_000), 2_000))
    # Few distinct scores: many ties.
    pairs = {doc: float(rng.randint(1, 40)) / 4 for doc in docs}
    return pairs, ScoredDocs(np.array(docs, dtype=np.int64), np.array([pairs[d] for d in docs]))


def test_scored_docs_read_as_a_dict(scored):
    pairs, found = scored
    assert len(found) == len(pairs) and list(found) == sorted(pairs)
    assert found.items() == sorted(pairs.items())
    doc = next(iter(pairs))
    assert found[doc] == pairs[doc] and doc in found and found.get(doc) == pairs[doc]
    missing = next(d for d in range(10_000) if d not in pairs)
    assert missing not in found and found.get(missing, -1.0) == -1.0
    with pytest.raises(KeyError):
        found[missing]
    assert found.keys() & {doc, missing} == {doc}


@pytest.mark.parametrize("count", [1, 10, 100, 1999, 2000, 5000])
def test_top_breaks_ties_by_the_lower_document(scored, count):
    pairs, found = scored
    assert found.top(count) == heapq.nlargest(count, pairs.items(), key=lambda item: (item[1], -item[0]))


def test_at_least_within_restricted_and_add(scored):
    pairs, found = scored
    cut = found.kth_score(50)
    assert cut == sorted(pairs.values(), reverse=True)[49]
    assert found.at_least(cut) == [(d, s) for d, s in sorted(pairs.items()) if s >= cut]
    allowed = set(range(0, 10_000, 3))
    assert found.within(sorted(allowed)) == sorted(d for d in pairs if d in allowed)
    kept = found.restricted(allowed)
    assert kept.items() == [(d, s) for d, s in sorted(pairs.items()) if d in allowed]
    first, second = list(pairs)[:2]
    found.add({first: 0.1, second: 2.5})
    assert found[first] == pairs[first] + 0.1 and found[second] == pairs[second] + 2.5


def test_joined_puts_segments_in_order():
    joined = combine.joined([(np.array([1, 5], dtype=np.intc), np.array([0.5, 1.5])), {12: 2.0, 10: 1.0}])
    assert joined.items() == [(1, 0.5), (5, 1.5), (10, 1.0), (12, 2.0)]
    assert combine.ascending(joined) == [1, 5, 10, 12] and combine.ascending({3: 1.0, 2: 1.0}) == [2, 3]


def test_union_best_and_intersection():
    a = (np.array([1, 3, 5], dtype=np.intc), np.array([1.0, 2.0, 3.0]))
    b = (np.array([3, 4, 5], dtype=np.intc), np.array([0.5, 4.0, 3.5]))
    assert combine.as_dict(combine.union([a, b], 8)) == {1: 1.0, 3: 2.5, 4: 4.0, 5: 6.5}
    assert combine.as_dict(combine.union([a, b], 8, needed=2)) == {3: 2.5, 5: 6.5}
    assert combine.as_dict(combine.best([a, b], 8)) == {1: 1.0, 3: 2.0, 4: 4.0, 5: 3.5}
    assert combine.as_dict(combine.intersection([a, b])) == {3: 2.5, 5: 6.5}
    empty = (np.zeros(0, dtype=np.intc), np.zeros(0))
    assert combine.as_dict(combine.intersection([a, empty])) == {}
