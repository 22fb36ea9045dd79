"""A search as an Atom feed: a saved search that a feed reader follows.

The feed is an Atom 1.0 document (RFC 4287, https://www.rfc-editor.org/rfc/rfc4287):
one ``entry`` per hit, newest first as the caller sorted them, each with
its record page as ``id`` and ``alternate`` link, the paper's own page as a
``related`` link, its authors, categories, abstract (``summary``) and days
(``published``: first version; ``updated``: last update). The web page
serves it at ``/feed.atom``; ``searchengine search --format atom`` prints
the same document, made by :func:`search_feed`.

XML 1.0 cannot hold most control characters, which a record's text may
carry: they are dropped from the feed's text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote, urlencode

ATOM_NS = "http://www.w3.org/2005/Atom"
#: The feed's media type, as RFC 4287 registers it.
MEDIA_TYPE = "application/atom+xml; charset=utf-8"
#: Entries a feed holds unless asked otherwise (at most :data:`~searchengine.limits.MAX_LIMIT`).
FEED_SIZE = 50

# Left unencoded in record ids, as Werkzeug's path converter does.
_PATH_SAFE = "!$&'()*+,;=:@"


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


# Characters XML 1.0 does not allow (its "Char" production).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _text(value: Any) -> str:
    return _NOT_XML.sub("", str(value))


def _moment(day: str | None) -> str | None:
    """An ISO day as an RFC 3339 date-time at midnight UTC (Atom's date form)."""
    return f"{day}T00:00:00Z" if day else None


def feed_title(pairs: list[tuple[str, str]]) -> str:
    """The title of a search's feed from its query-string ``pairs``
    (``[("q", "gpu"), ("year", "2024-")]`` → ``searchengine: gpu (year 2024-)``;
    no query and no filter → ``searchengine: latest papers``, every paper newest first)."""
    words = " ".join(value for name, value in pairs if name == "q")
    narrowed = ", ".join(f"{name.replace('_', ' ')} {value}" for name, value in pairs if name not in ("q", "exact"))
    if words and narrowed:
        return f"searchengine: {words} ({narrowed})"
    return f"searchengine: {words or narrowed or 'latest papers'}"


def entry_updated(row: dict[str, Any]) -> str:
    """The ``updated`` of a row's entry: its last update, else its first
    version's day, else 1 January of its year, else the Unix epoch (Atom
    requires one)."""
    moment = _moment(row.get("updated") or row.get("submitted"))
    if moment:
        return moment
    if row.get("year"):
        return f"{int(row['year']):04d}-01-01T00:00:00Z"
    return "1970-01-01T00:00:00Z"


def atom_feed(
    rows: Iterable[dict[str, Any]],
    *,
    title: str,
    self_url: str,
    page_url: str,
    record_url: Callable[[str], str],
    now: datetime | None = None,
    feed_id: str | None = None,
    stylesheet: str | None = None,
) -> str:
    """The Atom document of ``rows`` (dicts with a record's field names, as
    :func:`searchengine.export.rows` makes them from hits), in their order.

    Args:
        title: the feed's title (say what was searched).
        self_url: the feed's own absolute URL; also its ``id`` unless
            ``feed_id`` is given.
        page_url: the absolute URL of the same search on the web page.
        record_url: a record id → the absolute URL of its record page (each
            entry's ``id`` and link).
        now: the feed's ``updated`` when it has no entry (default: the
            current time, UTC).
        feed_id: the feed's ``id`` (default: ``self_url``).
        stylesheet: the URL of a CSS sheet a browser shows the feed with
            (an ``xml-stylesheet`` instruction; feed readers ignore it).

    Returns:
        The document as text, with an XML declaration.
    """
    from xml.etree import ElementTree as ET
    from xml.sax.saxutils import escape

    from searchengine import __version__
    from searchengine.export import links

    ET.register_namespace("", ATOM_NS)

    def element(parent: ET.Element, tag: str, text: str | None = None, **attributes: str) -> ET.Element:
        node = ET.SubElement(parent, f"{{{ATOM_NS}}}{tag}", {k: _text(v) for k, v in attributes.items()})
        if text is not None:
            node.text = _text(text)
        return node

    feed = ET.Element(f"{{{ATOM_NS}}}feed")
    element(feed, "id", feed_id or self_url)
    element(feed, "title", title)
    updated = element(feed, "updated")
    element(feed, "link", rel="self", type="application/atom+xml", href=self_url)
    element(feed, "link", rel="alternate", type="text/html", href=page_url)
    # Atom asks for an author on every entry or on the feed; some papers have none.
    element(element(feed, "author"), "name", "searchengine")
    element(feed, "generator", "searchengine", version=__version__)
    days = []
    for row in rows:
        entry = element(feed, "entry")
        page = record_url(row["id"])
        element(entry, "id", page)
        element(entry, "title", row.get("title") or row["id"])
        days.append(entry_updated(row))
        element(entry, "updated", days[-1])
        if row.get("submitted"):
            element(entry, "published", _moment(row["submitted"]))
        for name in row.get("authors") or []:
            element(element(entry, "author"), "name", name)
        element(entry, "link", rel="alternate", type="text/html", href=page)
        source = links(row)
        if source["url"].startswith(("http://", "https://")):
            element(entry, "link", rel="related", type="text/html", href=source["url"])
        if source["pdf_url"].startswith(("http://", "https://")):
            element(entry, "link", rel="related", type="application/pdf", href=source["pdf_url"])
        for code in row.get("categories") or []:
            element(entry, "category", term=code)
        if row.get("abstract"):
            element(entry, "summary", row["abstract"], type="text")
    when = max(days) if days else (now or datetime.now(timezone.utc)).strftime("%Y-%m-%dT%H:%M:%SZ")
    updated.text = when
    ET.indent(feed)
    href = escape(stylesheet or "", {'"': "&quot;"})
    styled = f'<?xml-stylesheet type="text/css" href="{href}"?>\n' if stylesheet else ""
    return '<?xml version="1.0" encoding="utf-8"?>\n' + styled + ET.tostring(feed, encoding="unicode") + "\n"


def search_feed(
    hits: Iterable[Any],
    pairs: Sequence[tuple[str, str]],
    *,
    base_url: str,
    sort: str = "newest",
    self_url: str | None = None,
) -> str:
    """The Atom document of a search's ``hits`` (:class:`~searchengine.results.Hit` s,
    newest first as searched), linking to the web page served at ``base_url``.

    The web page's ``/feed.atom`` and ``search --format atom`` both make
    their feed here, so the two are the same document for the same search.

    Args:
        hits: the hits, in feed order.
        pairs: the search's canonical query-string pairs (query text, filters,
            ``exact``, ...; no page, sort or limit): the feed's title and the
            query of its own URL and of the search page it links to.
        base_url: the web page's address, scheme, host, port and path
            (``http://127.0.0.1:8000``, ``https://host/search``); a trailing
            ``/`` is ignored.
        sort: the sort of the search page the feed's ``alternate`` link opens.
        self_url: the feed's ``self`` link (default: its ``id``, ``base_url``'s
            ``/feed.atom`` with ``pairs``, the same for the same search); the
            web page gives the address the feed was asked at, every parameter kept.

    The feed names the web page's ``/static/feed.css``, which a browser shows
    it with (a list of titles, authors and abstracts); readers ignore it.
    """
    from searchengine.export import rows

    root = base_url.rstrip("/")
    query = f"?{urlencode(pairs)}" if pairs else ""
    return atom_feed(
        rows(hits),
        title=feed_title(list(pairs)),
        self_url=self_url or f"{root}/feed.atom{query}",
        feed_id=f"{root}/feed.atom{query}",
        page_url=f"{root}/?{urlencode([*pairs, ('sort', sort)])}",
        record_url=lambda record_id: f"{root}/records/{id_path(record_id)}",
        stylesheet=f"{root}/static/feed.css",
    )
