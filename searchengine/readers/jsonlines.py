"""Reader for plain JSON lines whose keys are the Record's field names.

One JSON object per line::

    {"id": "2101.00001", "title": "...", "abstract": "...",
     "authors": ["Ada Lovelace"], "year": 2021, "categories": ["cs.DC"]}

Only ``title`` is required. ``id`` defaults to one derived from the title;
an arXiv id's version suffix becomes the version (``2101.00003v2``), or
``version`` gives it (``4``, ``"4"`` or ``"v4"``); without ``year`` a
new-style arXiv id gives it;
``authors`` and ``categories`` may also be given as one string (authors as
:func:`searchengine.records.split_authors` reads them, categories separated by spaces); ``year`` may be a
string of four digits. ``date`` is the submission day and ``updated`` the
last update's (``YYYY-MM-DD``, ``YYYY-MM`` or an ISO timestamp, turned to
its UTC day); a date that is not one is a note, the record kept without it.
Links and identifiers, each a string: ``pdf`` (the PDF's URL), ``doi``,
``journal_ref``, ``comments`` and ``license``. Blank lines are ignored.

A key the reader does not know is named in a note (``fields 'x', 'y' not
read``), the record kept without it. A line in one of the arXiv layouts
(an OAI snapshot record, a listing record) is read by that layout's reader
whichever JSON-lines format the file was detected as
(:func:`layout`), so a record appended from another source keeps its
year, dates and abstract.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from datetime import date
from pathlib import Path
from typing import Any

from searchengine.dates import parse_day
from searchengine.readers.arxivmeta import split_version, year_from_id
from searchengine.records import Problem, Record, clean_text, source_doi, split_authors, title_id

NAME = "jsonl"


def sniff(head: str) -> bool:
    """True when the first non-blank character opens a JSON object."""
    return head.lstrip().startswith("{")


class InvalidRecord(ValueError):
    """A decoded JSON value that is not a usable record; the message names the field."""


def string_field(obj: dict, key: str) -> str:
    """``obj[key]`` as clean text; ``""`` when missing.

    Raises:
        InvalidRecord: the value is not a string.
    """
    value = obj.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidRecord(f"field '{key}' must be a string, not {type(value).__name__}")
    return clean_text(value)


def string_list(obj: dict, key: str, splitter: Callable[[str], list[str]] | None = None) -> list[str]:
    """``obj[key]`` as clean strings: a list of strings, or one string cut by
    ``splitter`` (at spaces when ``None``); ``[]`` when missing.

    Raises:
        InvalidRecord: the value is neither.
    """
    value = obj.get(key)
    if value is None:
        return []
    if isinstance(value, str):
        parts = splitter(value) if splitter else value.split()
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        parts = value
    else:
        raise InvalidRecord(f"field '{key}' must be a list of strings")
    return [clean_text(p) for p in parts if p.strip()]


def day_field(obj: dict, key: str, notes: list[str]) -> date | None:
    """``obj[key]`` as a UTC day (:func:`searchengine.dates.parse_day`), ``None``
    when missing; a value that is not a date adds a note to ``notes`` (the
    record is kept, the date unknown) instead of raising."""
    value = obj.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        if not isinstance(value, str):
            raise ValueError(f"is a {type(value).__name__}, not a date")
        return parse_day(value)
    except ValueError as exc:
        notes.append(f"field '{key}': {exc} (date left unknown)")
        return None


def _year(obj: dict) -> int | None:
    value = obj.get("year")
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise InvalidRecord("field 'year' must be a year number")
    if isinstance(value, str) and re.fullmatch(r"\s*\d{4}\s*", value):
        value = int(value)
    if isinstance(value, int) and 1000 <= value <= 9999:
        return value
    raise InvalidRecord(f"field 'year' must be a four-digit year, not {value!r}")


def json_object(value: object) -> dict[str, Any]:
    """``value`` (one decoded JSON value) as the object it must be.

    Raises:
        InvalidRecord: ``value`` is not a JSON object.
    """
    if not isinstance(value, dict):
        raise InvalidRecord(f"expected a JSON object, found {type(value).__name__}")
    return value


#: The keys :func:`parse_object` reads.
KEYS = frozenset(
    (
        "id", "title", "abstract", "authors", "year", "categories", "url", "version",
        "date", "updated", "pdf", "doi", "journal_ref", "comments", "license",
    )
)  # fmt: skip


def unread_keys(obj: dict[str, Any], known: frozenset[str], notes: list[str]) -> None:
    """Add a note to ``notes`` naming the keys of ``obj`` outside ``known`` that
    hold a value (``null`` and ``""`` are nothing lost)."""
    unread = [key for key, value in obj.items() if key not in known and value not in (None, "", [], {})]
    if unread:
        names = ", ".join(repr(key) for key in unread)
        notes.append(f"field{'s' if len(unread) > 1 else ''} {names} not read (not a field of this format)")


def layout(obj: dict[str, Any]) -> str:
    """The JSON-lines layout an object is written in, by its keys: ``arxiv-oai``
    (``authors_parsed``, or ``versions`` with ``update_date``),
    ``arxiv-listing`` (``summary`` with ``abs`` or ``pdf``: a listing record
    that lost its ``id`` is still one, reported as such), else ``jsonl``."""
    keys = obj.keys()
    if "authors_parsed" in keys or ("versions" in keys and "update_date" in keys):
        return "arxiv-oai"
    if "summary" in keys and ("abs" in keys or "pdf" in keys):
        return "arxiv-listing"
    return NAME


def parse_any(value: object) -> Record:
    """One decoded JSON value as a Record, read by the parser of its own
    :func:`layout` (whatever the file's detected format).

    Raises:
        ValueError: as that parser raises.
    """
    from searchengine.readers import FORMATS

    if not isinstance(value, dict):
        return parse_object(value)
    parser: Callable[[object], Record] = FORMATS[layout(value)].parse_object
    return parser(value)


def parse_object(value: object) -> Record:
    """Turn one decoded JSON value into a Record (``source`` left empty).

    Raises:
        ValueError: the value is not an object, has no title, or a field has
            the wrong type; the message names the field.
    """
    obj = json_object(value)
    title = string_field(obj, "title")
    if not title:
        raise InvalidRecord("record has no title")
    raw_id = obj.get("id")
    if raw_id is not None and not isinstance(raw_id, (str, int)):
        raise InvalidRecord("field 'id' must be a string")
    record_id, version = split_version(str(raw_id)) if raw_id is not None else ("", None)
    given = obj.get("version")
    if given is not None:  # 4, "4" or "v4", as the CSV reader takes it
        text = str(given).strip().lstrip("vV")
        if isinstance(given, bool) or not text.isdigit():
            raise InvalidRecord(f"field 'version' must be a whole number, not {given!r}")
        version = int(text)
    year = _year(obj)
    notes: list[str] = []
    submitted = day_field(obj, "date", notes)
    updated = day_field(obj, "updated", notes)
    unread_keys(obj, KEYS, notes)
    return Record(
        id=record_id or title_id(title),
        title=title,
        abstract=string_field(obj, "abstract"),
        authors=string_list(obj, "authors", split_authors),
        year=year if year is not None else year_from_id(record_id),
        categories=string_list(obj, "categories", None),
        url=string_field(obj, "url"),
        version=version,
        submitted=submitted,
        updated=updated,
        notes=notes,
        # --- links and identifiers ---
        pdf_url=string_field(obj, "pdf"),
        doi=source_doi(string_field(obj, "doi")),
        journal_ref=string_field(obj, "journal_ref"),
        comments=string_field(obj, "comments"),
        license=string_field(obj, "license"),
    )


def read_objects(
    path: Path,
    lines: Iterable[tuple[int, str]],
    problems: list[Problem],
    parse: Callable[[object], Record],
) -> Iterator[Record]:
    """Decode one JSON value per non-blank line and turn it into a Record with
    ``parse`` (:func:`parse_any` reads each by its own layout).

    A line that is not JSON, or that ``parse`` rejects with ``ValueError``,
    is reported in ``problems`` as ``file:line: reason (skipped)``.
    """
    for number, line in lines:
        if not line.strip():
            continue
        try:
            record = parse(json.loads(line))
        except json.JSONDecodeError as exc:
            problems.append(
                Problem(
                    str(path), number, f"invalid JSON ({exc.msg.removesuffix(' at')} at column {exc.colno}) (skipped)"
                )
            )
            continue
        except ValueError as exc:
            problems.append(Problem(str(path), number, f"{exc} (skipped)"))
            continue
        except RecursionError:  # json's decoder recurses once per level of nesting
            problems.append(Problem(str(path), number, "JSON nested too deeply (skipped)"))
            continue
        record.source = f"{path}:{number}"
        yield record


def read(
    path: Path, lines: Iterable[tuple[int, str]], problems: list[Problem], strict: bool = False
) -> Iterator[Record]:
    """Yield one Record per good line; report each bad line in ``problems``.
    ``strict`` (a format forced): every line read as this format, whatever its layout."""
    return read_objects(path, lines, problems, parse_object if strict else parse_any)
