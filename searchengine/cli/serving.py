"""``serve``: the web page and the JSON API over HTTP."""

from __future__ import annotations

import os
from pathlib import Path

import click

from searchengine.cli import main
from searchengine.cli.common import index_dir_option, open_or_build


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0: every interface).")
@click.option(
    "--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="TCP port (0: any free port)."
)
@index_dir_option
@click.option(
    "--threads",
    default=4,
    show_default=True,
    type=click.IntRange(1, 64),
    help="Worker threads per process (searches hold the GIL: more threads do not add CPU).",
)
@click.option(
    "--workers",
    default=None,
    type=click.IntRange(1, 64),
    help="Server processes [default: one per CPU core], sharing the port.",
)
@click.option("--debug", is_flag=True, help="Flask's development server with reloader and debugger (never expose it).")
def serve(host: str, port: int, index_dir: Path, threads: int, workers: int | None, debug: bool) -> None:
    """Serve the search page and the JSON API over HTTP.

    One waitress process per CPU core by default (searching is CPU-bound
    Python: one process uses one core), sharing one port; --workers 1 serves
    from this process. A rebuilt index is picked up without a restart. Builds the
    index from corpus/ first when there is none.
    """
    from searchengine.web.serve import serve as run_server

    index = open_or_build(index_dir)
    run_server(
        index, index_dir, host=host, port=port, threads=threads, workers=workers or os.cpu_count() or 1, debug=debug
    )
