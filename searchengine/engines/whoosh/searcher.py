"""The embedded engine's searcher: one Whoosh generation, searched in this process.

:class:`WhooshSearcher` is the engine's view of one generation (made and held
by :class:`~searchengine.engines.whoosh.engine.WhooshEngine`): it matches a
parsed query within filters, ranks or sorts a page of hits, ranks by meaning,
counts facets and writes snippets, and returns engine-free shapes
(:class:`~searchengine.results.Hit`, :class:`~searchengine.facets.FacetCounts`,
:class:`~searchengine.records.Record`).
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from searchengine.analysis import snippets
from searchengine.engines.whoosh.snippets import query_terms
from searchengine.records import LINK_FIELDS, Record, arxiv_id
from searchengine.results import Hit

if TYPE_CHECKING:
    from searchengine.engines.whoosh.clock import MatchClock

# Ranked candidates up to this many are put in tie order from their stored
# fields; more, from the facet columns.
TIE_STORED_LIMIT = 300
# The stored fields of this many documents are kept per generation (about
# 2 KB each), then the kept ones start over.
STORED_KEPT = 1000


def record_from_stored(stored: dict) -> Record:
    """The :class:`Record` a document's stored fields hold (the one converter)."""
    links: dict[str, Any] = {name: stored.get(name) or "" for name in LINK_FIELDS}
    return Record(
        id=stored["id"],
        title=stored.get("title", ""),
        abstract=stored.get("abstract", ""),
        authors=list(stored.get("authors") or []),
        year=stored.get("year"),
        categories=list(stored.get("categories") or []),
        url=stored.get("url", ""),
        source=stored.get("source", ""),
        version=stored.get("version"),
        **_dates(stored.get("dates")),
        # --- links and identifiers ---
        **links,
    )


def _dates(stored: dict | None) -> dict[str, Any]:
    """The Record's date fields from the ``dates`` stored field (absent: none known)."""
    from searchengine.dates import from_iso

    if not stored:
        return {}
    versions = [(int(n), day) for n, text in stored.get("versions") or [] if (day := from_iso(text))]
    return {
        "submitted": from_iso(stored.get("submitted")),
        "updated": from_iso(stored.get("updated")),
        "versions": versions,
        "tex": dict(stored.get("tex") or {}),  # the title's and abstract's TeX, kept with the dates
    }


@dataclass
class Matches:
    """What a query matched in one generation, within the filters.

    Attributes:
        query: the Whoosh query searched (wildcards expanded), ``None`` for
            no query text (every document passing the filters).
        restrict: the Whoosh query of the filters, ``None`` when none.
        scores: ``{docnum: score}`` of every match when the fast scorer
            (:func:`searchengine.engines.whoosh.evaluate.score_documents`)
            could compute them (a dict, or a
            :class:`~searchengine.engines.whoosh.combine.ScoredDocs` for
            many matches), else ``None``.
        docnums: ascending document numbers of every match.
        clock: the deadline of matching and scoring
            (:class:`~searchengine.engines.whoosh.clock.MatchClock`), which
            notes what it cut short.
        expansions: the prefix, wildcard and fuzzy expansions made for this
            search (see :func:`~searchengine.engines.whoosh.expansion.expand_wildcards`),
            reused by its OR fallback.
        meaning: for matches ranked by meaning (:meth:`WhooshSearcher.semantic`),
            what they were made from: ``(keyword matches, query vector, mode,
            open query)``, so facets can be counted under other filters the same way.
    """

    query: object
    restrict: object
    scores: Mapping[int, float] | None
    docnums: list[int]
    clock: MatchClock | None = None
    expansions: dict = field(default_factory=dict)
    meaning: tuple | None = None
    #: Hybrid matches: ``(docnums, keyword parts, meaning parts)``, arrays in docnum order.
    parts: tuple | None = None

    @property
    def cut(self) -> bool:
        """Whether the deadline cut matching short (papers may be missing)."""
        return self.clock is not None and self.clock.cut

    @property
    def approximate(self) -> bool:
        """Whether the deadline cut the proximity bonus short (the order is approximate)."""
        return self.clock is not None and self.clock.approximate

    @property
    def total(self) -> int:
        """Number of documents matched."""
        return len(self.docnums)


class WhooshSearcher:
    """One generation of the embedded index, searched by one call at a time.

    Built by :class:`WhooshEngine`; every method reads the same generation.
    """

    def __init__(self, searcher, cache) -> None:
        self.searcher = searcher  # whoosh.searching.Searcher
        self.cache = cache  # facetcolumns.SearcherCache of that searcher
        self._last_filter: tuple[object, list[int]] | None = None  # (filter query, its docnums): see _filtered
        self._kept_stored: dict[int, dict] = {}  # see _stored
        self._written: list[str] | None = None  # see _written_words
        self._vectors = None  # see vectors

    # --- matching --------------------------------------------------------------

    def doc_count(self) -> int:
        """Number of documents in this generation."""
        return self.searcher.doc_count()

    def parse(self, text: str, *, allow_empty: bool = False, frequencies=None):
        """``text`` in the query language → :class:`~searchengine.engines.whoosh.querying.WhooshParsedQuery`.

        Raises:
            QueryError: naming the part that cannot be understood.
        """
        from searchengine.engines.whoosh import querying as querylang

        return querylang.parse(text, self.searcher.schema, allow_empty=allow_empty, frequencies=frequencies)

    def match(self, parsed, filters, deadline: float, notes: list[str]) -> Matches:
        """Every document matching ``parsed`` (its query may be ``None``) and ``filters``.

        ``deadline`` (a ``time.monotonic()`` value) stops reading positions
        (phrases, compounds, proximity), checking quoted phrases against the
        stored text and combining alternatives; :attr:`Matches.cut` and
        :attr:`Matches.approximate` then say so. Notes about capped prefixes
        are added to ``notes``.
        """
        from searchengine.engines.whoosh import expansion, queries
        from searchengine.engines.whoosh import querying as querylang
        from searchengine.engines.whoosh.clock import MatchClock
        from searchengine.engines.whoosh.evaluate import score_documents

        clock = MatchClock(deadline)
        wanted = None
        expansions: dict = {}
        if parsed.query is not None:
            wanted = expansion.expand_wildcards(
                parsed.query, self.searcher.reader(), notes, clock, expansions, self._vocabulary, self._written_words
            )
            wanted = expansion.split_joined(wanted, self.searcher.reader())
            wanted = querylang.weigh_repeated(wanted, parsed.words, self.searcher.schema)
            queries.time_phrases(wanted, clock)
        restrict = querylang.filter_query(filters, self.cache)
        scores = score_documents(wanted, self.searcher, clock=clock) if wanted is not None else None
        return Matches(wanted, restrict, scores, self._matching(wanted, scores, restrict), clock, expansions)

    def relax(self, parsed, matches: Matches) -> Matches | None:
        """The OR form of ``parsed`` within the same filters, when it matches
        something; ``None`` when it has no OR form or matches nothing. It
        shares the deadline of ``matches``."""
        from searchengine.engines.whoosh import expansion
        from searchengine.engines.whoosh import querying as querylang
        from searchengine.engines.whoosh.evaluate import score_documents

        fallback = querylang.relaxed(parsed, self.searcher.schema)
        if fallback is None:
            return None
        fallback = expansion.expand_wildcards(
            fallback,
            self.searcher.reader(),
            [],
            matches.clock,
            matches.expansions,
            self._vocabulary,
            self._written_words,
        )
        fallback = expansion.split_joined(fallback, self.searcher.reader())
        scores = score_documents(fallback, self.searcher, clock=matches.clock)
        found = self._matching(fallback, scores, matches.restrict)
        return Matches(fallback, matches.restrict, scores, found, matches.clock, matches.expansions) if found else None

    def _matching(self, wanted, scores: Mapping[int, float] | None, restrict) -> list[int]:
        """Ascending document numbers matching ``wanted`` (``None``: every
        document) and the filter query ``restrict`` (``None``: no filter).

        ``scores``, when known, are ``wanted``'s matches already, so only the
        filter is evaluated.
        """
        from searchengine.engines.whoosh.combine import ScoredDocs, ascending

        if restrict is None:
            if scores is not None:
                return ascending(scores)
            from whoosh.query import Every

            return self.cache.docnums(wanted or Every())
        if scores is None:
            # Whoosh's own matchers (phrases, ranges) may skip what the filter excludes.
            return list(self._filtered(restrict)) if wanted is None else self.cache.docnums(_both(wanted, restrict))
        if isinstance(scores, ScoredDocs):
            return scores.within(self._filtered(restrict))
        return [docnum for docnum in self._filtered(restrict) if docnum in scores]

    def _vocabulary(self, fieldname: str) -> list[str] | None:
        """A field's distinct terms as the column file holds them (fuzzy words)."""
        return self.cache.columns().vocabulary(fieldname)

    def _written_words(self) -> list[str]:
        """Every word titles and abstracts hold as written (folded), sorted: what
        fuzzy words are compared with; read from the column file once per generation."""
        if self._written is None:
            self._written = self.cache.columns().spelling_words()
        return self._written

    def _filtered(self, restrict) -> list[int]:
        """The ascending document numbers passing the filter query ``restrict``,
        kept for the next call with the same query object: one search counts
        within its filters many times (OR fallback, unmatched words,
        did-you-mean), and a year range costs a pass over the year postings."""
        last = self._last_filter
        if last is None or last[0] is not restrict:
            last = self._last_filter = (restrict, self.cache.docnums(restrict))
        return last[1]

    def describe(self, matches: Matches) -> str:
        """The query as understood, in Whoosh's notation (the ``parsed`` of results)."""
        return str(_both(matches.query, matches.restrict))

    # --- feedback --------------------------------------------------------------

    def feedback_applies(self, matches: Matches) -> bool:
        """Whether pseudo-relevance feedback re-ranks this query (a long question)."""
        from searchengine.engines.whoosh import feedback

        return matches.scores is not None and feedback.applies(matches.query)

    def rerank(self, matches: Matches) -> None:
        """Re-rank ``matches`` by feedback from its best hits (:mod:`.feedback`), in place."""
        from searchengine.engines.whoosh import feedback

        if matches.scores is None:  # nothing to re-rank (feedback_applies says so)
            return
        allowed = set(matches.docnums) if matches.restrict is not None else None
        matches.scores = feedback.rerank(self.searcher, matches.query, matches.scores, allowed)

    # --- meaning -----------------------------------------------------------------

    def has_vectors(self) -> bool:
        """Whether this generation keeps record vectors (semantic and hybrid modes)."""
        from searchengine.engines.whoosh.vectors import has_vectors

        return self.cache.folder is not None and has_vectors(self.cache.folder)

    def vectors(self):
        """The generation's :class:`~searchengine.engines.whoosh.vectors.GenerationVectors`
        (mapped on first use).

        Raises:
            IndexDamagedError: the vector files do not fit the generation.
        """
        if self._vectors is None:
            from searchengine.engines.whoosh.vectors import GenerationVectors

            self._vectors = GenerationVectors(self.cache.folder, self.searcher.doc_count_all())
        return self._vectors

    def semantic(self, matches: Matches, vector, mode: str, open_query: bool, weight: float = 0.5) -> Matches:
        """``matches`` ranked by meaning: ``mode`` ``"semantic"`` (cosine similarity
        to ``vector``, a unit float32 ``(384,)``) or ``"hybrid"`` (fused with
        the keyword scores, :func:`searchengine.semantic.fusion.fuse`).

        With ``open_query`` (plain words), the papers nearest to ``vector``
        within the filters join: the :data:`~searchengine.limits.MAX_DEPTH`
        nearest replace the keyword matches in semantic mode, the
        :data:`~searchengine.ranking.HYBRID_NEAREST` nearest are added in
        hybrid mode. Otherwise the keyword matches are kept and re-ranked.
        """
        import numpy as np

        from searchengine.engines.whoosh.combine import ScoredDocs
        from searchengine.limits import MAX_DEPTH
        from searchengine.ranking import HYBRID_NEAREST
        from searchengine.semantic.fusion import fuse_parts

        store = self.vectors()
        docs = np.asarray(matches.docnums, dtype=np.int64)
        nearest = np.zeros(0, dtype=np.int64)
        pool = None
        if open_query and matches.restrict is not None:
            pool = np.asarray(self._filtered(matches.restrict), dtype=np.int64)
        every = None
        if not store.by_slices and store.graph is None:
            # One product with every row (a few ms for 75,000 records) costs less
            # than gathering the rows of many candidates first.
            every = store.similarities(vector)
        if open_query:
            # Exact, or from the graph past ann.ANN_MIN documents (see vectors.GenerationVectors.nearest).
            wanted = MAX_DEPTH if mode == "semantic" else HYBRID_NEAREST
            nearest = np.sort(store.nearest(vector, wanted, pool, every=every)[0])

        def similarity(chosen):
            return every[chosen] if every is not None else store.similarities(vector, chosen)

        made = (matches, vector, mode, open_query)
        if mode == "semantic":
            chosen = nearest if open_query else docs
            return Matches(
                matches.query,
                matches.restrict,
                ScoredDocs(chosen, similarity(chosen).astype(np.float64)),
                chosen.tolist(),
                matches.clock,
                matches.expansions,
                made,
            )
        # The nearest that are no keyword match, put in place (numpy's union1d
        # hashes every match: 12 ms for 60,000 of them).
        at = np.searchsorted(docs, nearest)
        extra = np.ones(len(nearest), dtype=bool)
        inside = at < len(docs)
        extra[inside] = docs[at[inside]] != nearest[inside]
        chosen = np.insert(docs, at[extra], nearest[extra])
        lexical = np.insert(self._keyword_scores(matches, docs), at[extra], 0.0)
        keyword, meaning = fuse_parts(lexical, similarity(chosen), 1.0 - weight)
        return Matches(
            matches.query,
            matches.restrict,
            ScoredDocs(chosen, keyword + meaning),
            chosen.tolist(),
            matches.clock,
            matches.expansions,
            made,
            (chosen, keyword, meaning),
        )

    def explain(self, matches: Matches, window: list[tuple[int, float]]) -> list[tuple[float, float]]:
        """The keyword and meaning parts of each hybrid hit's score (see :class:`Matches`' ``parts``)."""
        import numpy as np

        if matches.parts is None:
            return [(float(score), 0.0) for _, score in window]
        docs, keyword, meaning = matches.parts
        at = np.searchsorted(docs, [docnum for docnum, _ in window])
        return [(float(keyword[i]), float(meaning[i])) for i in at.tolist()]

    def _keyword_scores(self, matches: Matches, docs):
        """BM25F scores of ``docs`` (the matches' ascending docnums, an int
        array). Without the fast scorer's scores, the
        :data:`~searchengine.limits.MAX_DEPTH` best are scored and the rest count 0."""
        import numpy as np

        from searchengine.engines.whoosh.combine import ScoredDocs
        from searchengine.limits import MAX_DEPTH

        scores = matches.scores
        if isinstance(scores, ScoredDocs):
            return scores.scores[np.searchsorted(scores.docs, docs)]
        if scores is not None:
            return np.fromiter((scores[d] for d in docs.tolist()), dtype=np.float64, count=len(docs))
        found = np.zeros(len(docs), dtype=np.float64)
        if matches.query is None or not len(docs):
            return found
        allowed = set(matches.docnums) if matches.restrict is not None else None
        deadline = matches.clock.deadline if matches.clock is not None else time.monotonic() + 1.0
        ranked, _ = self._ranked_window(matches, allowed, 0, MAX_DEPTH, deadline)
        if ranked:
            where = np.searchsorted(docs, np.fromiter((d for d, _ in ranked), dtype=np.int64, count=len(ranked)))
            found[where] = [score for _, score in ranked]
        return found

    # --- a page of hits ------------------------------------------------------------

    @staticmethod
    def window_key(item: tuple[int, float]) -> int:
        """The document of one :meth:`window` item (its number), to tell two windows' hits apart."""
        return item[0]

    def window(
        self, matches: Matches, sort: str, start: int, limit: int, deadline: float
    ) -> tuple[list[tuple[int, float]], bool]:
        """``(docnum, score)`` of hits ``start .. start+limit`` in ``sort`` order,
        and whether the ``deadline`` cut the ranking short.

        ``relevance`` (with query text) orders by score, ties by year (newest
        first, unknown last) then id (descending); the other orders (and
        relevance without query text, which is ``newest``) come from the
        sort columns.
        """
        if sort == "relevance" and matches.query is not None:
            allowed = set(matches.docnums) if matches.restrict is not None else None
            return self._ranked_window(matches, allowed, start, limit, deadline)
        docs = self.cache.columns().sorted_docnums(
            matches.docnums, "newest" if sort == "relevance" else sort, start, start + limit
        )
        scores = matches.scores
        if matches.query is not None and scores is None:
            scores = self._window_scores(matches.query, docs)
        return [(docnum, (scores or {}).get(docnum, 0.0)) for docnum in docs], False

    def _ranked_window(
        self, matches: Matches, allowed: set[int] | None, start: int, limit: int, deadline: float
    ) -> tuple[list[tuple[int, float]], bool]:
        """Hits ``start .. start+limit`` by score (see :meth:`window`).

        With the fast scorer's scores, every document scoring at least the
        window's last score is a candidate. Otherwise Whoosh's collector ranks,
        and its top list is widened until the last fetched score is below the
        window's last score, so that every document tied with a hit in the
        window is known.
        """
        from searchengine.engines.whoosh.combine import ScoredDocs

        end = start + limit
        scores = matches.scores
        if isinstance(scores, ScoredDocs):
            kept = scores if allowed is None else scores.restricted(allowed)
            if not kept:
                return [], False
            # Every document scoring at least the last shown one: the page's
            # ties are all known, and ordered by year and id below.
            return self._tie_order(kept.at_least(kept.kth_score(end)))[start:end], False
        if scores is not None:
            pairs = list(scores.items()) if allowed is None else [(d, s) for d, s in scores.items() if d in allowed]
            if not pairs:
                return [], False
            top = heapq.nlargest(end, pairs, key=lambda item: item[1])
            cut = top[-1][1]
            candidates = [pair for pair in pairs if pair[1] >= cut]
            return self._tie_order(candidates)[start:end], False

        from whoosh import collectors

        searcher = self.searcher
        fetch = end + 1  # one more than shown, to see whether a tie goes on
        while True:
            collector = collectors.TimeLimitCollector(
                searcher.collector(limit=fetch, filter=allowed),
                timelimit=max(deadline - time.monotonic(), 0.001),
                use_alarm=False,
            )
            try:
                searcher.search_with_collector(matches.query, collector)
                timed_out = False
            except collectors.TimeLimit:
                timed_out = True
            results = collector.results()
            scored = results.scored_length()
            # A scored search: every hit has a score (Results.score is None only when unscored).
            score = cast("Callable[[int], float]", results.score)
            if timed_out or scored < fetch or score(fetch - 1) < score(end - 1):
                break
            fetch *= 2
        pairs = [(results.docnum(i), score(i)) for i in range(scored)]
        return self._tie_order(pairs)[start:end], timed_out

    def _tie_order(self, pairs: list[tuple[int, float]]) -> list[tuple[int, float]]:
        """``(docnum, score)`` pairs by score, ties by year (newest first, unknown
        last) then id (descending).

        A few candidates are keyed from their stored fields; many (a page
        deep into equal scores) from the facet columns, which cost a pass
        over the whole index the first time.
        """
        if len(pairs) > TIE_STORED_LIMIT:
            newest = self.cache.columns().ranks("newest", [docnum for docnum, _ in pairs])
            order = sorted(range(len(pairs)), key=lambda i: (-pairs[i][1], newest[i]))
            return [pairs[i] for i in order]
        keyed = []
        for docnum, score in pairs:
            stored = self._stored(docnum)
            keyed.append((docnum, score, stored.get("year"), stored.get("id", "")))
        keyed.sort(key=lambda k: k[3], reverse=True)  # stable sorts: id descending,
        keyed.sort(key=lambda k: (-k[1], k[2] is None, -(k[2] or 0)))  # then score, year
        return [(docnum, score) for docnum, score, _, _ in keyed]

    def _stored(self, docnum: int) -> dict:
        """The stored fields of ``docnum`` (read-only), the last
        :data:`STORED_KEPT` documents read kept: ordering a page's ties reads
        the documents its hits then read again."""
        kept = self._kept_stored
        stored = kept.get(docnum)
        if stored is None:
            if len(kept) >= STORED_KEPT:
                kept.clear()
            stored = kept[docnum] = self.searcher.stored_fields(docnum)
        return stored

    def _window_scores(self, wanted, window: list[int]) -> dict[int, float]:
        """Scores of the documents ``window`` for ``wanted`` (hits sorted by date or title)."""
        results = self.searcher.search(wanted, limit=None, filter=set(window))
        return {hit.docnum: hit.score for hit in results}

    def hits(self, query, window: list[tuple[int, float]], with_snippets: bool = True) -> list[Hit]:
        """Hits for the ``(docnum, score)`` pairs of a :meth:`window`, with snippets of the words ``query`` asks for.

        ``query`` is a Whoosh query (``None``: no snippet, the abstract's
        start); ``with_snippets=False`` leaves snippets and offsets empty.
        """
        terms = query_terms(query) if with_snippets and query is not None else {}
        analyzer = self.cache.snippet_analyzer()
        hits = []
        title: Sequence[tuple[int, int]]  # offsets of the title's matched words
        for docnum, score in window:
            record = record_from_stored(self._stored(docnum))
            if not with_snippets:
                snippet, title = snippets.Snippet(), ()
            elif query is None:
                snippet, title = snippets.lead(record.abstract), ()
            else:
                snippet = snippets.abstract_snippet(record.abstract, terms.get("abstract", frozenset()), analyzer)
                title = snippets.title_matches(record.title, terms.get("title", frozenset()), analyzer)
            hits.append(Hit.from_record(record, score, snippet.text, snippet.matches, list(title)))
        return hits

    # --- facets ------------------------------------------------------------------

    def facets(self, matches: Matches, filters, names, size: int) -> dict:
        """``{name: FacetCounts}`` for facets ``names`` (see :mod:`searchengine.facets`).

        Each facet is counted under :meth:`Filters.for_facet
        <searchengine.filters.Filters.for_facet>`: every filter but its own,
        so the values not chosen yet stay visible as choices to add (OR).
        """
        from searchengine.engines.whoosh import querying as querylang
        from searchengine.engines.whoosh.facetcolumns import count_facets

        counted: dict = {}
        if not names:
            return counted
        columns = self.cache.columns()
        for name in names:
            others = filters.for_facet(name)
            if others == filters:
                docnums = matches.docnums
            elif matches.meaning is not None:
                # Ranked by meaning: the same step again, under the other filters.
                keyword, vector, mode, open_query = matches.meaning
                restrict = querylang.filter_query(others, self.cache)
                widened = Matches(
                    keyword.query,
                    restrict,
                    keyword.scores,
                    self._matching(keyword.query, keyword.scores, restrict),
                    keyword.clock,
                    keyword.expansions,
                )
                docnums = self.semantic(widened, vector, mode, open_query).docnums
            else:
                docnums = self._matching(matches.query, matches.scores, querylang.filter_query(others, self.cache))
            counted.update(
                count_facets(
                    columns, docnums, [name], size=size, primary_only=filters.primary_only, selects=filters.selects
                )
            )
        return counted

    def date_histogram(self, matches: Matches):
        """:class:`~searchengine.dates.DateHistogram` of the matches' submitted days."""
        from searchengine import dates

        days = self.cache.columns().arrays["day"]
        counted = dates.days_of(map(days.__getitem__, matches.docnums))
        return dates.histogram(counted, matches.total - sum(counted.values()))

    # --- did-you-mean --------------------------------------------------------------

    def lexicon(self):
        """The words of the indexed titles and abstracts (:class:`.lexicon.Lexicon`)."""
        from searchengine.engines.whoosh.lexicon import Lexicon

        return Lexicon(self.searcher.reader(), self.cache.columns())

    def corrections(self, matches: Matches):
        """A :class:`Corrections` oracle: hits of candidate corrections within ``matches``' filters."""
        return Corrections(self, matches)

    # --- records ---------------------------------------------------------------------

    def document(self, record_id: str) -> Record | None:
        """The record with id ``record_id`` (an arXiv id with a version or an
        arXiv URL names its paper), or ``None``."""
        stored = self.searcher.document(id=record_id.strip())
        if stored is None and arxiv_id(record_id):
            stored = self.searcher.document(id=arxiv_id(record_id))
        return None if stored is None else record_from_stored(stored)

    def records(self) -> Iterator[Record]:
        """Every record of this generation, in document order."""
        for stored in self.searcher.all_stored_fields():
            yield record_from_stored(stored)

    def similar(self, records: list[Record], limit: int) -> tuple[int, list[Hit], str]:
        """Documents about the topic of ``records`` (one or several), those
        records excluded: ``(total, hits, parsed)``.

        With vectors (:meth:`has_vectors`): the documents nearest to the
        records' mean unit vector, by cosine similarity (``parsed`` is
        ``"vectors: ID ..."``; ``total`` counts the documents more similar
        than unrelated, cosine above 0, at most
        :data:`~searchengine.limits.MAX_DEPTH`). Without: more-like-this,
        the :data:`~searchengine.ranking.SIMILAR_TERMS` most informative terms of the records'
        titles and abstracts (Bo1 divergence from randomness weights,
        Amati 2003, as computed by Whoosh's ``classify.Expander``) searched
        in title and abstract as a weighted OR query, ranked by BM25F.
        """
        from whoosh import query as wq

        from searchengine.engines.whoosh.bm25f import bm25f_term
        from searchengine.ranking import SIMILAR_TERMS

        if self.has_vectors():
            return self._similar_by_meaning(records, limit)
        text = " ".join(f"{record.title} {record.abstract}" for record in records)
        terms = self.searcher.key_terms_from_text("abstract", text, numterms=SIMILAR_TERMS)
        if not terms:
            return 0, [], ""
        wanted = wq.Or(
            [bm25f_term([wq.Term("title", term), wq.Term("abstract", term)], boost=weight) for term, weight in terms]
        )
        mask = wq.Or([wq.Term("id", record.id) for record in records])
        # A few more than shown, so that papers of equal scores are cut as every relevance order breaks ties.
        results = self.searcher.search(wanted, limit=limit + 10, mask=mask)
        ranked = self._tie_order([(results.docnum(i), results.score(i)) for i in range(results.scored_length())])
        ranked = ranked[:limit]
        # Every paper holding a chosen term (the collector's count leaves out
        # papers in blocks it skipped while ranking).
        total = len(set(self.searcher.docs_for_query(wanted)) - set(self.searcher.docs_for_query(mask)))
        return total, self.hits(wanted, ranked, True), str(wanted)

    def _similar_by_meaning(self, records: list[Record], limit: int) -> tuple[int, list[Hit], str]:
        import numpy as np

        from searchengine.limits import MAX_DEPTH

        store = self.vectors()
        docnums = [d for d in (self.searcher.document_number(id=record.id) for record in records) if d is not None]
        if not docnums:
            return 0, [], ""
        centre = np.mean([store.vector(d) for d in docnums], axis=0)
        norm = float(np.linalg.norm(centre))
        if norm == 0:
            return 0, [], ""
        # The records themselves are among the nearest: asked for beyond the depth, then dropped.
        found, similarity = store.nearest(centre / norm, MAX_DEPTH + len(docnums))
        kept = ~np.isin(found, docnums)
        found, similarity = found[kept], similarity[kept]
        total = min(len(found), MAX_DEPTH)
        wanted = min(limit, total)
        best = np.argsort(-similarity, kind="stable")[:wanted]
        ranked = self._tie_order([(int(found[i]), float(similarity[i])) for i in best])
        return total, self.hits(None, ranked, True), "vectors: " + " ".join(record.id for record in records)

    def warm_up(self, seconds: float) -> None:
        """Read the spelling word lists and the postings of the most frequent
        words (at most ``seconds``; see :func:`.bm25f.warm_postings`), and
        load numpy, which queries of common words need (:mod:`.combine`)."""
        import numpy  # noqa: F401  (50 ms that the first such query would pay)

        from searchengine.engines.whoosh.bm25f import warm_postings

        self.lexicon().warm()
        warm_postings(self.searcher, seconds)


class Corrections:
    """Hits of candidate corrections of a query, within the query's filters.

    Did-you-mean (:mod:`searchengine.spelling`) asks it how many papers a
    corrected query finds and how often two corrected words stand together.
    """

    def __init__(self, searcher: WhooshSearcher, matches: Matches) -> None:
        self.searcher = searcher
        self.restrict = matches.restrict
        self.expansions = matches.expansions  # the query's own expansions, reused
        self._matches: dict[str, list[int]] = {}

    def _matching(self, text: str) -> list[int]:
        from searchengine.engines.whoosh import expansion
        from searchengine.engines.whoosh import querying as querylang
        from searchengine.engines.whoosh.evaluate import score_documents

        if text not in self._matches:
            searcher = self.searcher.searcher
            candidate = querylang.parse(text, searcher.schema)
            assert candidate.query is not None, "parse without allow_empty gives a query or raises QueryError"
            wanted = expansion.expand_wildcards(
                candidate.query,
                searcher.reader(),
                [],
                None,
                self.expansions,
                self.searcher._vocabulary,
                self.searcher._written_words,
            )
            self._matches[text] = self.searcher._matching(wanted, score_documents(wanted, searcher), self.restrict)
        return self._matches[text]

    def hits(self, text: str) -> int:
        """Number of papers the query ``text`` finds within the filters.

        Raises:
            QueryError: ``text`` cannot be parsed.
        """
        return len(self._matching(text))

    def phrase_share(self, phrase: str, text: str, sample: int) -> float:
        """The share (0 to 1) of a sample of ``sample`` hits of ``text`` that
        hold the quoted ``phrase``."""
        from searchengine.engines.whoosh import querying as querylang
        from searchengine.engines.whoosh.evaluate import score_documents

        # A sample of consecutive documents: positions are read from few blocks.
        chosen = set(self._matching(text)[:sample])
        if not chosen:
            return 0.0
        searcher = self.searcher.searcher
        found = score_documents(querylang.parse(phrase, searcher.schema).query, searcher, chosen)
        return 0.0 if found is None else len(found.keys() & chosen) / len(chosen)


def _both(query, restrict):
    """``query AND restrict``, either of which may be ``None``."""
    if query is None or restrict is None:
        return query if query is not None else restrict
    from whoosh.query import And

    return And([query, restrict])
