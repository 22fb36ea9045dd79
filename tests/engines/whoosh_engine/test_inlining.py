"""Terms of one posting are written inside their term info, and are found like any other."""

import json

from searchengine import build_index, open_index, remove_documents, update_index
from searchengine.engines.whoosh import store

from conftest import write

RECORDS = [
    {"id": "2101.00001v1", "title": "Sparse solvers on GPUs", "abstract": "A quokka tuned sparse solver.",
     "authors": ["Ada Lovelace"], "categories": ["cs.DC"], "year": 2021},
    {"id": "2101.00002v1", "title": "Sparse graphs", "abstract": "Sparse graphs and their solver.",
     "authors": ["Alan Turing"], "categories": ["math.CO"], "year": 2022},
]


def _jsonl(path, records):
    return write(path, "".join(json.dumps(r) + "\n" for r in records))


def _term_info(index_dir, field, text):
    from whoosh import index as whoosh_index

    with whoosh_index.open_dir(str(store.current_generation(index_dir))).reader() as reader:
        return reader.term_info(field, text)


def test_a_term_of_one_posting_is_inlined_and_found_by_search_facets_update_and_remove(tmp_path):
    index_dir = tmp_path / "index"
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
    summary = update_index([_jsonl(tmp_path / "b.jsonl", [newer])], index_dir)
    assert (summary.replaced, summary.documents) == (1, 2)
    index = open_index(index_dir)
    assert index.search("quokka").total == 0
    assert [h.id for h in index.search("wombat", facets=["category"]).hits] == ["2101.00001"]
    assert _term_info(index_dir, "abstract", "wombat").is_inlined()

    remove_documents(["2101.00001"], index_dir)
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
    build_index([_jsonl(tmp_path / "a.jsonl", RECORDS)], index_dir, jobs=1)
    raw = _raw_term_info(index_dir, "abstract", "quokka")
    header = W3TermInfo._struct.size
    ids, weights, values = pickle.loads(raw[header:])
    assert (ids, weights) == ((0,), (1,))
    assert type(weights[0]) is int
    # Protocol 3, no memo (13 bytes around the value); the value is the
    # count of positions, then their deltas as bare protocol-1 opcodes.
    assert raw[header:header + 2] == b"\x80\x03" and len(raw) - header == 13 + len(values[0])
    assert values == (b"\x00\x00\x00\x01]K\x01a",)  # "quokka" is the second word (position 1)
    # A title word weighs its title boost (2.0), also written as an integer.
    title = W3TermInfo.from_bytes(_raw_term_info(index_dir, "title", "graph"))
    assert title.is_inlined() and title.inlined_postings()[:2] == ((1,), (2,))
