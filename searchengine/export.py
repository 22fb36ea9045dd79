"""Export records and hits as BibTeX, CSV or JSON.

BibTeX is written with ``bibtexparser`` (its LaTeX-encoding middleware turns
``×``, ``&`` or ``č`` into valid TeX), so the output parses back with any
BibTeX reader. Records with an arXiv id become ``@misc`` entries with
``eprint``/``archivePrefix``/``primaryClass``, as arXiv's own export does.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from collections.abc import Iterable
from typing import Any

from searchengine.records import arxiv_id

CSV_COLUMNS = ("rank", "id", "title", "authors", "year", "categories", "score", "url")


def _key_part(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^A-Za-z0-9]", "", ascii_text).lower()


def _last_name(author: str) -> str:
    if "," in author:
        return author.split(",")[0]
    parts = author.split()
    return parts[-1] if parts else ""


def citation_key(record: dict[str, Any]) -> str:
    """``<first author's last name><year><first title word>``, e.g. ``qian2026cbspmv``."""
    author = _key_part(_last_name(record["authors"][0])) if record.get("authors") else "anon"
    year = str(record["year"]) if record.get("year") else ""
    words = [_key_part(w) for w in (record.get("title") or "").split()]
    first = next((w for w in words if len(w) > 3), next((w for w in words if w), "paper"))
    return f"{author or 'anon'}{year}{first}"


def to_bibtex(records: Iterable[dict[str, Any]]) -> str:
    """BibTeX entries for records (dicts with the Record's field names).

    Citation keys are made unique with ``a``, ``b``, ... suffixes.
    """
    import bibtexparser
    from bibtexparser.middlewares import LatexEncodingMiddleware
    from bibtexparser.model import Entry, Field

    library = bibtexparser.Library()
    used: dict[str, int] = {}
    for record in records:
        key = citation_key(record)
        count = used.get(key, 0)
        used[key] = count + 1
        if count:
            key += "abcdefghijklmnopqrstuvwxyz"[(count - 1) % 26] * (1 + (count - 1) // 26)
        fields = [Field("title", record["title"])]
        if record.get("authors"):
            fields.append(Field("author", " and ".join(record["authors"])))
        if record.get("year"):
            fields.append(Field("year", str(record["year"])))
        eprint = arxiv_id(record["id"])
        if eprint:
            fields.append(Field("eprint", eprint))
            fields.append(Field("archivePrefix", "arXiv"))
            if record.get("categories"):
                fields.append(Field("primaryClass", record["categories"][0]))
        url = record.get("url") or (f"https://arxiv.org/abs/{eprint}" if eprint else "")
        if url:
            fields.append(Field("url", url))
        library.add(Entry("misc", key, fields))
    return bibtexparser.write_string(library, prepend_middleware=[LatexEncodingMiddleware(enclose_urls=False)])


def _cell(value) -> str:
    """A CSV cell that a spreadsheet will not run as a formula.

    A text starting with ``=``, ``+``, ``-``, ``@`` or a tab/return is
    prefixed with ``'`` (OWASP's advice against CSV injection).
    """
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def to_csv(hits: Iterable[dict[str, Any]], first_rank: int = 1) -> str:
    """CSV with a header row; list fields joined (authors with ``; ``, categories with spaces).

    Text cells that a spreadsheet would read as a formula are prefixed with
    ``'`` (see :func:`_cell`); numbers are written as they are.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for rank, hit in enumerate(hits, start=first_rank):
        writer.writerow([
            rank,
            _cell(hit["id"]),
            _cell(hit["title"]),
            _cell("; ".join(hit.get("authors") or [])),
            hit.get("year") if hit.get("year") is not None else "",
            _cell(" ".join(hit.get("categories") or [])),
            hit.get("score", ""),
            _cell(hit.get("url", "")),
        ])
    return buffer.getvalue()
