"""Index engines: the door between the engine-free pipelines and the engine that holds an index.

This package is the only code that reads an index location and chooses an
engine for it (:func:`check_location`, :func:`open_engine`,
:func:`open_writer`, :func:`needs_build`): a folder is the embedded engine
(:mod:`searchengine.engines.whoosh`, the only package that imports
Whoosh); an ``http(s)://host:port/NAME`` URL is an index on an OpenSearch
cluster (:mod:`searchengine.engines.opensearch`, the only package that
imports ``opensearchpy``). The CLI, the web front end and the Python API
hand a location over unread.

The search pipeline (:mod:`searchengine.search`) asks an :class:`Engine` for
:class:`Searcher` s and never holds an engine's objects; it passes back what
the engine returned (its matches). The ingest pipeline
(:mod:`searchengine.indexer`) hands a :class:`Writer` documents. These faces
are written down here as protocols; the behaviour they promise (hits, order,
totals, facet counts, paging, snippets, errors) is checked for every engine
by the same tests (``tests/contract/``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

# Part of this package's face (``from searchengine.engines import IndexCheck``); defined below the engines.
from searchengine.engines.checks import IndexCheck, PartCheck  # noqa: F401

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

    def window_key(self, item: Any) -> Any:
        """The document one :meth:`window` item stands for (equal for the same
        document in two windows of one generation)."""
        ...

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


def check_index(location: str | os.PathLike) -> IndexCheck:
    """Verify the whole index at ``location``: every file's checksum and a
    full read of its documents (embedded), or the layout, health and shard
    copies (cluster). Damage is reported in the result, not raised.

    Raises:
        IndexNotFoundError: there is no index there.
        ClusterError: the cluster cannot be reached.
        InputError: a cluster location is malformed.
    """
    location = check_location(location)
    if is_cluster(location):
        engine = open_engine(location)
        try:
            return engine.check()
        finally:
            engine.close()
    from searchengine.engines.whoosh.checking import check_folder

    return check_folder(Path(location))


class Writer(Protocol):
    """One write run on one index, entered as a context manager: the engine's
    write lock is held and a new version of the index is under way; leaving
    without :meth:`publish` (an error, Ctrl-C) discards it, and the index
    stays as it was. Written by the ingest pipeline (:mod:`searchengine.indexer`),
    which reads records, folds repeats and applies the version rules."""

    location: str
    """Where the index is, for messages (never with credentials)."""

    vectors: bool | None
    """Whether the index keeps record vectors (``None`` until entered: as the index does now)."""

    encoded: int
    """Records whose vectors this run encoded (after :meth:`publish`)."""

    @property
    def updating(self) -> bool:
        """Whether documents go into an existing index (versions can be looked up)."""

    def check(self, record) -> str | None:
        """Why the engine cannot take ``record`` (a reason, reported as ``file:line``), or ``None``."""

    def versions(self, ids: list[str]) -> dict[str, int | None]:
        """``{id: indexed version}`` of those ``ids`` the index holds."""

    def write(self, documents: Iterable, on_failed: Callable) -> None:
        """Write :class:`searchengine.indexer.Document` s (``replace``: delete the
        indexed copies of the id first); a document the engine finally refuses
        goes to ``on_failed(document, reason)``. Calls after :meth:`flush`
        rewrite documents already written (repeats folded in)."""

    def flush(self) -> None:
        """Make the first pass's documents readable by :meth:`stored`."""

    def stored(self, ids: list[str]) -> dict[str, Any]:
        """``{id: Record}`` of the ids written so far."""

    def repair(self) -> int:
        """Drop extra copies of one id left by older writers; returns how many."""

    def delete(self, ids: list[str]) -> tuple[int, set[str]]:
        """Delete documents by id: ``(ids deleted, ids not found)``."""

    def publish(self) -> int:
        """Make the new version the one searches see; returns its document count."""


_SCHEMES = ("http://", "https://")
# Text that was meant as a URL: a scheme ("htp://", "http:/", "ftp://") or a
# bare "host:port/NAME". A folder is never created under such a name.
_URL_LIKE = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]+):/+(?P<rest>.*)"
                       r"|(?:[^/@\s]*@)?(?P<host>[\w.-]+:\d{1,5})/(?P<name>\S*)", re.DOTALL)


def is_cluster(location) -> bool:
    """Whether ``location`` names an index on a cluster (an ``http(s)://`` URL);
    a path-like is always a folder."""
    return isinstance(location, str) and location.strip().lower().startswith(_SCHEMES)


def check_location(location: str | os.PathLike) -> str | Path:
    """``location`` checked and in its working form: a cluster URL as text (a
    ``Path`` would fold its ``//``), a folder as a ``Path``.

    Raises:
        InputError: the text is empty, a cluster URL is malformed (naming
            the part), text meant as a URL is not ``http(s)://`` (``htp://``,
            ``http:/``, ``host:9200/NAME``: never taken for a folder), or the
            folder is a file.
    """
    from searchengine.errors import InputError

    if is_cluster(location):
        from searchengine.engines.opensearch.location import parse_location

        parse_location(location)
        return location.strip()
    if not str(location).strip():  # Path("") would be the current directory
        raise InputError("the index location must not be empty")
    if isinstance(location, str) and (url := _URL_LIKE.fullmatch(location.strip())):
        host = url.group("host")
        meant = f"http://{host}/{url.group('name')}" if host else f"http://{url.group('rest')}"
        def shown(text: str) -> str:  # credentials never go into a message
            return re.sub(r"^([^/@]*//?)?[^/@\s]*@", r"\1", text)

        raise InputError(f"{shown(location.strip())!r} is neither an index folder nor a cluster location: "
                         f"a cluster location starts with http:// or https:// (did you mean {shown(meant)!r}?)")
    if Path(location).is_file():
        raise InputError(f"{str(location)!r} is a file, not an index folder")
    return Path(location)


def holds_index(folder: Path) -> bool:
    """Whether ``folder`` is an index folder of the embedded engine (readers skip it)."""
    from searchengine.engines.whoosh.store import holds_index

    return holds_index(folder)


def needs_build(location: str | os.PathLike) -> bool:
    """Whether a first use should build the index at ``location``: a folder
    without an index of this version's layout (waiting for another process's
    build first). An index on a cluster is named by the user and never built
    implicitly: ``False``."""
    location = check_location(location)
    if is_cluster(location):
        return False
    from searchengine.engines.whoosh.store import needs_build

    return needs_build(location)


def open_writer(location: str | os.PathLike, *, mode: str, lock_timeout: float,
                jobs: int | None = None, memory_mb: int = 512, vectors: bool | None = None,
                on_encode=None) -> Writer:
    """A :class:`Writer` for the index at ``location`` (not entered yet).

    Args:
        mode: ``"build"`` (a new index from scratch), ``"update"`` (documents
            added to the current index, or a build without one) or ``"remove"``.
        lock_timeout: seconds to wait for another writer.
        jobs: indexing processes (embedded) or bulk requests in flight (cluster).
        memory_mb: memory for posting buffers or bulk requests.
        vectors: keep record vectors for semantic search (``None``: as the
            index does now; see :mod:`searchengine.semantic`).
        on_encode: called with ``(encoded, to encode)`` while vectors are encoded.

    Raises:
        InputError: the location is malformed (:func:`check_location`).
        SearchEngineError: opensearch-py is not installed.
    """
    location = check_location(location)
    if is_cluster(location):
        from searchengine.engines.opensearch.writer import ClusterWriter

        return ClusterWriter(location, mode=mode, lock_timeout=lock_timeout, jobs=jobs, memory_mb=memory_mb,
                             vectors=vectors, on_encode=on_encode)
    from searchengine.engines.whoosh.writer import WhooshWriter

    return WhooshWriter(location, mode=mode, lock_timeout=lock_timeout, jobs=jobs, memory_mb=memory_mb,
                        vectors=vectors, on_encode=on_encode)


def open_engine(location: str | os.PathLike, *, lazy: bool = False) -> Engine:
    """The engine holding the index at ``location``: an index folder, or an
    OpenSearch URL ``http(s)://[user:password@]host:port[,host:port…]/NAME``.
    With ``lazy``, nothing is opened before the first call (a cluster's
    engine never opens anything before it).

    Raises:
        IndexNotFoundError: there is no index there.
        IndexDamagedError: the index cannot be opened.
        InputError: a cluster location is malformed.
        SearchEngineError: opensearch-py is not installed.
    """
    location = check_location(location)
    if is_cluster(location):
        from searchengine.engines.opensearch.engine import OpenSearchEngine
        from searchengine.engines.opensearch.location import parse_location

        return OpenSearchEngine(parse_location(location))

    from searchengine.engines.whoosh.engine import WhooshEngine

    return WhooshEngine(location, lazy=lazy)
