"""Reader for arXiv listing JSON lines (daily "new submissions" listings as scraped metadata).

One JSON object per line, every field present::

    {"id": "2506.06837", "pdf": "https://arxiv.org/pdf/2506.06837",
     "abs": "https://arxiv.org/abs/2506.06837", "authors": ["A. One", "B. Two"],
     "title": "...", "categories": ["cs.CV", "cs.AI", "I.2.10"],
     "comment": null, "summary": "..."}

* ``summary`` is the abstract (hard line wraps collapsed).
* ``categories`` may hold ACM/MSC class codes beside arXiv categories; only
  the arXiv categories are kept (see :func:`arxivmeta.arxiv_categories`).
* There is no date in the record. When a file ``listing_dates.tsv`` or
  ``listing_dates.tsv.gz`` lies beside the input file (a tab-separated table
  with the header ``id, first_listing_date, last_listing_date,
  n_listing_files``, see ``../shared/data/arxiv/PROVENANCE.md``), a paper's
  first listing day is its submitted day (and year), the last its updated
  day; a bad row of that table is reported with its line and left out.
  Otherwise the year comes from a new-style id (``2506.06837`` → 2025), and
  one note for the whole file says its records have no dates (:data:`NO_DATES`).
* An id may carry a version suffix (``2506.06837v2``), kept as the version.
* ``abs`` is the URL, ``pdf`` the PDF link, ``comment`` the comments; any
  other key is named in a note. A line in another JSON-lines layout (an OAI
  snapshot record, a plain record with ``abstract`` and ``year``, appended to
  the file) is read by its own reader
  (:func:`searchengine.readers.jsonlines.parse_any`), its dates its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import date
from pathlib import Path

from searchengine.dates import parse_day
from searchengine.readers import arxivmeta, jsonlines
from searchengine.readers.arxivoai import first_line_keys, id_and_title
from searchengine.records import Problem, Record, clean_text

NAME = "arxiv-listing"


def sniff(head: str) -> bool:
    """True when the first line is a JSON object with ``summary`` and ``abs`` or ``pdf`` keys."""
    keys = first_line_keys(head)
    return "summary" in keys and "id" in keys and bool(keys & {"abs", "pdf"})


_Invalid = jsonlines.InvalidRecord
_text = jsonlines.string_field


def _strings(obj: dict, key: str) -> list[str]:
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _Invalid(f"field '{key}' must be a list of strings")
    return [clean_text(v) for v in value if v.strip()]


#: Names of the table of listing dates the reader looks for beside its input.
DATES_FILES = ("listing_dates.tsv", "listing_dates.tsv.gz")

#: The note (line 0 of the file) when no table of listing dates lies beside a listing file.
NO_DATES = (
    "no listing_dates.tsv(.gz) beside this listing file: its records are indexed with years "
    "(from their ids) but no submitted dates, so date filters and 'past week/month/year' do not find them"
)

#: The keys of a listing record :func:`parse_object` reads.
KEYS = frozenset(("id", "pdf", "abs", "authors", "title", "categories", "comment", "summary"))


def listing_dates(path: Path, problems: list[Problem]) -> dict[str, tuple[date, date]]:
    """``{id: (first listing day, last listing day)}`` from the table beside
    ``path`` (:data:`DATES_FILES`), ``{}`` when there is none. A row that is
    not ``id<TAB>YYYY-MM-DD<TAB>YYYY-MM-DD...`` is reported in ``problems``
    as ``table:line`` and left out."""
    from searchengine.readers import numbered_lines

    table = next((path.parent / name for name in DATES_FILES if (path.parent / name).is_file()), None)
    if table is None:
        return {}
    found: dict[str, tuple[date, date]] = {}
    for number, line in numbered_lines(table, problems):
        cells = line.split("\t")
        if number == 1 and cells[0].strip() == "id" or not line.strip():
            continue
        try:
            if len(cells) < 3:
                raise ValueError(f"has {len(cells)} columns, not id, first and last listing date")
            found[cells[0].strip()] = (parse_day(cells[1]), parse_day(cells[2]))
        except ValueError as exc:
            problems.append(Problem(str(table), number, f"listing dates: {exc} (row left out)", skipped=False))
    return found


def parse_object(value: object) -> Record:
    """Turn one decoded listing object into a Record (``source`` left empty).

    Raises:
        ValueError: not an object, no id, no title, or a field of the wrong
            type; the message names the field.
    """
    obj = jsonlines.json_object(value)
    arxiv_id, version, title = id_and_title(obj)
    notes: list[str] = []
    jsonlines.unread_keys(obj, KEYS, notes)
    return Record(
        id=arxiv_id,
        title=title,
        abstract=_text(obj, "summary"),
        authors=_strings(obj, "authors"),
        year=arxivmeta.year_from_id(arxiv_id),
        categories=arxivmeta.arxiv_categories(_strings(obj, "categories")),
        url=_text(obj, "abs"),
        version=version,
        notes=notes,
        # --- links and identifiers ---
        pdf_url=_text(obj, "pdf"),
        comments=_text(obj, "comment"),
    )


def read(
    path: Path, lines: Iterable[tuple[int, str]], problems: list[Problem], strict: bool = False
) -> Iterator[Record]:
    """Yield one Record per good line, dated from the table of listing dates
    beside ``path`` when there is one (else :data:`NO_DATES` is noted once);
    report each bad line in ``problems``. ``strict`` (a format forced): every
    line read as a listing record, whatever its layout."""
    days = listing_dates(path, problems)
    if not days and not any((path.parent / name).is_file() for name in DATES_FILES):
        problems.append(Problem(str(path), 0, NO_DATES, skipped=False))
    for record in jsonlines.read_objects(path, lines, problems, parse_object if strict else jsonlines.parse_any):
        first_last = days.get(record.id)
        if first_last is not None and record.submitted is None:
            record.submitted, record.updated = first_last
            record.year = record.submitted.year
        yield record
