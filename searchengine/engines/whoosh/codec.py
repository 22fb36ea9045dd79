"""The index's on-disk encodings: Whoosh's W3 codec with small term infos
for rare terms, and word positions written without pickle's framing.

Most terms of an arXiv index occur in one document (each id and DOI, most
rare words). Whoosh's W3 codec gives each such term a block of its own in the
postings file, with a header and a pickled block info, unless ``inlinelimit``
is raised; and an inlined term pickles its one posting with protocol 2,
which writes every ``bytes`` value through ``_codecs.encode`` (74 bytes for a
posting of 4). This codec inlines terms of one posting, pickled with
protocol 3 without the memo (Whoosh reads no references back: 13 bytes
besides the positions), and writes a whole-number weight as an integer.
On 10,000 arXiv records the term file shrinks from 45.8 to 29.9 MB.

The term infos stay in Whoosh's W3 layout, so any W3 reader reads them;
the segments name this class as their codec, so this module is imported
when an index opens (it is small, and only Whoosh's own codec behind it).

Whoosh's ``Positions`` format pickles each posting's position deltas with
protocol 2 (``pack_uint(n) + dumps(deltas, 2)``: 13 bytes for one
position). :class:`CompactPositions` writes the same list with protocol-1
opcodes and no header, memo or stop (8 bytes), which Whoosh's own
``decode_positions`` reads unchanged: it appends the stop when missing.
"""

from __future__ import annotations

import io
import pickle
import struct

from whoosh.codec.whoosh3 import W3Codec, W3FieldWriter, W3TermInfo
from whoosh.filedb.filetables import OrderedHashReader, _lengths, _pointer
from whoosh.formats import Positions
from whoosh.reading import CorruptIndexError
from whoosh.util.numeric import length_to_byte

# Postings a term may have and still be stored in its term info (fewer than this).
INLINE_LIMIT = 2

# Pickle protocol of inlined postings: 3 is the first to write bytes as bytes.
PICKLE_PROTOCOL = 3

NO_ID = 0xFFFFFFFF  # the W3 layout's stand-in for "no document number"

_buffer = io.BytesIO()
_pickler = pickle.Pickler(_buffer, PICKLE_PROTOCOL)
_pickler.fast = True  # no memo: the small tuples hold nothing twice


def _pickled(value) -> bytes:
    _buffer.seek(0)
    _buffer.truncate()
    _pickler.dump(value)
    return _buffer.getvalue()


class CompactTermInfo(W3TermInfo):
    """A W3 term info whose inlined postings pickle compactly (see the module)."""

    # Whoosh's W3 postings writer calls this name; W3TermInfo spells it ``set_inlined``.
    set_inline = W3TermInfo.set_inlined

    def to_bytes(self) -> bytes:
        """The term info in the W3 layout: a fixed header, then the inlined
        postings ``(ids, weights, values)`` as a pickle, or the postings'
        offset and length in the postings file."""
        if self._inlined is None:
            return super().to_bytes()
        ids, weights, values = self._inlined
        weights = tuple(int(w) if w == int(w) else w for w in weights)
        header = self._struct.pack(
            1, self._weight, self._df,
            0 if self._minlength is None else length_to_byte(self._minlength),
            length_to_byte(self._maxlength), self._maxweight,
            NO_ID if self._minid is None else self._minid,
            NO_ID if self._maxid is None else self._maxid,
        )
        return header + _pickled((ids, weights, values))


class CompactFieldWriter(W3FieldWriter):
    """Whoosh's W3 field writer, starting each term with a :class:`CompactTermInfo`."""

    def start_term(self, btext: bytes) -> None:
        if self._postwriter is None:
            raise RuntimeError("a term started outside a field")
        self._btext = btext
        self._postwriter.start_postings(self._fieldobj.format, CompactTermInfo())


class CompactCodec(W3Codec):
    """Whoosh's W3 codec writing terms of one posting inside a
    :class:`CompactTermInfo`, and reading its term table as a
    :class:`CheckedTermTable`."""

    def __init__(self, blocklimit: int = 128, compression: int = 3, inlinelimit: int = INLINE_LIMIT) -> None:
        super().__init__(blocklimit=blocklimit, compression=compression, inlinelimit=inlinelimit)

    def field_writer(self, storage, segment):
        return CompactFieldWriter(self, storage, segment)

    def terms_reader(self, storage, segment):
        terms = super().terms_reader(storage, segment)
        terms._tindex.__class__ = CheckedTermTable  # Whoosh makes the table itself; the check adds no state
        return terms


class CheckedTermTable(OrderedHashReader):
    """Whoosh's term table (a hash file: 256 tables of ``(hash, position)``
    slots, linear probing), whose lookups notice overwritten entries.

    Whoosh compares a slot's key with the one looked for only when their
    hashes match, and takes any difference for another key: junk written
    over the entries made every term read as missing, and a search answer
    nothing without an error. Here a slot whose stored key does not have
    the slot's hash (CRC-32, so a real collision always does) raises
    ``CorruptIndexError``, which the engine reports as a damaged index.
    """

    def ranges_for_key(self, key: bytes):
        """``(position, length)`` of the value stored under ``key`` (at most one)."""
        keyhash = self.hashfn(key)
        start, count = self.tables[keyhash & 255]
        get = self.dbfile.get
        slot = (keyhash >> 8) % count if count else 0
        for _ in range(count):
            slothash, position = _pointer.unpack(get(start + slot * _pointer.size, _pointer.size))
            if not position:  # an empty slot ends the probe
                return
            if not 0 < position < self.endofdata:  # entries lie before the tables
                raise CorruptIndexError(f"term table slot at {start + slot * _pointer.size} is damaged")
            if slothash == keyhash:
                keylen, datalen = _lengths.unpack(get(position, _lengths.size))
                if not 0 <= keylen <= self.endofdata - position:
                    raise CorruptIndexError(f"term table entry at {position} is damaged")
                stored = get(position + _lengths.size, keylen)
                if stored == key:
                    yield position + _lengths.size + keylen, datalen
                    return
                if self.hashfn(stored) != slothash:
                    raise CorruptIndexError(f"term table entry at {position} is damaged")
            slot = (slot + 1) % count


# Pickle opcodes (pickletools): BININT1 <byte>, BININT2 <uint16>, BININT <int32>,
# EMPTY_LIST, MARK, APPEND (one item), APPENDS (items since MARK).
_SMALL = [b"K" + bytes((n,)) for n in range(256)]
_pack_count = struct.Struct("!I").pack


def _delta_code(delta: int) -> bytes:
    if delta < 256:
        return _SMALL[delta]
    if delta < 65536:
        return b"M" + delta.to_bytes(2, "little")
    return b"J" + delta.to_bytes(4, "little", signed=True)


class CompactPositions(Positions):
    """Whoosh's ``Positions`` format, encoding a posting's positions in fewer
    bytes (see the module); decoding is Whoosh's."""

    def encode(self, poslist) -> bytes:
        """``poslist`` (increasing token positions) as a count (4 bytes) and
        the pickled list of position deltas."""
        if len(poslist) == 1:
            return _pack_count(1) + b"]" + _delta_code(poslist[0]) + b"a"
        codes, base = [], 0
        for position in poslist:
            codes.append(_SMALL[position - base] if position - base < 256 else _delta_code(position - base))
            base = position
        return _pack_count(len(codes)) + b"](" + b"".join(codes) + b"e"


def compact_positions(field):
    """``field`` (a Whoosh field indexed with positions) with its format
    replaced by :class:`CompactPositions` of the same field boost; returns ``field``."""
    field.format = CompactPositions(field_boost=field.format.field_boost)
    return field


# --- spelling words -----------------------------------------------------------------------

#: A segment's spelling words: one file in the segment (packed into its
#: compound file with the rest), the distinct words of its documents' titles
#: and abstracts as written, folded (:func:`~searchengine.engines.whoosh.schema.spelling_words`),
#: sorted, newline-separated UTF-8, zlib-compressed.
WORDS_EXT = ".wrd"
# Fields of older indexes that held the same words as terms, one posting each.
OLD_SPELLING_FIELDS = ("spell_title", "spell_abstract")


def write_segment_words(segment, storage, words: set[str]) -> None:
    """Write ``words`` as the spelling words of ``segment`` (a Whoosh segment
    being written in ``storage``, before its compound file is assembled)."""
    import zlib

    handle = segment.create_file(storage, WORDS_EXT)
    try:
        handle.write(zlib.compress("\n".join(sorted(words)).encode("utf-8"), 1))
    finally:
        handle.close()


def segment_words(reader) -> set[str]:
    """The spelling words of one segment (a Whoosh ``SegmentReader``): its
    words file, or for a segment written before there were such files, the
    terms of its ``spell_*`` fields. Deleted documents' words are included
    until the segment is merged.

    Raises ``zlib.error`` or ``UnicodeDecodeError`` for a damaged file."""
    import zlib

    from searchengine.engines.whoosh import internals

    storage, name = internals.segment_storage(reader), reader.segment().make_filename(WORDS_EXT)
    if storage.file_exists(name):
        handle = storage.open_file(name)
        try:
            text = zlib.decompress(handle.read()).decode("utf-8")
        finally:
            handle.close()
        return set(text.split("\n")) if text else set()
    words: set[str] = set()
    for field in OLD_SPELLING_FIELDS:
        if field in reader.schema:
            words.update(w.decode("utf-8") if isinstance(w, bytes) else w for w in reader.lexicon(field))
    return words
