"""Reader for CSV files whose header names the Record's fields.

The first line is a header; ``title`` is required, the other known columns
are ``id``, ``abstract``, ``authors``, ``year``, ``categories``, ``url``,
``version``, ``date`` (the submission day) and ``updated``, and the links
and identifiers ``pdf``, ``doi``, ``journal_ref``, ``comments`` and
``license``; other columns are not read, and a note names them (once, at
the header's line). Comma separated, RFC 4180 quoting
(a quoted value may span lines)::

    id,title,authors,year,categories
    2101.00001v2,Sparse GPU kernels,"Ada Lovelace; Charles Babbage",2021,cs.DC cs.PF

``authors`` are read by :func:`searchengine.records.split_authors`
(semicolons, BibTeX's "Last, First and Last, First", or commas and "and");
``categories`` are separated by spaces. An id may carry an arXiv version
suffix. Values are read as in :mod:`~searchengine.readers.jsonlines`.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from pathlib import Path

from searchengine.readers import jsonlines
from searchengine.records import Problem, Record

NAME = "csv"

FIELDS = (
    "id",
    "title",
    "abstract",
    "authors",
    "year",
    "categories",
    "url",
    "version",
    "date",
    "updated",
    "pdf",
    "doi",
    "journal_ref",
    "comments",
    "license",
)


def _header(line: str) -> list[str]:
    return [name.strip().lower() for name in next(csv.reader([line]), [])]


def sniff(head: str) -> bool:
    """True when the first line is a comma-separated header with ``title`` and another known field."""
    first = next((line for line in head.splitlines() if line.strip()), "")
    names = _header(first)
    return "title" in names and len(set(names) & set(FIELDS)) >= 2


def _row_record(row: dict[str, str]) -> Record:
    values: dict[str, object] = {k: v for k, v in row.items() if k in FIELDS and v is not None}
    version_text = str(values.pop("version", "") or "").strip().lstrip("v")
    if version_text and not version_text.isdigit():
        raise ValueError(f"field 'version' must be a number, not {row['version']!r}")
    values["id"] = values.get("id") or None
    record = jsonlines.parse_object(values)
    if version_text:
        record.version = int(version_text)
    return record


def read(path: Path, lines: Iterable[tuple[int, str]], problems: list[Problem]) -> Iterator[Record]:
    """Yield one Record per good row; report bad rows as ``file:line: reason``."""
    start = {"line": 0, "open": True}  # first line of the row being read

    def texts() -> Iterator[str]:
        for number, line in lines:
            if start["open"]:
                start["line"], start["open"] = number, False
            yield line + "\n"

    # strict: a quote left open to the end of the file is an error, not one long field.
    rows = csv.reader(texts(), strict=True)
    header: list[str] | None = None
    while True:
        try:
            row = next(rows)
        except StopIteration:
            return
        except csv.Error as exc:
            problems.append(Problem(str(path), start["line"], f"CSV error ({exc}); rest of file skipped", cut_off=True))
            return
        line, start["open"] = start["line"], True
        if not any(cell.strip() for cell in row):
            continue
        if header is None:
            header = [name.strip().lower() for name in row]
            unread = [name for name in header if name and name not in FIELDS]
            if unread:
                names = ", ".join(repr(name) for name in unread)
                problems.append(
                    Problem(
                        str(path),
                        line,
                        f"column{'s' if len(unread) > 1 else ''} {names} not read (not a field of this format)",
                        skipped=False,
                    )
                )
            continue
        if len(row) > len(header):
            problems.append(
                Problem(str(path), line, f"row has {len(row)} values but the header names {len(header)} (skipped)")
            )
            continue
        try:
            record = _row_record(dict(zip(header, row)))
        except ValueError as exc:
            problems.append(Problem(str(path), line, f"{exc} (skipped)"))
            continue
        record.source = f"{path}:{line}"
        yield record
