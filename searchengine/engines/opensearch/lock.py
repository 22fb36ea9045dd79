"""The write lock of a cluster index: a lease in a lock document.

Writers of one alias ``NAME`` take turns on the document ``NAME`` in the
index ``NAME-lock`` (:class:`WriteLock`): a lease renewed while the run
lasts, so that a killed writer's lock expires by itself.
:func:`lock_holder` reads it (``searchengine check`` names a lock whose
lease ran out).
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from typing import TYPE_CHECKING

from searchengine.engines.opensearch.client import cluster_errors
from searchengine.engines.opensearch.location import ClusterLocation
from searchengine.errors import ClusterError, IndexBusyError

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

#: Seconds a write lock lasts unless renewed; renewed every quarter of it.
LOCK_LEASE = 60.0


def lock_name(alias: str) -> str:
    """The index holding ``alias``'s write lock document."""
    return f"{alias}-lock"


def lock_holder(client: OpenSearch, location: ClusterLocation) -> dict | None:
    """The write lock document of the alias (``{"owner", "expires"}``, the
    lease's end in Unix seconds), or ``None`` when no writer holds or left one.

    Raises:
        ClusterError: the cluster failed the request.
    """
    with cluster_errors(location, "read the write lock", index=lock_name(location.index)):
        held = client.get(index=lock_name(location.index), id=location.index, ignore=404)
    return held.get("_source") if held.get("found") else None


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

    def __init__(
        self, client: OpenSearch, location: ClusterLocation, timeout: float, lease: float = LOCK_LEASE
    ) -> None:
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
                    index=self.index,
                    ignore=400,  # 400: another writer created it first
                    body={
                        "settings": {"index": {"number_of_shards": 1, "auto_expand_replicas": "0-all"}},
                        "mappings": {"dynamic": False, "properties": {}},
                    },
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
                result = self.client.index(
                    index=self.index,
                    id=self.doc_id,
                    body=self._body(),
                    if_seq_no=held["_seq_no"],
                    if_primary_term=held["_primary_term"],
                )
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
                raise IndexBusyError(
                    f"{self.location}: another process is writing this index"
                    + (f" (waited {self.timeout:g} s)" if self.timeout else "")
                )
            time.sleep(min(0.5, max(0.05, deadline - time.monotonic())))
        self._thread = threading.Thread(target=self._renew, name="searchengine-lock-lease", daemon=True)
        self._thread.start()
        return self

    def _renew(self) -> None:
        while not self._stop.wait(self.lease / 4):
            with self._mutex:
                if self._stop.is_set():
                    return
                if self._seq is None:  # never: taken (with its sequence number) before this thread started
                    return
                try:
                    seq_no, term = self._seq
                    result = self.client.index(
                        index=self.index, id=self.doc_id, body=self._body(), if_seq_no=seq_no, if_primary_term=term
                    )
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
            raise ClusterError(
                f"{self.location}: {self._lost} (the run was too slow to renew it); nothing was published"
            )

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        with self._mutex:
            if self._seq is not None and not self._lost:
                try:
                    seq_no, term = self._seq
                    self.client.delete(
                        index=self.index, id=self.doc_id, if_seq_no=seq_no, if_primary_term=term, ignore=[404, 409]
                    )
                except Exception:  # noqa: BLE001 - the lease expires by itself
                    pass
        if self._thread is not None:
            self._thread.join(timeout=5)
