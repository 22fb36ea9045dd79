"""Prefix and fuzzy words expanded to index terms at search time, within the search's deadline."""

from __future__ import annotations

import time

from whoosh import query as wq

from searchengine.engines.whoosh import expansion
from searchengine.engines.whoosh.cache import generation_cache
from searchengine.engines.whoosh.clock import MatchClock


def expired() -> MatchClock:
    return MatchClock(time.monotonic() - 1)


def test_the_fuzzy_vocabulary_resumes_where_a_deadline_stopped_it(corpus_searcher, monkeypatch):
    monkeypatch.setattr(expansion, "_CHECK_EVERY", 100)
    reader = corpus_searcher.reader()
    generation_cache(reader).vocabularies.clear()  # read by another test
    whole = sorted(reader.schema["abstract"].from_bytes(b) for b in reader.lexicon("abstract"))
    assert len(whole) > 300
    vocabulary = expansion._Vocabulary()
    assert vocabulary.read(reader, "abstract", expired()) is False
    assert len(vocabulary.terms) == 100
    assert vocabulary.read(reader, "abstract", expired()) is False  # the next hundred, none twice
    assert len(vocabulary.terms) == 200
    assert vocabulary.read(reader, "abstract", None) is True and vocabulary.complete
    assert vocabulary.terms == whole


def test_fuzzy_terms_are_the_closest_then_the_most_frequent(corpus_searcher, monkeypatch):
    reader = corpus_searcher.reader()
    generation_cache(reader).vocabularies.clear()  # read by another test
    assert expansion.fuzzy_terms(reader, "abstract", "memroy", 2) == ["memori"]
    assert expansion.fuzzy_terms(reader, "abstract", "sparc", 1) == ["spars"]
    assert expansion.fuzzy_terms(reader, "abstract", "gpux", 1) == ["gpu"]
    assert expansion.fuzzy_terms(reader, "abstract", "zzzzzz", 2) == []
    assert expansion.fuzzy_terms(reader, "abstract", "spars", 1) == ["spars"]
    # One edit from "mode": code (2 abstracts), model (18), node (1); with room for two, the most frequent.
    assert expansion.fuzzy_terms(reader, "abstract", "mode", 1) == ["code", "model", "node"]
    monkeypatch.setattr(expansion, "MAX_EXPANSIONS", 2)
    assert expansion.fuzzy_terms(reader, "abstract", "mode", 1) == ["model", "code"]
    assert expansion.fuzzy_terms(reader, "abstract", "spars", 2) == ["spars", "part"]  # part: 4 abstracts
    # A vocabulary not read yet is read in steps (each search reads one at
    # least), and not past the deadline.
    monkeypatch.setattr(expansion, "_CHECK_EVERY", 100)
    assert expansion.fuzzy_terms(reader, "title", "memroy", 2, expired()) is None


def test_expansion_past_the_deadline_keeps_a_fuzzy_word_as_typed_and_drops_prefixes(corpus_searcher):
    reader = corpus_searcher.reader()
    query = wq.Or([wq.FuzzyTerm("abstract", "memroy", maxdist=2), wq.Prefix("title", "spar")])
    clock = expired()
    # a prefix left unexpanded matches nothing as typed (kept, so an AND of it finds nothing)
    assert expansion.expand_wildcards(query, reader, [], clock) == wq.Or(
        [wq.Term("abstract", "memroy"), wq.Term("title", "spar*")]
    )
    assert clock.cut is True


def test_one_search_expands_each_word_once(corpus_searcher, monkeypatch):
    reader = corpus_searcher.reader()
    calls = []
    real = expansion.fuzzy_terms
    monkeypatch.setattr(expansion, "fuzzy_terms", lambda *args: calls.append(args[2]) or real(*args))
    memo, notes = {}, []
    query = wq.And([wq.FuzzyTerm("abstract", "memroy", maxdist=2), wq.Prefix("abstract", "spar")])
    first = expansion.expand_wildcards(query, reader, notes, None, memo)
    again = expansion.expand_wildcards(wq.Or(list(query.subqueries)), reader, notes, None, memo)
    assert calls == ["memroy"]
    # Two edits from the six letters typed: weighed 1 - 2/6.
    memory = wq.Term("abstract", "memori", boost=1 - 2 / 6)
    assert first == wq.And([memory, wq.Or([wq.Term("abstract", "spars"), wq.Term("abstract", "sparsiti")])])
    assert again == wq.Or([memory, wq.Term("abstract", "spars"), wq.Term("abstract", "sparsiti")])


def test_a_fuzzy_word_as_written_expands_to_the_stems_of_the_words_near_it(corpus_searcher):
    """``optimizaton`` is one edit from ``optimization`` as written, four from
    its stem ``optimiz``; the written words near it are searched as their stems."""
    from searchengine.engines.whoosh.queries import WrittenFuzzy

    reader = corpus_searcher.reader()
    words = ["optimisation", "optimization", "optimizations", "optimized", "option", "sparse"]
    assert expansion.written_fuzzy_terms(reader, "abstract", "optimizaton", 2, words) == [("optimiz", 1)]
    assert expansion.written_fuzzy_terms(reader, "abstract", "optimizaton", 1, words) == [("optimiz", 1)]
    assert expansion.written_fuzzy_terms(reader, "abstract", "zzzz", 2, words) == []
    query = WrittenFuzzy("abstract", "optimizaton", maxdist=2)
    expanded = expansion.expand_wildcards(query, reader, [], None, {}, None, lambda: words)
    assert expanded == wq.Term("abstract", "optimiz", boost=1 - 1 / 11)  # (an OR of one, normalised)


def test_a_fuzzy_word_never_expands_to_the_number_or_letter_of_a_compound(corpus_searcher):
    """``gpu-2`` and ``gpu-x`` are two edits from ``gpus`` as written: they
    count by their whole terms (``gpu2``, a digit: no expansion; ``gpux``,
    in no abstract), never by the ``2`` and ``x`` the corpus's abstracts hold."""
    reader = corpus_searcher.reader()
    assert reader.doc_frequency("abstract", "2") and reader.doc_frequency("abstract", "x")
    words = ["2", "gpu", "gpu-2", "gpu-x", "gpus", "x"]
    assert expansion.written_fuzzy_terms(reader, "abstract", "gpus", 2, words) == [("gpu", 0)]
    # Nor do the index's terms, compared with the stem: "2" and "x" are two edits from "gpu".
    assert "2" not in expansion.fuzzy_terms(reader, "abstract", "gpu", 2)
    assert "x" not in expansion.fuzzy_terms(reader, "abstract", "gpu", 2)
    assert "gpu" in expansion.fuzzy_terms(reader, "abstract", "gpu", 2)


def test_the_expansions_of_a_fuzzy_word_share_the_largest_document_frequency(corpus_searcher):
    from math import log

    reader = corpus_searcher.reader()
    total = reader.doc_count_all()
    common, rare = "gpu", "memori"
    n_common, n_rare = reader.doc_frequency("abstract", common), reader.doc_frequency("abstract", rare)
    assert n_common > n_rare > 0

    def idf(n):
        return log(1 + (total - n + 0.5) / (n + 0.5))

    weights = expansion.fuzzy_weights(reader, "abstract", "gpus", [(common, 0), (rare, 2)])
    assert weights == [1.0, idf(n_common) / idf(n_rare) * (1 - 2 / 4)]
    # Each scores as a term with the common word's idf: the rare one is not worth more.
    assert weights[1] * idf(n_rare) < weights[0] * idf(n_common)
