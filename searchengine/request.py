"""A search request: what the CLI, the web page and the Python API ask of an index, checked once.

Each front end builds one :class:`SearchRequest` from its own inputs (the
CLI from its parsed options, the web page from its query string, the Python
API from :meth:`searchengine.search.SearchIndex.search`'s keyword
arguments), and the search pipeline carries it through its steps
(:meth:`searchengine.search.SearchIndex.run`). A request that exists is
valid: its page, sort, facets and filters were checked when it was made.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from searchengine import limits
from searchengine.errors import QueryError
from searchengine.facets import DEFAULT_FACET_SIZE, FACETS, MAX_FACET_SIZE, parse_facet_names
from searchengine.filters import Filters, _as_tuple, build_filters
from searchengine.limits import DEFAULT_LIMIT, check_page, check_sort
from searchengine.parameters import request_options

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from searchengine.dates import DateFilter
    from searchengine.filters import AuthorFilter

    # Date values as the front ends give them: one or several, as typed or parsed.
    _Dates = str | DateFilter | Iterable[str | DateFilter] | None
    # Author values likewise (an AuthorFilter only inside an iterable).
    _Authors = str | Iterable[str | AuthorFilter] | None


@dataclass(frozen=True)
class SearchRequest:
    """One search, checked.

    Attributes:
        query: the query text as typed (``""``: every paper passing the
            filters, newest first; without filters, every paper of the
            index when ``sort`` is one of
            :data:`~searchengine.limits.LISTING_SORTS`); filters written in
            it (``year:2024``) are taken out when it is parsed.
        filters: the filters given beside the query text
            (:class:`~searchengine.filters.Filters`, dates included).
        sort: ``relevance``, ``newest``, ``oldest``, ``title``, or ``None``
            (relevance with query text, newest without).
        page: 1-based page number.
        limit: hits per page; for an export, the most hits returned.
        facets: facet names to count (:data:`searchengine.facets.FACET_NAMES`;
            ``date`` asks for the date histogram).
        facet_size: values listed per facet.
        time_budget: seconds the search may take (``None``: the index's default).
        with_snippets: False leaves snippets and match offsets empty.
        exact: never search a corrected query in place of the one typed.
        export: every hit up to ``limit`` in one window, without snippets
            or facets (:meth:`searchengine.search.SearchIndex.export`).
        semantic_weight: meaning's share of the hybrid ranking, 0 to 1
            (``None``: :data:`~searchengine.ranking.HYBRID_SEMANTIC_WEIGHT`);
            other modes do not use it.
        mode: ``lexical``, ``semantic``, ``hybrid`` (:data:`searchengine.semantic.MODES`),
            or ``None``: hybrid when the index keeps vectors and the
            ``semantic`` extra is installed, else lexical.

    Raises:
        QueryError: a value is out of range, naming it (when made).
    """

    query: str = ""
    filters: Filters = field(default_factory=Filters)
    sort: str | None = None
    page: int = 1
    limit: int = DEFAULT_LIMIT
    facets: tuple[str, ...] = ()
    facet_size: int = DEFAULT_FACET_SIZE
    time_budget: float | None = None
    with_snippets: bool = True
    exact: bool = False
    export: bool = False
    mode: str | None = None
    semantic_weight: float | None = None

    def __post_init__(self) -> None:
        if self.query is not None and not isinstance(self.query, str):
            raise QueryError(f"the query must be text, not {type(self.query).__name__}")
        for name in ("page", "limit", "facet_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise QueryError(f"{name} must be a whole number, not {value!r}")
        if self.export:
            if self.limit < 1:
                raise QueryError(f"an export holds 1 hit or more, not {self.limit}")
        else:
            check_page(self.page, self.limit)
        check_sort(self.sort)
        if isinstance(self.mode, str):
            object.__setattr__(self, "mode", self.mode.strip().lower() or None)
        check_mode(self.mode)
        check_semantic_weight(self.semantic_weight)
        object.__setattr__(self, "facets", parse_facet_names(self.facets))
        if self.facets and not 1 <= self.facet_size <= MAX_FACET_SIZE:
            raise QueryError(f"facet size must be between 1 and {MAX_FACET_SIZE}, not {self.facet_size}")
        object.__setattr__(self, "query", self.query or "")

    @classmethod
    def make(cls, query: str = "", **options: Any) -> SearchRequest:
        """A request from the keyword arguments of
        :meth:`searchengine.search.SearchIndex.search` (see there; the
        parameters are declared in :data:`searchengine.parameters.PARAMETERS`):
        filter values as text (or already parsed), facets as ``"year,author"``
        or a list; a parameter not given is at its default.

        Raises:
            QueryError: naming the value that cannot be used.
            TypeError: an option is not a search parameter.
        """
        given = request_options(options)
        return cls(
            query or "",
            _filters(given),
            given["sort"],
            given["page"],
            given["limit"],
            given["facets"],
            given["facet_size"],
            given["time_budget"],
            given["with_snippets"],
            given["exact"],
            mode=given["mode"],
            semantic_weight=given["semantic_weight"],
        )

    @classmethod
    def make_export(cls, query: str = "", *, cap: int | None = None, **options: Any) -> SearchRequest:
        """An export request from the keyword arguments of
        :meth:`searchengine.search.SearchIndex.export` (``cap``: default
        :data:`~searchengine.limits.EXPORT_LIMIT`, read when called).

        Raises:
            QueryError: naming the value that cannot be used.
            TypeError: an option is not a parameter an export takes.
        """
        cap = limits.EXPORT_LIMIT if cap is None else cap
        given = request_options(options, export=True)
        return cls(
            query or "",
            _filters(given),
            given["sort"],
            1,
            cap,
            (),
            DEFAULT_FACET_SIZE,
            given["time_budget"],
            False,
            given["exact"],
            export=True,
            mode=given["mode"],
            semantic_weight=given["semantic_weight"],
        )


def _filters(given: dict[str, Any]) -> Filters:
    """The :class:`Filters` of a request's options (by parameter name, all present).

    Raises:
        QueryError: a value cannot be understood, naming it.
    """
    days = date_filters(given["since"], given["until"], given["date"], given["past"])
    authors = _with_first_authors(given["author"], given["first_author"])
    chosen = {facet.name: given[facet.name] for facet in FACETS}
    chosen["author"] = authors
    return build_filters(**chosen, primary_only=given["primary_only"], date=days)


def check_semantic_weight(weight: object) -> None:
    """Refuse a hybrid weight that is not ``None`` or a number from 0 to 1.

    Raises:
        QueryError: naming the value.
    """
    if weight is None:
        return
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0.0 <= weight <= 1.0:
        raise QueryError(f"semantic_weight must be a number from 0 to 1, not {weight!r}")


def check_mode(mode: str | None) -> None:
    """Refuse a query mode that is not ``None`` or one of :data:`searchengine.semantic.MODES`.

    Raises:
        QueryError: naming the mode and the modes there are.
    """
    from searchengine.semantic import MODES

    if mode is not None and mode not in MODES:
        raise QueryError(f"unknown mode {mode!r}: use {', '.join(MODES)}")


def _with_first_authors(author: _Authors, first_author: _Authors) -> tuple[str | AuthorFilter, ...]:
    """Author values with the first-author values marked ``^``, as the query text writes them."""
    from searchengine.filters import FIRST_MARK, AuthorFilter

    def marked(value: str | AuthorFilter) -> str | AuthorFilter:
        if isinstance(value, AuthorFilter) or str(value).startswith(FIRST_MARK):
            return value
        return FIRST_MARK + str(value)

    return _as_tuple(author) + tuple(marked(v) for v in _as_tuple(first_author))


def date_filters(
    since: _Dates = (), until: _Dates = (), date: _Dates = (), past: str | DateFilter | None = None
) -> tuple[DateFilter, ...]:
    """The :class:`~searchengine.dates.DateFilter` s of ``since``, ``until``,
    ``date:`` values and ``past`` (``week``, ``month`` or ``year``), each one
    value or an iterable; text as typed or already parsed.

    Raises:
        QueryError: a value is not a date or a date range, or a ``since``
            starts after an ``until`` ends, naming them.
    """
    from searchengine import dates

    def parsed(values: _Dates, parser: Callable[[str], DateFilter]) -> tuple[DateFilter, ...]:
        items = (values,) if isinstance(values, dates.DateFilter) else _as_tuple(values)
        return tuple(v if isinstance(v, dates.DateFilter) else parser(str(v)) for v in items if v)

    starts, ends = parsed(since, dates.parse_since), parsed(until, dates.parse_until)
    for start in starts:
        for end in ends:
            dates.check_order(start, end)
    return starts + ends + parsed(date, dates.parse_range) + parsed(past, dates.parse_past)
