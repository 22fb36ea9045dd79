"""What keeps a public server answering under abuse: per-client rate limits,
a cap on concurrent expensive requests, and trust in a reverse proxy's headers.

:class:`ServeLimits` holds the settings (``searchengine serve`` options,
``docs/settings.md``); :func:`install` applies them to an app made by
:func:`~searchengine.web.app.create_app`; :func:`behind_proxy` wraps a WSGI
app so that ``X-Forwarded-*`` headers count only when they come from a
trusted proxy.

- **Who a client is**: the socket's peer address (``REMOTE_ADDR``). Only
  when that peer is a configured trusted proxy are ``X-Forwarded-For``,
  ``-Proto``, ``-Host`` and ``-Prefix`` read (Werkzeug's ``ProxyFix``, with
  ``proxy_count`` proxies in the chain); from anyone else they change nothing.
- **Rate limits** (Flask-Limiter, fixed windows): each client spends
  "cost units" out of :attr:`ServeLimits.rate` (e.g. ``120/minute``); a cheap
  request costs 1 and an expensive one :attr:`ServeLimits.expensive_cost`.
  Past the limit the API answers 429 with ``Retry-After`` and a JSON body,
  the page a readable 429 page. The server processes of one ``serve``
  count in one table in shared memory (:mod:`searchengine.web.counters`).
- **Expensive requests** (:func:`is_expensive`: pasted abstracts, queries of
  many wildcards or two-edit fuzzy words, exports, long feeds, "similar" and
  semantic searches) run at most :attr:`ServeLimits.expensive_slots` at a
  time per process; one that waits longer than
  :attr:`ServeLimits.expensive_wait` seconds for a slot is answered 503 with
  ``Retry-After``, so cheap requests keep the other threads.
- **Refusals are slow**: a 429 is sent :attr:`ServeLimits.refusal_delay`
  seconds late (one refusal at a time per process; others at once), so a
  client that sends again as soon as it is refused, as fast as it can,
  spends its time waiting instead of the server's processor.
"""

from __future__ import annotations

import ipaddress
import math
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flask import Flask, Response, g, request
from werkzeug.exceptions import HTTPException

from searchengine.limits import EXPORT_LIMIT, MAX_LIMIT

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

#: The per-client limit a served app applies unless told otherwise (cost units).
DEFAULT_RATE = "60/minute"
#: Cost units of one expensive request (a cheap one costs 1).
DEFAULT_EXPENSIVE_COST = 10
#: Expensive requests one server process runs at once.
DEFAULT_EXPENSIVE_SLOTS = 1
#: Seconds an expensive request waits for a slot before it is answered 503.
DEFAULT_EXPENSIVE_WAIT = 1.0
#: Seconds a 429 is held back before it is sent.
DEFAULT_REFUSAL_DELAY = 0.5
#: Seconds a client is told to wait when every slot stayed busy.
BUSY_RETRY_AFTER = 5
#: Entries of a feed beyond which it counts as expensive (the feed's default size).
CHEAP_FEED_ENTRIES = 50
#: Query text longer than this (characters or words) is a pasted abstract: expensive.
LONG_QUERY_CHARS = 200
LONG_QUERY_WORDS = 24
#: Wildcards (``*``, ``?``) in one query from which it is expensive.
MANY_WILDCARDS = 2

# A fuzzy word of two edits (``word~2``), as the query language writes it.
_TWO_EDITS = re.compile(r"[^\s()\"*?:~]~2(?=[\s)]|$)")
# A wildcard with fewer than three letters before it (``a*``, ``*tion``): matches much of the lexicon.
_SHORT_WILDCARD = re.compile(r"(?<![^\s(:\"])[^\s()\"*?:~]{0,2}[*?]")
# Where an app keeps its limits (read by the error handlers and tests).
LIMITS_KEY = "searchengine.limits"


@dataclass(frozen=True)
class ServeLimits:
    """The abuse limits of a served app.

    Attributes:
        rate: per-client limits in Flask-Limiter's notation (``"120/minute"``,
            several joined by ``;``), counted in cost units; ``None``: none.
        expensive_cost: cost units of one expensive request (1 or more).
        expensive_slots: expensive requests run at once per process (1 or more).
        expensive_wait: seconds an expensive request waits for a slot before a 503.
        refusal_delay: seconds a 429 is held back (one at a time per process).
        max_export: hits in one ``/api/export`` (1 to :data:`~searchengine.limits.EXPORT_LIMIT`).
        max_feed: entries in one ``/feed.atom`` (1 to :data:`~searchengine.limits.MAX_LIMIT`).
        trusted_proxies: addresses or networks (``127.0.0.1``, ``10.0.0.0/8``)
            whose ``X-Forwarded-*`` headers are believed; empty: nobody's.
        proxy_count: proxies in the chain in front of the server (each adds
            one address to ``X-Forwarded-For``).
    """

    rate: str | None = DEFAULT_RATE
    expensive_cost: int = DEFAULT_EXPENSIVE_COST
    expensive_slots: int = DEFAULT_EXPENSIVE_SLOTS
    expensive_wait: float = DEFAULT_EXPENSIVE_WAIT
    refusal_delay: float = DEFAULT_REFUSAL_DELAY
    max_export: int = EXPORT_LIMIT
    max_feed: int = MAX_LIMIT
    trusted_proxies: tuple[str, ...] = ()
    proxy_count: int = 1

    def __post_init__(self) -> None:
        from limits import parse_many

        if self.rate is not None:
            try:
                parse_many(self.rate)
            except ValueError:
                raise ValueError(
                    f"rate limit {self.rate!r} is not understood (write e.g. 120/minute, or 10/second;600/hour)"
                ) from None
        if self.expensive_cost < 1 or self.expensive_slots < 1 or self.proxy_count < 1:
            raise ValueError("expensive cost, expensive slots and proxy count are 1 or more")
        if self.expensive_wait < 0 or self.refusal_delay < 0:
            raise ValueError("the wait for an expensive slot and the delay of a refusal are 0 seconds or more")
        if not 1 <= self.max_export <= EXPORT_LIMIT or not 1 <= self.max_feed <= MAX_LIMIT:
            raise ValueError(f"an export holds 1 to {EXPORT_LIMIT} hits and a feed 1 to {MAX_LIMIT} entries")
        proxy_networks(self.trusted_proxies)


def proxy_networks(proxies: Iterable[str]) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """The networks of ``proxies`` (addresses or CIDR networks).

    Raises:
        ValueError: one is neither, naming it.
    """
    networks = []
    for text in proxies:
        try:
            networks.append(ipaddress.ip_network(text.strip(), strict=False))
        except ValueError:
            raise ValueError(f"trusted proxy {text!r} is not an IP address or network (e.g. 127.0.0.1)") from None
    return tuple(networks)


def behind_proxy(app: WSGIApplication, trusted: Iterable[str], count: int = 1) -> WSGIApplication:
    """``app`` reading ``X-Forwarded-For``, ``-Proto``, ``-Host`` and ``-Prefix``
    only from a peer in ``trusted`` (addresses or networks), with ``count``
    proxies in the chain; any other peer's headers are ignored (the client is
    then the socket's peer, and links use the Host it sent). ``app`` itself
    when ``trusted`` is empty.

    Raises:
        ValueError: an entry of ``trusted`` is not an address or network.
    """
    from werkzeug.middleware.proxy_fix import ProxyFix

    networks = proxy_networks(trusted)
    if not networks:
        return app
    fixed = ProxyFix(app, x_for=count, x_proto=count, x_host=count, x_prefix=count)

    def wsgi(env: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        # The WSGI environment's peer, not the process environment.
        try:
            peer = ipaddress.ip_address(str(env.get("REMOTE_ADDR") or "").split("%")[0])
        except ValueError:
            return app(env, start_response)
        if any(peer in network for network in networks):
            return fixed(env, start_response)
        return app(env, start_response)

    return wsgi


def is_expensive() -> bool:
    """Whether the current request asks for much work: an export, a feed of
    more than :data:`CHEAP_FEED_ENTRIES` entries, "papers like these", a
    search by meaning alone, or query text that is a pasted abstract (over
    :data:`LONG_QUERY_CHARS` characters or :data:`LONG_QUERY_WORDS` words),
    holds :data:`MANY_WILDCARDS` wildcards or more, a wildcard with fewer than
    three letters before it, or a fuzzy word of two edits (``word~2``)."""
    path = request.path
    if (
        path == "/api/export"
        or path == "/api/similar"
        or (path.startswith("/api/records/") and path.endswith("/similar"))
    ):
        return True
    args = request.args
    if path == "/feed.atom" and _number(args.get("limit")) > CHEAP_FEED_ENTRIES:
        return True
    if args.get("mode") == "semantic":
        return True
    query = args.get("q", "")
    if not query:
        return False
    return (
        len(query) > LONG_QUERY_CHARS
        or len(query.split()) > LONG_QUERY_WORDS
        or query.count("*") + query.count("?") >= MANY_WILDCARDS
        or _SHORT_WILDCARD.search(query) is not None
        or _TWO_EDITS.search(query) is not None
    )


def _number(text: str | None) -> int:
    try:
        return int(float(text or 0))
    except (ValueError, OverflowError):
        return 0


class ServerBusy(HTTPException):
    """503: every slot for expensive requests stayed busy while this one waited."""

    code = 503
    description = "the server is busy with other long requests; try again in a few seconds"


def install(app: Flask, limits: ServeLimits, error_response: Callable[[int, str], Response]) -> None:
    """Apply ``limits`` to ``app``: rate limits per client and the cap on
    concurrent expensive requests. ``error_response(status, message)``
    renders an error as the app does (JSON under ``/api/``, a page elsewhere).
    """
    from flask_limiter import Limiter
    from flask_limiter.errors import RateLimitExceeded

    app.extensions[LIMITS_KEY] = limits
    app.wsgi_app = behind_proxy(app.wsgi_app, limits.trusted_proxies, limits.proxy_count)  # type: ignore[method-assign,assignment]
    if limits.rate is not None:

        def cost() -> int:
            return limits.expensive_cost if _expensive() else 1

        from searchengine.web.counters import shared

        table = shared()
        limiter = Limiter(
            key_func=lambda: request.remote_addr or "unknown",
            app=app,
            # One budget per client for all routes (default limits would be one per route).
            application_limits=[limits.rate],
            application_limits_cost=cost,
            strategy="fixed-window",
            # One table for all processes of a ``serve --workers N`` (made before they fork).
            storage_uri="searchengine-shared://" if table is not None else "memory://",
            storage_options={"table": table} if table is not None else {},  # type: ignore[dict-item]
            headers_enabled=False,
            key_prefix="searchengine",
        )
        limiter.request_filter(lambda: request.endpoint == "static")

        held = threading.BoundedSemaphore(1)

        def too_many(exc: RateLimitExceeded) -> Response:
            # A client refused again and again on one connection waits here, not
            # the processor; one refusal at a time, so refusals never take every thread.
            if limits.refusal_delay and held.acquire(blocking=False):
                try:
                    time.sleep(limits.refusal_delay)
                finally:
                    held.release()
            current = limiter.current_limit
            wait = max(1, math.ceil(current.window[0] - time.time())) if current is not None else 60
            response = error_response(
                429, f"too many requests from your address (limit {exc.limit.limit}); try again in {wait} s"
            )
            response.headers["Retry-After"] = str(wait)
            return response

        app.register_error_handler(RateLimitExceeded, too_many)

    slots = threading.BoundedSemaphore(limits.expensive_slots)

    def take_slot() -> None:
        if not _expensive():
            return
        if not slots.acquire(timeout=limits.expensive_wait):
            raise ServerBusy()
        g.searchengine_slot = True

    def give_slot(exc: BaseException | None) -> None:
        if g.pop("searchengine_slot", False):
            slots.release()

    def busy(exc: ServerBusy) -> Response:
        response = error_response(503, str(exc.description))
        response.headers["Retry-After"] = str(BUSY_RETRY_AFTER)
        return response

    app.before_request(take_slot)
    app.teardown_request(give_slot)
    app.register_error_handler(ServerBusy, busy)


def _expensive() -> bool:
    # Decided once per request (the rate limit and the slot both ask).
    if "searchengine_expensive" not in g:
        g.searchengine_expensive = is_expensive()
    return bool(g.searchengine_expensive)


def app_limits(app: Any) -> ServeLimits | None:
    """The :class:`ServeLimits` installed on ``app``, or ``None``."""
    return app.extensions.get(LIMITS_KEY)
