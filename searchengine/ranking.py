"""Ranking: BM25F with per-field length normalisation and saturation.

Each field a query term matches in contributes a BM25 term score (Robertson
and Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond",
2009), with the field's own ``B`` (how much a long field is penalised) and
``K1`` (how fast repeated occurrences saturate); the title's field boost
(:data:`searchengine.schema.TITLE_BOOST`) multiplies its term frequencies at
indexing time. The inverse document frequency is BM25's
``ln(1 + (N - n + 0.5) / (n + 0.5))`` (N documents, n containing the term),
which is never negative.

The parameters are chosen on principle and checked on two test collections
(see README, "Evaluation"): titles are short and of similar length, so their
length barely says anything (``B = 0.3``); abstracts vary, and the usual
``B = 0.75`` applies; ``K1 = 1.2`` is the customary value.
"""

from __future__ import annotations

from math import log

# Per-field BM25 parameters; fields not listed use DEFAULT_B and DEFAULT_K1.
DEFAULT_B = 0.75
DEFAULT_K1 = 1.2
FIELD_B = {"title": 0.3, "abstract": 0.75, "authors": 0.3}
FIELD_K1 = {"title": 1.2, "abstract": 1.2, "authors": 1.2}


def weighting():
    """The weighting model searches use: a Whoosh ``BM25F`` with the parameters above."""
    from whoosh import scoring

    class FieldBM25F(scoring.BM25F):
        """Whoosh's BM25F with a per-field ``K1`` and BM25's non-negative idf."""

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
                FIELD_B.get(fieldname, DEFAULT_B), FIELD_K1.get(fieldname, DEFAULT_K1), qf=qf,
            )
            scorer.idf = self.idf(searcher, fieldname, text)
            return scorer

    return FieldBM25F(B=DEFAULT_B, K1=DEFAULT_K1)
