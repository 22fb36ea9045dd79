"""Each segment keeps its titles and abstracts in a text store apart from the
other stored fields: records read back whole, and quoted phrases checked
against it find the same hits with the same scores as a check of the stored
records, through builds, updates, merges and older segments without one."""

import json

import pytest

from searchengine import build_index, open_index, remove_documents, update_index
from searchengine.engines.whoosh import store, textstore

from conftest import write

RECORDS = [
    {
        "id": "2101.00001",
        "title": "Large language models for sparse solvers",
        "abstract": "We tune large language models. A language model is small; models of language are not.",
        "authors": ["Ada Lovelace"],
        "categories": ["cs.CL"],
        "year": 2021,
    },
    {
        "id": "2101.00002",
        "title": "Modelling language",
        "abstract": "Language modelling with a large language model on GPUs.",
        "authors": ["Alan Turing"],
        "categories": ["cs.CL"],
        "year": 2022,
    },
    {
        "id": "2101.00003",
        "title": "Schrödinger bridges",
        "abstract": "The Schrödinger bridge problem; language, then models.",
        "authors": ["Emmy Noether"],
        "categories": ["math.PR"],
        "year": 2023,
    },
    {
        "id": "2101.00004",
        "title": "Language-models as judges",
        "abstract": "LANGUAGE MODELS judge language models' answers.",
        "authors": ["Grace Hopper"],
        "categories": ["cs.AI"],
        "year": 2024,
    },
]
PHRASES = [
    '"language models"',
    '"large language model"',
    '"language model"',
    'title:"language models"',
    '"schrodinger bridge"',
    '"Schrödinger bridges"',
    '"language modelling"',
    '"models"',
]


def _jsonl(path, records):
    return write(path, "".join(json.dumps(r) + "\n" for r in records))


def _answers(index_dir) -> dict:
    index = open_index(index_dir)
    return {q: [(hit.id, round(hit.score, 9)) for hit in index.search(q, limit=10).hits] for q in PHRASES}


def _segments(index_dir):
    from whoosh import index as whoosh_index

    ix = whoosh_index.open_dir(str(store.current_generation(index_dir)))
    return ix, ix.reader()


def test_a_built_segment_keeps_titles_and_abstracts_apart_and_gives_records_back_whole(tmp_path):
    from searchengine.engines.whoosh.codec import _stored_column

    index_dir = tmp_path / "index"
    build_index([_jsonl(tmp_path / "a.jsonl", RECORDS)], index_dir, jobs=1)
    ix, reader = _segments(index_dir)
    with reader:
        ((segment, _),) = reader.leaf_readers()
        text = textstore.segment_text_store(segment)
        assert text.fieldnames == ["title", "abstract"] and not text.holds("authors")
        by_id = {segment.stored_fields(doc)["id"]: doc for doc in range(segment.doc_count_all())}
        assert text.get("title", by_id["2101.00003"]) == "Schrödinger bridges"
        assert text.get("abstract", by_id["2101.00004"]) == "LANGUAGE MODELS judge language models' answers."
        record = segment.stored_fields(by_id["2101.00001"])
        assert (record["title"], record["abstract"], record["authors"]) == (
            RECORDS[0]["title"],
            RECORDS[0]["abstract"],
            ["Ada Lovelace"],
        )
        # The stored record itself no longer holds them.
        pickled = segment._perdoc._cached_reader("_stored", _stored_column())[by_id["2101.00001"]]
        assert "title" not in pickled and "abstract" not in pickled and pickled["id"] == "2101.00001"
    index = open_index(index_dir)
    assert index.record("2101.00003").title == "Schrödinger bridges"


def test_phrases_read_from_the_text_store_match_and_score_as_from_the_stored_records(tmp_path, monkeypatch):
    index_dir = tmp_path / "index"
    build_index([_jsonl(tmp_path / "a.jsonl", RECORDS)], index_dir, jobs=1)
    found = _answers(index_dir)
    assert [hit for hit, _ in found['"language models"']] == ["2101.00001", "2101.00004"]
    assert [hit for hit, _ in found['"language model"']] == ["2101.00001", "2101.00002"]
    assert [hit for hit, _ in found['"large language model"']] == ["2101.00002"]
    assert [hit for hit, _ in found['title:"language models"']] == ["2101.00004", "2101.00001"]
    assert [hit for hit, _ in found['"schrodinger bridge"']] == ["2101.00003"]
    assert [hit for hit, _ in found['"language modelling"']] == ["2101.00002"]
    monkeypatch.setattr("searchengine.engines.whoosh.queries.segment_text_store", lambda reader: None)
    assert _answers(index_dir) == found


def test_an_update_and_a_removal_keep_the_text_store_in_line_with_the_documents(tmp_path):
    index_dir = tmp_path / "index"
    build_index([_jsonl(tmp_path / "a.jsonl", RECORDS)], index_dir, jobs=1)
    changed = dict(RECORDS[0], abstract="Nothing about those any more.", title="Sparse solvers")
    update_index([_jsonl(tmp_path / "b.jsonl", [changed])], index_dir, jobs=1)
    index = open_index(index_dir)
    assert [hit.id for hit in index.search('"language models"').hits] == ["2101.00004"]
    assert [hit.id for hit in index.search('"sparse solvers"').hits] == ["2101.00001"]
    remove_documents(["2101.00004"], index_dir)
    index = open_index(index_dir)
    assert index.search('"language models"').total == 0
    assert [hit.id for hit in index.search('"large language model"').hits] == ["2101.00002"]
    ix, reader = _segments(index_dir)
    with reader:
        titles = []
        for segment, _ in reader.leaf_readers():
            assert textstore.segment_text_store(segment).documents == segment.doc_count_all()
            titles += [
                segment.stored_fields(doc)["title"]
                for doc in range(segment.doc_count_all())
                if not segment.is_deleted(doc)
            ]
    assert sorted(titles) == ["Modelling language", "Schrödinger bridges", "Sparse solvers"]


def test_a_segment_written_without_a_text_store_reads_as_before_and_a_merge_gives_it_one(tmp_path, monkeypatch):
    from searchengine.engines.whoosh import codec

    index_dir = tmp_path / "index"
    with monkeypatch.context() as patched:  # a segment as written before there were text stores
        patched.setattr(codec._DictionaryPerDocWriter, "add_field", codec.W3PerDocWriter.add_field)
        patched.setattr(textstore.TextStoreWriter, "write", lambda self, segment, storage: None)
        build_index([_jsonl(tmp_path / "a.jsonl", RECORDS)], index_dir, jobs=1)
    ix, reader = _segments(index_dir)
    with reader:
        assert [textstore.segment_text_store(s) for s, _ in reader.leaf_readers()] == [None]
        assert reader.stored_fields(0)["title"] == RECORDS[0]["title"]
    found = _answers(index_dir)
    assert [hit for hit, _ in found['"language models"']] == ["2101.00001", "2101.00004"]
    extra = {
        "id": "2101.00005",
        "title": "Small language models",
        "abstract": "Language models, small.",
        "authors": ["Ada Lovelace"],
        "categories": ["cs.CL"],
        "year": 2025,
    }
    # Three of the segment's four documents replaced: it is merged into the new one.
    replaced = [dict(record, title=record["title"] + " revisited") for record in RECORDS[1:]]
    update_index([_jsonl(tmp_path / "b.jsonl", [*replaced, extra])], index_dir, jobs=1)
    ix, reader = _segments(index_dir)
    with reader:
        ((segment, _),) = reader.leaf_readers()
        text = textstore.segment_text_store(segment)
        titles = {segment.stored_fields(doc)["id"]: text.get("title", doc) for doc in range(text.documents)}
    assert titles == {
        "2101.00001": "Large language models for sparse solvers",
        "2101.00002": "Modelling language revisited",
        "2101.00003": "Schrödinger bridges revisited",
        "2101.00004": "Language-models as judges revisited",
        "2101.00005": "Small language models",
    }
    index = open_index(index_dir)
    assert sorted(hit.id for hit in index.search('"language models"').hits) == [
        "2101.00001",
        "2101.00004",
        "2101.00005",
    ]


def test_a_damaged_text_store_is_reported_as_a_damaged_index(tmp_path):
    from whoosh.filedb.compound import CompoundStorage
    from whoosh.filedb.filestore import FileStorage

    from searchengine.engines.whoosh import integrity
    from searchengine.errors import IndexDamagedError

    index_dir = tmp_path / "index"
    build_index([_jsonl(tmp_path / "a.jsonl", RECORDS)], index_dir, jobs=1)
    generation = store.current_generation(index_dir)
    ix, reader = _segments(index_dir)
    with reader:
        segment = reader.segment()
    (compound,) = generation.glob("*.seg")
    files = CompoundStorage(FileStorage(str(generation)).open_file(compound.name), use_mmap=False)
    offset, length = files.range(segment.make_filename(textstore.EXTENSION))
    files.close()
    with open(compound, "r+b") as handle:
        handle.seek(offset)
        handle.write(b"x" * 16)  # the first block's deflate header
    integrity.write_checksums(generation)  # damage the checksums cannot see
    with pytest.raises(IndexDamagedError, match="rebuild"):
        open_index(index_dir).search('"language models"')


@pytest.mark.parametrize("length", [0, 10, 25])
def test_a_cut_text_store_is_damage_and_an_absent_field_reads_as_none(length):
    from whoosh.reading import CorruptIndexError

    writer = textstore.TextStoreWriter(["title", "abstract"])
    for number in range(20):
        writer.add([f"Title {number}", f"abstract {number}\x00" if number != 5 else None])

    class Segment:
        def create_file(self, storage, ext):
            return storage

    class Sink:
        def __init__(self):
            self.data = b""

        def write(self, data):
            self.data += data

        def close(self):
            pass

    sink = Sink()
    writer.write(Segment(), sink)
    text = textstore.TextStore(sink.data)
    assert (text.documents, text.get("abstract", 17), text.get("title", 3)) == (20, "abstract 17 ", "Title 3")
    assert (text.get("abstract", 5), text.get("title", 5)) == (None, "Title 5")
    with pytest.raises(CorruptIndexError):
        textstore.TextStore(sink.data[length:] if length else sink.data[:-3])


def test_any_damaged_byte_reads_back_or_raises_what_the_engine_reports_as_damage():
    import random

    from searchengine.engines.whoosh.store import is_damage

    writer = textstore.TextStoreWriter(["title", "abstract"])
    for number in range(40):
        writer.add([f"Title {number}", f"An abstract of paper {number} about sparse solvers. " * 20])

    class Sink:
        data = b""

        def create_file(self, storage, ext):
            return self

        def write(self, data):
            self.data += data

        def close(self):
            pass

    sink = Sink()
    writer.write(sink, None)
    generator = random.Random(5)
    outcomes = {"read": 0, "damage": 0}
    for _ in range(300):
        data = bytearray(sink.data)
        data[generator.randrange(len(data))] ^= 1 << generator.randrange(8)
        try:
            text = textstore.TextStore(bytes(data))
            for doc in range(text.documents):
                [text.get(name, doc) for name in text.fieldnames]
            outcomes["read"] += 1
        except Exception as error:  # noqa: BLE001 - what is raised is the point
            assert is_damage(error), repr(error)
            outcomes["damage"] += 1
    assert outcomes["damage"] > 200 and outcomes["read"] + outcomes["damage"] == 300
