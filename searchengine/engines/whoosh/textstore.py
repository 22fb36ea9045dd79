"""A segment's titles and abstracts, kept apart from its other stored fields.

Whoosh keeps a document's stored fields as one pickled record (here deflated
against the segment's dictionary, :mod:`.codec`), so reading a title or an
abstract means inflating and unpickling the whole record: about 0.1 ms with
folding, 2.4 s for the 24,000 papers of the 74,728-record sample with both
stems of ``"language models"``, whose text a quoted phrase must check for the
words as written. The segments written now keep ``title`` and ``abstract``
in a file of their own instead, about one abstract per deflated block, read
several times faster; the stored record holds the rest, and
:meth:`~searchengine.engines.whoosh.codec.DictionaryCodec.per_document_reader`
gives both back as one record, so nothing else changes. The text is kept
once, as written.

Layout of the segment's ``.txs`` file (packed into its compound file with the
rest, so the generation's checksums cover it)::

    blocks        zlib-deflated UTF-8 values of one field, joined by NUL, each
                  against its field's preset dictionary; SOH alone stands for a
                  document without the field. A block is closed once it holds
                  BLOCK_BYTES of text (one abstract, about a dozen titles), so
                  reading one document inflates little
    dictionaries  per field, the last DICTIONARY_BYTES of the text of its
                  first blocks: the phrases abstracts repeat
    table         per field: the first document of each block (uint32), then
                  where each block starts and the last ends (uint64), little-endian
    header        JSON: {"fields": [names], "blocks": [block count per field],
                  "dictionaries": [[start, bytes] per field]}
    trailer       magic TXS1, documents (uint32), header bytes (uint32),
                  table start (uint64)

Documents are in document-number order (deleted ones keep their text until
a merge). A segment written before these files existed has none: its titles
and abstracts are in its stored records, as before.
"""

from __future__ import annotations

import json
import struct
import zlib
from array import array
from bisect import bisect_right
from collections.abc import Callable

from searchengine.engines.whoosh.littleendian import from_bytes, to_bytes

EXTENSION = ".txs"
#: The fields kept here rather than in the stored record.
FIELDS = ("title", "abstract")
# Text per deflated block: more text per block deflates a little better but
# costs more to read for one document.
BLOCK_BYTES = 1024
# A preset dictionary of 4 KiB takes a block of one abstract from 0.50 to 0.42
# of its text at little cost to inflate; 32 KiB (0.36) doubles that cost.
DICTIONARY_BYTES = 4096
_ABSENT = "\x01"
_LEVEL = 9
_MAGIC = b"TXS1"
_trailer = struct.Struct("<4sIIQ")


def _clean(value: str | None) -> str:
    """A value as kept: without NUL (the separator); ``None`` as SOH alone."""
    if value is None:
        return _ABSENT
    return value.replace("\x00", " ") if "\x00" in value else (" " if value == _ABSENT else value)


class _FieldBlocks:
    """One field's blocks as they are written: raw until the field has
    DICTIONARY_BYTES of text (or the segment ends), deflated from then on."""

    def __init__(self) -> None:
        self.firsts = array("I")
        self.blocks: list[bytes] = []
        self.dictionary: bytes | None = None
        self._raw: list[bytes] = []
        self._raw_bytes = 0
        self._pending: list[str] = []
        self._size = 0

    def add(self, doc: int, value: str) -> None:
        if not self._pending:
            self.firsts.append(doc)
        self._pending.append(value)
        self._size += len(value) + 1
        if self._size >= BLOCK_BYTES:
            self.close_block()

    def close_block(self) -> None:
        if not self._pending:
            return
        text = "\x00".join(self._pending).encode("utf-8")
        self._pending, self._size = [], 0
        if self.dictionary is not None:
            self.blocks.append(self._deflate(text))
            return
        self._raw.append(text)
        self._raw_bytes += len(text)
        if self._raw_bytes >= DICTIONARY_BYTES:
            self.finish()

    def finish(self) -> bytes:
        """Choose the dictionary (once) and deflate the blocks kept raw until
        then; the dictionary chosen."""
        if self.dictionary is None:
            self.dictionary = b" ".join(self._raw)[-DICTIONARY_BYTES:]
        self.blocks.extend(map(self._deflate, self._raw))
        self._raw, self._raw_bytes = [], 0
        return self.dictionary

    def _deflate(self, text: bytes) -> bytes:
        if not self.dictionary:
            return zlib.compress(text, _LEVEL)
        deflate = zlib.compressobj(_LEVEL, zlib.DEFLATED, zlib.MAX_WBITS, 9, zlib.Z_DEFAULT_STRATEGY, self.dictionary)
        return deflate.compress(text) + deflate.flush()


class TextStoreWriter:
    """Collects the titles and abstracts of the documents a segment's
    per-document writer writes, in order, and writes the segment's file.

    Args:
        fieldnames: the fields kept (:data:`FIELDS`).
    """

    def __init__(self, fieldnames=FIELDS) -> None:
        self.fieldnames = list(fieldnames)
        self.documents = 0
        self._fields = [_FieldBlocks() for _ in self.fieldnames]

    def add(self, values: list[str | None]) -> None:
        """Add the next document: its values, one per field in order (``None``: without the field)."""
        for field, value in zip(self._fields, values):
            field.add(self.documents, _clean(value))
        self.documents += 1

    def write(self, segment, storage) -> None:
        """Write the file of ``segment`` (a Whoosh segment being written in
        ``storage``, before its compound file is assembled)."""
        chosen: list[bytes] = []
        for field in self._fields:
            field.close_block()
            chosen.append(field.finish())
        handle = segment.create_file(storage, EXTENSION)
        try:
            offsets, position = [], 0
            for field in self._fields:
                starts = array("Q", [position])
                for block in field.blocks:
                    handle.write(block)
                    position += len(block)
                    starts.append(position)
                offsets.append(starts)
            dictionaries = []
            for dictionary in chosen:
                handle.write(dictionary)
                dictionaries.append([position, len(dictionary)])
                position += len(dictionary)
            for field, starts in zip(self._fields, offsets):
                handle.write(to_bytes(field.firsts) + to_bytes(starts))
            header = json.dumps(
                {
                    "fields": self.fieldnames,
                    "blocks": [len(f.blocks) for f in self._fields],
                    "dictionaries": dictionaries,
                }
            ).encode("utf-8")
            handle.write(header)
            handle.write(_trailer.pack(_MAGIC, self.documents, len(header), position))
        finally:
            handle.close()


class TextStore:
    """The titles and abstracts of one segment, read a block at a time.

    :meth:`get` gives one document's value of a field; the block read last is
    kept per field (candidates and hits come in document order).

    Raises ``CorruptIndexError`` (a trailer, header or table that does not
    fit the file), ``struct.error``, ``zlib.error`` or ``UnicodeDecodeError``
    when the file is damaged: what the engine reports as a damaged index.
    """

    def __init__(self, data, length: int | None = None) -> None:
        """``data``: the file's bytes, or an open Whoosh file (``get(position,
        length)``, as a compound file's part is) of ``length`` bytes, read a
        block at a time (the store is not read whole: a search that shows ten
        hits inflates ten abstracts)."""
        from whoosh.reading import CorruptIndexError

        self._file = None
        if isinstance(data, (bytes, bytearray)):
            whole = bytes(data)
            self._read = lambda position, size: whole[position : position + size]
            length = len(whole)
        else:
            self._file = data
            self._read = lambda position, size: bytes(data.get(position, size))
        if length is None or length < _trailer.size:
            raise CorruptIndexError("a text store shorter than its trailer")
        magic, documents, header_length, table_start = _trailer.unpack(
            self._read(length - _trailer.size, _trailer.size)
        )
        header_start = length - _trailer.size - header_length
        if magic != _MAGIC or not 0 <= table_start <= header_start:
            raise CorruptIndexError("a text store whose trailer does not fit it")
        try:
            header = json.loads(self._read(header_start, header_length))
            self.fieldnames = [str(name) for name in header["fields"]]
            counts = [int(count) for count in header["blocks"]]
            self._dictionaries = [self._read(int(start), int(size)) for start, size in header["dictionaries"]]
        except (ValueError, KeyError, TypeError) as error:
            raise CorruptIndexError(f"a text store's header is damaged ({error})") from None
        self.documents = documents
        self._firsts: list[array] = []
        self._offsets: list[array] = []
        table = self._read(table_start, header_start - table_start)
        position = 0
        for count in counts:
            if count < 0 or position + 12 * count + 8 > len(table):
                raise CorruptIndexError("a text store's table does not fit it")
            firsts = from_bytes("I", table[position : position + 4 * count])
            position += 4 * count
            offsets = from_bytes("Q", table[position : position + 8 * (count + 1)])
            position += 8 * (count + 1)
            if (
                len(firsts) != count
                or len(offsets) != count + 1
                or (count and firsts[0] != 0)
                or offsets[-1] > table_start
            ):
                raise CorruptIndexError("a text store's table does not fit it")
            self._firsts.append(firsts)
            self._offsets.append(offsets)
        if position != len(table) or len(counts) != len(self.fieldnames) or len(self._dictionaries) != len(counts):
            raise CorruptIndexError("a text store's table does not fit it")
        self._index = {name: number for number, name in enumerate(self.fieldnames)}
        self._kept: list[tuple[int, int, list[str]]] = [(-1, -1, [])] * len(self.fieldnames)

    def close(self) -> None:
        """Close the file it reads (when given one)."""
        if self._file is not None:
            self._file.close()

    def holds(self, fieldname: str) -> bool:
        """Whether the file keeps ``fieldname``."""
        return fieldname in self._index

    def get(self, fieldname: str, doc: int) -> str | None:
        """The value of ``fieldname`` (one the file keeps) in segment document
        ``doc``; ``None`` when the document has no such field."""
        number = self._index[fieldname]
        first, end, values = self._kept[number]
        if not first <= doc < end:
            firsts, offsets = self._firsts[number], self._offsets[number]
            block = bisect_right(firsts, doc) - 1
            first = firsts[block]
            end = firsts[block + 1] if block + 1 < len(firsts) else self.documents
            dictionary = self._dictionaries[number]
            deflated = self._read(offsets[block], offsets[block + 1] - offsets[block])
            if dictionary:
                inflate = zlib.decompressobj(zdict=dictionary)
                text = inflate.decompress(deflated)
                if not inflate.eof:
                    raise zlib.error("a text store block ends early")
            else:
                text = zlib.decompress(deflated)
            values = text.decode("utf-8").split("\x00")
            if len(values) != end - first:
                from whoosh.reading import CorruptIndexError

                raise CorruptIndexError("a text store block of the wrong number of documents")
            self._kept[number] = (first, end, values)
        value = values[doc - first]
        return None if value == _ABSENT else value

    def matching(
        self,
        fieldname: str,
        search: Callable,
        docs: list[int],
        fold: Callable[[str], str],
        out_of_time: Callable[[], bool] | None = None,
    ) -> tuple[list[int], bool]:
        """``(found, complete)``: those of ``docs`` (ascending) whose value of
        ``fieldname``, folded by ``fold``, gives ``search`` (a compiled
        pattern's ``search``) a match. ``out_of_time()`` is asked before each
        block is read; when it says so, the documents checked so far are
        returned (``complete`` False)."""
        number = self._index[fieldname]
        first, end, values = self._kept[number]
        found: list[int] = []
        for doc in docs:
            if not first <= doc < end:
                if out_of_time is not None and out_of_time():
                    return found, False
                self.get(fieldname, doc)
                first, end, values = self._kept[number]
            if search(fold(values[doc - first])) is not None:  # (SOH, an absent field, matches no word)
                found.append(doc)
        return found, True


def read_text_store(storage, segment) -> TextStore | None:
    """The :class:`TextStore` of ``segment`` (in ``storage``, the segment's
    compound file), reading its file until closed; ``None`` for a segment
    written without one.

    Raises as :class:`TextStore` does for a damaged file, and
    ``CorruptIndexError`` for one of another segment's document count or of
    other fields than :data:`FIELDS`."""
    name = segment.make_filename(EXTENSION)
    if not storage.file_exists(name):
        return None
    handle = storage.open_file(name)
    try:
        found = TextStore(handle, storage.file_length(name))
    except BaseException:
        handle.close()
        raise
    if found.documents != segment.doc_count_all() or found.fieldnames != list(FIELDS):
        found.close()
        from whoosh.reading import CorruptIndexError

        raise CorruptIndexError(
            f"a text store of {found.documents} documents and fields {found.fieldnames} "
            f"in a segment of {segment.doc_count_all()}"
        )
    return found


def segment_text_store(reader) -> TextStore | None:
    """The :class:`TextStore` of a Whoosh ``SegmentReader`` (read once, kept
    by its per-document reader); ``None`` for a segment without one."""
    perdoc = getattr(reader, "_perdoc", None)
    text_store = getattr(perdoc, "text_store", None)
    return text_store() if text_store is not None else None
