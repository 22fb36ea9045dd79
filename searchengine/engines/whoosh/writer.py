"""The embedded engine's writer: readers → records → Whoosh documents.

Three operations (the public face is :mod:`searchengine.indexer`), each of
which writes a new generation of the index (see
:mod:`searchengine.engines.whoosh.store`) and switches readers to it only after Whoosh has
committed it, so a failed or killed run leaves the previous index searchable:

* :func:`build` indexes its input from scratch;
* :func:`update` adds or replaces documents by id in a copy of the
  current generation (made of hard links, so copying costs no time);
* :func:`remove` deletes documents by id the same way.

Records stream from the readers straight into the writer; only the ids
seen so far (and the rare records whose id repeats) are kept in memory. One
paper is one document: when an id repeats, the record with the higher arXiv
version replaces the other, and records of equal (or no) version are merged
(authors and categories united, as for a paper listed on two author pages).
The repeats are resolved after the first commit, from the stored fields of
the copy already written.

Indexing runs in ``jobs`` processes (Whoosh's multiprocessing writer; each
worker analyses batches of documents into its own segment). Every writer
buffers postings by term (:mod:`searchengine.engines.whoosh.postings`) and writes
each segment's distinct spelling words into it (:func:`_writer_classes`).
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from searchengine.engines.whoosh import columns, internals, store
from searchengine.errors import IndexDamagedError, IndexNotFoundError, InputError, SearchEngineError
from searchengine.indexer import IndexSummary, combine
from searchengine.processes import exit_with_parent
from searchengine.records import Problem, Record

# Documents handed to a worker process at a time.
BATCH_SIZE = 256
# Inputs with fewer records are indexed in one process.
PARALLEL_MIN_RECORDS = 2000


_WRITER_CLASSES: dict[str, type] = {}


def _writer_classes() -> dict[str, type]:
    """Whoosh's writers with the index's posting buffer and spelling words.

    Built on first use (Whoosh is imported lazily): ``"segment"`` (one
    process, and each worker of the parallel writer) and ``"parallel"``
    (whose parent process merges existing segments). Both buffer postings in
    a :class:`~searchengine.engines.whoosh.postings.TermPostingPool` and
    collect the distinct spelling words of the documents they write
    (:func:`~searchengine.engines.whoosh.schema.spelling_words` of titles
    and abstracts), which go into the segment as one file
    (:func:`~searchengine.engines.whoosh.codec.write_segment_words`) instead
    of a term per word. A segment merged in whole brings its words file; one
    with deletions gives the words of its live documents' stored text, so a
    word stays while a document holds it, and leaves at the latest when its
    last segment is merged. An older segment's ``spell_*`` postings are not
    copied: its words go to the file too.
    """
    if not _WRITER_CLASSES:
        from whoosh.multiproc import MpWriter
        from whoosh.writing import SegmentWriter

        from searchengine.engines.whoosh.codec import (
            OLD_SPELLING_FIELDS, DictionaryCodec, segment_words, write_segment_words)
        from searchengine.engines.whoosh.postings import TermPostingPool
        from searchengine.engines.whoosh.schema import spelled_fields, spelling_words

        class IndexWriting:
            def __init__(self, ix, *args, limitmb: int = 128, **kwargs) -> None:
                kwargs.setdefault("codec", DictionaryCodec())  # the workers' too (MpWriter's subargs)
                super().__init__(ix, *args, limitmb=limitmb, **kwargs)
                self.pool = TermPostingPool(internals.temp_storage(self), limitmb)
                self.spelling_words: set[str] = set()
                self._spelled = spelled_fields(self.schema)

            def _note_spelling(self, fields: dict) -> None:
                for name in self._spelled:
                    value = fields.get(name)
                    if value:
                        self.spelling_words.update(spelling_words(value))

            def add_reader(self, reader) -> None:
                super().add_reader(reader)
                if reader.has_deletions():
                    for _, stored in reader.iter_docs():  # the live documents
                        self._note_spelling(stored)
                else:
                    self.spelling_words.update(segment_words(reader))

            def per_document_reader(self):
                return _LengthsOnce(super().per_document_reader(), self.docnum)

            def add_postings_to_pool(self, reader, startdoc, docmap) -> None:
                dropped = {name for name in OLD_SPELLING_FIELDS if name in reader.schema}
                if docmap is None and not dropped:  # every posting is copied
                    return super().add_postings_to_pool(reader, startdoc, docmap)
                if docmap is None:
                    items = self._process_posts(reader.iter_postings(), startdoc, docmap)
                else:
                    items = internals.remapped_postings(self, reader.iter_postings(), startdoc, docmap)
                add = self.pool.add
                for item in items:
                    if item[0] not in dropped:
                        add(item)

            def _flush_segment(self) -> None:
                super()._flush_segment()
                if self.spelling_words:
                    write_segment_words(self.get_segment(), self.storage, self.spelling_words)

        class IndexSegmentWriter(IndexWriting, SegmentWriter):
            def add_document(self, **fields) -> None:
                super().add_document(**fields)
                self._note_spelling(fields)

        class IndexMpWriter(IndexWriting, MpWriter):
            pass

        _WRITER_CLASSES.update(segment=IndexSegmentWriter, parallel=IndexMpWriter)
    return _WRITER_CLASSES


class _LengthsOnce:
    """A segment's per-document reader whose field lengths are read once per field.

    Writing a segment, Whoosh looks up the document's field length for every
    posting (1.2 million lookups per 10,000 abstracts, each a column read);
    here the lengths of all ``doc_count`` documents are read once per field
    and looked up in a list. Everything else is the wrapped reader's.
    """

    def __init__(self, reader, doc_count: int) -> None:
        self._reader, self._doc_count = reader, doc_count

    def doc_field_length_reader(self, fieldname: str, default: int = 0):
        length = self._reader.doc_field_length_reader(fieldname, default)
        return [length(docnum) for docnum in range(self._doc_count)].__getitem__

    def __getattr__(self, name: str):
        return getattr(self._reader, name)


def _segment_writer(ix, limitmb: int = 128):
    """A single-process writer for ``ix`` (see :func:`_writer_classes`);
    ``limitmb``: posting buffer size, Whoosh's default unless given."""
    return _writer_classes()["segment"](ix, limitmb=limitmb)


def _subwriter(parent: int, *args) -> None:
    """Body of one indexing worker process: Whoosh's sub-writer, tied to its parent.

    The worker ignores Ctrl-C (the parent cancels it) and exits on its own
    when the parent dies, e.g. by SIGKILL, instead of waiting forever for work.
    """
    from whoosh import multiproc
    from whoosh.multiproc import SubWriterTask

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Whoosh's worker makes its writer from this module name; in this (forked)
    # process only, it becomes ours (posting buffer, spelling words).
    multiproc.SegmentWriter = _writer_classes()["segment"]
    exit_with_parent(parent)
    SubWriterTask(*args).run()


class _JobQueue:
    """The parent's side of the workers' job queue: a put never waits forever on dead workers."""

    def __init__(self, jobs, tasks: list) -> None:
        self.jobs, self.tasks = jobs, tasks

    def put(self, item) -> None:
        import queue

        while True:
            try:
                self.jobs.put(item, timeout=1)
                return
            except queue.Full:
                if not all(task.is_alive() for task in self.tasks):
                    raise SearchEngineError("an indexing process died; the index is unchanged") from None


def _parallel_writer(ix, jobs: int, limitmb: int):
    """Whoosh's multiprocessing writer whose workers never outlive this process."""
    class Writer(_writer_classes()["parallel"]):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.jobqueue = _JobQueue(self.jobqueue, self.tasks)

        def _new_task(self):
            args = (self.storage, self.indexname, self.jobqueue.jobs, self.resultqueue,
                    self.subargs, self.multisegment)
            task = self._mpctx.Process(target=_subwriter, args=(os.getpid(), *args), daemon=True)
            self.tasks.append(task)
            task.start()
            return task

        def cancel(self):
            # The generation being written is thrown away: the workers' work
            # is not wanted, so they are killed, not asked to finish a batch
            # and write a segment (which made Ctrl-C take 20 s).
            for task in self.tasks:
                if task.is_alive():
                    task.kill()
            for task in self.tasks:
                task.join(timeout=5)
            self.tasks.clear()
            # Nothing will read the queues again: exiting must not wait to flush them.
            for name in ("jobqueue", "resultqueue"):
                queue = getattr(self, name, None)
                queue = getattr(queue, "jobs", queue)
                if hasattr(queue, "cancel_join_thread"):
                    queue.cancel_join_thread()
            super().cancel()

    # fork: workers inherit the loaded analyzer instead of importing it again.
    return Writer(ix, procs=jobs, batchsize=BATCH_SIZE, multisegment=True,
                  start_method="fork", limitmb=limitmb)


def _writer(ix, jobs: int, memory_mb: int):
    limitmb = max(16, memory_mb // (jobs + 1 if jobs > 1 else 1))
    if jobs > 1 and "fork" in __import__("multiprocessing").get_all_start_methods():
        return _parallel_writer(ix, jobs, limitmb)
    return _segment_writer(ix, limitmb)


def merge_policy(writer, segments):
    """Whoosh merge policy: segments left mostly deleted by updates are dropped or rewritten.

    A segment whose documents are all deleted is dropped; one with more than
    half deleted is merged into the new segment (only its live documents are
    copied); the rest follow Whoosh's ``MERGE_SMALL``. Without this, every
    update that replaces documents would leave their old segments behind.

    Returns the segments kept unchanged, as Whoosh's policies do.
    """
    from whoosh.reading import SegmentReader
    from whoosh.writing import MERGE_SMALL

    kept = []
    for segment in segments:
        deleted, total = segment.deleted_count(), segment.doc_count_all()
        if deleted >= total:
            continue
        if deleted * 2 > total:
            reader = SegmentReader(writer.storage, writer.schema, segment)
            writer.add_reader(reader)
            reader.close()
            continue
        kept.append(segment)
    return MERGE_SMALL(writer, kept)


def _live(searcher, doc_id: str) -> list[int]:
    return list(searcher.document_numbers(id=doc_id))


def _stream(
    records: Iterable[Record],
    writer,
    summary: IndexSummary,
    *,
    replace: bool,
    progress: Callable[[int], None] | None,
) -> tuple[dict[str, Record], int]:
    """Add each record to ``writer`` (not committed).

    Returns the later copies of ids already written (combined, by id) and
    the number of documents the index must hold after the commit.
    """
    from searchengine.engines.whoosh.schema import document_fields

    searcher = writer.searcher()
    documents = searcher.doc_count()
    if not replace:
        searcher = None
    written: set[str] = set()
    repeats: dict[str, Record] = {}
    for record in records:
        summary.records += 1
        if progress is not None:
            progress(1)
        if record.id in written:
            summary.merged += 1
            earlier = repeats.get(record.id)
            repeats[record.id] = combine(earlier, record) if earlier else record
            continue
        if searcher is not None:
            docnums = _live(searcher, record.id)
            if docnums:
                indexed = max((searcher.stored_fields(d).get("version") or 0) for d in docnums)
                if (record.version or 0) < indexed:
                    summary.problems.append(_older(record, indexed))
                    continue
                for docnum in docnums:
                    writer.delete_document(docnum)
                documents -= len(docnums)
                summary.replaced += 1
            else:
                summary.added += 1
        else:
            summary.added += 1
        writer.add_document(**document_fields(record))
        documents += 1
        written.add(record.id)
    return repeats, documents


def _older(record: Record, indexed: int) -> Problem:
    path, _, line = record.source.rpartition(":")
    return Problem(
        path or record.source, int(line) if line.isdigit() else 0,
        f"{record.id} v{record.version or 0} is older than the indexed v{indexed} (skipped)",
    )


def _resolve(ix, repeats: dict[str, Record], *, repair: bool, summary: IndexSummary, limitmb: int) -> None:
    """Second commit: fold repeated ids into one document; with ``repair``, drop extra copies.

    An index written by an older version (or by hand) may hold two live
    documents with one id; the copy with the higher version (then the one
    written last) is kept.
    """
    from searchengine.engines.whoosh.engine import record_from_stored
    from searchengine.engines.whoosh.schema import document_fields

    writer = _segment_writer(ix, limitmb)
    changed = bool(repeats)
    try:
        searcher = writer.searcher()
        for doc_id, later in repeats.items():
            docnums = _live(searcher, doc_id)
            first = record_from_stored(searcher.stored_fields(docnums[-1])) if docnums else None
            for docnum in docnums:
                writer.delete_document(docnum)
            writer.add_document(**document_fields(combine(first, later) if first else later))
        if repair:
            reader = searcher.reader()
            for term, info in reader.iter_field("id"):
                if info.doc_frequency() < 2 or term in repeats:
                    continue
                docnums = _live(searcher, term)
                if len(docnums) < 2:
                    continue
                keep = max(docnums, key=lambda d: (searcher.stored_fields(d).get("version") or 0, d))
                for docnum in docnums:
                    if docnum != keep:
                        writer.delete_document(docnum)
                        summary.replaced += 1
                        changed = True
    except BaseException:
        writer.cancel()
        raise
    if changed:
        writer.commit(mergetype=merge_policy)
    else:
        writer.cancel()


def _write(
    target: Path,
    operation: Callable,
    *,
    from_current: bool,
    lock_timeout: float,
) -> int:
    """Run ``operation(ix)`` on a new generation and publish it; return its document count.

    The new generation is empty (``from_current`` False) or a hard-linked
    copy of the current one. Holds the write lock throughout; on any error
    (or a kill) the unfinished generation is removed, now or by the next run.
    """
    from whoosh import index as whoosh_index

    from searchengine.engines.whoosh.schema import build_schema

    with store.write_lock(target, timeout=lock_timeout):
        store.remove_stale(target)
        base = store.current_generation(target, writer=True) if from_current else None
        generation = store.new_generation(target)
        try:
            if base is not None:
                store.link_generation(base, generation)
                try:
                    ix = store.open_generation(generation)
                except Exception as exc:  # Whoosh raises many kinds on damage
                    raise IndexDamagedError(f"{base}: index cannot be opened ({exc})") from exc
                store.check_layout(base, target)  # an older index is rebuilt, not updated
            else:
                ix = store.create_generation_index(generation, build_schema())
            try:
                operation(ix)
                # A writer that only deleted (an update's repairs) leaves the files
                # of its empty segment behind, which no table of contents names.
                toc = ix._read_toc()
                whoosh_index.clean_files(ix.storage, ix.indexname, toc.generation, toc.segments)
                with ix.reader() as reader:  # the facet and sort columns belong to the generation
                    columns.write_columns(generation, reader)  # (reads every kept segment's columns)
            except Exception as exc:
                if base is not None and store.is_damage(exc):
                    raise IndexDamagedError(f"{base}: index cannot be read ({type(exc).__name__}: {exc}); "
                                            "rebuild it with 'searchengine index PATH...'") from exc
                raise
            store.write_layout(generation)
            documents = ix.doc_count()
            store.publish(target, generation)
        except BaseException:
            shutil.rmtree(generation, ignore_errors=True)
            raise
        store.remove_stale(target)
    return documents


def _index(
    paths: Iterable[str | os.PathLike],
    index_dir: str | os.PathLike,
    *,
    update: bool,
    format: str | None,
    lock_timeout: float,
    jobs: int | None,
    memory_mb: int,
    progress: Callable[[int], None] | None,
) -> IndexSummary:
    started = time.perf_counter()
    paths = list(paths)
    target = Path(index_dir)
    summary = IndexSummary(index_dir=str(target))
    jobs = max(1, jobs or os.cpu_count() or 1)
    # Fail on a missing input before taking the lock or creating anything.
    for path in paths:
        if not Path(path).exists():
            raise InputError(f"{path}: no such file or directory")

    from searchengine.readers import read_records

    def operation(ix) -> None:
        records = read_records(paths, summary.problems, format=format)
        # Small inputs are indexed in this process: starting workers would cost more.
        head = list(itertools.islice(records, PARALLEL_MIN_RECORDS))
        parallel = jobs if len(head) == PARALLEL_MIN_RECORDS else 1
        writer = _writer(ix, parallel, memory_mb)
        try:
            repeats, expected = _stream(itertools.chain(head, records), writer, summary,
                                        replace=update, progress=progress)
            if summary.records == 0:
                skipped = summary.skipped
                raise InputError(
                    "nothing to index in " + ", ".join(str(p) for p in paths)
                    + (f" ({skipped} {'record or file' if skipped == 1 else 'records or files'} skipped)"
                       if skipped else ""),
                    problems=summary.problems,
                )
            if progress is not None:
                progress(0)
            writer.commit(mergetype=merge_policy)
        except BaseException:  # an error or Ctrl-C, reading or committing: the workers stop now
            try:
                writer.cancel()
            except Exception:  # noqa: BLE001 - a commit that failed has closed the writer already
                pass
            raise
        # Whoosh's parallel writer drops the segment of a worker that died; never publish that.
        if ix.doc_count() != expected:
            raise SearchEngineError(
                f"{target}: {expected - ix.doc_count()} documents were not written (an indexing process "
                "failed); the index is unchanged"
            )
        if repeats or update:
            _resolve(ix, repeats, repair=update, summary=summary, limitmb=max(16, memory_mb // 2))

    summary.documents = _write(target, operation, from_current=update, lock_timeout=lock_timeout)
    summary.seconds = time.perf_counter() - started
    return summary


def build(paths: Iterable[str | os.PathLike], index_dir: str | os.PathLike, *, format: str | None,
          lock_timeout: float, jobs: int | None, memory_mb: int,
          progress: Callable[[int], None] | None) -> IndexSummary:
    """A new generation of ``index_dir`` from ``paths`` (:func:`searchengine.indexer.build_index`)."""
    return _index(paths, index_dir, update=False, format=format, lock_timeout=lock_timeout,
                  jobs=jobs, memory_mb=memory_mb, progress=progress)


def update(paths: Iterable[str | os.PathLike], index_dir: str | os.PathLike, *, format: str | None,
           lock_timeout: float, jobs: int | None, memory_mb: int,
           progress: Callable[[int], None] | None) -> IndexSummary:
    """Records of ``paths`` added to a copy of the current generation
    (:func:`searchengine.indexer.update_index`)."""
    return _index(paths, index_dir, update=True, format=format, lock_timeout=lock_timeout,
                  jobs=jobs, memory_mb=memory_mb, progress=progress)


def remove(ids: Iterable[str], index_dir: str | os.PathLike, *, lock_timeout: float) -> IndexSummary:
    """Documents with ``ids`` deleted from a copy of the current generation
    (:func:`searchengine.indexer.remove_documents`)."""
    from searchengine.readers.arxivmeta import split_version

    started = time.perf_counter()
    target = Path(index_dir)
    summary = IndexSummary(index_dir=str(target))
    if store.current_generation(target) is None:
        raise IndexNotFoundError(f"{target}: no index here (run 'searchengine index' first)")
    wanted = list(dict.fromkeys(split_version(i)[0] for i in ids if i.strip()))

    def operation(ix) -> None:
        writer = _segment_writer(ix)
        try:
            searcher = writer.searcher()
            for doc_id in wanted:
                docnums = _live(searcher, doc_id)
                if not docnums:
                    summary.not_found.append(doc_id)
                for docnum in docnums:
                    writer.delete_document(docnum)
                summary.removed += bool(docnums)
        except BaseException:
            writer.cancel()
            raise
        writer.commit(mergetype=merge_policy)

    summary.documents = _write(target, operation, from_current=True, lock_timeout=lock_timeout)
    summary.seconds = time.perf_counter() - started
    return summary
