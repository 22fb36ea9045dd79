"""Pseudo-relevance feedback (RM3): the engine-free part, shared by both engines.

A question in prose names its topic with a few of its words; the best hits
of a first ranking use many more words of that topic. The relevance model
of the best hits (RM3: Lavrenko and Croft, "Relevance-based language
models", SIGIR 2001; Abdul-Jaleel et al., "UMass at TREC 2004"), the way
Anserini's RM3 builds it from BM25 scores::

    P(w|R) = sum over feedback documents d of  P(d) * tf(w, d) / |d|
    P(d)   = score(d) / sum of the feedback documents' scores

Each engine adds the model's terms' weighted BM25F scores to its best hits
(:mod:`searchengine.engines.whoosh.feedback`, and the cluster's searcher);
here are the rules both follow: when feedback applies (:func:`clear_lead`)
and which terms it adds (:func:`relevance_model`).
"""

from __future__ import annotations

from collections import defaultdict

from searchengine import ranking as settings


def clear_lead(ranked: list[tuple[object, float]]) -> bool:
    """Whether a first ranking is sure enough of its best hit for feedback.

    Args:
        ranked: ``(document, score)`` best first.

    Returns:
        ``True`` when the best score is at least
        :data:`~searchengine.ranking.FEEDBACK_MIN_LEAD` times
        the score of the last feedback document (the ``FEEDBACK_DOCS``-th
        hit, or the last when there are fewer); ``False`` for flat scores
        and for fewer than two hits.
    """
    if len(ranked) < 2:
        return False
    last = ranked[min(settings.FEEDBACK_DOCS, len(ranked)) - 1][1]
    return last <= 0 or ranked[0][1] >= settings.FEEDBACK_MIN_LEAD * last


def relevance_model(documents: list[tuple[dict[str, float], float]], count: int) -> list[tuple[str, float]]:
    """The ``count`` most probable terms of the relevance model of ``documents``.

    Args:
        documents: ``(frequencies, score)`` of each feedback document:
            ``{term: weighted frequency}`` of its title and abstract terms
            (stop words already gone) and its first score.
        count: number of terms kept.

    Returns:
        ``[(term, P(w|R))]``, most probable first (ties by term), the
        probabilities renormalised to sum 1; empty when the documents have
        no terms.
    """
    total = sum(score for _, score in documents)
    model: defaultdict[str, float] = defaultdict(float)
    for freqs, score in documents:
        length = sum(freqs.values())
        if not length:
            continue
        share = score / total if total > 0 else 1.0 / len(documents)
        for term, freq in freqs.items():
            model[term] += share * freq / length
    best = sorted(model.items(), key=lambda item: (-item[1], item[0]))[:count]
    norm = sum(p for _, p in best)
    return [(term, p / norm) for term, p in best] if norm > 0 else []
