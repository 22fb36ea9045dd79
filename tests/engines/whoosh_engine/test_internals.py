"""The private names of Whoosh and NLTK the embedded engine relies on are all there."""

from searchengine.engines.whoosh import internals


def test_the_installed_whoosh_and_nltk_have_every_private_name_the_engine_uses():
    gone = internals.missing()
    assert gone == [], (
        "the installed Whoosh or NLTK lacks private names the embedded engine uses: "
        + ", ".join(gone)
        + " (see searchengine/engines/whoosh/internals.py; pin the tested releases)"
    )


def test_a_missing_name_is_reported_by_module_class_and_name(monkeypatch):
    from nltk.stem.porter import PorterStemmer

    monkeypatch.delattr(PorterStemmer, "_step1a")
    assert internals.missing() == ["nltk.stem.porter.PorterStemmer._step1a"]


import pytest  # noqa: E402


@pytest.mark.parametrize("chunk", [7, 64, 1 << 22])
def test_a_fields_terms_are_read_from_the_term_table_as_whoosh_lists_them(tmp_path, monkeypatch, chunk):
    from searchengine import build_index
    from searchengine.engines.whoosh import store

    from conftest import CORPUS

    build_index([CORPUS], tmp_path / "index", jobs=1)
    monkeypatch.setattr(internals, "_TERM_TABLE_CHUNK", chunk)  # keys cut by every chunk boundary
    index = store.open_generation(store.current_generation(tmp_path / "index"))
    with index.reader() as reader:
        [(segment, _)] = reader.leaf_readers()
        for fieldname in ("abstract", "authors", "categories", "id", "title", "year"):
            expected = list(segment.lexicon(fieldname))
            assert internals.field_terms(segment, fieldname) == expected
            assert len(expected) > 3
        assert internals.field_terms(segment, "no such field") == []
        assert b"spmv" in internals.field_terms(segment, "abstract")
