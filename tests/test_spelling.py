import pytest

from searchengine.spelling import edit_distance


@pytest.mark.parametrize(
    ("query", "suggestion"),
    [
        ("sparce matrix", "sparse matrix"),
        ("GPU memroy", "GPU memory"),
        ("checkpointng planer", "checkpointing planner"),
        ("LLM inferense", "LLM inference"),
        ("transfomer", "transformer"),
    ],
)
def test_misspelled_query_gets_a_suggestion_that_finds_more(corpus_index, query, suggestion):
    results = corpus_index.search(query)
    assert results.suggestion == suggestion
    assert corpus_index.search(suggestion).total > (0 if results.relaxed else results.total)
    assert results.to_dict()["suggestion"] == suggestion


@pytest.mark.parametrize("query", ["SpMV GPU", "gpu", "sparse matrix", "ti:gpu au:qian", "zzzzqx"])
def test_well_spelled_or_hopeless_query_gets_no_suggestion(corpus_index, query):
    assert corpus_index.search(query).suggestion is None


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [("sparce", "sparse", 1), ("memroy", "memory", 1), ("abc", "abc", 0), ("", "abc", 3),
     ("kitten", "sitting", 3), ("ca", "abc", 3), ("planer", "planner", 1)],
)
def test_edit_distance_counts_transpositions_as_one(a, b, distance):
    assert edit_distance(a, b) == distance


@pytest.mark.parametrize("warmed", [False, True], ids=["lazy", "warmed"])
def test_close_words_are_every_indexed_word_within_the_distance(corpus_index_dir, warmed):
    from searchengine import open_index
    from searchengine.spelling import SHARED_PREFIX, SPELLING_FIELDS, _within, warm_vocabulary

    index = open_index(corpus_index_dir)
    try:
        reader = index._current().reader()
        vocabulary = {w.decode() if isinstance(w, bytes) else w for f in SPELLING_FIELDS for w in reader.lexicon(f)}
        if warmed:
            assert warm_vocabulary(reader) == len(vocabulary)
        for word in ["sparce", "matirx", "memmory", "gpus", "tranformer", "laguage", "qian", "zzzz", "spmv"]:
            for maxdist in (1, 2):
                expected = {w for w in vocabulary
                            if w[:SHARED_PREFIX] == word[:SHARED_PREFIX] and edit_distance(word, w) <= maxdist}
                assert _within(reader, word, maxdist) == expected, (word, maxdist)
        assert _within(reader, "matirx", 1) == {"matrix"}  # a transposition is one edit
        assert "sparse" in _within(reader, "sparce", 1)
    finally:
        index.close()
