"""The HTML pages: the search page with its facet sidebar and page links, the record page and its citations.

Routes (blueprint ``pages``)::

    GET /                               search page (HTML), parameters in searchengine.web.params;
                                        /?sort=newest lists the latest papers
    GET /records/<id>                   record page (HTML)
    GET /records/<id>/bibtex            the record as BibTeX (text/plain)
    GET /records/<id>/ris               the record as RIS (text/plain)
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from flask import Blueprint, Response, redirect, render_template, request, url_for

from searchengine.errors import QueryError
from searchengine.facets import FACETS
from searchengine.parameters import FACET_SIZE, MAX_VALUE_CHARS
from searchengine.records import arxiv_id
from searchengine.web.helpers import current_index, home, safe_link
from searchengine.web.params import SearchParams

if TYPE_CHECKING:
    from flask.typing import ResponseReturnValue

    from searchengine.results import SearchResults

blueprint = Blueprint("pages", __name__)

SIMILAR_ON_PAGE = 5
# A date histogram bin's start, cut to its unit: the value of its since/until link.
BIN_CHARS = {"year": 4, "month": 7, "day": 10}


@blueprint.get("/")
def search_page() -> ResponseReturnValue:
    search_index = current_index()
    params = SearchParams.from_args(request.args)
    if params.from_range:
        return redirect(params.url(home()), code=303)
    results = None if params.is_empty else search_index.run(params.request())
    facets = _facet_view(params, results) if results is not None else []
    pages = _pagination(params, results)
    dated = _date_bars(results.date_histogram, params) if results is not None else None
    # Without dated hits, whether the index has any dates at all (else its date choices would find nothing).
    index_dated = dated is not None or (results is not None and bool(results.total) and search_index.has_dates)
    return render_template(
        "search.html",
        params=params,
        results=results,
        facets=facets,
        pages=pages,
        dated=dated,
        index_dated=index_dated,
        documents=None if results is not None else search_index.doc_count,
        examples=examples(search_index) if results is None else None,
    )


@blueprint.get("/records/<record_id:record_id>")
def record_page(record_id: str) -> str:
    search_index = current_index()
    record = search_index.document(record_id)
    tex = search_index.record(record["id"]).tex  # the formulas of its title and abstract, drawn as MathML
    similar = search_index.similar(record["id"], limit=SIMILAR_ON_PAGE)
    # The search the record was opened from rides in the query string (no
    # server state): the search box holds it and "back to results" returns
    # to the same page; a state that does not read is dropped, not an error.
    try:
        params = SearchParams.from_args(request.args)
    except QueryError:
        params = SearchParams()
    return render_template(
        "record.html",
        record=record,
        tex=tex,
        similar=similar,
        params=params,
        back=None if params.is_empty else params.url(url_for("pages.search_page")),
        arxiv=arxiv_id(record["id"]),
        link=safe_link(record["url"]),
        pdf=safe_link(record["pdf_url"]),
        dois=record["doi"].split(),
        license_link=safe_link(record["license"]),
    )


@blueprint.get("/records/<record_id:record_id>/bibtex", defaults={"format_name": "bibtex"}, endpoint="record_bibtex")
@blueprint.get("/records/<record_id:record_id>/ris", defaults={"format_name": "ris"}, endpoint="record_ris")
def record_export(record_id: str, format_name: str) -> Response:
    from searchengine.export import FORMATS, citation_key, render

    record = current_index().document(record_id)
    # Shown in the browser (text/plain), with a file name for saving it.
    response = Response(render(format_name, [record]), mimetype="text/plain")
    name = f"{citation_key(record)}.{FORMATS[format_name].extension}"
    response.headers["Content-Disposition"] = f'inline; filename="{name}"'
    return response


# Words too common in titles to make a telling example search.
_PLAIN_WORDS = frozenset(
    "using based towards toward learning analysis study approach method methods model models paper "
    "through between their these those which where while under about after before across large".split()
)


def examples(search_index: Any) -> list[dict[str, str]]:
    """Example searches for the start page, drawn from the index, each
    ``{"q", "label"}``: a word and a phrase of the newest paper's title, the
    word within the most frequent category, the most frequent author, the
    word without another, the word misspelt and found anyway, and the word
    within the newest year (or month, when papers have dates); only those
    that find papers. Cached per index and document count; ``[]`` for an
    empty index."""
    count = search_index.doc_count
    key = (id(search_index), count)
    if key in _EXAMPLES:
        return _EXAMPLES[key]
    from collections import Counter

    from searchengine.realwords import zipf

    found: list[dict[str, str]] = []
    results = search_index.search("", sort="newest", limit=20, facets="year,author,category", facet_size=1)
    if results.hits:
        newest = results.hits[0]
        top = {
            n: next((v["value"] for v in values if v["value"] is not None), None)
            for n, values in results.facets.items()
        }
        titles = [hit.title for hit in results.hits]
        # Words of the newest titles that are English words but not everyday ones, most frequent first.
        counted = Counter(
            w.lower()
            for title in titles
            for w in re.findall(r"\b[A-Za-z]{6,}\b", title)
            if w.lower() not in _PLAIN_WORDS
        )
        words = [w for w, _ in counted.most_common() if 2.5 <= zipf(w) <= 5.0]
        if words:
            word = words[0]
            found.append({"q": word, "label": "a word, in titles, abstracts or authors"})
            pair = next(
                (m.group(0) for t in titles for m in re.finditer(r"\b([a-z]{4,}) ([a-z]{4,})\b", t)
                 if all(zipf(w) >= 2.5 for w in m.groups())),
                None,
            )  # fmt: skip
            if pair:
                found.append({"q": f'"{pair}"', "label": "a phrase, word for word"})
            if top.get("category"):
                found.append({"q": f"cat:{top['category']} {word}", "label": "within a category"})
            if len(words) > 1:
                found.append({"q": f"{word} -{words[1]}", "label": "without a word"})
            found.append({"q": f"{word[:2]}{word[3]}{word[2]}{word[4:]}~", "label": "a misspelt word, found anyway"})
            if newest.submitted is not None:
                found.append(
                    {"q": f"{word} date:{newest.submitted.isoformat()[:7]}..", "label": "submitted since a month"}
                )
            elif top.get("year"):
                found.append({"q": f"{word} year:{top['year']}", "label": "within a year"})
        if top.get("author"):
            found.append({"q": f"au:{str(top['author']).split()[-1]}", "label": "an author's papers"})
    # Only examples that find papers here (a word and a category may not meet).
    found = [example for example in found if search_index.search(example["q"], limit=1, mode="lexical").total]
    _EXAMPLES.clear()  # one index per app: the newest count only
    _EXAMPLES[key] = found
    return found


_EXAMPLES: dict[tuple[int, int], list[dict[str, str]]] = {}


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
        bars.append(
            {
                **v,
                "x": round(i * slot + slot * 0.1, 2),
                "w": round(slot * 0.8, 2),
                "y": round(height - h, 2),
                "h": round(h, 2),
            }
        )
    return bars


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
        bars.append(
            {
                "label": label,
                "count": count,
                "url": params.dated(since=label, until=label).url(home()),
                "x": round(i * slot + slot * 0.1, 2),
                "w": round(max(slot * 0.8, 0.5), 2),
                "y": round(height - h, 2),
                "h": round(h, 2),
            }
        )
    return {"unit": histogram["bin"], "undated": histogram.get("undated", 0), "bars": bars}


def _facet_view(params: SearchParams, results: SearchResults) -> list[dict[str, Any]]:
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
        values = [
            dict(
                v,
                url=params.toggled(name, v["value"], bool(v.get("selected"))).url(home())
                if _filterable(name, v["value"])
                else None,
            )
            for v in results.facets.get(name) or []
            if v.get("value") is not None
        ]
        remaining = results.facets_remaining.get(name, 0)
        if name != params.more and len(values) > FACET_SIZE:
            # Counted for the facet listed in full; the others are listed in short.
            remaining += len(values) - FACET_SIZE
            values = values[:FACET_SIZE]
        if facet.numeric:  # listed as the histogram above them runs: oldest first
            values.sort(key=lambda v: v["value"])
        view.append(
            {
                "name": name,
                "values": values,
                "unknown": sum(v["count"] for v in results.facets.get(name) or [] if v.get("value") is None),
                "remaining": remaining,
                "more_url": params.expanded(name).url(home()) if remaining and name != params.more else None,
                "fewer_url": params.expanded(None).url(home()) if name == params.more else None,
                "bars": _year_bars(values) if facet.numeric else [],
            }
        )
    return view


def _filterable(facet: str, value: object) -> bool:
    """Whether a facet value can be a filter of that facet (a link to it
    would otherwise lead to an error page): short enough, and understood by
    the filter's parser."""
    from searchengine import filters

    text = str(value)
    if len(text) > MAX_VALUE_CHARS:
        return False
    try:
        filters.parse_filter(facet, text)
    except QueryError:
        return False
    return True


def _pagination(params: SearchParams, results: SearchResults | None) -> dict[str, Any] | None:
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
        items.append({"number": number, "url": params.with_page(number).url(home()), "current": number == current})
        previous = number
    return {
        "prev": params.with_page(current - 1).url(home()) if 1 < current <= last + 1 else None,
        "next": params.with_page(current + 1).url(home()) if current < last else None,
        "items": items,
    }
