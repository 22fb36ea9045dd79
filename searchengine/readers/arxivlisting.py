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
  Otherwise the year comes from a new-style id (``2506.06837`` → 2025).
* An id may carry a version suffix (``2506.06837v2``), kept as the version.
* ``abs`` is the URL, ``pdf`` the PDF link, ``comment`` the comments.
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
    return Record(
        id=arxiv_id,
        title=title,
        abstract=_text(obj, "summary"),
        authors=_strings(obj, "authors"),
        year=arxivmeta.year_from_id(arxiv_id),
        categories=arxivmeta.arxiv_categories(_strings(obj, "categories")),
        url=_text(obj, "abs"),
        version=version,
        # --- links and identifiers ---
        pdf_url=_text(obj, "pdf"),
        comments=_text(obj, "comment"),
    )


def read(path: Path, lines: Iterable[tuple[int, str]], problems: list[Problem]) -> Iterator[Record]:
    """Yield one Record per good line, dated from the table of listing dates
    beside ``path`` when there is one; report each bad line in ``problems``."""
    days = listing_dates(path, problems)
    for record in jsonlines.read_objects(path, lines, problems, parse_object):
        first_last = days.get(record.id)
        if first_last is not None:
            record.submitted, record.updated = first_last
            record.year = record.submitted.year
        yield record
