"""Build an index from input files: readers → records → Whoosh documents.

A build always writes a complete new generation (see :mod:`searchengine.store`)
and switches readers to it only after Whoosh has committed it, so a failed or
killed build leaves the previous index untouched.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from searchengine import store
from searchengine.errors import InputError
from searchengine.readers import read_records
from searchengine.records import Problem, Record


@dataclass
class IndexSummary:
    """What a build did.

    Attributes:
        documents: documents in the new index.
        records: good records read (before merging duplicates).
        merged: records folded into an earlier record with the same id.
        problems: every skipped record or file, as ``file:line: reason``.
        seconds: wall-clock time of the whole build.
        index_dir: where the index now is.
    """

    documents: int = 0
    records: int = 0
    merged: int = 0
    problems: list[Problem] = field(default_factory=list)
    seconds: float = 0.0
    index_dir: str = ""

    @property
    def skipped(self) -> int:
        """Records (or whole files) left out because they could not be read."""
        return len(self.problems)

    def to_dict(self) -> dict:
        """JSON-ready form, as printed by ``searchengine index --json``."""
        return {
            "documents": self.documents,
            "records": self.records,
            "merged": self.merged,
            "skipped": self.skipped,
            "problems": [str(p) for p in self.problems],
            "seconds": round(self.seconds, 3),
            "index_dir": self.index_dir,
        }


def collect(paths: Iterable[str | os.PathLike], problems: list[Problem], format: str | None = None) -> tuple[dict[str, Record], int]:
    """Read every record under ``paths`` into a dict by id, merging duplicates.

    Returns the records in first-seen order and the number of good records
    read. A paper seen twice (the same id, e.g. on two author pages) becomes
    one record with the authors and categories of both.
    """
    records: dict[str, Record] = {}
    count = 0
    for record in read_records(paths, problems, format=format):
        count += 1
        earlier = records.get(record.id)
        records[record.id] = earlier.merged_with(record) if earlier else record
    return records, count


def build_index(
    paths: Iterable[str | os.PathLike],
    index_dir: str | os.PathLike,
    *,
    format: str | None = None,
    lock_timeout: float = 30.0,
) -> IndexSummary:
    """Index every record under ``paths`` into a new generation of ``index_dir``.

    Args:
        paths: input files or directories (formats detected by content).
        index_dir: the index directory; created if missing.
        format: force one reader instead of detecting.
        lock_timeout: seconds to wait for another writer before giving up.

    Returns:
        An :class:`IndexSummary`; ``problems`` lists every skipped record.

    Raises:
        InputError: a path is missing or unreadable, or no record was read
            (the existing index is then left as it was).
        IndexBusyError: another process is writing this index.
    """
    from whoosh import index as whoosh_index

    from searchengine.schema import build_schema, document_fields

    started = time.perf_counter()
    paths = list(paths)
    target = Path(index_dir)
    summary = IndexSummary(index_dir=str(target))
    records, summary.records = collect(paths, summary.problems, format=format)
    if not records:
        raise InputError(
            "nothing to index in " + ", ".join(str(p) for p in paths)
            + (f" ({summary.skipped} records skipped)" if summary.problems else "")
        )
    summary.merged = summary.records - len(records)
    with store.write_lock(target, timeout=lock_timeout):
        store.remove_stale(target)
        generation = store.new_generation(target)
        try:
            ix = whoosh_index.create_in(str(generation), build_schema())
            writer = ix.writer(limitmb=256)
            try:
                for record in records.values():
                    writer.add_document(**document_fields(record))
            except BaseException:
                writer.cancel()
                raise
            writer.commit()
            store.publish(target, generation)
        except BaseException:
            shutil.rmtree(generation, ignore_errors=True)
            raise
        store.remove_stale(target)
    summary.documents = len(records)
    summary.seconds = time.perf_counter() - started
    return summary
