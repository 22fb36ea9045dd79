"""The embedded engine's writer: documents into a new generation of an index folder.

:class:`WhooshWriter` is the embedded engine's
:class:`searchengine.engines.Writer`; the engine-free ingest pipeline
(:mod:`searchengine.indexer`) reads the records, folds repeated ids and
applies the version rules, and hands it documents. Every run writes a new
generation of the folder (see :mod:`searchengine.engines.whoosh.store`):
empty for a build, a copy of the current one made of hard links for an
update or a removal (so copying costs no time). Readers switch to it only
after Whoosh has committed it and :meth:`WhooshWriter.publish` has moved the
``CURRENT`` pointer, so a failed or killed run leaves the previous index
searchable.

Documents are written in two passes: the records as read (one commit), then
the repeated ids folded in and, on an update, extra copies of one id
dropped (a second commit, only when something changed).

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
from collections.abc import Iterable
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from searchengine.engines.whoosh import columnmerge, integrity, internals, store
from searchengine.engines.whoosh import vectors as vector_files
from searchengine.errors import IndexDamagedError, IndexNotFoundError, InputError, SearchEngineError
from searchengine.processes import exit_with_parent
from searchengine.records import Record

if TYPE_CHECKING:
    from whoosh.index import FileIndex
    from whoosh.searching import Searcher
    from whoosh.writing import SegmentWriter

#: A generation's mark (an empty file) that no id is held twice: written by
#: a build, kept by updates and removals of such a generation, and written
#: once an update has dropped the extra copies an older index may hold
#: (:meth:`WhooshWriter.repair`).
IDS_UNIQUE = "IDS_UNIQUE"
# Documents handed to a worker process at a time.
BATCH_SIZE = 256
# Inputs with fewer records are indexed in one process.
PARALLEL_MIN_RECORDS = 2000


_WRITER_CLASSES: dict[str, type[SegmentWriter]] = {}


def _writer_classes() -> dict[str, type[SegmentWriter]]:
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

        from searchengine.engines.whoosh.arraypostings import ArrayCodec
        from searchengine.engines.whoosh.codec import (
            OLD_SPELLING_FIELDS,
            segment_words,
            write_segment_words,
        )
        from searchengine.engines.whoosh.postings import TermPostingPool
        from searchengine.engines.whoosh.schema import spelled_fields, spelling_words

        # Extends SegmentWriter, whose methods it calls through super(); the writers' method
        # order stays IndexWriting, then MpWriter or SegmentWriter (as with an object base).
        class IndexWriting(SegmentWriter):
            def __init__(self, ix, *args, limitmb: int = 128, **kwargs) -> None:
                kwargs.setdefault("codec", ArrayCodec())  # the workers' too (MpWriter's subargs)
                # (*args never reaches limitmb's place: Whoosh and this module make writers with keywords)
                super().__init__(ix, *args, limitmb=limitmb, **kwargs)  # type: ignore[misc]
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
    multiproc.SegmentWriter = _writer_classes()["segment"]  # type: ignore[misc]  # (a class name replaced)
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

    class Writer(_writer_classes()["parallel"]):  # type: ignore[misc]  # a class made on first use
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.jobqueue = _JobQueue(self.jobqueue, self.tasks)

        def _new_task(self):
            args = (self.storage, self.indexname, self.jobqueue.jobs, self.resultqueue, self.subargs, self.multisegment)
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
    return Writer(ix, procs=jobs, batchsize=BATCH_SIZE, multisegment=True, start_method="fork", limitmb=limitmb)


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


class WhooshWriter:
    """One write run on an index folder (:class:`searchengine.engines.Writer`).

    Entered, it holds the folder's write lock and a new generation: empty
    (``mode="build"``, or an update of a folder without an index) or a
    hard-linked copy of the current one (``"update"``, ``"remove"``).
    :meth:`publish` finishes it (facet columns, layout) and moves
    ``CURRENT``; leaving without publishing (an error, Ctrl-C) removes the
    unfinished generation, and the previous one stays current.

    Args:
        index_dir: the index folder; created if missing.
        mode: ``"build"``, ``"update"`` or ``"remove"``.
        lock_timeout: seconds to wait for another writer.
        jobs: indexing processes for the first pass (large inputs only),
            and threads of the model that encodes vectors.
        memory_mb: memory for posting buffers, all processes together.
        vectors: keep record vectors for semantic search (:mod:`.vectors`):
            ``True``, ``False``, or ``None`` for as the current generation
            does (no vectors for a first build).
        on_encode: called with ``(encoded, to encode)`` while vectors are encoded.

    Raises (on entering):
        IndexNotFoundError: ``"remove"`` and there is no index.
        IndexBusyError: another process holds the lock past ``lock_timeout``.
        IndexDamagedError: the current generation cannot be opened.
        IndexOutdatedError: the current generation has an older layout (rebuild).
    """

    def __init__(
        self,
        index_dir: str | os.PathLike,
        *,
        mode: str,
        lock_timeout: float,
        jobs: int | None = None,
        memory_mb: int = 512,
        vectors: bool | None = None,
        on_encode=None,
    ) -> None:
        self.target = Path(index_dir)
        self.vectors = self._asked = vectors
        self.on_encode = on_encode
        self.encoded = 0  # records whose vectors this run encoded
        self.location = str(self.target)
        self.mode = mode
        self.lock_timeout = lock_timeout
        self.jobs = max(1, jobs or os.cpu_count() or 1)
        self.memory_mb = memory_mb
        self._stack = ExitStack()
        self._base: Path | None = None
        self._current: Path | None = None
        self._generation: Path | None = None
        self._ix: FileIndex | None = None  # the new generation's (set on entering)
        self._searcher: Searcher | None = None  # the base generation's, for version lookups
        self._writer: SegmentWriter | None = None  # the open Whoosh writer of the current pass
        self._first_done = False
        self._expected = 0  # documents after the first pass
        self._changed = False  # whether the second pass changed anything
        self._rewritten: set[str] = set()
        self._published = False
        self._ids_unique = False  # whether no id is held twice (see IDS_UNIQUE)

    @property
    def updating(self) -> bool:
        """Whether documents go into a copy of an existing index (so versions can be looked up)."""
        return self._base is not None

    def __enter__(self) -> WhooshWriter:
        target = self.target
        if self.mode == "remove" and store.current_generation(target) is None:
            raise IndexNotFoundError(f"{target}: no index here (run 'searchengine index' first)")
        store.check_local(target)
        foreign = [] if store.holds_index(target) else store.foreign_files(target)
        if foreign:
            shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
            raise InputError(
                f"{target} holds other files ({shown}) and no index: name an empty or new folder "
                "for the index (nothing was written)"
            )
        self._stack.enter_context(store.write_lock(target, timeout=self.lock_timeout))
        try:
            store.remove_stale(target)
            current = store.current_generation(target, writer=True, strict=self.mode != "build")
            if self.vectors is None:
                self.vectors = current is not None and vector_files.has_vectors(current)
            if self.vectors:
                from searchengine.semantic.encoder import SemanticUnavailableError, check_model

                try:
                    check_model()  # before anything is written
                except SemanticUnavailableError as exc:
                    kept = "this index keeps vectors for semantic search" if self._asked is None else "--vectors"
                    raise SemanticUnavailableError(f"{target}: {kept}, and {exc}; or index with --no-vectors") from None
            self._current = current  # its vectors are kept by a rebuild too
            base = current if self.mode != "build" else None
            generation = self._generation = store.new_generation(target)
            if base is not None:
                # An older index is rebuilt, not updated; a damaged one is
                # named before anything of it is carried into the new one.
                store.check_generation(base, target, everything=True)
                store.link_generation(base, generation)
                try:
                    self._ix = store.open_generation(generation)
                except Exception as exc:  # Whoosh raises many kinds on damage
                    raise store.open_failure(base, exc) from exc
                self._base = base
                self._ids_unique = (base / IDS_UNIQUE).exists()
            else:
                from searchengine.engines.whoosh.schema import build_schema

                self._ix = store.create_generation_index(generation, build_schema())
                self._ids_unique = True  # a build folds repeated ids
        except BaseException:
            self._abandon()
            raise
        return self

    def __exit__(self, kind, exc, traceback) -> None:
        if exc is None:
            self._stack.close()
            return
        self._abandon()
        if self._base is not None and not isinstance(exc, SearchEngineError) and store.is_damage(exc):
            raise IndexDamagedError(
                f"{self._base}: index cannot be read ({type(exc).__name__}: {exc}); "
                "rebuild it with 'searchengine index PATH...'"
            ) from exc

    def _abandon(self) -> None:
        """Stop the writers (an indexing process stops now), remove the unfinished generation, unlock."""
        try:
            if self._writer is not None:
                try:
                    self._writer.cancel()
                except Exception:  # noqa: BLE001 - a commit that failed has closed the writer already
                    pass
            self._close_searcher()
            if self._generation is not None and not self._published:
                shutil.rmtree(self._generation, ignore_errors=True)
        finally:
            self._stack.close()

    def _opened(self) -> FileIndex:
        """The new generation's Whoosh index; raises RuntimeError outside the ``with`` block."""
        if self._ix is None:
            raise RuntimeError(f"{self.target}: the index writer is used outside its 'with' block")
        return self._ix

    def _close_searcher(self) -> None:
        if self._searcher is not None:
            self._searcher.close()
            self._searcher = None

    def check(self, record: Record) -> str | None:
        """Why ``record`` cannot be written: never (``None``); any id and text fit."""
        return None

    def versions(self, ids: list[str]) -> dict[str, int]:
        """``{id: highest indexed version (0 for none)}`` of the ids the copied index holds."""
        if self._base is None:
            return {}
        if self._searcher is None:
            self._searcher = self._opened().searcher()
        searcher, found = self._searcher, {}
        stored = searcher.stored_fields  # type: ignore[attr-defined]  # Whoosh copies it from the reader at run time
        for doc_id in ids:
            docnums = _live(searcher, doc_id)
            if docnums:
                found[doc_id] = max((stored(d).get("version") or 0) for d in docnums)
        return found

    def write(self, documents: Iterable, on_failed=None) -> None:
        """Write ``documents`` (each with ``record`` and ``replace``: delete the
        indexed copies of its id first). The first call is the first pass, in
        parallel for a large input; calls after :meth:`flush` are the second
        pass. A document is never refused here, so ``on_failed`` is not called."""
        from searchengine.engines.whoosh.schema import document_fields

        if self._first_done:
            self._rewrite(documents)
            return
        documents = iter(documents)
        # Small inputs are indexed in this process: starting workers would cost more.
        head = list(itertools.islice(documents, PARALLEL_MIN_RECORDS))
        parallel = self.jobs if len(head) == PARALLEL_MIN_RECORDS else 1
        ix = self._opened()
        writer = self._writer = _writer(ix, parallel, self.memory_mb)
        count = ix.doc_count()
        for document in itertools.chain(head, documents):
            if document.replace and self._base is not None:
                if self._searcher is None:
                    self._searcher = ix.searcher()
                docnums = _live(self._searcher, document.record.id)
                for docnum in docnums:
                    writer.delete_document(docnum)
                count -= len(docnums)
            writer.add_document(**document_fields(document.record))
            count += 1
        self._expected = count

    def flush(self) -> None:
        """Commit the first pass.

        Raises:
            SearchEngineError: an indexing process died and its documents are
                missing (Whoosh's parallel writer drops its segment silently).
        """
        self._close_searcher()
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.commit(mergetype=merge_policy)
        self._first_done = True
        ix = self._opened()
        if ix.doc_count() != self._expected and writer is not None:
            raise SearchEngineError(
                f"{self.target}: {self._expected - ix.doc_count()} documents were not written (an "
                "indexing process failed); the index is unchanged"
            )

    def _second_pass(self):
        """The writer of the second pass (opened on first need) and its searcher."""
        if self._writer is None:
            self._writer = _segment_writer(self._opened(), max(16, self.memory_mb // 2))
        return self._writer, self._writer.searcher()

    def _rewrite(self, documents: Iterable) -> None:
        from searchengine.engines.whoosh.schema import document_fields

        writer, searcher = self._second_pass()
        for document in documents:
            doc_id = document.record.id
            for docnum in _live(searcher, doc_id):
                writer.delete_document(docnum)
            writer.add_document(**document_fields(document.record))
            self._rewritten.add(doc_id)
            self._changed = True

    def stored(self, ids: list[str]) -> dict[str, Record]:
        """``{id: record}`` of the ids written so far (the last copy of each)."""
        from searchengine.engines.whoosh.searcher import record_from_stored

        _, searcher = self._second_pass()
        found = {}
        for doc_id in ids:
            docnums = _live(searcher, doc_id)
            if docnums:
                found[doc_id] = record_from_stored(searcher.stored_fields(docnums[-1]))
        return found

    def repair(self) -> int:
        """Drop extra copies of one id (an index written by an older version, or
        by hand, may hold two): the copy with the higher version, then the one
        written last, is kept. Returns the copies dropped.

        Every id is looked at only when the index started from may hold
        one twice (it has no :data:`IDS_UNIQUE` mark): the first update of
        an index of an older version. Otherwise the index's own writes
        (each replacing the copies of its id) keep ids unique, and the scan,
        which grows with the index (a minute at 1M documents), is skipped.
        """
        if self._ids_unique:
            return 0
        writer, searcher = self._second_pass()
        dropped = 0
        for term, info in searcher.reader().iter_field("id"):
            if info.doc_frequency() < 2 or term in self._rewritten:
                continue
            docnums = _live(searcher, term)
            if len(docnums) < 2:
                continue
            keep = max(docnums, key=lambda d: (searcher.stored_fields(d).get("version") or 0, d))
            for docnum in docnums:
                if docnum != keep:
                    writer.delete_document(docnum)
                    dropped += 1
                    self._changed = True
        self._ids_unique = True
        return dropped

    def delete(self, ids: list[str]) -> tuple[int, set[str]]:
        """Delete the documents with ``ids``; ``(ids deleted, ids not found)``."""
        self._first_done = True
        writer, searcher = self._second_pass()
        removed, missing = 0, set()
        for doc_id in ids:
            docnums = _live(searcher, doc_id)
            if not docnums:
                missing.add(doc_id)
            for docnum in docnums:
                writer.delete_document(docnum)
            removed += bool(docnums)
        self._changed = True
        return removed, missing

    def publish(self) -> int:
        """Commit the second pass (when it changed anything), write the
        generation's facet columns and layout, and make it current; returns
        its document count."""
        from whoosh import index as whoosh_index

        ix, generation = self._opened(), self._generation
        if generation is None:  # (set with the index on entering)
            raise RuntimeError(f"{self.target}: the index writer is used outside its 'with' block")
        if not self._first_done:
            self.flush()
        writer, self._writer = self._writer, None
        if writer is not None:
            if self._changed:
                writer.commit(mergetype=merge_policy)
            else:
                writer.cancel()
        # A writer that only deleted (an update's repairs) leaves the files
        # of its empty segment behind, which no table of contents names.
        toc = ix._read_toc()
        whoosh_index.clean_files(ix.storage, ix.indexname, toc.generation, toc.segments)
        with ix.reader() as reader:  # the facet and sort columns belong to the generation
            # (reads every kept segment's columns; the names' keys of the generation before)
            columnmerge.write_update_columns(generation, reader, self._current)
            if self.vectors:
                self.encoded = vector_files.write_vectors(
                    generation, reader, self.target, base=self._current, threads=self.jobs, progress=self.on_encode
                )
            else:
                for name in (vector_files.VECTORS_FILE, vector_files.SCALES_FILE):
                    (generation / name).unlink(missing_ok=True)
        store.write_layout(generation)
        if self._ids_unique:
            if not (generation / IDS_UNIQUE).exists():  # (one linked from the base is left as it is)
                (generation / IDS_UNIQUE).write_bytes(b"")
        else:
            (generation / IDS_UNIQUE).unlink(missing_ok=True)
        integrity.write_checksums(generation, base=self._current)
        documents = ix.doc_count()
        store.publish(self.target, generation)
        self._published = True
        store.remove_stale(self.target)
        return documents
