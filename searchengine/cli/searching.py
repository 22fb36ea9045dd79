"""The commands that read an index: ``search``, ``show``, ``similar``."""

from __future__ import annotations

from pathlib import Path

import click

from searchengine import limits
from searchengine.cli import main
from searchengine.cli.common import (counted, index_dir_option, json_option, open_or_build, output_format_of,
                                     print_json, write_output)
from searchengine.cli.render import EXPORT_FORMATS, OUTPUT_FORMATS, SEARCH_FORMATS, echo_record, emit
from searchengine.facets import FACET_NAMES
from searchengine.limits import LISTING_SORTS, MAX_DEPTH, MAX_LIMIT, MAX_LOOKUP, SORTS
from searchengine.semantic import MODES

def _filter_values(parser_name: str):
    """A click callback parsing each value of a repeatable filter option with
    :mod:`searchengine.filters` ``parser_name``, so a bad value is a usage error."""

    def callback(ctx, param, values):
        from searchengine import filters
        from searchengine.errors import QueryError

        try:
            return tuple(getattr(filters, parser_name)(v) for v in values)
        except QueryError as exc:
            raise click.BadParameter(str(exc)) from None

    return callback


def _date_value(parser_name: str):
    """A click callback parsing a ``--since`` / ``--until`` / ``--past`` value
    with :mod:`searchengine.dates` ``parser_name``; a bad value is a usage error."""

    def callback(ctx, param, value):
        from searchengine import dates
        from searchengine.errors import QueryError

        try:
            return getattr(dates, parser_name)(value) if value is not None else None
        except QueryError as exc:
            raise click.BadParameter(str(exc)) from None

    return callback


def _parse_facets(ctx, param, value):
    from searchengine.errors import QueryError
    from searchengine.facets import parse_facet_names

    try:
        return parse_facet_names(value)
    except QueryError as exc:
        raise click.BadParameter(str(exc)) from None



format_option = click.option(
    "--format", "output_format", type=click.Choice(OUTPUT_FORMATS), default=None,
    help="Output format (default: table; --json is short for --format json).",
)
limit_option = click.option(
    "--limit", "-n", default=10, show_default=True, type=click.IntRange(1, MAX_LIMIT),
    help=f"Hits per page (at most {MAX_LIMIT}).",
)


@main.command()
@click.argument("words", nargs=-1, metavar="[QUERY]...")
@click.option("--year", "-y", multiple=True, callback=_filter_values("parse_year"),
              help="Only these years: 2023, 2023-2025, 2023-, -2020 (repeat to OR).")
@click.option("--author", "-a", multiple=True, callback=_filter_values("parse_author"),
              help="Only papers by this author: 'Depei Qian', 'Qian, D.', 'Qian' or Qian_D (repeat to OR).")
@click.option("--first-author", multiple=True, callback=_filter_values("parse_first_author"), metavar="NAME",
              help="Only papers with this first author (same forms as --author; ORs with --author).")
@click.option("--category", "-c", multiple=True, callback=_filter_values("parse_category"),
              help="Only this category (cs.DC) or archive (cs, cs.*) (repeat to OR).")
@click.option("--primary-only", is_flag=True, help="Match and count only each paper's primary category.")
@click.option("--since", callback=_date_value("parse_since"), metavar="DATE",
              help="Only papers submitted on or after DATE: 2025-03-14, 2025-03 (from the 1st) or 2025.")
@click.option("--until", callback=_date_value("parse_until"), metavar="DATE",
              help="Only papers submitted on or before DATE: 2025-06-30, 2025-06 (to the 30th) or 2025.")
@click.option("--past", callback=_date_value("parse_past"), metavar="week|month|year",
              help="Only papers submitted in the last 7, 30 or 365 days, today (UTC) included.")
@click.option("--sort", "-s", type=click.Choice(SORTS), default=None,
              help="Order of hits [default: relevance; newest without a query]; newest and oldest go by "
                   "submitted date. Alone, newest, oldest or title lists every paper (--sort newest: the "
                   "latest papers).")
@limit_option
@click.option("--page", "-p", default=1, show_default=True, type=click.IntRange(min=1),
              help=f"Page number, from 1 (page × limit at most {MAX_DEPTH}).")
@click.option("--facets", "facet_names", default="", callback=_parse_facets, metavar="NAMES",
              help=f"Count these facets over all hits: {','.join(FACET_NAMES)}; date adds a histogram of "
                   "submitted dates.")
@click.option("--facet-size", default=10, show_default=True, type=click.IntRange(1, 1000),
              help="Values listed per facet.")
@click.option("--exact", is_flag=True, help="Search the query as typed, never a correction of it.")
@click.option("--mode", "-m", type=click.Choice(MODES, case_sensitive=False), default=None,
              help="Rank by words (lexical), by meaning (semantic) or both (hybrid); semantic and hybrid need "
                   "an index with vectors  [default: hybrid when the index has vectors, else lexical]")
@click.option("--all", "every_hit", is_flag=True,
              help=f"Export every hit, up to {limits.EXPORT_LIMIT:,}, instead of one page "
                   f"(with --format {', '.join(EXPORT_FORMATS)}).")
@click.option("--base-url", default="http://127.0.0.1:8000", show_default=True, envvar="SEARCHENGINE_BASE_URL",
              metavar="URL", help="Address of the web page (searchengine serve) that --format atom links to.")
@index_dir_option
@json_option
@click.option("--format", "output_format", type=click.Choice(SEARCH_FORMATS), default=None,
              help="Output format (default: table; --json is short for --format json; atom: the search's "
                   "feed, newest first, as the web page's /feed.atom).")
def search(words: tuple[str, ...], year, author, first_author, category, primary_only: bool, since, until,
           past, sort, limit: int,
           page: int, facet_names, facet_size: int, exact: bool, mode: str | None, every_hit: bool, base_url: str,
           index_dir: Path,
           as_json: bool, output_format: str | None) -> None:
    """Search the index for QUERY and print ranked hits.

    QUERY may be quoted or not: `search gpu memory` is `search "gpu memory"`.
    A query of up to three words needs every word, in the title, abstract or
    author names; a longer one needs some of them (see the README's "How
    matching works"). QUERY may be left out when a filter is given: then
    every paper passing the filters is listed, newest first. With neither,
    --sort newest, oldest or title lists every paper of the index in that
    order (`search --sort newest`: the latest papers); with nothing at all
    the command says what to give. Builds the index from corpus/ first when
    there is none.
    """
    query = " ".join(words) if words else None
    author = author + first_author
    from searchengine import dates
    from searchengine.errors import QueryError

    try:
        dates.check_order(since, until)
    except QueryError as exc:
        raise click.UsageError(str(exc)) from None
    days = tuple(d for d in (since, until, past) if d is not None)
    # A bare `search` is most likely a slip: it gets a usage message, not the whole index.
    lists_all = query is None and not (year or author or category or days)
    if lists_all and sort not in LISTING_SORTS:
        raise click.UsageError("give a QUERY, a filter (--year, --author, --first-author, --category, --since, "
                               "--until, --past) or both; or --sort newest, oldest or title alone to list every "
                               "paper")
    output_format = output_format_of(as_json, output_format)
    from searchengine.filters import Filters
    from searchengine.request import SearchRequest

    filters = Filters(years=year, authors=author, categories=category, primary_only=primary_only, dates=days)
    if every_hit:
        _export_all(query, filters, sort, exact, index_dir, output_format, mode)
        return
    if output_format == "atom":
        _print_feed(query, filters, sort, page, limit, exact, index_dir, base_url)
        return
    request = SearchRequest(query or "", filters, sort, page, limit, facet_names, facet_size, exact=exact, mode=mode)
    results = open_or_build(index_dir).run(request)
    named = (("year", year), ("author", [a for a in author if not a.first]),
             ("first author", [a for a in author if a.first]), ("category", category))
    described = [f"{label} {' or '.join(v.text.removeprefix('^') for v in values)}"
                 for label, values in named if values]
    described += [d.text for d in days]  # "since 2025-03"
    if primary_only and category:
        described.append("primary category only")
    shown = counted(results.total, "hit")
    asked = f" for {(results.corrected or results.query)!r}" if results.query else ""
    heading = shown + asked + ((" with " + ", ".join(described)) if described else "")
    if lists_all:
        heading = f"{counted(results.total, 'paper')}, {LISTING_SORTS[sort]}"
    # Hits listed by a filter alone (no query text, or a category code typed as one) have no score.
    emit(results, output_format, heading, scored=any(hit.score for hit in results.hits))


def _print_feed(query, filters, sort, page: int, limit: int, exact: bool, index_dir: Path, base_url: str) -> None:
    """``search --format atom``: the web page's feed of the same search (newest
    first unless --sort is given; 50 entries unless --limit is), linking to ``base_url``."""
    from urllib.parse import urlsplit

    from searchengine.feeds import FEED_SIZE, search_feed
    from searchengine.request import SearchRequest

    try:
        parts = urlsplit(base_url)
        parts.port  # noqa: B018 (raises for a port out of range)
    except ValueError:
        parts = None
    if (parts is None or parts.scheme not in ("http", "https") or not parts.hostname or parts.query
            or parts.fragment or any(ch.isspace() or ch in '"<>\\^`{|}' or ord(ch) < 32 for ch in base_url)):
        raise click.BadParameter(f"{base_url!r} is not an http(s) address of a web page (scheme, host, "
                                 "port and path only)", param_hint="--base-url")
    ctx = click.get_current_context()
    if ctx.get_parameter_source("page") not in (click.core.ParameterSource.DEFAULT, None):
        raise click.UsageError("--format atom is the search's feed, newest first; it has no --page")
    if ctx.get_parameter_source("limit") in (click.core.ParameterSource.DEFAULT, None):
        limit = FEED_SIZE  # as the web page's feed
    request = SearchRequest(query or "", filters, sort or "newest", page, limit, with_snippets=False, exact=exact)
    results = open_or_build(index_dir).run(request)
    pairs = [("q", query)] if query else []
    pairs += [("year", v.text) for v in filters.years] + [("author", v.text) for v in filters.authors]
    pairs += [("category", v.text) for v in filters.categories]
    pairs += [(d.text.split(" ", 1)[0], d.text.split(" ", 1)[1]) for d in filters.dates]
    if exact:
        pairs.append(("exact", "1"))
    write_output(search_feed(results.hits, pairs, base_url=base_url, sort=sort or "newest"))


def _export_all(query, filters, sort, exact: bool, index_dir: Path, output_format: str, mode: str | None) -> None:
    """``search --all``: every hit up to the export cap; says on stderr when the cap cut the set."""
    ctx = click.get_current_context()
    if output_format not in EXPORT_FORMATS:
        raise click.UsageError(f"--all exports with --format {', '.join(EXPORT_FORMATS)}, not {output_format}")
    paging = {"page": "--page", "limit": "--limit", "facet_names": "--facets", "facet_size": "--facet-size"}
    given = [option for name, option in paging.items()
             if ctx.get_parameter_source(name) not in (click.core.ParameterSource.DEFAULT, None)]
    if given:
        raise click.UsageError(f"--all exports every hit: {', '.join(given)} cannot be given with it")
    from searchengine import export
    from searchengine.request import SearchRequest

    request = SearchRequest(query or "", filters, sort, limit=limits.EXPORT_LIMIT, with_snippets=False,
                            exact=exact, export=True, mode=mode)
    results = open_or_build(index_dir).run(request)
    if results.corrected:
        click.echo(f"Note: exported the hits of {results.corrected!r}, a correction of {results.query!r} "
                   "(--exact exports the query as typed)", err=True)
    for note in results.notes:
        click.echo(f"Note: {note}", err=True)
    write_output(export.render(output_format, export.rows(results.hits)))
    if results.total > len(results.hits):
        click.echo(f"Exported the first {len(results.hits):,} of {counted(results.total, 'hit')}: an export "
                   f"holds at most {limits.EXPORT_LIMIT:,}; narrow the search with filters for the rest", err=True)


@main.command()
@click.argument("record_ids", metavar="[ID_OR_DOI]...", nargs=-1)
@click.option("--ids-from", "ids_from", type=click.File("rb"), default=None,
              help="Read ids and DOIs from this file, one a line ('-': standard input); blank lines "
                   f"and lines starting with # are skipped. At most {MAX_LOOKUP:,} in all.")
@index_dir_option
@json_option
@click.option("--format", "output_format", type=click.Choice(["text", "json", "bibtex", "ris"]), default=None,
              help="Output format (default: text; --json is short for --format json).")
def show(record_ids: tuple[str, ...], ids_from, index_dir: Path, as_json: bool, output_format: str | None) -> None:
    """Print the full records ID_OR_DOI...: title, authors, year, categories, links
    (abstract page, PDF, DOI, arXiv DOI), journal reference, comments, license, abstract.

    Each is an id, an arXiv id or abs/pdf link, or a DOI (bare, doi:... or a
    doi.org link). The records found are printed in the order given (one
    record once); each one not found is named on stderr and the exit status
    is 1. With --json, one id argument prints one object; several, or
    --ids-from, a list."""
    output_format = output_format_of(as_json, output_format)
    wanted = list(record_ids)
    if ids_from is not None:
        listed = _listed_ids(ids_from)
        if not listed and not wanted:
            raise click.BadParameter(f"{ids_from.name} holds no id or DOI", param_hint="--ids-from")
        wanted += listed
    if not wanted:
        raise click.UsageError("give an id or DOI, or --ids-from FILE")
    if len(wanted) > MAX_LOOKUP:
        raise click.UsageError(f"{len(wanted):,} ids given; at most {MAX_LOOKUP:,} are looked up at once")
    found, missing = open_or_build(index_dir).documents(wanted)
    if output_format == "json":
        if found:
            print_json(found[0] if len(record_ids) == 1 and ids_from is None else found)
    elif output_format in EXPORT_FORMATS:
        from searchengine import export

        if found:
            write_output(export.render(output_format, found))
    else:
        for number, record in enumerate(found):
            if number:
                click.echo("\n" + "-" * 40 + "\n")
            echo_record(record)
    for record_id in missing:
        click.echo(f"Error: no record with id {record_id!r}", err=True)
    if missing:
        raise SystemExit(1)


def _listed_ids(stream) -> list[str]:
    """The ids of a file of one id or DOI a line (blank lines and ``#`` comments skipped)."""
    data = stream.read()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise click.BadParameter(f"{stream.name}, line {line}: not UTF-8 text ({exc.reason} at byte {exc.start})",
                                 param_hint="--ids-from") from None
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]



@main.command()
@click.argument("record_ids", metavar="RECORD_ID...", nargs=-1, required=True)
@limit_option
@index_dir_option
@json_option
@format_option
def similar(record_ids: tuple[str, ...], limit: int, index_dir: Path, as_json: bool,
            output_format: str | None) -> None:
    """Print papers on the same topic as RECORD_ID, or as several records
    together (papers like these), the records themselves excluded.

    With record vectors in the index (index --vectors) the papers nearest in
    meaning; else the records' most informative words, ranked by BM25F.
    """
    output_format = output_format_of(as_json, output_format)
    results = open_or_build(index_dir).similar(list(record_ids), limit=limit)
    shown = results.query.removeprefix("similar:").replace(",", ", ")
    emit(results, output_format, f"{counted(results.total, 'paper')} similar to {shown}")
