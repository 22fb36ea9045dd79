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

from typing import TYPE_CHECKING, Any

from searchengine.engines.opensearch.location import ClusterLocation
from searchengine.errors import ClusterError

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

    from searchengine.engines.opensearch.matches import Matches
    from searchengine.records import Record
    from searchengine.results import Hit

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


def rank_by_meaning(
    searcher: Any, matches: Matches, vector, mode: str, open_query: bool, weight: float = 0.5
) -> Matches:
    """``matches`` ranked by meaning, as the embedded engine ranks them
    (:meth:`searchengine.engines.whoosh.searcher.WhooshSearcher.semantic`):
    the cluster finds the nearest papers (a ``knn`` query on the Lucene
    HNSW graph, within the filters) and scores every candidate with a
    ``script_score`` of the same fusion
    (:func:`searchengine.semantic.fusion.fuse`): BM25 and cosine
    similarity, each divided by its largest value among the candidates.
    The script stays (the cluster ranks and pages every candidate: fusing
    here would fetch all their scores); ``tests/contract/test_fusion_contract.py``
    pins its scores and order to :func:`~searchengine.semantic.fusion.fuse`'s."""
    from searchengine.engines.opensearch.mapping import VECTOR_FIELD
    from searchengine.engines.opensearch.matches import Matches, with_filters
    from searchengine.engines.opensearch.querying import filter_clauses
    from searchengine.limits import MAX_DEPTH
    from searchengine.ranking import HYBRID_NEAREST

    query_vector = [float(x) for x in vector]
    cosine = f"Math.max(cosineSimilarity(params.vector, doc['{VECTOR_FIELD}']), 0.0)"
    nearest: list[str] = []
    if open_query:
        wanted = MAX_DEPTH if mode == "semantic" else HYBRID_NEAREST
        knn: dict = {"vector": query_vector, "k": wanted}
        clauses = filter_clauses(matches.filters)
        if clauses:
            knn["filter"] = {"bool": {"filter": clauses}}
        found = searcher._search(
            "find the papers nearest in meaning",
            {"query": {"knn": {VECTOR_FIELD: knn}}, "size": wanted, "_source": False},
        )
        # Lucene's cosine score is (1 + cosine) / 2: a paper unrelated or opposite scores 0.5 or less.
        nearest = [hit["_id"] for hit in found["hits"]["hits"] if hit["_score"] > 0.5]
    near = {"ids": {"values": nearest}}
    if mode == "semantic":
        base = near if open_query else matches.query
        ranked = {"script_score": {"query": base, "script": {"source": cosine, "params": {"vector": query_vector}}}}
    else:
        base = {
            "bool": {
                "should": [matches.query, {"constant_score": {"filter": near, "boost": 0.0}}],
                "minimum_should_match": 1,
            }
        }
        top_words = top_score(searcher, with_filters(matches.query, filter_clauses(matches.filters)))
        top_meaning = top_score(
            searcher,
            with_filters(
                {"script_score": {"query": base, "script": {"source": cosine, "params": {"vector": query_vector}}}},
                filter_clauses(matches.filters),
            ),
        )
        fused = (
            f"double words = params.top_words > 0 ? _score / params.top_words : 0.0; "
            f"double meaning = params.top_meaning > 0 ? {cosine} / params.top_meaning : 0.0; "
            f"return params.weight * words + (1.0 - params.weight) * meaning;"
        )
        ranked = {
            "script_score": {
                "query": base,
                "script": {
                    "source": fused,
                    "params": {
                        "vector": query_vector,
                        "top_words": top_words,
                        "top_meaning": top_meaning,
                        "weight": 1.0 - weight,
                    },
                },
            }
        }
    fused_matches = Matches(matches.tree, ranked, matches.filters, 0, cut=matches.cut)
    fused_matches.deadline = matches.deadline
    if mode == "hybrid":
        fused_matches.fusion = {"vector": query_vector, "top_meaning": top_meaning, "weight": weight}
    searcher._counted(fused_matches, matches.deadline)
    return fused_matches


def top_score(searcher: Any, query: dict) -> float:
    """The best score of ``query`` (0 when nothing matches)."""
    from searchengine.engines.opensearch.matches import SEARCH_TYPE

    found = searcher._search(
        "rank by meaning",
        {"query": query, "size": 1, "_source": False, "track_total_hits": False},
        search_type=SEARCH_TYPE,
    )
    best = found["hits"].get("max_score")
    return float(best) if best else 0.0


def similar_by_meaning(searcher: Any, records: list[Record], limit: int) -> tuple[int, list[Hit], str]:
    """Papers nearest in meaning to ``records`` (their mean vector), those
    excluded: ``(total, hits, parsed)`` as :meth:`.searcher.OpenSearchSearcher.similar` gives."""
    import numpy as np

    from searchengine.engines.opensearch.mapping import VECTOR_FIELD
    from searchengine.engines.opensearch.matches import RELEVANCE_SORT
    from searchengine.limits import MAX_DEPTH

    ids = [record.id for record in records]
    with searcher._errors("read the records' vectors"):
        answer = searcher.client.mget(index=searcher.index, body={"ids": ids}, _source_includes=[VECTOR_FIELD])
    vectors = [
        doc["_source"][VECTOR_FIELD]
        for doc in answer["docs"]
        if doc.get("found") and (doc.get("_source") or {}).get(VECTOR_FIELD)
    ]
    if not vectors:
        return 0, [], ""
    centre = np.mean(np.asarray(vectors, dtype=np.float32), axis=0)
    norm = float(np.linalg.norm(centre))
    if norm == 0:
        return 0, [], ""
    knn = {
        "vector": (centre / norm).tolist(),
        "k": MAX_DEPTH,
        "filter": {"bool": {"must_not": [{"ids": {"values": ids}}]}},
    }
    query = {"knn": {VECTOR_FIELD: knn}}
    found = searcher._search("find similar papers", {"query": query, "size": MAX_DEPTH, "_source": False})
    nearest = [hit["_id"] for hit in found["hits"]["hits"] if hit["_score"] > 0.5]
    if not nearest:
        return 0, [], ""
    body = {
        "query": {
            "script_score": {
                "query": {"ids": {"values": nearest}},
                "script": {
                    "source": f"Math.max(cosineSimilarity(params.vector, doc['{VECTOR_FIELD}']), 0.0)",
                    "params": {"vector": knn["vector"]},
                },
            }
        },
        "size": limit,
        "sort": RELEVANCE_SORT,
        "track_scores": True,
        "_source": {"excludes": [VECTOR_FIELD, "content_key"]},
    }
    page = searcher._search("find similar papers", body)
    return len(nearest), searcher.hits(None, page["hits"]["hits"]), "vectors: " + " ".join(ids)
