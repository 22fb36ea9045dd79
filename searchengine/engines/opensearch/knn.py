"""Whether a cluster can hold vector fields: the k-NN plugin on every node.

``knn_vector`` fields and ``knn`` queries come from the OpenSearch k-NN
plugin (``opensearch-knn``), not from OpenSearch itself. A mapping with such
a field is refused by a node without the plugin, and an index whose shards
may land on such a node cannot be served whole; so a vector index needs the
plugin on every node. :func:`knn_available` tells, :func:`require_knn` refuses
with a message that says what to do.

The development cluster (``scripts/dev-cluster.sh``) installs the plugin
unless ``SEARCHENGINE_OPENSEARCH_KNN=0``. Its zip from Maven Central carries
no native libraries, so only ``"method": {"engine": "lucene", "name":
"hnsw"}`` works there (``space_type`` ``cosinesimil``, ``l2`` or
``innerproduct``); a ``faiss`` or ``nmslib`` field stops the node.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from searchengine.engines.opensearch.location import ClusterLocation
from searchengine.errors import ClusterError

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

#: The plugin's name, as ``_cat/plugins`` and ``_nodes/plugins`` give it.
KNN_PLUGIN = "opensearch-knn"


def _plugin_census(client: OpenSearch) -> tuple[int, list[str]]:
    """How many nodes answer, and the names of those without the plugin (sorted; a
    node without a name by its id). One ``GET _nodes/plugins`` request."""
    answer = client.nodes.info(metric="plugins")
    nodes = answer.get("nodes") or {}
    lacking = [
        str(node.get("name") or node_id)
        for node_id, node in nodes.items()
        if KNN_PLUGIN not in {plugin.get("name") for plugin in node.get("plugins") or []}
    ]
    return len(nodes), sorted(lacking)


def nodes_without_knn(client: OpenSearch) -> list[str]:
    """Names of the cluster's nodes that lack the k-NN plugin (empty: every node has it).

    One ``GET _nodes/plugins`` request through ``client`` (an
    ``opensearchpy.OpenSearch``). Sorted; a node without a name is shown by its id.

    Raises:
        Whatever the client raises (wrap the call in
        :func:`~searchengine.engines.opensearch.client.cluster_errors`).
    """
    return _plugin_census(client)[1]


def knn_available(client: OpenSearch) -> bool:
    """True when every node of the cluster has the k-NN plugin (``knn_vector``
    fields and ``knn`` queries work), False otherwise (also for an answer that
    lists no node). One ``GET _nodes/plugins`` request.

    Raises:
        Whatever the client raises (wrap the call in
        :func:`~searchengine.engines.opensearch.client.cluster_errors`).
    """
    count, lacking = _plugin_census(client)
    return count > 0 and not lacking


def require_knn(client: OpenSearch, location: ClusterLocation, action: str = "create a vector index") -> None:
    """Refuse ``action`` unless every node has the k-NN plugin.

    Raises:
        ClusterError: one line naming the cluster (without credentials), the
            nodes without the plugin and how to get it.
        Whatever the client raises otherwise (wrap the call in
            :func:`~searchengine.engines.opensearch.client.cluster_errors`).
    """
    lacking = nodes_without_knn(client)
    if not lacking:
        return
    raise ClusterError(
        f"{location.redacted()}: cannot {action}: vector fields need the OpenSearch k-NN plugin "
        f"({KNN_PLUGIN}) on every node, and {', '.join(lacking)} lack{'s' if len(lacking) == 1 else ''} it "
        "(install it with bin/opensearch-plugin install opensearch-knn on each node and restart them; "
        "scripts/dev-cluster.sh installs it unless SEARCHENGINE_OPENSEARCH_KNN=0)"
    )
