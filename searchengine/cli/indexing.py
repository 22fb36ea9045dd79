"""The commands that write and inspect an index: ``index``, ``remove``, ``check``, ``stats``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from searchengine.cli import main
from searchengine.cli.common import (
    DEFAULT_CORPUS,
    EXIT_REBUILD,
    counted,
    index_dir_option,
    json_option,
    open_existing,
    print_json,
    report_problems,
    report_without_abstract,
    wait_option,
)
from searchengine.cli.progress import EncodeProgress, progress_bar

if TYPE_CHECKING:
    from searchengine.indexer import IndexSummary

FORMAT_NAMES = "arxiv-oai, arxiv-listing, arxiv-atom, csv, authorpage, jsonl"


def _check_format(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    # Checked here rather than by click.Choice so that other commands need not import the readers.
    if value is None:
        return None
    from searchengine.readers import FORMATS

    if value not in FORMATS:
        raise click.BadParameter(f"{value!r} is not one of {', '.join(FORMATS)}", ctx=ctx, param=param)
    return value


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@index_dir_option
@click.option(
    "--update", is_flag=True, help="Add or replace documents by id in the existing index instead of rebuilding it."
)
@click.option(
    "--format",
    "format_name",
    metavar="NAME",
    callback=_check_format,
    help=f"Read every input in this format instead of detecting it: {FORMAT_NAMES}.",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(1, 64),
    default=None,
    help="Indexing processes, at most 64  [default: one per CPU core]; on a cluster, bulk requests "
    "in flight, at most 16  [default: 4]",
)
@click.option(
    "--memory-mb",
    type=click.IntRange(16),
    default=512,
    show_default=True,
    help="Memory for posting buffers, all processes together (approximate).",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no skipped-record lines; only the summary.")
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="Every skipped record and note on a line of its own  [default: one line per kind, with its count]",
)
@click.option(
    "--vectors/--no-vectors",
    default=None,
    help="Keep record vectors for semantic and hybrid search (needs the semantic extra; "
    "encodes only new and changed records)  [default: as the index does, none for a new one]",
)
@click.option(
    "--vectors-from",
    type=click.Path(path_type=Path),
    default=None,
    metavar="INDEX_DIR",
    help="On a cluster: take the vectors of this embedded index (built with --vectors) for records "
    "with the same id and text instead of encoding them again; implies --vectors.",
)
@wait_option
@json_option
def index(
    paths: tuple[Path, ...],
    index_dir: Path,
    update: bool,
    format_name: str | None,
    jobs: int | None,
    memory_mb: int,
    quiet: bool,
    verbose: bool,
    vectors: bool | None,
    vectors_from: Path | None,
    wait: float,
    as_json: bool,
) -> None:
    """Build a new index from PATHS (files or folders; default: corpus/).

    The new index is written beside the old one and replaces it only when
    complete. With --update, documents are added to (or replace, by id) those
    already indexed. Records that cannot be read are reported as
    file:line: reason and skipped: one line per kind of problem with its
    count (--verbose: every one).
    """
    from searchengine.indexer import build_index, update_index

    if vectors_from is not None and vectors is False:
        raise click.UsageError("--no-vectors and --vectors-from contradict each other")
    paths = paths or (Path(DEFAULT_CORPUS),)
    bar = progress_bar(quiet, paths)
    run_index = update_index if update else build_index
    encoding = None if quiet else EncodeProgress(sys.stderr, bar)
    try:
        summary = run_index(
            paths,
            index_dir,
            format=format_name,
            lock_timeout=wait,
            jobs=jobs,
            memory_mb=memory_mb,
            progress=bar,
            vectors=vectors,
            on_encode=encoding,
            vectors_from=vectors_from,
        )
    except KeyboardInterrupt:
        # The new generation (or cluster index) was thrown away on the way out.
        for shown in (bar, encoding):
            if shown is not None:
                shown.close()
        kept = (
            "; the vectors encoded so far are kept, and the same command goes on from them"
            if encoding is not None and encoding.started
            else ""
        )
        click.echo(f"\nInterrupted: nothing was written; the previous index in {index_dir} is intact{kept}", err=True)
        sys.exit(130)
    finally:
        for shown in (bar, encoding):
            if shown is not None:
                shown.close()
    if not quiet:
        report_problems(summary.problems, verbose=verbose)
        report_without_abstract(summary)
    if as_json:
        print_json(summary.to_dict())
        _fail_when_partial(summary, quiet=True)
        return
    merged = f", {counted(summary.merged, 'duplicate')} merged" if summary.merged else ""
    if summary.vectors:
        merged += f", {summary.encoded:,} encoded"
    rate = f", {summary.records / summary.seconds:,.0f} records/s" if summary.seconds > 0 else ""
    read = f"{counted(summary.records, 'record')} read{merged}"
    if update:
        click.echo(
            f"Updated {summary.index_dir}: {summary.added:,} added, {summary.replaced:,} replaced, "
            f"{summary.skipped:,} skipped ({read}); "
            f"{counted(summary.documents, 'document')} in {summary.seconds:.2f} s{rate}"
        )
    else:
        click.echo(
            f"Indexed {counted(summary.documents, 'document')} into {summary.index_dir} "
            f"({read}, {summary.skipped:,} skipped) in {summary.seconds:.2f} s{rate}"
        )
    _fail_when_partial(summary, quiet=False, listed=not quiet)


def _fail_when_partial(summary: IndexSummary, quiet: bool, listed: bool = True) -> None:
    """Exit with status 1 when the run is a partial failure: an input file
    ended early (an update keeps what was read before the cut), or the index
    refused records (a cluster's mapping error), which are not in it."""
    if not summary.cut_off and not summary.refused:
        return
    if not quiet:
        for problem in summary.cut_off:
            click.echo(
                f"Error: {problem.path} ended early"
                + (f", in line {problem.line:,}" if problem.line else "")
                + ": the records after it are missing from the index",
                err=True,
            )
        if summary.refused:
            click.echo(
                f"Error: the index refused {counted(len(summary.refused), 'record')} "
                + ("(listed above): " if listed else "(index without --quiet lists them): ")
                + f"{'it is' if len(summary.refused) == 1 else 'they are'} not in the index",
                err=True,
            )
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
        print_json(summary.to_dict())
        return
    click.echo(
        f"Removed {counted(summary.removed, 'document')} from {summary.index_dir}; "
        f"{counted(summary.documents, 'document')} in {summary.seconds:.2f} s"
    )


@main.command()
@index_dir_option
@json_option
def stats(index_dir: Path, as_json: bool) -> None:
    """Print document counts: all, without a submitted date, by year and by category."""
    index = open_existing(index_dir)
    data = index.stats()
    if as_json:
        print_json(data)
        return
    click.echo(f"{counted(data['documents'], 'document')} in {index.engine.location}")
    if data["undated"]:
        whole = " (none has one: date filters find nothing)" if data["undated"] == data["documents"] else ""
        click.echo(f"{counted(data['undated'], 'document')} without a submitted date{whole}")
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
        print_json(report.to_dict())
    else:
        for part in report.parts:
            if part.problem:
                click.echo(f"  {report.version}/{part.name}: {part.problem}", err=True)
        if report.problem is None:
            size = sum(part.size or 0 for part in report.parts)
            copies = len(report.parts)
            what = (
                f"{counted(copies, 'file')}, {size / 1e6:,.1f} MB"
                if report.engine == "whoosh"
                else f"{copies:,} shard {'copy' if copies == 1 else 'copies'}"
            )
            click.echo(
                f"{report.location}: sound ({report.version}: {what}, {counted(report.documents or 0, 'document')})"
            )
    if report.problem is not None:
        if not as_json:
            click.echo(f"Error: {report.problem}", err=True)
        sys.exit(EXIT_REBUILD)
