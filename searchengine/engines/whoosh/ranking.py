"""Ranking: BM25F over title, abstract and author names.

A query word is one :class:`BM25FTerm` (built by :func:`bm25f_term`): its
frequencies in the fields are length-normalised per field, weighted (the
title counts :data:`searchengine.ranking.TITLE_BOOST` times, applied at
indexing) and added up before BM25's saturation, so a word in both title and
abstract is not counted as two words. The inverse document frequency is
BM25's ``ln(1 + (N - n + 0.5) / (n + 0.5))`` (N documents, n containing the
term), which is never negative. The parameters (``K1``, the per-field ``B``,
the feedback and proximity constants) live in :mod:`searchengine.ranking`.

Long questions (at least ``FEEDBACK_MIN_TERMS`` terms) are then
re-ranked by pseudo-relevance feedback (:mod:`searchengine.engines.whoosh.feedback`, RM3
with ``FEEDBACK_DOCS`` feedback documents, ``FEEDBACK_TERMS``
expansion terms, and the expansion weighing ``FEEDBACK_WEIGHT`` times
the query: less than Anserini's equal weighting, which did more harm on a
test with one right answer per query); the alternatives
measured are listed in docs/evaluation.md. :func:`bm25f_scores_at` scores
the expansion terms in the ``FEEDBACK_DEPTH`` best hits only.
"""

from __future__ import annotations

import heapq
import time
from array import array
from bisect import bisect_left, bisect_right
from itertools import accumulate
from math import log

from searchengine.engines.whoosh import combine, internals
from searchengine.ranking import (
    DEFAULT_B,
    FIELD_B,
    K1,
    PROXIMITY_DEPTH,
    PROXIMITY_SLOP,
    PROXIMITY_WEIGHT,
    TITLE_BOOST,
)

# An OR of up to this many subqueries (a word or phrase in each field) is read
# whole even past the deadline, so that its answer is complete and can be kept;
# a longer one (pasted words ORed together) stops at the deadline.
UNTIMED_OR = 8


class MatchClock:
    """The deadline (a ``time.monotonic()`` value) of one search's matching and
    scoring, and what it cut short.

    Reading positions (quoted phrases, a compound's parts in sequence, the
    proximity bonus), checking stored text and combining the words of an
    ``Or`` stop at the deadline. ``cut`` says matching stopped (papers may be
    missing); ``approximate`` says the proximity bonus stopped (the order of
    the best hits is approximate).
    """

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.cut = False
        self.approximate = False

    def expired(self) -> bool:
        """Whether the deadline has passed."""
        return time.monotonic() > self.deadline


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

    class JoinedTerm(BM25FTerm):
        """A joined word (``neuralnetwork``) searched as an alternative of its
        words: BM25F of the joined term's frequencies, but with the idf of
        the words added up (``parts``: ``Term`` queries per word, one per
        field), so that a rare joined spelling weighs as the words it stands
        for, not more."""

        def __init__(self, subqueries, boost: float = 1.0, parts: tuple = ()) -> None:
            super().__init__(subqueries, boost=boost)
            self.parts = tuple(tuple(word) for word in parts)

        def __eq__(self, other) -> bool:
            return super().__eq__(other) and getattr(other, "parts", None) == self.parts

        def __hash__(self) -> int:
            return hash((super().__hash__(), self.parts))

        def apply(self, fn):
            return type(self)([fn(q) for q in self.subqueries], boost=self.boost, parts=self.parts)

        def normalize(self):
            return self

        def _matcher(self, subs, searcher, context):
            scores = _node_scores(self, searcher, searcher.reader())
            if not scores:
                return NullMatcher()
            docs = sorted(scores)
            return scored_list(docs, [scores[doc] for doc in docs])

    return BM25FTerm, JoinedTerm


_BM25F = None
_JOINED = None
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
# Scored postings of recent query terms are kept per index segment, least
# recently used dropped first, up to this many postings per segment (12 bytes
# each). Reading a frequent word's postings costs tens of milliseconds; a
# cached word costs a fraction of one.
TERM_CACHE_POSTINGS = 2_000_000


class _PostingsCache:
    """Least-recently-used ``key -> value`` (a tuple whose first item's length
    is the number of postings it holds), bounded by the total number of postings."""

    def __init__(self, budget: int) -> None:
        from collections import OrderedDict

        self.entries: OrderedDict = OrderedDict()
        self.sizes: dict = {}  # as counted when kept: a kept value may grow later
        self.budget = budget
        self.size = 0

    def get(self, key):
        found = self.entries.get(key)
        if found is not None:
            self.entries.move_to_end(key)
        return found

    def put(self, key, value, replace: bool = False) -> None:
        """Keep ``value`` (its size: ``len(value[0]) + 1``); a key already kept
        stays as it is unless ``replace``."""
        size = len(value[0]) + 1
        if replace and key in self.entries:
            del self.entries[key]
            self.size -= self.sizes.pop(key)
        if key in self.entries or size > self.budget:
            return
        self.entries[key] = value
        self.sizes[key] = size
        self.size += size
        while self.size > self.budget:
            dropped, _ = self.entries.popitem(last=False)
            self.size -= self.sizes.pop(dropped)


def _reader_cache(reader, name: str, make=dict):
    """An object (``make()``, a dict by default) kept on a segment reader; it lives as long as the open index."""
    caches = reader.__dict__.setdefault("_searchengine_cache", {})
    found = caches.get(name)
    if found is None:
        found = caches[name] = make()
    return found


class SegmentNorms:
    """``1 - B + B * length / average length`` of a field for each document of a
    segment, read as ``norms[doc]`` or, for many documents, ``norms.of(docs)``.

    Whoosh keeps a field's lengths as one byte per document (256 lengths),
    so a norm is a table lookup of that byte. A list of every document's
    norm (75,000 documents: about 10 ms) is made once the documents asked for
    add up to :data:`NORMS_MATERIALIZE` of the segment; until then each is
    looked up, so that a short search in a new process (a few rare words)
    does not pay for the whole list of each field.
    """

    def __init__(self, codes: bytes | None, table: list[float] | None, norms: array | None = None) -> None:
        self._codes, self._table, self._norms = codes, table, norms
        self._asked = 0

    def of(self, docs):
        """The norms of ``docs`` (a sequence of document numbers), in order, as an iterator."""
        if self._norms is None:
            self._asked += len(docs)
            if self._asked < len(self._codes) * NORMS_MATERIALIZE:
                return map(self._table.__getitem__, map(self._codes.__getitem__, docs))
            self._norms = array("d", map(self._table.__getitem__, self._codes))
        return map(self._norms.__getitem__, docs)

    def __getitem__(self, doc: int) -> float:
        return self._norms[doc] if self._norms is not None else self._table[self._codes[doc]]


# SegmentNorms: the share of a segment's documents asked for after which all
# its norms are listed.
NORMS_MATERIALIZE = 0.25


def _length_norms(searcher, reader, fieldname: str) -> SegmentNorms:
    """The :class:`SegmentNorms` of ``fieldname`` in the segment, kept with its reader."""
    norms = _reader_cache(reader, "norms")
    if fieldname not in norms:
        b = FIELD_B.get(fieldname, DEFAULT_B)
        avg = searcher.get_parent().avg_field_length(fieldname) or 1.0
        count = reader.doc_count_all()
        codes = internals.length_codes(reader, fieldname, count)
        if codes is not None:
            from whoosh.util.numeric import byte_to_length

            table = [1.0 - b + b * (byte_to_length(code) if code else 0) / avg for code in range(256)]
            norms[fieldname] = SegmentNorms(codes, table)
        else:
            length = reader.doc_field_length
            norms[fieldname] = SegmentNorms(None, None, array("d", (1.0 - b + b * (length(doc, fieldname) or 0) / avg
                                                                    for doc in range(count))))
    return norms[fieldname]


def _leaf_matcher(reader, fieldname: str, text):
    """``(matcher, deleted docnums or None, whether its blocks can be read whole)``
    for a term's postings in a segment, with Whoosh's deleted-document filter taken off."""
    matcher, deleted = internals.unfiltered(reader.postings(fieldname, text))
    return matcher, deleted, internals.reads_blocks(matcher)


def posting_blocks(reader, fieldname: str, text):
    """A term's postings in a segment, as ``(document numbers, weights)`` pairs of sequences.

    The weight is the term's frequency times the field's boost, as
    ``items_as("weight")`` gives it; deleted documents are left out. Whoosh
    reads postings in blocks of up to 128: taking each block's arrays whole
    is several times faster than a call per posting. That reaches below
    Whoosh's public API, so a matcher of another shape is read the public way.
    """
    matcher, deleted, blockwise = _leaf_matcher(reader, fieldname, text)
    if not blockwise:
        if deleted is not None:
            from whoosh.matching.wrappers import FilterMatcher

            matcher = FilterMatcher(matcher, deleted, exclude=True)
        pairs = list(matcher.items_as("weight"))
        yield [doc for doc, _ in pairs], [weight for _, weight in pairs]
        return
    while matcher.is_active():
        ids, weights, _ = internals.read_block(matcher)
        if deleted:
            kept = [i for i, doc in enumerate(ids) if doc not in deleted]
            ids, weights = [ids[i] for i in kept], [weights[i] for i in kept]
        yield ids, weights
        internals.next_block(matcher)


def _cached_postings(searcher, reader, subqueries) -> tuple[array, array]:
    """:func:`_bm25f_postings` of a BM25F term's field terms, kept on the segment reader."""
    return _term_postings(searcher, reader, _indexed(searcher, [(sub.fieldname, sub.text) for sub in subqueries]))


def _indexed(searcher, terms) -> tuple:
    """The (field, text) pairs of ``terms`` that some document of the index has.

    A word's BM25F postings and idf depend only on these, so ``models``
    (whose author-name form ``models`` no author has) and ``model`` share
    one cache entry.
    """
    frequency = _frequencies(searcher)
    return tuple(term for term in terms if frequency(term) > 0)


def _frequencies(searcher):
    """``(field, text) -> document frequency`` over the whole index, kept with
    its reader: a word's frequency is asked for its idf, for each field and
    each form of it, in every search that has it (thousands of lookups in a
    pasted question, each a read of the term index)."""
    reader = searcher.get_parent().reader()
    cache = _reader_cache(reader, "frequencies")
    get = cache.get

    def frequency(term: tuple) -> int:
        found = get(term)
        if found is None:
            found = cache[term] = reader.doc_frequency(*term)
        return found

    return frequency


def _term_postings(searcher, reader, key: tuple) -> tuple[array, array]:
    """:func:`_bm25f_postings` of ``key`` ((field, text) pairs), kept on the segment reader."""
    cache = _postings_cache(reader)
    found = cache.get(key)
    if found is None:
        found = _bm25f_postings(searcher, reader, key)
        cache.put(key, found)
    return found


# Server warm-up (:func:`warm_postings`): the most frequent words of the
# abstracts, until this share of each segment's cache is filled.
WARM_TERMS = 400
WARM_SHARE = 0.5


def warm_postings(searcher, seconds: float = 10.0) -> int:
    """Read the scored postings of the index's most frequent words into the cache.

    Frequent words have the longest posting lists, and reading a list is most
    of what a query costs the first time it meets a word; they are also the
    words most queries contain. Each segment's most frequent abstract stems
    are read (as the BM25F term a query word with that stem asks for) until
    :data:`WARM_SHARE` of the segment's cache is used, :data:`WARM_TERMS`
    stems are read, or ``seconds`` have passed.

    Returns:
        The number of terms read.
    """
    import time

    deadline = time.monotonic() + seconds
    parts = [(searcher, 0)] if searcher.is_atomic() else searcher.subsearchers
    read = 0
    for sub, _ in parts:
        reader = sub.reader()
        cache = _postings_cache(reader)
        if "abstract" not in reader.schema:
            continue
        for _, text in reader.most_frequent_terms("abstract", number=WARM_TERMS):
            if time.monotonic() > deadline:
                return read
            if cache.size >= cache.budget * WARM_SHARE:
                break
            stem = text.decode("utf-8") if isinstance(text, bytes) else text
            _term_postings(sub, reader, _indexed(searcher, [(f, stem) for f in ("title", "abstract", "authors")]))
            read += 1
    return read


def _postings_cache(reader) -> _PostingsCache:
    return _reader_cache(reader, "postings", lambda: _PostingsCache(TERM_CACHE_POSTINGS))


def _bm25f_postings(searcher, reader, terms) -> tuple[array, array]:
    """Documents of the segment containing any of ``terms`` ((field, text) pairs) and their BM25F scores."""
    from operator import truediv

    per_field = []
    for fieldname, text in terms:
        if (fieldname, text) not in reader:
            continue
        norms = _length_norms(searcher, reader, fieldname)
        ids: list[int] = []
        tfs: list[float] = []
        for block_ids, block_weights in posting_blocks(reader, fieldname, text):
            ids.extend(block_ids)
            tfs.extend(map(truediv, block_weights, norms.of(block_ids)))
        per_field.append((ids, tfs))
    if not per_field:
        return array("i"), array("d")
    per_field.sort(key=lambda found: len(found[0]), reverse=True)
    docs, tfs = per_field[0]
    if len(per_field) > 1:
        # Field frequencies add up before saturation; the longest list is taken whole.
        combined = dict(zip(docs, tfs))
        get = combined.get
        for ids, more in per_field[1:]:
            for doc, tf in zip(ids, more):
                combined[doc] = get(doc, 0.0) + tf
        docs = sorted(combined)
        tfs = map(combined.__getitem__, docs)
    idf = _idf(searcher, terms)
    scale = idf * (K1 + 1)
    # Compact arrays: a cached common term of a large index stays well under a megabyte.
    return array("i", docs), array("d", [scale * tf / (tf + K1) for tf in tfs])


def _saturated(idf: float, tf: float) -> float:
    """BM25's score of a (length-normalised) term frequency ``tf``."""
    return idf * tf * (K1 + 1) / (tf + K1)


def _idf(searcher, terms) -> float:
    """BM25's idf of a term searched in several fields ((field, text) pairs):
    its document frequency is the largest over the fields."""
    df = max(map(_frequencies(searcher), terms))
    return log(1 + (searcher.get_parent().doc_count_all() - df + 0.5) / (df + 0.5))


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
    keys = _indexed(searcher, [(t.fieldname, t.text) for t in terms])
    if not keys:
        return {}
    idf = _idf(searcher, keys)
    wanted = sorted(set(docnums))
    parts = [(searcher, 0)] if searcher.is_atomic() else searcher.subsearchers
    found: dict[int, float] = {}
    for number, (sub, offset) in enumerate(parts):
        end = parts[number + 1][1] if number + 1 < len(parts) else offset + sub.doc_count_all()
        local = [doc - offset for doc in wanted if offset <= doc < end]
        if not local:
            continue
        reader = sub.reader()
        cached = _postings_cache(reader).get(keys)
        if cached is not None:  # the word's postings are in memory: look the documents up
            docs, scores = cached
            for doc in local:
                at = bisect_left(docs, doc)
                if at < len(docs) and docs[at] == doc:
                    found[doc + offset] = scores[at] * boost
            continue
        weighted: dict[int, float] = {}
        for fieldname, text in keys:
            norms = _length_norms(sub, reader, fieldname)
            for doc, (weight, _) in _postings_at(reader, fieldname, text, local).items():
                weighted[doc] = weighted.get(doc, 0.0) + weight / norms[doc]
        for doc, tf in weighted.items():
            found[doc + offset] = _saturated(idf, tf) * boost
    return found


def bm25f_term(terms, boost: float = 1.0):
    """A :class:`BM25FTerm` over ``terms`` (Whoosh ``Term`` queries, one per field)."""
    global _BM25F, _JOINED
    if _BM25F is None:
        _BM25F, _JOINED = _bm25f_class()
    return _BM25F(terms, boost=boost)


def is_bm25f_term(query) -> bool:
    """Whether ``query`` is a plain :class:`BM25FTerm` (not a :class:`JoinedTerm`)."""
    return _BM25F is not None and type(query) is _BM25F


def joined_term(terms, parts, boost: float = 1.0):
    """A :class:`JoinedTerm`: the joined word ``terms`` (``Term`` queries, one
    per field) weighing as its words ``parts`` (per word, ``Term`` queries of
    its stem in each field)."""
    global _BM25F, _JOINED
    if _JOINED is None:
        _BM25F, _JOINED = _bm25f_class()
    return _JOINED(terms, boost=boost, parts=parts)


def _joined_scale(searcher, q) -> float:
    """The idf of a :class:`JoinedTerm`'s words added up, over its own idf."""
    own = _indexed(searcher, [(sub.fieldname, sub.text) for sub in q.subqueries])
    if not own:
        return 1.0
    parent = searcher.get_parent()
    total = 0.0
    for word in q.parts:
        keys = _indexed(searcher, [(term.fieldname, term.text) for term in word])
        # A word no document has: the idf of a term found once.
        total += _idf(searcher, keys) if keys else log(1 + (parent.doc_count_all() - 0.5) / 1.5)
    return total / _idf(searcher, own) if total else 1.0


class Unsupported(Exception):
    """A query node :func:`score_documents` leaves to Whoosh's matchers."""


def score_documents(query, searcher, within=None, clock: MatchClock | None = None):
    """Every document matching ``query`` with its score, or ``None``.

    A fast path for the queries the parser builds from plain words: BM25F
    terms combined by ``And``, ``Or`` (scores added, as Whoosh's union does),
    ``Or`` with ``minmatch`` (at least that many subqueries) and ``AndNot``.
    It works on the cached per-term score arrays with set and dict
    operations instead of Whoosh's matcher tree, and gives the same scores.
    Any other node (phrases, fielded terms, prefixes) returns ``None``: the
    caller then uses Whoosh's own search.

    ``within`` (top-level document numbers), when given, bounds the result:
    documents outside it may be left out, and phrases read positions for
    those documents only when they are few. ``clock``, when given, stops
    reading positions and combining alternatives at its deadline (and notes
    it: :class:`MatchClock`).

    Returns:
        ``{docnum: score}`` with top-level document numbers: a ``dict``, or
        for a query of many postings a :class:`.combine.ScoredDocs`.
    """
    if type(query).__name__ == "Proximity":
        found = score_documents(query.child, searcher, within, clock)
        if found:
            if isinstance(found, combine.ScoredDocs):
                best = found.top(PROXIMITY_DEPTH)
            else:
                best = heapq.nlargest(PROXIMITY_DEPTH, found.items(), key=lambda item: (item[1], -item[0]))
            bonuses = proximity_bonus(searcher, query.pairs, [doc for doc, _ in best], clock)
            if isinstance(found, combine.ScoredDocs):
                found.add(bonuses)
            else:
                for doc, bonus in bonuses.items():
                    found[doc] += bonus
        return found
    parts = [(searcher, 0)] if searcher.is_atomic() else searcher.subsearchers
    found = []
    try:
        for i, (sub, offset) in enumerate(parts):
            bound = None
            if within is not None:
                end = parts[i + 1][1] if i + 1 < len(parts) else float("inf")
                bound = {doc - offset for doc in within if offset <= doc < end}
            found.append((offset, _node_scores(query, sub, sub.reader(), bound, clock, arrays=True)))
    except Unsupported:
        return None
    if any(not isinstance(part, dict) for _, part in found):
        shifted = []
        for offset, part in found:
            if isinstance(part, dict):
                shifted.append({doc + offset: score for doc, score in part.items()} if offset else part)
            else:
                shifted.append((part[0].astype("int64") + offset, part[1]))
        return combine.joined(shifted)
    merged: dict[int, float] = {}
    for offset, scores in found:
        if offset:
            merged.update((doc + offset, score) for doc, score in scores.items())
        else:
            merged.update(scores)
    return merged


def _node_scores(q, searcher, reader, within: set[int] | None = None, clock=None, arrays: bool = False):
    """``{docnum: score}`` of ``q`` in one segment. ``within``, when given,
    bounds what the caller will keep: a node may leave out documents outside
    it (phrases do, to read fewer positions). With ``arrays``, a tree of
    many postings combined by :mod:`.combine` is returned as its ``(docs,
    scores)`` numpy arrays instead."""
    from whoosh import query as wq

    if _BM25F is not None and type(q) is _BM25F:
        docs, scores = _cached_postings(searcher, reader, q.subqueries)
        if q.boost != 1:
            return {doc: score * q.boost for doc, score in zip(docs, scores)}
        return dict(zip(docs, scores))
    if _JOINED is not None and type(q) is _JOINED:
        docs, scores = _cached_postings(searcher, reader, q.subqueries)
        scale = q.boost * _joined_scale(searcher, q)
        return {doc: score * scale for doc, score in zip(docs, scores)}
    kind = type(q)
    if (kind is wq.And or isinstance(q, (wq.Or, wq.DisjunctionMax))) and combine.applies(q, _is_word):
        leaves: dict[int, tuple[array, array]] = {}
        _word_postings(q, searcher, reader, leaves)
        if combine.dense(sum(len(docs) for docs, _ in leaves.values()), reader.doc_count_all()):
            found = _combined(q, searcher, reader, leaves, clock)
            return found if arrays else combine.as_dict(found)
    if kind is wq.DisjunctionMax:
        best: dict[int, float] = {}
        for scores in _ways(q, clock, lambda s: _node_scores(s, searcher, reader, within, clock), bool):
            for doc, score in scores.items():
                if score > best.get(doc, -1.0):
                    best[doc] = score
        return _boosted(best, q.boost)
    if kind is wq.Term:
        return _term_scores(q, searcher, reader)
    if kind is wq.Phrase:
        return _phrase_scores(q, searcher, reader, within, clock)
    if kind.__name__ == "ExactText":
        return _exact_scores(q, searcher, reader, within, clock)
    if kind is wq.And:
        positive = [s for s in q.subqueries if type(s) is not wq.Not]
        if not positive:
            raise Unsupported
        # Term lists first; phrases then check positions only where every term is.
        cheap = [s for s in positive if not _has_phrase(s)]
        parts = sorted((_node_scores(s, searcher, reader, within, clock) for s in cheap), key=len)
        for s in positive:
            if _has_phrase(s):
                bound = set(parts[0]) if parts else within
                if within is not None and parts:
                    bound &= within
                parts.append(_node_scores(s, searcher, reader, bound, clock))
                parts.sort(key=len)
        found = parts[0]
        for other in parts[1:]:
            found = {doc: score + other[doc] for doc, score in found.items() if doc in other}
        negated = [s for s in q.subqueries if type(s) is wq.Not]
        for s in negated:
            for doc in _node_scores(s.query, searcher, reader, None, clock):
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
        for scores in _or_parts(q, clock, lambda s: _node_scores(s, searcher, reader, within, clock)):
            for doc, score in scores.items():
                total[doc] = total.get(doc, 0.0) + score
                if needed > 1:
                    counts[doc] = counts.get(doc, 0) + 1
        if needed > 1:
            total = {doc: score for doc, score in total.items() if counts[doc] >= needed}
        return _boosted(total, q.boost)
    if kind is wq.Require:
        found = _node_scores(q.a, searcher, reader, within, clock)
        needed = _node_scores(q.b, searcher, reader, set(found) if within is None else set(found) & within, clock)
        return _boosted({doc: score for doc, score in found.items() if doc in needed}, q.boost)
    if kind is wq.AndNot:
        found = dict(_node_scores(q.a, searcher, reader, within, clock))
        for doc in _node_scores(q.b, searcher, reader, None, clock):
            found.pop(doc, None)
        return found
    raise Unsupported


def _ways(q, clock: MatchClock | None, score, found) -> list:
    """``score(s)`` of each way ``s`` of a ``DisjunctionMax``, in order: the
    first (as typed) always, the others while something has been found
    (``found(result)``) only until the ``clock``'s deadline (``cut`` noted)."""
    results: list = []
    for s in q.subqueries:
        if clock is not None and any(map(found, results)) and clock.expired():
            clock.cut = True
            break
        results.append(score(s))
    return results


def _or_parts(q, clock: MatchClock | None, score) -> list:
    """``score(s)`` of each subquery ``s`` of an ``Or``, in order. A repeated
    one (a word twice in a relaxed pasted chain) is scored once and given
    again; an ``Or`` of more than :data:`UNTIMED_OR` stops at the ``clock``'s
    deadline (``cut`` noted)."""
    timed = clock is not None and len(q.subqueries) > UNTIMED_OR
    known: dict = {}
    results: list = []
    for number, s in enumerate(q.subqueries):
        if number and timed and clock.expired():
            clock.cut = True
            break
        found = known.get(s)
        if found is None:
            found = known[s] = score(s)
        results.append(found)
    return results


def _is_word(q) -> bool:
    """Whether ``q`` is a :class:`BM25FTerm` or a :class:`JoinedTerm`."""
    kind = type(q)
    return (_BM25F is not None and kind is _BM25F) or (_JOINED is not None and kind is _JOINED)


def _word_postings(q, searcher, reader, leaves: dict) -> None:
    """Put the scored postings of each word of ``q`` (a tree :func:`.combine.applies`
    to) in ``leaves``, by the word's ``id``."""
    if _is_word(q):
        leaves[id(q)] = _cached_postings(searcher, reader, q.subqueries)
        return
    for s in q.subqueries:
        _word_postings(s, searcher, reader, leaves)


def _combined(q, searcher, reader, leaves: dict, clock: MatchClock | None):
    """``(docs, scores)`` numpy arrays of ``q`` in one segment, as
    :func:`_node_scores` would give them, from its words' postings
    ``leaves`` (:func:`_word_postings`); the same deadline checks."""
    from whoosh import query as wq

    kind = type(q)
    if _is_word(q):
        docs, scores = leaves[id(q)]
        return combine.leaf_arrays(docs, scores, q.boost * _joined_scale(searcher, q) if kind is _JOINED else q.boost)
    if kind is wq.DisjunctionMax:
        parts = _ways(q, clock, lambda s: _combined(s, searcher, reader, leaves, clock), lambda part: len(part[0]) > 0)
        return combine.scaled(combine.best(parts, reader.doc_count_all()), q.boost)
    if kind is wq.And:
        return combine.scaled(combine.intersection([_combined(s, searcher, reader, leaves, clock)
                                                    for s in q.subqueries]), q.boost)
    parts = _or_parts(q, clock, lambda s: _combined(s, searcher, reader, leaves, clock))
    needed = getattr(q, "minmatch", 0) or 0
    return combine.scaled(combine.union(parts, reader.doc_count_all(), needed), q.boost)


def proximity_bonus(searcher, pairs, docnums, clock: MatchClock | None = None) -> dict[int, float]:
    """The proximity bonus of each of ``docnums`` that has a pair of the query's
    neighbouring words together (see :data:`PROXIMITY_WEIGHT`).

    Args:
        searcher: a Whoosh searcher (atomic or over several segments).
        pairs: ``(field, first stem, second stem, gap)`` per pair of
            neighbouring query words and field (``gap``: their distance in
            positions in the query).
        docnums: top-level document numbers.
        clock: stops reading positions at its deadline (noting
            ``approximate``): the pairs read by then give the bonus.

    Returns:
        ``{docnum: bonus}`` for the documents with some pair together: per
        pair, ``PROXIMITY_WEIGHT * (idf1 + idf2) * tf * (K1 + 1) / (tf + K1)``,
        ``tf`` summing the field's sloppy phrase frequency times the field's
        weight (the title's :data:`~searchengine.ranking.TITLE_BOOST`)
        over its length norm, as BM25F does for a word.
    """

    weights = {"title": TITLE_BOOST}
    wanted = sorted(set(docnums))
    by_pair: dict[tuple[str, str, int], list[str]] = {}
    for fieldname, a, b, gap in pairs:
        by_pair.setdefault((a, b, gap), []).append(fieldname)
    found: dict[int, float] = {}
    parts = [(searcher, 0)] if searcher.is_atomic() else searcher.subsearchers
    for number, (sub, offset) in enumerate(parts):
        end = parts[number + 1][1] if number + 1 < len(parts) else offset + sub.doc_count_all()
        local = [doc - offset for doc in wanted if offset <= doc < end]
        if not local:
            continue
        reader = sub.reader()
        positions: dict[tuple[str, str], dict] = {}
        for (a, b, _), fieldnames in by_pair.items():
            for key in ((fieldname, text) for fieldname in fieldnames for text in (a, b)):
                if key not in positions:
                    if clock is not None and clock.expired():
                        clock.approximate = True
                        break
                    positions[key] = _cached_positions(reader, *key, local)
        for (a, b, gap), fieldnames in by_pair.items():
            tf: dict[int, float] = {}
            for fieldname in fieldnames:
                first, second = positions.get((fieldname, a)), positions.get((fieldname, b))
                if not first or not second:
                    continue
                norms = _length_norms(sub, reader, fieldname)
                weight = weights.get(fieldname, 1.0)
                for doc, (_, starts) in first.items():
                    if doc not in second:
                        continue
                    ends = second[doc][1]
                    freq = sum(1.0 / (1 + extra) for start in starts for extra in range(PROXIMITY_SLOP + 1)
                               if start + gap + extra in ends)
                    if freq:
                        tf[doc] = tf.get(doc, 0.0) + weight * freq / norms[doc]
            if not tf:
                continue
            idf = sum(_idf(searcher, keys) for keys in (_indexed(searcher, [(f, word) for f in fieldnames])
                                                        for word in (a, b)) if keys)
            for doc, value in tf.items():
                found[doc + offset] = found.get(doc + offset, 0.0) + PROXIMITY_WEIGHT * _saturated(idf, value)
    return found


# Postings with positions kept per segment for the proximity bonus and
# phrases (blocks kept whole and compact: about 40 bytes a posting), the
# least recently used words dropped first.
POSITION_CACHE_POSTINGS = 1_500_000


class _TermPositions:
    """The posting blocks of one term (one field) read so far in a segment,
    with their positions.

    A block covers the documents from the one after its predecessor's last
    to its own last: a document in a covered range that has no posting does
    not have the term. A block is kept compact (document numbers and
    weights as arrays, the encoded positions as one string with their
    offsets), so that a long-lived cache holds few objects; a document's
    positions are decoded each time they are asked for (a few microseconds:
    a set per document kept would cost nine times the posting's bytes).
    """

    __slots__ = ("firsts", "lasts", "blocks", "postings")

    def __init__(self) -> None:
        self.firsts: list[int] = []  # covered ranges (disjoint), by first document
        self.lasts: list[int] = []
        self.blocks: list[tuple] = []  # (ids, weights, positions, offsets) per range
        self.postings = 0

    def __len__(self) -> int:
        return self.postings

    def covers(self, doc: int) -> bool:
        at = bisect_right(self.firsts, doc) - 1
        return at >= 0 and doc <= self.lasts[at]

    def add(self, first: int, last: int, ids, weights, values: bytes, offsets: array) -> None:
        """Keep a block covering ``first .. last``: its document numbers,
        weights, and encoded positions (one string, each posting's from
        ``offsets[i]`` to ``offsets[i + 1]``)."""
        at = bisect_right(self.firsts, first)
        self.firsts.insert(at, first)
        self.lasts.insert(at, last)
        self.blocks.insert(at, (array("i", ids), array("d", weights), values, offsets))
        self.postings += len(ids)

    def positions(self, docs: list[int], decode) -> dict:
        """``{doc: (weight, set of positions)}`` of the covered ``docs`` (ascending) that have the term."""
        found = {}
        firsts, lasts, blocks = self.firsts, self.lasts, self.blocks
        for doc in docs:
            at = bisect_right(firsts, doc) - 1
            if at < 0 or doc > lasts[at]:
                continue
            ids, weights, values, offsets = blocks[at]
            i = bisect_left(ids, doc)
            if i < len(ids) and ids[i] == doc:
                found[doc] = (weights[i], set(decode(values[offsets[i]:offsets[i + 1]])))
        return found


def _cached_positions(reader, fieldname: str, text: str, docs: list[int],
                      clock: MatchClock | None = None) -> dict:
    """:func:`_postings_at` with positions for ``docs`` (ascending, live), kept
    with the segment reader as :class:`_TermPositions`.

    The best hits of queries sharing a word (a page, a filter, a facet, the
    next query with that word) fall mostly in blocks read before, and
    decoding a block costs far more than a lookup: only the blocks holding a
    document no block read before covers are read, and each is kept whole.
    A read the ``clock`` cut short keeps what it read.
    """
    if (fieldname, text) not in reader:
        return {}
    matcher, _, blockwise = _leaf_matcher(reader, fieldname, text)
    if not blockwise:  # a few postings kept in the term's entry
        return _postings_at(reader, fieldname, text, docs, positions=True, clock=clock)
    cache = _reader_cache(reader, "positions", lambda: _PostingsCache(POSITION_CACHE_POSTINGS))
    key = (fieldname, text)
    entry = cache.get(key)
    term = entry[0] if entry is not None else _TermPositions()
    missing = [doc for doc in docs if not term.covers(doc)]
    if missing:
        _read_position_blocks(matcher, term, missing, clock)
        cache.put(key, (term,), replace=True)  # counted again: it holds more
    return term.positions(docs, matcher.format.decode_positions)


def _read_position_blocks(matcher, term: _TermPositions, docs: list[int], clock: MatchClock | None) -> None:
    """Read into ``term`` the blocks of ``matcher`` (a fresh block-wise leaf
    matcher) holding ``docs`` (ascending, none covered yet); stops at the
    ``clock``'s deadline (its ``cut`` set)."""
    at = 0
    before = -1  # the last document of the block before the current one
    while matcher.is_active() and at < len(docs):
        last = internals.block_max_id(matcher)
        if last < docs[at]:
            before = last
            internals.next_block(matcher)
            continue
        if clock is not None and clock.expired():
            clock.cut = True
            return
        if getattr(matcher, "packs_values", False):  # the block's values already in one string (codec.py)
            ids, weights, _ = internals.read_block(matcher)
            values, offsets = matcher.packed_values()
            # The ids start where the matcher stands in the block (past deleted
            # documents a filter skipped); the offsets are the whole block's.
            term.add(before + 1, last, ids, weights, values, offsets[len(offsets) - 1 - len(ids):])
        else:
            ids, weights, values = internals.read_block(matcher, True)
            term.add(before + 1, last, ids, weights, b"".join(values),
                     array("I", accumulate(map(len, values), initial=0)))
        while at < len(docs) and docs[at] <= last:
            at += 1
        before = last
        internals.next_block(matcher)
    if at < len(docs) and not matcher.is_active():  # past the last posting
        term.add(before + 1, 2**31, (), (), b"", array("I", [0]))


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
    return {doc: scale * weight / (weight + K1 * norm)
            for ids, weights in posting_blocks(reader, fieldname, btext)
            for doc, weight, norm in zip(ids, weights, norms.of(ids))}


def _has_phrase(q) -> bool:
    from whoosh import query as wq

    return type(q) is wq.Phrase or any(_has_phrase(s) for s in q.children())


def _phrase_scores(q, searcher, reader, within: set[int] | None = None, clock=None) -> dict[int, float]:
    """Documents with ``q``'s words at consecutive positions, scored as Whoosh
    scores a phrase: the sum of the words' BM25 scores in the field, times the boost.
    Only documents in ``within`` (when given) are checked."""
    fieldname = q.fieldname
    field = searcher.schema[fieldname] if fieldname in searcher.schema else None
    if (field is None or not field.scorable or q.slop != 1 or len(q.words) < 2
            or not field.format.supports("positions") or not all(isinstance(w, str) for w in q.words)):
        raise Unsupported
    key = ("phrase", fieldname, tuple(q.words))
    cache = _postings_cache(reader)
    found = cache.get(key)
    if found is None:
        if within is not None and len(within) < FEW_CANDIDATES:
            found, _ = _phrase_postings(searcher, reader, fieldname, q.words, within, clock)
        else:  # checking most documents anyway: check all, and keep the result (when complete)
            found, complete = _phrase_postings(searcher, reader, fieldname, q.words, None, clock)
            if complete:
                cache.put(key, found)
    docs, scores = found
    return {doc: score * q.boost for doc, score in zip(docs, scores)} if q.boost != 1 else dict(zip(docs, scores))


def _exact_scores(q, searcher, reader, within: set[int] | None = None, clock=None) -> dict[int, float]:
    """A quoted phrase (:class:`searchengine.engines.whoosh.querying.ExactText`): the matches of
    its stemmed phrase or term whose stored text has the words as written,
    with the stemmed query's scores. The check of the stored text stops at
    the deadline of the phrase's clock, if it has one; a complete result not
    bounded by ``within`` is kept per segment."""
    key = ("exact", q.fieldname, q.pattern, q.child)
    cache = _postings_cache(reader)
    found = cache.get(key)
    if found is None:
        scores = _node_scores(q.child, searcher, reader, within, clock)
        docs, complete = [], True
        for doc in sorted(scores):
            if q.out_of_time():  # the documents checked so far are the hits
                complete = False
                break
            if q.holds(searcher.stored_fields(doc)):
                docs.append(doc)
        found = (array("i", docs), array("d", (scores[doc] for doc in docs)))
        if within is None and complete:
            cache.put(key, found)
    return dict(zip(*found))


# A phrase inside a conjunction with fewer candidate documents than this
# reads its words' positions for those documents only, not whole posting lists.
FEW_CANDIDATES = 2000


def _phrase_postings(searcher, reader, fieldname: str, words: list[str], within: set[int] | None,
                     clock: MatchClock | None = None) -> tuple[tuple[array, array], bool]:
    """``((docs, scores), complete)`` of a phrase: candidates are the documents
    with every word, or those of ``within`` (few, when given); positions are
    read for those only, once per distinct word. At the ``clock``'s deadline
    the candidates checked so far are the hits (``complete`` False, the clock's
    ``cut`` set)."""
    distinct = list(dict.fromkeys(words))
    if within is not None:
        candidates = sorted(within)
        read = _positions(reader, fieldname, distinct, candidates, clock)
        postings = [read[word] for word in words]
        candidates = [doc for doc in candidates if all(doc in found for found in postings)]
        norms = _length_norms(searcher, reader, fieldname)
        idfs = [_idf(searcher, ((fieldname, word),)) for word in words]
        total = {doc: sum(_saturated(idf, found[doc][0] / norms[doc]) for idf, found in zip(idfs, postings))
                 for doc in candidates}
    else:
        per_word = [_term_postings(searcher, reader, ((fieldname, word),)) for word in words]
        ordered = sorted(per_word, key=lambda found: len(found[0]))
        total = dict(zip(*ordered[0]))
        for docs, scores in ordered[1:]:
            if not total:
                break
            other = dict(zip(docs, scores))
            total = {doc: score + other[doc] for doc, score in total.items() if doc in other}
        candidates = sorted(total)
        read = _positions(reader, fieldname, distinct, candidates, clock)
        postings = [read[word] for word in words]
    kept = []
    complete = clock is None or not clock.cut
    for number, doc in enumerate(candidates):
        if not all(doc in found for found in postings):  # positions not read: the deadline came first
            continue
        if number % 256 == 255 and clock is not None and clock.expired():
            clock.cut, complete = True, False
            break
        first, following = postings[0][doc][1], [found[doc][1] for found in postings[1:]]
        if any(all(start + i + 1 in later for i, later in enumerate(following)) for start in first):
            kept.append(doc)
    return (array("i", kept), array("d", (total[doc] for doc in kept))), complete


def _positions(reader, fieldname: str, words: list[str], docs: list[int], clock: MatchClock | None) -> dict:
    """``{word: _postings_at(...)}`` with positions for each of ``words`` (distinct);
    past the ``clock``'s deadline the words left are read as absent (``cut`` noted)."""
    found = {}
    for word in words:
        if clock is not None and clock.expired():
            clock.cut = True
            found[word] = {}
            continue
        found[word] = _cached_positions(reader, fieldname, word, docs, clock)
    return found


def _postings_at(reader, fieldname: str, text: str, docs: list[int], positions: bool = False,
                 clock: MatchClock | None = None) -> dict:
    """``{doc: (weight, set of positions or None)}`` of a term for each of
    the ascending live ``docs`` that has it; positions only when asked.
    Reading stops at the ``clock``'s deadline (its ``cut`` set): the documents
    read by then.

    Blocks holding none of ``docs`` are passed over unread, as in
    :func:`posting_blocks`; a matcher of another shape is read the public way.
    """
    from whoosh.matching import ReadTooFar

    if (fieldname, text) not in reader:
        return {}
    matcher, _, blockwise = _leaf_matcher(reader, fieldname, text)  # docs are live documents already
    found = {}
    if blockwise:
        decode = matcher.format.decode_positions
        at = 0
        while matcher.is_active() and at < len(docs):
            if clock is not None and clock.expired():
                clock.cut = True
                break
            last = internals.block_max_id(matcher)
            if last < docs[at]:
                internals.next_block(matcher)
                continue
            ids, weights, values = internals.read_block(matcher, positions)
            while at < len(docs) and docs[at] <= last:
                i = bisect_left(ids, docs[at])
                if i < len(ids) and ids[i] == docs[at]:
                    found[docs[at]] = (weights[i], set(decode(values[i])) if positions else None)
                at += 1
            internals.next_block(matcher)
        return found
    for doc in docs:
        if not matcher.is_active():
            break
        try:
            matcher.skip_to(doc)
        except ReadTooFar:
            break
        if matcher.is_active() and matcher.id() == doc:
            found[doc] = (matcher.weight(), set(matcher.value_as("positions")) if positions else None)
    return found


def _boosted(scores: dict[int, float], boost: float) -> dict[int, float]:
    return scores if boost == 1 else {doc: score * boost for doc, score in scores.items()}
