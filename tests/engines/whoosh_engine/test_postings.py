"""The index's posting buffer writes exactly the postings Whoosh's own buffer writes."""

import pytest

from searchengine import build_index
from searchengine.engines.whoosh import postings, store
from searchengine.engines.whoosh import writer as indexer

from conftest import CORPUS


def _postings_and_stored(index_dir):
    from whoosh import index as whoosh_index

    reader = whoosh_index.open_dir(str(store.current_generation(index_dir))).reader()
    return list(reader.iter_postings()), list(reader.iter_docs())


@pytest.fixture(scope="module")
def whoosh_pool_index(tmp_path_factory):
    """The corpus indexed with Whoosh's own PostingPool, the reference."""
    from whoosh.writing import PostingPool

    folder = tmp_path_factory.mktemp("whoosh-pool")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            postings, "TermPostingPool", lambda tempstore, limitmb: PostingPool(tempstore, None, limitmb=limitmb)
        )
        patch.setattr(indexer, "_WRITER_CLASSES", {})
        build_index([CORPUS], folder, jobs=1)
    indexer._WRITER_CLASSES.clear()
    return _postings_and_stored(folder)


@pytest.mark.parametrize("limit_bytes", [None, 20_000])
def test_term_pool_writes_the_same_postings_as_whoosh(whoosh_pool_index, tmp_path, monkeypatch, limit_bytes):
    if limit_bytes is not None:
        # A tiny memory limit: the terms go through a dozen run files.
        original = postings.TermPostingPool.__init__

        def small(self, tempstore, limitmb=128):
            original(self, tempstore, limitmb)
            self.limit = limit_bytes

        monkeypatch.setattr(postings.TermPostingPool, "__init__", small)
    build_index([CORPUS], tmp_path, jobs=1)
    expected_postings, expected_stored = whoosh_pool_index
    actual_postings, actual_stored = _postings_and_stored(tmp_path)
    assert len(actual_postings) == len(expected_postings) > 3000
    assert actual_postings == expected_postings
    assert actual_stored == expected_stored


@pytest.mark.parametrize("max_open", [64, 2])
def test_term_pool_orders_each_term_by_document_and_spills_in_run_order(tmp_path, monkeypatch, max_open):
    from whoosh.filedb.filestore import FileStorage

    # With 2, the first two of the three runs are first merged into one.
    monkeypatch.setattr(postings, "MAX_OPEN_RUNS", max_open)
    pool = postings.TermPostingPool(FileStorage(str(tmp_path)).create(), limitmb=1)
    pool.limit = 200  # every few postings go to a run file
    added = [
        ("b", b"x", 0, 1.0, b"v0"),
        ("a", b"y", 1, 2.5, b""),
        ("b", b"x", 3, 1.0, b"v33"),
        ("a", b"y", 2, 1.0, None),
        ("b", b"w", 4, 1.0, b"w"),
        ("b", b"x", 2, 0.5, b"late"),
    ]
    for item in added:
        pool.add(item)
    assert len(pool.runs) == 3
    assert list(pool.iter_postings()) == [
        ("a", b"y", 1, 2.5, b""),
        ("a", b"y", 2, 1.0, b""),
        ("b", b"w", 4, 1.0, b"w"),
        ("b", b"x", 0, 1.0, b"v0"),
        ("b", b"x", 2, 0.5, b"late"),
        ("b", b"x", 3, 1.0, b"v33"),
    ]
    assert len(pool.runs) == min(3, max_open)
    pool.cleanup()
    assert pool.fieldnames == {"a", "b"} and list(tmp_path.iterdir()) == []
