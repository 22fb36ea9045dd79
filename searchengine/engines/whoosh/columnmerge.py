"""The column file of an updated generation, assembled from its base's.

An update copies the generation it starts from, adds a segment or two and
marks replaced documents deleted; Whoosh's merge policy may rewrite a few
small segments and reorder the others, but a large segment stays as it
was, its documents at another offset at most. Working the column file out
from every document again (:func:`.columns.build_arrays`) costs time in
proportion to the whole index: at 300,000 documents it was most of an
update. Here the arrays of segments the base generation already had are
copied from the base's column file and only the new segments' documents
are read:

* number columns and the set columns' per-document values: slices of the
  base's arrays, moved to each segment's new offset; a set column's names
  keep their value ids, and new names are added after them;
* each sort order: the base's order of the kept documents (their relative
  order cannot change), with each new document put in place by a binary
  search, comparing as :data:`.columns.SORT_ORDERS` sorts;
* the author names' keys: the base's, with the keys of new names merged in;
  each name's rank in string order likewise.

The spelling and vocabulary tables are gathered from the segments as in a
build (:func:`.columns.word_arrays`).

A document deleted since is kept with its values, as in a full build. A
name whose every document has left the index (a segment dropped by the
merge policy) stays in the tables, matching nothing; when such names are
more than :data:`MAX_ORPHANS` of a column's, the file is built in full again.
The base file is used only when its header lists its segments and was
written with the same name keys and columns (:func:`base_segments`).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from pathlib import Path
from typing import Any

from searchengine.engines.whoosh import columns as cols

#: Share of a set column's names that may match no document before the
#: file is built in full again.
MAX_ORPHANS = 0.05


def base_segments(path: Path) -> tuple[dict, dict[str, tuple[int, int]]] | None:
    """``(mapped arrays, {segment id: (first document, documents)})`` of the
    column file ``path`` (a base generation's), or ``None`` when it cannot
    seed an update's file: missing, damaged, written before segments were
    recorded, with other name keys or without a declared set column."""
    header: dict = {}
    try:
        arrays = cols.map_columns(path, None, header)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if (
        arrays is None
        or "segments" not in header
        or header.get("name_keys") != cols.name_keys_fingerprint()
        or any(f"{name}.{part}" not in arrays for name in cols.SET_COLUMNS for part in cols.SET_PARTS)
    ):
        return None
    where: dict[str, tuple[int, int]] = {}
    start = 0
    for segment_id, documents in header["segments"]:
        where[segment_id] = (start, documents)
        start += documents
    if start != header["documents"]:
        return None
    return arrays, where


def write_update_columns(folder: Path, reader, base: Path | None) -> None:
    """Write the column file of the generation in ``folder`` (which ``reader``
    reads) from that of the generation in folder ``base`` it was copied
    from, as far as that file can seed it; else as a build does
    (:func:`.columns.write_columns`). Raises as that function does."""
    merged = None
    if base is not None and reader.doc_count_all():
        import numpy as np

        merged = merged_arrays(np, reader, base / cols.COLUMNS_FILE)
        if merged is not None:
            merged |= cols.word_arrays(np, reader)
    cols.write_columns(folder, reader, merged, base=base)


def merged_arrays(np, reader, path: Path) -> dict | None:
    """The arrays :func:`.columns.build_arrays` gives for ``reader``, but for
    its spelling and vocabulary tables, assembled from the column file
    ``path`` of the generation it was copied from; ``None`` when that file
    cannot seed it (:func:`base_segments`), when no segment is kept, or when
    too many names would match nothing (:data:`MAX_ORPHANS`)."""
    found = base_segments(path)
    if found is None:
        return None
    base, where = found
    # Per segment of the new generation: (its first document, documents,
    # the base's first document of it or None for a new one).
    parts: list[tuple[int, int, int | None]] = []
    start = 0
    for segment_id, documents in cols.segments_of(reader):
        kept = where.get(segment_id)
        parts.append((start, documents, kept[0] if kept is not None and kept[1] == documents else None))
        start += documents
    size = reader.doc_count_all()
    if start != size or not any(old is not None for _, _, old in parts):
        return None
    fresh = [doc for first, count, old in parts if old is None for doc in range(first, first + count)]
    facet_data = reader.column_reader("facet_data")
    days = reader.column_reader("date_data") if reader.has_column("date_data") else None
    data = {doc: _facet_data(facet_data, days, doc) for doc in fresh}
    arrays: dict[str, Any] = {}
    for name, (dtype, number) in cols.NUMBER_COLUMNS.items():
        column = np.zeros(size, dtype=dtype)
        for first, count, old in parts:
            if old is not None:
                column[first : first + count] = base[name][old : old + count]
        for doc, values in data.items():
            column[doc] = number(values) if values is not None else 0
        arrays[name] = column
    names_of: dict[str, list[str]] = {}
    for name, values_of in cols.SET_COLUMNS.items():
        set_arrays, names = _set_column(np, base, name, parts, data, values_of)
        used = np.zeros(len(names), dtype=bool)
        used[set_arrays[name + ".values"]] = True
        if len(names) - int(np.count_nonzero(used)) > MAX_ORPHANS * len(names):
            return None
        arrays.update(set_arrays)
        names_of[name] = names
    ids = _Lookup(lambda doc: _id(facet_data, doc))
    titles = _Lookup(reader.column_reader("sort_title").__getitem__)  # (a column reader reads its offsets once)
    moved = _moved(np, parts, len(base["order.newest"]))
    for sort in cols.SORT_ORDERS:
        arrays["order." + sort] = _order(np, base["order." + sort], moved, fresh, _sort_key(sort, arrays, ids, titles))
    author = cols.AUTHOR_COLUMN
    arrays.update(_author_keys(np, base, names_of[author]))
    arrays.update(
        cols.author_doc_arrays(np, arrays[author + ".offsets"], arrays[author + ".values"], len(names_of[author]))
    )
    return arrays


class _Lookup:
    """A per-document value read once (ids and titles for comparisons)."""

    def __init__(self, read: Callable[[int], Any]) -> None:
        self.read, self.seen = read, {}  # type: ignore[var-annotated]

    def __getitem__(self, doc: int) -> Any:
        value = self.seen.get(doc)
        if value is None:
            value = self.seen[doc] = self.read(doc)
        return value


def _facet_data(facet_data, days, doc: int) -> cols.FacetData | None:
    data = cols.unpack_facet_data(facet_data[doc])
    if data is not None and days is not None:
        day = days[doc]
        data = data._replace(day=int(day) if day else None)
    return data


def _id(facet_data, doc: int) -> str:
    data = cols.unpack_facet_data(facet_data[doc])
    return data.id if data is not None else ""


def _set_column(np, base: dict, name: str, parts, data: dict, values_of) -> tuple[dict, list[str]]:
    """One set column's arrays: the kept segments' values sliced from the
    base, the new documents' added; names keep their base value ids."""
    names = cols._strings(base, name)
    table = {value: vid for vid, value in enumerate(names)}
    base_offsets, base_values = np.asarray(base[name + ".offsets"]), np.asarray(base[name + ".values"])
    lengths, values = [], []
    for first, count, old in parts:
        if old is not None:
            lengths.append(np.diff(base_offsets[old : old + count + 1]))
            values.append(base_values[base_offsets[old] : base_offsets[old + count]])
            continue
        held: list[int] = []
        counts = []
        for doc in range(first, first + count):
            record = data[doc]
            before = len(held)
            if record is not None:
                for value in dict.fromkeys(values_of(record)):  # once per document
                    vid = table.get(value)
                    if vid is None:
                        vid = table[value] = len(names)
                        names.append(value)
                    held.append(vid)
            counts.append(len(held) - before)
        lengths.append(np.array(counts, dtype=np.int64))
        values.append(np.array(held, dtype=np.int32))
    offsets = np.zeros(sum(len(part) for part in lengths) + 1, dtype=np.int64)
    np.cumsum(np.concatenate(lengths) if lengths else [], out=offsets[1:])
    encoded = [value.encode("utf-8") for value in names]
    return {
        name + ".offsets": offsets,
        name + ".values": (np.concatenate(values) if values else np.zeros(0)).astype(np.int32),
        name + ".names": np.frombuffer(b"".join(encoded), dtype=np.uint8),
        name + ".name_offsets": np.cumsum([0] + [len(e) for e in encoded], dtype=np.int64),
        name + ".name_rank": _name_rank(np, np.asarray(base[name + ".name_rank"]), encoded),
    }, names


def _name_rank(np, base_rank, encoded: list[bytes]):
    """Each name's rank in string order: the base names' order with the new
    names (value ids past the base's) put in place by binary search."""
    known = len(base_rank)
    ordered = np.argsort(base_rank).tolist()  # base value ids in string order
    new = sorted(range(known, len(encoded)), key=encoded.__getitem__)
    sorted_known = _Keyed(ordered, encoded.__getitem__)
    at = [bisect_left(sorted_known, encoded[vid]) for vid in new]
    order = np.insert(np.array(ordered, dtype=np.int64), np.array(at, dtype=np.int64), np.array(new, dtype=np.int64))
    rank = np.empty(len(encoded), dtype=np.int32)
    rank[order] = np.arange(len(encoded), dtype=np.int32)
    return rank


class _Keyed:
    """A sequence's items seen through ``key`` (for :mod:`bisect` without a key list)."""

    def __init__(self, items, key: Callable) -> None:
        self.items, self.key = items, key

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, position: int):
        return self.key(self.items[position])


def _moved(np, parts, base_size: int):
    """Each base document's number in the new generation (-1: not kept)."""
    moved = np.full(base_size, -1, dtype=np.int64)
    for first, count, old in parts:
        if old is not None:
            moved[old : old + count] = np.arange(first, first + count, dtype=np.int64)
    return moved


def _sort_key(sort: str, arrays: dict, ids: _Lookup, titles: _Lookup) -> Callable[[int], tuple]:
    """A document's key under ``sort``, ascending in the sort's order, as
    :data:`.columns.SORT_ORDERS` sorts: documents with a date first (newest
    or oldest, then by id), then those without (by id); or by folded title
    and id. Descending parts are wrapped in :class:`_Descending`."""
    from searchengine.dates import sort_keys

    if sort == "title":
        return lambda doc: (titles[doc], ids[doc])
    newest = sort == "newest"
    which = 0 if newest else 1
    day, year = arrays["day"], arrays["year"]

    def key(doc: int) -> tuple:
        date_key = sort_keys(int(day[doc]) or None, int(year[doc]) or None)[which]
        if date_key is None:
            return (1, _Descending(ids[doc]) if newest else ids[doc])
        return (0, _Descending((date_key, ids[doc])) if newest else (date_key, ids[doc]))

    return key


class _Descending:
    """A value compared the other way round."""

    __slots__ = ("value",)

    def __init__(self, value) -> None:
        self.value = value

    def __lt__(self, other: _Descending) -> bool:
        return other.value < self.value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Descending) and other.value == self.value

    __hash__ = None  # type: ignore[assignment]


def _order(np, base_rank, moved, fresh: list[int], key: Callable[[int], tuple]):
    """The new rank array of one sort: the kept documents in the base's
    order (renumbered), each new document inserted after its equals."""
    from bisect import bisect_right

    base_order = np.argsort(np.asarray(base_rank))  # base documents in order
    renumbered = moved[base_order]
    kept = renumbered[renumbered >= 0]
    new = sorted(fresh, key=key)
    sequence = _Keyed(kept, lambda doc: key(int(doc)))
    at = [bisect_right(sequence, key(doc)) for doc in new]
    order = np.insert(kept, np.array(at, dtype=np.int64), np.array(new, dtype=np.int64))
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    return rank


def _author_keys(np, base: dict, names: list[str]) -> dict:
    """The ``author_key`` table: the base's keys and their names' value ids,
    with the keys of names added since (value ids past the base's) merged in."""
    from searchengine.filters import name_keys

    base_names = len(base[cols.AUTHOR_COLUMN + ".name_rank"])
    blob = bytes(base["author_key.names"])
    key_offsets = np.asarray(base["author_key.name_offsets"]).tolist()
    base_keys = [blob[start:end] for start, end in zip(key_offsets, key_offsets[1:])]
    added: dict[bytes, list[int]] = {}
    for vid in range(base_names, len(names)):
        for text in name_keys(names[vid]):
            added.setdefault(text.encode("utf-8"), []).append(vid)
    where = {key: bisect_left(base_keys, key) for key in added}
    fresh = sorted(key for key, at in where.items() if at == len(base_keys) or base_keys[at] != key)
    inserted = np.array([where[key] for key in fresh], dtype=np.int64)  # base positions, ascending
    shift = np.searchsorted(inserted, np.arange(len(base_keys)), side="right")
    base_new_index = np.arange(len(base_keys), dtype=np.int64) + shift
    fresh_index = {key: int(at) + number for number, (key, at) in enumerate(zip(fresh, inserted))}
    base_counts = np.diff(np.asarray(base["author_key.offsets"], dtype=np.int64))
    key_ids = [np.repeat(base_new_index, base_counts)]
    vids = [np.asarray(base["author_key.values"], dtype=np.int64)]
    for key, held in added.items():
        index = fresh_index.get(key)
        if index is None:
            index = int(base_new_index[where[key]])
        key_ids.append(np.full(len(held), index, dtype=np.int64))
        vids.append(np.array(held, dtype=np.int64))
    all_keys, all_vids = np.concatenate(key_ids), np.concatenate(vids)
    order = np.lexsort((all_vids, all_keys))
    all_keys, all_vids = all_keys[order], all_vids[order]
    keys = sorted(base_keys + fresh)  # (two sorted runs: merged, not sorted again)
    return {
        "author_key.names": np.frombuffer(b"".join(keys), dtype=np.uint8),
        "author_key.name_offsets": np.cumsum([0] + [len(key) for key in keys], dtype=np.int32),
        "author_key.offsets": np.searchsorted(all_keys, np.arange(len(keys) + 1)).astype(np.int32),
        "author_key.values": all_vids.astype(np.int32),
    }
