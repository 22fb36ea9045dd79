"""The BM25F model: a query word over title, abstract and author names.

A query word is one :class:`BM25FTerm` (built by :func:`bm25f_term`): its
frequencies in the fields are length-normalised per field, weighted (the
title counts :data:`searchengine.ranking.TITLE_BOOST` times, applied at
indexing) and added up before BM25's saturation, so a word in both title and
abstract is not counted as two words (Robertson, Zaragoza and Taylor,
"Simple BM25 extension to multiple weighted fields", CIKM 2004)::

    tf    = sum over fields f of  w_f * tf_f / (1 - B_f + B_f * len_f / avglen_f)
    score = idf * tf * (K1 + 1) / (tf + K1)

The inverse document frequency is BM25's ``ln(1 + (N - n + 0.5) / (n + 0.5))``
(N documents, n containing the term; :func:`idf`), which is never negative.
The parameters (``K1``, the per-field ``B``) live in
:mod:`searchengine.ranking`.

Here are the model's parts: the length norms of a segment's documents
(:class:`SegmentNorms`, one byte per document and field read as one
column), document frequencies and the idf, a word's scored postings in a
segment (:func:`term_postings`, kept with the segment's
:class:`~searchengine.engines.whoosh.cache.GenerationCache`), the scores of a
few documents only (:func:`bm25f_scores_at`, for re-ranking) and Whoosh's
own weighting for what Whoosh scores itself (:func:`weighting`). The
postings are read by :mod:`.blocks`; a query tree is scored by
:mod:`.evaluate`.
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_left
from collections.abc import Iterable
from math import log

from searchengine.engines.whoosh import internals
from searchengine.engines.whoosh.blocks import posting_blocks, postings_at, segment_docs
from searchengine.engines.whoosh.cache import generation_cache
from searchengine.ranking import DEFAULT_B, FIELD_B, K1


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
                searcher,
                fieldname,
                text,
                FIELD_B.get(fieldname, DEFAULT_B),
                K1,
                qf=qf,
            )
            scorer.idf = self.idf(searcher, fieldname, text)
            return scorer

    return FieldBM25F(B=DEFAULT_B, K1=K1)


# --- the query word ----------------------------------------------------------------------


def _bm25f_class():
    """Build :class:`BM25FTerm` on first use (keeps Whoosh out of import time)."""
    from whoosh import query as wq
    from whoosh.matching import NullMatcher

    class BM25FTerm(wq.Or):
        """One query term searched in several fields, scored by BM25F.

        The subqueries are ``Term(field, text)`` for each field (so highlighting
        and term listing work as for any ``Or``). Unlike a sum of per-field
        BM25 scores, BM25F first adds the field frequencies, each normalised
        by its field's length (see the module's formula). ``w_f`` is the
        field boost, already part of the indexed frequency; ``B_f`` comes
        from :data:`FIELD_B`, ``K1`` is :data:`K1`; the document frequency for
        the idf is the largest over the fields (a document with the term in
        its title nearly always has it in its abstract).
        """

        JOINT = " | "

        def _matcher(self, subs, searcher, context):
            docs, scores = word_postings(self, searcher, searcher.reader())
            if not docs:
                return NullMatcher()
            factor = word_factor(self, searcher)
            return scored_list(docs, [score * factor for score in scores] if factor != 1 else scores)

    class JoinedTerm(BM25FTerm):
        """A joined word (``neuralnetwork``) searched as an alternative of its
        words: BM25F of the joined term's frequencies, but with the idf of
        the words added up (``parts``: ``Term`` queries per word, one per
        field), so that a rare joined spelling weighs as the words it stands
        for, not more (:func:`joined_scale`)."""

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

    return BM25FTerm, JoinedTerm


_BM25F = None
_JOINED = None
_SCORED_LIST = None


def bm25f_term(terms, boost: float = 1.0):
    """A :class:`BM25FTerm` over ``terms`` (Whoosh ``Term`` queries, one per field)."""
    global _BM25F, _JOINED
    if _BM25F is None:
        _BM25F, _JOINED = _bm25f_class()
    return _BM25F(terms, boost=boost)


def joined_term(terms, parts, boost: float = 1.0):
    """A :class:`JoinedTerm`: the joined word ``terms`` (``Term`` queries, one
    per field) weighing as its words ``parts`` (per word, ``Term`` queries of
    its stem in each field)."""
    global _BM25F, _JOINED
    if _JOINED is None:
        _BM25F, _JOINED = _bm25f_class()
    return _JOINED(terms, boost=boost, parts=parts)


def is_bm25f_term(query) -> bool:
    """Whether ``query`` is a plain :class:`BM25FTerm` (not a :class:`JoinedTerm`)."""
    return _BM25F is not None and type(query) is _BM25F


def is_word(query) -> bool:
    """Whether ``query`` is a :class:`BM25FTerm` or a :class:`JoinedTerm`."""
    kind = type(query)
    return (_BM25F is not None and kind is _BM25F) or (_JOINED is not None and kind is _JOINED)


def word_postings(word, searcher, reader) -> tuple[array, array]:
    """A word's (:func:`is_word`) documents in the segment and their BM25F
    scores before its :func:`word_factor` (:func:`term_postings` of its field terms)."""
    return term_postings(searcher, reader, indexed(searcher, [(sub.fieldname, sub.text) for sub in word.subqueries]))


def word_factor(word, searcher) -> float:
    """What a word's scores are multiplied by: its boost, times its
    :func:`joined_scale` for a :class:`JoinedTerm`."""
    return word.boost * joined_scale(searcher, word) if type(word) is _JOINED else word.boost


def joined_scale(searcher, q) -> float:
    """The idf of a :class:`JoinedTerm`'s words added up, over its own idf."""
    own = indexed(searcher, [(sub.fieldname, sub.text) for sub in q.subqueries])
    if not own:
        return 1.0
    parent = searcher.get_parent()
    total = 0.0
    for word in q.parts:
        keys = indexed(searcher, [(term.fieldname, term.text) for term in word])
        # A word no document has: the idf of a term found once.
        total += idf(searcher, keys) if keys else log(1 + (parent.doc_count_all() - 0.5) / 1.5)
    return total / idf(searcher, own) if total else 1.0


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


# --- length norms ---------------------------------------------------------------------------


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
        """Either ``codes`` (a length byte per document) and ``table`` (the
        norm of each byte), or ``norms`` (every document's norm, listed);
        raises ValueError when neither is given."""
        if norms is None and (codes is None or table is None):
            raise ValueError("SegmentNorms needs the length codes and their table, or the norms")
        # Without norms, both are given (checked above); with norms, they are never read.
        self._codes: bytes = codes if codes is not None else b""
        self._table: list[float] = table if table is not None else []
        self._norms = norms
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

    def array_of(self, docs):
        """The norms of ``docs`` as a numpy array (the same numbers as :meth:`of`)."""
        import numpy as np

        at = np.asarray(docs, dtype=np.int64)
        if self._norms is not None:
            return np.frombuffer(self._norms, dtype=np.float64)[at]
        return np.asarray(self._table, dtype=np.float64)[np.frombuffer(self._codes, dtype=np.uint8)[at]]


# SegmentNorms: the share of a segment's documents asked for after which all
# its norms are listed.
NORMS_MATERIALIZE = 0.25


def length_norms(searcher, reader, fieldname: str) -> SegmentNorms:
    """The :class:`SegmentNorms` of ``fieldname`` in the segment, kept with its reader."""
    norms = generation_cache(reader).norms
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
            norms[fieldname] = SegmentNorms(
                None, None, array("d", (1.0 - b + b * (length(doc, fieldname) or 0) / avg for doc in range(count)))
            )
    return norms[fieldname]


# --- document frequencies and the idf -------------------------------------------------------


def indexed(searcher, terms) -> tuple:
    """The (field, text) pairs of ``terms`` that some document of the index has.

    A word's BM25F postings and idf depend only on these, so ``models``
    (whose author-name form ``models`` no author has) and ``model`` share
    one cache entry.
    """
    frequency = frequencies(searcher)
    return tuple(term for term in terms if frequency(term) > 0)


def frequencies(searcher):
    """``(field, text) -> document frequency`` over the whole index, kept with
    its reader: a word's frequency is asked for its idf, for each field and
    each form of it, in every search that has it (thousands of lookups in a
    pasted question, each a read of the term index)."""
    reader = searcher.get_parent().reader()
    cache = generation_cache(reader).frequencies
    get = cache.get

    def frequency(term: tuple) -> int:
        found = get(term)
        if found is None:
            found = cache[term] = reader.doc_frequency(*term)
        return found

    return frequency


def idf(searcher, terms) -> float:
    """BM25's idf of a term searched in several fields ((field, text) pairs):
    its document frequency is the largest over the fields."""
    df = max(map(frequencies(searcher), terms))
    return log(1 + (searcher.get_parent().doc_count_all() - df + 0.5) / (df + 0.5))


def saturated(idf: float, tf: float) -> float:
    """BM25's score of a (length-normalised) term frequency ``tf``."""
    return idf * tf * (K1 + 1) / (tf + K1)


# --- scored postings ------------------------------------------------------------------------


def term_postings(searcher, reader, key: tuple) -> tuple[array, array]:
    """:func:`_bm25f_postings` of ``key`` ((field, text) pairs), kept on the segment reader."""
    cache = generation_cache(reader).postings
    found = cache.get(key)
    if found is None:
        found = _bm25f_postings(searcher, reader, key)
        cache.put(key, found)
    return found


# A word with at least this many postings in a segment is scored with numpy
# once numpy is imported (a process that has searched before).
NUMPY_POSTINGS = 1000


def _bm25f_postings(searcher, reader, terms) -> tuple[array, array]:
    """Documents of the segment containing any of ``terms`` ((field, text) pairs) and their BM25F scores."""
    from operator import truediv

    fields = []
    for fieldname, text in terms:
        if (fieldname, text) not in reader:
            continue
        ids = array("i")
        weights: list[float] = []
        for block_ids, block_weights in posting_blocks(reader, fieldname, text):
            ids.extend(block_ids)
            weights.extend(block_weights)
        fields.append((length_norms(searcher, reader, fieldname), ids, weights))
    if not fields:
        return array("i"), array("d")
    if "numpy" in sys.modules and sum(len(ids) for _, ids, _ in fields) >= NUMPY_POSTINGS:
        return _bm25f_arrays(searcher, terms, fields, reader.doc_count_all())
    per_field = [(ids.tolist(), list(map(truediv, weights, norms.of(ids)))) for norms, ids, weights in fields]
    per_field.sort(key=lambda found: len(found[0]), reverse=True)
    tfs: Iterable[float]
    docs, tfs = per_field[0]
    if len(per_field) > 1:
        # Field frequencies add up before saturation; the longest list is taken whole.
        combined = dict(zip(docs, tfs))
        get = combined.get
        for more_docs, more in per_field[1:]:
            for doc, tf in zip(more_docs, more):
                combined[doc] = get(doc, 0.0) + tf
        docs = sorted(combined)
        tfs = map(combined.__getitem__, docs)
    scale = idf(searcher, terms) * (K1 + 1)
    # Compact arrays: a cached common term of a large index stays well under a megabyte.
    return array("i", docs), array("d", [scale * tf / (tf + K1) for tf in tfs])


def _bm25f_arrays(searcher, terms, fields, size: int) -> tuple[array, array]:
    """:func:`_bm25f_postings` in numpy, from each field's ``(norms, ids, weights)``
    in a segment of ``size`` documents: the same operations in the same order
    (a field's frequency over its norm; the longest field's, then the others'
    added in order of length; then saturation), so the same numbers."""
    import numpy as np

    per_field = []
    for norms, ids, weights in fields:
        at = np.frombuffer(ids, dtype=np.intc).astype(np.int64) if len(ids) else np.zeros(0, dtype=np.int64)
        per_field.append((at, np.asarray(weights, dtype=np.float64) / norms.array_of(at)))
    per_field.sort(key=lambda found: len(found[0]), reverse=True)
    docs, tfs = per_field[0]
    if len(per_field) > 1:
        present = np.zeros(size, dtype=bool)  # the union, ascending: cheaper than np.unique
        for ids, _ in per_field:
            present[ids] = True
        docs = np.flatnonzero(present)
        combined = np.zeros(len(docs))
        combined[np.searchsorted(docs, per_field[0][0])] = tfs
        for ids, more in per_field[1:]:
            combined[np.searchsorted(docs, ids)] += more  # a field's documents are distinct
        tfs = combined
    scale = idf(searcher, terms) * (K1 + 1)
    found_docs, found_scores = array("i"), array("d")
    found_docs.frombytes(docs.astype(np.intc).tobytes())
    found_scores.frombytes((scale * tfs / (tfs + K1)).tobytes())
    return found_docs, found_scores


def field_term_scores(searcher, reader, fieldname: str, btext: bytes, boost: float) -> dict[int, float]:
    """One field's BM25 scores for a term in the segment, as the searcher's
    :func:`weighting` computes them."""
    if (fieldname, btext) not in reader:
        return {}
    parent = searcher.get_parent()
    n = parent.doc_frequency(fieldname, btext)
    term_idf = log(1 + (parent.doc_count_all() - n + 0.5) / (n + 0.5))
    norms = length_norms(searcher, reader, fieldname)
    scale = term_idf * (K1 + 1) * boost
    return {
        doc: scale * weight / (weight + K1 * norm)
        for ids, weights in posting_blocks(reader, fieldname, btext)
        for doc, weight, norm in zip(ids, weights, norms.of(ids))
    }


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
    keys = indexed(searcher, [(t.fieldname, t.text) for t in terms])
    if not keys:
        return {}
    word_idf = idf(searcher, keys)
    found: dict[int, float] = {}
    for sub, offset, local in segment_docs(searcher, sorted(set(docnums))):
        reader = sub.reader()
        cached = generation_cache(reader).postings.get(keys)
        if cached is not None:  # the word's postings are in memory: look the documents up
            docs, scores = cached
            for doc in local:
                at = bisect_left(docs, doc)
                if at < len(docs) and docs[at] == doc:
                    found[doc + offset] = scores[at] * boost
            continue
        weighted: dict[int, float] = {}
        for fieldname, text in keys:
            norms = length_norms(sub, reader, fieldname)
            for doc, (weight, _) in postings_at(reader, fieldname, text, local).items():
                weighted[doc] = weighted.get(doc, 0.0) + weight / norms[doc]
        for doc, tf in weighted.items():
            found[doc + offset] = saturated(word_idf, tf) * boost
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
        cache = generation_cache(reader).postings
        if "abstract" not in reader.schema:
            continue
        for _, text in reader.most_frequent_terms("abstract", number=WARM_TERMS):
            if time.monotonic() > deadline:
                return read
            if cache.size >= cache.budget * WARM_SHARE:
                break
            stem = text.decode("utf-8") if isinstance(text, bytes) else text
            term_postings(sub, reader, indexed(searcher, [(f, stem) for f in ("title", "abstract", "authors")]))
            read += 1
    return read
