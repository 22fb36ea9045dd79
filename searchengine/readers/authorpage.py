"""Reader for arXiv author pages saved as text (the files in ``corpus/``).

Layout, one item per non-blank line::

    arXiv subjects
    Depei Qian                                   <- the page's author
    Publications and source records attributed to Depei Qian.
    At least 19 recordsLinked to original sources  <- count not trusted
    arXiv2026                                    <- year line opens a record
    <title>
    <abstract, one or more lines>
    cs.DC↗                                       <- category line closes it

The pages carry no arXiv ids, so each record's id is derived from its title
(:func:`searchengine.records.title_id`). A line that is none of these (text
between a record's category line and the next year line, or an unknown line
in the page's header) is not read, and is named in a note with its line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from searchengine.records import Problem, Record, clean_text, title_id

NAME = "authorpage"

_YEAR = re.compile(r"^arXiv\s*(\d{4})$")
_CATEGORY = re.compile(r"^([A-Za-z][\w.-]*)\s*↗$")
_ATTRIBUTED = re.compile(r"^Publications and source records attributed to (.+?)\.?$")
_COUNT = re.compile(r"^(At least )?[\d,]+ records?\s*(Linked to original sources)?$", re.IGNORECASE)
_BANNER = "arXiv subjects"


def sniff(head: str) -> bool:
    """True when the text starts like an author page or has a year line early on."""
    lines = [line.strip() for line in head.splitlines() if line.strip()]
    if lines and lines[0] == "arXiv subjects":
        return True
    if lines and lines[0].startswith("{"):  # JSON lines, whatever stray lines follow
        return False
    return any(_YEAR.match(line) for line in lines[:12])


def read(path: Path, lines: Iterable[tuple[int, str]], problems: list[Problem]) -> Iterator[Record]:
    """Yield the records of one author page; report broken ones in ``problems``."""
    author = ""
    header: list[str] = []  # non-blank lines before the first record
    start = 0  # line of the open record's year line; 0 = no open record
    year = 0
    body: list[str] = []  # title then abstract lines of the open record

    def problem(line: int, reason: str) -> None:
        problems.append(Problem(str(path), line, reason))

    def unread(line: int, text: str) -> None:
        shown = text if len(text) <= 60 else text[:57] + "..."
        problems.append(Problem(str(path), line, f"line '{shown}' not read (outside any record)", skipped=False))

    records = 0  # records closed so far: a line after one is not header

    for number, raw in lines:
        line = raw.strip()
        if not line:
            continue
        year_match = _YEAR.match(line)
        if year_match:
            if start:
                problem(start, "record has no category line before the next record (skipped)")
            start, year, body = number, int(year_match.group(1)), []
            continue
        if not start:
            if records:
                unread(number, line)
                continue
            header.append(line)
            found = _ATTRIBUTED.match(line)
            if found:
                author = clean_text(found.group(1))
            elif len(header) == 2 and header[0] == _BANNER and not author:
                # The line after the site banner names the author too; used
                # when the "attributed to" sentence is missing.
                author = clean_text(line)
            elif not (line == _BANNER and len(header) == 1) and not _COUNT.match(line):
                unread(number, line)
            continue
        category = _CATEGORY.match(line)
        if category:
            if not body:
                problem(start, "record has no title (skipped)")
            else:
                title = clean_text(body[0])
                yield Record(
                    id=title_id(title),
                    title=title,
                    abstract=clean_text(" ".join(body[1:])),
                    authors=[author] if author else [],
                    year=year,
                    categories=[category.group(1)],
                    source=f"{path}:{start}",
                )
            start, body, records = 0, [], records + 1
            continue
        body.append(line)
    if start:
        problem(start, "page ends in the middle of a record (skipped)")
