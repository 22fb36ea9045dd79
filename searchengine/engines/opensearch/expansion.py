"""What a query's words stand for in the index, found as the embedded engine finds them.

* A prefix (``learn*``) in a title or abstract: the 64 of its terms found
  in most papers (:func:`prefix_terms`), from every term of the prefix (each
  shard's rewrite of it) and their document frequencies.
* A fuzzy word (``transformr~1``): the terms the embedded engine would
  choose (:func:`fuzzy_expansion`, :func:`name_fuzzy_expansion`) among the
  ``term`` suggester's candidates over the product's terms and words
  (:func:`fuzzy_expansions`).
* Similar papers without vectors: the records' Bo1 terms searched as a
  weighted OR of BM25F terms (:func:`similar_papers`), each term's
  occurrences in the abstracts read from every shard's term statistics
  (:func:`collection_frequencies`).

What is found is kept for the index's generation
(:class:`.scoring.IndexStatistics`). The functions taking a ``searcher``
run on an :class:`.searcher.OpenSearchSearcher`.
"""

from __future__ import annotations

from typing import Any

from searchengine.engines.opensearch.mapping import VECTOR_FIELD
from searchengine.engines.opensearch.matches import RELEVANCE_SORT
from searchengine.engines.opensearch.querying import MAX_EXPANSIONS, fuzzy_words
from searchengine.engines.opensearch.scoring import Statistics
from searchengine.engines.opensearch.terms import TERMS, TEXT_FIELDS, query_tokens
from searchengine.querylang import tree as t
from searchengine.querylang.text import may_expand_to, whole_term
from searchengine.records import Record
from searchengine.results import Hit


def prefix_fields(tree: t.Node | None) -> list[tuple[str, str]]:
    """``(field, folded prefix)`` of each prefix of ``tree`` in a title or
    abstract: their terms are what :func:`to_dsl` wants in ``stats.prefixes``."""
    from searchengine.analysis.folding import fold

    found: list[tuple[str, str]] = []
    for leaf in t.leaves(tree) if tree is not None else ():
        if isinstance(leaf, t.Prefix):
            fields = [leaf.field] if leaf.field is not None else list(t.DEFAULT_FIELDS)
            found.extend((field, fold(leaf.text)) for field in fields if field in TEXT_FIELDS)
    return list(dict.fromkeys(found))


def prefix_candidates(explanations: list[str], wanted: list[tuple[str, str]]) -> dict[tuple[str, str], list[str]]:
    """``{(field, prefix): terms}``: every term of each of ``wanted``, in term
    order, from the explanations of each shard's rewritten prefix queries
    (``title_terms:learn title_terms:learnabl ...``)."""
    import re

    held: dict[str, set[str]] = {}
    for text in explanations:
        for name, term in re.findall(r"(\w+):([^\s()^]+)", text):
            held.setdefault(name, set()).add(term)
    return {
        (field, prefix): sorted(term for term in held.get(field + TERMS, ()) if term.startswith(prefix))
        for field, prefix in wanted
    }


def most_frequent(terms: list[str], frequency) -> list[str]:
    """The :data:`MAX_EXPANSIONS` terms of ``terms`` (in term order) that
    ``frequency(term)`` finds in most papers, ties in term order, as the
    embedded engine chooses a prefix's terms."""
    return sorted(terms, key=frequency, reverse=True)[:MAX_EXPANSIONS] if len(terms) > MAX_EXPANSIONS else terms


def prefix_terms(searcher: Any, tree) -> dict:
    """``{(field, prefix): terms}`` of the prefixes of ``tree`` in a title
    or abstract (:func:`.querying.prefix_fields`), kept for the
    generation: the 64 most frequent of each, as the embedded engine
    expands them (:func:`.querying.most_frequent`), from every term of
    the prefix (each shard's rewrite of it, one ``_validate/query``
    request) and their document frequencies (one request). A prefix of
    more terms than a query may hold is left to Lucene (``top_terms_64``)."""
    from searchengine.engines.opensearch.querying import term_key

    known = searcher.known.expansions
    every = prefix_fields(tree)
    missing = [key for key in every if ("prefix", key) not in known]
    if missing:
        query = {
            "bool": {
                "should": [
                    {"prefix": {field + TERMS: {"value": prefix, "rewrite": "scoring_boolean"}}}
                    for field, prefix in missing
                ]
            }
        }
        with searcher._errors("expand prefixes"):
            found = searcher.client.indices.validate_query(
                index=searcher.index, body={"query": query}, params={"rewrite": "true", "all_shards": "true"}
            )
        if not found.get("valid", False):  # too many terms for one query
            known.update({("prefix", key): None for key in missing})
        else:
            explanations = [part.get("explanation") or "" for part in found.get("explanations", [])]
            candidates = prefix_candidates(explanations, missing)
            searcher.fetch(dict(term_key(field, term) for (field, _), terms in candidates.items() for term in terms))
            frequencies = searcher.known.frequencies
            for (field, prefix), terms in candidates.items():
                chosen = most_frequent(terms, lambda term, field=field: frequencies[term_key(field, term)[0]])
                known[("prefix", (field, prefix))] = chosen
    return {key: known[("prefix", key)] for key in every if known[("prefix", key)] is not None}


def fuzzy_expansion(
    word: str, edits: int, stems: list[tuple[str, int]], written: list[tuple[str, int]]
) -> list[tuple[str, int]]:
    """The terms a fuzzy ``word`` (as written) is searched by in one field,
    each with its fewest edits, as the embedded engine chooses them: the
    terms within ``edits`` of the word's stem (``stems``: ``(term,
    documents)``) and the whole terms
    (:func:`~searchengine.querylang.text.whole_term`) of the words as
    written within ``edits`` of the word (``written``: ``(word,
    documents)``), each only if the word may expand to it
    (:func:`~searchengine.querylang.text.may_expand_to`); the closest
    :data:`MAX_EXPANSIONS` first, then the most frequent. :func:`to_dsl`
    weighs them (:func:`_fuzzy`)."""
    from rapidfuzz.distance import OSA

    tokens = query_tokens(word)
    stem = tokens[0][0] if tokens else word
    closest: dict[str, int] = {}
    frequency: dict[str, int] = {}
    for term, documents in stems:
        distance = int(OSA.distance(stem, term))
        if distance <= edits and may_expand_to(term, distance) and distance < closest.get(term, edits + 1):
            closest[term] = distance
        frequency[term] = max(frequency.get(term, 0), documents)
    for found, documents in [(word, 0), *written]:
        distance = int(OSA.distance(word, found))
        if distance > edits:
            continue
        whole = whole_term([(term, joined) for term, _, joined in query_tokens(found)])
        if whole is not None and may_expand_to(whole, distance) and distance < closest.get(whole, edits + 1):
            closest[whole] = distance
            frequency.setdefault(whole, documents)
    return _closest(closest, frequency)


def name_fuzzy_expansion(term: str, edits: int, names: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """The name terms a fuzzy name ``term`` is searched by in the author
    names, each with its edits, as the embedded engine chooses them: the
    terms of ``names`` (``(term, papers)``) within ``edits`` of ``term``
    that it may expand to (:func:`~searchengine.querylang.text.may_expand_to`:
    never an initial); the closest :data:`MAX_EXPANSIONS` first, then the
    most frequent."""
    from rapidfuzz.distance import OSA

    closest: dict[str, int] = {}
    frequency: dict[str, int] = {}
    for found, documents in names:
        distance = int(OSA.distance(term, found))
        if distance <= edits and may_expand_to(found, distance):
            closest[found] = distance
            frequency[found] = max(frequency.get(found, 0), documents)
    return _closest(closest, frequency)


def _closest(closest: dict[str, int], frequency: dict[str, int]) -> list[tuple[str, int]]:
    """``(term, edits)`` of the terms of ``closest`` some paper holds: at most
    :data:`MAX_EXPANSIONS`, the fewest edits first, then the most frequent."""
    held = sorted(
        (term for term in closest if frequency.get(term)), key=lambda term: (closest[term], -frequency[term], term)
    )[:MAX_EXPANSIONS]
    return [(term, closest[term]) for term in held]


def fuzzy_expansions(searcher: Any, tree) -> dict:
    """``{(field, word, edits): [(term, edits)]}`` for the fuzzy words of
    ``tree`` (:func:`.querying.fuzzy_words`), chosen as the embedded
    engine chooses them from the ``term`` suggester's answers: in a title
    or abstract over the field's terms (the word's stem) and its words as
    written (the word) (:func:`.querying.fuzzy_expansion`), in the author
    names over their terms (:func:`.querying.name_fuzzy_expansion`): one
    request for them all."""
    from searchengine.engines.opensearch.mapping import SPELLING
    from searchengine.engines.opensearch.terms import query_tokens

    known = searcher.known.expansions
    every = fuzzy_words(tree)
    wanted = [key for key in every if ("fuzzy", key) not in known]
    if not wanted:
        return {key: known[("fuzzy", key)] for key in every}
    # Frequent words too (the suggester's default skips a word in more than 1 % of the papers).
    options = {
        "prefix_length": 0,
        "min_word_length": 1,
        "suggest_mode": "always",
        "size": 4 * MAX_EXPANSIONS,
        "shard_size": 8 * MAX_EXPANSIONS,
        "string_distance": "damerau_levenshtein",
        "max_term_freq": 2147483647,
        "max_inspections": 10,
        "accuracy": 0.1,
    }
    suggest, own = {}, {}
    for number, (name, word, edits) in enumerate(wanted):
        if name not in TEXT_FIELDS:  # the author names: a name term, not stemmed
            suggest[f"{number}t"] = {"text": word, "term": {"field": name, "max_edits": edits, **options}}
            own[str(number)] = {"term": {name: word}}
            continue
        tokens = query_tokens(word)
        stem = tokens[0][0] if tokens else word
        for kind, source, text in (("t", name + TERMS, stem), ("w", SPELLING, word)):
            suggest[f"{number}{kind}"] = {"text": text, "term": {"field": source, "max_edits": edits, **options}}
        # The suggester never offers the word itself: its stem is counted apart.
        own[str(number)] = {"term": {name + TERMS: stem}}
    found = searcher._search(
        "find fuzzy words",
        {"size": 0, "track_total_hits": False, "suggest": suggest, "aggs": {"own": {"filters": {"filters": own}}}},
    )
    counted = found["aggregations"]["own"]["buckets"]
    suggested = found.get("suggest", {})

    def options_of(key: str) -> list[tuple[str, int]]:
        return [
            (option["text"], int(option.get("freq", 0)))
            for entry in suggested.get(key, [])
            for option in entry.get("options", [])
        ]

    expansions = {}
    for number, key in enumerate(wanted):
        own_count = int(counted[str(number)]["doc_count"])
        if key[0] not in TEXT_FIELDS:
            expansions[key] = name_fuzzy_expansion(key[1], key[2], [*options_of(f"{number}t"), (key[1], own_count)])
            continue
        tokens = query_tokens(key[1])
        stems = options_of(f"{number}t")
        if tokens:
            stems.append((tokens[0][0], own_count))
        expansions[key] = fuzzy_expansion(key[1], key[2], stems, options_of(f"{number}w"))
    known.update({("fuzzy", key): found for key, found in expansions.items()})
    return {key: known[("fuzzy", key)] for key in every}


def similar_papers(searcher: Any, records: list[Record], limit: int) -> tuple[int, list[Hit], str]:
    """Papers on the topic of ``records``, those excluded: with vectors, the
    nearest to the records' mean vector (a ``knn`` query); else, as the
    embedded engine finds them, the :data:`~searchengine.ranking.SIMILAR_TERMS`
    most informative terms of their titles and abstracts as the product
    analyses them, weighed by divergence from randomness (Bo1,
    :func:`.scoring.key_terms`, with each term's occurrences in every
    abstract from :meth:`_collection_frequencies`), searched in title and
    abstract as a weighted OR of BM25F terms (one paper holding one term
    is a hit), ties broken as in every relevance order."""
    from searchengine.engines.opensearch.querying import expansion_term
    from searchengine.engines.opensearch.scoring import key_terms
    from searchengine.engines.opensearch.terms import term_counts
    from searchengine.ranking import SIMILAR_TERMS

    if searcher.has_vectors():
        from searchengine.engines.opensearch.knn import similar_by_meaning

        return similar_by_meaning(searcher, records, limit)
    counts: dict[str, float] = {}
    for record in records:
        for term, count in term_counts(record.title, record.abstract).items():
            counts[term] = counts.get(term, 0.0) + count
    searcher.fetch({}, fresh=True)
    terms = key_terms(counts, collection_frequencies(searcher, sorted(counts)), searcher.known.total, SIMILAR_TERMS)
    if not terms:
        return 0, [], ""
    stats = Statistics(known=searcher.known)
    for term, weight in terms:
        expansion_term(term, weight, stats)
    if stats.missing:
        searcher._count(stats)
    wanted = [expansion_term(term, weight, stats) for term, weight in terms]
    body = {
        "query": {"bool": {"should": wanted, "must_not": [{"terms": {"id": [r.id for r in records]}}]}},
        "size": limit,
        "sort": RELEVANCE_SORT,
        "track_scores": True,
        "track_total_hits": True,
        "_source": {"excludes": [VECTOR_FIELD, "content_key"]},
    }
    found = searcher._search("find similar papers", body)
    total = int(found["hits"]["total"]["value"])
    shown = " OR ".join(f"(title:{term} | abstract:{term})^{weight:.4g}" for term, weight in terms)
    return total, searcher.hits(None, found["hits"]["hits"]), shown


def collection_frequencies(searcher: Any, terms: list[str]) -> dict[str, int]:
    """``{term: occurrences in every abstract}`` of analysed ``terms`` (terms
    no abstract holds left out): the term statistics of an artificial
    document of the terms, asked of each primary shard in turn (a term
    vector reads one shard's statistics) and added up. Kept for the
    generation."""
    from searchengine.engines.opensearch.terms import SAME_POSITION

    known = searcher.known.expansions
    missing = [term for term in terms if ("occurrences", term) not in known]
    if missing:
        field = "abstract" + TERMS
        text = " ".join(term for term in missing if SAME_POSITION not in term and " " not in term)
        shards = shard_count(searcher)
        found: dict[str, int] = dict.fromkeys(missing, 0)
        for shard in range(shards):
            with searcher._errors("read term statistics"):
                answer = searcher.client.termvectors(
                    index=searcher.index,
                    body={
                        "doc": {field: text},
                        "fields": [field],
                        "term_statistics": True,
                        "field_statistics": False,
                        "positions": False,
                        "offsets": False,
                        "payloads": False,
                    },
                    preference=f"_shards:{shard}|_primary",  # one copy, the same every time
                )
            held = (answer.get("term_vectors") or {}).get(field, {}).get("terms", {})
            for term, about in held.items():
                if term in found:
                    found[term] += int(about.get("ttf") or 0)
        known.update({("occurrences", term): count for term, count in found.items()})
    return {term: known[("occurrences", term)] for term in terms if known[("occurrences", term)]}


def shard_count(searcher: Any) -> int:
    """Primary shards of the index behind the alias (kept for the generation)."""
    known = searcher.known.expansions
    if ("shards",) not in known:
        with searcher._errors("read the index settings"):
            found = searcher.client.indices.get_settings(index=searcher.index, name="index.number_of_shards")
        known[("shards",)] = max(int(body["settings"]["index"]["number_of_shards"]) for body in found.values())
    return known[("shards",)]
