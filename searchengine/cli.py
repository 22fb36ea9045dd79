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


def _report_problems(problems, limit: int = 20) -> None:
    for problem in problems[:limit]:
        click.echo(f"{problem}", err=True)
    if len(problems) > limit:
        click.echo(f"... and {len(problems) - limit} more skipped records", err=True)


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="searchengine")
def main() -> None:
    """Ranked full-text search over titles and abstracts of scientific papers."""


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@index_dir_option
@json_option
def index(paths: tuple[Path, ...], index_dir: Path, as_json: bool) -> None:
    """Build a new index from PATHS (files or folders; default: corpus/).

    The new index is written beside the old one and replaces it only when
    complete. Records that cannot be read are reported as file:line: reason
    and skipped.
    """
    from searchengine.indexer import build_index

    summary = build_index(paths or [Path(DEFAULT_CORPUS)], index_dir)
    _report_problems(summary.problems)
    if as_json:
        _print_json(summary.to_dict())
    else:
        merged = f", {summary.merged} duplicates merged" if summary.merged else ""
        click.echo(
            f"Indexed {summary.documents} documents into {index_dir} "
            f"({summary.records} records read{merged}, {summary.skipped} skipped) "
            f"in {summary.seconds:.2f} s"
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

    A query of up to three words needs every word, in the title, abstract or
    author names; a longer one needs some of them (see the README's "How
    matching works"). Builds the index from corpus/ first when there is none.
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


@main.command("eval")
@click.argument("path", type=click.Path(path_type=Path))
@json_option
def eval_(path: Path, as_json: bool) -> None:
    """Measure ranking quality on the test collection in folder PATH.

    PATH holds Cranfield's classic files (cran.all.1400, cran.qry, cranqrel)
    or the BEIR layout (corpus.jsonl, queries.jsonl, qrels/test.tsv). The
    documents are indexed in a temporary directory and every judged query
    runs through the same search as 'searchengine search'.
    """
    from searchengine.evaluation import evaluate

    result = evaluate(path)
    if as_json:
        click.echo(json.dumps(result))
        return
    click.echo(f"{path}: {result['queries']} judged queries")
    for name, label in (("ndcg@10", "nDCG@10"), ("map", "MAP"), ("p@10", "P@10"), ("recall@100", "Recall@100")):
        click.echo(f"  {label:<11} {result[name]:.4f}")


def run() -> None:
    """Console-script entry point; never shows a traceback unless asked to."""
    try:
        main(prog_name="searchengine")
    except Exception as exc:  # a bug: say so in one line, keep details on demand
        if os.environ.get("SEARCHENGINE_DEBUG"):
            raise
        click.echo(f"Error: internal error: {type(exc).__name__}: {exc} (set SEARCHENGINE_DEBUG=1 for details)", err=True)
        sys.exit(1)
