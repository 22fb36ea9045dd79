"""Reader for arXiv OAI metadata as JSON lines (the widely shared "arxiv-metadata-oai-snapshot").

One JSON object per line, with (among others)::

    {"id": "0704.0001", "title": "...", "abstract": "  ...",
     "authors": "C. Bal\\'azs, E. L. Berger",
     "authors_parsed": [["Balázs", "C.", ""], ["Berger", "E. L.", ""]],
     "categories": "hep-ph math.CO",
     "versions": [{"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"}, ...],
     "update_date": "2008-11-26"}

* Authors come from ``authors_parsed`` (``[last, first, suffix]``, already
  Unicode) written as "first last suffix"; when it is missing, the ``authors``
  string is split into people (:func:`searchengine.records.split_authors`), with TeX accents decoded.
* ``categories`` is space separated, primary first.
* Dates: each version's ``created`` (RFC 2822, ``Mon, 2 Apr 2007 19:18:42
  GMT``) gives its UTC day (``versions``); the first version's is the
  submitted day, ``update_date`` (ISO) the updated day. A date that is not
  one is a note; the record is kept without it.
* The year is the submitted day's, else the one in a new-style id, else
  ``update_date``'s.
* The version is the highest ``vN`` in ``versions``.
* Titles and abstracts keep arXiv's hard line wraps; they are collapsed.
* ``doi`` (the published version's; several are separated by spaces),
  ``journal-ref``, ``comments`` and ``license`` (a URL, or ``null``) are kept
  as the record's links and identifiers; the abstract page is the id's.
* ``submitter`` and ``report-no`` are not kept; any other key is named in
  a note (:func:`searchengine.readers.jsonlines.unread_keys`). A line in
  another JSON-lines layout is read by its own reader.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from datetime import date
from pathlib import Path
from typing import Any

from searchengine.readers import arxivmeta, jsonlines
from searchengine.records import Problem, Record, clean_text, source_doi, split_authors

NAME = "arxiv-oai"

_KEY = re.compile(r'"([A-Za-z_-]+)"\s*:')


def first_line_keys(head: str) -> set[str]:
    """The object keys written on the first non-blank line of ``head`` (which may be cut short)."""
    for line in head.splitlines():
        if line.strip():
            return set(_KEY.findall(line)) if line.lstrip().startswith("{") else set()
    return set()


def sniff(head: str) -> bool:
    """True when the first line is a JSON object with OAI snapshot keys."""
    keys = first_line_keys(head)
    return "authors_parsed" in keys or {"versions", "update_date"} <= keys


_Invalid = jsonlines.InvalidRecord
_text = jsonlines.string_field


def id_and_title(obj: dict[str, Any]) -> tuple[str, int | None, str]:
    """``(arxiv id without version, version or None, title)`` of a decoded arXiv object.

    Raises:
        InvalidRecord: no id or title.
    """
    raw_id = obj.get("id")
    if not isinstance(raw_id, str) or not raw_id.strip():
        raise _Invalid("record has no id")
    arxiv_id, version = arxivmeta.split_version(raw_id)
    title = _text(obj, "title")
    if not title:
        raise _Invalid("record has no title")
    return arxiv_id, version, title


def _authors(obj: dict) -> list[str]:
    parsed = obj.get("authors_parsed")
    if isinstance(parsed, list) and parsed:
        names = []
        for parts in parsed:
            if not isinstance(parts, list) or not all(isinstance(p, str) for p in parts):
                raise _Invalid("field 'authors_parsed' must be a list of [last, first, suffix] lists")
            last, first, suffix = (list(parts) + ["", "", ""])[:3]
            name = clean_text(" ".join(p for p in (first, last, suffix) if p.strip()))
            if name:
                names.append(name)
        return names
    raw = _text(obj, "authors")
    return split_authors(raw)


def _versions(obj: dict, notes: list[str]) -> tuple[int | None, list[tuple[int, date]]]:
    """(latest version number, ``[(number, UTC day)]`` of the versions whose
    ``created`` is a date) from ``versions``; a ``created`` that is not a
    date is noted in ``notes``."""
    versions = obj.get("versions")
    if not isinstance(versions, list) or not versions:
        return None, []
    numbers = []
    days: list[tuple[int, date]] = []
    for entry in versions:
        if not isinstance(entry, dict):
            raise _Invalid("field 'versions' must be a list of objects")
        label = str(entry.get("version", ""))
        if re.fullmatch(r"v\d+", label):
            numbers.append(int(label[1:]))
            day = jsonlines.day_field(
                {f"versions[{label}].created": entry.get("created")}, f"versions[{label}].created", notes
            )
            if day is not None:
                days.append((int(label[1:]), day))
    return (max(numbers) if numbers else None), sorted(days)


#: The keys of a snapshot record :func:`parse_object` reads, or knowingly leaves out.
KEYS = frozenset(
    (
        "id", "title", "abstract", "authors", "authors_parsed", "categories", "versions", "update_date",
        "doi", "journal-ref", "comments", "license", "submitter", "report-no",
    )
)  # fmt: skip


def parse_object(value: object) -> Record:
    """Turn one decoded OAI JSON object into a Record (``source`` left empty).

    Raises:
        ValueError: not an object, no id, no title, or a field of the wrong
            type; the message names the field.
    """
    obj = jsonlines.json_object(value)
    arxiv_id, id_version, title = id_and_title(obj)
    categories = obj.get("categories")
    if categories is not None and not isinstance(categories, str):
        raise _Invalid("field 'categories' must be a space-separated string")
    notes: list[str] = []
    version, days = _versions(obj, notes)
    submitted = days[0][1] if days and days[0][0] == 1 else None
    updated = jsonlines.day_field(obj, "update_date", notes)
    jsonlines.unread_keys(obj, KEYS, notes)
    year = submitted.year if submitted else arxivmeta.year_from_id(arxiv_id)
    if year is None and updated is not None:
        year = updated.year
    return Record(
        id=arxiv_id,
        title=title,
        abstract=_text(obj, "abstract"),
        authors=_authors(obj),
        year=year,
        categories=(categories or "").split(),
        url=f"https://arxiv.org/abs/{arxiv_id}",
        version=version or id_version,
        submitted=submitted,
        updated=updated,
        versions=days,
        notes=notes,
        # --- links and identifiers ---
        doi=source_doi(_text(obj, "doi")),
        journal_ref=_text(obj, "journal-ref"),
        comments=_text(obj, "comments"),
        license=_text(obj, "license"),
    )


def read(
    path: Path, lines: Iterable[tuple[int, str]], problems: list[Problem], strict: bool = False
) -> Iterator[Record]:
    """Yield one Record per good line; report each bad line in ``problems``.
    ``strict`` (a format forced): every line read as this format, whatever its layout."""
    return jsonlines.read_objects(path, lines, problems, parse_object if strict else jsonlines.parse_any)
