"""Options, index opening and output helpers shared by the commands."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, cast

import click

if TYPE_CHECKING:
    from collections.abc import Sequence

    from searchengine.indexer import IndexSummary
    from searchengine.records import Problem
    from searchengine.search import SearchIndex

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


def counted(number: int, noun: str) -> str:
    """``1 document``, ``2 documents``."""
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def print_json(data: object) -> None:
    """``data`` as indented JSON: UTF-8 text where the output holds it, else
    ``\\u`` escapes, so that no character of the data becomes ``?``."""
    text = json.dumps(data, ensure_ascii=False, indent=2)
    try:
        text.encode(getattr(sys.stdout, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        text = json.dumps(data, ensure_ascii=True, indent=2)
    click.echo(text)


def report_without_abstract(summary: IndexSummary) -> None:
    if summary.without_abstract:
        count = summary.without_abstract
        click.echo(
            f"Note: {counted(count, 'record')} {'has' if count == 1 else 'have'} no abstract; "
            f"{'it is' if count == 1 else 'they are'} found by title and authors only",
            err=True,
        )


def report_problems(problems: Sequence[Problem], verbose: bool = False, limit: int = 20) -> None:
    """The reading problems on stderr: one line per kind (:func:`~searchengine.records.group_problems`),
    its first example with how many there are, at most ``limit`` kinds; with
    ``verbose``, every problem on a line of its own."""
    if verbose:
        for problem in problems:
            click.echo(f"{problem}", err=True)
        return
    from searchengine.records import group_problems

    groups = group_problems(problems)
    for first, count in groups[:limit]:
        more = f" [{count:,} like this in all; the first shown: index --verbose lists every one]" if count > 1 else ""
        click.echo(f"{first}{more}", err=True)
    if len(groups) > limit:
        left = sum(count for _, count in groups[limit:])
        click.echo(f"... and {counted(left, 'more problem')} of other kinds (index --verbose lists them)", err=True)


wait_option = click.option(
    "--wait",
    default=30.0,
    show_default=True,
    type=click.FloatRange(0),
    help="Seconds to wait while another process writes the index.",
)


def open_existing(index_dir: Path) -> SearchIndex:
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
            raise IndexNotFoundError(f"{index_dir}: no index here; build one with 'searchengine index PATHS'") from None
        given = (
            "SEARCHENGINE_INDEX"
            if source == ParameterSource.ENVIRONMENT
            else _option_typed(("--index", "--index-dir"), "--index-dir")
        )
        option = given if given.startswith("--") else "--index-dir"
        raise IndexNotFoundError(
            f"{index_dir}: no index here (given by {given}); build one with "
            f"'searchengine index PATHS {option} {index_dir}'"
        ) from None


def _option_typed(names: tuple[str, ...], default: str) -> str:
    """Which of an option's ``names`` the command line used (the last one
    given), to name it as the user wrote it; ``default`` when none is seen."""
    typed = [arg.split("=", 1)[0] for arg in sys.argv[1:] if arg.split("=", 1)[0] in names]
    return typed[-1] if typed else default


def open_or_build(index_dir: Path) -> SearchIndex:
    """Open the index; on first use of the default index, build it from the bundled corpus.

    An index directory named by ``--index-dir`` or ``SEARCHENGINE_INDEX`` is
    never built implicitly: a mistyped name is an error, not a new index.
    """
    from click.core import ParameterSource

    from searchengine.errors import IndexNotFoundError
    from searchengine.search import open_index

    source = click.get_current_context().get_parameter_source("index_dir")
    if source not in (ParameterSource.DEFAULT, None):
        return open_existing(index_dir)
    if not Path(DEFAULT_CORPUS).exists() and not Path(index_dir).exists():
        raise IndexNotFoundError(
            f"no index in {index_dir}/ and no {DEFAULT_CORPUS}/ folder here to build one from: build one with "
            "'searchengine index PATHS' (files or folders of papers), or name one with --index-dir LOCATION"
        )

    def report(summary: IndexSummary | None) -> None:
        if summary is None:
            click.echo(f"No index in {index_dir}/; building it from {DEFAULT_CORPUS}/ ...", err=True)
        else:
            report_problems(summary.problems)
            click.echo(f"Indexed {counted(summary.documents, 'document')} in {summary.seconds:.2f} s", err=True)

    return open_index(index_dir, build_from=[Path(DEFAULT_CORPUS)], on_build=report)


def write_output(text: str) -> None:
    """Write an export as it is: bytes, so that RIS's CR LF line ends are never translated.

    Raises:
        BrokenPipeError: the reader went away; a buffered write that the
            closed pipe cut short returns a short count instead of raising,
            which would end the command with status 0 and half a file.
    """
    import errno

    sys.stdout.flush()
    # click 8.4 serves get_binary_stream through a module __getattr__ (deprecated), typed ``object``.
    get_binary_stream = cast("Callable[[str], BinaryIO]", click.get_binary_stream)
    stream = get_binary_stream("stdout")
    view = memoryview(text.encode("utf-8"))
    while view:
        written = stream.write(view)
        if not written:
            raise BrokenPipeError(errno.EPIPE, "the reader of the output went away")
        view = view[written:]
    stream.flush()


def output_format_of(as_json: bool, output_format: str | None) -> str:
    if as_json and output_format not in (None, "json"):
        raise click.UsageError(f"--json and --format {output_format} contradict each other")
    return "json" if as_json else (output_format or "table")
