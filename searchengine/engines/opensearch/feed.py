"""What a write run sends to the cluster: each document's source, made in
worker processes, and its vector, reused where it can be.

The product analyses every title and abstract itself (:mod:`.terms`), which
costs about 0.7 ms of CPU a record, three times all the rest of the client's
work; done in the one process that also reads the input and talks to the
cluster, it bounded a build at about 1,000 records/s a core. Here the
sources are made by a :func:`searchengine.processes.worker_pool` (one
forked process per core, as the embedded engine's build analyses in its
workers): batches of :data:`BATCH` documents go out, at most
:data:`AHEAD` batches a process ahead, and each comes back as the JSON text
of its documents (:func:`sources`), which the bulk requests carry as is.

With vectors (``index --vectors``), each record's vector is, in this
order: the one an embedded index given with ``--vectors-from`` holds for the
same id and the same text (a :class:`VectorSource`); the one the cluster
index holds for it (an update, or the index a rebuild replaces); else
encoded.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import TYPE_CHECKING, Any, Protocol

from searchengine.engines.opensearch import mapping
from searchengine.errors import SearchEngineError

if TYPE_CHECKING:
    from searchengine.engines.base import Document

#: Documents analysed by a worker process at a time.
BATCH = 64
#: Batches given out per worker process and not yet taken back.
AHEAD = 4
#: The key under which a document's ready-made source travels in the bulk
#: writer's ``extra`` (beside its vector), until the document is sent.
SOURCE = "\x00source"

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def sources(documents: list[Document]) -> list[str]:
    """The JSON text of each document's ``_source`` (:func:`.mapping.document`),
    as a bulk request carries it. Runs in a worker process."""
    return [_dumps(mapping.document(document.record)) for document in documents]


def source_text(source: str, extra: dict[str, Any]) -> str:
    """``source`` (a JSON object's text) with the fields of ``extra`` added."""
    if not extra:
        return source
    more = _dumps(extra)
    return f"{source[:-1]},{more[1:]}" if source != "{}" else more


def _batches(documents: Iterable[Document]) -> Iterator[list[Document]]:
    items = iter(documents)
    while batch := list(islice(items, BATCH)):
        yield batch


class Analysis:
    """Makes documents' sources (:func:`sources`) in ``processes`` worker
    processes (in this process when ``processes`` is 1), started on entering:
    before the bulk writer starts its threads, so nothing is forked while
    they hold a lock. Use it as a context manager (the processes end with it).
    """

    def __init__(self, processes: int) -> None:
        self.processes = max(1, processes)
        self._pool: Any = None

    def __enter__(self) -> Analysis:
        if self.processes > 1:
            from searchengine.processes import worker_pool

            self._pool = worker_pool(self.processes)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None

    def batches(self, documents: Iterable[Document]) -> Iterator[tuple[list[Document], list[str]]]:
        """Each batch of ``documents`` with its :func:`sources`, in order.

        Raises:
            SearchEngineError: a worker process died (killed, out of memory).
        """
        if self._pool is None:
            for batch in _batches(documents):
                yield batch, sources(batch)
            return
        from searchengine.processes import WorkerDied, in_order

        try:
            yield from in_order(self._pool, sources, _batches(documents), AHEAD * self.processes)
        except WorkerDied:
            raise SearchEngineError("an analysis process died; nothing was published") from None


class VectorSource(Protocol):
    """Vectors kept elsewhere (``--vectors-from``: an embedded index's,
    :class:`searchengine.engines.whoosh.lent.EmbeddedVectors`), entered for
    the run."""

    def __enter__(self) -> VectorSource: ...

    def __exit__(self, *exc_info: object) -> None: ...

    def vectors(self, keys: dict[str, str]) -> dict[str, list[float]]:
        """``{id: unit vector}`` of the ids of ``keys`` (``{id: content key, hex}``)
        held with the same content key."""
        ...


class Vectors:
    """The vector fields of a write run's documents (``vector`` and ``content_key``).

    Each record's vector is, in this order: the ``embedded`` index's
    (a :class:`VectorSource`) for the same id and text; the one one of the
    cluster's ``indexes`` holds for the same id and text (read with ``mget``);
    else encoded by ``pool`` (an :class:`~searchengine.semantic.encoder.EncodingPool`).
    ``encoded`` counts the records encoded so far.
    """

    def __init__(
        self, client: Any, location: Any, indexes: list[str], pool: Any, embedded: VectorSource | None = None
    ) -> None:
        self.client, self.location, self.indexes = client, location, indexes
        self.pool, self.embedded = pool, embedded
        self.encoded = 0

    def fields(self, batch: list[Document]) -> dict[str, dict[str, Any]]:
        """``{id: {"vector": [...], "content_key": hex}}`` of each document of ``batch``.

        Raises:
            ClusterError: reading the cluster's vectors failed.
        """
        from searchengine.semantic.encoder import content_key, record_text

        texts = {d.record.id: record_text(d.record.title, d.record.abstract) for d in batch}
        keys = {doc_id: content_key(text).hex() for doc_id, text in texts.items()}
        vectors = self.embedded.vectors(keys) if self.embedded is not None else {}
        rest = [doc_id for doc_id in keys if doc_id not in vectors]
        if rest and self.indexes:
            held = self._held(rest)
            vectors.update((i, held[i][1]) for i in rest if i in held and held[i][0] == keys[i])
        todo = [doc_id for doc_id in keys if doc_id not in vectors]
        if todo:
            vectors.update(zip(todo, self.pool.encode([texts[doc_id] for doc_id in todo]).tolist()))
            self.encoded += len(todo)
        return {doc_id: {mapping.VECTOR_FIELD: vectors[doc_id], "content_key": key} for doc_id, key in keys.items()}

    def _held(self, ids: list[str]) -> dict[str, tuple[str, list]]:
        """``{id: (content key, vector)}`` of ``ids`` held with a vector by the cluster's indexes."""
        from searchengine.engines.opensearch.client import cluster_errors

        found: dict[str, tuple[str, list]] = {}
        for index in self.indexes:
            with cluster_errors(self.location, "read indexed vectors", index=index):
                wanted = ["content_key", mapping.VECTOR_FIELD]
                answer = self.client.mget(index=index, body={"ids": ids}, realtime=True, _source_includes=wanted)
            for doc in answer["docs"]:
                source = doc.get("_source") or {}
                if doc.get("found") and source.get("content_key") and source.get(mapping.VECTOR_FIELD):
                    found[doc["_id"]] = (source["content_key"], source[mapping.VECTOR_FIELD])
        return found
