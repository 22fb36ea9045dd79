"""The open OpenSearch index: a client and the alias that searches go through.

It connects, names its index and counts it; each call runs on an
:class:`~searchengine.engines.opensearch.searcher.OpenSearchSearcher` (the
:class:`searchengine.engines.Searcher` protocol: matching, ranking, facets,
snippets).
"""

from __future__ import annotations

import threading

from searchengine.engines.opensearch.client import cluster_errors, connect, whole
from searchengine.engines.opensearch.location import ClusterLocation, parse_location


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
            answer = self.client.count(index=self.index)
        return int(whole(self._location, "count documents", answer)["count"])

    def call(self, work):
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
                    f"'searchengine index PATH... --index {self.location}'")
        self._layout_checked = True

    def close(self) -> None:
        """Close the client's connections."""
        self.client.close()

    def __repr__(self) -> str:
        return f"OpenSearchEngine({self.location!r})"
