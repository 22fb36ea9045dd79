"""The OpenSearch engine's writer: documents into an index behind an alias, in bulk.

:class:`ClusterWriter` is the cluster's :class:`searchengine.engines.Writer`;
the engine-free ingest pipeline (:mod:`searchengine.indexer`) reads the
records, folds repeated ids and applies the version rules, and hands it
documents. Its modes:

* ``"build"`` writes into a new physical index ``NAME-<UTC timestamp>``
  and, once every document is in and counted, moves the alias ``NAME`` to
  it in one ``POST /_aliases`` (the old index out, the new one in), then
  deletes the old physical index. Searches through the alias see the old
  index or the new one, never a half-built one; a failed build deletes what
  it made and leaves the alias as it was.
* ``"update"`` adds or replaces documents by id through the alias (a build
  when there is no index yet).
* ``"remove"`` deletes documents by id through the alias.

A bulk item the cluster rejects for a passing reason (429 overloaded: a
full write queue, ``es_rejected_execution_exception``, indexing pressure;
503 shard unavailable, ...) is sent again in rounds for as long as each
round writes some of what it sends; :data:`RETRY_ROUNDS` rounds in a row
that write none, with pauses doubling up to :data:`RETRY_PAUSE_MAX`, end
the tries. So are the items of
a bulk request that failed as a whole (429, or its node died and the
client's retries on other nodes failed too) while some node still answers;
after an answer with rejected items, the next request waits (backpressure).
An item rejected through every round is never dropped: the run fails
(ClusterError; a build is not published). An item refused outright (a
field OpenSearch cannot take) is handed back to the pipeline, which reports
it as ``file:line``, and the command exits 1. Every run ends by counting the
index (a refresh, then ``_count``) against what was acknowledged.

Writers of one ``NAME`` take turns on a lock document in the index
``NAME-lock`` (:class:`~searchengine.engines.opensearch.lock.WriteLock`): a
lease renewed while the run lasts, so a killed writer's lock expires by itself.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, closing
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from searchengine.engines.opensearch import mapping
from searchengine.engines.opensearch.client import cluster_errors, connect
from searchengine.engines.opensearch.location import ClusterLocation, parse_location
from searchengine.engines.opensearch.lock import LOCK_LEASE as LOCK_LEASE  # the lock was defined here first
from searchengine.engines.opensearch.lock import WriteLock as WriteLock
from searchengine.engines.opensearch.lock import lock_holder as lock_holder
from searchengine.engines.opensearch.lock import lock_name as lock_name
from searchengine.errors import ClusterError, IndexDamagedError, IndexNotFoundError
from searchengine.records import Record

if TYPE_CHECKING:
    from types import TracebackType

    from opensearchpy import OpenSearch

    from searchengine.engines.base import Document
    from searchengine.engines.opensearch.feed import Vectors, VectorSource

#: Documents per bulk request.
BULK_DOCS = 500
#: Largest bulk request body, in bytes (OpenSearch works best with a few MB).
BULK_BYTES_MAX = 10 * 2**20
#: Rounds in a row that write none of the items they re-send (rejected for a
#: passing reason) before the run fails; a round that writes some starts the count again.
RETRY_ROUNDS = 8
#: Pause before the first re-send (seconds); doubled each round that wrote
#: nothing, and after each bulk answer with rejected items before the next request is sent.
RETRY_PAUSE = 1.0
#: Longest of those pauses (seconds): the rounds span about two minutes.
RETRY_PAUSE_MAX = 30.0
# Item statuses worth sending again: overloaded, shard unavailable, timeouts.
_TRANSIENT = {408, 429, 500, 502, 503, 504}
#: Bulk requests in flight by default (10,000 arXiv records into one 2-core
#: node: 1 request 333 records/s, 2: 548, 4: 844), and at most.
DEFAULT_JOBS = 4
MAX_JOBS = 16
#: Longest document id OpenSearch takes, in UTF-8 bytes (a longer one fails
#: the whole bulk request, so it is reported before sending).
MAX_ID_BYTES = 512
#: Seconds a build waits for the new index's replicas (green) before
#: switching the alias anyway (its primaries are all active by then).
GREEN_WAIT = 120

_STAMP = "%Y%m%d%H%M%S%f"  # 20 digits, UTC


def physical_name(alias: str, when: datetime | None = None) -> str:
    """A new physical index name for ``alias``: ``NAME-<20-digit UTC timestamp>``."""
    return f"{alias}-{(when or datetime.now(timezone.utc)).strftime(_STAMP)}"


def is_physical_name(alias: str, name: str) -> bool:
    """True when ``name`` has the form :func:`physical_name` gives for ``alias``."""
    return re.fullmatch(re.escape(alias) + r"-\d{20}", name) is not None


# --------------------------------------------------------------------------
# The alias and its physical indexes


def aliased_indexes(client: OpenSearch, location: ClusterLocation) -> list[str] | None:
    """The physical indexes behind the alias ``location.index``; ``None`` when
    neither an alias nor an index of that name exists.

    Raises:
        IndexDamagedError: the name belongs to a plain index (not an alias),
            which this product does not write over.
        ClusterError: the cluster failed the request.
    """
    name = location.index
    with cluster_errors(location, "look up the index alias"):
        if client.indices.exists_alias(name=name):
            return sorted(client.indices.get_alias(name=name))
        if client.indices.exists(index=name):
            raise IndexDamagedError(
                f"{location}: {name} is a plain index, not an alias this product wrote; "
                "delete it or choose another index name (searchengine keeps NAME as an alias "
                "of NAME-<timestamp> indexes)"
            )
    return None


def _single(client: OpenSearch, location: ClusterLocation) -> str | None:
    """The one physical index behind the alias, or ``None`` when there is no index.

    Raises:
        IndexDamagedError: the alias points at several indexes (or a plain index has the name).
    """
    indexes = aliased_indexes(client, location)
    if indexes is None:
        return None
    if len(indexes) != 1:
        raise IndexDamagedError(
            f"{location}: the alias points at {len(indexes)} indexes ({', '.join(indexes) or 'none'}); "
            "rebuild it with 'searchengine index PATH...'"
        )
    return indexes[0]


def unaliased_indexes(client: OpenSearch, location: ClusterLocation, keep: Iterable[str]) -> list[str]:
    """The physical indexes of this alias other than ``keep`` (those it points
    at): named like :func:`physical_name` and marked in their mapping as
    written for this alias. Sorted. Without a live write lock, they were left
    by a build that was killed (or whose clean-up failed).

    Raises:
        ClusterError: the cluster failed the request.
    """
    alias, keep = location.index, set(keep)
    with cluster_errors(location, "list the alias's old indexes"):
        found = client.indices.get_mapping(
            index=f"{alias}-*", expand_wildcards="all", allow_no_indices=True, ignore_unavailable=True
        )
    stale = []
    for name, body in found.items():
        meta = (body.get("mappings") or {}).get("_meta", {}).get(mapping.META_KEY, {})
        if name not in keep and is_physical_name(alias, name) and meta.get("alias") == alias:
            stale.append(name)
    return sorted(stale)


def _remove_stale(client: OpenSearch, location: ClusterLocation, keep: Iterable[str]) -> list[str]:
    """Delete physical indexes of this alias that it does not point at (left by a
    killed build; see :func:`unaliased_indexes`). Returns their names."""
    stale = unaliased_indexes(client, location, keep)
    for name in stale:
        with cluster_errors(location, f"delete the unfinished index {name}", index=name):
            client.indices.delete(index=name, ignore_unavailable=True)
    return stale


# --------------------------------------------------------------------------
# Bulk writing with retries and reporting


class _BulkWriter:
    """Sends index actions in bulk, re-sends transient rejections, hands back the rest.

    Documents (the pipeline's, with ``record``) go in through :meth:`send`;
    results come back per item; an item the cluster refuses for good is
    handed to ``on_failed(document, reason)``; one still rejected for a
    passing reason once :data:`RETRY_ROUNDS` rounds in a row wrote nothing
    fails the run (ClusterError).
    """

    def __init__(
        self,
        client: OpenSearch,
        location: ClusterLocation,
        index: str,
        *,
        jobs: int,
        memory_mb: int,
        lock: WriteLock | None,
    ) -> None:
        self.client, self.location, self.index = client, location, index
        self.jobs, self.lock = max(1, jobs), lock
        self.chunk_bytes = max(2**20, min(BULK_BYTES_MAX, memory_mb * 2**20 // (4 * (self.jobs + 1))))
        # Ids of which some copy was written, and of those the ones new to the index.
        self.written: set[str] = set()
        self.added: set[str] = set()
        # Fields added to a record's source until it is written (its vector).
        self.extra: dict[str, dict] = {}
        # Backpressure: no request is sent before _resume_at (monotonic seconds);
        # _backoff doubles with each answer that had rejected items.
        self._backoff = 0.0
        self._resume_at = 0.0

    def send(self, documents: Iterable[Document], on_failed: Callable[[Document, str], None]) -> None:
        """Write every document; transient rejections are re-sent in rounds.

        Raises:
            ClusterError: items still rejected for a passing reason after
                :data:`RETRY_ROUNDS` rounds in a row that wrote none of them
                (never dropped), or no node answers.
        """
        started = time.monotonic()
        retry = self._round(documents, on_failed)
        tries = stalled = 1  # rounds sent; rounds in a row that wrote nothing of what they sent
        while retry:
            if stalled > RETRY_ROUNDS:
                raise self._still_rejected(retry, tries, time.monotonic() - started)
            # A slow cluster that still takes some of each round is waited for.
            time.sleep(min(RETRY_PAUSE_MAX, RETRY_PAUSE * 2 ** (stalled - 1)))
            before = len(retry)
            retry = self._round([document for document, _ in retry], on_failed)
            tries += 1
            stalled = stalled + 1 if len(retry) >= before else 1

    def _still_rejected(self, retry: list[tuple[Document, str]], tries: int, seconds: float) -> ClusterError:
        first, reason = retry[0]
        outcome = (
            "the documents before were written: run the same command again"
            if self.index == self.location.index
            else "nothing was published, the index is as it was"
        )
        return ClusterError(
            f"{self.location.redacted(self.index)}: {_counted(len(retry), 'document')} still rejected after "
            f"{tries} tries over {seconds:,.0f} s (the first: {first.record.id} at "
            f"{first.record.source}, {reason}); {outcome}"
        )

    def _wait_for_pressure(self) -> None:
        pause = self._resume_at - time.monotonic()
        if pause > 0:
            time.sleep(pause)

    def _round(
        self, documents: Iterable[Document], on_failed: Callable[[Document, str], None]
    ) -> list[tuple[Document, str]]:
        """One pass over ``documents``; returns those rejected for a passing
        reason, each with ``"STATUS: reason"``."""
        from opensearchpy import helpers

        in_flight: dict[str, Document] = {}

        def actions() -> Iterator[dict]:
            for document in documents:
                self._wait_for_pressure()  # the cluster asked to slow down
                in_flight[document.record.id] = document
                yield _index_action(self.index, document.record, self.extra.get(document.record.id))

        # A bulk request that fails as a whole (429 after the client's own
        # retries, or its node died mid-request and the retries on the other
        # nodes failed too) comes back item by item with its status, or "N/A".
        options: dict[str, Any] = dict(
            chunk_size=BULK_DOCS, max_chunk_bytes=self.chunk_bytes, raise_on_error=False, raise_on_exception=False
        )
        if self.jobs > 1:  # every item's result comes back, in order
            results = helpers.parallel_bulk(
                self.client, actions(), thread_count=self.jobs, queue_size=self.jobs, **options
            )
        else:
            results = helpers.streaming_bulk(self.client, actions(), max_retries=0, yield_ok=True, **options)
        retry: list[tuple[Document, str]] = []
        probed = False
        with cluster_errors(self.location, "bulk indexing", index=self.index), closing(results):
            # Closed here, in this thread, however the loop ends (a lost lease, Ctrl-C):
            # left to the garbage collector, parallel_bulk's clean-up may run in one
            # of its own threads, which cannot join itself.
            for ok, result in results:
                if self.lock is not None:
                    self.lock.check()
                ((op, info),) = result.items()
                document = in_flight.pop(str(info.get("_id")), None)
                if document is None:
                    continue
                if ok:
                    self.written.add(document.record.id)
                    if document.kind == "added":
                        self.added.add(document.record.id)
                    self.extra.pop(document.record.id, None)
                    if self._backoff and time.monotonic() >= self._resume_at:
                        self._backoff = 0.0  # taken again after the pause: full speed
                    continue
                status, error = info.get("status"), info.get("error")
                if not isinstance(status, int) and not probed:
                    # A whole request failed: with no node answering at all, stop now
                    # (ClusterError) rather than send every other request in vain.
                    probed = True
                    self.client.cluster.health(local=True)  # any node's own view: no master needed
                if _passing(status, error):
                    self._slow_down()
                    retry.append((document, f"{status}: {_error_text(self.location, error)}"))
                else:
                    on_failed(document, self._reason(document.record, status, error))
        return retry

    def _slow_down(self) -> None:
        """An answer with items rejected as overloaded: hold the next requests back,
        twice as long as last time (from :data:`RETRY_PAUSE` up to :data:`RETRY_PAUSE_MAX`)."""
        now = time.monotonic()
        if now < self._resume_at:
            return  # one pause per burst of rejections
        self._backoff = min(RETRY_PAUSE_MAX, max(RETRY_PAUSE, 2 * self._backoff))
        self._resume_at = now + self._backoff

    def _reason(self, record: Record, status: object, error: object) -> str:
        reason = _error_text(self.location, error)
        return f"{record.id}: not indexed, the cluster refused it ({status}: {reason}) (skipped)"


def _passing(status: object, error: object) -> bool:
    """Whether a bulk item failed for a passing reason (sent again): an
    overloaded node (429, or a rejected execution whatever its status), a shard
    unavailable or a timeout, or a whole request that got no answer (no status)."""
    if not isinstance(status, int) or status in _TRANSIENT:
        return True
    kind = error.get("type", "") if isinstance(error, dict) else str(error)
    return "rejected_execution" in str(kind)


def _error_text(location: ClusterLocation, error: object) -> str:
    """A bulk item's error in one line (its reason and cause), without credentials."""
    if isinstance(error, dict):
        reason = error.get("reason") or error.get("type") or "rejected"
        caused = error.get("caused_by") or {}
        if caused.get("reason"):
            reason = f"{reason}: {caused['reason']}"
    else:
        reason = str(error or "rejected")
    return location.scrub(" ".join(str(reason).split())[:300])


def _counted(number: int, noun: str) -> str:
    """``1 document``, ``2 documents``."""
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _index_action(index: str, record: Record, extra: dict | None = None) -> dict:
    """The bulk action of ``record``: its source made ahead (``extra``'s
    :data:`.feed.SOURCE`, JSON text) or here, with the other fields of ``extra``."""
    from searchengine.engines.opensearch.feed import SOURCE, source_text

    fields = dict(extra or {})
    made = fields.pop(SOURCE, None)
    source: str | dict = source_text(made, fields) if made is not None else {**mapping.document(record), **fields}
    return {"_op_type": "index", "_index": index, "_id": record.id, "_source": source}


def has_vector_field(client: OpenSearch, index: str) -> bool:
    """Whether the index (or an alias's indexes) maps :data:`~.mapping.VECTOR_FIELD`."""
    found = client.indices.get_mapping(index=index)
    return any(
        mapping.VECTOR_FIELD in ((body.get("mappings") or {}).get("properties") or {}) for body in found.values()
    )


def _count(client: OpenSearch, location: ClusterLocation, index: str) -> int:
    with cluster_errors(location, "refresh and count", index=index):
        client.indices.refresh(index=index)
        return int(client.count(index=index)["count"])


def _create_index(client: OpenSearch, name: str, body: dict) -> dict:
    """Create the index ``name`` (new, unique to this run: the write lock is
    held); the create's answer, with ``shards_acknowledged``.

    A create the cluster applied but answered too slowly is retried by the
    client and then refused as already existing: that index is this run's
    own, and its shards are waited for as the create would have.
    """
    from opensearchpy.exceptions import RequestError

    try:
        return client.indices.create(index=name, body=body)
    except RequestError as exc:
        if exc.error != "resource_already_exists_exception":
            raise
    health = client.cluster.health(index=name, wait_for_status="yellow", timeout="60s", request_timeout=90, ignore=408)
    return {"shards_acknowledged": not health.get("timed_out") and health.get("status") in ("yellow", "green")}


def _data_nodes(client: OpenSearch, location: ClusterLocation) -> int:
    """The cluster's data nodes; the first request of every run, so that an
    unreachable cluster is reported as such.

    Raises:
        ClusterError: unreachable, or red (writing could fail half-way).
    """
    with cluster_errors(location, "contact the cluster"):
        health = client.cluster.health()
    if health.get("status") == "red":
        raise ClusterError(
            f"{location}: the cluster is red (some primary shards are unassigned); "
            "writing now could fail half-way, so nothing was changed"
        )
    return max(1, int(health.get("number_of_data_nodes") or 1))


def _wait_for_replicas(client: OpenSearch, location: ClusterLocation, index: str) -> None:
    """Wait up to :data:`GREEN_WAIT` s for the index to be green; at least yellow is required."""
    with cluster_errors(location, "wait for the new index's shards", index=index):
        # 408: not green in time (the body still tells the status).
        health = client.cluster.health(
            index=index, wait_for_status="green", timeout=f"{GREEN_WAIT}s", request_timeout=GREEN_WAIT + 30, ignore=408
        )
    if health.get("status") == "red":
        raise ClusterError(
            f"{location.redacted(index)}: the new index is red (primary shards unassigned); the index is unchanged"
        )


class ClusterWriter:
    """One write run on the alias ``NAME`` of a cluster location (:class:`searchengine.engines.Writer`).

    Entered, it holds the alias's write lock (:class:`WriteLock`) and, for a
    build (or an update with no index yet), a new physical index; an update
    or a removal writes through the alias. :meth:`publish` finishes a new
    index (replicas, settings, count) and moves the alias to it; leaving
    without publishing deletes the new index, and the alias stays as it was.

    Args:
        location_text: ``http(s)://…/NAME`` (see :mod:`.location`), or that location parsed.
        mode: ``"build"``, ``"update"`` or ``"remove"``.
        lock_timeout: seconds to wait for another writer.
        jobs: bulk requests in flight (default :data:`DEFAULT_JOBS`, at most
            :data:`MAX_JOBS`), which keep the cluster's write threads busy.
            The documents are analysed by one worker process per local core
            (:mod:`.feed`).
        memory_mb: bounds the size of the bulk requests.
        vectors_from: where to take vectors for records of the same id and
            text instead of encoding them (a :class:`.feed.VectorSource`, an
            embedded index's: ``--vectors-from``); implies ``vectors``.

    Raises (on entering):
        IndexNotFoundError: ``"remove"`` and there is no index of that name.
        IndexDamagedError: the name is a plain index, or the alias points at several.
        IndexBusyError: another process is writing this index.
        ClusterError: the cluster is unreachable, red, or failed a request.
    """

    def __init__(
        self,
        location_text: str | ClusterLocation,
        *,
        mode: str,
        lock_timeout: float,
        jobs: int | None = None,
        memory_mb: int = 512,
        vectors: bool | None = None,
        on_encode: Callable[[int, int], None] | None = None,
        vectors_from: VectorSource | None = None,
    ) -> None:
        self.cluster = (
            location_text if isinstance(location_text, ClusterLocation) else parse_location(str(location_text))
        )
        self.vectors = True if vectors_from is not None and vectors is None else vectors
        self.vectors_from = vectors_from
        self._embedded: VectorSource | None = None
        # Local processes that analyse the documents (the cluster's CPU is its own).
        self.processes = os.cpu_count() or 1
        self.on_encode = on_encode
        self.encoded = 0
        self.location = self.cluster.redacted()
        self.mode = mode
        self.lock_timeout = lock_timeout
        self.jobs = max(1, min(jobs or DEFAULT_JOBS, MAX_JOBS))
        self.memory_mb = memory_mb
        self._stack = ExitStack()
        # The client, the write lock and the bulk writer of the run: set by __enter__.
        self._client: OpenSearch
        self._lock: WriteLock
        self._bulk: _BulkWriter
        self._index = ""  # where documents go: the new physical index or the alias
        self._new: str | None = None
        self._old: list[str] = []
        self._data_nodes = 1
        self._published = False
        self._before = 0  # documents through the alias before an update or removal
        self._removed = 0

    @property
    def updating(self) -> bool:
        """Whether documents go through the alias into an existing index."""
        return self._new is None

    def __enter__(self) -> ClusterWriter:
        cluster = self.cluster
        self._client = client = connect(cluster)
        self._stack.callback(client.close)
        try:
            self._data_nodes = _data_nodes(client, cluster)
            # Refused before the lock (whose index would stay behind): a plain
            # index of the name, bad shard or replica settings, nothing to remove.
            existing = aliased_indexes(client, cluster)
            if self.mode != "remove":
                mapping.shard_count(), mapping.replica_count()
            elif existing is None:
                raise IndexNotFoundError(
                    f"{cluster}: no index here (run 'searchengine index PATH... --index {cluster}' first)"
                )
            if self.vectors is None:
                with cluster_errors(cluster, "read the index mapping"):
                    self.vectors = bool(existing) and has_vector_field(client, cluster.index)
            if self.vectors and self.mode != "remove":
                from searchengine.engines.opensearch.knn import require_knn
                from searchengine.semantic.encoder import encoder

                with cluster_errors(cluster, "list the nodes' plugins"):
                    require_knn(client, cluster)
                encoder(1)  # the model loads, before anything is written
                if self.vectors_from is not None:
                    self._embedded = self._stack.enter_context(self.vectors_from)
            self._lock = self._stack.enter_context(WriteLock(client, cluster, self.lock_timeout))
            current = _single(client, cluster) if self.mode != "build" else None
            if current is None and self.mode != "remove":
                self._start_new_index()
            else:
                self._index = cluster.index
                # What the index holds before: the count it must hold after.
                self._before = _count(client, cluster, cluster.index)
        except BaseException:
            self._stack.close()
            raise
        self._bulk = _BulkWriter(
            client, cluster, self._index, jobs=self.jobs, memory_mb=self.memory_mb, lock=self._lock
        )
        return self

    def _start_new_index(self) -> None:
        client, cluster = self._client, self.cluster
        alias = cluster.index
        self._old = aliased_indexes(client, cluster) or []
        _remove_stale(client, cluster, keep=self._old)
        _data_nodes(client, cluster)
        new = physical_name(alias)
        with cluster_errors(cluster, f"create the index {new}", index=new):
            created = _create_index(
                client, new, mapping.index_body(alias, shards=mapping.shard_count(), vectors=bool(self.vectors))
            )
        self._new = self._index = new
        if not created.get("shards_acknowledged", True):
            raise ClusterError(
                f"{cluster.redacted(new)}: the new index's shards did not start "
                "(is the cluster red or out of disk?); the index is unchanged"
            )

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        try:
            if exc is not None and self._new is not None and not self._published:
                try:
                    self._client.indices.delete(index=self._new, ignore_unavailable=True)
                except Exception:  # noqa: BLE001 - the next build removes it (_remove_stale)
                    pass
        finally:
            self._stack.close()

    def check(self, record: Record) -> str | None:
        """Why ``record`` cannot be written here (its id is too long for OpenSearch), or ``None``."""
        if len(record.id.encode("utf-8")) > MAX_ID_BYTES:
            return f"id is longer than {MAX_ID_BYTES} bytes, the most OpenSearch takes (skipped)"
        return None

    def versions(self, ids: list[str]) -> dict[str, int | None]:
        """``{id: indexed version or None}`` of the ids the index holds."""
        cluster, index = self.cluster, self._index
        with cluster_errors(cluster, "look up indexed versions", index=index):
            found = self._client.mget(index=index, body={"ids": ids}, _source_includes=["version"], realtime=True)
        return {doc["_id"]: (doc.get("_source") or {}).get("version") for doc in found["docs"] if doc.get("found")}

    def write(self, documents: Iterable[Document], on_failed: Callable[[Document, str], None]) -> None:
        """Index ``documents`` (each with ``record``; a document replaces any
        with its id); a document the cluster finally refuses goes to
        ``on_failed(document, reason)``. The documents are analysed by worker
        processes (:class:`.feed.Analysis`); with vectors, each record's
        vector comes from :class:`.feed.Vectors` (taken from an index that
        holds the record with the same text, else encoded on the way)."""
        from searchengine.engines.opensearch.feed import Analysis, Vectors

        with ExitStack() as stack:
            vectors = None
            if self.vectors:
                from searchengine.semantic.encoder import EncodingPool

                pool = stack.enter_context(EncodingPool(os.cpu_count() or 1))
                pool.start()  # forked before the bulk writer starts its threads
                # An update reuses its own index's vectors; a rebuild those of the index it replaces.
                held = [self._index] if self._new is None else list(self._old)
                vectors = Vectors(self._client, self.cluster, held, pool, self._embedded)
            analysis = stack.enter_context(Analysis(self.processes))
            self._bulk.send(self._prepared(analysis.batches(documents), vectors), on_failed)

    def _prepared(
        self, batches: Iterable[tuple[list[Document], list[str]]], vectors: Vectors | None
    ) -> Iterator[Document]:
        """The documents of ``batches`` (each with its sources), their sources
        and vectors put in the bulk writer's ``extra``."""
        from searchengine.engines.opensearch.feed import SOURCE

        extra = self._bulk.extra
        for batch, sources in batches:
            for document, source in zip(batch, sources):
                extra[document.record.id] = {SOURCE: source}
            if vectors is not None:
                before = vectors.encoded
                for doc_id, fields in vectors.fields(batch).items():
                    extra[doc_id].update(fields)
                self.encoded += vectors.encoded - before  # over both passes of a run
            yield from batch

    def flush(self) -> None:
        """Nothing: :meth:`write` returns once every bulk request is answered."""

    def stored(self, ids: list[str]) -> dict[str, Record]:
        """``{id: record}`` of the ids written so far, read back in real time."""
        cluster, index = self.cluster, self._index
        with cluster_errors(cluster, "read back repeated records", index=index):
            found = self._client.mget(index=index, body={"ids": ids}, realtime=True)
        return {doc["_id"]: mapping.record_from_source(doc["_source"]) for doc in found["docs"] if doc.get("found")}

    def repair(self) -> int:
        """Nothing to repair: an id is one document on a cluster."""
        return 0

    def delete(self, ids: list[str]) -> tuple[int, set[str]]:
        """Delete ``ids`` in bulk; ``(deleted, ids not found)``. Transient failures
        are retried; any other failure raises ClusterError naming the id."""
        from opensearchpy import helpers

        client, cluster, alias = self._client, self.cluster, self._index
        todo, removed, missing = list(ids), 0, set()
        for round_number in range(RETRY_ROUNDS + 1):
            if round_number:
                time.sleep(min(RETRY_PAUSE_MAX, RETRY_PAUSE * 2 ** (round_number - 1)))
            retry = []
            actions = ({"_op_type": "delete", "_index": alias, "_id": doc_id} for doc_id in todo)
            with cluster_errors(cluster, "bulk delete"):
                for ok, result in helpers.streaming_bulk(
                    client, actions, chunk_size=BULK_DOCS, raise_on_error=False, yield_ok=True
                ):
                    ((_, info),) = result.items()
                    doc_id, status = str(info.get("_id")), info.get("status")
                    if ok:
                        removed += 1
                    elif status == 404:
                        missing.add(doc_id)
                    elif _passing(status, info.get("error")) and round_number < RETRY_ROUNDS:
                        retry.append(doc_id)
                    else:
                        error = info.get("error")
                        reason = error.get("reason") if isinstance(error, dict) else error
                        raise ClusterError(
                            f"{cluster}: {doc_id} could not be removed ({status}: {reason}); "
                            f"{removed} documents were removed"
                        )
            if not retry:
                break
            todo = retry
        self._removed += removed
        return removed, missing

    def publish(self) -> int:
        """Through the alias: the count afterwards. A new index: its settings
        finished, its count checked, its replicas waited for, then the alias
        moved to it and the old index deleted; returns its count.

        Raises:
            ClusterError: documents acknowledged are missing, the new index is
                red, or the write lock was lost.
        """
        client, cluster, new = self._client, self.cluster, self._new
        if new is None:
            documents = _count(client, cluster, self._index)
            expected = self._before + len(self._bulk.added) - self._removed
            if documents < expected:
                raise ClusterError(
                    f"{cluster}: {_counted(expected - documents, 'acknowledged document')} missing from "
                    f"the index ({documents:,} counted after a refresh, {expected:,} expected); "
                    "run the same command again"
                )
            return documents
        with cluster_errors(cluster, "finish the new index's settings", index=new):
            client.indices.put_settings(
                index=new, body=mapping.finished_settings(mapping.replica_count(), self._data_nodes)
            )
        documents = _count(client, cluster, new)
        expected = len(self._bulk.written)
        if documents != expected:
            raise ClusterError(
                f"{cluster.redacted(new)}: {_counted(expected - documents, 'acknowledged document')} missing "
                f"from the new index ({documents:,} counted after a refresh, {expected:,} expected); "
                "nothing was published, the index is as it was"
            )
        _wait_for_replicas(client, cluster, new)
        self._lock.check()
        actions = [{"remove": {"index": name, "alias": cluster.index}} for name in self._old]
        actions.append({"add": {"index": new, "alias": cluster.index}})
        with cluster_errors(cluster, "switch the alias to the new index"):
            client.indices.update_aliases(body={"actions": actions})
        self._published = True
        for name in self._old:
            try:
                client.indices.delete(index=name, ignore_unavailable=True)
            except Exception:  # noqa: BLE001 - left for the next build's clean-up
                pass
        return documents
