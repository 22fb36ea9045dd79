"""The Atom feed of a search (blueprint ``feeds``)::

GET /feed.atom                      the search's newest hits as an Atom feed (searchengine.feeds);
                                    served as application/xml to a browser, which shows it
                                    with /static/feed.css
"""

from __future__ import annotations

import re

from flask import Blueprint, Response, current_app, request
from werkzeug.datastructures import MultiDict

from searchengine.errors import QueryError
from searchengine.web.guard import app_limits
from searchengine.web.helpers import current_index
from searchengine.web.params import SearchParams

blueprint = Blueprint("feeds", __name__)

# A Host header a feed's absolute links can be made of: a name or address, and a port.
_HOST = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?")


@blueprint.get("/feed.atom")
def search_feed() -> Response:
    from searchengine.feeds import FEED_SIZE, MEDIA_TYPE, search_feed

    if not _HOST.fullmatch(request.host):
        raise QueryError(
            "the request's Host header is not a host name and port: the feed's links could not be absolute"
        )
    # The feed is newest first from its first entry: page, sort and more play no part.
    # Without query text or a filter it is the feed of the latest papers.
    params = SearchParams.from_args(
        MultiDict(
            [(name, value) for name, value in request.args.items(multi=True) if name not in ("page", "sort", "more")]
        )
    )
    # The search page's 10 a page is few for a feed; a limit given is kept
    # (at most 100, or the server's cap on feeds).
    limit = params.limit if request.args.get("limit") else FEED_SIZE
    limits = app_limits(current_app)
    if limits is not None:
        limit = min(limit, limits.max_feed)
    results = current_index().run(params.feed_request(limit))
    # Behind a trusted proxy, scheme, host and prefix are the proxy's public ones.
    base = request.host_url.rstrip("/") + request.script_root
    # The self link is the address asked at, every parameter kept (sort, limit, ...);
    # the id is the search's, the same whatever the sort or page.
    asked = request.query_string.decode("utf-8")
    self_url = f"{base}/feed.atom" + (f"?{asked}" if asked else "")
    body = search_feed(results.hits, params.feed_items(), base_url=base, self_url=self_url)
    # A browser opening the feed (it asks for HTML first) gets the same Atom
    # document as XML, which it shows with the feed's stylesheet; as
    # application/atom+xml Chromium shows the source text. Feed readers ask
    # for Atom (or anything) and get it as Atom.
    browsing = request.accept_mimetypes.best_match(["application/atom+xml", "text/html"]) == "text/html"
    response = Response(body, content_type="application/xml; charset=utf-8" if browsing else MEDIA_TYPE)
    response.vary.add("Accept")
    return response
