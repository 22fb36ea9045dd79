"""The Flask application factory: one index, three blueprints, errors and headers.

The routes are in blueprints by job: :mod:`~searchengine.web.pages` (the
search and record pages), :mod:`~searchengine.web.feeds` (``/feed.atom``)
and :mod:`~searchengine.web.api` (``/api/...``, described by
:mod:`~searchengine.web.openapi`).

Errors are ``{"error": "..."}`` under ``/api/`` and an HTML page elsewhere:
400 for a request the search API cannot understand, 404 for an unknown record
or path, 503 when the index is missing or damaged. Anything else is a bug: it
is logged with its traceback and answered with a bare 500, never a trace.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, cast

from flask import Flask, Response, current_app, jsonify, make_response, render_template, request
from flask.json.provider import DefaultJSONProvider
from werkzeug.exceptions import HTTPException

from searchengine import settings
from searchengine.errors import (
    ClusterError,
    IndexBusyError,
    IndexDamagedError,
    IndexNotFoundError,
    IndexUnreadableError,
    QueryError,
    RecordNotFoundError,
    SearchEngineError,
)
from searchengine.export import FORMATS
from searchengine.facets import FACETS
from searchengine.limits import EXPORT_LIMIT, LISTING_SORTS, SORTS
from searchengine.ranking import HYBRID_SEMANTIC_WEIGHT
from searchengine.results import shown_authors
from searchengine.search import DEFAULT_INDEX_DIR, SearchIndex, open_index
from searchengine.web import api, feeds, pages
from searchengine.web.helpers import (
    INDEX_KEY,
    RecordIdConverter,
    current_index,
    doi_link,
    home,
    is_api,
    marked,
    record_link,
    record_url,
    safe_link,
    shown_day,
)
from searchengine.web.mathml import with_math
from searchengine.web.params import EXPORT_FORMATS, SearchParams, plain_text

if TYPE_CHECKING:
    from searchengine.web.guard import ServeLimits

FACET_LABELS = {
    **{facet.name: facet.label for facet in FACETS},
    "since": "Submitted since",
    "until": "Submitted until",
    "past": "Submitted in the past",
}
# Link texts of the export formats.
EXPORT_LABELS = {name: form.label for name, form in FORMATS.items()}
# The ranking choice of the search box, default first.
MODE_LABELS = {"hybrid": "words and meaning", "semantic": "meaning", "lexical": "words"}

# No script at all; styles and images only from this origin; forms only to it.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
}
# Where an app keeps the cause it last logged of the index being unavailable (logged once per cause).
_UNAVAILABLE_KEY = "searchengine.unavailable"

log = logging.getLogger("web")


def create_app(
    index_dir: str | os.PathLike | None = None, *, index: SearchIndex | None = None, limits: ServeLimits | None = None
) -> Flask:
    """Build the web application over one index.

    Args:
        index_dir: the index folder or OpenSearch URL (default:
            ``$SEARCHENGINE_INDEX`` or ``index/``). The app follows the
            index as it is rebuilt, without a restart.
        index: an already open :class:`SearchIndex` to serve instead.
        limits: per-client rate limits, the cap on concurrent expensive
            requests and the export and feed sizes
            (:mod:`searchengine.web.guard`); ``None``: no rate limit or cap
            (``searchengine serve`` always gives them).

    Raises:
        IndexNotFoundError: there is no index at ``index_dir``.
        IndexDamagedError: the index cannot be opened.
    """
    app = Flask(__name__)
    app.config.update(JSON_SORT_KEYS=False, MAX_CONTENT_LENGTH=16 * 1024, PROPAGATE_EXCEPTIONS=False)
    provider = cast(DefaultJSONProvider, app.json)  # Flask's default: the app sets no other
    provider.sort_keys = False
    provider.ensure_ascii = False
    app.extensions[INDEX_KEY] = index or open_index(index_dir or settings.index_location() or DEFAULT_INDEX_DIR)
    app.extensions[_UNAVAILABLE_KEY] = {}
    app.jinja_env.trim_blocks = app.jinja_env.lstrip_blocks = True
    app.jinja_env.filters["marked"] = marked
    app.jinja_env.filters["with_math"] = with_math
    app.jinja_env.filters["day"] = shown_day
    app.jinja_env.globals.update(
        FACETS=FACETS,
        FACET_LABELS=FACET_LABELS,
        SORTS=SORTS,
        record_url=record_url,
        record_link=record_link,
        doi_link=doi_link,
        safe_link=safe_link,
        EXPORT_FORMATS=EXPORT_FORMATS,
        EXPORT_LABELS=EXPORT_LABELS,
        EXPORT_LIMIT=EXPORT_LIMIT,
        shown_authors=shown_authors,
        home=home,
        MODE_LABELS=MODE_LABELS,
        HYBRID_SEMANTIC_WEIGHT=HYBRID_SEMANTIC_WEIGHT,
        LISTING_SORTS=LISTING_SORTS,
    )
    app.context_processor(_semantic_choice)
    # "//" in a path is a 404 like any unknown path, not a redirect to a
    # merged one (which would also change record ids holding "//").
    app.url_map.merge_slashes = False
    app.url_map.converters["record_id"] = RecordIdConverter
    app.before_request(_query_string_is_utf8)
    for blueprint in (pages.blueprint, feeds.blueprint, api.blueprint):
        app.register_blueprint(blueprint)
    app.register_error_handler(SearchEngineError, _engine_error)
    app.register_error_handler(HTTPException, _http_error)
    app.register_error_handler(Exception, _unexpected_error)
    app.after_request(_available_again)
    app.after_request(_security_headers)
    if limits is not None:
        from searchengine.web.guard import install

        install(app, limits, _error_response)
    return app


def _semantic_choice() -> dict[str, bool]:
    # The ranking choice is offered when the index can rank by meaning.
    from searchengine import semantic

    try:
        return {"has_vectors": current_index().has_vectors and semantic.available()}
    except SearchEngineError:
        return {"has_vectors": False}


def _query_string_is_utf8() -> None:
    # Werkzeug keeps undecodable percent-escapes as literal text
    # ("%FF"): refuse them instead of searching for that text.
    from urllib.parse import unquote_to_bytes

    try:
        unquote_to_bytes(request.query_string.replace(b"+", b" ")).decode("utf-8")
    except UnicodeDecodeError:
        raise QueryError("the query string is not valid UTF-8") from None


def _error_response(status: int, message: str) -> Response:
    if is_api():
        response = jsonify({"error": message})
    else:
        response = make_response(
            render_template(
                "error.html",
                status=status,
                message=message,
                params=SearchParams(q=plain_text(request.args.get("q", ""))[:200]),
            )
        )
    response.status_code = status
    return response


def _engine_error(exc: SearchEngineError) -> Response:
    if isinstance(exc, QueryError):
        return _error_response(400, str(exc))
    if isinstance(exc, RecordNotFoundError):
        return _error_response(404, str(exc))
    if isinstance(exc, (IndexNotFoundError, IndexDamagedError, IndexUnreadableError, IndexBusyError, ClusterError)):
        # Once per cause: a damaged index refuses every request until rebuilt.
        unavailable = current_app.extensions[_UNAVAILABLE_KEY]
        if unavailable.get("cause") != str(exc):
            log.error("index unavailable: %s", exc)
            unavailable["cause"] = str(exc)
        response = _error_response(503, "the index is not available right now")
        response.headers["Retry-After"] = "30"  # a rebuild of the sample takes minutes; a restart, seconds
        return response
    log.error("unexpected search error on %s: %s", request.path, exc)
    return _error_response(400, str(exc))


def _http_error(exc: HTTPException) -> Response:
    messages = {404: "no such page", 405: "method not allowed (only GET is served)"}
    code = exc.code or 400
    response = _error_response(code, messages.get(code, exc.name.lower()))
    if exc.code == 405:
        response.headers["Allow"] = "GET, HEAD"
    return response


def _unexpected_error(exc: Exception) -> Response:
    if current_app.debug:
        raise exc
    log.exception("unexpected error on %s %s", request.method, request.full_path)
    return _error_response(500, "internal error (logged on the server)")


def _available_again(response: Response) -> Response:
    if response.status_code != 503 and current_app.extensions[_UNAVAILABLE_KEY].pop("cause", None) is not None:
        log.warning("index available again")
    return response


def _security_headers(response: Response) -> Response:
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    if is_api():
        response.headers.setdefault("Access-Control-Allow-Origin", "*")
    return response
