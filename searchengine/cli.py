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

DEFAULT_CORPUS = "corpus"

index_dir_option = click.option(
    "--index-dir",
    envvar="SEARCHENGINE_INDEX",
    default="index",
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Index directory (or set SEARCHENGINE_INDEX).",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")


class Group(click.Group):
    """Turns the package's errors into one-line messages with exit status 1."""

    def invoke(self, ctx: click.Context):
        from searchengine.errors import SearchEngineError

        try:
            return super().invoke(ctx)
        except SearchEngineError as exc:
            raise click.ClickException(str(exc)) from None
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            raise click.ClickException(f"{where}{exc.strerror or exc}") from None


def _print_json(data) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def _report_problems(problems, limit: int = 10) -> None:
    for problem in problems[:limit]:
        click.echo(f"{problem}", err=True)
    if len(problems) > limit:
        click.echo(f"... and {len(problems) - limit} more skipped records", err=True)


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


def _progress_bar(quiet: bool):
    """A records/s progress bar on stderr when it is a terminal, else nothing."""
    if quiet or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    tqdm.monitor_interval = 0  # no monitor thread: indexing forks worker processes
    return tqdm(unit=" records", unit_scale=True, file=sys.stderr, mininterval=0.5,
                desc="Indexing", leave=False)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@index_dir_option
@click.option("--update", is_flag=True, help="Add or replace documents by id in the existing index instead of rebuilding it.")
@click.option("--format", "format_name", metavar="NAME", callback=_check_format,
              help=f"Read every input in this format instead of detecting it: {FORMAT_NAMES}.")
@click.option("--jobs", "-j", type=click.IntRange(1), default=None, help="Indexing processes  [default: one per CPU core]")
@click.option("--memory-mb", type=click.IntRange(16), default=512, show_default=True, help="Memory for posting buffers, all processes together (approximate).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no skipped-record lines; only the summary.")
@wait_option
@json_option
def index(paths: tuple[Path, ...], index_dir: Path, update: bool, format_name: str | None, jobs: int | None,
          memory_mb: int, quiet: bool, wait: float, as_json: bool) -> None:
    """Build a new index from PATHS (files or folders; default: corpus/).

    The new index is written beside the old one and replaces it only when
    complete. With --update, documents are added to (or replace, by id) those
    already indexed. Records that cannot be read are reported as
    file:line: reason and skipped.
    """
    from searchengine.indexer import build_index, update_index

    bar = _progress_bar(quiet)

    def progress(records: int) -> None:
        if records:
            bar.update(records)
        else:
            bar.set_description_str("Committing")

    run_index = update_index if update else build_index
    try:
        summary = run_index(paths or [Path(DEFAULT_CORPUS)], index_dir, format=format_name, lock_timeout=wait,
                            jobs=jobs, memory_mb=memory_mb, progress=progress if bar is not None else None)
    finally:
        if bar is not None:
            bar.close()
    if not quiet:
        _report_problems(summary.problems)
    if as_json:
        _print_json(summary.to_dict())
        return
    merged = f", {summary.merged} duplicates merged" if summary.merged else ""
    rate = f", {summary.records / summary.seconds:,.0f} records/s" if summary.seconds > 0 else ""
    if update:
        click.echo(
            f"Updated {index_dir}: {summary.added} added, {summary.replaced} replaced, "
            f"{summary.skipped} skipped ({summary.records} records read{merged}); "
            f"{summary.documents} documents in {summary.seconds:.2f} s{rate}"
        )
    else:
        click.echo(
            f"Indexed {summary.documents} documents into {index_dir} "
            f"({summary.records} records read{merged}, {summary.skipped} skipped) "
            f"in {summary.seconds:.2f} s{rate}"
        )


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
        f"Removed {summary.removed} document{'s' if summary.removed != 1 else ''} from {index_dir}; "
        f"{summary.documents} documents in {summary.seconds:.2f} s"
    )


def _open_or_build(index_dir: Path):
    """Open the index; on first use, build it from the bundled corpus."""
    from searchengine import store
    from searchengine.search import open_index

    if store.current_generation(index_dir) is None:
        from searchengine.indexer import build_index

        click.echo(f"No index in {index_dir}; building it from {DEFAULT_CORPUS}/ ...", err=True)
        summary = build_index([Path(DEFAULT_CORPUS)], index_dir)
        _report_problems(summary.problems)
        click.echo(f"Indexed {summary.documents} documents in {summary.seconds:.2f} s", err=True)
    return open_index(index_dir)


def _render_hits(results) -> None:
    shown = f"{results.total} hit{'s' if results.total != 1 else ''}"
    click.echo(f"{shown} for {results.query!r} ({results.took_ms:.0f} ms)")
    first = (results.page["number"] - 1) * results.page["size"]
    for rank, hit in enumerate(results.hits, start=first + 1):
        year = hit.year if hit.year is not None else "----"
        category = hit.categories[0] if hit.categories else "-"
        authors = ", ".join(hit.authors) if hit.authors else "(no authors)"
        click.echo(f"\n{rank:>3}. {click.style(hit.title, bold=True)}")
        click.echo(f"     {year} · {category} · {authors}")
        click.echo(f"     id {hit.id} · score {hit.score:.2f}")


@main.command()
@click.argument("query")
@click.option("--limit", "-n", default=10, show_default=True, type=click.IntRange(1, 100), help="Hits per page (at most 100).")
@click.option("--page", "-p", default=1, show_default=True, type=click.IntRange(1), help="Page number, from 1.")
@index_dir_option
@json_option
def search(query: str, limit: int, page: int, index_dir: Path, as_json: bool) -> None:
    """Search the index for QUERY and print ranked hits.

    Every word must match, in the title, abstract or author names. Builds the
    index from corpus/ first when there is none.
    """
    results = _open_or_build(index_dir).search(query, limit=limit, page=page)
    if as_json:
        _print_json(results.to_dict())
    else:
        _render_hits(results)


@main.command()
@index_dir_option
@json_option
def stats(index_dir: Path, as_json: bool) -> None:
    """Print the number of documents and counts by year and category."""
    from searchengine.search import open_index

    data = open_index(index_dir).stats()
    if as_json:
        _print_json(data)
        return
    click.echo(f"{data['documents']} documents in {index_dir}")
    click.echo("\nYears:")
    for year, count in data["years"].items():
        click.echo(f"  {year:<10} {count:>6}")
    click.echo("\nCategories:")
    for category, count in data["categories"].items():
        click.echo(f"  {category:<10} {count:>6}")


def run() -> None:
    """Console-script entry point; never shows a traceback unless asked to."""
    try:
        main(prog_name="searchengine")
    except Exception as exc:  # a bug: say so in one line, keep details on demand
        if os.environ.get("SEARCHENGINE_DEBUG"):
            raise
        click.echo(f"Error: internal error: {type(exc).__name__}: {exc} (set SEARCHENGINE_DEBUG=1 for details)", err=True)
        sys.exit(1)
