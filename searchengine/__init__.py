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

import importlib

# Each public name → the module defining it, imported on first use: the
# command line imports this package for its smallest module (limits) and
# need not pay for the indexer, the records and the search API up front.
_HOMES = {
    **dict.fromkeys(
        (
            "ClusterError",
            "IndexBusyError",
            "IndexDamagedError",
            "IndexNotFoundError",
            "IndexUnreadableError",
            "InputError",
            "QueryError",
            "RecordNotFoundError",
            "SearchEngineError",
        ),
        "searchengine.errors",
    ),
    **dict.fromkeys(("IndexSummary", "build_index", "remove_documents", "update_index"), "searchengine.indexer"),
    **dict.fromkeys(("Problem", "Record"), "searchengine.records"),
    **dict.fromkeys(("Hit", "SearchIndex", "SearchResults", "open_index"), "searchengine.search"),
}


def __getattr__(name: str):
    """A public name's object, its module imported on first use (PEP 562).

    Raises:
        AttributeError: ``name`` is not one of :data:`__all__` (a submodule is
            imported by the import system instead).
    """
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'searchengine' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "ClusterError",
    "Hit",
    "IndexBusyError",
    "IndexDamagedError",
    "IndexNotFoundError",
    "IndexSummary",
    "IndexUnreadableError",
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
