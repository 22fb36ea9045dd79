"""The index's codecs: in segments of blocks (written before every term's postings were
arrays, still read), terms of one posting are written inside their term info (compactly);
each segment keeps its spelling words in a file of its own."""

import json
from contextlib import contextmanager

from searchengine import build_index, open_index, remove_documents, update_index
from searchengine.engines.whoosh import integrity, store

from conftest import write

RECORDS = [
    {
        "id": "2101.00001v1",
        "title": "Sparse solvers on GPUs",
        "abstract": "A quokka tuned sparse solver.",
        "authors": ["Ada Lovelace"],
        "categories": ["cs.DC"],
        "year": 2021,
    },
    {
        "id": "2101.00002v1",
        "title": "Sparse graphs",
        "abstract": "Sparse graphs and their solver.",
        "authors": ["Alan Turing"],
        "categories": ["math.CO"],
        "year": 2022,
    },
]


def _jsonl(path, records):
    return write(path, "".join(json.dumps(r) + "\n" for r in records))


@contextmanager
def written_with(codec_name: str):
    """New segments written meanwhile name ``codec_name`` (a class of the codec module)."""
    from searchengine.engines.whoosh import arraypostings, codec, writer

    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(arraypostings, "ArrayCodec", getattr(codec, codec_name))
        patched.setattr(writer, "_WRITER_CLASSES", {})  # the writer classes are made anew with it
        yield


def _term_info(index_dir, field, text):
    from whoosh import index as whoosh_index

    with whoosh_index.open_dir(str(store.current_generation(index_dir))).reader() as reader:
        return reader.term_info(field, text)


def test_a_term_of_one_posting_is_inlined_and_found_by_search_facets_update_and_remove(tmp_path):
    index_dir = tmp_path / "index"
    with written_with("DictionaryCodec"):
        build_index([_jsonl(tmp_path / "a.jsonl", RECORDS)], index_dir, jobs=1)
    rare = _term_info(index_dir, "abstract", "quokka")
    assert rare.is_inlined() and rare.doc_frequency() == 1
    assert _term_info(index_dir, "id", "2101.00001").is_inlined()
    assert not _term_info(index_dir, "title", "spars").is_inlined()  # two postings: a block of its own

    index = open_index(index_dir)
    found = index.search("quokka", facets=["category", "year"])
    assert [h.id for h in found.hits] == ["2101.00001"]
    assert [(f["value"], f["count"]) for f in found.facets["category"]] == [("cs.DC", 1)]
    assert [(f["value"], f["count"]) for f in found.facets["year"]] == [(2021, 1)]
    assert [h.id for h in index.search("id:2101.00001").hits] == ["2101.00001"]
    assert [h.id for h in index.search("quokka sparse").hits] == ["2101.00001"]

    # A new version replaces the document: the old rare word goes, the new one is found.
    newer = dict(RECORDS[0], id="2101.00001v2", abstract="A wombat tuned sparse solver.")
    with written_with("DictionaryCodec"):
        summary = update_index([_jsonl(tmp_path / "b.jsonl", [newer])], index_dir)
    assert (summary.replaced, summary.documents) == (1, 2)
    index = open_index(index_dir)
    assert index.search("quokka").total == 0
    assert [h.id for h in index.search("wombat", facets=["category"]).hits] == ["2101.00001"]
    assert _term_info(index_dir, "abstract", "wombat").is_inlined()

    remove_documents(["2101.00001"], index_dir)  # (the segment left is written anew, of arrays)
    index = open_index(index_dir)
    assert index.search("wombat").total == 0
    assert [h.id for h in index.search("solver").hits] == ["2101.00002"]
    assert index.search("", category=["cs.DC"]).total == 0


def _raw_term_info(index_dir, field, text) -> bytes:
    from whoosh import index as whoosh_index

    with whoosh_index.open_dir(str(store.current_generation(index_dir))).reader() as reader:
        terms = reader._terms
        return terms._tindex[terms._keycoder(field, text.encode("utf-8"))]


def test_an_inlined_posting_is_pickled_without_memo_and_a_whole_weight_as_an_integer(tmp_path):
    import pickle

    from whoosh.codec.whoosh3 import W3TermInfo

    index_dir = tmp_path / "index"
    with written_with("DictionaryCodec"):
        build_index([_jsonl(tmp_path / "a.jsonl", RECORDS)], index_dir, jobs=1)
    raw = _raw_term_info(index_dir, "abstract", "quokka")
    header = W3TermInfo._struct.size
    ids, weights, values = pickle.loads(raw[header:])
    assert (ids, weights) == ((0,), (1,))
    assert type(weights[0]) is int
    # Protocol 3, no memo (13 bytes around the value); the value is the
    # count of positions, then their deltas as bare protocol-1 opcodes.
    assert raw[header : header + 2] == b"\x80\x03" and len(raw) - header == 13 + len(values[0])
    assert values == (b"\x00\x00\x00\x01]K\x01a",)  # "quokka" is the second word (position 1)
    # A title word weighs its title boost (2.0), also written as an integer.
    title = W3TermInfo.from_bytes(_raw_term_info(index_dir, "title", "graph"))
    assert title.is_inlined() and title.inlined_postings()[:2] == ((1,), (2,))


def test_a_segment_with_spelling_terms_gives_them_as_its_words_and_a_merge_moves_them_to_a_file(tmp_path):
    """A segment of an index written before the words files held each
    spelling word as a term of a ``spell_*`` field."""
    from whoosh import index as whoosh_index
    from whoosh.fields import ID, KEYWORD, TEXT, Schema

    from searchengine.engines.whoosh.codec import WORDS_EXT, segment_words
    from searchengine.engines.whoosh.writer import _segment_writer

    schema = Schema(id=ID(stored=True), abstract=TEXT(stored=True), spell_abstract=KEYWORD)
    ix = whoosh_index.create_in(str(tmp_path), schema)
    with ix.writer() as writer:
        writer.add_document(id="a", abstract="Sparse solvers", spell_abstract="sparse solvers")
        writer.add_document(id="b", abstract="Dense", spell_abstract="dense")
    with ix.reader() as reader:
        ((segment, _),) = reader.leaf_readers()
        assert segment_words(segment) == {"sparse", "solvers", "dense"}
    writer = _segment_writer(ix)
    writer.add_document(id="c", abstract="Quokka")  # no SpelledTEXT field: no words of its own
    writer.commit(optimize=True)
    with ix.reader() as reader:
        ((segment, _),) = reader.leaf_readers()
        assert list(reader.lexicon("spell_abstract")) == []  # the old postings were not copied
        assert segment.segment().make_filename(WORDS_EXT).endswith(".wrd")
        assert segment_words(segment) == {"sparse", "solvers", "dense"}
        assert sorted(reader.stored_fields(d)["id"] for d in range(3)) == ["a", "b", "c"]


def test_a_damaged_words_file_is_reported_as_a_damaged_index(tmp_path):
    import pytest
    from whoosh import index as whoosh_index
    from whoosh.filedb.compound import CompoundStorage
    from whoosh.filedb.filestore import FileStorage

    from searchengine.engines.whoosh.codec import WORDS_EXT
    from searchengine.engines.whoosh.columns import COLUMNS_FILE
    from searchengine.errors import IndexDamagedError

    index_dir = tmp_path / "index"
    build_index([_jsonl(tmp_path / "a.jsonl", RECORDS)], index_dir, jobs=1)
    generation = store.current_generation(index_dir)
    assert open_index(index_dir).search("sparce").suggestion == "sparse"
    with whoosh_index.open_dir(str(generation)).reader() as reader:
        segment = reader.segment()
    # Overwrite the words file inside the segment's compound file.
    (compound,) = generation.glob("*.seg")
    files = CompoundStorage(FileStorage(str(generation)).open_file(compound.name), use_mmap=False)
    offset, length = files.range(segment.make_filename(WORDS_EXT))
    files.close()
    with open(compound, "r+b") as handle:
        handle.seek(offset)
        handle.write(b"x" * length)
    (generation / COLUMNS_FILE).unlink()  # the columns are rebuilt from the segments
    integrity.write_checksums(generation)  # damage the checksums cannot see
    with pytest.raises(IndexDamagedError, match="spelling words are damaged.*rebuild"):
        open_index(index_dir).search("sparce", facets=["year"])


def _colliding_keys() -> tuple[bytes, bytes]:
    """Two different keys with the same CRC-32 (found by the birthday bound: ~80,000 tries)."""
    import hashlib
    import zlib

    seen: dict[int, bytes] = {}
    for n in range(1_000_000):  # random-looking keys: a CRC never confuses keys differing in a short run
        key = hashlib.sha256(b"%d" % n).hexdigest()[:16].encode()
        other = seen.setdefault(zlib.crc32(key), key)
        if other != key:
            return other, key
    raise AssertionError("no collision")


def test_the_term_table_finds_colliding_keys_and_reports_an_overwritten_entry(tmp_path):
    import pytest
    from whoosh.filedb.filestore import FileStorage
    from whoosh.filedb.filetables import OrderedHashReader, OrderedHashWriter
    from whoosh.reading import CorruptIndexError

    from searchengine.engines.whoosh.codec import CheckedTermTable

    first, second = _colliding_keys()
    keys = sorted({first, second, *(b"word%d" % n for n in range(500))})
    storage = FileStorage(str(tmp_path))
    writer = OrderedHashWriter(storage.create_file("t.hsh"))
    for key in keys:
        writer.add(key, b"value of " + key)
    writer.close()

    def table():
        reader = OrderedHashReader(storage.open_file("t.hsh"), storage.file_length("t.hsh"))
        reader.__class__ = CheckedTermTable
        return reader

    found = table()
    assert [found[key] for key in (first, second, b"word7")] == [
        b"value of " + first,
        b"value of " + second,
        b"value of word7",
    ]
    assert b"missing" not in found and b"word500" not in found
    # Junk over the entries: a lookup that reaches them says so.
    data = bytearray((tmp_path / "t.hsh").read_bytes())
    data[16 : found.endofdata] = b"\x07" * (found.endofdata - 16)
    (tmp_path / "t.hsh").write_bytes(bytes(data))
    with pytest.raises(CorruptIndexError, match="damaged"):
        table()[b"word7"]


def _column_bytes(values: dict[int, bytes], doccount: int) -> bytes:
    import io

    from whoosh.filedb.structfile import StructFile

    from searchengine.engines.whoosh.codec import DictionaryCompressedColumn

    buffer = io.BytesIO()
    writer = DictionaryCompressedColumn().writer(StructFile(buffer))
    for docnum in sorted(values):
        writer.add(docnum, values[docnum])
    writer.finish(doccount)
    return buffer.getvalue()


def _column_reader(data: bytes, doccount: int, prefix: bytes = b""):
    import io

    from whoosh.filedb.structfile import StructFile

    from searchengine.engines.whoosh.codec import DictionaryCompressedColumn

    return DictionaryCompressedColumn().reader(StructFile(io.BytesIO(prefix + data)), len(prefix), len(data), doccount)


import pytest  # noqa: E402


@pytest.mark.parametrize("count", [0, 1, 7, 99, 100, 101, 450])
def test_the_dictionary_column_gives_back_each_value_and_empty_bytes_for_documents_without_one(count):
    values = {docnum: (b"paper %d " % docnum) * (docnum % 5) + b"sparse solver" for docnum in range(0, 3 * count, 3)}
    values.update({docnum: b"" for docnum in range(1, 3 * count, 9)})  # stored, but empty
    doccount = 3 * count + 2
    reader = _column_reader(_column_bytes(values, doccount), doccount, prefix=b"x" * 13)
    assert len(reader) == doccount
    assert list(reader) == [values.get(docnum, b"") for docnum in range(doccount)]
    assert reader[doccount + 5] == b""


def test_the_dictionary_column_compresses_against_its_first_values():
    import pickle
    import zlib

    documents = [
        pickle.dumps(
            {
                "title": f"Sparse solvers for graph {n}",
                "url": f"https://arxiv.org/abs/2401.{n:05d}",
                "abstract": "We study sparse matrix vector products on GPUs and their solvers. " * 3,
            },
            2,
        )
        for n in range(2000)
    ]
    data = _column_bytes(dict(enumerate(documents)), len(documents))
    alone = sum(len(zlib.compress(d, 3)) for d in documents)  # Whoosh's own stored column: each deflated alone
    assert len(data) < alone / 2  # the 32 KiB dictionary included
    assert list(_column_reader(data, len(documents))) == documents


def test_a_damaged_dictionary_column_raises_what_the_engine_reports_as_damage():
    from searchengine.engines.whoosh.store import is_damage

    data = _column_bytes({n: b"value %d" % n for n in range(120)}, 120)
    for damaged in (data[:-3], data[:10], b"\0" * len(data)):
        with pytest.raises(Exception) as raised:
            list(_column_reader(damaged, 120))
        assert is_damage(raised.value)
    # A length zeroed (the document would read as having no stored fields) or changed.
    trailer = 16
    for docnum, value in ((119, b"\0\0\0\0"), (0, b"\x05\0\0\0")):
        changed = bytearray(data)
        at = len(changed) - trailer - 4 * (120 - docnum)
        changed[at : at + 4] = value
        with pytest.raises(Exception) as raised:
            list(_column_reader(bytes(changed), 120))
        assert is_damage(raised.value)
    garbled = bytearray(data)
    garbled[len(garbled) // 3 : len(garbled) // 3 + 40] = b"\xff" * 40  # in the compressed values
    with pytest.raises(Exception) as raised:
        list(_column_reader(bytes(garbled), 120))
    assert is_damage(raised.value)


@pytest.mark.parametrize("old", ["CompactCodec", "DictionaryCodec"])
def test_new_segments_use_the_array_codec_and_old_segments_still_read(tmp_path, old):
    from whoosh import index as whoosh_index

    records = [dict(RECORDS[n % 2], id=f"2101.{n:05d}v1", title=f"Sparse paper {n}") for n in range(150)]
    index_dir = tmp_path / "index"
    with written_with(old):  # an index written before the array codec
        build_index([_jsonl(tmp_path / "a.jsonl", records[:120])], index_dir, jobs=1)
    update_index([_jsonl(tmp_path / "b.jsonl", records[120:])], index_dir)
    with whoosh_index.open_dir(str(store.current_generation(index_dir))).reader() as reader:
        kinds = sorted(type(sub.codec()).__name__ for sub, _ in reader.leaf_readers())
        stored = {fields["id"]: fields["title"] for _, fields in reader.iter_docs()}
    assert kinds == ["ArrayCodec", old]
    assert stored == {r["id"][:-2]: r["title"] for r in records}
    index = open_index(index_dir)
    assert [h.title for h in index.search("id:2101.00130").hits] == ["Sparse paper 130"]
    assert [h.title for h in index.search("id:2101.00007").hits] == ["Sparse paper 7"]
    assert index.search("sparse", limit=1).total == 150


@pytest.mark.parametrize(
    "values", [(), (b"",), (b"ab", b"", b"c" * 255), (b"x" * 256, b"y"), tuple(b"%d" % n for n in range(128))]
)
def test_packed_block_values_read_back_as_written(values):
    from searchengine.engines.whoosh.codec import PackedPostingsWriter, unpack_values

    writer = PackedPostingsWriter.__new__(PackedPostingsWriter)
    writer._format, writer._values = _variable_format(), list(values)
    packed = writer._mini_values()
    assert packed[2] == (4 if any(len(v) > 255 for v in values) else 1)
    assert unpack_values(packed) == values


def _variable_format():
    from whoosh.formats import Positions

    return Positions()


def test_packed_block_values_that_do_not_add_up_are_damage():
    from searchengine.engines.whoosh.codec import unpack_values
    from searchengine.engines.whoosh.store import is_damage

    for damaged in [
        (b"abcdef", bytes([2, 2]), 1),
        (b"ab", b"\x02\0\0", 4),
        (b"ab", bytes([2]), 3),
        (b"ab", [2], 1),
        ("ab", bytes([2]), 1),
        (b"ab", bytes([2])),
        ["ab"],
    ]:
        with pytest.raises(Exception) as raised:
            unpack_values(damaged)
        assert is_damage(raised.value), damaged


def test_positions_of_packed_blocks_read_back_through_whoosh_and_phrases(tmp_path):
    from whoosh import index as whoosh_index

    from searchengine.engines.whoosh.codec import PackedLeafMatcher

    # 300 papers: "sparse" everywhere (several blocks), 200 times in paper 7 (a value over 255 bytes).
    records = [
        dict(
            RECORDS[0],
            id=f"2101.{n:05d}v1",
            title=f"Paper {n}",
            abstract=("sparse solver " * (200 if n == 7 else 1 + n % 3)) + "graphs",
        )
        for n in range(300)
    ]
    index_dir = tmp_path / "index"
    with written_with("DictionaryCodec"):
        build_index([_jsonl(tmp_path / "a.jsonl", records)], index_dir, jobs=1)
    with whoosh_index.open_dir(str(store.current_generation(index_dir))).reader() as reader:
        matcher = reader.postings("abstract", "spars")
        assert isinstance(matcher, PackedLeafMatcher)
        found = {}
        while matcher.is_active():
            found[reader.stored_fields(matcher.id())["id"]] = matcher.value_as("positions")
            matcher.next()
    expected = {r["id"][:-2]: [2 * i for i in range(200 if n == 7 else 1 + n % 3)] for n, r in enumerate(records)}
    assert found == expected
    index = open_index(index_dir)
    assert index.search('"solver graphs"').total == 300
    assert [h.id for h in index.search("sparse solver", limit=1).hits] == ["2101.00007"]
