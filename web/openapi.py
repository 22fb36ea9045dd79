"""The OpenAPI 3.1 document served at ``/api/openapi.json``.

Written by hand from the routes in :mod:`web.app` and the shapes of
``SearchResults.to_dict()`` and ``SearchIndex.document()``; ``tests/test_web.py``
checks that every API route is described.
"""

from __future__ import annotations

from typing import Any

from searchengine import __version__
from searchengine.search import MAX_LIMIT
from web.params import DEFAULT_LIMIT, MAX_DEPTH, MAX_VALUES, SORTS


def _param(name: str, description: str, schema: dict, *, repeat: bool = False) -> dict[str, Any]:
    if repeat:
        schema = {"type": "array", "items": schema, "maxItems": MAX_VALUES}
    return {"name": name, "in": "query", "required": False, "description": description,
            "schema": schema, **({"style": "form", "explode": True} if repeat else {})}


def _error(description: str) -> dict[str, Any]:
    return {"description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}


def openapi_document() -> dict[str, Any]:
    """The API description as a JSON-ready dict (OpenAPI 3.1.0)."""
    record_id = {"name": "id", "in": "path", "required": True,
                 "description": "Record id (an arXiv id such as 2101.00001, or t- and 12 hex digits)",
                 "schema": {"type": "string"}}
    limit = _param("limit", f"Hits per page, at most {MAX_LIMIT}",
                   {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT})
    results = {"description": "Ranked hits",
               "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SearchResults"}}}}
    string_list = {"type": "array", "items": {"type": "string"}}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "searchengine",
            "version": __version__,
            "description": "Ranked, faceted full-text search over titles and abstracts of scientific papers. "
                           "Errors are JSON objects {\"error\": message}.",
        },
        "paths": {
            "/api/search": {"get": {
                "summary": "Search, filter, sort and page; facet counts over all hits",
                "operationId": "search",
                "parameters": [
                    _param("q", "Query text; empty to browse by filters alone", {"type": "string", "maxLength": 2000}),
                    _param("year", "Year or range: 2023, 2023-2025, 2023-, -2020 (several: OR)",
                           {"type": "string"}, repeat=True),
                    _param("year_from", "First year of a range (same as year=A-)", {"type": "integer"}),
                    _param("year_to", "Last year of a range (same as year=-B)", {"type": "integer"}),
                    _param("author", "Author name, any case and accents, initials allowed (several: OR)",
                           {"type": "string"}, repeat=True),
                    _param("category", "Category code (cs.DC) or archive (cs) (several: OR)",
                           {"type": "string"}, repeat=True),
                    _param("sort", "Order of hits", {"type": "string", "enum": list(SORTS), "default": "relevance"}),
                    _param("page", f"1-based page; page x limit may not exceed {MAX_DEPTH}",
                           {"type": "integer", "minimum": 1, "default": 1}),
                    limit,
                ],
                "responses": {"200": results, "400": _error("A parameter or the query cannot be understood"),
                              "503": _error("The index is not available")},
            }},
            "/api/records/{id}": {"get": {
                "summary": "One stored record",
                "operationId": "record",
                "parameters": [record_id],
                "responses": {
                    "200": {"description": "The record", "content": {"application/json": {
                        "schema": {"$ref": "#/components/schemas/Record"}}}},
                    "404": _error("No record has this id"),
                },
            }},
            "/api/records/{id}/similar": {"get": {
                "summary": "Papers on the same topic as a record (the record itself excluded)",
                "operationId": "similar",
                "parameters": [record_id, limit],
                "responses": {"200": results, "400": _error("limit out of range"),
                              "404": _error("No record has this id")},
            }},
            "/api/openapi.json": {"get": {
                "summary": "This document", "operationId": "openapi",
                "responses": {"200": {"description": "OpenAPI 3.1 document"}},
            }},
        },
        "components": {"schemas": {
            "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}},
            "Record": {"type": "object", "properties": {
                "id": {"type": "string"}, "title": {"type": "string"}, "abstract": {"type": "string"},
                "authors": string_list, "year": {"type": ["integer", "null"]}, "categories": string_list,
                "url": {"type": "string"}, "source": {"type": "string"},
            }},
            "Hit": {"type": "object", "properties": {
                "id": {"type": "string"}, "title": {"type": "string"}, "authors": string_list,
                "year": {"type": ["integer", "null"]}, "categories": string_list,
                "score": {"type": "number", "description": "BM25F score"},
                "snippet": {"type": "string", "description": "Plain text from the abstract"},
                "snippet_matches": {"type": "array", "description": "[start, end) offsets of matched words in snippet",
                                    "items": {"type": "array", "items": {"type": "integer"}}},
                "title_matches": {"type": "array", "description": "[start, end) offsets of matched words in title",
                                  "items": {"type": "array", "items": {"type": "integer"}}},
                "url": {"type": "string"},
            }},
            "FacetValue": {"type": "object", "properties": {
                "value": {"type": ["string", "integer", "null"], "description": "null counts records without a value"},
                "count": {"type": "integer"}, "selected": {"type": "boolean"},
            }},
            "SearchResults": {"type": "object", "properties": {
                "query": {"type": "string"},
                "total": {"type": "integer", "description": "Hits over all pages"},
                "hits": {"type": "array", "items": {"$ref": "#/components/schemas/Hit"}},
                "facets": {"type": "object", "description": "year, author, category: counts over all hits",
                           "additionalProperties": {"type": "array",
                                                    "items": {"$ref": "#/components/schemas/FacetValue"}}},
                "page": {"type": "object", "properties": {
                    "number": {"type": "integer"}, "size": {"type": "integer"}, "pages": {"type": "integer"}}},
                "suggestion": {"type": ["string", "null"], "description": "A corrected query (did you mean)"},
                "relaxed": {"type": "boolean", "description": "No document had every term; hits match some"},
                "parsed": {"type": "string"},
                "took_ms": {"type": "number"},
            }},
        }},
    }
