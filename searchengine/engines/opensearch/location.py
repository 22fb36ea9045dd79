"""Index locations on an OpenSearch cluster: ``http(s)://[user:password@]host:port[,host:port…]/NAME``.

A location names the cluster (one or more nodes to talk to, one scheme, one
set of credentials) and the index ``NAME``: an alias that the writer points
at one physical index (``NAME-<UTC timestamp>``, see
:mod:`searchengine.engines.opensearch.writer`).

This module never imports the OpenSearch client (a malformed location is
refused before the client is loaded). The password is kept out of every text form of a
location (:meth:`ClusterLocation.redacted`, ``str``, ``repr``): messages,
summaries and logs show the cluster without credentials.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import unquote

from searchengine.errors import InputError

_SCHEMES = ("http://", "https://")
#: The port a host without one is reached on (OpenSearch's HTTP default).
DEFAULT_PORT = 9200
# Characters OpenSearch refuses in an index name (and ':' since 7.x); "@"
# is refused here so that it always ends the credentials of a location.
_FORBIDDEN = set('\\/*?"<>|,# :@')
# The writer adds "-" and a 20-digit UTC timestamp to NAME for the physical
# index; OpenSearch allows 255 bytes in all.
MAX_NAME_BYTES = 255 - 21
_HOST_PORT = re.compile(r"(?P<host>\[[0-9A-Fa-f:.]+\]|[^\s:\[\]/@]+)(?::(?P<port>\d{1,5}))?")


@dataclass(frozen=True)
class ClusterLocation:
    """A parsed cluster location.

    Attributes:
        scheme: ``"http"`` or ``"https"``.
        hosts: ``((host, port), ...)``, in the order given; IPv6 hosts without brackets.
        index: the index name (the alias searches and writes go through).
        username, password: credentials for HTTP basic authentication, or ``None``.
            Neither ever appears in :meth:`redacted`, ``str`` or ``repr``.
    """

    scheme: str
    hosts: tuple[tuple[str, int], ...]
    index: str
    username: str | None = field(default=None, repr=False)
    password: str | None = field(default=None, repr=False)

    def redacted(self, index: str | None = None) -> str:
        """The location as a URL without credentials: ``http://127.0.0.1:9200/papers``.

        ``index`` replaces the index name (to name a physical index in a message).
        """
        hosts = ",".join(f"[{h}]:{p}" if ":" in h else f"{h}:{p}" for h, p in self.hosts)
        return f"{self.scheme}://{hosts}/{self.index if index is None else index}"

    def __str__(self) -> str:
        return self.redacted()

    def __repr__(self) -> str:
        return f"ClusterLocation({self.redacted()!r})"

    @property
    def secrets(self) -> tuple[str, ...]:
        """The texts that must never be shown (password, ``user:password``), longest first."""
        found = []
        if self.password:
            found += [f"{self.username or ''}:{self.password}", self.password]
        return tuple(s for s in found if s)

    def scrub(self, text: str) -> str:
        """``text`` with any credentials replaced by ``***`` (for messages built from
        a client's exception, which may quote a URL)."""
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text


def parse_location(text: str) -> ClusterLocation:
    """Parse ``http(s)://[user:password@]host[:port][,host[:port]…]/NAME``.

    The user and password may be percent-encoded (``p%40ss`` for ``p@ss``); a
    host without a port gets :data:`DEFAULT_PORT`; one trailing ``/`` is
    allowed; IPv6 hosts are written in brackets (``[::1]:9200``).

    Raises:
        InputError: the text is not such a URL, or the index name breaks
            OpenSearch's rules (see :func:`check_index_name`). The message
            never holds the password.
    """
    raw = str(text).strip()
    lowered = raw.lower()
    scheme = next((s[:-3] for s in _SCHEMES if lowered.startswith(s)), None)
    if scheme is None:
        raise InputError(f"{_safe(raw)}: an index location on a cluster starts with http:// or https://")
    rest = raw[len(scheme) + 3 :]
    username = password = None
    if "@" in rest:
        # Index names here never hold "@", so the last one ends the credentials,
        # even when the password holds an unencoded "/" or "@".
        userinfo, _, rest = rest.rpartition("@")
        user, colon, secret = userinfo.partition(":")
        username = unquote(user) or None
        password = unquote(secret) if colon else None
    authority, slash, path = rest.partition("/")
    shown = f"{scheme}://{authority}/{path}"
    if "?" in path or "#" in path:
        raise InputError(
            f"{_safe(shown)}: a cluster location takes no query string or fragment "
            f"(write it as {scheme}://HOST:PORT/NAME)"
        )
    hosts = []
    for part in authority.split(","):
        match = _HOST_PORT.fullmatch(part.strip())
        if not match:
            raise InputError(f"{_safe(shown)}: {part.strip() or 'an empty host'!r} is not HOST:PORT")
        host = match.group("host").strip("[]")
        port = int(match.group("port") or DEFAULT_PORT)
        if not 0 < port < 65536:
            raise InputError(f"{_safe(shown)}: port {port} is out of range")
        hosts.append((host, port))
    name = path[:-1] if path.endswith("/") else path
    if not slash or not name:
        raise InputError(
            f"{_safe(shown)}: the location names no index (add it after the host: {scheme}://{authority}/papers)"
        )
    check_index_name(name, where=shown)
    return ClusterLocation(scheme, tuple(hosts), name, username, password)


def check_index_name(name: str, *, where: str = "") -> None:
    """Check ``name`` against OpenSearch's rules for index and alias names.

    Lower case; none of ``\\ / * ? " < > | , # :`` or spaces (nor ``@``,
    which ends a location's credentials); not starting
    with ``-``, ``_``, ``+`` or ``.`` (dot names are hidden or system indexes);
    not ``.`` or ``..``; at most :data:`MAX_NAME_BYTES` bytes of UTF-8.

    Raises:
        InputError: naming the rule that ``name`` breaks.
    """
    prefix = f"{_safe(where)}: " if where else ""
    problem = None
    bad = sorted(set(name) & _FORBIDDEN)
    if name != name.lower():
        problem = "must be lower case"
    elif bad:
        shown = ", ".join("space" if ch == " " else repr(ch) for ch in bad)
        problem = f"must not contain {shown}"
    elif name[0] in "-_+.":
        problem = f"must not start with {name[0]!r}"
    elif len(name.encode("utf-8")) > MAX_NAME_BYTES:
        problem = f"is longer than {MAX_NAME_BYTES} bytes"
    elif any(ord(ch) < 32 for ch in name):
        problem = "must not contain control characters"
    if problem:
        raise InputError(
            f'{prefix}index name {name!r} {problem} (index names: lower case, no spaces or \\ / * ? " < > | , # : @)'
        )


def _safe(text: str) -> str:
    """A location text for a message: any ``user:password@`` part dropped."""
    scheme, sep, rest = text.partition("://")
    if not sep:
        return text.rpartition("@")[2]
    return f"{scheme}{sep}{rest.rpartition('@')[2]}"
