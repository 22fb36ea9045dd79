"""Ranking: BM25F over title, abstract and author names.

A query word is one :class:`BM25FTerm` (built by :func:`bm25f_term`): its
frequencies in the fields are length-normalised per field, weighted (the
title counts :data:`searchengine.schema.TITLE_BOOST` times, applied at
indexing) and added up before BM25's saturation, so a word in both title and
abstract is not counted as two words. The inverse document frequency is
BM25's ``ln(1 + (N - n + 0.5) / (n + 0.5))`` (N documents, n containing the
term), which is never negative.

The parameters are chosen on principle and checked on two test collections
(README, "Evaluation"): titles are short and of similar length, so their
length says little (``B = 0.3``); abstracts vary and take the usual
``B = 0.75``; ``K1 = 2.0`` is the top of the customary 1.2 to 2.0 range
(1.2, 1.6 and 2.0 were measured; each step up was better on both
collections: abstracts repeat their key terms, and rewarding that pays).

Long questions (at least :data:`FEEDBACK_MIN_TERMS` terms) are then
re-ranked by pseudo-relevance feedback (:mod:`searchengine.feedback`, RM3
with :data:`FEEDBACK_DOCS` feedback documents, :data:`FEEDBACK_TERMS`
expansion terms and the query and its expansion weighted equally, as in
Anserini's defaults but with 20 terms instead of 10); the alternatives
measured are listed in README, "Evaluation". :func:`bm25f_scores_at` scores
the expansion terms in the :data:`FEEDBACK_DEPTH` best hits only.
"""

from __future__ import annotations

from array import array
from math import log

# Per-field length normalisation; fields not listed use DEFAULT_B.
DEFAULT_B = 0.75
FIELD_B = {"title": 0.3, "abstract": 0.75, "authors": 0.3}
# BM25F saturates the combined frequency once, so it has one K1.
K1 = 2.0

# Pseudo-relevance feedback (RM3, searchengine.feedback) for queries of at
# least FEEDBACK_MIN_TERMS terms: the FEEDBACK_TERMS most probable terms of
# the relevance model of the FEEDBACK_DOCS best hits re-rank the
# FEEDBACK_DEPTH best; with FEEDBACK_WEIGHT 1 they weigh as much as the
# query's own terms.
FEEDBACK_MIN_TERMS = 5
FEEDBACK_DOCS = 10
FEEDBACK_TERMS = 20
FEEDBACK_WEIGHT = 1.0
FEEDBACK_DEPTH = 100


def weighting():
    """The weighting model searches use: a Whoosh ``BM25F`` with the parameters above."""
    from whoosh import scoring

    class FieldBM25F(scoring.BM25F):
        """Whoosh's per-field BM25 with :data:`FIELD_B`, :data:`K1` and BM25's
        non-negative idf; scores phrases and ``field:term`` queries."""

        def idf(self, searcher, fieldname, text):
            parent = searcher.get_parent()
            n = parent.doc_frequency(fieldname, text)
            total = parent.doc_count_all()
            return log(1 + (total - n + 0.5) / (n + 0.5))

        def scorer(self, searcher, fieldname, text, qf=1):
            if not searcher.schema[fieldname].scorable:
                return scoring.WeightScorer.for_(searcher, fieldname, text)
            scorer = scoring.BM25FScorer(
                searcher, fieldname, text,
                FIELD_B.get(fieldname, DEFAULT_B), K1, qf=qf,
            )
            scorer.idf = self.idf(searcher, fieldname, text)
            return scorer

    return FieldBM25F(B=DEFAULT_B, K1=K1)


def _bm25f_class():
    """Build :class:`BM25FTerm` on first use (keeps Whoosh out of import time)."""
    from whoosh import query as wq
    from whoosh.matching import NullMatcher

    class BM25FTerm(wq.Or):
        """One query term searched in several fields, scored by BM25F.

        The subqueries are ``Term(field, text)`` for each field (so highlighting
        and term listing work as for any ``Or``). Unlike a sum of per-field
        BM25 scores, BM25F (Robertson, Zaragoza and Taylor, "Simple BM25
        extension to multiple weighted fields", CIKM 2004) first adds the
        field frequencies, each normalised by its field's length::

            tf  = sum over fields f of  w_f * tf_f / (1 - B_f + B_f * len_f / avglen_f)
            score = idf * tf * (K1 + 1) / (tf + K1)

        ``w_f`` is the field boost, already part of the indexed frequency;
        ``B_f`` comes from :data:`FIELD_B`, ``K1`` is :data:`K1`; the document frequency for
        the idf is the largest over the fields (a document with the term in
        its title nearly always has it in its abstract).
        """

        JOINT = " | "

        def _matcher(self, subs, searcher, context):
            docs, scores = _cached_postings(searcher, searcher.reader(), subs)
            if not docs:
                return NullMatcher()
            boost = self.boost
            return scored_list(docs, [score * boost for score in scores] if boost != 1 else scores)

    return BM25FTerm


_BM25F = None
_SCORED_LIST = None


def scored_list(docs: list[int], scores: list[float]):
    """A Whoosh matcher over sorted ``docs`` with precomputed ``scores``.

    Whoosh's ``ListMatcher`` recomputes its best score (a ``max`` over the
    whole list) each time a combining matcher asks; this one computes it once.
    """
    global _SCORED_LIST
    if _SCORED_LIST is None:
        from whoosh.matching import ListMatcher

        class ScoredList(ListMatcher):
            def __init__(self, ids, weights):
                super().__init__(ids, weights=weights)
                self._best = max(weights) if weights else 0.0

            def block_max_weight(self):
                return self._best

        _SCORED_LIST = ScoredList
    return _SCORED_LIST(docs, scores)
# Scored postings of this many recent query terms are kept per index segment
# (a keyword query's joined alternatives ask for the same term several times).
_TERM_CACHE_SIZE = 32


def _reader_cache(reader, name: str) -> dict:
    """A dict kept on a segment reader; it lives as long as the open index."""
    caches = reader.__dict__.setdefault("_searchengine_cache", {})
    return caches.setdefault(name, {})


def _length_norms(searcher, reader, fieldname: str) -> list[float]:
    """``1 - B + B * length / average length`` of ``fieldname`` for every document of the segment."""
    norms = _reader_cache(reader, "norms")
    if fieldname not in norms:
        b = FIELD_B.get(fieldname, DEFAULT_B)
        avg = searcher.get_parent().avg_field_length(fieldname) or 1.0
        length = reader.doc_field_length
        norms[fieldname] = array("d", (1.0 - b + b * (length(doc, fieldname) or 0) / avg
                                       for doc in range(reader.doc_count_all())))
    return norms[fieldname]


def _cached_postings(searcher, reader, subqueries) -> tuple[array, array]:
    """:func:`_bm25f_postings` of a BM25F term's field terms, kept on the segment reader."""
    key = tuple((sub.fieldname, sub.text) for sub in subqueries)
    cache = _reader_cache(reader, "terms")
    found = cache.get(key)
    if found is None:
        found = _bm25f_postings(searcher, reader, key)
        if len(cache) >= _TERM_CACHE_SIZE:
            cache.clear()
        cache[key] = found
    return found


def _bm25f_postings(searcher, reader, terms) -> tuple[array, array]:
    """Documents of the segment containing any of ``terms`` ((field, text) pairs) and their BM25F scores."""
    parent = searcher.get_parent()
    df = 0
    weighted: dict[int, float] = {}
    for fieldname, text in terms:
        if (fieldname, text) not in reader:
            continue
        df = max(df, parent.doc_frequency(fieldname, text))
        norms = _length_norms(searcher, reader, fieldname)
        for doc, weight in reader.postings(fieldname, text).items_as("weight"):
            weighted[doc] = weighted.get(doc, 0.0) + weight / norms[doc]
    total = parent.doc_count_all()
    idf = log(1 + (total - df + 0.5) / (df + 0.5))
    docs = sorted(weighted)
    # Compact arrays: a cached common term of a large index stays well under a megabyte.
    return array("i", docs), array("d", (idf * weighted[d] * (K1 + 1) / (weighted[d] + K1) for d in docs))


def bm25f_scores_at(searcher, terms, docnums, boost: float = 1.0) -> dict[int, float]:
    """The BM25F score of one word (``terms``: Whoosh ``Term`` queries, one per
    field, as in :func:`bm25f_term`) in each of ``docnums`` that contains it.

    The same scores as a :class:`BM25FTerm` with ``boost``, but the postings
    are read only where ``docnums`` fall (skipping whole blocks), which is
    much cheaper than scoring every posting of a common word when only a few
    documents are wanted (re-ranking).

    Args:
        searcher: a Whoosh searcher (atomic or over several segments).
        terms: ``Term`` queries of the same text in several fields.
        docnums: top-level document numbers.

    Returns:
        ``{docnum: score}`` for the documents of ``docnums`` containing the word.
    """
    parent = searcher.get_parent()
    keys = [(t.fieldname, t.text) for t in terms]
    df = max((parent.doc_frequency(f, t) for f, t in keys if (f, t) in parent.reader()), default=0)
    if not df:
        return {}
    idf = log(1 + (parent.doc_count_all() - df + 0.5) / (df + 0.5))
    wanted = sorted(set(docnums))
    parts = [(searcher, 0)] if searcher.is_atomic() else searcher.subsearchers
    found: dict[int, float] = {}
    for number, (sub, offset) in enumerate(parts):
        end = parts[number + 1][1] if number + 1 < len(parts) else offset + sub.doc_count_all()
        local = [doc - offset for doc in wanted if offset <= doc < end]
        if not local:
            continue
        reader = sub.reader()
        weighted: dict[int, float] = {}
        for fieldname, text in keys:
            if (fieldname, text) not in reader:
                continue
            norms = _length_norms(sub, reader, fieldname)
            postings = reader.postings(fieldname, text)
            for doc in local:
                if not postings.is_active():
                    break
                postings.skip_to(doc)
                if postings.is_active() and postings.id() == doc:
                    weighted[doc] = weighted.get(doc, 0.0) + postings.weight() / norms[doc]
        for doc, tf in weighted.items():
            found[doc + offset] = idf * tf * (K1 + 1) / (tf + K1) * boost
    return found


def bm25f_term(terms, boost: float = 1.0):
    """A :class:`BM25FTerm` over ``terms`` (Whoosh ``Term`` queries, one per field)."""
    global _BM25F
    if _BM25F is None:
        _BM25F = _bm25f_class()
    return _BM25F(terms, boost=boost)


class Unsupported(Exception):
    """A query node :func:`score_documents` leaves to Whoosh's matchers."""


def score_documents(query, searcher) -> dict[int, float] | None:
    """Every document matching ``query`` with its score, or ``None``.

    A fast path for the queries the parser builds from plain words: BM25F
    terms combined by ``And``, ``Or`` (scores added, as Whoosh's union does),
    ``Or`` with ``minmatch`` (at least that many subqueries) and ``AndNot``.
    It works on the cached per-term score arrays with set and dict
    operations instead of Whoosh's matcher tree, and gives the same scores.
    Any other node (phrases, fielded terms, prefixes) returns ``None``: the
    caller then uses Whoosh's own search.

    Returns:
        ``{docnum: score}`` with top-level document numbers.
    """
    parts = [(searcher, 0)] if searcher.is_atomic() else searcher.subsearchers
    found: dict[int, float] = {}
    try:
        for sub, offset in parts:
            scores = _node_scores(query, sub, sub.reader())
            if offset:
                found.update((doc + offset, score) for doc, score in scores.items())
            else:
                found.update(scores)
    except Unsupported:
        return None
    return found


def _node_scores(q, searcher, reader) -> dict[int, float]:
    from whoosh import query as wq

    if _BM25F is not None and type(q) is _BM25F:
        docs, scores = _cached_postings(searcher, reader, q.subqueries)
        if q.boost != 1:
            return {doc: score * q.boost for doc, score in zip(docs, scores)}
        return dict(zip(docs, scores))
    kind = type(q)
    if kind is wq.Term:
        return _term_scores(q, searcher, reader)
    if kind is wq.And:
        positive = [s for s in q.subqueries if type(s) is not wq.Not]
        if not positive:
            raise Unsupported
        parts = sorted((_node_scores(s, searcher, reader) for s in positive), key=len)
        found = parts[0]
        for other in parts[1:]:
            found = {doc: score + other[doc] for doc, score in found.items() if doc in other}
        negated = [s for s in q.subqueries if type(s) is wq.Not]
        for s in negated:
            for doc in _node_scores(s.query, searcher, reader):
                found.pop(doc, None)
        if negated:
            # Whoosh's inverse matcher scores each document it lets through
            # with the Not's boost: keep the scores identical to its own.
            extra = sum(s.boost for s in negated)
            found = {doc: score + extra for doc, score in found.items()}
        return _boosted(found, q.boost)
    if isinstance(q, wq.Or) and not any(type(s) is wq.Not for s in q.subqueries):
        needed = getattr(q, "minmatch", 0) or 0
        total: dict[int, float] = {}
        counts: dict[int, int] = {}
        for s in q.subqueries:
            for doc, score in _node_scores(s, searcher, reader).items():
                total[doc] = total.get(doc, 0.0) + score
                if needed > 1:
                    counts[doc] = counts.get(doc, 0) + 1
        if needed > 1:
            total = {doc: score for doc, score in total.items() if counts[doc] >= needed}
        return _boosted(total, q.boost)
    if kind is wq.AndNot:
        found = dict(_node_scores(q.a, searcher, reader))
        for doc in _node_scores(q.b, searcher, reader):
            found.pop(doc, None)
        return found
    raise Unsupported


def _term_scores(q, searcher, reader) -> dict[int, float]:
    """One field's BM25 scores for a term, as the searcher's :func:`weighting` computes them."""
    fieldname, text = q.fieldname, q.text
    field = searcher.schema[fieldname] if fieldname in searcher.schema else None
    if field is None or not field.scorable or not isinstance(text, str):
        raise Unsupported
    btext = field.to_bytes(text)
    if (fieldname, btext) not in reader:
        return {}
    parent = searcher.get_parent()
    n = parent.doc_frequency(fieldname, btext)
    idf = log(1 + (parent.doc_count_all() - n + 0.5) / (n + 0.5))
    norms = _length_norms(searcher, reader, fieldname)
    scale = idf * (K1 + 1) * q.boost
    return {doc: scale * weight / (weight + K1 * norms[doc])
            for doc, weight in reader.postings(fieldname, btext).items_as("weight")}


def _boosted(scores: dict[int, float], boost: float) -> dict[int, float]:
    return scores if boost == 1 else {doc: score * boost for doc, score in scores.items()}
