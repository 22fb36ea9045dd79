"""BM25F on the cluster: the embedded engine's scores, computed by OpenSearch.

BM25F (:mod:`searchengine.engines.whoosh.bm25f`) adds a word's
length-normalised frequencies over the fields and saturates the sum once::

    tf    = sum over fields f of  w_f * tf_f / (1 - B_f + B_f * len_f / avglen_f)
    score = idf * tf * (K1 + 1) / (tf + K1)

Lucene's similarities score one field at a time, so the work is split:

* each text field's similarity is a ``scripted`` one that gives the
  field's length-normalised frequency, ``boost * tf_f / (1 - B_f + B_f *
  len_f / avglen_f)`` (:func:`similarity_settings`; the query's boost is the
  field weight ``w_f``; the average length is the field's tokens over the
  documents that have it);
* a query word is a ``bool`` of its term in each field (their normalised
  frequencies add up), inside a ``script_score`` that saturates the sum and
  multiplies by the word's idf (:func:`saturated`), given as a parameter.

The idf is BM25's ``ln(1 + (N - n + 0.5) / (n + 0.5))`` with ``n`` the
largest document frequency over the fields, as on the embedded engine; the
document frequencies of a query's terms are counted in one request before
the search (:class:`Statistics`). A phrase's frequency reaches a scripted
similarity once per word of the phrase, so a phrase's boost is divided by
its number of words.
"""

from __future__ import annotations

from collections.abc import Hashable
from math import log

from searchengine.ranking import FIELD_B, K1

# Saturation of the summed normalised frequencies, times the idf.
_SATURATE = f"params.idf * _score * {K1 + 1!r} / (_score + {K1!r})"


#: A boost at or above this asks a field's similarity for the whole per-field
#: BM25 score of each term (its own idf, saturated), weighing the boost less
#: this: a prefix's terms, each scored as on the embedded engine.
WHOLE_SCORE = 1000.0


def similarity_settings() -> dict:
    """``index.similarity``: one scripted similarity per text field (``se_title``,
    ``se_abstract``, ``se_authors``). In the title and abstract it gives a
    term's frequency times the query's boost, which :func:`normalised`
    divides by the document's length norm; in the author names (which keep no
    length of their own) the length-normalised frequency itself, by Lucene's
    length. With a boost of :data:`WHOLE_SCORE` or more each term's whole
    BM25 score, normalised by Lucene's length (a prefix's terms)."""
    settings = {}
    for name, b in FIELD_B.items():
        average = "Math.max(field.sumTotalTermFreq / Math.max(1.0, (double) field.docCount), 1.0)"
        norm = f"({1 - b!r} + {b!r} * doc.length / {average})"
        plain = "query.boost * doc.freq" if name in _OWN_LENGTHS else f"query.boost * doc.freq / {norm}"
        source = (
            f"if (query.boost < {WHOLE_SCORE!r}) {{ return {plain}; }} "
            f"double tf = (query.boost - {WHOLE_SCORE!r}) * doc.freq / {norm}; "
            f"double n = term.docFreq; "
            f"double idf = Math.log(1 + (field.docCount - n + 0.5) / (n + 0.5)); "
            f"return idf * tf * {K1 + 1!r} / (tf + {K1!r});"
        )
        # Every term counts in a field's length, those sharing a position too
        # (a compound's joined form and its parts), as in the embedded engine.
        settings[f"se_{name}"] = {"type": "scripted", "discount_overlaps": False, "script": {"source": source}}
    return settings


# Fields whose documents keep their length (terms.LENGTH): normalised by normalised().
_OWN_LENGTHS = ("title", "abstract")


def normalised(query: dict, field: str, average: float) -> dict:
    """``query`` (in the title or abstract) scoring its frequency divided by
    the document's BM25F length norm ``1 - B + B * length / average``, the
    length as the embedded engine keeps it (the ``<field>_length`` doc
    value; 0 for a paper without that field)."""
    b = FIELD_B[field]
    source = (
        f"double length = doc['{field}_length'].size() == 0 ? 0 : doc['{field}_length'].value; "
        f"return _score / ({1 - b!r} + {b!r} * length / params.average);"
    )
    return {"script_score": {"query": query, "script": {"source": source, "params": {"average": max(average, 1.0)}}}}


def idf(frequency: int, total: int) -> float:
    """BM25's idf of a term in ``frequency`` of ``total`` documents (never negative)."""
    return log(1 + (total - frequency + 0.5) / (frequency + 0.5))


def saturated(clauses: list[dict], weight: float) -> dict:
    """The clauses' normalised frequencies added up and saturated, times
    ``weight`` (a word's idf, or a weighted sum of idfs): one BM25F term."""
    query = clauses[0] if len(clauses) == 1 else {"bool": {"should": clauses}}
    return {"script_score": {"query": query, "script": {"source": _SATURATE, "params": {"idf": weight}}}}


#: Counts kept per generation of an index (then they start over).
KEPT_COUNTS = 200_000


class IndexStatistics:
    """What the searches of one process know of one generation of an index:
    its documents (``total``), the documents each counted query matches
    (``frequencies``: a term in a field, a word in the author names or as
    written, a filter), the text fields' average lengths (``averages``) and
    the fuzzy words' expansions (``expansions``).

    ``generation`` names the generation: the physical indexes behind the
    alias, their documents and the sum of their documents' sequence numbers
    (every write changes it), as :meth:`.searcher.OpenSearchSearcher.probe`
    reads them with each count; when it changes, what was known is dropped.
    """

    def __init__(self) -> None:
        self.generation: tuple | None = None
        self.total = 0
        self.frequencies: dict = {}
        self.averages: dict[str, float] = {}
        self.expansions: dict = {}

    def renew(self, generation: tuple) -> None:
        """Start over for ``generation`` unless it is the one known (or too much is kept)."""
        if generation != self.generation or len(self.frequencies) + len(self.expansions) > KEPT_COUNTS:
            self.generation = generation
            self.frequencies, self.averages, self.expansions = {}, {}, {}


_KNOWN: dict[str, IndexStatistics] = {}


def index_statistics(place: str) -> IndexStatistics:
    """The :class:`IndexStatistics` of the index at ``place`` (its location
    without credentials) in this process, shared by its searches and threads."""
    return _KNOWN.setdefault(place, IndexStatistics())


class Statistics:
    """Document frequencies of a query's terms, for the idf of each word.

    ``frequencies`` maps a key (``(field, term)``, or any hashable naming a
    query) to the documents it matches; a key not yet known counts 0 and is
    recorded in :attr:`missing` with the query that counts it, so the
    searcher can count them all in one request and translate again. With
    ``known`` (an :class:`IndexStatistics`) its frequencies, averages and
    total are those of the index's generation, shared by every search.
    """

    def __init__(
        self,
        total: int = 0,
        frequencies: dict | None = None,
        expansions: dict | None = None,
        known: IndexStatistics | None = None,
    ) -> None:
        self.total = known.total if known is not None else total
        self.frequencies = known.frequencies if known is not None else dict(frequencies or {})
        #: Fuzzy words' expansions (see :func:`.querying.fuzzy_expansion`).
        self.expansions = expansions or {}
        #: A long question's repeated words' weights (see :func:`.querying.repeated_weights`).
        self.weights: dict = {}
        #: The average length of each text field (its terms over every document).
        self.averages: dict[str, float] = known.averages if known is not None else {}
        #: The terms of each prefix in a title or abstract: ``{(field, prefix): [term]}``.
        self.prefixes: dict = {}
        #: The ids of the best hits of a proximity query's child, which alone get its
        #: bonus (``None``: not known, every hit gets it; the count needs no more).
        self.best: list[str] | None = None
        #: Whether an OR is the query's own (a word's fields then score apart, as
        #: Whoosh's normalize() merges them); the OR fallback of relaxing is not.
        self.typed_or = True
        self.missing: dict = {}

    def frequency(self, key: Hashable, query: dict) -> int:
        """Documents matching ``query`` (0 and recorded as missing when not yet counted)."""
        if key in self.frequencies:
            return self.frequencies[key]
        self.missing[key] = query
        return 0

    def average(self, field: str) -> float:
        """The average length of ``field`` (recorded as missing when not yet known)."""
        if field not in self.averages:
            self.missing[("average", field)] = None
        return self.averages.get(field, 1.0)

    def idf(self, *counted: tuple) -> float:
        """The idf of the largest of the frequencies of ``counted`` (``(key, query)`` pairs)."""
        largest = max((self.frequency(key, query) for key, query in counted), default=0)
        return idf(max(1, largest), max(self.total, 1))


def key_terms(counts: dict[str, float], occurrences: dict[str, int], documents: int, number: int):
    """The ``number`` most informative terms of a text, as the embedded engine
    chooses them for similar papers (Whoosh's ``classify.Expander`` with its
    Bo1 model, normalised): ``counts`` are the text's terms and their
    occurrences, ``occurrences`` each term's occurrences in every abstract
    (terms no abstract holds are never chosen), ``documents`` the index's.
    ``[(term, weight)]``, the heaviest first (ties by term)."""
    scored = []
    maxweight = 0.0
    for term, weight in counts.items():
        held = occurrences.get(term)
        if not held:
            continue
        f = held / documents
        score = weight * log((1.0 + f) / f, 2) + log(1.0 + f, 2)
        maxweight = max(maxweight, score)
        scored.append((score, term))
    if not scored:
        return []
    f = maxweight / documents
    norm = (maxweight * log((1.0 + f) / f) + log(1.0 + f)) / log(2.0) if maxweight else maxweight
    ranked = sorted(((score / norm, term) for score, term in scored), key=lambda item: (-item[0], item[1]))
    return [(term, weight) for weight, term in ranked[:number]]
