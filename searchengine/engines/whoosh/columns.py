"""Facet and sort columns of the embedded index, and counting over them.

Counting and sorting read document-number-aligned arrays, not Whoosh's
``groupedby`` (several microseconds per hit) or stored fields:

* At indexing time :func:`pack_facet_data` writes each document's year, id,
  authors and categories into one bytes column (``facet_data``) and
  :func:`title_sort_key` its sort title into another (``sort_title``).
* When a generation is committed, the writer turns those into arrays
  (:func:`write_columns`) and stores them in one file of the generation,
  :data:`COLUMNS_FILE`, written and fsynced before the generation is
  published. A search maps that file (:meth:`FacetColumns.load`: a few
  milliseconds, whatever the index size) instead of reading every document.
* The arrays (:class:`FacetColumns`): per document, each number column
  (:data:`NUMBER_COLUMNS`, e.g. the year) and the rank under each sort
  order (:data:`SORT_ORDERS`); for each multi-valued column
  (:data:`SET_COLUMNS`: authors, categories) a CSR layout, i.e. the value
  ids of document ``d`` are ``values[offsets[d]:offsets[d + 1]]`` (each value
  once, in the record's order, so the first category is the primary one),
  and the value strings in one UTF-8 blob with their offsets and their rank
  in string order.
* Counting a facet goes over the matching document numbers only: with
  numpy (the hits' value ids gathered and counted with ``np.bincount``)
  for many hits or once numpy is loaded, else with stdlib loops over the
  same mapped memory, which for a cold command-line search cost less than
  importing numpy (:data:`NUMPY_MIN_HITS`).
* An index written before the column file existed (or whose file does not
  match its generation) still works: the columns are built from the
  ``facet_data`` column on first use, as every search once did, and stored
  beside the generation's files for the next process (atomically; a
  read-only index is left alone).
* Author filters are answered from the author column too: the file holds
  each author key (:func:`searchengine.filters.name_keys`: ``qian``,
  ``qian/d``, ``qian/depei``) with the value ids of the names that have it,
  and for each name the documents holding it anywhere and as first author
  (:meth:`FacetColumns.author_docs`). The index has no author-key terms:
  they were a third of its terms, nearly all of one posting each.
* So is did-you-mean's vocabulary: the words of titles and abstracts as
  written (folded, not stemmed), sorted, gathered at commit from the
  segments' word files (:meth:`FacetColumns.has_spelling_word`,
  :meth:`FacetColumns.spelling_words`).
* The matching document numbers themselves come from
  :meth:`SearcherCache.docnums`: set algebra over the posting lists of the
  query's terms, which skips Whoosh's matcher tree (a Python call per posting
  per query node); the document numbers of recently used terms are kept.

A document without a value is counted under the value ``None`` (the
"unknown" bucket), which always comes after every known value. Document
numbers are those of the Whoosh reader of the generation, deleted documents
included (their values are kept, and never matched).

numpy is imported only where it pays (writing the file, and counting many
hits), so a cold command-line search does not load it.
"""

from __future__ import annotations

import heapq
import json
import os
import struct
import sys
import threading
from array import array
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Sequence
from itertools import chain
from pathlib import Path
from typing import NamedTuple

from searchengine.errors import QueryError
from searchengine.facets import DEFAULT_FACET_SIZE, FACET_NAMES, MAX_FACET_SIZE, FacetCounts, FacetValue
from searchengine.filters import FIRST_MARK
from searchengine.limits import SORTS
from searchengine.records import sort_title

# Separators inside a packed facet_data value (never in clean record text).
_FIELD_SEP = "\x1e"
_VALUE_SEP = "\x1f"

#: The column file in a generation's folder (see :func:`write_columns`).
COLUMNS_FILE = "facet.columns"
# File layout: magic, header length (8 bytes, little-endian), JSON header,
# then each array at an 8-byte-aligned offset the header gives.
_MAGIC = b"SECOLS01"
_ALIGN = 8


class FacetData(NamedTuple):
    """One document's ``facet_data`` value, unpacked (:func:`unpack_facet_data`)."""

    year: int | None
    id: str
    authors: list[str]
    categories: list[str]
    # The submitted day number (``date.toordinal``), from the ``date_data`` column.
    day: int | None = None


def pack_facet_data(record) -> bytes:
    """The ``facet_data`` column value of a record: year, id, authors, categories.

    UTF-8 text with fields separated by U+001E and list items by U+001F; an
    unknown year is an empty field.
    """
    year = "" if record.year is None else str(record.year)
    authors = _VALUE_SEP.join(a.replace(_VALUE_SEP, " ") for a in record.authors)
    categories = _VALUE_SEP.join(c for c in record.categories if c.strip())
    return _FIELD_SEP.join((year, record.id, authors, categories)).encode("utf-8")


def unpack_facet_data(packed: bytes) -> FacetData | None:
    """The inverse of :func:`pack_facet_data`; ``None`` for an empty value."""
    if not packed:
        return None
    year, doc_id, authors, categories = packed.decode("utf-8").split(_FIELD_SEP)
    return FacetData(int(year) if year else None, doc_id,
                     authors.split(_VALUE_SEP) if authors else [],
                     categories.split(_VALUE_SEP) if categories else [])


def pack_date_data(record) -> bytes:
    """The ``date_data`` column value: the submitted day number
    (``date.toordinal``) as ASCII digits, empty when unknown."""
    return b"" if record.submitted is None else str(record.submitted.toordinal()).encode("ascii")


def title_sort_key(title: str) -> bytes:
    """The ``sort_title`` column value: the title case- and accent-folded, UTF-8.

    Byte order of the folded UTF-8 equals code point order of the folded text.
    """
    return sort_title(title).encode("utf-8")


# --- the columns: adding one is an entry here (and its value in pack_facet_data) ---

#: One integer per document (numpy dtype, value from :class:`FacetData`; 0 = none).
NUMBER_COLUMNS: dict[str, tuple[str, Callable[[FacetData], int]]] = {
    "year": ("int32", lambda data: data.year or 0),
    "day": ("int32", lambda data: data.day or 0),
}
#: Values per document (strings, each counted once per document, record order kept).
SET_COLUMNS: dict[str, Callable[[FacetData], Iterable[str]]] = {
    "author": lambda data: data.authors,
    "category": lambda data: data.categories,
}


def _by_date(newest: bool) -> Callable:
    """The ``newest`` or ``oldest`` order: by submitted day, a paper with only
    a year after the dated ones of its year, then by id (later arXiv ids are
    newer); a paper with neither comes last (:func:`searchengine.dates.sort_keys`)."""
    def order(docs: range, numbers: dict, ids, titles) -> list[int]:
        from searchengine.dates import sort_keys

        days, years = numbers["day"], numbers["year"]
        which = 0 if newest else 1
        keys = [sort_keys(days[d] or None, years[d] or None)[which] for d in docs]
        known = [d for d in docs if keys[d] is not None]
        unknown = [d for d in docs if keys[d] is None]
        return (sorted(known, key=lambda d: (keys[d], ids[d]), reverse=newest)
                + sorted(unknown, key=ids.__getitem__, reverse=newest))
    return order


#: ``order(documents, numbers, ids, titles) -> docnums in order``, one per sort
#: (``numbers``: each of :data:`NUMBER_COLUMNS` per document)
#: (``titles()`` reads the folded titles, only when asked).
SORT_ORDERS: dict[str, Callable] = {
    "newest": _by_date(newest=True),
    "oldest": _by_date(newest=False),
    "title": lambda docs, numbers, ids, titles: _by_title(docs, ids, titles()),
}


def _by_title(docs: range, ids, titles) -> list[int]:
    # Folded title, then id.
    return sorted(docs, key=lambda d: (titles[d], ids[d]))


def _numpy():
    import numpy

    return numpy


#: The fields fuzzy words expand in (the query language's default fields),
#: whose distinct terms the column file also holds, as ``vocabulary.<field>``:
#: the terms' UTF-8 joined by newlines, in term order. Reading a field's term
#: list from the index instead costs about 15 µs a term (1.4 s for 10,000
#: arXiv records' three fields), more than a cold search's whole budget.
VOCABULARY_FIELDS = ("title", "abstract", "authors")

#: Numeric fields whose ranges (the filters') are answered from the column of
#: the same name, which holds the same value per document (0 when unknown).
RANGE_COLUMNS = ("year", "day")

#: From this many hits, counting and sorting use numpy (imported then, which
#: costs a cold process 0.17 s of CPU on a busy 2-core machine); below,
#: stdlib loops over the same memory-mapped arrays (3 µs a hit there, against
#: 0.2 µs with numpy) are cheaper. Once numpy is loaded it is always used.
NUMPY_MIN_HITS = 50_000
# Buffer format codes of the stored dtypes (little-endian, as written).
_CODES = {"<i4": "i", "<i8": "q", "|u1": "B"}


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
            arrays = _read_arrays(reader)
        self.arrays = {name: values if isinstance(values, memoryview) else memoryview(values)
                       for name, values in arrays.items()}
        self.size = len(self.arrays["order.newest"])
        self._numpy: dict | None = None

    @classmethod
    def load(cls, path: Path, reader) -> FacetColumns | None:
        """The columns stored at ``path`` for ``reader``'s generation, memory-mapped;
        ``None`` when the file is missing, from another generation or
        document count, lacks a column, or is malformed."""
        try:
            arrays = _map_file(path, reader)
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return None if arrays is None else cls(arrays=arrays)

    def numpy_arrays(self) -> dict:
        """:attr:`arrays` as numpy arrays over the same memory (imports numpy)."""
        if self._numpy is None:
            np = _numpy()
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
        np = _numpy()
        docs = np.asarray(docnums, dtype=np.int64)
        ranks = self.numpy_arrays()["order." + sort][docs]
        if stop < len(docs):  # only the first ``stop`` need ordering
            keep = np.argpartition(ranks, stop - 1)[:stop]
            docs, ranks = docs[keep], ranks[keep]
        return docs[np.argsort(ranks)][start:stop].tolist()

    def vocabulary(self, fieldname: str) -> list[str] | None:
        """The distinct indexed terms of ``fieldname`` (one of
        :data:`VOCABULARY_FIELDS`) in term order, ``None`` when this column
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
            at = self._find("author_key", key[len(FIRST_MARK):] if first else key)
            if at is None:
                continue
            part = "author.first_" if first else "author.all_"
            doc_offsets, docs = arrays[part + "offsets"], arrays[part + "docs"]
            for vid in vids[offsets[at]:offsets[at + 1]]:
                found.update(docs[doc_offsets[vid]:doc_offsets[vid + 1]])
        return sorted(found)

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
        blob, base = bytes(names[offsets[start]:offsets[end]]), offsets[start]
        return [blob[offsets[i] - base:offsets[i + 1] - base].decode("utf-8") for i in range(start, end)]

    def _string_at(self, table: str, i: int) -> bytes:
        offsets = self.arrays[table + ".name_offsets"]
        return bytes(self.arrays[table + ".names"][offsets[i]:offsets[i + 1]])

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
        return bytes(self.arrays[column + ".names"][offsets[vid]:offsets[vid + 1]]).decode("utf-8")

    def number_counts(self, column: str, docnums: Sequence[int], size: int) -> tuple[list, int, int]:
        """The ``size`` highest values of number column ``column`` among
        ``docnums`` with their counts, highest first: ``([(value, count)],
        distinct values, unknown)``; ``unknown`` counts the documents whose
        value is 0 (none)."""
        if not self.use_numpy(len(docnums)):
            counts = Counter(map(self.arrays[column].__getitem__, docnums))
            unknown = counts.pop(0, 0)
            return [(value, counts[value]) for value in heapq.nlargest(size, counts)], len(counts), unknown
        np = _numpy()
        found = self.numpy_arrays()[column][np.asarray(docnums, dtype=np.int64)]
        known = found[found != 0]
        values, counts = np.unique(known, return_counts=True)
        top = list(zip(values[::-1][:size].tolist(), counts[::-1][:size].tolist()))
        return top, len(values), len(found) - len(known)

    def set_counts(self, column: str, docnums: Sequence[int], size: int, *,
                   first_only: bool = False) -> tuple[list, int, int]:
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
                top = heapq.nsmallest(size, ((-count, rank[vid], vid) for vid, count in counts.items()
                                             if count >= threshold))
            else:
                top = sorted((-count, rank[vid], vid) for vid, count in counts.items())
            return [(vid, -negative) for negative, _, vid in top], len(counts), unknown
        np = _numpy()
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
            ends = np.cumsum(lengths)
            chosen = values[np.repeat(starts - ends + lengths, lengths) + np.arange(ends[-1] if len(ends) else 0)]
        counted = np.bincount(chosen)
        vids = np.flatnonzero(counted)
        counts = counted[vids]
        distinct = len(vids)
        if distinct > size:  # only values at or above the size-th largest count are ordered
            threshold = np.partition(counts, distinct - size)[distinct - size]
            vids, counts = vids[counts >= threshold], counts[counts >= threshold]
        top = np.lexsort((arrays[column + ".name_rank"][vids], -counts))[:size]
        return list(zip(vids[top].tolist(), counts[top].tolist())), distinct, unknown


def _read_arrays(reader) -> dict:
    """The arrays of :class:`FacetColumns` from a Whoosh reader's ``facet_data`` and ``sort_title``."""
    from searchengine.errors import IndexDamagedError

    if not reader.has_column("facet_data"):
        from whoosh.reading import EmptyReader

        if not isinstance(reader, EmptyReader):  # (an index without documents has no columns at all)
            raise IndexDamagedError("this index has no facet data; rebuild it with 'searchengine index'")
    size = reader.doc_count_all()
    np = _numpy()
    numbers = {name: [0] * size for name in NUMBER_COLUMNS}
    ids = [""] * size
    sets = {name: ([0], [], {}) for name in SET_COLUMNS}  # offsets, value ids, value → id
    # The submitted days are a column of their own (an index from before dates has none).
    days = reader.column_reader("date_data") if size and reader.has_column("date_data") else None
    for docnum, packed in enumerate(reader.column_reader("facet_data") if size else ()):
        data = unpack_facet_data(packed)
        if data is not None and days is not None:
            day = days[docnum]
            data = data._replace(day=int(day) if day else None)
        if data is not None:
            ids[docnum] = data.id
            for name, (_, value) in NUMBER_COLUMNS.items():
                numbers[name][docnum] = value(data)
        for name, (offsets, vids, table) in sets.items():
            if data is not None:
                for value in dict.fromkeys(SET_COLUMNS[name](data)):  # once per document
                    vid = table.get(value)
                    if vid is None:
                        vid = table[value] = len(table)
                    vids.append(vid)
            offsets.append(len(vids))
    arrays = {name: np.array(numbers[name], dtype=dtype) for name, (dtype, _) in NUMBER_COLUMNS.items()}
    docs = range(size)
    titles = lambda: list(reader.column_reader("sort_title")) if size else []  # noqa: E731
    for sort, order in SORT_ORDERS.items():
        rank = np.empty(size, dtype=np.int32)
        rank[np.array(order(docs, numbers, ids, titles), dtype=np.int64)] = np.arange(size, dtype=np.int32)
        arrays["order." + sort] = rank
    for name, (offsets, vids, table) in sets.items():
        names = list(table)  # in id order
        encoded = [value.encode("utf-8") for value in names]
        arrays[name + ".offsets"] = np.array(offsets, dtype=np.int64)
        arrays[name + ".values"] = np.array(vids, dtype=np.int32)
        arrays[name + ".names"] = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        arrays[name + ".name_offsets"] = np.cumsum([0] + [len(e) for e in encoded], dtype=np.int64)
        name_rank = np.empty(len(names), dtype=np.int32)
        name_rank[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names), dtype=np.int32)
        arrays[name + ".name_rank"] = name_rank
    arrays.update(_author_key_arrays(np, list(sets["author"][2]), arrays["author.offsets"], arrays["author.values"]))
    arrays.update(_string_table(np, "spelling", _spelling_words(reader)))
    for fieldname in VOCABULARY_FIELDS:
        if fieldname in reader.schema:
            arrays["vocabulary." + fieldname] = np.frombuffer(_vocabulary_bytes(reader, fieldname), dtype=np.uint8)
    return arrays


def _author_key_arrays(np, names: list[str], offsets, values) -> dict:
    """The arrays of :meth:`FacetColumns.author_docs`, from the author set
    column (``names`` in value-id order, its ``offsets`` and ``values``).

    ``author_key.names`` / ``.name_offsets``: the distinct keys of
    :func:`searchengine.filters.name_keys`, UTF-8, in byte order (for a
    binary search); ``author_key.offsets`` / ``.values``: the value ids of
    the names having each key; ``author.all_offsets`` / ``.all_docs``: the
    documents holding each value id; ``author.first_offsets`` /
    ``.first_docs``: those whose first author it is. Offsets are 32-bit:
    a generation holds fewer than 2**31 author names and keys.
    """
    from searchengine.filters import name_keys

    keyed: dict[bytes, list[int]] = {}
    for vid, name in enumerate(names):
        for key in name_keys(name):
            keyed.setdefault(key.encode("utf-8"), []).append(vid)
    keys = sorted(keyed)
    arrays = _string_table(np, "author_key", keys)
    arrays["author_key.offsets"] = np.cumsum([0] + [len(keyed[k]) for k in keys], dtype=np.int32)
    arrays["author_key.values"] = np.array([vid for k in keys for vid in keyed[k]], dtype=np.int32)
    lengths = np.diff(offsets)
    slot_docs = np.repeat(np.arange(len(lengths), dtype=np.int32), lengths)
    firsts = offsets[:-1][lengths > 0]
    for part, (vids, docs) in {"all": (values, slot_docs), "first": (values[firsts], slot_docs[firsts])}.items():
        order = np.argsort(vids, kind="stable")  # by value id, documents ascending within one
        arrays[f"author.{part}_docs"] = docs[order].astype(np.int32)
        arrays[f"author.{part}_offsets"] = np.searchsorted(vids[order], np.arange(len(names) + 1)).astype(np.int32)
    return arrays


def _string_table(np, table: str, strings: Iterable) -> dict:
    """``<table>.names`` (the distinct ``strings`` in UTF-8 byte order, which
    is code point order, concatenated) and ``<table>.name_offsets`` (32-bit:
    a table holds under 2 GB), as :meth:`FacetColumns._find` searches them."""
    encoded = sorted({s if isinstance(s, bytes) else s.encode("utf-8") for s in strings})
    return {table + ".names": np.frombuffer(b"".join(encoded), dtype=np.uint8),
            table + ".name_offsets": np.cumsum([0] + [len(e) for e in encoded], dtype=np.int32)}


def _spelling_words(reader) -> set[str]:
    """The spelling words of every segment of ``reader`` (:func:`~searchengine.engines.whoosh.codec.segment_words`)."""
    import zlib

    from whoosh.reading import SegmentReader

    from searchengine.engines.whoosh.codec import segment_words
    from searchengine.errors import IndexDamagedError

    words: set[str] = set()
    for sub, _ in reader.leaf_readers():
        if isinstance(sub, SegmentReader):  # (an index without documents has none)
            try:
                words.update(segment_words(sub))
            except (zlib.error, UnicodeDecodeError) as error:
                raise IndexDamagedError(f"a segment's spelling words are damaged ({error}); "
                                        "rebuild the index with 'searchengine index'") from None
    return words


def _vocabulary_bytes(reader, fieldname: str) -> bytes:
    """The distinct terms of ``fieldname`` in term order, UTF-8, joined by
    newlines (no term holds one: the analyzers split text at spaces). Each
    segment's term list is read on its own, which is three times as fast as
    Whoosh's merge of them."""
    terms: set[bytes] = set()
    for sub, _ in reader.leaf_readers():
        terms.update(sub.lexicon(fieldname))
    return b"\n".join(sorted(terms))


def _array_names() -> list[str]:
    """Every array a column file must hold."""
    names = list(NUMBER_COLUMNS) + ["order." + sort for sort in SORT_ORDERS]
    for name in SET_COLUMNS:
        names += [f"{name}.{part}" for part in ("offsets", "values", "names", "name_offsets", "name_rank")]
    names += [f"author_key.{part}" for part in ("names", "name_offsets", "offsets", "values")]
    names += ["spelling.names", "spelling.name_offsets"]
    return names + [f"author.{part}" for part in ("all_docs", "all_offsets", "first_docs", "first_offsets")]


def _map_file(path: Path, reader) -> dict | None:
    """The arrays of the column file ``path`` (memory-mapped), or ``None``
    if it does not belong to ``reader``'s generation. Raises ``OSError``,
    ``ValueError``, ``KeyError`` or ``TypeError`` on a malformed file."""
    import mmap

    with open(path, "rb") as handle:
        head = handle.read(len(_MAGIC) + 8)
        if len(head) < len(_MAGIC) + 8 or head[:len(_MAGIC)] != _MAGIC:
            raise ValueError("not a column file")
        header = json.loads(handle.read(int.from_bytes(head[len(_MAGIC):], "little")))
        if (header["generation"] != reader.generation() or header["documents"] != reader.doc_count_all()
                or not set(_array_names()) <= header["arrays"].keys()):
            return None
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    if sys.byteorder != "little":  # the file's arrays are little-endian
        return None
    whole = memoryview(mapped)
    arrays = {}
    for name, (dtype, offset, count) in header["arrays"].items():
        code = _CODES[dtype]
        end = offset + count * struct.calcsize(code)
        if end > len(whole):
            raise ValueError(f"{path}: truncated")
        arrays[name] = whole[offset:end].cast(code)
    if len(arrays["order.newest"]) != header["documents"]:
        raise ValueError(f"{path}: wrong length")
    return arrays


def write_columns(folder: Path, reader, arrays: dict | None = None) -> dict:
    """Write the column file of the generation in ``folder``, which ``reader`` reads.

    The file is written under a temporary name, fsynced, and renamed into
    place (the folder is fsynced too), so a reader sees a complete file or
    none; a file linked from an earlier generation is replaced, never
    written into. ``arrays`` (:class:`FacetColumns` arrays for ``reader``)
    are built from the reader when not given. Returns the arrays.

    Raises ``OSError`` when the folder cannot be written, and
    ``IndexDamagedError`` for an index without facet data.
    """
    if arrays is None:
        arrays = _read_arrays(reader)
    layout: dict = {}
    header = {"generation": reader.generation(), "documents": reader.doc_count_all(), "arrays": layout}
    reserved = 0
    while True:  # the header gives the arrays' offsets, which its length moves: settle it
        offset = -(-(len(_MAGIC) + 8 + reserved) // _ALIGN) * _ALIGN
        for name, values in arrays.items():
            layout[name] = (values.dtype.str, offset, len(values))
            offset += -(-values.nbytes // _ALIGN) * _ALIGN
        encoded = json.dumps(header).encode("utf-8")
        if len(encoded) <= reserved:
            break
        reserved = len(encoded)
    temporary = folder / f".{COLUMNS_FILE}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        with open(temporary, "wb") as handle:
            handle.write(_MAGIC + len(encoded).to_bytes(8, "little") + encoded)
            for name, values in arrays.items():
                handle.seek(layout[name][1])
                handle.write(values.tobytes())
            handle.truncate(offset)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, folder / COLUMNS_FILE)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    return arrays


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
        elif name in SET_COLUMNS:
            top, distinct, unknown = columns.set_counts(name, docnums, size,
                                                        first_only=primary_only and name == "category")
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
        (:class:`searchengine.engines.whoosh.snippets.WordAnalysis`)."""
        with self._lock:
            if self._snippet_analyzer is None:
                from searchengine.engines.whoosh.snippets import WordAnalysis

                self._snippet_analyzer = WordAnalysis(self.searcher.schema["abstract"].analyzer)
            return self._snippet_analyzer

    def columns(self) -> FacetColumns:
        """The :class:`FacetColumns` of this searcher, mapped (or built) on first use.

        Without a usable column file (an index written before there was
        one), the columns are read from the index and stored for the next
        process; when the folder cannot be written they are just used.
        """
        with self._lock:
            if self._columns is None:
                reader = self.searcher.reader()
                path = None if self.folder is None else self.folder / COLUMNS_FILE
                columns = None if path is None else FacetColumns.load(path, reader)
                if columns is None:
                    arrays = _read_arrays(reader)
                    if self.folder is not None:
                        try:
                            write_columns(self.folder, reader, arrays)
                        except OSError:
                            pass  # a read-only index: use the columns without storing them
                    columns = FacetColumns(arrays=arrays)
                self._columns = columns
            return self._columns

    def docnums(self, query) -> list[int]:
        """Document numbers of every (non-deleted) document matching ``query``, ascending.

        ``And``, ``Or``, ``DisjunctionMax``, ``AndNot``, ``AndMaybe``,
        ``Require`` and ``Not`` inside ``And`` are evaluated as set
        operations over the posting lists of their ``Term`` leaves, and year
        and day ranges over their columns (:data:`RANGE_COLUMNS`); any other
        query (phrases, other ranges, wildcards...) is answered by Whoosh's
        own ``docs()``. The result equals ``searcher.docs_for_query(query)``.
        """
        if self.searcher.is_atomic():
            parts = [(self.searcher, 0)]
        else:
            parts = self.searcher.subsearchers
        found: list[int] = []
        for sub, offset in parts:
            if sub.reader().has_deletions():
                docs = set(query.docs(sub))
            else:
                docs = self._evaluate(sub, offset, query)
            found.extend(sorted(docs) if not offset else sorted(d + offset for d in docs))
        return found

    def forget_terms(self) -> None:
        """Drop the cached posting lists (to measure cold searches, or free memory)."""
        with self._lock:
            self._terms.clear()
            self._cached = 0

    def _evaluate(self, sub, offset: int, q) -> set[int]:
        from whoosh import query as wq

        from searchengine.engines.whoosh.queries import DocumentSet

        kind = type(q)
        if kind is wq.Term:
            return set(self._term_docs(sub, offset, q))
        if kind is DocumentSet:
            return set(q.docnums_in(sub.reader()))
        if kind is wq.NumericRange and q.fieldname in RANGE_COLUMNS:
            return self._range_docs(sub, offset, q)
        if kind is wq.And or kind is wq.Require:
            subqueries = list(q.subqueries) if kind is wq.And else [q.a, q.b]
            positive = [s for s in subqueries if type(s) is not wq.Not]
            negative = [s.query for s in subqueries if type(s) is wq.Not]
            if positive:
                sets = sorted((self._evaluate(sub, offset, s) for s in positive), key=len)
                docs = sets[0].intersection(*sets[1:])
                for s in negative:
                    docs -= self._evaluate(sub, offset, s)
                return docs
        elif (kind is wq.Or and not getattr(q, "minmatch", 0)) or kind is wq.DisjunctionMax:
            if not any(type(s) is wq.Not for s in q.subqueries):
                return set().union(*(self._evaluate(sub, offset, s) for s in q.subqueries))
        elif kind is wq.AndNot:
            return self._evaluate(sub, offset, q.a) - self._evaluate(sub, offset, q.b)
        elif kind is wq.AndMaybe:
            return self._evaluate(sub, offset, q.a)
        return set(q.docs(sub))

    def _range_docs(self, sub, offset: int, q) -> set[int]:
        """The documents of one segment whose year or day (the columns' value,
        0 when unknown) lies in the ``NumericRange`` ``q``: a pass over one
        array instead of Whoosh's walk over the field's range terms and
        their postings (0.1 s for a year range on 10,000 documents)."""
        columns = self.columns()
        size = sub.reader().doc_count_all()
        low = 1 if q.start is None else max(1, q.start + (1 if q.startexcl else 0))  # 0: unknown
        high = None if q.end is None else q.end - (1 if q.endexcl else 0)
        if columns.use_numpy(size):
            values = columns.numpy_arrays()[q.fieldname][offset:offset + size]
            inside = values >= low
            if high is not None:
                inside &= values <= high
            return set(_numpy().flatnonzero(inside).tolist())
        values = columns.arrays[q.fieldname][offset:offset + size]
        if high is None:
            return {docnum for docnum, value in enumerate(values) if value >= low}
        return {docnum for docnum, value in enumerate(values) if low <= value <= high}

    def _term_docs(self, sub, offset: int, term) -> array:
        """The posting list (document numbers) of one term, cached."""
        key = (offset, term.fieldname, term.text)
        with self._lock:
            cached = self._terms.get(key)
            if cached is not None:
                self._terms.move_to_end(key)
                return cached
        reader = sub.reader()
        if (term.fieldname, term.text) not in reader:
            return array("i")
        docs = array("i", reader.postings(term.fieldname, term.text).all_ids())
        if len(docs) <= self.term_budget // 4:
            with self._lock:
                if key not in self._terms:
                    self._terms[key] = docs
                    self._cached += len(docs)
                while self._cached > self.term_budget:
                    _, dropped = self._terms.popitem(last=False)
                    self._cached -= len(dropped)
        return docs
