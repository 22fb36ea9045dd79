"""``serve``: the web page and the JSON API over HTTP."""

from __future__ import annotations

import os
from pathlib import Path

import click

from searchengine.cli import main
from searchengine.cli.common import index_dir_option, open_or_build
from searchengine.limits import DEFAULT_TIME_BUDGET, EXPORT_LIMIT, MAX_LIMIT

# Defaults of the abuse limits (searchengine.web.guard, which imports Flask: not loaded at CLI start).
_RATE, _COST, _SLOTS, _WAIT = "60/minute", 10, 1, 1.0


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
@click.option(
    "--rate-limit",
    default=_RATE,
    show_default=True,
    envvar="SEARCHENGINE_RATE_LIMIT",
    metavar="LIMITS",
    help="Requests one client may make, in cost units (120/minute; several: 10/second;600/hour); 'off': no limit.",
)
@click.option(
    "--expensive-cost",
    default=_COST,
    show_default=True,
    envvar="SEARCHENGINE_EXPENSIVE_COST",
    type=click.IntRange(1, 10_000),
    help="Cost units of an expensive request (exports, long feeds, similar, pasted abstracts, many wildcards, ~2).",
)
@click.option(
    "--expensive-slots",
    default=_SLOTS,
    show_default=True,
    envvar="SEARCHENGINE_EXPENSIVE_SLOTS",
    type=click.IntRange(1, 64),
    help="Expensive requests each process runs at once; others wait (--expensive-wait), then get a 503.",
)
@click.option(
    "--expensive-wait",
    default=_WAIT,
    show_default=True,
    envvar="SEARCHENGINE_EXPENSIVE_WAIT",
    type=click.FloatRange(0, 60),
    help="Seconds an expensive request waits for a slot before a 503 with Retry-After.",
)
@click.option(
    "--refusal-delay",
    default=0.5,
    show_default=True,
    envvar="SEARCHENGINE_REFUSAL_DELAY",
    type=click.FloatRange(0, 10),
    help="Seconds a 429 is held back (one at a time per process): a client retrying at once waits.",
)
@click.option(
    "--time-budget",
    default=DEFAULT_TIME_BUDGET,
    show_default=True,
    envvar="SEARCHENGINE_TIME_BUDGET",
    type=click.FloatRange(0.05, 60),
    help="Seconds one search may run; then it answers with the hits found so far.",
)
@click.option(
    "--max-export",
    default=EXPORT_LIMIT,
    show_default=True,
    envvar="SEARCHENGINE_MAX_EXPORT",
    type=click.IntRange(1, EXPORT_LIMIT),
    help="Hits in one /api/export.",
)
@click.option(
    "--max-feed",
    default=MAX_LIMIT,
    show_default=True,
    envvar="SEARCHENGINE_MAX_FEED",
    type=click.IntRange(1, MAX_LIMIT),
    help="Entries in one /feed.atom.",
)
@click.option(
    "--trusted-proxy",
    multiple=True,
    envvar="SEARCHENGINE_TRUSTED_PROXY",
    metavar="ADDRESS",
    help="A reverse proxy (address or network; repeatable) whose X-Forwarded-For, -Proto, -Host "
    "and -Prefix are believed; from anyone else they are ignored.",
)
@click.option(
    "--proxy-count",
    default=1,
    show_default=True,
    envvar="SEARCHENGINE_PROXY_COUNT",
    type=click.IntRange(1, 10),
    help="Trusted proxies chained in front of the server (each adds one X-Forwarded-For address).",
)
@click.option(
    "--verify-on-start",
    is_flag=True,
    help="Hash every file of the index before serving; damage stops the start (exit 3).",
)
@click.option("--debug", is_flag=True, help="Flask's development server with reloader and debugger (never expose it).")
def serve(
    host: str,
    port: int,
    index_dir: Path,
    threads: int,
    workers: int | None,
    rate_limit: str,
    expensive_cost: int,
    expensive_slots: int,
    expensive_wait: float,
    refusal_delay: float,
    time_budget: float,
    max_export: int,
    max_feed: int,
    trusted_proxy: tuple[str, ...],
    proxy_count: int,
    verify_on_start: bool,
    debug: bool,
) -> None:
    """Serve the search page and the JSON API over HTTP.

    One waitress process per CPU core by default (searching is CPU-bound
    Python: one process uses one core), sharing one port; --workers 1 serves
    from this process. A rebuilt index is picked up without a restart. Builds the
    index from corpus/ first when there is none.

    Each client (its socket address; behind a --trusted-proxy, the address
    the proxy names) gets --rate-limit cost units; past it, 429 with
    Retry-After. Settings: docs/settings.md; behind a proxy: docs/web.md.
    """
    from searchengine.web.guard import ServeLimits
    from searchengine.web.serve import serve as run_server

    try:
        limits = ServeLimits(
            rate=None if rate_limit.strip().lower() in ("off", "none", "") else rate_limit.strip(),
            expensive_cost=expensive_cost,
            expensive_slots=expensive_slots,
            expensive_wait=expensive_wait,
            refusal_delay=refusal_delay,
            max_export=max_export,
            max_feed=max_feed,
            trusted_proxies=tuple(part for entry in trusted_proxy for part in entry.replace(",", " ").split()),
            proxy_count=proxy_count,
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    index = open_or_build(index_dir)
    index.time_budget = time_budget
    if verify_on_start:
        _verify(index_dir)
    run_server(
        index,
        index_dir,
        host=host,
        port=port,
        threads=threads,
        workers=workers or os.cpu_count() or 1,
        debug=debug,
        limits=limits,
    )


def _verify(index_dir: Path | str) -> None:
    """Hash every file of the embedded index at ``index_dir`` against its
    checksums, trusting no cached stamp (damage written in place with its
    times put back is found too); on a cluster, check every shard copy.

    Raises:
        IndexDamagedError: naming the damaged file (exit status 3).
        IndexNotFoundError: there is no index.
    """
    import time

    from searchengine.engines import check_index, check_location
    from searchengine.errors import IndexDamagedError, IndexNotFoundError

    location = check_location(index_dir)
    started = time.monotonic()
    if not isinstance(location, Path):
        report = check_index(location)
        if report.problem is not None:
            raise IndexDamagedError(report.problem)
        click.echo(f"Verified {len(report.parts):,} shard copies in {time.monotonic() - started:.1f} s", err=True)
        return
    from searchengine.engines.whoosh import integrity, store

    generation = store.current_generation(location)
    if generation is None:
        raise IndexNotFoundError(f"{location}: no index here (run 'searchengine index' first)")
    stamps = integrity.verify(generation, everything=True)
    size = sum(stamp.size for stamp in stamps.values())
    click.echo(
        f"Verified {len(stamps):,} files of {generation.name} ({size / 1e6:,.1f} MB) "
        f"in {time.monotonic() - started:.1f} s",
        err=True,
    )
