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
"""

from __future__ import annotations

from math import log

# Per-field length normalisation; fields not listed use DEFAULT_B.
DEFAULT_B = 0.75
FIELD_B = {"title": 0.3, "abstract": 0.75, "authors": 0.3}
# BM25F saturates the combined frequency once, so it has one K1.
K1 = 2.0


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
    from whoosh.matching import ListMatcher, NullMatcher

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
            parent = searcher.get_parent()
            reader = searcher.reader()
            total = parent.doc_count_all()
            df = 0
            weighted: dict[int, float] = {}
            for sub in subs:
                fieldname, text = sub.fieldname, sub.text
                if (fieldname, text) not in reader:
                    continue
                df = max(df, parent.doc_frequency(fieldname, text))
                b = FIELD_B.get(fieldname, DEFAULT_B)
                avg = parent.avg_field_length(fieldname) or 1.0
                length = reader.doc_field_length
                postings = reader.postings(fieldname, text)
                for doc, weight in postings.items_as("weight"):
                    norm = 1.0 - b + b * length(doc, fieldname, 1) / avg
                    weighted[doc] = weighted.get(doc, 0.0) + weight / norm
            if not weighted:
                return NullMatcher()
            k1 = K1
            idf = log(1 + (total - df + 0.5) / (df + 0.5)) * self.boost
            docs = sorted(weighted)
            return ListMatcher(docs, weights=[idf * weighted[d] * (k1 + 1) / (weighted[d] + k1) for d in docs])

    return BM25FTerm


_BM25F = None


def bm25f_term(terms, boost: float = 1.0):
    """A :class:`BM25FTerm` over ``terms`` (Whoosh ``Term`` queries, one per field)."""
    global _BM25F
    if _BM25F is None:
        _BM25F = _bm25f_class()
    return _BM25F(terms, boost=boost)
