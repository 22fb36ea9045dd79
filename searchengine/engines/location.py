"""Where an index is: a folder, or an index on an OpenSearch cluster, read once.

:meth:`Location.parse` reads the text a user gave (``index``,
``http://user:pw@host:9200/papers``) into a :class:`Location`; the door
(:mod:`searchengine.engines`) and the search and ingest pipelines pass that
value down instead of reading the text again. Every public function that
takes a location still takes the text (or a path) as before.

This module imports nothing heavy: a cluster location is parsed by
:func:`searchengine.engines.opensearch.location.parse_location`, which never
loads the OpenSearch client.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from searchengine.engines.opensearch.location import ClusterLocation

_SCHEMES = ("http://", "https://")
# Text that was meant as a URL: a scheme ("htp://", "http:/", "ftp://") or a
# bare "host:port/NAME". A folder is never created under such a name.
_URL_LIKE = re.compile(
    r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]+):/+(?P<rest>.*)"
    r"|(?:[^/@\s]*@)?(?P<host>[\w.-]+:\d{1,5})/(?P<name>\S*)",
    re.DOTALL,
)


def is_cluster(location: object) -> bool:
    """Whether ``location`` names an index on a cluster (an ``http(s)://`` URL,
    or a :class:`Location` of one); a path-like is always a folder."""
    if isinstance(location, Location):
        return location.cluster is not None
    return isinstance(location, str) and location.strip().lower().startswith(_SCHEMES)


@dataclass(frozen=True)
class Location:
    """An index location, checked: exactly one of ``folder`` (the embedded
    engine's index folder) and ``cluster`` (an index on an OpenSearch
    cluster, credentials included but never shown) is set.

    Attributes:
        folder: the index folder, as given (not resolved).
        cluster: the parsed cluster location.
        text: a cluster location as given (stripped; with credentials, so
            never in ``repr``), for the code that takes the text.
    """

    folder: Path | None = None
    cluster: ClusterLocation | None = None
    text: str | None = field(default=None, repr=False)  # it may hold a password

    @property
    def is_cluster(self) -> bool:
        """Whether the index is on a cluster."""
        return self.cluster is not None

    @property
    def working(self) -> str | Path:
        """The working form the engines take: a cluster URL as text (a ``Path``
        would fold its ``//``), a folder as a ``Path``."""
        if self.cluster is not None and self.text is not None:
            return self.text
        return self.path

    @property
    def path(self) -> Path:
        """The index folder.

        Raises:
            ValueError: the location is on a cluster (it names no folder).
        """
        if self.folder is None:
            raise ValueError(f"{self} is an index on a cluster, not a folder")
        return self.folder

    def __str__(self) -> str:
        """The location for messages: the folder, or the cluster URL without credentials."""
        return str(self.folder) if self.cluster is None else self.cluster.redacted()

    @classmethod
    def parse(cls, location: str | os.PathLike[str] | Location) -> Location:
        """``location`` read once (a :class:`Location` is returned as it is).

        Raises:
            InputError: the text is empty, a cluster URL is malformed (naming
                the part), text meant as a URL is not ``http(s)://`` (``htp://``,
                ``http:/``, ``host:9200/NAME``: never taken for a folder), or the
                folder is a file.
        """
        from searchengine.errors import InputError

        if isinstance(location, Location):
            return location
        if isinstance(location, str) and is_cluster(location):
            from searchengine.engines.opensearch.location import parse_location

            return cls(cluster=parse_location(location), text=location.strip())
        if not str(location).strip():  # Path("") would be the current directory
            raise InputError("the index location must not be empty")
        if isinstance(location, str) and (url := _URL_LIKE.fullmatch(location.strip())):
            host = url.group("host")
            meant = f"http://{host}/{url.group('name')}" if host else f"http://{url.group('rest')}"

            def shown(text: str) -> str:  # credentials never go into a message
                return re.sub(r"^([^/@]*//?)?[^/@\s]*@", r"\1", text)

            raise InputError(
                f"{shown(location.strip())!r} is neither an index folder nor a cluster location: "
                f"a cluster location starts with http:// or https:// (did you mean {shown(meant)!r}?)"
            )
        if Path(location).is_file():
            raise InputError(f"{str(location)!r} is a file, not an index folder")
        return cls(folder=Path(location))
