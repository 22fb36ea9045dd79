"""The faces of an engine, written down as protocols: :class:`Engine`,
:class:`Searcher` (with its :class:`Matches`, :class:`Lexicon` and
:class:`Corrections`) and :class:`Writer`, and the shape of a whole-index
check (:class:`IndexCheck`).

Every method the search pipeline (:mod:`searchengine.search`,
:mod:`searchengine.pipeline`, :mod:`searchengine.names`), the ingest
pipeline (:mod:`searchengine.indexer`), the CLI and the web front end call
on an engine's objects is declared here, with its types. Both engines'
classes satisfy them; ``tests/engines/test_protocols.py`` compares their
signatures with these, so a drift fails a test. The behaviour they promise
(hits, order, totals, facet counts, paging, snippets, errors) is checked for
every engine by the same tests (``tests/contract/``).

This module imports nothing heavy: the types it names are only annotations.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

# The words did-you-mean chooses from: declared by its consumer, below the engines.
from searchengine.spelling import Lexicon as Lexicon

if TYPE_CHECKING:
    from searchengine.dates import DateHistogram
    from searchengine.facets import FacetCounts
    from searchengine.filters import Filters
    from searchengine.querylang import ParsedQuery
    from searchengine.records import Record
    from searchengine.results import Hit

T = TypeVar("T")


@dataclass
class Document:
    """A record on its way into an index.

    Attributes:
        record: what is written.
        replace: whether the index holds a copy of its id (to be replaced).
        kind: how it counts in the summary: ``"added"``, ``"replaced"`` or
            ``"merged"`` (a repeat folded into the copy written).
    """

    record: Record
    replace: bool
    kind: str


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


class Corrections(Protocol):
    """Hits of candidate corrections within the filters of one search."""

    def hits(self, text: str) -> int:
        """Papers within the filters that ``text`` (query text) matches. Raises QueryError."""

    def phrase_share(self, phrase: str, text: str, sample: int) -> float:
        """The share (0..1) of at most ``sample`` of ``text``'s hits that hold ``phrase`` as a phrase."""


M = TypeVar("M", bound=Matches)


class Searcher(Protocol[M]):
    """One consistent view of an index (a generation, a point in time), for one call.

    ``M`` is the engine's own :class:`Matches` class: what :meth:`match` returns
    is what the other methods take back (an engine reads its own object only).
    """

    def doc_count(self) -> int:
        """Number of documents."""

    def parse(
        self,
        text: str,
        *,
        allow_empty: bool = False,
        frequencies: Callable[[list[str]], dict[str, int]] | None = None,
    ) -> ParsedQuery:
        """The query text (filters taken out) parsed; raises QueryError.
        ``frequencies`` choose a long question's words (:func:`searchengine.querylang.parse`)."""

    def match(self, parsed: ParsedQuery, filters: Filters, deadline: float, notes: list[str]) -> M:
        """Every document matching ``parsed`` and ``filters`` (:class:`searchengine.filters.Filters`);
        ``deadline`` is a ``time.monotonic()`` value; notes about the match are appended to ``notes``."""

    def relax(self, parsed: ParsedQuery, matches: M) -> M | None:
        """The OR form of the query within the same filters, when it matches something."""

    def describe(self, matches: M) -> str:
        """The query as understood, in the engine's notation (``parsed`` of results)."""

    def feedback_applies(self, matches: M) -> bool:
        """Whether pseudo-relevance feedback re-ranks these matches."""

    def rerank(self, matches: M) -> None:
        """Re-rank ``matches`` by feedback from its best hits, in place."""

    def has_vectors(self) -> bool:
        """Whether the index keeps record vectors (semantic and hybrid modes can run)."""

    def semantic(self, matches: M, vector: Any, mode: str, open_query: bool, weight: float = 0.5) -> M:
        """``matches`` ranked by meaning: ``mode`` ``"semantic"`` (cosine similarity
        to ``vector``, a unit float32 array ``(384,)``) or ``"hybrid"`` (fused with
        the keyword scores: :func:`searchengine.semantic.fusion.fuse`, meaning's
        share ``weight``, 0..1). With ``open_query`` (plain words) the papers
        nearest to ``vector`` within the filters join the candidates; otherwise
        the keyword matches are re-ranked."""

    def explain(self, matches: M, window: list[Any]) -> list[tuple[float, float]]:
        """For each :meth:`window` item of hybrid ``matches`` (:meth:`semantic`),
        its score's keyword part and meaning part (their sum is the score,
        :func:`searchengine.semantic.fusion.fuse_parts`)."""

    def window_key(self, item: Any) -> Any:
        """The document one :meth:`window` item stands for (equal for the same
        document in two windows of one generation)."""

    def window(self, matches: M, sort: str, start: int, limit: int, deadline: float) -> tuple[list[Any], bool]:
        """Hits ``start .. start+limit`` in ``sort`` order (engine handles with
        scores) and whether the deadline cut the ranking short. Relevance ties
        go by year (newest first, unknown last), then id (descending); ``newest``
        and ``oldest`` go by :func:`searchengine.dates.sort_keys`, then id."""

    def hits(self, query: Any, window: list[Any], with_snippets: bool = True) -> list[Hit]:
        """:class:`~searchengine.results.Hit` s of a window, with snippets of ``query``."""

    def facets(self, matches: M, filters: Filters, names: Sequence[str], size: int) -> dict[str, FacetCounts]:
        """``{name: FacetCounts}``, each facet counted with every filter but its own."""

    def date_histogram(self, matches: M) -> DateHistogram:
        """The :class:`~searchengine.dates.DateHistogram` of the matches' submitted days."""

    def lexicon(self) -> Lexicon | None:
        """The indexed words did-you-mean chooses from (see :func:`searchengine.spelling.suggest`),
        ``None`` when the engine offers none."""

    def corrections(self, matches: M) -> Corrections | None:
        """Hits of candidate corrections within the filters of ``matches``."""

    def document(self, record_id: str) -> Record | None:
        """The :class:`~searchengine.records.Record` with that id (or arXiv
        id with a version, or arXiv URL), or ``None``."""

    def records(self) -> Iterator[Record]:
        """Every record, in index order."""

    def similar(self, records: list[Record], limit: int) -> tuple[int, list[Hit], str]:
        """More like ``records``, themselves excluded: ``(total, hits, parsed)``."""

    def warm_up(self, seconds: float) -> None:
        """Load what first searches would, for at most ``seconds``."""


@dataclass
class PartCheck:
    """One part of an index as :func:`~searchengine.engines.check_index` found it: a file of the
    embedded index (``size`` in bytes) or a shard copy on a cluster (``size``:
    its documents). ``problem`` is ``None`` for a sound part."""

    name: str
    size: int | None
    problem: str | None = None


@dataclass
class IndexCheck:
    """What :func:`~searchengine.engines.check_index` found.

    ``version`` names what was checked (a generation folder, or the
    cluster's physical index); ``problem`` is ``None`` when the index is
    sound, else one line naming the first damaged part and how to rebuild.
    """

    location: str
    engine: str
    version: str | None
    documents: int | None
    parts: list[PartCheck] = field(default_factory=list)
    problem: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape: ``{"location", "engine", "version", "documents",
        "sound", "problem", "parts": [{"name", "size", "problem"}]}``."""
        return {
            "location": self.location,
            "engine": self.engine,
            "version": self.version,
            "documents": self.documents,
            "sound": self.problem is None,
            "problem": self.problem,
            "parts": [vars(part) for part in self.parts],
        }


class Engine(Protocol):
    """An open index of one engine; safe to share between threads."""

    name: str
    """The engine's name (``"whoosh"``, ``"opensearch"``)."""

    @property
    def location(self) -> str:
        """Where the index is, as given (never with credentials)."""

    def call(self, work: Callable[[Searcher[Any]], T]) -> T:
        """Run ``work`` on one :class:`Searcher`; a call made inside ``work``
        reuses it. Raises IndexNotFoundError / IndexDamagedError."""

    def check(self) -> IndexCheck:
        """Verify the whole index (see :func:`~searchengine.engines.check_index`);
        damage is reported in the result, not raised. Raises IndexNotFoundError
        (no index there) or ClusterError (the cluster cannot be reached)."""

    def close(self) -> None:
        """Release what the engine holds."""


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

    def __enter__(self) -> Writer:
        """Take the write lock and start the new version. Raises IndexBusyError
        when another writer holds the lock past the lock timeout."""

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        """Release the lock; an unpublished version is discarded."""

    @property
    def updating(self) -> bool:
        """Whether documents go into an existing index (versions can be looked up)."""

    def check(self, record: Record) -> str | None:
        """Why the engine cannot take ``record`` (a reason, reported as ``file:line``), or ``None``."""

    def versions(self, ids: list[str]) -> Mapping[str, int | None]:
        """``{id: indexed version}`` of those ``ids`` the index holds."""

    def write(self, documents: Iterable[Document], on_failed: Callable[[Document, str], None]) -> None:
        """Write :class:`Document` s (``replace``: delete the
        indexed copies of the id first); a document the engine finally refuses
        goes to ``on_failed(document, reason)``. Calls after :meth:`flush`
        rewrite documents already written (repeats folded in)."""

    def flush(self) -> None:
        """Make the first pass's documents readable by :meth:`stored`."""

    def stored(self, ids: list[str]) -> dict[str, Record]:
        """``{id: Record}`` of the ids written so far."""

    def repair(self) -> int:
        """Drop extra copies of one id left by older writers; returns how many."""

    def delete(self, ids: list[str]) -> tuple[int, set[str]]:
        """Delete documents by id: ``(ids deleted, ids not found)``."""

    def publish(self) -> int:
        """Make the new version the one searches see; returns its document count."""
