"""A searched generation is read through memory maps: the same bytes, postings
and hits as through ordinary reads, and its maps are closed with the index."""

import io
import os
import pickle
from array import array

import pytest

from searchengine import build_index, open_index
from searchengine.engines.whoosh import store

from conftest import CORPUS


@pytest.fixture(scope="module")
def corpus_index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mapped")
    build_index([CORPUS], folder, jobs=1)
    return folder


def _mapped(tmp_path, content: bytes):
    path = tmp_path / "file.bin"
    path.write_bytes(content)
    return store.mapped_file_class().open(str(path), name="file.bin")


def test_reads_seeks_and_lines_as_a_file_does(tmp_path):
    content = b"first line\nsecond\n" + bytes(range(40))
    mapped, plain = _mapped(tmp_path, content), io.BytesIO(content)
    for step in ("readline", 4, "readline", -1):
        if step == "readline":
            assert mapped.readline() == plain.readline()
        else:
            assert mapped.read(step) == plain.read(step)
        assert mapped.tell() == plain.tell()
    assert mapped.read(5) == b""  # at the end
    assert mapped.seek(-3, 2) == len(content) - 3
    assert mapped.read() == content[-3:]
    assert mapped.seek(2) == 2 and mapped.seek(3, 1) == 5
    assert mapped.read(4) == content[5:9]
    mapped.close()


def test_parts_are_views_bounded_to_their_range(tmp_path):
    content = b"0123456789" * 10
    mapped = _mapped(tmp_path, content)
    part = mapped.subset(20, 15, name="part")
    assert part.read() == content[20:35]
    assert part.get(10, 100) == content[30:35]  # never past its end
    assert part.seek(-5, 2) == 10 and part.read(1) == content[30:31]
    assert part.readline() == content[31:35]  # no newline: up to its end
    inner = part.subset(5, 5)
    assert inner.read() == content[25:30]
    part.close()
    assert mapped.read(3) == b"012"  # a part's close leaves the map open
    mapped.close()
    with pytest.raises(ValueError):
        mapped.read(1)


def test_arrays_numbers_and_pickles_read_as_whoosh_writes_them(tmp_path):
    from whoosh.filedb.structfile import StructFile

    buffer = io.BytesIO()
    written = StructFile(buffer)
    written.write_int(-7)
    written.write_array(array("I", [1, 2, 300000]))
    written.write_pickle({"block": (1, 2.5, [b"x" * 600])})  # longer than one peek
    written.write_pickle(("next", 3))
    mapped = _mapped(tmp_path, buffer.getvalue())
    assert mapped.read_int() == -7
    assert mapped.get_array(4, "I", 3) == array("I", [1, 2, 300000])
    assert mapped.read_array("I", 3) == array("I", [1, 2, 300000])
    assert mapped.read_pickle() == {"block": (1, 2.5, [b"x" * 600])}
    assert mapped.read_pickle() == ("next", 3)
    with pytest.raises(EOFError):
        pickle.load(mapped)
    mapped.close()


def test_a_searched_index_reads_its_segments_through_maps(corpus_index):
    index = open_index(corpus_index)
    try:
        hits = index.search("sparse matrix GPU", limit=5)
        assert hits.total > 0
        readers = index.engine.call(lambda searcher: searcher.searcher.reader()).leaf_readers()
        # Each segment's postings, a part of its compound file.
        assert {type(reader._terms._postfile).__name__ for reader, _ in readers} == {"MappedFile"}
    finally:
        index.close()
    unmapped = store.open_generation(store.current_generation(corpus_index))
    mapped = store.open_generation(store.current_generation(corpus_index), mapped=True)
    try:
        with unmapped.reader() as plain_reader, mapped.reader() as mapped_reader:
            assert list(mapped_reader.iter_postings()) == list(plain_reader.iter_postings())
            assert list(mapped_reader.iter_docs()) == list(plain_reader.iter_docs())
    finally:
        unmapped.close()
        mapped.close()


@pytest.mark.skipif(not os.path.isdir("/proc/self/map_files"), reason="needs Linux's /proc")
def test_closing_the_index_unmaps_its_files(corpus_index):
    generation = str(store.current_generation(corpus_index))

    def maps() -> int:
        with open("/proc/self/maps") as lines:
            return sum(generation in line for line in lines)

    before = maps()
    for _ in range(3):
        index = open_index(corpus_index)
        index.search("matrix")
        assert maps() > before
        index.close()
    assert maps() == before
