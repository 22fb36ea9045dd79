"""Indexing: records from input files into an index, whichever engine holds it.

* :func:`build_index` indexes its input from scratch (a new generation of an
  index folder, published only when complete);
* :func:`update_index` adds or replaces documents by id;
* :func:`remove_documents` deletes documents by id.

The rules are the same for every engine: one paper is one document; when an
id repeats, the record with the higher arXiv version replaces the other, and
records of equal (or no) version are merged (:func:`combine`); a bad record
is reported as ``file:line`` and skipped, and nothing already indexed is
lost by a failed run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from searchengine.records import Problem, Record

#: Default memory for posting buffers, across all writer processes (MB).
DEFAULT_MEMORY_MB = 512


@dataclass
class IndexSummary:
    """What an index, update or remove run did.

    Attributes:
        documents: documents in the index afterwards.
        records: good records read.
        added: documents whose id was not in the index before.
        replaced: documents that replaced an indexed document with the same id
            (an update), including extra copies of one id that were repaired.
        merged: records folded into another record with the same id read in
            the same run (a later version, or the same paper twice).
        removed: documents deleted by id (:func:`remove_documents`).
        not_found: ids given to :func:`remove_documents` that the index lacks.
        problems: every skipped record or file, and notes about records
            indexed without a part of them, as ``file:line: reason``.
        seconds: wall-clock time of the whole run.
        index_dir: where the index is.
    """

    documents: int = 0
    records: int = 0
    added: int = 0
    replaced: int = 0
    merged: int = 0
    removed: int = 0
    not_found: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    seconds: float = 0.0
    index_dir: str = ""

    @property
    def cut_off(self) -> list[Problem]:
        """The input files that ended early (truncated ``.gz``): the run is a failure."""
        return [problem for problem in self.problems if problem.cut_off]

    @property
    def skipped(self) -> int:
        """Records (or whole files) left out because they could not be used."""
        return sum(1 for problem in self.problems if problem.skipped)

    def to_dict(self) -> dict:
        """JSON-ready form, as printed by ``searchengine index --json``."""
        return {
            "documents": self.documents,
            "records": self.records,
            "added": self.added,
            "replaced": self.replaced,
            "merged": self.merged,
            "removed": self.removed,
            "not_found": list(self.not_found),
            "skipped": self.skipped,
            "problems": [str(p) for p in self.problems],
            "cut_off": [str(p) for p in self.cut_off],
            "seconds": round(self.seconds, 3),
            "index_dir": self.index_dir,
        }


def combine(earlier: Record, later: Record) -> Record:
    """One record from two with the same id.

    The higher arXiv version wins whole (a record without a version counts
    as version 0); of equal versions, ``earlier`` keeps its fields and gains
    ``later``'s authors and categories (:meth:`Record.merged_with`).
    """
    old, new = earlier.version or 0, later.version or 0
    if new > old:
        return later
    if old > new:
        return earlier
    return earlier.merged_with(later)


def _writer(location):
    """The writer module of the engine that holds ``location``: an OpenSearch URL
    (``http(s)://host:port/NAME``) or an index folder."""
    from searchengine.engines.opensearch.location import is_cluster

    if is_cluster(location):
        from searchengine.engines.opensearch import writer
    else:
        from searchengine.engines.whoosh import writer

    return writer


def build_index(
    paths: Iterable[str | os.PathLike],
    index_dir: str | os.PathLike,
    *,
    format: str | None = None,
    lock_timeout: float = 30.0,
    jobs: int | None = None,
    memory_mb: int = DEFAULT_MEMORY_MB,
    progress: Callable[[int], None] | None = None,
) -> IndexSummary:
    """Index every record under ``paths`` into a new generation of ``index_dir``.

    Args:
        paths: input files or directories (formats detected by content).
        index_dir: the index directory; created if missing.
        format: force one reader (a name in :data:`searchengine.readers.FORMATS`).
        lock_timeout: seconds to wait for another writer before giving up.
        jobs: indexing processes (default: one per CPU core).
        memory_mb: approximate memory for posting buffers, all processes together.
        progress: called with 1 for each record read, then once with 0 when
            reading is over and the commit (merging, writing) begins.

    Returns:
        An :class:`IndexSummary`; ``problems`` lists every skipped record.

    Raises:
        InputError: a path is missing or unreadable, or no record was read
            (the existing index is then left as it was).
        IndexBusyError: another process is writing this index.
    """
    return _writer(index_dir).build(paths, index_dir, format=format, lock_timeout=lock_timeout,
                                    jobs=jobs, memory_mb=memory_mb, progress=progress)


def update_index(
    paths: Iterable[str | os.PathLike],
    index_dir: str | os.PathLike,
    *,
    format: str | None = None,
    lock_timeout: float = 30.0,
    jobs: int | None = None,
    memory_mb: int = DEFAULT_MEMORY_MB,
    progress: Callable[[int], None] | None = None,
) -> IndexSummary:
    """Add the records under ``paths`` to the index, replacing documents with the same id.

    A record older (lower arXiv version) than the indexed document is skipped
    and reported. Any id that the index holds more than once is repaired to
    one document. Without an index yet, this is :func:`build_index`.

    Arguments, return value and errors as for :func:`build_index`; also
    raises IndexDamagedError when the current index cannot be opened.
    """
    return _writer(index_dir).update(paths, index_dir, format=format, lock_timeout=lock_timeout,
                                     jobs=jobs, memory_mb=memory_mb, progress=progress)


def remove_documents(
    ids: Iterable[str],
    index_dir: str | os.PathLike,
    *,
    lock_timeout: float = 30.0,
) -> IndexSummary:
    """Delete the documents with the given ids (an arXiv version suffix is ignored).

    Returns:
        An :class:`IndexSummary` with ``removed`` and ``not_found`` (ids the
        index does not hold; not an error).

    Raises:
        IndexNotFoundError: there is no index at ``index_dir``.
        IndexDamagedError: the current index cannot be opened.
        IndexBusyError: another process is writing this index.
    """
    return _writer(index_dir).remove(ids, index_dir, lock_timeout=lock_timeout)
