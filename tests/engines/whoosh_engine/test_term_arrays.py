"""Each segment written with blocks of postings (DictionaryCodec, the
segments of indexes built before every term's postings were arrays) keeps
its common terms' postings whole as arrays (.tfa): they read back exactly
as the blocks do (documents, weights, positions), searches answer the same
with and without them, through updates, removals, merges (into segments
of the current codec) and older segments without the file, and damage is
reported."""

import random
from contextlib import contextmanager

import pytest

from searchengine import build_index, open_index, remove_documents, update_index
from searchengine.engines.whoosh import blocks, store, termarrays
from searchengine.engines.whoosh.store import is_damage

from conftest import write
from synthetic import listing_lines, listing_record

QUERIES = [
    "language models",
    '"language models"',
    "sparse matrix GPU",
    "title:attention",
    "robot -video",
    '"neural network" training',
    "reinforcement learning agents",
    "quantum circuits qubit",
]


@contextmanager
def written_with(codec_name: str):
    """New segments written meanwhile name ``codec_name`` (a class of the codec module)."""
    from searchengine.engines.whoosh import arraypostings, codec, writer

    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(arraypostings, "ArrayCodec", getattr(codec, codec_name))
        patched.setattr(writer, "_WRITER_CLASSES", {})  # the writer classes are made anew with it
        yield


def _build(tmp_path, count=600, name="index"):
    """An index of ``count`` synthetic records, one segment of blocks and term arrays."""
    index_dir = tmp_path / name
    with written_with("DictionaryCodec"):
        build_index([write(tmp_path / f"{name}.jsonl", "".join(listing_lines(count)))], index_dir, jobs=1)
    return index_dir


def _answers(index_dir) -> dict:
    index = open_index(index_dir)
    try:
        return {q: [(hit.id, hit.score, hit.snippet) for hit in index.search(q, limit=20).hits] for q in QUERIES}
    finally:
        index.close()


def _leaves(index_dir):
    from whoosh import index as whoosh_index

    return whoosh_index.open_dir(str(store.current_generation(index_dir))).reader()


def _from_blocks(segment, fieldname, btext):
    """``(ids, weights, positions)`` of a term as Whoosh's own matcher reads them."""
    matcher = segment.postings(fieldname, btext)
    ids, weights, positions = [], [], []
    while matcher.is_active():
        ids.append(matcher.id())
        weights.append(matcher.weight())
        positions.append(set(matcher.value_as("positions")) if matcher.supports("positions") else None)
        matcher.next()
    return ids, weights, positions


def test_common_terms_read_back_as_their_blocks_give_them(tmp_path):
    index_dir = _build(tmp_path)
    with _leaves(index_dir) as reader:
        ((segment, _),) = reader.leaf_readers()
        arrays = blocks.internals.terms_reader(segment).term_arrays()
        checked = 0
        for fieldname in ("title", "abstract", "authors", "categories"):
            for btext in segment.lexicon(fieldname):
                kept = arrays.postings(fieldname, btext)
                frequency = segment.doc_frequency(fieldname, btext)
                assert (kept is not None) == (frequency >= termarrays.MIN_POSTINGS), (fieldname, btext)
                if kept is None:
                    continue
                ids, weights, positions = _from_blocks(segment, fieldname, btext)
                assert list(kept.ids) == ids and [float(w) for w in kept.weights] == weights
                if segment.schema[fieldname].format.supports("positions"):
                    assert [kept.positions(i) for i in range(len(ids))] == positions
                checked += 1
        assert checked >= 40  # the synthetic text repeats its words: many common terms
        # Each field's lists end where the next field's begin: every byte of the lists read once.
        tables = [arrays._table(name)[1] for name in arrays._places]
        assert sum(t.starts[-1] - t.starts[0] for t in tables) == min(start for _, start in arrays._places.values())
        assert arrays.postings("abstract", b"no-such-term") is None


def test_searches_answer_the_same_from_the_arrays_as_from_the_blocks(tmp_path, monkeypatch):
    index_dir = _build(tmp_path)
    with_arrays = _answers(index_dir)
    assert all(with_arrays[q] for q in QUERIES)
    with monkeypatch.context() as patched:
        patched.setattr(blocks, "term_arrays", lambda *args: None)
        patched.setattr("searchengine.engines.whoosh.proximity.term_arrays", lambda *args: None)
        assert _answers(index_dir) == with_arrays


def test_updates_removals_and_merges_keep_the_arrays_in_line(tmp_path, monkeypatch):
    index_dir = _build(tmp_path, 400)
    changed = [
        dict(listing_record(n), summary="Language models on a robot, sparse matrix kernels.") for n in range(0, 60)
    ]
    import json

    update_index([write(tmp_path / "b.jsonl", "".join(json.dumps(r) + "\n" for r in changed))], index_dir, jobs=1)
    remove_documents([listing_record(n)["id"] for n in range(100, 130)], index_dir)
    answers = _answers(index_dir)
    index = open_index(index_dir)
    assert index.search("robot", limit=1).total >= 60
    assert index.search(f"id:{listing_record(100)['id']}").total == 0
    index.close()
    with monkeypatch.context() as patched:
        patched.setattr(blocks, "term_arrays", lambda *args: None)
        patched.setattr("searchengine.engines.whoosh.proximity.term_arrays", lambda *args: None)
        assert _answers(index_dir) == answers


def test_a_segment_written_without_the_file_reads_from_its_blocks(tmp_path, monkeypatch):
    from searchengine.engines.whoosh import codec

    with monkeypatch.context() as patched:  # a segment as written before there were term arrays
        patched.setattr(
            codec.DictionaryCodec,
            "field_writer",
            lambda self, storage, segment: codec.CompactFieldWriter(self, storage, segment),
        )
        old = _build(tmp_path, 300, "old")
    new = _build(tmp_path, 300, "new")
    for index_dir, kept in ((old, False), (new, True)):
        with _leaves(index_dir) as reader:
            ((segment, _),) = reader.leaf_readers()
            name = segment.segment().make_filename(termarrays.EXTENSION)
            assert blocks.internals.segment_storage(segment).file_exists(name) is kept
            assert (blocks.term_arrays(segment, "abstract", "model") is not None) is kept
    assert _answers(old) == _answers(new)


def test_a_damaged_file_is_reported_as_a_damaged_index(tmp_path):
    from whoosh.filedb.compound import CompoundStorage
    from whoosh.filedb.filestore import FileStorage

    from searchengine.engines.whoosh import integrity
    from searchengine.errors import IndexDamagedError

    index_dir = _build(tmp_path, 300)
    generation = store.current_generation(index_dir)
    with _leaves(index_dir) as reader:
        name = reader.segment().make_filename(termarrays.EXTENSION)
    (compound,) = generation.glob("*.seg")
    files = CompoundStorage(FileStorage(str(generation)).open_file(compound.name), use_mmap=False)
    offset, length = files.range(name)
    files.close()
    with open(compound, "r+b") as handle:
        handle.seek(offset + length - 16)
        handle.write(b"x" * 16)  # the trailer
    integrity.write_checksums(generation)  # damage the checksums cannot see
    with pytest.raises(IndexDamagedError, match="rebuild"):
        open_index(index_dir).search("language models")


class _Sink:
    def __init__(self):
        self.data = b""

    def write(self, data):
        self.data += data

    def close(self):
        pass

    def get(self, position, size):
        return self.data[position : position + size]


def _written(terms) -> bytes:
    from searchengine.engines.whoosh.codec import CompactPositions

    format_ = CompactPositions()
    sink = _Sink()
    writer = termarrays.TermArraysWriter(sink)
    writer.start_field("abstract", format_)
    for btext, ids, weights, positions in terms:
        writer.add_term(btext, ids, weights, [format_.encode(p) for p in positions])
    writer.close()
    return sink.data


def test_gaps_of_255_and_more_and_any_weights_read_back():
    ids = list(range(0, 3 * termarrays.MIN_POSTINGS, 3))
    positions = [[n % 7, 300 + n, 300 + n + 255, 70_000 + n] if n % 5 == 0 else [n % 250] for n in range(len(ids))]
    weights = [float(len(p)) * 1.5 for p in positions]
    data = _written(
        [
            (b"alpha", ids, weights, positions),
            (b"beta", ids, [1.0] * len(ids), [[0]] * len(ids)),
            (b"rare", ids[:5], [1.0] * 5, [[1]] * 5),
        ]
    )
    sink = _Sink()
    sink.data = data
    arrays = termarrays.TermArrays(sink, len(data), 10_000)
    alpha = arrays.postings("abstract", b"alpha")
    assert list(alpha.ids) == ids and list(alpha.weights) == weights
    assert [alpha.positions(i) for i in range(len(ids))] == [set(p) for p in positions]
    beta = arrays.postings("abstract", b"beta")
    assert list(beta.weights) == [1] * len(ids) and beta.positions(3) == {0}
    assert arrays.postings("abstract", b"rare") is None and arrays.postings("title", b"alpha") is None


def test_protocol_2_positions_of_older_segments_are_taken_as_well():
    from whoosh.formats import Positions

    old = Positions()
    assert termarrays.position_gaps(old.encode([3, 9, 400]), old.decode_positions) == bytes([3, 6, 255, 135, 1, 0])
    assert termarrays.positions_from_gaps(bytes([3, 6, 255, 135, 1, 0])) == {3, 9, 400}


def test_any_damaged_byte_reads_back_or_raises_what_the_engine_reports_as_damage():
    ids = list(range(0, 2 * termarrays.MIN_POSTINGS, 2))
    data = _written(
        [
            (b"alpha", ids, [2.0] * len(ids), [[1, 5]] * len(ids)),
            (b"gamma", ids, [1.0] * len(ids), [[n % 300] for n in range(len(ids))]),
        ]
    )
    generator = random.Random(7)
    outcomes = {"read": 0, "damage": 0}
    for _ in range(300):
        damaged = bytearray(data)
        damaged[generator.randrange(len(damaged))] ^= 1 << generator.randrange(8)
        sink = _Sink()
        sink.data = bytes(damaged)
        try:
            arrays = termarrays.TermArrays(sink, len(damaged), 1_000)
            for term in (b"alpha", b"gamma"):
                found = arrays.postings("abstract", term)
                if found is not None:
                    [found.positions(i) for i in range(len(found))]
            outcomes["read"] += 1
        except Exception as error:  # noqa: BLE001 - what is raised is the point
            assert is_damage(error), repr(error)
            outcomes["damage"] += 1
    assert outcomes["damage"] > 100 and outcomes["read"] > 0


def test_phrases_of_common_words_checked_over_whole_tables_find_what_a_check_per_document_finds(tmp_path, monkeypatch):
    import numpy  # noqa: F401 - the tables are checked with numpy once it is loaded
    from whoosh import searching

    from searchengine.engines.whoosh import proximity

    index_dir = _build(tmp_path)
    with _leaves(index_dir) as reader:
        ((segment, _),) = reader.leaf_readers()
        searcher = searching.Searcher(reader)
        common = sorted(
            (t.decode() for t in segment.lexicon("abstract")), key=lambda t: -segment.doc_frequency("abstract", t)
        )[:10]
        assert segment.doc_frequency("abstract", common[-1]) >= termarrays.MIN_POSTINGS
        phrases = [[a, b] for a in common for b in common] + [common[:3], [common[0]] * 3]
        monkeypatch.setattr(proximity, "TABLE_CANDIDATES", 0)
        at_once, found_any = {}, 0
        for words in phrases:
            at_once[tuple(words)] = proximity._phrase_matches(searcher, segment, "abstract", words, None)
            found_any += len(at_once[tuple(words)][0][0]) > 0
        monkeypatch.setattr(proximity, "_phrase_docs_at_once", lambda *args: None)
        for words in phrases:
            assert proximity._phrase_matches(searcher, segment, "abstract", words, None) == at_once[tuple(words)]
        assert found_any >= 5


def test_a_check_reads_every_list_and_names_a_damaged_one(tmp_path):
    from whoosh.filedb.compound import CompoundStorage
    from whoosh.filedb.filestore import FileStorage

    from searchengine.engines import check_index
    from searchengine.engines.whoosh import checking, integrity

    index_dir = _build(tmp_path, 300)
    with _leaves(index_dir) as reader:
        read = checking._read_term_arrays(reader)
        common = sum(
            1
            for name in reader.indexed_field_names()
            for t in reader.lexicon(name)
            if reader.doc_frequency(name, t) >= termarrays.MIN_POSTINGS
        )
        name = reader.segment().make_filename(termarrays.EXTENSION)
    assert read == common > 10
    assert check_index(index_dir).problem is None
    generation = store.current_generation(index_dir)
    (compound,) = generation.glob("*.seg")
    files = CompoundStorage(FileStorage(str(generation)).open_file(compound.name), use_mmap=False)
    offset, _ = files.range(name)
    files.close()
    with open(compound, "r+b") as handle:
        handle.seek(offset + 40)
        handle.write(b"\x00" * 64)  # inside the first lists: no search need read them
    integrity.write_checksums(generation)  # damage the checksums cannot see
    found = check_index(index_dir)
    assert found.problem is not None and "cannot be read" in found.problem, found.problem


def _point_e_records():
    def record(number, title, summary):
        return {
            "id": f"2402.{number:05d}",
            "title": title,
            "authors": ["Ann Smith"],
            "categories": ["cs.CV"],
            "abs": f"https://arxiv.org/abs/2402.{number:05d}",
            "pdf": f"https://arxiv.org/pdf/2402.{number:05d}",
            "comment": None,
            "summary": summary,
        }

    records = [record(n, f"Shapes study {n}", f"A point cloud and a model of it, number w{n}.") for n in range(1, 301)]
    records += [record(n, f"Exact study {n}", f"The point model analysis, number w{n}.") for n in range(301, 311)]
    return records + [record(311, "Generating shapes", "We use Point-E as a model of shapes.")]


def test_a_position_held_twice_in_a_posting_does_not_make_a_phrase(tmp_path, monkeypatch):
    """``Point-E`` gives ``point`` twice at one position (the word, and its
    joined form ``pointe`` stemmed back): the whole-table phrase check keeps
    it once, as the per-document check's sets do."""
    import json

    import numpy as np

    from searchengine.engines.whoosh import proximity

    source = write(tmp_path / "p.jsonl", "".join(json.dumps(r) + "\n" for r in _point_e_records()))
    build_index([source], tmp_path / "index", jobs=1)
    expected = [f"2402.{n:05d}" for n in range(301, 311)]
    for candidates in (proximity.TABLE_CANDIDATES, 0):
        monkeypatch.setattr(proximity, "TABLE_CANDIDATES", candidates)
        index = open_index(tmp_path / "index")
        assert sorted(hit.id for hit in index.search("abstract:point-model", limit=20).hits) == expected
        index.close()
    with _leaves(tmp_path / "index") as reader:
        ((segment, _),) = reader.leaf_readers()
        point = blocks.term_arrays(segment, "abstract", "point")
        docs, positions = point.position_table(np)
        pairs = list(zip(docs.tolist(), positions.tolist()))
        assert pairs == [(doc, position) for i, doc in enumerate(point.ids) for position in sorted(point.positions(i))]


def test_a_key_or_type_code_damaged_into_another_is_damage_not_another_answer():
    from whoosh.reading import CorruptIndexError

    ids = list(range(0, 2 * termarrays.MIN_POSTINGS, 2))
    data = _written(
        [(b"alpha", ids, [2.0] * len(ids), [[1, 5]] * len(ids)), (b"gamma", ids, [1.0] * len(ids), [[3]] * len(ids))]
    )
    frequency = {b"alpha": len(ids), b"gamma": len(ids), b"alphz": 7}.__getitem__

    def arrays(damaged: bytes):
        sink = _Sink()
        sink.data = damaged
        return termarrays.TermArrays(sink, len(damaged), 1_000)

    assert len(arrays(data).postings("abstract", b"alpha", lambda f, t: frequency(t))) == len(ids)
    renamed = data.replace(b"alphagamma", b"alphzgamma")  # the keys are stored joined
    assert renamed != data
    with pytest.raises(CorruptIndexError, match="term table has 7"):
        arrays(renamed).postings("abstract", b"alphz", lambda f, t: frequency(t))
    codes = data.rindex(b'{"fields"') - 4  # alpha's two codes, then gamma's: "BB1B"
    assert data[codes : codes + 4] == b"BB1B"
    for damaged_codes in (b"1B1B", b"B-1B", b"BBBB"):
        damaged = data[:codes] + damaged_codes + data[codes + 4 :]
        with pytest.raises(CorruptIndexError):
            found = arrays(damaged)
            found.postings("abstract", b"alpha")
            found.postings("abstract", b"gamma")
