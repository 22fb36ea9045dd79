"""The ``searchengine`` command: a thin view over :mod:`searchengine.search`.

Exit status: 0 success, 1 error (message on stderr), 2 usage error.
Heavy modules are imported inside the commands so that start-up stays fast.

The group and its entry points are here; the commands are in
:mod:`~searchengine.cli.indexing` (index, remove, check, stats),
:mod:`~searchengine.cli.searching` (search, show, similar),
:mod:`~searchengine.cli.serving` (serve) and :mod:`~searchengine.cli.evaluating` (eval);
shared options and helpers in :mod:`~searchengine.cli.common`, the output of
hits and records in :mod:`~searchengine.cli.render`, progress bars in
:mod:`~searchengine.cli.progress`.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from searchengine import settings
from searchengine.cli.common import EXIT_REBUILD, report_problems


class _RebuildError(click.ClickException):
    """A failure whose cure is rebuilding the index: exit status :data:`EXIT_REBUILD`."""

    exit_code = EXIT_REBUILD


# Each command's module, imported when the command is asked for: a search
# does not load the indexing, serving and evaluation commands.
COMMAND_MODULES = {
    "check": "indexing",
    "eval": "evaluating",
    "index": "indexing",
    "remove": "indexing",
    "search": "searching",
    "serve": "serving",
    "show": "searching",
    "similar": "searching",
    "stats": "indexing",
}


class Group(click.Group):
    """Turns the package's errors into one-line messages with exit status 1
    (:data:`EXIT_REBUILD` for an index to rebuild), and loads each command's
    module on first use (:data:`COMMAND_MODULES`)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMAND_MODULES)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMAND_MODULES.get(cmd_name)
        if module is not None:
            # The module registers its commands on `main` as it is imported.
            importlib.import_module(f"searchengine.cli.{module}")
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        from searchengine.errors import IndexDamagedError, SearchEngineError

        try:
            return super().invoke(ctx)
        except SearchEngineError as exc:
            report_problems(getattr(exc, "problems", []))
            error = _RebuildError(str(exc)) if isinstance(exc, IndexDamagedError) else click.ClickException(str(exc))
            raise error from None
        except BrokenPipeError:
            # The reader went away (`| head`): stop quietly with 128 + SIGPIPE,
            # as Unix tools do (click's own handling would exit 1).
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise click.exceptions.Exit(141) from None
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            raise click.ClickException(f"{where}{exc.strerror or exc}") from None


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="searchengine")
def main() -> None:
    """Ranked full-text search over titles and abstracts of scientific papers."""


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
        click.echo(
            f"Error: internal error: {type(exc).__name__}: {exc} (set SEARCHENGINE_DEBUG=1 for details)", err=True
        )
        sys.exit(1)
