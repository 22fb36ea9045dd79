"""Every term's postings as the product's own arrays, with no pickle.

Segments written by :class:`ArrayCodec` keep no Whoosh blocks of postings
and no postings inlined in a term's entry: the segment's postings file
(``.pst``) holds every term's postings as arrays, and the term's entry in
Whoosh's term table (the W3 layout, its inline flag always 0) holds its
statistics and where its postings are. Reading them decodes numbers and
bytes only, so an index folder supplies no pickle to a query's postings,
and ``searchengine check`` reads them without the restricted unpickler.

Layout of the postings file: the magic ``PSA1``, then two kinds of record,
which a term's entry tells apart by the sign of its length:

* a **long list** (at least :data:`LONG_POSTINGS` postings, or weights
  or position counts that do not fit a byte), at the entry's offset, of the
  entry's length: a head (``<2sIII``: the weights' and position sizes' type
  codes, then the deflated sizes of the document numbers, weights and
  position sizes), then the document numbers as int32 gaps from the one
  before (the first from 0), the weights (``B``, ``H`` or ``d``, or nothing
  for all 1: code ``1``), each posting's size in the positions (``B`` or
  ``I``; ``-`` and nothing for a field without positions) and the positions
  (each posting's as gap bytes, :func:`~.termarrays.position_gaps`), each
  part deflated alone: the layout of :mod:`.termarrays`, whose reading
  this shares (:class:`~.termarrays.TermPostings`);
* a **chunk** of short lists, at the entry's offset: its deflated size
  (``<I``) and many terms' lists deflated together (about
  :data:`CHUNK_BYTES` before deflating), so that a term of one posting
  costs no deflate header; the entry's length is ``-1 - start``, ``start``
  where the term's list begins in the inflated chunk: a byte (``P`` with
  positions, ``-`` without), the document numbers as uint32 gaps, a weight
  byte each, and with positions a size byte each and the position bytes.

A posting's Whoosh value (its encoded positions, as merging segments copies
them) is made again from these: ``format.encode(positions)``, Whoosh's
``Frequency`` from the weight and ``Existence`` empty.
"""

from __future__ import annotations

import struct
import zlib
from array import array
from bisect import bisect_left
from collections import OrderedDict
from itertools import accumulate
from operator import sub

from whoosh.codec.whoosh3 import W3FieldCursor, W3FieldWriter, W3TermInfo, W3TermsReader
from whoosh.matching import LeafMatcher, NullMatcher, ReadTooFar
from whoosh.reading import CorruptIndexError, TermNotFound
from whoosh.system import pack_uint, pack_ushort
from whoosh.util.numeric import byte_to_length, length_to_byte

from searchengine.engines.whoosh.codec import CompactCodec, DictionaryCodec
from searchengine.engines.whoosh.littleendian import from_bytes, loaded_numpy, to_bytes
from searchengine.engines.whoosh.termarrays import (
    KEPT_POSTINGS,
    TermPostings,
    encode_weights,
    position_gaps,
)

MAGIC = b"PSA1"
#: Lists of at least this many postings are deflated alone (a long list).
LONG_POSTINGS = 128
#: Bytes of short lists (inflated) a chunk holds, about.
CHUNK_BYTES = 16384
# Inflated chunks kept per segment: a prefix or a fuzzy word reads neighbours.
KEPT_CHUNKS = 64
_LEVEL = 6
_long_head = struct.Struct("<2sIII")
_chunk_head = struct.Struct("<I")
_info = W3TermInfo._struct  # flags, weight, doc freq, min/max length bytes, max weight, first/last id
_pointer = struct.Struct("!qi")  # the W3 entry's offset and length
_ENTRY_SIZE = _info.size + _pointer.size
_POSITIONS, _NO_POSITIONS = ord("P"), ord("-")


class ArrayCodec(DictionaryCodec):
    """:class:`~.codec.DictionaryCodec` (its stored fields and text store)
    whose postings are arrays (see the module): new segments name it."""

    def field_writer(self, storage, segment):
        return ArrayFieldWriter(self, storage, segment)

    def terms_reader(self, storage, segment):
        terms = CompactCodec.terms_reader(self, storage, segment)  # its checked term table, no .tfa
        terms.__class__ = ArrayTermsReader  # Whoosh makes the reader itself; the postings open when first asked
        terms._postings = None
        terms._documents = segment.doc_count_all()
        terms._postings_length = storage.file_length(segment.make_filename(self.POSTS_EXT))
        return terms


class ArrayTermInfo(W3TermInfo):
    """A W3 term info read without pickle: an entry flagged as holding
    inlined postings (which :class:`ArrayCodec` never writes, and Whoosh
    would unpickle) is damage."""

    @classmethod
    def from_bytes(cls, s):
        if len(s) != _ENTRY_SIZE or s[0] != 0:
            raise CorruptIndexError("a term entry is damaged (of another size, or flagged as holding pickled postings)")
        return super().from_bytes(s)


class _StrictCursor(W3FieldCursor):
    def term_info(self):
        if self._pos is None:
            return None
        return ArrayTermInfo.from_bytes(self._tindex.dbfile.get(self._datapos, self._datalen))


class ArrayTermsReader(W3TermsReader):
    """Whoosh's W3 terms reader for :class:`ArrayCodec` segments: term
    entries read without pickle, matchers over the postings' arrays."""

    _postings: ArrayPostings | None = None
    _documents = 0  # the segment's documents, deleted ones included
    _postings_length = 0  # bytes of the postings file
    #: ``searchengine check`` reads these postings through :meth:`term_arrays`, not block by block.
    pickle_free = True

    def term_arrays(self) -> ArrayPostings:
        """The segment's postings (:class:`ArrayPostings`)."""
        if self._postings is None:
            self._postings = ArrayPostings(self)
        return self._postings

    def cursor(self, fieldname, fieldobj):
        return _StrictCursor(self._tindex, fieldname, self._keycoder, self._keydecoder, fieldobj)

    def items(self):
        decode, keydecoder = ArrayTermInfo.from_bytes, self._keydecoder
        return ((keydecoder(key), decode(value)) for key, value in self._tindex.items())

    def items_from(self, fieldname, prefix):
        decode, keydecoder = ArrayTermInfo.from_bytes, self._keydecoder
        start = self._keycoder(fieldname, prefix)
        return ((keydecoder(key), decode(value)) for key, value in self._tindex.items_from(start))

    def term_info(self, fieldname, tbytes):
        try:
            return ArrayTermInfo.from_bytes(self._tindex[self._keycoder(fieldname, tbytes)])
        except KeyError:
            raise TermNotFound(f"No term {fieldname}:{tbytes!r}") from None

    def matcher(self, fieldname, tbytes, format_, scorer=None):
        arrays = self.term_arrays()
        entry = arrays.entry(fieldname, tbytes)
        if entry is None:
            raise TermNotFound(f"No term {fieldname}:{tbytes!r}")
        postings = arrays.postings(fieldname, tbytes, entry=entry)
        return ArrayMatcher(postings, format_, term=(fieldname, tbytes), scorer=scorer, entry=entry)

    def close(self):
        self._postings = None
        super().close()


# --- writing -----------------------------------------------------------------------------


class ArrayFieldWriter(W3FieldWriter):
    """Writes a segment's term table and postings file (see the module) as
    Whoosh hands it each term's postings, new or merged."""

    def __init__(self, codec, storage, segment) -> None:
        super().__init__(codec, storage, segment)
        self._postfile.write(MAGIC)
        self._chunk = bytearray()
        # Term entries waiting for their chunk's place: (key, head, start in the
        # chunk) or (key, whole entry, None) in term order, for the term table.
        self._waiting: list[tuple[bytes, bytes, int | None]] = []
        self._decode = None
        self._boost = 1.0
        self._kind = "-"

    def start_field(self, fieldname, fieldobj):
        super().start_field(fieldname, fieldobj)
        format_ = fieldobj.format
        self._boost = format_.field_boost
        if format_.supports("positions"):
            self._kind, self._decode = "P", format_.decode_positions
        elif format_.fixed_value_size() == 0:
            self._kind = "-"  # Existence: no values
        elif format_.fixed_value_size() == 4 and format_.supports("frequency"):
            self._kind = "F"  # Frequency: the value is the weight over the field's boost
        else:
            raise ValueError(
                f"field {fieldname!r}: postings of format {type(format_).__name__} cannot be kept as arrays"
            )

    def start_term(self, btext: bytes) -> None:
        self._btext = btext
        self._ids: list[int] = []
        self._weights: list[float] = []
        self._values: list[bytes] = []
        self._lengths: list[int] = []

    def add(self, docnum, weight, vbytes, length):
        self._ids.append(docnum)
        self._weights.append(weight)
        self._values.append(vbytes)
        self._lengths.append(length)

    def finish_term(self):
        ids, weights, values = self._ids, self._weights, self._values
        count = len(ids)
        lengths = [length for length in self._lengths if length]
        head = _info.pack(
            0,
            sum(weights),
            count,
            length_to_byte(min(lengths)) if lengths else 0,
            length_to_byte(max(lengths, default=0)),
            max(weights),
            ids[0],
            ids[-1],
        )
        key = pack_ushort(self._fieldid) + self._btext
        gaps = None
        if self._kind == "P":
            decode = self._decode
            gaps = [position_gaps(value, decode) for value in values]
            if None in gaps:
                raise ValueError(f"a position gap of 2**24 or more in term {self._btext!r}")
        elif self._kind == "F":
            boost = self._boost
            if any(value != pack_uint(round(weight / boost)) for weight, value in zip(weights, values)):
                raise ValueError(f"term {self._btext!r}: a frequency that is not its weight over the field's boost")
        if (
            count < LONG_POSTINGS
            and all(0 <= weight < 256 and weight == int(weight) for weight in weights)
            and (gaps is None or max(map(len, gaps)) < 256)
        ):
            start = len(self._chunk)
            id_gaps = array("I", ids[:1])
            id_gaps.extend(map(sub, ids[1:], ids))
            chunk = self._chunk
            chunk.append(_NO_POSITIONS if gaps is None else _POSITIONS)
            chunk += to_bytes(id_gaps)
            chunk += bytes(map(int, weights))
            if gaps is not None:
                chunk += bytes(map(len, gaps))
                chunk += b"".join(gaps)
            self._waiting.append((key, head, start))
            if len(chunk) >= CHUNK_BYTES:
                self._write_chunk()
            return
        offset = self._postfile.tell()
        record = _long_record(ids, weights, gaps)
        self._postfile.write(record)
        entry = head + _pointer.pack(offset, len(record))
        if self._waiting:
            self._waiting.append((key, entry, None))
        else:
            self._tindex.add(key, entry)

    def _write_chunk(self) -> None:
        offset = self._postfile.tell()
        if self._chunk:
            packed = zlib.compress(bytes(self._chunk), _LEVEL)
            self._postfile.write(_chunk_head.pack(len(packed)) + packed)
        for key, head, start in self._waiting:
            self._tindex.add(key, head if start is None else head + _pointer.pack(offset, -1 - start))
        self._waiting = []
        self._chunk = bytearray()

    def close(self):
        self._write_chunk()
        super().close()


def _long_record(ids: list[int], weights: list[float], gaps: list[bytes] | None) -> bytes:
    id_gaps = array("i", ids[:1])
    id_gaps.extend(map(sub, ids[1:], ids))
    packed_ids = zlib.compress(to_bytes(id_gaps), _LEVEL)
    weight_code, packed_weights = encode_weights(weights)
    if packed_weights:
        packed_weights = zlib.compress(packed_weights, _LEVEL)
    size_code, packed_sizes, packed_positions = "-", b"", b""
    if gaps is not None:
        sizes = list(map(len, gaps))
        size_code = "B" if max(sizes) < 256 else "I"
        packed_sizes = zlib.compress(bytes(sizes) if size_code == "B" else to_bytes(array("I", sizes)), _LEVEL)
        packed_positions = zlib.compress(b"".join(gaps), _LEVEL)
    head = _long_head.pack(
        (weight_code + size_code).encode("ascii"), len(packed_ids), len(packed_weights), len(packed_sizes)
    )
    return head + packed_ids + packed_weights + packed_sizes + packed_positions


# --- reading -----------------------------------------------------------------------------


class ArrayPostings:
    """A segment's postings (see the module), as the term arrays of
    :mod:`.termarrays` offer them: :meth:`postings` gives a term's
    :class:`~.termarrays.TermPostings`.

    Raises ``CorruptIndexError`` or ``zlib.error`` when the file is
    damaged. Not for two threads at once (the engine makes one call at a time).
    """

    def __init__(self, terms: ArrayTermsReader) -> None:
        self._terms = terms
        self._file = terms._postfile
        if bytes(self._file.get(0, len(MAGIC))) != MAGIC:
            raise CorruptIndexError("a postings file without its magic")
        self._length = terms._postings_length
        self._documents = terms._documents
        self._kept: OrderedDict = OrderedDict()
        self._kept_postings = 0
        self._chunks: OrderedDict[int, bytes] = OrderedDict()

    def entry(self, fieldname: str, btext: bytes) -> tuple | None:
        """The term's entry, unpacked: ``(flags, weight, doc freq, min length
        byte, max length byte, max weight, first id, last id, offset,
        length)``; ``None`` for a term the segment does not have."""
        raw = self._terms._tindex.get(self._terms._keycoder(fieldname, btext))
        return None if raw is None else _unpack_entry(raw)

    def postings(self, fieldname: str, btext: bytes, frequency=None, entry: tuple | None = None) -> TermPostings | None:
        """A term's :class:`~.termarrays.TermPostings` (deleted documents
        included); ``None`` for a term the segment does not have. The last
        read are kept (:data:`~.termarrays.KEPT_POSTINGS`). ``entry``: the
        term's (:meth:`entry`), when read already. (``frequency``: for the
        term arrays' signature; a list's count is its entry's here.)"""
        key = (fieldname, btext)
        kept = self._kept.get(key)
        if kept is not None:
            self._kept.move_to_end(key)
            return kept
        if entry is None:
            entry = self.entry(fieldname, btext)
            if entry is None:
                return None
        found = self.decode(entry, fieldname)
        self._kept[key] = found
        self._kept_postings += len(found)
        while self._kept_postings > KEPT_POSTINGS and len(self._kept) > 1:
            _, dropped = self._kept.popitem(last=False)
            self._kept_postings -= len(dropped)
        return found

    def verify(self, frequency=None) -> int:
        """Read every term's postings whole, positions too, and check them
        against the term's entry (count, first and last document) and each
        chunk against its terms (every byte of it one term's); returns the
        number of terms read (``searchengine check``).

        Raises ``CorruptIndexError`` or ``zlib.error`` for a damaged file."""
        try:
            import numpy  # noqa: F401 - long lists add up faster with it (loaded_numpy)
        except ImportError:
            pass
        terms = self._terms
        read = 0
        chunk_at, chunk, chunk_end = -1, b"", 0  # the chunk being read, and where its last term ended
        for key, raw in _table_entries(terms._tindex):
            entry = _unpack_entry(raw)
            read += 1
            offset, length = entry[8], entry[9]
            if length >= 0:
                fieldname = terms._keydecoder(key)[0]
                found = self.decode(entry, fieldname)
                if found.has_positions:
                    found._unpack()
                if found.ids[0] != entry[6] or found.ids[-1] != entry[7]:
                    raise CorruptIndexError(f"a postings list of field {fieldname!r} does not fit its term entry")
                continue
            if offset != chunk_at:
                if chunk_end != len(chunk):
                    raise CorruptIndexError("a chunk of postings holds bytes of no term")
                chunk_at, chunk, chunk_end = offset, self._chunk(offset), 0
            chunk_end = self._check_short(chunk, -1 - length, chunk_end, entry, key)
        if chunk_end != len(chunk):
            raise CorruptIndexError("a chunk of postings holds bytes of no term")
        return read

    def _check_short(self, data: bytes, start: int, expected: int, entry: tuple, key: bytes) -> int:
        """Check a short list (:meth:`decode`'s, without making it) of the term
        of table key ``key`` starting where the one before ended
        (``expected``); returns where it ends."""
        fieldname = _FieldName(self._terms, key)
        count = entry[2]
        ids_end = start + 1 + 4 * count
        end = ids_end + count
        if start != expected or count <= 0 or end > len(data):
            raise CorruptIndexError(f"a postings list of field {fieldname!r} does not fit its chunk")
        gaps = from_bytes("I", data[start + 1 : ids_end])
        last = sum(gaps)
        if gaps[0] != entry[6] or last != entry[7] or last >= self._documents or (count > 1 and 0 in gaps[1:]):
            raise CorruptIndexError(f"a postings list of field {fieldname!r} does not fit its term entry")
        if data[start] == _POSITIONS:
            end += count + sum(data[end : end + count])
        elif data[start] != _NO_POSITIONS:
            raise CorruptIndexError(f"a postings list of field {fieldname!r} is of an unknown kind")
        if end > len(data):
            raise CorruptIndexError(f"a postings list of field {fieldname!r} has positions that do not fit its chunk")
        return end

    def _chunk(self, offset: int) -> bytes:
        found = self._chunks.get(offset)
        if found is not None:
            self._chunks.move_to_end(offset)
            return found
        (size,) = _chunk_head.unpack(bytes(self._file.get(offset, _chunk_head.size)))
        if offset + _chunk_head.size + size > self._length:
            raise CorruptIndexError("a chunk of postings does not fit the file")
        found = zlib.decompress(bytes(self._file.get(offset + _chunk_head.size, size)))
        self._chunks[offset] = found
        if len(self._chunks) > KEPT_CHUNKS:
            self._chunks.popitem(last=False)
        return found

    def decode(self, entry: tuple, fieldname: str) -> TermPostings:
        """The postings an unpacked entry (:meth:`entry`) points at."""

        def damaged(what: str) -> CorruptIndexError:
            return CorruptIndexError(f"a postings list of field {fieldname!r} {what}")

        count, offset, length = entry[2], entry[8], entry[9]
        if count <= 0 or offset < len(MAGIC) or offset + max(length, _chunk_head.size) > self._length:
            raise damaged("does not fit the file")
        documents = self._documents
        if length < 0:
            return self._short(self._chunk(offset), -1 - length, count, documents, damaged)
        return self._long(offset, length, count, documents, damaged)

    @staticmethod
    def _short(data: bytes, start: int, count: int, documents: int, damaged) -> TermPostings:
        ids_end = start + 1 + 4 * count
        weights_end = ids_end + count
        if weights_end > len(data):
            raise damaged("does not fit its chunk")
        kind = data[start]
        gaps = from_bytes("I", data[start + 1 : ids_end])
        if count > 1 and 0 in gaps[1:]:
            raise damaged("repeats a document")
        ids = array("q", accumulate(gaps))
        if ids[-1] >= documents:
            raise damaged("does not fit its segment")
        ids = array("i", ids)
        weights = array("B", data[ids_end:weights_end])
        if kind == _NO_POSITIONS:
            return TermPostings(ids, weights, None)
        if kind != _POSITIONS:
            raise damaged("is of an unknown kind")
        offsets = array("q", accumulate(data[weights_end : weights_end + count], initial=0))
        positions_start = weights_end + count
        if len(offsets) != count + 1 or positions_start + offsets[-1] > len(data):
            raise damaged("has positions that do not fit its chunk")
        position_gaps = data[positions_start : positions_start + offsets[-1]]
        return TermPostings(ids, weights, lambda: (position_gaps, offsets))

    def _long(self, offset: int, length: int, count: int, documents: int, damaged) -> TermPostings:
        if length < _long_head.size:
            raise damaged("is shorter than its head")
        data = bytes(self._file.get(offset, length))
        codes, id_size, weight_size, size_size = _long_head.unpack_from(data)
        weight_code, size_code = chr(codes[0]), chr(codes[1])
        at = _long_head.size
        weights_end = at + id_size + weight_size
        if weights_end + size_size > length:
            raise damaged("does not fit the file")
        if (weight_code == "1") != (weight_size == 0):
            raise damaged("has weights that do not fit their type")
        if (size_code == "-") != (size_size == 0 and weights_end == length):
            raise damaged("has positions that do not fit their type")
        gaps = zlib.decompress(data[at : at + id_size])
        if len(gaps) != 4 * count:
            raise damaged("of the wrong length")
        id_gaps = from_bytes("i", gaps)
        # Ascending, from 0, within the segment (so no sum below overflows).
        if id_gaps[0] < 0 or (count > 1 and min(id_gaps[1:]) <= 0) or sum(id_gaps) >= documents:
            raise damaged("does not fit its segment")
        numpy = loaded_numpy()
        ids = array("i")
        if numpy is not None:
            ids.frombytes(numpy.cumsum(numpy.frombuffer(gaps, dtype="<i4"), dtype=numpy.int32).tobytes())
        else:
            ids.extend(accumulate(id_gaps))
        if weight_code == "1":
            weights = array("B", bytes([1]) * count)
        elif weight_code in ("B", "H", "d"):
            weights = from_bytes(weight_code, zlib.decompress(data[at + id_size : weights_end]))
        else:
            raise damaged("of an unknown weight type")
        if len(weights) != count:
            raise damaged("has weights of another count")
        if size_code == "-":
            return TermPostings(ids, weights, None)
        if size_code not in ("B", "I"):
            raise damaged("of an unknown position type")

        def positions() -> tuple[bytes, array]:
            sizes = from_bytes(size_code, zlib.decompress(data[weights_end : weights_end + size_size]))
            found = zlib.decompress(data[weights_end + size_size :])
            numpy = loaded_numpy()
            offsets = array("q")
            if numpy is not None:
                ends = numpy.zeros(len(sizes) + 1, dtype=numpy.int64)
                numpy.cumsum(numpy.asarray(sizes, dtype=numpy.int64), out=ends[1:])
                offsets.frombytes(ends.tobytes())
            else:
                offsets.extend(accumulate(sizes, initial=0))
            if len(sizes) != count or offsets[-1] != len(found):
                raise damaged("has positions that do not add up")
            return found, offsets

        return TermPostings(ids, weights, positions)


class _FieldName:
    """A term's field name for a message, found only if one is made."""

    __slots__ = ("_terms", "_key")

    def __init__(self, terms, key: bytes) -> None:
        self._terms, self._key = terms, key

    def __repr__(self) -> str:
        return repr(self._terms._keydecoder(self._key)[0])


# Bytes of a term table read at a time by _table_entries.
_TABLE_CHUNK = 1 << 22
_lengths = struct.Struct("!ii")  # a table entry's key and value lengths


def _table_entries(table):
    """Every ``(key, value)`` of a Whoosh ordered hash file (a term table),
    in order: what its ``items()`` gives, read in large chunks instead of
    three small reads an entry.

    Raises ``CorruptIndexError`` for lengths that do not fit the table."""
    get, position, end = table.dbfile.get, table.startofdata, table.endofdata
    buffer, base = b"", position
    head = _lengths.size
    while position < end:
        at = position - base
        if at + head > len(buffer):
            buffer, base, at = bytes(get(position, min(_TABLE_CHUNK, end - position))), position, 0
        keylen, datalen = _lengths.unpack_from(buffer, at)
        if keylen < 0 or datalen < 0 or position + head + keylen + datalen > end:
            raise CorruptIndexError(f"term table entry at {position} is damaged")
        if at + head + keylen + datalen > len(buffer):
            size = max(_TABLE_CHUNK, head + keylen + datalen)
            buffer, base, at = bytes(get(position, min(size, end - position))), position, 0
        key_start = at + head
        yield buffer[key_start : key_start + keylen], buffer[key_start + keylen : key_start + keylen + datalen]
        position += head + keylen + datalen


def _unpack_entry(raw: bytes) -> tuple:
    if len(raw) != _ENTRY_SIZE or raw[0] != 0:
        raise CorruptIndexError("a term entry is damaged (of another size, or flagged as holding pickled postings)")
    return _info.unpack_from(raw) + _pointer.unpack_from(raw, _info.size)


# --- matching ----------------------------------------------------------------------------


class ArrayMatcher(LeafMatcher):
    """Whoosh's matcher interface over a term's :class:`~.termarrays.TermPostings`
    in one segment: what Whoosh's queries (terms, phrases, expansions,
    filters, negation) and its scorers ask of a leaf matcher. The whole list
    is one block for the block-quality methods."""

    def __init__(self, postings: TermPostings, format_, term=None, scorer=None, entry=None, position: int = 0):
        self._postings = postings
        self._ids = postings.ids
        self._weights = postings.weights
        self._i = position
        self.format = format_
        self._term = term
        self.scorer = scorer
        self._entry = entry

    def is_active(self):
        return self._i < len(self._ids)

    def reset(self):
        self._i = 0

    def copy(self):
        return ArrayMatcher(self._postings, self.format, self._term, self.scorer, self._entry, self._i)

    def replace(self, minquality=0):
        if not self.is_active() or (minquality and self.max_quality() < minquality):
            return NullMatcher()
        return self

    def id(self):
        return self._ids[self._i]

    def next(self):
        self._i += 1

    def skip_to(self, id):
        if not self.is_active():
            raise ReadTooFar
        if id > self._ids[self._i]:
            self._i = bisect_left(self._ids, id, self._i)

    def all_ids(self):
        return iter(self._ids[self._i :])

    def weight(self):
        return self._weights[self._i]

    def _positions(self) -> list[int]:
        """The current posting's positions in order, a repeated one kept (as Whoosh decodes them)."""
        postings = self._postings
        if postings._gaps is None or postings._offsets is None:
            postings._unpack()
        gaps, offsets = postings._gaps, postings._offsets
        assert gaps is not None and offsets is not None
        return positions_list(gaps[offsets[self._i] : offsets[self._i + 1]])

    def value(self):
        if self._postings.has_positions:
            return self.format.encode(self._positions())
        if self.format.fixed_value_size() == 0:
            return b""
        return pack_uint(round(self._weights[self._i] / self.format.field_boost))

    def value_as(self, astype):
        if astype == "weight":
            return self.weight()
        if self._postings.has_positions:
            if astype == "positions":
                return self._positions()
            if astype == "frequency":
                return len(self._positions())
            if astype == "position_boosts":
                return [(position, 1) for position in self._positions()]
        return self.format.decoder(astype)(self.value())

    def items_as(self, astype):
        while self.is_active():
            yield self.id(), self.value_as(astype)
            self.next()

    def all_items(self):
        while self.is_active():
            yield self.id(), self.value()
            self.next()

    def supports_block_quality(self):
        return self.scorer is not None and self.scorer.supports_block_quality()

    def skip_to_quality(self, minquality):
        if self.block_quality() <= minquality:
            self._i = len(self._ids)
            return 1
        return 0

    def block_min_id(self):
        return self._ids[0]

    def block_max_id(self):
        return self._ids[-1]

    def block_max_weight(self):
        return self._entry[5] if self._entry is not None else max(self._weights)

    def block_min_length(self):
        return byte_to_length(self._entry[3]) if self._entry is not None else 0

    def block_max_length(self):
        return byte_to_length(self._entry[4]) if self._entry is not None else 2**31


def positions_list(gaps: bytes) -> list[int]:
    """A posting's positions from its gap bytes (:func:`~.termarrays.position_gaps`), in order, repeats kept."""
    if len(gaps) == 1:
        return [gaps[0]]
    if 255 not in gaps:
        return list(accumulate(gaps))
    found, at, before = [], 0, 0
    while at < len(gaps):
        gap = gaps[at]
        if gap == 255:
            gap = int.from_bytes(gaps[at + 1 : at + 4], "little")
            at += 3
        before += gap
        found.append(before)
        at += 1
    return found
