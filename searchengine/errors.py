"""The exceptions the search API raises; everything else is a bug.

Every error message is one line meant for the user: it names the offending
file, index, query part or option.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from searchengine.records import Problem


class SearchEngineError(Exception):
    """Base class of every error the package raises on purpose."""


class InputError(SearchEngineError):
    """An input path cannot be read at all (missing, unreadable, nothing in it).

    ``problems`` lists the records and files that were skipped on the way
    (:class:`~searchengine.records.Problem`), so the reasons can be shown.
    """

    def __init__(self, message: str, problems: Iterable[Problem] = ()) -> None:
        super().__init__(message)
        self.problems = list(problems)


class IndexNotFoundError(SearchEngineError):
    """No index exists at the given location."""


class IndexDamagedError(SearchEngineError):
    """An index exists at the given location but cannot be opened or read."""


class IndexOutdatedError(IndexDamagedError):
    """The index was written by another version, with other fields or analysis:
    it must be rebuilt before it is searched or updated."""


class IndexUnreadableError(SearchEngineError):
    """The index's files cannot be read by this process (permission denied,
    or a package the engine needs is not installed): not damage, and no
    rebuild helps; the message names the file or the package."""


class IndexBusyError(SearchEngineError):
    """Another process holds the index's write lock past the wait timeout."""


class ClusterError(SearchEngineError):
    """A search cluster failed a request: unreachable, timed out, refused the
    credentials, not healthy enough to answer, or rejected a write. The
    message names the cluster (without credentials) and what failed."""


class QueryError(SearchEngineError):
    """A query or a search option cannot be understood; the message names the part."""


class RecordNotFoundError(SearchEngineError):
    """No document in the index has the requested id."""
