"""The Flask application: search page, record page, JSON API, errors and headers.

Routes::

    GET /                               search page (HTML), parameters in web.params;
                                        /?sort=newest lists the latest papers
    GET /records/<id>                   record page (HTML)
    GET /records/<id>/bibtex            the record as BibTeX (text/plain)
    GET /records/<id>/ris               the record as RIS (text/plain)
    GET /api/search                     SearchResults.to_dict(), as `search --json`
    GET /api/export                     every hit (up to EXPORT_LIMIT) as BibTeX, CSV, JSON lines or RIS,
                                        as `search --all --format F`; an attachment
    GET /api/records/<id>               the stored record, as `show --json` without "source"
    GET /api/records/<id>/similar       SearchResults.to_dict(), as `similar --json`
    GET /api/similar?id=A&id=B          papers like these: SearchResults.to_dict(), as `similar A B --json`
    GET /api/openapi.json               OpenAPI 3.1 description of the API

Errors are ``{"error": "..."}`` under ``/api/`` and an HTML page elsewhere:
400 for a request the search API cannot understand, 404 for an unknown record
or path, 503 when the index is missing or damaged. Anything else is a bug: it
is logged with its traceback and answered with a bare 500, never a trace.
"""

from __future__ import annotations

import logging
import os
import re
from urllib.parse import quote

from flask import Flask, Response, jsonify, make_response, redirect, render_template, request, url_for
from markupsafe import Markup, escape
from werkzeug.datastructures import MultiDict
from werkzeug.exceptions import HTTPException
from werkzeug.routing import PathConverter

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
from searchengine.records import arxiv_id, doi
from searchengine.results import shown_authors
from searchengine.search import DEFAULT_INDEX_DIR, SearchIndex, open_index
from searchengine.export import FORMATS
from searchengine.limits import EXPORT_LIMIT, LISTING_SORTS, MAX_API_LOOKUP, SORTS
from searchengine.facets import FACETS
from web.params import (EXPORT_FORMATS, FACET_SIZE, MAX_VALUE_CHARS, SearchParams, plain_text, read_format, read_ids,
                        read_limit)

SIMILAR_ON_PAGE = 5
FACET_LABELS = {**{facet.name: facet.label for facet in FACETS},
                "since": "Submitted since", "until": "Submitted until", "past": "Submitted in the past"}
# A date histogram bin's start, cut to its unit: the value of its since/until link.
BIN_CHARS = {"year": 4, "month": 7, "day": 10}
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

log = logging.getLogger("web")


def marked(text: str, matches) -> Markup:
    """``text`` escaped, with the ``[start, end)`` spans in ``matches`` wrapped in ``<mark>``.

    The only live markup in a page's record text comes from here: every
    character of ``text`` is escaped; spans that overlap, run backwards or
    fall outside the text are ignored rather than trusted.
    """
    parts: list[str] = []
    position = 0
    for span in matches or ():
        try:
            start, end = int(span[0]), int(span[1])
        except (TypeError, ValueError, IndexError):
            continue
        if start < position or end <= start or end > len(text):
            continue
        parts.append(str(escape(text[position:start])))
        parts.append(f"<mark>{escape(text[start:end])}</mark>")
        position = end
    parts.append(str(escape(text[position:])))
    return Markup("".join(parts))


# Record routes by endpoint; the id goes where {} is.
RECORD_ROUTES = {"record_page": "/records/{}", "record_bibtex": "/records/{}/bibtex",
                 "record_ris": "/records/{}/ris",
                 "api_record": "/api/records/{}", "api_similar": "/api/records/{}/similar"}
# Left unencoded in record ids, as Werkzeug's path converter does.
_PATH_SAFE = "!$&'()*+,;=:@"


# A Host header a feed's absolute links can be made of: a name or address, and a port.
_HOST = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?")


def id_path(record_id: str) -> str:
    """``record_id`` percent-encoded for a record URL's path.

    An id whose "/"-separated parts are all ordinary keeps its slashes
    (``hep-th/9901001``). One with an empty, ``.`` or ``..`` part (``a/../b``)
    has its slashes encoded as ``%2F`` too: a browser would otherwise resolve
    the dots and request another path; the server decodes ``%2F`` back to
    ``/`` before routing. Ids that are exactly ``.`` or ``..`` cannot be a
    path part at all (browsers resolve ``%2E`` too).
    """
    ordinary = all(part not in ("", ".", "..") for part in record_id.split("/"))
    return quote(record_id, safe=_PATH_SAFE + ("/" if ordinary else ""))


class RecordIdConverter(PathConverter):
    """A record id in a URL path: like ``path``, but it may also start with "/"."""

    regex = ".+?"
    part_isolating = False


def record_url(endpoint: str, record_id: str) -> str:
    """The URL of a record route (an endpoint of :data:`RECORD_ROUTES`) for ``record_id``."""
    return request.script_root + RECORD_ROUTES[endpoint].format(id_path(record_id))


def record_link(record_id: str, params: SearchParams | None = None) -> str:
    """The record page of ``record_id``, carrying the search state ``params``
    (query, filters, sort, page) in its query string, for the page's search box
    and its "back to results" link."""
    url = record_url("record_page", record_id)
    return params.url(url) if params is not None and not params.is_empty else url


def doi_link(value: str) -> str | None:
    """The ``https://doi.org/`` link of a DOI, or ``None`` for text that is no DOI."""
    found = doi(value)
    return "https://doi.org/" + quote(found, safe="/:;()[]-._~") if found else None


def safe_link(url: str) -> str | None:
    """``url`` when it is an http(s) link, else ``None`` (no ``javascript:`` from records)."""
    url = (url or "").strip()
    return url if url.lower().startswith(("https://", "http://")) else None


def _year_bars(values: list[dict], width: int = 220, height: int = 60) -> list[dict]:
    """Geometry of the year histogram: one bar per known year, oldest first.

    Returns dicts ``{"value", "count", "selected", "x", "y", "w", "h"}`` in SVG
    user units (``width`` × ``height``); bar heights are proportional to counts.
    """
    known = sorted((v for v in values if v.get("value") is not None), key=lambda v: v["value"])
    if not known:
        return []
    peak = max(v["count"] for v in known) or 1
    slot = width / len(known)
    bars = []
    for i, v in enumerate(known):
        h = max(1.0, height * v["count"] / peak)
        bars.append({**v, "x": round(i * slot + slot * 0.1, 2), "w": round(slot * 0.8, 2),
                     "y": round(height - h, 2), "h": round(h, 2)})
    return bars


def shown_day(value) -> str:
    """A day (:class:`datetime.date` or ISO text) as arXiv writes it, ``14 Mar 2025``; ``""`` for none."""
    from searchengine import dates

    day = dates.from_iso(value) if isinstance(value, str) else value
    return dates.shown(day) if day else ""


def _date_bars(histogram: dict | None, params: SearchParams, width: int = 220, height: int = 60) -> dict | None:
    """The sidebar's date histogram: ``{"unit", "undated", "bars": [...]}``,
    each bar ``{"label", "count", "url", "x", "y", "w", "h"}`` (SVG user units,
    ``width`` × ``height``, oldest first; ``url`` narrows the search to that
    bin with since/until); ``None`` when no hit has a date."""
    if not histogram or not histogram.get("rows"):
        return None
    cut = BIN_CHARS[histogram["bin"]]
    rows = histogram["rows"]
    peak = max(count for _, count in rows) or 1
    slot = width / len(rows)
    bars = []
    for i, (start, count) in enumerate(rows):
        h = max(1.0, height * count / peak) if count else 0.0
        label = start[:cut]
        bars.append({"label": label, "count": count, "url": params.dated(since=label, until=label).url("/"),
                     "x": round(i * slot + slot * 0.1, 2), "w": round(max(slot * 0.8, 0.5), 2),
                     "y": round(height - h, 2), "h": round(h, 2)})
    return {"unit": histogram["bin"], "undated": histogram.get("undated", 0), "bars": bars}


def create_app(index_dir: str | os.PathLike | None = None, *, index: SearchIndex | None = None) -> Flask:
    """Build the web application over one index.

    Args:
        index_dir: the index folder or OpenSearch URL (default:
            ``$SEARCHENGINE_INDEX`` or ``index/``). The app follows the
            index as it is rebuilt, without a restart.
        index: an already open :class:`SearchIndex` to serve instead.

    Raises:
        IndexNotFoundError: there is no index at ``index_dir``.
        IndexDamagedError: the index cannot be opened.
    """
    app = Flask(__name__)
    app.config.update(JSON_SORT_KEYS=False, MAX_CONTENT_LENGTH=16 * 1024, PROPAGATE_EXCEPTIONS=False)
    app.json.sort_keys = False
    app.json.ensure_ascii = False
    search_index = index or open_index(index_dir or settings.index_location() or DEFAULT_INDEX_DIR)
    app.extensions["searchengine.index"] = search_index
    app.jinja_env.trim_blocks = app.jinja_env.lstrip_blocks = True
    app.jinja_env.filters["marked"] = marked
    app.jinja_env.filters["day"] = shown_day
    app.jinja_env.globals.update(FACETS=FACETS, FACET_LABELS=FACET_LABELS, SORTS=SORTS, record_url=record_url,
                                 record_link=record_link, doi_link=doi_link, safe_link=safe_link,
                                 EXPORT_FORMATS=EXPORT_FORMATS, EXPORT_LABELS=EXPORT_LABELS,
                                 EXPORT_LIMIT=EXPORT_LIMIT, shown_authors=shown_authors, MODE_LABELS=MODE_LABELS,
                                 LISTING_SORTS=LISTING_SORTS)

    @app.context_processor
    def semantic_choice():
        # The ranking choice is offered when the index can rank by meaning.
        from searchengine import semantic

        try:
            return {"has_vectors": search_index.has_vectors and semantic.available()}
        except SearchEngineError:
            return {"has_vectors": False}
    # "//" in a path is a 404 like any unknown path, not a redirect to a
    # merged one (which would also change record ids holding "//").
    app.url_map.merge_slashes = False
    app.url_map.converters["record_id"] = RecordIdConverter

    def is_api() -> bool:
        return request.path == "/api" or request.path.startswith("/api/")

    @app.before_request
    def query_string_is_utf8():
        # Werkzeug keeps undecodable percent-escapes as literal text
        # ("%FF"): refuse them instead of searching for that text.
        from urllib.parse import unquote_to_bytes

        try:
            unquote_to_bytes(request.query_string.replace(b"+", b" ")).decode("utf-8")
        except UnicodeDecodeError:
            raise QueryError("the query string is not valid UTF-8") from None

    @app.before_request
    def api_parameters_are_known():
        # A misspelt or unsupported parameter (offset=15) would otherwise be
        # ignored and answer as if it were not there.
        if not is_api() or request.url_rule is None:
            return
        from web.openapi import query_parameters

        path = re.sub(r"<[^>]+>", "{id}", request.url_rule.rule)
        known = query_parameters(path)
        unknown = sorted(set(request.args) - known)
        if unknown:
            takes = f"it takes {', '.join(sorted(known))}" if known else "it takes none"
            hint = "; pages are chosen with page and limit" if {"offset", "start"} & set(unknown) else ""
            raise QueryError(f"unknown parameter{'s' if len(unknown) > 1 else ''} "
                             f"{', '.join(repr(name[:40]) for name in unknown[:5])} for {request.path[:200]} "
                             f"({takes}){hint}")

    # --- pages -------------------------------------------------------------

    @app.get("/")
    def search_page():
        params = SearchParams.from_args(request.args)
        if params.from_range:
            return redirect(params.url("/"), code=303)
        results = None if params.is_empty else search_index.run(params.request())
        facets = _facet_view(params, results) if results is not None else []
        pages = _pagination(params, results)
        dated = _date_bars(results.date_histogram, params) if results is not None else None
        return render_template(
            "search.html", params=params, results=results, facets=facets, pages=pages, dated=dated,
            documents=None if results is not None else search_index.doc_count,
        )

    @app.get("/records/<record_id:record_id>")
    def record_page(record_id: str):
        record = search_index.document(record_id)
        similar = search_index.similar(record["id"], limit=SIMILAR_ON_PAGE)
        # The search the record was opened from rides in the query string (no
        # server state): the search box holds it and "back to results" returns
        # to the same page; a state that does not read is dropped, not an error.
        try:
            params = SearchParams.from_args(request.args)
        except QueryError:
            params = SearchParams()
        return render_template("record.html", record=record, similar=similar, params=params,
                               back=None if params.is_empty else params.url(url_for("search_page")),
                               arxiv=arxiv_id(record["id"]), link=safe_link(record["url"]),
                               pdf=safe_link(record["pdf_url"]), dois=record["doi"].split(),
                               license_link=safe_link(record["license"]))

    def record_export(record_id: str, format_name: str):
        from searchengine.export import FORMATS, citation_key, render

        record = search_index.document(record_id)
        # Shown in the browser (text/plain), with a file name for saving it.
        response = Response(render(format_name, [record]), mimetype="text/plain")
        name = f"{citation_key(record)}.{FORMATS[format_name].extension}"
        response.headers["Content-Disposition"] = f'inline; filename="{name}"'
        return response

    app.add_url_rule("/records/<record_id:record_id>/bibtex", "record_bibtex", record_export,
                     defaults={"format_name": "bibtex"}, methods=["GET"])
    app.add_url_rule("/records/<record_id:record_id>/ris", "record_ris", record_export,
                     defaults={"format_name": "ris"}, methods=["GET"])

    @app.get("/feed.atom")
    def search_feed():
        from urllib.parse import parse_qsl, urlencode, urlsplit

        from searchengine.export import rows
        from searchengine.feeds import FEED_SIZE, MEDIA_TYPE, atom_feed, feed_title

        if not _HOST.fullmatch(request.host):
            raise QueryError("the request's Host header is not a host name and port: the feed's links "
                             "could not be absolute")
        # The feed is newest first from its first entry: page, sort and more play no part.
        # Without query text or a filter it is the feed of the latest papers.
        params = SearchParams.from_args(MultiDict(
            [(name, value) for name, value in request.args.items(multi=True) if name not in ("page", "sort", "more")]))
        # The search page's 10 a page is few for a feed; a limit given is kept (at most 100).
        limit = params.limit if request.args.get("limit") else FEED_SIZE
        results = search_index.run(params.feed_request(limit))
        root = request.host_url.rstrip("/")
        self_url = params.feed_url(url_for("search_feed"))
        pairs = parse_qsl(urlsplit(self_url).query)
        body = atom_feed(rows(results.hits), title=feed_title(pairs),
                         self_url=root + self_url,
                         page_url=f"{root}{url_for('search_page')}?{urlencode(pairs + [('sort', 'newest')])}",
                         record_url=lambda record_id: root + record_url("record_page", record_id))
        return Response(body, content_type=MEDIA_TYPE)

    # --- JSON API ----------------------------------------------------------

    @app.get("/api/search")
    def api_search():
        params = SearchParams.from_args(request.args)
        return jsonify(search_index.run(params.request()).to_dict())

    @app.get("/api/export")
    def api_export():
        from searchengine.export import FORMATS, render, rows

        # An export has no page: page and limit, if given, are ignored.
        params = SearchParams.from_args(MultiDict(
            [(name, value) for name, value in request.args.items(multi=True) if name not in ("page", "limit")]))
        chosen = FORMATS[read_format(request.args)]
        results = search_index.run(params.request(export=True))
        response = Response(render(chosen.name, rows(results.hits)), content_type=chosen.media_type)
        response.headers["Content-Disposition"] = f'attachment; filename="search-results.{chosen.extension}"'
        # The file cannot say whether the cap cut it: these headers do.
        response.headers["X-Total-Hits"] = str(results.total)
        response.headers["X-Exported-Hits"] = str(len(results.hits))
        return response

    @app.get("/api/records/<record_id:record_id>/similar")
    def api_similar(record_id: str):
        limit = read_limit(request.args)
        return jsonify(search_index.similar(record_id, limit=limit).to_dict())

    @app.get("/api/similar")
    def api_similar_to_several():
        wanted = read_ids(request.args, "record ids")
        limit = read_limit(request.args)
        return jsonify(search_index.similar(wanted, limit=limit).to_dict())

    @app.get("/api/records")
    def api_records():
        wanted = read_ids(request.args, "ids or DOIs")
        if len(wanted) > MAX_API_LOOKUP:
            raise QueryError(f"{len(wanted)} ids given; at most {MAX_API_LOOKUP} are looked up in one request")
        found, missing = search_index.documents(wanted)
        for record in found:
            record.pop("source", None)  # a path on the server
        return jsonify({"records": found, "missing": missing})

    @app.get("/api/records/<record_id:record_id>")
    def api_record(record_id: str):
        record = search_index.document(record_id)
        # "source" is a file path on the server: not for the web.
        record.pop("source", None)
        return jsonify(record)

    @app.get("/api/openapi.json")
    def api_openapi():
        from web.openapi import openapi_document

        return jsonify(openapi_document())

    # --- errors and headers -----------------------------------------------

    unavailable: dict[str, str] = {}  # the cause last logged of the index being unavailable

    def error_response(status: int, message: str) -> Response:
        if is_api():
            response = jsonify({"error": message})
        else:
            response = make_response(render_template(
                "error.html", status=status, message=message,
                params=SearchParams(q=plain_text(request.args.get("q", ""))[:200])))
        response.status_code = status
        return response

    @app.errorhandler(SearchEngineError)
    def engine_error(exc: SearchEngineError):
        if isinstance(exc, QueryError):
            return error_response(400, str(exc))
        if isinstance(exc, RecordNotFoundError):
            return error_response(404, str(exc))
        if isinstance(exc, (IndexNotFoundError, IndexDamagedError, IndexUnreadableError, IndexBusyError,
                            ClusterError)):
            # Once per cause: a damaged index refuses every request until rebuilt.
            if unavailable.get("cause") != str(exc):
                log.error("index unavailable: %s", exc)
                unavailable["cause"] = str(exc)
            response = error_response(503, "the index is not available right now")
            response.headers["Retry-After"] = "30"  # a rebuild of the sample takes minutes; a restart, seconds
            return response
        log.error("unexpected search error on %s: %s", request.path, exc)
        return error_response(400, str(exc))

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException):
        messages = {404: "no such page", 405: "method not allowed (only GET is served)"}
        response = error_response(exc.code or 400, messages.get(exc.code, exc.name.lower()))
        if exc.code == 405:
            response.headers["Allow"] = "GET, HEAD"
        return response

    @app.errorhandler(Exception)
    def unexpected_error(exc: Exception):
        if app.debug:
            raise exc
        log.exception("unexpected error on %s %s", request.method, request.full_path)
        return error_response(500, "internal error (logged on the server)")

    @app.after_request
    def available_again(response: Response) -> Response:
        if response.status_code != 503 and unavailable.pop("cause", None) is not None:
            log.warning("index available again")
        return response

    @app.after_request
    def security_headers(response: Response) -> Response:
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        if is_api():
            response.headers.setdefault("Access-Control-Allow-Origin", "*")
        return response

    return app


def _facet_view(params: SearchParams, results) -> list[dict]:
    """The sidebar: per facet its values with toggle URLs, the unknown count and histogram bars.

    Returns ``[{"name", "values": [{"value", "count", "selected", "url"}], "more_url", "fewer_url",
    (``url`` ``None`` for a value that cannot be a filter: shown, not linked)
    "unknown": int, "remaining": int, "bars": [...]}]`` in :data:`searchengine.facets.FACETS` order;
    ``bars`` (year only) as :func:`_year_bars`, each with its toggle ``url``;
    a numeric facet's values are listed oldest first, as its bars run.
    """
    view = []
    for facet in FACETS:
        name = facet.name
        values = [dict(v, url=params.toggled(name, v["value"], bool(v.get("selected"))).url("/")
                       if _filterable(name, v["value"]) else None)
                  for v in results.facets.get(name) or [] if v.get("value") is not None]
        remaining = results.facets_remaining.get(name, 0)
        if name != params.more and len(values) > FACET_SIZE:
            # Counted for the facet listed in full; the others are listed in short.
            remaining += len(values) - FACET_SIZE
            values = values[:FACET_SIZE]
        if facet.numeric:  # listed as the histogram above them runs: oldest first
            values.sort(key=lambda v: v["value"])
        view.append({
            "name": name,
            "values": values,
            "unknown": sum(v["count"] for v in results.facets.get(name) or [] if v.get("value") is None),
            "remaining": remaining,
            "more_url": params.expanded(name).url("/") if remaining and name != params.more else None,
            "fewer_url": params.expanded(None).url("/") if name == params.more else None,
            "bars": _year_bars(values) if facet.numeric else [],
        })
    return view


def _filterable(facet: str, value) -> bool:
    """Whether a facet value can be a filter of that facet (a link to it
    would otherwise lead to an error page): short enough, and understood by
    the filter's parser."""
    from searchengine import filters

    text = str(value)
    if len(text) > MAX_VALUE_CHARS:
        return False
    try:
        getattr(filters, f"parse_{facet}")(text)
    except QueryError:
        return False
    return True


def _pagination(params: SearchParams, results) -> dict | None:
    """Links of the page navigation: previous, next and a window of numbers.

    Returns ``None`` when everything fits on one page; otherwise
    ``{"prev": url|None, "next": url|None, "items": [{"number", "url", "current"} | None]}``
    where ``None`` marks a gap. The page count is the pages paging can reach
    (:func:`searchengine.limits.page_count`).
    """
    if results is None:
        return None
    last = results.page.get("pages") or 0
    if last <= 1:
        return None
    current = params.page
    numbers = sorted({1, last, *range(max(1, current - 2), min(last, current + 2) + 1)})
    items: list[dict | None] = []
    previous = 0
    for number in numbers:
        if number - previous > 1:
            items.append(None)
        items.append({"number": number, "url": params.with_page(number).url("/"), "current": number == current})
        previous = number
    return {
        "prev": params.with_page(current - 1).url("/") if 1 < current <= last + 1 else None,
        "next": params.with_page(current + 1).url("/") if current < last else None,
        "items": items,
    }
