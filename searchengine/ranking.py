"""Ranking settings: the one home of the numbers both engines rank by.

The embedded engine scores with them directly (BM25F,
:mod:`searchengine.engines.whoosh.bm25f`); the OpenSearch engine writes
them into its index mapping (per-field BM25 similarities) and its queries
(:mod:`searchengine.engines.opensearch.mapping`,
:mod:`searchengine.engines.opensearch.querying`). Change a value here and
both engines follow (an OpenSearch index must be rebuilt to take a new
``K1`` or ``FIELD_B``; the embedded engine's :data:`TITLE_BOOST` is applied
at indexing, so its index must be rebuilt too).

BM25F: a query word's frequencies in the fields are length-normalised per
field, weighted (the title counts :data:`TITLE_BOOST` times) and added up
before BM25's saturation, so a word in both title and abstract is not
counted as two words (Robertson, Zaragoza and Taylor, "Simple BM25
extension to multiple weighted fields", CIKM 2004).

The parameters are chosen on principle and checked on test collections
(the documentation's "Evaluation" page): titles are short and of similar
length, so their length says little (``B = 0.3``); abstracts vary and take
the usual ``B = 0.75``; ``K1 = 2.0`` is the top of the customary 1.2 to 2.0
range (1.2, 1.6 and 2.0 were measured; each step up was better on both
collections: abstracts repeat their key terms, and rewarding that pays).
"""

from __future__ import annotations

#: Weight of a title match against an abstract or author match.
TITLE_BOOST = 2.0

#: Per-field length normalisation; fields not listed use :data:`DEFAULT_B`.
DEFAULT_B = 0.75
FIELD_B = {"title": 0.3, "abstract": 0.75, "authors": 0.3}
#: BM25F saturates the combined frequency once, so it has one K1.
K1 = 2.0

# Pseudo-relevance feedback (RM3, searchengine.engines.whoosh.feedback) for queries of at
# least FEEDBACK_MIN_TERMS terms: the FEEDBACK_TERMS most probable terms of
# the relevance model of the FEEDBACK_DOCS best hits re-rank the
# FEEDBACK_DEPTH best; together they weigh FEEDBACK_WEIGHT times the
# query's own terms (1 would be RM3's usual equal weighting: it helped the
# many-answer collections a little more and cost a one-answer test three
# times as much; "Evaluation").
FEEDBACK_MIN_TERMS = 5
FEEDBACK_DOCS = 10
FEEDBACK_TERMS = 20
FEEDBACK_WEIGHT = 0.4
FEEDBACK_DEPTH = 100
# Feedback only re-ranks a question whose first ranking is sure of its best
# hit: the best score at least FEEDBACK_MIN_LEAD times the FEEDBACK_DOCS-th.
# Where the first scores are flat, the feedback documents are as likely off
# the topic as on it, and their words pull the ranking away from the answer
# (selective expansion: Cronen-Townsend, Zhou and Croft, "Predicting query
# performance", SIGIR 2002). Chosen on Cranfield, CISI and the known-item
# test ("Evaluation").
FEEDBACK_MIN_LEAD = 1.5

# A long question's words weigh by how often it uses them: Okapi BM25's
# query term frequency (Robertson et al., "Okapi at TREC-3") with K3 = 8
# (1000, nearly linear, and 8 were measured; "Evaluation").
QUERY_K3 = 8

# Ways of writing the same words (a keyword query's joined alternatives, a
# compound's parts in sequence): a document scores by its best way; the ways
# not typed weigh this much, so the typed spelling wins ties.
ALTERNATIVE_WEIGHT = 0.9

# Proximity: for each pair of neighbouring query words, their occurrences in
# order within PROXIMITY_SLOP positions more than in the query (each counting
# 1 / (1 + extra positions), as Lucene's sloppy phrase frequency) are a
# pseudo-term of the title and abstract, scored by BM25F with the idf of the
# two words added up (the idf Lucene gives a phrase) and weighing
# PROXIMITY_WEIGHT; only the PROXIMITY_DEPTH best hits of the query are
# scored, so the bonus only reorders them (100 ranks the arXiv keyword tests
# as 200 did, reading half the positions). Slop 2 let "sparse attention
# matrix" count for "sparse matrix"; weights 0.5 to 3 were tried on keyword
# queries over arXiv records ("Evaluation"): below 2, papers with both words
# apart in the title still came before abstracts with the words together.
PROXIMITY_FIELDS = ("title", "abstract")
PROXIMITY_SLOP = 0
PROXIMITY_WEIGHT = 2.0
PROXIMITY_DEPTH = 100

# Hybrid mode (searchengine.semantic.fusion): a keyword match's normalised
# BM25F score weighs HYBRID_LEXICAL_WEIGHT and its normalised cosine
# similarity the rest; the HYBRID_NEAREST papers nearest in meaning join a
# query of plain words' keyword matches. The weight is the one, of 0.1 to
# 0.9 in steps of 0.1, whose smallest gain in nDCG@10 over keyword ranking
# across Cranfield, CISI and SciFact's training claims is largest (0.4 and
# 0.6 each lost more on one of them; "Evaluation"). 100 and 1,000 nearest
# papers gave the same nDCG@10 on all three.
HYBRID_LEXICAL_WEIGHT = 0.5
#: Meaning's share of the hybrid ranking by default (``semantic_weight``,
#: :data:`searchengine.parameters.PARAMETERS`): the rest of the keyword side's.
HYBRID_SEMANTIC_WEIGHT = 1.0 - HYBRID_LEXICAL_WEIGHT
HYBRID_NEAREST = 100

# "Similar papers" without vectors: the SIMILAR_TERMS most informative terms
# of the records' titles and abstracts, searched as a weighted OR.
SIMILAR_TERMS = 20
