"""The parameters of a search page or ``/api/search`` call, and the URLs between states.

Every state of the search page is a URL: the query, the filters, the sort
order and the page are query-string parameters, so any view can be
bookmarked, shared and reloaded, and everything works without JavaScript.

The parameters are declared in :mod:`searchengine.parameters` (with their
OpenAPI descriptions); :meth:`SearchParams.from_args` reads each as its
declaration says. Parameters (the same for ``/`` and ``/api/search``):

========== ============================================================
``q``        query text (empty: browse by filters alone; with no filter either,
             ``sort=newest``, ``oldest`` or ``title`` lists every paper:
             ``/?sort=newest`` is the latest papers)
``year``     ``2023``, ``2023-2025``, ``2023-``, ``-2020``; repeatable (OR)
``year_from``/``year_to``  a range from two form fields, same as ``year=A-B``
``author``   an author name; repeatable (OR); ``^Qian`` for a first author
``first_author``  a first author's name, same as ``author=^NAME``; repeatable (OR
             with ``author``)
``category`` a category code (``cs.DC``) or archive (``cs``); repeatable (OR)
``since``    papers submitted on or after a day: ``2025-03-14``, ``2025-03``
             (from its 1st) or ``2025`` (from January 1st)
``until``    papers submitted on or before a day: ``2025-06-30``, ``2025-06``
             (to its 30th) or ``2025`` (to December 31st)
``past``     ``week``, ``month`` or ``year``: submitted in the last 7, 30 or
             365 days, counted back from today (UTC) when the page is served
``sort``     ``relevance``, ``newest``, ``oldest``, ``title`` (default: relevance,
             or newest when there is no query text); newest and oldest go by
             submitted day
``page``     1-based page number
``limit``    hits per page, 1 to :data:`MAX_LIMIT`
``more``     a facet listed in full (up to :data:`EXPANDED_FACET_SIZE` values):
             its "and N more" link
``exact``    ``1``/``true``: search the query as typed, never a correction
             of it (``0``/``false``: the default)
``mode``     ``lexical``, ``semantic`` or ``hybrid``: rank by words, by meaning
             or both (default: hybrid when the index keeps vectors, else lexical)
``semantic_weight`` meaning's share of the hybrid ranking, 0 to 1 (default
             :data:`~searchengine.ranking.HYBRID_SEMANTIC_WEIGHT`)
``format``   ``/api/export`` only: ``bibtex``, ``csv``, ``jsonl`` or ``ris``
========== ============================================================

An export (``/api/export``) takes the same parameters but ``page`` and
``limit``: it holds every hit, up to :data:`~searchengine.limits.EXPORT_LIMIT`.

Only ``year``, ``author``, ``first_author`` and ``category`` may be given more than once; a
second ``q``, ``sort``, ``page``, ``limit``, ``more``, ``exact``, ``mode``, ``semantic_weight``,
``year_from``, ``year_to``, ``since``, ``until`` or ``past`` is
refused with a 400 naming it (which one would count is a guess). An empty
value counts as not given. Lengths and numbers of values are counted as
given (spaces, empty and repeated values included).
Control characters (NUL and the rest of Unicode category Cc) in text values
count as spaces, so the query that is echoed and linked is the one searched.

Values are checked here only for shape and size (so that no request can ask
for unbounded work); what a year range or an author name *means* is decided
by the search API, which raises :class:`~searchengine.errors.QueryError` for
values it cannot understand.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
from urllib.parse import urlencode

from searchengine.errors import QueryError
from searchengine.export import FORMATS
from searchengine.facets import FACET_NAMES
from searchengine.facets import facet as facet_spec
from searchengine.limits import DEFAULT_LIMIT, LISTING_SORTS, MAX_LIMIT, check_page
from searchengine.parameters import (
    EXPANDED_FACET_SIZE,
    FACET_SIZE,
    MAX_QUERY_CHARS,
    MAX_VALUE_CHARS,
    MAX_VALUES,
    REPEATABLE,
    Parameter,
    web_parameters,
)

# The date filters' parameters, in URL order.
DATE_PARAMS = ("since", "until", "past")
# Values of the ``exact`` flag ("" when not given).
_FLAGS = {"": False, "0": False, "false": False, "1": True, "true": True}


def plain_text(raw: str) -> str:
    """``raw`` with control characters (category Cc) and byte-order marks as
    spaces (JSON Schema's ``\\s`` holds U+FEFF, Python's ``str.split`` does
    not), and runs of spaces collapsed."""
    return " ".join("".join(" " if ch == "\ufeff" or unicodedata.category(ch) == "Cc" else ch for ch in raw).split())


def read_ids(args, what: str) -> list[str]:
    """The ``id`` values of a request, in order (``what`` names them in messages).

    Raises:
        QueryError: none is given, or one is empty (naming its position).
    """
    wanted = args.getlist("id")
    if not wanted:
        raise QueryError(f"give one or more {what} as id=... (repeat id for several)")
    if "" in wanted:
        raise QueryError(f"id number {wanted.index('') + 1} is empty")
    return wanted


def _single(args, name: str) -> str:
    """The one value of a parameter that takes one ("" when absent).

    Raises:
        QueryError: the parameter is given more than once.
    """
    values = args.getlist(name)
    if len(values) > 1:
        raise QueryError(
            f"{name} is given {len(values)} times; it takes one value "
            f"(only {', '.join(REPEATABLE[:-1])} and {REPEATABLE[-1]} repeat)"
        )
    return values[0] if values else ""


# A whole number as a JSON number that JSON Schema's "integer" allows: 2, -2,
# 2.0 (no sign "+", no spaces: the OpenAPI document's reading of the query string).
_WHOLE = re.compile(r"(-?[0-9]{1,9})(?:\.0+)?")


def _int(args, name: str, default: int) -> int:
    raw = _single(args, name)
    if not raw:
        return default
    whole = _WHOLE.fullmatch(raw)
    if not whole:
        raise QueryError(f"{name} must be a whole number, not {raw[:40]!r}")
    return int(whole.group(1))


def _share(args, name: str) -> float | None:
    """A number from 0 to 1 (``0.3``, ``1``, ``.25``), ``None`` when not given."""
    raw = plain_text(_single(args, name)).strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 0.0 <= value <= 1.0 or raw.lower().lstrip("+-").startswith(("inf", "nan")):
        raise QueryError(f"{name} must be a number from 0 to 1, not {raw[:40]!r}")
    return value


def read_limit(args) -> int:
    """The ``limit`` parameter: hits per page, 1 to :data:`MAX_LIMIT` (default :data:`DEFAULT_LIMIT`).

    Raises:
        QueryError: not a whole number, or out of range.
    """
    limit = _int(args, "limit", DEFAULT_LIMIT)
    if not 1 <= limit <= MAX_LIMIT:
        raise QueryError(f"limit must be between 1 and {MAX_LIMIT}, not {limit}")
    return limit


#: The formats of ``/api/export``.
EXPORT_FORMATS = tuple(FORMATS)


def read_format(args) -> str:
    """The ``format`` parameter of an export: one of :data:`EXPORT_FORMATS`.

    Raises:
        QueryError: missing, given twice, or not one of them.
    """
    name = _single(args, "format").strip()
    if name not in EXPORT_FORMATS:
        shown = f"not {name[:40]!r}" if name else "it is missing"
        raise QueryError(f"format must be one of {', '.join(EXPORT_FORMATS)}; {shown}")
    return name


def _values(args, name: str) -> tuple[str, ...]:
    given = args.getlist(name)
    if len(given) > MAX_VALUES:
        raise QueryError(f"at most {MAX_VALUES} {name} values are allowed, not {len(given)}")
    values: list[str] = []
    for raw in given:
        if len(raw) > MAX_VALUE_CHARS:
            raise QueryError(f"{name} value is {len(raw)} characters long; at most {MAX_VALUE_CHARS} are allowed")
        value = plain_text(raw)
        if not value:
            continue
        if value not in values:
            values.append(value)
    return tuple(values)


def _year_range(low: str, high: str) -> str | None:
    """``year_from``/``year_to`` as one year value (``2020-2024``, ``2020-``, ``-2024``)."""
    if low and high:
        return low if low == high else f"{low}-{high}"
    if low:
        return f"{low}-"
    if high:
        return f"-{high}"
    return None


def _read(args, declared: Parameter):
    """The value of one search parameter in a query string, read as its
    :class:`~searchengine.parameters.WebForm` says (``read``).

    Raises:
        QueryError: the value is malformed, too long or too many, naming the parameter.
    """
    form = declared.web
    assert form is not None, declared  # (only query-string parameters are read)
    name, kind = form.name, form.read
    if kind == "values":
        return _values(args, name)
    if kind == "limit":
        return read_limit(args)
    if kind == "int":
        return _int(args, name, declared.default)
    if kind == "share":
        return _share(args, name)
    if kind == "text":
        raw = _single(args, name)
        if len(raw) > MAX_QUERY_CHARS:
            raise QueryError(f"the query is {len(raw)} characters long; at most {MAX_QUERY_CHARS} are allowed")
        return plain_text(raw)
    if kind == "year_bound":
        value = _single(args, name)
        whole = _WHOLE.fullmatch(value)
        if not value:
            return ""
        if not (whole and re.fullmatch(r"[0-9]{4}", whole.group(1))):
            raise QueryError(f"{name} must be a four-digit year, not {value[:40]!r}")
        return whole.group(1)
    if kind == "date":
        from searchengine import dates

        value = plain_text(_single(args, name))
        if len(value) > MAX_VALUE_CHARS:
            raise QueryError(f"{name} is {len(value)} characters long; at most {MAX_VALUE_CHARS} are allowed")
        if value:
            getattr(dates, f"parse_{name}")(value)
        return value
    if kind == "flag":
        value = plain_text(_single(args, name)).lower()
        if value not in _FLAGS:
            raise QueryError(f"{name} must be 1, 0, true or false, not {value[:40]!r}")
        return _FLAGS[value]
    # "choice": any letter case; "name": exactly as written
    chosen = (plain_text(_single(args, name)).lower() if kind == "choice" else _single(args, name).strip()) or None
    if chosen is not None and chosen not in form.choices:
        raise QueryError(f"{name} must be one of {', '.join(form.choices)}, not {chosen[:40]!r}")
    return chosen


@dataclass(frozen=True)
class SearchParams:
    """One search request, validated for shape and size.

    Attributes:
        q: query text, whitespace collapsed ("" to browse by filters).
        chosen: the filter values of each declared facet
            (:data:`searchengine.facets.FACETS`), ``(facet name, values)``
            in the facets' order, the values in the order given, each at
            most once (:meth:`values_of`; ``years``, ``authors`` and
            ``categories`` read the first facets').
        sort: one of :data:`SORTS`, or ``None`` for the search API's default.
        page: 1-based page number.
        limit: hits per page.
        more: the facet listed in full, or ``None``.
        exact: search the query as typed, never a correction of it.
        mode: one of :data:`searchengine.semantic.MODES`, or ``None`` for the default.
        semantic_weight: meaning's share of the hybrid ranking (0..1), or ``None`` for the default.
        since, until, past: the date filters as given (``""`` when not).
        from_range: True when ``year_from``/``year_to`` were given (the page
            redirects to the canonical URL with a ``year`` value instead).
    """

    q: str = ""
    chosen: tuple[tuple[str, tuple[str, ...]], ...] = tuple((name, ()) for name in FACET_NAMES)
    sort: str | None = None
    page: int = 1
    limit: int = DEFAULT_LIMIT
    more: str | None = None
    exact: bool = False
    mode: str | None = None
    semantic_weight: float | None = None
    from_range: bool = False
    # Date filters, kept apart from the fields above.
    since: str = ""
    until: str = ""
    past: str = ""

    @classmethod
    def from_args(cls, args) -> SearchParams:
        """Read a request's query string (a Werkzeug ``MultiDict``).

        Raises:
            QueryError: a value is malformed, too long, too many, or past a cap;
                the message names the parameter.
        """
        given = {declared.web.name: _read(args, declared) for declared in web_parameters("search") if declared.web}
        check_page(given["page"], given["limit"])
        if given["since"] and given["until"]:
            from searchengine import dates

            dates.check_order(dates.parse_since(given["since"]), dates.parse_until(given["until"]))
        years = given["year"]
        extra = _year_range(given["year_from"], given["year_to"])
        if extra and extra not in years:
            years += (extra,)
        if len(years) > MAX_VALUES:
            raise QueryError(f"at most {MAX_VALUES} year values are allowed, not {len(years)}")
        # A first author is an author value marked "^", as the query text writes it.
        firsts = tuple(v if v.startswith("^") else "^" + v for v in given["first_author"])
        authors = tuple(dict.fromkeys(given["author"] + firsts))
        if len(authors) > MAX_VALUES:
            raise QueryError(f"at most {MAX_VALUES} author and first_author values are allowed, not {len(authors)}")
        values = {**{name: given[name] for name in FACET_NAMES}, "year": years, "author": authors}
        return cls(
            q=given["q"],
            chosen=tuple((name, values[name]) for name in FACET_NAMES),
            sort=given["sort"],
            page=given["page"],
            limit=given["limit"],
            more=given["more"],
            exact=given["exact"],
            mode=given["mode"],
            semantic_weight=given["semantic_weight"],
            from_range=extra is not None,
            since=given["since"],
            until=given["until"],
            past=given["past"],
        )

    @property
    def years(self) -> tuple[str, ...]:
        """The year filter values."""
        return self.values_of("year")

    @property
    def authors(self) -> tuple[str, ...]:
        """The author filter values (first authors marked ``^``)."""
        return self.values_of("author")

    @property
    def categories(self) -> tuple[str, ...]:
        """The category filter values."""
        return self.values_of("category")

    @property
    def year_bounds(self) -> tuple[str, str]:
        """``(from, to)`` for the year range fields: the one active year range, else empty."""
        if len(self.years) == 1:
            low, dash, high = self.years[0].partition("-")
            if all(not part or (part.isdigit() and len(part) == 4) for part in (low, high)):
                return (low, high if dash else low)
        return ("", "")

    @property
    def has_filters(self) -> bool:
        return any(values for _, values in self.chosen) or bool(self.since or self.until or self.past)

    def _filter_options(self) -> dict[str, object]:
        """The filters and the flag of this state as options of :meth:`SearchRequest.make
        <searchengine.request.SearchRequest.make>` (first authors are author values marked ``^``)."""
        return {
            **dict(self.chosen),
            "since": self.since,
            "until": self.until,
            "past": self.past,
            "exact": self.exact,
        }

    @property
    def lists_all(self) -> bool:
        """True when the state lists every paper of the index: no query, no
        filter, and a sort that lists (``/?sort=newest``: the latest papers)."""
        return not self.q and not self.has_filters and self.sort in LISTING_SORTS

    @property
    def is_empty(self) -> bool:
        """True when there is nothing to search for or list (no query, no
        filter, no sort that lists every paper): the start page."""
        return not self.q and not self.has_filters and not self.lists_all

    def request(self, *, export: bool = False, cap: int | None = None):
        """The :class:`~searchengine.request.SearchRequest` of this state: its
        page with every facet and the date histogram counted or, with
        ``export``, its whole result set (query, filters and sort) up to
        ``cap`` hits (default and at most :data:`~searchengine.limits.EXPORT_LIMIT`).

        Raises:
            QueryError: a filter value cannot be understood, naming it.
        """
        from searchengine.limits import EXPORT_LIMIT
        from searchengine.request import SearchRequest

        if export:
            return SearchRequest.make_export(
                self.q,
                cap=min(cap or EXPORT_LIMIT, EXPORT_LIMIT),
                **self._filter_options(),
                sort=self.sort,
                mode=self.mode,
                semantic_weight=self.semantic_weight,
            )
        # ``more`` lists one facet in full: every facet is counted that far.
        return SearchRequest.make(
            self.q,
            **self._filter_options(),
            sort=self.sort,
            page=self.page,
            limit=self.limit,
            facets=FACET_NAMES + ("date",),
            facet_size=EXPANDED_FACET_SIZE if self.more else FACET_SIZE,
            mode=self.mode,
            semantic_weight=self.semantic_weight,
        )

    def feed_request(self, limit: int):
        """The :class:`~searchengine.request.SearchRequest` of this state's feed:
        its query and filters, newest first, ``limit`` hits, no facets.

        Raises:
            QueryError: a filter value cannot be understood, naming it.
        """
        from searchengine.request import SearchRequest

        return SearchRequest.make(self.q, **self._filter_options(), sort="newest", limit=limit, with_snippets=False)

    def feed_items(self) -> list[tuple[str, str]]:
        """The query-string pairs of this state's feed: its query and filters, without sort and page."""
        return replace(self, page=1, limit=DEFAULT_LIMIT, sort=None, more=None, from_range=False).items()

    def feed_url(self, path: str = "/feed.atom") -> str:
        """The feed of this state's search: its query and filters, without sort and page."""
        query = urlencode(self.feed_items())
        return f"{path}?{query}" if query else path

    def items(self) -> list[tuple[str, str]]:
        """The canonical query-string pairs; defaults are left out."""
        pairs: list[tuple[str, str]] = []
        if self.q:
            pairs.append(("q", self.q))
        pairs += [(name, v) for name, values in self.chosen for v in values]
        pairs += [(name, getattr(self, name)) for name in DATE_PARAMS if getattr(self, name)]
        if self.sort:
            pairs.append(("sort", self.sort))
        if self.limit != DEFAULT_LIMIT:
            pairs.append(("limit", str(self.limit)))
        if self.page != 1:
            pairs.append(("page", str(self.page)))
        if self.more:
            pairs.append(("more", self.more))
        if self.exact:
            pairs.append(("exact", "1"))
        if self.mode:
            pairs.append(("mode", self.mode))
        if self.semantic_weight is not None:
            pairs.append(("semantic_weight", f"{self.semantic_weight:g}"))
        return pairs

    def url(self, path: str = "/") -> str:
        """``path`` with this state's canonical query string."""
        query = urlencode(self.items())
        return f"{path}?{query}" if query else path

    def export_url(self, format_name: str, path: str = "/api/export") -> str:
        """The export of this state's whole result set in ``format_name``: the
        query, filters and sort, without the page and its size."""
        whole = replace(self, page=1, limit=DEFAULT_LIMIT, from_range=False)
        return f"{path}?{urlencode(whole.items() + [('format', format_name)])}"

    def values_of(self, facet: str) -> tuple[str, ...]:
        """The values chosen for ``facet`` (a name in :data:`searchengine.facets.FACETS`)."""
        name = facet_spec(facet).name
        return next(values for chosen, values in self.chosen if chosen == name)

    def _with_values(self, facet: str, values: tuple[str, ...]) -> SearchParams:
        name = facet_spec(facet).name
        chosen = tuple((other, values if other == name else kept) for other, kept in self.chosen)
        return replace(self, chosen=chosen, page=1, from_range=False)

    def without(self, facet: str, value: str) -> SearchParams:
        """This state minus one filter value, back on page 1 (a chip's remove link)."""
        if facet in DATE_PARAMS:
            return self.dated(**{name: getattr(self, name) for name in DATE_PARAMS if name != facet})
        return self._with_values(facet, tuple(v for v in self.values_of(facet) if v != value))

    def toggled(self, facet: str, value, selected: bool) -> SearchParams:
        """The state a facet value's link leads to, back on page 1.

        An unselected value is added as a filter (OR with the facet's other
        values). A selected value given literally is removed; one selected
        through a wider filter (a year inside ``2020-2024``, an author matched
        by initials) replaces that facet's filters, narrowing to it.
        """
        value = str(value)
        current = self.values_of(facet)
        if not selected:
            return self._with_values(facet, current + (value,))
        if any(v.casefold() == value.casefold() for v in current):
            return self._with_values(facet, tuple(v for v in current if v.casefold() != value.casefold()))
        return self._with_values(facet, (value,))

    def cleared(self) -> SearchParams:
        """This state without any filter, back on page 1."""
        chosen = tuple((name, ()) for name, _ in self.chosen)
        return replace(self, chosen=chosen, since="", until="", past="", page=1, from_range=False)

    def with_query(self, q: str) -> SearchParams:
        """This state with another query text (a suggestion's link), back on page 1."""
        return replace(self, q=q, page=1, exact=False, from_range=False)

    def as_typed(self) -> SearchParams:
        """This state searching the query as typed (the "search instead for" link), back on page 1."""
        return replace(self, page=1, exact=True, from_range=False)

    def expanded(self, facet: str | None) -> SearchParams:
        """This state listing ``facet`` in full (``None``: every facet in short)."""
        return replace(self, more=facet, from_range=False)

    def with_page(self, page: int) -> SearchParams:
        return replace(self, page=page, from_range=False)

    def with_sort(self, sort: str) -> SearchParams:
        return replace(self, sort=sort, page=1, from_range=False)

    def chips(self) -> list[tuple[str, str, SearchParams]]:
        """Active filters as ``(facet, value, state without it)``, in URL order."""
        chips = [(facet, value, self.without(facet, value)) for facet in FACET_NAMES for value in self.values_of(facet)]
        return chips + [
            (name, getattr(self, name), self.without(name, "")) for name in DATE_PARAMS if getattr(self, name)
        ]

    def dated(self, since: str = "", until: str = "", past: str = "") -> SearchParams:
        """This state with these date filters instead of its own, back on page 1
        (a histogram bar's link, a "past week" link)."""
        return replace(self, since=since, until=until, past=past, page=1, from_range=False)
