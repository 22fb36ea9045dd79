"""The search API that the CLI and the web front end share.

    >>> index = open_index("index")
    >>> results = index.search("SpMV GPU", limit=5)
    >>> results.to_dict()["hits"][0]["title"]

:class:`SearchIndex` is the one face of an index, whatever engine holds it.
A search is a pipeline of named steps (:meth:`SearchIndex.search`; the
steps are in :mod:`searchengine.pipeline`): parse the query text and the
filters, match within the filters, relax to any word when nothing matched
every word, re-rank by feedback, suggest a correction, take a page of hits
with snippets, count facets. The engine does what it does natively
(matching, ranking, facets, highlighting); the query language, the spelling
and feedback policies and the result shape are shared.
:class:`~searchengine.results.SearchResults` is the one shape both front
ends render.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from searchengine import pipeline, settings
from searchengine.engines.location import Location
from searchengine.errors import QueryError, RecordNotFoundError
from searchengine.facets import MAX_FACET_SIZE
from searchengine.limits import DEFAULT_TIME_BUDGET, check_page, page_count
from searchengine.records import Record, doi, link_fields
from searchengine.request import SearchRequest
from searchengine.results import Hit, SearchResults, date_fields

if TYPE_CHECKING:
    from searchengine.engines.base import Searcher
    from searchengine.indexer import IndexSummary

__all__ = ["DEFAULT_INDEX_DIR", "Hit", "SearchIndex", "SearchRequest", "SearchResults", "open_index"]

DEFAULT_INDEX_DIR = "index"
#: Years and categories listed by :meth:`SearchIndex.stats`, at most (the facets' cap).
STATS_VALUES = MAX_FACET_SIZE


class SearchIndex:
    """An open index. Safe to share between threads (their calls take turns).

    It follows the index as it changes: after a rebuild publishes a new
    generation, the next search uses it, without a restart.

    Args:
        path: the index folder or cluster URL (or its
            :class:`~searchengine.engines.location.Location`).
        time_budget: seconds a search may take unless it says otherwise.
        lazy: do not open the index until the first call (then each call
            raises what opening raises, until it opens).

    Raises:
        IndexNotFoundError: there is no index at ``path``.
        IndexDamagedError: the index exists but cannot be opened, or is damaged.
    """

    def __init__(
        self, path: str | os.PathLike | Location, *, time_budget: float = DEFAULT_TIME_BUDGET, lazy: bool = False
    ) -> None:
        from searchengine.engines import open_engine

        location = Location.parse(path)
        self.path = location.working  # as before: a cluster URL as text, a folder as a Path
        self.time_budget = time_budget
        self.engine = open_engine(location, lazy=lazy)
        self._has_dates: tuple[int, bool] | None = None  # (document count, whether any has a date)

    @property
    def has_vectors(self) -> bool:
        """Whether the index keeps record vectors, so semantic and hybrid modes can run."""
        return self.engine.call(lambda searcher: searcher.has_vectors())

    @property
    def doc_count(self) -> int:
        """Number of documents in the index."""
        return self.engine.call(lambda searcher: searcher.doc_count())

    @property
    def has_dates(self) -> bool:
        """Whether any document has a submitted day (an index of listings read
        without their table of dates has years only): the date choices of
        the web page are offered only then."""
        from searchengine.filters import build_filters

        def run(searcher: Searcher[Any]) -> tuple[int, bool]:
            everything = build_filters((), (), (), False)
            matches = searcher.match(
                searcher.parse("", allow_empty=True), everything, time.monotonic() + self.time_budget, []
            )
            return searcher.doc_count(), bool(searcher.date_histogram(matches).rows)

        # Asked by every page without dated hits: kept while the document count stays.
        count = self.doc_count
        if self._has_dates is None or self._has_dates[0] != count:
            self._has_dates = self.engine.call(run)
        return self._has_dates[1]

    def search(self, query: str = "", **options: Any) -> SearchResults:
        """Run a ranked, filtered, faceted query.

        The options, by keyword, are the search parameters declared in
        :data:`searchengine.parameters.PARAMETERS`, each at its default when
        not given (below).

        When no document has every word of the query, the words are searched
        with OR instead and the results say ``relaxed``. A long question is
        re-ranked by pseudo-relevance feedback.

        Args:
            query: query text (see docs/searching.md, "The query language", including the
                ``year:``/``author:``/``category:`` filters). May be empty
                when a filter is given: then every document passing the
                filters is a hit; or when ``sort`` is ``newest``, ``oldest``
                or ``title`` (:data:`~searchengine.limits.LISTING_SORTS`):
                then, without filters, every document of the index is a hit
                in that order (``search("", sort="newest")``: the latest
                papers). Empty with neither is a :class:`QueryError`.
            limit: hits per page, 1..:data:`~searchengine.limits.MAX_LIMIT`.
            page: 1-based page number; ``page × limit`` at most
                :data:`~searchengine.limits.MAX_DEPTH`; a page past the end
                has no hits.
            year, author, category: filter values, one or an iterable each
                (text as typed, see :mod:`searchengine.filters`); values of
                one filter OR, different filters AND.
            first_author: author values that must be the first author (as
                ``author="^Name"``); they OR with ``author``.
            primary_only: category filter and facet look at the primary
                category only.
            since, until: the submitted day from / up to (inclusive;
                ``2025-03-14``, ``2025-03`` or ``2025``: from its first day,
                up to its last), one value or several (they AND).
            date: ``date:`` ranges (``2025-03..2025-06``, see
                :func:`searchengine.dates.parse_range`), ANDed with the rest.
            past: ``week``, ``month`` or ``year``: submitted in the last 7,
                30 or 365 days, today (UTC) included.
            sort: ``relevance`` (ties by year, newest first, then id descending),
                ``newest``, ``oldest`` (by submitted day; a paper with only a
                year follows the dated papers of its year, one with neither
                comes last; see :func:`searchengine.dates.sort_keys`) or
                ``title``; default ``relevance``, or ``newest`` when there
                is no query text.
            facets: facet names to count over all hits (``"year,author"`` or
                a list; see :data:`searchengine.facets.FACET_NAMES`). Each
                facet is counted over the hits of the query and of every
                filter except its own ("disjunctive" facets), so a selected
                year still shows the other years' counts. ``date`` asks for
                the date histogram of the hits (``date_histogram`` of the
                results, :class:`searchengine.dates.DateHistogram`).
            facet_size: values listed per facet.
            time_budget: seconds the search may take (default
                :attr:`time_budget`): the check of quoted phrases, the
                feedback round, did-you-mean (at most half of it) and ranking
                share it, ranking keeping at least a quarter. Past it, the
                best hits found so far are returned with ``timed_out`` set
                and a note. Parsing, facet counts and snippets are bounded
                by the query caps, not timed.
            with_snippets: False leaves snippets and match offsets empty
                (saves re-analysing each hit's text; used by evaluation).
            exact: never search a corrected query in place of the one typed
                (see :func:`searchengine.pipeline._correction`); the correction is still suggested.
            mode: ``lexical`` (words, BM25F), ``semantic`` (meaning: the
                papers whose vectors are nearest the query's) or ``hybrid``
                (both, fused: :mod:`searchengine.semantic.fusion`); default
                hybrid when the index keeps vectors and the ``semantic`` extra
                is installed, else lexical. The results' ``mode`` says which ran.
            semantic_weight: meaning's share of the hybrid ranking, 0 (words
                alone) to 1 (meaning alone); ``None`` (default):
                :data:`~searchengine.ranking.HYBRID_SEMANTIC_WEIGHT`. Each
                hit's ``explain`` gives its score's parts and matched fields.

        Raises:
            QueryError: the query or an option cannot be understood, the
                query is empty without a filter or a listing sort, or a
                semantic mode is asked of an index without vectors.
            TypeError: an option is not a search parameter.
            IndexDamagedError: the index cannot be read.
        """
        return self.run(SearchRequest.make(query, **options))

    def export(self, query: str = "", *, cap: int | None = None, **options: Any) -> SearchResults:
        """Every hit of a search, in the search's order, up to ``cap``: a result set to export.

        The same pipeline as :meth:`search` (query, filters, relaxing,
        feedback, sort) run once, on one generation of the index, taking
        hits ``1 .. cap`` in one window instead of page by page, without
        snippets or facets. Each hit carries its whole ``abstract``.

        Args:
            query: as for :meth:`search`, like ``year``, ``author``,
                ``first_author``, ``category``, ``primary_only``, ``since``,
                ``until``, ``past``, ``date``, ``sort``, ``time_budget``, ``exact`` and ``mode``.
            cap: most hits returned (default
                :data:`~searchengine.limits.EXPORT_LIMIT`, read when called).

        Returns:
            :class:`SearchResults` whose ``hits`` are the first
            ``min(total, cap)`` hits; ``total`` counts every hit, so
            ``total > len(hits)`` says the cap cut the set. ``page`` is
            ``{"number": 1, "size": cap, "pages": ...}``.

        Raises:
            QueryError: the query, a filter or ``cap`` (1 or more) cannot be used.
            IndexDamagedError: the index cannot be read.
        """
        return self.run(SearchRequest.make_export(query, cap=cap, **options))

    def run(self, request: SearchRequest) -> SearchResults:
        """Run a :class:`~searchengine.request.SearchRequest` (as :meth:`search`
        does, or :meth:`export` for an export request), on one generation of the index.

        Raises:
            QueryError: the query text cannot be understood.
            IndexDamagedError: the index cannot be read.
        """
        clock = pipeline.Clock(self.time_budget if request.time_budget is None else request.time_budget)
        return self.engine.call(lambda searcher: pipeline.run(searcher, request, clock))

    def warm_up(self, seconds: float = 10.0) -> None:
        """Load what the first search would (the analyzer, facet columns), the
        words spelling suggestions choose from, and the postings of the most
        frequent words (at most ``seconds``), so that a server's first users
        do not wait for them."""
        from searchengine.facets import FACET_NAMES

        def warm(searcher: Searcher[Any]) -> None:
            try:
                self.search("index", facets=FACET_NAMES)
            except QueryError:
                pass
            searcher.warm_up(seconds)

        self.engine.call(warm)

    def record(self, record_id: str) -> Record:
        """The :class:`~searchengine.records.Record` with id ``record_id``.

        ``record_id`` may carry an arXiv version (``2101.00001v2``), be an
        arXiv URL, or a DOI (bare, ``doi:...`` or a ``doi.org`` link: the
        paper that has it, or arXiv's DataCite DOI of its id).

        Raises:
            RecordNotFoundError: no document has that id.
        """
        found = self.engine.call(lambda searcher: searcher.document(record_id))
        named = doi(record_id)
        if found is None and named:  # a paper named by its DOI
            hits = self.search("doi:" + named, limit=1).hits
            found = self.engine.call(lambda searcher: searcher.document(hits[0].id)) if hits else None
        if found is None:
            raise RecordNotFoundError(f"no record with id {record_id!r}")
        return found

    def document(self, record_id: str) -> dict[str, Any]:
        """The stored record with id ``record_id`` as a dict (see :meth:`record`).

        Returns ``{"id", "title", "abstract", "authors", "year",
        "categories", "url", "source", "submitted", "updated", "versions"}``
        (dates as :func:`searchengine.results.date_fields`); lists are lists,
        a missing year or date is ``None``; and ``"pdf_url", "doi",
        "arxiv_doi", "journal_ref", "comments", "license"`` (the links as
        :func:`~searchengine.records.link_fields` gives them).

        Raises:
            RecordNotFoundError: no document has that id.
        """
        record = self.record(record_id)
        return {
            "id": record.id,
            "title": record.title,
            "abstract": record.abstract,
            "authors": record.authors,
            "year": record.year,
            "categories": record.categories,
            "url": record.url,
            "source": record.source,
            **date_fields(record),
            # --- links and identifiers ---
            **link_fields(record),
        }

    def documents(self, record_ids: Iterable[str]) -> tuple[list[dict[str, Any]], list[str]]:
        """``(found, missing)`` for many ids and DOIs: the :meth:`document` of
        each, in the order given and each record once (an id and its DOI
        give it once), and the ids and DOIs no record has.

        Raises:
            IndexDamagedError: the index cannot be read.
        """
        found: dict[str, dict[str, Any]] = {}
        missing: list[str] = []
        for record_id in dict.fromkeys(record_ids):
            try:
                record = self.document(record_id)
            except RecordNotFoundError:
                missing.append(record_id)
                continue
            found.setdefault(record["id"], record)
        return list(found.values()), missing

    def records(self) -> Iterator[Record]:
        """Every record of the index (one generation, read whole), in index order."""
        return iter(self.engine.call(lambda searcher: list(searcher.records())))

    def similar(self, record_id: str | Iterable[str], *, limit: int = 10) -> SearchResults:
        """Documents about the same topic as ``record_id`` (one id, or a list of
        ids: papers like these), the records themselves excluded.

        With record vectors in the index: the papers nearest in meaning to
        the records' mean vector (results' ``mode`` ``semantic``). Without:
        more-like-this, the records' most informative terms searched as a
        weighted OR query and ranked by BM25F (``mode`` ``lexical``).

        Raises:
            RecordNotFoundError: no document has one of the ids (named).
            QueryError: ``limit`` is out of range, no id or more than
                :data:`~searchengine.limits.MAX_SIMILAR_IDS` different ids are given.
        """
        from searchengine.limits import MAX_SIMILAR_IDS

        check_page(1, limit)
        wanted = [record_id] if isinstance(record_id, str) else list(record_id)
        if not wanted or not all(isinstance(i, str) and i for i in wanted):
            raise QueryError("give one record id or more")
        wanted = list(dict.fromkeys(i.strip() or i for i in wanted))  # a blank id is one no record has
        if len(wanted) > MAX_SIMILAR_IDS:
            raise QueryError(f"{len(wanted)} ids given; papers like at most {MAX_SIMILAR_IDS} are found at once")
        started = time.perf_counter()

        def run(searcher: Searcher[Any]) -> SearchResults:
            records: list[Record] = []
            for one in wanted:
                record = searcher.document(one)
                if record is None:
                    raise RecordNotFoundError(f"no record with id {one!r}")
                records.append(record)
            total, hits, parsed = searcher.similar(records, limit)
            return SearchResults(
                query="similar:" + ",".join(record.id for record in records),
                total=total,
                hits=hits,
                page={"number": 1, "size": limit, "pages": page_count(total, limit)},
                parsed=parsed,
                took_ms=(time.perf_counter() - started) * 1000,
                mode="semantic" if searcher.has_vectors() else "lexical",
            )

        return self.engine.call(run)

    def stats(self) -> dict[str, Any]:
        """Document count and per-year and per-category document counts.

        Returns ``{"documents": int, "undated": int, "years": {"2026": int, ...,
        "unknown": int}, "categories": {"cs.DC": int, ...}}`` (``undated``:
        documents without a submitted day); years newest first, categories
        by count then name, at most :data:`STATS_VALUES` of each. A paper in
        two categories counts in both. Counted as the year and category
        facets of every document (an aggregation on a cluster).
        """
        from searchengine.filters import build_filters

        def run(searcher: Searcher[Any]) -> dict[str, Any]:
            everything = build_filters((), (), (), False)
            matches = searcher.match(
                searcher.parse("", allow_empty=True), everything, time.monotonic() + self.time_budget, []
            )
            counted = searcher.facets(matches, everything, ("year", "category"), STATS_VALUES)
            years = sorted(
                (v for v in counted["year"].values if v.value is not None), key=lambda v: int(v.value), reverse=True
            )
            year_counts = {str(v.value): v.count for v in years}
            year_counts.update(("unknown", v.count) for v in counted["year"].values if v.value is None)
            categories = sorted(
                ((v.value, v.count) for v in counted["category"].values if v.value is not None),
                key=lambda kv: (-kv[1], kv[0]),
            )
            undated = searcher.date_histogram(matches).undated
            return {
                "documents": searcher.doc_count(),
                "undated": undated,
                "years": year_counts,
                "categories": dict(categories),
            }

        return self.engine.call(run)

    def close(self) -> None:
        """Release the open files; the object must not be used afterwards."""
        self.engine.close()


def open_index(
    path: str | os.PathLike[str] | None = None,
    *,
    build_from: Iterable[str | os.PathLike[str]] | None = None,
    on_build: Callable[[IndexSummary | None], None] | None = None,
) -> SearchIndex:
    """Open the index at ``path`` (default: ``$SEARCHENGINE_INDEX`` or ``index/``).

    Args:
        path: the index folder or cluster URL.
        build_from: input paths to build the index from when there is none
            yet (the CLI's first use of the default index builds it from the
            bundled corpus); ``None`` never builds.
        on_build: called with ``None`` before such a build starts and with
            its :class:`~searchengine.indexer.IndexSummary` when it is done.

    Raises:
        IndexNotFoundError: there is no index at ``path`` (and no ``build_from``).
        IndexDamagedError: the index exists but cannot be opened.
    """
    from searchengine.engines import needs_build

    # Read once: the build check, the build and the engine take the parsed value.
    location = Location.parse(path or settings.index_location() or DEFAULT_INDEX_DIR)
    if build_from is not None and needs_build(location):
        from searchengine.indexer import build_index

        report = on_build or (lambda summary: None)
        report(None)
        report(build_index(list(build_from), location))
    return SearchIndex(location)
