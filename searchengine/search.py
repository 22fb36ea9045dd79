"""The search API that the CLI and the web front end share.

    >>> index = open_index("index")
    >>> results = index.search("SpMV GPU", limit=5)
    >>> results.to_dict()["hits"][0]["title"]

:class:`SearchResults` is the one shape both front ends render, and
``to_dict()`` is exactly the ``--json`` output and the web API's body.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from searchengine import snippets, store
from searchengine.errors import IndexDamagedError, IndexNotFoundError, QueryError, RecordNotFoundError

DEFAULT_INDEX_DIR = "index"
MAX_LIMIT = 100
# Seconds a search may run before it is stopped with the hits found so far.
DEFAULT_TIME_BUDGET = 2.0
# Key terms taken from a record for "similar papers".
SIMILAR_TERMS = 12


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
        query: the query text as given.
        total: number of documents matching (all pages).
        hits: the requested page of hits, best first.
        facets: facet name → list of ``{"value", "count", "selected"}``.
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
            "page": self.page,
            "suggestion": self.suggestion,
            "relaxed": self.relaxed,
            "parsed": self.parsed,
            "notes": self.notes,
            "timed_out": self.timed_out,
            "took_ms": round(self.took_ms, 2),
        }


class SearchIndex:
    """An open index. Safe to share between threads.

    It follows the index directory's ``CURRENT`` pointer: after a rebuild
    publishes a new generation, the next search uses it, without a restart.
    """

    def __init__(self, path: str | os.PathLike, *, time_budget: float = DEFAULT_TIME_BUDGET) -> None:
        self.path = Path(path)
        self.time_budget = time_budget
        self._lock = threading.Lock()
        self._generation: Path | None = None
        self._index = None
        self._searcher = None
        self._current()

    def _current(self):
        """The searcher of the current generation, reopened when it changed."""
        generation = store.current_generation(self.path)
        if generation is None:
            raise IndexNotFoundError(f"{self.path}: no index here (run 'searchengine index' first)")
        with self._lock:
            if generation != self._generation:
                from whoosh import index as whoosh_index

                try:
                    ix = whoosh_index.open_dir(str(generation))
                    searcher = ix.searcher()
                except Exception as exc:  # whoosh raises many kinds on damage
                    raise IndexDamagedError(f"{generation}: index cannot be opened ({exc})") from exc
                if self._searcher is not None:
                    self._searcher.close()
                self._index, self._searcher, self._generation = ix, searcher, generation
            return self._searcher

    @property
    def doc_count(self) -> int:
        """Number of documents in the current generation."""
        return self._current().doc_count()

    def search(self, query: str, *, limit: int = 10, page: int = 1, time_budget: float | None = None) -> SearchResults:
        """Run a ranked query.

        When no document has every word of the query, the words are searched
        with OR instead and the results say ``relaxed``.

        Args:
            query: query text (see :mod:`searchengine.query` for the syntax).
            limit: hits per page, 1..:data:`MAX_LIMIT`.
            page: 1-based page number; a page past the end has no hits.
            time_budget: seconds the search may take (default
                :attr:`time_budget`); past it, the hits found so far are
                returned with ``timed_out`` set.

        Raises:
            QueryError: the query or an option cannot be understood.
            IndexDamagedError: the index cannot be read.
        """
        from whoosh import collectors

        from searchengine import query as querylang

        if not 1 <= limit <= MAX_LIMIT:
            raise QueryError(f"limit must be between 1 and {MAX_LIMIT}, not {limit}")
        if page < 1:
            raise QueryError(f"page must be 1 or more, not {page}")
        started = time.perf_counter()
        searcher = self._current()
        parsed = querylang.parse(query, searcher.schema)
        notes = list(parsed.notes)
        wanted = querylang.expand_wildcards(parsed.query, searcher.reader(), notes)
        budget = self.time_budget if time_budget is None else time_budget

        def run(q):
            collector = collectors.TimeLimitCollector(
                searcher.collector(limit=page * limit), timelimit=budget, use_alarm=False
            )
            try:
                searcher.search_with_collector(q, collector)
                return collector.results(), False
            except collectors.TimeLimit:
                return collector.results(), True

        results, timed_out = run(wanted)
        suggestion = None
        if not timed_out:
            suggestion = self._suggestion(searcher, parsed, len(results))
        relaxed = False
        if results.scored_length() == 0 and not timed_out:
            fallback = querylang.relaxed(parsed, searcher.schema)
            if fallback is not None:
                fallback = querylang.expand_wildcards(fallback, searcher.reader(), [])
                alternative, timed_out = run(fallback)
                if alternative.scored_length():
                    results, relaxed, wanted = alternative, True, fallback
        if timed_out:
            notes.append(f"the search was stopped after {budget:g} s; results are incomplete")
        snippets.configure(results)
        total = len(results) if not timed_out else results.scored_length()
        window = results[(page - 1) * limit: page * limit]
        return SearchResults(
            query=query,
            total=total,
            hits=[self._hit(hit) for hit in window],
            page={"number": page, "size": limit, "pages": (total + limit - 1) // limit},
            relaxed=relaxed,
            suggestion=suggestion,
            parsed=str(wanted),
            notes=notes,
            timed_out=timed_out,
            took_ms=(time.perf_counter() - started) * 1000,
        )

    @staticmethod
    def _suggestion(searcher, parsed, total: int) -> str | None:
        """Did-you-mean for ``parsed`` (see :mod:`searchengine.spelling`)."""
        from searchengine import query as querylang
        from searchengine import spelling

        if parsed.query is None or not parsed.text:
            return None

        def count_hits(text: str) -> int:
            candidate = querylang.parse(text, searcher.schema)
            wanted = querylang.expand_wildcards(candidate.query, searcher.reader(), [])
            return len(searcher.search(wanted, limit=1))

        return spelling.suggest(searcher, parsed.text, total, count_hits)

    @staticmethod
    def _hit(hit) -> Hit:
        stored = hit.fields()
        title = stored.get("title", "")
        snippet = snippets.abstract_snippet(hit, stored.get("abstract", ""))
        return Hit(
            id=stored["id"],
            title=title,
            authors=list(stored.get("authors") or []),
            year=stored.get("year"),
            categories=list(stored.get("categories") or []),
            score=hit.score,
            snippet=snippet.text,
            snippet_matches=snippet.matches,
            title_matches=snippets.title_matches(hit, title),
            url=stored.get("url", ""),
        )

    def document(self, record_id: str) -> dict[str, Any]:
        """The stored record with id ``record_id``.

        Returns ``{"id", "title", "abstract", "authors", "year", "categories",
        "url", "source"}``; lists are lists, a missing year is ``None``.

        Raises:
            RecordNotFoundError: no document has that id.
        """
        stored = self._current().document(id=record_id.strip())
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
        wanted = wq.Or([wq.Term(field, term, boost=weight)
                        for term, weight in terms for field in ("title", "abstract")])
        results = searcher.search(wanted, limit=limit, mask=wq.Term("id", record["id"]))
        snippets.configure(results)
        total = len(results)
        return SearchResults(
            query=f"similar:{record['id']}",
            total=total,
            hits=[self._hit(hit) for hit in results],
            page={"number": 1, "size": limit, "pages": (total + limit - 1) // limit},
            parsed=str(wanted),
            took_ms=(time.perf_counter() - started) * 1000,
        )

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
        with self._lock:
            if self._searcher is not None:
                self._searcher.close()
            self._searcher = self._index = self._generation = None


def open_index(path: str | os.PathLike | None = None) -> SearchIndex:
    """Open the index at ``path`` (default: ``$SEARCHENGINE_INDEX`` or ``index/``).

    Raises:
        IndexNotFoundError: there is no index at ``path``.
        IndexDamagedError: the index exists but cannot be opened.
    """
    return SearchIndex(path or os.environ.get("SEARCHENGINE_INDEX") or DEFAULT_INDEX_DIR)
