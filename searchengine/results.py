"""The one shape every front end renders: :class:`SearchResults` of :class:`Hit` s.

``SearchResults.to_dict()`` is exactly the ``--json`` output and the web
API's body, whatever engine answered.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

from searchengine.records import link_fields

if TYPE_CHECKING:
    from collections.abc import Iterable

    from searchengine.records import Record

#: Without a match in the abstract, a hit shows its start, cut at a word boundary.
LEAD_CHARS = 240
#: Authors a hit lists in a results table or page; the rest are counted
#: ("… and 2,995 more"). Records, JSON and exports keep every author.
SHOWN_AUTHORS = 10


def shown_authors(authors: Iterable[str], limit: int = SHOWN_AUTHORS) -> tuple[list[str], int]:
    """The first ``limit`` of ``authors`` and how many are left out:
    ``(["A", "B"], 2995)`` reads "A, B … and 2,995 more"."""
    authors = list(authors)
    return authors[:limit], max(0, len(authors) - limit)


def lead_snippet(text: str, limit: int = LEAD_CHARS) -> str:
    """The start of ``text``, cut at a word boundary (``" …"`` marks the cut)."""
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > 0 else limit].rstrip(" ,;:") + " …"


@dataclass
class Hit:
    """One ranked document.

    ``score`` is the BM25F score (higher is better; comparable only within
    one result list). ``snippet`` is plain text from the abstract around the
    matched words (its start when no word of the abstract matched), and
    ``snippet_matches`` / ``title_matches`` are ``[start, end)`` character
    offsets of the matched words in ``snippet`` / ``title``. ``abstract`` is
    the whole abstract, for exports (RIS, JSON lines); the JSON form carries
    the snippet instead. ``submitted``, ``updated`` and ``versions`` are the
    record's dates (:class:`~searchengine.records.Record`), ISO strings in JSON.
    the snippet instead. ``links`` holds the record's links and identifiers
    as :func:`~searchengine.records.link_fields` gives them (the JSON form's
    ``url``, ``pdf_url``, ``doi``, ``arxiv_doi``, ``journal_ref``,
    ``comments`` and ``license``).
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
    abstract: str = field(default="", repr=False)
    # Dates, kept apart from the fields above.
    submitted: date | None = None
    updated: date | None = None
    versions: list[tuple[int, date]] = field(default_factory=list)
    # --- links and identifiers ---
    links: dict[str, str] = field(default_factory=dict, repr=False)
    #: The title and abstract as the source wrote them, when they hold math
    #: (:attr:`~searchengine.records.Record.tex`): the web page draws their formulas.
    tex: dict[str, str] = field(default_factory=dict, repr=False)
    #: Why the hit ranks where it does: ``{"keyword": part of the score from
    #: the words (``None`` in semantic mode), "meaning": part from meaning
    #: (``None`` in lexical mode), "fields": the fields its query words
    #: matched}``; in hybrid mode the two parts add up to ``score``.
    explain: dict[str, Any] | None = field(default=None, repr=False)

    @classmethod
    def from_record(
        cls,
        record: Record,
        score: float,
        snippet: str = "",
        snippet_matches: Iterable[tuple[int, int]] = (),
        title_matches: Iterable[tuple[int, int]] = (),
    ) -> Hit:
        """A hit for a :class:`~searchengine.records.Record` with its score and snippet."""
        return cls(
            id=record.id,
            title=record.title,
            authors=list(record.authors),
            year=record.year,
            categories=list(record.categories),
            score=score,
            snippet=snippet,
            snippet_matches=list(snippet_matches),
            title_matches=list(title_matches),
            url=record.url,
            abstract=record.abstract,
            submitted=record.submitted,
            updated=record.updated,
            versions=list(record.versions),
            links=link_fields(record),
            tex=dict(record.tex),
        )

    def to_dict(self) -> dict[str, Any]:
        """The hit as in the JSON output."""
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
            **date_fields(self),
            # --- links and identifiers ---
            **self.links,
            "explain": self.explain,
        }


def date_fields(paper: Hit | Record) -> dict[str, Any]:
    """``{"submitted", "updated": "YYYY-MM-DD" or None, "versions": [{"version": 2,
    "date": "YYYY-MM-DD"}, ...]}`` of a hit or record, as JSON and exports give them."""
    return {
        "submitted": paper.submitted.isoformat() if paper.submitted else None,
        "updated": paper.updated.isoformat() if paper.updated else None,
        "versions": [{"version": number, "date": day.isoformat()} for number, day in paper.versions],
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
            over all hits (see :func:`searchengine.engines.whoosh.facetcolumns.count_facets`);
            an unknown value is ``None``, listed last.
        facets_remaining: facet name → number of values with hits not listed.
        page: ``{"number", "size", "pages"}`` (1-based page number; ``pages``
            counts the pages paging can reach, at most
            :data:`~searchengine.limits.MAX_DEPTH` hits deep).
        suggestion: a corrected query when the query looks misspelled.
        corrected: the corrected query that was searched instead of the one
            typed (``None`` when the query was searched as typed).
        relaxed: True when no document had every term and the hits match some.
        unmatched: words of a relaxed query that no paper within the
            filters holds, as typed.
        parsed: the query as understood, in the engine's notation (for debugging).
        notes: messages about repairs made to the query (cut, capped, ...).
        timed_out: True when the time budget stopped the search early.
        took_ms: wall-clock milliseconds spent in the search.
        date_histogram: when asked for (facet ``date``), the hits per
            year, month or day of their submitted day:
            ``{"bin": "month", "rows": [["2025-03-01", 12], ...], "undated": n}``
            (:meth:`searchengine.dates.DateHistogram.to_dict`); else ``None``.
        mode: how the hits were ranked: ``lexical`` (words, BM25F),
            ``semantic`` (meaning: cosine similarity of record vectors) or
            ``hybrid`` (both fused; :mod:`searchengine.semantic.fusion`).
        author: when the query was also read as an author's name
            (:mod:`searchengine.names`), whose papers are listed first:
            ``{"query", "filter", "papers", "names": [{"name", "papers"}]}``
            (``filter``: the author filter to keep only theirs); else ``None``.
    """

    query: str
    total: int
    hits: list[Hit]
    facets: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    facets_remaining: dict[str, int] = field(default_factory=dict)
    page: dict[str, int] = field(default_factory=dict)
    suggestion: str | None = None
    corrected: str | None = None
    relaxed: bool = False
    unmatched: list[str] = field(default_factory=list)
    parsed: str = ""
    notes: list[str] = field(default_factory=list)
    timed_out: bool = False
    took_ms: float = 0.0
    date_histogram: dict[str, Any] | None = None
    mode: str = "lexical"
    author: dict[str, Any] | None = None

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
            "corrected": self.corrected,
            "relaxed": self.relaxed,
            "unmatched": self.unmatched,
            "parsed": self.parsed,
            "notes": self.notes,
            "timed_out": self.timed_out,
            "took_ms": round(self.took_ms, 2),
            "date_histogram": self.date_histogram,
            "mode": self.mode,
            "author": self.author,
        }
