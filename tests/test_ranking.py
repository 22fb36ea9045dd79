"""The fast scoring path gives exactly what Whoosh's matchers give."""

import pytest

from searchengine import build_index, open_index
from searchengine.query import parse
from searchengine.ranking import score_documents

from conftest import CORPUS

QUERIES = [
    "GPU", "SpMV GPU", "GPU memory", "large language model", "fail slow", "GPU -memory",
    "gpu NOT memory", "gpu OR spmv", "title:gpu", "ti:gpu abs:memory", "(gpu OR spmv) memory", "sparse matrix vector multiplication on GPUs",
    "how do large language models use GPU memory for training and inference at scale",
]


@pytest.fixture(scope="module", params=[1, 2], ids=["one-segment", "two-segments"])
def searcher(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"ranking-{request.param}")
    build_index([CORPUS], folder, jobs=request.param)
    index = open_index(folder)
    yield index._current()
    index.close()


@pytest.mark.parametrize("text", QUERIES)
def test_fast_scores_equal_whoosh_scores(searcher, text):
    query = parse(text, searcher.schema).query
    fast = score_documents(query, searcher)
    assert fast is not None, "plain-word queries take the fast path"
    slow = {hit.docnum: hit.score for hit in searcher.search(query, limit=None)}
    assert set(fast) == set(slow) and slow
    for docnum, score in slow.items():
        assert fast[docnum] == pytest.approx(score, rel=1e-9)


@pytest.mark.parametrize("text", ['"cache-friendly"', '"sparse matrix"', "spars*"])
def test_other_queries_are_left_to_whoosh(searcher, text):
    assert score_documents(parse(text, searcher.schema).query, searcher) is None


def test_ranked_page_orders_by_score_then_newest_then_id(corpus_index):
    hits = corpus_index.search("GPU", limit=100).hits
    assert len(hits) == 12
    keys = [(-h.score, -(h.year or 0)) for h in hits]
    assert keys == sorted(keys)
    for first, second in zip(hits, hits[1:]):
        if (first.score, first.year) == (second.score, second.year):
            assert first.id > second.id
