"""The OpenSearch client, and the one place its failures become the package's errors.

:func:`connect` makes an ``opensearchpy.OpenSearch`` client for a
:class:`~searchengine.engines.opensearch.location.ClusterLocation`;
:func:`cluster_errors` wraps every call to it, so that whatever the client,
urllib3 or requests raise reaches the user as one line naming the cluster
(never its credentials) and what failed. ``opensearchpy`` is imported here on
first use only: it costs about half a second, which a search of an index
folder never pays.

Searches and counts come back whole or not at all (:func:`whole`), asked a
second time when shards did not answer (:func:`whole_answer`: a node that just
died). A server learns the cluster's other nodes (:func:`learn_nodes`), so
that it goes on when the node of a single given address goes down; a
location of one address that stops answering is reported with the other
nodes, if learned, and how to name several.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import TYPE_CHECKING, Any

from searchengine import settings
from searchengine.engines.opensearch.location import ClusterLocation
from searchengine.errors import ClusterError, IndexNotFoundError, SearchEngineError

if TYPE_CHECKING:
    from opensearchpy import OpenSearch, Transport

#: Seconds a request may take before it is retried (``SEARCHENGINE_CLUSTER_TIMEOUT``).
DEFAULT_TIMEOUT = 30.0
#: Further attempts of a request that timed out or could not connect (another node is tried).
MAX_RETRIES = 2
# Error types OpenSearch sends when shards are missing (a red cluster) or a
# block forbids the operation.
_UNAVAILABLE = (
    "no_shard_available_action_exception",
    "unavailable_shards_exception",
    "cluster_block_exception",
    "search_phase_execution_exception",
    "primary_missing_action_exception",
    "master_not_discovered_exception",
    "cluster_manager_not_discovered_exception",
)
# Of those, the ones a search gets while a dead node's shard copies are being
# promoted elsewhere (with a 5xx status: a malformed query fails with a 400
# search_phase_execution_exception, which asking again cannot mend).
_SHARDS_MOVING = (
    "no_shard_available_action_exception",
    "unavailable_shards_exception",
    "search_phase_execution_exception",
    "primary_missing_action_exception",
)
INSTALL_HINT = "pip install 'searchengine[opensearch]' (or: pip install 'opensearch-py>=3,<4')"
#: Seconds before a search or count that some shards did not answer is sent once more
#: (a node that just died: the cluster promotes its shards' other copies within moments).
SHARD_RETRY_PAUSE = 0.5
#: Key :func:`whole` adds to an answer it accepts with shards cut by the search's
#: ``timeout``: how many shards are missing from it.
CUT_SHARDS = "_searchengine_cut_shards"
#: Seconds a learned node has to answer ``HEAD /`` before it joins the client's pool.
PROBE_TIMEOUT = 2.0


def client_module() -> ModuleType:
    """The ``opensearchpy`` module, imported now.

    Raises:
        SearchEngineError: the package is not installed (one line saying how to install it).
    """
    try:
        import opensearchpy
    except ImportError:
        raise SearchEngineError(
            f"an index on an OpenSearch cluster needs the opensearch-py package: {INSTALL_HINT}"
        ) from None
    # Without a handler of its own, a failed request's warning (with a
    # traceback) would reach stderr through logging's last resort.
    logger = logging.getLogger("opensearch")
    if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
        logger.addHandler(logging.NullHandler())
    return opensearchpy


def request_timeout() -> float:
    """Seconds per request: ``$SEARCHENGINE_CLUSTER_TIMEOUT`` or :data:`DEFAULT_TIMEOUT`."""
    try:
        value = settings.cluster_timeout(DEFAULT_TIMEOUT)
    except ValueError:
        return DEFAULT_TIMEOUT
    return value if value > 0 else DEFAULT_TIMEOUT


def connect(location: ClusterLocation, *, timeout: float | None = None, max_retries: int = MAX_RETRIES) -> OpenSearch:
    """An ``opensearchpy.OpenSearch`` client for the nodes of ``location``.

    Requests time out after ``timeout`` seconds (default :func:`request_timeout`)
    and are retried ``max_retries`` times on another node after a timeout, a
    connection failure or a 429/502/503/504 answer. With ``https``, certificates are verified (a CA file
    may be named by ``$SEARCHENGINE_CLUSTER_CA_CERTS``). No request is sent
    yet.

    Raises:
        SearchEngineError: opensearch-py is not installed.
    """
    opensearchpy = client_module()
    options: dict[str, Any] = dict(
        hosts=[{"host": host, "port": port} for host, port in location.hosts],
        use_ssl=location.scheme == "https",
        timeout=timeout or request_timeout(),
        max_retries=max_retries,
        retry_on_timeout=True,
        # Whole requests refused as overloaded or by a gateway are sent again too
        # (every write here is idempotent: documents have explicit ids).
        retry_on_status=(429, 502, 503, 504),
        http_compress=False,
    )
    if location.scheme == "https":
        options["verify_certs"] = True
        if settings.cluster_ca_certs():
            options["ca_certs"] = settings.cluster_ca_certs()
    if location.username is not None or location.password is not None:
        options["http_auth"] = (location.username or "", location.password or "")
    client: OpenSearch = opensearchpy.OpenSearch(**options)
    return client


@contextlib.contextmanager
def cluster_errors(location: ClusterLocation, action: str, *, index: str | None = None) -> Iterator[None]:
    """Turn any client failure inside the block into one :class:`SearchEngineError` line.

    ``action`` says what was being done (``"create index papers-2026…"``);
    ``index`` names the physical index concerned, when not the location's.

    Raises:
        ClusterError: unreachable, timed out, credentials refused (401/403),
            shards unavailable (a red cluster), writes rejected (429), or any
            other error status.
        IndexNotFoundError: the index does not exist (404).
        SearchEngineError: errors of the package itself pass through unchanged.
    """
    try:
        yield
    except SearchEngineError:
        raise
    except Exception as exc:
        error = describe_error(location, action, exc, index=index)
        if error is None:
            raise
        raise error from None


def whole(location: ClusterLocation, action: str, answer: dict, *, timed: bool = False) -> dict:
    """``answer`` (of a search or count) when every shard took part in it.

    With ``timed`` (a search with a ``timeout``), shards that ran out of time
    (``time_exceeded_exception``) are accepted, whether or not OpenSearch
    set ``timed_out``: the answer comes back with ``timed_out`` true and
    :data:`CUT_SHARDS` naming how many shards are missing, so that the search
    reports it cut short instead of failing.

    A search or count that some shards failed, or that found no active copy
    of some shards (a red index: they are counted in ``total`` but neither
    ``successful`` nor ``failed``), still comes back as a 200 with fewer
    hits and a smaller total; served as it is, documents would silently go
    missing from results. Such an answer is refused instead.

    Raises:
        ClusterError: ``_shards.successful + _shards.skipped`` is less than
            ``_shards.total``; the message says how many shards did not
            answer and why (the first failure's reason, if any).
    """
    shards = answer.get("_shards")
    if not shards:
        return answer
    total = int(shards.get("total") or 0)
    missing = total - int(shards.get("successful") or 0) - int(shards.get("skipped") or 0)
    if missing > 0:
        failures = shards.get("failures") or []
        # A shard out of time in a phase that cannot stop early (dfs, fetch) fails
        # with time_exceeded and may leave timed_out false; its hits are missing,
        # as a cut search's are.
        if (
            timed
            and failures
            and len(failures) >= missing
            and all("time_exceeded" in str(failure.get("reason")) for failure in failures)
        ):
            answer["timed_out"] = True
            answer[CUT_SHARDS] = missing
            return answer
        reason = failures[0].get("reason") if failures else "no copy of them is active"
        if isinstance(reason, dict):
            reason = reason.get("reason") or reason.get("type")
        reason = reason or "no reason given"
        raise ClusterError(
            location.scrub(
                f"{location.redacted()}: {action} failed: {missing} of {total} shards did not answer "
                f"({_first_line(str(reason))}); the answer would miss their documents"
            )
        )
    return answer


def whole_answer(location: ClusterLocation, action: str, send: Callable[[], dict], *, timed: bool = False) -> dict:
    """The answer of ``send()`` (one search or count request) from every shard,
    as :func:`whole` checks it, asked once more after :data:`SHARD_RETRY_PAUSE`
    seconds when shards did not answer: in the moments after a node dies its
    shards fail, or the request fails with no shard available (a 503), until
    the cluster promotes their other copies.

    Raises:
        ClusterError: shards still missing from the second answer (see :func:`whole`).
        Whatever ``send`` raises otherwise, or again on the second attempt (wrap the
        call in :func:`cluster_errors`).
    """
    try:
        return whole(location, action, send(), timed=timed)
    except ClusterError:
        pass
    except Exception as exc:  # noqa: BLE001 - only the client's "shards unavailable" is retried
        if not _shards_moving(exc):
            raise
    time.sleep(SHARD_RETRY_PAUSE)
    return whole(location, action, send(), timed=timed)


def _shards_moving(exc: BaseException) -> bool:
    """True for the client's error of a request that found shards without an active copy."""
    exceptions = client_module().exceptions
    if not isinstance(exc, exceptions.TransportError) or isinstance(exc, exceptions.ConnectionError):
        return False
    status = exc.status_code if isinstance(exc.status_code, int) else 0
    return status == 503 or (status >= 500 and _error_type(exc) in _SHARDS_MOVING)


# The cluster's nodes as last learned in this process, by cluster (scheme and the
# addresses given): named when the one given address stops answering.
_LEARNED: dict[tuple, tuple[tuple[str, int], ...]] = {}


def sniffing() -> bool:
    """Whether learned nodes join a client's pool: ``$SEARCHENGINE_CLUSTER_SNIFF``
    (default on; ``0``, ``false``, ``no`` or ``off`` turn it off, for a cluster
    whose nodes publish addresses this machine cannot reach)."""
    return settings.cluster_sniff()


def learned_nodes(location: ClusterLocation) -> tuple[tuple[str, int], ...]:
    """``((host, port), ...)`` of the cluster's nodes as :func:`learn_nodes` last
    found them in this process (sorted), or ``()`` if it never ran."""
    return _LEARNED.get((location.scheme, location.hosts), ())


def learn_nodes(client: OpenSearch, location: ClusterLocation, *, add: bool = True) -> tuple[tuple[str, int], ...]:
    """Ask the cluster for its nodes' HTTP addresses (``GET _nodes/_all/http``,
    each node's ``publish_address``) and remember them for error messages.

    With ``add``, each learned node that answers ``HEAD /`` within
    :data:`PROBE_TIMEOUT` seconds joins ``client``'s pool beside the given
    addresses (which stay first), so that its requests go on when the node
    of a single given address goes down; nodes whose published address this
    machine cannot reach are left out. Call it before the client is shared
    between threads (a server's warm-up).

    Returns:
        ``((host, port), ...)`` of every node, sorted.

    Raises:
        Whatever the client raises for the nodes request (wrap the call in
        :func:`cluster_errors`).
    """
    answer = client.nodes.info(node_id="_all", metric="http")
    found = set()
    for node in (answer.get("nodes") or {}).values():
        address = _address_of(str((node.get("http") or {}).get("publish_address") or ""))
        if address is not None:
            found.add(address)
    nodes = tuple(sorted(found))
    if nodes:
        _LEARNED[(location.scheme, location.hosts)] = nodes
    if add:
        transport = client.transport
        extra = [
            {"host": host, "port": port}
            for host, port in nodes
            if (host, port) not in location.hosts and _answers(transport, host, port)
        ]
        if extra:
            transport.set_connections([{"host": host, "port": port} for host, port in location.hosts] + extra)
    return nodes


def _address_of(published: str) -> tuple[str, int] | None:
    """``(host, port)`` of a ``publish_address`` (``1.2.3.4:9200``, ``name/1.2.3.4:9200``,
    ``[::1]:9200``), or ``None`` if it is not one."""
    host, colon, port = published.rpartition(":")
    if not colon or not port.isdigit():
        return None
    if "/" in host:  # a publish_host name before its address: connect by the name
        host = host.split("/", 1)[0]
    host = host.strip("[]")
    return (host, int(port)) if host else None


def _answers(transport: Transport, host: str, port: int) -> bool:
    """Whether ``host:port`` answers ``HEAD /`` within :data:`PROBE_TIMEOUT` seconds,
    with the client's settings (scheme, certificates, credentials)."""
    connection = None
    try:
        connection = transport.connection_class(**dict(transport.kwargs, host=host, port=port))
        connection.perform_request("HEAD", "/", timeout=PROBE_TIMEOUT)
        return True
    except Exception:  # noqa: BLE001 - any failure means: not reachable from here
        return False
    finally:
        if connection is not None:
            # Both of opensearch-py's connection classes close; their base class declares no close().
            connection.close()  # type: ignore[attr-defined]


def _more_addresses(location: ClusterLocation) -> str:
    """For a location of one address: the other nodes, if learned, and how to name several."""
    if len(location.hosts) != 1:
        return ""
    given = location.hosts[0]
    others = [node for node in learned_nodes(location) if node != given]
    if others:
        every = ",".join(_shown(*node) for node in (given, *others))
        return (
            f"; the cluster's other nodes were {', '.join(_shown(*node) for node in others)} when last "
            f"asked: name several in the location, so that another answers when one is down "
            f"({location.scheme}://{every}/{location.index})"
        )
    return (
        "; only one node's address is given: name several, comma-separated, so that another answers "
        f"when one is down ({location.scheme}://{_shown(*given)},HOST2:PORT/{location.index})"
    )


def _shown(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def describe_error(
    location: ClusterLocation, action: str, exc: BaseException, *, index: str | None = None
) -> SearchEngineError | None:
    """The package error for ``exc`` raised by the client during ``action``, or
    ``None`` when ``exc`` does not come from the client or its transport."""
    where = location.redacted(index)
    opensearchpy = client_module()
    exceptions = opensearchpy.exceptions

    def fail(cls: type[SearchEngineError], reason: str) -> SearchEngineError:
        return cls(location.scrub(f"{where}: {action} failed: {reason}"))

    if isinstance(exc, exceptions.ConnectionTimeout):
        return fail(
            ClusterError,
            f"no answer within {request_timeout():g} s (timed out; "
            "raise SEARCHENGINE_CLUSTER_TIMEOUT or check the cluster's load)",
        )
    if isinstance(exc, exceptions.SSLError):
        return fail(ClusterError, f"TLS error ({_root(exc)})")
    if isinstance(exc, exceptions.ConnectionError):
        return fail(ClusterError, f"cluster unreachable ({_root(exc)}){_more_addresses(location)}")
    if isinstance(exc, exceptions.AuthenticationException):
        return fail(ClusterError, "the cluster refused the credentials (401: check user and password)")
    if isinstance(exc, exceptions.AuthorizationException):
        return fail(ClusterError, f"not allowed (403: {_reason(exc)})")
    if isinstance(exc, exceptions.TransportError):
        kind, reason = _error_type(exc), _reason(exc)
        if exc.status_code == 404 and kind in ("index_not_found_exception", ""):
            name = index or location.index
            return IndexNotFoundError(
                f"{location.redacted(name)}: no index here "
                f"(run 'searchengine index PATH... --index {location.redacted()}' first)"
            )
        if kind in _UNAVAILABLE or exc.status_code == 503:
            return fail(ClusterError, f"the cluster cannot serve it now (shards unavailable or cluster red: {reason})")
        if exc.status_code == 429:
            return fail(ClusterError, f"the cluster rejected the request as overloaded (429: {reason})")
        return fail(ClusterError, f"{exc.status_code} {kind or 'error'}: {reason}")
    if isinstance(exc, (exceptions.SerializationError, exceptions.ImproperlyConfigured)):
        return fail(ClusterError, f"{type(exc).__name__}: {exc}")
    if _is_transport_library_error(exc):
        return fail(ClusterError, f"{type(exc).__name__}: {_first_line(str(exc))}")
    return None


def _is_transport_library_error(exc: BaseException) -> bool:
    """True for exceptions of urllib3 or requests (normally wrapped by the client)."""
    module = type(exc).__module__ or ""
    return module.split(".")[0] in ("urllib3", "requests")


def _root(exc: BaseException) -> str:
    """The underlying cause of a connection failure, in a few words."""
    cause = getattr(exc, "info", None)
    text = str(cause) if isinstance(cause, BaseException) else str(getattr(exc, "error", "") or exc)
    for known in (
        "Connection refused",
        "Name or service not known",
        "No route to host",
        "timed out",
        "Temporary failure in name resolution",
        "certificate verify failed",
        "Connection reset by peer",
        "Network is unreachable",
        "Remote end closed connection",
    ):
        if known.lower() in text.lower():
            return known.lower()
    return _first_line(text.rpartition(": ")[2] or text)


def _error_type(exc: BaseException) -> str:
    info = getattr(exc, "info", None)
    if isinstance(info, dict):
        error = info.get("error")
        if isinstance(error, dict):
            return str(error.get("type") or "")
    error = getattr(exc, "error", "")
    return error if isinstance(error, str) and error.endswith("_exception") else ""


def _reason(exc: BaseException) -> str:
    """OpenSearch's own explanation (root cause first), on one line."""
    info = getattr(exc, "info", None)
    if isinstance(info, dict):
        error = info.get("error")
        if isinstance(error, dict):
            causes = error.get("root_cause") or [error]
            reason = causes[0].get("reason") or error.get("reason") or error.get("type")
            if reason:
                return _first_line(str(reason))
        elif error:
            return _first_line(str(error))
    return _first_line(str(getattr(exc, "error", "") or exc))


def _first_line(text: str, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
