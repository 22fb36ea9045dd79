"""The search pipeline: the named steps one search runs on one searcher.

:func:`run` is what :meth:`searchengine.search.SearchIndex.run` does within
one engine call: parse the query text and the filters (:func:`_plan`),
match within the filters, suggest and maybe search a correction
(:func:`_suggestion`, :func:`_correction`), re-rank by feedback
(:func:`_feedback`), relax to any word when nothing matched every word,
rank by meaning (:func:`_mode`, :func:`_by_meaning`), read an author's name
(:func:`_author_reading`), take a page of hits with snippets, count facets
(:func:`_facets`). Each step talks to the engine only through the
:class:`~searchengine.engines.base.Searcher` protocol; the time budget of
one search is a :class:`Clock`.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from searchengine import semantic
from searchengine.errors import QueryError
from searchengine.facets import HISTOGRAM, MAX_FACET_SIZE
from searchengine.limits import EMPTY_QUERY, LISTING_SORTS, page_count
from searchengine.ranking import HYBRID_SEMANTIC_WEIGHT
from searchengine.request import SearchRequest
from searchengine.results import Hit, SearchResults

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

    from searchengine.engines.base import Lexicon, M, Matches, Searcher
    from searchengine.facets import FacetCounts
    from searchengine.filters import Filters
    from searchengine.names import AuthorReading
    from searchengine.querylang import ParsedQuery
    from searchengine.spelling import Correction

#: A sure correction (:attr:`searchengine.spelling.Correction.sure`) is
#: searched instead of the typed query when it finds this many times as many
#: papers (or the typed one finds none).
CLEAR_FACTOR = 20
#: Words of a relaxed query checked for matching no paper at all.
MAX_UNMATCHED = 10
# Quotes, a required word (+word) or a fuzzy one (word~1): the user asks
# for exactly what was typed.
_LITERAL = re.compile(r'"|~|(?:^|\s)\+\S')
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
    parsed: ParsedQuery
    filters: Filters
    sort: str | None
    facets: tuple[str, ...]
    notes: list[str] = field(default_factory=list)
    lexicon: Lexicon | None = None


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


def run(searcher: Searcher[M], request: SearchRequest, clock: Clock) -> SearchResults:
    """Run the search pipeline's steps for ``request`` on one ``searcher`` (one
    generation of the index, held for the whole call), within ``clock``'s budget.

    Raises:
        QueryError: the query text or an option cannot be understood, or a
            semantic mode is asked of an index that cannot run it.
        IndexDamagedError: the index cannot be read.
    """
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
        weight = HYBRID_SEMANTIC_WEIGHT if request.semantic_weight is None else float(request.semantic_weight)
        matches = _by_meaning(searcher, plan, matches, mode, corrected, encoding, weight)
        from searchengine.semantic.fusion import open_query

        if mode == "semantic" and open_query(plan.parsed.tree):
            # The hits are the nearest in meaning, not papers with some of the words.
            relaxed, unmatched = False, []
            notes.append(
                f"ranked by meaning alone: the {matches.total:,} papers nearest to the query"
                + (" within the filters" if plan.filters else "")
            )
    elif request.mode is None and matches.query is not None and _vectors_unused(searcher):
        notes.append(
            f"this index keeps vectors, but the semantic extra is not installed: ranked by words "
            f"alone ({semantic.INSTALL_HINT})"
        )
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
        _explained(hits, searcher.explain(matches, window) if mode == "hybrid" else None, mode, plan)
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


def _facets(searcher: Searcher[M], matches: M, plan: Plan, size: int) -> dict[str, FacetCounts]:
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


def _plan(searcher: Searcher[Any], request: SearchRequest, clock: Clock) -> Plan:
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
        notes.append(
            f"'{text}' is an arXiv category: its papers are listed (search \"{text}\" in quotes for the words)"
        )
        searched = " ".join(part for part in (f"category:{text}", searched.replace(text, "", 1).strip()) if part)
        chosen, text = chosen + category, ""
    # Without query text, filters choose the papers; with none, a listing
    # sort asks for every paper (the latest papers, say).
    lists_all = request.sort in LISTING_SORTS
    if not text.strip() and not chosen and not lists_all:
        raise QueryError(EMPTY_QUERY)
    lexicon = searcher.lexicon()
    parsed = searcher.parse(
        text, allow_empty=bool(chosen) or lists_all, frequencies=lexicon.frequencies if lexicon is not None else None
    )
    return Plan(searched, parsed, chosen, request.sort, request.facets, notes + parsed.notes, lexicon)


# An arXiv category code as a whole query: archive.SUBJECT (cs.DC, astro-ph.CO,
# cond-mat.str-el) or a hyphenated archive (hep-th, quant-ph).
_CATEGORY_CODE = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)?\.[A-Za-z]+(?:-[A-Za-z]+)?|[A-Za-z]+-[A-Za-z]+")


def _category_typed(searcher: Searcher[Any], text: str, chosen: Filters, clock: Clock) -> Filters | None:
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


def _author_reading(searcher: Searcher[Any], plan: Plan, clock: Clock) -> AuthorReading | None:
    """Name step: the :class:`~searchengine.names.AuthorReading` of a query that
    names an author whose papers are within the filters, with ``overlap``
    (how many of them the words match too) set; else ``None``."""
    from searchengine import names
    from searchengine.filters import Filters

    found = names.reading(
        searcher, plan.parsed.text, plan.parsed, plan.filters, plan.sort, plan.lexicon, clock.deadline
    )
    if found is not None:
        both = plan.filters + Filters(authors=(found.filter,))
        found.overlap = searcher.match(plan.parsed, both, clock.deadline, []).total
    return found


def _author_first(
    searcher: Searcher[Any], author: AuthorReading, matches: Matches, start: int, limit: int, deadline: float
) -> tuple[list[Any], bool]:
    """The window of hits ``start .. start+limit`` of the author's papers
    (newest first) followed by the other ``matches`` (by relevance), each
    paper once: ``(window, timed_out)`` as :meth:`searcher.window` gives.

    The author's papers are read whole only when the page reaches past them
    (then fewer than ``start + limit``, a page's depth)."""
    papers = author.papers
    window: list[Any] = []
    timed_out = False
    if start < papers:
        window, timed_out = searcher.window(author.matches, "newest", start, min(limit, papers - start), deadline)
    wanted = start + limit - papers
    if wanted <= 0:
        return window, timed_out
    theirs = {searcher.window_key(item) for item in searcher.window(author.matches, "newest", 0, papers, deadline)[0]}
    # The first `wanted` of the other matches, skipping the author's papers among them.
    rest, cut = searcher.window(matches, "relevance", 0, wanted + min(author.overlap, papers), deadline)
    others = [item for item in rest if searcher.window_key(item) not in theirs]
    return window + others[max(0, start - papers) : wanted], timed_out or cut


def _unknown_categories(searcher: Searcher[Any], plan: Plan, clock: Clock) -> list[str]:
    """Notes naming each category filter no paper of the index has (``cs.XX``):
    a search with no hits says why, rather than only that there are none."""
    from searchengine.filters import Filters

    notes: list[str] = []
    everything = searcher.parse("", allow_empty=True)
    for wanted in plan.filters.categories:
        alone = Filters(categories=(wanted,), primary_only=plan.filters.primary_only)
        if searcher.match(everything, alone, clock.deadline, []).total == 0:
            where = " as its primary category" if plan.filters.primary_only else ""
            notes.append(f"no paper has category {wanted.text or wanted.key}{where}")
    return notes


def _undated_index(searcher: Searcher[Any], plan: Plan, clock: Clock) -> list[str]:
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
    return [
        "no paper of this index has a submitted day (its sources gave none), so date filters match none; "
        "filter by year instead"
    ]


def _mode(searcher: Searcher[M], request: SearchRequest, matches: M, plan: Plan) -> str:
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
            raise QueryError(
                f"{request.mode} mode needs record vectors, and this index has none: index it with "
                "'searchengine index --vectors' (or search with mode lexical)"
            )
        if not semantic.available():
            raise QueryError(f"{request.mode} mode needs the semantic extra: {semantic.INSTALL_HINT}")
    return request.mode


_encoder_threads: ThreadPoolExecutor | None = None


def _vectors_unused(searcher: Searcher[Any]) -> bool:
    """Whether the index keeps vectors that this installation cannot use."""
    from searchengine import semantic

    return not semantic.available() and searcher.has_vectors()


def _encode_early(searcher: Searcher[Any], request: SearchRequest, plan: Plan) -> Future[Any] | None:
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


def _by_meaning(
    searcher: Searcher[M],
    plan: Plan,
    matches: M,
    mode: str,
    corrected: str | None,
    encoding: Future[Any] | None = None,
    weight: float = HYBRID_SEMANTIC_WEIGHT,
) -> M:
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
    return searcher.semantic(matches, vector, mode, open_query(tree), weight)


def _explained(hits: list[Hit], parts: list[tuple[float, float]] | None, mode: str, plan: Plan) -> None:
    """Set each hit's ``explain`` (:class:`~searchengine.results.Hit`): its
    score's keyword and meaning parts (``parts``, from the engine in hybrid
    mode; the whole score on one side in the others) and the fields its
    query words matched."""
    words = {w.casefold() for w in re.findall(r"\w+", plan.parsed.text or "") if len(w) > 1}
    for number, hit in enumerate(hits):
        keyword: float | None
        meaning: float | None
        if parts is not None:
            keyword, meaning = parts[number]
        else:
            keyword, meaning = (hit.score, None) if mode == "lexical" else (None, hit.score)
        fields = [name for name, spans in (("title", hit.title_matches), ("abstract", hit.snippet_matches)) if spans]
        named = {w.casefold() for name in hit.authors for w in re.findall(r"\w+", name)}
        if words & named:
            fields.append("authors")
        hit.explain = {
            "keyword": None if keyword is None else round(keyword, 4),
            "meaning": None if meaning is None else round(meaning, 4),
            "fields": fields,
        }


def _only_negative(parsed: ParsedQuery) -> bool:
    """Whether the parsed query only excludes words (``NOT transformer``)."""
    from searchengine import querylang

    return querylang.only_negative(parsed.tree)


def _feedback(searcher: Searcher[M], matches: M, plan: Plan, clock: Clock) -> None:
    """Feedback step: a long question ranked by relevance is re-ranked by the
    terms of its best hits, when half the budget is still left."""
    if plan.sort not in (None, "relevance") or not searcher.feedback_applies(matches):
        return
    if clock.elapsed() < clock.budget / 2:
        searcher.rerank(matches)
    else:
        plan.notes.append(FEEDBACK_SKIPPED)


def _suggestion(searcher: Searcher[M], plan: Plan, matches: M, deadline: float) -> Correction | None:
    """Did-you-mean step (:mod:`searchengine.spelling`), in the context of the
    filters: a :class:`~searchengine.spelling.Correction` or ``None``."""
    from searchengine import spelling

    if plan.parsed.tree is None or not plan.parsed.text or _only_negative(plan.parsed):
        return None
    lexicon = plan.lexicon
    if lexicon is None:  # an engine without a word list offers no corrections
        return None
    corrections = searcher.corrections(matches)
    if corrections is None:  # nor without a count of a correction's hits
        return None
    return spelling.correct(
        lexicon,
        plan.parsed.text,
        matches.total,
        corrections.hits,
        deadline,
        lambda phrase, text: corrections.phrase_share(phrase, text, spelling.PHRASE_SAMPLE),
        getattr(corrections, "prefetch", None),
    )


def _correction(searcher: Searcher[M], plan: Plan, matches: M, correction: Correction, clock: Clock) -> M | None:
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


def _unmatched(searcher: Searcher[M], plan: Plan, matches: M, deadline: float) -> list[str]:
    """The words of the query that no paper within the filters holds (said
    when the query is relaxed: ``SpMV`` matched no paper), at most
    :data:`MAX_UNMATCHED` words checked, and none once ``deadline`` (a
    ``time.monotonic()`` value) has passed: each check counts the word's
    hits within the filters."""
    corrections = searcher.corrections(matches)
    if corrections is None:
        return []
    unmatched: list[str] = []
    for word in dict.fromkeys(plan.parsed.words[:MAX_UNMATCHED]):
        if time.monotonic() > deadline:
            break
        try:
            if corrections.hits(word) == 0:
                unmatched.append(word)
        except QueryError:
            continue
    return unmatched
