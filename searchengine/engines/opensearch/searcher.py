"""The OpenSearch engine's searcher: the :class:`searchengine.engines.Searcher` face over a cluster.

Each step is one request to the alias: a count for matching (so relaxing
and did-you-mean cost no hits), one search for a page of hits with its
snippets (``dfs_query_then_fetch``: term statistics over every shard, so
a small corpus spread over three shards ranks as on one), one search of
aggregations for the facets (each facet in a ``filter`` aggregation with
every filter but its own), ``more_like_this`` for similar papers.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence

from searchengine import querylang
from searchengine.engines.opensearch.client import CUT_SHARDS, cluster_errors, whole_answer
from searchengine.engines.opensearch.mapping import VECTOR_FIELD, facet_fields, record_from_source
from searchengine.engines.opensearch.matches import RELEVANCE_SORT, SEARCH_TYPE, Matches, with_filters
from searchengine.engines.opensearch.querying import (
    base_query,
    expansion_term,
    filter_clauses,
    marked_terms,
    repeated_weights,
    split_joined,
    to_dsl,
)
from searchengine.engines.opensearch.scoring import Statistics, index_statistics
from searchengine.engines.opensearch.terms import TEXT_FIELDS, TOKENS, snippet_parts
from searchengine.errors import QueryError, SearchEngineError
from searchengine.facets import FacetCounts, FacetValue, facet
from searchengine.filters import Filters
from searchengine.records import Record, arxiv_id
from searchengine.results import Hit, lead_snippet

# The name of the global aggregation that reads the index's generation (Searcher._probe).
_PROBE = "known"


def _is_average(key) -> bool:
    """Whether a :class:`.scoring.Statistics` key asks for a field's average length (read by every probe)."""
    return isinstance(key, tuple) and len(key) == 2 and key[0] == "average"


def _filters_key(filters) -> tuple:
    """The key under which a generation's count of ``filters`` alone is known."""
    return ("filters", json.dumps(filter_clauses(filters), sort_keys=True))


def routing_preference(body: dict) -> str:
    """The shard-copy preference of a request: the same for the same query, so
    that repeating a search asks the same copy of each shard (copies of one
    shard hold different deleted documents, so different statistics, and
    answering in turn they gave one paper 79.44, 75.34 and 75.49); different
    queries still spread over the copies. An OpenSearch custom ``preference``
    string (any text not starting with ``_``)."""
    import hashlib
    import json

    wanted = {key: body[key] for key in ("query", "post_filter") if key in body}
    return "q" + hashlib.blake2b(json.dumps(wanted, sort_keys=True).encode("utf-8"), digest_size=8).hexdigest()


_SORTS = {
    "newest": [{"newest_key": {"order": "desc", "missing": "_last"}}, {"id": "desc"}],
    "oldest": [{"oldest_key": {"order": "asc", "missing": "_last"}}, {"id": "asc"}],
    "title": [{"sort_title": "asc"}, {"id": "asc"}],
}


class OpenSearchSearcher:
    """The alias of one index on a cluster, for one call (see :class:`searchengine.engines.Searcher`)."""

    def __init__(self, engine) -> None:
        self.engine = engine
        self.client = engine.client
        self.cluster = engine.cluster
        self.index = engine.index
        #: What this process knows of the index's generation (shared by its searches).
        self.known = index_statistics(getattr(engine, "location", None) or f"{engine.cluster!r}/{engine.index}")
        #: Whether this call has read the index's generation (what is known is then of it).
        self.probed = False

    def _errors(self, action: str):
        return cluster_errors(self.cluster, action)

    def doc_count(self) -> int:
        """Documents in the index."""
        return self.engine.doc_count()

    def parse(self, text: str, *, allow_empty: bool = False, frequencies=None):
        """The query language's tree (:func:`searchengine.querylang.parse`)."""
        return querylang.parse(text, allow_empty=allow_empty, frequencies=frequencies)

    def count(self, query: dict) -> int:
        """Documents matching the Query DSL ``query`` (one count request, sent
        again once if shards did not answer: see :func:`.client.whole_answer`)."""
        with self._errors("count matches"):
            answer = whole_answer(
                self.cluster,
                "count matches",
                lambda: self.client.count(
                    index=self.index, body={"query": query}, preference=routing_preference({"query": query})
                ),
            )
        return int(answer["count"])

    def _search(self, action: str, body: dict, **params) -> dict:
        """The answer of one search of the alias, from every shard, sent again
        once if shards did not answer (see :func:`.client.whole_answer`; shards
        that ran out of a ``timeout`` in ``body`` are accepted, the answer then
        says ``timed_out``)."""
        with self._errors(action):
            return whole_answer(
                self.cluster,
                action,
                lambda: self.client.search(index=self.index, body=body, preference=routing_preference(body), **params),
                timed="timeout" in body,
            )

    def request(self, action: str, body: dict) -> dict:
        """The answer to a search request ``body``; ``action`` names it in errors."""
        with self._errors(action):
            return self.client.search(index=self.index, body=body, preference=routing_preference(body))

    def _counted(
        self, matches: Matches, deadline: float, wanted: dict | None = None, base: dict | None = None
    ) -> list[str] | None:
        """Set the total of ``matches``, counted by the cluster within the time
        left before ``deadline`` (its ``timeout``); a count the cluster cut
        short sets ``cut`` (the total counts the documents matched by then).
        The same request reads the index's generation and counts ``wanted``
        (``{key: query}``) over every document (:meth:`_probe`). With
        ``base`` (the query of a proximity query's child, which matches the
        same papers), it ranks by it and gives the ids of its
        :data:`~searchengine.ranking.PROXIMITY_DEPTH` best hits (``None``
        when the index's generation changed under it)."""
        from searchengine.ranking import PROXIMITY_DEPTH

        probe, keys = self._probe(wanted or {})
        body: dict = {
            "query": matches.full_query(),
            "size": 0,
            "track_total_hits": True,
            "timeout": _timeout(deadline),
            "aggs": {_PROBE: probe},
        }
        if base is not None:
            body.update(
                query=with_filters(base, filter_clauses(matches.filters)),
                size=PROXIMITY_DEPTH,
                sort=RELEVANCE_SORT,
                _source=False,
            )
        # (A prefix's terms score by Lucene's statistics: those of every shard.)
        found = self._search("count matches", body, **({} if base is None else {"search_type": SEARCH_TYPE}))
        changed = self._learn(found, keys, wanted or {})
        matches.total = int(found["hits"]["total"]["value"])
        matches.cut = matches.cut or bool(found.get("timed_out"))
        if base is None or changed:
            return None
        return [hit["_id"] for hit in found["hits"]["hits"]]

    def _best(self, base: dict, filters) -> list[str]:
        """The ids of the :data:`~searchengine.ranking.PROXIMITY_DEPTH` best
        hits of ``base`` within ``filters`` (those a proximity bonus is for)."""
        from searchengine.ranking import PROXIMITY_DEPTH

        body = {
            "query": with_filters(base, filter_clauses(filters)),
            "size": PROXIMITY_DEPTH,
            "sort": RELEVANCE_SORT,
            "_source": False,
            "track_total_hits": False,
        }
        found = self._search("rank the best hits", body, search_type=SEARCH_TYPE)
        return [hit["_id"] for hit in found["hits"]["hits"]]

    def _probe(self, wanted: dict) -> tuple[dict, list]:
        """The ``global`` aggregation a request adds to learn the index's
        generation (:class:`.scoring.IndexStatistics`: its physical indexes,
        documents and the sum of their sequence numbers), the text fields'
        term counts (for their average lengths) and the documents matching
        each query of ``wanted`` (``{key: query}``, counted over every
        document whatever the request's own query); and the keys in the order counted."""
        aggs: dict[str, dict] = {
            "index": {"terms": {"field": "_index", "size": 100}},
            "seq": {"sum": {"field": "_seq_no"}},
            **{f"tokens {name}": {"sum": {"field": name + TOKENS}} for name in TEXT_FIELDS},
        }
        keys = list(wanted)
        if keys:
            aggs["counted"] = {"filters": {"filters": {str(number): wanted[key] for number, key in enumerate(keys)}}}
        return {"global": {}, "aggs": aggs}, keys

    def _learn(self, found: dict, keys: list, wanted: dict) -> bool:
        """Keep what a request with :meth:`_probe` learned in :attr:`known`;
        whether the index's generation changed (what was known is then dropped)."""
        part = found["aggregations"][_PROBE]
        known = self.known
        total = int(part["doc_count"])
        generation = (tuple(sorted(b["key"] for b in part["index"]["buckets"])), total, int(part["seq"]["value"] or 0))
        changed = generation != known.generation
        known.renew(generation)
        self.probed = True
        known.total = total
        for name in TEXT_FIELDS:
            known.averages[name] = float(part[f"tokens {name}"]["value"] or 0.0) / max(total, 1)
        if keys:
            counted = part["counted"]["buckets"]
            known.frequencies.update({key: int(counted[str(number)]["doc_count"]) for number, key in enumerate(keys)})
        return changed

    def fetch(self, wanted: dict, *, fresh: bool = False) -> None:
        """Count the queries of ``wanted`` (``{key: query}``) not yet known
        over every document, into :attr:`known` (one request; none when all
        are known, unless ``fresh`` asks that this call read the index's
        generation at least once)."""
        missing = {key: query for key, query in wanted.items() if key not in self.known.frequencies}
        if not missing and self.known.generation is not None and (self.probed or not fresh):
            return
        probe, keys = self._probe(missing)
        found = self._search("count words", {"size": 0, "track_total_hits": False, "aggs": {_PROBE: probe}})
        if self._learn(found, keys, missing) and len(missing) < len(wanted):
            self.fetch(wanted)  # the generation changed: what was known is to count again

    def counting_query(self, tree) -> dict | None:
        """``tree`` as Query DSL to count with: its fuzzy words and prefixes
        expanded as a search expands them (its scores of no use)."""
        stats = Statistics(expansions=self._fuzzy_expansions(tree), known=self.known)
        stats.prefixes = self._prefix_terms(tree)
        return to_dsl(tree, stats)

    def match(self, parsed, filters, deadline: float, notes: list[str]) -> Matches:
        """How many documents match ``parsed`` within ``filters``, counted
        within ``deadline``: one request that also counts what the search's
        next steps ask of its words (their document frequencies and average
        lengths, the spelling and author-name counts of did-you-mean, the
        papers of the author the words may name), unless the process knows
        them for this generation of the index (:class:`.scoring.IndexStatistics`).
        A search of filters alone that this generation counted before needs none."""
        if parsed.tree is None:
            return self._filtered(parsed, filters, deadline)
        wanted: dict = {}
        tree = self._split(parsed.tree, wanted)
        expansions = self._fuzzy_expansions(tree)
        stats = Statistics(expansions=expansions, known=self.known)
        stats.prefixes = self._prefix_terms(tree)
        stats.weights = repeated_weights(tree, list(parsed.words))
        query = to_dsl(tree, stats)
        # Its statistics known, a proximity query's best hits are ranked with the count.
        base = base_query(tree, stats) if not wanted and not stats.missing and self.known.generation else None
        wanted.update(stats.missing)
        wanted.update(self._ahead(parsed, filters))
        wanted = {key: query for key, query in wanted.items() if not _is_average(key)}
        matches = Matches(tree, query, filters, 0)
        matches.deadline = deadline
        known = self.known.frequencies
        before = self.known.generation
        best = self._counted(matches, deadline, {k: q for k, q in wanted.items() if k not in known}, base)
        # With the words' counts known: a joined word split, the count is made
        # again; so it is when the index changed since what was known of it.
        again = self._split(parsed.tree, {})
        if again != tree or (before is not None and self.known.generation != before):
            tree = again
            matches = Matches(tree, None, filters, 0)
            matches.deadline = deadline
            self._counted(matches.with_query(self._translated(tree, parsed.words, counting=True)), deadline)
            best = None
        matches.query = self._translated(tree, parsed.words, best=best, filters=filters)
        return matches

    def _filtered(self, parsed, filters, deadline: float) -> Matches:
        """Matches of ``filters`` alone: counted once per generation (the key
        :func:`_filters_key`; a count the cluster cut short is not kept)."""
        matches = Matches(parsed.tree, None, filters, 0)
        matches.deadline = deadline
        key = _filters_key(filters)
        # Known of this call's generation only: the count is the search's own otherwise.
        known = self.known.frequencies.get(key) if self.probed else None
        if known is not None:
            matches.total = known
            return matches
        self._counted(matches, deadline)
        if not matches.cut:
            self.known.frequencies[key] = matches.total
        return matches

    def _ahead(self, parsed, filters) -> dict:
        """``{key: query}`` of what the search's next steps will count for
        ``parsed``: each word's spelling counts and author-name count
        (:func:`.lexicon.word_counts`) and the papers of the author the
        words may name (:func:`searchengine.names.name_filters`)."""
        from searchengine import spelling
        from searchengine.engines.opensearch.lexicon import ClusterLexicon, hits_key, word_counts
        from searchengine.names import name_filters

        wanted: dict = {}
        text = parsed.text or ""
        for word in spelling.query_words(text):
            normal = ClusterLexicon.normalise(word)
            if normal is None:
                continue
            # Its counts, its other forms' (spelling.held) and its papers in the titles and abstracts.
            for form in (normal, *spelling.forms(normal)):
                wanted.update(word_counts(form))
            try:
                key, query = hits_key(filters, spelling.in_text(normal))
            except QueryError:
                continue
            wanted[key] = query
        alone = name_filters(text, filters)
        if alone is not None:
            wanted[_filters_key(alone)] = with_filters(None, filter_clauses(alone))
        return wanted

    def _split(self, tree, wanted: dict):
        """``tree`` with its joined words split (:func:`.querying.split_joined`)
        by the counts :attr:`known` holds; those it lacks are added to
        ``wanted`` (and taken as 0: not split, not a name)."""
        from searchengine.engines.opensearch.querying import author_key, term_key

        frequencies = self.known.frequencies

        def known(key_query: tuple) -> int:
            key, query = key_query
            if key not in frequencies:
                wanted[key] = query
            return frequencies.get(key, 0)

        def abstract(terms: list[str]) -> dict[str, int]:
            return {term: known(term_key("abstract", term)) for term in terms}

        return split_joined(tree, abstract, lambda word: known(author_key(word)) > 0)

    def _translated(
        self,
        tree,
        words: Sequence[str] = (),
        typed: bool = True,
        *,
        best: list[str] | None = None,
        filters=None,
        counting: bool = False,
    ) -> dict | None:
        """``tree`` as Query DSL scored as on the embedded engine: the fuzzy
        words' expansions and the document frequencies of its terms, from
        :attr:`known` or counted first (one request each when some are
        missing). ``typed`` false: an OR fallback of relaxing, whose words
        keep their BM25F terms. A proximity query's bonus goes to its
        child's best hits within ``filters``: ``best``, or found here (one
        request); ``counting``: a query only to count with (every hit's bonus)."""
        if tree is None:
            return None
        stats = Statistics(expansions=self._fuzzy_expansions(tree), known=self.known)
        stats.prefixes = self._prefix_terms(tree)
        stats.weights = repeated_weights(tree, list(words))
        stats.typed_or = typed
        to_dsl(tree, stats)
        if stats.missing:
            self._count(stats)
        if not counting:
            base = base_query(tree, stats)
            if base is not None:
                stats.best = best if best is not None else self._best(base, filters or Filters())
        return to_dsl(tree, stats)

    def _prefix_terms(self, tree) -> dict:
        """See :func:`.expansion.prefix_terms`."""
        from searchengine.engines.opensearch.expansion import prefix_terms

        return prefix_terms(self, tree)

    def _fuzzy_expansions(self, tree) -> dict:
        """See :func:`.expansion.fuzzy_expansions`."""
        from searchengine.engines.opensearch.expansion import fuzzy_expansions

        return fuzzy_expansions(self, tree)

    def relax(self, parsed, matches: Matches) -> Matches | None:
        """Any one of the query's words, within the same filters, when that
        matches something; counted within the deadline of ``matches``."""
        found = querylang.relaxed(parsed)
        if found is None:
            return None
        wanted: dict = {}
        alternatives = self._split(found, wanted)
        if wanted:
            self.fetch(wanted)
            alternatives = self._split(found, {})
        relaxed = Matches(
            alternatives,
            self._translated(alternatives, typed=False, counting=True),
            matches.filters,
            0,
            cut=matches.cut,
        )
        relaxed.deadline = matches.deadline
        self._counted(relaxed, matches.deadline)
        if not relaxed.total:
            return None
        relaxed.query = self._translated(alternatives, typed=False, filters=matches.filters)
        return relaxed

    def has_vectors(self) -> bool:
        """Whether the index keeps record vectors (semantic and hybrid modes)."""
        return self.engine.has_vectors()

    def semantic(self, matches: Matches, vector, mode: str, open_query: bool, weight: float = 0.5) -> Matches:
        """See :func:`.knn.rank_by_meaning`."""
        from searchengine.engines.opensearch.knn import rank_by_meaning

        return rank_by_meaning(self, matches, vector, mode, open_query, weight)

    def describe(self, matches: Matches) -> str:
        """The query as sent, compact Query DSL JSON."""
        return json.dumps(matches.full_query(), ensure_ascii=False, separators=(",", ":"))

    def feedback_applies(self, matches: Matches) -> bool:
        """Whether pseudo-relevance feedback re-ranks this query: a long
        question (a ``MinMatch`` of at least ``FEEDBACK_MIN_TERMS`` words), as
        on the embedded engine."""
        from searchengine.ranking import FEEDBACK_MIN_TERMS, FEEDBACK_WEIGHT

        return (
            matches.query is not None
            and FEEDBACK_WEIGHT > 0
            and _question_terms(matches.tree) >= FEEDBACK_MIN_TERMS
            and not _excludes(matches.tree)
        )

    def rerank(self, matches: Matches) -> None:
        """Re-rank the best hits of ``matches`` by feedback from them, as the
        embedded engine does (:mod:`searchengine.feedback`): the
        ``FEEDBACK_DEPTH`` best hits are read, the relevance model of the
        ``FEEDBACK_DOCS`` best is made by the product's analyzer, and each of
        its terms' BM25F scores, weighted, is added to the first scores of
        those hits (three requests). The order of :meth:`window` then follows
        :attr:`Matches.reranked` for those hits."""
        from searchengine import feedback
        from searchengine.engines.opensearch.terms import term_counts
        from searchengine.ranking import FEEDBACK_DEPTH, FEEDBACK_DOCS, FEEDBACK_TERMS, FEEDBACK_WEIGHT

        body = {
            "query": matches.full_query(),
            "size": FEEDBACK_DEPTH,
            "sort": RELEVANCE_SORT,
            "track_scores": True,
            "track_total_hits": False,
            "_source": {"includes": ["title", "abstract", "year", "id"]},
            "timeout": _timeout(matches.deadline),
        }
        top = self._search("find the best hits", body, search_type=SEARCH_TYPE)["hits"]["hits"]
        ranked = [(hit["_id"], float(hit.get("_score") or 0.0)) for hit in top]
        if not feedback.clear_lead(ranked):
            return
        documents = [
            (term_counts(hit["_source"].get("title") or "", hit["_source"].get("abstract") or ""), score)
            for hit, (_, score) in zip(top[:FEEDBACK_DOCS], ranked)
        ]
        model = feedback.relevance_model(documents, FEEDBACK_TERMS)
        if not model:
            return
        weight = FEEDBACK_WEIGHT * _question_terms(matches.tree)
        stats = Statistics()
        expansion = [expansion_term(term, weight * probability, stats) for term, probability in model]
        self._count(stats)
        expansion = [expansion_term(term, weight * probability, stats) for term, probability in model]
        ids = [doc for doc, _ in ranked]
        found = self._search(
            "re-rank the best hits",
            {
                "query": {"bool": {"filter": [{"ids": {"values": ids}}], "should": expansion}},
                "size": len(ids),
                "_source": False,
                "track_total_hits": False,
            },
            search_type=SEARCH_TYPE,
        )
        extra = {hit["_id"]: float(hit.get("_score") or 0.0) for hit in found["hits"]["hits"]}
        years = {hit["_id"]: hit["_source"].get("year") for hit in top}
        rescored = [(doc, score + extra.get(doc, 0.0)) for doc, score in ranked]
        # Ties as the relevance order breaks them: newest year, then the larger id.
        rescored.sort(key=lambda item: (item[1], years.get(item[0]) or -1, item[0]), reverse=True)
        matches.reranked = rescored

    def _count(self, stats: Statistics) -> None:
        """Count what ``stats`` lacks, in one request with the index's
        generation (:meth:`fetch`): the documents, each missing term's
        documents and the text fields' average lengths; ``stats`` then
        reads what :attr:`known` holds."""
        wanted = {key: query for key, query in stats.missing.items() if not _is_average(key)}
        self.fetch(wanted)
        known = self.known
        stats.total, stats.frequencies, stats.averages = known.total, known.frequencies, known.averages
        stats.missing = {}

    @staticmethod
    def window_key(item: dict) -> str:
        """The document of one :meth:`window` item (its id), to tell two windows' hits apart."""
        return item["_id"]

    def window(self, matches: Matches, sort: str, start: int, limit: int, deadline: float) -> tuple[list[dict], bool]:
        """The raw hits ``start .. start+limit`` in ``sort`` order, and
        whether the cluster's time limit cut the search short."""
        ranked = sort == "relevance" and matches.query is not None
        if ranked and matches.reranked and start < len(matches.reranked):
            return self._reranked_window(matches, start, limit, deadline)
        body = {
            "query": matches.full_query(),
            "from": start,
            "size": limit,
            "sort": RELEVANCE_SORT if ranked else _SORTS["newest" if sort == "relevance" else sort],
            "track_scores": matches.query is not None,
            "_source": {"excludes": [VECTOR_FIELD, "content_key"]},
            "track_total_hits": False,
            "timeout": _timeout(deadline),
        }
        if matches.fusion is not None:  # each hit's cosine, for its score's parts (explain)
            cosine = f"Math.max(cosineSimilarity(params.vector, doc['{VECTOR_FIELD}']), 0.0)"
            body["script_fields"] = {
                "meaning": {"script": {"source": cosine, "params": {"vector": matches.fusion["vector"]}}}
            }
        found = self._search("search", body, search_type=SEARCH_TYPE)
        if found.get(CUT_SHARDS):
            # Shards out of time gave no hits at all: papers may be missing, not just reordered.
            matches.cut = True
        return found["hits"]["hits"], bool(found.get("timed_out"))

    def explain(self, matches: Matches, window: list[dict]) -> list[tuple[float, float]]:
        """The keyword and meaning parts of each hybrid hit's score: the meaning
        part from its cosine (the window's script field), the keyword part the rest."""
        fusion = matches.fusion
        parts = []
        for raw in window:
            score = float(raw.get("_score") or 0.0)
            if fusion is None:
                parts.append((score, 0.0))
                continue
            cosine = float((raw.get("fields") or {}).get("meaning", [0.0])[0])
            top = fusion["top_meaning"]
            meaning = fusion["weight"] * cosine / top if top > 0 else 0.0
            parts.append((max(score - meaning, 0.0), meaning))
        return parts

    def _reranked_window(self, matches: Matches, start: int, limit: int, deadline: float) -> tuple[list[dict], bool]:
        """A page that starts among the hits feedback re-ranked: those in their
        new order, then (past them) the others in the first order, which they
        all stay above (they only gained)."""
        reranked = matches.reranked or []
        page = reranked[start : start + limit]
        found = self._search(
            "read the best hits",
            {
                "query": {"ids": {"values": [doc for doc, _ in page]}},
                "size": len(page),
                "track_total_hits": False,
                "_source": {"excludes": [VECTOR_FIELD, "content_key"]},
            },
        )
        by_id = {hit["_id"]: hit for hit in found["hits"]["hits"]}
        window = [{**by_id[doc], "_score": score} for doc, score in page if doc in by_id]
        timed_out = False
        if start + limit > len(reranked):
            rest, timed_out = self.window(
                Matches(matches.tree, matches.query, matches.filters, matches.total),
                "relevance",
                len(reranked),
                start + limit - len(reranked),
                deadline,
            )
            window.extend(rest)
        return window, timed_out

    def hits(self, query, window: list[dict], with_snippets: bool = True) -> list[Hit]:
        """:class:`~searchengine.results.Hit` s of raw hits, with the snippets
        the embedded engine makes of them: the terms ``query`` asks for
        (:func:`.querying.marked_terms`) marked in the title and abstract as
        the product's analyzer reads them (:func:`.terms.snippet_parts`)."""
        marked = marked_terms(query) if with_snippets and query is not None else None
        hits = []
        for raw in window:
            record = record_from_source(raw["_source"])
            score = float(raw.get("_score") or 0.0)
            if not with_snippets:
                hits.append(Hit.from_record(record, score))
                continue
            if marked is None:
                hits.append(Hit.from_record(record, score, lead_snippet(record.abstract), [], []))
                continue
            snippet, title = snippet_parts(record, marked)
            hits.append(Hit.from_record(record, score, snippet.text, snippet.matches, title))
        return hits

    def facets(self, matches: Matches, filters, names, size: int) -> dict:
        """``{name: FacetCounts}``, each facet under ``filters.for_facet(name)`` (one request)."""
        if not names:
            return {}
        aggs = {}
        for name in names:
            fields = facet_fields(facet(name))
            fieldname = fields["primary"] if "primary" in fields and filters.primary_only else fields["count"]
            order = [{"_key": "desc"}] if facet(name).by_value else [{"_count": "desc"}, {"_key": "asc"}]
            aggs[name] = {
                "filter": with_filters(None, filter_clauses(filters.for_facet(name))),
                "aggs": {
                    "values": {"terms": {"field": fieldname, "size": size, "order": order}},
                    "distinct": {"cardinality": {"field": fieldname, "precision_threshold": 40000}},
                    "unknown": {"missing": {"field": fieldname}},
                },
            }
        body = {"query": matches.query or {"match_all": {}}, "size": 0, "aggs": aggs}
        found = self._search("count facets", body)["aggregations"]
        counted = {}
        for name in names:
            part = found[name]
            listed = [
                FacetValue(bucket["key"], bucket["doc_count"], filters.selects(name, bucket["key"]))
                for bucket in part["values"]["buckets"]
            ]
            unknown = part["unknown"]["doc_count"]
            if unknown:
                listed.append(FacetValue(None, unknown, False))
            remaining = max(0, part["distinct"]["value"] - len(part["values"]["buckets"]))
            counted[name] = FacetCounts(listed, remaining)
        return counted

    def date_histogram(self, matches: Matches):
        """:class:`~searchengine.dates.DateHistogram` of the matches' submitted days:
        one request for their span, one ``date_histogram`` aggregation with the
        ``calendar_interval`` that span calls for (:func:`searchengine.dates.bin_unit`)."""
        from searchengine import dates

        query = matches.full_query()
        span = self._search(
            "find the dates' span",
            {
                "query": query,
                "size": 0,
                "aggs": {
                    "first": {"min": {"field": "submitted", "format": "strict_date"}},
                    "last": {"max": {"field": "submitted", "format": "strict_date"}},
                    "dated": {"value_count": {"field": "submitted"}},
                },
            },
        )["aggregations"]
        undated = matches.total - int(span["dated"]["value"])
        if not span["dated"]["value"]:
            return dates.DateHistogram(None, [], undated)
        first, last = (dates.from_iso(span[end]["value_as_string"]) for end in ("first", "last"))
        assert first is not None and last is not None  # (dated papers have both ends)
        unit = dates.bin_unit(first, last)
        found = self._search(
            "count dates",
            {
                "query": query,
                "size": 0,
                "aggs": {
                    "bins": {
                        "date_histogram": {
                            "field": "submitted",
                            "calendar_interval": unit,
                            "format": "strict_date",
                            "min_doc_count": 1,
                        }
                    }
                },
            },
        )
        binned = {
            day: b["doc_count"]
            for b in found["aggregations"]["bins"]["buckets"]
            if (day := dates.from_iso(b["key_as_string"])) is not None  # (every bin has its day)
        }
        return dates.DateHistogram(unit, dates.fill(binned, unit), undated)

    def lexicon(self):
        """The words of the titles and abstracts (:class:`.lexicon.ClusterLexicon`)."""
        from searchengine.engines.opensearch.lexicon import ClusterLexicon

        return ClusterLexicon(self)

    def corrections(self, matches: Matches):
        """Hits of candidate corrections within ``matches``' filters (:class:`.lexicon.ClusterCorrections`)."""
        from searchengine.engines.opensearch.lexicon import ClusterCorrections

        return ClusterCorrections(self, matches.filters)

    def document(self, record_id: str) -> Record | None:
        """The record with that id (or its arXiv id, version or URL), or ``None``."""
        for candidate in dict.fromkeys(filter(None, (record_id.strip(), arxiv_id(record_id)))):
            found = self._search("read a record", {"query": {"term": {"id": candidate}}, "size": 1})
            hits = found["hits"]["hits"]
            if hits:
                return record_from_source(hits[0]["_source"])
        return None

    def records(self) -> Iterator[Record]:
        """Every record, in id order (``search_after`` pages of 1,000)."""
        after = None
        while True:
            body = {"query": {"match_all": {}}, "size": 1000, "sort": [{"id": "asc"}]}
            if after is not None:
                body["search_after"] = after
            hits = self._search("read records", body)["hits"]["hits"]
            if not hits:
                return
            for raw in hits:
                yield record_from_source(raw["_source"])
            after = hits[-1]["sort"]

    def similar(self, records: list[Record], limit: int) -> tuple[int, list[Hit], str]:
        """See :func:`.expansion.similar_papers`."""
        from searchengine.engines.opensearch.expansion import similar_papers

        return similar_papers(self, records, limit)

    def warm_up(self, seconds: float) -> None:
        """Learn the cluster's nodes (:meth:`.engine.OpenSearchEngine.learn_nodes`),
        so that a server given one node's address goes on when that node goes
        down; nothing to load otherwise (the cluster keeps its own caches). A
        cluster that refuses to list its nodes (a user without the right) is
        served as it is."""
        try:
            self.engine.learn_nodes()
        except SearchEngineError:
            pass


def _excludes(tree) -> bool:
    """Whether a long question excludes a word (``-2`` in ``E2f-1, -2, -3``):
    the embedded engine's scorer leaves such a question to Whoosh's own
    matchers, which feedback does not re-rank."""
    from searchengine.querylang import tree as t

    node = tree.child if isinstance(tree, t.Proximity) else tree
    return isinstance(node, t.MinMatch) and any(isinstance(child, t.Not) for child in node.children)


def _question_terms(tree) -> int:
    """Number of words of a long question (a ``MinMatch`` at the top of
    ``tree`` or under its ``Proximity``); 0 for any other query."""
    from searchengine.querylang import tree as t

    node = tree.child if isinstance(tree, t.Proximity) else tree
    return len(node.children) if isinstance(node, t.MinMatch) else 0


# A search's timeout is at least this many milliseconds: a shard out of time
# before it has read anything fails the whole search rather than answer in part.
MIN_TIMEOUT_MS = 100


def _timeout(deadline: float) -> str:
    """The time left before ``deadline`` (``time.monotonic()``) as a search
    ``timeout``, at least :data:`MIN_TIMEOUT_MS`."""
    return f"{max(int((deadline - time.monotonic()) * 1000), MIN_TIMEOUT_MS)}ms"
