"""The ``searchengine`` command: a thin view over :mod:`searchengine.search`.

Exit status: 0 success, 1 error (message on stderr), 2 usage error.
Heavy modules are imported inside the commands so that start-up stays fast.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from searchengine import limits, settings
from searchengine.export import FORMATS
from searchengine.facets import FACET_NAMES
from searchengine.limits import LISTING_SORTS, MAX_DEPTH, MAX_LIMIT, MAX_LOOKUP, SORTS
from searchengine.semantic import MODES
from searchengine.results import shown_authors

# What search and similar print: a table, JSON, or an export format.
EXPORT_FORMATS = tuple(FORMATS)
OUTPUT_FORMATS = ("table", "json", *EXPORT_FORMATS)
#: search also prints its hits as an Atom feed (searchengine.feeds).
SEARCH_FORMATS = (*OUTPUT_FORMATS, "atom")

DEFAULT_CORPUS = "corpus"


def _index_location(ctx: click.Context, param: click.Parameter, value: str) -> Path | str:
    """The location as the engines read it (:func:`searchengine.engines.check_location`);
    a bad one is a usage error."""
    from searchengine.engines import check_location
    from searchengine.errors import SearchEngineError

    try:
        return check_location(value)
    except SearchEngineError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None


index_dir_option = click.option(
    "--index",
    "--index-dir",
    "index_dir",
    envvar="SEARCHENGINE_INDEX",
    default="index",
    show_default=True,
    metavar="LOCATION",
    callback=_index_location,
    help="Index folder, or an OpenSearch index URL http(s)://[user:password@]host:port[,host:port...]/NAME "
         "(or set SEARCHENGINE_INDEX).",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")


#: Exit status of a command that met an index it cannot trust: damaged, or
#: written by another version (either way: rebuild it).
EXIT_REBUILD = 3


class Group(click.Group):
    """Turns the package's errors into one-line messages with exit status 1
    (:data:`EXIT_REBUILD` for an index to rebuild)."""

    def invoke(self, ctx: click.Context):
        from searchengine.errors import IndexDamagedError, SearchEngineError

        try:
            return super().invoke(ctx)
        except SearchEngineError as exc:
            _report_problems(getattr(exc, "problems", []))
            error = click.ClickException(str(exc))
            if isinstance(exc, IndexDamagedError):
                error.exit_code = EXIT_REBUILD
            raise error from None
        except BrokenPipeError:
            # The reader went away (`| head`): stop quietly with 128 + SIGPIPE,
            # as Unix tools do (click's own handling would exit 1).
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise click.exceptions.Exit(141) from None
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            raise click.ClickException(f"{where}{exc.strerror or exc}") from None


def _count(number: int, noun: str) -> str:
    """``1 document``, ``2 documents``."""
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _print_json(data) -> None:
    """``data`` as indented JSON: UTF-8 text where the output holds it, else
    ``\\u`` escapes, so that no character of the data becomes ``?``."""
    text = json.dumps(data, ensure_ascii=False, indent=2)
    try:
        text.encode(getattr(sys.stdout, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        text = json.dumps(data, ensure_ascii=True, indent=2)
    click.echo(text)


def _report_without_abstract(summary) -> None:
    if summary.without_abstract:
        count = summary.without_abstract
        click.echo(f"Note: {_count(count, 'record')} {'has' if count == 1 else 'have'} no abstract; "
                   f"{'it is' if count == 1 else 'they are'} found by title and authors only", err=True)


def _report_problems(problems, limit: int = 10) -> None:
    for problem in problems[:limit]:
        click.echo(f"{problem}", err=True)
    if len(problems) > limit:
        click.echo(f"... and {len(problems) - limit} more", err=True)


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="searchengine")
def main() -> None:
    """Ranked full-text search over titles and abstracts of scientific papers."""


FORMAT_NAMES = "arxiv-oai, arxiv-listing, arxiv-atom, csv, authorpage, jsonl"


def _check_format(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    # Checked here rather than by click.Choice so that other commands need not import the readers.
    if value is None:
        return None
    from searchengine.readers import FORMATS

    if value not in FORMATS:
        raise click.BadParameter(f"{value!r} is not one of {', '.join(FORMATS)}", ctx=ctx, param=param)
    return value


wait_option = click.option(
    "--wait", default=30.0, show_default=True, type=click.FloatRange(0),
    help="Seconds to wait while another process writes the index.",
)


class IndexProgress:
    """The progress bar of ``index`` on ``stream``: while reading, a percentage,
    the ETA and the records read, the input's size known (bytes of the files as
    on disk, a ``.gz`` file's compressed bytes: :data:`searchengine.readers.POSITION`);
    without a size, the records read and their rate. Then the commit phase,
    its elapsed time kept current by a timer thread (started only then, after
    the indexing workers were forked)."""

    # Records between two looks at the read position (a look is a tell()).
    EVERY = 64

    def __init__(self, total_bytes: int | None, stream) -> None:
        from tqdm import tqdm

        from searchengine.readers import POSITION

        tqdm.monitor_interval = 0  # no monitor thread: indexing forks worker processes
        self.records = 0
        self.start = POSITION.total()  # what this process read before (a library user's earlier runs)
        self.sized = bool(total_bytes)
        if self.sized:
            self.bar = tqdm(total=total_bytes, unit="B", unit_scale=True, unit_divisor=1024, file=stream,
                            mininterval=0.5, desc="Reading", leave=False,
                            bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} "
                                       "[{elapsed}, ETA {remaining}{postfix}]")
        else:
            self.bar = tqdm(unit=" records", unit_scale=True, file=stream, mininterval=0.5,
                            desc="Reading", leave=False)
        self._stop = None

    def __call__(self, records: int) -> None:
        """The indexer's progress callback: ``records`` more read, or 0 when the commit begins."""
        if records:
            self.records += records
            if not self.sized:
                self.bar.update(records)
            elif self.records % self.EVERY < records:
                from searchengine.readers import POSITION

                self.bar.set_postfix_str(f"{self.records:,} records", refresh=False)
                self.bar.update(min(POSITION.total() - self.start, self.bar.total) - self.bar.n)
            return
        self._commit()

    def _commit(self) -> None:
        import threading

        # No share of the commit can be measured from outside Whoosh or the cluster: its time so far is shown.
        self.bar.bar_format = "{desc}: {elapsed}{postfix}"
        self.bar.set_description_str("Committing", refresh=False)
        self.bar.set_postfix_str(f"{self.records:,} records read; merging and writing the index", refresh=True)
        self._stop = threading.Event()
        ticker = threading.Thread(target=self._tick, name="searchengine-progress", daemon=True)
        ticker.start()

    def _tick(self) -> None:
        while not self._stop.wait(0.5):
            self.bar.refresh()

    def close(self) -> None:
        """Stop the timer and clear the bar."""
        if self._stop is not None:
            self._stop.set()
        self.bar.close()


class EncodeProgress:
    """Progress of encoding vectors (after the index is written): a bar with
    the ETA on a terminal, else a line every :attr:`EVERY_SECONDS` seconds;
    ``bar``, the reading bar, is closed when encoding starts."""

    EVERY_SECONDS = 30.0

    def __init__(self, stream, bar: IndexProgress | None) -> None:
        self.stream, self.reading = stream, bar
        self.bar = None
        self.started = self.said = 0.0

    def __call__(self, done: int, total: int) -> None:
        """The writer's callback: ``done`` of ``total`` records encoded."""
        import time

        now = time.monotonic()
        if self.started == 0.0:
            self.started = self.said = now
            if self.reading is not None:
                self.reading.close()
            if self.stream.isatty():
                from tqdm import tqdm

                self.bar = tqdm(total=total, unit=" records", file=self.stream, mininterval=0.5, leave=False,
                                desc="Encoding vectors", unit_scale=True, smoothing=0.1)
            else:
                click.echo(f"Encoding vectors of {total:,} records", err=True)
        if self.bar is not None:
            self.bar.update(done - self.bar.n)
        elif now - self.said >= self.EVERY_SECONDS and done:
            self.said = now
            left = (now - self.started) / done * (total - done)
            click.echo(f"  {done:,} of {total:,} encoded, about {left / 60:.0f} min left", err=True)

    def close(self) -> None:
        """Clear the bar."""
        if self.bar is not None:
            self.bar.close()


def _progress_bar(quiet: bool, paths) -> IndexProgress | None:
    """The progress bar on stderr when it is a terminal, else nothing."""
    if quiet or not sys.stderr.isatty():
        return None
    from searchengine.indexer import input_size

    return IndexProgress(input_size(paths), sys.stderr)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@index_dir_option
@click.option("--update", is_flag=True, help="Add or replace documents by id in the existing index instead of rebuilding it.")
@click.option("--format", "format_name", metavar="NAME", callback=_check_format,
              help=f"Read every input in this format instead of detecting it: {FORMAT_NAMES}.")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=None, help="Indexing processes, at most 64  [default: one per CPU core]; on a cluster, bulk requests "
                   "in flight, at most 16  [default: 4]")
@click.option("--memory-mb", type=click.IntRange(16), default=512, show_default=True, help="Memory for posting buffers, all processes together (approximate).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no skipped-record lines; only the summary.")
@click.option("--vectors/--no-vectors", default=None,
              help="Keep record vectors for semantic and hybrid search (needs the semantic extra; "
                   "encodes only new and changed records)  [default: as the index does, none for a new one]")
@wait_option
@json_option
def index(paths: tuple[Path, ...], index_dir: Path, update: bool, format_name: str | None, jobs: int | None,
          memory_mb: int, quiet: bool, vectors: bool | None, wait: float, as_json: bool) -> None:
    """Build a new index from PATHS (files or folders; default: corpus/).

    The new index is written beside the old one and replaces it only when
    complete. With --update, documents are added to (or replace, by id) those
    already indexed. Records that cannot be read are reported as
    file:line: reason and skipped.
    """
    from searchengine.indexer import build_index, update_index

    paths = paths or (Path(DEFAULT_CORPUS),)
    bar = _progress_bar(quiet, paths)
    run_index = update_index if update else build_index
    encoding = None if quiet else EncodeProgress(sys.stderr, bar)
    try:
        summary = run_index(paths, index_dir, format=format_name, lock_timeout=wait, jobs=jobs,
                            memory_mb=memory_mb, progress=bar, vectors=vectors, on_encode=encoding)
    except KeyboardInterrupt:
        # The new generation (or cluster index) was thrown away on the way out.
        for shown in (bar, encoding):
            if shown is not None:
                shown.close()
        kept = ("; the vectors encoded so far are kept, and the same command goes on from them"
                if encoding is not None and encoding.started else "")
        click.echo(f"\nInterrupted: nothing was written; the previous index in {index_dir} is intact{kept}",
                   err=True)
        sys.exit(130)
    finally:
        for shown in (bar, encoding):
            if shown is not None:
                shown.close()
    if not quiet:
        _report_problems(summary.problems)
        _report_without_abstract(summary)
    if as_json:
        _print_json(summary.to_dict())
        _fail_when_cut_off(summary, quiet=True)
        return
    merged = f", {_count(summary.merged, 'duplicate')} merged" if summary.merged else ""
    if summary.vectors:
        merged += f", {summary.encoded:,} encoded"
    rate = f", {summary.records / summary.seconds:,.0f} records/s" if summary.seconds > 0 else ""
    read = f"{_count(summary.records, 'record')} read{merged}"
    if update:
        click.echo(
            f"Updated {summary.index_dir}: {summary.added:,} added, {summary.replaced:,} replaced, "
            f"{summary.skipped:,} skipped ({read}); "
            f"{_count(summary.documents, 'document')} in {summary.seconds:.2f} s{rate}"
        )
    else:
        click.echo(
            f"Indexed {_count(summary.documents, 'document')} into {summary.index_dir} "
            f"({read}, {summary.skipped:,} skipped) in {summary.seconds:.2f} s{rate}"
        )
    _fail_when_cut_off(summary, quiet=False)


def _fail_when_cut_off(summary, quiet: bool) -> None:
    """Exit with status 1 when an input file ended early (a truncated ``.gz``):
    the index holds what was read before the cut, not the whole input."""
    if not summary.cut_off:
        return
    if not quiet:
        for problem in summary.cut_off:
            click.echo(f"Error: {problem.path} ended early, in line {problem.line:,}: "
                       "the records after it are missing from the index", err=True)
    sys.exit(1)


@main.command()
@click.argument("ids", nargs=-1, required=True)
@index_dir_option
@wait_option
@json_option
def remove(ids: tuple[str, ...], index_dir: Path, wait: float, as_json: bool) -> None:
    """Delete the documents with the given IDS from the index.

    An arXiv version suffix is ignored (2101.00003v2 removes 2101.00003).
    Ids the index does not hold are reported on stderr; that is not an error.
    """
    from searchengine.indexer import remove_documents

    summary = remove_documents(ids, index_dir, lock_timeout=wait)
    for doc_id in summary.not_found:
        click.echo(f"{doc_id}: not in the index", err=True)
    if as_json:
        _print_json(summary.to_dict())
        return
    click.echo(
        f"Removed {_count(summary.removed, 'document')} from {summary.index_dir}; "
        f"{_count(summary.documents, 'document')} in {summary.seconds:.2f} s"
    )


def _open_existing(index_dir: Path):
    """Open the index; a missing one is named as it was given, with the command that builds it.

    Raises:
        IndexNotFoundError: no index at ``index_dir``.
    """
    from click.core import ParameterSource

    from searchengine.errors import IndexNotFoundError
    from searchengine.search import open_index

    try:
        return open_index(index_dir)
    except IndexNotFoundError:
        source = click.get_current_context().get_parameter_source("index_dir")
        if source in (ParameterSource.DEFAULT, None):
            raise IndexNotFoundError(f"{index_dir}: no index here; build one with 'searchengine index PATHS'") \
                from None
        given = "SEARCHENGINE_INDEX" if source == ParameterSource.ENVIRONMENT else _option_typed(
            ("--index", "--index-dir"), "--index-dir")
        option = given if given.startswith("--") else "--index-dir"
        raise IndexNotFoundError(f"{index_dir}: no index here (given by {given}); build one with "
                                 f"'searchengine index PATHS {option} {index_dir}'") from None


def _option_typed(names: tuple[str, ...], default: str) -> str:
    """Which of an option's ``names`` the command line used (the last one
    given), to name it as the user wrote it; ``default`` when none is seen."""
    typed = [arg.split("=", 1)[0] for arg in sys.argv[1:] if arg.split("=", 1)[0] in names]
    return typed[-1] if typed else default


def _open_or_build(index_dir: Path):
    """Open the index; on first use of the default index, build it from the bundled corpus.

    An index directory named by ``--index-dir`` or ``SEARCHENGINE_INDEX`` is
    never built implicitly: a mistyped name is an error, not a new index.
    """
    from click.core import ParameterSource

    from searchengine.errors import IndexNotFoundError
    from searchengine.search import open_index

    source = click.get_current_context().get_parameter_source("index_dir")
    if source not in (ParameterSource.DEFAULT, None):
        return _open_existing(index_dir)
    if not Path(DEFAULT_CORPUS).exists() and not Path(index_dir).exists():
        raise IndexNotFoundError(
            f"no index in {index_dir}/ and no {DEFAULT_CORPUS}/ folder here to build one from: build one with "
            "'searchengine index PATHS' (files or folders of papers), or name one with --index-dir LOCATION")

    def report(summary) -> None:
        if summary is None:
            click.echo(f"No index in {index_dir}/; building it from {DEFAULT_CORPUS}/ ...", err=True)
        else:
            _report_problems(summary.problems)
            click.echo(f"Indexed {_count(summary.documents, 'document')} in {summary.seconds:.2f} s", err=True)

    return open_index(index_dir, build_from=[Path(DEFAULT_CORPUS)], on_build=report)


def _marked(text: str, matches) -> str:
    """``text`` with the matched spans in bold (plain when not on a terminal)."""
    parts, position = [], 0
    for start, end in matches:
        parts.append(text[position:start])
        parts.append(click.style(text[start:end], bold=True))
        position = end
    parts.append(text[position:])
    return "".join(parts)


def _render_hits(results, first_rank: int, scored: bool = True) -> None:
    for rank, hit in enumerate(results.hits, start=first_rank):
        year = hit.submitted.isoformat() if hit.submitted else hit.year if hit.year is not None else "----"
        category = hit.categories[0] if hit.categories else "-"
        names, more = shown_authors(hit.authors)
        authors = (", ".join(names) + (f" … and {more:,} more" if more else "")) or "(no authors)"
        click.echo(f"\n{rank:>3}. {_marked(hit.title, hit.title_matches)}")
        click.echo(f"     {year} · {category} · {authors}")
        click.echo(f"     id {hit.id}" + (f" · score {hit.score:.2f}" if scored else ""))
        if hit.snippet:
            click.echo(f"     {_marked(hit.snippet, hit.snippet_matches)}")
    pages, number = results.page.get("pages", 0), results.page.get("number", 1)
    if number > pages and number > 1:
        click.echo(f"\nPage {number} is past the end: there {'is' if pages == 1 else 'are'} {_count(pages, 'page')}")
    elif pages > 1:
        size = results.page.get("size", 0)
        reach = (f" (paging reaches the first {pages * size:,} of {results.total:,} hits; filters narrow the rest)"
                 if pages * size < results.total else "")
        click.echo(f"\nPage {number} of {pages}{reach}")


def _render_facets(results) -> None:
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


def _render_histogram(histogram) -> None:
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


def _emit(results, output_format: str, heading: str, scored: bool = True) -> None:
    """Print results as a table (with ``heading`` and facets), JSON, or an export format."""
    first_rank = (results.page["number"] - 1) * results.page["size"] + 1
    if output_format == "json":
        _print_json(results.to_dict())
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

        _write(export.render(output_format, export.rows(results.hits), first_rank=first_rank))


def _write(text: str) -> None:
    """Write an export as it is: bytes, so that RIS's CR LF line ends are never translated.

    Raises:
        BrokenPipeError: the reader went away; a buffered write that the
            closed pipe cut short returns a short count instead of raising,
            which would end the command with status 0 and half a file.
    """
    import errno

    sys.stdout.flush()
    stream = click.get_binary_stream("stdout")
    view = memoryview(text.encode("utf-8"))
    while view:
        written = stream.write(view)
        if not written:
            raise BrokenPipeError(errno.EPIPE, "the reader of the output went away")
        view = view[written:]
    stream.flush()


def _output_format(as_json: bool, output_format: str | None) -> str:
    if as_json and output_format not in (None, "json"):
        raise click.UsageError(f"--json and --format {output_format} contradict each other")
    return "json" if as_json else (output_format or "table")


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
    output_format = _output_format(as_json, output_format)
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
    results = _open_or_build(index_dir).run(request)
    named = (("year", year), ("author", [a for a in author if not a.first]),
             ("first author", [a for a in author if a.first]), ("category", category))
    described = [f"{label} {' or '.join(v.text.removeprefix('^') for v in values)}"
                 for label, values in named if values]
    described += [d.text for d in days]  # "since 2025-03"
    if primary_only and category:
        described.append("primary category only")
    shown = _count(results.total, "hit")
    asked = f" for {(results.corrected or results.query)!r}" if results.query else ""
    heading = shown + asked + ((" with " + ", ".join(described)) if described else "")
    if lists_all:
        heading = f"{_count(results.total, 'paper')}, {LISTING_SORTS[sort]}"
    # Hits listed by a filter alone (no query text, or a category code typed as one) have no score.
    _emit(results, output_format, heading, scored=any(hit.score for hit in results.hits))


def _print_feed(query, filters, sort, page: int, limit: int, exact: bool, index_dir: Path, base_url: str) -> None:
    """``search --format atom``: the web page's feed of the same search (newest
    first unless --sort is given; 50 entries unless --limit is), linking to ``base_url``."""
    from urllib.parse import urlencode, urlsplit

    from searchengine.export import rows
    from searchengine.feeds import FEED_SIZE, atom_feed, feed_title
    from searchengine.request import SearchRequest
    from web.app import id_path  # the web page's record URLs, which the feed links to

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
    root = base_url.rstrip("/")
    request = SearchRequest(query or "", filters, sort or "newest", page, limit, with_snippets=False, exact=exact)
    results = _open_or_build(index_dir).run(request)
    pairs = [("q", query)] if query else []
    pairs += [("year", v.text) for v in filters.years] + [("author", v.text) for v in filters.authors]
    pairs += [("category", v.text) for v in filters.categories]
    pairs += [(d.text.split(" ", 1)[0], d.text.split(" ", 1)[1]) for d in filters.dates]
    if exact:
        pairs.append(("exact", "1"))
    _write(atom_feed(rows(results.hits), title=feed_title(pairs),
                     self_url=f"{root}/feed.atom" + (f"?{urlencode(pairs)}" if pairs else ""),
                     page_url=f"{root}/?{urlencode(pairs + [('sort', sort or 'newest')])}",
                     record_url=lambda record_id: f"{root}/records/{id_path(record_id)}"))


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
    results = _open_or_build(index_dir).run(request)
    if results.corrected:
        click.echo(f"Note: exported the hits of {results.corrected!r}, a correction of {results.query!r} "
                   "(--exact exports the query as typed)", err=True)
    for note in results.notes:
        click.echo(f"Note: {note}", err=True)
    _write(export.render(output_format, export.rows(results.hits)))
    if results.total > len(results.hits):
        click.echo(f"Exported the first {len(results.hits):,} of {_count(results.total, 'hit')}: an export "
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
    output_format = _output_format(as_json, output_format)
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
    found, missing = _open_or_build(index_dir).documents(wanted)
    if output_format == "json":
        if found:
            _print_json(found[0] if len(record_ids) == 1 and ids_from is None else found)
    elif output_format in EXPORT_FORMATS:
        from searchengine import export

        if found:
            _write(export.render(output_format, found))
    else:
        for number, record in enumerate(found):
            if number:
                click.echo("\n" + "-" * 40 + "\n")
            _echo_record(record)
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


def _echo_record(record: dict) -> None:
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
    if record.get("submitted"):
        parts.append(f"Submitted {shown(from_iso(record['submitted']))}")
    if record.get("updated"):
        parts.append(f"last updated {shown(from_iso(record['updated']))}")
    if record.get("versions"):
        parts.append("versions " + ", ".join(f"v{v['version']} {shown(from_iso(v['date']))}"
                                              for v in record["versions"]))
    text = "; ".join(parts)
    return text[:1].upper() + text[1:]


#: The lines of links and identifiers `show` prints, in order, when a record has them.
RECORD_LINE_LABELS = (("Abstract page", "url"), ("PDF", "pdf_url"), ("DOI", "doi"), ("arXiv DOI", "arxiv_doi"),
                      ("Journal", "journal_ref"), ("Comments", "comments"), ("License", "license"))


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
    output_format = _output_format(as_json, output_format)
    results = _open_or_build(index_dir).similar(list(record_ids), limit=limit)
    shown = results.query.removeprefix("similar:").replace(",", ", ")
    _emit(results, output_format, f"{_count(results.total, 'paper')} similar to {shown}")


@main.command()
@index_dir_option
@json_option
def stats(index_dir: Path, as_json: bool) -> None:
    """Print the number of documents and counts by year and category."""
    index = _open_existing(index_dir)
    data = index.stats()
    if as_json:
        _print_json(data)
        return
    click.echo(f"{_count(data['documents'], 'document')} in {index.engine.location}")
    width = max([10, *(len(c) for c in data["categories"])])
    click.echo("\nYears:")
    for year, count in data["years"].items():
        click.echo(f"  {year:<{width}} {count:>6}")
    click.echo("\nCategories:")
    for category, count in data["categories"].items():
        click.echo(f"  {category:<{width}} {count:>6}")


@main.command()
@index_dir_option
@json_option
def check(index_dir: Path, as_json: bool) -> None:
    """Verify the whole index: every file against its checksum and every document read.

    Exit status 0 when the index is sound, 3 when it is damaged (rebuild it).
    On a cluster: the layout, the health and every shard copy.
    """
    from searchengine.engines import check_index

    report = check_index(index_dir)
    if as_json:
        _print_json(report.to_dict())
    else:
        for part in report.parts:
            if part.problem:
                click.echo(f"  {report.version}/{part.name}: {part.problem}", err=True)
        if report.problem is None:
            size = sum(part.size or 0 for part in report.parts)
            copies = len(report.parts)
            what = (f"{_count(copies, 'file')}, {size / 1e6:,.1f} MB" if report.engine == "whoosh"
                    else f"{copies:,} shard {'copy' if copies == 1 else 'copies'}")
            click.echo(f"{report.location}: sound ({report.version}: {what}, "
                       f"{_count(report.documents or 0, 'document')})")
    if report.problem is not None:
        if not as_json:
            click.echo(f"Error: {report.problem}", err=True)
        sys.exit(EXIT_REBUILD)


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0: every interface).")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="TCP port (0: any free port).")
@index_dir_option
@click.option("--threads", default=4, show_default=True, type=click.IntRange(1, 64),
              help="Worker threads per process (searches hold the GIL: more threads do not add CPU).")
@click.option("--workers", default=None, type=click.IntRange(1, 64),
              help="Server processes [default: one per CPU core], sharing the port.")
@click.option("--debug", is_flag=True, help="Flask's development server with reloader and debugger (never expose it).")
def serve(host: str, port: int, index_dir: Path, threads: int, workers: int | None, debug: bool) -> None:
    """Serve the search page and the JSON API over HTTP.

    One waitress process per CPU core by default (searching is CPU-bound
    Python: one process uses one core), sharing one port; --workers 1 serves
    from this process. A rebuilt index is picked up without a restart. Builds the
    index from corpus/ first when there is none.
    """
    from web.serve import serve as run_server

    index = _open_or_build(index_dir)
    run_server(index, index_dir, host=host, port=port, threads=threads,
               workers=workers or os.cpu_count() or 1, debug=debug)


@main.command("eval")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--mode", "-m", type=click.Choice(MODES, case_sensitive=False), default="lexical", show_default=True,
              help="Rank by words, by meaning or both; semantic and hybrid encode the collection's "
                   "records first (needs the semantic extra; vectors are kept for the next run)")
@click.option("--index", "index", metavar="URL", default=None,
              help="Build the collection into this cluster index (http(s)://HOST:PORT/NAME, replacing what it "
                   "holds) and measure the cluster engine; default: a temporary folder")
@json_option
def eval_(path: Path, mode: str, index: str | None, as_json: bool) -> None:
    """Measure ranking quality on the test collection in folder PATH.

    PATH holds Cranfield's classic files (cran.all.1400, cran.qry, cranqrel)
    or the BEIR layout (corpus.jsonl, queries.jsonl, qrels/test.tsv). The
    documents are indexed in a temporary directory and every judged query
    runs through the same search as 'searchengine search'.
    """
    from searchengine.evaluation import evaluate

    result = evaluate(path, mode=mode, index=index)
    if as_json:
        click.echo(json.dumps(result))
        return
    click.echo(f"{path}: {result['queries']} judged queries, {mode} mode")
    for name, label in (("ndcg@10", "nDCG@10"), ("map", "MAP"), ("p@10", "P@10"), ("recall@100", "Recall@100")):
        click.echo(f"  {label:<11} {result[name]:.4f}")


def _replace_unencodable() -> None:
    """Text a stream's encoding cannot hold (a ``Š`` to a Latin-1 terminal or
    ``PYTHONIOENCODING=latin-1`` pipe) is printed as ``?``, not an error."""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "").replace("_", "")
        if encoding not in ("utf8", "utf8sig") and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")


def run() -> None:
    """Console-script entry point; never shows a traceback unless asked to."""
    _replace_unencodable()
    try:
        main(prog_name="searchengine")
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, as Unix tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(141)
    except Exception as exc:  # a bug: say so in one line, keep details on demand
        if settings.debug():
            raise
        click.echo(f"Error: internal error: {type(exc).__name__}: {exc} (set SEARCHENGINE_DEBUG=1 for details)", err=True)
        sys.exit(1)
