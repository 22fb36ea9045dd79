"""The open OpenSearch index: a client and the alias that searches go through.

It connects, names its index and counts it; each call runs on an
:class:`~searchengine.engines.opensearch.searcher.OpenSearchSearcher` (the
:class:`searchengine.engines.Searcher` protocol: matching, ranking, facets,
snippets).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from searchengine.engines.opensearch.client import cluster_errors, connect, learn_nodes, sniffing, whole_answer
from searchengine.engines.opensearch.location import ClusterLocation, parse_location

if TYPE_CHECKING:
    from searchengine.engines.base import IndexCheck
    from searchengine.engines.opensearch.searcher import OpenSearchSearcher

T = TypeVar("T")

# Seconds between two looks at whether the index maps record vectors.
VECTORS_CHECKED_FOR = 30.0


class OpenSearchEngine:
    """An index on an OpenSearch cluster, named by a location URL.

    Safe to share between threads (the client keeps a pool of connections).
    Nothing is sent to the cluster when it is made.

    Raises:
        InputError: the location is malformed.
        SearchEngineError: opensearch-py is not installed.
    """

    name = "opensearch"

    def __init__(self, location: str | ClusterLocation) -> None:
        self._location = location if isinstance(location, ClusterLocation) else parse_location(location)
        self.client = connect(self._location)
        self._local = threading.local()  # the searcher of the call running in each thread
        self._layout_checked = False
        self._vectors: tuple[bool, float] | None = None  # see has_vectors

    @property
    def location(self) -> str:
        """The location without credentials (``http://127.0.0.1:9200/papers``)."""
        return self._location.redacted()

    @property
    def cluster(self) -> ClusterLocation:
        """The parsed location (credentials included, never shown)."""
        return self._location

    @property
    def index(self) -> str:
        """The index name: the alias that searches and writes go through."""
        return self._location.index

    def doc_count(self) -> int:
        """Documents in the index, as of its last refresh.

        Raises:
            IndexNotFoundError: there is no index of that name.
            ClusterError: the cluster failed the request.
        """
        with cluster_errors(self._location, "count documents"):
            answer = whole_answer(self._location, "count documents", lambda: self.client.count(index=self.index))
        return int(answer["count"])

    def learn_nodes(self) -> tuple[tuple[str, int], ...]:
        """The cluster's nodes, ``((host, port), ...)`` sorted, learned from it
        (one ``GET _nodes/_all/http``) and named in the message if the single
        address of the location stops answering. Unless
        ``SEARCHENGINE_CLUSTER_SNIFF=0``, those that answer from here also join
        the client's pool, so requests go on when the given node goes down (see
        :func:`.client.learn_nodes`). Servers call it when they warm up.

        Raises:
            ClusterError: the cluster could not be asked (unreachable, 403, ...).
        """
        with cluster_errors(self._location, "list the cluster's nodes"):
            return learn_nodes(self.client, self._location, add=sniffing())

    def call(self, work: Callable[[OpenSearchSearcher], T]) -> T:
        """Run ``work(searcher)``; the cluster's failures become one-line errors.

        The index must exist: an alias or index missing is IndexNotFoundError
        at once, not at the first search.
        """
        from searchengine.engines.opensearch.searcher import OpenSearchSearcher

        held = getattr(self._local, "searcher", None)
        if held is not None:
            return work(held)
        self._local.searcher = searcher = OpenSearchSearcher(self)
        try:
            with cluster_errors(self._location, "search"):
                if not self._layout_checked:
                    self._check_layout()
                return work(searcher)
        finally:
            self._local.searcher = None

    def has_vectors(self) -> bool:
        """Whether the index maps the record vector field (read again every
        :data:`VECTORS_CHECKED_FOR` seconds: a rebuild may add or drop it)."""
        from searchengine.engines.opensearch.writer import has_vector_field

        now = time.monotonic()
        known = self._vectors
        if known is None or now - known[1] > VECTORS_CHECKED_FOR:
            known = self._vectors = (has_vector_field(self.client, self.index), now)
        return known[0]

    def _check_layout(self) -> None:
        """Refuse an index whose mapping is of another layout than
        :data:`~searchengine.engines.opensearch.mapping.LAYOUT` (built by
        another version, with other analyzers): its hits would be wrong.

        Raises:
            IndexDamagedError: the layout differs; the message says to rebuild.
        """
        from searchengine.engines.opensearch.mapping import LAYOUT, META_KEY
        from searchengine.errors import IndexDamagedError

        found = self.client.indices.get_mapping(index=self.index)
        for physical, body in sorted(found.items()):
            layout = ((body.get("mappings") or {}).get("_meta") or {}).get(META_KEY, {}).get("layout")
            if layout != LAYOUT:
                raise IndexDamagedError(
                    f"{self.location}: the index {physical} was built by another version of searchengine "
                    f"(layout {layout}, this version reads layout {LAYOUT}); rebuild it with "
                    f"'searchengine index PATH... --index {self.location}'"
                )
        self._layout_checked = True

    def check(self) -> IndexCheck:
        """The :class:`~searchengine.engines.IndexCheck` of the index: its
        layout, its health and each shard copy (its state and documents; a
        replica that holds another count than its primary is named).

        Raises:
            IndexNotFoundError: there is no index of that name.
            ClusterError: the cluster cannot be reached.
        """
        from searchengine.engines.base import IndexCheck, PartCheck
        from searchengine.errors import IndexDamagedError

        report = IndexCheck(location=self.location, engine=self.name, version=None, documents=None)
        with cluster_errors(self._location, "check the index"):
            try:
                self._check_layout()
            except IndexDamagedError as exc:
                report.problem = str(exc)
                return report
            report.version = ",".join(sorted(self.client.indices.get_alias(index=self.index)))
            report.documents = self.doc_count()
            health = self.client.cluster.health(index=self.index, params={"level": "indices"})
            shards = self.client.cat.shards(index=self.index, params={"format": "json", "bytes": "b"})
        primaries: dict[tuple[str, str], int] = {}
        for shard in shards:
            if shard.get("prirep") == "p" and shard.get("docs") not in (None, ""):
                primaries[(shard["index"], shard["shard"])] = int(shard["docs"])
        for shard in sorted(shards, key=lambda s: (s["index"], int(s["shard"]), s.get("prirep") != "p")):
            kind = "primary" if shard.get("prirep") == "p" else "replica"
            docs = int(shard["docs"]) if shard.get("docs") not in (None, "") else None
            part = PartCheck(
                name=f"{shard['index']}[{shard['shard']}] {kind} on {shard.get('node') or 'no node'}", size=docs
            )
            if shard.get("state") != "STARTED":
                part.problem = (shard.get("state") or "unknown").lower()
            elif kind == "replica" and docs != primaries.get((shard["index"], shard["shard"])):
                part.problem = f"{docs:,} documents, its primary {primaries.get((shard['index'], shard['shard'])):,}"
            report.parts.append(part)
        status = health.get("status")
        if status == "red":
            report.problem = (
                f"{self.location}: a primary shard is not assigned (cluster health red): "
                "documents are missing until its node is back"
            )
        else:
            # An unassigned or moving replica lowers redundancy, not the
            # answers; a started copy that holds other documents changes them.
            differing = [part for part in report.parts if part.problem and "documents" in part.problem]
            if differing:
                report.problem = f"{self.location}: shard copies disagree: " + "; ".join(
                    f"{part.name}: {part.problem}" for part in differing
                )
        left = self._leftovers(report.version.split(",") if report.version else [])
        if left:
            report.problem = f"{report.problem}; {left}" if report.problem else f"{self.location}: {left}"
        return report

    def _leftovers(self, behind: list[str]) -> str | None:
        """What a stopped rebuild left, in words, or ``None``: physical indexes
        of the alias it does not point at (``behind``), and a write lock whose
        lease ran out. While a writer's lease runs, a new physical index is a
        rebuild at work, not a leftover."""
        from searchengine.engines.opensearch.lock import lock_holder
        from searchengine.engines.opensearch.writer import unaliased_indexes

        holder = lock_holder(self.client, self._location)
        if holder is not None and float(holder.get("expires") or 0) > time.time():
            return None
        found = []
        unfinished = unaliased_indexes(self.client, self._location, behind)
        if unfinished:
            found.append(
                f"{'an unfinished index' if len(unfinished) == 1 else 'unfinished indexes'} "
                f"{', '.join(unfinished)} (not behind the alias)"
            )
        if holder is not None:
            ended = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(holder.get("expires") or 0)))
            found.append(f"a write lock held by {holder.get('owner') or 'an unknown process'}, its lease ended {ended}")
        if not found:
            return None
        return (
            "left by a rebuild or update that was stopped: "
            + " and ".join(found)
            + f"; searches are not affected, and the next 'searchengine index PATH... --index {self.location}' "
            "removes them"
        )

    def close(self) -> None:
        """Close the client's connections."""
        self.client.close()

    def __repr__(self) -> str:
        return f"OpenSearchEngine({self.location!r})"
