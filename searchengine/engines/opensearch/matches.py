"""What a cluster search's steps hand each other: the matches of a query
and filters, the search type and the relevance order every ranked request uses.

Kept apart from :mod:`.searcher` so that the steps in :mod:`.expansion` and
:mod:`.knn` share them without importing the searcher that calls them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from searchengine.engines.opensearch.querying import filter_clauses
from searchengine.filters import Filters

#: Term statistics from every shard before scoring, so that a small corpus
#: spread over shards ranks as on one.
SEARCH_TYPE = "dfs_query_then_fetch"
#: Score, then newer year, then id: ties break the same way on every run.
RELEVANCE_SORT = [{"_score": "desc"}, {"year": {"order": "desc", "missing": "_last"}}, {"id": "desc"}]


@dataclass
class Matches:
    """A query and filters, and how many documents they match."""

    tree: object
    query: dict | None
    filters: Filters
    total: int
    cut: bool = False
    approximate: bool = False  # the cluster reports a cut ranking with the page of hits (window)
    deadline: float = field(default=0.0, repr=False)
    notes: list[str] = field(default_factory=list)
    #: After feedback: ``(id, score)`` of the best hits re-ranked, best first.
    reranked: list[tuple[str, float]] | None = None
    #: Hybrid matches: ``{"vector", "top_meaning", "weight"}`` (meaning's share),
    #: for each hit's cosine (a script field) and so its score's parts.
    fusion: dict | None = None

    def with_query(self, query: dict | None) -> Matches:
        """These matches, searching ``query`` (set in place)."""
        self.query = query
        return self

    def full_query(self) -> dict:
        """The query with the filters as ``filter`` clauses."""
        return with_filters(self.query, filter_clauses(self.filters))


def with_filters(query: dict | None, clauses: list[dict]) -> dict:
    """``query`` (``None``: every document) with ``clauses`` as ``filter`` clauses."""
    if not clauses:
        return query or {"match_all": {}}
    body: dict = {"filter": clauses}
    if query is not None:
        body["must"] = [query]
    return {"bool": body}
