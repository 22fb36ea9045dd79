"""Every private name of Whoosh and NLTK the embedded engine uses, in one place.

The engine reaches below the public APIs where that is many times faster
(posting blocks read whole, field lengths read as one column) or where
Whoosh offers no public hook (a writer's temporary storage and
posting stream), or where it has a bug (terms of one posting are never
inlined in their term info: :mod:`searchengine.engines.whoosh.codec`). The
import shortcut that relies on Whoosh's layout lives here too: its English
morphology loaded on first use (:func:`defer_morphology`). The private
names of NLTK's stemmer the analysis uses (Porter's steps without its
root-cutting step 4, NLTK's stemmer imported without its package
initialisers: :mod:`searchengine.analysis.stemming`) are checked here with
Whoosh's. Those names are not promised to stay: :func:`missing`
lists the ones an installed version lacks
(``tests/engines/whoosh_engine/test_internals.py`` fails with that list), and
pyproject.toml bounds both packages to the releases tested.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable
from itertools import accumulate
from typing import Any

# Names read on a Whoosh leaf matcher (whoosh.codec.whoosh3.W3LeafMatcher)
# to take a block of postings whole.
BLOCK_NAMES = (
    "_read_data",
    "_data",
    "_byteids",
    "_read_weights",
    "_read_values",
    "_next_block",
    "_maxid",
    "_ids",
    "_i",
)


# --- Whoosh: postings ------------------------------------------------------------------


def unfiltered(matcher):
    """``(matcher, deleted docnums or None)``: a segment's posting matcher with
    Whoosh's deleted-document filter (``FilterMatcher``) taken off."""
    from whoosh.matching.wrappers import FilterMatcher

    if type(matcher) is FilterMatcher and matcher._exclude:
        return matcher.child, matcher._ids
    return matcher, None


def segment_storage(reader):
    """The storage a Whoosh ``SegmentReader`` reads its segment's files from
    (the compound file's, over the index's)."""
    return reader._storage


def terms_reader(reader):
    """The terms reader of a Whoosh ``SegmentReader`` (its codec's: term infos, postings)."""
    return reader._terms


def reads_blocks(matcher) -> bool:
    """Whether ``matcher``'s blocks of postings can be read whole (:func:`read_block`)."""
    return all(hasattr(matcher, name) for name in BLOCK_NAMES)


def read_block(matcher, values: bool = False) -> tuple:
    """``(ids, weights, values or None)`` of the current block, from its unread part on."""
    if matcher._ids is None:
        if matcher._data is None:
            matcher._read_data()
        ids = matcher._data[0]
        # Whoosh undoes the gaps between document numbers with a generator (a
        # quarter of reading a block); accumulate gives the same in C.
        matcher._ids = ids if matcher._byteids else tuple(accumulate(ids))
    matcher._read_weights()
    if values:
        matcher._read_values()
    ids, weights, found = matcher._ids, matcher._weights, matcher._values if values else None
    if matcher._i:  # a block already partly read (never, for a fresh matcher)
        start = matcher._i
        ids, weights = ids[start:], weights[start:]
        found = found[start:] if found is not None else None
    return ids, weights, found


def block_max_id(matcher) -> int:
    """The last document number of the current block."""
    return matcher._maxid


def next_block(matcher) -> None:
    """Move ``matcher`` to its next block of postings."""
    matcher._next_block()


def length_codes(reader, fieldname: str, count: int) -> bytes | None:
    """The one-byte field length codes of a segment's ``count`` documents, or
    ``None`` when the column is not of the known shape."""
    from whoosh.codec.whoosh3 import LENGTHS_COLUMN

    try:
        column = reader._perdoc._cached_reader(f"_{fieldname}_len", LENGTHS_COLUMN)
        if column is None:
            return bytes(count)
        stored = min(column._count, count)
        codes = bytes(column._dbfile.get(column._basepos, stored))
    except (AttributeError, TypeError):
        return None
    if len(codes) != stored or column._fixedlen != 1:
        return None
    return codes + bytes(count - stored)  # documents past the column's end have no length


# Bytes of a segment's term table read at a time when listing its terms.
_TERM_TABLE_CHUNK = 1 << 22


def field_terms(reader, fieldname: str) -> list[bytes]:
    """Every term of ``fieldname`` in a Whoosh ``SegmentReader``, in term order.

    The same list as ``reader.lexicon(fieldname)``, read from the term table
    (a W3 ordered hash file: per term its key and value lengths, 4 bytes
    each, big-endian, the key, which is the field's number then the term,
    and the term info) in large chunks instead of two small file reads per
    term, which Whoosh's listing costs: about a tenth of the time. ``None``
    when the segment's table is not of that shape (the caller then asks
    Whoosh).
    """
    from struct import Struct

    from whoosh.codec.whoosh3 import W3TermsReader

    terms = getattr(reader, "_terms", None)
    if not isinstance(terms, W3TermsReader):
        return list(reader.lexicon(fieldname))
    number = terms._fieldmap.get(fieldname)
    if number is None:
        return []
    table = terms._tindex
    prefix = number.to_bytes(2, "big")
    start = table.closest_key_pos(prefix)
    if start is None:
        return []
    lengths = Struct("!ii")
    head = lengths.size
    found: list[bytes] = []
    position, end = start, table.endofdata
    buffer, base = b"", position  # table bytes from file position ``base`` on
    while position < end:
        offset = position - base
        if offset + head > len(buffer):
            buffer, base, offset = _table_bytes(table, position, head, end), position, 0
        keylen, datalen = lengths.unpack_from(buffer, offset)
        if offset + head + keylen > len(buffer):  # a key longer than what is left of the chunk
            buffer, base, offset = _table_bytes(table, position, head + keylen, end), position, 0
        key = buffer[offset + head : offset + head + keylen]
        if key[:2] != prefix:
            break  # the next field's terms
        found.append(key[2:])
        position += head + keylen + datalen
    return found


def _table_bytes(table, position: int, needed: int, end: int) -> bytes:
    """A chunk of a term table from ``position``: at least ``needed`` bytes, at most to ``end``."""
    return table.dbfile.get(position, min(max(_TERM_TABLE_CHUNK, needed), end - position))


def wildcard_terms(node, reader) -> list:
    """The index terms a Whoosh wildcard query node expands to (empty when it cannot say)."""
    return list(node._btexts(reader)) if hasattr(node, "_btexts") else []


# --- Whoosh: writing ------------------------------------------------------------------------


def temp_storage(writer):
    """A segment writer's storage for temporary files (posting runs)."""
    return writer._tempstorage


def remapped_postings(writer, postings, startdoc: int, docmap):
    """A merged segment's postings renumbered for ``writer``'s new segment."""
    return writer._process_posts(postings, startdoc, docmap)


# --- Whoosh: imports ------------------------------------------------------------------------

# whoosh.query.terms imports ``variations`` from whoosh.lang.morph_en, whose
# import compiles 55 regular expressions (15 ms of every command-line
# search) for Whoosh's Variations query, which the engine never builds.
MORPH_EN = "whoosh.lang.morph_en"


def defer_morphology() -> None:
    """Stand in for :data:`MORPH_EN` until it is used, unless it is imported already.

    The stand-in's ``variations`` and any other name import the real
    module (which then replaces the stand-in in ``sys.modules``).
    """
    if MORPH_EN in sys.modules:
        return

    def real():
        if isinstance(sys.modules.get(MORPH_EN), _Deferred):
            del sys.modules[MORPH_EN]
        return importlib.import_module(MORPH_EN)

    class _Deferred(types.ModuleType):
        variations: Callable[[str], Any]  # set on the instance below: the one name Whoosh imports early

        def __getattr__(self, name: str):
            if name.startswith("__"):  # the import system asks for __path__ and the like
                raise AttributeError(name)
            return getattr(real(), name)

    def variations(word: str):
        return real().variations(word)

    stand_in = _Deferred(MORPH_EN)
    stand_in.variations = variations
    sys.modules[MORPH_EN] = stand_in


# --- the check ------------------------------------------------------------------------------


def missing() -> list[str]:
    """The private names above that the installed Whoosh or NLTK lacks, as
    ``"module.Class.name"``; empty when all are there."""
    import tempfile

    from whoosh import fields, writing
    from whoosh.codec import whoosh3
    from whoosh.filedb.filestore import RamStorage

    gone: list[str] = []

    def need(owner, names, label) -> None:
        gone.extend(f"{label}.{name}" for name in names if not hasattr(owner, name))

    ix = RamStorage().create_index(fields.Schema(text=fields.TEXT))
    with ix.writer() as w:
        w.add_document(text="a posting to read")
        w.add_document(text="a posting deleted")
    with ix.writer() as w:
        w.delete_document(1)
    with ix.reader() as reader:
        need(reader.postings("text", "posting"), ("_exclude", "_ids", "child"), "whoosh.matching.FilterMatcher")
        leaf = unfiltered(reader.postings("text", "posting"))[0]
        need(leaf, BLOCK_NAMES + ("_weights", "_values"), "whoosh.codec.whoosh3.W3LeafMatcher")
        need(reader, ("_perdoc", "_storage", "_terms", "deleted_docs_set"), "whoosh.reading.SegmentReader")
        need(reader._terms, ("_fieldmap", "_tindex"), "whoosh.codec.whoosh3.W3TermsReader")
        need(
            reader._terms._tindex,
            ("closest_key_pos", "endofdata", "dbfile"),
            "whoosh.filedb.filetables.OrderedHashReader",
        )
        column = reader._perdoc._cached_reader("_text_len", whoosh3.LENGTHS_COLUMN)
        need(column, ("_count", "_dbfile", "_basepos", "_fixedlen"), "whoosh.columns.FixedBytesColumn.Reader")
    from whoosh import query

    need(query.Wildcard("text", "po*"), ("_btexts",), "whoosh.query.Wildcard")
    with tempfile.TemporaryDirectory() as folder:
        from whoosh.filedb.filestore import FileStorage

        writer = writing.SegmentWriter(FileStorage(folder).create_index(fields.Schema(text=fields.TEXT)))
        need(writer, ("_tempstorage", "_process_posts"), "whoosh.writing.SegmentWriter")
        writer.cancel()
    need(
        whoosh3.W3TermInfo(),
        (
            "set_inlined",
            "_struct",
            "_inlined",
            "_weight",
            "_df",
            "_minlength",
            "_maxlength",
            "_maxweight",
            "_minid",
            "_maxid",
        ),
        "whoosh.codec.whoosh3.W3TermInfo",
    )
    need(whoosh3.W3FieldWriter, ("start_term",), "whoosh.codec.whoosh3.W3FieldWriter")
    from whoosh.filedb import filetables

    need(filetables, ("_lengths", "_pointer"), "whoosh.filedb.filetables")
    with ix.reader() as reader:
        table = reader._terms._tindex
        need(table, ("tables", "endofdata", "hashfn", "dbfile"), "whoosh.filedb.filetables.OrderedHashReader")
    need(whoosh3.W3PostingsWriter(None, 128), ("_inlinelimit",), "whoosh.codec.whoosh3.W3PostingsWriter")
    from searchengine.analysis.stemming import nltk_module

    porter = nltk_module("nltk.stem.porter").PorterStemmer()
    need(
        porter,
        ("_step1a", "_step1b", "_step1c", "_step2", "_step3", "_step5a", "_step5b", "pool"),
        "nltk.stem.porter.PorterStemmer",
    )
    return gone
