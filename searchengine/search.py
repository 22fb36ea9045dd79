"""The search API that the CLI and the web front end share.

    >>> index = open_index("index")
    >>> results = index.search("SpMV GPU", limit=5)
    >>> results.to_dict()["hits"][0]["title"]

:class:`SearchIndex` is the one face of an index, whatever engine holds it.
A search is a pipeline of named steps (:meth:`SearchIndex.search`): parse
the query text and the filters, match within the filters, relax to any word
when nothing matched every word, re-rank by feedback, suggest a correction,
take a page of hits with snippets, count facets. The engine does what it
does natively (matching, ranking, facets, highlighting); the query language,
the spelling and feedback policies and the result shape are shared.
:class:`~searchengine.results.SearchResults` is the one shape both front
ends render.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from searchengine import semantic, settings
from searchengine.errors import QueryError, RecordNotFoundError
from searchengine.facets import HISTOGRAM, MAX_FACET_SIZE
from searchengine.limits import DEFAULT_TIME_BUDGET, EMPTY_QUERY, LISTING_SORTS, check_page, page_count
from searchengine.records import Record, doi, link_fields
from searchengine.request import SearchRequest
from searchengine.results import Hit, SearchResults, date_fields

__all__ = ["DEFAULT_INDEX_DIR", "Hit", "SearchIndex", "SearchRequest", "SearchResults", "open_index"]

DEFAULT_INDEX_DIR = "index"
#: A sure correction (:attr:`searchengine.spelling.Correction.sure`) is
#: searched instead of the typed query when it finds this many times as many
#: papers (or the typed one finds none).
CLEAR_FACTOR = 20
#: Words of a relaxed query checked for matching no paper at all.
MAX_UNMATCHED = 10
# Quotes, a required word (+word) or a fuzzy one (word~1): the user asks
# for exactly what was typed.
_LITERAL = re.compile(r'"|~|(?:^|\s)\+\S')
#: Years and categories listed by :meth:`SearchIndex.stats`, at most (the facets' cap).
STATS_VALUES = MAX_FACET_SIZE
#: Said when feedback was left out to keep within the time budget.
FEEDBACK_SKIPPED = "half the time budget was spent before feedback from the best hits; ranked without it"


@dataclass
class Plan:
    """A search request, checked and parsed: what the engine is asked.

    Attributes:
        searched: the query text as searched (cleaned; ``query`` of results).
        parsed: the query as parsed (``None`` never; its query may be
            ``None`` for an empty query: browse by filters).
        filters: every filter, from the options and the query text.
        sort: the sort order (``relevance`` or ``newest`` by default).
        facets: facet names to count.
        notes: messages about repairs made to the query.
        lexicon: the engine's indexed words (``None``: it offers none), read
            once per search for parsing and did-you-mean.
    """

    searched: str
    parsed: Any
    filters: Any
    sort: str | None
    facets: tuple[str, ...]
    notes: list[str] = field(default_factory=list)
    lexicon: Any = None


class Clock:
    """The time budget of one search: one deadline shared by the budgeted steps
    (the phrase check, feedback, did-you-mean and ranking)."""

    def __init__(self, budget: float) -> None:
        self.budget = budget
        self.started = time.perf_counter()
        self.deadline = time.monotonic() + budget

    def elapsed(self) -> float:
        """Seconds since the search started."""
        return time.perf_counter() - self.started

    def share(self, part: float) -> float:
        """A deadline for a step that may use ``part`` of the budget, within what is left."""
        return min(time.monotonic() + self.budget * part, self.deadline)

    def at_least(self, part: float) -> float:
        """A deadline that leaves a step ``part`` of the budget even when the rest used it up."""
        return max(self.deadline, time.monotonic() + self.budget * part)


class SearchIndex:
    """An open index. Safe to share between threads (their calls take turns).

    It follows the index as it changes: after a rebuild publishes a new
    generation, the next search uses it, without a restart.

    Args:
        path: the index folder or cluster URL.
        time_budget: seconds a search may take unless it says otherwise.
        lazy: do not open the index until the first call (then each call
            raises what opening raises, until it opens).

    Raises:
        IndexNotFoundError: there is no index at ``path``.
        IndexDamagedError: the index exists but cannot be opened, or is damaged.
    """

    def __init__(self, path: str | os.PathLike, *, time_budget: float = DEFAULT_TIME_BUDGET,
                 lazy: bool = False) -> None:
        from searchengine.engines import check_location, open_engine

        self.path = check_location(path)
        self.time_budget = time_budget
        self.engine = open_engine(self.path, lazy=lazy)

    @property
    def has_vectors(self) -> bool:
        """Whether the index keeps record vectors, so semantic and hybrid modes can run."""
        return self.engine.call(lambda searcher: searcher.has_vectors())

    @property
    def doc_count(self) -> int:
        """Number of documents in the index."""
        return self.engine.call(lambda searcher: searcher.doc_count())

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
                (see :func:`_correction`); the correction is still suggested.
            mode: ``lexical`` (words, BM25F), ``semantic`` (meaning: the
                papers whose vectors are nearest the query's) or ``hybrid``
                (both, fused: :mod:`searchengine.semantic.fusion`); default
                hybrid when the index keeps vectors and the ``semantic`` extra
                is installed, else lexical. The results' ``mode`` says which ran.

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
        clock = Clock(self.time_budget if request.time_budget is None else request.time_budget)
        return self.engine.call(lambda searcher: self._run(searcher, request, clock))

    def _run(self, searcher, request: SearchRequest, clock: Clock) -> SearchResults:
        plan = _plan(searcher, request, clock)
        page, limit = request.page, request.limit
        notes = plan.notes
        encoding = _encode_early(searcher, request, plan)
        matches = searcher.match(plan.parsed, plan.filters, clock.deadline, notes)
        # Did-you-mean may use half the budget, within what is left of it.
        correction = _suggestion(searcher, plan, matches, clock.share(0.5))
        suggestion = None if correction is None else correction.text
        corrected = None
        if correction is not None and not request.exact:
            found = _correction(searcher, plan, matches, correction, clock)
            if found is not None:
                matches, corrected = found, suggestion
        _feedback(searcher, matches, plan, clock)
        relaxed, unmatched = False, []
        if matches.total == 0 and matches.query is not None:
            found = searcher.relax(plan.parsed, matches)
            if found is not None:
                unmatched = _unmatched(searcher, plan, matches, clock.deadline)
                matches, relaxed = found, True
        mode = _mode(searcher, request, matches, plan)
        if mode != "lexical":
            matches = _by_meaning(searcher, plan, matches, mode, corrected, encoding)
            from searchengine.semantic.fusion import open_query

            if mode == "semantic" and open_query(plan.parsed.tree):
                # The hits are the nearest in meaning, not papers with some of the words.
                relaxed, unmatched = False, []
                notes.append(f"ranked by meaning alone: the {matches.total:,} papers nearest to the query"
                             + (" within the filters" if plan.filters else ""))
        elif request.mode is None and matches.query is not None and _vectors_unused(searcher):
            notes.append(f"this index keeps vectors, but the semantic extra is not installed: ranked by words "
                         f"alone ({semantic.INSTALL_HINT})")
        # Without words to rank by (none, or only excluded ones): newest first.
        ranked = matches.query is not None and not _only_negative(plan.parsed)
        sort = plan.sort or ("relevance" if ranked else "newest")
        author = None
        if mode == "lexical" and ranked and not corrected:
            author = _author_reading(searcher, plan, clock)
        total = matches.total if author is None else author.papers + matches.total - author.overlap
        start = (page - 1) * limit
        hits: list[Hit] = []
        timed_out = False
        if start < total:
            # Ranking gets a quarter of the budget even when the rest used it up.
            if author is None:
                window, timed_out = searcher.window(matches, sort, start, limit, clock.at_least(0.25))
            else:
                window, timed_out = _author_first(searcher, author, matches, start, limit, clock.at_least(0.25))
            hits = searcher.hits(matches.query, window, request.with_snippets)
        if timed_out:
            notes.append(f"ranking was stopped after {clock.budget:g} s; the order of these hits is approximate")
        if matches.cut:
            timed_out = True
            notes.append(f"matching was stopped after {clock.budget:g} s; some papers may be missing")
        elif matches.approximate and not timed_out:
            timed_out = True
            notes.append(f"ranking was stopped after {clock.budget:g} s; the order of these hits is approximate")
        if matches.total == 0:
            notes.extend(_unknown_categories(searcher, plan, clock))
            notes.extend(_undated_index(searcher, plan, clock))
        counted = _facets(searcher, matches, plan, request.facet_size)
        histogram = searcher.date_histogram(matches).to_dict() if HISTOGRAM in request.facets else None
        if author is not None:
            notes.insert(0, author.note())
        return SearchResults(
            query=plan.searched,
            total=total,
            hits=hits,
            facets={name: [v.to_dict() for v in c.values] for name, c in counted.items()},
            facets_remaining={name: c.remaining for name, c in counted.items()},
            page={"number": page, "size": limit, "pages": page_count(total, limit)},
            relaxed=relaxed,
            unmatched=unmatched,
            suggestion=suggestion,
            corrected=corrected,
            parsed=searcher.describe(matches),
            notes=notes,
            timed_out=timed_out,
            took_ms=clock.elapsed() * 1000,
            date_histogram=histogram,
            mode=mode,
            author=None if author is None else author.to_dict(),
        )

    def warm_up(self, seconds: float = 10.0) -> None:
        """Load what the first search would (the analyzer, facet columns), the
        words spelling suggestions choose from, and the postings of the most
        frequent words (at most ``seconds``), so that a server's first users
        do not wait for them."""
        from searchengine.facets import FACET_NAMES

        def warm(searcher) -> None:
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
        if found is None and doi(record_id):  # a paper named by its DOI
            hits = self.search("doi:" + doi(record_id), limit=1).hits
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

    def documents(self, record_ids) -> tuple[list[dict[str, Any]], list[str]]:
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

    def similar(self, record_id, *, limit: int = 10) -> SearchResults:
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

        def run(searcher) -> SearchResults:
            records = []
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

        Returns ``{"documents": int, "years": {"2026": int, ..., "unknown": int},
        "categories": {"cs.DC": int, ...}}``; years newest first, categories
        by count then name, at most :data:`STATS_VALUES` of each. A paper in
        two categories counts in both. Counted as the year and category
        facets of every document (an aggregation on a cluster).
        """
        from searchengine.filters import build_filters

        def run(searcher) -> dict[str, Any]:
            everything = build_filters((), (), (), False)
            matches = searcher.match(searcher.parse("", allow_empty=True), everything,
                                     time.monotonic() + self.time_budget, [])
            counted = searcher.facets(matches, everything, ("year", "category"), STATS_VALUES)
            years = sorted((v for v in counted["year"].values if v.value is not None),
                           key=lambda v: int(v.value), reverse=True)
            year_counts = {str(v.value): v.count for v in years}
            year_counts.update(("unknown", v.count) for v in counted["year"].values if v.value is None)
            categories = sorted(((v.value, v.count) for v in counted["category"].values if v.value is not None),
                                key=lambda kv: (-kv[1], kv[0]))
            return {"documents": searcher.doc_count(), "years": year_counts, "categories": dict(categories)}

        return self.engine.call(run)

    def close(self) -> None:
        """Release the open files; the object must not be used afterwards."""
        self.engine.close()


def _facets(searcher, matches, plan: Plan, size: int) -> dict:
    """Facet step: ``{name: FacetCounts}`` in the order asked.

    Under an author filter the author facet lists the chosen authors first
    (:func:`searchengine.facets.pin_selected`); it is counted a little
    deeper so that a chosen name is listed even when co-authors outnumber it.
    """
    from searchengine.facets import PIN_MARGIN, pin_selected

    names = tuple(name for name in plan.facets if name != HISTOGRAM)
    if "author" not in names or not plan.filters.authors:
        return searcher.facets(matches, plan.filters, names, size)
    others = tuple(name for name in names if name != "author")
    counted = searcher.facets(matches, plan.filters, others, size) if others else {}
    deeper = searcher.facets(matches, plan.filters, ("author",), min(MAX_FACET_SIZE, size + PIN_MARGIN))
    counted["author"] = pin_selected(deeper["author"], size)
    return {name: counted[name] for name in names}


def _plan(searcher, request: SearchRequest, clock: Clock) -> Plan:
    """Parse step: the query text cleaned, its filters taken out and added to
    the request's filters, the rest parsed. A query that is one arXiv
    category code of the index's papers (``cs.DC``, ``hep-th``) is that
    category's filter.

    Raises:
        QueryError: naming what cannot be understood.
    """
    from searchengine import querylang

    notes: list[str] = []
    searched = querylang.clean(request.query, notes)
    text, query_filters = querylang.split_filters(searched)
    chosen = request.filters + query_filters
    category = _category_typed(searcher, text, chosen, clock)
    if category is not None:
        notes.append(f"'{text}' is an arXiv category: its papers are listed (search \"{text}\" in quotes "
                     "for the words)")
        searched = " ".join(part for part in (f"category:{text}", searched.replace(text, "", 1).strip()) if part)
        chosen, text = chosen + category, ""
    # Without query text, filters choose the papers; with none, a listing
    # sort asks for every paper (the latest papers, say).
    lists_all = request.sort in LISTING_SORTS
    if not text.strip() and not chosen and not lists_all:
        raise QueryError(EMPTY_QUERY)
    lexicon = searcher.lexicon()
    parsed = searcher.parse(text, allow_empty=bool(chosen) or lists_all,
                            frequencies=lexicon.frequencies if lexicon is not None else None)
    return Plan(searched, parsed, chosen, request.sort, request.facets, notes + parsed.notes, lexicon)


# An arXiv category code as a whole query: archive.SUBJECT (cs.DC, astro-ph.CO,
# cond-mat.str-el) or a hyphenated archive (hep-th, quant-ph).
_CATEGORY_CODE = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)?\.[A-Za-z]+(?:-[A-Za-z]+)?|[A-Za-z]+-[A-Za-z]+")


def _category_typed(searcher, text: str, chosen, clock: Clock):
    """The category filter of ``text`` when it is one category code that the
    index's papers have and no category filter is chosen; else ``None``."""
    from searchengine.filters import Filters, build_filters

    if chosen.categories or not _CATEGORY_CODE.fullmatch(text):
        return None
    try:
        category = build_filters(category=[text])
    except QueryError:
        return None
    everything = searcher.parse("", allow_empty=True)
    alone = Filters(categories=category.categories)
    return category if searcher.match(everything, alone, clock.deadline, []).total else None


def _author_reading(searcher, plan: Plan, clock: Clock):
    """Name step: the :class:`~searchengine.names.AuthorReading` of a query that
    names an author whose papers are within the filters, with ``overlap``
    (how many of them the words match too) set; else ``None``."""
    from searchengine import names
    from searchengine.filters import Filters

    found = names.reading(searcher, plan.parsed.text, plan.parsed, plan.filters, plan.sort, plan.lexicon,
                          clock.deadline)
    if found is not None:
        both = plan.filters + Filters(authors=(found.filter,))
        found.overlap = searcher.match(plan.parsed, both, clock.deadline, []).total
    return found


def _author_first(searcher, author, matches, start: int, limit: int, deadline: float):
    """The window of hits ``start .. start+limit`` of the author's papers
    (newest first) followed by the other ``matches`` (by relevance), each
    paper once: ``(window, timed_out)`` as :meth:`searcher.window` gives.

    The author's papers are read whole only when the page reaches past them
    (then fewer than ``start + limit``, a page's depth)."""
    papers = author.papers
    window, timed_out = [], False
    if start < papers:
        window, timed_out = searcher.window(author.matches, "newest", start, min(limit, papers - start), deadline)
    wanted = start + limit - papers
    if wanted <= 0:
        return window, timed_out
    theirs = {searcher.window_key(item) for item in searcher.window(author.matches, "newest", 0, papers,
                                                                    deadline)[0]}
    # The first `wanted` of the other matches, skipping the author's papers among them.
    rest, cut = searcher.window(matches, "relevance", 0, wanted + min(author.overlap, papers), deadline)
    others = [item for item in rest if searcher.window_key(item) not in theirs]
    return window + others[max(0, start - papers):wanted], timed_out or cut


def _unknown_categories(searcher, plan: Plan, clock: Clock) -> list[str]:
    """Notes naming each category filter no paper of the index has (``cs.XX``):
    a search with no hits says why, rather than only that there are none."""
    from searchengine.filters import Filters

    notes = []
    everything = searcher.parse("", allow_empty=True)
    for wanted in plan.filters.categories:
        alone = Filters(categories=(wanted,), primary_only=plan.filters.primary_only)
        if searcher.match(everything, alone, clock.deadline, []).total == 0:
            where = " as its primary category" if plan.filters.primary_only else ""
            notes.append(f"no paper has category {wanted.text or wanted.key}{where}")
    return notes


def _undated_index(searcher, plan: Plan, clock: Clock) -> list[str]:
    """A note when a search with a date filter found nothing in an index
    whose papers have no submitted day at all (sources without dates): the
    filter could match nothing, which "0 hits" alone does not say."""
    from searchengine.dates import parse_since
    from searchengine.filters import Filters

    if not plan.filters.dates:
        return []
    everything = searcher.parse("", allow_empty=True)
    if searcher.match(everything, Filters(dates=(parse_since("0001"),)), clock.deadline, []).total:
        return []
    return ["no paper of this index has a submitted day (its sources gave none), so date filters match none; "
            "filter by year instead"]


def _mode(searcher, request: SearchRequest, matches, plan: Plan) -> str:
    """The mode a search runs in: the one asked for, or by default hybrid when
    the index keeps vectors and the ``semantic`` extra is installed. Without
    query text there is nothing to rank by meaning: lexical.

    Raises:
        QueryError: semantic or hybrid asked of an index without vectors, or
            without the ``semantic`` extra (the message says what to do).
    """
    from searchengine import semantic

    if matches.query is None or _only_negative(plan.parsed):
        return "lexical"
    if request.mode is None:
        return "hybrid" if searcher.has_vectors() and semantic.available() else "lexical"
    if request.mode != "lexical":
        if not searcher.has_vectors():
            raise QueryError(f"{request.mode} mode needs record vectors, and this index has none: index it with "
                             "'searchengine index --vectors' (or search with mode lexical)")
        if not semantic.available():
            raise QueryError(f"{request.mode} mode needs the semantic extra: {semantic.INSTALL_HINT}")
    return request.mode


_encoder_threads = None


def _vectors_unused(searcher) -> bool:
    """Whether the index keeps vectors that this installation cannot use."""
    from searchengine import semantic

    return not semantic.available() and searcher.has_vectors()


def _encode_early(searcher, request: SearchRequest, plan: Plan):
    """The query's vector, being encoded in another thread while the words are
    matched (the model leaves Python's lock while it runs, so the two share
    the cores), when the search may rank by meaning; else ``None``."""
    from searchengine import semantic

    global _encoder_threads
    if request.mode == "lexical" or plan.parsed.tree is None or not semantic.available():
        return None
    if not searcher.has_vectors():
        return None
    from concurrent.futures import ThreadPoolExecutor

    from searchengine.semantic.encoder import query_vector
    from searchengine.semantic.fusion import query_text

    if _encoder_threads is None:
        _encoder_threads = ThreadPoolExecutor(max_workers=2, thread_name_prefix="searchengine-encode")
    return _encoder_threads.submit(query_vector, query_text(plan.parsed.text, plan.parsed.tree))


def _by_meaning(searcher, plan: Plan, matches, mode: str, corrected: str | None, encoding=None):
    """Semantic or hybrid step: the query's vector (``encoding``'s, unless the
    query was corrected), and ``matches`` ranked by it
    (:meth:`searcher.semantic`; :mod:`searchengine.semantic.fusion`)."""
    from searchengine import querylang
    from searchengine.semantic.encoder import SemanticUnavailableError, query_vector
    from searchengine.semantic.fusion import open_query, query_text

    tree = plan.parsed.tree
    try:
        if encoding is not None and not corrected:
            vector = encoding.result()
        else:
            text = querylang.split_filters(corrected)[0] if corrected else plan.parsed.text
            vector = query_vector(query_text(text, tree))
    except SemanticUnavailableError as exc:
        raise QueryError(str(exc)) from None
    return searcher.semantic(matches, vector, mode, open_query(tree))


def _only_negative(parsed) -> bool:
    """Whether the parsed query only excludes words (``NOT transformer``)."""
    from searchengine import querylang

    return querylang.only_negative(parsed.tree)


def _feedback(searcher, matches, plan: Plan, clock: Clock) -> None:
    """Feedback step: a long question ranked by relevance is re-ranked by the
    terms of its best hits, when half the budget is still left."""
    if plan.sort not in (None, "relevance") or not searcher.feedback_applies(matches):
        return
    if clock.elapsed() < clock.budget / 2:
        searcher.rerank(matches)
    else:
        plan.notes.append(FEEDBACK_SKIPPED)


def _suggestion(searcher, plan: Plan, matches, deadline: float):
    """Did-you-mean step (:mod:`searchengine.spelling`), in the context of the
    filters: a :class:`~searchengine.spelling.Correction` or ``None``."""
    from searchengine import spelling

    if plan.parsed.tree is None or not plan.parsed.text or _only_negative(plan.parsed):
        return None
    lexicon = plan.lexicon
    if lexicon is None:  # an engine without a word list offers no corrections
        return None
    corrections = searcher.corrections(matches)
    return spelling.correct(
        lexicon, plan.parsed.text, matches.total, corrections.hits, deadline,
        lambda phrase, text: corrections.phrase_share(phrase, text, spelling.PHRASE_SAMPLE),
    )


def _correction(searcher, plan: Plan, matches, correction, clock: Clock):
    """Correction step: the matches of the corrected query, when they should
    be shown instead of the query as typed (``plan`` then holds the corrected
    query), or ``None``.

    The corrected query is searched instead only when the correction is sure
    (every word it changes is one the index does not hold, one edit from its
    correction: :attr:`~searchengine.spelling.Correction.sure`), finds papers
    with every word, and the query as typed finds none or
    :data:`CLEAR_FACTOR` times fewer. Otherwise, and for a query with quotes,
    ``+word`` or ``word~N`` (it asks for what it says) or one searched with
    ``exact``, the correction is only suggested.
    """
    if _LITERAL.search(plan.searched) or not correction.sure:
        return None
    try:
        parsed = searcher.parse(correction.text)
    except QueryError:
        return None
    found = searcher.match(parsed, plan.filters, clock.deadline, [])
    if not found.total or (matches.total and found.total < CLEAR_FACTOR * matches.total):
        return None
    plan.parsed = parsed
    return found


def _unmatched(searcher, plan: Plan, matches, deadline: float) -> list[str]:
    """The words of the query that no paper within the filters holds (said
    when the query is relaxed: ``SpMV`` matched no paper), at most
    :data:`MAX_UNMATCHED` words checked, and none once ``deadline`` (a
    ``time.monotonic()`` value) has passed: each check counts the word's
    hits within the filters."""
    corrections = searcher.corrections(matches)
    if corrections is None:
        return []
    unmatched = []
    for word in dict.fromkeys(plan.parsed.words[:MAX_UNMATCHED]):
        if time.monotonic() > deadline:
            break
        try:
            if corrections.hits(word) == 0:
                unmatched.append(word)
        except QueryError:
            continue
    return unmatched


def open_index(path: str | os.PathLike | None = None, *, build_from=None, on_build=None) -> SearchIndex:
    """Open the index at ``path`` (default: ``$SEARCHENGINE_INDEX`` or ``index/``).

    Args:
        path: the index folder.
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

    location = path or settings.index_location() or DEFAULT_INDEX_DIR
    if build_from is not None and needs_build(location):
        from searchengine.indexer import build_index

        report = on_build or (lambda summary: None)
        report(None)
        report(build_index(list(build_from), location))
    return SearchIndex(location)
