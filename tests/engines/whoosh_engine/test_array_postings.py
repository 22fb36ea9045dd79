"""Segments of the array codec keep every term's postings as arrays, with no
pickle: each term reads back through Whoosh's matcher interface exactly as
the blocks of the codec before give it (documents, weights, values,
positions), searches of every kind answer the same, a check reads them
without the unpickler, and damage is reported."""

from contextlib import contextmanager

import pytest

from searchengine import build_index, open_index
from searchengine.engines.whoosh import arraypostings, internals, store

from conftest import write
from synthetic import listing_lines

QUERIES = [
    "language models",
    '"language models"',
    '"neural network" training',
    "sparse matrix GPU",
    "title:attention",
    "robot -video",
    "lang*",
    "modle~1",
    "(sparse OR dense) attention",
    "reinforcement learning agents",
    "quantum circuits qubit",
]


@contextmanager
def written_with(codec_name: str):
    """New segments written meanwhile name ``codec_name`` (a class of the codec module)."""
    from searchengine.engines.whoosh import codec, writer

    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(arraypostings, "ArrayCodec", getattr(codec, codec_name))
        patched.setattr(writer, "_WRITER_CLASSES", {})  # the writer classes are made anew with it
        yield


@pytest.fixture(scope="module")
def two_builds(tmp_path_factory):
    """The same 700 synthetic records indexed with blocks (DictionaryCodec) and as arrays."""
    folder = tmp_path_factory.mktemp("array-postings")
    source = write(folder / "records.jsonl", "".join(listing_lines(700)))
    with written_with("DictionaryCodec"):
        build_index([source], folder / "blocks", jobs=1)
    build_index([source], folder / "arrays", jobs=1)
    return folder / "blocks", folder / "arrays"


def _leaves(index_dir):
    from whoosh import index as whoosh_index

    return whoosh_index.open_dir(str(store.current_generation(index_dir))).reader()


def _read(matcher, positions: bool):
    found = []
    while matcher.is_active():
        found.append(
            (
                matcher.id(),
                matcher.weight(),
                matcher.value() or b"",
                matcher.value_as("positions") if positions else None,
            )
        )
        matcher.next()
    return found


def test_every_term_reads_back_as_the_blocks_give_it(two_builds):
    blocks_dir, arrays_dir = two_builds
    with _leaves(blocks_dir) as old, _leaves(arrays_dir) as new:
        ((old_segment, _),) = old.leaf_readers()
        ((new_segment, _),) = new.leaf_readers()
        assert type(new_segment.codec()).__name__ == "ArrayCodec"
        assert internals.terms_reader(new_segment).pickle_free
        storage = internals.segment_storage(new_segment)
        assert not storage.file_exists(new_segment.segment().make_filename(".tfa"))
        assert list(old.all_terms()) == list(new.all_terms())
        lengths = {"short": 0, "long": 0}
        arrays = internals.terms_reader(new_segment).term_arrays()
        for fieldname, btext in new.all_terms():
            positions = new.schema[fieldname].format.supports("positions")
            assert _read(new.postings(fieldname, btext), positions) == _read(old.postings(fieldname, btext), positions)
            entry = arrays.entry(fieldname, btext)
            assert entry[0] == 0  # nothing inlined (pickled) in the term's entry
            lengths["short" if entry[9] < 0 else "long"] += 1
            assert new.doc_frequency(fieldname, btext) == old.doc_frequency(fieldname, btext)
            assert new.frequency(fieldname, btext) == old.frequency(fieldname, btext)
        assert lengths["short"] > 1000 and lengths["long"] > 20
        info = new.term_info("abstract", "model")
        assert (info.min_length(), info.max_length(), info.max_weight()) == (
            old.term_info("abstract", "model").min_length(),
            old.term_info("abstract", "model").max_length(),
            old.term_info("abstract", "model").max_weight(),
        )


def test_the_matcher_skips_copies_and_lists_as_whoosh_does(two_builds):
    _, arrays_dir = two_builds
    with _leaves(arrays_dir) as reader:
        matcher = reader.postings("abstract", "model")
        ids = list(matcher.all_ids())
        assert ids == sorted(ids) and len(ids) > 100
        matcher.skip_to(ids[50] - 1 if ids[50] - 1 > ids[49] else ids[50])
        assert matcher.id() == ids[50]
        copy = matcher.copy()
        matcher.next()
        assert (copy.id(), matcher.id()) == (ids[50], ids[51])
        assert list(copy.all_ids()) == ids[50:]
        matcher.skip_to(ids[-1] + 1)
        assert not matcher.is_active()
        assert [doc for doc, _ in reader.postings("abstract", "model").items_as("frequency")] == ids
        assert reader.postings("abstract", "model").supports("positions")
        assert not reader.postings("categories", next(iter(reader.lexicon("categories")))).supports("positions")


def test_searches_answer_the_same_as_from_blocks(two_builds):
    answers = []
    for index_dir in two_builds:
        index = open_index(index_dir)
        try:
            answers.append(
                {
                    q: [(hit.id, hit.score, hit.snippet) for hit in index.search(q, limit=20).hits]
                    + [index.search(q, sort="newest", limit=5).total]
                    for q in QUERIES
                }
            )
        finally:
            index.close()
    assert all(len(found) > 1 for found in answers[1].values())
    assert answers[0] == answers[1]


def test_a_check_reads_every_list_without_the_unpickler(two_builds, monkeypatch):
    from whoosh.codec import whoosh3

    from searchengine.engines import check_index
    from searchengine.engines.whoosh import checking, safepickle

    _, arrays_dir = two_builds
    safepickle.install()
    calls = []
    real = whoosh3.loads
    monkeypatch.setattr(whoosh3, "loads", lambda data: calls.append(1) or real(data))
    with _leaves(arrays_dir) as reader:
        assert checking._read_term_arrays(reader) == sum(1 for _ in reader.all_terms())
        assert checking._read_postings(reader) == 0
    assert check_index(arrays_dir).problem is None
    assert calls == []  # no block, header or inlined posting was unpickled


def _damaged_copy(index_dir, tmp_path, change):
    """A copy of ``index_dir`` whose compound file ``change(ranges by extension, handle)`` damaged."""
    import shutil

    from whoosh.filedb.compound import CompoundStorage
    from whoosh.filedb.filestore import FileStorage

    from searchengine.engines.whoosh import integrity

    copy = tmp_path / "copy"
    shutil.copytree(index_dir, copy)
    generation = store.current_generation(copy)
    (compound,) = generation.glob("*.seg")
    files = CompoundStorage(FileStorage(str(generation)).open_file(compound.name), use_mmap=False)
    ranges = {name.rsplit(".", 1)[1]: files.range(name) for name in files.list()}
    files.close()
    with open(compound, "r+b") as handle:
        change(ranges, handle)
    integrity.write_checksums(generation)  # damage the checksums cannot see
    return copy


def test_a_damaged_list_is_named_by_a_check(two_builds, tmp_path):
    from searchengine.engines import check_index

    def zeros(ranges, handle):
        offset, length = ranges["pst"]
        handle.seek(offset + length // 2)
        handle.write(b"\x00" * 64)

    found = check_index(_damaged_copy(two_builds[1], tmp_path, zeros))
    assert found.problem is not None and "cannot be read" in found.problem, found.problem


def test_a_term_entry_flagged_as_inlined_is_damage_not_a_pickle(two_builds, tmp_path):
    from searchengine.engines import check_index
    from searchengine.errors import IndexDamagedError

    with _leaves(two_builds[1]) as reader:
        terms = internals.terms_reader(reader.leaf_readers()[0][0])
        datapos, _ = terms._range_for_key("abstract", b"model")  # (a position in the term file)

    def flag(ranges, handle):
        offset, _ = ranges["trm"]
        handle.seek(offset + datapos)
        handle.write(b"\x01")

    copy = _damaged_copy(two_builds[1], tmp_path, flag)
    with pytest.raises(IndexDamagedError):
        open_index(copy).search("model")
    assert check_index(copy).problem is not None


def test_any_format_and_weight_writes_and_reads_back(tmp_path):
    from whoosh import fields
    from whoosh.filedb.filestore import RamStorage

    from searchengine.engines.whoosh.codec import CompactPositions

    schema = fields.Schema(
        key=fields.ID(stored=True),
        tags=fields.KEYWORD(),
        body=fields.TEXT(phrase=True),
        boosted=fields.TEXT(field_boost=1.5),
        year=fields.NUMERIC(int),
    )
    schema["body"].format = CompactPositions()
    text = ["alpha " + "beta " * (n % 300) + ("gap " + "x " * 300 + "alpha") * (n % 2) for n in range(400)]
    ix = RamStorage().create_index(schema)
    for codec in (arraypostings.ArrayCodec(), None):
        writer = ix.writer(codec=codec) if codec is not None else ix.writer()
        for n in range(400):
            writer.add_document(
                key=f"k{n}", tags=f"t{n % 3} t{n % 3} u{n}", body=text[n], boosted=f"w{n % 5} w{n % 5}", year=n
            )
        writer.commit(merge=False)
    with ix.reader() as reader:
        (new, _), (old, _) = reader.leaf_readers()
        assert type(new.codec()).__name__ == "ArrayCodec"
        for fieldname, btext in new.all_terms():
            positions = fieldname == "body"
            assert _read(new.postings(fieldname, btext), positions) == _read(old.postings(fieldname, btext), positions)
        assert new.postings("boosted", "w1").weight() == 3.0
        assert new.postings("tags", "t1").value_as("frequency") == 2
