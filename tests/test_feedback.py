"""Pseudo-relevance feedback (RM3) for long queries, and the re-ranking scorer it uses."""

import json

import pytest
from whoosh import query as wq

from searchengine import build_index, open_index
from searchengine import ranking as settings
from searchengine.engines.whoosh import bm25f, feedback
from searchengine.engines.whoosh.querying import parse
from searchengine.pipeline import FEEDBACK_SKIPPED

# Words the analyzer keeps as they are (no stem change, no stop word).
RECORDS = [
    # A: every word of the long query below, and "plasma".
    ("a", "laser shock flow", "jet wave plasma plasma"),
    # B: two query words and the topic word of A.
    ("b", "laser shock", "plasma plasma plasma heat heat heat heat"),
    # C: the same two query words, one of them twice, about something else.
    ("c", "laser shock", "blade laser"),
    ("d", "blade heat", "blade blade"),
]
LONG_QUERY = "the laser shock flow jet wave"  # a question: a stop word among its words


@pytest.fixture(scope="module")
def small_index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("feedback")
    records = folder / "records.jsonl"
    records.write_text("".join(json.dumps({"id": i, "title": t, "abstract": a}) + "\n" for i, t, a in RECORDS))
    build_index([records], folder / "index")
    index = open_index(folder / "index")
    yield index
    index.close()


def ranked_ids(index, text):
    return [hit.id for hit in index.search(text, limit=10).hits]


def test_relevance_model_by_hand(small_index):
    searcher = small_index.engine.current().searcher
    number = {searcher.stored_fields(d)["id"]: d for d in range(searcher.doc_count_all())}
    # P(a) = 3/4, P(b) = 1/4. a: laser, shock, flow, jet, wave 1/7 each, plasma 2/7.
    # b: laser, shock 1/9, plasma 3/9, heat 4/9.
    # P(w|R): plasma 3/4*2/7 + 1/4*3/9 = 0.297619; heat 1/4*4/9 = 0.111111;
    # laser = shock = 3/4*1/7 + 1/4*1/9 = 0.134921.
    model = feedback.relevance_model(searcher, [(number["a"], 3.0), (number["b"], 1.0)], 3)
    total = 0.297619 + 0.134921 * 2
    assert [term for term, _ in model] == ["plasma", "laser", "shock"]  # ties by term
    assert [p for _, p in model] == pytest.approx([0.297619 / total, 0.134921 / total, 0.134921 / total], abs=1e-6)


def test_relevance_model_of_no_documents_is_empty(small_index):
    assert feedback.relevance_model(small_index.engine.current().searcher, [], 5) == []


def test_feedback_reorders_a_long_query(small_index, monkeypatch):
    # Without feedback, C (with "laser" twice) outranks B for the two words they share.
    monkeypatch.setattr(settings, "FEEDBACK_WEIGHT", 0.0)
    assert ranked_ids(small_index, LONG_QUERY) == ["a", "c", "b"]
    monkeypatch.undo()
    # With it, B shares A's topic word "plasma" and moves up; the hits stay the same.
    results = small_index.search(LONG_QUERY, limit=10)
    assert [hit.id for hit in results.hits] == ["a", "b", "c"]
    assert results.total == 3


def test_feedback_scores_are_the_query_plus_weighted_expansion_terms(small_index):
    searcher = small_index.engine.current().searcher
    query = parse(LONG_QUERY, searcher.schema).query
    assert feedback.question_terms(query) == 5
    first = {hit.docnum: hit.score for hit in searcher.search(query, limit=None)}
    top = sorted(first.items(), key=lambda item: -item[1])[: settings.FEEDBACK_DOCS]
    model = feedback.relevance_model(searcher, top, settings.FEEDBACK_TERMS)
    expected = dict(first)
    for term, probability in model:
        weight = 5 * settings.FEEDBACK_WEIGHT * probability  # 5 query terms
        term_query = bm25f.bm25f_term([wq.Term("title", term), wq.Term("abstract", term)], boost=weight)
        for hit in searcher.search(term_query, limit=None):
            if hit.docnum in expected:
                expected[hit.docnum] += hit.score
    reranked = feedback.rerank(searcher, query, first)
    assert set(reranked) == set(first)
    for docnum, score in expected.items():
        assert reranked[docnum] == pytest.approx(score, rel=1e-9)


@pytest.mark.parametrize(
    "text", ["laser shock", "laser shock flow", "laser shock flow jet", "laser OR shock OR flow OR jet OR wave"]
)
def test_keyword_and_operator_queries_are_left_alone(small_index, text):
    searcher = small_index.engine.current().searcher
    query = parse(text, searcher.schema).query
    scores = {hit.docnum: hit.score for hit in searcher.search(query, limit=None)}
    assert feedback.rerank(searcher, query, scores) is scores


def test_filters_choose_the_feedback_documents(small_index, monkeypatch):
    searcher = small_index.engine.current().searcher
    query = parse(LONG_QUERY, searcher.schema).query
    scores = {hit.docnum: hit.score for hit in searcher.search(query, limit=None)}
    number = {searcher.stored_fields(d)["id"]: d for d in range(searcher.doc_count_all())}
    seen = []
    real = feedback.relevance_model
    monkeypatch.setattr(settings, "FEEDBACK_MIN_LEAD", 1.0)  # C's lead over B is small
    monkeypatch.setattr(feedback, "relevance_model", lambda s, top, n: seen.append(top) or real(s, top, n))
    feedback.rerank(searcher, query, scores, allowed={number["b"], number["c"]})
    assert [doc for doc, _ in seen[0]] == [number["c"], number["b"]]


@pytest.mark.parametrize("word", ["gpu", "memori", "model", "spmv", "nosuchword"])
def test_scores_at_some_documents_equal_whoosh_scores(corpus_searcher, word):
    terms = [wq.Term("title", word), wq.Term("abstract", word)]
    every = range(corpus_searcher.doc_count_all())
    before = bm25f.bm25f_scores_at(corpus_searcher, terms, every, boost=0.5)  # postings not cached yet
    whole = {hit.docnum: hit.score for hit in corpus_searcher.search(bm25f.bm25f_term(terms, boost=0.5), limit=None)}
    assert before == pytest.approx(whole, rel=1e-9)
    assert bm25f.bm25f_scores_at(corpus_searcher, terms, every, boost=0.5) == pytest.approx(whole, rel=1e-9)
    some = list(every)[::3]
    found = bm25f.bm25f_scores_at(corpus_searcher, terms, some, boost=0.5)
    assert found == pytest.approx({d: s for d, s in whole.items() if d in some}, rel=1e-9)


def test_feedback_is_skipped_when_half_the_time_budget_is_spent(small_index):
    results = small_index.search(LONG_QUERY, limit=10, time_budget=1e-9)
    assert [hit.id for hit in results.hits] == ["a", "c", "b"]  # the order without feedback
    assert results.notes == [FEEDBACK_SKIPPED]
    assert small_index.search(LONG_QUERY, limit=10).notes == []


@pytest.mark.parametrize(
    "scores, sure",
    [
        ([9.0, 8.0, 7.0, 6.5, 6.4, 6.3, 6.2, 6.1, 6.05, 6.0, 1.0], True),  # 9.0 = 1.5 x the tenth, 6.0
        ([8.9, 8.0, 7.0, 6.5, 6.4, 6.3, 6.2, 6.1, 6.05, 6.0, 1.0], False),  # just below
        ([3.0, 2.0], True),  # fewer than ten hits: the last one counts
        ([3.0, 2.5], False),
        ([3.0], False),  # nothing to re-rank
    ],
)
def test_clear_lead_compares_the_best_score_with_the_last_feedback_document(scores, sure):
    assert feedback.clear_lead(list(enumerate(scores))) is sure


def test_feedback_leaves_a_flat_first_ranking_alone(small_index, monkeypatch):
    # Any lead above 1 is not enough at a threshold of 100: the order is that without feedback.
    monkeypatch.setattr(settings, "FEEDBACK_MIN_LEAD", 100.0)
    assert ranked_ids(small_index, LONG_QUERY) == ["a", "c", "b"]
    searcher = small_index.engine.current().searcher
    query = parse(LONG_QUERY, searcher.schema).query
    scores = {hit.docnum: hit.score for hit in searcher.search(query, limit=None)}
    assert feedback.rerank(searcher, query, scores) is scores
