"""What the pages, the feed and the API share: the index served, record URLs, template helpers."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date
from typing import Any
from urllib.parse import quote

from flask import current_app, request
from markupsafe import Markup, escape
from werkzeug.routing import PathConverter

from searchengine.feeds import id_path
from searchengine.records import doi
from searchengine.search import SearchIndex
from searchengine.web.params import SearchParams

#: Where :func:`~searchengine.web.app.create_app` keeps the index it serves.
INDEX_KEY = "searchengine.index"


def current_index() -> SearchIndex:
    """The :class:`SearchIndex` the current app serves (inside a request)."""
    return current_app.extensions[INDEX_KEY]


def home(path: str = "/") -> str:
    """``path`` of this app as the client addresses it: under the prefix a
    trusted proxy serves the app at (``/search/``), else as it is."""
    return request.script_root + path


def is_api() -> bool:
    """Whether the current request is one of the JSON API's (its errors are JSON)."""
    return request.path == "/api" or request.path.startswith("/api/")


def marked(text: str, matches: Iterable[Sequence[Any]] | None) -> Markup:
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
RECORD_ROUTES = {
    "record_page": "/records/{}",
    "record_bibtex": "/records/{}/bibtex",
    "record_ris": "/records/{}/ris",
    "api_record": "/api/records/{}",
    "api_similar": "/api/records/{}/similar",
}


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


def shown_day(value: date | str | None) -> str:
    """A day (:class:`datetime.date` or ISO text) as arXiv writes it, ``14 Mar 2025``; ``""`` for none."""
    from searchengine import dates

    day = dates.from_iso(value) if isinstance(value, str) else value
    return dates.shown(day) if day else ""
