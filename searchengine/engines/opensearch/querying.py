"""Query tree → OpenSearch Query DSL.

:func:`to_dsl` translates the engine-free tree of
:mod:`searchengine.querylang.tree` the way the embedded engine's
:func:`searchengine.engines.whoosh.querying.to_whoosh` does, with the
cluster's own queries:

* ``Word`` → the word in title (boost 2), abstract and author names at once,
  ``multi_match`` of type ``cross_fields`` (term statistics blended across
  the fields: OpenSearch's closest to BM25F); a compound → ``dis_max`` of
  its joined form and its parts in sequence; ``Joined`` → the joined word
  the same way; ``FieldWord`` → a ``match`` in that field (``id``: a term);
* ``Phrase`` → ``match_phrase`` with the phrase analyzer (no joined words),
  in one field or any default field;
* ``Prefix`` → ``prefix`` over the indexed terms, rewritten to the
  :data:`MAX_EXPANSIONS` most frequent (``top_terms_64``), as the embedded
  engine caps prefixes;
* ``Fuzzy`` → ``match`` with ``fuzziness`` (each analysed term within that
  many edits, a swap of neighbours counting one, no shared prefix needed)
  and ``max_expansions`` :data:`MAX_EXPANSIONS`, in one field or any
  default field (the title weighted as in ``Word``);
* ``And``/``Or``/``Not``/``MinMatch``/``AndNot``/``AndMaybe``/``Require`` →
  ``bool`` with ``must``/``should`` (``minimum_should_match``)/``must_not``/
  ``filter``;
* ``Alternatives`` → ``dis_max`` (a hit scores by its best way of writing
  the words), the ways after the first (as typed) weighing
  :data:`~searchengine.ranking.ALTERNATIVE_WEIGHT`;
* ``Proximity`` → the query as ``must``, and for each pair of neighbouring
  words a ``match_phrase`` with slop :data:`~searchengine.ranking.PROXIMITY_SLOP` in the title
  (weight ``TITLE_BOOST * PROXIMITY_WEIGHT``) and the abstract
  (``PROXIMITY_WEIGHT``) as ``should``: the embedded engine's proximity
  bonus, with Lucene's phrase scoring (the sloppy phrase frequency under
  BM25, the words' idf added up);
* the filters (:class:`searchengine.filters.Filters`) → ``filter`` clauses on
  the ``year``, ``author_keys`` and ``category_keys`` fields, which hold the
  same keys as the embedded index.
"""

from __future__ import annotations

from itertools import pairwise

from searchengine.dates import intersection
from searchengine.filters import PRIMARY_MARK, Filters
from searchengine.querylang import tree as t
from searchengine.querylang.text import compound_parts, text_tokens
from searchengine.ranking import ALTERNATIVE_WEIGHT, PROXIMITY_SLOP, PROXIMITY_WEIGHT, TITLE_BOOST

#: A prefix or fuzzy word matches at most this many index terms, as in the embedded engine.
MAX_EXPANSIONS = t.MAX_EXPANSIONS
#: The fields an unfielded word is searched in, with their weights.
DEFAULT_FIELDS = (f"title^{TITLE_BOOST:g}", "abstract", "authors")
_TEXT_FIELDS = {"title", "abstract", "authors"}


def to_dsl(node: t.Node | None) -> dict | None:
    """The Query DSL for ``node``; ``None`` for no tree (every document)."""
    if node is None:
        return None
    if isinstance(node, t.Word):
        return _word(node.text)
    if isinstance(node, t.Joined):
        return _words(node.text)
    if isinstance(node, t.FieldWord):
        return _field_word(node.field, node.text)
    if isinstance(node, t.Phrase):
        if node.field is not None:
            return _phrase(node.field, node.text)
        return _any([_phrase(name, node.text) for name in ("title", "abstract", "authors")])
    if isinstance(node, t.Prefix):
        fields = [node.field] if node.field is not None else ["title", "abstract", "authors"]
        return _any([{"prefix": {name: {"value": node.text.lower(), "rewrite": f"top_terms_{MAX_EXPANSIONS}",
                                        "case_insensitive": True}}} for name in fields])
    if isinstance(node, t.Fuzzy):
        fields = [node.field] if node.field is not None else ["title", "abstract", "authors"]
        return _any([_fuzzy(name, node.text, node.distance) for name in fields])
    if isinstance(node, t.And):
        must = [to_dsl(child) for child in node.children if not isinstance(child, t.Not)]
        must_not = [to_dsl(child.child) for child in node.children if isinstance(child, t.Not)]
        return _bool(must=must, must_not=must_not)
    if isinstance(node, t.Or):
        return _any([to_dsl(child) for child in node.children])
    if isinstance(node, t.Alternatives):
        ways = [to_dsl(child) for child in node.children]
        if len(ways) == 1:
            return ways[0]
        return {"dis_max": {"queries": [ways[0], *({"bool": {"must": [way], "boost": ALTERNATIVE_WEIGHT}}
                                                   for way in ways[1:])]}}
    if isinstance(node, t.Proximity):
        together = [{"match_phrase": {field: {"query": text, "analyzer": "se_text_phrase", "slop": PROXIMITY_SLOP,
                                              "boost": PROXIMITY_WEIGHT * (TITLE_BOOST if field == "title" else 1)}}}
                    for text in _neighbours(node.words) for field in ("title", "abstract")]
        return _bool(must=[to_dsl(node.child)], should=together) if together else to_dsl(node.child)
    if isinstance(node, t.MinMatch):
        return _bool(should=[to_dsl(child) for child in node.children], minimum=node.minimum)
    if isinstance(node, t.Not):
        return _bool(must_not=[to_dsl(node.child)])
    if isinstance(node, t.AndNot):
        return _bool(must=[to_dsl(node.a)], must_not=[to_dsl(node.b)])
    if isinstance(node, t.AndMaybe):
        return _bool(must=[to_dsl(node.a)], should=[to_dsl(node.b)], minimum=0)
    if isinstance(node, t.Require):
        return _bool(must=[to_dsl(node.a)], filter=[to_dsl(node.b)])
    raise TypeError(f"not a query tree node: {node!r}")


def highlight_dsl(node: t.Node | None) -> dict | None:
    """The query whose words the highlighter marks: each positive leaf as plain
    per-field queries (the highlighter cannot read the blended terms of
    ``cross_fields``); excluded words are never marked."""
    leaves = []

    def walk(item) -> None:
        if isinstance(item, t.Not):
            return
        if isinstance(item, t.AndNot):
            walk(item.a)
            return
        if isinstance(item, (t.Word, t.Joined)):
            leaves.append({"multi_match": {"query": item.text, "fields": ["title", "abstract", "authors"],
                                           "type": "most_fields"}})
            return
        if isinstance(item, (t.FieldWord, t.Phrase, t.Prefix, t.Fuzzy)):
            leaves.append(to_dsl(item))
            return
        for child in t.children(item):
            walk(child)

    walk(node)
    return _any(leaves) if leaves else None


def filter_clauses(filters: Filters) -> list[dict]:
    """The ``filter`` clauses of ``filters``: values of one filter OR, filters AND
    (date ranges AND each other)."""
    clauses = []
    if filters.years:
        ranges = []
        for year in filters.years:
            bounds = {}
            if year.low is not None:
                bounds["gte"] = year.low
            if year.high is not None:
                bounds["lte"] = year.high
            ranges.append({"range": {"year": bounds}} if bounds else {"exists": {"field": "year"}})
        clauses.append(_any(ranges))
    if filters.dates:  # date ranges AND: one range of the days they all allow
        low, high = intersection(filters.dates)
        bounds = {"format": "strict_date"}
        if low is not None:
            bounds["gte"] = low.isoformat()
        if high is not None:
            bounds["lte"] = high.isoformat()
        clauses.append({"range": {"submitted": bounds}} if len(bounds) > 1 else {"exists": {"field": "submitted"}})
    if filters.authors:
        clauses.append({"terms": {"author_keys": [k for f in filters.authors for k in f.keys]}})
    if filters.categories:
        mark = PRIMARY_MARK if filters.primary_only else ""
        clauses.append({"terms": {"category_keys": [mark + f.key for f in filters.categories]}})
    return clauses


def _neighbours(words: tuple[str, ...]) -> list[str]:
    """Each pair of neighbouring words that are not stop words, with the stop
    words between them (``graph of neural networks`` → ``graph of neural``,
    ``neural networks``)."""
    kept = [i for i, word in enumerate(words) if text_tokens(word)]
    return [" ".join(words[i:j + 1]) for i, j in pairwise(kept)]


def _word(text: str) -> dict:
    """One word; a compound (``k-means``, ``FlashAttention``) as its joined
    form, or else (weighing :data:`~searchengine.ranking.ALTERNATIVE_WEIGHT`) its parts standing in
    sequence in the title or the abstract, scored as the words.

    The joined form weighs as many times its own score as the compound has
    parts: the embedded engine gives it the idf of the parts added up, which
    the Query DSL cannot express; a joined term is about as rare as each
    part standing in sequence, so this is close."""
    parts = compound_parts(text)
    if len(parts) < 2:
        return _words(text)
    spaced = " ".join(parts)
    in_sequence = _any([{"match_phrase": {field: {"query": spaced, "analyzer": "se_text_phrase"}}}
                        for field in ("title", "abstract")])
    return {"dis_max": {"queries": [
        {"bool": {"must": [_words("".join(parts).lower())], "boost": float(len(parts))}},
        {"bool": {"must": [_words(spaced)], "filter": [in_sequence], "boost": ALTERNATIVE_WEIGHT}},
    ]}}


def _words(text: str) -> dict:
    return {"multi_match": {"query": text, "fields": list(DEFAULT_FIELDS), "type": "cross_fields",
                            "operator": "and"}}


def _field_word(field: str, text: str) -> dict:
    if field in _TEXT_FIELDS:
        return {"match": {field: {"query": text, "operator": "and"}}}
    if field == "year":
        return {"term": {"year": text}} if text.isdigit() else {"match_none": {}}
    if field == "doi":  # held lower-cased: DOIs are case-insensitive
        return {"term": {"doi_keys": text.lower()}}
    return {"term": {field: text}}


def _fuzzy(field: str, text: str, distance: int) -> dict:
    query = {"query": text, "operator": "and", "fuzziness": distance, "prefix_length": 0,
             "max_expansions": MAX_EXPANSIONS, "fuzzy_transpositions": True}
    if field == "title":
        query["boost"] = TITLE_BOOST
    return {"match": {field: query}}


def _phrase(field: str, text: str) -> dict:
    if field not in _TEXT_FIELDS:
        return _field_word(field, text)
    analyzer = "se_text_phrase" if field != "authors" else "se_name"
    return {"match_phrase": {field: {"query": text, "analyzer": analyzer}}}


def _any(queries: list[dict | None]) -> dict:
    present = [q for q in queries if q is not None]
    if len(present) == 1:
        return present[0]
    return _bool(should=present, minimum=1)


def _bool(*, must=(), should=(), must_not=(), filter=(), minimum: int | None = None) -> dict:
    body: dict = {}
    for name, clauses in (("must", must), ("should", should), ("must_not", must_not), ("filter", filter)):
        present = [q for q in clauses if q is not None]
        if present:
            body[name] = present
    if minimum is not None and "should" in body:
        body["minimum_should_match"] = minimum
    return {"bool": body}
