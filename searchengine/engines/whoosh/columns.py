"""Facet and sort columns of the embedded index: their values at indexing,
and the generation's column file that holds them as arrays.

Counting and sorting read document-number-aligned arrays, not Whoosh's
``groupedby`` (several microseconds per hit) or stored fields:

* At indexing time :func:`pack_facet_data` writes each document's id and
  facet values (year, authors, categories, ... as :data:`searchengine.facets.FACETS`
  declares them) into one bytes column (``facet_data``),
  :func:`pack_date_data` its submitted day into another (``date_data``) and
  :func:`title_sort_key` its sort title into a third (``sort_title``).
* When a generation is committed, the writer turns those into arrays
  (:func:`build_arrays`) and stores them in one file of the generation,
  :data:`COLUMNS_FILE` (:func:`write_columns`), written and fsynced before
  the generation is published. A search maps that file (:func:`map_columns`:
  a few milliseconds, whatever the index size) instead of reading every
  document.
* The arrays: per document, each number column (:data:`NUMBER_COLUMNS`,
  e.g. the year) and the rank under each sort order (:data:`SORT_ORDERS`);
  for each multi-valued column (:data:`SET_COLUMNS`: authors, categories) a
  CSR layout, i.e. the value ids of document ``d`` are
  ``values[offsets[d]:offsets[d + 1]]`` (each value once, in the record's
  order, so the first category is the primary one), and the value strings
  in one UTF-8 blob with their offsets and their rank in string order.
* Author filters are answered from the author column too: the file holds
  each author key (:func:`searchengine.filters.name_keys`: ``qian``,
  ``qian/d``, ``qian/depei``) with the value ids of the names that have it,
  and for each name the documents holding it anywhere and as first author
  (:func:`_author_key_arrays`). The index has no author-key terms: they were
  a third of its terms, nearly all of one posting each.
* So is did-you-mean's vocabulary: the words of titles and abstracts as
  written (folded, not stemmed), sorted, gathered at commit from the
  segments' word files; and the term lists fuzzy words expand in
  (:data:`VOCABULARY_FIELDS`).
* An index written before the column file existed (or whose file does not
  match its generation) still works: the columns are built from the
  ``facet_data`` column on first use, as every search once did, and stored
  beside the generation's files for the next process (atomically; a
  read-only index is left alone).

A document without a value is counted under the value ``None`` (the
"unknown" bucket), which always comes after every known value. Document
numbers are those of the Whoosh reader of the generation, deleted documents
included (their values are kept, and never matched).

The arrays as a search reads them (sorting, counting, the author and
spelling lookups) are :class:`searchengine.engines.whoosh.facetcolumns.FacetColumns`.
numpy is imported here only to build the arrays, not to map them.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from searchengine.facets import FACETS
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

    id: str
    #: Facet name → the values (a numeric facet: its number or ``None``); a
    #: facet the document was indexed without (declared later) is missing.
    values: dict[str, Any]
    # The submitted day number (``date.toordinal``), from the ``date_data`` column.
    day: int | None = None


def pack_facet_data(record) -> bytes:
    """The ``facet_data`` column value of a record: the first facet's value
    (the year), the id, then each other facet of :data:`~searchengine.facets.FACETS`
    in order (authors, categories, ...).

    UTF-8 text with fields separated by U+001E and list items by U+001F; an
    unknown value is an empty field. A facet declared later is a field added
    at the end, so a value packed before it existed unpacks without it.
    """
    fields = []
    for facet in FACETS:
        values = facet.values(record)
        if facet.numeric:
            fields.append(str(values[0]) if values else "")
        else:
            fields.append(_VALUE_SEP.join(str(v).replace(_VALUE_SEP, " ") for v in values))
    return _FIELD_SEP.join([fields[0], record.id, *fields[1:]]).encode("utf-8")


def unpack_facet_data(packed: bytes) -> FacetData | None:
    """The inverse of :func:`pack_facet_data`; ``None`` for an empty value."""
    if not packed:
        return None
    first, doc_id, *rest = packed.decode("utf-8").split(_FIELD_SEP)
    values: dict[str, Any] = {}
    for facet, text in zip(FACETS, [first, *rest]):
        if facet.numeric:
            values[facet.name] = int(text) if text else None
        else:
            values[facet.name] = text.split(_VALUE_SEP) if text else []
    return FacetData(doc_id, values)


def pack_date_data(record) -> bytes:
    """The ``date_data`` column value: the submitted day number
    (``date.toordinal``) as ASCII digits, empty when unknown."""
    return b"" if record.submitted is None else str(record.submitted.toordinal()).encode("ascii")


def title_sort_key(title: str) -> bytes:
    """The ``sort_title`` column value: the title case- and accent-folded, UTF-8.

    Byte order of the folded UTF-8 equals code point order of the folded text.
    """
    return sort_title(title).encode("utf-8")


# --- the columns: one per facet of searchengine.facets.FACETS (its values are
# FacetData.values[name], packed by pack_facet_data), and the submitted day ---


def _number(name: str) -> Callable[[FacetData], int]:
    """The value of numeric facet ``name`` in a :class:`FacetData` (0 when none)."""
    return lambda data: data.values.get(name) or 0


def _set(name: str) -> Callable[[FacetData], Iterable[str]]:
    """The values of facet ``name`` in a :class:`FacetData` (none when the data predates it)."""
    return lambda data: data.values.get(name, ())


#: One integer per document (numpy dtype, value from :class:`FacetData`; 0 = none).
NUMBER_COLUMNS: dict[str, tuple[str, Callable[[FacetData], int]]] = {
    **{facet.name: ("int32", _number(facet.name)) for facet in FACETS if facet.numeric},
    "day": ("int32", lambda data: data.day or 0),
}
#: Values per document (strings, each counted once per document, record order kept).
SET_COLUMNS: dict[str, Callable[[FacetData], Iterable[str]]] = {
    facet.name: _set(facet.name) for facet in FACETS if not facet.numeric
}
#: The set column of the ``author`` facet, whose name keys the file holds too.
AUTHOR_COLUMN = next(facet.name for facet in FACETS if facet.kind == "author")


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
        return sorted(known, key=lambda d: (keys[d], ids[d]), reverse=newest) + sorted(
            unknown, key=ids.__getitem__, reverse=newest
        )

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


#: The fields fuzzy words expand in (the query language's default fields),
#: whose distinct terms the column file also holds, as ``vocabulary.<field>``:
#: the terms' UTF-8 joined by newlines, in term order. Reading a field's term
#: list from the index instead costs about 15 µs a term (1.4 s for 10,000
#: arXiv records' three fields), more than a cold search's whole budget.
VOCABULARY_FIELDS = ("title", "abstract", "authors")

#: Numeric fields whose ranges (the filters') are answered from the column of
#: the same name, which holds the same value per document (0 when unknown).
RANGE_COLUMNS = ("year", "day")

# Buffer format codes of the stored dtypes (little-endian, as written).
_CODES = {"<i4": "i", "<i8": "q", "|u1": "B"}


def build_arrays(reader, known_keys: dict[str, list[str]] | None = None) -> dict:
    """The arrays of the column file (numpy arrays, by name) from a Whoosh
    reader's ``facet_data``, ``date_data`` and ``sort_title`` columns, its
    spelling words and its terms. ``known_keys``: author names' keys already
    worked out (:func:`known_name_keys` of an earlier generation's file),
    which are not worked out again. (An update's file is assembled from
    its base's instead: :mod:`.columnmerge`.)"""
    from searchengine.errors import IndexDamagedError

    if not reader.has_column("facet_data"):
        from whoosh.reading import EmptyReader

        if not isinstance(reader, EmptyReader):  # (an index without documents has no columns at all)
            raise IndexDamagedError("this index has no facet data; rebuild it with 'searchengine index'")
    import numpy as np

    size = reader.doc_count_all()
    numbers = {name: [0] * size for name in NUMBER_COLUMNS}
    ids = [""] * size
    # offsets, value ids, value → id
    sets: dict[str, tuple[list[int], list[int], dict[str, int]]] = {name: ([0], [], {}) for name in SET_COLUMNS}
    # The submitted days are a column of their own (an index from before dates has none).
    days = reader.column_reader("date_data") if size and reader.has_column("date_data") else None
    for docnum, packed in enumerate(reader.column_reader("facet_data") if size else ()):
        data = unpack_facet_data(packed)
        if data is not None and days is not None:
            day = days[docnum]
            data = data._replace(day=int(day) if day else None)
        if data is not None:
            ids[docnum] = data.id
            for name, (_, number) in NUMBER_COLUMNS.items():
                numbers[name][docnum] = number(data)
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
    names = list(sets[AUTHOR_COLUMN][2])
    arrays.update(_author_key_arrays(np, names, known_keys or {}))
    held = arrays[AUTHOR_COLUMN + ".offsets"], arrays[AUTHOR_COLUMN + ".values"]
    arrays.update(author_doc_arrays(np, *held, len(names)))
    return arrays | word_arrays(np, reader)


def word_arrays(np, reader) -> dict:
    """The spelling table and the vocabularies of :data:`VOCABULARY_FIELDS`."""
    arrays = _string_table(np, "spelling", _spelling_words(reader))
    for fieldname in VOCABULARY_FIELDS:
        if fieldname in reader.schema:
            arrays["vocabulary." + fieldname] = np.frombuffer(_vocabulary_bytes(reader, fieldname), dtype=np.uint8)
    return arrays


def _author_key_arrays(np, names: list[str], known: dict[str, list[str]]) -> dict:
    """The author keys of :meth:`~.facetcolumns.FacetColumns.author_docs`,
    from the author column's ``names`` in value-id order.

    ``author_key.names`` / ``.name_offsets``: the distinct keys of
    :func:`searchengine.filters.name_keys`, UTF-8, in byte order (for a
    binary search); ``author_key.offsets`` / ``.values``: the value ids of
    the names having each key, ascending. Offsets are 32-bit: a generation
    holds fewer than 2**31 author names and keys.
    """
    from searchengine.filters import name_keys

    keyed: dict[bytes, list[int]] = {}
    for vid, name in enumerate(names):
        held = known.get(name)
        for key in name_keys(name) if held is None else held:
            keyed.setdefault(key.encode("utf-8"), []).append(vid)
    keys = sorted(keyed)
    arrays = _string_table(np, "author_key", keys)
    arrays["author_key.offsets"] = np.cumsum([0] + [len(keyed[k]) for k in keys], dtype=np.int32)
    arrays["author_key.values"] = np.array([vid for k in keys for vid in keyed[k]], dtype=np.int32)
    return arrays


def author_doc_arrays(np, offsets, values, names: int) -> dict:
    """``author.all_offsets`` / ``.all_docs``: the documents holding each of
    the author column's ``names`` value ids (its CSR ``offsets`` and
    ``values``); ``author.first_offsets`` / ``.first_docs``: those whose
    first author it is. 32-bit, as :func:`_author_key_arrays`."""
    arrays = {}
    lengths = np.diff(offsets)
    slot_docs = np.repeat(np.arange(len(lengths), dtype=np.int32), lengths)
    firsts = offsets[:-1][lengths > 0]
    for part, (vids, docs) in {"all": (values, slot_docs), "first": (values[firsts], slot_docs[firsts])}.items():
        order = np.argsort(vids, kind="stable")  # by value id, documents ascending within one
        arrays[f"author.{part}_docs"] = docs[order].astype(np.int32)
        arrays[f"author.{part}_offsets"] = np.searchsorted(vids[order], np.arange(names + 1)).astype(np.int32)
    return arrays


def _string_table(np, table: str, strings: Iterable) -> dict:
    """``<table>.names`` (the distinct ``strings`` in UTF-8 byte order, which
    is code point order, concatenated) and ``<table>.name_offsets`` (32-bit:
    a table holds under 2 GB), as :meth:`~.facetcolumns.FacetColumns._find` searches them."""
    encoded = sorted({s if isinstance(s, bytes) else s.encode("utf-8") for s in strings})
    return {
        table + ".names": np.frombuffer(b"".join(encoded), dtype=np.uint8),
        table + ".name_offsets": np.cumsum([0] + [len(e) for e in encoded], dtype=np.int32),
    }


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
                raise IndexDamagedError(
                    f"a segment's spelling words are damaged ({error}); rebuild the index with 'searchengine index'"
                ) from None
    return words


def _vocabulary_bytes(reader, fieldname: str) -> bytes:
    """The distinct terms of ``fieldname`` in term order, UTF-8, joined by
    newlines (no term holds one: the analyzers split text at spaces). Each
    segment's term list is read on its own, which is three times as fast as
    Whoosh's merge of them."""
    from searchengine.engines.whoosh.internals import field_terms

    terms: set[bytes] = set()
    for sub, _ in reader.leaf_readers():
        terms.update(field_terms(sub, fieldname))
    return b"\n".join(sorted(terms))


#: The arrays of one set column.
SET_PARTS = ("offsets", "values", "names", "name_offsets", "name_rank")


def _array_names() -> list[str]:
    """Every array a column file must hold. The set columns of facets other
    than the author's may be missing: a file written before a facet was
    declared lacks it, and that facet counts every document as unknown."""
    names = list(NUMBER_COLUMNS) + ["order." + sort for sort in SORT_ORDERS]
    names += [f"{AUTHOR_COLUMN}.{part}" for part in SET_PARTS]
    names += [f"author_key.{part}" for part in ("names", "name_offsets", "offsets", "values")]
    names += ["spelling.names", "spelling.name_offsets"]
    return names + [f"author.{part}" for part in ("all_docs", "all_offsets", "first_docs", "first_offsets")]


def map_columns(path: Path, reader, header_out: dict | None = None) -> dict | None:
    """The arrays of the column file ``path`` (memory-mapped), or ``None``
    if it does not belong to ``reader``'s generation (any generation's when
    ``reader`` is ``None``). ``header_out``, when given, receives the file's
    header. Raises ``OSError``, ``ValueError``, ``KeyError`` or
    ``TypeError`` on a malformed file."""
    import mmap

    with open(path, "rb") as handle:
        head = handle.read(len(_MAGIC) + 8)
        if len(head) < len(_MAGIC) + 8 or head[: len(_MAGIC)] != _MAGIC:
            raise ValueError("not a column file")
        header = json.loads(handle.read(int.from_bytes(head[len(_MAGIC) :], "little")))
        if header_out is not None:
            header_out.update(header)
        if not set(_array_names()) <= header["arrays"].keys() or (
            reader is not None
            and (header["generation"] != reader.generation() or header["documents"] != reader.doc_count_all())
        ):
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
        arrays[name] = whole[offset:end].cast(code)  # type: ignore[call-overload]  # (a code of _CODES)
    if len(arrays["order.newest"]) != header["documents"]:
        raise ValueError(f"{path}: wrong length")
    return arrays


# Names whose keys stand for how name_keys reads names: a file written by a
# version that reads them otherwise is not reused (known_name_keys).
_NAME_KEY_PROBES = (
    "Depei Qian",
    "Qian, D.",
    "Maria del Mar Gómez-Pérez",
    "J. van der Berg",
    "Weinan E",
    "Martin Luther King, Jr.",
    "Ō'Neil Jean-Luc",
    "ATLAS Collaboration",
)


def name_keys_fingerprint() -> int:
    """CRC-32 of the keys of :data:`_NAME_KEY_PROBES`, stored in the column file's header."""
    import zlib

    from searchengine.filters import name_keys

    return zlib.crc32(json.dumps([name_keys(name) for name in _NAME_KEY_PROBES]).encode("utf-8"))


def known_name_keys(path: Path) -> dict[str, list[str]]:
    """``{author name: its keys}`` as the column file ``path`` holds them
    (an earlier generation's), or empty when it holds none this version
    would give the same (no file, a damaged one, one written by a version
    whose :func:`~searchengine.filters.name_keys` differs). Reading them
    costs a fifth of working them out again."""
    header: dict = {}
    try:
        arrays = map_columns(path, None, header)
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    if arrays is None or header.get("name_keys") != name_keys_fingerprint():
        return {}
    names = _strings(arrays, AUTHOR_COLUMN)
    keys = _strings(arrays, "author_key")
    offsets, values = arrays["author_key.offsets"], arrays["author_key.values"]
    known: dict[str, list[str]] = {}
    for number, key in enumerate(keys):
        for vid in values[offsets[number] : offsets[number + 1]]:
            known.setdefault(names[vid], []).append(key)
    return known


def _strings(arrays: dict, table: str) -> list[str]:
    """The strings of table ``table`` of mapped arrays (``<table>.names``, ``.name_offsets``)."""
    blob = bytes(arrays[table + ".names"])
    offsets = arrays[table + ".name_offsets"].tolist()
    return [blob[start:end].decode("utf-8") for start, end in zip(offsets, offsets[1:])]


def segments_of(reader) -> list[list]:
    """``[[segment id, documents], ...]`` of ``reader``'s segments in document
    order (the column file's header keeps them as ``segments``)."""
    from whoosh.reading import SegmentReader

    return [
        [sub.segment().segment_id(), sub.doc_count_all()]  # type: ignore[union-attr]  # (a segment's reader)
        for sub, _ in reader.leaf_readers()
        if isinstance(sub, SegmentReader)
    ]


def write_columns(folder: Path, reader, arrays: dict | None = None, base: Path | None = None) -> dict:
    """Write the column file of the generation in ``folder``, which ``reader`` reads.

    The file is written under a temporary name, fsynced, and renamed into
    place (the folder is fsynced too), so a reader sees a complete file or
    none; a file linked from an earlier generation is replaced, never
    written into. ``arrays`` (:func:`build_arrays` of ``reader``) are built
    from the reader when not given, taking the author names' keys of the
    generation in folder ``base`` (the one an update started from) where
    its column file holds them. The header lists the generation's segments
    (:func:`segments_of`), from which the next update's file is assembled
    (:mod:`.columnmerge`). Returns the arrays.

    Raises ``OSError`` when the folder cannot be written, and
    ``IndexDamagedError`` for an index without facet data.
    """
    if arrays is None:
        arrays = build_arrays(reader, known_name_keys(base / COLUMNS_FILE) if base is not None else None)
    layout: dict = {}
    header = {
        "generation": reader.generation(),
        "documents": reader.doc_count_all(),
        "name_keys": name_keys_fingerprint(),
        "segments": segments_of(reader),
        "arrays": layout,
    }
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
