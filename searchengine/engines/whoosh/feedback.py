"""Pseudo-relevance feedback for long, question-like queries (RM3), on the embedded engine.

For a query of at least :data:`~searchengine.ranking.FEEDBACK_MIN_TERMS`
terms, the relevance model of its
:data:`~searchengine.ranking.FEEDBACK_DOCS` best hits
(:func:`searchengine.feedback.relevance_model`) keeps its
:data:`~searchengine.ranking.FEEDBACK_TERMS` most probable terms, and each
term's BM25F score, weighted by ``FEEDBACK_WEIGHT * n * P(w|R)`` (``n`` the
number of query terms), is added to the first score of the
:data:`~searchengine.ranking.FEEDBACK_DEPTH` best hits. With
``FEEDBACK_WEIGHT = 1`` the expansion terms together would weigh as much as
the query's own terms: RM3's interpolation with ``lambda = 0.5``.

Feedback is selective: it re-ranks only when the first ranking is sure of
its best hit (:func:`clear_lead`); where the first scores are flat, the
feedback documents are as likely off the topic as on it.

Only the order changes: the hits are the documents the query itself
matched, so the hit count and the facets are those of the query as typed.
Keyword queries are left alone: they are exact, and they stay fast. When the
first ranking has used half the search's time budget, the search skips
feedback and says so in a note.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from typing import cast

from searchengine import feedback as shared
from searchengine import ranking as settings


def question_terms(query) -> int:
    """Number of terms of ``query`` when the minimum-should-match rule applies
    to it (:class:`searchengine.engines.whoosh.queries.MinShouldMatch` at the
    top, or under a :class:`~searchengine.engines.whoosh.queries.Proximity`); 0 otherwise."""
    from searchengine.engines.whoosh.queries import MinShouldMatch, Proximity

    if type(query) is Proximity:
        query = query.child
    return len(query.subqueries) if type(query) is MinShouldMatch else 0


clear_lead = shared.clear_lead


def applies(query) -> bool:
    """Whether :func:`rerank` changes the scores of ``query`` (a long question
    and feedback switched on)."""

    return settings.FEEDBACK_WEIGHT > 0 and question_terms(query) >= settings.FEEDBACK_MIN_TERMS


def rerank(searcher, query, scores: Mapping[int, float], allowed: set[int] | None = None) -> Mapping[int, float]:
    """``scores`` with the expansion terms' weighted BM25F scores added.

    Args:
        searcher: the Whoosh searcher ``scores`` were computed with.
        query: the parsed query; feedback applies only when
            :func:`question_terms` counts at least ``FEEDBACK_MIN_TERMS``.
        scores: ``{docnum: score}`` of every document the query matched
            (:func:`searchengine.engines.whoosh.evaluate.score_documents`: a
            dict or a :class:`~searchengine.engines.whoosh.combine.ScoredDocs`).
        allowed: docnums passing the filters (``None``: no filter); the
            feedback documents are the best of these.

    Returns:
        A new ``{docnum: score}`` over the same documents (a ``ScoredDocs``
        when ``scores`` is one), or ``scores`` itself when feedback does not apply.
    """

    if not applies(query) or not scores:
        return scores
    from searchengine.engines.whoosh.combine import ScoredDocs

    count = question_terms(query)
    ranked: list[tuple[int, float]]
    if isinstance(scores, ScoredDocs):  # a question of common words matches most of the index: rank in C
        ranked = (scores if allowed is None else scores.restricted(allowed)).top(settings.FEEDBACK_DEPTH)
    else:
        candidates = scores.items() if allowed is None else [(d, s) for d, s in scores.items() if d in allowed]
        # Ties broken by document number, so the result does not depend on dict order.
        ranked = heapq.nlargest(settings.FEEDBACK_DEPTH, candidates, key=lambda item: (item[1], -item[0]))
    # clear_lead takes a list[tuple[object, float]] (a list type is invariant) and only reads it.
    if not clear_lead(cast("list[tuple[object, float]]", ranked)):
        return scores
    model = relevance_model(searcher, ranked[: settings.FEEDBACK_DOCS], settings.FEEDBACK_TERMS)
    if not model:
        return scores
    from whoosh import query as wq

    # Only the FEEDBACK_DEPTH best documents are re-ranked: the expansion
    # terms' postings are read where those fall, not in full. They only
    # gain, so they stay above the documents left alone.
    from searchengine.engines.whoosh.bm25f import bm25f_scores_at

    docnums = [doc for doc, _ in ranked]
    weight = settings.FEEDBACK_WEIGHT * count
    if isinstance(scores, ScoredDocs):
        reranked = ScoredDocs(scores.docs.copy(), scores.scores.copy())
        for term, probability in model:
            fields = [wq.Term("title", term), wq.Term("abstract", term)]
            reranked.add(bm25f_scores_at(searcher, fields, docnums, weight * probability))
        return reranked
    plain = dict(scores.items())
    for term, probability in model:
        fields = [wq.Term("title", term), wq.Term("abstract", term)]
        for doc, score in bm25f_scores_at(searcher, fields, docnums, weight * probability).items():
            plain[doc] += score
    return plain


def relevance_model(searcher, top: list[tuple[int, float]], count: int) -> list[tuple[str, float]]:
    """The ``count`` most probable terms of the relevance model of ``top``
    (:func:`searchengine.feedback.relevance_model`).

    Args:
        searcher: a Whoosh searcher (titles and abstracts are read from its
            stored fields and analyzed with the abstract field's analyzer).
        top: ``(docnum, score)`` of the feedback documents.
        count: number of terms kept.
    """
    from searchengine.analysis.analyzer import term_positions

    field = searcher.schema["abstract"]
    boost = field.format.field_boost
    documents = []
    for docnum, score in top:
        stored = searcher.stored_fields(docnum)
        text = f"{stored.get('title') or ''}\n{stored.get('abstract') or ''}"
        # The field's terms, without encoding their positions.
        found = term_positions(field.analyzer, text)
        documents.append(({term: float(len(at)) * boost for term, at in found.items()}, score))
    return shared.relevance_model(documents, count)
