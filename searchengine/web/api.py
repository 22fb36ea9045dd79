"""The JSON API (blueprint ``api``), described by :mod:`searchengine.web.openapi`.

Routes::

    GET /api/search                     SearchResults.to_dict(), as `search --json`
    GET /api/export                     every hit (up to EXPORT_LIMIT) as BibTeX, CSV, JSON lines or RIS,
                                        as `search --all --format F`; an attachment
    GET /api/records?id=A&id=B          several stored records at once, and the ids not found
    GET /api/records/<id>               the stored record, as `show --json` without "source"
    GET /api/records/<id>/similar       SearchResults.to_dict(), as `similar --json`
    GET /api/similar?id=A&id=B          papers like these: SearchResults.to_dict(), as `similar A B --json`
    GET /api/openapi.json               OpenAPI 3.1 description of the API

A parameter an operation does not list in the OpenAPI document is a 400.
"""

from __future__ import annotations

import re

from flask import Blueprint, Response, current_app, jsonify, request
from werkzeug.datastructures import MultiDict

from searchengine.errors import QueryError
from searchengine.limits import MAX_API_LOOKUP
from searchengine.web.guard import app_limits
from searchengine.web.helpers import current_index
from searchengine.web.params import SearchParams, read_format, read_ids, read_limit

blueprint = Blueprint("api", __name__)


@blueprint.before_request
def api_parameters_are_known() -> None:
    # A misspelt or unsupported parameter (offset=15) would otherwise be
    # ignored and answer as if it were not there.
    if request.url_rule is None:
        return
    from searchengine.web.openapi import query_parameters

    path = re.sub(r"<[^>]+>", "{id}", request.url_rule.rule)
    known = query_parameters(path)
    unknown = sorted(set(request.args) - known)
    if unknown:
        takes = f"it takes {', '.join(sorted(known))}" if known else "it takes none"
        hint = "; pages are chosen with page and limit" if {"offset", "start"} & set(unknown) else ""
        raise QueryError(
            f"unknown parameter{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(repr(name[:40]) for name in unknown[:5])} for {request.path[:200]} "
            f"({takes}){hint}"
        )


@blueprint.get("/api/search")
def api_search() -> Response:
    params = SearchParams.from_args(request.args)
    return jsonify(current_index().run(params.request()).to_dict())


@blueprint.get("/api/export")
def api_export() -> Response:
    from searchengine.export import FORMATS, render, rows

    # An export has no page: page and limit, if given, are ignored.
    params = SearchParams.from_args(
        MultiDict([(name, value) for name, value in request.args.items(multi=True) if name not in ("page", "limit")])
    )
    chosen = FORMATS[read_format(request.args)]
    limits = app_limits(current_app)
    results = current_index().run(params.request(export=True, cap=limits.max_export if limits else None))
    response = Response(render(chosen.name, rows(results.hits)), content_type=chosen.media_type)
    response.headers["Content-Disposition"] = f'attachment; filename="search-results.{chosen.extension}"'
    # The file cannot say whether the cap cut it: these headers do.
    response.headers["X-Total-Hits"] = str(results.total)
    response.headers["X-Exported-Hits"] = str(len(results.hits))
    return response


@blueprint.get("/api/records/<record_id:record_id>/similar")
def api_similar(record_id: str) -> Response:
    limit = read_limit(request.args)
    return jsonify(current_index().similar(record_id, limit=limit).to_dict())


@blueprint.get("/api/similar")
def api_similar_to_several() -> Response:
    wanted = read_ids(request.args, "record ids")
    limit = read_limit(request.args)
    return jsonify(current_index().similar(wanted, limit=limit).to_dict())


@blueprint.get("/api/records")
def api_records() -> Response:
    wanted = read_ids(request.args, "ids or DOIs")
    if len(wanted) > MAX_API_LOOKUP:
        raise QueryError(f"{len(wanted)} ids given; at most {MAX_API_LOOKUP} are looked up in one request")
    found, missing = current_index().documents(wanted)
    for record in found:
        record.pop("source", None)  # a path on the server
    return jsonify({"records": found, "missing": missing})


@blueprint.get("/api/records/<record_id:record_id>")
def api_record(record_id: str) -> Response:
    record = current_index().document(record_id)
    # "source" is a file path on the server: not for the web.
    record.pop("source", None)
    return jsonify(record)


@blueprint.get("/api/openapi.json")
def api_openapi() -> Response:
    from searchengine.web.openapi import openapi_document

    return jsonify(openapi_document())
