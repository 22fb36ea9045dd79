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

Segments written now name :class:`~.arraypostings.ArrayCodec`, which keeps
every term's postings as arrays, with no pickle and no blocks
(:mod:`.arraypostings`), and :class:`DictionaryCodec`'s stored fields and
text store. Segments of older indexes name :class:`DictionaryCodec` or
:class:`CompactCodec` and read as before; :class:`DictionaryCodec` adds
two layouts of its own to :class:`CompactCodec`:

* a block of postings holds its values (each posting's encoded positions)
  as one string and their lengths (:class:`PackedPostingsWriter`), where
  Whoosh pickles a tuple of strings: half the bytes after deflate;
* the stored fields are deflated against a dictionary made of the
  segment's first documents (:class:`DictionaryCompressedColumn`), where
  Whoosh deflates each document alone: 0.62 of the bytes;
* titles and abstracts are kept apart from the other stored fields, in the
  segment's text store (:mod:`.textstore`), and read back into the record.

With them (and arXiv's DOIs no longer indexed as terms) the index of the
74,728-record arXiv sample went from 326 to 227 MB (plain Whoosh's
defaults: 263 MB).
"""

from __future__ import annotations

import io
import pickle
import struct
import sys
from array import array
from itertools import accumulate
from typing import TYPE_CHECKING

from whoosh.codec.whoosh3 import (
    W3Codec,
    W3FieldWriter,
    W3LeafMatcher,
    W3PerDocReader,
    W3PerDocWriter,
    W3PostingsWriter,
    W3TermInfo,
    W3TermsReader,
)
from whoosh.filedb.filetables import OrderedHashReader, _lengths, _pointer
from whoosh.formats import Positions
from whoosh.reading import CorruptIndexError
from whoosh.util.numeric import length_to_byte

if TYPE_CHECKING:
    import zlib

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
            1,
            self._weight,
            self._df,
            0 if self._minlength is None else length_to_byte(self._minlength),
            length_to_byte(self._maxlength),
            self._maxweight,
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


class DictionaryCodec(CompactCodec):
    """:class:`CompactCodec` whose blocks of postings pack their values
    (:class:`PackedPostingsWriter`) and whose stored fields are compressed
    against a dictionary of the segment's own first documents
    (:class:`DictionaryCompressedColumn`).

    Whoosh compresses each document's stored fields alone, and deflate finds
    little to reuse in one abstract; with the segment's first
    :data:`DICTIONARY_SAMPLE` documents as a preset dictionary (zlib's
    ``zdict``) it reuses the field names, the pickle framing, the URL
    prefixes and the common words of the field. On the 74,728-record arXiv
    sample the stored fields shrink to 0.62 of Whoosh's. Segments written
    before keep :class:`CompactCodec` (each segment names its codec), and
    read as before.
    """

    def field_writer(self, storage, segment):
        return _ArraysFieldWriter(self, storage, segment)

    def terms_reader(self, storage, segment):
        terms = super().terms_reader(storage, segment)
        terms.__class__ = _ArraysTermsReader  # Whoosh makes the reader itself; the arrays open when first asked
        terms._arrays_source = (storage, segment)
        return terms

    def per_document_writer(self, storage, segment):
        return _DictionaryPerDocWriter(self, storage, segment)

    def per_document_reader(self, storage, segment):
        return _DictionaryPerDocReader(storage, segment)

    def postings_writer(self, dbfile, byteids=False):
        return PackedPostingsWriter(
            dbfile,
            blocklimit=self._blocklimit,
            byteids=byteids,
            compression=self._compression,
            inlinelimit=self._inlinelimit,
        )

    def postings_reader(self, dbfile, terminfo, format_, term=None, scorer=None):
        if terminfo.is_inlined():
            return super().postings_reader(dbfile, terminfo, format_, term=term, scorer=scorer)
        offset, length = terminfo.extent()
        return PackedLeafMatcher(dbfile, offset, length, format_, term=term, scorer=scorer)


class _ArraysFieldWriter(CompactFieldWriter):
    """:class:`CompactFieldWriter` also writing the segment's term arrays
    (:mod:`.termarrays`): every term's postings go through :meth:`add`,
    whether from new documents or merged segments."""

    def __init__(self, codec, storage, segment) -> None:
        from searchengine.engines.whoosh.termarrays import EXTENSION, TermArraysWriter

        super().__init__(codec, storage, segment)
        self._arrays = TermArraysWriter(self._create_file(EXTENSION))
        self._ids: list[int] = []
        self._weights: list[float] = []
        self._values: list[bytes] = []

    def start_field(self, fieldname, fieldobj):
        super().start_field(fieldname, fieldobj)
        self._arrays.start_field(fieldname, fieldobj.format)

    def start_term(self, btext: bytes) -> None:
        super().start_term(btext)
        self._ids, self._weights, self._values = [], [], []

    def add(self, docnum, weight, vbytes, length):
        self._ids.append(docnum)
        self._weights.append(weight)
        self._values.append(vbytes)
        super().add(docnum, weight, vbytes, length)

    def finish_term(self):
        super().finish_term()
        self._arrays.add_term(self._btext, self._ids, self._weights, self._values)

    def close(self):
        super().close()
        self._arrays.close()


class _ArraysTermsReader(W3TermsReader):
    """Whoosh's W3 terms reader that also reads the segment's term arrays
    (:mod:`.termarrays`) when first asked."""

    _arrays = False  # not read yet
    _arrays_source: tuple = ()

    def term_arrays(self):
        """The segment's :class:`~.termarrays.TermArrays`, or ``None`` (a segment written before them)."""
        if self._arrays is False:
            from searchengine.engines.whoosh.termarrays import read_term_arrays

            self._arrays = read_term_arrays(*self._arrays_source)
        return self._arrays

    def close(self):
        if self._arrays:
            self._arrays.close()
        self._arrays = False
        super().close()


class PackedPostingsWriter(W3PostingsWriter):
    """Whoosh's W3 postings writer, packing a block's values (the encoded
    positions of each posting) into one string and their lengths.

    Whoosh pickles them as a tuple of strings, which costs each posting an
    opcode, a length and a memo entry that deflate compresses poorly: on the
    arXiv sample the packed blocks of the abstract's postings are half the
    size. The block stays a pickled ``(ids, weights, values)`` tuple, its
    values now ``(joined, lengths, width)``: ``lengths`` holds each value's
    length in ``width`` bytes (1, or 4 when one is 256 or longer; unsigned,
    little-endian).
    """

    def _mini_values(self):
        fixedsize = self._format.fixed_value_size()
        if fixedsize is not None and fixedsize >= 0:
            return super()._mini_values()
        lengths = [len(value) for value in self._values]
        if max(lengths, default=0) < 256:
            return b"".join(self._values), bytes(lengths), 1
        packed = array("I", lengths)
        if sys.byteorder != "little":
            packed.byteswap()
        return b"".join(self._values), packed.tobytes(), 4


# Decoded blocks of postings kept per open postings file (see
# PackedLeafMatcher._read_data); past this many the file's table starts over.
BLOCKS_KEPT = 4096


class PackedLeafMatcher(W3LeafMatcher):
    """Whoosh's W3 posting reader for blocks written by :class:`PackedPostingsWriter`.

    The blocks decoded last (inflated and unpickled: most of reading a
    block) are kept per open postings file, up to :data:`BLOCKS_KEPT`: a
    query reads a new word's blocks to score it, then many of the same
    blocks again for their positions (the proximity bonus, phrases) or for
    feedback. The files of a published generation never change, so a kept
    block is the one on disk.
    """

    def _read_data(self):
        kept = getattr(self._postfile, "__dict__", None)
        if kept is None:
            super()._read_data()
            return
        blocks = kept.get("_decoded_blocks")
        if blocks is None:
            blocks = kept.setdefault("_decoded_blocks", {})
        found = blocks.get(self._dataoffset)
        if found is not None:
            self._data = found
            return
        super()._read_data()
        if len(blocks) >= BLOCKS_KEPT:
            blocks.clear()
        blocks[self._dataoffset] = self._data

    @property
    def packs_values(self) -> bool:
        """Whether this term's values are packed (formats of values of one size keep Whoosh's layout)."""
        return self._fixedsize is None or self._fixedsize < 0

    def _read_values(self):
        if not self.packs_values:
            super()._read_values()
            return
        if self._data is None:
            self._read_data()
        self._values = unpack_values(self._data[2])

    def packed_values(self) -> tuple[bytes, array]:
        """The whole current block's values as written: one string and the
        offset of each value in it (``array('I')``, one more than the values).

        Raises ``CorruptIndexError`` when the lengths do not add up to the string."""
        if self._data is None:
            self._read_data()
        return value_offsets(self._data[2])


def value_offsets(packed: tuple) -> tuple[bytes, array]:
    """``(joined, offsets)`` of a block's values from :class:`PackedPostingsWriter`'s
    ``(joined, lengths, width)`` (see :meth:`PackedLeafMatcher.packed_values`).

    Raises ``CorruptIndexError`` when they are not of that shape or the
    lengths do not add up to the string."""
    damaged = CorruptIndexError("a block of postings is damaged: its values do not add up")
    if not (
        isinstance(packed, tuple)
        and len(packed) == 3
        and isinstance(packed[0], bytes)
        and isinstance(packed[1], bytes)
        and packed[2] in (1, 4)
        and len(packed[1]) % packed[2] == 0
    ):
        raise damaged
    joined, lengths, width = packed
    if width == 1:
        sizes = lengths
    else:
        sizes = array("I")
        sizes.frombytes(lengths)
        if sys.byteorder != "little":
            sizes.byteswap()
    offsets = array("I", accumulate(sizes, initial=0))
    if offsets[-1] != len(joined):
        raise damaged
    return joined, offsets


def unpack_values(packed: tuple) -> tuple[bytes, ...]:
    """A block's values from :class:`PackedPostingsWriter`'s ``(joined, lengths, width)``.

    Raises ``CorruptIndexError`` when the lengths do not add up to the joined string."""
    joined, offsets = value_offsets(packed)
    return tuple(map(joined.__getitem__, map(slice, offsets[:-1], offsets[1:])))


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


# --- stored fields ---------------------------------------------------------------------

#: Stored-field values (pickled documents) of a segment that make its
#: compression dictionary; deflate looks back at most 32 KiB, so the
#: dictionary is the last 32 KiB of them.
DICTIONARY_SAMPLE = 100
DICTIONARY_BYTES = 32768
STORED_LEVEL = 6

_trailer = struct.Struct("<4sIII")  # magic, documents, dictionary bytes, value bytes
_TRAILER_MAGIC = b"SFZ1"


class DictionaryCompressedColumn:
    """A Whoosh column of byte strings, each compressed by zlib (its header
    and Adler-32 checksum kept, so that damage is seen) against one preset
    dictionary made of the column's first values.

    Layout: the dictionary, the compressed values one after another, each
    document's compressed length (``uint32``, 0 for none), then a trailer
    (magic ``SFZ1``, document count, dictionary length, total value length).
    A value reads back as the bytes written, ``b""`` for a document without
    one (Whoosh's ``PickleColumn`` reads that as ``None``).

    Raises ``CorruptIndexError`` (a trailer that does not fit the column) or
    ``zlib.error`` when the bytes are damaged.
    """

    reversible = False

    def writer(self, dbfile):
        return _DictionaryColumnWriter(dbfile)

    def reader(self, dbfile, basepos: int, length: int, doccount: int):
        return _DictionaryColumnReader(dbfile, basepos, length, doccount)

    def default_value(self, reverse: bool = False) -> bytes:
        return b""

    def stores_lists(self) -> bool:
        return False


class _DictionaryColumnWriter:
    def __init__(self, dbfile) -> None:
        from array import array

        self._dbfile = dbfile
        self._lengths = array("I")
        self._pending: list[bytes] = []  # values before the dictionary is made
        self._sampled = 0  # the non-empty ones among them
        self._compressor: zlib._Compress | None = None  # made with the dictionary (_start)
        self._dictionary = b""
        self._written = 0

    def add(self, docnum: int, value: bytes) -> None:
        lengths = self._lengths
        while len(lengths) + len(self._pending) < docnum:  # documents without a value
            if self._compressor is None:
                self._pending.append(b"")
            else:
                lengths.append(0)
        if self._compressor is None:
            self._pending.append(value)
            self._sampled += bool(value)
            if self._sampled >= DICTIONARY_SAMPLE:
                self._start()
        else:
            self._write(value)

    def _start(self) -> None:
        import zlib

        self._dictionary = b"".join(self._pending)[-DICTIONARY_BYTES:]
        self._compressor = zlib.compressobj(
            STORED_LEVEL,
            zlib.DEFLATED,
            zlib.MAX_WBITS,
            9,
            zlib.Z_DEFAULT_STRATEGY,
            *([self._dictionary] if self._dictionary else []),
        )
        self._dbfile.write(self._dictionary)
        pending, self._pending = self._pending, []
        for value in pending:
            self._write(value)

    def _write(self, value: bytes) -> None:
        if not value:
            self._lengths.append(0)
            return
        assert self._compressor is not None, "written before the dictionary was made"
        compressor = self._compressor.copy()  # the dictionary is set once, not per value
        packed = compressor.compress(value) + compressor.flush()
        self._dbfile.write(packed)
        self._lengths.append(len(packed))
        self._written += len(packed)

    def fill(self, docnum: int) -> None:
        pass

    def finish(self, doccount: int) -> None:
        if self._compressor is None:
            self._start()
        lengths = self._lengths
        while len(lengths) < doccount:
            lengths.append(0)
        del lengths[doccount:]
        if sys.byteorder != "little":
            lengths.byteswap()
        self._dbfile.write(lengths.tobytes())
        self._dbfile.write(_trailer.pack(_TRAILER_MAGIC, doccount, len(self._dictionary), self._written))


class _DictionaryColumnReader:
    def __init__(self, dbfile, basepos: int, length: int, doccount: int) -> None:
        from array import array

        self._dbfile = dbfile
        self._doccount = doccount
        if length < _trailer.size:
            raise CorruptIndexError("the stored fields column is shorter than its trailer")
        magic, count, dictionary, written = _trailer.unpack(
            bytes(dbfile.get(basepos + length - _trailer.size, _trailer.size))
        )
        if magic != _TRAILER_MAGIC or dictionary + written + 4 * count + _trailer.size != length:
            raise CorruptIndexError("the stored fields column's trailer is damaged")
        self._dictionary = bytes(dbfile.get(basepos, dictionary))
        self._lengths = array("I")
        self._lengths.frombytes(bytes(dbfile.get(basepos + dictionary + written, 4 * count)))
        if sys.byteorder != "little":
            self._lengths.byteswap()
        if sum(self._lengths) != written:  # a changed length would shift or empty documents silently
            raise CorruptIndexError("the stored fields column's lengths are damaged")
        self._start = basepos + dictionary
        self._offsets: array[int] | None = None  # where each value starts, made on first read

    def __len__(self) -> int:
        return self._doccount

    def __getitem__(self, docnum: int) -> bytes:
        import zlib

        if not 0 <= docnum < len(self._lengths):
            return b""
        length = self._lengths[docnum]
        if not length:
            return b""
        offsets = self._offsets
        if offsets is None:
            from array import array
            from itertools import accumulate

            offsets = self._offsets = array("Q", accumulate(self._lengths, initial=0))
        packed = bytes(self._dbfile.get(self._start + offsets[docnum], length))
        stream = zlib.decompressobj(zlib.MAX_WBITS, *([self._dictionary] if self._dictionary else []))
        value = stream.decompress(packed)
        if not stream.eof or stream.unused_data:  # a cut or overlong value: its checksum was never read
            raise zlib.error(f"stored fields of document {docnum} are damaged")
        return value

    def __iter__(self):
        for docnum in range(self._doccount):
            yield self[docnum]

    def load(self) -> list:
        return list(self)

    def sort_key(self, docnum: int) -> bytes:
        return self[docnum]


def _stored_column():
    from whoosh.columns import PickleColumn

    return PickleColumn(DictionaryCompressedColumn())


class _DictionaryPerDocWriter(W3PerDocWriter):
    """Whoosh's per-document writer with the stored fields in a
    :class:`DictionaryCompressedColumn`, except titles and abstracts, which go
    to the segment's text store (:mod:`.textstore`)."""

    def __init__(self, codec, storage, segment) -> None:
        from searchengine.engines.whoosh.textstore import FIELDS, TextStoreWriter

        super().__init__(codec, storage, segment)
        self._texts = TextStoreWriter(FIELDS)
        self._text_values: dict[str, str] = {}

    def _create_column(self, fieldname, column):
        super()._create_column(fieldname, _stored_column() if fieldname == "_stored" else column)

    def start_doc(self, docnum):
        super().start_doc(docnum)
        self._text_values = {}

    def add_field(self, fieldname, fieldobj, value, length):
        if isinstance(value, str) and fieldname in self._texts.fieldnames:
            self._text_values[fieldname] = value
            value = None
        super().add_field(fieldname, fieldobj, value, length)

    def finish_doc(self):
        if self._indoc:  # (Whoosh's close calls this again after the last document)
            self._texts.add([self._text_values.get(name) for name in self._texts.fieldnames])
        super().finish_doc()

    def close(self):
        super().close()
        self._texts.write(self._segment, self._storage)


class _DictionaryPerDocReader(W3PerDocReader):
    """Whoosh's per-document reader, reading the stored fields from a
    :class:`DictionaryCompressedColumn` and, for a segment that has one, the
    titles and abstracts from its text store (:mod:`.textstore`)."""

    _texts = False  # not read yet

    def column_reader(self, fieldname, column):
        return super().column_reader(fieldname, _stored_column() if fieldname == "_stored" else column)

    def text_store(self):
        """The segment's :class:`~.textstore.TextStore`, or ``None`` (a segment written before them)."""
        if self._texts is False:
            from searchengine.engines.whoosh.textstore import read_text_store

            self._texts = read_text_store(self._storage, self._segment)
        return self._texts

    def close(self):
        if self._texts:
            self._texts.close()
        self._texts = False
        super().close()

    def stored_fields(self, docnum):
        stored = super().stored_fields(docnum)
        texts = self.text_store()
        if texts is not None:
            for name in texts.fieldnames:
                value = texts.get(name, docnum)
                if value is not None:
                    stored[name] = value
        return stored
