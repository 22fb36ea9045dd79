"""Full-text search over scientific abstracts, built on Whoosh.

The public API::

    import searchengine
    index = searchengine.open_index("index")
    results = index.search("SpMV GPU")
    print(results.to_dict())

See :mod:`searchengine.search` for :class:`SearchResults` and the options of
``search``, and :mod:`searchengine.errors` for the exceptions raised.
"""

from searchengine.errors import (
    ClusterError,
    IndexBusyError,
    IndexDamagedError,
    IndexNotFoundError,
    InputError,
    QueryError,
    RecordNotFoundError,
    SearchEngineError,
)
from searchengine.indexer import IndexSummary, build_index, remove_documents, update_index
from searchengine.records import Problem, Record
from searchengine.search import Hit, SearchIndex, SearchResults, open_index

__all__ = [
    "ClusterError",
    "Hit",
    "IndexBusyError",
    "IndexDamagedError",
    "IndexNotFoundError",
    "IndexSummary",
    "InputError",
    "Problem",
    "QueryError",
    "Record",
    "RecordNotFoundError",
    "SearchEngineError",
    "SearchIndex",
    "SearchResults",
    "build_index",
    "open_index",
    "remove_documents",
    "update_index",
]

__version__ = "0.1.0"
