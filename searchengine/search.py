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

from searchengine import store
from searchengine.errors import IndexDamagedError, IndexNotFoundError, QueryError

DEFAULT_INDEX_DIR = "index"
MAX_LIMIT = 100


@dataclass
class Hit:
    """One ranked document.

    ``score`` is the BM25F score (higher is better; comparable only within
    one result list). ``snippet`` is a plain-text fragment of the abstract
    around the matched words (the title when there is no abstract).
    """

    id: str
    title: str
    authors: list[str]
    year: int | None
    categories: list[str]
    score: float
    snippet: str = ""
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
            "took_ms": round(self.took_ms, 2),
        }


def _plain_formatter():
    """A Whoosh formatter that leaves matched words unmarked (plain-text snippets)."""
    from whoosh import highlight

    class PlainFormatter(highlight.Formatter):
        between = " … "

        def format_token(self, text, token, replace=False):
            return highlight.get_text(text, token, replace)

    return PlainFormatter()


class SearchIndex:
    """An open index. Safe to share between threads.

    It follows the index directory's ``CURRENT`` pointer: after a rebuild
    publishes a new generation, the next search uses it, without a restart.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
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

                from searchengine.ranking import weighting

                try:
                    ix = whoosh_index.open_dir(str(generation))
                    searcher = ix.searcher(weighting=weighting())
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

    def search(self, query: str, *, limit: int = 10, page: int = 1, snippets: bool = True) -> SearchResults:
        """Run a ranked query.

        Args:
            query: query text (see :mod:`searchengine.query` for the syntax).
            limit: hits per page, 1..:data:`MAX_LIMIT`.
            page: 1-based page number; a page past the end has no hits.
            snippets: False leaves ``Hit.snippet`` empty (saves re-analysing
                each hit's abstract; used by evaluation).

        Raises:
            QueryError: the query or an option cannot be understood.
            IndexDamagedError: the index cannot be read.
        """
        from searchengine.query import parse

        if not 1 <= limit <= MAX_LIMIT:
            raise QueryError(f"limit must be between 1 and {MAX_LIMIT}, not {limit}")
        if page < 1:
            raise QueryError(f"page must be 1 or more, not {page}")
        started = time.perf_counter()
        searcher = self._current()
        parsed = parse(query, searcher.schema)
        results = searcher.search_page(parsed, page, pagelen=limit)
        results.results.formatter = _plain_formatter()
        total = len(results)
        hits = [self._hit(hit, snippets) for hit in results] if page <= results.pagecount or total == 0 else []
        return SearchResults(
            query=query,
            total=total,
            hits=hits,
            page={"number": page, "size": limit, "pages": (total + limit - 1) // limit},
            parsed=str(parsed),
            took_ms=(time.perf_counter() - started) * 1000,
        )

    @staticmethod
    def _hit(hit, snippets: bool = True) -> Hit:
        stored = hit.fields()
        if not snippets:
            stored["abstract"] = ""
        snippet = hit.highlights("abstract", top=2) if stored.get("abstract") else ""
        return Hit(
            id=stored["id"],
            title=stored.get("title", ""),
            authors=list(stored.get("authors") or []),
            year=stored.get("year"),
            categories=list(stored.get("categories") or []),
            score=hit.score,
            snippet=snippet or stored.get("abstract", "")[:200],
            url=stored.get("url", ""),
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
