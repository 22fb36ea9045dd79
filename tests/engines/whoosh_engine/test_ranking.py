"""The fast scoring path gives exactly what Whoosh's matchers give."""

import pytest

from searchengine import build_index, open_index
from searchengine.engines.whoosh.blocks import posting_blocks
from searchengine.engines.whoosh.evaluate import score_documents
from searchengine.engines.whoosh.querying import parse
from searchengine.indexer import update_index

from conftest import CORPUS, corpus_records

QUERIES = [
    "GPU",
    "SpMV GPU",
    "GPU memory",
    "large language model",
    "fail slow",
    "GPU -memory",
    "gpu NOT memory",
    "gpu OR spmv",
    "title:gpu",
    "ti:gpu abs:memory",
    "(gpu OR spmv) memory",
    "sparse matrix vector multiplication on GPUs",
    "how do large language models use GPU memory for training and inference at scale",
    # Compounds: the joined word OR the parts as a phrase in each field.
    "state-of-the-art",
    "root-cause analysis",
    "CB-SpMV GPU",
    "test-time adaptation",
    "log-based -ChatGPT",
    "fine-grained OR two-level",
    "state-of-the-art transformers",
    # Quoted phrases: the stemmed phrase, then the words as written in the stored text.
    '"cache-friendly"',
    '"sparse matrix"',
    '"language model"',
    '"large language models" GPU',
    'title:"sparse matrix"',
    '"GPU" memory',
    '"sparse matrix" OR "language model"',
]


@pytest.fixture
def searcher(corpus_searcher):
    return corpus_searcher


@pytest.fixture(scope="module")
def updated(tmp_path_factory):
    """An index whose first segment holds deleted documents: five papers were replaced."""
    folder = tmp_path_factory.mktemp("ranking-updated")
    build_index([CORPUS], folder, jobs=1)
    replaced = tmp_path_factory.mktemp("replacements") / "replaced.jsonl"
    import json

    with replaced.open("w", encoding="utf-8") as out:
        for record in corpus_records()[:5]:
            out.write(
                json.dumps(
                    {
                        "id": record.id,
                        "title": record.title,
                        "authors": record.authors,
                        "abstract": record.abstract + " state-of-the-art GPU",
                    }
                )
                + "\n"
            )
    update_index([replaced], folder)
    index = open_index(folder)
    yield index.engine.current().searcher
    index.close()


def assert_fast_equals_whoosh(searcher, text):
    query = parse(text, searcher.schema).query
    fast = score_documents(query, searcher)
    assert fast is not None, "plain-word, compound and quoted-phrase queries take the fast path"
    slow = {hit.docnum: hit.score for hit in searcher.search(query, limit=None)}
    assert set(fast) == set(slow) and slow
    for docnum, score in slow.items():
        assert fast[docnum] == pytest.approx(score, rel=1e-9)


@pytest.mark.parametrize("text", QUERIES)
def test_fast_scores_equal_whoosh_scores(searcher, text):
    assert_fast_equals_whoosh(searcher, text)


@pytest.mark.parametrize("text", ["state-of-the-art", "GPU memory", "state-of-the-art GPU", "state-of-the-art -GPU"])
def test_fast_scores_skip_deleted_documents(updated, text):
    assert updated.reader().has_deletions()
    assert_fast_equals_whoosh(updated, text)


def test_posting_blocks_give_the_public_postings_without_deleted_documents(updated):
    reader = updated.reader()
    for fieldname, text in [("abstract", "gpu"), ("abstract", "state"), ("title", "spmv"), ("authors", "qian")]:
        for sub, _ in updated.subsearchers:
            segment = sub.reader()
            if (fieldname, text) not in segment:
                continue
            expected = list(segment.postings(fieldname, text).items_as("weight"))
            blocks = [
                (doc, weight)
                for ids, weights in posting_blocks(segment, fieldname, text)
                for doc, weight in zip(ids, weights)
            ]
            assert blocks == expected and not any(segment.is_deleted(doc) for doc, _ in blocks)
    assert reader.has_deletions()


def test_length_norms_read_in_one_piece_equal_per_document_lengths(searcher):
    from searchengine.engines.whoosh.bm25f import length_norms
    from searchengine.engines.whoosh.cache import generation_cache
    from searchengine.ranking import FIELD_B

    parts = [(searcher, 0)] if searcher.is_atomic() else searcher.subsearchers
    for sub, _ in parts:
        segment = sub.reader()
        generation_cache(segment).norms.clear()  # as a new process has them
        for fieldname in ("title", "abstract", "authors"):
            b, average = FIELD_B[fieldname], searcher.avg_field_length(fieldname)
            expected = [
                1 - b + b * (segment.doc_field_length(doc, fieldname) or 0) / average
                for doc in range(segment.doc_count_all())
            ]
            norms, docs = length_norms(sub, segment, fieldname), range(segment.doc_count_all())
            # Looked up one by one, then (past a quarter of the segment) from the whole list.
            assert [norms[doc] for doc in docs] == pytest.approx(expected, rel=1e-12)
            assert list(norms.of(docs[:3])) == pytest.approx(expected[:3], rel=1e-12)
            assert norms._norms is None
            assert list(norms.of(docs)) == pytest.approx(expected, rel=1e-12)
            assert norms._norms is not None
            assert [norms[doc] for doc in docs] == pytest.approx(expected, rel=1e-12)


def test_other_queries_are_left_to_whoosh(searcher):
    assert score_documents(parse("spars*", searcher.schema).query, searcher) is None


@pytest.mark.parametrize("text", ['"state of the art"', '"the performance of"', '"the state of"'])
def test_a_phrase_with_stop_words_scores_as_whoosh_scores_it(searcher, text):
    """Its words (stop words aside) in any order are the candidates; the
    text store keeps those with the words as written, in sequence."""
    query = parse(text, searcher.schema).query
    ours = score_documents(query, searcher)
    whoosh = {hit.docnum: hit.score for hit in searcher.search(query, limit=None)}
    assert ours and sorted(ours) == sorted(whoosh)
    assert [ours[doc] for doc in sorted(ours)] == pytest.approx([whoosh[doc] for doc in sorted(whoosh)], rel=1e-12)


def test_ranked_page_orders_by_score_then_newest_then_id(corpus_index):
    hits = corpus_index.search("GPU", limit=100).hits
    assert len(hits) == 12
    keys = [(-h.score, -(h.year or 0)) for h in hits]
    assert keys == sorted(keys)
    for first, second in zip(hits, hits[1:]):
        if (first.score, first.year) == (second.score, second.year):
            assert first.id > second.id


@pytest.mark.parametrize("few", [0, 10**9], ids=["whole-phrase-lists", "candidates-only"])
def test_phrases_in_conjunctions_score_alike_both_ways(corpus_index_dir, monkeypatch, few):
    import searchengine.engines.whoosh.proximity as proximity

    monkeypatch.setattr(proximity, "FEW_CANDIDATES", few)
    index = open_index(corpus_index_dir)  # a new reader: nothing cached yet
    try:
        for text in ["CB-SpMV GPU", "state-of-the-art transformers", "log-based anomaly detection"]:
            assert_fast_equals_whoosh(index.engine.current().searcher, text)
    finally:
        index.close()


def test_warm_up_reads_the_most_frequent_words_and_changes_no_result(corpus_index_dir):
    from searchengine.engines.whoosh.cache import generation_cache

    cold, warm = open_index(corpus_index_dir), open_index(corpus_index_dir)
    try:
        warm.warm_up()
        reader = warm.engine.current().searcher.reader()
        top = [text for _, text in reader.most_frequent_terms("abstract", number=3)]
        cached = {
            term
            for key in generation_cache(reader).postings.entries
            if key and isinstance(key[0], tuple)
            for term in key
        }
        assert {("abstract", text.decode()) for text in top} <= cached
        for text in ["model", "large language models", "GPU memory"]:
            expected = [(h.id, h.score) for h in cold.search(text, limit=20).hits]
            assert [(h.id, h.score) for h in warm.search(text, limit=20).hits] == expected and expected
    finally:
        cold.close()
        warm.close()


@pytest.fixture(scope="module", params=["DictionaryCodec", "CompactCodec"])
def many_postings(tmp_path_factory, request):
    """One segment of 600 papers: ``alpha`` in every abstract (twice in every
    third), ``beta`` in the even ones: several blocks of postings each;
    written by the codecs of blocks (values packed, and not)."""
    import json

    from searchengine.engines.whoosh import arraypostings, codec, writer

    folder = tmp_path_factory.mktemp("many-postings")
    source = folder / "papers.jsonl"
    with source.open("w", encoding="utf-8") as out:
        for number in range(600):
            words = ["alpha", "delta"] + (["beta"] if number % 2 == 0 else []) + (["alpha"] if number % 3 == 0 else [])
            out.write(
                json.dumps(
                    {
                        "id": f"2401.{number:05d}",
                        "title": f"Paper {number}",
                        "abstract": " ".join(words),
                        "authors": ["A. Writer"],
                    }
                )
                + "\n"
            )
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(arraypostings, "ArrayCodec", getattr(codec, request.param))
        patched.setattr(writer, "_WRITER_CLASSES", {})  # made anew with that codec
        build_index([source], folder / "index", jobs=1)
    index = open_index(folder / "index")
    reader = index.engine.current().searcher.reader()
    assert type(reader.codec()).__name__ == request.param
    yield reader
    index.close()


def test_cached_positions_read_each_block_once_and_match_a_direct_read(many_postings, monkeypatch):
    from searchengine.engines.whoosh import proximity
    from searchengine.engines.whoosh.blocks import postings_at
    from searchengine.engines.whoosh.cache import generation_cache

    reader = many_postings
    # The block path (terms too short for the segment's term arrays, older segments).
    monkeypatch.setattr(proximity, "term_arrays", lambda *args: None)
    monkeypatch.setattr("searchengine.engines.whoosh.blocks.term_arrays", lambda *args: None)
    blocks = []
    real = proximity.internals.read_block
    monkeypatch.setattr(proximity.internals, "read_block", lambda *a: blocks.append(1) or real(*a))
    for text in ["alpha", "beta"]:
        expected = postings_at(reader, "abstract", text, list(range(600)), positions=True)
        assert len(expected) == (600 if text == "alpha" else 300)
        blocks.clear()
        first = proximity.cached_positions(reader, "abstract", text, [3, 4, 5, 590])
        assert first == {doc: expected[doc] for doc in [3, 4, 5, 590] if doc in expected}
        read = len(blocks)
        assert read == 2  # the block of 3..5 and the block of 590
        # Documents in the blocks read (with the word or without it) are known: nothing more is read.
        assert proximity.cached_positions(reader, "abstract", text, [0, 1, 7, 589]) == {
            doc: expected[doc] for doc in [0, 1, 7, 589] if doc in expected
        }
        assert len(blocks) == read
        assert proximity.cached_positions(reader, "abstract", text, list(range(600))) == expected
        assert proximity.cached_positions(reader, "abstract", text, [599, 700]) == {
            doc: expected[doc] for doc in [599] if doc in expected
        }
    # The cache counts what each word holds: its blocks' postings.
    cache = generation_cache(reader).positions
    for text, postings in [("alpha", 600), ("beta", 300)]:
        (term,) = cache.get(("abstract", text))
        assert len(term) == term.postings == postings and cache.sizes[("abstract", text)] == postings + 1
    assert expected[0] == (1.0, {2})  # beta: "alpha delta beta alpha"
    assert proximity.cached_positions(reader, "abstract", "alpha", [3])[3] == (2.0, {0, 2})  # "alpha delta alpha"


@pytest.mark.parametrize("removed", [["a1"], ["a1", "a3"], ["a2"]])
def test_phrases_and_compounds_find_their_papers_after_removals_at_a_blocks_start(tmp_path, removed):
    """Deleted documents at the start of a block: the filter over the
    segment's postings has stepped past them before the block is read."""
    import json

    from searchengine import remove_documents

    source = tmp_path / "papers.jsonl"
    papers = [
        ("a1", "learning"),
        ("a2", "Self supervised learning"),
        ("a3", "deep learning"),
        ("a4", "Supervised learning of self-supervised models"),
    ]
    source.write_text("".join(json.dumps({"id": i, "title": t, "abstract": t}) + "\n" for i, t in papers))
    build_index([source], tmp_path / "index", jobs=1)
    remove_documents(removed, tmp_path / "index")
    index = open_index(tmp_path / "index")
    try:
        live = {"a2", "a4"} - set(removed)
        assert {h.id for h in index.search('"supervised learning"').hits} == live
        assert {h.id for h in index.search('"self supervised"').hits} == live
        assert {h.id for h in index.search("self-supervised").hits} == live
        assert {h.id for h in index.search('title:"deep learning"').hits} == {"a3"} - set(removed)
    finally:
        index.close()
