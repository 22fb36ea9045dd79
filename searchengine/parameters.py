"""The search parameters, declared once: what each front end reads and how it reaches a search.

:data:`PARAMETERS` lists every parameter of a search: its Python keyword
(:meth:`searchengine.search.SearchIndex.search`, :meth:`SearchRequest.make
<searchengine.request.SearchRequest.make>`), its default, whether it takes
several values, its command-line option (:class:`CliForm`: flags, help,
how click reads it) and its query-string form on the web page and the JSON
API (:class:`WebForm`: name, how it is read, its OpenAPI description and
schema). From this table

- ``searchengine search`` makes its options (:mod:`searchengine.cli.searching`),
- the web page and ``/api/search`` read their query string
  (:meth:`searchengine.web.params.SearchParams.from_args`),
- the OpenAPI document lists the operations' query parameters
  (:mod:`searchengine.web.openapi`), and
- :meth:`SearchRequest.make <searchengine.request.SearchRequest.make>` takes
  its keyword arguments.

A parameter a front end does not offer has no form there (``None``). The
table is data only: it imports neither click nor Flask, and the command line
reads it at start-up, so it stays light (the OpenAPI schema of ``past`` is
made when asked, as it needs :mod:`searchengine.dates`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from searchengine.facets import DEFAULT_FACET_SIZE, FACET_NAMES, FACETS
from searchengine.limits import DEFAULT_LIMIT, MAX_DEPTH, MAX_LIMIT, SORTS
from searchengine.ranking import HYBRID_SEMANTIC_WEIGHT
from searchengine.semantic import MODES

# --- limits of the web's query string -------------------------------------------------

#: At most this many values per repeatable web parameter, each at most :data:`MAX_VALUE_CHARS` long.
MAX_VALUES = 20
MAX_VALUE_CHARS = 200
#: The longest query text the web takes.
MAX_QUERY_CHARS = 2000
#: Values the web page shows of each facet (searchengine.facets.FACETS, in order).
FACET_SIZE = 12
#: Values of the one facet a page lists in full (``more``, its "and N more" link).
EXPANDED_FACET_SIZE = 200

# --- patterns of the values the API reads, for its OpenAPI schemas ---------------------

# Control characters count as spaces (searchengine.web.params), so they may pad a value,
# and a value of spaces alone counts as not given.
_SPACE = r"[\s\x00-\x1f\x7f-\x9f]*"
_YEAR = r"\d{4}"
YEAR_PATTERN = (
    rf"^{_SPACE}(|{_YEAR}|{_YEAR}{_SPACE}[-–]{_SPACE}{_YEAR}|{_YEAR}{_SPACE}[-–]|[-–]{_SPACE}{_YEAR}"
    rf"|(>=|>|<=|<|=){_SPACE}{_YEAR}){_SPACE}$"
)
# since/until (searchengine.dates): a day, a month or a year (0001-9999); a
# day its month lacks (2025-02-30) is refused, as the parameters say.
_DATE_YEAR = r"(000[1-9]|00[1-9]\d|0[1-9]\d\d|[1-9]\d{3})"
DATE_PATTERN = rf"^{_SPACE}(|{_DATE_YEAR}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?)?){_SPACE}$"
CATEGORY_PATTERN = rf"^{_SPACE}([A-Za-z][A-Za-z0-9-]*(\.[A-Za-z0-9-]+)*(\.\*)?)?{_SPACE}$"
# An author name needs a letter or digit in its surname: anywhere, or before
# the comma of "Last, First".
# A letter or digit as both Python and JSON Schema (ECMA-262, whose \w is ASCII) read it.
AUTHOR_PATTERN = rf"^[^,]*[0-9A-Za-z\u00c0-\uffff]|^{_SPACE}$"


def choice_pattern(words: Iterable[str]) -> str:
    """A pattern for one of ``words`` in any letter case, padded by spaces or
    control characters, or for no value: what the API reads for ``sort``,
    ``past`` and ``exact`` (JSON Schema patterns take no case flag)."""
    spelled = ("".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else re.escape(c) for c in w) for w in words)
    return rf"^{_SPACE}(|{'|'.join(spelled)}){_SPACE}$"


def _past_schema() -> dict[str, Any]:
    from searchengine.dates import PAST

    return {"type": "string", "pattern": choice_pattern(PAST)}


# --- the forms of a parameter ----------------------------------------------------------


@dataclass(frozen=True)
class CliForm:
    """A parameter as an option of ``searchengine search`` (made into a click option there).

    Attributes:
        flags: the option's names, long first (``("--year", "-y")``).
        help: its help text.
        dest: the command function's argument, when not the parameter's name.
        metavar: its value's name in ``--help``.
        flag: an on/off flag (``--exact``), no value.
        default: the value when not given (``None``: none); shown in
            ``--help`` with ``show_default``.
        show_default: print the default in ``--help``.
        int_range: a whole number in ``(min, max)`` (``None`` for no bound).
        float_range: a number in ``(min, max)``, both ends included.
        choices: one of these words; ``case_sensitive`` as click's ``Choice``.
        parse: how each value is read and checked (a bad one is a usage error):
            ``"facet.year"`` and the like, a facet's filter
            (:func:`searchengine.filters.parse_filter`); ``"filters.parse_first_author"``
            and the like, a function of :mod:`searchengine.filters` or
            :mod:`searchengine.dates`; or ``"facets"``
            (:func:`searchengine.facets.parse_facet_names`).
        after: list the option after this parameter's (its place in ``--help``
            when that is not the table's order).
    """

    flags: tuple[str, ...]
    help: str
    dest: str | None = None
    metavar: str | None = None
    flag: bool = False
    default: Any = None
    show_default: bool = False
    int_range: tuple[int | None, int | None] | None = None
    float_range: tuple[float, float] | None = None
    choices: tuple[str, ...] | None = None
    case_sensitive: bool = True
    parse: str | None = None
    after: str | None = None


@dataclass(frozen=True)
class WebForm:
    """A parameter in the query string of the web page and the JSON API.

    Attributes:
        name: the query-string name.
        read: how :class:`searchengine.web.params.SearchParams` reads it:
            ``"text"`` (the query: control characters as spaces, at most
            :data:`MAX_QUERY_CHARS`), ``"values"`` (repeatable filter values),
            ``"year_bound"`` (``year_from``/``year_to``: a four-digit year),
            ``"date"`` (a date filter, checked by :mod:`searchengine.dates`),
            ``"choice"`` (one of ``choices``, any letter case),
            ``"name"`` (one of ``choices`` exactly, spaces stripped),
            ``"int"`` (a whole number), ``"share"`` (a number from 0 to 1), ``"limit"`` (hits per page, 1 to
            :data:`~searchengine.limits.MAX_LIMIT`), ``"flag"`` (``1``/``true``/``0``/``false``).
        choices: the words a ``choice`` or ``name`` takes.
        description: its OpenAPI description.
        schema: its OpenAPI schema (of one value, for a repeatable one), or a
            function making it.
        operations: the API operations that list it (``search``: ``/api/search``;
            ``export``: ``/api/export``; ``similar``: both similar operations).
    """

    name: str
    read: str
    description: str
    schema: Mapping[str, Any] | Callable[[], Mapping[str, Any]]
    choices: tuple[str, ...] = ()
    operations: frozenset[str] = frozenset({"search", "export"})

    def openapi_schema(self) -> dict[str, Any]:
        """The OpenAPI schema of one value."""
        return dict(self.schema() if callable(self.schema) else self.schema)


@dataclass(frozen=True)
class Parameter:
    """One search parameter.

    Attributes:
        name: the keyword of :meth:`~searchengine.search.SearchIndex.search`
            and :meth:`~searchengine.request.SearchRequest.make` (``None``:
            a web parameter that is folded into another one, see ``into``).
        default: the value when not given.
        multiple: takes several values (repeat the option or parameter).
        cli: its ``searchengine search`` option, or ``None``.
        web: its query-string form, or ``None``.
        into: the parameter a web-only parameter is folded into when the
            request is made (``year_from`` into ``year``, ``more`` into
            ``facet_size``).
        export: an export (:meth:`~searchengine.search.SearchIndex.export`)
            takes it too.
    """

    name: str | None
    default: Any = None
    multiple: bool = False
    cli: CliForm | None = None
    web: WebForm | None = None
    into: str | None = None
    export: bool = True


_TEXT = {"type": "string", "maxLength": MAX_VALUE_CHARS}
_YEAR_BOUND = {"type": "integer", "minimum": 1000, "maximum": 9999}
# The OpenAPI pattern of one filter value, by facet kind (searchengine.facets.KINDS;
# none: any text).
_KIND_PATTERNS = {"year": YEAR_PATTERN, "author": AUTHOR_PATTERN, "category": CATEGORY_PATTERN}
# Parameters that come with a facet's own, after it (the web's year range, the first author).
_COMPANIONS = {
    "year": (
        Parameter(
            None,
            into="year",
            web=WebForm("year_from", "year_bound", "First year of a range (same as year=A-)", _YEAR_BOUND),
        ),
        Parameter(
            None,
            into="year",
            web=WebForm("year_to", "year_bound", "Last year of a range (same as year=-B)", _YEAR_BOUND),
        ),
    ),
    "author": (
        Parameter(
            "first_author",
            (),
            multiple=True,
            cli=CliForm(
                ("--first-author",),
                "Only papers with this first author (same forms as --author; ORs with --author).",
                metavar="NAME",
                parse="filters.parse_first_author",
            ),
            web=WebForm(
                "first_author",
                "values",
                "First author's name, same forms as author (same as author=^Name; several, and with author: OR)",
                {**_TEXT, "pattern": AUTHOR_PATTERN},
            ),
        ),
    ),
}


def _facet_parameters() -> list[Parameter]:
    """The filter parameter of each declared facet (its option and query-string
    name are the facet's), each followed by its companions, in display order."""
    found = []
    for facet in FACETS:
        pattern = _KIND_PATTERNS.get(facet.kind)
        schema = {**_TEXT, "pattern": pattern} if pattern else dict(_TEXT)
        cli = CliForm(facet.flags, facet.help, parse="facet." + facet.name)
        found.append(
            Parameter(
                facet.name, (), multiple=True, cli=cli, web=WebForm(facet.name, "values", facet.description, schema)
            )
        )
        found.extend(_COMPANIONS.get(facet.name, ()))
    return found


#: Every search parameter, in the order the OpenAPI document lists them
#: (the command line's ``--help`` order but for ``--page``: :attr:`CliForm.after`).
PARAMETERS: tuple[Parameter, ...] = (
    Parameter(
        "query",
        "",
        web=WebForm(
            "q",
            "text",
            f"Query text; empty to browse by filters alone, or without filters to list every paper "
            f"(with sort newest, oldest or title); at most {MAX_QUERY_CHARS} characters",
            {"type": "string", "maxLength": MAX_QUERY_CHARS},
        ),
    ),
    # The facets' filters (searchengine.facets.FACETS), each with its companions.
    *_facet_parameters(),
    Parameter(
        "primary_only",
        False,
        cli=CliForm(("--primary-only",), "Match and count only each paper's primary category.", flag=True),
    ),
    Parameter(
        "since",
        (),
        cli=CliForm(
            ("--since",),
            "Only papers submitted on or after DATE: 2025-03-14, 2025-03 (from the 1st) or 2025.",
            metavar="DATE",
            parse="dates.parse_since",
        ),
        web=WebForm(
            "since",
            "date",
            "Submitted on or after this UTC day: 2025-03-14, 2025-03 (from its 1st) or "
            "2025; a day its month lacks (2025-02-30) is a 400",
            {**_TEXT, "pattern": DATE_PATTERN},
        ),
    ),
    Parameter(
        "until",
        (),
        cli=CliForm(
            ("--until",),
            "Only papers submitted on or before DATE: 2025-06-30, 2025-06 (to the 30th) or 2025.",
            metavar="DATE",
            parse="dates.parse_until",
        ),
        web=WebForm(
            "until",
            "date",
            "Submitted on or before this UTC day: 2025-06-30, 2025-06 (to its last day) "
            "or 2025; a day its month lacks (2025-02-30), or an until that ends before "
            "the since starts, is a 400",
            {**_TEXT, "pattern": DATE_PATTERN},
        ),
    ),
    Parameter(
        "past",
        None,
        cli=CliForm(
            ("--past",),
            "Only papers submitted in the last 7, 30 or 365 days, today (UTC) included.",
            metavar="week|month|year",
            parse="dates.parse_past",
        ),
        web=WebForm(
            "past", "date", "Submitted in the last 7, 30 or 365 days, counted back from today (UTC)", _past_schema
        ),
    ),
    # date: ranges (2025-03..2025-06), from Python only; the front ends write them in the query text.
    Parameter("date", ()),
    Parameter(
        "sort",
        None,
        cli=CliForm(
            ("--sort", "-s"),
            "Order of hits [default: relevance; newest without a query]; newest and oldest go by "
            "submitted date. Alone, newest, oldest or title lists every paper (--sort newest: the "
            "latest papers).",
            choices=SORTS,
        ),
        web=WebForm(
            "sort",
            "choice",
            "Order of hits (default: relevance, or newest without query text); newest "
            "and oldest by submitted day, papers with only a year after the dated ones of "
            "their year, undated papers last. newest, oldest or title without query text "
            "or a filter lists every paper",
            {"type": "string", "pattern": choice_pattern(SORTS)},
            choices=SORTS,
        ),
    ),
    Parameter(
        "page",
        1,
        export=False,
        cli=CliForm(
            ("--page", "-p"),
            f"Page number, from 1 (page × limit at most {MAX_DEPTH}).",
            default=1,
            show_default=True,
            int_range=(1, None),
            after="limit",
        ),
        web=WebForm(
            "page",
            "int",
            f"1-based page; page x limit may not exceed {MAX_DEPTH}",
            {"type": "integer", "minimum": 1, "maximum": MAX_DEPTH, "default": 1},
            operations=frozenset({"search"}),
        ),
    ),
    Parameter(
        "limit",
        DEFAULT_LIMIT,
        export=False,
        cli=CliForm(
            ("--limit", "-n"),
            f"Hits per page (at most {MAX_LIMIT}).",
            default=DEFAULT_LIMIT,
            show_default=True,
            int_range=(1, MAX_LIMIT),
        ),
        web=WebForm(
            "limit",
            "limit",
            f"Hits per page, at most {MAX_LIMIT}",
            {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT},
            operations=frozenset({"search", "similar"}),
        ),
    ),
    Parameter(
        "facets",
        (),
        export=False,
        cli=CliForm(
            ("--facets",),
            f"Count these facets over all hits: {','.join(FACET_NAMES)}; date adds a histogram of submitted dates.",
            dest="facet_names",
            default="",
            metavar="NAMES",
            parse="facets",
        ),
    ),
    Parameter(
        "facet_size",
        DEFAULT_FACET_SIZE,
        export=False,
        cli=CliForm(
            ("--facet-size",),
            "Values listed per facet.",
            default=DEFAULT_FACET_SIZE,
            show_default=True,
            int_range=(1, 1000),
        ),
    ),
    Parameter(
        None,
        into="facet_size",
        export=False,
        web=WebForm(
            "more",
            "name",
            f"A facet the page lists in full: facets are counted up to {EXPANDED_FACET_SIZE} values "
            f"(else {FACET_SIZE})",
            {"type": "string", "enum": list(FACET_NAMES)},
            choices=FACET_NAMES,
            operations=frozenset({"search"}),
        ),
    ),
    Parameter(
        "exact",
        False,
        cli=CliForm(("--exact",), "Search the query as typed, never a correction of it.", flag=True),
        web=WebForm(
            "exact",
            "flag",
            "true (or 1): search the query as typed, never a correction of it; false or 0 "
            "(the default): a query with a clear correction shows its hits",
            {"type": "string", "pattern": choice_pattern(("true", "false", "1", "0"))},
        ),
    ),
    Parameter(
        "mode",
        None,
        cli=CliForm(
            ("--mode", "-m"),
            "Rank by words (lexical), by meaning (semantic) or both (hybrid); semantic and hybrid "
            "need an index with vectors  [default: hybrid when the index has vectors, else lexical]",
            choices=MODES,
            case_sensitive=False,
        ),
        web=WebForm(
            "mode",
            "choice",
            "lexical (words, BM25F), semantic (meaning: nearest record vectors) or hybrid "
            "(both fused); default hybrid when the index keeps vectors, else lexical. "
            "semantic and hybrid on an index without vectors are a 400",
            {"type": "string", "pattern": choice_pattern(MODES)},
            choices=MODES,
        ),
    ),
    Parameter(
        "semantic_weight",
        None,
        cli=CliForm(
            ("--semantic-weight",),
            "Meaning's share of the hybrid ranking, 0 (words alone) to 1 (meaning alone)  "
            f"[default: {HYBRID_SEMANTIC_WEIGHT}]",
            metavar="W",
            float_range=(0.0, 1.0),
        ),
        web=WebForm(
            "semantic_weight",
            "share",
            "Meaning's share of the hybrid ranking, from 0 (words alone) to 1 (meaning alone); "
            f"default {HYBRID_SEMANTIC_WEIGHT}. Other modes do not use it",
            {"type": "number", "minimum": 0, "maximum": 1},
        ),
    ),
    # From Python only: the time budget, and searches without snippets (evaluation).
    Parameter("time_budget", None),
    Parameter("with_snippets", True, export=False),
)

_BY_NAME = {p.name: p for p in PARAMETERS if p.name}
_BY_WEB_NAME = {p.web.name: p for p in PARAMETERS if p.web}


def parameter(name: str) -> Parameter:
    """The parameter whose Python keyword is ``name``.

    Raises:
        KeyError: no parameter has that name.
    """
    return _BY_NAME[name]


def web_parameter(name: str) -> Parameter:
    """The parameter whose query-string name is ``name`` (``q``, ``year_from``, ...).

    Raises:
        KeyError: no parameter has that name.
    """
    return _BY_WEB_NAME[name]


def cli_parameters() -> list[Parameter]:
    """The parameters ``searchengine search`` has options for, in ``--help`` order."""
    ordered = [p for p in PARAMETERS if p.cli]
    for moved in [p for p in ordered if p.cli and p.cli.after]:
        after = moved.cli.after if moved.cli else None
        ordered.remove(moved)
        ordered.insert(next(i for i, p in enumerate(ordered) if p.name == after) + 1, moved)
    return ordered


def web_parameters(operation: str | None = None) -> list[Parameter]:
    """The parameters of the query string (of one API ``operation``: ``search``,
    ``export`` or ``similar``; ``None``: all), in the table's order."""
    return [p for p in PARAMETERS if p.web and (operation is None or operation in p.web.operations)]


#: The query-string parameters that may be given more than once.
REPEATABLE = tuple(p.web.name for p in PARAMETERS if p.web and p.multiple)


def request_options(values: Mapping[str, Any], *, export: bool = False) -> dict[str, Any]:
    """The keyword arguments of :meth:`SearchRequest.make
    <searchengine.request.SearchRequest.make>` (``export``: of
    :meth:`~searchengine.request.SearchRequest.make_export`) from
    ``values`` by parameter name, each missing one at its default.

    Raises:
        TypeError: a name is not a search parameter (or not one an export takes).
    """
    known = {p.name: p for p in PARAMETERS if p.name and p.name != "query" and (p.export or not export)}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise TypeError(f"unexpected keyword argument{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}")
    return {name: values.get(name, p.default) for name, p in known.items()}


__all__ = [
    "PARAMETERS",
    "CliForm",
    "WebForm",
    "Parameter",
    "parameter",
    "web_parameter",
    "cli_parameters",
    "web_parameters",
    "request_options",
    "REPEATABLE",
    "choice_pattern",
]
