"""The web front end: faceted search pages, an Atom feed and a JSON API over the search API.

    from searchengine.web import create_app
    app = create_app(index_dir="index")

The app is a thin view over :mod:`searchengine.search`, like the CLI: it never
imports Whoosh, and ``/api/search`` answers with exactly ``SearchResults.to_dict()``.
"""

from searchengine.web.app import create_app

__all__ = ["create_app"]
