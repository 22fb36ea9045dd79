"""A posting buffer for the index's writers: postings grouped by term, as arrays.

Whoosh's writer keeps every posting until its segment is written, as a
``(field, term, document number, weight, value)`` tuple: about 250 bytes of
memory each, all sorted at the end, and once its memory limit is reached
sorted, pickled to a run file and merged back one posting at a time; the
segment is then written one posting per call. On the full arXiv sample (12
million postings) that made the build a third slower than with unlimited
memory, which itself would need several GB.

:class:`TermPostingPool` keeps each term's postings as four arrays instead
(document numbers, weights, value lengths, and the values joined): about 16
bytes per posting besides its value, and about 400 per term, so a segment
of the whole sample fits in a few hundred MB. A writer adds each term's
postings in increasing document order (documents are numbered as they are
added, and the documents of a merged segment are renumbered in order), so
only the terms need sorting. Over its memory limit, the pool writes its
terms, sorted, to a run file and starts again; at the end the runs are
merged term by term (at most :data:`MAX_OPEN_RUNS` files at a time),
concatenating each term's arrays in the order the runs were written. A
term whose postings nonetheless arrive out of document order is sorted
when it is read back. :meth:`TermPostingPool.iter_terms` gives each term's
postings whole, which the codec writes block by block
(:meth:`~searchengine.engines.whoosh.codec.PackedPostingsWriter.add_postings`).

The run files are the writer's own temporary files (pickled tuples of
strings and bytes), never part of an index folder.

The pool replaces Whoosh's ``PostingPool`` on a ``SegmentWriter`` (see
:mod:`searchengine.engines.whoosh.writer`) and offers the part of its interface the
writer uses: ``add``, ``iter_postings``, ``fieldnames`` and ``cleanup``.
"""

from __future__ import annotations

import heapq
import itertools
import pickle
from array import array
from collections.abc import Iterable, Iterator

# Approximate memory of a term beyond its postings (dict slot, key, four arrays), bytes.
_TERM_BYTES = 400
# Memory of a posting besides its value: document number, weight, value length.
_POSTING_BYTES = 4 + 8 + 4
# Run files read at once; more are first merged into fewer, this many at a time.
MAX_OPEN_RUNS = 64

Posting = tuple[str, bytes, int, float, bytes]
#: One term's postings: ``(field, term bytes, document numbers, weights, values)``,
#: the lists of equal length, document numbers ascending.
TermPostings = tuple[str, bytes, list[int], list[float], list[bytes]]
# A term as buffered and in run files: field, term, then the arrays' bytes.
_Entry = tuple[str, bytes, bytes, bytes, bytes, bytes]


class _Lists:
    """One buffered term's postings (see the module)."""

    __slots__ = ("ids", "weights", "sizes", "values")

    def __init__(self) -> None:
        self.ids = array("I")
        self.weights = array("d")
        self.sizes = array("I")
        self.values = bytearray()


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
        self._fields: dict[str, dict[bytes, _Lists]] = {}

    def _terms(self, fieldname: str) -> dict[bytes, _Lists]:
        terms = self._fields.get(fieldname)
        if terms is None:
            terms = self._fields[fieldname] = {}
            self.fieldnames.add(fieldname)
        return terms

    def add(self, item: Posting) -> None:
        """Buffer one ``(field, term bytes, document number, weight, value bytes)`` posting."""
        fieldname, btext, docnum, weight, value = item
        self.add_document_terms(fieldname, docnum, ((btext, weight, value),))

    def add_document_terms(self, fieldname: str, docnum: int, items: Iterable[tuple[bytes, float, bytes]]) -> None:
        """Buffer document ``docnum``'s ``(term bytes, weight, value bytes)``
        postings in ``fieldname`` (each term once)."""
        terms = self._terms(fieldname)
        size = 0
        for btext, weight, value in items:
            lists = terms.get(btext)
            if lists is None:
                lists = terms[btext] = _Lists()
                size += _TERM_BYTES + len(btext)
            lists.ids.append(docnum)
            lists.weights.append(weight)
            if value:
                lists.sizes.append(len(value))
                lists.values += value
                size += _POSTING_BYTES + len(value)
            else:
                lists.sizes.append(0)
                size += _POSTING_BYTES
        self.size += size
        if self.size > self.limit:
            self._write_run()

    def _sorted_terms(self) -> Iterator[_Entry]:
        """Buffered terms in order, as bytes, emptying the buffer."""
        fields, self._fields, self.size = self._fields, {}, 0
        for fieldname in sorted(fields):
            terms = fields.pop(fieldname)
            for btext in sorted(terms):
                lists = terms.pop(btext)
                yield (
                    fieldname,
                    btext,
                    lists.ids.tobytes(),
                    lists.weights.tobytes(),
                    lists.sizes.tobytes(),
                    bytes(lists.values),
                )

    def _write_run(self, entries: Iterator[_Entry] | None = None) -> str:
        from whoosh.util import random_name

        # Unique: the writers of one index share a temporary folder.
        name = f"{random_name()}.run"
        with self.tempstore.create_file(name) as run:
            for entry in self._sorted_terms() if entries is None else entries:
                pickle.dump(entry, run, pickle.HIGHEST_PROTOCOL)
        self.runs.append(name)
        return name

    def _read_run(self, name: str) -> Iterator[_Entry]:
        with self.tempstore.open_file(name).raw_file() as run:
            while True:
                try:
                    yield pickle.load(run)
                except EOFError:
                    return

    def _merged_runs(self, names: list[str]) -> Iterator[_Entry]:
        # heapq.merge keeps equal terms in run order, so each term's postings
        # are concatenated in the order they were added.
        merged = heapq.merge(*(self._read_run(name) for name in names), key=lambda e: (e[0], e[1]))
        for (fieldname, btext), group in itertools.groupby(merged, key=lambda e: (e[0], e[1])):
            entries = list(group)
            if len(entries) == 1:
                yield entries[0]
            else:
                yield (fieldname, btext, *(b"".join(e[part] for e in entries) for part in range(2, 6)))  # type: ignore[misc]

    def _merge_down(self) -> None:
        """Merge the oldest runs into one until at most :data:`MAX_OPEN_RUNS` remain."""
        while len(self.runs) > MAX_OPEN_RUNS:
            oldest, newer = self.runs[:MAX_OPEN_RUNS], self.runs[MAX_OPEN_RUNS:]
            self.runs = []
            self._write_run(self._merged_runs(oldest))  # first, as its postings came first
            self.runs.extend(newer)
            for name in oldest:
                self.tempstore.delete_file(name)

    def iter_terms(self) -> Iterator[TermPostings]:
        """Every term's postings, ordered by field and term (empties the pool)."""
        if self.runs:
            if self._fields:
                self._write_run()
            self._merge_down()
            entries = self._merged_runs(self.runs)
        else:
            entries = self._sorted_terms()
        for fieldname, btext, id_bytes, weight_bytes, size_bytes, joined in entries:
            ids, weights, sizes = array("I"), array("d"), array("I")
            ids.frombytes(id_bytes)
            weights.frombytes(weight_bytes)
            sizes.frombytes(size_bytes)
            ends = list(itertools.accumulate(sizes))
            values = [joined[end - size : end] for end, size in zip(ends, sizes)]
            id_list, weight_list = ids.tolist(), weights.tolist()
            if any(later < earlier for earlier, later in zip(id_list, id_list[1:])):
                order = sorted(range(len(id_list)), key=id_list.__getitem__)
                id_list = [id_list[i] for i in order]
                weight_list = [weight_list[i] for i in order]
                values = [values[i] for i in order]
            yield fieldname, btext, id_list, weight_list, values

    def iter_postings(self) -> Iterator[Posting]:
        """Every posting, ordered by field, term and document number (empties the pool)."""
        for fieldname, btext, ids, weights, values in self.iter_terms():
            for docnum, weight, value in zip(ids, weights, values):
                yield fieldname, btext, docnum, weight, value

    def cleanup(self) -> None:
        """Delete the run files."""
        for name in self.runs:
            try:
                self.tempstore.delete_file(name)
            except OSError:
                pass
        self.runs = []
