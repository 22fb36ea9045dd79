"""The generation's facet and sort columns as a search reads them, and what
a search keeps per open searcher.

:class:`FacetColumns` holds the arrays of the column file
(:mod:`searchengine.engines.whoosh.columns` says what they are and how they
are written), memory-mapped, and answers from them: the hits in a sort
order (:meth:`FacetColumns.sorted_docnums`), facet counts over every hit
(:func:`count_facets`), the documents of an author filter
(:meth:`FacetColumns.author_docs`), did-you-mean's words
(:meth:`FacetColumns.spelling_words`) and a field's term list for fuzzy
words (:meth:`FacetColumns.vocabulary`).

Counting a facet goes over the matching document numbers only: with numpy
(the hits' value ids gathered and counted with ``np.bincount``) for many
hits or once numpy is loaded, else with stdlib loops over the same mapped
memory, which for a cold command-line search cost less than importing numpy
(:data:`NUMPY_MIN_HITS`).

:class:`SearcherCache` is what a search keeps per open Whoosh searcher: the
columns (mapped, or built and stored for an index written before the
column file), the snippet analyzer, and the document numbers of recently
used terms, from which :meth:`SearcherCache.docnums` gives every match of a
query (:func:`searchengine.engines.whoosh.evaluate.matching_docnums`).
"""

from __future__ import annotations

import heapq
import sys
import threading
from array import array
from collections import Counter, OrderedDict
from collections.abc import Iterable, Sequence
from itertools import chain
from pathlib import Path

from searchengine.engines.whoosh.blocks import posting_blocks
from searchengine.engines.whoosh.columns import COLUMNS_FILE, NUMBER_COLUMNS, SET_COLUMNS, build_arrays, map_columns
from searchengine.errors import QueryError
from searchengine.facets import DEFAULT_FACET_SIZE, FACET_NAMES, MAX_FACET_SIZE, FacetCounts, FacetValue, facet
from searchengine.filters import FIRST_MARK, keyword_key
from searchengine.limits import SORTS

#: From this many hits, counting and sorting use numpy (imported then, which
#: costs a cold process 0.17 s of CPU on a busy 2-core machine); below,
#: stdlib loops over the same memory-mapped arrays (3 µs a hit there, against
#: 0.2 µs with numpy) are cheaper. Once numpy is loaded it is always used.
NUMPY_MIN_HITS = 50_000


class FacetColumns:
    """Per-document facet and sort values of one generation, indexed by docnum.

    Made by :meth:`load` (the generation's column file, memory-mapped) or by
    the constructor (read from a Whoosh reader's ``facet_data`` column: 0.3-2 s
    for 74,728 arXiv records, hence the file). Read-only; share it.

    Attributes:
        size: number of documents (the reader's ``doc_count_all()``).
        arrays: name → ``memoryview`` of integers (numpy reads the same
            memory without copying): ``year`` (per document, 0 when
            unknown); ``order.<sort>`` (each document's rank under the sort);
            for each set column ``<name>.offsets`` (size + 1), ``<name>.values``
            (value ids), ``<name>.names`` (bytes: the value strings' UTF-8),
            ``<name>.name_offsets`` and ``<name>.name_rank`` (each value's
            position in string order).

    Raises:
        IndexDamagedError: (from the constructor) the index has no facet data,
            i.e. it was built before facets existed and must be rebuilt.
    """

    def __init__(self, reader=None, *, arrays: dict | None = None) -> None:
        if arrays is None:
            arrays = build_arrays(reader)
        self.arrays = {
            name: values if isinstance(values, memoryview) else memoryview(values) for name, values in arrays.items()
        }
        self.size = len(self.arrays["order.newest"])
        self._numpy: dict | None = None

    @classmethod
    def load(cls, path: Path, reader) -> FacetColumns | None:
        """The columns stored at ``path`` for ``reader``'s generation, memory-mapped;
        ``None`` when the file is missing, from another generation or
        document count, lacks a column, or is malformed."""
        try:
            arrays = map_columns(path, reader)
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return None if arrays is None else cls(arrays=arrays)

    def numpy_arrays(self) -> dict:
        """:attr:`arrays` as numpy arrays over the same memory (imports numpy)."""
        if self._numpy is None:
            import numpy as np

            self._numpy = {name: np.asarray(values) for name, values in self.arrays.items()}
        return self._numpy

    def use_numpy(self, hits: int) -> bool:
        """Whether to count or sort ``hits`` documents with numpy (see :data:`NUMPY_MIN_HITS`)."""
        return self._numpy is not None or hits >= NUMPY_MIN_HITS or "numpy" in sys.modules

    def order(self, sort: str) -> memoryview:
        """``rank[docnum]``: each document's position in the whole index under ``sort``.

        ``newest``: submitted day descending, then id descending (later arXiv
        ids are newer); ``oldest``: day ascending, then id ascending; a
        document with only a year follows the dated ones of its year, one
        with neither comes last (:func:`searchengine.dates.sort_keys`);
        ``title``: folded title, then id.
        """
        rank = self.arrays.get("order." + sort)
        if rank is None:
            raise QueryError(f"unknown sort {sort!r} (choose from {', '.join(SORTS)})")
        return rank

    def sorted_docnums(self, docnums: Sequence[int], sort: str, start: int, stop: int) -> list[int]:
        """``docnums`` in ``sort`` order (see :meth:`order`), positions ``start .. stop``."""
        rank = self.order(sort)
        if not self.use_numpy(len(docnums)):
            if stop < len(docnums) // 8:
                return heapq.nsmallest(stop, docnums, key=rank.__getitem__)[start:]
            return sorted(docnums, key=rank.__getitem__)[start:stop]
        import numpy as np

        docs = np.asarray(docnums, dtype=np.int64)
        ranks = self.numpy_arrays()["order." + sort][docs]
        if stop < len(docs):  # only the first ``stop`` need ordering
            keep = np.argpartition(ranks, stop - 1)[:stop]
            docs, ranks = docs[keep], ranks[keep]
        return docs[np.argsort(ranks)][start:stop].tolist()

    def vocabulary(self, fieldname: str) -> list[str] | None:
        """The distinct indexed terms of ``fieldname`` (one of
        :data:`~.columns.VOCABULARY_FIELDS`) in term order, ``None`` when this column
        file has none (one written before it held them)."""
        blob = self.arrays.get("vocabulary." + fieldname)
        if blob is None:
            return None
        text = bytes(blob).decode("utf-8")
        return text.split("\n") if text else []

    def author_docs(self, keys: Iterable[str]) -> list[int]:
        """Ascending document numbers (deleted ones included) of the
        documents with an author having any of ``keys``: the keys of
        :func:`searchengine.filters.name_keys`, or those keys marked
        :data:`~searchengine.filters.FIRST_MARK` for the first author."""
        arrays = self.arrays
        offsets, vids = arrays["author_key.offsets"], arrays["author_key.values"]
        found: set[int] = set()
        for key in keys:
            first = key.startswith(FIRST_MARK)
            at = self._find("author_key", key[len(FIRST_MARK) :] if first else key)
            if at is None:
                continue
            part = "author.first_" if first else "author.all_"
            doc_offsets, docs = arrays[part + "offsets"], arrays[part + "docs"]
            for vid in vids[offsets[at] : offsets[at + 1]]:
                found.update(docs[doc_offsets[vid] : doc_offsets[vid + 1]])
        return sorted(found)

    def has_column(self, column: str) -> bool:
        """Whether the file holds the set column ``column`` (one written
        before its facet was declared does not)."""
        return column + ".offsets" in self.arrays

    def value_docs(self, column: str, keys: Iterable[str]) -> list[int]:
        """Ascending document numbers (deleted ones included) of the
        documents holding a value of set column ``column`` whose
        :func:`~searchengine.filters.keyword_key` is one of ``keys``; none
        when the file has no such column."""
        if not self.has_column(column):
            return []
        wanted = set(keys)
        count = len(self.arrays[column + ".name_offsets"]) - 1
        vids = {vid for vid in range(count) if keyword_key(self.name(column, vid)) in wanted}
        if not vids:
            return []
        import numpy as np

        arrays = self.numpy_arrays()
        offsets, values = arrays[column + ".offsets"], arrays[column + ".values"]
        slots = np.flatnonzero(np.isin(values, np.fromiter(vids, dtype=np.int64)))
        # The document of each slot: the last offset at or before it.
        docs = np.searchsorted(offsets, slots, side="right") - 1
        return np.unique(docs).tolist()

    def has_spelling_word(self, word: str) -> bool:
        """Whether some title or abstract holds ``word`` as written (folded:
        :func:`~searchengine.engines.whoosh.schema.spelling_words`)."""
        return self._find("spelling", word) is not None

    def spelling_words(self, prefix: str = "") -> list[str]:
        """The spelling words starting with ``prefix``, in code point order."""
        names, offsets = self.arrays["spelling.names"], self.arrays["spelling.name_offsets"]
        start = self._position("spelling", prefix.encode("utf-8"))
        # b"\xff" sorts after every UTF-8 continuation of the prefix.
        end = self._position("spelling", prefix.encode("utf-8") + b"\xff") if prefix else len(offsets) - 1
        blob, base = bytes(names[offsets[start] : offsets[end]]), offsets[start]
        return [blob[offsets[i] - base : offsets[i + 1] - base].decode("utf-8") for i in range(start, end)]

    def _string_at(self, table: str, i: int) -> bytes:
        offsets = self.arrays[table + ".name_offsets"]
        return bytes(self.arrays[table + ".names"][offsets[i] : offsets[i + 1]])

    def _position(self, table: str, wanted: bytes) -> int:
        """Where ``wanted`` is, or would be inserted, in the sorted string
        table ``table`` (``<table>.names`` / ``.name_offsets``)."""
        from bisect import bisect_left

        count = len(self.arrays[table + ".name_offsets"]) - 1
        return bisect_left(range(count), wanted, key=lambda i: self._string_at(table, i))

    def _find(self, table: str, text: str) -> int | None:
        """The position of ``text`` in the sorted string table ``table``; ``None`` when absent."""
        wanted = text.encode("utf-8")
        at = self._position(table, wanted)
        found = at < len(self.arrays[table + ".name_offsets"]) - 1 and self._string_at(table, at) == wanted
        return at if found else None

    def ranks(self, sort: str, docnums: Sequence[int]) -> list[int]:
        """The rank of each of ``docnums`` under ``sort`` (see :meth:`order`)."""
        return list(map(self.order(sort).__getitem__, docnums))

    def name(self, column: str, vid: int) -> str:
        """The string of value id ``vid`` of set column ``column``."""
        offsets = self.arrays[column + ".name_offsets"]
        return bytes(self.arrays[column + ".names"][offsets[vid] : offsets[vid + 1]]).decode("utf-8")

    def number_counts(self, column: str, docnums: Sequence[int], size: int) -> tuple[list, int, int]:
        """The ``size`` highest values of number column ``column`` among
        ``docnums`` with their counts, highest first: ``([(value, count)],
        distinct values, unknown)``; ``unknown`` counts the documents whose
        value is 0 (none)."""
        if not self.use_numpy(len(docnums)):
            counts = Counter(map(self.arrays[column].__getitem__, docnums))
            unknown = counts.pop(0, 0)
            return [(value, counts[value]) for value in heapq.nlargest(size, counts)], len(counts), unknown
        import numpy as np

        found = self.numpy_arrays()[column][np.asarray(docnums, dtype=np.int64)]
        known = found[found != 0]
        numbers, tallies = np.unique(known, return_counts=True)
        top = list(zip(numbers[::-1][:size].tolist(), tallies[::-1][:size].tolist()))
        return top, len(numbers), len(found) - len(known)

    def set_counts(
        self, column: str, docnums: Sequence[int], size: int, *, first_only: bool = False
    ) -> tuple[list, int, int]:
        """The ``size`` values of set column ``column`` held by most of
        ``docnums`` (ties in string order): ``([(value id, count)], distinct
        values, unknown)``, a count being the number of those documents
        holding the value, ``unknown`` the number holding none.
        ``first_only`` counts each document's first value only (the
        primary category)."""
        offsets, values = self.arrays[column + ".offsets"], self.arrays[column + ".values"]
        if not self.use_numpy(len(docnums)):
            ends = [offsets[d + 1] for d in docnums]
            starts = list(map(offsets.__getitem__, docnums))
            unknown = sum(1 for begin, end in zip(starts, ends) if begin == end)
            if first_only:
                counts = Counter(values[begin] for begin, end in zip(starts, ends) if begin < end)
            else:
                counts = Counter(chain.from_iterable(map(values.__getitem__, map(slice, starts, ends))))
            rank = self.arrays[column + ".name_rank"]
            if len(counts) > size:  # only values at or above the size-th largest count are ordered
                threshold = heapq.nlargest(size, counts.values())[-1]
                top = heapq.nsmallest(
                    size, ((-count, rank[vid], vid) for vid, count in counts.items() if count >= threshold)
                )
            else:
                top = sorted((-count, rank[vid], vid) for vid, count in counts.items())
            return [(vid, -negative) for negative, _, vid in top], len(counts), unknown
        import numpy as np

        arrays = self.numpy_arrays()
        offsets, values = arrays[column + ".offsets"], arrays[column + ".values"]
        docs = np.asarray(docnums, dtype=np.int64)
        starts = offsets[docs]
        lengths = offsets[docs + 1] - starts
        unknown = int(np.count_nonzero(lengths == 0))
        if first_only:
            chosen = values[starts[lengths > 0]]
        elif len(docs) == self.size:
            chosen = values  # every document: every value
        else:
            # The hits' runs of values, gathered: run i covers starts[i] .. starts[i]+lengths[i].
            run_ends = np.cumsum(lengths)
            chosen = values[
                np.repeat(starts - run_ends + lengths, lengths) + np.arange(run_ends[-1] if len(run_ends) else 0)
            ]
        counted = np.bincount(chosen)
        vids = np.flatnonzero(counted)
        tallies = counted[vids]
        distinct = len(vids)
        if distinct > size:  # only values at or above the size-th largest count are ordered
            least = np.partition(tallies, distinct - size)[distinct - size]
            vids, tallies = vids[tallies >= least], tallies[tallies >= least]
        best = np.lexsort((arrays[column + ".name_rank"][vids], -tallies))[:size]
        return list(zip(vids[best].tolist(), tallies[best].tolist())), distinct, unknown


def count_facets(
    columns: FacetColumns,
    docnums: Sequence[int],
    names: Iterable[str],
    *,
    size: int = DEFAULT_FACET_SIZE,
    primary_only: bool = False,
    selects=None,
) -> dict[str, FacetCounts]:
    """Count facet values over all ``docnums`` (every hit, not one page).

    Args:
        columns: the index's :class:`FacetColumns`.
        docnums: document numbers of all hits (each once).
        names: facets to count, from :data:`FACET_NAMES`.
        size: known values listed per facet (1..:data:`MAX_FACET_SIZE`).
        primary_only: count only each document's primary category.
        selects: ``selects(facet, value) -> bool`` marking values the active
            filters chose (:meth:`searchengine.filters.Filters.selects`).

    Returns:
        Facet name → :class:`FacetCounts`. ``year`` lists years newest first;
        ``author`` and ``category`` list values by count (descending), then
        by value. A multi-valued field counts a document once per value; a
        document without a value counts in the unknown bucket, listed last.
    """
    if not 1 <= size <= MAX_FACET_SIZE:
        raise QueryError(f"facet size must be between 1 and {MAX_FACET_SIZE}, not {size}")
    selects = selects or (lambda facet, value: False)
    result: dict[str, FacetCounts] = {}
    for name in names:
        if name in NUMBER_COLUMNS:
            values, distinct, unknown = columns.number_counts(name, docnums, size)
        elif name in SET_COLUMNS and not columns.has_column(name):
            # A column file from before the facet was declared: no document has a value.
            values, distinct, unknown = [], 0, len(docnums)
        elif name in SET_COLUMNS:
            top, distinct, unknown = columns.set_counts(
                name, docnums, size, first_only=primary_only and facet(name).kind == "category"
            )
            values = [(columns.name(name, vid), count) for vid, count in top]
        else:
            raise QueryError(f"unknown facet {name!r} (choose from {', '.join(FACET_NAMES)})")
        others = distinct - len(values)
        listed = [FacetValue(value, count, selects(name, value)) for value, count in values]
        if unknown:
            listed.append(FacetValue(None, unknown, False))
        result[name] = FacetCounts(listed, others)
    return result


#: Document numbers kept for recently used terms, summed over terms (4 bytes each).
TERM_CACHE_DOCNUMS = 4_000_000


class SearcherCache:
    """What a search keeps per open Whoosh searcher: facet columns and term postings.

    ``folder`` is the generation's folder, where the column file lives
    (``None``: the columns are always read from the index). Thread-safe;
    create one per searcher and drop it with the searcher.
    """

    def __init__(self, searcher, term_budget: int = TERM_CACHE_DOCNUMS, *, folder: Path | None = None) -> None:
        self.searcher = searcher
        self.folder = folder
        self.term_budget = term_budget
        self._columns: FacetColumns | None = None
        self._snippet_analyzer = None
        self._terms: OrderedDict[tuple, array] = OrderedDict()
        self._cached = 0
        self._lock = threading.Lock()

    def snippet_analyzer(self):
        """The abstract field's analyzer for highlighting
        (:class:`searchengine.analysis.snippets.WordAnalysis`)."""
        with self._lock:
            if self._snippet_analyzer is None:
                from searchengine.analysis.snippets import WordAnalysis

                self._snippet_analyzer = WordAnalysis(self.searcher.schema["abstract"].analyzer)
            return self._snippet_analyzer

    def columns(self) -> FacetColumns:
        """The :class:`FacetColumns` of this searcher, mapped on first use.

        Without a column file the columns are read from the index and kept
        in memory (a published generation is never written to: its files
        are checksummed).

        Raises:
            IndexDamagedError: the column file does not belong to the
                generation's documents, or is malformed.
        """
        with self._lock:
            if self._columns is None:
                reader = self.searcher.reader()
                path = None if self.folder is None else self.folder / COLUMNS_FILE
                columns = None if path is None else FacetColumns.load(path, reader)
                if columns is None:
                    if path is not None and path.exists():
                        from searchengine.engines.whoosh.integrity import damaged
                        from searchengine.errors import IndexDamagedError

                        raise IndexDamagedError(
                            damaged(
                                path.parent.parent,
                                f"{path.parent.name}/{COLUMNS_FILE} does not fit its generation's documents",
                            )
                        )
                    columns = FacetColumns(arrays=build_arrays(reader))
                self._columns = columns
            return self._columns

    def docnums(self, query) -> list[int]:
        """Document numbers of every (non-deleted) document matching ``query``,
        ascending (:func:`searchengine.engines.whoosh.evaluate.matching_docnums`)."""
        from searchengine.engines.whoosh.evaluate import matching_docnums

        return matching_docnums(query, self.searcher, self)

    def forget_terms(self) -> None:
        """Drop the cached posting lists (to measure cold searches, or free memory)."""
        with self._lock:
            self._terms.clear()
            self._cached = 0

    def term_docs(self, sub, offset: int, term) -> array:
        """The posting list (document numbers) of one term in the segment
        ``sub`` (its first document ``offset``), cached."""
        key = (offset, term.fieldname, term.text)
        with self._lock:
            cached = self._terms.get(key)
            if cached is not None:
                self._terms.move_to_end(key)
                return cached
        reader = sub.reader()
        if (term.fieldname, term.text) not in reader:
            return array("i")
        docs = array("i")
        for ids, _ in posting_blocks(reader, term.fieldname, term.text):  # a block at a time, not a call a posting
            docs.extend(ids)
        if len(docs) <= self.term_budget // 4:
            with self._lock:
                if key not in self._terms:
                    self._terms[key] = docs
                    self._cached += len(docs)
                while self._cached > self.term_budget:
                    _, dropped = self._terms.popitem(last=False)
                    self._cached -= len(dropped)
        return docs
