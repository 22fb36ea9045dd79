"""Full-text search over scientific abstracts: an embedded Whoosh engine, or an OpenSearch cluster.

The public API::

    import searchengine
    index = searchengine.open_index("index")
    results = index.search("SpMV GPU")
    print(results.to_dict())

``open_index`` takes an index folder or an OpenSearch URL
(``http://127.0.0.1:9200/papers``). See :mod:`searchengine.search` for the
options of ``search``, :mod:`searchengine.results` for :class:`SearchResults`,
and :mod:`searchengine.errors` for the exceptions raised.
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
