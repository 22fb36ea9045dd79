"""A common term's whole posting list as two arrays, beside its blocks.

Scoring a word reads every posting it has (:mod:`.bm25f`), and Whoosh keeps
a term's postings in blocks of 128, each deflated and pickled with its
positions: on the 74,728-record arXiv sample a word of 24,000 postings
takes 17 ms to read that way, most of a query that has not been seen. The
segments of :class:`~.codec.DictionaryCodec` also keep, for each term of at least
:data:`MIN_POSTINGS` postings, its document numbers and weights as two
deflated arrays, read in about a millisecond (0.8 bytes a posting), and
its word positions as gaps of a byte (phrases and the proximity bonus read
a few documents' positions of a common word: from blocks, most of the
word's blocks). The blocks stay, for Whoosh's own matchers and the terms
not kept here. A segment written before these files has none, and its
postings are read from the blocks as before. Segments written now
(:mod:`.arraypostings`) keep every term's postings in this layout or a
compact one for short lists, with no blocks and no ``.tfa`` file; their
terms reader offers the same :class:`TermPostings` for every term.

Layout of the segment's ``.tfa`` file (packed into its compound file with
the rest, so the generation's checksums cover it)::

    lists     per term: its document numbers as gaps from the one before
              (the first from 0), int32, deflated; its weights, deflated:
              uint8 or uint16 when all are whole numbers that fit, float64
              otherwise, nothing when all are 1; for a field with
              positions, each posting's size in the positions (uint8, or
              uint32 when one is 256 or more), deflated, then the positions,
              deflated: each posting's as gaps from the one before (the
              first from 0), a byte each, or 255 and the gap in 3 bytes
    tables    per field: the terms' bytes joined, each term's length
              (uint32), where each term's lists start (uint64, one more: the
              end), the deflated sizes of its document numbers, weights and
              position sizes (uint32 each), its posting count (uint32), and
              two type codes (a byte each: the weights' ``B``, ``H``, ``d``
              or ``1``; the position sizes' ``B``, ``I``, or ``-`` for no
              positions); little-endian, terms in the order written (Whoosh
              writes them sorted)
    header    JSON: {"fields": [[name, terms, table start] per field]}
    trailer   magic TFA1, header bytes (uint32), header start (uint64)
"""

from __future__ import annotations

import json
import struct
import zlib
from array import array
from collections import OrderedDict
from collections.abc import Callable
from itertools import accumulate
from operator import sub
from typing import Any

from searchengine.engines.whoosh.littleendian import from_bytes, loaded_numpy, to_bytes

EXTENSION = ".tfa"
#: Terms of fewer postings than this are read from their blocks: a block or
#: two costs little, and most terms are that short.
MIN_POSTINGS = 128
# Decoded lists kept per segment (postings, summed): the same common word is
# read to score it and again for feedback or a filter within one query.
KEPT_POSTINGS = 1_000_000
_LEVEL = 6
_MAGIC = b"TFA1"
_trailer = struct.Struct("<4sIQ")


def encode_weights(weights: list[float]) -> tuple[str, bytes]:
    """``(type code, bytes)`` of a posting list's weights (see the module)."""
    if all(weight == 1 for weight in weights):
        return "1", b""
    if all(weight == int(weight) and weight >= 0 for weight in weights):
        top = max(weights)
        if top < 256:
            return "B", bytes(int(weight) for weight in weights)
        if top < 65536:
            return "H", to_bytes(array("H", map(int, weights)))
    return "d", to_bytes(array("d", weights))


_ESCAPE = 255  # a gap of 255 or more: this byte, then the gap in 3 bytes
_K = ord("K")


def position_gaps(encoded: bytes, decode) -> bytes | None:
    """A posting's positions as gap bytes (see the module), from the
    positions as its field's format encodes them; ``decode`` is the
    format's ``decode_positions``. ``None`` for a gap of 2**24 or more.

    The compact encoding (:class:`~.codec.CompactPositions`) of gaps under
    255 holds them at every other byte: taken by a slice, without decoding."""
    size = len(encoded)
    if size == 8 and encoded[4] == 93 and encoded[5] == _K and encoded[7] == 97:  # ] K gap a
        if encoded[6] != _ESCAPE:
            return encoded[6:7]
    elif (
        size > 8
        and encoded[4:6] == b"]("
        and encoded[-1] == 101
        and size % 2
        and encoded[6:-1:2].count(_K) == (size - 7) // 2
    ):  # ] ( K gap K gap ... e
        gaps = encoded[7:-1:2]
        if _ESCAPE not in gaps:
            return gaps
    out = bytearray()
    before = 0
    for position in decode(encoded):
        gap = position - before
        before = position
        if gap < _ESCAPE:
            out.append(gap)
        elif gap < 1 << 24:
            out.append(_ESCAPE)
            out += gap.to_bytes(3, "little")
        else:
            return None
    return bytes(out)


def positions_from_gaps(gaps: bytes) -> set[int]:
    """The positions of a posting from its gap bytes (:func:`position_gaps`)."""
    if len(gaps) == 1:  # most postings: one position (an escape takes 4 bytes)
        return {gaps[0]}
    if _ESCAPE not in gaps:
        return set(accumulate(gaps))
    found, at, before = set(), 0, 0
    while at < len(gaps):
        gap = gaps[at]
        if gap == _ESCAPE:
            gap = int.from_bytes(gaps[at + 1 : at + 4], "little")
            at += 3
        before += gap
        found.add(before)
        at += 1
    return found


class TermArraysWriter:
    """Writes one segment's ``.tfa`` file as its terms are written.

    Call :meth:`start_field` for each field, :meth:`add_term` for each term
    of the field (in the order Whoosh writes them), :meth:`close` once."""

    def __init__(self, handle) -> None:
        """``handle``: the new file (a Whoosh ``StructFile`` open for writing)."""
        self._file = handle
        self._position = 0
        self._fields: list[list] = []  # [name, terms, where its lists end]
        self._decode = None

    def start_field(self, fieldname: str, format_) -> None:
        """Terms added from now on are of ``fieldname``, of Whoosh format ``format_``."""
        if self._fields:
            self._fields[-1][2] = self._position
        self._fields.append([fieldname, [], 0])
        self._decode = format_.decode_positions if format_.supports("positions") else None

    def add_term(self, btext: bytes, ids: list[int], weights: list[float], values: list[bytes]) -> None:
        """Keep one term's postings (``ids`` ascending, their weights and
        encoded values) when it has at least :data:`MIN_POSTINGS`."""
        if len(ids) < MIN_POSTINGS:
            return
        gaps = array("i", ids[:1])
        gaps.extend(map(sub, ids[1:], ids))
        packed_ids = zlib.compress(to_bytes(gaps), _LEVEL)
        weight_code, packed_weights = encode_weights(weights)
        if packed_weights:
            packed_weights = zlib.compress(packed_weights, _LEVEL)
        sizes_code, packed_sizes, packed_positions = "-", b"", b""
        if self._decode is not None and len(values) == len(ids):
            decode = self._decode
            found = [position_gaps(value, decode) for value in values]
            if None not in found:
                sizes = list(map(len, found))
                sizes_code = "B" if max(sizes) < 256 else "I"
                packed_sizes = zlib.compress(bytes(sizes) if sizes_code == "B" else to_bytes(array("I", sizes)), _LEVEL)
                packed_positions = zlib.compress(b"".join(found), _LEVEL)
        self._file.write(packed_ids + packed_weights + packed_sizes + packed_positions)
        self._fields[-1][1].append(
            (
                btext,
                self._position,
                len(packed_ids),
                len(packed_weights),
                len(packed_sizes),
                len(ids),
                weight_code + sizes_code,
            )
        )
        self._position += len(packed_ids) + len(packed_weights) + len(packed_sizes) + len(packed_positions)

    def close(self) -> None:
        """Write the tables, header and trailer; close the file."""
        header = []
        if self._fields:
            self._fields[-1][2] = self._position
        for fieldname, terms, end in self._fields:
            if not terms:
                continue
            header.append([fieldname, len(terms), self._position])
            columns = list(zip(*terms))
            starts = array("Q", columns[1])
            starts.append(end)  # the end of the last term's lists
            table = b"".join(
                [
                    b"".join(columns[0]),
                    to_bytes(array("I", map(len, columns[0]))),
                    to_bytes(starts),
                    to_bytes(array("I", columns[2])),
                    to_bytes(array("I", columns[3])),
                    to_bytes(array("I", columns[4])),
                    to_bytes(array("I", columns[5])),
                    "".join(columns[6]).encode("ascii"),
                ]
            )
            self._file.write(table)
            self._position += len(table)
        encoded = json.dumps({"fields": header}).encode("utf-8")
        self._file.write(encoded + _trailer.pack(_MAGIC, len(encoded), self._position))
        self._file.close()


# Bytes a term takes in a field's table, besides its own: length, start,
# three sizes, count (4 + 8 + 4 * 3 + 4) and two type codes.
_TERM_BYTES = 30


class _FieldTable:
    """One field's terms and where their lists are."""

    __slots__ = ("starts", "id_sizes", "weight_sizes", "size_sizes", "counts", "codes")

    def __init__(self, starts, id_sizes, weight_sizes, size_sizes, counts, codes) -> None:
        self.starts, self.id_sizes, self.weight_sizes = starts, id_sizes, weight_sizes
        self.size_sizes, self.counts, self.codes = size_sizes, counts, codes


class TermPostings:
    """A term's postings in a segment from its term arrays: ``ids``
    (``array('i')``, ascending, deleted documents included), ``weights``
    (numbers, as Whoosh's blocks give them) and, for a field with
    positions, each posting's positions (:meth:`positions`)."""

    __slots__ = ("ids", "weights", "_packed", "_gaps", "_offsets", "_table")

    def __init__(self, ids: array, weights, packed: Callable[[], tuple[bytes, array]] | None) -> None:
        """``packed``: reads and decodes the positions (:meth:`TermArrays.postings`), or ``None``."""
        self.ids, self.weights, self._packed = ids, weights, packed
        self._gaps: bytes | None = None
        self._offsets: array | None = None
        self._table: tuple[Any, Any] | None = None

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def has_positions(self) -> bool:
        """Whether the positions are kept (read when first asked for: scoring needs none)."""
        return self._packed is not None

    def _unpack(self) -> tuple[bytes, array]:
        """Read and decode the positions, kept: ``(gaps, offsets)``."""
        packed = self._packed
        assert packed is not None, "a field without positions"
        self._gaps, self._offsets = unpacked = packed()
        return unpacked

    def positions(self, number: int) -> set[int]:
        """The positions of the ``number``-th posting (its index in ``ids``)."""
        gaps, offsets = self._gaps, self._offsets
        if gaps is None or offsets is None:
            gaps, offsets = self._unpack()
        return positions_from_gaps(gaps[offsets[number] : offsets[number + 1]])

    def position_table(self, np) -> tuple[Any, Any]:
        """``(documents, positions)``: every position of the term as two
        numpy ``int64`` arrays of the same length, by document then position,
        each pair once (``np``: the numpy module); kept once made. Only for a
        field with positions."""
        if self._table is not None:
            return self._table
        gaps, offsets = self._gaps, self._offsets
        if gaps is None or offsets is None:
            gaps, offsets = self._unpack()
        raw = np.frombuffer(gaps, dtype=np.uint8)
        values = raw.astype(np.int64)
        counts = np.diff(np.frombuffer(offsets, dtype=np.int64))
        escapes, at = [], gaps.find(_ESCAPE)
        while at >= 0:  # an escape's 3 bytes may hold 255 too: found in order, skipping them
            escapes.append(at)
            at = gaps.find(_ESCAPE, at + 4)
        if escapes:
            marks = np.array(escapes, dtype=np.int64)
            values[marks] = values[marks + 1] | values[marks + 2] << 8 | values[marks + 3] << 16
            keep = np.ones(len(values), dtype=bool)
            keep[marks + 1] = keep[marks + 2] = keep[marks + 3] = False
            values = values[keep]
            counts = counts.copy()
            np.subtract.at(counts, np.searchsorted(np.frombuffer(offsets, dtype=np.int64), marks, side="right") - 1, 3)
        totals = np.cumsum(values)
        starts = np.cumsum(counts) - counts
        before = np.where(starts > 0, totals[np.maximum(starts - 1, 0)], 0)
        docs = np.repeat(np.frombuffer(self.ids, dtype=np.intc).astype(np.int64), counts)
        positions = totals - np.repeat(before, counts)
        # A posting may hold a position twice (a compound whose joined form
        # stems to one of its parts: Point-E): kept once, as a set keeps it.
        repeated = np.flatnonzero(values[1:] == 0) + 1  # a gap of 0 (a posting's first is never compared)
        if len(repeated):
            repeated = repeated[docs[repeated] == docs[repeated - 1]]
            docs, positions = np.delete(docs, repeated), np.delete(positions, repeated)
        self._table = (docs, positions)
        return self._table


class TermArrays:
    """A segment's ``.tfa`` file, read a field's table at a time when first asked.

    Raises ``CorruptIndexError`` (a trailer, header or table that does not
    fit the file, a list of the wrong length) or ``zlib.error`` when the
    file is damaged: what the engine reports as a damaged index. Not for two
    threads at once (the engine makes one call at a time).
    """

    def __init__(self, handle, length: int, documents: int) -> None:
        """``handle``: the open file (``get(position, length)``, as a compound
        file's part is) of ``length`` bytes, of a segment of ``documents``."""
        from whoosh.reading import CorruptIndexError

        self._file = handle
        if length < _trailer.size:
            raise CorruptIndexError("a term arrays file shorter than its trailer")
        magic, header_length, header_start = _trailer.unpack(self._read(length - _trailer.size, _trailer.size))
        if magic != _MAGIC or header_start + header_length + _trailer.size != length:
            raise CorruptIndexError("a term arrays file whose trailer does not fit it")
        self.documents = documents
        self._header_start = header_start
        try:
            fields = json.loads(self._read(header_start, header_length))["fields"]
            self._places = {str(name): (int(count), int(start)) for name, count, start in fields}
        except (ValueError, KeyError, TypeError) as error:
            raise CorruptIndexError(f"a term arrays file's header is damaged ({error})") from None
        self._tables: dict[str, tuple[dict[bytes, int], _FieldTable] | None] = {}
        self._kept: OrderedDict = OrderedDict()
        self._kept_postings = 0

    def _read(self, position: int, size: int) -> bytes:
        return bytes(self._file.get(position, size))

    def close(self) -> None:
        """Close the file."""
        self._file.close()

    def _table(self, fieldname: str):
        found = self._tables.get(fieldname, False)
        if found is not False:
            return found
        place = self._places.get(fieldname)
        if place is None:
            self._tables[fieldname] = None
            return None
        from whoosh.reading import CorruptIndexError

        damaged = CorruptIndexError(f"a term arrays table of field {fieldname!r} does not fit the file")
        count, start = place
        # The table ends where the next field's starts (or the header does).
        end = min([s for _, s in self._places.values() if s > start] + [self._header_start])
        data = self._read(start, end - start)
        keys_size = len(data) - _TERM_BYTES * count - 8
        if count <= 0 or keys_size < 0:
            raise damaged
        columns, at = [], keys_size
        for typecode, size in (("I", count), ("Q", count + 1), ("I", count), ("I", count), ("I", count), ("I", count)):
            width = array(typecode).itemsize * size
            columns.append(from_bytes(typecode, data[at : at + width]))
            at += width
        lengths, starts, id_sizes, weight_sizes, size_sizes, counts = columns
        codes = data[at:].decode("ascii", "replace")
        ends = list(accumulate(lengths, initial=0))
        if (
            len(codes) != 2 * count
            or ends[-1] != keys_size
            or starts[-1] > start
            or any(a > b for a, b in zip(starts, starts[1:]))
        ):
            raise damaged
        keys = data[:keys_size]
        lookup = {keys[a:b]: number for number, (a, b) in enumerate(zip(ends, ends[1:]))}
        found = (lookup, _FieldTable(starts, id_sizes, weight_sizes, size_sizes, counts, codes))
        self._tables[fieldname] = found
        return found

    def postings(
        self, fieldname: str, btext: bytes, frequency: Callable[[str, bytes], int] | None = None
    ) -> TermPostings | None:
        """A term's :class:`TermPostings`; ``None`` when the file does not
        keep the term (fewer than :data:`MIN_POSTINGS` postings, or a field
        it does not keep). The last read are kept (:data:`KEPT_POSTINGS`).

        ``frequency(fieldname, term bytes)``, when given, is the term's
        posting count in the segment's term table: a list of another count
        (a damaged key naming another term) raises ``CorruptIndexError``."""
        key = (fieldname, btext)
        kept = self._kept.get(key)
        if kept is not None:
            self._kept.move_to_end(key)
            return kept
        table = self._table(fieldname)
        if table is None:
            return None
        lookup, lists = table
        number = lookup.get(btext)
        if number is None:
            return None
        found = self._decode(fieldname, lists, number)
        if frequency is not None and len(found) != frequency(fieldname, btext):
            raise self._miscounted(fieldname, len(found), frequency(fieldname, btext))
        self._kept[key] = found
        self._kept_postings += len(found)
        while self._kept_postings > KEPT_POSTINGS and len(self._kept) > 1:
            _, dropped = self._kept.popitem(last=False)
            self._kept_postings -= len(dropped)
        return found

    def verify(self, frequency: Callable[[str, bytes], int]) -> int:
        """Read every list whole, positions too, and compare each term's
        posting count with ``frequency(fieldname, term bytes)`` (the
        segment's term table); returns the number of terms read (``searchengine check``).

        Raises ``CorruptIndexError`` or ``zlib.error`` for a damaged file."""
        read = 0
        for fieldname in self._places:
            lookup, lists = self._table(fieldname)
            for btext, number in lookup.items():
                found = self._decode(fieldname, lists, number)
                if found.has_positions:
                    found._unpack()
                if len(found) != frequency(fieldname, btext):
                    raise self._miscounted(fieldname, len(found), frequency(fieldname, btext))
                read += 1
        return read

    @staticmethod
    def _miscounted(fieldname: str, held: int, expected: int):
        from whoosh.reading import CorruptIndexError

        return CorruptIndexError(
            f"a term arrays list of field {fieldname!r} holds {held:,} postings where the term table has {expected:,}"
        )

    def _decode(self, fieldname: str, lists: _FieldTable, number: int) -> TermPostings:
        from whoosh.reading import CorruptIndexError

        def damaged(what: str) -> CorruptIndexError:
            return CorruptIndexError(f"a term arrays list of field {fieldname!r} {what}")

        start, end = lists.starts[number], lists.starts[number + 1]
        count = lists.counts[number]
        weight_code, size_code = lists.codes[2 * number : 2 * number + 2]
        at = lists.id_sizes[number]
        weights_end = at + lists.weight_sizes[number]
        if weights_end > end - start:
            raise damaged("does not fit the file")
        # Each type code says which parts there are: a code damaged into another shows here.
        if (weight_code == "1") != (lists.weight_sizes[number] == 0):
            raise damaged("has weights that do not fit their type")
        if (size_code == "-") != (lists.size_sizes[number] == 0 and weights_end == end - start):
            raise damaged("has positions that do not fit their type")
        data = self._read(start, weights_end)  # the positions are read when asked for
        gaps = zlib.decompress(data[:at])
        if len(gaps) != 4 * count:
            raise damaged("of the wrong length")
        numpy = loaded_numpy()
        ids = array("i")
        if numpy is not None:
            ids.frombytes(numpy.cumsum(numpy.frombuffer(gaps, dtype="<i4"), dtype=numpy.int32).tobytes())
        else:
            ids.extend(accumulate(from_bytes("i", gaps)))
        if weight_code == "1":
            weights = array("B", bytes([1]) * count)
        elif weight_code in ("B", "H", "d"):
            weights = from_bytes(weight_code, zlib.decompress(data[at:]))
        else:
            raise damaged("of an unknown weight type")
        if len(weights) != count or (count and (ids[0] < 0 or ids[-1] >= self.documents)):
            raise damaged("does not fit its segment")
        if size_code == "-":
            return TermPostings(ids, weights, None)
        if size_code not in ("B", "I"):
            raise damaged("of an unknown position type")
        sizes_start, sizes_size = start + weights_end, lists.size_sizes[number]

        def positions() -> tuple[bytes, array]:
            packed = self._read(sizes_start, end - sizes_start)
            sizes = from_bytes(size_code, zlib.decompress(packed[:sizes_size]))
            gaps = zlib.decompress(packed[sizes_size:])
            offsets = array("q")  # (an array's items index faster than numpy's)
            if numpy is not None:
                ends = numpy.zeros(len(sizes) + 1, dtype=numpy.int64)
                numpy.cumsum(numpy.asarray(sizes, dtype=numpy.int64), out=ends[1:])
                offsets.frombytes(ends.tobytes())
            else:
                offsets.extend(accumulate(sizes, initial=0))
            if len(sizes) != count or offsets[-1] != len(gaps):
                raise damaged("has positions that do not add up")
            return gaps, offsets

        return TermPostings(ids, weights, positions)


def segment_term_arrays(reader) -> TermArrays | None:
    """The :class:`TermArrays` of a Whoosh ``SegmentReader`` (opened once,
    kept by its terms reader); ``None`` for a segment without them."""
    from searchengine.engines.whoosh import internals

    opener = getattr(internals.terms_reader(reader), "term_arrays", None)
    return opener() if opener is not None else None


def read_term_arrays(storage, segment) -> TermArrays | None:
    """The :class:`TermArrays` of ``segment`` (in ``storage``, the segment's
    compound file), reading its file until closed; ``None`` for a segment
    written without one.

    Raises as :class:`TermArrays` does for a damaged file."""
    name = segment.make_filename(EXTENSION)
    if not storage.file_exists(name):
        return None
    handle = storage.open_file(name)
    try:
        found = TermArrays(handle, storage.file_length(name), segment.doc_count_all())
    except BaseException:
        handle.close()
        raise
    return found
