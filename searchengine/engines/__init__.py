"""Index engines: what :class:`searchengine.search.SearchIndex` asks of the engine that holds an index.

An engine is chosen by the index location (:func:`open_engine`): a folder is
the embedded engine (:mod:`searchengine.engines.whoosh`, the only package
that imports Whoosh or NLTK); an ``http(s)://host:port/NAME`` URL is an index
on an OpenSearch cluster (:mod:`searchengine.engines.opensearch`, the only
package that imports ``opensearchpy``). The search pipeline above it never holds an
engine's objects; it passes back what the engine returned (its matches).

The face every engine offers (:class:`Engine` and :class:`Searcher`) is
written down here as protocols; the behaviour they promise (hits, order,
totals, facet counts, paging, snippets, errors) is checked for every engine
by the same tests (``tests/contract/``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class Matches(Protocol):
    """What a query matched within the filters (an engine's own object)."""

    @property
    def total(self) -> int:
        """Number of documents matched."""

    @property
    def query(self) -> Any:
        """The engine's query, ``None`` when there was no query text (browse by filters)."""

    @property
    def cut(self) -> bool:
        """Whether the time budget cut matching short (papers may be missing)."""

    @property
    def approximate(self) -> bool:
        """Whether the time budget cut scoring short (the order of the best hits is approximate)."""


class Searcher(Protocol):
    """One consistent view of an index (a generation, a point in time), for one call."""

    def doc_count(self) -> int:
        """Number of documents."""

    def parse(self, text: str, *, allow_empty: bool = False, frequencies=None) -> Any:
        """The query text (filters taken out) parsed; raises QueryError.
        ``frequencies`` choose a long question's words (:func:`searchengine.querylang.parse`)."""

    def match(self, parsed, filters, deadline: float, notes: list[str]) -> Matches:
        """Every document matching ``parsed`` and ``filters`` (:class:`searchengine.filters.Filters`)."""

    def relax(self, parsed, matches: Matches) -> Matches | None:
        """The OR form of the query within the same filters, when it matches something."""

    def describe(self, matches: Matches) -> str:
        """The query as understood, in the engine's notation (``parsed`` of results)."""

    def feedback_applies(self, matches: Matches) -> bool:
        """Whether pseudo-relevance feedback re-ranks these matches."""

    def rerank(self, matches: Matches) -> None:
        """Re-rank ``matches`` by feedback from its best hits, in place."""

    def window(self, matches: Matches, sort: str, start: int, limit: int,
               deadline: float) -> tuple[list[Any], bool]:
        """Hits ``start .. start+limit`` in ``sort`` order (engine handles with
        scores) and whether the deadline cut the ranking short. Relevance ties
        go by year (newest first, unknown last), then id (descending); ``newest``
        and ``oldest`` go by :func:`searchengine.dates.sort_keys`, then id."""

    def hits(self, query, window: list[Any], with_snippets: bool = True) -> list:
        """:class:`~searchengine.results.Hit` s of a window, with snippets of ``query``."""

    def facets(self, matches: Matches, filters, names: Sequence[str], size: int) -> dict:
        """``{name: FacetCounts}``, each facet counted with every filter but its own."""

    def date_histogram(self, matches: Matches) -> Any:
        """The :class:`~searchengine.dates.DateHistogram` of the matches' submitted days."""

    def lexicon(self) -> Any:
        """The indexed words did-you-mean chooses from (see :func:`searchengine.spelling.suggest`),
        with ``frequencies(words)`` (``{word: papers}``, all at once) for choosing a long question's words."""

    def corrections(self, matches: Matches) -> Any:
        """Hits of candidate corrections within the filters: ``hits(text)``,
        ``phrase_share(phrase, text, sample)``."""

    def document(self, record_id: str) -> Any:
        """The :class:`~searchengine.records.Record` with that id (or arXiv
        id with a version, or arXiv URL), or ``None``."""

    def records(self) -> Iterator[Any]:
        """Every record, in index order."""

    def similar(self, record, limit: int) -> tuple[int, list, str]:
        """More like ``record``, itself excluded: ``(total, hits, parsed)``."""

    def warm_up(self, seconds: float) -> None:
        """Load what first searches would, for at most ``seconds``."""


class Engine(Protocol):
    """An open index of one engine; safe to share between threads."""

    name: str

    @property
    def location(self) -> str:
        """Where the index is, as given (never with credentials)."""

    def call(self, work: Callable[[Searcher], T]) -> T:
        """Run ``work`` on one :class:`Searcher`; a call made inside ``work``
        reuses it. Raises IndexNotFoundError / IndexDamagedError."""

    def close(self) -> None:
        """Release what the engine holds."""


def open_engine(location: str | os.PathLike) -> Engine:
    """The engine holding the index at ``location``: an index folder, or an
    OpenSearch URL ``http(s)://[user:password@]host:port[,host:port…]/NAME``.

    Raises:
        IndexNotFoundError: there is no index there.
        IndexDamagedError: the index cannot be opened.
        InputError: a cluster location is malformed.
        SearchEngineError: opensearch-py is not installed.
    """
    from searchengine.engines.opensearch.location import is_cluster, parse_location

    if is_cluster(location):
        cluster = parse_location(location)
        from searchengine.engines.opensearch.engine import OpenSearchEngine

        return OpenSearchEngine(cluster)

    from searchengine.engines.whoosh.engine import WhooshEngine

    return WhooshEngine(location)
