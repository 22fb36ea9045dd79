"""A posting buffer for the index's writers: postings grouped by term.

Whoosh's writer keeps every posting until its segment is written, as a
``(field, term, document number, weight, value)`` tuple: about 250 bytes of
memory each, all sorted at the end, and once its memory limit is reached
sorted, pickled to a run file and merged back one posting at a time. On the
full arXiv sample (12 million postings) that made the build a third slower
than with unlimited memory, which itself would need several GB.

:class:`TermPostingPool` keeps each term's postings as one byte string
instead (a 16-byte head per posting, then its value): about 30 bytes per
posting and 150 per term, so a segment of the whole sample fits in a few
hundred MB. A writer adds each term's postings in increasing document order
(documents are numbered as they are added, and the documents of a merged
segment are renumbered in order), so only the terms need sorting. Over its
memory limit, the pool writes its terms, sorted, to a run file and starts
again; at the end the runs are merged term by term (at most
:data:`MAX_OPEN_RUNS` files at a time), concatenating each term's postings
in the order the runs were written. A term whose postings
nonetheless arrive out of document order is sorted when it is read back.

The pool replaces Whoosh's ``PostingPool`` on a ``SegmentWriter`` (see
:mod:`searchengine.engines.whoosh.writer`) and offers the part of its interface the
writer uses: ``add``, ``iter_postings``, ``fieldnames`` and ``cleanup``.
"""

from __future__ import annotations

import heapq
import itertools
import pickle
import struct
from collections.abc import Iterator

# Head of one posting: document number, weight, value length (bytes).
_HEAD = struct.Struct("<Idi")
# Approximate memory of a term beyond its postings (dict slot, key, buffer), bytes.
_TERM_BYTES = 150
# Run files read at once; more are first merged into fewer, this many at a time.
MAX_OPEN_RUNS = 64

Posting = tuple[str, bytes, int, float, bytes]


class TermPostingPool:
    """Postings of one segment in memory, grouped by field and term.

    Args:
        tempstore: a Whoosh storage for run files (the writer's temporary storage).
        limitmb: memory (MB, approximate) above which the buffered terms are
            written to a run file.
    """

    def __init__(self, tempstore, limitmb: int = 128) -> None:
        self.tempstore = tempstore
        self.limit = limitmb * 1024 * 1024
        self.size = 0
        self.fieldnames: set[str] = set()
        self.runs: list[str] = []
        self._fields: dict[str, dict[bytes, bytearray]] = {}

    def add(self, item: Posting) -> None:
        """Buffer one ``(field, term bytes, document number, weight, value bytes)`` posting."""
        fieldname, btext, docnum, weight, value = item
        terms = self._fields.get(fieldname)
        if terms is None:
            terms = self._fields[fieldname] = {}
            self.fieldnames.add(fieldname)
        postings = terms.get(btext)
        if postings is None:
            postings = terms[btext] = bytearray()
            self.size += _TERM_BYTES + len(btext)
        value = value or b""
        postings += _HEAD.pack(docnum, weight, len(value))
        postings += value
        self.size += _HEAD.size + len(value)
        if self.size > self.limit:
            self._write_run()

    def _sorted_terms(self) -> Iterator[tuple[str, bytes, bytes]]:
        """Buffered ``(field, term, postings)`` in order, emptying the buffer."""
        fields, self._fields, self.size = self._fields, {}, 0
        for fieldname in sorted(fields):
            terms = fields.pop(fieldname)
            for btext in sorted(terms):
                yield fieldname, btext, bytes(terms.pop(btext))

    def _write_run(self, entries: Iterator[tuple[str, bytes, bytes]] | None = None) -> str:
        from whoosh.util import random_name

        # Unique: the writers of one index share a temporary folder.
        name = f"{random_name()}.run"
        with self.tempstore.create_file(name) as run:
            for entry in self._sorted_terms() if entries is None else entries:
                pickle.dump(entry, run, pickle.HIGHEST_PROTOCOL)
        self.runs.append(name)
        return name

    def _read_run(self, name: str) -> Iterator[tuple[str, bytes, bytes]]:
        with self.tempstore.open_file(name).raw_file() as run:
            while True:
                try:
                    yield pickle.load(run)
                except EOFError:
                    return

    def _merged_runs(self, names: list[str]) -> Iterator[tuple[str, bytes, bytes]]:
        # heapq.merge keeps equal terms in run order, so each term's postings
        # are concatenated in the order they were added.
        merged = heapq.merge(*(self._read_run(name) for name in names), key=lambda e: (e[0], e[1]))
        for (fieldname, btext), entries in itertools.groupby(merged, key=lambda e: (e[0], e[1])):
            yield fieldname, btext, b"".join(e[2] for e in entries)

    def _merge_down(self) -> None:
        """Merge the oldest runs into one until at most :data:`MAX_OPEN_RUNS` remain."""
        while len(self.runs) > MAX_OPEN_RUNS:
            oldest, newer = self.runs[:MAX_OPEN_RUNS], self.runs[MAX_OPEN_RUNS:]
            self.runs = []
            self._write_run(self._merged_runs(oldest))  # first, as its postings came first
            self.runs.extend(newer)
            for name in oldest:
                self.tempstore.delete_file(name)

    def iter_postings(self) -> Iterator[Posting]:
        """Every posting, ordered by field, term and document number (empties the pool)."""
        if self.runs:
            if self._fields:
                self._write_run()
            self._merge_down()
            terms = self._merged_runs(self.runs)
        else:
            terms = self._sorted_terms()
        unpack, head = _HEAD.unpack_from, _HEAD.size
        for fieldname, btext, data in terms:
            postings, offset, end, last, ordered = [], 0, len(data), -1, True
            while offset < end:
                docnum, weight, length = unpack(data, offset)
                offset += head
                postings.append((fieldname, btext, docnum, weight, data[offset : offset + length]))
                offset += length
                if docnum < last:
                    ordered = False
                last = docnum
            if not ordered:
                postings.sort(key=lambda p: p[2])
            yield from postings

    def cleanup(self) -> None:
        """Delete the run files."""
        for name in self.runs:
            try:
                self.tempstore.delete_file(name)
            except OSError:
                pass
        self.runs = []
