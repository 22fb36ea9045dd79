"""Query tree → OpenSearch Query DSL.

:func:`to_dsl` translates the engine-free tree of
:mod:`searchengine.querylang.tree` the way the embedded engine's
:func:`searchengine.engines.whoosh.querying.to_whoosh` does. Titles and
abstracts are searched by the product's own terms (:mod:`.terms`): each word
is analysed here, as the embedded engine analyses it, and the cluster is asked
for exactly those terms in ``title_terms`` and ``abstract_terms``:

* ``Word`` → its term in title (weight 2) and abstract and the word in the
  author names, one BM25F term (:func:`.scoring.saturated`); a compound →
  ``dis_max`` of its joined term (with its parts' idf added up) and its
  parts in sequence; ``Joined`` → the joined term the same way;
  ``FieldWord`` → the same in that field (``id``: a term);
* ``Phrase`` → its stems' BM25 scores in the field, for the papers where
  the stems stand in sequence in ``title_terms`` / ``abstract_terms`` (stop
  words' gaps allowed) and the words as written together in
  ``title_words`` / ``abstract_words`` (the embedded engine checks the words
  as written too), in one field or any default field;
* ``Prefix`` → ``prefix`` over the indexed terms, rewritten to 64 of them
  (``top_terms_64``), as the embedded engine caps prefixes;
* ``Fuzzy`` → the terms the embedded engine would choose, each with its
  blended weight: in a title or abstract by the word's stem and its words
  as written (:func:`.expansion.fuzzy_expansion`), in author names by each name term
  (:func:`.expansion.name_fuzzy_expansion`); a word that may not be fuzzy
  (:func:`~searchengine.querylang.text.may_be_fuzzy`) as typed;
* ``And``/``Or``/``Not``/``MinMatch``/``AndNot``/``AndMaybe``/``Require`` →
  ``bool`` with ``must``/``should`` (``minimum_should_match``)/``must_not``/
  ``filter``;
* ``Alternatives`` → ``dis_max`` (a hit scores by its best way of writing
  the words), the ways after the first (as typed) weighing
  :data:`~searchengine.ranking.ALTERNATIVE_WEIGHT`;
* ``Proximity`` → the query as ``must``, and for each pair of neighbouring
  terms a BM25F pseudo-term as ``should``: the pair's ``match_phrase`` (slop
  :data:`~searchengine.ranking.PROXIMITY_SLOP`) in title and abstract, with
  the two words' idf added up, weighing
  :data:`~searchengine.ranking.PROXIMITY_WEIGHT`, as the embedded bonus,
  which only the query's :data:`~searchengine.ranking.PROXIMITY_DEPTH` best
  hits get (``Statistics.best``: their ids, found first);
* the filters (:class:`searchengine.filters.Filters`) → ``filter`` clauses on
  the ``year``, ``author_keys`` and ``category_keys`` fields, which hold the
  same keys as the embedded index.

Scores are the embedded engine's BM25F (:mod:`.scoring`): :func:`to_dsl`
takes the document frequencies of the query's terms and the fuzzy words'
expansions (:func:`fuzzy_words`) in a :class:`~.scoring.Statistics`.
:func:`marked_terms` gives the terms a query looks for, by field, which
snippets mark.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from searchengine.dates import intersection
from searchengine.engines.opensearch.mapping import facet_fields
from searchengine.engines.opensearch.scoring import WHOLE_SCORE, Statistics, normalised, saturated
from searchengine.engines.opensearch.terms import (
    NO_TERM,
    SAME_POSITION,
    TERMS,
    TEXT_FIELDS,
    WORDS,
    name_terms,
    name_text,
    phrase_words,
    query_tokens,
)
from searchengine.facets import FACETS
from searchengine.filters import PRIMARY_MARK, AuthorFilter, Filters
from searchengine.querylang import tree as t
from searchengine.querylang.text import fuzzy_edits, may_be_fuzzy
from searchengine.ranking import ALTERNATIVE_WEIGHT, PROXIMITY_SLOP, PROXIMITY_WEIGHT, TITLE_BOOST

#: A prefix or fuzzy word matches at most this many index terms, as in the embedded engine.
MAX_EXPANSIONS = t.MAX_EXPANSIONS
#: A compound of more parts than this is searched as its joined form only (as embedded).
MAX_COMPOUND_PARTS = 6
_TERM_FIELDS = {"title": f"title{TERMS}^{TITLE_BOOST:g}", "abstract": f"abstract{TERMS}"}
_ANALYZED = "se_terms"


def to_dsl(node: t.Node | None, stats: Statistics | None = None) -> dict | None:
    """The Query DSL for ``node``; ``None`` for no tree (every document) or a
    leaf that asks for no term (a phrase of stop words).

    ``stats`` (:class:`.scoring.Statistics`) gives the document frequencies
    of the query's terms, for each word's idf, and the fuzzy words'
    expansions; the frequencies it lacks are recorded in it as missing (the
    searcher counts them and translates again). Without it the query
    matches the same documents, with scores of no use.
    """
    stats = stats if stats is not None else Statistics()
    if node is None:
        return None
    if isinstance(node, t.Word):
        return _word(node.text, stats)
    if isinstance(node, t.Joined):
        return _joined(node.words, stats)
    if isinstance(node, t.FieldWord):
        return field_word(node.field, node.text, stats)
    if isinstance(node, t.Phrase):
        if node.field is not None:
            return _phrase(node.field, node.text, stats)
        return _any([_phrase(name, node.text, stats) for name in t.DEFAULT_FIELDS])
    if isinstance(node, t.Prefix):
        fields = [node.field] if node.field is not None else list(t.DEFAULT_FIELDS)
        return _any([_prefix(name, node.text, stats) for name in fields])
    if isinstance(node, t.Fuzzy):
        fields = [node.field] if node.field is not None else list(t.DEFAULT_FIELDS)
        return _any([_fuzzy(name, node.text, node.distance, stats) for name in fields])
    if isinstance(node, t.And):
        return _bool(must=[q for _, q in _distinct([(child, to_dsl(child, stats)) for child in node.children])])
    if isinstance(node, t.Or):
        # Whoosh's normalize() merges a word's BM25F term into an enclosing OR:
        # there each field's term scores on its own.
        ways = [
            (child, _per_field(child, stats) if isinstance(child, t.Word) and stats.typed_or else None)
            for child in node.children
        ]
        return _any([q for _, q in _distinct([(child, way or to_dsl(child, stats)) for child, way in ways])])
    if isinstance(node, t.Alternatives):
        choices = [way for way in (to_dsl(child, stats) for child in node.children) if way is not None]
        if len(choices) <= 1:
            return choices[0] if choices else None
        return {
            "dis_max": {
                "queries": [
                    choices[0],
                    *({"bool": {"must": [way], "boost": ALTERNATIVE_WEIGHT}} for way in choices[1:]),
                ]
            }
        }
    if isinstance(node, t.Proximity):
        child = to_dsl(node.child, stats)
        together = [_together(pair, stats) for pair in _pairs(node.words)]
        if not together or child is None:
            return child
        if stats.best is not None:  # the bonus for the child's best hits only, as on the embedded engine
            near = {"bool": {"filter": [{"ids": {"values": list(stats.best)}}], "should": together}}
            return _bool(must=[child], should=[near])
        return _bool(must=[child], should=together)
    if isinstance(node, t.MinMatch):
        kept = _distinct([(child, to_dsl(child, stats)) for child in node.children])
        return _bool(should=[_weighed(query, stats.weights.get(child)) for child, query in kept], minimum=node.minimum)
    if isinstance(node, t.Not):
        # A paper without the excluded words scores 1 for it, as Whoosh scores a Not.
        child = to_dsl(node.child, stats)
        return {"constant_score": {"filter": _bool(must_not=[child]), "boost": 1.0}} if child is not None else None
    if isinstance(node, (t.AndNot, t.AndMaybe, t.Require)):
        a, b = to_dsl(node.a, stats), to_dsl(node.b, stats)
        if a is None or b is None:
            return b if a is None else a
        if isinstance(node, t.AndNot):
            return _bool(must=[a], must_not=[b])
        if isinstance(node, t.AndMaybe):
            return _bool(must=[a], should=[b], minimum=0)
        return _bool(must=[a], filter=[b])
    raise TypeError(f"not a query tree node: {node!r}")


def base_query(tree: t.Node | None, stats: Statistics) -> dict | None:
    """The query of a :class:`~searchengine.querylang.tree.Proximity` tree
    without its bonus (its child), whose best hits get the bonus
    (:data:`~searchengine.ranking.PROXIMITY_DEPTH` of them, as on the
    embedded engine); ``None`` for a tree of another kind."""
    return to_dsl(tree.child, stats) if isinstance(tree, t.Proximity) else None


def repeated_weights(tree: t.Node | None, words: list[str]) -> dict:
    """A long question's words weighed by how often the question uses them,
    as on the embedded engine (:func:`searchengine.engines.whoosh.querying.weigh_repeated`):
    Okapi BM25's query term frequency ``(K3 + 1) * qtf / (K3 + qtf)``
    (:data:`~searchengine.ranking.QUERY_K3`), ``qtf`` counting the ``words``
    (as typed) that analyze to the word's term, shared by the words with that
    term. ``{word node: weight}`` for the words of the question (a
    ``MinMatch``) used more than once; ``{}`` for other queries."""
    from collections import Counter

    from searchengine.ranking import QUERY_K3

    target = tree.child if isinstance(tree, t.Proximity) else tree
    if not QUERY_K3 or not isinstance(target, t.MinMatch):
        return {}
    counts = Counter(term for word in words for term, _, _ in query_tokens(word, "phrase"))
    if not counts or max(counts.values()) == 1:
        return {}

    def term_of(node) -> str | None:
        if not isinstance(node, t.Word):
            return None
        tokens = query_tokens(node.text)
        return tokens[0][0] if len(tokens) == 1 and not tokens[0][2] else None

    # Children that ask for the same term in every field are one (the
    # translation keeps one of them); forms of a term that differ in the
    # author names only (documents, document) share its weight.
    distinct = {
        (term_of(child), name_text(child.text) if isinstance(child, t.Word) else child) for child in target.children
    }
    forms = Counter(term for term, _ in distinct)
    weights = {}
    for child in target.children:
        term = term_of(child)
        qtf = 1 if term is None else counts.get(term, 1)
        if qtf > 1:
            weights[child] = (QUERY_K3 + 1) * qtf / (QUERY_K3 + qtf) / forms[term_of(child)]
    return weights


def _distinct(translated: list[tuple]) -> list[tuple]:
    """``(node, query)`` pairs without the ``None`` queries and without the
    repeats of an equal query (the first kept), as Whoosh's ``normalize()``
    drops repeated subqueries on the embedded engine."""
    import json

    seen, kept = set(), []
    for node, query in translated:
        if query is None:
            continue
        key = json.dumps(query, sort_keys=True)
        if key not in seen:
            seen.add(key)
            kept.append((node, query))
    return kept


def _weighed(query: dict | None, weight: float | None) -> dict | None:
    return query if query is None or weight is None else {"bool": {"must": [query], "boost": weight}}


def split_joined(tree: t.Node | None, frequencies, named=None) -> t.Node | None:
    """``tree`` with each word that is two indexed words written together
    (``flashattention``) searched as a compound of them (``flash-attention``:
    the joined word, or the two in sequence), as the embedded engine splits
    it (:func:`searchengine.analysis.splitting.best_split`, by the abstracts'
    document frequencies). A long question (a ``MinMatch``) is left alone.

    ``frequencies(terms)`` gives ``{term: abstracts holding it}`` for a list
    of analysed terms (one request for every word of the query);
    ``named(word)``, when given, whether an author's name holds the word as
    typed: such a word (a surname: ``Vedaldi``) is never split.
    """
    from searchengine.analysis.splitting import best_split, may_split, split_candidates
    from searchengine.engines.opensearch.terms import stem

    if tree is None or isinstance(tree.child if isinstance(tree, t.Proximity) else tree, t.MinMatch):
        return tree
    words = {}
    for leaf in t.leaves(tree):
        if isinstance(leaf, t.Word):
            tokens = query_tokens(leaf.text)
            if len(tokens) == 1 and not tokens[0][2] and may_split(tokens[0][0]):
                words[leaf.text] = tokens[0][0]
    if named is not None:
        words = {text: term for text, term in words.items() if not named(text)}
    if not words:
        return tree
    known = frequencies(sorted({c for term in words.values() for c in split_candidates(term, stem)}))
    splits = {}
    for text, term in words.items():
        best = best_split(term, lambda found: known.get(found, 0), stem)
        if best is not None:
            splits[text] = "-".join(best)
    if not splits:
        return tree
    return t.map_leaves(
        tree, lambda leaf: t.Word(splits[leaf.text]) if isinstance(leaf, t.Word) and leaf.text in splits else leaf
    )


def frequencies_body(terms: list[str], field: str = "abstract" + TERMS) -> dict:
    """The search body counting the papers whose ``field`` holds each analysed
    term (a ``filters`` aggregation): the abstracts by default."""
    return {
        "size": 0,
        "track_total_hits": False,
        "aggs": {
            "terms": {
                "filters": {"filters": {str(number): {"term": {field: term}} for number, term in enumerate(terms)}}
            }
        },
    }


def marked_terms(query: dict | None) -> dict[str, frozenset[str] | tuple]:
    """The terms ``query`` (a Query DSL made by :func:`to_dsl`) asks for in
    the title and the abstract, which snippets mark: ``{"title": terms,
    "abstract": terms, "prefixes": (field, prefix) pairs}``. Excluded words are
    never marked; a phrase marks its words' terms."""
    found: dict[str, set[str]] = {name: set() for name in TEXT_FIELDS}
    prefixes: set[tuple[str, str]] = set()

    def walk(item) -> None:
        if isinstance(item, list):
            for child in item:
                walk(child)
            return
        if not isinstance(item, dict):
            return
        for key, value in item.items():
            if key == "must_not":
                continue
            if key in ("match", "match_phrase", "term", "terms", "prefix", "fuzzy") and isinstance(value, dict):
                for fieldname, spec in value.items():
                    texts = (
                        spec
                        if isinstance(spec, list)
                        else [spec.get("query", spec.get("value")) if isinstance(spec, dict) else spec]
                    )
                    for text in texts:
                        _mark(key, fieldname, str(text), found, prefixes)
            elif key == "multi_match":
                for fieldname in value["fields"]:
                    _mark("match", fieldname.split("^")[0], value["query"], found, prefixes)
            else:
                walk(value)

    walk(query)
    return {**{name: frozenset(terms) for name, terms in found.items()}, "prefixes": tuple(sorted(prefixes))}


def _mark(kind: str, fieldname: str, text: str, found: dict, prefixes: set) -> None:
    for name in TEXT_FIELDS:
        if fieldname == name + TERMS:
            if kind == "prefix":
                prefixes.add((name, text))
            else:
                found[name].update(term for term in text.replace(SAME_POSITION, " ").split() if term != NO_TERM)
        elif fieldname == name + WORDS and kind != "fuzzy":
            found[name].update(term for term, _, _ in query_tokens(text, "phrase"))


def filter_clauses(filters: Filters) -> list[dict]:
    """The ``filter`` clauses of ``filters``: values of one filter OR, filters AND
    (date ranges AND each other). Each facet of :data:`searchengine.facets.FACETS`
    is matched as its kind says (:func:`.mapping.facet_fields` names the fields)."""
    clauses: list[dict] = []
    for facet in FACETS:
        chosen = filters.values(facet.name)
        if not chosen:
            pass
        elif facet.kind == "year":
            ranges: list[dict | None] = []
            for year in chosen:
                bounds: dict[str, Any] = {}
                if year.low is not None:
                    bounds["gte"] = year.low
                if year.high is not None:
                    bounds["lte"] = year.high
                ranges.append({"range": {facet.name: bounds}} if bounds else {"exists": {"field": facet.name}})
            clauses.append(_any(ranges) or {})  # (never empty: there are ranges)
        elif facet.kind == "category":
            mark = PRIMARY_MARK if filters.primary_only else ""
            clauses.append({"terms": {facet_fields(facet)["filter"]: [mark + f.key for f in chosen]}})
        else:  # author keys, keyword keys
            clauses.append({"terms": {facet_fields(facet)["filter"]: [k for f in chosen for k in _keys(f)]}})
        # Date ranges (after the years, where they always were) AND: one range of the days they all allow.
        if facet.kind == "year" and filters.dates:
            low, high = intersection(filters.dates)
            bounds = {"format": "strict_date"}  # (a fresh dict: the years' bounds are in their clauses)
            if low is not None:
                bounds["gte"] = low.isoformat()
            if high is not None:
                bounds["lte"] = high.isoformat()
            clauses.append({"range": {"submitted": bounds}} if len(bounds) > 1 else {"exists": {"field": "submitted"}})
    return clauses


def _keys(chosen) -> tuple[str, ...]:
    """The index keys one filter value looks for: an author's name keys, a keyword's folded text."""
    return chosen.keys if isinstance(chosen, AuthorFilter) else (chosen.key,)


def _slots(tokens: list[tuple[str, int]]) -> str:
    """Terms at their positions as a term text (:mod:`.terms`): ``[("state", 0), ("art", 3)]`` → ``state ␂ ␂ art``."""
    slots: list[list[str]] = []
    first = tokens[0][1]
    for term, position in tokens:
        at = position - first
        while len(slots) <= at:
            slots.append([])
        slots[at].append(term)
    return " ".join(SAME_POSITION.join(slot) if slot else NO_TERM for slot in slots)


def _pairs(words: tuple[str, ...]) -> list[list[tuple[str, int]]]:
    """Each pair of neighbouring terms of ``words`` (phrase mode, stop words
    keeping their gaps), as the embedded proximity bonus counts them."""
    tokens = [(term, position) for term, position, _ in query_tokens(" ".join(words), "phrase")]
    return [[a, b] for a, b in pairwise(tokens)]


def _key(field: str, term: str) -> tuple[tuple, dict]:
    """The frequency key of a term in a title or abstract, and the query counting it."""
    return (field, term), {"term": {field + TERMS: term}}


def _author_key(text: str) -> tuple[tuple, dict]:
    """The frequency key of a word in the author names, and the query counting it."""
    return ("authors", name_text(text)), _authors(text)


#: The frequency key and counting query of a term in a title or abstract
#: (``term_key(field, term)``) and of a word in the author names (``author_key(word)``).
term_key, author_key = _key, _author_key


def _term_clause(field: str, term: str, stats: Statistics) -> dict:
    """One term in one field, its frequency normalised by the document's
    length and weighing the field's weight (the title's :data:`TITLE_BOOST`)."""
    boost = TITLE_BOOST if field == "title" else 1.0
    return normalised({"term": {field + TERMS: {"value": term, "boost": boost}}}, field, stats.average(field))


def _blend(term: str, fields, stats: Statistics, author: str | None = None) -> dict:
    """One analysed term over ``fields`` (and the word ``author`` in the
    author names), scored once by BM25F with the idf of its largest document
    frequency over them (:mod:`.scoring`)."""
    clauses = [_term_clause(field, term, stats) for field in fields]
    counted = [_key(field, term) for field in fields]
    if author is not None:
        clauses.append(_authors(author))
        counted.append(_author_key(author))
    return saturated(clauses, stats.idf(*counted))


def _in_sequence(parts: list[str], fields) -> dict | None:
    """The ``parts`` next to each other, in order, in one of ``fields``."""
    return _any(
        [{"match_phrase": {name + TERMS: {"query": " ".join(parts), "analyzer": _ANALYZED}}} for name in fields]
    )


def _analysed(
    text: str, fields=("title", "abstract"), stats: Statistics | None = None, author: bool = False
) -> dict | None:
    """A word over ``fields`` as the embedded engine searches it: its term
    by BM25F (with the author names when ``author``), or for a compound its
    joined term (weighing its parts' idf added up) or its parts in sequence
    (weighing :data:`~searchengine.ranking.ALTERNATIVE_WEIGHT`); ``None``
    when it analyzes to nothing (a stop word)."""
    stats = stats if stats is not None else Statistics()
    tokens = query_tokens(text)
    joined = [term for term, _, is_joined in tokens if is_joined]
    parts = [term for term, _, is_joined in tokens if not is_joined]
    if not parts:
        return _scored_authors(text, stats) if author else None
    if not joined and len(parts) == 1:
        return _blend(parts[0], fields, stats, text if author else None)
    names = _scored_authors(text, stats) if author else None
    if not joined:  # a CJK run: its pairs in sequence
        words = _bool(must=[_blend(part, fields, stats) for part in parts], filter=[_in_sequence(parts, fields)])
        return _any([words, names])
    if len(parts) > MAX_COMPOUND_PARTS:
        return _any([_blend(joined[0], fields, stats), names])
    weight = sum(stats.idf(*(_key(field, part) for field in fields)) for part in parts)
    whole = saturated([_term_clause(field, joined[0], stats) for field in fields], weight)
    apart: dict | None
    if len(parts) == 1:  # the other parts are stop words (t-SNE)
        apart = _blend(parts[0], fields, stats)
    else:
        apart = _bool(must=[_blend(part, fields, stats) for part in parts], filter=[_in_sequence(parts, fields)])
    apart = _any([apart, names])
    return {"dis_max": {"queries": [whole, {"bool": {"must": [apart], "boost": ALTERNATIVE_WEIGHT}}]}}


def _word(text: str, stats: Statistics) -> dict | None:
    """An unfielded word: over title, abstract and author names (:func:`_analysed`)."""
    return _analysed(text, TEXT_FIELDS, stats, author=True)


def _authors(text: str) -> dict:
    """The word in the author names, as the name analyzer reads it (so two
    spellings that differ in case ask for the same names)."""
    return {"match": {"authors": {"query": name_text(text), "operator": "and"}}}


def _scored_authors(text: str, stats: Statistics) -> dict:
    """The word in the author names, scored by BM25 there."""
    return saturated([_authors(text)], stats.idf(_author_key(text)))


def _joined(words: tuple[str, ...], stats: Statistics) -> dict | None:
    """Neighbouring words joined (``failslow``): the one term the joined text
    analyzes to in the title and abstract (its joined form, for a compound)
    and the joined text in the author names, scored by BM25F with the idf of
    the words added up; ``None`` when it analyzes to several terms."""
    text = "".join(words)
    tokens = query_tokens(text)
    joined = [term for term, _, is_joined in tokens if is_joined]
    terms = joined or [term for term, _, _ in tokens]
    if len(terms) != 1:
        return None
    weight = 0.0
    for word in words:
        found = [term for term, _, _ in query_tokens(word, "phrase")]
        if found:
            weight += stats.idf(*(_key(field, found[0]) for field in TEXT_FIELDS), _author_key(word))
    clauses = [_term_clause(field, terms[0], stats) for field in TEXT_FIELDS] + [_authors(text)]
    return saturated(clauses, weight or stats.idf(*(_key(field, terms[0]) for field in TEXT_FIELDS)))


def expansion_term(term: str, weight: float, stats: Statistics) -> dict:
    """A feedback term (analysed) in title and abstract, one BM25F term
    weighing ``weight`` times its idf (:mod:`searchengine.feedback`)."""
    return saturated(
        [_term_clause(field, term, stats) for field in TEXT_FIELDS],
        weight * stats.idf(*(_key(field, term) for field in TEXT_FIELDS)),
    )


def _per_field(word: t.Word, stats: Statistics) -> dict | None:
    """A word that is one term in every field as the embedded engine scores it
    inside an OR: each field's term by its own BM25 (its field's idf), added
    up; ``None`` for a compound or a stop word (scored as anywhere else)."""
    tokens = query_tokens(word.text)
    if len(tokens) != 1 or tokens[0][2]:
        return None
    term = tokens[0][0]
    return _any(
        [
            *(saturated([_term_clause(field, term, stats)], stats.idf(_key(field, term))) for field in TEXT_FIELDS),
            _scored_authors(word.text, stats),
        ]
    )


def _together(pair: list[tuple[str, int]], stats: Statistics) -> dict:
    """The proximity bonus of one pair of neighbouring terms: their sloppy
    frequency in title and abstract as one BM25F pseudo-term with the two
    words' idf added up, weighing :data:`~searchengine.ranking.PROXIMITY_WEIGHT`.
    (A phrase's frequency reaches the field's similarity once per word: hence
    the halved boosts.)"""
    query = _slots(pair)
    clauses = [
        normalised(
            {
                "match_phrase": {
                    field + TERMS: {
                        "query": query,
                        "analyzer": _ANALYZED,
                        "slop": PROXIMITY_SLOP,
                        "boost": (TITLE_BOOST if field == "title" else 1.0) / len(pair),
                    }
                }
            },
            field,
            stats.average(field),
        )
        for field in TEXT_FIELDS
    ]
    weight = sum(stats.idf(*(_key(field, term) for field in TEXT_FIELDS)) for term, _ in pair)
    return saturated(clauses, PROXIMITY_WEIGHT * weight)


def field_word(field: str, text: str, stats: Statistics | None = None) -> dict | None:
    """A word in one field (``title:gpu``, ``year:2024``, ``doi:…``); ``None``
    when it analyzes to nothing there."""
    stats = stats if stats is not None else Statistics()
    if field in TEXT_FIELDS:
        return _analysed(text, (field,), stats)
    if field == "authors":
        return _scored_authors(text, stats)
    if field == "year":
        found = {"term": {"year": text}} if text.isdigit() else {"match_none": {}}
    elif field == "doi":  # held lower-cased: DOIs are case-insensitive
        found = {"term": {"doi_keys": text.lower()}}
    else:
        found = {"term": {field: text}}
    # A field that is not ranked scores 1, as Whoosh scores an unscorable field's term.
    return {"constant_score": {"filter": found, "boost": 1.0}}


def _prefix(field: str, text: str, stats: Statistics | None = None) -> dict | None:
    """The terms of ``field`` starting with the folded ``text``, 64 at most
    (the most frequent), each scored by BM25 with its own idf and added
    up, as the embedded engine scores a prefix's terms: in a title or
    abstract, the terms ``stats.prefixes`` lists, each a term of its own
    (the product's lengths and statistics); else (or before they are known)
    a ``prefix`` query rewritten to 64 of them (``top_terms_64``, scored by
    Lucene's lengths: :data:`.scoring.WHOLE_SCORE`)."""
    from searchengine.analysis.folding import fold

    terms = stats.prefixes.get((field, fold(text))) if stats is not None else None
    if terms is not None:
        assert stats is not None
        return _any(
            [saturated([_term_clause(field, term, stats)], stats.idf(_key(field, term))) for term in terms]
        ) or {"match_none": {}}
    name = field + TERMS if field in TEXT_FIELDS else field
    weight = TITLE_BOOST if field == "title" else 1.0
    return {
        "prefix": {name: {"value": fold(text), "rewrite": f"top_terms_{MAX_EXPANSIONS}", "boost": WHOLE_SCORE + weight}}
    }


def fuzzy_words(tree: t.Node | None) -> list[tuple[str, str, int]]:
    """``(field, word, edits)`` of each word of the tree's fuzzy words that
    may be fuzzy (:func:`~searchengine.querylang.text.may_be_fuzzy`), with
    the edits it is allowed (:func:`~searchengine.querylang.text.fuzzy_edits`):
    in a title or abstract each word as written, in the author names each
    name term; their expansions are what :func:`to_dsl` wants in its
    statistics (:func:`fuzzy_expansion`, :func:`name_fuzzy_expansion`)."""
    wanted: list[tuple[str, str, int]] = []
    for leaf in t.leaves(tree) if tree is not None else ():
        if not isinstance(leaf, t.Fuzzy):
            continue
        for field in [leaf.field] if leaf.field else t.DEFAULT_FIELDS:
            words = _fuzzy_words_of(field, leaf.text)
            wanted.extend((field, word, fuzzy_edits(word, leaf.distance)) for word in words if may_be_fuzzy(word))
    return list(dict.fromkeys(wanted))


def _fuzzy_words_of(field: str, text: str) -> list[str]:
    """The words a fuzzy ``text`` is matched by in ``field``, each once: in a
    title or abstract its words as written, in the author names its name
    terms; none in another field (its terms are fuzzy as one ``match``)."""
    if field in TEXT_FIELDS:
        return list(dict.fromkeys(phrase_words(text)))
    return list(dict.fromkeys(name_terms(text))) if field == "authors" else []


def _fuzzy(field: str, text: str, distance: int, stats: Statistics) -> dict | None:
    """A fuzzy word in one field, as the embedded engine's fuzzy matching:
    each of its words as written (title, abstract) or name terms (author
    names) matches its expansions (``stats.expansions``,
    :func:`fuzzy_expansion`, :func:`name_fuzzy_expansion`), each term
    scored by BM25 with its blended weight, or the word as typed without
    them; a word that may not be fuzzy
    (:func:`~searchengine.querylang.text.may_be_fuzzy`: too short, a digit)
    as typed. In another field each analysed term within ``distance`` edits."""
    text_field = field in TEXT_FIELDS
    if text_field and not query_tokens(text):
        return None
    if not text_field and field != "authors":
        query = {
            "match": {
                field: {
                    "query": text,
                    "operator": "and",
                    "fuzziness": distance,
                    "prefix_length": 0,
                    "max_expansions": MAX_EXPANSIONS,
                    "fuzzy_transpositions": True,
                }
            }
        }
        return saturated([query], stats.idf((("fuzzy", field, text, distance), query)))
    each = []
    for word in _fuzzy_words_of(field, text):
        if not may_be_fuzzy(word):
            each.append(_analysed(word, (field,), stats) if text_field else _scored_authors(word, stats))
            continue
        terms = stats.expansions.get((field, word, fuzzy_edits(word, distance)))
        if terms is None:  # no expansions asked for: the word as typed (its stem)
            tokens = query_tokens(word) if text_field else ()
            terms = [(tokens[0][0] if tokens else word, 0)]
        # Each term weighs the idf of the most frequent of them, times
        # 1 - edits / length (at least 0.1), as the embedded engine weighs
        # them (Lucene's blended frequencies and fuzzy boost).
        if text_field:
            blended = min((stats.idf(_key(field, term)) for term, _ in terms), default=0.0)
            clauses = [(_term_clause(field, term, stats), edits) for term, edits in terms]
        else:
            blended = min((stats.idf(_author_key(term)) for term, _ in terms), default=0.0)
            clauses = [({"term": {"authors": term}}, edits) for term, edits in terms]
        each.append(
            _any([saturated([clause], blended * max(0.1, 1 - edits / max(1, len(word)))) for clause, edits in clauses])
            or {"match_none": {}}
        )
    return _bool(must=each) if len(each) > 1 else (each[0] if each else None)


def _phrase(field: str, text: str, stats: Statistics) -> dict | None:
    """A quoted phrase: in a title or abstract, the papers where its words as
    written stand together, scored by the sum of its stems' BM25 scores in
    the field (as the embedded engine scores a phrase); ``None`` when it has
    no term to search (stop words only)."""
    if field == "authors":
        query = {"match_phrase": {"authors": {"query": text}}}
        return saturated([query], stats.idf((("phrase", "authors", text), query)))
    if field not in TEXT_FIELDS:
        return field_word(field, text, stats)
    words = phrase_words(text)
    tokens = [(term, position) for term, position, _ in query_tokens(text, "phrase")]
    if not words or not tokens:
        return None
    # Candidates: the stems in sequence (stop words' gaps allowed); kept where
    # the words as written stand together.
    gap = max((b[1] - a[1] for a, b in pairwise(tokens)), default=1)
    stems = {
        "match_phrase": {
            field + TERMS: {
                "query": " ".join(term for term, _ in tokens),
                "analyzer": _ANALYZED,
                "slop": gap - 1 if len(tokens) > 1 else 0,
            }
        }
    }
    written = {"match_phrase": {field + WORDS: {"query": " ".join(words), "analyzer": _ANALYZED}}}
    scored = [
        saturated([_term_clause(field, term, stats)], stats.idf(_key(field, term)))
        for term in dict.fromkeys(term for term, _ in tokens)
    ]
    return _bool(must=scored, filter=[stems, written])


def _any(queries: list[dict | None]) -> dict | None:
    present = [q for q in queries if q is not None]
    if len(present) <= 1:
        return present[0] if present else None
    return _bool(should=present, minimum=1)


def _bool(*, must=(), should=(), must_not=(), filter=(), minimum: int | None = None) -> dict | None:
    """A ``bool`` query of the clauses given (``None`` ones left out); ``None`` when none is left."""
    body: dict = {}
    for name, clauses in (("must", must), ("should", should), ("must_not", must_not), ("filter", filter)):
        present = [q for q in clauses if q is not None]
        if present:
            body[name] = present
    if not body:
        return None
    if minimum is not None and "should" in body:
        body["minimum_should_match"] = minimum
    return {"bool": body}
