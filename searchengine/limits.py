"""The search API's limits and names, defined once for the CLI, the web page and the JSON API.

Every front end checks a request with :func:`check_page` (or lets
:meth:`searchengine.search.SearchIndex.search` do it), so that a page the
command line serves is a page the web serves, and the other way round.
"""

from __future__ import annotations

from searchengine.errors import QueryError

#: Hits per page: at most this many.
MAX_LIMIT = 100
#: Hits per page unless asked otherwise.
DEFAULT_LIMIT = 10
#: Deepest hit served (page × limit): paging deeper is better done by
#: narrowing the query with filters, and deep pages cost every engine more
#: than they are worth to anyone reading results.
MAX_DEPTH = 1000
#: Hits in one export of a result set (``search --all``, ``/api/export``):
#: the hits a reader could page to, so an export never holds a hit that
#: paging would not show. Writing 1,000 BibTeX entries takes 0.3 to 1.2 s
#: (TeX escapes cost the most); deeper sets are better narrowed with filters.
EXPORT_LIMIT = MAX_DEPTH
#: Ids and DOIs one ``searchengine show`` looks up at most (each is one lookup).
MAX_LOOKUP = 10_000
#: Ids and DOIs one ``/api/records`` request looks up at most.
MAX_API_LOOKUP = 100
#: Sort orders of a search; ``relevance`` is the default with query text,
#: ``newest`` without.
SORTS = ("relevance", "newest", "oldest", "title")
#: Sort orders that list every paper of the index when a search has neither
#: query text nor a filter (``search --sort newest``: the latest papers),
#: each with the words a heading says its order in. Relevance is not one:
#: without words there is nothing to rank by.
LISTING_SORTS = {"newest": "newest first", "oldest": "oldest first", "title": "by title"}
#: Said when a search has no query text, no filter and no listing sort.
EMPTY_QUERY = "the query is empty: give query text or a filter, or sort by newest, oldest or title to list every paper"
#: Seconds a search may run before it is stopped with the hits found so far.
DEFAULT_TIME_BUDGET = 2.0


def check_page(page: int, limit: int) -> None:
    """Check a page request: ``limit`` in 1..:data:`MAX_LIMIT`, ``page`` from 1,
    and ``page × limit`` at most :data:`MAX_DEPTH`.

    Raises:
        QueryError: naming the value out of range.
    """
    if not 1 <= limit <= MAX_LIMIT:
        raise QueryError(f"limit must be between 1 and {MAX_LIMIT}, not {limit}")
    if page < 1:
        raise QueryError(f"page must be 1 or more, not {page}")
    if page * limit > MAX_DEPTH:
        raise QueryError(
            f"page {page} with limit {limit} reaches past hit {MAX_DEPTH}, the deepest served; "
            "narrow the search with filters instead"
        )


def page_count(total: int, limit: int) -> int:
    """Pages of ``limit`` hits that ``total`` hits fill and paging can reach:
    never past :data:`MAX_DEPTH`, so a page count promises no page that
    :func:`check_page` refuses."""
    return min((total + limit - 1) // limit, MAX_DEPTH // limit)


def check_sort(sort: str | None) -> None:
    """Check a sort name (``None`` is the default order).

    Raises:
        QueryError: ``sort`` is not one of :data:`SORTS`.
    """
    if sort is not None and sort not in SORTS:
        raise QueryError(f"unknown sort {sort!r} (choose from {', '.join(SORTS)})")


#: Records one "papers like these" search may start from (``similar A B ...``).
MAX_SIMILAR_IDS = 20
