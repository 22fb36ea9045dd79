"""Hits, facets and records as the commands print them: a table, JSON or an export format."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import click

from searchengine.cli.common import counted, print_json, write_output
from searchengine.export import FORMATS
from searchengine.results import shown_authors

if TYPE_CHECKING:
    from searchengine.results import Hit, SearchResults

# What search and similar print: a table, JSON, or an export format.
EXPORT_FORMATS = tuple(FORMATS)
OUTPUT_FORMATS = ("table", "json", *EXPORT_FORMATS)
#: search also prints its hits as an Atom feed (searchengine.feeds).
SEARCH_FORMATS = (*OUTPUT_FORMATS, "atom")


def _marked(text: str, matches: Iterable[tuple[int, int]]) -> str:
    """``text`` with the matched spans in bold (plain when not on a terminal)."""
    parts, position = [], 0
    for start, end in matches:
        parts.append(text[position:start])
        parts.append(click.style(text[start:end], bold=True))
        position = end
    parts.append(text[position:])
    return "".join(parts)


def why(hit: Hit) -> str:
    """`` (words 0.31 + meaning 0.52; title, abstract)``: a hybrid hit's
    score parts and matched fields, ``""`` for other hits."""
    explain = hit.explain or {}
    if explain.get("keyword") is None or explain.get("meaning") is None:
        return ""
    fields = ", ".join(explain.get("fields") or []) or "no field"
    return f" (words {explain['keyword']:.2f} + meaning {explain['meaning']:.2f}; {fields})"


def _render_hits(results: SearchResults, first_rank: int, scored: bool = True) -> None:
    for rank, hit in enumerate(results.hits, start=first_rank):
        year = hit.submitted.isoformat() if hit.submitted else hit.year if hit.year is not None else "----"
        category = hit.categories[0] if hit.categories else "-"
        names, more = shown_authors(hit.authors)
        authors = (", ".join(names) + (f" … and {more:,} more" if more else "")) or "(no authors)"
        click.echo(f"\n{rank:>3}. {_marked(hit.title, hit.title_matches)}")
        click.echo(f"     {year} · {category} · {authors}")
        click.echo(f"     id {hit.id}" + (f" · score {hit.score:.2f}{why(hit)}" if scored else ""))
        if hit.snippet:
            click.echo(f"     {_marked(hit.snippet, hit.snippet_matches)}")
    pages, number = results.page.get("pages", 0), results.page.get("number", 1)
    if number > pages and number > 1:
        click.echo(f"\nPage {number} is past the end: there {'is' if pages == 1 else 'are'} {counted(pages, 'page')}")
    elif pages > 1:
        size = results.page.get("size", 0)
        reach = (
            f" (paging reaches the first {pages * size:,} of {results.total:,} hits; filters narrow the rest)"
            if pages * size < results.total
            else ""
        )
        click.echo(f"\nPage {number} of {pages}{reach}")


def _render_facets(results: SearchResults) -> None:
    for name, values in results.facets.items():
        click.echo(f"\n{name.capitalize()}:")
        for entry in values:
            value = "unknown" if entry["value"] is None else str(entry["value"])
            mark = "  (selected)" if entry["selected"] else ""
            click.echo(f"  {value:<30} {entry['count']:>6}{mark}")
        more = results.facets_remaining.get(name, 0)
        if more:
            click.echo(f"  ... and {more:,} more value{'s' if more != 1 else ''}")
    _render_histogram(results.date_histogram)


def _render_histogram(histogram: dict[str, Any] | None) -> None:
    """The date histogram as rows of bin, count and a bar (``--facets date``)."""
    if histogram is None:
        return
    click.echo(f"\nSubmitted (by {histogram['bin'] or 'date'}):")
    cut = {"year": 4, "month": 7, "day": 10}.get(histogram["bin"], 10)
    top = max((count for _, count in histogram["rows"]), default=0)
    for start, count in histogram["rows"]:
        bar = "#" * (round(30 * count / top) if top else 0)
        click.echo(f"  {start[:cut]:<10} {count:>6}  {bar}".rstrip())
    if histogram["undated"]:
        click.echo(f"  {'no date':<10} {histogram['undated']:>6}")


def emit(results: SearchResults, output_format: str, heading: str, scored: bool = True) -> None:
    """Print results as a table (with ``heading`` and facets), JSON, or an export format."""
    first_rank = (results.page["number"] - 1) * results.page["size"] + 1
    if output_format == "json":
        print_json(results.to_dict())
    elif output_format == "table":
        click.echo(f"{heading} ({results.took_ms:.0f} ms)")
        if results.corrected:
            click.echo(f"Showing results for {results.corrected!r}; search instead for {results.query!r} with --exact.")
        elif results.suggestion:
            click.echo(f"Did you mean: {results.suggestion}")
        if results.relaxed:
            click.echo("No paper has every word of the query; showing papers with some of them.")
            if results.unmatched:
                click.echo(f"{', '.join(map(repr, results.unmatched))} matched no paper.")
        for note in results.notes:
            click.echo(f"Note: {note}")
        _render_hits(results, first_rank, scored)
        _render_facets(results)
    else:
        from searchengine import export

        write_output(export.render(output_format, export.rows(results.hits), first_rank=first_rank))


def echo_record(record: dict) -> None:
    year = record["year"] if record["year"] is not None else "year unknown"
    click.echo(click.style(record["title"], bold=True))
    click.echo(", ".join(record["authors"]) or "(no authors)")
    click.echo(f"{year} · {' '.join(record['categories']) or 'no category'} · id {record['id']}")
    dated = _dates_line(record)
    if dated:
        click.echo(dated)
    for label, key in RECORD_LINE_LABELS:
        if record.get(key):
            click.echo(f"{label}: {record[key]}")
    click.echo(f"\n{record['abstract'] or '(no abstract)'}")


def _dates_line(record: dict) -> str:
    """``Submitted 14 Mar 2025; last updated 1 Apr 2025; versions v1 14 Mar 2025, v2 ...``
    as arXiv's abstract pages write them; empty when the record has no date."""
    from searchengine.dates import from_iso, shown

    parts = []
    submitted, updated = from_iso(record.get("submitted")), from_iso(record.get("updated"))
    if submitted:
        parts.append(f"Submitted {shown(submitted)}")
    if updated:
        parts.append(f"last updated {shown(updated)}")
    versions = [(v["version"], from_iso(v["date"])) for v in record.get("versions") or ()]
    if versions:
        parts.append("versions " + ", ".join(f"v{number} {shown(day)}" for number, day in versions if day))
    text = "; ".join(parts)
    return text[:1].upper() + text[1:]


#: The lines of links and identifiers `show` prints, in order, when a record has them.
RECORD_LINE_LABELS = (
    ("Abstract page", "url"),
    ("PDF", "pdf_url"),
    ("DOI", "doi"),
    ("arXiv DOI", "arxiv_doi"),
    ("Journal", "journal_ref"),
    ("Comments", "comments"),
    ("License", "license"),
)
