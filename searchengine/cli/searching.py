"""The commands that read an index: ``search``, ``show``, ``similar``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from searchengine import limits
from searchengine.cli import main
from searchengine.cli.common import (
    counted,
    index_dir_option,
    json_option,
    open_or_build,
    output_format_of,
    print_json,
    write_output,
)
from searchengine.cli.render import EXPORT_FORMATS, OUTPUT_FORMATS, SEARCH_FORMATS, echo_record, emit
from searchengine.facets import FACET_NAMES, FACETS
from searchengine.limits import LISTING_SORTS, MAX_LOOKUP
from searchengine.parameters import Parameter, cli_parameters, parameter

# The options that filter: a search with one of them needs no query text.
_FILTERS = (*FACET_NAMES, "first_author", "since", "until", "past")


def _filter_values(parser_name: str, facet: str | None = None):
    """A click callback parsing each value of a repeatable filter option with
    :mod:`searchengine.filters` ``parser_name``, or as ``facet``'s filter
    (:func:`searchengine.filters.parse_filter`), so a bad value is a usage error."""

    def callback(ctx, param, values):
        from searchengine import filters
        from searchengine.errors import QueryError

        try:
            if facet is not None:
                return tuple(filters.parse_filter(facet, v) for v in values)
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


def parameter_option(declared: Parameter) -> Callable[[Callable], Callable]:
    """The click option of a search parameter, as its :class:`~searchengine.parameters.CliForm` declares it."""
    form, name = declared.cli, declared.name
    assert form is not None and name is not None, declared  # (cli_parameters() have both)
    settings: dict[str, Any] = {"help": form.help}
    if declared.multiple:
        settings["multiple"] = True
    if form.flag:
        settings["is_flag"] = True
    if form.default is not None:
        settings["default"] = form.default
    if form.show_default:
        settings["show_default"] = True
    if form.int_range is not None:
        settings["type"] = click.IntRange(*form.int_range)
    if form.float_range is not None:
        settings["type"] = click.FloatRange(*form.float_range)
    if form.choices is not None:
        settings["type"] = click.Choice(form.choices, case_sensitive=form.case_sensitive)
    if form.metavar is not None:
        settings["metavar"] = form.metavar
    if form.parse == "facets":
        settings["callback"] = _parse_facets
    elif form.parse is not None:
        module, function = form.parse.split(".")
        if module == "facet":
            settings["callback"] = _filter_values("", function)
        else:
            settings["callback"] = _filter_values(function) if module == "filters" else _date_value(function)
    return click.option(*form.flags, form.dest or name, **settings)


def search_options(command: Callable) -> Callable:
    """Every search parameter's option (:func:`searchengine.parameters.cli_parameters`), in ``--help`` order."""
    for declared in reversed(cli_parameters()):
        command = parameter_option(declared)(command)
    return command


format_option = click.option(
    "--format",
    "output_format",
    type=click.Choice(OUTPUT_FORMATS),
    default=None,
    help="Output format (default: table; --json is short for --format json).",
)
limit_option = parameter_option(parameter("limit"))


@main.command()
@click.argument("words", nargs=-1, metavar="[QUERY]...")
@search_options
@click.option(
    "--all",
    "every_hit",
    is_flag=True,
    help=f"Export every hit, up to {limits.EXPORT_LIMIT:,}, instead of one page "
    f"(with --format {', '.join(EXPORT_FORMATS)}).",
)
@click.option(
    "--base-url",
    default="http://127.0.0.1:8000",
    show_default=True,
    envvar="SEARCHENGINE_BASE_URL",
    metavar="URL",
    help="Address of the web page (searchengine serve) that --format atom links to.",
)
@index_dir_option
@json_option
@click.option(
    "--format",
    "output_format",
    type=click.Choice(SEARCH_FORMATS),
    default=None,
    help="Output format (default: table; --json is short for --format json; atom: the search's "
    "feed, newest first, as the web page's /feed.atom).",
)
def search(
    words: tuple[str, ...],
    every_hit: bool,
    base_url: str,
    index_dir: Path,
    as_json: bool,
    output_format: str | None,
    **options: Any,
) -> None:
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
    asked = {
        declared.name: options[declared.cli.dest or declared.name]
        for declared in cli_parameters()
        if declared.name and declared.cli
    }
    query = " ".join(words) if words else None
    from searchengine import dates
    from searchengine.errors import QueryError

    try:
        dates.check_order(asked["since"], asked["until"])
    except QueryError as exc:
        raise click.UsageError(str(exc)) from None
    # A bare `search` is most likely a slip: it gets a usage message, not the whole index.
    filtering = [p for p in cli_parameters() if p.name in _FILTERS]
    lists_all = query is None and not any(asked[name] for name in _FILTERS)
    sort = asked["sort"]
    if lists_all and sort not in LISTING_SORTS:
        raise click.UsageError(
            f"give a QUERY, a filter ({', '.join(p.cli.flags[0] for p in filtering if p.cli)}) or both; "
            "or --sort newest, oldest or title alone to list every paper"
        )
    output_format = output_format_of(as_json, output_format)
    from searchengine.request import SearchRequest

    if every_hit:
        _export_all(query, asked, index_dir, output_format)
        return
    if output_format == "atom":
        _print_feed(query, asked, index_dir, base_url)
        return
    request = SearchRequest.make(query or "", **asked)
    results = open_or_build(index_dir).run(request)
    filters = request.filters
    named: list[tuple[str, Sequence[Any]]] = []
    for facet in FACETS:
        chosen = filters.values(facet.name)
        if facet.kind == "author":  # first authors are named apart
            named += [
                (facet.name, [a for a in chosen if not a.first]),
                ("first author", [a for a in chosen if a.first]),
            ]
        else:
            named.append((facet.name, chosen))
    described = [
        f"{label} {' or '.join(v.text.removeprefix('^') for v in values)}" for label, values in named if values
    ]
    described += [d.text for d in filters.dates]  # "since 2025-03"
    if filters.primary_only and filters.categories:
        described.append("primary category only")
    shown = counted(results.total, "hit")
    searched = f" for {(results.corrected or results.query)!r}" if results.query else ""
    heading = shown + searched + ((" with " + ", ".join(described)) if described else "")
    if lists_all:
        heading = f"{counted(results.total, 'paper')}, {LISTING_SORTS[sort]}"
    # Hits listed by a filter alone (no query text, or a category code typed as one) have no score.
    emit(results, output_format, heading, scored=any(hit.score for hit in results.hits))


def _print_feed(query: str | None, asked: dict[str, Any], index_dir: Path, base_url: str) -> None:
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
    if (
        parts is None
        or parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.query
        or parts.fragment
        or any(ch.isspace() or ch in '"<>\\^`{|}' or ord(ch) < 32 for ch in base_url)
    ):
        raise click.BadParameter(
            f"{base_url!r} is not an http(s) address of a web page (scheme, host, port and path only)",
            param_hint="--base-url",
        )
    ctx = click.get_current_context()
    if ctx.get_parameter_source("page") not in (click.core.ParameterSource.DEFAULT, None):
        raise click.UsageError("--format atom is the search's feed, newest first; it has no --page")
    limit = asked["limit"]
    if ctx.get_parameter_source("limit") in (click.core.ParameterSource.DEFAULT, None):
        limit = FEED_SIZE  # as the web page's feed
    # Newest first unless sorted otherwise, ranked by words (no mode), no facets.
    feed = {
        name: value for name, value in asked.items() if name not in ("mode", "semantic_weight", "facets", "facet_size")
    }
    request = SearchRequest.make(
        query or "", **{**feed, "sort": asked["sort"] or "newest", "limit": limit}, with_snippets=False
    )
    results = open_or_build(index_dir).run(request)
    filters, exact, sort = request.filters, asked["exact"], asked["sort"]
    pairs = [("q", query)] if query else []
    pairs += [(facet.name, v.text) for facet in FACETS for v in filters.values(facet.name)]
    pairs += [(d.text.split(" ", 1)[0], d.text.split(" ", 1)[1]) for d in filters.dates]
    if exact:
        pairs.append(("exact", "1"))
    write_output(search_feed(results.hits, pairs, base_url=base_url, sort=sort or "newest"))


def _export_all(query: str | None, asked: dict[str, Any], index_dir: Path, output_format: str) -> None:
    """``search --all``: every hit up to the export cap; says on stderr when the cap cut the set."""
    ctx = click.get_current_context()
    if output_format not in EXPORT_FORMATS:
        raise click.UsageError(f"--all exports with --format {', '.join(EXPORT_FORMATS)}, not {output_format}")
    paging = {"page": "--page", "limit": "--limit", "facet_names": "--facets", "facet_size": "--facet-size"}
    given = [
        option
        for name, option in paging.items()
        if ctx.get_parameter_source(name) not in (click.core.ParameterSource.DEFAULT, None)
    ]
    if given:
        raise click.UsageError(f"--all exports every hit: {', '.join(given)} cannot be given with it")
    from searchengine import export
    from searchengine.request import SearchRequest

    request = SearchRequest.make_export(
        query or "", cap=limits.EXPORT_LIMIT, **{name: value for name, value in asked.items() if parameter(name).export}
    )
    results = open_or_build(index_dir).run(request)
    if results.corrected:
        click.echo(
            f"Note: exported the hits of {results.corrected!r}, a correction of {results.query!r} "
            "(--exact exports the query as typed)",
            err=True,
        )
    for note in results.notes:
        click.echo(f"Note: {note}", err=True)
    write_output(export.render(output_format, export.rows(results.hits)))
    if results.total > len(results.hits):
        click.echo(
            f"Exported the first {len(results.hits):,} of {counted(results.total, 'hit')}: an export "
            f"holds at most {limits.EXPORT_LIMIT:,}; narrow the search with filters for the rest",
            err=True,
        )


@main.command()
@click.argument("record_ids", metavar="[ID_OR_DOI]...", nargs=-1)
@click.option(
    "--ids-from",
    "ids_from",
    type=click.File("rb"),
    default=None,
    help="Read ids and DOIs from this file, one a line ('-': standard input); blank lines "
    f"and lines starting with # are skipped. At most {MAX_LOOKUP:,} in all.",
)
@index_dir_option
@json_option
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "bibtex", "ris"]),
    default=None,
    help="Output format (default: text; --json is short for --format json).",
)
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
        line = data[: exc.start].count(b"\n") + 1
        raise click.BadParameter(
            f"{stream.name}, line {line}: not UTF-8 text ({exc.reason} at byte {exc.start})", param_hint="--ids-from"
        ) from None
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


@main.command()
@click.argument("record_ids", metavar="RECORD_ID...", nargs=-1, required=True)
@limit_option
@index_dir_option
@json_option
@format_option
def similar(record_ids: tuple[str, ...], limit: int, index_dir: Path, as_json: bool, output_format: str | None) -> None:
    """Print papers on the same topic as RECORD_ID, or as several records
    together (papers like these), the records themselves excluded.

    With record vectors in the index (index --vectors) the papers nearest in
    meaning; else the records' most informative words, ranked by BM25F.
    """
    output_format = output_format_of(as_json, output_format)
    results = open_or_build(index_dir).similar(list(record_ids), limit=limit)
    shown = results.query.removeprefix("similar:").replace(",", ", ")
    emit(results, output_format, f"{counted(results.total, 'paper')} similar to {shown}")
