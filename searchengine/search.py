"""The search API that the CLI and the web front end share.

    >>> index = open_index("index")
    >>> results = index.search("SpMV GPU", limit=5)
    >>> results.to_dict()["hits"][0]["title"]

:class:`SearchResults` is the one shape both front ends render, and
``to_dict()`` is exactly the ``--json`` output and the web API's body.
"""

from __future__ import annotations

import functools
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from searchengine import snippets, store
from searchengine.errors import IndexDamagedError, IndexNotFoundError, QueryError, RecordNotFoundError
from searchengine.facets import DEFAULT_FACET_SIZE

DEFAULT_INDEX_DIR = "index"
MAX_LIMIT = 100
# Deepest page served: paging past it is better done by narrowing the query.
MAX_PAGE = 1000
# Seconds a search may run before it is stopped with the hits found so far.
DEFAULT_TIME_BUDGET = 2.0
# Ranked candidates up to this many are put in tie order from their stored
# fields; more, from the facet columns.
TIE_STORED_LIMIT = 300
# Key terms taken from a record for "similar papers".
SIMILAR_TERMS = 20


@dataclass
class Hit:
    """One ranked document.

    ``score`` is the BM25F score (higher is better; comparable only within
    one result list). ``snippet`` is plain text from the abstract around the
    matched words (its start when no word of the abstract matched), and
    ``snippet_matches`` / ``title_matches`` are ``[start, end)`` character
    offsets of the matched words in ``snippet`` / ``title``.
    """

    id: str
    title: str
    authors: list[str]
    year: int | None
    categories: list[str]
    score: float
    snippet: str = ""
    snippet_matches: list[tuple[int, int]] = field(default_factory=list)
    title_matches: list[tuple[int, int]] = field(default_factory=list)
    url: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "authors": self.authors,
            "year": self.year,
            "categories": self.categories,
            "score": round(self.score, 4),
            "snippet": self.snippet,
            "snippet_matches": [list(m) for m in self.snippet_matches],
            "title_matches": [list(m) for m in self.title_matches],
            "url": self.url,
        }


@dataclass
class SearchResults:
    """The answer to one query.

    Attributes:
        query: the query text as searched: control characters dropped,
            spaces collapsed, cut when too long (``notes`` say so).
        total: number of documents matching (all pages).
        hits: the requested page of hits, best first.
        facets: facet name → list of ``{"value", "count", "selected"}``
            over all hits (see :func:`searchengine.facets.count_facets`);
            an unknown value is ``None``, listed last.
        facets_remaining: facet name → number of values with hits not listed.
        page: ``{"number", "size", "pages"}`` (1-based page number).
        suggestion: a corrected query when the query looks misspelled.
        relaxed: True when no document had every term and the hits match some.
        parsed: the query as understood (Whoosh's form, for debugging).
        notes: messages about repairs made to the query (cut, capped, ...).
        timed_out: True when the time budget stopped the search early.
        took_ms: wall-clock milliseconds spent in the search.
    """

    query: str
    total: int
    hits: list[Hit]
    facets: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    facets_remaining: dict[str, int] = field(default_factory=dict)
    page: dict[str, int] = field(default_factory=dict)
    suggestion: str | None = None
    relaxed: bool = False
    parsed: str = ""
    notes: list[str] = field(default_factory=list)
    timed_out: bool = False
    took_ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """The JSON form shared by ``--json`` and ``/api/search``."""
        return {
            "query": self.query,
            "total": self.total,
            "hits": [hit.to_dict() for hit in self.hits],
            "facets": self.facets,
            "facets_remaining": self.facets_remaining,
            "page": self.page,
            "suggestion": self.suggestion,
            "relaxed": self.relaxed,
            "parsed": self.parsed,
            "notes": self.notes,
            "timed_out": self.timed_out,
            "took_ms": round(self.took_ms, 2),
        }


def _holds_searcher(method):
    """Run a :class:`SearchIndex` method with one searcher held for the whole call."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        return self._use(lambda _searcher: method(self, *args, **kwargs))

    return wrapper


class SearchIndex:
    """An open index. Safe to share between threads (their calls take turns).

    It follows the index directory's ``CURRENT`` pointer: after a rebuild
    publishes a new generation, the next search uses it, without a restart.
    """

    def __init__(self, path: str | os.PathLike, *, time_budget: float = DEFAULT_TIME_BUDGET) -> None:
        self.path = Path(path)
        self.time_budget = time_budget
        self._lock = threading.Lock()
        # One call at a time: a Whoosh searcher reads its postings through
        # shared file positions, so two threads searching it at once read
        # each other's blocks (seen as zlib errors and "damaged postings").
        self._calls = threading.Lock()
        self._local = threading.local()
        self._generation: Path | None = None
        self._index = None
        self._searcher = None
        self._cache = None  # SearcherCache of the current searcher
        self._use(lambda searcher: None)

    def _use(self, work):
        """Run ``work(searcher)`` on the current generation's searcher.

        Calls are serialised (see ``_calls``), so a searcher replaced by a
        newer generation is never in use when it is closed. A call made from
        inside ``work`` (``similar`` reading the record) reuses the same
        searcher, so one call sees one generation. Searching is CPU-bound
        Python, so threads lose no throughput by taking turns.
        """
        held = getattr(self._local, "searcher", None)
        if held is not None:
            return work(held)
        with self._calls:
            searcher = self._switch()
            self._local.searcher = searcher
            try:
                return work(searcher)
            except Exception as exc:
                if store.is_damage(exc):
                    generation = self._generation
                    # Read the files afresh next time: they may be restored from a backup.
                    searcher.close()
                    self._index = self._searcher = self._generation = self._cache = None
                    raise IndexDamagedError(f"{generation}: index cannot be read ({type(exc).__name__}: "
                                            f"{exc}); rebuild it with 'searchengine index PATH...'") from exc
                raise
            finally:
                self._local.searcher = None

    def _switch(self):
        """The current generation's searcher, reopened when ``CURRENT`` changed."""
        generation = store.current_generation(self.path)
        if generation is None:
            raise IndexNotFoundError(f"{self.path}: no index here (run 'searchengine index' first)")
        if generation != self._generation:
            from searchengine.ranking import weighting

            try:
                ix = store.open_generation(generation)
                searcher = ix.searcher(weighting=weighting())
            except Exception as exc:  # whoosh raises many kinds on damage
                raise IndexDamagedError(f"{generation}: index cannot be opened ({exc})") from exc
            if self._searcher is not None:
                self._searcher.close()
            self._index, self._searcher, self._generation = ix, searcher, generation
        return self._searcher

    def _current(self):
        """The searcher the calling method holds (see :meth:`_use`).

        Outside a method decorated with ``@_holds_searcher`` (single-threaded
        tools and tests) it is the current generation's searcher, not held:
        a rebuild noticed by another call may close it.
        """
        held = getattr(self._local, "searcher", None)
        return held if held is not None else self._use(lambda searcher: searcher)

    @property
    @_holds_searcher
    def doc_count(self) -> int:
        """Number of documents in the current generation."""
        return self._current().doc_count()

    def _searcher_cache(self, searcher):
        """The :class:`~searchengine.facets.SearcherCache` of ``searcher``."""
        from searchengine.facets import SearcherCache

        with self._lock:
            if self._cache is None or self._cache.searcher is not searcher:
                self._cache = SearcherCache(searcher)
            return self._cache

    @_holds_searcher
    def search(
        self,
        query: str = "",
        *,
        limit: int = 10,
        page: int = 1,
        year=(),
        author=(),
        category=(),
        primary_only: bool = False,
        sort: str | None = None,
        facets=(),
        facet_size: int = DEFAULT_FACET_SIZE,
        time_budget: float | None = None,
        with_snippets: bool = True,
    ) -> SearchResults:
        """Run a ranked, filtered, faceted query.

        When no document has every word of the query, the words are searched
        with OR instead and the results say ``relaxed``. A long question is
        re-ranked by pseudo-relevance feedback (:mod:`searchengine.feedback`).

        Args:
            query: query text (see :mod:`searchengine.query` for the syntax,
                including ``year:``/``author:``/``category:`` filters). May
                be empty when a filter is given: then every document passing
                the filters is a hit.
            limit: hits per page, 1..:data:`MAX_LIMIT`.
            page: 1-based page number; a page past the end has no hits.
            year, author, category: filter values, one or an iterable each
                (text as typed, see :mod:`searchengine.filters`); values of
                one filter OR, different filters AND.
            primary_only: category filter and facet look at the primary
                category only.
            sort: ``relevance`` (ties by year, newest first, then id descending),
                ``newest``, ``oldest`` or ``title``; default ``relevance``,
                or ``newest`` when there is no query text.
            facets: facet names to count over all hits (``"year,author"`` or
                a list; see :data:`searchengine.facets.FACET_NAMES`). Each
                facet is counted over the hits of the query and of every
                filter except its own ("disjunctive" facets), so a selected
                year still shows the other years' counts.
            facet_size: values listed per facet.
            time_budget: seconds the search may take (default
                :attr:`time_budget`): the check of quoted phrases, the
                feedback round, did-you-mean (at most half of it) and ranking
                through Whoosh's matchers share it, ranking keeping at least
                a quarter. Past it, the best hits found so far are returned
                with ``timed_out`` set and a note. Parsing, facet counts and
                snippets are bounded by the query caps, not timed.
            with_snippets: False leaves snippets and match offsets empty
                (saves re-analysing each hit's text; used by evaluation).

        Raises:
            QueryError: the query or an option cannot be understood.
            IndexDamagedError: the index cannot be read.
        """
        from searchengine import facets as facet_mod
        from searchengine import feedback
        from searchengine import query as querylang
        from searchengine.filters import build_filters, filter_query
        from searchengine.ranking import score_documents

        if not 1 <= limit <= MAX_LIMIT:
            raise QueryError(f"limit must be between 1 and {MAX_LIMIT}, not {limit}")
        if page < 1:
            raise QueryError(f"page must be 1 or more, not {page}")
        if page > MAX_PAGE:
            raise QueryError(f"page must be at most {MAX_PAGE}, not {page}")
        if sort is not None and sort not in facet_mod.SORTS:
            raise QueryError(f"unknown sort {sort!r} (choose from {', '.join(facet_mod.SORTS)})")
        facet_names = facet_mod.parse_facet_names(facets)
        budget = self.time_budget if time_budget is None else time_budget
        started = time.perf_counter()
        # One deadline for the budgeted steps: the phrase check, the
        # feedback round, did-you-mean and ranking through Whoosh's matchers.
        deadline = time.monotonic() + budget
        phrase_clock = querylang.PhraseClock(deadline)
        notes: list[str] = []
        searched = querylang.clean(query or "", notes)
        text, query_filters = querylang.split_filters(searched)
        chosen = build_filters(year, author, category, primary_only) + query_filters
        searcher = self._current()
        parsed = querylang.parse(text, searcher.schema, allow_empty=bool(chosen))
        notes += parsed.notes
        wanted = querylang.expand_wildcards(parsed.query, searcher.reader(), notes) if parsed.query else None
        if wanted is not None:
            querylang.time_phrases(wanted, phrase_clock)
        restrict = filter_query(chosen)
        cache = self._searcher_cache(searcher)
        scores = score_documents(wanted, searcher) if wanted is not None else None
        docnums = _matching(cache, wanted, scores, restrict)
        if scores is not None and sort in (None, "relevance") and feedback.applies(wanted):
            if time.perf_counter() - started < budget / 2:
                scores = feedback.rerank(searcher, wanted, scores, set(docnums) if restrict is not None else None)
            else:
                notes.append(feedback.SKIPPED_NOTE)
        total = len(docnums)
        # Did-you-mean may use half the budget, within what is left of it.
        suggestion = self._suggestion(searcher, cache, parsed, restrict, total,
                                      min(time.monotonic() + budget / 2, deadline))
        relaxed = False
        if total == 0 and wanted is not None:
            fallback = querylang.relaxed(parsed, searcher.schema)
            if fallback is not None:
                fallback = querylang.expand_wildcards(fallback, searcher.reader(), [])
                fallback_scores = score_documents(fallback, searcher)
                found = _matching(cache, fallback, fallback_scores, restrict)
                if found:
                    wanted, scores, docnums, total, relaxed = fallback, fallback_scores, found, len(found), True
        sort = sort or ("relevance" if wanted is not None else "newest")
        ranked = sort == "relevance" and wanted is not None
        columns = cache.columns() if facet_names or (total and not ranked) else None
        start = (page - 1) * limit
        hits: list[Hit] = []
        timed_out = False
        if start < total:
            if ranked:
                allowed = set(docnums) if restrict is not None else None
                # Ranking gets a quarter of the budget even when the rest used it up.
                window, timed_out = self._ranked_window(searcher, cache, wanted, scores, allowed, start, limit,
                                                        max(deadline, time.monotonic() + budget / 4))
            else:
                rank = columns.order("newest" if sort == "relevance" else sort)
                docs = sorted(docnums, key=rank.__getitem__)[start:start + limit]
                if wanted is not None and scores is None:
                    scores = self._window_scores(searcher, wanted, docs)
                window = [(docnum, (scores or {}).get(docnum, 0.0)) for docnum in docs]
            hits = self._hits(searcher, wanted, window, with_snippets)
        if timed_out:
            notes.append(f"ranking was stopped after {budget:g} s; the order of these hits is approximate")
        if phrase_clock.stopped:
            timed_out = True
            notes.append(f"checking quoted phrases was stopped after {budget:g} s; papers with them may be missing")
        counted = {}
        for name in facet_names:
            # Each facet is counted with every filter but its own, so the
            # values not chosen yet stay visible as choices to add (OR).
            others = chosen.without(name)
            if others == chosen:
                counted_docnums = docnums
            else:
                counted_docnums = _matching(cache, wanted, scores, filter_query(others))
            counted.update(facet_mod.count_facets(
                columns, counted_docnums, [name], size=facet_size,
                primary_only=chosen.primary_only, selects=chosen.selects,
            ))
        return SearchResults(
            query=searched,
            total=total,
            hits=hits,
            facets={name: [v.to_dict() for v in c.values] for name, c in counted.items()},
            facets_remaining={name: c.remaining for name, c in counted.items()},
            page={"number": page, "size": limit, "pages": (total + limit - 1) // limit},
            relaxed=relaxed,
            suggestion=suggestion,
            parsed=str(_both(wanted, restrict)),
            notes=notes,
            timed_out=timed_out,
            took_ms=(time.perf_counter() - started) * 1000,
        )

    @staticmethod
    def _suggestion(searcher, cache, parsed, restrict, total: int, deadline: float) -> str | None:
        """Did-you-mean for ``parsed`` within the filters (see :mod:`searchengine.spelling`)."""
        from searchengine import query as querylang
        from searchengine import spelling

        if parsed.query is None or not parsed.text:
            return None

        from searchengine.ranking import score_documents

        matches: dict[str, list[int]] = {}

        def matching(text: str) -> list[int]:
            if text not in matches:
                candidate = querylang.parse(text, searcher.schema)
                wanted = querylang.expand_wildcards(candidate.query, searcher.reader(), [])
                matches[text] = _matching(cache, wanted, score_documents(wanted, searcher), restrict)
            return matches[text]

        def phrase_share(phrase: str, text: str) -> float:
            # A sample of consecutive documents: positions are read from few blocks.
            sample = set(matching(text)[:spelling.PHRASE_SAMPLE])
            if not sample:
                return 0.0
            found = score_documents(querylang.parse(phrase, searcher.schema).query, searcher, sample)
            return 0.0 if found is None else len(found.keys() & sample) / len(sample)

        return spelling.suggest(searcher, parsed.text, total, lambda text: len(matching(text)),
                                deadline, phrase_share)

    def _ranked_window(
        self, searcher, cache, wanted, scores: dict[int, float] | None, allowed: set[int] | None,
        start: int, limit: int, deadline: float,
    ) -> tuple[list[tuple[int, float]], bool]:
        """``(docnum, score)`` of hits ``start .. start+limit`` by score, ties
        by year (newest first) then id (descending); and whether the
        ``deadline`` (a ``time.monotonic()`` value) cut the ranking short.

        ``scores`` are the query's document scores when
        :func:`searchengine.ranking.score_documents` could compute them (plain
        words); otherwise Whoosh's collector ranks, and its top list
        is widened until the last fetched score is below the window's last
        score, so that every document tied with a hit in the window is known.
        """
        import heapq

        end = start + limit
        if scores is not None:
            pairs = list(scores.items()) if allowed is None else [(d, s) for d, s in scores.items() if d in allowed]
            if not pairs:
                return [], False
            top = heapq.nlargest(end, pairs, key=lambda item: item[1])
            cut = top[-1][1]
            # Every document scoring at least the last shown one: the page's
            # ties are all known, and ordered by year and id below.
            candidates = [pair for pair in pairs if pair[1] >= cut]
            return self._tie_order(searcher, cache, candidates)[start:end], False

        from whoosh import collectors

        fetch = end + 1  # one more than shown, to see whether a tie goes on
        while True:
            collector = collectors.TimeLimitCollector(
                searcher.collector(limit=fetch, filter=allowed),
                timelimit=max(deadline - time.monotonic(), 0.001),
                use_alarm=False,
            )
            try:
                searcher.search_with_collector(wanted, collector)
                timed_out = False
            except collectors.TimeLimit:
                timed_out = True
            results = collector.results()
            scored = results.scored_length()
            if timed_out or scored < fetch or results.score(fetch - 1) < results.score(end - 1):
                break
            fetch *= 2
        pairs = [(results.docnum(i), results.score(i)) for i in range(scored)]
        return self._tie_order(searcher, cache, pairs)[start:end], timed_out

    @staticmethod
    def _tie_order(searcher, cache, pairs: list[tuple[int, float]]) -> list[tuple[int, float]]:
        """``(docnum, score)`` pairs by score, ties by year (newest first, unknown
        last) then id (descending).

        A few candidates are keyed from their stored fields; many (a page
        deep into equal scores) from the facet columns, which cost a pass
        over the whole index the first time.
        """
        if len(pairs) > TIE_STORED_LIMIT:
            newest = cache.columns().order("newest")
            return sorted(pairs, key=lambda pair: (-pair[1], newest[pair[0]]))
        keyed = []
        for docnum, score in pairs:
            stored = searcher.stored_fields(docnum)
            keyed.append((docnum, score, stored.get("year"), stored.get("id", "")))
        keyed.sort(key=lambda k: k[3], reverse=True)  # stable sorts: id descending,
        keyed.sort(key=lambda k: (-k[1], k[2] is None, -(k[2] or 0)))  # then score, year
        return [(docnum, score) for docnum, score, _, _ in keyed]

    @staticmethod
    def _window_scores(searcher, wanted, window: list[int]) -> dict[int, float]:
        """Scores of the documents ``window`` for ``wanted`` (hits sorted by date or title)."""
        results = searcher.search(wanted, limit=None, filter=set(window))
        return {hit.docnum: hit.score for hit in results}

    def _hits(self, searcher, wanted, ranked: list[tuple[int, float]], with_snippets: bool) -> list[Hit]:
        """Hits for ``(docnum, score)`` pairs, with snippets of the words ``wanted`` asks for."""
        terms = snippets.query_terms(wanted) if with_snippets and wanted is not None else {}
        analyzer = self._searcher_cache(searcher).snippet_analyzer()
        hits = []
        for docnum, score in ranked:
            stored = searcher.stored_fields(docnum)
            if not with_snippets:
                hits.append(self._stored_hit(stored, score, snippets.Snippet()))
            elif wanted is None:
                hits.append(self._stored_hit(stored, score))
            else:
                snippet = snippets.abstract_snippet(stored.get("abstract", ""), terms.get("abstract", frozenset()), analyzer)
                title = snippets.title_matches(stored.get("title", ""), terms.get("title", frozenset()), analyzer)
                hits.append(self._stored_hit(stored, score, snippet, title))
        return hits

    @staticmethod
    def _stored_hit(stored: dict, score: float = 0.0, snippet=None, title_matches=()) -> Hit:
        """A Hit from stored fields; without a snippet, the start of the abstract."""
        snippet = snippet if snippet is not None else snippets.lead(stored.get("abstract", ""))
        return Hit(
            id=stored["id"],
            title=stored.get("title", ""),
            authors=list(stored.get("authors") or []),
            year=stored.get("year"),
            categories=list(stored.get("categories") or []),
            score=score,
            snippet=snippet.text,
            snippet_matches=snippet.matches,
            title_matches=list(title_matches),
            url=stored.get("url", ""),
        )

    @_holds_searcher
    def warm_up(self, seconds: float = 10.0) -> None:
        """Load what the first search would (the analyzer's NLTK parts, facet
        columns), the words spelling suggestions choose from, and the
        postings of the most frequent words (at most ``seconds``; see
        :func:`searchengine.ranking.warm_postings`), so that a server's
        first users do not wait for them."""
        from searchengine.facets import FACET_NAMES
        from searchengine.ranking import warm_postings
        from searchengine.spelling import warm_vocabulary

        try:
            self.search("index", facets=FACET_NAMES)
        except QueryError:
            pass
        warm_vocabulary(self._current().reader())
        warm_postings(self._current(), seconds)

    @_holds_searcher
    def document(self, record_id: str) -> dict[str, Any]:
        """The stored record with id ``record_id``.

        ``record_id`` may carry an arXiv version (``2101.00001v2``) or be an
        arXiv URL. Returns ``{"id", "title", "abstract", "authors", "year",
        "categories", "url", "source"}``; lists are lists, a missing year is
        ``None``.

        Raises:
            RecordNotFoundError: no document has that id.
        """
        from searchengine.records import arxiv_id

        searcher = self._current()
        stored = searcher.document(id=record_id.strip())
        if stored is None and arxiv_id(record_id):
            # 2101.00001v2, arXiv:2101.00001 or an abs URL name the same paper.
            stored = searcher.document(id=arxiv_id(record_id))
        if stored is None:
            raise RecordNotFoundError(f"no record with id {record_id!r}")
        return {
            "id": stored["id"],
            "title": stored.get("title", ""),
            "abstract": stored.get("abstract", ""),
            "authors": list(stored.get("authors") or []),
            "year": stored.get("year"),
            "categories": list(stored.get("categories") or []),
            "url": stored.get("url", ""),
            "source": stored.get("source", ""),
        }

    @_holds_searcher
    def similar(self, record_id: str, *, limit: int = 10) -> SearchResults:
        """Documents about the same topic as ``record_id``, the record itself excluded.

        More-like-this: the :data:`SIMILAR_TERMS` most informative terms of the
        record's title and abstract (Bo1 divergence from randomness weights,
        Amati 2003, as computed by Whoosh's ``classify.Expander``) are searched
        in title and abstract as a weighted OR query, ranked by BM25F.

        Raises:
            RecordNotFoundError: no document has that id.
            QueryError: ``limit`` is out of range.
        """
        from whoosh import query as wq

        if not 1 <= limit <= MAX_LIMIT:
            raise QueryError(f"limit must be between 1 and {MAX_LIMIT}, not {limit}")
        started = time.perf_counter()
        record = self.document(record_id)
        searcher = self._current()
        text = f"{record['title']} {record['abstract']}"
        terms = searcher.key_terms_from_text("abstract", text, numterms=SIMILAR_TERMS)
        if not terms:
            return SearchResults(query=f"similar:{record['id']}", total=0, hits=[],
                                 page={"number": 1, "size": limit, "pages": 0})
        from searchengine.ranking import bm25f_term

        wanted = wq.Or([bm25f_term([wq.Term("title", term), wq.Term("abstract", term)], boost=weight)
                        for term, weight in terms])
        results = searcher.search(wanted, limit=limit, mask=wq.Term("id", record["id"]))
        total = len(results)
        ranked = [(results.docnum(i), results.score(i)) for i in range(results.scored_length())]
        return SearchResults(
            query=f"similar:{record['id']}",
            total=total,
            hits=self._hits(searcher, wanted, ranked, True),
            page={"number": 1, "size": limit, "pages": (total + limit - 1) // limit},
            parsed=str(wanted),
            took_ms=(time.perf_counter() - started) * 1000,
        )

    @_holds_searcher
    def stats(self) -> dict[str, Any]:
        """Document count and per-year and per-category document counts.

        Returns ``{"documents": int, "years": {"2026": int, ..., "unknown": int},
        "categories": {"cs.DC": int, ...}}``; years newest first, categories
        by count then name. A paper in two categories counts in both.
        """
        searcher = self._current()
        years: dict[int | None, int] = {}
        categories: dict[str, int] = {}
        for stored in searcher.all_stored_fields():
            year = stored.get("year")
            years[year] = years.get(year, 0) + 1
            for category in stored.get("categories") or []:
                categories[category] = categories.get(category, 0) + 1
        known = sorted((y for y in years if y is not None), reverse=True)
        year_counts = {str(y): years[y] for y in known}
        if None in years:
            year_counts["unknown"] = years[None]
        return {
            "documents": searcher.doc_count(),
            "years": year_counts,
            "categories": dict(sorted(categories.items(), key=lambda kv: (-kv[1], kv[0]))),
        }

    def close(self) -> None:
        """Release the open files; the object must not be used afterwards."""
        with self._calls:  # after the running call, if any
            if self._searcher is not None:
                self._searcher.close()
            self._searcher = self._index = self._generation = self._cache = None


def _matching(cache, wanted, scores: dict[int, float] | None, restrict) -> list[int]:
    """Ascending document numbers matching ``wanted`` (``None``: every
    document) and the filter query ``restrict`` (``None``: no filter).

    ``scores``, when known, are ``wanted``'s matches already, so only the
    filter is evaluated.
    """
    if scores is None:
        from whoosh.query import Every

        return cache.docnums(_both(wanted, restrict) or Every())
    if restrict is None:
        return sorted(scores)
    return [docnum for docnum in cache.docnums(restrict) if docnum in scores]


def _both(query, restrict):
    """``query AND restrict``, either of which may be ``None``."""
    if query is None or restrict is None:
        return query if query is not None else restrict
    from whoosh.query import And

    return And([query, restrict])


def open_index(path: str | os.PathLike | None = None) -> SearchIndex:
    """Open the index at ``path`` (default: ``$SEARCHENGINE_INDEX`` or ``index/``).

    Raises:
        IndexNotFoundError: there is no index at ``path``.
        IndexDamagedError: the index exists but cannot be opened.
    """
    return SearchIndex(path or os.environ.get("SEARCHENGINE_INDEX") or DEFAULT_INDEX_DIR)
