"""The OpenSearch engine's writer: readers → records → bulk requests.

The same three operations as the embedded writer, with the same summary
(:class:`searchengine.indexer.IndexSummary`) and the same rules:

* :func:`build` indexes its input into a new physical index
  ``NAME-<UTC timestamp>`` and, once every record is in and counted, moves
  the alias ``NAME`` to it in one ``POST /_aliases`` (the old index out, the
  new one in), then deletes the old physical index. Searches through the
  alias see the old index or the new one, never a half-built one; a failed
  build deletes what it made and leaves the alias as it was.
* :func:`update` adds or replaces documents by id through the alias; a
  record older (lower arXiv version) than the indexed document is skipped
  and reported, as the embedded writer does.
* :func:`remove` deletes documents by id through the alias.

One paper is one document: a repeated id in one run is folded into the
first copy after the bulk load (:func:`searchengine.indexer.combine`: the
higher version wins, equal versions merge), from the copy already written,
so only the ids seen so far are held in memory. A bulk item the cluster
rejects for a passing reason (429 overloaded, 503 shard unavailable, ...) is
sent again, up to :data:`RETRY_ROUNDS` times with growing pauses, and so
are the items of a bulk request that failed as a whole (its node died, the
client's retries on other nodes failed too) while some node still answers;
an item still rejected, or refused outright (a field OpenSearch cannot
take), is reported as ``file:line`` like a bad record, and no other record
is lost.

Writers of one ``NAME`` take turns on a lock document in the index
``NAME-lock`` (:class:`WriteLock`): a lease renewed while the run lasts, so
a killed writer's lock expires by itself.
"""

from __future__ import annotations

import os
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from searchengine.engines.opensearch import mapping
from searchengine.engines.opensearch.client import cluster_errors, connect
from searchengine.engines.opensearch.location import ClusterLocation, parse_location
from searchengine.errors import (
    ClusterError,
    IndexBusyError,
    IndexDamagedError,
    IndexNotFoundError,
    InputError,
)
from searchengine.indexer import IndexSummary, combine
from searchengine.records import Problem, Record

#: Documents per bulk request.
BULK_DOCS = 500
#: Largest bulk request body, in bytes (OpenSearch works best with a few MB).
BULK_BYTES_MAX = 10 * 2**20
#: Rounds of re-sending items rejected for a passing reason, after the first attempt.
RETRY_ROUNDS = 3
#: Pause before the first re-send (seconds); doubled each round.
RETRY_PAUSE = 1.0
# Item statuses worth sending again: overloaded, shard unavailable, timeouts.
_TRANSIENT = {408, 429, 500, 502, 503, 504}
#: Bulk requests in flight by default (10,000 arXiv records into one 2-core
#: node: 1 request 333 records/s, 2: 548, 4: 844), and at most.
DEFAULT_JOBS = 4
MAX_JOBS = 16
#: Longest document id OpenSearch takes, in UTF-8 bytes (a longer one fails
#: the whole bulk request, so it is reported before sending).
MAX_ID_BYTES = 512
#: Ids looked up at a time when an update checks indexed versions.
LOOKUP_BATCH = 500
#: Seconds a build waits for the new index's replicas (green) before
#: switching the alias anyway (its primaries are all active by then).
GREEN_WAIT = 120
#: Seconds a write lock lasts unless renewed; renewed every quarter of it.
LOCK_LEASE = 60.0

_STAMP = "%Y%m%d%H%M%S%f"  # 20 digits, UTC


def physical_name(alias: str, when: datetime | None = None) -> str:
    """A new physical index name for ``alias``: ``NAME-<20-digit UTC timestamp>``."""
    return f"{alias}-{(when or datetime.now(timezone.utc)).strftime(_STAMP)}"


def is_physical_name(alias: str, name: str) -> bool:
    """True when ``name`` has the form :func:`physical_name` gives for ``alias``."""
    return re.fullmatch(re.escape(alias) + r"-\d{20}", name) is not None


def lock_name(alias: str) -> str:
    """The index holding ``alias``'s write lock document."""
    return f"{alias}-lock"


# --------------------------------------------------------------------------
# The alias and its physical indexes


def aliased_indexes(client, location: ClusterLocation) -> list[str] | None:
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


def _single(client, location: ClusterLocation) -> str | None:
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


def _remove_stale(client, location: ClusterLocation, keep: Iterable[str]) -> list[str]:
    """Delete physical indexes of this alias that it does not point at (left by a
    killed build). Only indexes named like :func:`physical_name` and marked in
    their mapping as written for this alias are touched. Returns their names."""
    alias, keep = location.index, set(keep)
    with cluster_errors(location, "list the alias's old indexes"):
        found = client.indices.get_mapping(index=f"{alias}-*", expand_wildcards="all",
                                           allow_no_indices=True, ignore_unavailable=True)
    stale = []
    for name, body in found.items():
        meta = (body.get("mappings") or {}).get("_meta", {}).get(mapping.META_KEY, {})
        if name not in keep and is_physical_name(alias, name) and meta.get("alias") == alias:
            stale.append(name)
    for name in stale:
        with cluster_errors(location, f"delete the unfinished index {name}", index=name):
            client.indices.delete(index=name, ignore_unavailable=True)
    return stale


# --------------------------------------------------------------------------
# The write lock


class WriteLock:
    """A lease on writing the alias ``location.index``, held in a lock document.

    The document ``NAME`` in the index ``NAME-lock`` names its holder and the
    time its lease ends. Taking it is a create (only one succeeds); an
    expired lease is taken over with a compare-and-set on its sequence
    number; a thread renews the lease every quarter of :data:`LOCK_LEASE`.

    Raises (on entry):
        IndexBusyError: another writer holds the lock past ``timeout`` seconds.
        ClusterError: the cluster failed a request.
    """

    def __init__(self, client, location: ClusterLocation, timeout: float, lease: float = LOCK_LEASE) -> None:
        self.client, self.location, self.timeout, self.lease = client, location, timeout, lease
        self.index, self.doc_id = lock_name(location.index), location.index
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
        self._seq: tuple[int, int] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lost: str | None = None
        self._mutex = threading.Lock()

    def _body(self) -> dict:
        return {"owner": self.owner, "expires": time.time() + self.lease}

    def _ensure_index(self) -> None:
        with cluster_errors(self.location, "create the write lock index", index=self.index):
            if not self.client.indices.exists(index=self.index):
                self.client.indices.create(
                    index=self.index, ignore=400,  # 400: another writer created it first
                    body={"settings": {"index": {"number_of_shards": 1, "auto_expand_replicas": "0-all"}},
                          "mappings": {"dynamic": False, "properties": {}}},
                )

    def _try_take(self) -> bool:
        from opensearchpy.exceptions import ConflictError

        try:
            result = self.client.create(index=self.index, id=self.doc_id, body=self._body())
        except ConflictError:
            held = self.client.get(index=self.index, id=self.doc_id, ignore=404)
            if not held.get("found"):
                return False
            if held["_source"].get("owner") == self.owner:
                # The create was applied, then retried by the client (a slow reply): ours.
                self._seq = (held["_seq_no"], held["_primary_term"])
                return True
            if float(held["_source"].get("expires", 0)) > time.time():
                return False
            try:  # the holder's lease ran out (a killed writer): take it over
                result = self.client.index(index=self.index, id=self.doc_id, body=self._body(),
                                           if_seq_no=held["_seq_no"], if_primary_term=held["_primary_term"])
            except ConflictError:
                return False
        self._seq = (result["_seq_no"], result["_primary_term"])
        return True

    def __enter__(self) -> WriteLock:
        self._ensure_index()
        deadline = time.monotonic() + max(0.0, self.timeout)
        while True:
            with cluster_errors(self.location, "take the write lock", index=self.index):
                if self._try_take():
                    break
            if time.monotonic() >= deadline:
                raise IndexBusyError(f"{self.location}: another process is writing this index"
                                     + (f" (waited {self.timeout:g} s)" if self.timeout else ""))
            time.sleep(min(0.5, max(0.05, deadline - time.monotonic())))
        self._thread = threading.Thread(target=self._renew, name="searchengine-lock-lease", daemon=True)
        self._thread.start()
        return self

    def _renew(self) -> None:
        while not self._stop.wait(self.lease / 4):
            with self._mutex:
                if self._stop.is_set():
                    return
                try:
                    seq_no, term = self._seq
                    result = self.client.index(index=self.index, id=self.doc_id, body=self._body(),
                                               if_seq_no=seq_no, if_primary_term=term)
                    self._seq = (result["_seq_no"], result["_primary_term"])
                except Exception as exc:  # kept for check(); a passing failure is retried next round
                    if getattr(exc, "status_code", None) == 409 and not self._still_held():
                        self._lost = "another process took the write lock over"
                        return

    def _still_held(self) -> bool:
        """After a conflict on renewing: whether the lock document still names
        this writer. A renewal the cluster applied but answered too slowly is
        retried by the client with the old sequence number, and conflicts with
        itself; then the lease is ours, at the document's new sequence number.
        """
        try:
            held = self.client.get(index=self.index, id=self.doc_id, ignore=404)
        except Exception:  # noqa: BLE001 - unknown: keep the lease, retried next round
            return True
        if not held.get("found") or held["_source"].get("owner") != self.owner:
            return False
        self._seq = (held["_seq_no"], held["_primary_term"])
        return True

    def check(self) -> None:
        """Raise ClusterError if the lease was lost (this writer must not publish)."""
        if self._lost:
            raise ClusterError(f"{self.location}: {self._lost} (the run was too slow to renew it); "
                               "nothing was published")

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        with self._mutex:
            if self._seq is not None and not self._lost:
                try:
                    seq_no, term = self._seq
                    self.client.delete(index=self.index, id=self.doc_id, if_seq_no=seq_no,
                                       if_primary_term=term, ignore=[404, 409])
                except Exception:  # noqa: BLE001 - the lease expires by itself
                    pass
        if self._thread is not None:
            self._thread.join(timeout=5)


# --------------------------------------------------------------------------
# Bulk writing with retries and reporting


@dataclass
class _Pending:
    """A record whose document is being written, and how it counts."""

    record: Record
    kind: str  # "added", "replaced" or "merged" (a repeat folded in afterwards)
    action: dict


class _BulkWriter:
    """Sends index actions in bulk, re-sends transient rejections, reports the rest.

    Records go in through :meth:`send` (an iterable of :class:`_Pending`);
    results come back per item; an item that finally fails is taken off the
    summary's counts and added to its problems with the record's ``file:line``.
    """

    def __init__(self, client, location: ClusterLocation, index: str, summary: IndexSummary, *,
                 jobs: int, memory_mb: int, lock: WriteLock | None) -> None:
        self.client, self.location, self.index, self.summary = client, location, index, summary
        self.jobs, self.lock = max(1, jobs), lock
        self.chunk_bytes = max(2**20, min(BULK_BYTES_MAX, memory_mb * 2**20 // (4 * (self.jobs + 1))))
        # Ids whose document could not be written, with how their record counted.
        self.failed: dict[str, str] = {}
        self.written = 0

    def send(self, pending: Iterable[_Pending]) -> None:
        """Write every pending document; transient rejections are re-sent in rounds."""
        retry = self._round(pending, final=False)
        for round_number in range(1, RETRY_ROUNDS + 1):
            if not retry:
                return
            time.sleep(RETRY_PAUSE * 2 ** (round_number - 1))
            retry = self._round(retry, final=round_number == RETRY_ROUNDS)

    def _round(self, pending: Iterable[_Pending], *, final: bool) -> list[_Pending]:
        from opensearchpy import helpers

        in_flight: dict[str, _Pending] = {}

        def actions() -> Iterator[dict]:
            for item in pending:
                in_flight[item.record.id] = item
                yield item.action

        # A bulk request that fails as a whole (its node died mid-request, and the
        # client's retries on the other nodes failed too) comes back item by item
        # with a status "N/A": a passing failure, sent again next round.
        options = dict(chunk_size=BULK_DOCS, max_chunk_bytes=self.chunk_bytes, raise_on_error=False,
                       raise_on_exception=False)
        if self.jobs > 1:  # every item's result comes back, in order
            results = helpers.parallel_bulk(self.client, actions(), thread_count=self.jobs,
                                            queue_size=self.jobs, **options)
        else:
            results = helpers.streaming_bulk(self.client, actions(), max_retries=0, yield_ok=True, **options)
        retry: list[_Pending] = []
        probed = False
        with cluster_errors(self.location, "bulk indexing", index=self.index), closing(results):
            # Closed here, in this thread, however the loop ends (a lost lease, Ctrl-C):
            # left to the garbage collector, parallel_bulk's clean-up may run in one
            # of its own threads, which cannot join itself.
            for ok, result in results:
                if self.lock is not None:
                    self.lock.check()
                (op, info), = result.items()
                item = in_flight.pop(str(info.get("_id")), None)
                if item is None:
                    continue
                if ok:
                    self.written += 1
                    continue
                status = info.get("status")
                if not isinstance(status, int) and not probed:
                    # A whole request failed: with no node answering at all, stop now
                    # (ClusterError) rather than send every other request in vain.
                    probed = True
                    self.client.cluster.health(local=True)  # any node's own view: no master needed
                if not final and (status in _TRANSIENT or not isinstance(status, int)):
                    retry.append(item)
                else:
                    self._report(item, status, info.get("error"))
        return retry

    def _report(self, item: _Pending, status, error) -> None:
        record = item.record
        if isinstance(error, dict):
            reason = error.get("reason") or error.get("type") or "rejected"
            caused = error.get("caused_by") or {}
            if caused.get("reason"):
                reason = f"{reason}: {caused['reason']}"
        else:
            reason = str(error or "rejected")
        reason = self.location.scrub(" ".join(reason.split())[:300])
        transient = status in _TRANSIENT or not isinstance(status, int)
        self.summary.problems.append(_problem(
            record, f"{record.id}: not indexed, the cluster "
            + (f"rejected it {RETRY_ROUNDS + 1} times" if transient else "refused it")
            + f" ({status}: {reason}) (skipped)",
        ))
        # A repeat that could not be folded in leaves the first copy as it was.
        if item.kind in ("added", "replaced"):
            self.failed[record.id] = item.kind
            setattr(self.summary, item.kind, getattr(self.summary, item.kind) - 1)


def _index_action(index: str, record: Record) -> dict:
    return {"_op_type": "index", "_index": index, "_id": record.id, "_source": mapping.document(record)}


# --------------------------------------------------------------------------
# Reading records into pending documents


def _problem(record: Record, reason: str) -> Problem:
    """A problem at the record's ``file:line``."""
    path, _, line = record.source.rpartition(":")
    return Problem(path or record.source, int(line) if line.isdigit() else 0, reason)


def _older(record: Record, indexed: int) -> Problem:
    return _problem(record, f"{record.id} v{record.version or 0} is older than the indexed v{indexed} (skipped)")


def _batches(records: Iterable[Record], size: int) -> Iterator[list[Record]]:
    batch: list[Record] = []
    for record in records:
        batch.append(record)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


class _Reader:
    """Turns records into pending documents: counts, repeats and version checks.

    ``written`` holds every id sent in this run; a later record with one of
    them is a repeat, kept in ``repeats`` and folded in after the bulk load
    (:func:`_fold_repeats`). With
    ``existing`` (an update), the first record of an id is checked against
    the indexed document's version, looked up :data:`LOOKUP_BATCH` ids at a time.
    """

    def __init__(self, summary: IndexSummary, index: str, progress, existing=None) -> None:
        self.summary, self.index, self.progress, self.existing = summary, index, progress, existing
        self.written: set[str] = set()
        self.repeats: dict[str, Record] = {}

    def pending(self, records: Iterable[Record]) -> Iterator[_Pending]:
        size = LOOKUP_BATCH if self.existing is not None else 1
        for batch in _batches(records, size):
            versions = {}
            if self.existing is not None:
                fresh = {r.id for r in batch if r.id not in self.written}
                versions = self.existing(sorted(fresh)) if fresh else {}
            for record in batch:
                pending = self._take(record, versions)
                if pending is not None:
                    yield pending

    def _take(self, record: Record, versions: dict) -> _Pending | None:
        summary = self.summary
        summary.records += 1
        if self.progress is not None:
            self.progress(1)
        if len(record.id.encode("utf-8")) > MAX_ID_BYTES:
            summary.problems.append(_problem(record, f"id is longer than {MAX_ID_BYTES} bytes, "
                                                     "the most OpenSearch takes (skipped)"))
            return None
        if record.id in self.written:
            summary.merged += 1
            earlier = self.repeats.get(record.id)
            self.repeats[record.id] = combine(earlier, record) if earlier else record
            return None
        kind = "added"
        if record.id in versions:
            indexed = versions[record.id] or 0
            if (record.version or 0) < indexed:
                summary.problems.append(_older(record, indexed))
                return None
            kind = "replaced"
        setattr(summary, kind, getattr(summary, kind) + 1)
        self.written.add(record.id)
        return _Pending(record, kind, _index_action(self.index, record))


def _indexed_versions(client, location: ClusterLocation, index: str) -> Callable[[list[str]], dict]:
    """A lookup of ``{id: indexed version or None}`` for the ids that ``index`` holds."""
    def lookup(ids: list[str]) -> dict:
        with cluster_errors(location, "look up indexed versions", index=index):
            found = client.mget(index=index, body={"ids": ids}, _source_includes=["version"],
                                realtime=True)
        return {doc["_id"]: (doc.get("_source") or {}).get("version")
                for doc in found["docs"] if doc.get("found")}
    return lookup


def _fold_repeats(client, location: ClusterLocation, index: str, reader: _Reader,
                  bulk: _BulkWriter) -> None:
    """Write each repeated id once more, as its first copy (read back) combined with
    its later records. An id whose first copy could not be written gets the later
    records alone."""
    if not reader.repeats:
        return

    def pending() -> Iterator[_Pending]:
        ids = list(reader.repeats)
        for start in range(0, len(ids), LOOKUP_BATCH):
            batch = ids[start:start + LOOKUP_BATCH]
            with cluster_errors(location, "read back repeated records", index=index):
                found = client.mget(index=index, body={"ids": batch}, realtime=True)
            first = {doc["_id"]: mapping.record_from_source(doc["_source"])
                     for doc in found["docs"] if doc.get("found")}
            for doc_id in batch:
                later = reader.repeats[doc_id]
                if doc_id in bulk.failed or doc_id not in first:
                    # The first copy was not written: the later records stand alone.
                    merged, kind = later, bulk.failed.pop(doc_id, "added")
                    setattr(bulk.summary, kind, getattr(bulk.summary, kind) + 1)
                else:
                    merged, kind = combine(first[doc_id], later), "merged"
                yield _Pending(merged, kind, _index_action(index, merged))

    bulk.send(pending())


# --------------------------------------------------------------------------
# The operations


def _check_paths(paths: list) -> None:
    # Fail on a missing input before touching the cluster.
    for path in paths:
        if not Path(path).exists():
            raise InputError(f"{path}: no such file or directory")


def _nothing_read(paths: list, summary: IndexSummary) -> InputError:
    skipped = summary.skipped
    return InputError(
        "nothing to index in " + ", ".join(str(p) for p in paths)
        + (f" ({skipped} {'record or file' if skipped == 1 else 'records or files'} skipped)" if skipped else ""),
        problems=summary.problems,
    )


def _count(client, location: ClusterLocation, index: str) -> int:
    with cluster_errors(location, "refresh and count", index=index):
        client.indices.refresh(index=index)
        return int(client.count(index=index)["count"])


def _create_index(client, name: str, body: dict) -> dict:
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


def _data_nodes(client, location: ClusterLocation) -> int:
    """The cluster's data nodes; the first request of every run, so that an
    unreachable cluster is reported as such.

    Raises:
        ClusterError: unreachable, or red (writing could fail half-way).
    """
    with cluster_errors(location, "contact the cluster"):
        health = client.cluster.health()
    if health.get("status") == "red":
        raise ClusterError(f"{location}: the cluster is red (some primary shards are unassigned); "
                           "writing now could fail half-way, so nothing was changed")
    return max(1, int(health.get("number_of_data_nodes") or 1))


def _build_into(client, location: ClusterLocation, paths: list, summary: IndexSummary, *, format,
                jobs: int, memory_mb: int, progress, lock: WriteLock) -> int:
    """Build a new physical index from ``paths`` and switch the alias to it; returns its count."""
    from searchengine.readers import read_records

    alias = location.index
    old = aliased_indexes(client, location) or []
    _remove_stale(client, location, keep=old)
    data_nodes = _data_nodes(client, location)
    new = physical_name(alias)
    with cluster_errors(location, f"create the index {new}", index=new):
        created = _create_index(client, new, mapping.index_body(alias, shards=mapping.shard_count()))
    try:
        if not created.get("shards_acknowledged", True):
            raise ClusterError(f"{location.redacted(new)}: the new index's shards did not start "
                               "(is the cluster red or out of disk?); the index is unchanged")
        reader = _Reader(summary, new, progress)
        bulk = _BulkWriter(client, location, new, summary, jobs=jobs, memory_mb=memory_mb, lock=lock)
        bulk.send(reader.pending(read_records(paths, summary.problems, format=format)))
        if summary.records == 0:
            raise _nothing_read(paths, summary)
        if progress is not None:
            progress(0)
        _fold_repeats(client, location, new, reader, bulk)
        with cluster_errors(location, "finish the new index's settings", index=new):
            client.indices.put_settings(index=new, body=mapping.finished_settings(mapping.replica_count(),
                                                                                  data_nodes))
        documents = _count(client, location, new)
        expected = len(reader.written) - len(bulk.failed)
        if documents != expected:
            raise ClusterError(f"{location.redacted(new)}: {expected - documents} documents were "
                               "acknowledged but are missing from the new index; the index is unchanged")
        _wait_for_replicas(client, location, new)
        lock.check()
        actions = [{"remove": {"index": name, "alias": alias}} for name in old]
        actions.append({"add": {"index": new, "alias": alias}})
        with cluster_errors(location, "switch the alias to the new index"):
            client.indices.update_aliases(body={"actions": actions})
    except BaseException:
        try:
            client.indices.delete(index=new, ignore_unavailable=True)
        except Exception:  # noqa: BLE001 - the next build removes it (_remove_stale)
            pass
        raise
    for name in old:
        try:
            client.indices.delete(index=name, ignore_unavailable=True)
        except Exception:  # noqa: BLE001 - left for the next build's clean-up
            pass
    return documents


def _wait_for_replicas(client, location: ClusterLocation, index: str) -> None:
    """Wait up to :data:`GREEN_WAIT` s for the index to be green; at least yellow is required."""
    with cluster_errors(location, "wait for the new index's shards", index=index):
        # 408: not green in time (the body still tells the status).
        health = client.cluster.health(index=index, wait_for_status="green", timeout=f"{GREEN_WAIT}s",
                                       request_timeout=GREEN_WAIT + 30, ignore=408)
    if health.get("status") == "red":
        raise ClusterError(f"{location.redacted(index)}: the new index is red (primary shards "
                           "unassigned); the index is unchanged")


def _update_through(client, location: ClusterLocation, paths: list, summary: IndexSummary, *, format,
                    jobs: int, memory_mb: int, progress, lock: WriteLock) -> int:
    """Write the records of ``paths`` through the alias; returns the count afterwards."""
    from searchengine.readers import read_records

    alias = location.index
    reader = _Reader(summary, alias, progress, existing=_indexed_versions(client, location, alias))
    bulk = _BulkWriter(client, location, alias, summary, jobs=jobs, memory_mb=memory_mb, lock=lock)
    bulk.send(reader.pending(read_records(paths, summary.problems, format=format)))
    if summary.records == 0:
        raise _nothing_read(paths, summary)
    if progress is not None:
        progress(0)
    _fold_repeats(client, location, alias, reader, bulk)
    return _count(client, location, alias)


def _index(paths, location_text, *, update: bool, format, lock_timeout: float, jobs, memory_mb: int,
           progress) -> IndexSummary:
    started = time.perf_counter()
    location = parse_location(str(location_text))
    paths = list(paths)
    summary = IndexSummary(index_dir=location.redacted())
    _check_paths(paths)
    # Bulk requests in flight (threads): the cluster, not this process, analyses
    # the text, so this is about keeping its write threads busy, not local cores.
    jobs = max(1, min(jobs or DEFAULT_JOBS, MAX_JOBS))
    client = connect(location)
    try:
        _data_nodes(client, location)
        with WriteLock(client, location, lock_timeout) as lock:
            current = _single(client, location) if update else None
            options = dict(format=format, jobs=jobs, memory_mb=memory_mb, progress=progress, lock=lock)
            if current is None:
                summary.documents = _build_into(client, location, paths, summary, **options)
            else:
                summary.documents = _update_through(client, location, paths, summary, **options)
    finally:
        client.close()
    summary.seconds = time.perf_counter() - started
    return summary


def build(paths: Iterable[str | os.PathLike], location: str, *, format: str | None,
          lock_timeout: float, jobs: int | None, memory_mb: int,
          progress: Callable[[int], None] | None) -> IndexSummary:
    """A new physical index from ``paths``, published by moving the alias
    (:func:`searchengine.indexer.build_index`).

    ``jobs`` is the number of bulk requests in flight (default :data:`DEFAULT_JOBS`,
    at most :data:`MAX_JOBS`);
    ``memory_mb`` bounds their size. Raises InputError, IndexBusyError,
    IndexDamagedError (the name is a plain index), ClusterError.
    """
    return _index(paths, location, update=False, format=format, lock_timeout=lock_timeout,
                  jobs=jobs, memory_mb=memory_mb, progress=progress)


def update(paths: Iterable[str | os.PathLike], location: str, *, format: str | None,
           lock_timeout: float, jobs: int | None, memory_mb: int,
           progress: Callable[[int], None] | None) -> IndexSummary:
    """Records of ``paths`` added through the alias, replacing documents by id
    (:func:`searchengine.indexer.update_index`); without an index yet, a build.

    Raises as :func:`build`; IndexDamagedError also when the alias points at
    several indexes.
    """
    return _index(paths, location, update=True, format=format, lock_timeout=lock_timeout,
                  jobs=jobs, memory_mb=memory_mb, progress=progress)


def remove(ids: Iterable[str], location: str, *, lock_timeout: float) -> IndexSummary:
    """Documents with ``ids`` deleted through the alias
    (:func:`searchengine.indexer.remove_documents`).

    Raises:
        IndexNotFoundError: there is no index of that name.
        IndexDamagedError: the name is a plain index, or the alias points at several.
        IndexBusyError: another process is writing this index.
        ClusterError: the cluster failed a request.
    """
    from searchengine.readers.arxivmeta import split_version

    started = time.perf_counter()
    location = parse_location(str(location))
    summary = IndexSummary(index_dir=location.redacted())
    wanted = list(dict.fromkeys(split_version(i)[0] for i in ids if i.strip()))
    client = connect(location)
    try:
        _data_nodes(client, location)
        if aliased_indexes(client, location) is None:
            raise IndexNotFoundError(f"{location}: no index here "
                                     f"(run 'searchengine index PATH... --index {location}' first)")
        with WriteLock(client, location, lock_timeout):
            alias = location.index
            _single(client, location)
            missing = set()
            if wanted:
                summary.removed, missing = _delete(client, location, alias, wanted)
            summary.not_found = [doc_id for doc_id in wanted if doc_id in missing]
            summary.documents = _count(client, location, alias)
    finally:
        client.close()
    summary.seconds = time.perf_counter() - started
    return summary


def _delete(client, location: ClusterLocation, alias: str, ids: list[str]) -> tuple[int, set[str]]:
    """Delete ``ids`` in bulk; returns (deleted, ids not found). Transient failures
    are retried; any other failure raises ClusterError naming the id."""
    from opensearchpy import helpers

    todo, removed, missing = list(ids), 0, set()
    for round_number in range(RETRY_ROUNDS + 1):
        if round_number:
            time.sleep(RETRY_PAUSE * 2 ** (round_number - 1))
        retry = []
        actions = ({"_op_type": "delete", "_index": alias, "_id": doc_id} for doc_id in todo)
        with cluster_errors(location, "bulk delete"):
            for ok, result in helpers.streaming_bulk(client, actions, chunk_size=BULK_DOCS,
                                                     raise_on_error=False, yield_ok=True):
                (_, info), = result.items()
                doc_id, status = str(info.get("_id")), info.get("status")
                if ok:
                    removed += 1
                elif status == 404:
                    missing.add(doc_id)
                elif status in _TRANSIENT and round_number < RETRY_ROUNDS:
                    retry.append(doc_id)
                else:
                    error = info.get("error")
                    reason = error.get("reason") if isinstance(error, dict) else error
                    raise ClusterError(f"{location}: {doc_id} could not be removed ({status}: {reason}); "
                                       f"{removed} documents were removed")
        if not retry:
            break
        todo = retry
    return removed, missing
