"""Reader for arXiv API responses (Atom 1.0 feeds from ``/api/query``).

Both layouts the API has used are read: the older one declares the
``arxiv:`` and ``opensearch:`` namespaces on each element, the newer one on
``<feed>``; element names and namespaces are the same. Per ``<entry>``:

* ``id``: ``http://arxiv.org/abs/1111.2011v2`` → id ``1111.2011``, version 2;
* ``title``, ``summary`` (the abstract), ``author/name`` (in order);
* ``arxiv:primary_category/@term`` first, then each ``category/@term``;
* ``published`` (the first version's timestamp) as the submitted day and
  year, ``updated`` (the latest version's) as the updated day, both in UTC;
  the versions list holds v1 and, when the id names a later one, that
  version with the updated day;
* the ``alternate`` link as URL.
* the year of ``published`` (first version); the ``alternate`` link as URL;
* the link titled ``pdf``, ``arxiv:doi``, ``arxiv:journal_ref`` and
  ``arxiv:comment`` as the record's links and identifiers (the API gives no license).

An error response (an entry whose id is an ``/api/errors`` URL) is reported as a
problem. Any other element of an entry that holds something (an author's
``arxiv:affiliation``, an element of another namespace) is named in the
record's notes as not read. The file is parsed incrementally, so long feeds stream.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import cast
from xml.etree import ElementTree

from searchengine.readers import arxivmeta
from searchengine.readers.jsonlines import day_field
from searchengine.records import Problem, Record, clean_text, source_doi

NAME = "arxiv-atom"

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"


def sniff(head: str) -> bool:
    """True when the text is an Atom feed (a ``<feed`` element in the Atom namespace)."""
    return "<feed" in head and "http://www.w3.org/2005/Atom" in head


#: The elements of an ``<entry>`` (and of its ``<author>``) that are read.
_READ = frozenset(
    f"{space}{name}"
    for space, names in (
        (ATOM, ("id", "title", "summary", "author", "category", "published", "updated", "link", "name")),
        (ARXIV, ("primary_category", "doi", "journal_ref", "comment")),
    )
    for name in names
)
_PREFIXES = {ATOM: "", ARXIV: "arxiv:"}


def _unread_elements(entry: ElementTree.Element, notes: list[str]) -> None:
    """Note the entry's elements (and its authors') outside :data:`_READ`
    that hold text or attributes: what the record leaves out is named."""
    children = list(entry) + [part for author in entry.findall(f"{ATOM}author") for part in author]
    unread: dict[str, None] = {}
    for child in children:
        if child.tag in _READ or not ((child.text or "").strip() or child.attrib or len(child)):
            continue
        space, _, local = child.tag[1:].rpartition("}") if child.tag.startswith("{") else ("", "", child.tag)
        unread[_PREFIXES.get("{" + space + "}", f"{{{space}}}" if space else "") + local] = None
    if unread:
        names = ", ".join(f"'{name}'" for name in unread)
        notes.append(f"element{'s' if len(unread) > 1 else ''} {names} not read (not a field of this format)")


def _entry_record(entry: ElementTree.Element) -> Record:
    raw_id = clean_text(entry.findtext(f"{ATOM}id") or "")
    if "/api/errors" in raw_id:
        raise ValueError("arXiv API error: " + clean_text(entry.findtext(f"{ATOM}summary") or "no details"))
    arxiv_id, version = arxivmeta.split_version(arxivmeta.id_from_url(raw_id))
    if not arxiv_id:
        raise ValueError("entry has no id")
    title = clean_text(entry.findtext(f"{ATOM}title") or "")
    if not title:
        raise ValueError("entry has no title")
    primary = entry.find(f"{ARXIV}primary_category")
    terms = [primary.get("term", "")] if primary is not None else []
    terms += [c.get("term", "") for c in entry.findall(f"{ATOM}category")]
    notes: list[str] = []
    _unread_elements(entry, notes)
    stamps = {key: entry.findtext(f"{ATOM}{key}") for key in ("published", "updated")}
    published = day_field(stamps, "published", notes)
    updated = day_field(stamps, "updated", notes)
    # The API gives the first version's date and the latest's.
    versions = [(1, published)] if published else []
    if updated and version and version > 1:
        versions.append((version, updated))
    url = pdf = ""
    for link in entry.findall(f"{ATOM}link"):
        if link.get("rel") == "alternate" and not url:
            url = link.get("href", "")
        elif link.get("title") == "pdf" and not pdf:
            pdf = link.get("href", "")
    return Record(
        id=arxiv_id,
        title=title,
        abstract=clean_text(entry.findtext(f"{ATOM}summary") or ""),
        authors=[
            clean_text(a.findtext(f"{ATOM}name") or "")
            for a in entry.findall(f"{ATOM}author")
            if (a.findtext(f"{ATOM}name") or "").strip()
        ],
        year=published.year if published else arxivmeta.year_from_id(arxiv_id),
        categories=list(dict.fromkeys(t for t in terms if t)),
        url=url,
        version=version,
        submitted=published,
        updated=updated,
        versions=versions,
        notes=notes,
        # --- links and identifiers ---
        pdf_url=clean_text(pdf),
        doi=source_doi(entry.findtext(f"{ARXIV}doi") or ""),
        journal_ref=clean_text(entry.findtext(f"{ARXIV}journal_ref") or ""),
        comments=clean_text(entry.findtext(f"{ARXIV}comment") or ""),
    )


def read(path: Path, lines: Iterable[tuple[int, str]], problems: list[Problem]) -> Iterator[Record]:
    """Yield one Record per ``<entry>``; report bad entries, and XML errors, in ``problems``.

    A record's line is the line of its ``<entry>`` tag. XML that is not well
    formed ends the file at that point (records before it are kept); a file
    that ends inside an entry reports that entry.
    """
    parser: ElementTree.XMLPullParser[ElementTree.Element] = ElementTree.XMLPullParser(events=("start", "end"))
    start = 0
    inside = False  # an <entry> is open
    number = 0
    feed: ElementTree.Element | None = None
    for number, line in lines:
        try:
            parser.feed(line + "\n")
            # Start and end events only: (event, element) pairs, which typeshed cannot tell.
            events = cast("list[tuple[str, ElementTree.Element]]", list(parser.read_events()))
        except ElementTree.ParseError as exc:
            problems.append(
                Problem(str(path), number, f"XML is not well formed ({exc}); rest of file skipped", cut_off=True)
            )
            return
        for event, element in events:
            if event == "start":
                if feed is None:
                    feed = element
                if element.tag == f"{ATOM}entry":
                    start, inside = number, True
                continue
            if element.tag != f"{ATOM}entry":
                continue
            inside = False
            try:
                record = _entry_record(element)
            except ValueError as exc:
                problems.append(Problem(str(path), start, f"{exc} (skipped)"))
            else:
                record.source = f"{path}:{start}"
                yield record
            # Drop finished entries so a long feed is not kept in memory.
            try:
                if feed is None:  # never: the root's start event comes before any end event
                    raise ValueError("no root element")
                feed.remove(element)
            except ValueError:  # an entry not directly under <feed>
                element.clear()
    try:
        parser.close()
    except ElementTree.ParseError as exc:
        # Name the entry that was cut off, else the last line.
        where, what = (start, "entry cut off: XML ends early") if inside else (number, "XML ends early")
        problems.append(Problem(str(path), where, f"{what} ({exc}) (skipped)", cut_off=True))
