"""Indexing: the engine-free ingest pipeline, from input files into an index of any engine.

* :func:`build_index` indexes its input from scratch (published only when
  complete: a new generation of an index folder, a new index behind a
  cluster's alias);
* :func:`update_index` adds or replaces documents by id;
* :func:`remove_documents` deletes documents by id.

The pipeline is the same for every engine: read the records
(:func:`searchengine.readers.read_records`), count them, check each against
the indexed version of its id, hold back repeated ids, write the rest
through the engine's :class:`~searchengine.engines.Writer`, then fold the
repeats into the copies written (:func:`combine`), and publish. Its rules:
one paper is one document; when an id repeats, the record with the higher
arXiv version replaces the other, and records of equal (or no) version are
merged; a record older than the indexed one is skipped and reported; a bad
record is reported as ``file:line`` and skipped; nothing already indexed is
lost by a failed run. Only the ids seen so far (and the rare records whose
id repeats) are held in memory.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from searchengine.engines.base import Document
from searchengine.engines.location import Location
from searchengine.errors import InputError
from searchengine.records import Problem, Record

if TYPE_CHECKING:
    from searchengine.engines.base import Writer

#: Default memory for posting buffers, across all writer processes (MB).
DEFAULT_MEMORY_MB = 512
#: Ids whose indexed versions an update looks up at a time (and repeats read back at a time).
LOOKUP_BATCH = 500


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
        without_abstract: records written without an abstract (found by
            their title and authors only).
        problems: every skipped record or file, and notes about records
            indexed without a part of them, as ``file:line: reason``.
        seconds: wall-clock time of the whole run.
        index_dir: where the index is.
        vectors: whether the index keeps record vectors (semantic search).
        encoded: records whose vectors this run encoded (the others' were
            unchanged, or kept from a run that was stopped).
        refused: the records the index refused to take (a cluster's mapping
            error): also in ``problems``; they make the run a partial failure.
    """

    documents: int = 0
    records: int = 0
    added: int = 0
    replaced: int = 0
    merged: int = 0
    removed: int = 0
    not_found: list[str] = field(default_factory=list)
    without_abstract: int = 0
    problems: list[Problem] = field(default_factory=list)
    seconds: float = 0.0
    index_dir: str = ""
    vectors: bool = False
    encoded: int = 0
    refused: list[Problem] = field(default_factory=list)

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
            "without_abstract": self.without_abstract,
            "skipped": self.skipped,
            "problems": [str(p) for p in self.problems],
            "cut_off": [str(p) for p in self.cut_off],
            "refused": [str(p) for p in self.refused],
            "seconds": round(self.seconds, 3),
            "index_dir": self.index_dir,
            "vectors": self.vectors,
            "encoded": self.encoded,
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


def _problem(record: Record, reason: str) -> Problem:
    """A problem at the record's ``file:line``."""
    path, _, line = record.source.rpartition(":")
    return Problem(path or record.source, int(line) if line.isdigit() else 0, reason)


def _batches(items: Iterable, size: int) -> Iterator[list]:
    items = iter(items)
    while batch := list(islice(items, size)):
        yield batch


class _Ingest:
    """One run's bookkeeping: counts, repeats, version checks and failed writes.

    ``kinds`` holds every id sent to the writer in this run with how it
    counted; a later record with one of them is a repeat, kept in
    ``repeats`` and folded in after the first pass (:meth:`folded`).
    """

    def __init__(self, writer: Writer, summary: IndexSummary, progress: Callable[[int], None] | None) -> None:
        self.writer, self.summary, self.progress = writer, summary, progress
        self.kinds: dict[str, str] = {}
        self.repeats: dict[str, Record] = {}
        self.failed: dict[str, str] = {}  # ids with no copy written, and how they counted

    def documents(self, records: Iterable[Record]) -> Iterator[Document]:
        """The documents of ``records`` to write in the first pass."""
        updating = self.writer.updating
        for batch in _batches(records, LOOKUP_BATCH if updating else 1):
            versions: Mapping[str, int | None] = {}
            if updating:
                fresh = sorted({r.id for r in batch if r.id not in self.kinds})
                versions = self.writer.versions(fresh) if fresh else {}
            for record in batch:
                document = self._take(record, versions)
                if document is not None:
                    yield document

    def _take(self, record: Record, versions: Mapping[str, int | None]) -> Document | None:
        summary = self.summary
        summary.records += 1
        if self.progress is not None:
            self.progress(1)
        refused = self.writer.check(record)
        if refused:
            summary.problems.append(_problem(record, refused))
            return None
        if record.id in self.kinds:
            summary.merged += 1
            earlier = self.repeats.get(record.id)
            self.repeats[record.id] = combine(earlier, record) if earlier else record
            return None
        kind = "added"
        if record.id in versions:
            indexed = versions[record.id] or 0
            if (record.version or 0) < indexed:
                summary.problems.append(
                    _problem(
                        record, f"{record.id} v{record.version or 0} is older than the indexed v{indexed} (skipped)"
                    )
                )
                return None
            kind = "replaced"
        setattr(summary, kind, getattr(summary, kind) + 1)
        if not record.abstract.strip():
            summary.without_abstract += 1
        self.kinds[record.id] = kind
        return Document(record, kind == "replaced", kind)

    def failed_write(self, document: Document, reason: str) -> None:
        """A document the engine could not write (refused): reported, and taken off
        the counts. A repeat that could not be folded in leaves the first copy as it was."""
        record = document.record
        problem = _problem(record, reason)
        self.summary.problems.append(problem)
        self.summary.refused.append(problem)
        if document.kind in ("added", "replaced"):
            self.failed[record.id] = document.kind
            setattr(self.summary, document.kind, getattr(self.summary, document.kind) - 1)

    def folded(self) -> Iterator[Document]:
        """Each repeated id once more: its first copy (read back) combined with its
        later records; an id whose first copy was not written gets them alone."""
        ids = list(self.repeats)
        for batch in _batches(ids, LOOKUP_BATCH):
            first = self.writer.stored(batch)
            for doc_id in batch:
                later = self.repeats[doc_id]
                if doc_id in self.failed or doc_id not in first:
                    kind = self.failed.pop(doc_id, "added")
                    setattr(self.summary, kind, getattr(self.summary, kind) + 1)
                    yield Document(later, True, kind)
                else:
                    yield Document(combine(first[doc_id], later), True, "merged")


def input_size(paths: Iterable[str | os.PathLike]) -> int | None:
    """Bytes of the input files a run would read under ``paths`` (index folders
    skipped), or ``None`` when a path cannot be listed: the total of a progress bar."""
    from searchengine import engines
    from searchengine.readers import input_size as size

    return size(paths, engines.holds_index)


_P = TypeVar("_P", bound="str | os.PathLike[str]")


def _listed(items: _P | Iterable[_P]) -> list[_P]:
    """``items`` as a list; one path or id given alone (a ``str``, not a list of
    its characters) is a list of one."""
    if isinstance(items, (str, bytes, os.PathLike)):
        return [items]
    return list(items)


def _nothing_read(paths: list[str | os.PathLike[str]], summary: IndexSummary) -> InputError:
    skipped = summary.skipped
    return InputError(
        "nothing to index in "
        + ", ".join(str(p) for p in paths)
        + (f" ({skipped} {'record or file' if skipped == 1 else 'records or files'} skipped)" if skipped else ""),
        problems=summary.problems,
    )


def _not_read_to_the_end(summary: IndexSummary, location: str) -> InputError:
    """A rebuild whose input files were not all read to their end is not
    published: the error naming each file and where its reading stopped."""
    where = "; ".join(
        f"{problem.path} " + (f"stopped in line {problem.line:,}" if problem.line else "could not be read to its end")
        for problem in summary.cut_off
    )
    return InputError(
        f"{where}: the rebuild was not published, the index in {location} is as it was "
        "(run it again when the whole input can be read)",
        problems=summary.problems,
    )


def _index(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    location: str | os.PathLike[str] | Location,
    *,
    update: bool,
    format: str | None,
    lock_timeout: float,
    jobs: int | None,
    memory_mb: int,
    progress: Callable[[int], None] | None,
    vectors: bool | None = None,
    on_encode: Callable[[int, int], None] | None = None,
    vectors_from: str | os.PathLike[str] | None = None,
) -> IndexSummary:
    """The pipeline of :func:`build_index` and :func:`update_index`."""
    from searchengine import engines
    from searchengine.readers import read_records

    started = time.perf_counter()
    paths = _listed(paths)
    # Fail on a missing input before taking the lock or creating anything.
    for path in paths:
        if not Path(path).exists():
            raise InputError(f"{path}: no such file or directory")
    writer = engines.open_writer(
        location,
        mode="update" if update else "build",
        lock_timeout=lock_timeout,
        jobs=jobs,
        memory_mb=memory_mb,
        vectors=vectors,
        on_encode=on_encode,
        vectors_from=vectors_from,
    )
    summary = IndexSummary(index_dir=writer.location)
    with writer:
        ingest = _Ingest(writer, summary, progress)
        records = read_records(paths, summary.problems, format=format, skip_folder=engines.holds_index)
        writer.write(ingest.documents(records), ingest.failed_write)
        if summary.records == 0:
            raise _nothing_read(paths, summary)
        if summary.cut_off and not update:
            raise _not_read_to_the_end(summary, writer.location)
        if progress is not None:
            progress(0)
        writer.flush()
        if progress is not None and hasattr(progress, "phase"):
            progress.phase("committing")  # the merged pass is in; repeats, repair and publishing follow
        if ingest.repeats:
            writer.write(ingest.folded(), ingest.failed_write)
        if update:
            summary.replaced += writer.repair()
        summary.documents = writer.publish()
        summary.vectors, summary.encoded = bool(writer.vectors), writer.encoded
    summary.seconds = time.perf_counter() - started
    return summary


def build_index(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    index_dir: str | os.PathLike | Location,
    *,
    format: str | None = None,
    lock_timeout: float = 30.0,
    jobs: int | None = None,
    memory_mb: int = DEFAULT_MEMORY_MB,
    progress: Callable[[int], None] | None = None,
    vectors: bool | None = None,
    on_encode: Callable[[int, int], None] | None = None,
    vectors_from: str | os.PathLike[str] | None = None,
) -> IndexSummary:
    """Index every record under ``paths`` into a new generation of ``index_dir``.

    Args:
        paths: input files or directories (formats detected by content);
            one path may be given alone.
        index_dir: the index directory; created if missing.
        format: force one reader (a name in :data:`searchengine.readers.FORMATS`).
        lock_timeout: seconds to wait for another writer before giving up.
        jobs: indexing processes (default: one per CPU core).
        memory_mb: approximate memory for posting buffers, all processes together.
        progress: called with 1 for each record read, then once with 0 when
            reading is over and the commit (merging, writing) begins; one
            with a ``phase(name)`` method is also told when ``committing``
            (after merging) begins.
        vectors: keep record vectors for semantic search (needs the
            ``semantic`` extra): ``True``, ``False``, or ``None`` for as the
            index does now (none for a new index). Only new and changed
            records are encoded (:mod:`searchengine.semantic`).
        on_encode: called with ``(encoded, to encode)`` while vectors are encoded.
        vectors_from: on a cluster, an embedded index (folder) whose vectors
            are taken for records of the same id and text instead of encoding
            them; implies ``vectors``.

    Returns:
        An :class:`IndexSummary`; ``problems`` lists every skipped record.

    Raises:
        InputError: a path is missing or unreadable, no record was read, or
            an input file could not be read to its end (cut off, an I/O
            error): the existing index is then left as it was.
        IndexBusyError: another process is writing this index.
    """
    return _index(
        paths,
        index_dir,
        update=False,
        format=format,
        lock_timeout=lock_timeout,
        jobs=jobs,
        memory_mb=memory_mb,
        progress=progress,
        vectors=vectors,
        on_encode=on_encode,
        vectors_from=vectors_from,
    )


def update_index(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    index_dir: str | os.PathLike | Location,
    *,
    format: str | None = None,
    lock_timeout: float = 30.0,
    jobs: int | None = None,
    memory_mb: int = DEFAULT_MEMORY_MB,
    progress: Callable[[int], None] | None = None,
    vectors: bool | None = None,
    on_encode: Callable[[int, int], None] | None = None,
    vectors_from: str | os.PathLike[str] | None = None,
) -> IndexSummary:
    """Add the records under ``paths`` to the index, replacing documents with the same id.

    A record older (lower arXiv version) than the indexed document is skipped
    and reported. Any id that the index holds more than once is repaired to
    one document. Without an index yet, this is :func:`build_index`.

    Arguments, return value and errors as for :func:`build_index`; also
    raises IndexDamagedError when the current index cannot be opened.
    """
    return _index(
        paths,
        index_dir,
        update=True,
        format=format,
        lock_timeout=lock_timeout,
        jobs=jobs,
        memory_mb=memory_mb,
        progress=progress,
        vectors=vectors,
        on_encode=on_encode,
        vectors_from=vectors_from,
    )


def remove_documents(
    ids: str | Iterable[str],
    index_dir: str | os.PathLike | Location,
    *,
    lock_timeout: float = 30.0,
) -> IndexSummary:
    """Delete the documents with the given ids (an arXiv version suffix is
    ignored; one id may be given alone).

    Returns:
        An :class:`IndexSummary` with ``removed`` and ``not_found`` (ids the
        index does not hold; not an error).

    Raises:
        IndexNotFoundError: there is no index at ``index_dir``.
        IndexDamagedError: the current index cannot be opened.
        IndexBusyError: another process is writing this index.
    """
    from searchengine import engines
    from searchengine.readers.arxivmeta import split_version

    started = time.perf_counter()
    wanted = list(dict.fromkeys(split_version(i)[0] for i in _listed(ids) if str(i).strip()))
    writer = engines.open_writer(index_dir, mode="remove", lock_timeout=lock_timeout)
    summary = IndexSummary(index_dir=writer.location)
    with writer:
        missing: set[str] = set()
        if wanted:
            summary.removed, missing = writer.delete(wanted)
        summary.not_found = [doc_id for doc_id in wanted if doc_id in missing]
        summary.documents = writer.publish()
    summary.seconds = time.perf_counter() - started
    return summary
