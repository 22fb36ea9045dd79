"""The OpenAPI 3.1 document served at ``/api/openapi.json``.

Written by hand from the routes in :mod:`searchengine.web.api` and the shapes of
``SearchResults.to_dict()`` and ``SearchIndex.document()``; ``tests/test_web.py``
checks that every API route is described.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from searchengine import __version__
from searchengine.export import FORMATS
from searchengine.facets import FACET_NAMES
from searchengine.limits import EXPORT_LIMIT, MAX_API_LOOKUP, MAX_DEPTH, MAX_SIMILAR_IDS
from searchengine.parameters import MAX_VALUES, REPEATABLE, Parameter, web_parameters
from searchengine.semantic import MODES
from searchengine.web.params import EXPORT_FORMATS

# The media type of each export format, without its charset.
EXPORT_MEDIA_TYPES = {name: form.media_type.split(";")[0] for name, form in FORMATS.items()}


def _param(name: str, description: str, schema: dict, *, repeat: bool = False) -> dict[str, Any]:
    """A query parameter; an empty value (``name=``) counts as not given."""
    if repeat:
        schema = {"type": "array", "items": schema, "maxItems": MAX_VALUES}
    return {
        "name": name,
        "in": "query",
        "required": False,
        "description": description,
        "schema": schema,
        "allowEmptyValue": True,
        **({"style": "form", "explode": True} if repeat else {}),
    }


def _query_parameter(declared: Parameter) -> dict[str, Any]:
    """A search parameter as its :class:`~searchengine.parameters.WebForm` declares it.

    Raises:
        ValueError: the parameter has no query-string form.
    """
    web = declared.web
    if web is None:
        raise ValueError(f"parameter {declared.name!r} is not in the query string")
    return _param(web.name, web.description, web.openapi_schema(), repeat=declared.multiple)


def _error(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def _object(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """An object schema with exactly these properties, each always present."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
        **extra,
    }


BAD_REQUEST = (
    "A parameter or the query cannot be understood, or a parameter that takes one value is "
    "given twice; the message names it"
)


# Taken and ignored by an export: a search page's query string with a format
# added is an export of its whole result set.
_IGNORED = {"/api/export": ("page", "limit")}


@cache
def query_parameters(path: str) -> frozenset[str]:
    """The query parameters ``path`` (an OpenAPI path such as
    ``/api/records/{id}/similar``) takes: those its operation lists, so
    that what the server accepts and what this document says are one list."""
    operation = openapi_document()["paths"][path]["get"]
    named = {p["name"] for p in operation.get("parameters", ()) if p["in"] == "query"}
    return frozenset(named.union(_IGNORED.get(path, ())))


def openapi_document() -> dict[str, Any]:
    """The API description as a JSON-ready dict (OpenAPI 3.1.0).

    Response schemas list every property and allow no others, so a field
    added to (or leaking into) an answer without being described here fails
    the drills' schema checks.
    """
    record_id = {
        "name": "id",
        "in": "path",
        "required": True,
        "description": "Record id (an arXiv id such as 2101.00001, or t- and 12 hex digits), or "
        "a DOI of the paper (10.1103/PhysRevB.76.125117, also arXiv's "
        "10.48550/arXiv.ID); percent-encode it, '/' as %2F or as is",
        "schema": {"type": "string", "minLength": 1},
    }
    # Links and identifiers, in records and hits alike; "" when unknown.
    text = {"type": "string"}
    links = {
        "url": {
            **text,
            "description": "Abstract page: the source's link, else https://arxiv.org/abs/ID "
            "for an arXiv id, else empty",
        },
        "pdf_url": {
            **text,
            "description": "Full text (PDF): the source's link, else https://arxiv.org/pdf/ID "
            "for an arXiv id, else empty",
        },
        "doi": {
            **text,
            "description": "DOI of the published version as the source gives it, bare "
            "(several separated by a space), or empty",
        },
        "arxiv_doi": {**text, "description": "arXiv's DataCite DOI (10.48550/arXiv.ID) for an arXiv id, else empty"},
        "journal_ref": {**text, "description": "Journal reference, e.g. 'Phys. Rev. B 76, 125117 (2007)', or empty"},
        "comments": {**text, "description": "The authors' comments, e.g. '12 pages, 4 figures', or empty"},
        "license": {**text, "description": "License (usually its URL) as the source gives it, or empty"},
    }
    similar = [_query_parameter(declared) for declared in web_parameters("similar")]  # limit
    results = {
        "description": "Ranked hits",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SearchResults"}}},
    }
    retry_after = {"Retry-After": {"description": "Seconds to wait", "schema": {"type": "integer", "minimum": 1}}}
    unavailable = {
        **_error("The index is not available, or the server is busy with other long requests"),
        "headers": retry_after,
    }
    too_many = {
        **_error(
            "Too many requests from this client (searchengine serve limits each client: "
            "cost units per minute, an export or similar search costing more)"
        ),
        "headers": retry_after,
    }
    string_list = {"type": "array", "items": {"type": "string"}}
    day = {"type": ["string", "null"], "format": "date"}
    dates = {
        "submitted": {**day, "description": "First version's UTC day (YYYY-MM-DD), or null"},
        "updated": {**day, "description": "Last update's UTC day, or null"},
        "versions": {
            "type": "array",
            "description": "Versions with their days, where the source gives them",
            "items": _object({"version": {"type": "integer"}, "date": {"type": "string", "format": "date"}}),
        },
    }
    spans = {"type": "array", "items": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2}}
    count_header = {"schema": {"type": "integer", "minimum": 0}}
    export_format = {
        "name": "format",
        "in": "query",
        "required": True,
        "description": "bibtex, csv, jsonl (JSON lines) or ris",
        "schema": {"type": "string", "enum": list(EXPORT_FORMATS)},
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "searchengine",
            "version": __version__,
            "description": "Ranked, faceted full-text search over titles and abstracts of scientific papers. "
            'Errors are JSON objects {"error": message}. Only id, '
            f"{', '.join(REPEATABLE[:-1])} and {REPEATABLE[-1]} may be repeated; any other "
            "parameter given twice is a 400, and so is a parameter an "
            "operation does not list (hits are paged with page and limit).",
        },
        "paths": {
            "/api/search": {
                "get": {
                    "summary": "Search, filter, sort and page; facet counts over all hits",
                    "description": "Needs query text, at least one filter, or sort newest, oldest or title: "
                    "without query text or a filter those list every paper in their order "
                    "(sort=newest: the latest papers); with none of them it is a 400 (the query "
                    f"is empty). page x limit may not exceed {MAX_DEPTH} (else 400).",
                    "operationId": "search",
                    "parameters": [_query_parameter(declared) for declared in web_parameters("search")],
                    "responses": {"200": results, "400": _error(BAD_REQUEST), "503": unavailable},
                }
            },
            "/api/export": {
                "get": {
                    "summary": "Every hit of a search as a file: BibTeX, CSV, JSON lines or RIS",
                    "description": "The hits of the query and filters in the sort's order, as /api/search "
                    f"pages them, up to the first {EXPORT_LIMIT}; X-Total-Hits and "
                    "X-Exported-Hits say whether that cap cut the file. page and limit, "
                    "if given, are ignored. Needs query text, a filter, or sort newest, oldest or "
                    "title (every paper in that order; else 400).",
                    "operationId": "export",
                    "parameters": [
                        *(_query_parameter(declared) for declared in web_parameters("export")),
                        export_format,
                    ],
                    "responses": {
                        "200": {
                            "description": "An attachment (Content-Disposition) in the chosen format, UTF-8",
                            "headers": {
                                "Content-Disposition": {
                                    "required": True,
                                    "schema": {"type": "string", "pattern": r'^attachment; filename="search-results\.'},
                                },
                                "X-Total-Hits": {**count_header, "required": True, "description": "Hits of the search"},
                                "X-Exported-Hits": {
                                    **count_header,
                                    "required": True,
                                    "description": f"Hits in the file: at most {EXPORT_LIMIT}",
                                },
                            },
                            "content": {
                                media_type: {"schema": {"type": "string"}} for media_type in EXPORT_MEDIA_TYPES.values()
                            },
                        },
                        "400": _error(BAD_REQUEST + ", or format is missing or unknown"),
                        "429": too_many,
                        "503": unavailable,
                    },
                }
            },
            "/api/records": {
                "get": {
                    "summary": "Several stored records at once, by id or DOI",
                    "description": f"At most {MAX_API_LOOKUP} ids in one request (else 400). Records come in the "
                    "order asked, each once; ids and DOIs no record has are listed in missing.",
                    "operationId": "records",
                    "parameters": [
                        {
                            "name": "id",
                            "in": "query",
                            "required": True,
                            "style": "form",
                            "explode": True,
                            "description": "A record id, arXiv id or DOI, as /api/records/{id} takes it (repeat for "
                            "several); an empty one is a 400",
                            "schema": {
                                "type": "array",
                                "items": {"type": "string", "minLength": 1},
                                "minItems": 1,
                                "maxItems": MAX_API_LOOKUP,
                            },
                        }
                    ],
                    "responses": {
                        "200": {
                            "description": "The records found, and the ids not found",
                            "content": {
                                "application/json": {
                                    "schema": _object(
                                        {
                                            "records": {
                                                "type": "array",
                                                "items": {"$ref": "#/components/schemas/Record"},
                                            },
                                            "missing": {"type": "array", "items": {"type": "string"}},
                                        }
                                    )
                                }
                            },
                        },
                        "400": _error("No id, more than the limit, or the query string is not valid UTF-8"),
                        "429": too_many,
                        "503": unavailable,
                    },
                }
            },
            "/api/records/{id}": {
                "get": {
                    "summary": "One stored record",
                    "operationId": "record",
                    "parameters": [record_id],
                    "responses": {
                        "200": {
                            "description": "The record",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Record"}}},
                        },
                        "400": _error("The query string is not valid UTF-8"),
                        "404": _error("No record has this id"),
                        "429": too_many,
                        "503": unavailable,
                    },
                }
            },
            "/api/records/{id}/similar": {
                "get": {
                    "summary": "Papers on the same topic as a record (the record itself excluded)",
                    "operationId": "similar",
                    "parameters": [record_id, *similar],
                    "responses": {
                        "200": results,
                        "400": _error(BAD_REQUEST),
                        "404": _error("No record has this id"),
                        "429": too_many,
                        "503": unavailable,
                    },
                }
            },
            "/api/similar": {
                "get": {
                    "summary": "Papers like these: papers on the topic of one or several records (those excluded)",
                    "description": "With record vectors in the index, the papers nearest in meaning to the records' "
                    "mean vector (mode semantic); else the records' most informative words, ranked "
                    f"by BM25F (mode lexical). At most {MAX_SIMILAR_IDS} ids (else 400).",
                    "operationId": "similarToSeveral",
                    "parameters": [
                        {
                            "name": "id",
                            "in": "query",
                            "required": True,
                            "style": "form",
                            "explode": True,
                            "description": "A record id (repeat for several); an empty one is a 400",
                            "schema": {
                                "type": "array",
                                "items": {"type": "string", "minLength": 1},
                                "minItems": 1,
                                "maxItems": MAX_SIMILAR_IDS,
                            },
                        },
                        *similar,
                    ],
                    "responses": {
                        "200": results,
                        "400": _error(BAD_REQUEST),
                        "404": _error("No record has one of the ids"),
                        "429": too_many,
                        "503": unavailable,
                    },
                }
            },
            "/api/openapi.json": {
                "get": {
                    "summary": "This document",
                    "operationId": "openapi",
                    "responses": {
                        "200": {
                            "description": "OpenAPI 3.1 document",
                            "content": {
                                "application/json": {"schema": {"type": "object", "required": ["openapi", "paths"]}}
                            },
                        }
                    },
                }
            },
        },
        "components": {
            "schemas": {
                "Error": _object({"error": {"type": "string", "description": "One line; names the offending part"}}),
                "Record": _object(
                    {
                        "id": {"type": "string"},
                        "title": {"type": "string"},
                        "abstract": {"type": "string"},
                        "authors": string_list,
                        "year": {"type": ["integer", "null"]},
                        "categories": string_list,
                        "url": {"type": "string", "description": "Link given by the source, or empty"},
                        **dates,
                        **links,
                    }
                ),
                "Hit": _object(
                    {
                        "id": {"type": "string"},
                        "title": {"type": "string"},
                        "authors": string_list,
                        "year": {"type": ["integer", "null"]},
                        "categories": string_list,
                        "score": {
                            "type": "number",
                            "description": "BM25F score (lexical), cosine similarity (semantic) "
                            "or the fused score (hybrid)",
                        },
                        "snippet": {"type": "string", "description": "Plain text from the abstract"},
                        "snippet_matches": {**spans, "description": "[start, end) offsets of matched words in snippet"},
                        "title_matches": {**spans, "description": "[start, end) offsets of matched words in title"},
                        "url": {"type": "string"},
                        **dates,
                        **links,
                        "explain": {
                            "type": ["object", "null"],
                            "description": "Why the hit ranks where it does: keyword, the part of the score "
                            "from the words (null in semantic mode); meaning, the part from meaning (null in "
                            "lexical mode); in hybrid mode they add up to the score (semantic_weight sets "
                            "meaning's share); fields, those its query words matched",
                            "properties": {
                                "keyword": {"type": ["number", "null"]},
                                "meaning": {"type": ["number", "null"]},
                                "fields": {
                                    "type": "array",
                                    "items": {"type": "string", "enum": ["title", "abstract", "authors"]},
                                },
                            },
                            "required": ["keyword", "meaning", "fields"],
                            "additionalProperties": False,
                        },
                    }
                ),
                "FacetValue": _object(
                    {
                        "value": {
                            "type": ["string", "integer", "null"],
                            "description": "null counts records without a value",
                        },
                        "count": {"type": "integer", "minimum": 0},
                        "selected": {"type": "boolean"},
                    }
                ),
                "SearchResults": _object(
                    {
                        "query": {
                            "type": "string",
                            "description": "The query text as searched (control characters "
                            "dropped, spaces collapsed, cut when too long)",
                        },
                        "total": {"type": "integer", "minimum": 0, "description": "Hits over all pages"},
                        "hits": {"type": "array", "items": {"$ref": "#/components/schemas/Hit"}},
                        "facets": {
                            "type": "object",
                            "description": f"{', '.join(FACET_NAMES)}: counts over all hits, each facet "
                            "without its own filter; under an author filter the "
                            "author facet counts co-authors, chosen names first",
                            "additionalProperties": {
                                "type": "array",
                                "items": {"$ref": "#/components/schemas/FacetValue"},
                            },
                        },
                        "facets_remaining": {
                            "type": "object",
                            "description": "Per facet: values with hits not listed",
                            "additionalProperties": {"type": "integer", "minimum": 0},
                        },
                        "page": _object(
                            {"number": {"type": "integer"}, "size": {"type": "integer"}, "pages": {"type": "integer"}}
                        ),
                        "suggestion": {"type": ["string", "null"], "description": "A corrected query (did you mean)"},
                        "corrected": {
                            "type": ["string", "null"],
                            "description": "The corrected query searched instead of the one typed "
                            "(null: searched as typed; exact=true asks for that)",
                        },
                        "relaxed": {"type": "boolean", "description": "No document had every term; hits match some"},
                        "unmatched": {**string_list, "description": "Words of a relaxed query no paper holds"},
                        "parsed": {"type": "string", "description": "The query as understood (for debugging)"},
                        "notes": {
                            **string_list,
                            "description": "Repairs made to the query (cut, capped, a long "
                            "question searched by its rarest words, ...) and "
                            "what the time budget cut",
                        },
                        "timed_out": {
                            "type": "boolean",
                            "description": "The time budget cut matching or ranking short: "
                            "papers may be missing, or their order approximate "
                            "(a note says which)",
                        },
                        "took_ms": {"type": "number"},
                        "date_histogram": {
                            "type": ["object", "null"],
                            "description": "Hits per year, month or day of their submitted day (years when they "
                            "span more than 3 years, months when more than 62 days, else days): rows of [first day "
                            "of the bin, hits], empty bins included; undated: hits without a day",
                            "properties": {
                                "bin": {"type": ["string", "null"], "enum": ["year", "month", "day", None]},
                                "rows": {
                                    "type": "array",
                                    "items": {
                                        "type": "array",
                                        "prefixItems": [
                                            {"type": "string", "format": "date"},
                                            {"type": "integer", "minimum": 0},
                                        ],
                                    },
                                },
                                "undated": {"type": "integer", "minimum": 0},
                            },
                        },
                        "mode": {
                            "type": "string",
                            "enum": list(MODES),
                            "description": "How the hits were ranked: by words, by meaning or both",
                        },
                        "author": {
                            "type": ["object", "null"],
                            "description": "The query read as an author's name, whose papers are listed first "
                            "(null: not read as a name); filter is the author filter for theirs only",
                            "properties": {
                                "query": {"type": "string"},
                                "filter": {"type": "string"},
                                "papers": {"type": "integer", "minimum": 1},
                                "names": {
                                    "type": "array",
                                    "items": _object(
                                        {"name": {"type": "string"}, "papers": {"type": "integer", "minimum": 1}}
                                    ),
                                },
                            },
                            "required": ["query", "filter", "papers", "names"],
                            "additionalProperties": False,
                        },
                    }
                ),
            }
        },
    }
